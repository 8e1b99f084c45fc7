/* Generational Shenandoah's cycles, from its phase at each pause's end
 * (hp_marking's `phase`, ShenandoahHeap::_gc_state): shcycles.c says why
 * and how. One writer, the GC callback (plain loads and stores, atomics
 * for what other threads read). */
#ifndef HP_AGENT_SHCYCLES_H
#define HP_AGENT_SHCYCLES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define HP_SH_YOUNG_RING 64

struct hp_sh_cycles {
	int prev;                               /* phase at the last pause's end, -1 none seen */
	/* The young cycle under way: its cover (the pause count before its
	 * Init Mark: samples allocated at or before it are judged by it),
	 * past its Final Mark (its weak roots being cleared). */
	bool y_marking, y_final;
	uint32_t y_cover;
	/* Young cycles past their Final Mark (whose weak roots are being
	 * cleared, or done), and the cover of cycle k (from 1) at k %
	 * HP_SH_YOUNG_RING: written before y_done moves. */
	_Atomic uint64_t y_done;
	_Atomic uint32_t y_covers[HP_SH_YOUNG_RING];
	/* The whole-heap marking under way (a global cycle, or an old marking
	 * with its bootstrap young cycle): its cover and start, past its
	 * Final Mark. */
	bool w_marking, w_final;
	bool w_requested;                       /* a request's (its pauses named System.gc() while one was armed):
						   counted when the request returns, not here */
	uint32_t w_cover;
	int64_t w_start_ns;
	/* Its young window (hp_survival_alive_at_start): the pause count when
	 * its bootstrap cycle's weak roots were seen done (young cycles alone
	 * clear references from then on, the old marking running), and when
	 * its own Final Mark ended (the old dead are cleared after it). 0 not
	 * seen. */
	uint32_t w_from, w_before;
	/* Bumped when something other than a young cycle may begin to clear
	 * weak references (a whole-heap marking's Final Mark: odd until its
	 * weak roots are done) and by two for a pause that may have cleared
	 * any (a degenerated or full collection, a pause no rule explains).
	 * A sweep saw only young cycles' clearing if it read the same even
	 * value before and after. */
	_Atomic uint64_t w_events;
	/* Counts for status (GC callback writes, others read relaxed): whole-
	 * heap markings begun, done, of those the collector's own with a known
	 * cover (reported), abandoned; pauses no cycle explains. */
	uint64_t w_begun, w_done, w_counted, w_abandoned, irregular;
};

/* What a pause's end completed. */
enum hp_sh_event {
	HP_SH_NOTHING = 0,
	HP_SH_WHOLE_DONE = 1,   /* a whole-heap marking: its weak roots are done (struct hp_sh_whole) */
};

/* A whole-heap marking seen done: its cover, start (CLOCK_MONOTONIC) and
 * young window (w_from, w_before above; from >= before: none). */
struct hp_sh_whole {
	uint32_t cover, from, before;
	int64_t start_ns;
};

/* Starts from the phase now (hp_marking's, -1 if not read): a cycle
 * already under way is followed with its cover unknown (0: it judges no
 * sample), its clearing still closing the sweeps. */
void hp_sh_cycles_reset(struct hp_sh_cycles *s, int phase);

/* At each pause's end: `phase` hp_marking's (HP_PHASE_* bits, >= 0),
 * `requested` whether this pause belongs to a cycle the agent asked for,
 * `pauses_before` the pause count before this pause, `now` its end
 * (CLOCK_MONOTONIC). Returns HP_SH_WHOLE_DONE with the marking in *out
 * when the weak roots of one the collector began itself are seen done,
 * else HP_SH_NOTHING. */
enum hp_sh_event hp_sh_cycles_observe(struct hp_sh_cycles *s, int phase, bool requested, uint32_t pauses_before,
				      int64_t now, struct hp_sh_whole *out);

/* The young cycles past their Final Mark, and the cover of the latest (0
 * if none). Any thread. */
uint64_t hp_sh_young_done(const struct hp_sh_cycles *s, uint32_t *cover);

/* The cover of young cycle k (from 1): false if k is 0 or no longer
 * kept. */
bool hp_sh_young_cover(const struct hp_sh_cycles *s, uint64_t k, uint32_t *cover);

/* w_events now (any thread, acquire). */
uint64_t hp_sh_events(const struct hp_sh_cycles *s);

#endif
