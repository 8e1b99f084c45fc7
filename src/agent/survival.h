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
 * Between markings, a sample no marking has seen counts for
 * exp(-lambda * age), lambda fitted to `first` (exponential lifetimes), and
 * a sample verified by the last marking for next^(time since that marking
 * began / gap). A site with few judgments leans on the pooled ratios.
 * Single writer: the agent thread's sweeps, under the profiler's dump lock. */
#ifndef HP_SURVIVAL_H
#define HP_SURVIVAL_H

#include <stdbool.h>
#include <stdint.h>

struct hp_survival_ratio {
	double alive, all;              /* Horvitz-Thompson bytes, decayed */
	double n;                       /* samples judged, decayed */
};

struct hp_survival_site {
	struct hp_survival_ratio first, next;
	uint32_t epoch;                 /* decays applied up to this epoch */
	/* Bytes found dead since the last marking, of samples it had not
	 * seen (recent) and of samples it verified: a young collection clears
	 * the references of young objects that died, so the samples still
	 * referenced are the likelier alive, and the estimate counts these. */
	double cleared_recent, cleared_verified;
	uint32_t cleared_epoch;
};

struct hp_survival {
	struct hp_survival_site *sites;
	uint32_t cap;
	struct hp_survival_site pooled;
	uint32_t epoch;                 /* one per marking seen */
	double keep;                    /* decay per marking */
};

int hp_survival_init(struct hp_survival *s, uint32_t cap);
void hp_survival_free(struct hp_survival *s);
void hp_survival_reset(struct hp_survival *s);

/* A new marking: older judgments weigh `keep` as much (lazily per site). */
void hp_survival_next_epoch(struct hp_survival *s);

/* One judgment of a sample of `bytes` (Horvitz-Thompson) at `site`: its
 * first (never judged alive before) or a later one. */
void hp_survival_judge(struct hp_survival *s, uint32_t site, double bytes, bool first, bool alive);

/* A sample found dead since the last marking: `recent` (no marking had
 * seen it) or verified by the last marking. */
void hp_survival_cleared(struct hp_survival *s, uint32_t site, double bytes, bool recent);
/* What hp_survival_cleared counted at the site since the last marking. */
void hp_survival_cleared_since(const struct hp_survival *s, uint32_t site, double *recent, double *verified);

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
