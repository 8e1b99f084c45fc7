/* The allocation clock of the survival estimate (survival.h): ages are
 * counted in samples taken since, not in seconds (objects die as the
 * program allocates; a program stalled by its collector, or idle, has lost
 * nothing). Used by the GC callbacks (tick: plain stores) and the
 * profile's readers (at). test/unit/test_survival.c checks it. */
#ifndef HP_AGENT_ALLOCCLOCK_H
#define HP_AGENT_ALLOCCLOCK_H

#include <stdatomic.h>
#include <stdint.h>

/* The allocation clock: samples taken by a moment, from checkpoints
 * (CLOCK_REALTIME ns, samples so far) that the GC callbacks add at the
 * start and the end of each pause (one writer at a time: the world is
 * stopped; plain stores) and readers interpolate: between two, the
 * program allocated throughout. 2048: over a minute at 15 pauses a second. */
#define HP_CLOCK_POINTS 2048
struct hp_alloc_clock {
	_Atomic int64_t ns[HP_CLOCK_POINTS];
	_Atomic uint64_t samples[HP_CLOCK_POINTS];
	_Atomic uint64_t n;
};

void hp_alloc_clock_reset(struct hp_alloc_clock *c);
void hp_alloc_clock_tick(struct hp_alloc_clock *c, int64_t ns, uint64_t samples);
/* Samples taken by `ns`, interpolated between checkpoints and the reading
 * (now_ns, now_samples); before the oldest kept checkpoint, at the rate
 * between the oldest and now. */
double hp_alloc_clock_at(const struct hp_alloc_clock *c, int64_t ns, int64_t now_ns, uint64_t now_samples);

#endif
