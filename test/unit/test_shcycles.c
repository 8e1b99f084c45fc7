/* Generational Shenandoah's cycles from its phase at each pause's end
 * (agent/shcycles.h). The sequences are ShenandoahHeap::_gc_state as read
 * at every pause of LoadService on JDK 25.0.2 (symbols/jdk-25.txt, gcstate.*:
 * a young cycle 0x22 0x15 0x09 0x00; an old marking 0x62 at its bootstrap's
 * Init Mark, then the bootstrap's 0x57 0x4b 0x42, then its own Final Mark
 * 0x10), and the degenerated and full collections' endings read from the
 * collector's code (OLD_MARKING and WEAK_ROOTS off together). */
#include <criterion/criterion.h>

#include "agent/shcycles.h"
#include "heapprobe.h"

/* JDK 25's bits (gcstate.* in symbols/jdk-25.txt) to hp_marking's. */
static int phase_of(unsigned raw)
{
	static const struct { unsigned raw; int phase; } map[] = {
		{ 0x02, HP_PHASE_MARKING },  { 0x20, HP_PHASE_YOUNG_MARKING }, { 0x40, HP_PHASE_OLD_MARKING },
		{ 0x10, HP_PHASE_WEAK_ROOTS }, { 0x04, HP_PHASE_EVACUATION }, { 0x08, HP_PHASE_UPDATE_REFS },
		{ 0x01, HP_PHASE_FORWARDED },
	};
	int p = 0;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (raw & map[i].raw)
			p |= map[i].phase;
	return p;
}

struct run {
	struct hp_sh_cycles s;
	uint32_t pauses;
	int done;                       /* HP_SH_WHOLE_DONE returned */
	struct hp_sh_whole w;           /* ... the last */
};

static void start(struct run *r)
{
	hp_sh_cycles_reset(&r->s, 0);  /* the heap idle: from here on every change is seen */
	r->pauses = 1;
	r->done = 0;
}

/* One pause's end: the pause count before it is r->pauses, its end the
 * pause count times 1000. */
static void pause_(struct run *r, unsigned raw, bool requested)
{
	struct hp_sh_whole w = { 0 };
	if (hp_sh_cycles_observe(&r->s, phase_of(raw), requested, r->pauses, (int64_t)r->pauses * 1000, &w) ==
	    HP_SH_WHOLE_DONE) {
		r->done++;
		r->w = w;
	}
	r->pauses++;
}

static void pauses(struct run *r, const unsigned *raw, size_t n)
{
	for (size_t i = 0; i < n; i++)
		pause_(r, raw[i], false);
}

Test(shcycles, a_young_cycle_counts_from_its_final_mark_with_its_init_marks_cover)
{
	struct run r;
	start(&r);
	uint32_t cover;
	pause_(&r, 0x22, false);        /* Init Mark: pause #1, cover 1 */
	cr_assert_eq(hp_sh_young_done(&r.s, &cover), 0);
	pause_(&r, 0x15, false);        /* Final Mark: weak roots being cleared */
	cr_assert_eq(hp_sh_young_done(&r.s, &cover), 1);
	cr_assert_eq(cover, 1);
	pause_(&r, 0x09, false);        /* Init Update Refs */
	pause_(&r, 0x00, false);        /* Final Update Refs */
	cr_assert_eq(hp_sh_young_done(&r.s, &cover), 1);
	cr_assert_eq(hp_sh_events(&r.s), 0, "a young cycle is no whole-heap event");
	cr_assert_eq(r.s.irregular, 0);
	/* A second one with nothing to evacuate: Final Mark 0x10, then the
	 * next cycle's Init Mark. */
	const unsigned next[] = { 0x22, 0x10, 0x22, 0x15 };
	pauses(&r, next, 4);
	cr_assert_eq(hp_sh_young_done(&r.s, &cover), 3);
	cr_assert_eq(cover, 7, "the third cycle's Init Mark came after 7 pauses");
	uint32_t c2;
	cr_assert(hp_sh_young_cover(&r.s, 2, &c2));
	cr_assert_eq(c2, 5);
	cr_assert(!hp_sh_young_cover(&r.s, 4, &c2), "not yet");
	cr_assert_eq(hp_sh_events(&r.s), 0);
	cr_assert_eq(r.done, 0);
}

Test(shcycles, an_old_marking_is_counted_once_its_weak_roots_are_done_with_its_bootstraps_cover)
{
	struct run r;
	start(&r);
	const unsigned young[] = { 0x22, 0x15, 0x09, 0x00 };
	pauses(&r, young, 4);           /* pauses #1-#4 */
	int64_t init_mark_end = (int64_t)r.pauses * 1000;
	pause_(&r, 0x62, false);        /* the bootstrap's Init Mark (cover 5) */
	const unsigned bootstrap[] = { 0x57, 0x4b, 0x42 };
	pauses(&r, bootstrap, 3);
	uint32_t cover;
	cr_assert_eq(hp_sh_young_done(&r.s, &cover), 2, "the bootstrap is a young cycle too");
	cr_assert_eq(r.s.w_begun, 1);
	cr_assert_eq(hp_sh_events(&r.s), 0, "nothing old cleared yet");
	/* A young cycle preempts the old marking: OLD_MARKING stays on. */
	const unsigned during[] = { 0x62, 0x57, 0x4b, 0x42 };
	pauses(&r, during, 4);
	cr_assert_eq(r.s.w_begun, 1, "still the same marking");
	pause_(&r, 0x10, false);        /* the old marking's Final Mark */
	cr_assert_eq(hp_sh_events(&r.s) & 1, 1, "its weak roots may be clearing old references");
	cr_assert_eq(r.done, 0);
	pause_(&r, 0x22, false);        /* the next Init Mark: they are done */
	cr_assert_eq(r.done, 1);
	cr_assert_eq(r.w.cover, 5);
	cr_assert_eq(r.w.start_ns, init_mark_end);
	/* Its young window: from the pause after the bootstrap's weak roots
	 * (the bootstrap's Init Update Refs, pause #7: 8) to its own Final
	 * Mark (pause #13: 14). */
	cr_assert_eq(r.w.from, 8);
	cr_assert_eq(r.w.before, 14);
	cr_assert_eq(hp_sh_events(&r.s), 2);
	cr_assert_eq(r.s.w_done, 1);
}

Test(shcycles, a_global_cycle_that_takes_over_an_old_marking_keeps_the_earlier_cover)
{
	struct run r;
	start(&r);
	pause_(&r, 0x62, false);        /* bootstrap Init Mark, cover 1 */
	const unsigned rest[] = { 0x57, 0x4b, 0x42, 0x62 /* global Init Mark: OLD never off */, 0x15, 0x09, 0x00 };
	pauses(&r, rest, 7);
	/* The global's Final Mark turned OLD_MARKING off with evacuation
	 * under way (0x15): its weak roots, then Init Update Refs. */
	cr_assert_eq(r.done, 1);
	cr_assert_eq(r.w.cover, 1, "a lower bound: the old marking's");
	cr_assert_eq(r.w.from, 4);
	cr_assert_eq(r.w.before, 7, "the global cycle's Final Mark (pause #6)");
	cr_assert_eq(r.s.w_abandoned, 0);
	uint32_t cover;
	cr_assert_eq(hp_sh_young_done(&r.s, &cover), 1, "the bootstrap; a global cycle is no young cycle");
}

Test(shcycles, degenerated_and_full_collections_count_no_marking_and_close_the_sweeps)
{
	struct run r;
	start(&r);
	pause_(&r, 0x22, false);
	pause_(&r, 0x00, false);        /* degenerated in the pause: YOUNG off, no weak roots after */
	uint32_t cover;
	cr_assert_eq(hp_sh_young_done(&r.s, &cover), 0);
	cr_assert_eq(r.s.irregular, 1);
	cr_assert_eq(hp_sh_events(&r.s), 2);
	/* An old marking ended by a full collection: abandoned. */
	pause_(&r, 0x62, false);
	const unsigned boot[] = { 0x57, 0x4b, 0x42 };
	pauses(&r, boot, 3);
	pause_(&r, 0x00, false);        /* full GC: OLD off, WEAK_ROOTS off */
	pause_(&r, 0x22, false);
	pause_(&r, 0x15, false);
	pause_(&r, 0x09, false);
	cr_assert_eq(r.done, 0);
	cr_assert_eq(r.s.w_abandoned, 1);
	cr_assert_eq(hp_sh_events(&r.s), 4);
	/* A pause from idle that begins nothing. */
	pause_(&r, 0x00, false);
	pause_(&r, 0x00, false);
	cr_assert_eq(hp_sh_events(&r.s), 6, "Final Update Refs, then a pause no rule explains");
	cr_assert_eq(hp_sh_events(&r.s) & 1, 0);
}

Test(shcycles, a_requested_cycle_is_left_to_the_requester)
{
	struct run r;
	start(&r);
	pause_(&r, 0x62, true);         /* the global cycle a request started */
	pause_(&r, 0x10, true);
	pause_(&r, 0x22, false);
	cr_assert_eq(r.done, 0, "counted when the request returns, not twice");
	cr_assert_eq(r.s.w_done, 1);
	cr_assert_eq(hp_sh_events(&r.s), 2, "but its clearing still closes the sweeps");
	/* An own marking the request's cycle takes over is the request's. */
	pause_(&r, 0x15, false);
	pause_(&r, 0x00, false);
	pause_(&r, 0x62, false);
	pause_(&r, 0x57, false);
	pause_(&r, 0x62, true);         /* the request's global Init Mark: OLD_MARKING never off */
	pause_(&r, 0x10, true);
	pause_(&r, 0x22, false);
	cr_assert_eq(r.done, 0);
	/* The cause first read as the request's at its Final Mark only. */
	pause_(&r, 0x15, false);
	pause_(&r, 0x00, false);
	pause_(&r, 0x62, false);
	pause_(&r, 0x10, true);
	pause_(&r, 0x22, false);
	cr_assert_eq(r.done, 0);
	cr_assert_eq(r.s.w_counted, 0);
	cr_assert_eq(r.s.w_done, 3);
}

Test(shcycles, a_cycle_under_way_when_counting_begins_is_not_counted)
{
	struct hp_sh_cycles s;
	/* Attached during an old marking, the bootstrap's weak roots being
	 * cleared: what they clear may be old. */
	hp_sh_cycles_reset(&s, phase_of(0x57));
	cr_assert_eq(hp_sh_events(&s), 2);
	uint32_t cover;
	struct hp_sh_whole w;
	cr_assert_eq(hp_sh_cycles_observe(&s, phase_of(0x4b), false, 1, 1, &w), HP_SH_NOTHING);
	cr_assert_eq(hp_sh_cycles_observe(&s, phase_of(0x10), false, 2, 2, &w), HP_SH_NOTHING);
	cr_assert_eq(hp_sh_events(&s), 3, "the old marking's weak roots: odd");
	cr_assert_eq(hp_sh_cycles_observe(&s, phase_of(0x22), false, 3, 3, &w), HP_SH_NOTHING,
		     "its cover is not known: not counted");
	cr_assert_eq(hp_sh_events(&s), 4);
	/* Attached during a young cycle's marking: at its Final Mark it judges
	 * nothing (cover 0). */
	hp_sh_cycles_reset(&s, phase_of(0x22));
	hp_sh_cycles_observe(&s, phase_of(0x15), false, 1, 1, &w);
	cr_assert_eq(hp_sh_young_done(&s, &cover), 1);
	cr_assert_eq(cover, 0);
	/* Not read when counting began: the first pause is the baseline. */
	hp_sh_cycles_reset(&s, -1);
	/* Attached during an old marking's Final Mark: its cover unknown. */
	cr_assert_eq(hp_sh_cycles_observe(&s, phase_of(0x10), false, 0, 1, &w), HP_SH_NOTHING);
	cr_assert_eq(hp_sh_events(&s), 2, "what it clears may be old");
	cr_assert_eq(s.irregular, 0, "not a pause no cycle explains");
	cr_assert_eq(hp_sh_cycles_observe(&s, phase_of(0x22), false, 1, 2, &w), HP_SH_NOTHING);
	cr_assert_eq(hp_sh_young_done(&s, &cover), 0);
	cr_assert_eq(hp_sh_cycles_observe(&s, -1, false, 2, 3, &w), HP_SH_NOTHING, "phase not read");
}
