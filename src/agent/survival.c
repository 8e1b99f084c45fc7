/* Survival of sampled objects between markings (survival.h).
 *
 * Why. A weak reference still set proves nothing about an object until a
 * marking that began after its allocation ends, and a reference the last
 * marking found set stays set until the next one clears it, even if the
 * object died a moment later. Under load both errors are large: a cache
 * turning over several times a second between markings a second or more
 * apart is almost all "not yet verified", and most of what the last
 * marking verified is dead by the time of the profile. So the view between
 * markings is an estimate of what is alive now, from what the markings
 * taught about each site.
 *
 * Model. Lifetimes at a site are exponential with rate lambda (memoryless:
 * a cache replaced at random, garbage dying at once, long-lived objects
 * with lambda ~ 0). Two observations per site, decayed sums over the last
 * markings (half weight after ~3 markings):
 *  - first: the share of bytes alive when first judged by a marking. A
 *    sample is first judged by the first marking that began after its
 *    allocation, at an age uniform in [0, gap] (gap: time between the
 *    starts of successive markings), so f = (1 - e^{-L}) / L with
 *    L = lambda gap. Samples found dead before any marking judged them
 *    (young collections clear their references) count as dead there.
 *  - next: the share of bytes alive at one marking that is still alive
 *    at the next, e^{-lambda gap} under the model, measured on its own so
 *    that a site mixing long-lived and short-lived objects is right for
 *    the long-lived ones that got verified.
 * Estimate now, per sample with its reference still set:
 *  - not judged yet, allocated `age` ago: e^{-lambda age};
 *  - verified by the last marking, which began `since` ago:
 *    next^{since / gap}.
 * Shrinkage: a site's ratio is (alive + K * pooled) / (all + K * mean),
 * K = 8 samples' worth, so a site with a handful of judgments takes the
 * pooled share and one with hundreds its own. */
#include "agent/survival.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KEEP_PER_MARKING 0.8    /* weight of older judgments, per marking */
#define SHRINK_SAMPLES 8.0

int hp_survival_init(struct hp_survival *s, uint32_t cap)
{
	memset(s, 0, sizeof(*s));
	s->sites = calloc(cap, sizeof(*s->sites));
	if (!s->sites)
		return -ENOMEM;
	s->cap = cap;
	s->keep = KEEP_PER_MARKING;
	return 0;
}

void hp_survival_free(struct hp_survival *s)
{
	free(s->sites);
	memset(s, 0, sizeof(*s));
}

void hp_survival_reset(struct hp_survival *s)
{
	if (s->sites)
		memset(s->sites, 0, sizeof(*s->sites) * s->cap);
	memset(&s->pooled, 0, sizeof(s->pooled));
	s->epoch = 0;
}

void hp_survival_next_epoch(struct hp_survival *s)
{
	s->epoch++;
}

static void scale_ratio(struct hp_survival_ratio *r, double k)
{
	r->alive *= k;
	r->all *= k;
	r->n *= k;
}

/* Brings a site's sums to the current epoch. */
static void catch_up(const struct hp_survival *s, struct hp_survival_site *x)
{
	uint32_t d = s->epoch - x->epoch;
	if (!d)
		return;
	double k = d > 64 ? 0.0 : pow(s->keep, d);
	scale_ratio(&x->first, k);
	scale_ratio(&x->next, k);
	x->epoch = s->epoch;
}

void hp_survival_judge(struct hp_survival *s, uint32_t site, double bytes, bool first, bool alive)
{
	if (!s->sites || site >= s->cap || !(bytes > 0))
		return;
	struct hp_survival_site *targets[2] = { &s->sites[site], &s->pooled };
	for (int i = 0; i < 2; i++) {
		catch_up(s, targets[i]);
		struct hp_survival_ratio *r = first ? &targets[i]->first : &targets[i]->next;
		r->all += bytes;
		r->n += 1;
		if (alive)
			r->alive += bytes;
	}
}

static double shrunk(const struct hp_survival *s, const struct hp_survival_ratio *site,
		     const struct hp_survival_ratio *pooled, uint32_t site_epoch, uint32_t pooled_epoch, double *n)
{
	double ks = pow(s->keep, s->epoch - site_epoch), kp = pow(s->keep, s->epoch - pooled_epoch);
	double pa = pooled->alive * kp, pall = pooled->all * kp, pn = pooled->n * kp;
	double sa = site->alive * ks, sall = site->all * ks, sn = site->n * ks;
	if (n)
		*n = sn;
	if (!(pall > 0) || !(pn > 0)) {
		if (sall > 0)
			return sa / sall;
		return -1;
	}
	double share = pa / pall, mean = pall / pn;
	double f = (sa + SHRINK_SAMPLES * mean * share) / (sall + SHRINK_SAMPLES * mean);
	return f < 0 ? 0 : f > 1 ? 1 : f;
}

double hp_survival_first(const struct hp_survival *s, uint32_t site, double *n)
{
	static const struct hp_survival_site none;
	const struct hp_survival_site *x = s->sites && site < s->cap ? &s->sites[site] : &none;
	return shrunk(s, &x->first, &s->pooled.first, x == &none ? s->epoch : x->epoch, s->pooled.epoch, n);
}

double hp_survival_next(const struct hp_survival *s, uint32_t site, double *n)
{
	static const struct hp_survival_site none;
	const struct hp_survival_site *x = s->sites && site < s->cap ? &s->sites[site] : &none;
	return shrunk(s, &x->next, &s->pooled.next, x == &none ? s->epoch : x->epoch, s->pooled.epoch, n);
}

/* f(L) = (1 - e^{-L}) / L falls from 1 (L = 0) toward 1/L: bisection on
 * log L, 60 steps (f is monotone). */
double hp_survival_rate_gap(double f)
{
	if (!(f < 1))
		return 0;
	if (!(f > 1e-6))
		return 1e6;
	double lo = -20, hi = log(1e6);
	for (int i = 0; i < 60; i++) {
		double mid = (lo + hi) / 2, l = exp(mid);
		double v = -expm1(-l) / l;
		if (v > f)
			lo = mid;
		else
			hi = mid;
	}
	return exp((lo + hi) / 2);
}

double hp_survival_at_age(double f, double gap, double age)
{
	if (!(gap > 0) || !(age > 0))
		return 1;
	return exp(-hp_survival_rate_gap(f) * age / gap);
}

double hp_survival_since(double next, double gap, double since)
{
	if (!(gap > 0) || !(since > 0) || !(next < 1))
		return 1;
	if (!(next > 0))
		return 0;
	return pow(next, since / gap);
}

void hp_survival_cleared(struct hp_survival *s, uint32_t site, double bytes, bool recent)
{
	if (!s->sites || site >= s->cap || !(bytes > 0))
		return;
	struct hp_survival_site *x = &s->sites[site];
	if (x->cleared_epoch != s->epoch) {
		x->cleared_recent = x->cleared_verified = 0;
		x->cleared_epoch = s->epoch;
	}
	if (recent)
		x->cleared_recent += bytes;
	else
		x->cleared_verified += bytes;
}

void hp_survival_cleared_since(const struct hp_survival *s, uint32_t site, double *recent, double *verified)
{
	*recent = *verified = 0;
	if (!s->sites || site >= s->cap || s->sites[site].cleared_epoch != s->epoch)
		return;
	*recent = s->sites[site].cleared_recent;
	*verified = s->sites[site].cleared_verified;
}

double hp_survival_with_cleared(double raw, double est, double cleared)
{
	if (!(raw > 0) || !(est > 0))
		return 0;
	double v = est + (cleared > 0 ? cleared * est / raw : 0);
	return v < raw ? v : raw;
}
