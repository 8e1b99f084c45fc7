/* The frame walker on a synthetic thread: a stack, a code heap with its
 * segment map, blobs and an interpreter laid out like HotSpot's x86_64
 * ones. A good stack gives the expected key; every kind of bad pointer or
 * header gives its error, never a fault. (Real JVMs: test_profiler's
 * stacks=verify runs.) */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "../fixtures/framewalk_layout.h"

#define SEG_LOG2 6
#define SEG 64
#define NSEG 256

static const char names[] = "nmethod\0native nmethod\0RuntimeStub";
static _Alignas(64) uint8_t code[NSEG * SEG];
static uint8_t segmap[NSEG];
static uint8_t interp_code[256];
static uint8_t call_stub[16];
static struct fw_test_heap heap;
static _Alignas(16) uint8_t thread[T_SIZE];

static struct hp_framewalk w;

static void setup_walker(void)
{
	fw_test_layout(&w);
	memset(code, 0, sizeof(code));
	memset(segmap, 0xff, sizeof(segmap));
	memset(thread, 0, sizeof(thread));
	fw_test_regions(&w, &heap, code, sizeof(code), segmap, sizeof(segmap), SEG_LOG2, interp_code,
			sizeof(interp_code), call_stub, names, sizeof(names));
}

/* A blob of `segs` segments at segment `at`, as CodeHeap lays one out:
 * the map holds 0 for the first segment and the distance back for the
 * rest; the block header says it is used. Returns the blob address. */
static uintptr_t make_blob(int at, int segs, const char *name, int frame_words, int compile_id)
{
	for (int i = 0; i < segs; i++)
		segmap[at + i] = (uint8_t)i;
	uint8_t *block = code + (size_t)at * SEG;
	*(uint64_t *)block = (uint64_t)segs;
	block[8] = 1;
	uintptr_t blob = (uintptr_t)block + BLOCK_HEADER;
	*(int32_t *)(blob + B_FRAME_SIZE) = frame_words;
	*(const char **)(blob + B_NAME) = name;
	*(uintptr_t *)(blob + B_CODE_BEGIN) = blob + 64;
	*(int32_t *)(blob + B_STUB_OFFSET) = segs * SEG - BLOCK_HEADER - 32;   /* last 32 bytes: stubs */
	*(int32_t *)(blob + B_COMPILE_ID) = compile_id;
	return blob;
}

/* The stack of the good case, built in the caller's frame (above the
 * walker's own, as a real thread's Java frames are):
 *   runtime stub (4 words) <- nmethod A (6 words) <- interpreted frame <- entry frame (bottom)
 * Returns what the key must be, in `expect`. */
struct scene {
	uintptr_t stk[128];
	uintptr_t stub_pc, a_pc, method, bcp;
};

static void build_scene(struct scene *s)
{
	setup_walker();
	memset(s->stk, 0, sizeof(s->stk));
	uintptr_t stub = make_blob(2, 4, names + 23, 4, 0);
	uintptr_t a = make_blob(10, 8, names, 6, 4242);
	s->stub_pc = stub + 100;
	s->a_pc = a + 64 + 40;
	s->method = 0x7f0000001000;
	s->bcp = 0x7f0000002345;
	uintptr_t *k = s->stk;
	/* thread: stack bounds hold this frame and the walker's */
	*(uintptr_t *)(thread + T_STACK_BASE) = (uintptr_t)&k[128];
	*(uintptr_t *)(thread + T_STACK_SIZE) = 1 << 20;
	*(uintptr_t *)(thread + T_ANCHOR + A_SP) = (uintptr_t)&k[10];
	*(uintptr_t *)(thread + T_ANCHOR + A_PC) = s->stub_pc;
	/* stub frame [10, 14): return into A, saved fp */
	k[13] = s->a_pc;
	k[12] = 0xdead;
	/* A frame [14, 20): return into the interpreter, saved fp = its fp */
	k[19] = (uintptr_t)interp_code + 10;
	k[18] = (uintptr_t)&k[30];
	/* interpreted frame, fp = &k[30] */
	k[30 - 3] = s->method;
	k[30 - 8] = s->bcp;
	k[30 - 1] = (uintptr_t)&k[32];
	k[31] = (uintptr_t)call_stub;
	k[30] = (uintptr_t)&k[50];
	/* entry frame, fp = &k[50]; its JavaCallWrapper at &k[60] has an empty anchor */
	k[50 - 6] = (uintptr_t)&k[60];
	k[60 + W_ANCHOR / 8 + A_SP / 8] = 0;
}

static const void *jni(void)
{
	return thread + T_ENV;
}

Test(framewalk, good_stack_gives_stub_compiled_and_interpreted_keys)
{
	struct scene s;
	build_scene(&s);
	uint64_t key[32];
	bool interp = false;
	int n = hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL);
	cr_assert_eq(n, 6, "walk: %d (%s)", n, hp_framewalk_result_name(n));
	cr_expect_eq(key[0], s.stub_pc);
	cr_expect_eq(key[2], s.a_pc);
	cr_expect_eq(key[3], 4242);
	cr_expect_eq(key[4], s.method | 1);
	cr_expect_eq(key[5], s.bcp);
	cr_expect(interp);
}

Test(framewalk, nmethod_found_by_kind_where_codeblob_has_one)
{
	struct scene s;
	build_scene(&s);
	w.off_kind = B_KIND;
	w.kind_nmethod = 1;
	uintptr_t a = (uintptr_t)code + 10 * SEG + BLOCK_HEADER;
	*(uint8_t *)(a + B_KIND) = 1;
	*(const char **)(a + B_NAME) = "not a name the walker may read";
	uint64_t key[32];
	bool interp;
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), 6);
	*(uint8_t *)(a + B_KIND) = 6;   /* a RuntimeStub below the top */
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_UNEXPECTED_BLOB);
}

/* The aux words name each frame's kind for the decoder; a return pc equal
 * to the continuation return barrier ends the walk with its own reason. */
Test(framewalk, aux_words_and_the_continuation_return_barrier)
{
	struct scene s;
	build_scene(&s);
	uint64_t key[32];
	uintptr_t aux[16];
	bool interp;
	cr_assert_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, aux), 6);
	cr_expect_eq(aux[0], 0, "the runtime stub holds no Java frame");
	cr_expect_eq(aux[1], (uintptr_t)code + 10 * SEG + BLOCK_HEADER, "the nmethod");
	cr_expect_eq(aux[2], HP_FW_AUX_INTERPRETED);
	s.stk[19] = 0x7f0000abc000;             /* A returns into the barrier */
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, aux), HP_FW_UNKNOWN_PC);
	w.cont_return_barrier = 0x7f0000abc000;
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, aux), HP_FW_CONTINUATION);
	cr_expect_str_eq(hp_framewalk_result_name(HP_FW_CONTINUATION),
			 "virtual thread frames in a heap stack chunk, past the return barrier");
}

Test(framewalk, stops_after_max_java_frames)
{
	struct scene s;
	build_scene(&s);
	uint64_t key[32];
	bool interp = true;
	cr_expect_eq(hp_framewalk_key(&w, jni(), 1, key, 32, &interp, NULL), 4);
	cr_expect_not(interp);
}

Test(framewalk, entry_frame_continues_below_the_native_frames)
{
	struct scene s;
	build_scene(&s);
	uintptr_t *k = s.stk;
	/* the wrapper's anchor names an earlier Java frame: nmethod A again */
	k[60 + W_ANCHOR / 8 + A_SP / 8] = (uintptr_t)&k[80];
	k[60 + W_ANCHOR / 8 + A_PC / 8] = s.a_pc;
	k[85] = (uintptr_t)call_stub;   /* A's sender: another entry frame... */
	k[84] = (uintptr_t)&k[100];
	k[100 - 6] = (uintptr_t)&k[110];        /* ...with an empty anchor: the bottom */
	uint64_t key[32];
	bool interp;
	int n = hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL);
	cr_assert_eq(n, 10, "walk: %d (%s)", n, hp_framewalk_result_name(n));
	cr_expect_eq(key[7], 0);
	cr_expect_eq(key[8], s.a_pc);
}

/* Each corruption, and the result it must give. */
Test(framewalk, no_last_java_frame)
{
	struct scene s;
	build_scene(&s);
	*(uintptr_t *)(thread + T_ANCHOR + A_SP) = 0;
	uint64_t key[32];
	bool interp;
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_NO_JAVA_FRAMES);
}

Test(framewalk, stack_bounds_not_holding_the_caller)
{
	struct scene s;
	build_scene(&s);
	*(uintptr_t *)(thread + T_STACK_SIZE) = 64;     /* ends above the walker's frame */
	uint64_t key[32];
	bool interp;
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_NOT_THIS_THREAD);
	*(uintptr_t *)(thread + T_STACK_SIZE) = UINTPTR_MAX;    /* wraps */
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_NOT_THIS_THREAD);
}

Test(framewalk, pc_outside_the_code_heap)
{
	struct scene s;
	build_scene(&s);
	*(uintptr_t *)(thread + T_ANCHOR + A_PC) = (uintptr_t)&w;
	uint64_t key[32];
	bool interp;
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_UNKNOWN_PC);
}

Test(framewalk, pc_in_a_free_or_unused_block)
{
	struct scene s;
	build_scene(&s);
	uint64_t key[32];
	bool interp;
	code[10 * SEG + 8] = 0;         /* A's block marked free */
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_UNKNOWN_PC);
	build_scene(&s);
	segmap[11] = 0xff;              /* the segment A's pc is in: unused */
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_UNKNOWN_PC);
	build_scene(&s);
	segmap[11] = 200;               /* a hop before the heap's start */
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_UNKNOWN_PC);
	build_scene(&s);
	heap.seg_high = heap.seg_low + 5;         /* a segment map shorter than the heap */
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_UNKNOWN_PC);
}

Test(framewalk, bad_frame_sizes)
{
	struct scene s;
	uint64_t key[32];
	bool interp;
	int32_t sizes[] = { 0, -4, 1 << 20 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		build_scene(&s);
		*(int32_t *)((uintptr_t)code + 10 * SEG + BLOCK_HEADER + B_FRAME_SIZE) = sizes[i];
		cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_UNEXPECTED_BLOB, "size %d",
			     sizes[i]);
	}
	build_scene(&s);
	/* a frame size that takes the sender beyond the stack base */
	*(int32_t *)((uintptr_t)code + 10 * SEG + BLOCK_HEADER + B_FRAME_SIZE) = 200;
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_BAD_READ);
}

Test(framewalk, stub_below_the_top_or_unnamed_blob)
{
	struct scene s;
	build_scene(&s);
	uint64_t key[32];
	bool interp;
	*(const char **)((uintptr_t)code + 10 * SEG + BLOCK_HEADER + B_NAME) = names + 23;
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_UNEXPECTED_BLOB);
	build_scene(&s);
	/* a name pointer outside libjvm's readable segments is not read */
	*(const char **)((uintptr_t)code + 10 * SEG + BLOCK_HEADER + B_NAME) = (const char *)16;
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_UNEXPECTED_BLOB);
}

Test(framewalk, return_pc_in_the_stub_section_is_a_deoptimized_frame)
{
	struct scene s;
	build_scene(&s);
	uintptr_t a = (uintptr_t)code + 10 * SEG + BLOCK_HEADER;
	s.stk[13] = a + *(int32_t *)(a + B_STUB_OFFSET) + 4;
	uint64_t key[32];
	bool interp;
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_DEOPTIMIZED);
}

Test(framewalk, interpreted_frame_pointers_outside_the_stack)
{
	struct scene s;
	uint64_t key[32];
	bool interp;
	build_scene(&s);
	s.stk[18] = (uintptr_t)&w;      /* fp of the interpreted frame: not on the stack */
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_BAD_READ);
	build_scene(&s);
	s.stk[18] = (uintptr_t)&s.stk[30] + 3;  /* misaligned */
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_BAD_READ);
	build_scene(&s);
	s.stk[30 - 3] = 0;              /* no Method* */
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_BAD_READ);
	build_scene(&s);
	s.stk[50 - 6] = 8;              /* entry frame's wrapper off the stack */
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 32, &interp, NULL), HP_FW_BAD_READ);
}

Test(framewalk, cycles_and_small_buffers_end_the_walk)
{
	struct scene s;
	uint64_t key[32];
	bool interp;
	build_scene(&s);
	/* the interpreted frame returns into the interpreter with its own fp:
	 * a loop the walk must leave */
	s.stk[31] = (uintptr_t)interp_code + 20;
	s.stk[30] = (uintptr_t)&s.stk[30];
	cr_expect_eq(hp_framewalk_key(&w, jni(), 1000, key, 32, &interp, NULL), HP_FW_TOO_DEEP);
	build_scene(&s);
	cr_expect_eq(hp_framewalk_key(&w, jni(), 64, key, 3, &interp, NULL), HP_FW_TOO_DEEP);
}

Test(framewalk, result_names)
{
	cr_expect_str_eq(hp_framewalk_result_name(HP_FW_DEOPTIMIZED), "deoptimized frame");
	cr_expect_str_eq(hp_framewalk_result_name(6), "ok");
	cr_expect_str_eq(hp_framewalk_result_name(-100), "ok");
}

Test(framewalk, set_thread_checks_the_env_and_the_stack)
{
	setup_walker();
	char err[256];
	uintptr_t here = (uintptr_t)&err;
	*(uintptr_t *)(thread + T_STACK_BASE) = here + 4096;
	*(uintptr_t *)(thread + T_STACK_SIZE) = 1 << 20;
	cr_expect_eq(hp_framewalk_set_thread(&w, thread + T_ENV, (uintptr_t)thread, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(w.env_offset, T_ENV);
	cr_expect_eq(hp_framewalk_set_thread(&w, thread, (uintptr_t)thread + 64, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "not inside JavaThread"), "%s", err);
	*(uintptr_t *)(thread + T_STACK_BASE) = here - 65536;     /* below the callee's frame */
	cr_expect_eq(hp_framewalk_set_thread(&w, thread + T_ENV, (uintptr_t)thread, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "stack bounds"), "%s", err);
}

Test(framewalk, init_without_tables_says_why)
{
	char err[256];
	cr_expect_eq(hp_framewalk_init(&w, NULL, NULL, NULL, err, sizeof(err)), -ENOENT);
	cr_expect(strstr(err, "VMStructs"), "%s", err);
}
