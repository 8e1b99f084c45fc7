/* Sites whose objects die together (cohort.h).
 *
 * Why. Between markings the view counts each sample by its site's
 * survival at its age (survival.c). A list that grows and is dropped
 * every few seconds has S(a) of about 1 - a/T whatever the moment, so the
 * estimate reads such a list near its average, not its phase, and keeps
 * a dropped list alive until a marking looks: profiles written after a
 * drop read +360..+6900% at that site under load (docs/load-grow.md).
 *
 * What is seen. A young collection clears the references of the young
 * objects that died; the old ones wait for a marking. When a list is
 * dropped, its young part (the samples born in the last pause or two)
 * dies at the next young collection, together: every young sample of the
 * site born before some moment is found cleared, every one born after it
 * is still referenced. While the list grows, none of its young samples
 * dies.
 *
 * The test (hp_cohort_is_drop). Per site, the share of young samples
 * found dead by a sweep, over the past sweeps that saw young samples of
 * it: q = (dead + 1/2) / (young + 1), decayed sums (DECAY a sweep, a few
 * seconds under load). Only a site whose young samples seldom die (q at
 * most MAX_SHARE) is looked at: a drop is a departure from that. In one
 * sweep, its young samples in the order of their births; a run of r of
 * them found dead one after the other: if deaths were independent at q,
 * a run of r among n has chance at most n q^r. A drop is found where r
 * >= MIN_DEAD and n q^r < FALSE_RATE: a list whose young samples never
 * died (q ~ 0.002 after a few hundred) is found from 4 young samples; a
 * cache turning over at random (q ~ 0.5), garbage (q ~ 1), a FIFO cache
 * (young samples do not die) or a site whose young die now and then (q
 * = 0.05: 20 x 0.05^8 = 8e-10 for a run of 8) are not. The run, not all
 * of the young: some young samples were promoted before the drop and
 * look alive until a marking (G1 17 under load: 9 of 30 young found dead
 * at one drop, the run of them whole). Sweeps where a marking can have
 * cleared references (one counted since the last sweep, or asked for)
 * are not looked at: its deaths are every age's.
 *
 * What follows. Every sample of the site born at or before the last birth
 * of the run counts as dead (estimate.c), verified or
 * not, until a marking that began after that moment is counted: it then
 * judges them itself (one that began before the sweep that found the drop
 * may have begun before the drop, and judged the list alive).
 *
 * And the list grown since. The estimate by age reads a list between its
 * drops by its average survival, about 1 - a/T whatever the phase: late
 * in a growth phase half the list (G1 under load: -42..-53%). A sample of
 * the site born after the latest drop found (after the run's last birth)
 * was alive at the sweep that found it or born since, and a drop since
 * would have been found: it counts alive now (hp_cohort_growing). Only
 * where the markings agree: of the samples born after a drop found before
 * a marking began, that marking (or a later one, for those it found
 * alive before) found at most MAX_SHARE dead (decayed sums, AFTER_DECAY a
 * marking, at least MIN_AFTER judged); before the site's first drop, of
 * every one of its samples the markings judged (a list growing loses
 * none, so what it grows after its first drop counts alive at once:
 * waiting for a marking after the one that found the drop, the view read
 * that growth by the curve, Parallel under load -53% and -65% 2 s after
 * the first drop). A site whose
 * batches overlap (request-scoped objects) or a drop missed (its young
 * part promoted) shows deaths there and goes back to the curve by age
 * until the markings agree again.
 *
 * A drop a marking finds. Where full collections come as often as young
 * ones (Parallel and Serial under load: a second apart), the first to see
 * a dropped list is often a marking: it judges the list's samples born
 * before the drop dead and those born since alive, and no young sweep
 * found it. A marking's judgments of a site whose young seldom die, all
 * of the dead born before all of the alive (at least MIN_DEAD dead, the
 * same test as a sweep's run), are taken as a drop up to the latest dead
 * birth, found when the marking began (hp_cohort_judged_end); where
 * markings judge only the promoted (generational ZGC's majors,
 * promoted_only) and it found every one it judged dead, up to its start:
 * the drop came before it, and the samples born between may be the
 * list's, not judged (one that began 0.1 s after a drop found the list
 * dead up to 2.5 s before the drop: those 2.5 s of the dropped list would
 * count alive until the next major; read by the curve instead); a first
 * drop only where the marking before found the site's samples alive (a
 * list growing loses none; a cache's first fill, replaced at random,
 * loses some at every marking until one finds the last of it dead); only for
 * what the site grows since: the marking itself judged the list. Its
 * judgments are then no agreement either way (the deaths are the drop's,
 * the living chosen by the split). A FIFO queue splits so at every
 * marking: no first drop where the marking before saw its oldest die;
 * where a marking saw its filling whole, drops whose judgments never
 * count; either way it keeps the curve by age.
 *
 * What is not known: a site that keeps old objects while a young batch
 * of it dies together reads its old ones dead until the next marking;
 * deaths in batches (request-scoped objects, all of a
 * sweep's young ones gone at times) break the independence the test
 * assumes and are found dropped at times, their older samples then
 * counted dead (the survival curve gives such a site little past its
 * batches' life anyway).
 */
#include "agent/cohort.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DECAY 0.99f             /* weight of a past sweep's young samples, per sweep */
#define MIN_DEAD 4              /* young samples dead together, at least */
#define MIN_YOUNG 32.0          /* young samples seen before, at least */
#define FALSE_RATE 1e-10        /* q^d below this */
#define MAX_SHARE 0.05          /* q at most: a site whose young samples seldom die */
#define MAX_TOUCHED 4096        /* sites with young samples in one sweep looked at */
#define MAX_YOUNG 8192          /* young samples of looked-at sites kept in one sweep */
#define MAX_STANDING 1024
#define MAX_KNOWN 1024          /* sites with a drop found, kept for what they grow since */
#define MIN_AFTER 16.0          /* samples born after a drop judged by markings, at least */
#define AFTER_DECAY 0.5f        /* weight of a past marking's judgments of them, per marking */

int hp_cohort_init(struct hp_cohort *c, uint32_t cap)
{
	memset(c, 0, sizeof(*c));
	c->sites = calloc(cap, sizeof(*c->sites));
	c->touched = calloc(MAX_TOUCHED, sizeof(*c->touched));
	c->young = calloc(MAX_YOUNG, sizeof(*c->young));
	c->standing = calloc(MAX_STANDING, sizeof(*c->standing));
	c->known = calloc(MAX_KNOWN, sizeof(*c->known));
	c->judged = calloc(MAX_TOUCHED, sizeof(*c->judged));
	if (!c->sites || !c->touched || !c->young || !c->standing || !c->known || !c->judged) {
		hp_cohort_free(c);
		return -ENOMEM;
	}
	c->cap = cap;
	return 0;
}

void hp_cohort_free(struct hp_cohort *c)
{
	free(c->sites);
	free(c->touched);
	free(c->young);
	free(c->standing);
	free(c->known);
	free(c->judged);
	memset(c, 0, sizeof(*c));
}

void hp_cohort_sweep_begin(struct hp_cohort *c, bool young_only, int64_t now_ns)
{
	if (++c->sweep == 0)
		c->sweep = 1;   /* 0 marks a site not touched, or found */
	c->sweep_ns = now_ns;
	c->counting = young_only && c->sites;
	c->ntouched = 0;
	c->nyoung = 0;
	c->young_full = false;
}

static double share_of(const struct hp_cohort_site *x)
{
	return (x->young_dead + 0.5) / (x->young_n + 1.0);
}

void hp_cohort_seen(struct hp_cohort *c, uint32_t site, bool dead, int64_t born_ns)
{
	if (!c->counting || site >= c->cap)
		return;
	struct hp_cohort_site *x = &c->sites[site];
	if (x->sweep != c->sweep) {
		if (c->ntouched == MAX_TOUCHED)
			return;
		c->touched[c->ntouched++] = site;
		x->sweep = c->sweep;
		x->n = x->dead = 0;
		x->looked = x->young_n >= MIN_YOUNG && share_of(x) <= MAX_SHARE;
	}
	x->n++;
	x->dead += dead;
	if (!x->looked || c->promoted_only)
		return;         /* no run looked for (hp_cohort_sweep_end) */
	if (c->nyoung == MAX_YOUNG)
		c->young_full = true;
	else
		c->young[c->nyoung++] = (struct hp_cohort_young){ site, dead, born_ns };
}

bool hp_cohort_is_drop(double young_n, double young_dead, uint32_t n, uint32_t run)
{
	if (run < MIN_DEAD || run > n || !(young_n >= MIN_YOUNG))
		return false;
	double q = (young_dead + 0.5) / (young_n + 1.0);
	return q <= MAX_SHARE && log((double)n) + run * log(q) < log(FALSE_RATE);
}

static int by_site_birth(const void *a, const void *b)
{
	const struct hp_cohort_young *x = a, *y = b;
	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	/* Not the dead first on one clock tick (CLOCK_REALTIME_COARSE, 1-4
	 * ms): at 64k a cache site has ~50 samples a tick, and its few dead
	 * of each tick put together made runs a drop (tried: Serial's `top`
	 * screens -50..-90% every other one, test_load top_serial_every_screen). */
	return (x->born_ns > y->born_ns) - (x->born_ns < y->born_ns);
}

/* The site's agreement sums decayed to the markings counted by now (a
 * site not in known[], which hp_cohort_marking decays, is decayed when
 * touched). Where markings judge only the promoted, by the markings that
 * judged the site instead (judged_decay): generational ZGC's majors, some
 * under a second apart, judged none of what a list grew since its drop
 * (born in the last ~2 s), and two of them halved the agreement carried
 * into the drop below MIN_AFTER: the growth read by the curve, -53% at
 * 106 MiB. */
static void decay_to_now(struct hp_cohort *c, struct hp_cohort_site *x)
{
	uint32_t k = c->promoted_only ? 0 : c->markings - x->after_marking;
	if (k) {
		float f = k >= 64 ? 0.0f : powf(AFTER_DECAY, (float)k);
		x->after_n *= f;
		x->after_dead *= f;
	}
	x->after_marking = c->markings;
}

/* Where markings judge only the promoted: the sums halved once for each
 * marking that brings judgments of the site (settled, or one by one past
 * a full list or after it settled), however they come. */
static void judged_decay(const struct hp_cohort *c, struct hp_cohort_site *x, int64_t start_ns)
{
	if (!c->promoted_only || start_ns == x->after_start)
		return;
	x->after_n *= AFTER_DECAY;
	x->after_dead *= AFTER_DECAY;
	x->after_start = start_ns;
}

/* A drop of `site` up to the birth `last_ns`, found by what began at
 * `found_ns`: kept for what the site grows since, while there is room. */
static void remember(struct hp_cohort *c, uint32_t site, int64_t last_ns, int64_t found_ns)
{
	struct hp_cohort_site *x = &c->sites[site];
	bool kept = x->last_ns != 0;
	if (!kept) {
		/* The judgments before its first drop, as agreement, carried at
		 * most as 2 MIN_AFTER: each marking judges every live sample
		 * again, and a FIFO queue that splits at every marking since
		 * would stay agreed for log2(n / MIN_AFTER) markings. */
		decay_to_now(c, x);
		if (x->after_n > 2 * MIN_AFTER) {
			x->after_dead *= (float)(2 * MIN_AFTER) / x->after_n;
			x->after_n = (float)(2 * MIN_AFTER);
		}
	}
	if (!kept && c->nknown < MAX_KNOWN) {
		c->known[c->nknown++] = site;
		kept = true;
	}
	if (kept && last_ns > x->last_ns)
		x->last_ns = last_ns;
	if (found_ns > x->found_ns)
		x->found_ns = found_ns;
	c->drops++;
}

static void found(struct hp_cohort *c, uint32_t site, int64_t last_ns)
{
	struct hp_cohort_site *x = &c->sites[site];
	x->sweep = 0;           /* a drop is not the site's own hazard: not in its share */
	if (x->dropped_ns == 0) {
		if (c->nstanding == MAX_STANDING) {
			c->drops_lost++;
			x->after_n = x->after_dead = 0;         /* what it grew is no longer known */
			return;
		}
		c->standing[c->nstanding++] = site;
	}
	if (last_ns > x->dropped_ns)
		x->dropped_ns = last_ns;
	remember(c, site, last_ns, c->sweep_ns);
}

void hp_cohort_sweep_end(struct hp_cohort *c, bool young_only)
{
	if (!c->counting || !young_only) {
		c->counting = false;
		return;
	}
	/* The looked-at sites' young in the order of their births: the
	 * longest run found dead, per site. */
	if (!c->promoted_only && !c->young_full && c->nyoung) {
		qsort(c->young, c->nyoung, sizeof(*c->young), by_site_birth);
		for (uint32_t i = 0; i < c->nyoung;) {
			uint32_t site = c->young[i].site, run = 0, best = 0;
			int64_t best_ns = 0;
			for (; i < c->nyoung && c->young[i].site == site; i++) {
				run = c->young[i].dead ? run + 1 : 0;
				if (run && run >= best) {        /* the latest of equal runs */
					best = run;
					best_ns = c->young[i].born_ns;
				}
			}
			/* The run at the site's past share alone. Not the
			 * higher share of this sweep's deaths outside the run
			 * (tried: a cache's first fill, whose young began dying
			 * at random, has deaths beside its chance runs): a list
			 * dropped on G1 at 64k under load showed 15 dead, 5
			 * alive, then 32 dead before those born after it, 0.12
			 * outside the run, and was missed (a profile 2 s later
			 * read the list +81 MiB; 1 in ~4 runs). */
			const struct hp_cohort_site *x = &c->sites[site];
			if (hp_cohort_is_drop(x->young_n, x->young_dead, x->n, best))
				found(c, site, best_ns);
		}
	}
	for (uint32_t i = 0; i < c->ntouched; i++) {
		struct hp_cohort_site *x = &c->sites[c->touched[i]];
		if (x->sweep != c->sweep)
			continue;       /* a drop found */
		x->young_n = x->young_n * DECAY + (float)x->n;
		/* Where young collections clear no reference, the deaths a
		 * sweep sees are a major's (counted only when the next begins),
		 * a drop's among them: not the young's. Folded in, a list
		 * dropped every 21 sweeps would reach q 0.053, past MAX_SHARE,
		 * and no marking would find its drops (a review). */
		x->young_dead = x->young_dead * DECAY + (c->promoted_only ? 0.0f : (float)x->dead);
	}
	c->counting = false;
}

bool hp_cohort_dropped(const struct hp_cohort *c, uint32_t site, int64_t born_ns)
{
	if (!c->sites || site >= c->cap)
		return false;
	int64_t d = c->sites[site].dropped_ns;
	return d != 0 && born_ns <= d;
}

/* Born after the latest drop, found before the marking that began at
 * `start_ns` began: a death here is none of the drops found. */
static bool after_drop(const struct hp_cohort_site *x, int64_t born_ns, int64_t start_ns)
{
	return x->last_ns != 0 && born_ns > x->last_ns && x->found_ns < start_ns && born_ns < start_ns;
}

/* A marking's judgments of a site before its first drop, however they
 * come (settled, or one by one past a full list or after it settled):
 * summed per marking, the latest marking's kept. */
static void prev_add(struct hp_cohort_site *x, int64_t start_ns, uint32_t n, uint32_t dead)
{
	if (start_ns > x->prev_start) {
		x->prev_start = start_ns;
		x->prev_n = x->prev_dead = 0;
	} else if (start_ns < x->prev_start) {
		return;         /* an older marking's, late */
	}
	x->prev_n += n;
	x->prev_dead += dead;
}

/* Markings' judgments that agree a site's objects live: at least
 * MIN_AFTER judged, at most MAX_SHARE of them dead. */
static bool judged_alive(double n, double dead)
{
	return n >= MIN_AFTER && (dead + 0.5) / (n + 1.0) <= MAX_SHARE;
}

/* Before a site's first drop: the marking before (all its judgments of
 * the site, prev_add) judged at least MIN_AFTER of its samples and found
 * at most MAX_SHARE of them dead, as a marking finds a list growing. A site whose objects die one
 * by one (a cache's first fill, replaced at random) showed deaths at the
 * marking before; when one then finds the last of them dead, or those
 * born first dead and the rest alive, that is no list dropped (Serial
 * and Parallel under load: a start-up site found dropped at times, in a
 * service that drops nothing). The marking before alone, not the decayed
 * sums: a list whose first drop was missed (too few judged yet) had its
 * dropped part counted dead there, and with drops a few markings apart
 * the sums would never agree again; the marking after a missed drop
 * judges only what grew since, alive. */
static bool agreed_before(const struct hp_cohort_site *x)
{
	return judged_alive(x->prev_n, x->prev_dead);
}

/* The site's judgments kept since it was listed: a drop the marking found,
 * or toward the markings' agreement; then none kept. */
static void settle(struct hp_cohort *c, uint32_t site, bool may_split)
{
	struct hp_cohort_site *x = &c->sites[site];
	if (x->last_ns == 0)
		decay_to_now(c, x);
	if (x->last_ns == 0 ? x->j_n : x->j_after_n)
		judged_decay(c, x, x->j_start);         /* a marking that judged it (decay_to_now's comment) */
	/* A first drop only at a site the marking before judged, and found
	 * alive: at least MIN_AFTER judged, at most MAX_SHARE of them dead
	 * (agreed_before). At the first marking of all, a site whose every
	 * sample died (the start-up's) is no list dropped, and none of its
	 * later samples would be known better for it. */
	bool judged_before = x->last_ns != 0 || agreed_before(x);
	bool split = may_split && judged_before && x->j_dead >= MIN_DEAD &&
		     (x->j_dead == x->j_n || x->j_dead_max < x->j_alive_min) &&
		     x->j_dead_max > x->last_ns && x->j_dead_max < x->j_start &&
		     hp_cohort_is_drop(x->young_n, x->young_dead, x->j_n, x->j_dead);
	if (split) {
		/* Its judgments of the samples born after the drop before are
		 * this drop's deaths, or alive by the split itself: not
		 * evidence either way. */
		/* All it judged dead, where markings judge only the promoted:
		 * what it did not judge, born up to its start, may be the
		 * list's too (the header). */
		remember(c, site, c->promoted_only && x->j_dead == x->j_n ? x->j_start : x->j_dead_max, x->j_start);
		c->drops_marked++;
	} else if (x->last_ns == 0) {
		/* No drop yet: each of its samples this marking judged, dead
		 * or alive, says whether the site's objects die other than in
		 * drops (a list growing: none). Decayed to now above. */
		x->after_n += (float)x->j_n;
		x->after_dead += (float)x->j_dead;
		prev_add(x, x->j_start, x->j_n, x->j_dead);
	} else {
		x->after_n += (float)x->j_after_n;
		x->after_dead += (float)x->j_after_dead;
	}
	x->j_n = x->j_dead = x->j_after_n = x->j_after_dead = 0;
	x->j_dead_max = x->j_alive_min = 0;
	x->j_settled = x->j_start;
}

void hp_cohort_judged(struct hp_cohort *c, uint32_t site, int64_t born_ns, bool alive, int64_t start_ns)
{
	if (!c->sites || site >= c->cap)
		return;
	struct hp_cohort_site *x = &c->sites[site];
	if (x->listed && x->j_start != start_ns)
		settle(c, site, false);         /* another marking's: none of them is the marking's whole */
	if (!x->listed) {
		/* A judgment of a marking already settled (a sample it covers
		 * only since, or found dead only later) is not part of its
		 * whole, and a split of a few would be no drop; or no room. */
		if (x->j_settled == start_ns || c->njudged == MAX_TOUCHED) {
			/* As settle counts them: before a first drop every
			 * judgment, after one those born since. */
			if (x->last_ns == 0 || after_drop(x, born_ns, start_ns)) {
				if (x->last_ns == 0) {
					decay_to_now(c, x);
					prev_add(x, start_ns, 1, !alive);
				}
				judged_decay(c, x, start_ns);
				x->after_n += 1;
				x->after_dead += !alive;
			}
			return;
		}
		c->judged[c->njudged++] = site;
		x->listed = true;
	}
	x->j_start = start_ns;
	x->j_n++;
	if (!alive) {
		x->j_dead++;
		if (born_ns > x->j_dead_max)
			x->j_dead_max = born_ns;
	} else if (x->j_n - x->j_dead == 1 || born_ns < x->j_alive_min) {
		x->j_alive_min = born_ns;
	}
	if (after_drop(x, born_ns, start_ns)) {
		x->j_after_n++;
		x->j_after_dead += !alive;
	}
}

void hp_cohort_judged_end(struct hp_cohort *c)
{
	for (uint32_t i = 0; i < c->njudged; i++) {
		settle(c, c->judged[i], true);
		c->sites[c->judged[i]].listed = false;
	}
	c->njudged = 0;
}

static bool agreed(const struct hp_cohort_site *x)
{
	return x->last_ns != 0 && judged_alive(x->after_n, x->after_dead);
}

bool hp_cohort_growing(const struct hp_cohort *c, uint32_t site, int64_t born_ns)
{
	if (!c->sites || site >= c->cap)
		return false;
	const struct hp_cohort_site *x = &c->sites[site];
	return agreed(x) && born_ns > x->last_ns;
}

uint32_t hp_cohort_growing_sites(const struct hp_cohort *c)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < c->nknown; i++)
		n += agreed(&c->sites[c->known[i]]);
	return n;
}

void hp_cohort_marking(struct hp_cohort *c, int64_t start_ns)
{
	c->markings++;
	for (uint32_t i = 0; i < c->nknown; i++)
		decay_to_now(c, &c->sites[c->known[i]]);
	uint32_t kept = 0;
	for (uint32_t i = 0; i < c->nstanding; i++) {
		struct hp_cohort_site *x = &c->sites[c->standing[i]];
		if (x->found_ns < start_ns)
			x->dropped_ns = 0;
		else
			c->standing[kept++] = c->standing[i];
	}
	c->nstanding = kept;
}
