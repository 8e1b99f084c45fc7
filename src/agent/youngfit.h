/* A site's survival curve below its youngest judged age (survival.c).
 *
 * Markings judge a sample "alive" or "dead by" its age when they began;
 * where no marking judges young ages (generational ZGC judges nothing
 * younger than its promote-all collection, ~3,000 samples under load) the
 * curve there is carried back from the youngest age buckets. The buckets
 * are log2 wide, and a bucket's share is the mean of S over its ages,
 * above S at their mean where S is convex. Pure functions:
 * test/unit/test_survival.c checks them through the curve. */
#ifndef HP_AGENT_YOUNGFIT_H
#define HP_AGENT_YOUNGFIT_H

#include <stdbool.h>

/* The youngest buckets (up to 4 of nb) that carry a slope: a share in
 * (0, 1), at least min_weight judgments and one alive. share: alive among
 * judged (shrunk, survival.c); weight: judgments; at: where the curve
 * has the share (placed, survival.c); mean, var: the judged ages' mean
 * and variance. Sets log S(a) = b0 + b1 a for ages below the youngest:
 * b0 = 0 (S(0) = 1) with the hazard fitted to the buckets' judgments
 * where that fits them, else the free weighted line through (at, log
 * share). False without two such buckets, or without a decline. */
bool hp_young_fit(const double *share, const double *weight, const double *at, const double *mean,
		  const double *var, int nb, double min_weight, double *b0, double *b1);

/* E[e^{-h A}] for ages A of mean m and variance v: the gamma
 * distribution's (1 + h v / m)^(-m^2 / v), e^{-h m} where v = 0. */
double hp_young_bucket_share(double h, double m, double v);

#endif
