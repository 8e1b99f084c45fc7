/* Markings and the samples they verified (see marks.h).
 *
 * Why a cover, and how it is found. A marking verifies the objects that
 * existed when it began: G1 treats what is allocated after its concurrent
 * start pause as live (above TAMS), ZGC and Shenandoah likewise for what is
 * allocated during the cycle. So a marking covers the samples allocated
 * before its first pause, and the pause count a sample records tells which:
 *  - a full collection is one pause: it covers every sample allocated
 *    before that pause (pause_at_alloc <= the count before it);
 *  - a concurrent cycle the counters show complete (G1) began after the
 *    previous marking ended, so it covers at least the samples allocated
 *    before that end (a lower bound: it may cover more);
 *  - a cycle we requested began after our request: it covers the samples
 *    allocated before the request.
 * Bounds err on the side of "recent, not yet verified", never the other.
 */
#include "agent/marks.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static uint32_t ring_latest(const struct hp_mark_ring *r, bool *have)
{
	uint64_t n = atomic_load_explicit(&r->n, memory_order_acquire);
	*have = n > 0;
	return n ? atomic_load_explicit(&r->cover[(n - 1) % HP_MARKS_RING], memory_order_relaxed) : 0;
}

/* One writer per ring (see marks.h). Covers never decrease: a later
 * marking began after an earlier one ended, so it covers all it did. */
static void ring_push(struct hp_mark_ring *r, uint32_t cover)
{
	bool have;
	uint32_t last = ring_latest(r, &have);
	if (have && last > cover)
		cover = last;
	uint64_t n = atomic_load_explicit(&r->n, memory_order_relaxed);
	atomic_store_explicit(&r->cover[n % HP_MARKS_RING], cover, memory_order_relaxed);
	atomic_store_explicit(&r->n, n + 1, memory_order_release);
}

/* Entries with cover >= x (binary search over the non-decreasing ring). */
static unsigned ring_count_ge(const struct hp_mark_ring *r, uint32_t x)
{
	uint64_t n = atomic_load_explicit(&r->n, memory_order_acquire);
	uint64_t lo = n > HP_MARKS_RING ? n - HP_MARKS_RING : 0, hi = n;
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
	for (int i = 0; i < HP_MARKS_RING; i++)
		atomic_store(&r->cover[i], 0);
	atomic_store(&r->n, 0);
}

void hp_marks_reset(struct hp_marks *m, struct hp_probe *probe, uint32_t pauses_now)
{
	ring_clear(&m->seen);
	ring_clear(&m->requested);
	m->primed = false;
	struct hp_marking mk = { .sz = sizeof(mk) };
	if (hp_marking(probe, &mk) == 0) {
		m->count_seen = mk.full + mk.concurrent;
		m->full_seen = mk.full;
		m->primed = true;
	}
	__atomic_store_n(&m->last_completion, pauses_now, __ATOMIC_RELAXED);
	m->last_full_pause = 0;
	m->requests = m->requests_ok = 0;
	m->request_ns_total = m->request_ns_max = 0;
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
	uint32_t cover = was_full ? pauses_before : __atomic_load_n(&m->last_completion, __ATOMIC_RELAXED);
	ring_push(&m->seen, cover);
	m->count_seen = counted;
	m->full_seen = full;
	if (was_full)
		m->last_full_pause = pauses_before + 1;
	__atomic_store_n(&m->last_completion, pauses_before + 1, __ATOMIC_RELAXED);
}

void hp_marks_on_gc(struct hp_marks *m, struct hp_probe *probe, uint32_t pauses_before)
{
	struct hp_marking mk = { .sz = sizeof(mk) };
	if (hp_marking(probe, &mk) == 0)
		hp_marks_observe(m, mk.full, mk.concurrent, pauses_before);
}

unsigned hp_marks_age(const struct hp_marks *m, uint32_t pause_at_alloc)
{
	return ring_count_ge(&m->seen, pause_at_alloc) + ring_count_ge(&m->requested, pause_at_alloc);
}

bool hp_marks_horizon(const struct hp_marks *m, uint32_t *cover)
{
	bool a, b;
	uint32_t x = ring_latest(&m->seen, &a), y = ring_latest(&m->requested, &b);
	*cover = a && b ? (x > y ? x : y) : a ? x : y;
	return a || b;
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void hp_marks_requested(struct hp_marks *m, uint32_t at_request, uint64_t seen_before, uint32_t pauses_now)
{
	uint64_t seen_after = atomic_load(&m->seen.n);
	if (seen_after > seen_before) {
		/* The GC callback saw it end (G1, full collections): give its
		 * entry the exact cover. The slot is published; the callback only
		 * writes the next one, so a max here cannot be lost. */
		_Atomic uint32_t *c = &m->seen.cover[(seen_after - 1) % HP_MARKS_RING];
		uint32_t old = atomic_load(c);
		while (old < at_request && !atomic_compare_exchange_weak(c, &old, at_request))
			;
	} else {
		ring_push(&m->requested, at_request);
	}
	__atomic_store_n(&m->last_completion, pauses_now, __ATOMIC_RELAXED);
	m->request_cover = at_request;
	m->request_end_pause = pauses_now;
}

bool hp_marks_may_request(struct hp_marks *m)
{
	if (!m->requests_ok)
		return true;
	uint64_t since = now_ns() - m->last_end_ns;
	if (since >= HP_MARKS_DUTY * m->last_ns)
		return true;
	snprintf(m->last_request, sizeof(m->last_request),
		 "skipped for this periodic profile: the last marking took %.0f ms, %.1f s ago (at most 1/%d of "
		 "the time in requested markings)", (double)m->last_ns / 1e6, (double)since / 1e9, HP_MARKS_DUTY);
	return false;
}

int hp_marks_request(struct hp_marks *m, struct hp_probe *probe, bool allow_full, const _Atomic uint64_t *pauses)
{
	uint32_t at_request = (uint32_t)atomic_load(pauses), h;
	if (hp_marks_horizon(m, &h) && h >= at_request) {
		snprintf(m->last_request, sizeof(m->last_request),
			 "none needed: the last marking began after every sample");
		return 1;
	}
	uint64_t seen_before = atomic_load(&m->seen.n);
	char why[200] = "";
	uint64_t t0 = now_ns();
	int rc = hp_request_marking(probe, allow_full ? HP_MARK_ALLOW_FULL : 0, why, sizeof(why));
	uint64_t dt = now_ns() - t0;
	m->requests++;
	if (rc) {
		snprintf(m->last_request, sizeof(m->last_request), "not requested: %.180s", why);
		return rc;
	}
	m->requests_ok++;
	m->last_ns = dt;
	m->last_end_ns = now_ns();
	m->request_ns_total += dt;
	if (dt > m->request_ns_max)
		m->request_ns_max = dt;
	hp_marks_requested(m, at_request, seen_before, (uint32_t)atomic_load(pauses));
	snprintf(m->last_request, sizeof(m->last_request), "%.120s requested before this profile (%.0f ms)", why,
		 (double)dt / 1e6);
	return 0;
}
