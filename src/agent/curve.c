/* Reading the survival curves (survival.h): a site's judgments by age
 * (or span) made into a non-increasing curve, read at any age with the
 * uncertainty it rests on. Split from survival.c, which keeps the sums;
 * the curves are read once per tracked sample for every profile, so a
 * site's curve is made ready once (curve_prepare) and read many times
 * (curve_at) while nothing it reads changes (the memo, hp_survival.memo).
 * Why one file: a verified sample's survival (hp_survival_verified) reads
 * the prepared curves' buckets, blocks and tests, kept private here. */
#include "agent/survival.h"
#include "agent/youngfit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A site's curve made ready for reading at any age (curve_prepare):
 * everything curve() computes that does not depend on the age. */
struct hp_surv_memo {
	uint64_t version;               /* hp_survival.version when made; 0: empty */
	uint32_t site;
	bool span, awj;
	double keep;
	int nb;                         /* buckets; 0: no judgment */
	double total;                   /* judgments at the site and pooled together */
	double share[HP_SURV_AGES], weight[HP_SURV_AGES], at[HP_SURV_AGES];
	double mean[HP_SURV_AGES], var[HP_SURV_AGES], bs[HP_SURV_AGES], bw[HP_SURV_AGES];
	int block_of[HP_SURV_AGES];
	bool fit, declines;
	/* Whether anything the site judged was dead (or it leans on the
	 * pooled curve, having fewer than HP_SURV_SHRINK_SAMPLES judgments):
	 * without, a decline is the shrinkage's, not the site's. */
	bool own_dead;
	double b0, b1;
};

struct hp_surv_memo *hp_survival_memo_new(void)
{
	return calloc(HP_SURV_MEMO, sizeof(struct hp_surv_memo));
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

/* Whether the last two buckets decline at all, both thick enough for a
 * slope: what carrying the decline on past the last needs (curve_at). */
static bool ends_declining(const double *share, const double *weight, const double *at, int nb)
{
	int l = nb - 1;
	return l > 0 && share[l] > 0 && share[l] < share[l - 1] && at[l] > at[l - 1] &&
	       weight[l] >= HP_SURV_SLOPE_MIN && weight[l - 1] >= HP_SURV_SLOPE_MIN;
}

/* Whether bucket i's share lies above bucket j's by more than three times
 * the error of their log shares (clear_decline, clear_decline_over_all). */
static bool clearly_above(const double *share, const double *weight, int i, int j)
{
	return log(share[i] / share[j]) >
	       3 * sqrt(var_log_share(share[i], weight[i]) + var_log_share(share[j], weight[j]));
}

/* Whether the last two buckets of a prepared curve decline clearly: by
 * more than three times the error of their log shares (noise in a site
 * that keeps its share passed a 2-sd test in ~2% of simulated curves; 3 sd
 * leaves ~0.1% by the normal tail), from a last share below 0.9 (a site
 * nearly all alive is kept whatever its noise: a leak's 0.99 then 0.98),
 * both buckets thick enough for a slope. `share[l - 1]`
 * may be a pooled block's share; its one bucket's weight overstates the
 * error, which only makes the test stricter. */
static bool clear_decline(const double *share, const double *weight, const double *at, int nb)
{
	int l = nb - 1;
	return ends_declining(share, weight, at, nb) && share[l] < 0.9 && clearly_above(share, weight, l - 1, l);
}

/* Whether a curve by age declines clearly over all the ages it judged,
 * its end still declining: the youngest block's share above the
 * oldest's by more than three times the error of their log shares, the
 * last below 0.9 (a leak's 0.99 then 0.98 is kept whatever its noise),
 * the last two buckets declining (ends_declining: a site that stopped
 * dying at its oldest ages is not carried down). A cache whose entries
 * live ~10 s, judged by one marking at ages 0.3 s to 3 s, declines
 * clearly over all (0.93 to 0.73, ~100 judgments a bucket at 64k) but
 * never between two adjacent buckets (0.77 then 0.73). */
static bool clear_decline_over_all(const double *share, const double *weight, const double *at, int nb)
{
	int l = nb - 1;
	return ends_declining(share, weight, at, nb) && share[l] < 0.9 && at[l] > at[0] &&
	       weight[0] >= HP_SURV_SLOPE_MIN && clearly_above(share, weight, 0, l);
}

/* The hazard at which a verified sample's survival is carried on past
 * the ages a curve by age judged where that curve declines clearly over
 * all of them but not between its last two buckets
 * (clear_decline_over_all; hp_survival_verified): the constant hazard
 * from its youngest bucket to its oldest (exact for exponential
 * lifetimes, and the least noisy: the widest baseline), or that of its
 * last two buckets where lower (a site whose dying slows toward its
 * oldest ages carries the slower), and none where the last two buckets'
 * decline falls short of the one over all by more than 2 sd of their own
 * (a site half kept for ever, its end flat but for noise, is not carried
 * down at the hazard of its young deaths). *var: its variance (from the
 * two log shares it rests on). 0 where it does not apply (no death of
 * the site's own, or no such decline). */
static double hazard_over_all(const struct hp_surv_memo *c, double *var)
{
	const double *share = c->share, *weight = c->weight, *at = c->at;
	int l = c->nb - 1;
	*var = 0;
	if (!c->own_dead || !clear_decline_over_all(share, weight, at, c->nb))
		return 0;
	double vl = var_log_share(share[l], weight[l]), ve = var_log_share(share[l - 1], weight[l - 1]) + vl;
	double d0 = at[l] - at[0], de = at[l] - at[l - 1];
	double h0 = log(share[0] / share[l]) / d0, he = log(share[l - 1] / share[l]) / de;
	if (he * de < h0 * de - 2 * sqrt(ve))
		return 0;
	if (he < h0) {
		*var = ve / (de * de);
		return he;
	}
	*var = (var_log_share(share[0], weight[0]) + vl) / (d0 * d0);
	return h0;
}

/* About the oldest age (or span) a prepared curve judged: its last
 * bucket's mean and one sd (the placed `at` sits below the mean). */
static double oldest_judged(const struct hp_surv_memo *c)
{
	return c->mean[c->nb - 1] + sqrt(c->var[c->nb - 1]);
}

/* Per bucket: the site's share, shrunk toward the pooled one, and the
 * judgments' mean age; then made non-increasing (pool adjacent violators,
 * weighted by judgments). */
static void curve_prepare(const struct hp_survival *s, uint32_t site, bool span, struct hp_surv_memo *c)
{
	c->nb = 0;
	c->total = 0;
	static const struct hp_survival_site none;
	const struct hp_survival_site *x = s->sites && site < s->cap ? &s->sites[site] : &none;
	/* The decay not yet applied (catch_up); none where buckets age as
	 * they are judged (bucket_catch_up). */
	double ks = x == &none || s->age_when_judged ? 1 : pow(s->keep, s->epoch - x->epoch);
	double kp = s->age_when_judged ? 1 : pow(s->keep, s->epoch - s->pooled.epoch);
	const struct hp_survival_ages *xa = span ? &x->spans : &x->ages, *pa_ = span ? &s->pooled.spans : &s->pooled.ages;
	double *share = c->share, *weight = c->weight, *at = c->at, sq[HP_SURV_AGES], total = 0, own = 0, dead = 0;
	int nb = 0;
	for (int b = 0; b < HP_SURV_AGES; b++) {
		own += xa->n[b] * ks;
		dead += ((double)xa->all[b] - xa->alive[b]) * ks;
	}
	c->own_dead = own < HP_SURV_SHRINK_SAMPLES || dead > 0;
	/* The pooled share's weight in a bucket: HP_SURV_SHRINK_SAMPLES for a site
	 * with few judgments, fading once it has HP_SURV_SHRINK_FULL of its own (the
	 * pooled share is mostly other sites': at young ages the garbage's,
	 * 0.09 beside a cache's 0.93 in buckets of 15-20 of its judgments;
	 * shrunk at full weight, the cache read 0.75 there and the view G1
	 * under load 11-25% low). Thin buckets are merged instead (below). */
	double k = HP_SURV_SHRINK_SAMPLES * fmin(1, HP_SURV_SHRINK_FULL / fmax(own, 1));
	for (int b = 0; b < HP_SURV_AGES; b++) {
		double pa = pa_->alive[b] * kp, pall = pa_->all[b] * kp, pn = pa_->n[b] * kp;
		double sa = xa->alive[b] * ks, sall = xa->all[b] * ks, sn = xa->n[b] * ks;
		if (!(pall > 0) || !(pn > 0.5))
			continue;       /* nobody judged at this age */
		/* A site with judgments of its own: only its ages (the pooled
		 * share at an age it never reached is the other sites': 3.4%
		 * at 2.5 s for a cache whose last own share was 3.7% at 1.5 s,
		 * counted for ever, +36%). */
		if (own >= HP_SURV_SHRINK_SAMPLES && !(sn > 0.5)) {
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
	c->total = total;
	if (!nb)
		return;
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
	double *bs = c->bs, *bw = c->bw;
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
	for (int i = 0, at_i = 0; i < m; i++)
		for (int j = 0; j < len[i]; j++) {
			c->block_of[at_i] = i;
			share[at_i++] = bs[i];
		}
	/* the judged ages', before placing (youngfit.h) */
	for (int i = 0; i < nb; i++)
		c->mean[i] = at[i], c->var[i] = fmax(sq[i] - at[i] * at[i], 0);
	place_shares(share, at, sq, nb);
	c->nb = nb;
	/* Below the youngest bucket (curve_at): the youngest buckets' fit,
	 * or whether the site declines at all. */
	c->fit = hp_young_fit(share, weight, at, c->mean, c->var, nb, HP_SURV_SLOPE_MIN, &c->b0, &c->b1);
	c->declines = false;
	for (int i = 1; i < nb && share[0] * weight[0] >= 4; i++)
		if (weight[i] >= HP_SURV_SLOPE_MIN && at[i] > at[0] && share[i] < share[0] / 2)
			c->declines = true;
}

/* Every bucket within a factor of 2 of the youngest: judged at one age
 * (or span) only, as one marking's judgments of samples allocated
 * together. */
static bool judged_at_one_age(const double *at, int nb)
{
	return nb > 0 && at[0] > 0 && at[nb - 1] < 2 * at[0];
}

/* A curve by age judged at one age only, its share below 0.9 (curve_at
 * says why it is read as a constant hazard from birth). */
static bool one_age(const double *share, const double *at, int nb)
{
	return judged_at_one_age(at, nb) && share[nb - 1] > 0 && share[nb - 1] < 0.9;
}

/* The prepared curve read at `age` (or span). */
static double curve_at(const struct hp_surv_memo *cp, double age, bool span, double min_n, struct hp_surv_unc *u)
{
	if (u) {
		u->n = 0;
		u->youngest = 0;
		u->oldest = 0;
	}
	int nb = cp->nb;
	if (!nb || cp->total < min_n)
		return -1;
	const double *share = cp->share, *weight = cp->weight, *at = cp->at, *bs = cp->bs, *bw = cp->bw;
	const int *block_of = cp->block_of;
	if (u) {
		u->youngest = at[0];
		u->oldest = oldest_judged(cp);
	}
	/* Interpolate between the buckets' (mean age, share); past the last,
	 * on at the last decline's hazard (ages; spans where it is clear) or
	 * flat (sites that do not decline). Before the first (younger than any judgment:
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
		if (cp->fit) {
			double at0 = exp(cp->b0 + cp->b1 * at[0]);
			double cap = at0 > 0 && at0 < 1 ? pow(at0, age / at[0]) : 1;
			return fmax(fmin(fmin(exp(cp->b0 + cp->b1 * age), cap), 1), share[0]);
		}
		bool declines = cp->declines;
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
	 * stays flat. So do the spans (the verified samples, a bounded set)
	 * unless their last two buckets decline clearly (clear_decline):
	 * flat, a cache's verified samples kept their oldest span's
	 * share (12-27% where markings had come 0.2 s apart) for as long as
	 * no marking came, G1's periodic profiles +25% for 6 s when its own
	 * cycles paused (test_load's g1_own_cycles by hand); a leak's spans
	 * (0.99 then 0.98) decline by noise only and stay flat. */
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
	/* A site none of whose own judgments was dead has no hazard to carry
	 * on: a decline between its buckets is the shrinkage toward the
	 * pooled share (thinner buckets shrunk more), which carried 100
	 * times past the ages judged read a start-up cache fill, 384 of 384
	 * alive, 0.2 alive 50,000 samples on. */
	if (!cp->own_dead) {
		unc_set(u, block_of, bw, bs, l, 1, -1, 0);
		return share[l];
	}
	if (!span && one_age(share, at, nb)) {
		double c = age / at[l];
		unc_set(u, block_of, bw, bs, l, c, -1, 0);
		return pow(share[l], c);
	}
	if (span ? clear_decline(share, weight, at, nb) : ends_declining(share, weight, at, nb)) {
		/* Carried on: its uncertainty grows with the distance. */
		double t = chord_t(at, l, age);
		unc_set(u, block_of, bw, bs, l - 1, 1 - t, l, t);
		return chord(share, l, t);
	}
	if (share[l] > 0)
		unc_set(u, block_of, bw, bs, l, 1, -1, 0);
	return share[l];
}


/* The memo (hp_survival.memo): direct-mapped by site and kind, each entry
 * good while nothing the curves read has changed (hp_survival.version).
 * A profile reads a site's curve once per tracked sample, ~1,000s of
 * times with a handful of sites: `heapprobe top` spent ~15 ms a screen
 * preparing the same curves again (docs/load-cost.md). Where there is no
 * memo (it could not be allocated) every read prepares. */
static const struct hp_surv_memo *prepared(const struct hp_survival *s, uint32_t site, bool span,
					   struct hp_surv_memo *one)
{
	struct hp_surv_memo *c = one;
	if (s->memo) {
		c = &s->memo[(site * 2u + span) % HP_SURV_MEMO];
		if (!(c->version == s->version && c->site == site && c->span == span && c->keep == s->keep &&
		      c->awj == s->age_when_judged)) {
			curve_prepare(s, site, span, c);
			c->version = s->version;
			c->site = site;
			c->span = span;
			c->keep = s->keep;
			c->awj = s->age_when_judged;
		}
	} else {
		curve_prepare(s, site, span, c);
	}
	return c;
}

static double curve(const struct hp_survival *s, uint32_t site, double age, bool span, double min_n,
		    struct hp_surv_unc *u)
{
	struct hp_surv_memo one;
	return curve_at(prepared(s, site, span, &one), age, span, min_n, u);
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

/* A sample the last marking verified, at age a (`then`) when it began:
 * alive at age `to` (a + since, or less where that bounds it) with
 * S(to) / S(a) on its site's curve by age. For one verified by that
 * marking and no marking before it (`once`) the first
 * judgments measure over the very ages such a sample had then (0 to
 * about one gap). Used where the time since the marking lies outside the
 * spans judged. The span curve (alive at a marking, alive at the next) is
 * measured at the gaps between markings only.
 * - Shorter than any: where markings are rare (generational Shenandoah
 *   under load, one per ~20 s within the requests' budget), a cache whose
 *   entries live 0.25 s has all its spans dead, and carried back from
 *   20 s to the 0.2 s since the marking that read the verified part 0
 *   (the view 43% low), or, with no span of its own, the pooled span
 *   curve of the long-lived sites, 1 (+49%).
 * - Longer than any: where its last two spans show no clear decline, the
 *   span curve stays flat past them (the verified set is bounded, and a
 *   leak's spans must not be carried down by noise), which counts a
 *   short-lived site's verified samples at the share of its oldest span
 *   for as long as no marking comes. G1 with its
 *   own cycles close together as the program starts, then none for 2 s:
 *   a cache's spans judged to 0.6 s (12% alive there) counted 12% of its
 *   verified samples alive 2 s after the marking, where none were
 *   (exp(-8)); periodic profiles of test_load's g1_own_cycles read
 *   +25% to +32% so, by hand (and likely the +44% of a fresh clone, 19%
 *   of its view verified 2.0 s before). The curve by age reaches further (the
 *   first judgments span a gap and the samples' own ages) and carries a
 *   declining site's hazard on past its end (curve_at).
 * (Past the oldest span: where it reads lower than the span curve, for
 * a sample verified once or more, and read past the curve by age's
 * judged ages only where that curve declines clearly, at its end or
 * over all its ages, else at its oldest judged age; hp_survival_verified.) Where spans as long as `since` were judged (ZGC's
 * own cycles, 0.2 s apart) the span curve stays: it was measured there,
 * and the ratio of two readings of another curve adds their errors. -1
 * where the age curve cannot say. */
static double verified_by_age(const struct hp_survival *s, uint32_t site, double a, double to,
			      struct hp_surv_unc *u)
{
	struct hp_surv_unc ut, un;
	double then = hp_survival_by_age_unc(s, site, a, &ut);
	double now = hp_survival_by_age_unc(s, site, to, &un);
	if (!(then > 0) || now < 0)
		return -1;
	/* The error of log(now / then): each block's coefficient in the one
	 * less that in the other. Read close together (an idle program ages
	 * nothing), the two rest on the same blocks and their errors cancel;
	 * the numerator's alone made an idle G1, Parallel or ZGC view's
	 * interval nearly twice as wide as its sampling error (test_steady). */
	unsigned blk[4];
	double coef[4], var[4];
	unsigned n = 0;
	for (unsigned j = 0; j < un.n + ut.n; j++) {
		bool from_now = j < un.n;
		unsigned b = from_now ? un.block[j] : ut.block[j - un.n];
		double k = from_now ? un.coef[j] : -ut.coef[j - un.n];
		double v = from_now ? un.var_log[j] : ut.var_log[j - un.n];
		unsigned i = 0;
		while (i < n && blk[i] != b)
			i++;
		if (i == n) {
			blk[n] = b, coef[n] = 0, var[n] = v;
			n++;
		}
		coef[i] += k;
	}
	double v = 0;
	for (unsigned i = 0; i < n; i++)
		v += coef[i] * coef[i] * var[i];
	if (u)
		*u = (struct hp_surv_unc){ .n = n ? 1 : 0, .block = { n ? blk[0] : 0 }, .coef = { 1 }, .var_log = { v } };
	return fmin(1, now / then);
}

/* About the end of a site's curve by age, for a verified sample read
 * past it (hp_survival_verified). */
struct age_end {
	double oldest;          /* the oldest age judged (its last bucket's mean and one sd); -1 with no judgment */
	bool declines;          /* clearly between its last two buckets (clear_decline) */
	bool own_decline;       /* the site's own to carry on for a sample with no span curve: a death
				 * among its judgments, and a clear decline or one age judged */
	double hazard, hazard_var;      /* where it declines clearly over all only (hazard_over_all) */
	double span;                    /* the ages it judged, youngest to oldest bucket */
};

static void by_age_end(const struct hp_survival *s, uint32_t site, struct age_end *e)
{
	struct hp_surv_memo one;
	const struct hp_surv_memo *c = prepared(s, site, false, &one);
	*e = (struct age_end){ .oldest = -1 };
	if (c->nb == 0)
		return;
	e->declines = clear_decline(c->share, c->weight, c->at, c->nb);
	e->own_decline = c->own_dead && (e->declines || one_age(c->share, c->at, c->nb));
	if (!e->own_decline)
		e->hazard = hazard_over_all(c, &e->hazard_var);
	e->span = c->at[c->nb - 1] - c->at[0];
	e->oldest = oldest_judged(c);
}

/* A verified sample's survival read up to the oldest judged age,
 * carried on `d` further at the end's hazard where it has one
 * (by_age_end), never further than twice the span of the ages judged
 * (past that, flat: a hazard's noise grows with the distance it is
 * carried).
 * Its error: that of the hazard times the distance, added to the
 * reading's as if fully correlated (both rest on the oldest bucket's
 * share), an upper bound. */
static void carry_on(double *r, struct hp_surv_unc *u, const struct age_end *e, double d)
{
	if (!(*r > 0) || !(e->hazard > 0) || !(d > 0))
		return;
	d = fmin(d, 2 * e->span);
	*r *= exp(-e->hazard * d);
	if (u->n == 0)
		*u = (struct hp_surv_unc){ .n = 1, .coef = { 1 } };
	double sd = sqrt(u->var_log[0]) + d * sqrt(e->hazard_var);
	u->var_log[0] = sd * sd;
}

/* A span curve judged at one span only (every bucket within a factor of
 * 2: two markings so far, as early in a run), with deaths of the site's
 * own and a share clearly below 1 (by more than 3 sd of its log: a
 * leak's 0.99 of 300 stays flat), carried on past that span at its
 * constant hazard from span 0: share^(since / span), exact for
 * exponential lifetimes. For a verified sample older than any age the
 * curve by age judged (a start-up burst, all judged at one age), which
 * that curve cannot bound, where that curve's own decline agrees (deaths
 * of the site's own, and a clear decline or one age judged: a site kept
 * nearly whole, 0.99 of thousands, is not carried down on its spans
 * alone); hp_survival_verified. -1 where it does not apply. */
static double span_carried(const struct hp_survival *s, uint32_t site, double since, struct hp_surv_unc *u)
{
	struct hp_surv_memo one;
	const struct hp_surv_memo *c = prepared(s, site, true, &one);
	int l = c->nb - 1;
	if (u)
		*u = (struct hp_surv_unc){ 0 };
	if (!judged_at_one_age(c->at, c->nb) || !c->own_dead || !(c->share[l] > 0) ||
	    c->weight[l] < HP_SURV_SLOPE_MIN || since <= c->at[l])
		return -1;
	double q = c->share[l];
	if (!(log(1 / q) > 3 * sqrt(var_log_share(q, c->weight[l]))))
		return -1;
	double k = since / c->at[l];
	unc_set(u, c->block_of, c->bw, c->bs, l, k, -1, 0);
	return pow(q, k);
}

/* Whether a marking has judged any sample of `site` a second time (its
 * span judgments, decayed but never to 0 once made). */
static bool site_rejudged(const struct hp_survival *s, uint32_t site)
{
	if (!s->sites || site >= s->cap)
		return false;
	for (int b = 0; b < HP_SURV_AGES; b++)
		if (s->sites[site].spans.n[b] > 0)
			return true;
	return false;
}

double hp_survival_verified(const struct hp_survival *s, uint32_t site, bool once, double then, double since,
			    struct hp_surv_unc *u)
{
	struct hp_surv_unc us, ua;
	double q = curve(s, site, since, true, HP_SURV_VERIFIED_MIN, &us);
	bool past = q >= 0 && since > us.oldest;
	double r = -1;
	/* No span curve (fewer than HP_SURV_VERIFIED_MIN span judgments, site
	 * and pooled) at a site none of whose samples a marking has judged
	 * twice: each of its verified samples was judged once, however many
	 * markings covered it, and reads as one verified once. Generational
	 * ZGC with a cache whose entries live ~10 s: an own major counted
	 * when the requested one began (0.2-0.9 s apart, no sweep between)
	 * left the start-up fill covered by two markings and judged at the
	 * second, 3.9 s old, 0.69 alive; left to the estimate's fallback,
	 * which reads the first judgments' share as one gap's survival, it
	 * read 0.58 alive 0.1 s on and 0 four seconds on: periodic profiles
	 * -14% to -47% in 6 of 24 (bench/load/run.sh TURNOVER=0.1,
	 * docs/load-slow-turnover.md). A site with samples judged twice keeps
	 * that fallback for them (its own re-judgments: the markings select
	 * the long-lived, which the curve by age carried on would not see). */
	if (q < 0 && !once && !site_rejudged(s, site))
		once = true;
	if (once && (q < 0 || since < us.youngest)) {
		/* Read past the ages judged along the curve only where its
		 * decline there is the site's own and clear, or it was judged
		 * at one age (as below, past the spans): a leak's or a
		 * cache's noise, or the shrinkage, carried on read it dying.
		 * Where it declines clearly over all its ages but not between
		 * its last two buckets, read to its oldest judged age and
		 * carried on from there at the hazard of that decline
		 * (by_age_end, carry_on): kept at the oldest age, the
		 * replacements of a cache whose entries live ~10 s, judged by
		 * one marking at ages to 3 s, counted ~0.9 of their verified
		 * samples alive 3.9 s on where 0.68 were, and the profile
		 * Serial 25's budget skipped read them +9.4% on the median of
		 * 8 runs, to +14% (+5.5% now; docs/load-verified-over-all.md). */
		struct age_end e;
		by_age_end(s, site, &e);
		double to = then + since, stop = to;
		if (e.oldest >= 0 && to > e.oldest && !e.own_decline)
			stop = fmax(e.oldest, then);
		r = verified_by_age(s, site, then, stop, &ua);
		if (then <= e.oldest)
			carry_on(&r, &ua, &e, to - stop);
	} else if (past) {
		struct age_end e;
		by_age_end(s, site, &e);
		double to = then + since, stop = to;
		if (stop > e.oldest && !(once && e.declines))
			stop = e.oldest;
		if (then <= e.oldest && stop > then) {
			r = verified_by_age(s, site, then, stop, &ua);
			if (once)
				carry_on(&r, &ua, &e, to - stop);
		} else if (then > e.oldest && e.own_decline) {
			r = span_carried(s, site, since, &ua);
		}
	}
	/* Past the oldest span the lower of the two, for every verified
	 * sample whose age then the curve by age judged: each curve past
	 * what it judged errs high where it is kept flat and the truth
	 * declines (the span curve where its decline is not clear; the curve
	 * by age early in a run, where its few judgments give no clear slope
	 * either: with the curve by age alone there, one G1 profile 3 s into
	 * a run, 2.1 s after the marking, counted 29% of its verified samples
	 * alive and read +52%). The curve by age is read at then + since
	 * within its judged ages; past them at its oldest judged age, an upper
	 * bound (a share never rises with age), but for a sample verified
	 * once where that curve declines clearly, which carries the decline
	 * on (at its end, or over all its ages: carry_on): carried on at
	 * any decline, as it is for the recent samples, a leak's noise
	 * (199 then 196 of 200 alive) read its verified samples 0.22
	 * alive at 50 times the ages judged; and carried on for a sample
	 * verified more than once, which the markings have selected toward
	 * the long-lived, a site half kept for ever and half dying within a
	 * gap would read ~0.2 where ~0.8 are alive. Before, a sample verified
	 * by more than one marking kept the span curve's flat share: G1 on
	 * JDK 25, its markings 0.2 s apart 3 s into a run (one span bucket,
	 * 0.59 alive at 0.3 s) and then none for 4 s, counted 59% of the
	 * cache's verified samples alive 4 s on, where its curve by age read
	 * 0.1% at 2.7 s: periodic profiles +44% to +77% (bench/load/run.sh,
	 * 4 runs in 71, docs/load-g1-verified-past-spans.md). The ratio S(to) / S(then) is a sample's
	 * survival where its site's lifetimes do not depend on when it was
	 * allocated, and an upper bound of it where `to` stops short.
	 * A sample older then than every age the curve by age judged (a
	 * start-up burst judged at one age) has no such bound: past a span
	 * curve judged at one span its share was kept flat. Serial 17 with a
	 * cache whose entries live ~10 s, its own full collection 0.45 s
	 * before the first profile's, then the budget skipping the next
	 * profile: the start-up fill's one span, 0.96 alive at 0.4 s, kept
	 * 0.96 of it alive 3.9 s on where 0.67 were, the fill +42.5%
	 * (docs/load-parallel-serial-full.md). Now that span's clear decline
	 * is carried on at its hazard (span_carried). */
	if (r >= 0 && (!past || r < q))
		q = r, us = ua;
	if (u)
		*u = us;
	return q;
}
