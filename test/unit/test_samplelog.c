/* The allocation-sample reservoir (src/agent/samplelog.c) without a JVM:
 * everything kept while it fits, a bounded and uniform sample after, and
 * nothing when off. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

#include "agent/samplelog.h"

struct tally {
	uint64_t n;
	double sum;             /* of the kept samples' offer order */
	uint64_t late;          /* kept from the second half of the offers */
	uint64_t half;
	uint32_t last_size_ok;
};

static void count(const struct hp_alloc_rec *r, void *ctx)
{
	struct tally *t = ctx;
	t->n++;
	t->sum += r->site;
	t->late += r->site >= t->half;
	t->last_size_ok += r->size == (uint64_t)r->site * 8 + 16;
}

static struct tally offer(struct hp_samplelog *l, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct hp_alloc_rec r = { .site = i, .thread = 0, .time_ns = i, .size = (uint64_t)i * 8 + 16, .weight = 1 };
		hp_samplelog_alloc(l, &r);
	}
	struct tally t = { .half = n / 2 };
	hp_samplelog_each(l, count, &t);
	return t;
}

Test(samplelog, everything_is_kept_while_it_fits)
{
	struct hp_samplelog l;
	cr_assert_eq(hp_samplelog_init(&l, 1), 0);
	struct tally t = offer(&l, 100);
	cr_expect_eq(t.n, 100);
	cr_expect_eq(t.last_size_ok, 100, "each record kept whole");
	cr_expect_eq(t.sum, 99.0 * 100 / 2);
	hp_samplelog_free(&l);
}

Test(samplelog, off_keeps_nothing)
{
	struct hp_samplelog l;
	cr_assert_eq(hp_samplelog_init(&l, 0), 0);
	cr_expect_eq(offer(&l, 1000).n, 0);
	hp_samplelog_free(&l);
}

/* Ten times what the reservoir holds: N = 327,680 offers over 16 stripes
 * (20,480 each, +-143 by the binomial), so every stripe fills and exactly
 * 32,768 are kept. Kept uniformly, the mean offer index is N/2 with a
 * standard deviation of N / sqrt(12) / sqrt(32768) = 523 (a little less:
 * the sample is drawn without replacement), and the share kept from the
 * second half 0.5 +- 0.0028. Bounds at 6 standard deviations: a correct
 * reservoir fails either less than once in 10^8 runs; one that keeps the
 * first offers (mean N/20) or the last (mean 0.95 N) fails at once. */
Test(samplelog, past_its_size_a_uniform_sample_of_fixed_size)
{
	struct hp_samplelog l;
	cr_assert_eq(hp_samplelog_init(&l, 1), 0);
	const uint32_t n = 10u * HP_SAMPLELOG_KEEP * HP_SAMPLELOG_STRIPES;
	struct tally t = offer(&l, n);
	cr_assert_eq(t.n, (uint64_t)HP_SAMPLELOG_KEEP * HP_SAMPLELOG_STRIPES);
	cr_expect_eq(t.last_size_ok, t.n);
	double mean = t.sum / (double)t.n, sd = n / sqrt(12.0) / sqrt((double)t.n);
	/* false failure 4e-9 per run: two checks at 6 sd, 2e-9 each (the stripe pick is seeded by a TLS address: random per run); docs/test-bounds.md */
	cr_expect(fabs(mean - n / 2.0) < 6 * sd, "mean kept index %.0f, want %.0f +- %.0f", mean, n / 2.0, 6 * sd);
	double late = (double)t.late / (double)t.n, sdl = sqrt(0.25 / (double)t.n);
	cr_expect(fabs(late - 0.5) < 6 * sdl, "share kept from the second half %.4f, want 0.5 +- %.4f", late, 6 * sdl);
	hp_samplelog_free(&l);
}
