/* weights.c: the Horvitz-Thompson weights every estimate is built from,
 * against values computed by hand (Python's math module, double
 * precision): p = 1 - exp(-S/R), B = S/pi, var term B (B - S). */
#include <criterion/criterion.h>
#include <math.h>

#include "agent/weights.h"

static void near(double got, double want, const char *what)
{
	cr_expect(fabs(got - want) <= 1e-9 * fabs(want) + 1e-12, "%s: %.17g, want %.17g", what, got, want);
}

Test(weights, one_kib_at_64_kib)
{
	/* p = 1 - e^{-1/64} */
	near(hp_sample_probability(1024, 65536), 0.015503562994591547, "p");
	double var, b = hp_ht_bytes(1024, 1, 65536, &var);
	near(b, 66049.33332790821, "B");
	near(var, 4294879915.733349, "var");
	/* Thinned to a quarter: pi = p / 4. */
	b = hp_ht_bytes(1024, 4, 65536, &var);
	near(b, 264197.33331163286, "B thinned");
	near(var, 69529692859.66692, "var thinned");
}

/* Small objects stand for about R bytes each, large ones for themselves:
 * at S = 10 R the weight is within 5e-5 of S and the variance small. */
Test(weights, small_and_large)
{
	double v1, v2, v3;
	near(hp_ht_bytes(100, 1, 65536, &v1), 65586.0127156592, "B(100)");
	near(v1, 4294966462.667045, "var(100)");
	near(hp_ht_bytes(100000, 1, 65536, &v2), 127784.07515380025, "B(100000)");
	near(v2, 3550362347.532046, "var(100000)");
	near(hp_ht_bytes(10u << 20, 1, 524288, &v3), 10485760.021612762, "B(10 MiB at 512k)");
	near(v3, 226626.23093586147, "var(10 MiB at 512k)");
	/* A site of the first two: the sum and its 95% half-width. */
	near(hp_ht_half95(v1 + v2), 1.96 * sqrt(4294966462.667045 + 3550362347.532046), "half95");
}

Test(weights, every_allocation_when_the_interval_is_zero)
{
	double var;
	near(hp_sample_probability(1, 0), 1.0, "p at R=0");
	near(hp_ht_bytes(4096, 1, 0, &var), 4096.0, "B at R=0");
	near(var, 0.0, "var at R=0");
	cr_expect_eq(hp_ht_half95(0), 0.0);
	cr_expect_eq(hp_ht_half95(-1), 0.0);
	/* No variance wanted: NULL is allowed. */
	near(hp_ht_bytes(1024, 1, 65536, NULL), 66049.33332790821, "B without var");
}
