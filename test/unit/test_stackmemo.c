/* The per-thread stack memo (agent/stackmemo.h) on the synthetic HotSpot
 * layout of test_framedecode: a stack decoded through the memo is the
 * stack hp_framedecode gives for the whole key, whatever the memo held;
 * the frames taken from it are the bottom ones the two keys share, with
 * their site's frame ids when those were kept; a different epoch,
 * redefinition count or session, a stack cut at the depth, or a forgotten
 * memo, give nothing. (Real JVMs: test_profiler's stacks=verify runs
 * check every decoded stack against GetStackTrace.) */
#include <criterion/criterion.h>

#include "../fixtures/framedecode_layout.h"
#include "agent/stackmemo.h"

static void teardown(void)
{
	hp_methods_free(&d.methods);
	free(d.pcs);
	d.pcs = NULL;
}

TestSuite(stackmemo, .init = setup, .fini = teardown);

#define STUB 0x1234u
#define NM_PC(off) ((uintptr_t)nm + CODE_AT + (off))
#define BCP(i, bci) ((uintptr_t)consts[i] + CM_SIZE + (bci))

struct stack {
	int nkey;
	uint64_t key[8];
	uintptr_t aux[4];
};

/* A: a runtime stub, the nmethod at pc 0x40 (two Java frames, one
 * inlined), method 3 interpreted at bci 0. B: method 2 interpreted at bci
 * 4 above A's two lower frames. C: the nmethod at pc 0x80 above A's
 * lowest. */
static struct stack A, B, C;

static void stacks(void)
{
	pcdesc(0x40, scope(scope(0, 1, 9), 2, 3));
	pcdesc(0x80, scope(0, 1, 20));
	A = (struct stack){ 6, { STUB, 0, NM_PC(0x40), 5, M(3) | 1, BCP(3, 0) }, { 0, (uintptr_t)nm, HP_FW_AUX_INTERPRETED } };
	B = (struct stack){ 6,
			    { M(2) | 1, BCP(2, 4), NM_PC(0x40), 5, M(3) | 1, BCP(3, 0) },
			    { HP_FW_AUX_INTERPRETED, (uintptr_t)nm, HP_FW_AUX_INTERPRETED } };
	C = (struct stack){ 4, { NM_PC(0x80), 5, M(3) | 1, BCP(3, 0) }, { (uintptr_t)nm, HP_FW_AUX_INTERPRETED } };
}

/* Decodes s through the memo and checks it against a whole decode. */
static int through(struct hp_stackmemo *m, const struct stack *s, uint64_t epoch, uint64_t redefs, uintptr_t stop,
		   int max, struct hp_stackmemo_use *use)
{
	struct hp_java_frame got[16], want[16];
	int mr = 0, mr2 = 0;
	int n = hp_stackmemo_decode(m, &d, s->key, s->aux, s->nkey, epoch, redefs, stop, got, max, &mr, use);
	int nw = hp_framedecode(&d, s->key, s->aux, s->nkey, epoch, stop, want, max, &mr2);
	cr_assert_eq(n, nw, "memo %d frames, whole decode %d (%d %d)", n, nw, mr, mr2);
	for (int i = 0; i < n; i++) {
		cr_assert_eq(got[i].jmid, want[i].jmid, "frame %d", i);
		cr_assert_eq(got[i].location, want[i].location, "frame %d", i);
	}
	return n;
}

Test(stackmemo, the_bottom_frames_two_stacks_share_come_from_the_memo_with_their_ids)
{
	stacks();
	struct hp_stackmemo *m = hp_stackmemo_get(1, 8);
	cr_assert_not_null(m);
	struct hp_stackmemo_use use;
	cr_assert_eq(through(m, &A, 7, 0, 0, 8, &use), 3);
	cr_expect_eq(use.reused, 0);
	const uint32_t ids_a[3] = { 10, 11, 12 };
	hp_stackmemo_keep_ids(m, ids_a, 3, false);
	cr_assert_eq(through(m, &B, 7, 0, 0, 8, &use), 4);
	cr_expect_eq(use.reused, 3, "the nmethod's two frames and method 3's");
	cr_assert_eq(use.nknown, 3);
	cr_expect_arr_eq(use.known, ids_a, sizeof(ids_a));
	/* the last sample was decoded: its key is there to prefetch */
	const uint64_t *rk;
	const uintptr_t *ra;
	int rn;
	cr_assert(hp_stackmemo_recent(m, &rk, &ra, &rn));
	cr_expect_eq(rn, B.nkey);
	cr_expect_arr_eq(rk, B.key, sizeof(B.key[0]) * (size_t)B.nkey);
	cr_expect_arr_eq(ra, B.aux, sizeof(B.aux[0]) * (size_t)(B.nkey / 2));
	hp_stackmemo_hit(m);
	cr_expect_not(hp_stackmemo_recent(m, &rk, &ra, &rn), "a cache hit since");
	/* B's ids not kept: C shares its lowest frame, without an id */
	cr_assert_eq(through(m, &C, 7, 0, 0, 8, &use), 2);
	cr_expect_eq(use.reused, 1);
	cr_expect_eq(use.nknown, 0);
	cr_expect_null(use.known);
	/* ids of a site holding an invalid frame, or of another length, are not taken */
	const uint32_t ids_c[2] = { 20, 21 };
	hp_stackmemo_keep_ids(m, ids_c, 2, true);
	cr_assert_eq(through(m, &A, 7, 0, 0, 8, &use), 3);
	cr_expect_eq(use.reused, 1);
	cr_expect_eq(use.nknown, 0);
	hp_stackmemo_keep_ids(m, ids_c, 2, false);
	cr_assert_eq(through(m, &B, 7, 0, 0, 8, &use), 4);
	cr_expect_eq(use.reused, 3);
	cr_expect_eq(use.nknown, 0, "ids of 2 frames for a stack of 3");
}

Test(stackmemo, another_epoch_redefinition_count_or_session_starts_afresh)
{
	stacks();
	struct hp_stackmemo *m = hp_stackmemo_get(1, 8);
	struct hp_stackmemo_use use;
	through(m, &A, 7, 0, 0, 8, &use);
	through(m, &B, 8, 0, 0, 8, &use);
	cr_expect_eq(use.reused, 0, "classes unloaded in between");
	through(m, &A, 8, 1, 0, 8, &use);
	cr_expect_eq(use.reused, 0, "a class redefined in between");
	cr_assert_eq(hp_stackmemo_get(2, 8), m, "the thread's memo, for a new session");
	through(m, &B, 8, 1, 0, 8, &use);
	cr_expect_eq(use.reused, 0, "the memo of an earlier session");
	through(m, &A, 8, 1, 0, 8, &use);
	cr_expect_eq(use.reused, 3);
	hp_stackmemo_forget(m);
	through(m, &B, 8, 1, 0, 8, &use);
	cr_expect_eq(use.reused, 0, "forgotten");
}

Test(stackmemo, a_stack_at_the_depth_is_not_built_on_and_one_taken_is_cut_there)
{
	stacks();
	/* D: methods 2 and 1 interpreted above A's two lower frames (5 Java frames) */
	struct stack D = { 8,
			   { M(2) | 1, BCP(2, 4), M(1) | 1, BCP(1, 0), NM_PC(0x40), 5, M(3) | 1, BCP(3, 0) },
			   { HP_FW_AUX_INTERPRETED, HP_FW_AUX_INTERPRETED, (uintptr_t)nm, HP_FW_AUX_INTERPRETED } };
	struct hp_stackmemo *m = hp_stackmemo_get(1, 4);
	cr_assert_not_null(m);
	struct hp_stackmemo_use use;
	cr_assert_eq(through(m, &B, 7, 0, 0, 4, &use), 4, "as deep as the depth");
	cr_assert_eq(through(m, &B, 7, 0, 0, 4, &use), 4);
	cr_expect_eq(use.reused, 0, "a stack as deep as the depth may have been cut: not kept");
	cr_assert_eq(through(m, &A, 7, 0, 0, 4, &use), 3);
	cr_assert_eq(through(m, &D, 7, 0, 0, 4, &use), 4, "cut");
	cr_expect_eq(use.reused, 2, "of A's three bottom frames, the two above the cut");
	/* a memo of another depth is a new one */
	cr_assert_neq(hp_stackmemo_get(1, 8), NULL);
	m = hp_stackmemo_get(1, 8);
	cr_assert_eq(through(m, &D, 7, 0, 0, 8, &use), 5);
	cr_expect_eq(use.reused, 0);
}

Test(stackmemo, a_stack_ended_at_the_stop_method_ends_there_again)
{
	stacks();
	uintptr_t stop = (uintptr_t)&jmid_slots[3];
	struct hp_stackmemo *m = hp_stackmemo_get(1, 8);
	struct hp_stackmemo_use use;
	cr_assert_eq(through(m, &A, 7, 0, stop, 8, &use), 2, "method 3's frame ends it");
	cr_assert_eq(through(m, &B, 7, 0, stop, 8, &use), 3);
	cr_expect_eq(use.reused, 2);
	/* the memo's stack ended above C's one shared frame: nothing to take */
	cr_assert_eq(through(m, &C, 7, 0, stop, 8, &use), 1);
	cr_expect_eq(use.reused, 0);
}
