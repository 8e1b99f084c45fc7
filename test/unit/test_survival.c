/* survival.c: the estimate of what is alive now between markings, against
 * its formulas and against a simulated service whose truth is known. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

#include "agent/survival.h"

Test(survival, rate_gap_inverts_the_uniform_age_share)
{
	const double ls[] = { 1e-3, 0.1, 1, 3, 10, 50 };
	for (unsigned i = 0; i < sizeof(ls) / sizeof(ls[0]); i++) {
		double l = ls[i], f = -expm1(-l) / l;
		double got = hp_survival_rate_gap(f);
		cr_expect(fabs(got - l) <= 1e-6 * l + 1e-9, "L %g: f %g gave %g", l, f, got);
	}
	cr_expect_eq(hp_survival_rate_gap(1.0), 0.0);
	cr_expect_gt(hp_survival_rate_gap(0.0), 1e5);
}

Test(survival, at_age_and_since_are_the_exponential_model)
{
	double l = 2.0, f = -expm1(-l) / l, gap = 0.5;
	cr_expect(fabs(hp_survival_at_age(f, gap, 0.25) - exp(-l * 0.25 / gap)) < 1e-9);
	cr_expect_eq(hp_survival_at_age(f, gap, 0), 1.0);
	cr_expect_eq(hp_survival_at_age(f, 0, 1), 1.0);        /* no gap known: no decay */
	cr_expect(fabs(hp_survival_since(0.25, 2.0, 1.0) - 0.5) < 1e-12);
	cr_expect_eq(hp_survival_since(1.0, 2.0, 5.0), 1.0);
	cr_expect_eq(hp_survival_since(0.0, 2.0, 5.0), 0.0);
}

Test(survival, cleared_samples_raise_the_share_of_those_still_referenced)
{
	/* 100 bytes still referenced, the model expects 30 alive; 50 more of
	 * the group were found dead: 30% of 150 = 45 alive, all among the 100. */
	cr_expect(fabs(hp_survival_with_cleared(100, 30, 50) - 45) < 1e-9);
	cr_expect_eq(hp_survival_with_cleared(100, 80, 100), 100.0);   /* never above what is referenced */
	cr_expect_eq(hp_survival_with_cleared(100, 30, 0), 30.0);
	cr_expect_eq(hp_survival_with_cleared(0, 0, 10), 0.0);
}

Test(survival, a_site_with_few_judgments_leans_on_the_pooled_share)
{
	struct hp_survival s;
	cr_assert_eq(hp_survival_init(&s, 16), 0);
	cr_expect_eq(hp_survival_first(&s, 1, NULL), -1.0);     /* nothing judged anywhere */
	for (int i = 0; i < 1000; i++)
		hp_survival_judge(&s, 1, 100, true, i % 4 == 0);  /* site 1: 25% alive */
	double n;
	double own = hp_survival_first(&s, 1, &n);
	cr_expect(fabs(own - 0.25) < 0.01, "site 1: %g", own);
	cr_expect_eq(n, 1000.0);
	hp_survival_judge(&s, 2, 100, true, true);                /* site 2: one judgment, alive */
	double two = hp_survival_first(&s, 2, NULL);
	cr_expect(two > 0.25 && two < 0.4, "site 2 shrunk toward the pooled 25%%: %g", two);
	/* Older judgments fade: after many markings of 100% alive, site 1 is ~1. */
	for (int k = 0; k < 30; k++) {
		hp_survival_next_epoch(&s);
		for (int i = 0; i < 100; i++)
			hp_survival_judge(&s, 1, 100, true, true);
	}
	cr_expect_gt(hp_survival_first(&s, 1, NULL), 0.98);
	/* Cleared counts belong to the epoch they were made in. */
	hp_survival_cleared(&s, 1, 10, true);
	hp_survival_cleared(&s, 1, 5, false);
	double r, v;
	hp_survival_cleared_since(&s, 1, &r, &v);
	cr_expect(r == 10 && v == 5);
	hp_survival_next_epoch(&s);
	hp_survival_cleared_since(&s, 1, &r, &v);
	cr_expect(r == 0 && v == 0);
	hp_survival_free(&s);
}

/* xorshift64*: the simulation is the same on every run. */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* A service: objects of one site allocated at a steady rate, exponential
 * lifetimes of mean 1/LAMBDA, markings every GAP seconds that judge what
 * was allocated before they began. Between two markings, the estimate of
 * the bytes alive (verified ones with hp_survival_since, recent ones with
 * hp_survival_at_age) against the count of those alive: ~600 alive at
 * a time, so binomial noise alone is ~4% (sd); measured worst of 30
 * profiles 5.1%. Twice the time since the marking in the exponent (a
 * wrong formula) gives 23%: the bound, 12%, tells them apart.
 * Deterministic: one fixed stream of numbers. */
#define N 80000
static double born[N], dies[N];
static int judged[N];       /* 0 never, else the marking that last found it alive */

Test(survival, the_estimate_between_markings_matches_a_simulated_service)
{
	const double lambda = 3.0, gap = 0.6, rate = N / 24.0;  /* 24 s of allocation */
	struct hp_survival s;
	cr_assert_eq(hp_survival_init(&s, 4), 0);
	for (int i = 0; i < N; i++) {
		born[i] = i / rate;
		dies[i] = born[i] - log(1 - uniform()) / lambda;
		judged[i] = 0;
	}
	int marking = 0, checked = 0;
	double worst = 0;
	for (double t = gap; t < N / rate; t += gap) {
		/* A marking beginning at t judges everything born before it and
		 * not judged dead yet (the collector clears what it finds dead). */
		marking++;
		hp_survival_next_epoch(&s);
		for (int i = 0; i < N && born[i] < t; i++) {
			if (judged[i] < 0)
				continue;
			bool alive = dies[i] > t;
			hp_survival_judge(&s, 0, 1, judged[i] == 0, alive);
			judged[i] = alive ? marking : -1;
		}
		if (marking < 10)
			continue;
		/* A profile at t + 0.7 gap: every object not cleared yet. */
		double now = t + 0.7 * gap, est = 0, truth = 0;
		double f = hp_survival_first(&s, 0, NULL), g = hp_survival_next(&s, 0, NULL);
		for (int i = 0; i < N && born[i] < now; i++) {
			if (judged[i] < 0)
				continue;
			truth += dies[i] > now;
			est += judged[i] > 0 ? hp_survival_since(g, gap, now - t) : hp_survival_at_age(f, gap, now - born[i]);
		}
		double err = (est - truth) / truth;
		if (fabs(err) > worst)
			worst = fabs(err);
		checked++;
	}
	cr_expect_gt(checked, 20);
	cr_expect_lt(worst, 0.12, "worst relative error %.3f over %d profiles", worst, checked);
	hp_survival_free(&s);
}
