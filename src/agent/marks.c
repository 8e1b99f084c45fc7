/* Markings and the samples they verified (see marks.h).
 *
 * Why a cover, and how it is found. A marking verifies the objects that
 * existed when it began: G1 treats what is allocated after its concurrent
 * start pause as live (above TAMS), ZGC and Shenandoah likewise for what is
 * allocated during the cycle. So a marking covers the samples allocated
 * before its first pause, and the pause count a sample records tells which:
 *  - a full collection is one pause: it covers every sample allocated
 *    before that pause (pause_at_alloc <= the count before it);
 *  - a concurrent cycle the counters show complete (G1) covers the samples
 *    allocated before its concurrent start pause, which the count of cycles
 *    begun names (G1CollectedHeap::_old_marking_cycles_started,
 *    g1_start_pause); without that count it began after the previous
 *    marking ended, so it covers at least the samples allocated before that
 *    end (a lower bound, raised where the canaries find more);
 *  - a cycle we requested began after our request: it covers the samples
 *    allocated before the request.
 * Bounds err on the side of "recent, not yet verified", never the other.
 */
#include "agent/marks.h"
#include "vmstructs/clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CLOCK_MONOTONIC ns: request timing and marking start times. */
static uint32_t ring_latest(const struct hp_mark_ring *r, bool *have)
{
	uint64_t n = atomic_load_explicit(&r->n, memory_order_acquire);
	*have = n > 0;
	return n ? atomic_load_explicit(&r->cover[(n - 1) % HP_MARKS_RING], memory_order_relaxed) : 0;
}

/* One writer per ring (see marks.h). Covers never decrease: a later
 * marking began after an earlier one ended, so it covers all it did. */
void hp_marks_ring_push(struct hp_mark_ring *r, uint32_t cover, int64_t start_ns, uint32_t done)
{
	bool have;
	uint32_t last = ring_latest(r, &have);
	if (have && last > cover)
		cover = last;
	uint64_t n = atomic_load_explicit(&r->n, memory_order_relaxed);
	atomic_store_explicit(&r->cover[n % HP_MARKS_RING], cover, memory_order_relaxed);
	atomic_store_explicit(&r->start_ns[n % HP_MARKS_RING], start_ns, memory_order_relaxed);
	atomic_store_explicit(&r->done[n % HP_MARKS_RING], done, memory_order_relaxed);
	atomic_store_explicit(&r->n, n + 1, memory_order_release);
}

/* n, never past the pushes made (`now`: their count, read once). */
static uint64_t ring_upto(const struct hp_mark_ring *r, uint64_t n, uint64_t *now)
{
	*now = atomic_load_explicit(&r->n, memory_order_acquire);
	return n < *now ? n : *now;
}

/* Entries with cover >= x among the first n pushed (binary search over
 * the non-decreasing ring). Entries a push made after n overwrote (the
 * oldest, once the ring is full) are left out. */
static unsigned ring_count_ge_upto(const struct hp_mark_ring *r, uint32_t x, uint64_t n)
{
	uint64_t now;
	n = ring_upto(r, n, &now);
	uint64_t lo = now > HP_MARKS_RING ? now - HP_MARKS_RING : 0, hi = n;
	if (lo > hi)
		return 0;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (atomic_load_explicit(&r->cover[mid % HP_MARKS_RING], memory_order_relaxed) >= x)
			hi = mid;
		else
			lo = mid + 1;
	}
	return (unsigned)(n - lo);
}

static void ring_clear(struct hp_mark_ring *r)
{
	for (int i = 0; i < HP_MARKS_RING; i++) {
		atomic_store(&r->cover[i], 0);
		atomic_store(&r->start_ns[i], 0);
		atomic_store(&r->done[i], 0);
	}
	atomic_store(&r->n, 0);
}

/* The last marking seen to end: its pause count and when. */
static void completed(struct hp_marks *m, uint32_t pause, int64_t ns)
{
	__atomic_store_n(&m->last_completion, pause, __ATOMIC_RELAXED);
	__atomic_store_n(&m->last_completion_ns, ns, __ATOMIC_RELAXED);
}

void hp_marks_reset(struct hp_marks *m, struct hp_probe *probe, uint32_t pauses_now)
{
	ring_clear(&m->seen);
	ring_clear(&m->requested);
	m->primed = false;
	m->guard_primed = false;        /* counters_off stays: a counter gone wrong stays so */
	struct hp_marking mk = { .sz = sizeof(mk) };
	int rc = hp_marking(probe, &mk);
	hp_sh_cycles_reset(&m->sh, rc == 0 ? mk.phase : -1);
	if (rc == 0) {
		m->count_seen = mk.full + mk.concurrent;
		m->full_seen = mk.full;
		m->starts_seen = mk.starts;
		m->marked_seen = mk.marked;
		m->primed = true;
	}
	atomic_store(&m->start_ns, 0);
	atomic_store(&m->start_cover, 0);
	atomic_store(&m->remark_pause, 0);
	m->g1_win_cover = m->g1_win_from = m->g1_win_done = 0;
	m->g1_start_pause = m->g1_done_pause = 0;
	m->g1_start_ns = m->g1_done_ns = 0;
	atomic_store(&m->g1_exact, 0);
	atomic_store(&m->sh_window, 0);
	m->young_first = m->young_seen = hp_gc_count(probe);
	atomic_store(&m->z_pending, false);
	atomic_store(&m->z_dead_newest, 0);
	atomic_store(&m->z_back, HP_Z_PROMOTED_AFTER);
	m->z_young_begin = 0;
	m->z_begin_requested = false;
	m->z_nage = 0;
	m->z_p0_set = false;
	m->z_end_run = 0;
	atomic_store(&m->z_end, 0);
	m->z_end_step = 0;
	m->z_ended = 0;
	atomic_store(&m->z_requesting, false);
	m->canary_markings = 0;
	completed(m, pauses_now, hp_mono_ns());
	m->last_full_pause = 0;
	m->requests = m->requests_ok = m->requests_timed_out = 0;
	m->last_ns = m->last_end_ns = 0;        /* stuck stays: its helper may still be in the call */
	m->request_ns_total = m->request_ns_max = 0;
	m->request_live = 0;
	m->request_live_source = NULL;
	m->own_waits = m->own_waits_ok = m->own_wait_ns_total = 0;
	snprintf(m->last_request, sizeof(m->last_request), "none yet");
}

void hp_marks_observe(struct hp_marks *m, uint64_t full, uint64_t concurrent, uint32_t pauses_before)
{
	uint64_t counted = full + concurrent;
	if (!m->primed) {
		/* The counters came up after the profiler started (perfdata opens
		 * late on JDK 11): start from here rather than see a jump. */
		m->count_seen = counted;
		m->full_seen = full;
		m->primed = true;
		return;
	}
	if (counted <= m->count_seen)
		return;
	bool was_full = full != m->full_seen;
	int64_t now = hp_mono_ns();
	uint32_t last = __atomic_load_n(&m->last_completion, __ATOMIC_RELAXED);
	uint32_t cover = was_full ? pauses_before : last;
	/* A concurrent cycle began after the pause following its cover: the
	 * end of that pause is the earliest it can have begun. */
	int64_t start = was_full ? now : atomic_load_explicit(&m->pause_end_ns[(cover + 1) % HP_PAUSE_RING],
							      memory_order_relaxed);
	int64_t floor_ns = __atomic_load_n(&m->last_completion_ns, __ATOMIC_RELAXED);
	/* G1 with its count of cycles begun: the concurrent start pause seen
	 * since the callback last saw a marking end is this cycle's (cycles do
	 * not overlap; an undo cycle's start is followed by this one's), if
	 * the counter moved by this one cycle (not a first reading of
	 * perfdata opened late) and the start came in an earlier pause. */
	bool exact = !was_full && counted == m->count_seen + 1 && m->g1_start_pause > m->g1_done_pause &&
		     m->g1_start_pause <= pauses_before && m->g1_start_ns >= m->g1_done_ns && m->g1_start_ns <= now;
	if (exact) {
		cover = m->g1_start_pause - 1;
		start = floor_ns = m->g1_start_ns;
		atomic_store_explicit(&m->g1_exact, (uint64_t)(pauses_before + 1) << 32 | cover, memory_order_release);
		m->canary_markings++;    /* shown beside canary_state */
	}
	m->g1_done_pause = pauses_before + 1;
	m->g1_done_ns = now;
	hp_marks_ring_push(&m->seen, cover, start > floor_ns && start <= now ? start : floor_ns, pauses_before + 1);
	m->count_seen = counted;
	m->full_seen = full;
	if (was_full)
		m->last_full_pause = pauses_before + 1;
	completed(m, pauses_before + 1, now);
}

/* Generational ZGC (marks.h): a major began at this pause (young: the
 * collections so far, this one's included); the one before it has ended. */
/* Generational ZGC: the pending major, if no one took it yet, counted
 * complete at this pause. */
static bool z_push_pending(struct hp_marks *m, uint32_t pauses_before)
{
	if (!atomic_exchange(&m->z_pending, false))
		return false;
	hp_marks_ring_push(&m->seen, m->z_cover, atomic_load(&m->z_start_ns), pauses_before + 1);
	m->canary_markings++;    /* shown beside canary_state */
	return true;
}

/* The age learnt from the major that began at young collection `began`:
 * its newest death's collection c (the latest whose first pause had not
 * ended, or had just, when it was born: young_start[c] <= its
 * pause_at_alloc), `began` - c + 1; 0 if not known (marks.h). */
static uint32_t z_age_of(const struct hp_marks *m, uint64_t began, uint32_t dead_newest, uint64_t young)
{
	if (!dead_newest || !began || began <= m->young_first + 1 || began > young)
		return 0;
	uint32_t born = dead_newest - 1;
	/* The ring's entries still kept: those after young - HP_YOUNG_RING. */
	uint64_t lo = m->young_first + 1;
	if (young >= HP_YOUNG_RING && young - (HP_YOUNG_RING - 1) > lo)
		lo = young - (HP_YOUNG_RING - 1);
	for (uint64_t c = began; c >= lo; c--)
		if (m->young_start[c % HP_YOUNG_RING] <= born)
			return (uint32_t)(began - c + 1);
	return 0;       /* older than the ring: nothing learnt */
}

/* Learns from the major before (marks.h, z_back) and takes this one's
 * cover. */
static void z_learn(struct hp_marks *m, uint64_t young)
{
	uint32_t dead_newest = atomic_exchange(&m->z_dead_newest, 0);
	/* Not from a major we asked for: its young collection promotes all
	 * (marking.c), and its clearing would show every age promoted. */
	uint32_t age = m->z_begin_requested ? 0 : z_age_of(m, m->z_young_begin, dead_newest, young);
	m->z_young_begin = young;
	m->z_begin_requested = atomic_load(&m->z_requesting);
	if (!age)
		return;
	m->z_age[m->z_nage % HP_Z_AGES] = age;
	m->z_nage++;
	if (m->z_nage < 2)
		return;         /* one major may have been swept late */
	uint32_t back = HP_Z_BACK_MIN;
	for (uint32_t i = 0; i < HP_Z_AGES && i < m->z_nage; i++)
		if (m->z_age[i] > back)
			back = m->z_age[i];
	atomic_store(&m->z_back, back < HP_Z_PROMOTED_AFTER ? back : HP_Z_PROMOTED_AFTER);
}

static void z_major_began(struct hp_marks *m, uint64_t young, int64_t now, uint32_t pauses_before)
{
	z_push_pending(m, pauses_before);
	z_learn(m, young);
	/* Its cover: the collection z_back back, if this callback saw that
	 * one begin (after the reset, and still in the ring). */
	uint32_t z_back = atomic_load(&m->z_back);
	if (young <= m->young_first + z_back)
		return;
	uint64_t back = young - z_back;
	m->z_cover = m->young_start[back % HP_YOUNG_RING];
	atomic_store(&m->z_start_ns, now);
	atomic_store(&m->z_pending, true);
}

void hp_marks_on_gc(struct hp_marks *m, struct hp_probe *probe, uint32_t pauses_before)
{
	int64_t now = hp_mono_ns();
	atomic_store_explicit(&m->pause_end_ns[(pauses_before + 1) % HP_PAUSE_RING], now, memory_order_relaxed);
	struct hp_marking mk = { .sz = sizeof(mk) };
	if (hp_marking(probe, &mk) != 0)
		return;
	hp_marks_on_reading(m, &mk, hp_gc_count(probe), now, pauses_before);
}

/* Generational Shenandoah (shcycles.c): its phase is no count (nothing
 * for the guard); a whole-heap marking the collector began itself is
 * counted when its weak roots are seen done. Ours (a request is armed and
 * the collector's cause names it) is the requester's to count. Where the
 * cause cannot be read (-XX:-UsePerfData) no whole-heap marking is counted
 * from here: a request can return before its cycle's Init Mark then, and
 * the cycle would be counted twice, by the requester and here. */
static void observe_sh(struct hp_marks *m, const struct hp_marking *mk, uint32_t pauses_before, int64_t now)
{
	struct hp_sh_whole w = { 0 };
	bool ours = atomic_load_explicit(&m->explicit_armed, memory_order_relaxed) && mk->explicit_cycle == 1;
	if (hp_sh_cycles_observe(&m->sh, mk->phase, ours, pauses_before, now, &w) != HP_SH_WHOLE_DONE ||
	    !__atomic_load_n(&m->sh_on, __ATOMIC_ACQUIRE) || mk->explicit_cycle < 0 || w.cover == 0 ||
	    w.cover > pauses_before)
		return;
	/* Its young window first, then the marking (a reader that sees the
	 * marking finds the window; hp_marks_young_window): cover, from -
	 * cover, before - cover in one word; an empty window (from at before)
	 * where from is not inside (cover, before); none past 16 bits. */
	uint32_t from = w.from > w.cover && w.from < w.before ? w.from : w.before;
	uint64_t x = w.before > w.cover && w.before - w.cover <= 0xffff
			     ? (uint64_t)w.cover | (uint64_t)(from - w.cover) << 32 | (uint64_t)(w.before - w.cover) << 48
			     : 0;
	atomic_store_explicit(&m->sh_window, x, memory_order_release);
	hp_marks_ring_push(&m->seen, w.cover, w.start_ns, pauses_before + 1);
	atomic_fetch_add(&m->canary_markings, 1);
	completed(m, pauses_before + 1, now);
}

void hp_marks_on_reading(struct hp_marks *m, const struct hp_marking *mk, uint64_t young, int64_t now,
			 uint32_t pauses_before)
{
	if (mk->phase >= 0)
		observe_sh(m, mk, pauses_before, now);
	const uint64_t readings[HP_COUNTERS] = { mk->full, mk->concurrent, mk->starts, mk->marked };
	if (!hp_marks_guard(m, readings, mk->read, young, pauses_before)) {
		/* Counted from nothing but requests now: the requested cycle's
		 * start still comes from the collector's cause (a string), and
		 * G1's Remark from its perfdata count unless that count is the
		 * one that failed (the young window of a requested cycle,
		 * hp_marks_young_window, opens there). */
		hp_marks_observe_explicit(m, mk->explicit_cycle, now, pauses_before);
		int failed = atomic_load_explicit(&m->counters_off, memory_order_relaxed) - 1;
		if (failed != HP_COUNTER_CONCURRENT && failed != HP_COUNTER_MARKED)
			hp_marks_observe_marked(m, mk->marked, pauses_before);
		return;
	}
	if (__atomic_load_n(&m->g1_count_starts, __ATOMIC_ACQUIRE))
		hp_marks_observe_g1_start(m, mk->starts, mk->full, now, pauses_before);
	else {
		uint64_t starts_was = m->starts_seen;
		hp_marks_observe_starts(m, mk->starts, young, now, pauses_before);
		hp_marks_observe_z_end(m, young, m->starts_seen != starts_was, pauses_before);
	}
	hp_marks_observe_explicit(m, mk->explicit_cycle, now, pauses_before);
	hp_marks_observe_marked(m, mk->marked, pauses_before);
	hp_marks_observe(m, mk->full, mk->concurrent, pauses_before);
}

static const char *const counter_names[HP_COUNTERS] = {
	[HP_COUNTER_FULL] = "full collections",
	[HP_COUNTER_CONCURRENT] = "concurrent cycles",
	[HP_COUNTER_STARTS] = "markings begun",
	[HP_COUNTER_MARKED] = "cycles marked (Remark)",
};

/* Which hp_marking `read` bit says counter c is read. */
static const unsigned counter_read_bit[HP_COUNTERS] = {
	[HP_COUNTER_FULL] = HP_MARKING_READ_FULL,
	[HP_COUNTER_CONCURRENT] = HP_MARKING_READ_CONCURRENT,
	[HP_COUNTER_STARTS] = HP_MARKING_READ_STARTS,
	[HP_COUNTER_MARKED] = HP_MARKING_READ_CONCURRENT,
};

bool hp_marks_guard(struct hp_marks *m, const uint64_t now[HP_COUNTERS], unsigned read, uint64_t young,
		    uint32_t pauses_before)
{
	if (atomic_load_explicit(&m->counters_off, memory_order_relaxed))
		return false;
	/* Full collections without a GC event (a heap inspection or dump:
	 * jmap -histo:live, GC.class_histogram, GC.heap_dump) still count in
	 * the collections (_total_collections), and in G1's cycles begun. */
	uint64_t unseen = young > m->guard_young ? young - m->guard_young : 0;
	for (int c = 0; m->guard_primed && c < HP_COUNTERS; c++) {
		uint64_t was = m->guard_prev[c], is = now[c];
		uint64_t most = HP_COUNTER_STEP_MAX + (c == HP_COUNTER_FULL || c == HP_COUNTER_STARTS ? unseen : 0);
		bool back = is < was;
		/* Not read at the last reading, read now: found since. */
		bool found = (read & counter_read_bit[c]) && !(m->guard_read & counter_read_bit[c]);
		bool jump = !back && is - was > most && !found;
		if (back || jump) {
			m->off_back = back;
			m->off_from = was;
			m->off_to = is;
			m->off_pause = pauses_before + 1;
			atomic_store_explicit(&m->counters_off, c + 1, memory_order_release);
			return false;
		}
	}
	memcpy(m->guard_prev, now, sizeof(m->guard_prev));
	m->guard_young = young;
	m->guard_read = read;
	m->guard_primed = true;
	return true;
}

bool hp_marks_counters_off(const struct hp_marks *m)
{
	return atomic_load_explicit(&m->counters_off, memory_order_acquire) != 0;
}

void hp_marks_counters_text(const struct hp_marks *m, char *buf, size_t len)
{
	int c = atomic_load_explicit(&m->counters_off, memory_order_acquire) - 1;
	if (c < 0 || c >= HP_COUNTERS) {
		snprintf(buf, len, "none refused (those read are checked at each collection: never back, at most %d "
			 "more than the collections counted)", HP_COUNTER_STEP_MAX);
		return;
	}
	if (m->off_back)
		snprintf(buf, len, "off: the collector's count of %s went back from %llu to %llu at GC pause #%u; "
			 "only requested markings count since", counter_names[c], (unsigned long long)m->off_from,
			 (unsigned long long)m->off_to, m->off_pause);
	else
		snprintf(buf, len, "off: the collector's count of %s rose by %llu (%llu to %llu) in GC pause #%u, "
			 "more than the collections since can hold (%d more); only requested markings count since",
			 counter_names[c], (unsigned long long)(m->off_to - m->off_from),
			 (unsigned long long)m->off_from, (unsigned long long)m->off_to, m->off_pause,
			 HP_COUNTER_STEP_MAX);
}

bool hp_marks_own_uncounted(const struct hp_marks *m)
{
	return m->own_uncounted || (hp_marks_counters_off(m) && !(m->canary_on && !m->g1_mode));
}

void hp_marks_observe_g1_start(struct hp_marks *m, uint64_t starts, uint64_t full, int64_t now,
			       uint32_t pauses_before)
{
	/* One more begun, no full collection: a concurrent start pause.
	 * Before the counters are primed (a late attach) a start may be old. */
	if (m->primed && starts == m->starts_seen + 1 && full == m->full_seen) {
		m->g1_start_pause = pauses_before + 1;
		m->g1_start_ns = now;
	}
	if (starts > m->starts_seen)
		m->starts_seen = starts;
}

void hp_marks_observe_starts(struct hp_marks *m, uint64_t starts, uint64_t young, int64_t now, uint32_t pauses_before)
{
	bool z_own = __atomic_load_n(&m->z_own, __ATOMIC_ACQUIRE);
	/* The collection before this one, seen begin by itself (not filled in
	 * below from a later callback): its first pause's count. */
	uint32_t before_prev = z_own && young >= 2 && m->young_seen + 1 == young && young - 1 > m->young_first
				       ? m->young_start[(young - 1) % HP_YOUNG_RING] : 0;
	if (z_own) {
		for (uint64_t c = young > m->young_seen + HP_YOUNG_RING ? young - HP_YOUNG_RING + 1 : m->young_seen + 1;
		     c <= young; c++)
			m->young_start[c % HP_YOUNG_RING] = pauses_before;
		if (young > m->young_seen)
			m->young_seen = young;
	}
	if (starts > m->starts_seen) {
		m->starts_seen = starts;
		atomic_store_explicit(&m->start_cover, before_prev, memory_order_relaxed);
		atomic_store_explicit(&m->start_ns, now, memory_order_release);
		if (z_own)
			z_major_began(m, young, now, pauses_before);
	}
}

void hp_marks_observe_z_end(struct hp_marks *m, uint64_t young, bool began, uint32_t pauses_before)
{
	if (!__atomic_load_n(&m->z_own, __ATOMIC_ACQUIRE) || atomic_load(&m->z_end) < 0)
		return;
	if (began) {
		/* The previous major's old pauses: all it had, its young
		 * collections and those since being done. */
		if (m->z_p0_set && young > m->z_y0) {
			int64_t old = (int64_t)(uint32_t)(pauses_before - m->z_p0) - 3 * (int64_t)(young - m->z_y0);
			if (old < 2) {
				m->z_end_step = old;
				atomic_store(&m->z_end, -1);
				return;
			}
			/* More (a Mark End repeated): that major may have been
			 * counted a pause early; learn again. */
			m->z_end_run = old == 2 ? m->z_end_run + 1 : 0;
			atomic_store(&m->z_end, m->z_end_run >= HP_Z_END_STEPS ? 1 : 0);
		}
		m->z_p0 = pauses_before;
		m->z_y0 = young;
		m->z_p0_set = true;
		return;
	}
	if (atomic_load(&m->z_end) != 1 || !m->z_p0_set || young < m->z_y0)
		return;
	/* The old pauses done at least (the young collection under way
	 * counted whole): at two, its Relocate Start. */
	int64_t old = (int64_t)(uint32_t)(pauses_before + 1 - m->z_p0) - 3 * (int64_t)(young - m->z_y0 + 1);
	if (old >= 2 && !atomic_load(&m->z_requesting) && z_push_pending(m, pauses_before))
		m->z_ended++;
}

void hp_marks_sh_text(const struct hp_marks *m, char *buf, size_t len)
{
	/* Written by the GC callback: relaxed loads, a status line. */
	uint32_t cover;
	unsigned long long young = hp_sh_young_done(&m->sh, &cover);
	uint64_t counted = __atomic_load_n(&m->sh.w_counted, __ATOMIC_RELAXED);
	uint64_t done = __atomic_load_n(&m->sh.w_done, __ATOMIC_RELAXED);
	if (done < counted)
		done = counted;         /* read between the writer's two increments */
	snprintf(buf, len, "young cycles %llu; whole-heap markings begun %llu, counted %llu (and %llu asked for or "
		 "under way when counting began), abandoned %llu (a degenerated or full collection); pauses no cycle "
		 "explains %llu",
		 young, (unsigned long long)__atomic_load_n(&m->sh.w_begun, __ATOMIC_RELAXED),
		 (unsigned long long)counted, (unsigned long long)(done - counted),
		 (unsigned long long)__atomic_load_n(&m->sh.w_abandoned, __ATOMIC_RELAXED),
		 (unsigned long long)__atomic_load_n(&m->sh.irregular, __ATOMIC_RELAXED));
}

void hp_marks_z_end_text(const struct hp_marks *m, char *buf, size_t len)
{
	/* Written by the GC callback: relaxed loads, a status line. */
	int e = atomic_load(&m->z_end);
	unsigned run = __atomic_load_n(&m->z_end_run, __ATOMIC_RELAXED);
	unsigned long long ended = __atomic_load_n(&m->z_ended, __ATOMIC_RELAXED);
	int n;
	if (e > 0)
		n = snprintf(buf, len, "each counted at its old Relocate Start pause (%u majors in a row with two old "
			     "pauses)", run);
	else if (e < 0)
		n = snprintf(buf, len, "each counted when the next begins (%lld old pauses in a major, not two: its "
			     "end not looked for)", (long long)__atomic_load_n(&m->z_end_step, __ATOMIC_RELAXED));
	else
		n = snprintf(buf, len, "each counted when the next begins until %d majors in a row show two old "
			     "pauses (%u so far)", HP_Z_END_STEPS, run);
	unsigned back = atomic_load(&m->z_back);
	if (n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "; a major judges the samples born %u young collections before "
			      "it began and earlier (%s)", back,
			      atomic_load_explicit(&m->z_nage, memory_order_relaxed) >= 2
				      ? "learnt: the youngest its clearing showed promoted, plus one"
				      : "MaxTenuringThreshold + 1 until learnt");
	if (n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "; majors counted at their end: %llu", ended);
}

void hp_marks_arm_explicit(struct hp_marks *m)
{
	atomic_store(&m->explicit_start_ns, 0);
	atomic_store_explicit(&m->explicit_armed, true, memory_order_release);
}

void hp_marks_observe_explicit(struct hp_marks *m, int explicit_cycle, int64_t now, uint32_t pauses_before)
{
	bool armed = true;
	if (explicit_cycle == 1 && atomic_load_explicit(&m->explicit_armed, memory_order_acquire) &&
	    atomic_compare_exchange_strong(&m->explicit_armed, &armed, false)) {
		atomic_store_explicit(&m->explicit_cover, pauses_before, memory_order_relaxed);
		atomic_store_explicit(&m->explicit_start_ns, now, memory_order_release);
	}
}

void hp_marks_at_now(const struct hp_marks *m, struct hp_marks_at *at)
{
	at->seen = atomic_load_explicit(&m->seen.n, memory_order_acquire);
	at->requested = atomic_load_explicit(&m->requested.n, memory_order_acquire);
}

unsigned hp_marks_age_at(const struct hp_marks *m, const struct hp_marks_at *at, uint32_t pause_at_alloc)
{
	return ring_count_ge_upto(&m->seen, pause_at_alloc, at->seen) +
	       ring_count_ge_upto(&m->requested, pause_at_alloc, at->requested);
}

unsigned hp_marks_age(const struct hp_marks *m, uint32_t pause_at_alloc)
{
	struct hp_marks_at at;
	hp_marks_at_now(m, &at);
	return hp_marks_age_at(m, &at, pause_at_alloc);
}

bool hp_marks_horizon(const struct hp_marks *m, uint32_t *cover)
{
	bool a, b;
	uint32_t x = ring_latest(&m->seen, &a), y = ring_latest(&m->requested, &b);
	*cover = a && b ? (x > y ? x : y) : a ? x : y;
	return a || b;
}

bool hp_marks_pause_end(const struct hp_marks *m, uint32_t p, uint32_t now, int64_t *ns)
{
	if (now - p >= HP_PAUSE_RING)
		return false;
	*ns = atomic_load_explicit(&m->pause_end_ns[p % HP_PAUSE_RING], memory_order_relaxed);
	return *ns > 0;
}

void hp_marks_observe_marked(struct hp_marks *m, uint64_t marked, uint32_t pauses_before)
{
	if (marked > m->marked_seen) {
		if (m->primed)
			atomic_store_explicit(&m->remark_pause, pauses_before + 1, memory_order_relaxed);
		m->marked_seen = marked;
	}
}

bool hp_marks_young_window(const struct hp_marks *m, uint32_t cover, uint32_t *from, uint32_t *before)
{
	uint32_t remark = atomic_load_explicit(&m->remark_pause, memory_order_relaxed);
	/* The window opens at the concurrent start pause where that is known
	 * or bounded from above: a requested cycle's (its start is the first
	 * pause after the request, cover + 1), or an own cycle's that the
	 * canaries bound (g1_win_from; cover + 1 where they pinned it). Not
	 * from an own cycle's lower-bound cover: young pauses between it and
	 * the real start clear the young dead before the start, which the
	 * window would count alive (G1 under load read 8% high with it for
	 * every marking). Without the window, a cycle judged dead at its start
	 * every young sample that died during its concurrent phase (a cache
	 * whose entries live 0.25 s, a phase of 200-500 ms): the view read ~20%
	 * low until the next requested marking where pinned cycles had none,
	 * and 20-45% low in `heapprobe top` (whose request spends the budget,
	 * leaving own cycles, most not pinned) where only pinned ones had it. */
	bool requested = cover == m->request_cover && remark <= m->request_end_pause;
	uint64_t x = atomic_load_explicit(&m->g1_exact, memory_order_acquire);
	bool exact = (uint32_t)x && cover == (uint32_t)x && remark <= (uint32_t)(x >> 32);
	bool bounded = m->g1_win_cover && cover == m->g1_win_cover && remark <= m->g1_win_done;
	uint32_t start = requested || exact ? cover + 1 : bounded ? m->g1_win_from : 0;
	bool open = m->g1_mode && (requested || exact || bounded) && remark > start && start > cover;
	/* After Remark, any covered sample still referenced was alive at the
	 * start (Remark clears what the marking found dead), whether or not
	 * the window is known: `before` is that Remark wherever one came
	 * after the cover (a later cycle's Remark, too, says as much). */
	bool after = m->g1_mode && remark > cover + 1;
	*before = after ? remark : 0;
	*from = open ? start : *before;
	if (!m->g1_mode) {
		/* Generational Shenandoah's own whole-heap marking (sh_window):
		 * an old marking judges the young as of its bootstrap cycle's
		 * weak roots and the old at its own Final Mark, young cycles
		 * clearing the young dead in between (what they clear then was
		 * alive at its start); a global cycle has no window, and a
		 * sample still referenced after its Final Mark was alive at its
		 * start. "Still referenced" holds though its weak roots are
		 * cleared concurrently after that pause: while WEAK_ROOTS is on,
		 * Shenandoah's load barrier on a weak reference (IsSameObject
		 * through the jweak, live.c) returns null for an object the
		 * marking found dead, so a sweep then sees it cleared already.
		 * A sweep that read references around the barrier would break
		 * this. */
		uint64_t w = atomic_load_explicit(&m->sh_window, memory_order_acquire);
		if (w && (uint32_t)w == cover) {
			*from = cover + (uint32_t)((w >> 32) & 0xffff);
			*before = cover + (uint32_t)(w >> 48);
			return *from < *before;
		}
	}
	return open;
}

/* Raises seen entry k's cover and start to at least these (a max, by CAS:
 * the slot is published and the GC callback only writes the next one, so
 * a max here cannot be lost). */
void hp_marks_seen_raise(struct hp_marks *m, uint64_t k, uint32_t cover, int64_t start_ns)
{
	_Atomic uint32_t *c = &m->seen.cover[k % HP_MARKS_RING];
	uint32_t old = atomic_load(c);
	while (old < cover && !atomic_compare_exchange_weak(c, &old, cover))
		;
	_Atomic int64_t *t = &m->seen.start_ns[k % HP_MARKS_RING];
	int64_t was = atomic_load(t);
	while (was < start_ns && !atomic_compare_exchange_weak(t, &was, start_ns))
		;
}

void hp_marks_requested_at(struct hp_marks *m, uint32_t at_request, uint64_t seen_before, uint32_t pauses_now,
			   int64_t request_ns)
{
	/* ZGC: the marking began at its Mark Start pause, after the request
	 * (the last one seen: the driver runs one cycle at a time). */
	int64_t began = m->g1_mode ? 0 : atomic_load_explicit(&m->start_ns, memory_order_acquire);
	if (began > request_ns) {
		/* Generational ZGC: the major the callback holds pending is this
		 * one (it began after the request): ours, with the exact cover,
		 * not an own one to push when the next begins. */
		if (atomic_load(&m->z_start_ns) == began)
			atomic_exchange(&m->z_pending, false);
		request_ns = began;
		uint32_t cover = atomic_load_explicit(&m->start_cover, memory_order_relaxed);
		if (__atomic_load_n(&m->z_own, __ATOMIC_ACQUIRE) && cover > at_request && cover <= pauses_now)
			at_request = cover;     /* promoted by its preclean (start_cover) */
	}
	/* Shenandoah: the marking began at the first pause of the cycle the
	 * request started (explicit_start_ns), and judges what was allocated
	 * before that pause. */
	atomic_store(&m->explicit_armed, false);
	int64_t explicit_began = atomic_load_explicit(&m->explicit_start_ns, memory_order_acquire);
	if (explicit_began > request_ns) {
		request_ns = explicit_began;
		uint32_t cover = atomic_load_explicit(&m->explicit_cover, memory_order_relaxed);
		if (cover > at_request && cover <= pauses_now)
			at_request = cover;
	}
	uint64_t seen_after = atomic_load(&m->seen.n);
	/* Generational Shenandoah: the callback never pushes the request's
	 * own cycle (shcycles.c, w_requested); one it pushed meanwhile is an
	 * own old marking that ended during the request, not this one. */
	if (seen_after > seen_before && !__atomic_load_n(&m->z_own, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&m->sh_on, __ATOMIC_ACQUIRE)) {
		/* The GC callback saw it end (G1, full collections): give its
		 * entry the exact cover. */
		hp_marks_seen_raise(m, seen_after - 1, at_request, request_ns);
	} else {
		hp_marks_ring_push(&m->requested, at_request, request_ns, pauses_now);
	}
	completed(m, pauses_now, hp_mono_ns());
	m->request_cover = at_request;
	m->request_end_pause = pauses_now;
}

void hp_marks_requested(struct hp_marks *m, uint32_t at_request, uint64_t seen_before, uint32_t pauses_now)
{
	hp_marks_requested_at(m, at_request, seen_before, pauses_now, hp_mono_ns());
}

/* ---- times --------------------------------------------------------------- */

static int ring_starts(const struct hp_mark_ring *r, uint64_t n, int64_t *out, int max)
{
	uint64_t now;
	n = ring_upto(r, n, &now);
	int k = 0;
	for (uint64_t i = n; i > 0 && k < max && now - i < HP_MARKS_RING; i--) {
		int64_t t = atomic_load_explicit(&r->start_ns[(i - 1) % HP_MARKS_RING], memory_order_relaxed);
		if (t > 0)
			out[k++] = t;
	}
	return k;
}

bool hp_marks_last_start_at(const struct hp_marks *m, const struct hp_marks_at *at, int64_t *ns)
{
	int64_t a[1], b[1];
	int na = ring_starts(&m->seen, at->seen, a, 1), nb = ring_starts(&m->requested, at->requested, b, 1);
	if (!na && !nb)
		return false;
	*ns = na && nb ? (a[0] > b[0] ? a[0] : b[0]) : na ? a[0] : b[0];
	return true;
}

bool hp_marks_last_start(const struct hp_marks *m, int64_t *ns)
{
	struct hp_marks_at at;
	hp_marks_at_now(m, &at);
	return hp_marks_last_start_at(m, &at, ns);
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

int64_t hp_marks_gap_ns_at(const struct hp_marks *m, const struct hp_marks_at *at)
{
	int64_t t[18], d[17];
	int n = ring_starts(&m->seen, at->seen, t, 9);
	n += ring_starts(&m->requested, at->requested, t + n, 9);
	if (n < 2)
		return 0;
	qsort(t, (size_t)n, sizeof(t[0]), cmp_i64);
	/* Only the latest 9 starts of both rings together. */
	int from = n > 9 ? n - 9 : 0, k = 0;
	for (int i = from + 1; i < n; i++)
		if (t[i] > t[i - 1])
			d[k++] = t[i] - t[i - 1];
	if (!k)
		return 0;
	qsort(d, (size_t)k, sizeof(d[0]), cmp_i64);
	return d[k / 2];
}

int64_t hp_marks_gap_ns(const struct hp_marks *m)
{
	struct hp_marks_at at;
	hp_marks_at_now(m, &at);
	return hp_marks_gap_ns_at(m, &at);
}
