/* Horvitz-Thompson weights of JEP 331 samples: what one sample stands for.
 *
 * HotSpot samples allocations as a Poisson process over bytes with mean
 * interval R: an object of S bytes is sampled with probability
 * p(S) = 1 - exp(-S/R). Thinning (live.c) keeps a sample with probability
 * 1/thin more, so its inclusion probability is pi = p(S) / thin. A sample
 * then stands for 1/pi objects and B = S/pi bytes, an unbiased estimate
 * whatever the sizes; its term in the variance of a sum of such bytes is
 * S^2 (1 - pi) / pi^2 = B (B - S). A total's 95% interval is the sum
 * +- 1.96 sqrt(sum of the terms) (normal approximation). Pure functions:
 * test/unit/test_weights.c checks them against hand-computed values. */
#ifndef HP_AGENT_WEIGHTS_H
#define HP_AGENT_WEIGHTS_H

#include <stdint.h>

/* p(S) at mean interval R bytes; 1 when R <= 0 (every allocation). */
double hp_sample_probability(uint64_t size, double interval);

/* B = S / pi with pi = p(S) / thin, and (if var) its variance term
 * B (B - S). thin > 0: thinning's 2^level times the sampler's factor (live.h), pi <= 1. */
double hp_ht_bytes(uint64_t size, double thin, double interval, double *var);

/* A sample's term in an estimate of what is alive now, when it is alive
 * with probability q (survival between markings; 1 when a marking just
 * found it alive): bytes B q, objects q / pi, and the variance of
 * both uncertainties, sampling S^2 (1 - pi) / pi^2 q^2 and not knowing
 * whether it survived B^2 q (1 - q). */
struct hp_ht_term {
	double bytes, objects, var;
};
struct hp_ht_term hp_ht_alive(uint64_t size, double thin, double interval, double q);

/* Half the width of the 95% interval of a sum whose variance is var. */
double hp_ht_half95(double var);

#endif
