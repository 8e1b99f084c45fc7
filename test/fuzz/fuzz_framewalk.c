/* libFuzzer target: the frame walker over a synthetic thread whose stack
 * words, code heap bytes and segment map come from the input. Pointer-sized
 * words carry a 2-bit tag so that the fuzzer can aim them at the stack, the
 * code heap or the interpreter (raw values rarely land anywhere), which is
 * where the walker's checks have work to do. Any read outside the checked
 * ranges is an ASan report; the walk must also always end. Run by
 * scripts/test.sh like the other fuzz_* targets. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../fixtures/framewalk_layout.h"

#define SEG_LOG2 6
#define NSEG 64
#define STACK_WORDS 192

static const char names[] = "nmethod\0native nmethod";
static _Alignas(64) uint8_t code[NSEG << SEG_LOG2];
static uint8_t segmap[NSEG];
static uint8_t interp[256];
static uint8_t call_stub[16];
static struct fw_test_heap heap;
static _Alignas(16) uint8_t thread[T_SIZE];

struct input {
	const uint8_t *p;
	size_t n;
};

/* Up to 8 bytes of input as a number (0 past the end). */
static uint64_t take(struct input *in, size_t bytes)
{
	uint64_t v = 0;
	if (bytes > sizeof(v))
		bytes = sizeof(v);
	size_t k = bytes < in->n ? bytes : in->n;
	memcpy(&v, in->p, k);
	in->p += k;
	in->n -= k;
	return v;
}

static uintptr_t aim(uint64_t w, const uintptr_t *stack)
{
	uint64_t off = w >> 2;
	switch (w & 3) {
	/* Not below stack[8]: the walker reads up to 8 words below a frame
	 * pointer, and below the array lies ASan's redzone, where a real
	 * thread has more stack. A little past the base too. */
	case 0: return (uintptr_t)&stack[8 + off % STACK_WORDS];
	case 1: return (uintptr_t)code + off % (sizeof(code) + 64);
	case 2: return (uintptr_t)interp + off % sizeof(interp);
	default: return off == 1 ? (uintptr_t)call_stub : (uintptr_t)(w >> 2);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Only the stack array lives in this frame (see aim). */
	static struct input in;
	static struct hp_framewalk w;
	static uint64_t key[64];
	in = (struct input){ data, size };
	uintptr_t stack[STACK_WORDS];
	fw_test_layout(&w);
	fw_test_regions(&w, &heap, code, sizeof(code), segmap, sizeof(segmap), SEG_LOG2, interp, sizeof(interp),
			call_stub, names, sizeof(names));
	uint8_t mode = (uint8_t)take(&in, 1);
	w.off_kind = mode & 1 ? B_KIND : -1;
	w.off_code_begin = mode & 2 ? -1 : B_CODE_BEGIN;
	w.off_code_offset = mode & 2 ? B_CODE_BEGIN : -1;

	memset(thread, 0, sizeof(thread));
	*(uintptr_t *)(thread + T_STACK_BASE) = (uintptr_t)&stack[STACK_WORDS];
	*(uintptr_t *)(thread + T_STACK_SIZE) = mode & 4 ? (uintptr_t)take(&in, 8) : (uintptr_t)1 << 20;
	*(uintptr_t *)(thread + T_ANCHOR + A_SP) = aim(take(&in, 8), stack);
	*(uintptr_t *)(thread + T_ANCHOR + A_PC) = mode & 8 ? 0 : aim(take(&in, 8), stack);
	*(uintptr_t *)(thread + T_ANCHOR + A_FP) = aim(take(&in, 8), stack);
	memset(segmap, 0xff, sizeof(segmap));
	size_t nmap = in.n < sizeof(segmap) ? in.n : sizeof(segmap);
	memcpy(segmap, in.p, nmap);
	in.p += nmap;
	in.n -= nmap;
	/* Code heap: words, aimed like the stack's (blob names, code_begin). */
	for (size_t i = 0; i < sizeof(code) / 8; i++) {
		uint64_t v = take(&in, 8);
		uintptr_t word = (v & 0x300) == 0x300 ? (uintptr_t)names + (v >> 10) % sizeof(names) : aim(v, stack);
		if (i % 8 == 1 || i % 8 == 4)
			word = v;       /* frame sizes, offsets, compile ids, flags: raw */
		memcpy(code + i * 8, &word, 8);
	}
	for (size_t i = 0; i < STACK_WORDS; i++)
		stack[i] = aim(take(&in, 8), stack);

	static bool interpreted;
	int max_java = 1 + (mode >> 4);
	int n = hp_framewalk_key(&w, thread + T_ENV, max_java, key, (int)(sizeof(key) / sizeof(key[0])), &interpreted, NULL);
	if (n > (int)(sizeof(key) / sizeof(key[0])))
		__builtin_trap();
	return 0;
}
