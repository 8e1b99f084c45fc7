/* The live-sample table (src/agent/live.c) without a JVM: a JNIEnv whose
 * weak references are plain pointers to objects the test kills. Tracking,
 * sweeping the dead, a single thread using the whole table, and thinning
 * that keeps the Horvitz-Thompson sum unbiased. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agent/live.h"

struct obj { bool alive; };

static int weak_refs;   /* alive weak references */

static jweak JNICALL new_weak(JNIEnv *env, jobject o)
{
	(void)env;
	weak_refs++;
	return (jweak)o;
}

static void JNICALL delete_weak(JNIEnv *env, jweak ref)
{
	(void)env, (void)ref;
	weak_refs--;
}

static jboolean JNICALL is_same(JNIEnv *env, jobject a, jobject b)
{
	(void)env;
	if (!b)
		return a ? !((struct obj *)a)->alive : JNI_TRUE;
	return a == b;
}

static void JNICALL exception_clear(JNIEnv *env)
{
	(void)env;
}

static struct JNINativeInterface_ fns;
static JNIEnv env_storage;
static JNIEnv *jni;

static void fake_jni(void)
{
	memset(&fns, 0, sizeof(fns));
	fns.NewWeakGlobalRef = new_weak;
	fns.DeleteWeakGlobalRef = delete_weak;
	fns.IsSameObject = is_same;
	fns.ExceptionClear = exception_clear;
	env_storage = &fns;
	jni = &env_storage;
	weak_refs = 0;
}

struct sums { double bytes; uint64_t n, dead; };

static void add_up(struct hp_live_entry *e, void *ctx)
{
	struct sums *s = ctx;
	s->bytes += (double)e->size * e->thin;
	s->n++;
}

static void count_dead(struct hp_live_entry *e, void *ctx)
{
	(void)e;
	((struct sums *)ctx)->dead++;
}

Test(live, tracks_then_sweeps_the_dead_and_frees_their_references, .init = fake_jni)
{
	struct hp_live l;
	cr_assert_eq(hp_live_init(&l, 1000), 0);
	static struct obj objs[300];
	for (int i = 0; i < 300; i++) {
		objs[i].alive = true;
		hp_live_add(&l, jni, (jobject)&objs[i], (uint32_t)i % 7, 100, 0, i, 0, 1.0, NULL);
	}
	cr_expect_eq(hp_live_count(&l), 300);
	cr_expect_eq(weak_refs, 300);
	for (int i = 0; i < 300; i += 3)
		objs[i].alive = false;
	struct sums s = { 0 };
	hp_live_sweep(&l, jni, add_up, count_dead, &s);
	cr_expect_eq(s.dead, 100);
	cr_expect_eq(s.n, 200);
	cr_expect_eq(s.bytes, 200 * 100.0, "no thinning: every weight 1");
	cr_expect_eq(hp_live_count(&l), 200);
	cr_expect_eq(weak_refs, 200, "the dead's references deleted");
	/* each: the same view, nothing more found dead */
	struct sums e = { 0 };
	hp_live_each(&l, jni, add_up, count_dead, &e);
	cr_expect_eq(e.n, 200);
	cr_expect_eq(e.dead, 0);
	hp_live_free(&l, jni);
	cr_expect_eq(weak_refs, 0);
}

Test(live, one_thread_fills_every_stripe_before_dropping_any, .init = fake_jni)
{
	struct hp_live l;
	cr_assert_eq(hp_live_init(&l, 16 * 8), 0);
	static struct obj objs[16 * 8];
	for (int i = 0; i < 16 * 8; i++) {
		objs[i].alive = true;
		hp_live_add(&l, jni, (jobject)&objs[i], 0, 8, 0, 0, 0, 1.0, NULL);
	}
	cr_expect_eq(hp_live_count(&l), 16 * 8);
	cr_expect_eq(atomic_load(&l.dropped), 0);
	hp_live_free(&l, jni);
}

/* Thinning: N = 1,000 samples of 100 bytes into a 64-entry table (16
 * stripes of 4) from one thread; the sum of size x thin over what is kept
 * estimates N x 100 without bias. One thread fills the other stripes
 * first, but thins only its own: past that, its 4 slots alone take the new
 * samples, each standing for ~N/4, so one table's estimate spreads widely
 * (~70%: a cost in variance of a table too small for the live set, not a
 * bias). The mean over R = 20,000 independent tables (each its own RNG
 * seeds) is held within 6 of its standard errors, taken from the tables'
 * own spread (~0.5% of N x 100): a correct table fails less than once in
 * 10^8 runs, a 5% bias practically always (a 1.9x doubling in thin() in
 * place of 2x gives -6%). */
Test(live, thinning_keeps_the_sum_unbiased, .init = fake_jni, .timeout = 120)
{
	enum { N = 1000, R = 20000, SIZE = 100 };
	static struct obj alive = { true };
	struct hp_live *tables = calloc(R, sizeof(*tables));
	cr_assert_not_null(tables);
	double mean = 0, sq = 0;
	uint64_t kept = 0, dropped = 0;
	for (int r = 0; r < R; r++) {
		struct hp_live *l = &tables[r];
		cr_assert_eq(hp_live_init(l, 64), 0);
		for (int i = 0; i < N; i++)
			hp_live_add(l, jni, (jobject)&alive, 0, SIZE, 0, 0, 0, 1.0, NULL);
		struct sums s = { 0 };
		hp_live_each(l, jni, add_up, NULL, &s);
		mean += s.bytes / R;
		sq += s.bytes * s.bytes / R;
		kept += s.n;
		dropped += atomic_load(&l->dropped);
		cr_assert_leq(s.n, 64);
		hp_live_free(l, jni);
	}
	free(tables);
	double want = (double)N * SIZE, se = sqrt((sq - mean * mean) / R);
	cr_expect(se > 0 && se < 0.02 * want, "standard error %.0f of %.0f: the tables do not spread as they should", se,
		  want);
	/* false failure 2e-9 per run: 6 se two-sided (seeds include heap addresses: random per run); docs/test-bounds.md */
	cr_expect(fabs(mean - want) < 6 * se, "mean estimate %.0f, want %.0f +- %.0f (kept %.1f of %d a table)", mean,
		  want, 6 * se, (double)kept / R, N);
	cr_expect_gt(dropped, 0, "the table was never thinned: the test tests nothing");
	cr_expect_eq(weak_refs, 0, "every reference deleted, kept or dropped");
}

/* A thread's stretch after its last sample is credited to that sample
 * (samplerate.h): hp_live_scale finds it by its handle, and refuses once
 * it is gone or its slot holds another sample. */
Test(live, scale_finds_the_sample_by_its_handle_and_not_another, .init = fake_jni)
{
	struct hp_live l;
	cr_assert_eq(hp_live_init(&l, 64), 0);
	struct obj a = { true }, b = { true };
	struct hp_live_handle ha, hb;
	hp_live_add(&l, jni, (jobject)&a, 1, 100, 0, 11, 0, 1.0, &ha);
	cr_assert_not_null(ha.ref, "the sample was not tracked");
	cr_expect_eq(hp_live_scale(&l, &ha, 2.5), 0);
	struct sums s = { 0 };
	hp_live_each(&l, jni, add_up, NULL, &s);
	cr_expect_float_eq(s.bytes, 250.0, 1e-9, "scaled weight %g", s.bytes);
	/* It dies; its slot goes to another sample (the free list is LIFO). */
	a.alive = false;
	hp_live_sweep(&l, jni, NULL, NULL, NULL);
	cr_expect_eq(hp_live_scale(&l, &ha, 2.0), -ENOENT, "a freed sample was scaled");
	hp_live_add(&l, jni, (jobject)&b, 1, 100, 0, 12, 0, 1.0, &hb);
	cr_expect(hb.stripe == ha.stripe && hb.slot == ha.slot, "the slot was not reused: the test shows nothing");
	cr_expect_eq(hp_live_scale(&l, &ha, 2.0), -ENOENT, "the slot's new sample was scaled by the old handle");
	memset(&s, 0, sizeof(s));
	hp_live_each(&l, jni, add_up, NULL, &s);
	cr_expect_float_eq(s.bytes, 100.0, 1e-9, "the new sample's weight moved: %g", s.bytes);
	cr_expect_eq(hp_live_scale(&l, NULL, 2.0), -ENOENT);
	/* HotSpot may hand a freed jweak out again: the same reference in
	 * the same slot in the same clock tick, at another site, is not the
	 * sample the handle names. */
	struct obj c = { true };
	struct hp_live_handle hc, hc2;
	hp_live_add(&l, jni, (jobject)&c, 3, 100, 0, 13, 0, 1.0, &hc);
	c.alive = false;
	hp_live_sweep(&l, jni, NULL, NULL, NULL);
	c.alive = true;
	hp_live_add(&l, jni, (jobject)&c, 4, 100, 0, 13, 0, 1.0, &hc2);
	cr_expect(hc2.ref == hc.ref && hc2.slot == hc.slot && hc2.stripe == hc.stripe,
		  "the reference and slot were not reused: the test shows nothing");
	cr_expect_eq(hp_live_scale(&l, &hc, 2.0), -ENOENT, "another site's sample in a reused reference was scaled");
	cr_expect_eq(hp_live_scale(&l, &hc2, 2.0), 0);
	hp_live_free(&l, jni);
}
