/* Generational Shenandoah's cycles (shcycles.h).
 *
 * Why. Generational Shenandoah (JDK 25+, -XX:ShenandoahGCMode=generational)
 * runs young cycles several times a second under load (LoadService: 80 in
 * 18 s), and now and then an old marking or a global cycle. Its perfdata
 * counts pauses and phases, not cycles, and a young cycle clears a dead
 * young canary, so nothing said which cycle a pause belonged to: only the
 * markings the agent asked for judged samples, and drops (a list let go at
 * once) were not looked for (cohort.c: a sweep could not tell a young
 * cycle's deaths from a whole-heap marking's, and found drops where there
 * were none, docs/load-grow-drops.md).
 *
 * What is seen. ShenandoahHeap::_gc_state (hp_marking's `phase`), read at
 * the end of each pause (JVMTI GarbageCollectionFinish: every Shenandoah
 * pause holds an SvcGCMarker). The collector sets its bits in the pauses
 * (shenandoahConcurrentGC.cpp, shenandoahOldGC.cpp; read at every pause of
 * LoadService on 25.0.2):
 *  - a young cycle: Init Mark turns YOUNG_MARKING (and MARKING) on; Final
 *    Mark turns it off and WEAK_ROOTS on; WEAK_ROOTS goes off once the
 *    concurrent weak-root phase has cleared the references of the young
 *    objects found dead (is_in_active_generation), before the next pause
 *    (Init Update Refs, Final Update Refs, or the next cycle's Init Mark
 *    for a cycle with nothing to evacuate): 0x22, 0x15, 0x09, 0x00.
 *  - an old marking: its bootstrap young cycle's Init Mark turns
 *    OLD_MARKING on too (ShenandoahYoungGeneration::
 *    set_concurrent_mark_in_progress with the old mark queues set: 0x62);
 *    young cycles may run during it, OLD_MARKING staying on; its own Final
 *    Mark turns OLD_MARKING and MARKING off and WEAK_ROOTS on (0x10), and
 *    its weak roots clear the old objects found dead. Bootstrap and old
 *    marking together judge the whole heap as it was at that Init Mark
 *    (SATB from there: promoted objects land above the old regions' TAMS).
 *  - a global cycle: Init Mark turns both on (cancelling an old marking
 *    under way and starting over in the same pause: OLD_MARKING is never
 *    seen off between, so the earlier cover is kept, a lower bound),
 *    Final Mark both off and WEAK_ROOTS on.
 *  - OLD_MARKING goes off otherwise only in a degenerated or full
 *    collection's pause (ShenandoahHeap::cancel_concurrent_mark,
 *    ShenandoahGenerationalFullGC::prepare; their callers, read in 25's
 *    code), which leave WEAK_ROOTS off: abandoned, not counted.
 *
 * What is counted. A young cycle, at its Final Mark (its weak roots are
 * cleared from then on, concurrently: a sweep after that pause may see
 * them; counted at their end, a sweep in between found the young deaths
 * before any window opened, and none was ever looked at), with its cover:
 * what it judges is the samples allocated before its Init Mark that were
 * young then (those allocated since the cycle before began certainly
 * were: mutators allocate young). A whole-heap marking, likewise,
 * judging every sample allocated before its cover (HP_SH_WHOLE_DONE: the
 * caller counts it as a marking). And w_events, for sweeps that must know
 * they saw young cycles' clearing alone (cohort.c).
 *
 * What it cannot tell. A full collection that ends a young cycle past its
 * Final Mark (an allocation failure during evacuation, degenerated then
 * upgraded) leaves the same bits as that cycle's next pause: it is taken
 * for the young cycle's end, and the old deaths it cleared for young ones
 * (none in the load bench's logs). A pause from idle that begins nothing
 * (a degenerated or full collection) bumps w_events by two. */
#include "agent/shcycles.h"

#include "heapprobe.h"

/* The status counts: one writer, readers anywhere (relaxed). */
static void inc(uint64_t *c)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

void hp_sh_cycles_reset(struct hp_sh_cycles *s, int phase)
{
	s->prev = phase;
	s->y_marking = s->y_final = false;
	s->y_cover = 0;
	atomic_store(&s->y_done, 0);
	for (int i = 0; i < HP_SH_YOUNG_RING; i++)
		atomic_store_explicit(&s->y_covers[i], 0, memory_order_relaxed);
	s->w_marking = s->w_final = s->w_requested = false;
	s->w_cover = s->w_from = s->w_before = 0;
	s->w_start_ns = 0;
	atomic_store(&s->w_events, 0);
	__atomic_store_n(&s->w_begun, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->w_done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->w_counted, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->w_abandoned, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->irregular, 0, __ATOMIC_RELAXED);
	if (phase < 0)
		return;
	/* A cycle under way: followed, its cover unknown (w_start_ns 0: not
	 * reported; a young one's is 0, which judges no sample), and some
	 * cycle's weak roots, which we did not see begin, may be clearing. */
	s->y_marking = phase & HP_PHASE_YOUNG_MARKING;
	s->w_marking = phase & HP_PHASE_OLD_MARKING;
	if (phase & HP_PHASE_WEAK_ROOTS)
		atomic_store(&s->w_events, 2);
}

#define CYCLE_BITS (HP_PHASE_MARKING | HP_PHASE_YOUNG_MARKING | HP_PHASE_OLD_MARKING | HP_PHASE_WEAK_ROOTS | \
		    HP_PHASE_EVACUATION | HP_PHASE_UPDATE_REFS)

static void bump(struct hp_sh_cycles *s, uint64_t by)
{
	atomic_fetch_add_explicit(&s->w_events, by, memory_order_release);
}

enum hp_sh_event hp_sh_cycles_observe(struct hp_sh_cycles *s, int phase, bool requested, uint32_t pauses_before,
				      int64_t now, struct hp_sh_whole *out)
{
	enum hp_sh_event ev = HP_SH_NOTHING;
	int p = s->prev;
	s->prev = phase;
	if (phase < 0)
		return ev;
	if (p < 0) {
		/* The first pause seen, the phase not read when counting began
		 * (the probe is set up at the first collection): a cycle under
		 * way began unseen, its cover not known, and its clearing may
		 * still come. Followed as hp_sh_cycles_reset does. */
		s->y_marking = phase & HP_PHASE_YOUNG_MARKING;
		s->w_marking = phase & HP_PHASE_OLD_MARKING;
		if (phase & CYCLE_BITS)
			bump(s, 2);
		return ev;
	}
	bool fired = false;
	/* Ends first: a cycle whose weak roots were being cleared at the last
	 * pause and are done by this one (this may be the next Init Mark). */
	if (s->y_final && !(phase & HP_PHASE_WEAK_ROOTS)) {
		s->y_final = false;
		if (s->w_marking && !s->w_from)
			s->w_from = pauses_before + 1;  /* the bootstrap's: the young dead at its start are gone */
		fired = true;
	}
	if (s->w_final && !(phase & HP_PHASE_WEAK_ROOTS)) {
		s->w_final = false;
		inc(&s->w_done);
		bump(s, 1);             /* even again */
		if (!s->w_requested && s->w_start_ns) {        /* not one under way when counting began */
			inc(&s->w_counted);
			out->cover = s->w_cover;
			out->start_ns = s->w_start_ns;
			out->from = s->w_from ? s->w_from : s->w_before;
			out->before = s->w_before;
			ev = HP_SH_WHOLE_DONE;
		}
		fired = true;
	}
	/* Final Marks, or cycles abandoned. A whole-heap marking's Final Mark
	 * turns OLD_MARKING off; a global cycle's turns YOUNG_MARKING off in
	 * the same pause: not a young cycle (its clearing is every age's). */
	bool whole_final = s->w_marking && !(phase & HP_PHASE_OLD_MARKING) && (phase & HP_PHASE_WEAK_ROOTS) &&
			   !(phase & HP_PHASE_MARKING);
	if (s->y_marking && !(phase & HP_PHASE_YOUNG_MARKING)) {
		s->y_marking = false;
		if (whole_final) {
			/* a global cycle's Final Mark: below */
		} else if (phase & HP_PHASE_WEAK_ROOTS) {
			/* Its weak roots are cleared from here on, concurrently,
			 * before the next pause: a sweep that begins now may see
			 * them, so the cycle counts from this pause on. */
			uint64_t k = atomic_load_explicit(&s->y_done, memory_order_relaxed) + 1;
			atomic_store_explicit(&s->y_covers[k % HP_SH_YOUNG_RING], s->y_cover, memory_order_relaxed);
			atomic_store_explicit(&s->y_done, k, memory_order_release);
			s->y_final = true;
		} else {
			inc(&s->irregular);     /* degenerated or full: anything may be cleared */
			bump(s, 2);
		}
		fired = true;
	}
	if (s->w_marking && !(phase & HP_PHASE_OLD_MARKING)) {
		s->w_marking = false;
		if (whole_final) {
			s->w_final = true;
			s->w_before = pauses_before + 1;
			bump(s, 1);     /* odd: its weak roots may be clearing old references */
		} else {
			inc(&s->w_abandoned);
			bump(s, 2);
		}
		fired = true;
	}
	/* Beginnings: the cover is the pause count before this Init Mark. */
	if ((phase & HP_PHASE_YOUNG_MARKING) && !(p & HP_PHASE_YOUNG_MARKING)) {
		s->y_marking = true;
		s->y_cover = pauses_before;
		fired = true;
	}
	if ((phase & HP_PHASE_OLD_MARKING) && !(p & HP_PHASE_OLD_MARKING)) {
		s->w_marking = true;
		s->w_final = false;
		s->w_requested = false;
		s->w_cover = pauses_before;
		s->w_start_ns = now;
		s->w_from = s->w_before = 0;
		inc(&s->w_begun);
		fired = true;
	}
	/* A request's global cycle (one under way when it began is cancelled
	 * and started over in its Init Mark: the same marking from then),
	 * seen at any of its pauses up to the end of its weak roots. */
	if (requested && (s->w_marking || s->w_final))
		s->w_requested = true;
	/* A pause from idle that began nothing: a degenerated or full
	 * collection (a Final Update Refs pause comes with UPDATE_REFS on
	 * before it). */
	if (!fired && !(p & CYCLE_BITS)) {
		inc(&s->irregular);
		bump(s, 2);
	}
	return ev;
}

uint64_t hp_sh_young_done(const struct hp_sh_cycles *s, uint32_t *cover)
{
	uint64_t k = atomic_load_explicit(&s->y_done, memory_order_acquire);
	*cover = k ? atomic_load_explicit(&s->y_covers[k % HP_SH_YOUNG_RING], memory_order_relaxed) : 0;
	return k;
}

bool hp_sh_young_cover(const struct hp_sh_cycles *s, uint64_t k, uint32_t *cover)
{
	uint64_t now = atomic_load_explicit(&s->y_done, memory_order_acquire);
	if (k == 0 || k > now || now - k >= HP_SH_YOUNG_RING - 1)
		return false;
	*cover = atomic_load_explicit(&s->y_covers[k % HP_SH_YOUNG_RING], memory_order_relaxed);
	return true;
}

uint64_t hp_sh_events(const struct hp_sh_cycles *s)
{
	return atomic_load_explicit(&s->w_events, memory_order_acquire);
}
