/* samplerate.c and vmstructs/allocated.c: the interval the JVM's sampler
 * really keeps, against a simulated sampler whose interval is known. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "agent/samplerate.h"
#include "vmstructs/allocated.h"
#include "fake_vms.h"

static __thread uint64_t rng = 88172645463325252ull;     /* per thread: deterministic side by side */
static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((rng >> 11) + 0.5) / 9007199254740992.0;
}

/* One object of `size` bytes past the sampler: sample points a Poisson
 * process at mean `real` over the bytes (*next the next one, *pos the
 * bytes so far); true where any point falls in it (one sample). */
static bool sample_point(double *pos, double *next, double real, uint64_t size)
{
	bool sampled = *next < *pos + (double)size;
	while (*next < *pos + (double)size)
		*next += -real * log(uniform());
	*pos += (double)size;
	return sampled;
}

/* One thread allocating `n` objects of 64..4159 bytes (LoadService's
 * garbage), sampled as HotSpot means to: sample points a Poisson process
 * over the bytes at mean `real`, an object sampled once if any point falls
 * in it. Each sample is noted with the bytes allocated so far; returns the
 * mean of the thread's factors over its last `tail` samples. */
static double simulate_tail(struct hp_sample_rate *r, double real, int n, int tail)
{
	double pos = 0, next = -real * log(uniform()), sum = 0;
	int samples = 0;
	for (int i = 0; i < n; i++) {
		uint64_t size = 64 + (uint64_t)(uniform() * 4096);
		if (!sample_point(&pos, &next, real, size))
			continue;
		double k = hp_sample_rate_note(r, (uint64_t)pos, 0, size);
		if (i >= n - tail) {
			sum += k;
			samples++;
		}
	}
	return samples ? sum / samples : 0;
}

static double measured(const struct hp_sample_rate *r)
{
	double m;
	hp_sample_rate_factor(atomic_load(&r->bytes), atomic_load(&r->estimated), atomic_load(&r->gaps), &m);
	return m;
}

/* A sampler that keeps its interval: the bytes over the samples' estimate
 * is 1 within its sd, and the weights stay at the interval asked. The
 * gaps' mean alone is not the interval (an object takes one sample however
 * many points fall in it): with these sizes at 64k it reads ~1.9% long,
 * which would have put every weight that much high on a sampler that is
 * right (17 and 25 measured 1.018 so, by hand). */
Test(samplerate, a_sampler_that_keeps_its_interval_reads_one)
{
	static struct hp_sample_rate r;
	hp_sample_rate_reset(&r, 65536);
	double k = simulate_tail(&r, 65536, 20000000, 4000000);
	uint64_t gaps = atomic_load(&r.gaps);
	double m = measured(&r), sd = 1 / sqrt((double)gaps);
	cr_expect(gaps > 400000, "%llu gaps", (unsigned long long)gaps);
	cr_expect(fabs(m - 1) < 4 * sd, "measured %.4f, sd %.4f", m, sd);
	cr_expect_eq(hp_sample_rate_factor(atomic_load(&r.bytes), atomic_load(&r.estimated), gaps, NULL), 1.0);
	/* The thread's own factor: sd ~12.6% over its window of 32 gaps
	 * (1/sqrt(63): decayed, the window counts as 63), its
	 * mean over 4M allocations (~130k samples, ~4,000 windows) 1 within
	 * 1.2%; docs/test-bounds.md */
	cr_log_info("the thread's factor over the tail %.4f, the JVM's ratio %.4f", k, m);
	cr_expect(fabs(k - 1) < 0.012, "the thread's factor %.4f", k);
	double gap_mean = (double)atomic_load(&r.bytes) / (double)gaps / 65536;
	cr_expect(gap_mean > 1.01, "the gaps' mean %.4f of the interval: the estimate's reason to be", gap_mean);
}

/* A sampler that samples 3.8% more often than asked (JDK 11 at 64k with
 * this mix, docs/sampler-rate.md): the factor is found and used. */
Test(samplerate, a_sampler_that_samples_more_often_is_found_out)
{
	static struct hp_sample_rate r;
	hp_sample_rate_reset(&r, 65536);
	double k = simulate_tail(&r, 65536 / 1.038, 20000000, 4000000);
	double f = hp_sample_rate_factor(atomic_load(&r.bytes), atomic_load(&r.estimated), atomic_load(&r.gaps), NULL);
	cr_log_info("the JVM's ratio %.4f, the thread's factor over the tail %.4f (want %.4f)", f, k, 1 / 1.038);
	cr_expect(fabs(f - 1 / 1.038) < 0.006, "the JVM's ratio %.4f, want %.4f", f, 1 / 1.038);
	cr_expect(fabs(k - 1 / 1.038) < 0.012, "the thread's factor %.4f, want %.4f", k, 1 / 1.038);
}

/* Per thread: one sampled 25% too often (LoadService's growing list on
 * 11..25: its thread's objects go now inside the TLAB, now outside),
 * beside one that keeps the interval and allocates 100 times as much. The
 * JVM's ratio hardly moves; each thread's factor is its own. A thread's
 * first samples weigh as asked (the prior). */
struct thread_run {
	struct hp_sample_rate *r;
	double real;
	int n;
	double own, first, last;
};

static void *thread_main(void *arg)
{
	struct thread_run *t = arg;
	hp_sample_rate_note(t->r, 1000, 0, 100);
	t->own = hp_sample_rate_note(t->r, 1000 + 65536 / 2, 0, 100);   /* a gap half what it estimates */
	t->first = hp_sample_rate_note(t->r, 1000 + 65536 / 2 + 65536, 0, 100);
	t->last = simulate_tail(t->r, t->real, t->n, t->n / 4);
	return NULL;
}

Test(samplerate, each_thread_weighs_at_its_own_factor)
{
	static struct hp_sample_rate r;
	hp_sample_rate_reset(&r, 65536);
	struct thread_run over = { &r, 65536 / 1.25, 2000000, 0, 0, 0 }, right = { &r, 65536, 20000000, 0, 0, 0 };
	pthread_t a, b;         /* side by side: one sum for both would read neither */
	cr_assert_eq(pthread_create(&a, NULL, thread_main, &over), 0);
	cr_assert_eq(pthread_create(&b, NULL, thread_main, &right), 0);
	cr_assert_eq(pthread_join(a, NULL), 0);
	cr_assert_eq(pthread_join(b, NULL), 0);
	/* A sample weighs at the factor from the gaps before its own: the
	 * one that closes the first gap at the prior's; the next at the
	 * prior's 4 gaps, decayed by one, and that gap, half its estimate. */
	cr_expect_eq(over.own, 1.0, "a sample's own gap moved its factor: %.6f", over.own);
	double keep = 1 - 1 / HP_RATE_WINDOW, ht = 100 / (1 - exp(-100.0 / 65536));
	double want = (HP_RATE_PRIOR_GAPS * keep + 0.5) / (HP_RATE_PRIOR_GAPS * keep + ht / 65536);
	cr_expect(fabs(over.first - want) < 1e-9, "a first gap moves the factor by its share of the prior: %.6f, want %.6f",
		  over.first, want);
	cr_expect(fabs(right.first - want) < 1e-9, "each thread's first gap its own: %.6f", right.first);
	/* ~16k samples at 0.8 in its last quarter: the mean of factors of sd
	 * ~12.6% over windows of 32, ~500 windows: sd ~0.6%; docs/test-bounds.md */
	cr_log_info("factors over the last quarter: %.4f (want 0.8), %.4f (want 1)", over.last, right.last);
	cr_expect(fabs(over.last - 0.8) < 0.02, "the thread sampled 25%% too often: factor %.4f, want 0.8", over.last);
	cr_expect(fabs(right.last - 1) < 0.01, "the thread that keeps the interval: factor %.4f", right.last);
	double m;
	hp_sample_rate_factor(atomic_load(&r.bytes), atomic_load(&r.estimated), atomic_load(&r.gaps), &m);
	cr_expect(m > 0.97, "the JVM's ratio %.4f: one factor for all would not see the first", m);
}

/* A thread whose over-count grows as it runs (LoadService's list thread:
 * its TLAB shrinks, more of its objects go outside it): sampled as asked
 * over its first half, 1.6 times as often over its second. The weights of
 * the second half's samples add up to the bytes allocated in it: a
 * factor carried over the whole run (the 16,384 gaps and a constant
 * prior before the fortieth session) read +35.5% here; the window of 32
 * gaps +4.0% with this seed, about +2% of it the window's edge (its
 * first 32 gaps of the second half still weigh the first half's ratio in
 * part; +1.9% +- 0.8% over 2,000 seeds, a review's simulation), the rest
 * this seed's noise. */
static void simulate_drift(struct hp_sample_rate *r, int n, double *weighed, double *exact)
{
	double pos = 0, real = 65536, next = -real * log(uniform()), half_pos = 0;
	*weighed = 0;
	for (int i = 0; i < n; i++) {
		if (i == n / 2) {
			real = 65536 / 1.6;
			half_pos = pos;
		}
		uint64_t size = 4080;
		if (!sample_point(&pos, &next, real, size))
			continue;
		double k = hp_sample_rate_note(r, (uint64_t)pos, 0, size);
		if (i >= n / 2)
			*weighed += k * (double)size / (1 - exp(-(double)size / 65536));
	}
	*exact = pos - half_pos;
}

Test(samplerate, a_thread_whose_over_count_grows_is_weighed_at_its_ratio_now)
{
	static struct hp_sample_rate r;
	hp_sample_rate_reset(&r, 65536);
	double weighed, exact;
	simulate_drift(&r, 20000, &weighed, &exact);       /* ~620 samples in each half, as the list's thread's */
	/* Deterministic (a fixed seed); docs/test-bounds.md. */
	cr_log_info("the second half weighed %+.2f%% of its bytes", 100 * (weighed / exact - 1));
	cr_expect(fabs(weighed / exact - 1) < 0.06, "the second half weighed %.4f of its bytes", weighed / exact);
}

/* A thread that keeps the interval and allocates, beside its small
 * objects, one of 512 KiB (8 intervals) for every ~70 intervals of them:
 * the large objects' weights add up to their bytes. A factor that took
 * the gap each sample closes read them high (a large object's gap holds
 * it and, about, an interval of small bytes before it, against its
 * estimate of about its size). */
Test(samplerate, large_objects_weigh_their_bytes)
{
	static struct hp_sample_rate r;
	hp_sample_rate_reset(&r, 65536);
	double pos = 0, next = -65536 * log(uniform()), weighed = 0, large = 0;
	for (int round = 0; round < 2000; round++)
		for (int i = 0; i <= 2200; i++) {
			uint64_t size = i < 2200 ? 64 + (uint64_t)(uniform() * 4096) : 512 * 1024;
			if (i == 2200)
				large += (double)size;
			if (!sample_point(&pos, &next, 65536, size))
				continue;
			double k = hp_sample_rate_note(&r, (uint64_t)pos, 0, size);
			if (i == 2200)
				weighed += k * (double)size / (1 - exp(-(double)size / 65536));
		}
	cr_log_info("the large objects weighed %+.2f%% of their bytes", 100 * (weighed / large - 1));
	/* Deterministic (a fixed seed); docs/test-bounds.md. */
	cr_expect(fabs(weighed / large - 1) < 0.01, "the large objects weighed %.4f of their bytes", weighed / large);
}

/* Short threads: each allocates `n` intervals' worth of byte[1000] (1016
 * bytes) and ends. A ratio leaves out what a thread allocates after its
 * last sample; hp_sample_rate_end gives it (its own gaps' share, the
 * prior's part being counted already as Horvitz-Thompson counts it), and
 * sample.c credits it whole to the last sample's site. Returns the weights
 * plus, with `credit`, the credits, over the bytes; *jvm the JVM's ratio. */
static double short_threads(int n, int threads, double interval, bool credit, double *jvm)
{
	static struct hp_sample_rate r;
	hp_sample_rate_reset(&r, (uint64_t)interval);
	const uint64_t size = 1016;
	double weighed = 0, bytes = 0;
	const double ht = (double)size / (1 - exp(-(double)size / interval));
	for (int t = 0; t < threads; t++) {
		double pos = 0, next = -interval * log(uniform());
		while (pos < n * interval) {
			if (!sample_point(&pos, &next, interval, size))
				continue;
			weighed += hp_sample_rate_note(&r, (uint64_t)pos, 0, size) * ht;
		}
		bytes += pos;
		/* The state starts over at the end. */
		double own = hp_sample_rate_end(&r, (uint64_t)pos, 0);
		if (credit)
			weighed += own;
	}
	*jvm = measured(&r);
	return weighed / bytes;
}

Test(samplerate, short_threads_are_counted_to_their_end)
{
	for (int n = 1; n <= 20; n *= 4) {
		double jvm, with = short_threads(n, 160000 / n, 65536, true, &jvm);
		double without = short_threads(n, 160000 / n, 65536, false, &jvm);
		cr_log_info("threads of %d intervals: %+.2f%% with the credit at their end, %+.2f%% without; the JVM's "
			    "ratio %.4f", n, 100 * (with - 1), 100 * (without - 1), jvm);
		/* The JVM's ratio counts each thread's stretch too: its gaps
		 * alone read ~0.7 at 4 intervals a thread (samplerate.c). */
		cr_expect(fabs(jvm - 1) < 0.01, "threads of %d intervals: the JVM's ratio %.4f", n, jvm);
		/* Deterministic (a fixed seed); docs/test-bounds.md. */
		cr_expect(fabs(with - 1) < 0.015, "threads of %d intervals weighed %.4f of their bytes", n, with);
		if (n > 1)
			cr_expect(without < 0.97, "without the credit threads of %d intervals weighed %.4f: the test "
				  "shows nothing", n, without);
	}
	/* Objects not small beside the interval (byte[1000] at 4k, as the
	 * suite's JVM test): the own gaps' share holds there too (a credit
	 * scaled by the last sample's Horvitz-Thompson bytes over the
	 * interval, as 94d961e's sample.c had it, read +0.55% here against
	 * -0.24%; within the bound, so the JVM test is what watches that). */
	double jvm, at4k = short_threads(4, 40000, 4096, true, &jvm);
	cr_log_info("threads of 4 intervals at 4k: %+.2f%%, the JVM's ratio %.4f", 100 * (at4k - 1), jvm);
	cr_expect(fabs(at4k - 1) < 0.01, "threads of 4 intervals at 4k weighed %.4f of their bytes", at4k);
	/* A second end, or an end with no sample, gives nothing. */
	static struct hp_sample_rate r;
	hp_sample_rate_reset(&r, 65536);
	cr_expect_eq(hp_sample_rate_end(&r, 5000, 0), 0.0);
	hp_sample_rate_note(&r, 1000, 0, 100);
	hp_sample_rate_note(&r, 70000, 0, 100);
	cr_expect_gt(hp_sample_rate_end(&r, 90000, 0), 0.0);
	cr_expect_eq(hp_sample_rate_end(&r, 95000, 0), 0.0, "a thread's end credited twice");
	hp_sample_rate_note(&r, 100000, 0, 100);
	cr_expect_eq(hp_sample_rate_end(&r, 110000, -EAGAIN), 0.0, "a refused reading credited");
	cr_expect_eq(hp_sample_rate_own_share(1, 4), 0.75);
	cr_expect_eq(hp_sample_rate_own_share(5, 4), 0.0);
	cr_expect_eq(hp_sample_rate_own_share(0, 0), 0.0);
}

Test(samplerate, the_rule_needs_enough_gaps_and_a_clear_departure)
{
	double m;
	cr_expect_eq(hp_sample_rate_factor(9000, 10000, HP_RATE_MIN_GAPS - 1, &m), 1.0);
	cr_expect(fabs(m - 0.9) < 1e-12);
	/* 10,000 gaps: sd 1%, 5 sd 5% */
	cr_expect_eq(hp_sample_rate_factor(960000, 1000000, 10000, NULL), 1.0);
	cr_expect(fabs(hp_sample_rate_factor(940000, 1000000, 10000, NULL) - 0.94) < 1e-12);
	/* absurd: not a sampler's error but a counting one */
	cr_expect_eq(hp_sample_rate_factor(3000000, 1000000, 100000, NULL), 1.0);
	cr_expect_eq(hp_sample_rate_factor(0, 0, 0, &m), 1.0);
	cr_expect_eq(m, 0.0);
}

/* A refused reading (a pause retired the TLAB during it) and a new session
 * break the chain: no gap spans them. */
Test(samplerate, a_refused_reading_or_a_reset_breaks_the_chain)
{
	static struct hp_sample_rate r;
	hp_sample_rate_reset(&r, 65536);
	hp_sample_rate_note(&r, 1000, 0, 100);
	hp_sample_rate_note(&r, 70000, 0, 100);
	cr_expect_eq(atomic_load(&r.gaps), 1);
	cr_expect_eq(atomic_load(&r.bytes), 69000);
	hp_sample_rate_note(&r, 0, -EAGAIN, 100);
	hp_sample_rate_note(&r, 200000, 0, 100);
	cr_expect_eq(atomic_load(&r.gaps), 1, "a gap spanned a refused reading");
	cr_expect_eq(atomic_load(&r.refused), 1);
	hp_sample_rate_note(&r, 260000, 0, 100);
	cr_expect_eq(atomic_load(&r.gaps), 2);
	hp_sample_rate_reset(&r, 65536);
	hp_sample_rate_note(&r, 300000, 0, 100);
	cr_expect_eq(atomic_load(&r.gaps), 0, "a gap spanned a reset");
	hp_sample_rate_note(&r, 290000, 0, 100);         /* backwards: not a gap */
	cr_expect_eq(atomic_load(&r.gaps), 0);
}

/* The thread's count: retired TLABs and outside ones, plus the current
 * TLAB's used part; a TLAB whose bounds are not a range is refused. */
Test(samplerate, allocated_bytes_read_from_the_thread)
{
	struct hp_allocated a = { .off_allocated = 16, .off_tlab = 64, .off_start = 8, .off_top = 16, .thread_size = 256 };
	_Alignas(8) unsigned char t[256];
	memset(t, 0, sizeof(t));
	int64_t allocated = 123456;
	uintptr_t start = 0x100000, top = 0x100000 + 4000;
	memcpy(t + 16, &allocated, 8);
	memcpy(t + 64 + 8, &start, 8);
	memcpy(t + 64 + 16, &top, 8);
	uint64_t out = 0;
	cr_assert_eq(hp_allocated_read(&a, (uintptr_t)t, &out), 0);
	cr_expect_eq(out, 123456 + 4000);
	top = start - 8;
	memcpy(t + 64 + 16, &top, 8);
	cr_expect_eq(hp_allocated_read(&a, (uintptr_t)t, &out), -EAGAIN);
	allocated = -1;
	top = start;
	memcpy(t + 16, &allocated, 8);
	memcpy(t + 64 + 16, &top, 8);
	cr_expect_eq(hp_allocated_read(&a, (uintptr_t)t, &out), -EAGAIN);
}

/* The first object of a thread's first TLAB after a collection
 * (allocated.h): the TLAB's refills 1 and the object, read through its
 * JNI local handle, at the TLAB's start. */
Test(samplerate, first_object_after_a_collection_told_from_the_tlab)
{
	struct hp_allocated a = { .off_allocated = 16, .off_tlab = 64, .off_start = 8, .off_top = 16,
				  .off_refills = 40, .thread_size = 256 };
	_Alignas(8) unsigned char t[256];
	memset(t, 0, sizeof(t));
	uintptr_t start = 0x100000, top = 0x100000 + 64;
	uint32_t refills = 1;
	memcpy(t + 64 + 8, &start, 8);
	memcpy(t + 64 + 16, &top, 8);
	memcpy(t + 64 + 40, &refills, 4);
	_Alignas(8) uintptr_t handle = start;      /* the local reference's slot */
	cr_expect_eq(hp_allocated_first_after_gc(&a, (uintptr_t)t, &handle), 1);
	handle = start + 16;                        /* a later object of that TLAB */
	cr_expect_eq(hp_allocated_first_after_gc(&a, (uintptr_t)t, &handle), 0);
	handle = start;
	refills = 2;                                /* a later TLAB's first object */
	memcpy(t + 64 + 40, &refills, 4);
	cr_expect_eq(hp_allocated_first_after_gc(&a, (uintptr_t)t, &handle), 0);
	refills = 1;
	memcpy(t + 64 + 40, &refills, 4);
	cr_expect_eq(hp_allocated_first_after_gc(&a, (uintptr_t)t, (const char *)&handle + 1), 0, "a tagged reference");
	cr_expect_eq(hp_allocated_first_after_gc(&a, (uintptr_t)t, NULL), 0);
	a.off_refills = -1;
	cr_expect_eq(hp_allocated_first_after_gc(&a, (uintptr_t)t, &handle), -ENOENT);
}

/* hp_allocated_init against VMStructs: the offsets must lie inside
 * JavaThread, else the count is refused with the offsets named; the TLAB's
 * refill count, optional, is dropped alone (the first-TLAB test off) where
 * it could not be read. */
static int init_with(uint64_t tlab, const char *refills_type, uint64_t refills, struct hp_allocated *a, char *err,
		     size_t len)
{
	struct fake_field fields[] = {
		{ "Thread", "_allocated_bytes", "jlong", 0, 16, NULL },
		{ "Thread", "_tlab", "ThreadLocalAllocBuffer", 0, tlab, NULL },
		{ "ThreadLocalAllocBuffer", "_start", "HeapWord*", 0, 8, NULL },
		{ "ThreadLocalAllocBuffer", "_top", "HeapWord*", 0, 16, NULL },
		{ refills_type, "_number_of_refills", "unsigned", 0, refills, NULL },
		{ NULL, NULL, NULL, 0, 0, NULL },
	};
	struct fake_type types[] = { { "JavaThread", "Thread", 0, 0, 0, 256 }, { NULL, NULL, 0, 0, 0, 0 } };
	struct fake_int ints[] = { { NULL, 0 } };
	struct fake_long longs[] = { { NULL, 0 } };
	struct hp_vms_tables t = fake_vms_tables(fields, types, ints, longs);
	struct hp_vms *v;
	cr_assert_eq(hp_vms_load(&t, &v, err, len), 0, "%s", err);
	int rc = hp_allocated_init(a, v, err, len);
	hp_vms_free(v);
	return rc;
}

Test(samplerate, allocated_offsets_bound_by_the_thread)
{
	struct hp_allocated a;
	char err[256] = "";
	cr_assert_eq(init_with(64, "ThreadLocalAllocBuffer", 40, &a, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(a.off_refills, 40);
	cr_expect_eq(a.thread_size, 256);
	/* The refill count past JavaThread's end: the rest stays on. */
	cr_assert_eq(init_with(64, "ThreadLocalAllocBuffer", 190, &a, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(a.off_refills, -1);
	/* Absent (a release without it in VMStructs): off too. */
	cr_assert_eq(init_with(64, "SomethingElse", 40, &a, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(a.off_refills, -1);
	/* The TLAB itself past the end: the count is refused, and says why. */
	err[0] = '\0';
	cr_expect_eq(init_with(240, "ThreadLocalAllocBuffer", 40, &a, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "lie outside JavaThread's 256 bytes"), "%s", err);
}
