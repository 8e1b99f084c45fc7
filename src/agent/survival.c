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
 * The clock. Ages are counted on the allocation clock: samples taken
 * since (checkpoints at every pause, interpolated). Objects die as the
 * program allocates (a cache entry is replaced by a new one, garbage is
 * made and dropped), so a program stalled by its collector, or idle after
 * a marking, has lost nothing since, and a wall clock would say it had.
 *
 * Survival by age (the recent samples). Each sample is judged once
 * "first": alive when the first marking that covers it began, or dead by
 * then, at its age then. For a sample found dead before any marking
 * covered it (a young collection cleared its reference), that marking is
 * not known yet: it waits in a pending ring and is judged when one covers
 * it, at the age it had when that marking began (hp_survival_settle):
 * dead, unless the sweeps saw it referenced after the marking's first
 * pause and cleared before its end (G1: a young pause during the cycle
 * cleared it, so it was alive when the cycle began; judged dead, these
 * read a cache 0.67 alive at 30 ms where 0.93 were, the view 13-23% low).
 * These are current-status observations: each says "alive at age a" or
 * "dead by age a", and the share alive among those judged at ages near a
 * estimates S(a) = P(alive at age a) whatever the lifetimes' shape. Per
 * site, log2 age buckets (decayed sums: older judgments weigh 0.8 per
 * marking; on generational ZGC, per marking that judges at that age:
 * bucket_catch_up), each bucket's share shrunk toward the pooled one, made
 * non-increasing (pool adjacent violators), each placed where the curve
 * has its value (a little below its judgments' mean age: place_shares),
 * interpolated between them (hp_survival_by_age). A recent sample of age a counts
 * for S(a); so do, in expectation, the pending ones (found dead, but what
 * the model expects of them is what it expects of every sample allocated
 * then), all of it among the samples still referenced.
 *
 * The verified samples. A sample the last marking found alive is alive
 * now with S(a now) / S(a then), which the first judgments cannot give
 * past the ages they see (about one gap between markings). So per site,
 * by span: of the samples a marking found alive, each later marking
 * judges them again at the time since that marking began (the span):
 * alive, or dead by then (found dead in between, by a young collection,
 * counts when the next marking comes, at its span: hp_survival_settle_cleared;
 * alive if a young pause of that marking cleared it, as for the pending).
 * These are current-status data again, in the same log2 buckets, and the
 * curve P(alive after span d | alive at a marking) is read at the time
 * since the last marking began, at the constant hazard between buckets
 * (hp_survival_by_span). Markings come at irregular gaps (G1's own cycles
 * between requests, 0.2 to 4 s apart under load): one "next" share over
 * all of them applied as next^{since / median gap}, as before, held 20
 * of G1's 32 periodic profiles under load within 10% (one at +54%); by
 * span, 26 of 32 (docs/load-releases.md). Where the spans have too few judgments yet, "next" (the share still
 * alive at the next marking) with the exponential model next^{since/gap},
 * then "first" (the share alive at first judgment, all ages together) with
 * f = (1 - e^-L)/L, L = lambda gap. Samples verified then found dead
 * since (young collections) count at the referenced ones' mean
 * (hp_survival_with_cleared). A sample verified by the last marking and
 * none before it was younger then than about one gap, the ages the
 * first judgments see: it takes S(a then + since) / S(a then) on the curve
 * by age instead of the spans (estimate.c verified_once). The spans are
 * measured at the gaps alone, and where markings are rare (one per ~20 s
 * on generational Shenandoah under load) a short-lived site's are all
 * dead: read at the 0.2 s since the marking they said 0 (or, with none of
 * the site's own, the long-lived sites' ~1).
 *
 * Shrinkage: a site's ratio is (alive + K * pooled) / (all + K * mean),
 * K = 8 samples' worth, so a site with a handful of judgments takes the
 * pooled share and one with hundreds its own. In the curves, K fades once
 * a site has SHRINK_FULL judgments of its own, a bucket's
 * pooled share is capped at the site's own share at younger ages (the
 * pooled share at old ages is the long-lived sites'), and a youngest
 * bucket with fewer than HP_SURV_SLOPE_MIN judgments joins the next (the
 * curve below it rests on that bucket alone).
 *
 * What it does not know: lifetimes that change with the load (the
 * estimate follows within a few markings), and a marking's start where
 * the collector does not say it (G1's own cycles: the cover and start are
 * lower bounds, ages come out young and the view low; docs/RESULTS.md, under load).
 */
#include "agent/survival.h"
#include "agent/youngfit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KEEP_PER_MARKING 0.8    /* weight of older judgments, per marking */
#define SHRINK_SAMPLES 8.0
#define SHRINK_FULL 64.0            /* a site's own judgments past which the curves' shrinkage fades */
#define HP_SURV_SLOPE_MIN 40.0      /* judgments (with the shrinkage's) for a bucket to give a slope */

#define PENDING_CAP 131072      /* 3 MiB at most, touched as used */
#define GONE_CAP 65536          /* 1 MiB at most, likewise */

int hp_survival_init(struct hp_survival *s, uint32_t cap)
{
	memset(s, 0, sizeof(*s));
	s->sites = calloc(cap, sizeof(*s->sites));
	s->pending = calloc(PENDING_CAP, sizeof(*s->pending));
	s->gone = calloc(GONE_CAP, sizeof(*s->gone));
	if (!s->sites || !s->pending || !s->gone) {
		free(s->sites);
		free(s->pending);
		free(s->gone);
		s->sites = NULL;
		s->pending = NULL;
		s->gone = NULL;
		return -ENOMEM;
	}
	s->gone_cap = GONE_CAP;
	s->pending_cap = PENDING_CAP;
	s->cap = cap;
	s->keep = KEEP_PER_MARKING;
	return 0;
}

void hp_survival_free(struct hp_survival *s)
{
	free(s->pending);
	free(s->sites);
	free(s->gone);
	memset(s, 0, sizeof(*s));
}

void hp_survival_reset(struct hp_survival *s)
{
	if (s->sites)
		memset(s->sites, 0, sizeof(*s->sites) * s->cap);
	memset(&s->pooled, 0, sizeof(s->pooled));
	s->epoch = 0;
	s->ngone = 0;
	s->pending_head = s->pending_n = 0;
	s->pending_dropped = 0;
}

void hp_survival_next_epoch(struct hp_survival *s)
{
	s->ngone = 0;
	s->epoch++;
}

static void scale_ratio(struct hp_survival_ratio *r, double k)
{
	r->alive *= k;
	r->all *= k;
	r->n *= k;
}

/* One bucket of a curve's sums, times k. */
static void scale_bucket(struct hp_survival_ages *a, unsigned b, float k)
{
	a->alive[b] *= k;
	a->all[b] *= k;
	a->age_bytes[b] *= k;
	a->age2_bytes[b] *= k;
	a->n[b] *= k;
}

/* Brings a site's sums to the current epoch (with age_when_judged, its
 * curves' buckets age as they are judged instead: bucket_catch_up). */
static void catch_up(const struct hp_survival *s, struct hp_survival_site *x)
{
	uint32_t d = s->epoch - x->epoch;
	if (!d)
		return;
	double k = d > 64 ? 0.0 : pow(s->keep, d);
	scale_ratio(&x->first, k);
	scale_ratio(&x->next, k);
	if (!s->age_when_judged) {
		struct hp_survival_ages *tables[2] = { &x->ages, &x->spans };
		for (int t = 0; t < 2; t++)
			for (unsigned i = 0; i < HP_SURV_AGES; i++)
				scale_bucket(tables[t], i, (float)k);
	}
	x->epoch = s->epoch;
}

/* With age_when_judged, a bucket about to take a judgment in this epoch:
 * its older judgments weigh KEEP_PER_MARKING less, once per marking that
 * judges at its ages. Aged with every marking, the ages no marking
 * reaches faded: generational ZGC's own majors judge what was promoted by
 * their start (ages past ~2 s under load), the young ages only its rare
 * requested majors; the young buckets thinned, thin buckets merged with
 * the dead old ones, and over 60 s the view read -99% to +30%
 * (docs/load-bucket-aging-60s.md). On G1 it read worse (40 of 52
 * periodic profiles within 10% against 49, same runs): not there. */
static void bucket_catch_up(const struct hp_survival *s, struct hp_survival_ages *a, unsigned b)
{
	if (!s->age_when_judged || a->epoch[b] == s->epoch)
		return;
	scale_bucket(a, b, (float)s->keep);
	a->epoch[b] = s->epoch;
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

void hp_survival_cleared(struct hp_survival *s, uint32_t site, double bytes, uint32_t seen, uint32_t found)
{
	if (!s->sites || site >= s->cap || !(bytes > 0))
		return;
	struct hp_survival_site *x = &s->sites[site];
	if (x->cleared_epoch != s->epoch || !(x->cleared_verified > 0)) {
		x->cleared_verified = 0;
		x->cleared_n = 0;
		x->cleared_epoch = s->epoch;
	}
	x->cleared_verified += bytes;
	x->cleared_n += 1;
	if (s->gone && s->ngone < s->gone_cap)
		s->gone[s->ngone++] = (struct hp_survival_gone){ site, seen, found, (float)bytes };
	else
		s->gone_dropped++;
}

double hp_survival_cleared_since(const struct hp_survival *s, uint32_t site)
{
	if (!s->sites || site >= s->cap || s->sites[site].cleared_epoch != s->epoch)
		return 0;
	return s->sites[site].cleared_verified;
}

double hp_survival_with_cleared(double raw, double est, double cleared)
{
	if (!(raw > 0) || !(est > 0))
		return 0;
	double v = est + (cleared > 0 ? cleared * est / raw : 0);
	return v < raw ? v : raw;
}

/* ---- first judgments by age ----------------------------------------------- */

unsigned hp_survival_age_bucket(double age)
{
	if (!(age >= HP_SURV_AGE_BASE))
		return 0;
	int b = (int)floor(log2(age / HP_SURV_AGE_BASE)) + 1;
	return b >= HP_SURV_AGES ? HP_SURV_AGES - 1 : (unsigned)b;
}

static void judge_in(struct hp_survival *s, uint32_t site, double bytes, double n, double age, bool alive, bool span)
{
	if (!s->sites || site >= s->cap || !(bytes > 0))
		return;
	if (!(age > 0))
		age = 0;
	unsigned b = hp_survival_age_bucket(age);
	struct hp_survival_site *targets[2] = { &s->sites[site], &s->pooled };
	for (int i = 0; i < 2; i++) {
		catch_up(s, targets[i]);
		struct hp_survival_ages *a = span ? &targets[i]->spans : &targets[i]->ages;
		bucket_catch_up(s, a, b);
		a->all[b] += (float)bytes;
		a->age_bytes[b] += (float)(bytes * age);
		a->age2_bytes[b] += (float)(bytes * age * age);
		a->n[b] += (float)n;
		if (alive)
			a->alive[b] += (float)bytes;
	}
}

void hp_survival_judge_age(struct hp_survival *s, uint32_t site, double bytes, double age, bool alive)
{
	judge_in(s, site, bytes, 1, age, alive, false);
}

void hp_survival_judge_span(struct hp_survival *s, uint32_t site, double bytes, double span, bool alive)
{
	judge_in(s, site, bytes, 1, span, alive, true);
}

void hp_survival_settle_cleared(struct hp_survival *s, double span, uint32_t alive_from, uint32_t alive_before)
{
	for (uint32_t k = 0; s->sites && k < s->ngone; k++) {
		const struct hp_survival_gone *g = &s->gone[k];
		if (g->site < s->cap)
			judge_in(s, g->site, g->bytes, 1, span,
				 hp_survival_alive_at_start(g->seen, g->found, alive_from, alive_before), true);
	}
	s->ngone = 0;
}

void hp_survival_pend(struct hp_survival *s, uint32_t site, uint32_t pause, uint32_t seen, uint32_t found,
		      int64_t born_ns, double bytes)
{
	if (!s->pending || !(bytes > 0))
		return;
	if (s->pending_n == s->pending_cap) {
		/* Full (no marking for a long while): the oldest goes, counted. */
		s->pending_head = (s->pending_head + 1) % s->pending_cap;
		s->pending_n--;
		s->pending_dropped++;
	}
	s->pending[(s->pending_head + s->pending_n) % s->pending_cap] =
		(struct hp_survival_pending){ site, pause, seen, found, born_ns, (float)bytes };
	s->pending_n++;
}

void hp_survival_each_pending(const struct hp_survival *s, void (*fn)(uint32_t site, int64_t born_ns, double bytes,
								    void *ctx), void *ctx)
{
	for (uint32_t i = 0; i < s->pending_n; i++) {
		const struct hp_survival_pending *p = &s->pending[(s->pending_head + i) % s->pending_cap];
		fn(p->site, p->born_ns, p->bytes, ctx);
	}
}

void hp_survival_settle(struct hp_survival *s, uint32_t cover, uint32_t alive_from, uint32_t alive_before,
			double start, double (*born)(int64_t ns, void *ctx), void *ctx)
{
	/* Samples die in any order of their allocation: every pending entry
	 * is looked at, the covered ones judged, the others kept in order.
	 * One alive at the start is then a verified sample gone since
	 * (hp_survival_cleared), as judge.c counts one found so outside a
	 * request: left out, the verified part after a requested G1 marking
	 * lacked the cache entries that died during the request (30-40 MiB
	 * of 190 under load) and read its survivors alone, 10-14% low. */
	uint32_t kept = 0;
	for (uint32_t i = 0; i < s->pending_n; i++) {
		struct hp_survival_pending p = s->pending[(s->pending_head + i) % s->pending_cap];
		if (p.pause <= cover) {
			bool alive = hp_survival_alive_at_start(p.seen, p.found, alive_from, alive_before);
			hp_survival_judge_age(s, p.site, p.bytes, start - born(p.born_ns, ctx), alive);
			if (alive)
				hp_survival_cleared(s, p.site, p.bytes, p.seen, p.found);
		} else {
			s->pending[(s->pending_head + kept++) % s->pending_cap] = p;
		}
	}
	s->pending_n = kept;
}

/* Where `age` lies between buckets i - 1 (0) and i (1); past 1 beyond
 * bucket i. */
static double chord_t(const double *at, int i, double age)
{
	return at[i] > at[i - 1] ? (age - at[i - 1]) / (at[i] - at[i - 1]) : 1;
}

/* At the constant hazard between buckets i - 1 and i, read at t (chord_t;
 * past bucket i too: the same hazard carried on). */
static double chord(const double *share, int i, double t)
{
	return share[i - 1] * pow(share[i] / share[i - 1], t);
}

/* Buckets i and i + 1 as one (weighted), the arrays closed up; the new
 * count. sq: the buckets' mean squared ages, merged as the ages are. */
static int merge_buckets(double *share, double *weight, double *at, double *sq, int nb, int i, double k)
{
	double w = weight[i] + weight[i + 1];
	share[i] = (share[i] * weight[i] + share[i + 1] * weight[i + 1]) / w;
	at[i] = (at[i] * weight[i] + at[i + 1] * weight[i + 1]) / w;
	sq[i] = (sq[i] * weight[i] + sq[i + 1] * weight[i + 1]) / w;
	weight[i] = w - k;                      /* the shrinkage counted once */
	nb--;
	memmove(share + i + 1, share + i + 2, (size_t)(nb - i - 1) * sizeof(*share));
	memmove(weight + i + 1, weight + i + 2, (size_t)(nb - i - 1) * sizeof(*weight));
	memmove(at + i + 1, at + i + 2, (size_t)(nb - i - 1) * sizeof(*at));
	memmove(sq + i + 1, sq + i + 2, (size_t)(nb - i - 1) * sizeof(*sq));
	return nb;
}

/* Where on the age axis a bucket's share belongs. A bucket's share is
 * the mean of S(a) over the ages judged in it, which for a declining
 * curve is above S at their mean age (S is convex there: e^{-h a}
 * averaged over a log2 bucket's ages, h a ~ 2, is S at 0.946 of the mean
 * age): read at the mean age, the curve came out high everywhere, +0.7%
 * to +3.3% on the recent part of a simulated cache of exponential
 * lifetimes with markings 0.5-2 s apart (test_survival), the more the
 * farther apart (the estimate reads recent samples up to two gaps old).
 * To second order, mean e^{-h a} = e^{-h mean}(1 + h^2 var / 2), so the
 * share belongs at mean - h var / 2, h the curve's local hazard (from
 * the neighbouring buckets' shares), var the spread of the bucket's ages.
 * Kept in order and above half the mean. */
static void place_shares(const double *share, double *at, const double *sq, int nb)
{
	double moved[HP_SURV_AGES];
	for (int i = 0; i < nb; i++) {
		double h = 0;
		int nh = 0;
		if (i + 1 < nb && share[i] > 0 && share[i + 1] > 0 && at[i + 1] > at[i])
			h += log(share[i] / share[i + 1]) / (at[i + 1] - at[i]), nh++;
		if (i > 0 && share[i] > 0 && share[i - 1] > 0 && at[i] > at[i - 1])
			h += log(share[i - 1] / share[i]) / (at[i] - at[i - 1]), nh++;
		double var = sq[i] - at[i] * at[i];
		moved[i] = nh && h > 0 && var > 0 ? fmax(at[i] - h / nh * var / 2, at[i] / 2) : at[i];
	}
	for (int i = 0; i < nb; i++)
		if (i == 0 || moved[i] > at[i - 1])
			at[i] = moved[i];
}

/* The variance of log(share) for a share of `w` judgments, by the delta
 * method on the binomial, (1 - s) / (s w); a share at 0 or 1 counts as
 * half a judgment off it (no judgment says exactly 0 or 1). */
static double var_log_share(double share, double w)
{
	if (!(w > 0))
		return 0;
	double lo = 0.5 / w, sh = share < lo ? lo : share > 1 - lo ? 1 - lo : share;
	return (1 - sh) / (sh * w);
}

/* u (if any): log S = c0 log share(block of bucket i0) [+ c1 log share(block of i1)]. */
static void unc_set(struct hp_surv_unc *u, const int *block_of, const double *bw, const double *bs, int i0, double c0,
		    int i1, double c1)
{
	if (!u)
		return;
	u->n = 0;
	int ids[2] = { i0, i1 };
	double cs[2] = { c0, c1 };
	for (int j = 0; j < 2; j++) {
		if (ids[j] < 0 || cs[j] == 0)
			continue;
		unsigned b = (unsigned)block_of[ids[j]];
		if (u->n && u->block[0] == b) {
			u->coef[0] += cs[j];        /* one pooled block: its error counts once */
			continue;
		}
		u->block[u->n] = b;
		u->coef[u->n] = cs[j];
		u->var_log[u->n] = var_log_share(bs[b], bw[b]);
		u->n++;
	}
}

/* Between bucket i - 1, some alive, and bucket i, none alive: no constant
 * hazard joins a share to 0, and the straight chord between them is far
 * above any survival curve there. Generational ZGC's own majors judge a
 * cache only at the ages it is promoted by (60,000-100,000 samples under
 * load), all dead; the straight chord from 0.21 at 11,000 (the requested
 * major's oldest bucket) read it 0.175 alive at 20,000 and 0.094 at
 * 40,000, where its hazard says 0.05 and 0.003, and over the gigabytes of
 * recent samples the cache's view went +58..+143% from the first own major
 * on (period=2, 256k; test_load's load::z_generational). So: the hazard
 * of the decline before bucket i - 1 carried on (exact for exponential
 * lifetimes; below a mixture's log-convex curve), never above the
 * constant hazard from bucket i - 1 to half a judgment alive in bucket i
 * (what "none of n alive" allows at most, about); that alone where no
 * decline comes before. */
static double toward_dead(const double *share, const double *weight, const double *at, int i, double age,
			  const int *block_of, const double *bw, const double *bs, struct hp_surv_unc *u)
{
	double t = chord_t(at, i, age);
	double floor = fmin(0.5 / fmax(weight[i], 1), share[i - 1]);
	double v = share[i - 1] * pow(floor / share[i - 1], t);
	unc_set(u, block_of, bw, bs, i - 1, 1 - t, -1, 0);
	if (i >= 2 && share[i - 2] > share[i - 1] && at[i - 1] > at[i - 2] && weight[i - 1] >= HP_SURV_SLOPE_MIN &&
	    weight[i - 2] >= HP_SURV_SLOPE_MIN) {
		double tc = chord_t(at, i - 1, age), c = chord(share, i - 1, tc);
		if (c < v) {
			unc_set(u, block_of, bw, bs, i - 2, 1 - tc, i - 1, tc);
			v = c;
		}
	}
	return v;
}

/* Per bucket: the site's share, shrunk toward the pooled one, and the
 * judgments' mean age; then made non-increasing (pool adjacent violators,
 * weighted by judgments). */
static double curve(const struct hp_survival *s, uint32_t site, double age, bool span, double min_n,
		    struct hp_surv_unc *u)
{
	if (u) {
		u->n = 0;
		u->youngest = 0;
	}
	static const struct hp_survival_site none;
	const struct hp_survival_site *x = s->sites && site < s->cap ? &s->sites[site] : &none;
	/* The decay not yet applied (catch_up); none where buckets age as
	 * they are judged (bucket_catch_up). */
	double ks = x == &none || s->age_when_judged ? 1 : pow(s->keep, s->epoch - x->epoch);
	double kp = s->age_when_judged ? 1 : pow(s->keep, s->epoch - s->pooled.epoch);
	const struct hp_survival_ages *xa = span ? &x->spans : &x->ages, *pa_ = span ? &s->pooled.spans : &s->pooled.ages;
	double share[HP_SURV_AGES], weight[HP_SURV_AGES], at[HP_SURV_AGES], sq[HP_SURV_AGES], total = 0, own = 0;
	int nb = 0;
	for (int b = 0; b < HP_SURV_AGES; b++)
		own += xa->n[b] * ks;
	/* The pooled share's weight in a bucket: SHRINK_SAMPLES for a site
	 * with few judgments, fading once it has SHRINK_FULL of its own (the
	 * pooled share is mostly other sites': at young ages the garbage's,
	 * 0.09 beside a cache's 0.93 in buckets of 15-20 of its judgments;
	 * shrunk at full weight, the cache read 0.75 there and the view G1
	 * under load 11-25% low). Thin buckets are merged instead (below). */
	double k = SHRINK_SAMPLES * fmin(1, SHRINK_FULL / fmax(own, 1));
	for (int b = 0; b < HP_SURV_AGES; b++) {
		double pa = pa_->alive[b] * kp, pall = pa_->all[b] * kp, pn = pa_->n[b] * kp;
		double sa = xa->alive[b] * ks, sall = xa->all[b] * ks, sn = xa->n[b] * ks;
		if (!(pall > 0) || !(pn > 0.5))
			continue;       /* nobody judged at this age */
		/* A site with judgments of its own: only its ages (the pooled
		 * share at an age it never reached is the other sites': 3.4%
		 * at 2.5 s for a cache whose last own share was 3.7% at 1.5 s,
		 * counted for ever, +36%). */
		if (own >= SHRINK_SAMPLES && !(sn > 0.5)) {
			total += pn;
			continue;
		}
		/* Shrunk toward the pooled share, but never toward more than the
		 * site's own share at the younger ages (survival does not rise
		 * with age): the pooled share at old ages is the long-lived
		 * sites', and 8 samples' worth of it gave a cache with hundreds
		 * of judgments, none alive, a 1.3% survival for ever, which
		 * times the gigabytes of its old recent samples read +24%. */
		double mean = pall / pn, pshare = nb ? fmin(pa / pall, share[nb - 1]) : pa / pall;
		share[nb] = (sa + k * mean * pshare) / (sall + k * mean);
		weight[nb] = sn + k;
		at[nb] = sall > 0 ? xa->age_bytes[b] * ks / sall : pa_->age_bytes[b] * kp / pall;
		sq[nb] = sall > 0 ? xa->age2_bytes[b] * ks / sall : pa_->age2_bytes[b] * kp / pall;
		total += pn;
		nb++;
	}
	if (!nb || total < min_n)
		return -1;
	/* A thin youngest bucket joins the next until it has
	 * HP_SURV_SLOPE_MIN judgments: the curve below it, from birth, rests
	 * on its share and age alone. (Generational ZGC's first marking
	 * judged 29 samples of a cache in the youngest bucket: too few for a
	 * slope, the curve stayed flat at their share below it, and the view
	 * read 45% low.) */
	while (nb > 1 && weight[0] < HP_SURV_SLOPE_MIN)
		nb = merge_buckets(share, weight, at, sq, nb, 0, k);
	/* So does a thin oldest one: past it the curve follows its decline. */
	while (nb > 1 && weight[nb - 1] < HP_SURV_SLOPE_MIN)
		nb = merge_buckets(share, weight, at, sq, nb, nb - 2, k);
	/* Pool adjacent violators: a later bucket may not survive more. */
	double bs[HP_SURV_AGES], bw[HP_SURV_AGES];
	int len[HP_SURV_AGES], m = 0;
	for (int i = 0; i < nb; i++) {
		bs[m] = share[i];
		bw[m] = weight[i];
		len[m] = 1;
		m++;
		while (m > 1 && bs[m - 1] > bs[m - 2]) {
			double w = bw[m - 2] + bw[m - 1];
			bs[m - 2] = (bs[m - 2] * bw[m - 2] + bs[m - 1] * bw[m - 1]) / w;
			bw[m - 2] = w;
			len[m - 2] += len[m - 1];
			m--;
		}
	}
	int block_of[HP_SURV_AGES];
	for (int i = 0, at_i = 0; i < m; i++)
		for (int j = 0; j < len[i]; j++) {
			block_of[at_i] = i;
			share[at_i++] = bs[i];
		}
	double mean[HP_SURV_AGES], var[HP_SURV_AGES];  /* the judged ages', before placing (youngfit.h) */
	for (int i = 0; i < nb; i++)
		mean[i] = at[i], var[i] = fmax(sq[i] - at[i] * at[i], 0);
	place_shares(share, at, sq, nb);
	if (u)
		u->youngest = at[0];
	/* Interpolate between the buckets' (mean age, share); past the last,
	 * on at the last decline's hazard (ages) or flat (spans, and sites
	 * that do not decline). Before the first (younger than any judgment:
	 * a marking that begins well after the request, as generational
	 * ZGC's after a young collection that promotes everything, judges
	 * nothing younger than that delay), the youngest buckets' fit carried
	 * back, capped at the hazard from birth: exact for exponential
	 * lifetimes, and for any mix of them with garbage dead at birth and
	 * objects kept for ever (flat then). Flat, as before, read a cache
	 * whose entries live 0.3 s at its survival at 0.7 s: 40% low. */
	/* The constant hazard from age (or span) 0, alive then by definition,
	 * to the youngest bucket. */
	double from_birth = !(age > 0) ? 1 : share[0] > 0 && at[0] > 0 ? pow(share[0], age / at[0]) : share[0];
	double birth_coef = !(age > 0) ? 0 : share[0] > 0 && at[0] > 0 ? age / at[0] : 1;
	if (age <= at[0] && span) {
		unc_set(u, block_of, bw, bs, 0, birth_coef, -1, 0);
		return from_birth;      /* exact for exponential lifetimes */
	}
	if (age <= at[0]) {
		/* Its uncertainty: that of the youngest block, carried back
		 * as the hazard from birth is (the fit is capped there). */
		unc_set(u, block_of, bw, bs, 0, birth_coef, -1, 0);
		/* The youngest buckets' fit carried back (a slope from one
		 * pair of buckets was noise multiplied by the distance: a
		 * youngest share low by its sampling error read a cache 0.42
		 * alive at 30 ms where 0.93 were): the exponential from birth
		 * where it fits them, else a free line, its intercept kept
		 * (garbage dead at birth mixed in gives a site less than 1 at
		 * age 0; youngfit.h). Never above the constant hazard from birth to the
		 * fit at the youngest bucket (a noisy next bucket made a fit
		 * through two points that read a cache 60% high), nor below
		 * the youngest share (the curve never rises with age). A site
		 * whose buckets decline but give no fit (the next all dead)
		 * takes the hazard from birth rather than staying flat (read
		 * a cache 65% low); one that does not decline (garbage dead at
		 * birth beside objects kept for ever) stays flat. */
		double b0, b1;
		if (hp_young_fit(share, weight, at, mean, var, nb, HP_SURV_SLOPE_MIN, &b0, &b1)) {
			double at0 = exp(b0 + b1 * at[0]);
			double cap = at0 > 0 && at0 < 1 ? pow(at0, age / at[0]) : 1;
			return fmax(fmin(fmin(exp(b0 + b1 * age), cap), 1), share[0]);
		}
		bool declines = false;
		for (int i = 1; i < nb && share[0] * weight[0] >= 4; i++)
			if (weight[i] >= HP_SURV_SLOPE_MIN && at[i] > at[0] && share[i] < share[0] / 2)
				declines = true;
		if (!declines)
			unc_set(u, block_of, bw, bs, 0, 1, -1, 0);
		return declines ? from_birth : share[0];
	}
	for (int i = 1; i < nb; i++)
		if (age <= at[i]) {
			double t = chord_t(at, i, age);
			if (share[i] > 0 && share[i - 1] > 0) {
				/* At the constant hazard between the buckets: a
				 * survival curve is a mixture of exponentials
				 * (log-convex), which the geometric chord follows
				 * closer than the straight one (both lie above
				 * it; the geometric one below the straight). */
				unc_set(u, block_of, bw, bs, i - 1, 1 - t, i, t);
				return chord(share, i, t);
			}
			if (share[i - 1] > 0)
				return toward_dead(share, weight, at, i, age, block_of, bw, bs, u);
			return 0;
		}
	/* Past the oldest judged age. The first judgments reach about one
	 * gap between markings; when markings are rare (a request that took
	 * 2.6 s waits 130 s for the next within mark_budget=2%), recent samples
	 * grow far older than that. Flat there counted a cache's last share
	 * (6% at 1.5 s) for every older sample: gigabytes of them, the view
	 * +51% then +119% within 18 s (generational ZGC on 25). So a site
	 * whose last two buckets decline keeps declining at their hazard
	 * (exact for exponential lifetimes; for a mix with objects kept for
	 * ever it errs low by the kept share of those older samples, the
	 * lesser error: bounded, where flat grows with the allocation). A
	 * site flat at its end (a leak, a cache that outlives the judgments)
	 * stays flat; so do the spans (the verified samples, bounded). */
	int l = nb - 1;
	/* Judged at one age only: every bucket within a factor of 2 (one
	 * marking's judgments of samples allocated together, as a start-up
	 * cache fill). Nothing says whether such a site keeps its share or
	 * keeps dying. Flat kept LoadService's start-up fill (shares 0.78 at
	 * ages 950 and 1150, judged by a marking 1 s in with period=1) alive
	 * for every profile until the next marking, while it was replaced
	 * within ~1 s: G1's view +45% to +598%. The constant hazard from birth
	 * through its share (exact for exponential lifetimes) errs low for a
	 * mix of garbage and objects kept for ever, the lesser error; a site
	 * whose samples were nearly all alive (a leak: its share shrunk
	 * toward the other sites' sits just below 1) stays flat. Before the
	 * chord: two buckets this close decline by noise only. */
	if (!span && share[l] > 0 && share[l] < 0.9 && at[0] > 0 && at[l] < 2 * at[0]) {
		double c = age / at[l];
		unc_set(u, block_of, bw, bs, l, c, -1, 0);
		return pow(share[l], c);
	}
	if (!span && l > 0 && share[l] > 0 && share[l] < share[l - 1] && at[l] > at[l - 1] &&
	    weight[l] >= HP_SURV_SLOPE_MIN && weight[l - 1] >= HP_SURV_SLOPE_MIN) {
		/* Carried on: its uncertainty grows with the distance. */
		double t = chord_t(at, l, age);
		unc_set(u, block_of, bw, bs, l - 1, 1 - t, l, t);
		return chord(share, l, t);
	}
	if (share[l] > 0)
		unc_set(u, block_of, bw, bs, l, 1, -1, 0);
	return share[l];
}

double hp_survival_by_age(const struct hp_survival *s, uint32_t site, double age)
{
	return curve(s, site, age, false, 0, NULL);
}

double hp_survival_by_age_unc(const struct hp_survival *s, uint32_t site, double age, struct hp_surv_unc *u)
{
	return curve(s, site, age, false, 0, u);
}

double hp_survival_by_span(const struct hp_survival *s, uint32_t site, double since, double min_n)
{
	return curve(s, site, since, true, min_n, NULL);
}

double hp_survival_by_span_unc(const struct hp_survival *s, uint32_t site, double since, double min_n,
			       struct hp_surv_unc *u)
{
	return curve(s, site, since, true, min_n, u);
}
