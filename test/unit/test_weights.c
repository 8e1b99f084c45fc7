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

/* What the live view sums per sample (estimate.c add_live): alive now with
 * probability q. 1 KiB at 64 KiB, q = 1/4: bytes 66049.33 / 4; objects
 * 1 / (4 p); variance = the sampling term 4294879915.73 q^2 plus the
 * Bernoulli term B^2 q (1 - q) = 268429994.73 + 817971456.20. 100,000
 * bytes thinned to a half, q = 1 (just verified): B = 255568.15, sampling
 * term only. A site of both: the sum and its 95% half-width, by hand. A
 * sample certainly dead (q = 0) adds nothing. */
Test(weights, alive_terms_sum_to_the_site_estimate)
{
	struct hp_ht_term a = hp_ht_alive(1024, 1, 65536, 0.25);
	near(a.bytes, 16512.333331977006, "bytes at q 1/4");
	near(a.objects, 16.125325519508795, "objects at q 1/4");
	near(a.var, 1086401450.9322894, "var at q 1/4");
	near(a.var, 4294879915.733349 * 0.0625 + 66049.33332790821 * 66049.33332790821 * 0.25 * 0.75,
	     "var = sampling + Bernoulli");
	struct hp_ht_term b = hp_ht_alive(100000, 2, 65536, 1.0);
	near(b.bytes, 255568.1503076005, "bytes thinned, q 1");
	near(b.objects, 2.555681503076005, "objects thinned, q 1");
	near(b.var, 39758264420.888245, "var thinned, q 1");
	near(a.bytes + b.bytes, 272080.4836395775, "site bytes");
	near(hp_ht_half95(a.var + b.var), 396117.2407421643, "site half95");
	struct hp_ht_term d = hp_ht_alive(1024, 4, 65536, 0.0);
	cr_expect_eq(d.bytes, 0.0);
	cr_expect_eq(d.objects, 0.0);
	cr_expect_eq(d.var, 0.0);
}
