/* Which markings have seen which samples: the verification of the live view.
 *
 * A sample's weak reference still being set proves nothing until a marking
 * that began after the sample was allocated has completed (marking.c in
 * heapusage says why, and counts the markings). Every sample records the
 * number of GarbageCollectionFinish events seen when it was allocated
 * (`pause_at_alloc`); every marking gets a `cover`: samples with
 * pause_at_alloc <= cover were allocated before it began, so it has
 * verified them (alive if their reference is still set now). */
#ifndef HP_MARKS_H
#define HP_MARKS_H

#include <jni.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "heapprobe.h"

#define HP_MARKS_RING 256       /* markings remembered for ages (min_age) */

struct hp_mark_ring {
	_Atomic uint32_t cover[HP_MARKS_RING];  /* non-decreasing in order of completion */
	_Atomic uint64_t n;                     /* markings pushed */
};

struct hp_marks {
	/* Markings the collector's counters show, pushed by the GC callback
	 * (one writer: the thread that ends a pause). */
	struct hp_mark_ring seen;
	/* Markings we requested that no counter shows (ZGC, Shenandoah, G1
	 * without perfdata): pushed by the requesting thread under the
	 * profiler's dump lock. */
	struct hp_mark_ring requested;
	bool primed;
	uint64_t count_seen, full_seen;         /* hp_marking() at the last look */
	uint32_t last_completion;               /* pause count when the last marking was seen to end */
	uint32_t last_full_pause;               /* pause count at the end of the last full collection */
	/* Requests (under the dump lock). */
	uint64_t requests, requests_ok;
	uint64_t request_ns_total, request_ns_max;
	uint64_t last_ns, last_end_ns;          /* the last completed request: its wall time, when it ended */
	uint32_t request_cover, request_end_pause;      /* ... its cover, the pause count when it ended */
	char last_request[200];                 /* what the last request did, or why it did not */
};

/* Starts counting from now (no GC callback may run concurrently with it on
 * this struct: call before enabling the profiler's GC events). */
void hp_marks_reset(struct hp_marks *m, struct hp_probe *probe, uint32_t pauses_now);

/* From GarbageCollectionFinish: plain loads and atomics only. `pauses_before`
 * is the pause count before this pause was counted. */
void hp_marks_on_gc(struct hp_marks *m, struct hp_probe *probe, uint32_t pauses_before);

/* The bookkeeping of hp_marks_on_gc, given the counters (tests). */
void hp_marks_observe(struct hp_marks *m, uint64_t full, uint64_t concurrent, uint32_t pauses_before);

/* Records a requested marking that completed: it covers the samples
 * allocated at or before `at_request` (the pause count when it was asked
 * for). `seen_before`: m->seen.n then. (The bookkeeping of
 * hp_marks_request, for tests.) */
void hp_marks_requested(struct hp_marks *m, uint32_t at_request, uint64_t seen_before, uint32_t pauses_now);

/* Markings that began after a sample with `pause_at_alloc` was allocated
 * and have completed (0: not verified yet). Saturates at HP_MARKS_RING. */
unsigned hp_marks_age(const struct hp_marks *m, uint32_t pause_at_alloc);

/* The latest cover: samples allocated at or before it are verified.
 * false if no marking has completed since counting began. */
bool hp_marks_horizon(const struct hp_marks *m, uint32_t *cover);

/* Asks for a marking (hp_request_marking) if samples exist that no marking
 * has seen, and records its cover. `pauses` is the profiler's live pause
 * counter. Blocks for the marking. Returns 0 if one completed, 1 if none was
 * needed, else a negative errno; m->last_request says what happened. Call
 * with the dump lock held, from a JVM thread, never after VMDeath. */
int hp_marks_request(struct hp_marks *m, struct hp_probe *probe, bool allow_full, const _Atomic uint64_t *pauses);

/* For periodic profiles: false (and m->last_request says why) if asking
 * now would spend more than 1/HP_MARKS_DUTY of the wall clock in requested
 * markings, judged by the last one's duration. */
#define HP_MARKS_DUTY 50
bool hp_marks_may_request(struct hp_marks *m);

#endif
