/* marks.c: which markings verified which samples, from the counters alone. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "agent/marks.h"
#include "vmstructs/clock.h"

static struct hp_marks m;
#define ALL_READ (HP_MARKING_READ_FULL | HP_MARKING_READ_CONCURRENT | HP_MARKING_READ_STARTS)

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

/* A profile is built against the markings counted when it began: a full
 * collection the GC callback counts while the live table is walked ages
 * nothing in it, and the start of the last marking stays the one before
 * (the estimate's time since the last marking was taken from it): the
 * samples walked after such a collection are not verified at the survival
 * since the marking before it (snapshot.c walks again instead). */
Test(marks, a_marking_counted_while_a_profile_is_built_is_left_to_the_next)
{
	fresh(0, 0);
	hp_marks_observe(&m, 1, 0, 4);          /* pause #5: a full collection */
	int64_t first_start;
	cr_assert(hp_marks_last_start(&m, &first_start));
	struct hp_marks_at at;
	hp_marks_at_now(&m, &at);
	struct timespec ms = { 0, 2000000 };
	nanosleep(&ms, NULL);
	hp_marks_observe(&m, 1, 0, 5);          /* young pause #6 */
	hp_marks_observe(&m, 2, 0, 6);          /* pause #7: another full collection, during the walk */
	cr_assert_eq(hp_marks_age(&m, 5), 1, "now the second covers a sample of pause 5");
	cr_assert_eq(hp_marks_age_at(&m, &at, 5), 0, "the profile under way still sees it recent");
	cr_assert_eq(hp_marks_age_at(&m, &at, 4), 1);
	cr_assert_eq(hp_marks_age(&m, 4), 2);
	int64_t now_start, at_start;
	cr_assert(hp_marks_last_start(&m, &now_start));
	cr_assert(hp_marks_last_start_at(&m, &at, &at_start));
	cr_assert_eq(at_start, first_start);
	cr_assert_gt(now_start, first_start);
	cr_assert_eq(hp_marks_gap_ns_at(&m, &at), 0, "one marking as of the profile: no gap yet");
	cr_assert_eq(hp_marks_gap_ns(&m), now_start - first_start);
	/* The ring moving on under it: entries pushed over the frozen ones are
	 * not counted for them. */
	hp_marks_at_now(&m, &at);
	for (uint32_t i = 0; i < HP_MARKS_RING; i++)
		hp_marks_observe(&m, 3 + (uint64_t)i, 0, 10 + 2 * i);
	cr_assert_eq(hp_marks_age_at(&m, &at, 0), 0, "every frozen entry overwritten: none counted");
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
	/* mark_budget=10%: 100 ms per 1 s; ended 0.5 s ago, wait; 1.1 s, go. */
	m.budget = 0.10;
	m.last_end_ns = mono_ns() - 500000000ull;
	cr_assert_not(hp_marks_may_request(&m));
	cr_assert(strstr(m.last_request, "at most 10% of the time"), "%s", m.last_request);
	m.last_end_ns = mono_ns() - 1100000000ull;
	cr_assert(hp_marks_may_request(&m));
}

/* A request that timed out (request.c request_on_helper) completed nothing
 * but is charged: the next periodic one waits as after a completed one
 * of that length (4 s at 2%: 200 s; at 50%: 8 s), not at once. */
Test(marks, a_request_that_timed_out_is_charged_to_the_budget)
{
	fresh(0, 0);
	m.requests = 1;
	m.requests_timed_out = 1;
	m.last_ns = 4000000000ull;
	m.last_end_ns = mono_ns() - 10000000000ull;
	cr_assert_not(hp_marks_may_request(&m), "a request that timed out 10 s ago, after 4 s, let the next one go");
	m.budget = 0.5;         /* 8 s after a 4 s one */
	cr_assert(hp_marks_may_request(&m));
}

/* Generational ZGC (marks.h): young collections of 3 pauses each, the
 * first bumping the collection count; a major begins at the first pause of
 * a collection and bumps `starts`. An own major covers what was allocated
 * before the collection HP_Z_PROMOTED_AFTER back began, and counts when the
 * next begins; one a request asked for is the request's. */
static uint64_t z_young, z_starts;
static uint32_t z_pause;
static int64_t z_far = INT64_MAX / 2;   /* after any request's clock (the wait's test: the clock's now) */

static void z_collection(bool major)
{
	z_young++;
	if (major)
		z_starts++;
	for (int k = 0; k < 3; k++, z_pause++)
		hp_marks_observe_starts(&m, z_starts, z_young, z_far + z_pause, z_pause);
}

/* A fresh generational ZGC: no collection yet. */
static void z_fresh(void)
{
	fresh(0, 0);
	m.z_own = true;
	z_young = z_starts = 0;
	z_pause = 0;
}

Test(marks, generational_z_own_majors_cover_the_promoted)
{
	z_fresh();
	for (int c = 1; c <= 10; c++)
		z_collection(c == 5);   /* too soon after the start: no cover known */
	for (int c = 11; c <= 29; c++)
		z_collection(false);
	cr_assert_eq(atomic_load(&m.seen.n), 0, "the early major is not counted");
	z_collection(true);             /* collection 30: a major */
	cr_assert_eq(atomic_load(&m.seen.n), 0, "counted when the next begins");
	for (int c = 31; c <= 34; c++)
		z_collection(false);
	z_collection(true);             /* 35: the next major; 30's ended */
	cr_assert_eq(atomic_load(&m.seen.n), 1);
	/* Collection 14 began at pause 3 * 13 = 39. */
	uint32_t h;
	cr_assert(hp_marks_horizon(&m, &h));
	cr_assert_eq(h, 39, "cover %u", h);
	cr_assert_eq(hp_marks_age(&m, 39), 1);
	cr_assert_eq(hp_marks_age(&m, 40), 0, "allocated after collection 14 began: maybe young at the major");
	/* A requested major: it begins after the request, and is the request's. */
	for (int c = 36; c <= 39; c++)
		z_collection(false);
	uint64_t seen_before = atomic_load(&m.seen.n);
	uint32_t at_request = z_pause;
	z_collection(true);             /* 40: pushes 35's, holds 40's */
	cr_assert_eq(atomic_load(&m.seen.n), seen_before + 1);
	hp_marks_requested(&m, at_request, seen_before, z_pause);
	cr_assert_eq(atomic_load(&m.requested.n), 1, "the request's own entry");
	int64_t start;
	cr_assert(hp_marks_last_start(&m, &start));
	cr_assert_eq(start, z_far + at_request, "its start: the Major Mark Start pause, not the request");
	z_collection(true);             /* 41: 40 was consumed by the request */
	cr_assert_eq(atomic_load(&m.seen.n), seen_before + 1);
}

/* The cover learnt (marks.h, z_back): a sample found cleared is one an
 * old marking judged, promoted by then. The newest birth among those found
 * since a major began, in young collections before it, plus one, the
 * largest of the last majors (from the second on), is how far back the
 * next major's cover is taken; not from a major we asked for (its young
 * collection promotes all). Fails on the code before (cover 69: 16
 * collections back). */
Test(marks, generational_z_cover_learnt_from_what_majors_clear)
{
	z_fresh();
	for (int c = 1; c <= 29; c++)
		z_collection(false);
	z_collection(true);             /* 30 */
	for (int c = 31; c <= 34; c++)
		z_collection(false);
	atomic_store(&m.z_dead_newest, 72 + 1);         /* born at collection 25's first pause: age 6 at 30 */
	z_collection(true);             /* 35: one age learnt, not used yet */
	cr_assert_eq(atomic_load(&m.z_back), HP_Z_PROMOTED_AFTER);
	for (int c = 36; c <= 39; c++)
		z_collection(false);
	atomic_store(&m.z_dead_newest, 90 + 1);         /* collection 31's: 5 at 35 */
	z_collection(true);             /* 40: the largest of 6 and 5 */
	cr_assert_eq(atomic_load(&m.z_back), 6, "z_back %u", atomic_load(&m.z_back));
	cr_assert_eq(HP_Z_BACK_MIN, 4, "this test's ages are above the floor");
	for (int c = 41; c <= 44; c++)
		z_collection(false);
	z_collection(true);             /* 45: 40's counted */
	uint32_t h;
	cr_assert(hp_marks_horizon(&m, &h));
	cr_assert_eq(h, 99, "cover %u: collection 34's first pause (16 back: 69)", h);
	cr_assert_eq(hp_marks_age(&m, 99), 1);
	cr_assert_eq(hp_marks_age(&m, 100), 0, "born after collection 34 began: maybe young at the major");
	/* A major we asked for teaches nothing, however young its deaths. */
	atomic_store(&m.z_requesting, true);
	for (int c = 46; c <= 49; c++)
		z_collection(false);
	z_collection(true);             /* 50, ours */
	atomic_store(&m.z_requesting, false);
	for (int c = 51; c <= 54; c++)
		z_collection(false);
	atomic_store(&m.z_dead_newest, 3 * 49 + 1);     /* collection 50's: age 1 at 50 */
	z_collection(true);             /* 55 */
	cr_assert_eq(atomic_load(&m.z_back), 6, "nothing learnt from a requested major");
	/* Only old deaths (a quiet program): the cover long again, at most
	 * HP_Z_PROMOTED_AFTER back. */
	for (int c = 56; c <= 59; c++)
		z_collection(false);
	atomic_store(&m.z_dead_newest, 1);              /* born before collection 1: age 55 at 55 */
	z_collection(true);             /* 60 */
	cr_assert_eq(atomic_load(&m.z_back), HP_Z_PROMOTED_AFTER);
	/* The largest of the last HP_Z_AGES: one age 1 after a 16 leaves 16. */
	for (int c = 0; c < 4; c++)
		z_collection(false);
	atomic_store(&m.z_dead_newest, z_pause - 3 + 1);
	z_collection(true);
	cr_assert_eq(atomic_load(&m.z_back), HP_Z_PROMOTED_AFTER, "the largest of the last 4, not the latest");
	/* Never under HP_Z_BACK_MIN: every death at the youngest ages (majors
	 * that promoted all, an allocation stall's). */
	for (int k = 0; k < HP_Z_AGES + 1; k++) {
		for (int c = 0; c < 4; c++)
			z_collection(false);
		atomic_store(&m.z_dead_newest, z_pause - 3 + 1);       /* the latest collection's first pause */
		z_collection(true);
	}
	cr_assert_eq(atomic_load(&m.z_back), HP_Z_BACK_MIN);
}

/* A requested major waits its turn (young collections meanwhile: 0.2 to
 * 3.5 s under load), runs major_full_preclean (a young collection that
 * promotes everything) and begins at the next collection's first pause:
 * the old marking judges every sample allocated before the preclean
 * began, so that is its cover, not the request's pause count (with which
 * the samples allocated during the wait were judged by no marking and the
 * view read 15-48% low). Fails on the code before start_cover (cover 60). */
Test(marks, generational_z_requested_major_covers_what_its_preclean_promoted)
{
	z_fresh();
	for (int c = 1; c <= 20; c++)
		z_collection(false);
	uint64_t seen_before = atomic_load(&m.seen.n);
	uint32_t at_request = z_pause;
	for (int c = 21; c <= 24; c++)
		z_collection(false);    /* the wait */
	uint32_t preclean = z_pause;
	z_collection(false);            /* 25: the preclean */
	z_collection(true);             /* 26: Major Mark Start */
	hp_marks_requested(&m, at_request, seen_before, z_pause);
	uint32_t h;
	cr_assert(hp_marks_horizon(&m, &h));
	cr_expect_eq(h, preclean, "cover %u, want %u (request at %u)", h, preclean, at_request);
	cr_expect_eq(hp_marks_age(&m, preclean), 1);
	cr_expect_eq(hp_marks_age(&m, preclean + 1), 0, "allocated during the preclean: young at the major");
	/* Without the preclean seen (the callback missed its first pause),
	 * the request's own count stays. */
	z_fresh();
	for (int c = 1; c <= 20; c++)
		z_collection(false);
	at_request = z_pause;
	seen_before = atomic_load(&m.seen.n);
	z_young += 4;                   /* four collections the callback never saw */
	z_pause += 12;
	z_collection(true);
	hp_marks_requested(&m, at_request, seen_before, z_pause);
	cr_assert(hp_marks_horizon(&m, &h));
	cr_expect_eq(h, at_request, "cover %u, want the request's %u", h, at_request);
}

/* Generational ZGC's pauses one at a time, as hp_marks_on_gc sees them:
 * a young collection's three (its Mark Start bumps the collection count,
 * a major's also `starts`), and an old one (Mark End, Relocate Start)
 * among them. */
static void z_event(bool mark_start, bool major)
{
	if (mark_start)
		z_young++;
	if (major)
		z_starts++;
	uint64_t was = m.starts_seen;
	hp_marks_observe_starts(&m, z_starts, z_young, z_far + z_pause, z_pause);
	hp_marks_observe_z_end(&m, z_young, m.starts_seen != was, z_pause);
	z_pause++;
}

static void z_young_collection(bool major)
{
	z_event(true, major);
	z_event(false, false);
	z_event(false, false);
}

/* A major as under load: its young collection, then its old Mark End
 * after the next young collection and its Relocate Start after the one
 * after that (extra: a Mark End repeated, one pause more); `at_end`: the
 * seen count right after the Relocate Start. */
static void z_major_cycle(int extra, uint64_t *at_end)
{
	z_young_collection(true);
	z_young_collection(false);
	for (int k = 0; k <= extra; k++)
		z_event(false, false);  /* old Mark End */
	z_young_collection(false);
	z_event(false, false);          /* old Relocate Start */
	if (at_end)
		*at_end = atomic_load(&m.seen.n);
	z_young_collection(false);
	z_young_collection(false);
}

/* A major is counted at its old Relocate Start (the weak references its
 * old marking found dead cleared by then), not when the next begins
 * (0.5-1 s later under load), once majors in a row showed two old pauses
 * each; a Mark End repeated starts that run again, fewer than two turn it
 * off for good. Fails on the code before z_end (counted at the next start
 * only). */
Test(marks, generational_z_major_counted_at_its_old_relocate_start)
{
	z_fresh();
	for (int c = 1; c <= 20; c++)
		z_young_collection(false);
	uint64_t n0 = atomic_load(&m.seen.n), at_end;
	z_major_cycle(0, &at_end);      /* learning: counted when the next begins */
	cr_expect_eq(at_end, n0, "not counted at its end before the steps are known");
	for (int k = 0; k < HP_Z_END_STEPS; k++)
		z_major_cycle(0, NULL);
	cr_expect_eq(atomic_load(&m.z_end), 1, "%d majors in a row with two old pauses: trusted", HP_Z_END_STEPS);
	uint64_t before = atomic_load(&m.seen.n);
	uint32_t began = z_pause;
	z_major_cycle(0, &at_end);
	cr_expect_eq(at_end, before + 1, "counted at its old Relocate Start");
	int64_t start;
	cr_assert(hp_marks_last_start(&m, &start));
	cr_expect_eq(start, z_far + began, "its start: the Major Mark Start pause");
	uint64_t after = atomic_load(&m.seen.n);
	z_young_collection(true);       /* the next major: nothing more to count */
	cr_expect_eq(atomic_load(&m.seen.n), after, "not counted twice");
	/* A request in flight: its major is the requester's. */
	atomic_store(&m.z_requesting, true);
	before = atomic_load(&m.seen.n);
	z_young_collection(false);
	z_event(false, false);
	z_young_collection(false);
	z_event(false, false);
	cr_expect_eq(atomic_load(&m.seen.n), before, "not pushed while a request is in flight");
	atomic_store(&m.z_requesting, false);
	z_young_collection(false);
	z_young_collection(false);
	/* A Mark End repeated: learnt again from the next start. */
	z_major_cycle(1, NULL);
	z_young_collection(true);
	cr_expect_eq(m.z_end_run, 0, "a major with three old pauses starts the run again");
	cr_expect_eq(atomic_load(&m.z_end), 0, "learning again");
	z_young_collection(false);
	z_event(false, false);
	z_young_collection(false);
	before = atomic_load(&m.seen.n);
	z_event(false, false);
	cr_expect_eq(atomic_load(&m.seen.n), before, "while learning, not at its Relocate Start");
	z_young_collection(false);
	for (int k = 0; k < HP_Z_END_STEPS - 1; k++)
		z_major_cycle(0, NULL);
	z_young_collection(true);
	cr_expect_eq(atomic_load(&m.z_end), 1, "trusted again after %d in a row", HP_Z_END_STEPS);
	z_young_collection(false);
	z_event(false, false);
	z_young_collection(false);
	z_event(false, false);
	z_young_collection(false);
	/* One old pause between two starts: off for good. */
	z_young_collection(true);
	z_young_collection(false);
	z_event(false, false);
	z_young_collection(false);
	z_young_collection(true);
	cr_expect_eq(atomic_load(&m.z_end), -1, "fewer than two old pauses: not read");
	before = atomic_load(&m.seen.n);
	z_young_collection(false);
	z_event(false, false);
	z_young_collection(false);
	z_event(false, false);
	z_young_collection(false);
	cr_expect_eq(atomic_load(&m.seen.n), before, "off: counted only when the next begins");
	z_young_collection(true);
	cr_expect_eq(atomic_load(&m.seen.n), before + 1);
}

/* Trusted, as after generational_z_major_counted_at_its_old_relocate_start's
 * first part, from pause count `from`. */
static void z_trusted_from(uint32_t from)
{
	z_fresh();
	z_pause = from;
	for (int c = 1; c <= 20; c++)
		z_young_collection(false);
	for (int k = 0; k <= HP_Z_END_STEPS; k++)
		z_major_cycle(0, NULL);
	cr_assert_eq(atomic_load(&m.z_end), 1);
}

/* The old Mark End inside a young collection (between its Mark Start and
 * Mark End, as under load): that young collection is counted whole, so
 * the old Relocate Start after it is still where the major is counted,
 * and not a pause before; likewise where the pause count wraps. */
Test(marks, generational_z_major_end_with_an_old_pause_inside_a_young_collection)
{
	for (int w = 0; w < 2; w++) {
		z_trusted_from(w ? UINT32_MAX - 150 : 0);      /* w: the count wraps in the second of these majors */
		for (int k = 0; k < 3; k++) {
			uint64_t before = atomic_load(&m.seen.n);
			z_young_collection(true);
			z_event(true, false);   /* a young Mark Start */
			z_event(false, false);  /* old Mark End */
			cr_expect_eq(atomic_load(&m.seen.n), before, "not at its old Mark End (wrap %d)", w);
			z_event(false, false);  /* young Mark End */
			z_event(false, false);  /* young Relocate Start */
			z_young_collection(false);
			cr_expect_eq(atomic_load(&m.seen.n), before, "not before its old Relocate Start (wrap %d)", w);
			z_event(false, false);  /* old Relocate Start */
			cr_expect_eq(atomic_load(&m.seen.n), before + 1, "at its old Relocate Start (wrap %d)", w);
			z_young_collection(false);
		}
		cr_expect_eq(atomic_load(&m.z_end), 1, "still trusted (wrap %d)", w);
	}
}

/* A requested major while trusted: the requester's, counted once (its
 * entry in the requested ring, none in the seen ring); and an own major
 * held back by the request is counted when the next one begins. */
Test(marks, generational_z_requested_major_counted_once_while_trusted)
{
	z_trusted_from(0);
	uint64_t seen_before = atomic_load(&m.seen.n), req_before = atomic_load(&m.requested.n);
	uint32_t at_request = z_pause;
	atomic_store(&m.z_requesting, true);
	z_young_collection(false);      /* the preclean */
	z_major_cycle(0, NULL);
	hp_marks_requested(&m, at_request, seen_before, z_pause);
	atomic_store(&m.z_requesting, false);
	cr_expect_eq(atomic_load(&m.seen.n), seen_before, "not an own major");
	cr_expect_eq(atomic_load(&m.requested.n), req_before + 1, "the request's own entry");
	z_young_collection(true);       /* the next major begins: nothing held */
	cr_expect_eq(atomic_load(&m.seen.n), seen_before);
	/* An own major under way when a request begins: held, then counted
	 * when the next (the requested one) begins. */
	z_young_collection(false);
	z_event(false, false);
	z_young_collection(false);
	z_event(false, false);          /* its old Relocate Start: trusted, counted */
	cr_expect_eq(atomic_load(&m.seen.n), seen_before + 1);
	z_young_collection(false);
	z_young_collection(true);       /* an own major */
	atomic_store(&m.z_requesting, true);
	z_young_collection(false);
	z_event(false, false);
	z_young_collection(false);
	z_event(false, false);
	cr_expect_eq(atomic_load(&m.seen.n), seen_before + 1, "held while a request is in flight");
	z_young_collection(false);      /* the preclean */
	z_young_collection(true);       /* the requested major begins: the held one counted */
	cr_expect_eq(atomic_load(&m.seen.n), seen_before + 2);
	atomic_store(&m.z_requesting, false);
}

/* A periodic profile on generational ZGC waits for an own major that
 * begins after it was asked for and ends (its old Relocate Start), not the
 * one under way when it asked; and waits for none once majors stopped.
 * Majors 1 s apart on the real clock (the wait reads it); the GC events
 * from a second thread. The code before had no wait: a periodic profile
 * asked within the budget, or kept the last major, begun before it. */
static int64_t z_second_began;
static _Atomic int z_go;

static void z_at_now(void)
{
	z_far = hp_mono_ns() - (int64_t)z_pause;        /* the next event's time: now */
}

static void *z_majors_later(void *arg)
{
	(void)arg;
	/* From just before the wait's call (a loaded machine may hold the
	 * caller between the thread's start and the call). */
	while (!atomic_load(&z_go))
		sched_yield();
	struct timespec ts = { 0, 200 * 1000000 };
	nanosleep(&ts, NULL);
	z_at_now();
	z_event(false, false);          /* the major under way: old Mark End */
	z_young_collection(false);
	z_event(false, false);          /* ... its old Relocate Start: counted, begun before the ask */
	z_young_collection(false);
	nanosleep(&ts, NULL);
	z_second_began = hp_mono_ns();
	z_at_now();
	z_major_cycle(0, NULL);         /* begun after the ask, ended */
	return NULL;
}

Test(marks, generational_z_periodic_profile_waits_for_an_own_major_begun_after_it)
{
	const int64_t s = 1000000000;
	z_fresh();
	int64_t t = hp_mono_ns() - (HP_Z_END_STEPS + 1) * s;
	z_far = t;
	for (int c = 1; c <= 20; c++)
		z_young_collection(false);
	for (int k = 0; k <= HP_Z_END_STEPS; k++) {
		z_far = t + k * s - (int64_t)z_pause;   /* majors 1 s apart */
		z_major_cycle(0, NULL);
	}
	cr_assert_eq(atomic_load(&m.z_end), 1);
	/* A major under way, begun just before the ask. */
	z_at_now();
	z_young_collection(true);
	z_young_collection(false);
	uint64_t seen0 = atomic_load(&m.seen.n);
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, z_majors_later, NULL), 0);
	int64_t t0 = hp_mono_ns();
	atomic_store(&z_go, 1);
	int came = hp_marks_await_z_major(&m, NULL, NULL);
	int64_t back = hp_mono_ns();
	pthread_join(th, NULL);
	cr_assert_eq(came, 1, "waited for it: %d, %s", came, m.last_request);
	cr_expect_geq(back, z_second_began, "not the major under way when it asked");
	cr_expect_eq(atomic_load(&m.seen.n), seen0 + 2);
	int64_t start;
	cr_assert(hp_marks_last_start(&m, &start));
	cr_expect_gt(start, t0, "counted one begun after the ask");
	cr_expect(strncmp(m.last_request, "none: a major", 13) == 0, "%s", m.last_request);
	cr_expect_eq(m.own_waits, 1);
	cr_expect_eq(m.own_waits_ok, 1);
	/* Told to stop (the exit hook, the agent thread's stop): at once. */
	_Atomic int stop = 1;
	t0 = hp_mono_ns();
	cr_expect_eq(hp_marks_await_z_major(&m, NULL, &stop), 0);
	cr_expect_lt(hp_mono_ns() - t0, s / 10, "stops at once");
	cr_expect_eq(m.own_waits, 2, "a wait begun");
	cr_expect_eq(m.own_waits_ok, 1);
	/* Majors stopped (the latest began over two gaps ago): no wait. */
	struct timespec ts = { 2, 200 * 1000000 };
	nanosleep(&ts, NULL);
	t0 = hp_mono_ns();
	cr_expect_eq(hp_marks_await_z_major(&m, NULL, NULL), 0);
	cr_expect_lt(hp_mono_ns() - t0, s / 10, "asks at once");
	cr_expect_eq(m.own_waits, 2, "no wait counted");
	/* Not generational ZGC: not for this wait. */
	fresh(0, 0);
	cr_expect_eq(hp_marks_await_z_major(&m, NULL, NULL), -ENOTSUP);
}

/* Shenandoah: a requested cycle begins at the first pause whose cause is
 * System.gc() after the request (a young cycle under way runs first), and
 * judges what was allocated before that pause; without the cause
 * (-XX:-UsePerfData, other collectors) the request's count and time stay. */
Test(marks, shenandoah_requested_cycle_begins_at_its_first_explicit_pause)
{
	fresh(0, 0);
	int64_t far = hp_mono_ns() + (int64_t)1000000000000;
	uint64_t seen_before = atomic_load(&m.seen.n);
	hp_marks_arm_explicit(&m);
	uint32_t at_request = 10;
	hp_marks_observe_explicit(&m, 0, far - 5, 11);  /* the young cycle under way: its last pause */
	hp_marks_observe_explicit(&m, 1, far, 14);      /* Init Mark of the asked-for global cycle */
	hp_marks_observe_explicit(&m, 1, far + 9, 15);  /* Final Mark: the same cycle */
	hp_marks_requested(&m, at_request, seen_before, 17);
	uint32_t h;
	cr_assert(hp_marks_horizon(&m, &h));
	cr_expect_eq(h, 14, "cover %u: the pause count before Init Mark, not the request's %u", h, at_request);
	int64_t began;
	cr_assert(hp_marks_last_start(&m, &began));
	cr_expect_eq(began, far, "began at Init Mark's end, not at the request");
	cr_expect_eq(hp_marks_age(&m, 14), 1);
	cr_expect_eq(hp_marks_age(&m, 15), 0, "allocated during the cycle: live to SATB, not judged");
	/* The cause not readable: the request's own count and time. */
	fresh(0, 0);
	seen_before = atomic_load(&m.seen.n);
	hp_marks_arm_explicit(&m);
	hp_marks_observe_explicit(&m, -1, far, 14);
	hp_marks_requested(&m, at_request, seen_before, 17);
	cr_assert(hp_marks_horizon(&m, &h));
	cr_expect_eq(h, at_request);
	cr_assert(hp_marks_last_start(&m, &began));
	cr_expect_lt(began, far);
}

/* G1's young window: for a requested cycle (its cover exact), from the
 * pause after the cover (the concurrent start) to the Remark pause, which
 * `marked` shows at its end; none before a Remark is seen, none for an own
 * cycle (its cover a lower bound), none outside G1. */
Test(marks, g1_young_window_ends_at_remark)
{
	fresh(0, 0);
	m.g1_mode = true;
	m.request_cover = 8;
	m.request_end_pause = 12;
	uint32_t from, before;
	hp_marks_observe_marked(&m, 3, 10);     /* primed by fresh(): a Remark at pause 11 */
	cr_assert(hp_marks_young_window(&m, 8, &from, &before));
	cr_expect_eq(from, 9);
	cr_expect_eq(before, 11);
	cr_expect_not(hp_marks_young_window(&m, 10, &from, &before), "a Remark before the cycle's start is not its");
	hp_marks_observe_marked(&m, 3, 14);     /* no new Remark */
	cr_assert(hp_marks_young_window(&m, 8, &from, &before));
	cr_expect_eq(before, 11);
	cr_expect_not(hp_marks_young_window(&m, 9, &from, &before), "an own cycle's cover: no window");
	m.g1_mode = false;
	cr_expect_not(hp_marks_young_window(&m, 8, &from, &before));
}

/* An own G1 cycle whose start the canaries pinned to one pause (the
 * newest cleared canary released at pause 20, one released at 21 kept):
 * its cover exact, the window from its start to its Remark, as a
 * requested cycle's. Not for another cover, nor for a Remark after the
 * cycle ended (the next cycle's). */
Test(marks, g1_pinned_own_cycle_has_a_young_window)
{
	fresh(0, 0);
	m.g1_mode = true;
	m.g1_win_cover = 20;
	m.g1_win_from = 21;
	m.g1_win_done = 26;
	uint32_t from, before;
	cr_expect_not(hp_marks_young_window(&m, 20, &from, &before), "no Remark seen yet");
	hp_marks_observe_marked(&m, 3, 24);     /* a Remark at pause 25 */
	cr_assert(hp_marks_young_window(&m, 20, &from, &before));
	cr_expect_eq(from, 21);
	cr_expect_eq(before, 25);
	cr_expect_not(hp_marks_young_window(&m, 19, &from, &before), "a lower-bound cover: no window");
	cr_expect(from == before && before == 25, "but its Remark still ends it: %u, %u", from, before);
	hp_marks_observe_marked(&m, 4, 30);     /* a Remark at 31: after that cycle ended */
	cr_expect_not(hp_marks_young_window(&m, 20, &from, &before), "the next cycle's Remark");
	cr_expect(from == 31 && before == 31, "no window, but still referenced after a later Remark is alive: %u, %u",
		  from, before);
}

/* The bound on an own G1 cycle's start: the oldest canary released after
 * the newest cleared one (best 20; kept ones released at 23 and 25: 23),
 * or the pause before Remark if that is earlier; Remark alone pins a cycle
 * with no canary kept after `best`. No JNI here: only the canaries'
 * release counts are read. */
Test(marks, g1_start_bound_from_kept_canaries_and_remark)
{
	fresh(0, 0);
	m.g1_mode = true;
	m.g1_old[0].pause = 18;                 /* older than best: not a bound */
	m.g1_old[1].pause = 23;
	m.g1_old[2].pause = 25;
	m.g1_nold = 3;
	cr_expect_eq(hp_marks_g1_start_bound(&m, 20, 28), 23u, "no Remark seen: the kept canary");
	hp_marks_observe_marked(&m, 3, 25);     /* a Remark at pause 26: the start is at most 25 */
	cr_expect_eq(hp_marks_g1_start_bound(&m, 20, 28), 23u, "the canary is the tighter bound");
	hp_marks_observe_marked(&m, 4, 21);     /* a Remark at pause 22 (a later cycle's counts in a test) */
	cr_expect_eq(hp_marks_g1_start_bound(&m, 20, 28), 21u, "Remark at 22 pins the start at 21");
	m.g1_nold = 0;
	cr_expect_eq(hp_marks_g1_start_bound(&m, 20, 28), 21u, "with no canary kept after it");
	cr_expect_eq(hp_marks_g1_start_bound(&m, 20, 21), 0u, "a Remark after the cycle ended is not its");
	cr_expect_eq(hp_marks_g1_start_bound(&m, 21, 28), 0u, "a Remark right after best: nothing between");
}

/* An own G1 cycle the canaries bound but did not pin: the newest cleared
 * canary released at pause 20, the oldest kept one at 23, so the
 * concurrent start pause is 21, 22 or 23. The window opens at 23 (a sample
 * still referenced then was alive at the start, whichever it was), not at
 * 21 (young pauses before the start clear the young dead). Without it, G1
 * under load in `heapprobe top` (own cycles only, most not pinned) read
 * its cache 20-45% low: the young that died during the cycle were judged
 * dead at its start. */
Test(marks, g1_bounded_own_cycle_has_a_window_from_its_upper_bound)
{
	fresh(0, 0);
	m.g1_mode = true;
	m.g1_win_cover = 20;
	m.g1_win_from = 23;
	m.g1_win_done = 28;
	uint32_t from, before;
	hp_marks_observe_marked(&m, 3, 25);     /* a Remark at pause 26 */
	cr_assert(hp_marks_young_window(&m, 20, &from, &before));
	cr_expect_eq(from, 23);
	cr_expect_eq(before, 26);
	m.g1_win_from = 26;                     /* bound at the Remark itself: nothing inside */
	cr_expect_not(hp_marks_young_window(&m, 20, &from, &before));
	cr_expect(from == 26 && before == 26, "%u, %u", from, before);
	m.g1_mode = false;                      /* not G1: nothing known */
	cr_expect_not(hp_marks_young_window(&m, 20, &from, &before));
	cr_expect(from == 0 && before == 0, "%u, %u", from, before);
}

/* G1 with its count of cycles begun (hp_marking's starts_source): the
 * pause in which that count moved by one, with no full collection, is the
 * cycle's concurrent start. An own cycle seen complete at its Cleanup then
 * covers what was allocated before that pause and began at its end, not at
 * the previous marking's end (the lower bound without it), and its young
 * window opens from that pause, as a requested cycle's. */
static void g1_pause(uint64_t starts, uint64_t full, uint64_t concurrent, uint32_t pauses_before, bool known)
{
	int64_t now = hp_mono_ns();
	if (known)
		hp_marks_observe_g1_start(&m, starts, full, now, pauses_before);
	else
		hp_marks_observe_starts(&m, starts, 0, now, pauses_before);
	hp_marks_observe(&m, full, concurrent, pauses_before);
}

Test(marks, g1_own_cycle_covers_from_its_concurrent_start_pause)
{
	fresh(0, 0);
	m.g1_mode = true;
	g1_pause(0, 0, 1, 4, true);             /* cycle 1 ends at pause 5: its start was not seen */
	uint32_t h;
	cr_assert(hp_marks_horizon(&m, &h));
	cr_assert_eq(h, 0, "no start seen: the lower bound");
	for (uint32_t p = 5; p < 9; p++)
		g1_pause(0, 0, 1, p, true);     /* young pauses 6..9 */
	int64_t before_start = hp_mono_ns();
	g1_pause(1, 0, 1, 9, true);             /* pause 10: cycle 2's concurrent start */
	int64_t after_start = hp_mono_ns();
	g1_pause(1, 0, 1, 10, true);            /* young pauses 11, 12 */
	g1_pause(1, 0, 1, 11, true);
	hp_marks_observe_marked(&m, 1, 12);     /* Remark at pause 13 */
	g1_pause(1, 0, 2, 12, true);            /* Cleanup at pause 13 ends it */
	cr_assert(hp_marks_horizon(&m, &h));
	cr_expect_eq(h, 9, "everything allocated before the concurrent start pause");
	cr_expect_eq(hp_marks_age(&m, 9), 1);
	cr_expect_eq(hp_marks_age(&m, 10), 0, "allocated after its start: recent");
	int64_t last;
	cr_assert(hp_marks_last_start(&m, &last));
	cr_expect(last >= before_start && last <= after_start, "began at the end of pause 10");
	uint32_t from, before;
	cr_assert(hp_marks_young_window(&m, 9, &from, &before), "the window of an exact own cycle");
	cr_expect_eq(from, 10);
	cr_expect_eq(before, 13);
}

Test(marks, g1_start_not_taken_from_a_full_collection_or_an_unknown_count)
{
	fresh(0, 0);
	m.g1_mode = true;
	g1_pause(0, 0, 1, 4, true);             /* cycle 1 ends at pause 5 */
	g1_pause(1, 1, 1, 6, true);             /* pause 7: a full collection moves both */
	uint32_t h;
	cr_assert(hp_marks_horizon(&m, &h));
	cr_expect_eq(h, 6, "the full collection covers what preceded it");
	g1_pause(2, 1, 1, 9, false);            /* pause 10 begins a cycle, but the count is not known */
	g1_pause(2, 1, 2, 12, false);           /* its Cleanup at pause 13 */
	cr_assert(hp_marks_horizon(&m, &h));
	cr_expect_eq(h, 7, "the lower bound: the previous marking's end");
	uint32_t from, before;
	cr_expect_not(hp_marks_young_window(&m, 7, &from, &before));
	g1_pause(4, 1, 2, 15, true);            /* the count jumped by two: not a start to trust */
	g1_pause(4, 1, 3, 18, true);
	cr_assert(hp_marks_horizon(&m, &h));
	cr_expect_eq(h, 13);
}

/* A requested cycle's requester moves last_completion when its call
 * returns, which can be after the next own cycle began (G1 under load:
 * the requester sweeps at each pause before it returns). That own cycle
 * still covers only what preceded its own start pause, not what preceded
 * the requester's return. */
Test(marks, g1_own_cycle_begun_before_the_requester_returned)
{
	fresh(0, 0);
	m.g1_mode = true;
	uint64_t seen_before = atomic_load(&m.seen.n);
	g1_pause(1, 0, 0, 20, true);            /* pause 21: the requested cycle's concurrent start */
	g1_pause(1, 0, 1, 24, true);            /* its Cleanup at pause 25 */
	g1_pause(2, 0, 1, 26, true);            /* pause 27: an own cycle's concurrent start */
	hp_marks_requested(&m, 20, seen_before, 28);    /* the requester returns at pause count 28 */
	uint32_t h;
	cr_assert(hp_marks_horizon(&m, &h));
	cr_expect_eq(h, 20, "the requested cycle covers what preceded its start");
	g1_pause(2, 0, 2, 30, true);            /* the own cycle's Cleanup at pause 31 */
	cr_assert(hp_marks_horizon(&m, &h));
	cr_expect_eq(h, 26, "what preceded the own cycle's start pause, not the requester's return (28)");
	cr_expect_eq(hp_marks_age(&m, 27), 0);
}

/* The counters' guard: a count that goes back is no longer the
 * collector's, and nothing is counted from the counters after it. */
Test(marks, a_counter_that_goes_back_turns_the_counters_off)
{
	fresh(0, 0);
	const uint64_t a[HP_COUNTERS] = { 3, 7, 9, 8 }, b[HP_COUNTERS] = { 4, 7, 10, 8 },
		       back[HP_COUNTERS] = { 2, 7, 10, 8 }, later[HP_COUNTERS] = { 5, 7, 11, 8 };
	char text[300];
	hp_marks_counters_text(&m, text, sizeof(text));
	cr_assert(strstr(text, "none refused"), "%s", text);
	cr_assert(hp_marks_guard(&m, a, ALL_READ, 0, 10), "the first reading primes the guard");
	cr_assert(hp_marks_guard(&m, a, ALL_READ, 0, 11), "no counter moved");
	cr_assert(hp_marks_guard(&m, b, ALL_READ, 0, 12), "a full collection and a start in one pause");
	cr_assert_not(hp_marks_counters_off(&m));
	cr_assert_not(hp_marks_guard(&m, back, ALL_READ, 0, 13), "full went from 4 to 2");
	cr_assert(hp_marks_counters_off(&m));
	hp_marks_counters_text(&m, text, sizeof(text));
	cr_assert(strstr(text, "off: the collector's count of full collections went back from 4 to 2 at GC pause #14"),
		  "%s", text);
	cr_assert(strstr(text, "only requested markings count"), "%s", text);
	cr_assert_not(hp_marks_guard(&m, later, ALL_READ, 0, 14), "off for good, even when the readings look right again");
	/* A new start of the profiler does not trust it again. */
	hp_marks_reset(&m, NULL, 20);
	cr_assert_not(hp_marks_guard(&m, later, ALL_READ, 0, 21));
}

Test(marks, a_counter_that_jumps_turns_them_off_one_found_late_does_not)
{
	fresh(0, 0);
	const uint64_t zero[HP_COUNTERS] = { 0, 0, 0, 0 };
	cr_assert(hp_marks_guard(&m, zero, HP_MARKING_READ_FULL | HP_MARKING_READ_STARTS, 0, 1));
	/* JDK 11's perfdata opens after the first collections: the
	 * concurrent count was not read until then, not a jump. */
	const uint64_t found[HP_COUNTERS] = { 0, 40, 0, 41 };
	cr_assert(hp_marks_guard(&m, found, ALL_READ, 0, 2), "a counter found since the last reading");
	/* Two full collections in one pause (a young one failing into two
	 * full ones, the second clearing soft references). */
	const uint64_t two[HP_COUNTERS] = { 2, 40, 2, 41 };
	cr_assert(hp_marks_guard(&m, two, ALL_READ, 0, 3));
	const uint64_t step[HP_COUNTERS] = { 2, 40 + HP_COUNTER_STEP_MAX, 2, 41 };
	cr_assert(hp_marks_guard(&m, step, ALL_READ, 0, 4), "at most HP_COUNTER_STEP_MAX is still one collection's");
	const uint64_t jump[HP_COUNTERS] = { 2, 40 + 2 * HP_COUNTER_STEP_MAX + 1, 2, 41 };
	cr_assert_not(hp_marks_guard(&m, jump, ALL_READ, 0, 5));
	char text[300];
	hp_marks_counters_text(&m, text, sizeof(text));
	cr_assert(strstr(text, "off: the collector's count of concurrent cycles rose by 9 (48 to 57) in GC pause #6"),
		  "%s", text);
}

/* The count of full collections goes back at the second reading: the
 * counters are off. */
static void counters_gone_back(void)
{
	const uint64_t a[HP_COUNTERS] = { 5, 0, 0, 0 }, back[HP_COUNTERS] = { 1, 0, 0, 0 };
	cr_assert(hp_marks_guard(&m, a, ALL_READ, 0, 1));
	cr_assert_not(hp_marks_guard(&m, back, ALL_READ, 0, 2));
}

Test(marks, counters_off_make_the_own_cycles_uncounted_unless_canaries_count_them)
{
	fresh(0, 0);
	cr_assert_not(hp_marks_own_uncounted(&m));
	counters_gone_back();
	cr_assert(hp_marks_own_uncounted(&m), "G1, Parallel, Serial: only requests judge samples now");
	m.canary_on = true;             /* single-generation ZGC, Shenandoah: canaries are no counter */
	cr_assert_not(hp_marks_own_uncounted(&m));
	m.g1_mode = true;               /* G1's canaries only find starts: the count was the counters' */
	cr_assert(hp_marks_own_uncounted(&m));
}

/* After the guard, a requested marking still verifies what came before it
 * (the requester pushes it: the callback saw no counter move). */
Test(marks, a_requested_marking_counts_with_the_counters_off)
{
	fresh(0, 0);
	counters_gone_back();
	uint64_t seen = atomic_load(&m.seen.n);
	hp_marks_requested(&m, 9, seen, 12);
	uint32_t h;
	cr_assert(hp_marks_horizon(&m, &h));
	cr_assert_eq(h, 9);
	cr_assert_eq(hp_marks_age(&m, 9), 1);
	cr_assert_eq(hp_marks_age(&m, 10), 0);
}

/* Full collections with no GC event (heap inspections, dumps) move the
 * count of full collections between events, and the collections counted
 * with it: allowed on top. */
Test(marks, full_collections_without_an_event_are_no_jump)
{
	fresh(0, 0);
	const uint64_t a[HP_COUNTERS] = { 1, 0, 1, 0 }, b[HP_COUNTERS] = { 13, 0, 13, 0 },
		       c[HP_COUNTERS] = { 30, 0, 13, 0 };
	cr_assert(hp_marks_guard(&m, a, ALL_READ, 100, 1));
	/* 12 histograms of live objects since the last pause, and this one. */
	cr_assert(hp_marks_guard(&m, b, ALL_READ, 113, 2));
	/* 17 more full collections than the 2 collections counted since. */
	cr_assert_not(hp_marks_guard(&m, c, ALL_READ, 115, 3));
}

/* hp_marks_on_gc's bookkeeping behind the guard: a full collection is
 * counted while the counters are trusted, nothing once they are off. */
Test(marks, nothing_is_counted_from_the_counters_once_off)
{
	fresh(0, 0);
	struct hp_marking mk = { .sz = sizeof(mk), .full = 2 };
	hp_marks_on_reading(&m, &mk, 10, hp_mono_ns(), 5);
	uint64_t n = atomic_load(&m.seen.n);
	mk.full = 3;
	hp_marks_on_reading(&m, &mk, 11, hp_mono_ns(), 6);
	cr_assert_eq(atomic_load(&m.seen.n), n + 1, "a full collection, counted");
	mk.full = 1;                    /* back */
	hp_marks_on_reading(&m, &mk, 12, hp_mono_ns(), 7);
	cr_assert(hp_marks_counters_off(&m));
	mk.full = 4;                    /* a full collection by the counter, refused */
	hp_marks_on_reading(&m, &mk, 13, hp_mono_ns(), 8);
	mk.full = 5;
	hp_marks_on_reading(&m, &mk, 14, hp_mono_ns(), 9);
	cr_assert_eq(atomic_load(&m.seen.n), n + 1, "counted after the counters were turned off");
}

/* A counter read all along that reads 0 and then jumps is no counter
 * found late: `full` (located with the probe, before any collection)
 * and G1's perfdata count alike. */
Test(marks, a_counter_read_at_zero_that_jumps_is_refused)
{
	static const struct {
		uint64_t jump[HP_COUNTERS];
		uint32_t pause;
		const char *says;
	} cases[] = {
		{ { 1000, 0, 0, 0 }, 8, "count of full collections rose by 1000" },
		{ { 0, 500, 0, 500 }, 2, "count of concurrent cycles rose by 500 (0 to 500)" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fresh(0, 0);
		const uint64_t zero[HP_COUNTERS] = { 0, 0, 0, 0 };
		cr_assert(hp_marks_guard(&m, zero, ALL_READ, 0, 1));
		cr_assert_not(hp_marks_guard(&m, cases[i].jump, ALL_READ, 1, cases[i].pause), "case %zu", i);
		char text[300];
		hp_marks_counters_text(&m, text, sizeof(text));
		cr_assert(strstr(text, cases[i].says), "%s", text);
	}
}

/* Generational Shenandoah's own whole-heap marking through the GC
 * callback's reading (hp_marks_on_reading, shcycles.c): counted with its
 * bootstrap's cover and its young window, from the bootstrap's weak roots
 * to its own Final Mark (hp_marks_young_window); not counted where the
 * collector's cause cannot be read, nor when it is the request's. */
static void sh_pauses(const int *phases, int n, int cause, uint32_t *pauses)
{
	for (int i = 0; i < n; i++) {
		struct hp_marking mk = { .sz = sizeof(mk), .phase = phases[i], .explicit_cycle = cause };
		hp_marks_on_reading(&m, &mk, 0, hp_mono_ns(), (*pauses)++);
	}
}

enum { Y = HP_PHASE_MARKING | HP_PHASE_YOUNG_MARKING, O = HP_PHASE_OLD_MARKING, W = HP_PHASE_WEAK_ROOTS,
       E = HP_PHASE_EVACUATION | HP_PHASE_FORWARDED, U = HP_PHASE_UPDATE_REFS | HP_PHASE_FORWARDED };

Test(marks, generational_shenandoah_old_marking_counted_with_its_young_window)
{
	/* idle, bootstrap Init Mark (cover 1), its Final Mark, Init and Final
	 * Update Refs, a young cycle during the old marking, the old Final
	 * Mark (pause #9), the next Init Mark */
	const int seq[] = { 0, Y | O, O | HP_PHASE_MARKING | W | E, O | HP_PHASE_MARKING | U, O | HP_PHASE_MARKING,
			    Y | O, O | HP_PHASE_MARKING | W | E, O | HP_PHASE_MARKING | U, O | HP_PHASE_MARKING, W, Y };
	fresh(0, 0);
	__atomic_store_n(&m.sh_on, true, __ATOMIC_RELEASE);
	uint32_t pauses = 0, h, from = 0, before = 0;
	sh_pauses(seq, 10, 0, &pauses);
	cr_assert_not(hp_marks_horizon(&m, &h), "its weak roots are not done yet");
	sh_pauses(seq + 10, 1, 0, &pauses);
	cr_assert(hp_marks_horizon(&m, &h));
	cr_expect_eq(h, 1, "the bootstrap's Init Mark came after one pause");
	cr_assert(hp_marks_young_window(&m, h, &from, &before));
	cr_expect_eq(from, 4, "after the bootstrap's Init Update Refs (pause #3), its weak roots done");
	cr_expect_eq(before, 10, "the old Final Mark is pause #9");
	cr_expect_not(hp_marks_young_window(&m, h + 1, &from, &before), "another marking's cover has no window");
	/* The cause not readable: not counted. */
	fresh(0, 0);
	__atomic_store_n(&m.sh_on, true, __ATOMIC_RELEASE);
	pauses = 0;
	sh_pauses(seq, 11, -1, &pauses);
	cr_expect_not(hp_marks_horizon(&m, &h));
	/* The request's (armed, its pauses naming System.gc() from its Init
	 * Mark on, which takes the arming): left to it. */
	fresh(0, 0);
	__atomic_store_n(&m.sh_on, true, __ATOMIC_RELEASE);
	pauses = 0;
	sh_pauses(seq, 1, 0, &pauses);
	hp_marks_arm_explicit(&m);
	sh_pauses(seq + 1, 10, 1, &pauses);
	cr_expect_not(hp_marks_horizon(&m, &h));
	cr_expect_eq(m.sh.w_done, 1);
	cr_expect_eq(m.sh.w_counted, 0);
}
