/* Survival of sampled objects, learnt from the markings: what the live view
 * estimates between markings (see survival.c for the statistics).
 *
 * A marking judges each sample it covers: alive (its weak reference still
 * set after the marking) or dead (cleared, by it or before it by a young
 * collection). Per site this keeps two ratios, as decayed sums over the
 * last few markings:
 *   first: of the samples judged for the first time, the share of bytes
 *          alive (the objects' survival over ages 0..one marking gap);
 *   next:  of the samples judged alive by one marking, the share still
 *          alive at the next (survival over one more gap).
 * and two curves in log2 buckets: first judgments by age (the recent
 * samples), later judgments by span (the verified ones; see survival.c).
 * Between markings, a sample no marking has seen counts for its site's
 * survival at its age, and a sample verified by the last marking for the
 * survival over the span since that marking began. A site with few
 * judgments leans on the pooled ones.
 * Single writer: the agent thread's sweeps, under the profiler's dump lock. */
#ifndef HP_SURVIVAL_H
#define HP_SURVIVAL_H

#include <stdbool.h>
#include <stdint.h>

struct hp_survival_ratio {
	double alive, all;              /* Horvitz-Thompson bytes, decayed */
	double n;                       /* samples judged, decayed */
};

/* First judgments by the sample's age when the judging marking began, on
 * the allocation clock (samples taken since: objects die as the program
 * allocates, and a program stalled or idle ages nothing): log2 buckets
 * from 16 samples (bucket 0: younger; the last: 256k samples and older).
 * Floats: a site's table is 256 bytes. */
#define HP_SURV_AGES 16
#define HP_SURV_AGE_BASE 16.0
struct hp_survival_ages {
	float alive[HP_SURV_AGES], all[HP_SURV_AGES], age_bytes[HP_SURV_AGES];   /* age_bytes: sum age * bytes */
	float age2_bytes[HP_SURV_AGES];         /* sum age^2 * bytes: the spread of ages in a bucket */
	float n[HP_SURV_AGES];
	/* With hp_survival.age_when_judged: the epoch (marking) a bucket
	 * last took judgments in; it ages once per marking that judges at
	 * its ages (survival.c, bucket_catch_up). */
	uint32_t epoch[HP_SURV_AGES];
};

struct hp_survival_site {
	struct hp_survival_ratio first, next;
	struct hp_survival_ages ages;
	/* Later judgments by the time since the marking that last found the
	 * sample alive began (the span), same buckets: P(alive after span d |
	 * alive at a marking's start), for the verified samples. */
	struct hp_survival_ages spans;
	uint32_t epoch;                 /* decays applied up to this epoch */
	/* Bytes found dead since the last marking of samples it verified: a
	 * young collection clears the references of young objects that died,
	 * so the samples still referenced are the likelier alive, and the
	 * estimate counts these. (Recent ones found dead are pending.) */
	double cleared_verified, cleared_n;
	uint32_t cleared_epoch;
};

/* A sample found dead before any marking covered it (a young collection
 * cleared its reference): judged dead at the age it has when the first
 * marking that covers it begins. */
struct hp_survival_pending {
	uint32_t site, pause;           /* pause count at allocation (marks.h) */
	uint32_t seen, found;           /* pause counts when the sweeps that last saw it referenced, and
					   found it cleared, began */
	int64_t born_ns;                /* CLOCK_REALTIME */
	float bytes;
};

struct hp_survival {
	struct hp_survival_site *sites;
	uint32_t cap;
	struct hp_survival_pending *pending;    /* ring, oldest first */
	uint32_t pending_cap, pending_head, pending_n;
	uint64_t pending_thinned;       /* entries a full ring let go, the kept ones weighing more */
	struct hp_survival_site pooled;
	struct hp_survival_gone {       /* verified samples found cleared since the last marking */
		uint32_t site, seen, found;     /* pause counts as in hp_survival_pending */
		float bytes;
		int64_t born_ns;                /* CLOCK_REALTIME */
	} *gone;
	uint32_t gone_cap, ngone;
	uint64_t gone_thinned;          /* likewise */
	uint64_t thin_state;            /* the thinning's coin (survival.c) */
	unsigned pending_level, gone_level;     /* entries admitted with probability 2^-level */
	uint32_t epoch;                 /* one per marking seen */
	double keep;                    /* decay per marking */
	/* The curves' buckets age only when a marking judges at their ages,
	 * not with every marking: where the collector's own markings cannot
	 * judge the young (generational ZGC's majors judge what was promoted
	 * by their start). Set before the first judgment. */
	bool age_when_judged;
	/* Called for each sample of the rings a marking judges
	 * (hp_survival_settle's pending, hp_survival_settle_cleared's gone):
	 * alive when it began, or dead; NULL for none. Those the rings let go
	 * when full are not seen. */
	void (*judged)(uint32_t site, int64_t born_ns, bool alive, void *ctx);
	void *judged_ctx;
	/* The curves made ready per site, good while `version` is what it
	 * was (every change to what they read raises it): survival.c, curve.
	 * Read under the dump lock, as the rest: hp_survival_by_* take the
	 * survival const but write the memo, so they are not safe for
	 * concurrent readers. */
#define HP_SURV_MEMO 128
	struct hp_surv_memo *memo;
	uint64_t version;
};

/* Shared by survival.c (the sums) and curve.c (reading them). */
#define HP_SURV_SHRINK_SAMPLES 8.0  /* the pooled share's weight, in judgments, for a site with few */
#define HP_SURV_SHRINK_FULL 64.0    /* a site's own judgments past which the curves' shrinkage fades */
#define HP_SURV_SLOPE_MIN 40.0      /* judgments (with the shrinkage's) for a bucket to give a slope */
/* The memo's entries (curve.c); NULL if they cannot be allocated. */
struct hp_surv_memo *hp_survival_memo_new(void);

int hp_survival_init(struct hp_survival *s, uint32_t cap);
void hp_survival_free(struct hp_survival *s);
void hp_survival_reset(struct hp_survival *s);

/* A new marking: older judgments weigh `keep` as much (lazily per site;
 * with age_when_judged, per bucket of the curves as it is judged). */
void hp_survival_next_epoch(struct hp_survival *s);

/* One judgment of a sample of `bytes` (Horvitz-Thompson) at `site`: its
 * first (never judged alive before) or a later one. */
void hp_survival_judge(struct hp_survival *s, uint32_t site, double bytes, bool first, bool alive);

/* A first judgment at a known age (allocation clock): alive when the marking that
 * covers it began, or dead by then. */
void hp_survival_judge_age(struct hp_survival *s, uint32_t site, double bytes, double age, bool alive);

/* A never-judged sample found dead before a marking covered it: allocated
 * at pause count `pause`, still referenced at a sweep that began at `seen`,
 * found cleared by one that began at `found`. */
void hp_survival_pend(struct hp_survival *s, uint32_t site, uint32_t pause, uint32_t seen, uint32_t found,
		      int64_t born_ns, double bytes);

/* Calls fn for each pending sample (site, CLOCK_REALTIME birth, bytes). */
void hp_survival_each_pending(const struct hp_survival *s, void (*fn)(uint32_t site, int64_t born_ns, double bytes,
								    void *ctx), void *ctx);

/* Whether a sample a marking covers, still referenced at a sweep that
 * began at pause count `seen` and found cleared by one that began at
 * `found`, was alive when that marking began: cleared inside its young
 * window [alive_from, alive_before), or still referenced after its end
 * (alive_before: the pause count after the pause that clears what the
 * marking found dead, G1's Remark; so a young pause cleared it later).
 * Never where alive_before is 0 (not known). */
static inline bool hp_survival_alive_at_start(uint32_t seen, uint32_t found, uint32_t alive_from,
					      uint32_t alive_before)
{
	return alive_before && (seen >= alive_before || (seen >= alive_from && found < alive_before));
}

/* A marking that covers samples allocated at or before pause `cover`
 * began at `start` (allocation clock); `born` converts a pending sample's
 * CLOCK_REALTIME birth to that clock: the pending samples it covers are
 * judged at their age then, dead, except those still referenced at a
 * sweep that began at pause count `alive_from` or later and found cleared
 * by one that began before `alive_before`, or still referenced at one
 * that began at `alive_before` or later: alive then (as
 * hp_survival_alive_at_start). That window is
 * where only young collections clear references, after the marking's
 * first pause cleared the young dead and before its end clears the old
 * (G1: the concurrent start pause, then Remark; generational
 * Shenandoah's old marking: its bootstrap cycle's weak roots, then its
 * own Final Mark); empty when alive_before <= alive_from (the other
 * collectors: nothing but the marking clears what it covers, or no
 * window is known). */
void hp_survival_settle(struct hp_survival *s, uint32_t cover, uint32_t alive_from, uint32_t alive_before,
			double start, double (*born)(int64_t ns, void *ctx), void *ctx);

/* P(alive at `age`) at the site from its first judgments by age (pooled
 * where the site has few), non-increasing in age, interpolated between
 * the buckets' shares, each placed where the curve has that value (a
 * little below the mean age judged in it; below the youngest, the
 * youngest buckets' fit carried back); -1 if no judgment. */
double hp_survival_by_age(const struct hp_survival *s, uint32_t site, double age);

/* Where the curve's value at an age comes from, for its uncertainty: log
 * S(age) = sum of coef[j] log share(block[j]), j < n, a block being the
 * buckets the curve pools into one share, with var_log[j] the variance of
 * that share's log (binomial, by the delta method: (1 - s) / (s n), n its
 * judgments with the shrinkage's). The error of a sum of bytes x S(age)
 * over a site's samples is then, to first order, sum over blocks of
 * (bytes x S x coef summed over the samples)^2 x var_log: each block's
 * error is shared by every sample it serves, which sampling variance per
 * sample does not count. n = 0 where no bucket stands behind the value. */
struct hp_surv_unc {
	unsigned n;
	unsigned block[2];          /* < HP_SURV_AGES */
	double coef[2], var_log[2];
	double youngest;            /* where the curve's youngest judged bucket sits (its age or span); 0 if none */
	double oldest;              /* about its oldest judged age or span: that bucket's mean and one sd; 0 if none */
};
double hp_survival_by_age_unc(const struct hp_survival *s, uint32_t site, double age, struct hp_surv_unc *u);

/* A later judgment: a sample a marking found alive, judged again `span`
 * (allocation clock) after that marking began: alive (a later marking
 * found it so when it began) or dead by then. */
void hp_survival_judge_span(struct hp_survival *s, uint32_t site, double bytes, double span, bool alive);

/* P(alive `since` after a marking's start | found alive by it), from the
 * site's later judgments by span (pooled where the site has few),
 * non-increasing, interpolated between the buckets' mean spans and, below
 * the first, at its constant hazard from 1 at span 0; past the last, on at
 * the last two buckets' hazard where they decline clearly (three times
 * their error, from below 0.9), else flat; -1 with fewer than `min_n`
 * judgments at the site and pooled together. */
double hp_survival_by_span(const struct hp_survival *s, uint32_t site, double since, double min_n);
/* The same, and the blocks the value rests on (as hp_survival_by_age_unc). */
double hp_survival_by_span_unc(const struct hp_survival *s, uint32_t site, double since, double min_n,
			       struct hp_surv_unc *u);

/* P(alive `since` after the last marking's start | found alive by it) for
 * a verified sample `then` old when that marking began: the span curve
 * (at least HP_SURV_VERIFIED_MIN judgments, site and pooled), but for a
 * sample verified by that marking alone (`once`) where `since` lies below
 * the spans judged or no span can say, S(then + since) / S(then) on the
 * curve by age (curve.c, verified_by_age, says why), `then + since`
 * held at the oldest age judged unless the site's decline there is its
 * own (a death among its judgments) and clear, or it was judged at one
 * age; where it declines clearly over all its ages only, carried on
 * from the oldest at that decline's hazard (curve.c, hazard_over_all).
 * Where no span can say and no sample of the site has been judged
 * twice, every verified sample of it counts as verified once (it was
 * judged once, however many markings covered it). Past the oldest span,
 * for every verified sample whose age `then` the curve by age judged,
 * the lower of the span curve and S(to) / S(then), `to` being
 * then + since within the ages judged, else the oldest age judged (an
 * upper bound), but then + since for a sample verified once where the
 * curve by age declines clearly past its end, and carried on from the
 * oldest age for one where it declines clearly over all its ages only;
 * the span curve alone where
 * `then` lies past the ages judged. Past its oldest span the span curve
 * carries its last decline on where that is clear (three times its
 * error, from a share below 0.9), else stays flat.
 * u: the blocks behind it, as hp_survival_by_span_unc. -1 where neither
 * can say. */
#define HP_SURV_VERIFIED_MIN 64
double hp_survival_verified(const struct hp_survival *s, uint32_t site, bool once, double then, double since,
			    struct hp_surv_unc *u);

/* The age bucket of `age` (tests). */
unsigned hp_survival_age_bucket(double age);

/* A sample verified by the last marking found dead since: still referenced
 * at a sweep that began at pause count `seen`, found cleared by one that
 * began at `found`. */
void hp_survival_cleared(struct hp_survival *s, uint32_t site, double bytes, uint32_t seen, uint32_t found,
			 int64_t born_ns);
/* At a new marking, `span` after the last began (before
 * hp_survival_next_epoch): each sample hp_survival_cleared counted since,
 * judged at that span (hp_survival_judge_span): dead, except those cleared
 * inside the new marking's young window (alive_from, alive_before, as in
 * hp_survival_settle): alive when it began. */
void hp_survival_settle_cleared(struct hp_survival *s, double span, uint32_t alive_from, uint32_t alive_before);
/* What hp_survival_cleared counted at the site since the last marking. */
double hp_survival_cleared_since(const struct hp_survival *s, uint32_t site);

/* The bytes alive now among a group of samples still referenced, `raw`
 * bytes of which the model expects `est` alive, when `cleared` bytes of the
 * same group were found dead meanwhile: the model's share applied to the
 * whole group (raw + cleared), at most raw. */
double hp_survival_with_cleared(double raw, double est, double cleared);

/* Estimated share alive, shrunk toward the pooled share for sites with
 * few judgments; `n` (if not NULL) gets the judgments it rests on, and
 * the return is -1 when there is none anywhere. */
double hp_survival_first(const struct hp_survival *s, uint32_t site, double *n);
double hp_survival_next(const struct hp_survival *s, uint32_t site, double *n);

/* Pure functions (unit-tested against their formulas). */

/* The share f of objects alive at a uniform age in [0, gap] under
 * exponential lifetimes of rate lambda is (1 - exp(-lambda gap)) /
 * (lambda gap); returns lambda * gap for a given f in (0, 1] (0 for f >= 1,
 * a large value for f near 0). */
double hp_survival_rate_gap(double f);

/* P(alive at age `age`) for a site whose first-judgment share is f over
 * markings `gap` apart. */
double hp_survival_at_age(double f, double gap, double age);

/* P(alive now) for a sample verified alive by a marking `since` ago, where
 * `next` is the share surviving one gap. */
double hp_survival_since(double next, double gap, double since);

#endif
