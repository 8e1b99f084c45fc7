/* libFuzzer target: the frame decoder over a synthetic nmethod whose
 * header offsets, metadata table, scopes data and PcDescs come from the
 * input, and Methods whose ConstMethod fields, flags and jmethodID cache
 * the input bends. Table words are aimed by a 2-bit tag at the Methods, at
 * the nmethod, or left raw (unmapped pointers are read through safe reads,
 * so they are fair game). Any read outside the nmethod or the Method
 * structures is an ASan report; every decode must end. The nmethod's size
 * stays within its buffer, as the walker's code heap bound keeps it in a
 * JVM (framedecode.c: hp_framewalk_in_code). Run by scripts/test.sh like
 * the other fuzz_* targets. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../fixtures/framedecode_layout.h"

struct input {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct input *in, size_t bytes)
{
	uint64_t v = 0;
	size_t k = bytes < in->n ? bytes : in->n;
	memcpy(&v, in->p, k);
	in->p += k;
	in->n -= k;
	return v;
}

static uintptr_t aim(uint64_t w)
{
	switch (w & 3) {
	case 0: return M((int)((w >> 2) % NMETHODS));
	case 1: return (uintptr_t)nm + (w >> 2) % BLOB;
	case 2: return (uintptr_t)(w >> 2);     /* raw: mostly unmapped */
	default: return 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct input in = { data, size };
	if (ready)
		hp_methods_free(&d.methods);
	setup();
	ready = true;
	uint8_t mode = (uint8_t)take(&in, 1);
	d.unsigned5_x = mode & 1;
	/* header offsets: bounded by the buffer, else free */
	*(int32_t *)(nm + NM_PCS) = (int32_t)(take(&in, 2) % BLOB);
	*(int32_t *)(nm + NM_PCS_END) = (int32_t)(take(&in, 2) % (BLOB + 1));
	*(uintptr_t *)(nm + NM_SCOPES) = (uintptr_t)nm + take(&in, 2) % BLOB;
	*(int32_t *)(nm + NM_META) = (int32_t)(take(&in, 2) % BLOB);
	*(int32_t *)(nm + NM_SIZE) = (int32_t)(take(&in, 2) % (BLOB + 1));
	*(uintptr_t *)(nm + NM_METHOD) = aim(take(&in, 8));
	/* Method and ConstMethod fields */
	for (int i = 0; i < NMETHODS; i++) {
		*(uint16_t *)(methods[i] + M_FLAGS) = (uint16_t)take(&in, 2);
		*(uint16_t *)(consts[i] + CM_IDNUM) = (uint16_t)(take(&in, 1) % (NMETHODS + 2));
		*(uint16_t *)(consts[i] + CM_CODE_SIZE) = (uint16_t)take(&in, 1);
		if (mode & 2)
			jmid_slots[i] = aim(take(&in, 8));
	}
	/* the rest of the input fills the metadata table words (aimed), then
	 * the scopes and PcDescs bytes (raw) */
	for (int i = 0; i < (SCOPES_AT - META_AT) / 8 && in.n >= 8 && (mode & 4); i++)
		*(uintptr_t *)(nm + META_AT + 8 * i) = aim(take(&in, 8));
	size_t rest = in.n < BLOB - SCOPES_AT ? in.n : BLOB - SCOPES_AT;
	memcpy(nm + SCOPES_AT, in.p, rest);

	struct hp_java_frame f[16];
	int mr;
	uint64_t key[6] = { (uintptr_t)nm + CODE_AT + (mode >> 3) * 8, 1, 0x1234, 0, M(mode % NMETHODS) | 1,
			    (uintptr_t)consts[mode % NMETHODS] + CM_SIZE + (mode >> 4) };
	uintptr_t aux[3] = { (uintptr_t)nm, 0, HP_FW_AUX_INTERPRETED };
	int n = hp_framedecode(&d, key, aux, 6, 1, (mode & 8) ? (uintptr_t)&jmid_slots[1] : 0, f, 16, &mr);
	if (n > 16)
		__builtin_trap();
	return 0;
}
