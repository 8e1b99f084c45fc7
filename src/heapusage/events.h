/* The probe's own JVMTI events: post-GC capture, NativeMethodBind, VMInit. */
#ifndef HP_EVENTS_H
#define HP_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "heapprobe.h"

struct hp_probe;

/* Sets up the probe's jvmtiEnv (capabilities, callbacks). Missing
 * capabilities are reported in *reason, the rest still works. `live` says
 * hp_open was called after VM start (no VMInit will come). */
int hp_events_start(struct hp_probe *p, bool live, char *reason, size_t len);
void hp_events_stop(struct hp_probe *p);
void hp_events_free(struct hp_probe *p);

/* The reading taken at the end of the most recent collection. 0, or
 * -ENODATA before the first one. Lock-free (seqlock). */
int hp_events_last_gc(struct hp_probe *p, struct hp_heap_usage *out);
/* The last captured post-GC used alone (one load), 0 if none. */
uint64_t hp_events_live_bytes(struct hp_probe *p);

/* Collections finished (CollectedHeap::_total_collections), or the number of
 * GarbageCollectionFinish events seen if that is unreadable. */
uint64_t hp_events_gc_count(struct hp_probe *p);

/* Count of GarbageCollectionFinish events seen; mismatches between the
 * post-GC reading and the last-GC fields (validation). */
struct hp_events_stats {
	uint64_t gc_finish_events;
	uint64_t full_gcs;
	uint64_t capture_failures;
	uint64_t pause_events;      /* events that ended no collection (concurrent pauses, G1 Remark) */
	uint64_t cross_checks, disagreements;   /* last-GC fields vs the capture */
	const char *capture_note;   /* which mode captures, or why none */
};
void hp_events_stats(struct hp_probe *p, struct hp_events_stats *out);

#endif
