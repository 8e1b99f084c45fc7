/* Live bytes over time and the leak test (src/agent/history.c) without a
 * JVM: records built from sweeps the test describes sample by sample, and
 * the suspects' statistic checked against values computed by hand from
 * the formulas in history.c's header comment:
 *   L = sum of B_i over verified samples alive, V = sum of v_i;
 *   change_var of a marking record = v_i of the samples verified since the
 *     previous marking record + v_i of the verified samples died since;
 *   z = (L_last - L_first) / sqrt(sum of change_var over the window's steps),
 *   suspect iff z >= 4, z over the second half >= 2 and the least-squares
 *   slope of L over time > 0 (bytes per minute, which ranks them).
 * test/integration/test_history_jvm.c runs the same on real JVMs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "agent/history.h"

#define S 1000000000LL  /* ns per second */

static struct hp_history h;

static void setup(void)
{
	cr_assert_eq(hp_history_init(&h, 64), 0);
}

static void teardown(void)
{
	hp_history_free(&h);
}

TestSuite(history, .init = setup, .fini = teardown);

/* A sweep's alive samples go to live (covered) or recent (no marking yet);
 * the record keeps per-site entries sorted by site, and totals. */
Test(history, a_record_sums_verified_and_recent_bytes_per_site)
{
	/* markings counted now: 1 (the first marking record). */
	hp_history_alive(&h, 7, 1000, 10, 1, 1);        /* verified by the marking */
	hp_history_alive(&h, 7, 500, 5, 1, 1);
	hp_history_alive(&h, 7, 300, 3, 0, 1);          /* recent */
	hp_history_alive(&h, 3, 2000, 20, 1, 1);
	hp_history_dead(&h, 3, 400, 4, 0, 1);           /* never verified: freed, not a change of L */
	hp_history_record(&h, 1, 10 * S, 5, 123456, 0);

	cr_assert_eq(hp_history_count(&h), 1);
	enum hp_hist_kind kind;
	const struct hp_hist_rec *r = hp_history_at(&h, 0, &kind);
	cr_assert_eq(kind, HP_HIST_MARKING);
	cr_assert_eq(r->markings, 1);
	cr_assert_eq(r->collections, 5);
	cr_assert_eq(r->heap_used, 123456);
	cr_assert_float_eq(r->live, 3500, 1e-9);
	cr_assert_float_eq(r->recent, 300, 1e-9);
	cr_assert_float_eq(r->freed, 400, 1e-9);
	cr_assert_eq(r->nsites, 2);
	cr_assert_eq(r->sites[0].site, 3, "sorted by site");
	cr_assert_eq(r->sites[1].site, 7);

	const struct hp_hist_site *s7 = hp_history_site(r, 7);
	cr_assert_not_null(s7);
	cr_assert_float_eq(s7->live, 1500, 1e-3);
	cr_assert_float_eq(s7->var, 15, 1e-3);
	cr_assert_float_eq(s7->recent, 300, 1e-3);
	/* Both verified since the previous marking record (there is none: 0
	 * markings then), so both are part of the change. */
	cr_assert_float_eq(s7->change_var, 15, 1e-3);
	const struct hp_hist_site *s3 = hp_history_site(r, 3);
	cr_assert_float_eq(s3->freed, 400, 1e-3);
	cr_assert_float_eq(s3->change_var, 20, 1e-3, "an unverified death is not part of the change");
	cr_assert_null(hp_history_site(r, 4));
}

/* Whether a sample counted at the previous marking record: age_now -
 * (markings_now - markings_then) >= 1. Samples counted at both records
 * cancel in the change and add nothing to its variance. */
Test(history, change_var_counts_only_what_was_verified_or_died_in_between)
{
	hp_history_alive(&h, 1, 1000, 100, 1, 1);
	hp_history_record(&h, 1, 1 * S, 1, 0, 0);
	/* Two markings later (3 counted): */
	hp_history_alive(&h, 1, 1000, 100, 3, 3);       /* covered by all 3: counted then too */
	hp_history_alive(&h, 1, 700, 49, 2, 3);         /* covered by 2: 2 - (3 - 1) = 0, new */
	hp_history_alive(&h, 1, 800, 64, 1, 3);         /* new */
	hp_history_dead(&h, 1, 600, 36, 3, 3);          /* counted then, died since */
	hp_history_dead(&h, 1, 500, 25, 2, 3);          /* died before it was ever counted */
	hp_history_record(&h, 3, 4 * S, 2, 0, 0);

	enum hp_hist_kind kind;
	const struct hp_hist_rec *r = hp_history_at(&h, 1, &kind);
	cr_assert_eq(kind, HP_HIST_MARKING);
	const struct hp_hist_site *s = hp_history_site(r, 1);
	cr_assert_float_eq(s->live, 2500, 1e-3);
	cr_assert_float_eq(s->var, 213, 1e-3);
	cr_assert_float_eq(s->change_var, 49 + 64 + 36, 1e-3);
	cr_assert_float_eq(s->freed, 1100, 1e-3);
}

/* Markings closer than 2 s share a record unless a profile asks; young
 * records at most one a second and only after a pause. */
Test(history, due_spaces_marking_records_and_young_records)
{
	cr_assert(hp_history_due(&h, 1, 1 * S, 0, false), "the first marking is recorded");
	hp_history_record(&h, 1, 1 * S, 1, 0, 0);
	cr_assert_not(hp_history_due(&h, 2, 2 * S, 1, false), "1 s after the last marking record");
	cr_assert(hp_history_due(&h, 2, 2 * S, 1, true), "a profile records the marking just made");
	cr_assert(hp_history_due(&h, 2, 3 * S, 1, false), "2 s after");
	cr_assert_not(hp_history_due(&h, 1, 3 * S, 1, false), "no marking, no pause: nothing to record");
	cr_assert_not(hp_history_due(&h, 1, 1 * S + S / 2, 2, false), "a pause, but 0.5 s after the last record");
	cr_assert(hp_history_due(&h, 1, 2 * S, 2, false), "a pause, 1 s after");
	hp_history_record(&h, 1, 2 * S, 2, 0, 0);       /* a young record (markings unchanged) */
	cr_assert_eq(h.young.n, 1);
	cr_assert_eq(h.marking.n, 1);
	/* A young record takes the young freed bytes; the marking ring keeps
	 * its own until the next marking record. */
	hp_history_alive(&h, 5, 1000, 0, 1, 1);
	hp_history_dead(&h, 5, 300, 9, 1, 1);           /* verified at the marking record: a change */
	hp_history_record(&h, 1, 3 * S, 3, 0, 0);
	cr_assert_float_eq(h.young.rec[1].freed, 300, 1e-9);
	hp_history_dead(&h, 5, 200, 4, 2, 2);           /* markings now 2, covered by both: counted at 1 */
	hp_history_record(&h, 2, 6 * S, 4, 0, 0);
	const struct hp_hist_rec *m = &h.marking.rec[1];
	cr_assert_float_eq(m->freed, 500, 1e-9, "freed since the previous marking record, young records between");
	cr_assert_float_eq(hp_history_site(m, 5)->change_var, 13, 1e-3);

	/* Merged by time, oldest first. */
	enum hp_hist_kind k;
	int64_t t[4];
	enum hp_hist_kind want[4] = { HP_HIST_MARKING, HP_HIST_YOUNG, HP_HIST_YOUNG, HP_HIST_MARKING };
	cr_assert_eq(hp_history_count(&h), 4);
	for (size_t i = 0; i < 4; i++) {
		t[i] = hp_history_at(&h, i, &k)->time_ns;
		cr_assert_eq(k, want[i], "record %zu", i);
	}
	cr_assert(t[0] <= t[1] && t[1] <= t[2] && t[2] <= t[3]);
	cr_assert_null(hp_history_at(&h, 4, &k));
}

/* A site rising by 10 samples of 1000 B (v = 1e4 each) per record: over
 * the 8-record window the rise is 70,000 B, the change variance 7 x 10 x
 * 1e4 = 7e5, z = 70000 / sqrt(7e5) = 83.67; over the second half (records
 * 4-8, mid = 0 + (8 - 1) / 2 = 3) 40000 / sqrt(4e5) = 63.25; the slope
 * 10,000 B per 2 s = 300,000 B a minute. A site flat at 50 samples with
 * one replaced per record (one added, one verified death): z = 0. */
Test(history, a_steady_rise_is_a_suspect_with_its_z_and_slope)
{
	for (uint64_t k = 1; k <= 8; k++) {
		int n = (int)k * 10;
		for (int i = 0; i < n; i++)
			hp_history_alive(&h, 2, 1000, 1e4, i < 10 ? 1 : 2, k);
		for (int i = 0; i < 50; i++)
			hp_history_alive(&h, 9, 1000, 1e4, i < 1 ? 1 : 2, k);
		if (k > 1)
			hp_history_dead(&h, 9, 1000, 1e4, 2, k);
		hp_history_record(&h, k, (int64_t)k * 2 * S, k, 0, 0);
	}
	struct hp_hist_suspect out[4];
	size_t n = hp_history_suspects(&h, out, 4);
	cr_assert_eq(n, 1, "only the rising site (got %zu)", n);
	cr_assert_eq(out[0].site, 2);
	cr_assert_float_eq(out[0].z, 70000 / sqrt(7e5), 1e-3, "z %.4f", out[0].z);
	cr_assert_float_eq(out[0].z_recent, 40000 / sqrt(4e5), 1e-3, "z_recent %.4f", out[0].z_recent);
	cr_assert_float_eq(out[0].per_min, 300000, 1e-3, "slope %.3f", out[0].per_min);
	cr_assert_float_eq(out[0].live, 80000, 1e-3);
	cr_assert_eq(out[0].window, 8);
	cr_assert_float_eq(out[0].span_s, 14, 1e-9);
}

/* The thresholds: a rise of z just under 4 is not a suspect, just over
 * is; a site that rose and levelled off (z over the window >= 4 but over
 * its second half < 2) is not; with fewer than 3 marking records there is
 * no test. Variance 1e6 per step from one added sample of 1e6 variance
 * term: z = rise / sqrt(steps x 1e6). */
static size_t suspects_for(const double *live, int records)
{
	for (int k = 1; k <= records; k++) {
		/* one sample carrying the site's whole L, re-added each record: its
		 * change variance 1e6 per step; L as given */
		hp_history_alive(&h, 4, live[k - 1], 1e6, 1, (uint64_t)k);
		hp_history_record(&h, (uint64_t)k, (int64_t)k * 2 * S, (uint64_t)k, 0, 0);
	}
	struct hp_hist_suspect out[2];
	return hp_history_suspects(&h, out, 2);
}

Test(history, z_of_4_is_the_line)
{
	/* 3 records, 2 steps: sd sqrt(2e6) = 1414.2; z 4 needs 5656.9 B. The
	 * second half (mid = 1): one step, sd 1000. */
	double under[3] = { 10000, 12700, 15600 };      /* z 3.96 */
	cr_assert_eq(suspects_for(under, 3), 0);
}

Test(history, z_just_over_4_is_a_suspect)
{
	double over[3] = { 10000, 12800, 15700 };       /* z 4.03, z_recent 2.9 */
	cr_assert_eq(suspects_for(over, 3), 1);
}

Test(history, a_rise_that_levelled_off_is_not_a_suspect)
{
	/* 8 records: +6000 per step, then flat from the fourth: z = 16100 /
	 * sqrt(7e6) = 6.09, but over the second half (mid = (8 - 1) / 2 = 3,
	 * records 4-8: 4 steps, sd 2000) (26100 - 26000) / 2000 = 0.05. */
	double lv[8] = { 10000, 16000, 22000, 26000, 26000, 26200, 25900, 26100 };
	cr_assert_eq(suspects_for(lv, 8), 0);
}

Test(history, two_records_are_not_enough)
{
	double lv[2] = { 0, 1e9 };
	cr_assert_eq(suspects_for(lv, 2), 0);
}

/* A record keeps at most HP_HIST_YOUNG_SITES sites for a young record,
 * the largest (live + recent + freed); the totals count them all. */
Test(history, a_young_record_keeps_the_largest_sites)
{
	struct hp_history big;
	cr_assert_eq(hp_history_init(&big, HP_HIST_YOUNG_SITES + 10), 0);
	hp_history_alive(&big, 0, 1, 0, 1, 1);
	hp_history_record(&big, 1, 1 * S, 1, 0, 0);     /* a marking record first */
	double total = 0;
	for (uint32_t s = 0; s < HP_HIST_YOUNG_SITES + 10; s++) {
		hp_history_alive(&big, s, 100.0 + s, 0, 0, 1);
		total += 100.0 + s;
	}
	hp_history_record(&big, 1, 3 * S, 2, 0, 0);
	const struct hp_hist_rec *r = &big.young.rec[0];
	cr_assert_eq(r->nsites, HP_HIST_YOUNG_SITES);
	cr_assert_float_eq(r->recent, total, 1e-6);
	cr_assert_null(hp_history_site(r, 9), "one of the 10 smallest");
	cr_assert_not_null(hp_history_site(r, 10));
	cr_assert_not_null(hp_history_site(r, HP_HIST_YOUNG_SITES + 9));
	hp_history_free(&big);
}

/* One sample counted at 8 marking records (its variance term 1e6), its
 * weight doubled before the last (a thinning kept it, or its thread's end
 * credited it: history.c): L rose by 1000 B with no sample added or
 * removed. Told of the move, the change's variance is 1000^2 and z = 1;
 * not told, the variance is 0 and z the 99 of a sample taken with
 * certainty: a suspect where nothing grew (CI, generational Shenandoah,
 * a Class mirror credited at exit). */
static size_t suspects_after_a_moved_weight(struct hp_history *hh, bool told, double *z)
{
	for (uint64_t k = 1; k <= 8; k++) {
		double b = k < 8 ? 1000 : 2000;
		cr_assert(hp_history_marking_record(hh, k));
		hp_history_alive(hh, 6, b, b * (b - 100), (unsigned)k, k);
		if (k == 8 && told)
			hp_history_reweighed(hh, 6, 1e6);
		hp_history_record(hh, k, (int64_t)k * 2 * S, k, 0, 0);
		cr_assert_not(hp_history_marking_record(hh, k), "a record at the same markings is a young one");
	}
	const struct hp_hist_site *s = hp_history_site(&hh->marking.rec[7], 6);
	cr_assert_not_null(s);
	cr_assert_float_eq(s->change_var, told ? 1e6 : 0, 1e-3);
	*z = 0;
	struct hp_hist_suspect out[2];
	size_t n = hp_history_suspects(hh, out, 2);
	if (n)
		*z = out[0].z;
	return n;
}

Test(history, a_weight_moved_while_counted_is_not_a_rise)
{
	double z;
	cr_assert_eq(suspects_after_a_moved_weight(&h, true, &z), 0);
	struct hp_history untold;
	cr_assert_eq(hp_history_init(&untold, 64), 0);
	/* the control: the same sweeps without the move */
	cr_assert_eq(suspects_after_a_moved_weight(&untold, false, &z), 1);
	cr_assert_float_eq(z, 99, 1e-9);
	hp_history_free(&untold);
}

/* The variance a moved weight adds (hp_history_moved_var): a credit's
 * move m counts m^2; a thinning by r = 2^k, whose dropped entries are
 * never seen again, m^2 r / (r - 1) on each kept one, so that the ~N/r
 * kept carry the N B^2 (r - 1) of all N. Checked by simulation too: N
 * entries of B thinned by 2, the change's sample variance against the
 * kept ones' sum. */
Test(history, a_moved_weight_adds_its_variance)
{
	cr_assert_float_eq(hp_history_moved_var(2000, 1.0, 1.0), 0, 1e-12, "not moved");
	cr_assert_float_eq(hp_history_moved_var(2000, 0, 1.0), 0, 1e-12, "never counted");
	/* a credit: 1000 B now, 800 before (factor 1.25): m = 200 */
	cr_assert_float_eq(hp_history_moved_var(1000, 1.0, 1.25), 200.0 * 200.0, 1e-6);
	/* a thinning by 2: B = 1000 kept at 2000, m = 1000, 2 m^2 */
	cr_assert_float_eq(hp_history_moved_var(2000, 1.0, 2.0), 2e6, 1e-6);
	/* by 4 (two thinnings): B = 1000 at 4000, m = 3000, m^2 4/3 */
	cr_assert_float_eq(hp_history_moved_var(4000, 0.5, 2.0), 9e6 * 4 / 3, 1e-3);
	/* Simulated: 400 entries of 1000 B thinned by 2, 2000 trials. */
	unsigned long long x = 88172645463325252ull;
	double sum = 0, sum2 = 0, carried = 0;
	for (int t = 0; t < 2000; t++) {
		double change = 0;
		for (int i = 0; i < 400; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			if (x & 1) {
				change += 1000;
				carried += hp_history_moved_var(2000, 1.0, 2.0);
			} else {
				change -= 1000;
			}
		}
		sum += change, sum2 += change * change;
	}
	double var = sum2 / 2000 - (sum / 2000) * (sum / 2000);
	cr_assert(fabs(carried / 2000 / var - 1) < 0.1, "carried %.4g against the change's variance %.4g",
		  carried / 2000, var);
	/* m^2 alone (the code before) carries half of it */
	cr_assert(fabs(carried / 2 / 2000 / var - 0.5) < 0.05);
}
