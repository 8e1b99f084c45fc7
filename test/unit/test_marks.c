/* marks.c: which markings verified which samples, from the counters alone. */
#include <criterion/criterion.h>
#include <string.h>

#include "agent/marks.h"

static struct hp_marks m;

static void fresh(uint64_t full, uint64_t concurrent)
{
	memset(&m, 0, sizeof(m));
	hp_marks_reset(&m, NULL, 0);            /* no probe: primed by the first observation */
	hp_marks_observe(&m, full, concurrent, 0);
}

Test(marks, nothing_is_verified_before_a_marking)
{
	fresh(0, 0);
	uint32_t h;
	cr_assert_not(hp_marks_horizon(&m, &h));
	cr_assert_eq(hp_marks_age(&m, 0), 0);
	/* Young pauses: the counters do not move. */
	for (uint32_t p = 0; p < 10; p++)
		hp_marks_observe(&m, 0, 0, p);
	cr_assert_eq(hp_marks_age(&m, 0), 0);
}

Test(marks, a_full_collection_covers_what_was_allocated_before_it)
{
	fresh(3, 0);
	hp_marks_observe(&m, 3, 0, 0);  /* young pause #1 */
	hp_marks_observe(&m, 3, 0, 1);  /* young pause #2 */
	hp_marks_observe(&m, 4, 0, 2);  /* pause #3 is a full collection */
	uint32_t h;
	cr_assert(hp_marks_horizon(&m, &h));
	cr_assert_eq(h, 2);
	cr_assert_eq(hp_marks_age(&m, 2), 1, "allocated before the full GC");
	cr_assert_eq(hp_marks_age(&m, 0), 1);
	cr_assert_eq(hp_marks_age(&m, 3), 0, "allocated after it: recent");
}

Test(marks, a_concurrent_cycle_covers_only_what_preceded_the_previous_marking_end)
{
	fresh(0, 0);
	/* cycle 1 ends at pause 5 (the pause count was 4 before it) */
	hp_marks_observe(&m, 0, 1, 4);
	uint32_t h;
	cr_assert(hp_marks_horizon(&m, &h));
	/* It began after counting began (pause 0): nothing later is known. */
	cr_assert_eq(h, 0);
	cr_assert_eq(hp_marks_age(&m, 1), 0);
	/* cycle 2 ends at pause 12: it began after cycle 1 ended (pause 5) */
	hp_marks_observe(&m, 0, 2, 11);
	cr_assert(hp_marks_horizon(&m, &h));
	cr_assert_eq(h, 5);
	cr_assert_eq(hp_marks_age(&m, 5), 1);
	cr_assert_eq(hp_marks_age(&m, 0), 2, "seen by both cycles");
	cr_assert_eq(hp_marks_age(&m, 6), 0);
}

Test(marks, a_requested_marking_covers_what_preceded_the_request)
{
	fresh(0, 0);
	/* ZGC: no counter moves; the request is recorded by the requester. */
	hp_marks_requested(&m, 40, 0, 43);
	uint32_t h;
	cr_assert(hp_marks_horizon(&m, &h));
	cr_assert_eq(h, 40);
	cr_assert_eq(hp_marks_age(&m, 40), 1);
	cr_assert_eq(hp_marks_age(&m, 41), 0);
	/* G1: the GC callback saw the cycle end during the request (with a
	 * lower bound); the request raises that entry's cover, no new entry. */
	hp_marks_observe(&m, 0, 1, 50);
	hp_marks_requested(&m, 47, 0, 52);
	cr_assert(hp_marks_horizon(&m, &h));
	cr_assert_eq(h, 47);
	cr_assert_eq(hp_marks_age(&m, 45), 1, "after the first request: only the second marking");
	cr_assert_eq(hp_marks_age(&m, 10), 2);
}

Test(marks, covers_never_go_back_and_the_ring_saturates)
{
	fresh(0, 0);
	uint32_t p = 0;
	for (int i = 0; i < 3 * HP_MARKS_RING; i++, p += 3)
		hp_marks_observe(&m, (uint64_t)i + 1, 0, p);
	uint32_t h;
	cr_assert(hp_marks_horizon(&m, &h));
	cr_assert_eq(h, p - 3);
	cr_assert_eq(hp_marks_age(&m, 0), HP_MARKS_RING, "saturates at the ring's size");
	cr_assert_eq(hp_marks_age(&m, p - 3), 1);
	cr_assert_eq(hp_marks_age(&m, p - 6), 2);
	/* A later concurrent end with a stale lower bound does not lower the
	 * horizon. */
	hp_marks_observe(&m, 3 * HP_MARKS_RING, 1, p);
	cr_assert(hp_marks_horizon(&m, &h));
	cr_assert_geq(h, p - 3);
}

#include <time.h>

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

Test(marks, periodic_requests_keep_to_their_duty_cycle)
{
	fresh(0, 0);
	cr_assert(hp_marks_may_request(&m), "nothing asked yet");
	/* A 100 ms marking that ended 1 s ago: under 50 x 100 ms, wait. */
	m.requests_ok = 1;
	m.last_ns = 100000000;
	m.last_end_ns = mono_ns() - 1000000000ull;
	cr_assert_not(hp_marks_may_request(&m));
	cr_assert(strstr(m.last_request, "skipped"), "%s", m.last_request);
	/* ... that ended 6 s ago: go. */
	m.last_end_ns = mono_ns() - 6000000000ull;
	cr_assert(hp_marks_may_request(&m));
}
