/* Horvitz-Thompson weights (weights.h). */
#include "agent/weights.h"

#include <math.h>

double hp_sample_probability(uint64_t size, double interval)
{
	if (interval <= 0)
		return 1.0;
	double p = -expm1(-(double)size / interval);
	return p > 0 ? p : 1e-12;
}

double hp_ht_bytes(uint64_t size, double thin, double interval, double *var)
{
	double pi = hp_sample_probability(size, interval) / thin;
	double b = (double)size / pi;
	if (var)
		*var = b * (b - (double)size);
	return b;
}

struct hp_ht_term hp_ht_alive(uint64_t size, double thin, double interval, double q)
{
	double pi = hp_sample_probability(size, interval) / thin, s = (double)size, b = s / pi;
	return (struct hp_ht_term){ b * q, q / pi, s * s * (1.0 - pi) / (pi * pi) * q * q + b * b * q * (1 - q) };
}

double hp_ht_half95(double var)
{
	return var > 0 ? 1.96 * sqrt(var) : 0.0;
}
