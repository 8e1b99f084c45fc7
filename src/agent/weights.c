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

double hp_ht_half95(double var)
{
	return var > 0 ? 1.96 * sqrt(var) : 0.0;
}
