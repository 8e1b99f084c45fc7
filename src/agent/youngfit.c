/* A site's survival curve below its youngest judged age (youngfit.h).
 *
 * Two models. Exponential lifetimes from birth, S(a) = e^{-h a}: a cache
 * replaced at random is exactly that, and so is any site whose objects
 * die at a constant rate; one parameter, S(0) = 1 known. A free line in
 * log S, log S(a) = b0 + b1 a: b0 < 0 where objects dead at birth are
 * mixed in with ones that live. The free line was the only one: its
 * intercept, carried ~3,000 samples back from buckets at 3,000-12,000,
 * took the noise of the youngest bucket and the convexity of the wide
 * ones (a bucket of ages 8,000-16,000 holds the mean of e^{-a/3,500}
 * there, 0.045, which is S at 11,300, not at its mean 12,600), and read
 * generational ZGC's cache 0.66-0.70 alive at birth in some runs where
 * the judgments themselves, by maximum likelihood with S(0) = 1, give
 * the cache's own 1/3,500 (bench/load by hand, 4 runs: 1/3,350 to
 * 1/3,650): the view -10..-21% for a whole run, from the one requested
 * marking that judged young ages.
 *
 * So the exponential from birth first: h by weighted least squares
 * through the origin in log S, each bucket's log share taken back from
 * its mean over the bucket's ages to S at its mean (the gamma moment
 * match of youngfit.h, with the h of the pass before; three passes). It
 * stands where it fits the buckets' judgments (Pearson's X^2 within 3 sd
 * of its degrees of freedom); else the free line, as before. */
#include "agent/youngfit.h"

#include <math.h>

#define FIT_BUCKETS 4
#define FIT_PASSES 3

double hp_young_bucket_share(double h, double m, double v)
{
	if (!(v > 0) || !(m > 0))
		return exp(-h * m);
	return exp(-m * m / v * log1p(h * v / m));     /* log1p: exact where v / m is tiny */
}

bool hp_young_fit(const double *share, const double *weight, const double *at, const double *mean,
		  const double *var, int nb, double min_weight, double *b0, double *b1)
{
	int idx[FIT_BUCKETS], used = 0;
	double w[FIT_BUCKETS];
	for (int i = 0; i < nb && i < FIT_BUCKETS; i++) {
		/* A share with no judgment alive is the shrinkage's (~1e-5):
		 * fitted, generational ZGC's garbage read 45-165 MiB alive. */
		if (!(share[i] > 0 && share[i] < 1) || weight[i] < min_weight || share[i] * weight[i] < 1)
			continue;
		w[used] = weight[i] * share[i] / (1 - share[i]);       /* 1 / var(log share) */
		idx[used++] = i;
	}
	if (used < 2)
		return false;
	/* Exponential from birth. */
	double h = 0;
	for (int pass = 0; pass <= FIT_PASSES; pass++) {
		double sxy = 0, sxx = 0;
		for (int j = 0; j < used; j++) {
			int i = idx[j];
			double y = log(share[i]);
			if (pass > 0)
				y -= log(hp_young_bucket_share(h, mean[i], var[i])) + h * mean[i];
			sxy += w[j] * mean[i] * y, sxx += w[j] * mean[i] * mean[i];
		}
		h = sxx > 0 ? -sxy / sxx : 0;
		if (!(h > 0))
			break;
	}
	if (h > 0) {
		double x2 = 0;
		for (int j = 0; j < used; j++) {
			int i = idx[j];
			double p = fmin(fmax(hp_young_bucket_share(h, mean[i], var[i]), 1e-9), 1 - 1e-9);
			x2 += weight[i] * (share[i] - p) * (share[i] - p) / (p * (1 - p));
		}
		double df = used - 1;
		if (x2 <= df + 3 * sqrt(2 * df)) {
			*b0 = 0;
			*b1 = -h;
			return true;
		}
	}
	/* The free line through (at, log share). */
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (int j = 0; j < used; j++) {
		int i = idx[j];
		double x = at[i], y = log(share[i]);
		sw += w[j], sx += w[j] * x, sy += w[j] * y, sxx += w[j] * x * x, sxy += w[j] * x * y;
	}
	double d = sw * sxx - sx * sx;
	if (!(d > 0))
		return false;
	*b1 = (sw * sxy - sx * sy) / d;
	*b0 = (sy - *b1 * sx) / sw;
	return *b1 < 0;
}
