/* Markings: counting the collector's whole-heap markings and asking for
 * one (hp_marking, hp_request_marking in heapprobe.h; see marking.c). */
#ifndef HP_MARKING_H
#define HP_MARKING_H

#include <stdbool.h>
#include <stdint.h>

#include "heapprobe.h"

struct hp_probe;

/* Finds the counters (the heap must exist; not from a GC callback). Safe to
 * call again: it retries what was not found yet (perfdata opens late). */
void hp_marking_locate(struct hp_probe *p);
void hp_marking_free(struct hp_probe *p);
/* Where hp_marking's `starts` is read (as its starts_source), or why it is
 * not ("none: ..."); "" where nothing was looked for, NULL before set-up. */
const char *hp_marking_starts_source(struct hp_probe *p);

/* The live bytes the last marking found, where the collector keeps them
 * and symbols/ data says where (ZGC single-generation: ZStatHeap /
 * XStatHeap::_at_mark_end.live; generational: the old generation's, zstat.h).
 * Plain loads. 0, or -ENODATA (none known,
 * or no cycle yet). */
int hp_marking_live(struct hp_probe *p, uint64_t *out);
/* Generational ZGC: the young generation's live bytes at its last mark
 * end (several a second under load); -ENODATA elsewhere. Plain loads. */
int hp_marking_young_live(struct hp_probe *p, uint64_t *out);
/* The heap's live bytes by its markings: hp_marking_live, plus on
 * generational ZGC the young generation's (hp_marking_young_live; the old
 * one's alone read 10-53 MiB for ~195 MiB live under load, where the young
 * objects are most of the live set: docs/heap-under-load.md). The two are
 * of different moments (the last major marking, the last young one). */
int hp_marking_heap_live(struct hp_probe *p, uint64_t *out);

/* hp_marking's `phase` (HP_PHASE_* bits) as the collector's names joined
 * by '|' ("MARKING|YOUNG_MARKING"), "idle" for none: for info. */
void hp_marking_phase_text(int phase, char *buf, size_t len);

/* Reports a marking completed since the last call, if any, to the
 * marking callback (hp_set_marking_callback): from the GC-finish event
 * (plain loads and one CAS: GC-callback safe) with the collections count,
 * and after a request (`requested`: one no counter may show; gc_count 0:
 * the count the last GC event passed). */
void hp_marking_observe(struct hp_probe *p, uint64_t gc_count, bool requested);

#endif
