/* The canaries (see marks.h): objects only a weak reference holds, by
 * which the collector's own cycles are seen where its counters count only
 * pauses (single-generation ZGC and Shenandoah), and G1's own cycles'
 * start found; and the wait for the collector's own next cycle before a
 * periodic profile (hp_marks_await_own; generational ZGC's majors, which
 * need no canary, hp_marks_await_z_major). Split from marks.c, which
 * keeps the rings the canaries push to. */
#include "agent/marks.h"
#include "vmstructs/clock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- the canaries -------------------------------------------------------- */

_Thread_local bool hp_marks_allocating;

/* A new java.lang.Object held only by a weak global reference (weak) or a
 * global one; NULL on failure, no exception left pending. */
static jobject new_canary(JNIEnv *jni, jclass object_class, bool weak)
{
	hp_marks_allocating = true;
	jobject o = object_class ? (*jni)->AllocObject(jni, object_class) : NULL;
	hp_marks_allocating = false;
	jobject ref = !o ? NULL : weak ? (*jni)->NewWeakGlobalRef(jni, o) : (*jni)->NewGlobalRef(jni, o);
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (o)
		(*jni)->DeleteLocalRef(jni, o);
	return ref;
}

static void canary_make(struct hp_marks *m, JNIEnv *jni, const _Atomic uint64_t *pauses)
{
	/* Its pause count is read before the object is made: a marking that
	 * clears it began after it was made, so after that pause (and any
	 * pause in between), and the cover errs low. */
	uint32_t pause = (uint32_t)atomic_load(pauses);
	if (m->ncanary && m->canary[m->ncanary - 1].pause == pause)
		return;         /* no pause since the newest: it says the same */
	if (m->ncanary == HP_CANARIES) {
		/* Full (no marking for a while): keep the oldest, which the next
		 * marking clears anyway, and replace the newest. */
		(*jni)->DeleteWeakGlobalRef(jni, m->canary[--m->ncanary].ref);
	}
	jweak ref = new_canary(jni, m->object_class, true);
	if (ref)
		m->canary[m->ncanary++] = (struct hp_canary){ ref, pause };
}

int hp_marks_canary_setup(struct hp_marks *m, struct hp_probe *probe, JNIEnv *jni, const _Atomic uint64_t *pauses)
{
	struct hp_gc_info g = { .sz = sizeof(g) };
	if (m->canary_on || m->g1_mode)
		return 0;
	m->own_uncounted = false;
	if (hp_gc_info(probe, &g) != 0) {
		snprintf(m->canary_state, sizeof(m->canary_state), "off: the collector is not known");
		return 0;
	}
	struct hp_marking mk = { .sz = sizeof(mk) };
	/* Not read (-EAGAIN: not located yet) leaves mk zeroed, phase 0
	 * among them, which would read as "idle": decided again later. */
	int mk_rc = hp_marking(probe, &mk);
	if (mk_rc == -EAGAIN) {
		snprintf(m->canary_state, sizeof(m->canary_state), "not yet: %s", mk.source ? mk.source : "?");
		return -EAGAIN;
	}
	if (mk_rc == 0 && mk.source && strncmp(mk.source, "hidden", 6) == 0) {
		snprintf(m->canary_state, sizeof(m->canary_state), "off: markings hidden (HEAPPROBE_FAULTS)");
		return 0;
	}
	if (!m->object_class) {
		jclass cls = (*jni)->FindClass(jni, "java/lang/Object");
		m->object_class = cls ? (*jni)->NewGlobalRef(jni, cls) : NULL;
		if ((*jni)->ExceptionCheck(jni))
			(*jni)->ExceptionClear(jni);
		if (cls)
			(*jni)->DeleteLocalRef(jni, cls);
	}
	if (!m->object_class) {
		snprintf(m->canary_state, sizeof(m->canary_state), "off: no java.lang.Object to make canaries of");
		return 0;
	}
	if (g.kind == HP_GC_G1 && mk_rc == 0 && mk.starts_source) {
		/* marks.h, g1_count_starts: every cycle's start is known. */
		m->g1_mode = true;
		__atomic_store_n(&m->g1_count_starts, true, __ATOMIC_RELEASE);
		snprintf(m->canary_state, sizeof(m->canary_state), "%s", "not needed: each cycle's start named by "
			 "G1CollectedHeap::_old_marking_cycles_started (cycles whose concurrent start pause it named)");
		return 0;
	}
	if (g.kind == HP_GC_G1) {
		m->g1_mode = m->canary_on = true;
		m->g1_looked_n = atomic_load(&m->seen.n);
		snprintf(m->canary_state, sizeof(m->canary_state), "counted by its perfdata, their start found by "
			 "canary objects aged into the old generation (cycles whose start they found)");
		return 0;
	}
	if (g.kind == HP_GC_Z && g.generational == 1) {
		struct hp_marking zk = { .sz = sizeof(zk) };
		if (hp_marking(probe, &zk) == 0 && zk.starts) {
			__atomic_store_n(&m->z_own, true, __ATOMIC_RELEASE);
			snprintf(m->canary_state, sizeof(m->canary_state), "not needed: major cycles begin at the "
				 "Major Mark Start pause (_total_full_collections), judged for the samples promoted by "
				 "then (%d young collections before until learnt from the samples majors clear)",
				 HP_Z_PROMOTED_AFTER);
		} else {
			m->own_uncounted = true;
			snprintf(m->canary_state, sizeof(m->canary_state), "off: no count of major cycles "
				 "(_total_full_collections unreadable; only requested markings count)");
		}
		return 0;
	}
	if (g.kind == HP_GC_SHENANDOAH && g.generational == 1 && mk_rc == 0 && mk.phase >= 0) {
		/* shcycles.c: its phase at each pause's end. A young cycle's
		 * judgments of the young are not counted as markings (they say
		 * nothing of the old): the agent thread still asks for markings
		 * for the leak history (own_uncounted). */
		m->own_uncounted = true;
		__atomic_store_n(&m->sh_on, true, __ATOMIC_RELEASE);
		snprintf(m->canary_state, sizeof(m->canary_state), "%s", "generational: old markings and global "
			 "cycles counted from ShenandoahHeap::_gc_state at each pause (a young cycle would clear a "
			 "canary); its young collections looked at for drops, not counted");
		return 0;
	}
	if ((g.kind != HP_GC_Z && g.kind != HP_GC_SHENANDOAH) || g.generational != 0) {
		m->own_uncounted = g.kind == HP_GC_Z || g.kind == HP_GC_SHENANDOAH;
		snprintf(m->canary_state, sizeof(m->canary_state), "%s",
			 g.kind == HP_GC_Z || g.kind == HP_GC_SHENANDOAH
				 ? "off: generational, a young collection would clear a canary (only requested "
				   "markings count)"
				 : "not needed: the collector's counters show its markings");
		return 0;
	}
	m->canary_on = true;
	m->canary_markings = 0;
	m->ncanary = 0;
	snprintf(m->canary_state, sizeof(m->canary_state),
		 "the collector's own cycles, seen by canary objects' weak references");
	canary_make(m, jni, pauses);
	return 0;
}

/* A pause-end time still in the ring for pause count p, or 0. */
static int64_t pause_end_at(const struct hp_marks *m, uint32_t p, uint32_t now)
{
	int64_t ns;
	return hp_marks_pause_end(m, p, now, &ns) ? ns : 0;
}

uint32_t hp_marks_g1_start_bound(const struct hp_marks *m, uint32_t best, uint32_t done)
{
	/* The oldest canary released after `best`, by the cycle's end, and
	 * still set. */
	uint32_t upper = 0;
	for (unsigned i = 0; i < m->g1_nold; i++)
		if (m->g1_old[i].pause > best && m->g1_old[i].pause <= done && (!upper || m->g1_old[i].pause < upper))
			upper = m->g1_old[i].pause;
	/* And the concurrent start came before Remark: at most the pause
	 * before it. Where no young pause fell inside the cycle (most cycles
	 * under load: Remark is the pause right after the start), that alone
	 * pins a cycle whose canaries left a gap, or kept none released after
	 * it (of 9 own cycles in two runs of G1 on 25 under load, 2 had no
	 * canary after `best`, and Remark pinned both). */
	uint32_t remark = atomic_load_explicit(&m->remark_pause, memory_order_relaxed);
	if (remark > best + 1 && remark <= done && (!upper || remark - 1 < upper))
		upper = remark - 1;
	return upper;
}

/* G1 (marks.h): cleared old canaries give the newest seen cycle its cover
 * and start; then the aged canaries are released and one is made. */
static void g1_canaries(struct hp_marks *m, JNIEnv *jni, const _Atomic uint64_t *pauses)
{
	uint32_t pause = (uint32_t)atomic_load(pauses);
	bool found = false;
	uint32_t rel = 0;
	for (unsigned i = 0; i < m->g1_nold;) {
		if ((*jni)->IsSameObject(jni, m->g1_old[i].ref, NULL)) {
			if (!found || m->g1_old[i].pause > rel)
				rel = m->g1_old[i].pause;
			found = true;
			(*jni)->DeleteWeakGlobalRef(jni, m->g1_old[i].ref);
			memmove(&m->g1_old[i], &m->g1_old[i + 1], sizeof(m->g1_old[0]) * (m->g1_nold - i - 1));
			m->g1_nold--;
		} else {
			i++;
		}
	}
	uint64_t n = atomic_load_explicit(&m->seen.n, memory_order_acquire);
	if (n > m->g1_looked_n) {
		size_t k = (size_t)((n - 1) % HP_MARKS_RING);
		uint32_t done = atomic_load(&m->seen.done[k]);
		bool have = m->g1_have_rel;
		uint32_t best = m->g1_rel;
		if (found && pause <= done + 1) {       /* no mixed collection since this cycle's Cleanup */
			if (!have || rel > best)
				best = rel;
			have = true;
			found = false;
		}
		uint32_t cover = atomic_load(&m->seen.cover[k]);
		if (have && best >= cover && best < done) {
			/* The oldest canary released after `best` and not
			 * cleared was released after the cycle began: its
			 * concurrent start pause is at most that release's
			 * count. At best + 1 the cycle began there, its cover
			 * exact (raised below, or already there: the previous
			 * marking ended at that pause). */
			uint32_t upper = hp_marks_g1_start_bound(m, best, done);
			/* Its start, the end of the concurrent start pause,
			 * for the ages at judgment: somewhere from the end of
			 * pause best + 1 to that of `upper`; the middle of that
			 * span where the canaries left one (the agent thread
			 * released none for a few pauses). At the span's
			 * first end, every sample the cycle judged was taken
			 * younger than it was by up to the span, the survival
			 * learnt low and G1's view under load low (-13..-24% in
			 * single profiles, -2.7..-5.5% on the median at 512k:
			 * docs/load-releases.md). The cover stays at `best`:
			 * samples of the span are left recent, not verified. */
			int64_t lo = pause_end_at(m, best + 1, pause), hi = upper > best + 1 ? pause_end_at(m, upper, pause) : 0;
			int64_t start = lo && hi > lo ? lo + (hi - lo) / 2 : lo;
			if (best > cover) {
				hp_marks_seen_raise(m, n - 1, best, start);
				m->canary_markings++;
			} else if (start > lo) {
				hp_marks_seen_raise(m, n - 1, cover, start);
			}
			if (upper) {
				m->g1_win_cover = best;
				m->g1_win_from = upper;
				m->g1_win_done = done;
			}
		}
		m->g1_looked_n = n;
		m->g1_have_rel = false;
	}
	if (found) {            /* for the next cycle: released before it began */
		if (!m->g1_have_rel || rel > m->g1_rel)
			m->g1_rel = rel;
		m->g1_have_rel = true;
	}
	/* Release the aged: strong to weak. */
	while (m->g1_naging && pause - m->g1_aging[0].pause >= HP_G1_AGE_PAUSES) {
		if (m->g1_nold == HP_G1_OLD) {
			(*jni)->DeleteWeakGlobalRef(jni, m->g1_old[0].ref);
			memmove(&m->g1_old[0], &m->g1_old[1], sizeof(m->g1_old[0]) * (HP_G1_OLD - 1));
			m->g1_nold--;
		}
		jweak w = (*jni)->NewWeakGlobalRef(jni, m->g1_aging[0].ref);
		if ((*jni)->ExceptionCheck(jni))
			(*jni)->ExceptionClear(jni);
		(*jni)->DeleteGlobalRef(jni, m->g1_aging[0].ref);
		memmove(&m->g1_aging[0], &m->g1_aging[1], sizeof(m->g1_aging[0]) * (m->g1_naging - 1));
		m->g1_naging--;
		if (w)
			m->g1_old[m->g1_nold++] = (struct hp_canary){ w, pause };
	}
	/* One made per pause, while there is room. */
	if (m->g1_naging < HP_G1_AGING && (!m->g1_naging || m->g1_aging[m->g1_naging - 1].pause != pause)) {
		jobject g = new_canary(jni, m->object_class, false);
		if (g)
			m->g1_aging[m->g1_naging++] = (struct hp_canary){ g, pause };
	}
}

int hp_marks_canary_check(struct hp_marks *m, JNIEnv *jni, const _Atomic uint64_t *pauses)
{
	if (!m->canary_on)
		return 0;
	if (m->g1_mode) {
		g1_canaries(m, jni, pauses);
		return 0;
	}
	/* Canaries are dead objects: a marking that clears one clears every
	 * older one too. Find the newest cleared. */
	int newest = -1;
	for (int i = (int)m->ncanary - 1; i >= 0; i--)
		if ((*jni)->IsSameObject(jni, m->canary[i].ref, NULL)) {
			newest = i;
			break;
		}
	int counted = 0;
	if (newest >= 0) {
		uint32_t cover = m->canary[newest].pause;
		int64_t start = atomic_load(&m->pause_end_ns[(cover + 1) % HP_PAUSE_RING]);
		int64_t made = atomic_load(&m->pause_end_ns[cover % HP_PAUSE_RING]);
		hp_marks_ring_push(&m->requested, cover, start > made ? start : made > 0 ? made : hp_mono_ns(),
			  (uint32_t)atomic_load(pauses));
		m->canary_markings++;
		counted = 1;
		for (int i = 0; i <= newest; i++)
			(*jni)->DeleteWeakGlobalRef(jni, m->canary[i].ref);
		memmove(m->canary, m->canary + newest + 1, sizeof(m->canary[0]) * (m->ncanary - (unsigned)newest - 1));
		m->ncanary -= (unsigned)newest + 1;
	}
	canary_make(m, jni, pauses);
	return counted;
}

int hp_marks_own_lately(const struct hp_marks *m, int64_t within, int64_t *gap, int64_t *ago)
{
	if (!m->canary_on || m->g1_mode)
		return -ENOTSUP;
	int64_t g = hp_marks_gap_ns(m), last;
	if (g <= 0 || g > HP_OWN_GAP_MAX_NS || !hp_marks_last_start(m, &last))
		return 0;
	int64_t a = hp_mono_ns() - last;
	if (a > within)
		return 0;
	*gap = g;
	*ago = a;
	return 1;
}

/* A wait begun at t0 is over: its time counted, and if the cycle came,
 * the profile's request text says what came. */
static int wait_done(struct hp_marks *m, int64_t t0, bool came, const char *what)
{
	int64_t dt = hp_mono_ns() - t0;
	m->own_wait_ns_total += (uint64_t)dt;
	if (!came)
		return 0;
	m->own_waits_ok++;
	snprintf(m->last_request, sizeof(m->last_request),
		 "none: %s (waited %.0f ms; %llu of %llu waits)", what, (double)dt / 1e6,
		 (unsigned long long)m->own_waits_ok, (unsigned long long)m->own_waits);
	return 1;
}

int hp_marks_await_own(struct hp_marks *m, JNIEnv *jni, const _Atomic uint64_t *pauses, const _Atomic int *stop)
{
	int64_t gap, ago, t0 = hp_mono_ns();
	/* Lately: the latest start within twice the wait, so a service gone
	 * idle is asked at once, not after a wait for cycles that stopped. */
	int lately = hp_marks_own_lately(m, 2 * HP_OWN_WAIT_MAX_NS, &gap, &ago);
	if (lately <= 0)
		return lately;
	int64_t wait = 2 * gap < HP_OWN_WAIT_MAX_NS ? 2 * gap : HP_OWN_WAIT_MAX_NS;
	/* The canary after the latest pause (no pause since: it says the same
	 * as one made now). While waiting, one more after each pause, as
	 * hp_marks_canary_check makes them: the newest the cycle clears then
	 * names the pause before its first, its exact cover and start. With
	 * only the first, a cycle beginning pauses later would be dated at
	 * the pause after that canary: its judgments at ages too young, the
	 * curves low (Shenandoah under load: the view 30% low). */
	uint32_t p0 = (uint32_t)atomic_load(pauses);
	bool came = false, waited = false;
	for (;;) {
		/* Full: no more (canary_make would replace the newest, which may
		 * be the one waited for); the cycle is then dated by an older. */
		if (!waited || m->ncanary < HP_CANARIES)
			canary_make(m, jni, pauses);
		unsigned i = 0;
		while (i < m->ncanary && (int32_t)(m->canary[i].pause - p0) < 0)
			i++;
		if (i == m->ncanary)
			break;          /* none could be made */
		if (!waited)
			m->own_waits++;
		waited = true;
		came = (*jni)->IsSameObject(jni, m->canary[i].ref, NULL);
		if (came || hp_mono_ns() - t0 >= wait || (stop && atomic_load(stop)))
			break;
		struct timespec ts = { 0, 2 * 1000000 };
		nanosleep(&ts, NULL);
	}
	if (!waited)
		return 0;
	return wait_done(m, t0, came, "the collector's own cycle began after this profile was asked for");
}

int hp_marks_await_z_major(struct hp_marks *m, const _Atomic int *stop, const _Atomic int *stop2)
{
	if (!__atomic_load_n(&m->z_own, __ATOMIC_ACQUIRE))
		return -ENOTSUP;
	/* Counted at its end only where trusted (z_end); and none pushed at
	 * its end while a request is in flight (one that timed out included). */
	if (atomic_load(&m->z_end) != 1 || atomic_load(&m->z_requesting))
		return 0;
	int64_t t0 = hp_mono_ns(), gap = hp_marks_gap_ns(m);
	int64_t latest = atomic_load(&m->z_start_ns);
	/* Lately: the latest major began within two gaps, so a service gone
	 * quiet is asked at once, not after a wait for majors that stopped. */
	if (gap <= 0 || gap > HP_Z_GAP_MAX_NS || latest <= 0 || t0 - latest > 2 * gap)
		return 0;
	int64_t begin_wait = 2 * gap < HP_Z_BEGIN_WAIT_MAX_NS ? 2 * gap : HP_Z_BEGIN_WAIT_MAX_NS;
	int64_t began = 0, s;
	bool came = false;
	m->own_waits++;
	for (;;) {
		/* Counted (pushed at its old Relocate Start) with a start after
		 * the ask: the GC callback pushes it, markings_tick counts it. */
		if (hp_marks_last_start(m, &s) && s > t0) {
			came = true;
			break;
		}
		int64_t now = hp_mono_ns(), b = atomic_load(&m->z_start_ns);
		if (b > t0)
			began = b;
		if ((!began && now - t0 >= begin_wait) || (began && now - began >= HP_Z_MAJOR_WAIT_MAX_NS) ||
		    (stop && atomic_load(stop)) || (stop2 && atomic_load(stop2)) || atomic_load(&m->z_end) != 1)
			break;
		struct timespec ts = { 0, 5 * 1000000 };
		nanosleep(&ts, NULL);
	}
	return wait_done(m, t0, came, "a major of the collector's own began after this profile was asked for and ended");
}

void hp_marks_canary_rearm(struct hp_marks *m, JNIEnv *jni, const _Atomic uint64_t *pauses)
{
	if (!m->canary_on || m->g1_mode)
		return;         /* G1's: a requested cycle's clearings only bound the next own cycle lower */
	for (unsigned i = 0; i < m->ncanary; i++)
		(*jni)->DeleteWeakGlobalRef(jni, m->canary[i].ref);
	m->ncanary = 0;
	canary_make(m, jni, pauses);
}

void hp_marks_canary_free(struct hp_marks *m, JNIEnv *jni)
{
	for (unsigned i = 0; jni && i < m->ncanary; i++)
		(*jni)->DeleteWeakGlobalRef(jni, m->canary[i].ref);
	for (unsigned i = 0; jni && i < m->g1_naging; i++)
		(*jni)->DeleteGlobalRef(jni, m->g1_aging[i].ref);
	for (unsigned i = 0; jni && i < m->g1_nold; i++)
		(*jni)->DeleteWeakGlobalRef(jni, m->g1_old[i].ref);
	if (jni && m->object_class)
		(*jni)->DeleteGlobalRef(jni, m->object_class);
	m->object_class = NULL;
	m->ncanary = m->g1_naging = m->g1_nold = 0;
	m->canary_on = m->g1_mode = m->g1_have_rel = false;
	__atomic_store_n(&m->g1_count_starts, false, __ATOMIC_RELEASE);
}

