/* Generational ZGC's live bytes at mark end (zstat.h).
 *
 * Generational ZGC (JDK 21 with -XX:+ZGenerational, the only ZGC from 24)
 * keeps the statistics of each generation's last cycle in that
 * generation's object: ZGeneration::_stat_heap, a ZStatHeap whose
 * live_at_mark_end() is the bytes its marking found alive (set at mark
 * end, zStat.cpp ZStatHeap::at_mark_end). Young collections run several a
 * second under load, so young + old is a live figure that follows the
 * program closely; single-generation ZGC keeps one heap-wide figure in a
 * static struct instead (marking.c). Neither member is in VMStructs: the
 * offsets are symbols/ data, and each is checked here against the code
 * that uses it, so a build whose layout differs turns the figure off with
 * its reason instead of reading another member. */
#include "heapusage/zstat.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "heapusage/probe.h"
#include "vmstructs/errmsg.h"
#include "vmstructs/safemem.h"
#include "vmstructs/symdata.h"
#include "vmstructs/symtab.h"

#if defined(__x86_64__)
#define ZSTAT_ARCH "x86_64"
#elif defined(__aarch64__)
#define ZSTAT_ARCH "aarch64"
#else
#define ZSTAT_ARCH NULL
#endif

static int data_offset(struct hp_probe *p, const char *key, long *out, char *why, size_t len)
{
	const char *v = ZSTAT_ARCH ? hp_symdata_getf(p->data, "%s.%s", key, ZSTAT_ARCH) : NULL;
	if (!v)
		return hp_fail(why, len, -ENOENT, "no %s.%s in the symbols/ data for this release", key,
			       ZSTAT_ARCH ? ZSTAT_ARCH : "<this architecture>");
	char *end;
	long x = strtol(v, &end, 0);
	if (*end || x <= 0 || x > (1L << 16))
		return hp_fail(why, len, -EINVAL, "%s.%s: bad offset '%s'", key, ZSTAT_ARCH, v);
	*out = x;
	return 0;
}

static const struct hp_sym *sym(struct hp_probe *p, const char *key)
{
	const char *name = hp_symdata_getf(p->data, "%s", key);
	return name ? hp_probe_sym(p, name) : NULL;
}

/* The getter loads the member at `off` from `this` and returns it:
 * x86_64 [endbr64] mov off(%rdi),%rax; ret; aarch64 [bti c] ldr x0,
 * [x0, #off]; ret. */
static bool getter_loads(const struct hp_sym *fn, long off)
{
	uint8_t b[16];
	if (!fn || hp_safe_read(b, (const void *)(uintptr_t)fn->addr, sizeof(b)))
		return false;
#if defined(__x86_64__)
	size_t i = (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa) ? 4 : 0;
	if (b[i] == 0x48 && b[i + 1] == 0x8b && b[i + 2] == 0x87) {
		int32_t d;
		memcpy(&d, b + i + 3, 4);
		return d == off && b[i + 7] == 0xc3;
	}
	return b[i] == 0x48 && b[i + 1] == 0x8b && b[i + 2] == 0x47 && (int8_t)b[i + 3] == off && b[i + 4] == 0xc3;
#elif defined(__aarch64__)
	uint32_t w[4];
	memcpy(w, b, sizeof(w));
	size_t i = w[0] == 0xd503245fu ? 1 : 0;
	return off % 8 == 0 && off / 8 < 4096 && w[i] == (0xf9400000u | ((uint32_t)(off / 8) << 10)) &&
	       w[i + 1] == 0xd65f03c0u;
#else
	(void)off;
	return false;
#endif
}

/* `fn` computes this + off into the first argument register and, a few
 * instructions later, calls `callee`: x86_64 lea off(%reg),%rdi ... call
 * rel32; aarch64 add x0, xN, #off ... bl. */
static bool passes_member(const struct hp_sym *fn, const struct hp_sym *callee, long off)
{
	uint8_t b[160];
	if (!fn || !callee || hp_safe_read(b, (const void *)(uintptr_t)fn->addr, sizeof(b)))
		return false;
#if defined(__x86_64__)
	for (size_t i = 0; i + 7 <= sizeof(b); i++) {
		int32_t d;
		memcpy(&d, b + i + 3, 4);
		if (b[i] != 0x48 || b[i + 1] != 0x8d || (b[i + 2] & 0xf8) != 0xb8 || (b[i + 2] & 7) == 4 || d != off)
			continue;
		for (size_t j = i + 7; j + 5 <= sizeof(b) && j <= i + 7 + 24; j++) {
			int32_t rel;
			memcpy(&rel, b + j + 1, 4);
			if (b[j] == 0xe8 && fn->addr + j + 5 + (uint64_t)(int64_t)rel == callee->addr)
				return true;
		}
	}
#elif defined(__aarch64__)
	uint32_t w[sizeof(b) / 4];
	memcpy(w, b, sizeof(w));
	for (size_t i = 0; i < sizeof(w) / 4; i++) {
		if ((w[i] & 0xffc0001fu) != 0x91000000u || (long)((w[i] >> 10) & 0xfff) != off)
			continue;
		for (size_t j = i + 1; j < sizeof(w) / 4 && j <= i + 4; j++) {
			int32_t imm = (int32_t)(w[j] << 6) >> 6;
			if ((w[j] & 0xfc000000u) == 0x94000000u && fn->addr + 4 * j + (uint64_t)(4 * (int64_t)imm) == callee->addr)
				return true;
		}
	}
#else
	(void)off;
#endif
	return false;
}

/* The object a ZGeneration::_young or _old static points to, its vptr
 * checked to lie in `vtable` (a ZGenerationYoung or ZGenerationOld). */
static int generation(struct hp_probe *p, const char *key, const char *vtable, const char **obj, char *why, size_t len)
{
	const char *name = hp_symdata_getf(p->data, "%s", key);
	const struct hp_sym *s = name ? hp_probe_sym(p, name) : NULL;
	if (!s)
		return hp_fail(why, len, -ENOENT, name ? "%s (%s) not in libjvm" : "no %s in the symbols/ data",
			       key, name);
	const void *g = NULL, *vptr = NULL;
	if (hp_safe_read_ptr(&g, (const void *)(uintptr_t)s->addr) || !g || hp_safe_read_ptr(&vptr, g))
		return hp_fail(why, len, -EFAULT, "%s: no readable generation object", name);
	const struct hp_sym *vt = p->syms ? hp_symtab_containing(p->syms, (uint64_t)(uintptr_t)vptr) : NULL;
	if (!vt || strcmp(vt->name, vtable) != 0)
		return hp_fail(why, len, -EINVAL, "%s points to an object whose vptr lies in %s, not %s", name,
			       vt ? vt->name : "no symbol", vtable);
	*obj = g;
	return 0;
}

int hp_zgen_live_locate(struct hp_probe *p, const volatile uint64_t **young, const volatile uint64_t **old,
			char *why, size_t len)
{
	long stat_heap, live;
	const char *y, *o;
	int rc;
	if ((rc = data_offset(p, "field.ZGeneration._stat_heap", &stat_heap, why, len)) ||
	    (rc = data_offset(p, "field.ZStatHeap.live_at_mark_end", &live, why, len)))
		return rc;
	if (!getter_loads(sym(p, "symbol.z_stat_heap_live_at_mark_end"), live))
		return hp_fail(why, len, -EINVAL, "ZStatHeap::live_at_mark_end() does not load the member at %ld "
			       "(symbols/ data): not read", live);
	if (!passes_member(sym(p, "symbol.z_generation_at_collection_start"),
			   sym(p, "symbol.z_stat_heap_at_collection_start"), stat_heap))
		return hp_fail(why, len, -EINVAL, "ZGeneration::at_collection_start does not pass this+%ld "
			       "(symbols/ data) to ZStatHeap::at_collection_start: not read", stat_heap);
	if ((rc = generation(p, "symbol.z_generation_young", "_ZTV16ZGenerationYoung", &y, why, len)) ||
	    (rc = generation(p, "symbol.z_generation_old", "_ZTV14ZGenerationOld", &o, why, len)))
		return rc;
	uint64_t v;
	if (hp_safe_read_u64(&v, y + stat_heap + live) || hp_safe_read_u64(&v, o + stat_heap + live))
		return hp_fail(why, len, -EFAULT, "ZGeneration::_stat_heap unreadable");
	*young = (const volatile uint64_t *)(const void *)(y + stat_heap + live);
	*old = (const volatile uint64_t *)(const void *)(o + stat_heap + live);
	return 0;
}
