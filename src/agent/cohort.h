/* Sites whose objects die together (a list or a map dropped at once),
 * seen by the young collections between markings: cohort.c says why and
 * how. Under the dump lock, as the survival sums. */
#ifndef HP_AGENT_COHORT_H
#define HP_AGENT_COHORT_H

#include <stdbool.h>
#include <stdint.h>

/* A sample allocated within this many pauses before the sweep before
 * began, or since, is young at a sweep: a young collection cleared its
 * reference if it died. */
#define HP_COHORT_YOUNG_PAUSES 2

struct hp_cohort_site {
	/* The site's young deaths per young sample, decayed sums over the
	 * sweeps that saw young samples of it (no drop among them). */
	float young_n, young_dead;
	/* This sweep's young samples: how many, how many found dead. */
	uint32_t sweep, n, dead;
	bool looked;                    /* a site whose young seldom die: its young samples kept */
	/* Samples born at or before this (CLOCK_REALTIME) died with the
	 * drop found; 0 when none is standing. */
	int64_t dropped_ns;
	int64_t found_ns;               /* when the sweep that found it began: the drop was before */
	/* The latest drop's birth bound, kept across markings: samples
	 * born after it are the list grown since (hp_cohort_growing). */
	int64_t last_ns;
	/* Samples born after the latest drop found before a marking began,
	 * first judged by that marking: how many, how many dead; decayed
	 * sums over the markings. Before the site's first drop, every one of
	 * its samples a marking judged (decayed from after_marking on). */
	float after_n, after_dead;
	uint32_t after_marking;         /* hp_cohort's markings when the sums were last decayed */
	int64_t after_start;            /* promoted_only: the start of the marking that last decayed them */
	/* The marking under way's judgments of the site (hp_cohort_judged),
	 * settled by hp_cohort_judged_end: the marking's start, how many,
	 * how many dead, the latest dead birth and the earliest alive one,
	 * and of them the ones born after the latest drop (after_n's). */
	bool listed;
	int64_t j_start, j_dead_max, j_alive_min;
	int64_t j_settled;              /* the start of the marking last settled */
	uint32_t j_n, j_dead, j_after_n, j_after_dead;
	/* Before the site's first drop: the latest marking's judgments of
	 * it (that began at prev_start), how many, how many dead (a first
	 * drop needs the marking before to have found it alive). */
	int64_t prev_start;
	uint32_t prev_n, prev_dead;
};

/* A young sample of a site looked at, kept for the sweep's end. */
struct hp_cohort_young {
	uint32_t site;
	bool dead;
	int64_t born_ns;
};

struct hp_cohort {
	struct hp_cohort_site *sites;
	uint32_t cap;
	uint32_t sweep;                 /* the sweep under way, from 1 (0 skipped) */
	int64_t sweep_ns;               /* when it began, CLOCK_REALTIME */
	bool counting;                  /* this sweep's deaths are young collections' */
	bool promoted_only;             /* generational ZGC: young collections clear no weak reference, and
					 * markings judge only the promoted (hp_cohort_sweep_end, settle) */
	uint32_t *touched, ntouched;    /* sites with young samples this sweep */
	struct hp_cohort_young *young;  /* the looked-at sites' young samples this sweep */
	uint32_t nyoung;
	bool young_full;                /* more than the buffer holds: no drop looked for */
	uint32_t *standing, nstanding;  /* sites with a drop standing */
	uint32_t *known, nknown;        /* sites with a drop found since sampling began */
	uint64_t drops;                 /* drops found in all */
	uint64_t drops_lost;            /* found with the standing list full: not applied */
	uint32_t *judged, njudged;      /* sites a marking judged since hp_cohort_judged_end */
	uint64_t drops_marked;          /* drops found by a marking's judgments (of all the drops) */
	uint32_t markings;              /* hp_cohort_marking calls */
};

int hp_cohort_init(struct hp_cohort *c, uint32_t cap);
void hp_cohort_free(struct hp_cohort *c);

/* A sweep of the live table begins at `now_ns` (CLOCK_REALTIME);
 * `young_only` when young collections, and nothing else, can have cleared
 * references since the last one (a pause since, no marking counted since,
 * none asked for under way). */
void hp_cohort_sweep_begin(struct hp_cohort *c, bool young_only, int64_t now_ns);

/* A young sample of `site` (HP_COHORT_YOUNG_PAUSES) the sweep looked at,
 * born at `born_ns`, found cleared or still referenced. */
void hp_cohort_seen(struct hp_cohort *c, uint32_t site, bool dead, int64_t born_ns);

/* The sweep ended: each site whose young samples died together, where its
 * young samples have not died before, is marked dropped up to the latest
 * birth among them (not where promoted_only: the young sums are kept for
 * the markings' test alone). `young_only` false (a marking counted while
 * it ran) leaves what it saw unused. */
void hp_cohort_sweep_end(struct hp_cohort *c, bool young_only);

/* Whether a sample of `site` born at `born_ns` died in a drop found since
 * the last marking that began after it. */
bool hp_cohort_dropped(const struct hp_cohort *c, uint32_t site, int64_t born_ns);

/* A sample of `site` born at `born_ns`, judged by the marking that began
 * at `start_ns` (the first time, or again after one found it alive):
 * alive when it began, or dead. Kept per site until hp_cohort_judged_end. */
void hp_cohort_judged(struct hp_cohort *c, uint32_t site, int64_t born_ns, bool alive, int64_t start_ns);

/* The judgments since the last call are the marking's whole (a sweep
 * ended): a site whose young seldom die, that the marking before judged
 * and found alive (or with a drop before), all of whose samples judged
 * dead were born before all of those judged alive (at least MIN_DEAD
 * dead), is found dropped by the marking up to its latest dead birth
 * (for what it grows since:
 * hp_cohort_growing); the others' judgments count toward the markings'
 * agreement: of the samples born after their latest drop, or before a
 * site's first drop, of all it judged. */
void hp_cohort_judged_end(struct hp_cohort *c);

/* Whether a sample of `site` born at `born_ns` belongs to what the site
 * grew since its latest drop, at a site whose samples born after its drops
 * the markings found alive: alive now, as no drop was found since. */
bool hp_cohort_growing(const struct hp_cohort *c, uint32_t site, int64_t born_ns);

/* How many sites hp_cohort_growing trusts (their last drop's samples
 * born after it counted alive). */
uint32_t hp_cohort_growing_sites(const struct hp_cohort *c);

/* A marking that began at `start_ns` (CLOCK_REALTIME) is counted: it
 * judges the samples of every drop found before it began (so the drop
 * itself was before), which end. */
void hp_cohort_marking(struct hp_cohort *c, int64_t start_ns);

/* The test of a sweep (unit-tested): `run` young samples died, one after
 * the other in the order of their births (none of the site's young
 * samples born among them still referenced), out of `n` young samples of
 * the site, where its past young samples died at young_dead / young_n. */
bool hp_cohort_is_drop(double young_n, double young_dead, uint32_t n, uint32_t run);

#endif
