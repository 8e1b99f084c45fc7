/* Live bytes per allocation site over time, and leak suspects.
 *
 * After each marking, and after young collections (at most one record a
 * second, collections in between coalesced), the agent thread records per
 * site the bytes a marking has verified alive, their sampling variance,
 * the recent bytes no marking has seen yet, and the bytes freed since the
 * previous record, in two bounded rings (HP_HIST_RECORDS markings,
 * HP_HIST_RECORDS young records). Nothing here runs on the allocation
 * path: records are built from the sweep the agent thread makes anyway to
 * free dead samples' references. history.c explains the leak statistic. */
#ifndef HP_HISTORY_H
#define HP_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HP_HIST_RECORDS 256         /* per ring */
#define HP_HIST_MARKING_SITES 2048  /* most site entries a marking record keeps (largest first) */
#define HP_HIST_YOUNG_SITES 256     /* ... a young record */
#define HP_HIST_WINDOW 8            /* markings the leak test looks back over */
#define HP_HIST_SUSPECT_Z 4.0       /* z a site's rise must reach (history.c) */

enum hp_hist_kind { HP_HIST_MARKING = 0, HP_HIST_YOUNG = 1 };

/* One site in one record. Floats: 24 bits of mantissa are plenty for
 * estimates with a sampling error of a few percent, and halve the memory. */
struct hp_hist_site {
	uint32_t site;              /* site slot */
	float live;                 /* verified bytes (Horvitz-Thompson) */
	float var;                  /* their sampling variance */
	float recent;               /* bytes alive that no marking has seen */
	float freed;                /* bytes of samples found dead since the previous record of this ring */
	float change_var;           /* marking records: variance of the change in `live` since the previous
	                               marking record (samples verified since + verified samples died since) */
};

struct hp_hist_rec {
	int64_t time_ns;            /* CLOCK_REALTIME */
	uint64_t markings;          /* markings counted (hp_marks rings) when recorded */
	uint32_t collections;       /* GC pauses since the previous record (either ring) */
	uint64_t heap_used;         /* the probe's post-GC figure then; 0 = none */
	double live, recent, freed; /* totals over all sites (kept entries or not) */
	struct hp_hist_site *sites; /* malloc'd, largest live + recent first */
	uint32_t nsites;
};

struct hp_hist_ring {
	struct hp_hist_rec rec[HP_HIST_RECORDS];
	uint64_t n;                 /* records ever pushed; the last is rec[(n - 1) % HP_HIST_RECORDS] */
};

/* Per-site accumulators between records: a slot -> index map and a
 * vector of the sites touched. */
struct hp_hist_acc {
	uint32_t site;
	double live, var, recent, added_var;
	double freed_young, freed_marking, removed_var;
};

struct hp_history {
	struct hp_hist_ring marking, young;
	uint32_t *slot_ix;          /* site slot -> acc index + 1, 0 = none */
	uint32_t nslots;
	struct hp_hist_acc *acc;
	uint32_t nacc, capacc;
	uint64_t last_markings;     /* markings at the last record (either ring) */
	uint64_t last_marking_rec_markings;     /* ... at the last marking record */
	int64_t last_young_ns;      /* the last record of either ring */
	int64_t last_marking_ns;    /* the last marking record */
	uint64_t pauses_seen;       /* pauses at the last record */
	/* What it costs, for the profile's comment and docs/. */
	uint64_t records, record_ns, bytes;
};

int hp_history_init(struct hp_history *h, uint32_t nslots);
void hp_history_free(struct hp_history *h);

/* A sample found dead (by any sweep). `age_now`: markings that cover it
 * now (hp_marks_age); `markings_now`: markings counted now. `bytes` is its
 * Horvitz-Thompson weight times its size, `var` its variance term. */
void hp_history_dead(struct hp_history *h, uint32_t site, double bytes, double var, unsigned age_now,
		     uint64_t markings_now);
/* A sample alive at a record's sweep. */
void hp_history_alive(struct hp_history *h, uint32_t site, double bytes, double var, unsigned age_now,
		      uint64_t markings_now);
/* The variance a weight's move adds to the change (history.c): a sample
 * now `bytes`, its weight factor `thin` now and `thin_then` at the last
 * marking record that counted it. 0 if it did not move. */
double hp_history_moved_var(double bytes, double thin_then, double thin);
/* A sample counted at the last marking record and at this one whose weight
 * moved in between (a thinning: live.c; its thread's end credit: sample.c
 * credit_thread_end): `var` (hp_history_moved_var) is part of the
 * change's variance. Only for a marking record's sweep. */
void hp_history_reweighed(struct hp_history *h, uint32_t site, double var);
/* Whether a record at `markings_now` would be a marking record. */
bool hp_history_marking_record(const struct hp_history *h, uint64_t markings_now);

/* Whether the sweep about to run should record: a marking since the last
 * record (at most one marking record every 2 s: markings closer share
 * one, except before a profile, which shows the marking just made), or a
 * young record due (a second since the last one). */
bool hp_history_due(const struct hp_history *h, uint64_t markings_now, int64_t now_ns, uint64_t pauses_now,
		    bool profile);
/* Closes the sweep: pushes a marking record (markings moved) or a young
 * one, and clears the per-record accumulators. */
void hp_history_record(struct hp_history *h, uint64_t markings_now, int64_t now_ns, uint64_t pauses_now,
		       uint64_t heap_used, uint64_t spent_ns);

/* A leak suspect: a site whose verified live bytes rose over the window
 * and are still rising (history.c: the test). */
struct hp_hist_suspect {
	uint32_t site;
	double live;                /* verified bytes at the last marking */
	double per_min;             /* least-squares growth, bytes per minute */
	double z, z_recent;         /* growth over the window / over its second half, in standard errors */
	uint32_t window;            /* marking records used */
	double span_s;              /* seconds the window covers */
};

/* Sites that are confident suspects, most growth per minute first; at
 * most `cap`. */
size_t hp_history_suspects(const struct hp_history *h, struct hp_hist_suspect *out, size_t cap);

/* The i-th record of the two rings merged by time, oldest first (i <
 * hp_history_count); kind in *kind. */
size_t hp_history_count(const struct hp_history *h);
const struct hp_hist_rec *hp_history_at(const struct hp_history *h, size_t i, enum hp_hist_kind *kind);
/* A site's entry in a record, or NULL. */
const struct hp_hist_site *hp_history_site(const struct hp_hist_rec *r, uint32_t site);

#endif
