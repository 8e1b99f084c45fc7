/* cohort.c: a site whose young samples die together at one sweep, where
 * they never died before, is found dropped; caches, garbage and FIFO
 * queues are not. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "agent/coin.h"
#include "agent/cohort.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static double uniform(void)
{
	return (double)(hp_coin_next(&rng) >> 11) / 9007199254740992.0;
}

Test(cohort, the_test_of_one_sweep)
{
	/* A list: 300 young samples seen, none dead (q = 0.0017): a run of 4
	 * dead among 6 is a drop (6 q^4 = 5e-11). */
	cr_expect(hp_cohort_is_drop(300, 0, 6, 4));
	cr_expect(!hp_cohort_is_drop(300, 0, 6, 3), "3 dead: too few");
	cr_expect(!hp_cohort_is_drop(20, 0, 6, 4), "too little seen before");
	/* A cache turning over at random (q = 0.5), garbage (q ~ 1): not looked at. */
	cr_expect(!hp_cohort_is_drop(300, 150, 8, 8));
	cr_expect(!hp_cohort_is_drop(300, 299, 50, 50));
	/* A site whose young die now and then (q = 0.0205): a run of 6 among
	 * 10 is 8e-10, of 7 2e-11. */
	cr_expect(!hp_cohort_is_drop(1000, 20, 10, 6));
	cr_expect(hp_cohort_is_drop(1000, 20, 10, 7));
}

/* One sweep, 100 ms after born0, of young samples of `site`, one per ms
 * from born0 in the order of `pattern` ('a' still referenced, 'd' found
 * cleared). */
#define SWEEP_AFTER 100000000
static void sweep_of(struct hp_cohort *c, uint32_t site, const char *pattern, int64_t born0, bool young_only)
{
	hp_cohort_sweep_begin(c, young_only, born0 + SWEEP_AFTER);
	for (int i = 0; pattern[i]; i++)
		hp_cohort_seen(c, site, pattern[i] == 'd', born0 + (int64_t)i * 1000000);
	hp_cohort_sweep_end(c, true);
}

static void sweep(struct hp_cohort *c, uint32_t site, int n, int dead, int64_t born0, bool young_only)
{
	char p[64];
	for (int i = 0; i < n; i++)
		p[i] = i < dead ? 'd' : 'a';
	p[n] = 0;
	sweep_of(c, site, p, born0, young_only);
}

static void marking_judges(struct hp_cohort *c, uint32_t site, int64_t born0, int n, int64_t step, int64_t dead_to,
			   int64_t start);
static void one_marking(struct hp_cohort *c, uint32_t site, int64_t born0, int n, int64_t step, int64_t dead_to,
			int64_t start);

/* `sweeps` sweeps 100 ms apart from `t` in which the site's 8 young
 * samples all live (a list growing), then one at the next 100 ms in which
 * the first `dead` of them are found cleared; returns that one's time. */
static int64_t grow_then_drop(struct hp_cohort *c, uint32_t site, int64_t t, int sweeps, int dead)
{
	for (int k = 0; k < sweeps; k++, t += 100000000)
		sweep(c, site, 8, 0, t, true);
	sweep(c, site, 8, dead, t, true);
	return t;
}

Test(cohort, a_list_dropped_is_found_and_ends_with_the_next_marking)
{
	struct hp_cohort c;
	cr_assert_eq(hp_cohort_init(&c, 8), 0);
	int64_t t = 1000000000;
	for (int k = 0; k < 60; k++, t += 100000000)
		sweep(&c, 3, 8, 0, t, true);            /* growing: its young never die */
	cr_expect(!hp_cohort_dropped(&c, 3, t));
	/* Dropped: the 5 young born before it die at the next young pause, the 3 born after live. */
	sweep(&c, 3, 8, 5, t, true);
	int64_t last_dead = t + 4 * 1000000;
	cr_expect_eq(c.drops, 1u);
	cr_expect(hp_cohort_dropped(&c, 3, t - 5000000000), "an old sample of the list, verified or not: dead");
	cr_expect(hp_cohort_dropped(&c, 3, last_dead), "born with the last of the young dead: dead");
	cr_expect(!hp_cohort_dropped(&c, 3, last_dead + 1), "born after: the new list");
	cr_expect(!hp_cohort_dropped(&c, 2, t - 5000000000), "other sites untouched");
	/* A marking that began before the sweep that found the drop may have
	 * begun before the drop (and judged the list alive): it does not end
	 * it; one that began after does. */
	hp_cohort_marking(&c, last_dead + 1);
	cr_expect(hp_cohort_dropped(&c, 3, last_dead));
	hp_cohort_marking(&c, t + SWEEP_AFTER - 1);
	cr_expect(hp_cohort_dropped(&c, 3, last_dead));
	hp_cohort_marking(&c, t + SWEEP_AFTER + 1);
	cr_expect(!hp_cohort_dropped(&c, 3, last_dead));
	cr_expect_eq(c.nstanding, 0u);
	/* The drop did not count as the site's own young deaths: the next is found as quickly. */
	for (int k = 0; k < 5; k++, t += 100000000)
		sweep(&c, 3, 8, 0, t + 100000000, true);
	sweep(&c, 3, 8, 4, t + 100000000, true);
	cr_expect_eq(c.drops, 2u);
	hp_cohort_free(&c);
}

/* Young samples promoted before the drop look alive until a marking; the
 * run of those cleared is whole, and the promoted, older, count dead. A
 * run broken by one still referenced is two runs. */
Test(cohort, the_run_in_birth_order_not_all_the_young)
{
	struct hp_cohort c;
	cr_assert_eq(hp_cohort_init(&c, 8), 0);
	int64_t t = 1000000000;
	for (int k = 0; k < 60; k++, t += 100000000) {
		sweep(&c, 1, 10, 0, t, true);
		sweep_of(&c, 2, k % 5 ? "aaaaaaaaaa" : "aaaaadaaaa", t, true);    /* q ~ 0.02 */
		sweep_of(&c, 3, k % 5 ? "aaaaaaaaaa" : "aaaaadaaaa", t, true);
	}
	sweep_of(&c, 1, "aaadddddaa", t, true);
	cr_expect_eq(c.drops, 1u);
	cr_expect(hp_cohort_dropped(&c, 1, t), "promoted before the drop: dead");
	cr_expect(hp_cohort_dropped(&c, 1, t + 7 * 1000000));
	cr_expect(!hp_cohort_dropped(&c, 1, t + 8 * 1000000));
	/* q ~ 0.02: runs of 3 and 4 among 10 are 2e-6, not a drop; a run of 7, 1e-11, is. */
	sweep_of(&c, 2, "dddaddddaa", t, true);
	cr_expect_eq(c.drops, 1u);
	cr_expect(!hp_cohort_dropped(&c, 2, t));
	sweep_of(&c, 3, "dddddddaaa", t, true);
	cr_expect_eq(c.drops, 2u);
	cr_expect(hp_cohort_dropped(&c, 3, t + 6 * 1000000));
	hp_cohort_free(&c);
}

/* A cohort whose site 1 grew like a list for 60 sweeps 100 ms apart,
 * `young` young samples each, none dead; returns the time after them. */
static int64_t list_grown(struct hp_cohort *c, int young)
{
	cr_assert_eq(hp_cohort_init(c, 8), 0);
	int64_t t = 1000000000;
	for (int k = 0; k < 60; k++, t += 100000000)
		sweep(c, 1, young, 0, t, true);
	return t;
}

/* A list dropped on G1 at 64k under load, as a debug print saw it: 15
 * dead, 5 alive (promoted, or a tick's order), 32 dead, then those born
 * after it alive; 0.12 of the deaths outside the run. A drop: the run is
 * tested at the site's past share alone (a rule that took the share
 * outside the run missed it, and the list read +81 MiB 2 s later). */
Test(cohort, a_drop_with_living_samples_inside_it_is_found)
{
	struct hp_cohort c;
	int64_t t = list_grown(&c, 40);
	char p[256];
	int m = 0;
	for (int i = 0; i < 15; i++)
		p[m++] = 'd';
	for (int i = 0; i < 5; i++)
		p[m++] = 'a';
	for (int i = 0; i < 32; i++)
		p[m++] = 'd';
	for (int i = 0; i < 40; i++)
		p[m++] = 'a';
	p[m] = 0;
	sweep_of(&c, 1, p, t, true);
	cr_expect_eq(c.drops, 1u);
	cr_expect(hp_cohort_dropped(&c, 1, t + 51 * 1000000));
	cr_expect(!hp_cohort_dropped(&c, 1, t + 52 * 1000000));
	hp_cohort_free(&c);
}

/* A list dropped whose young had one stray death beside the run: a run
 * of 10 at the site's past share (~0.002) is a drop. */
Test(cohort, a_drop_with_a_stray_death_beside_it_is_found)
{
	struct hp_cohort c;
	int64_t t = list_grown(&c, 8);
	sweep_of(&c, 1, "aaaaaaaaaaaaaadaaaaaaaaaaaaaaaadddddddddd", t, true);
	cr_expect_eq(c.drops, 1u);
	cr_expect(hp_cohort_dropped(&c, 1, t + 40 * 1000000));
	hp_cohort_free(&c);
}

/* A marking's judgments that come after it settled count toward what it
 * found: a cache fill the marking before judged 20 alive at settling and
 * 30 dead after is no list the next marking finds dropped. */
Test(cohort, judgments_after_a_marking_settled_count_toward_it)
{
	struct hp_cohort c;
	int64_t t = list_grown(&c, 8), step = 10000000;
	int64_t s = t + 200 * step;
	one_marking(&c, 1, t, 40, step, 0, s);
	s += 100 * step;
	one_marking(&c, 1, t + 40 * step, 20, step, 0, s);
	for (int i = 0; i < 30; i++)                    /* found dead only after it settled */
		hp_cohort_judged(&c, 1, t + i * step, false, s);
	hp_cohort_judged_end(&c);
	s += 100 * step;
	one_marking(&c, 1, t + 30 * step, 30, step, s, s);  /* the rest, all dead */
	cr_expect_eq(c.drops_marked, 0u, "the marking before found 30 of 50 dead");
	hp_cohort_free(&c);
}

/* A list dropped every two markings, its first drop missed (the first
 * marking of all: none judged it before) and counted as deaths: the
 * marking after judges only what grew since, alive, and the next drop is
 * found. With the decayed sums (the build before) the missed drop's
 * deaths kept every later first drop from being found. */
Test(cohort, a_missed_first_drop_does_not_keep_the_next_from_being_found)
{
	struct hp_cohort c;
	int64_t t = list_grown(&c, 8), step = 100000000;
	int64_t s = t + 20 * step;
	one_marking(&c, 1, t, 20, step, t + 14 * step, s);  /* dropped after the 15th */
	cr_expect_eq(c.drops_marked, 0u, "the first marking of all: missed");
	s += 20 * step;
	one_marking(&c, 1, t + 15 * step, 25, step, 0, s);  /* grown since, alive */
	s += 10 * step;
	one_marking(&c, 1, t + 15 * step, 35, step, t + 44 * step, s);
	cr_expect_eq(c.drops_marked, 1u, "the marking before found it alive: a drop");
	cr_expect_eq(c.sites[1].last_ns, t + 44 * step);
	hp_cohort_free(&c);
}

Test(cohort, sweeps_a_marking_may_have_cleared_are_not_looked_at)
{
	struct hp_cohort c;
	int64_t t = list_grown(&c, 8);
	sweep(&c, 1, 8, 8, t, false);
	cr_expect_eq(c.drops, 0u);
	cr_expect(!hp_cohort_dropped(&c, 1, t));
	/* Begun young-only, a marking counted while it ran: what it saw is not used. */
	hp_cohort_sweep_begin(&c, true, t + SWEEP_AFTER);
	for (int i = 0; i < 8; i++)
		hp_cohort_seen(&c, 1, true, t + (int64_t)i * 1000000);
	hp_cohort_sweep_end(&c, false);
	cr_expect_eq(c.drops, 0u);
	cr_expect(!hp_cohort_dropped(&c, 1, t));
	hp_cohort_free(&c);
}

/* Simulated sweeps of 20 young samples each, 20,000 sweeps per site:
 * random replacement (each young sample dead at a sweep with q), rarely
 * (q = 0.05), a FIFO queue (the young never die; nothing is seen),
 * garbage (all but the youngest few dead). None is a drop: the test's
 * false rate is 1e-10 per sweep where deaths are independent. (Young
 * batches that die together now and then, request-scoped objects, are
 * found dropped at times, as cohort.c says.) */
Test(cohort, caches_garbage_and_fifo_queues_are_not_drops)
{
	struct hp_cohort c;
	cr_assert_eq(hp_cohort_init(&c, 8), 0);
	int64_t t = 1000000000;
	for (int k = 0; k < 20000; k++, t += 100000000) {
		hp_cohort_sweep_begin(&c, true, t + SWEEP_AFTER);
		for (int i = 0; i < 20; i++) {
			int64_t born = t + (int64_t)i * 1000000;
			hp_cohort_seen(&c, 0, uniform() < 0.4, born);            /* random replacement */
			hp_cohort_seen(&c, 1, uniform() < 0.05, born);           /* rarely */
			hp_cohort_seen(&c, 2, false, born);                      /* FIFO: the young live */
			hp_cohort_seen(&c, 3, i < 17, born);                     /* garbage */
		}
		hp_cohort_sweep_end(&c, true);
	}
	/* deterministic (fixed xorshift seed): false failure 0; docs/test-bounds.md */
	cr_expect_eq(c.drops, 0u, "%llu drops found", (unsigned long long)c.drops);
	/* The same tables still find a drop (the FIFO queue's young dropped). */
	sweep_of(&c, 2, "aaaaddddddaaaa", t, true);
	cr_expect_eq(c.drops, 1u);
	cr_expect(hp_cohort_dropped(&c, 2, t + 9 * 1000000) && !hp_cohort_dropped(&c, 0, t));
	hp_cohort_free(&c);
}

/* The sweep meets the samples in the table's order, not their births',
 * two sites mixed: the run is taken per site in the order of births. */
Test(cohort, the_run_is_taken_in_birth_order_whatever_the_table_order)
{
	struct hp_cohort c;
	cr_assert_eq(hp_cohort_init(&c, 8), 0);
	int64_t t = 1000000000;
	for (int k = 0; k < 60; k++, t += 100000000) {
		sweep(&c, 4, 10, 0, t, true);
		sweep(&c, 5, 10, 0, t, true);
	}
	/* site 4: births 0..9 ms, dead 2..7 (a run of 6); site 5: dead 0, 3, 6, 9 (no run) */
	const int order[] = { 9, 2, 5, 0, 7, 3, 8, 6, 1, 4 };
	hp_cohort_sweep_begin(&c, true, t + SWEEP_AFTER);
	for (int i = 0; i < 10; i++) {
		int b = order[i];
		hp_cohort_seen(&c, 5, b % 3 == 0, t + (int64_t)b * 1000000);
		hp_cohort_seen(&c, 4, b >= 2 && b <= 7, t + (int64_t)b * 1000000);
	}
	hp_cohort_sweep_end(&c, true);
	cr_expect_eq(c.drops, 1u);
	cr_expect(hp_cohort_dropped(&c, 4, t + 7 * 1000000) && !hp_cohort_dropped(&c, 4, t + 8 * 1000000));
	cr_expect(!hp_cohort_dropped(&c, 5, t));
	hp_cohort_free(&c);
}

/* Found dropped once: what the site grows after counts alive only once a
 * marking found the samples born after that drop alive; a marking that
 * finds them dying (batches that overlap, a drop missed) takes it back. */
Test(cohort, what_grows_after_a_drop_counts_alive_once_the_markings_agree)
{
	struct hp_cohort c;
	cr_assert_eq(hp_cohort_init(&c, 8), 0);
	int64_t t = 1000000000;
	for (int k = 0; k < 60; k++, t += 100000000) {
		sweep(&c, 3, 8, 0, t, true);
		sweep(&c, 4, 8, 0, t, true);
	}
	sweep(&c, 3, 8, 5, t, true);
	sweep(&c, 4, 8, 5, t, true);
	cr_assert_eq(c.drops, 2u);
	int64_t last_dead = t + 4 * 1000000, found = t + SWEEP_AFTER;
	cr_expect(!hp_cohort_growing(&c, 3, last_dead + 1), "no marking has judged what came after yet");
	/* A marking that began before the sweep that found the drop may have
	 * judged the list whole: its judgments are not agreement. */
	for (int i = 0; i < 40; i++)
		hp_cohort_judged(&c, 3, last_dead + 1 + i, true, found - 1);
	hp_cohort_judged_end(&c);
	cr_expect(!hp_cohort_growing(&c, 3, last_dead + 1), "judged by a marking that began before the drop was found");
	/* A marking begins 2 s after the sweep that found the drops: of the
	 * 40 samples born in between, site 3's are all alive, site 4's half
	 * dead (its objects do not die only in the drops found). */
	int64_t start = found + 2000000000;
	hp_cohort_marking(&c, start);
	for (int i = 0; i < 40; i++) {
		int64_t born = last_dead + 1 + (int64_t)i * 50000000;
		hp_cohort_judged(&c, 3, born, true, start);
		hp_cohort_judged(&c, 4, born, i % 2, start);
		hp_cohort_judged(&c, 5, born, true, start);     /* no drop found there */
	}
	/* Born before the drop, or after the marking began: not evidence. */
	for (int i = 0; i < 40; i++) {
		hp_cohort_judged(&c, 3, last_dead, false, start);
		hp_cohort_judged(&c, 3, start + 1, false, start);
	}
	hp_cohort_judged_end(&c);
	cr_expect(hp_cohort_growing(&c, 3, last_dead + 1), "born after the drop: alive");
	cr_expect(hp_cohort_growing(&c, 3, start + 5000000000), "and later, no drop found since");
	cr_expect(!hp_cohort_growing(&c, 3, last_dead), "born by the drop: not");
	cr_expect(!hp_cohort_growing(&c, 4, last_dead + 1), "half of them died: the curve by age");
	cr_expect(!hp_cohort_growing(&c, 5, last_dead + 1), "no drop found: the curve by age");
	/* The next marking finds the samples born after the drop dying among
	 * the living (batches that overlap). Decayed by half, 20 alive then
	 * 15 more and 15 dead are no longer agreement. */
	int64_t start2 = start + 3000000000;
	hp_cohort_marking(&c, start2);
	for (int i = 0; i < 30; i++)
		hp_cohort_judged(&c, 3, start + 1 + (int64_t)i * 1000000, i % 2, start2);
	hp_cohort_judged_end(&c);
	cr_expect_eq(c.drops_marked, 0u, "dead and alive interleaved: no drop");
	cr_expect(!hp_cohort_growing(&c, 3, start2));
	/* A later drop moves the bound; markings that find what follows it
	 * alive restore it, the dead decaying by half a marking. */
	int64_t d2 = grow_then_drop(&c, 3, start2 + t, 60, 6);
	int64_t last2 = d2 + 5 * 1000000, start3 = d2 + SWEEP_AFTER + 1;
	for (int m = 0; m < 6; m++, start3 += 1000000000) {
		hp_cohort_marking(&c, start3);
		for (int i = 0; i < 40; i++)
			hp_cohort_judged(&c, 3, last2 + 1 + i, true, start3);
		hp_cohort_judged_end(&c);
	}
	cr_expect(hp_cohort_growing(&c, 3, last2 + 1));
	cr_expect(!hp_cohort_growing(&c, 3, last2), "the new drop's own: dead, not grown");
	hp_cohort_free(&c);
}

/* A drop found with the standing list full is not applied: what the site
 * grew since the drop before is no longer known, and it is not counted
 * alive. */
Test(cohort, a_drop_lost_to_a_full_standing_list_withdraws_the_growth)
{
	struct hp_cohort c;
	cr_assert_eq(hp_cohort_init(&c, 2048), 0);
	int64_t t = grow_then_drop(&c, 3, 1000000000, 60, 5);
	int64_t last_dead = t + 4 * 1000000, start = t + SWEEP_AFTER + 1000;
	hp_cohort_marking(&c, start);
	for (int i = 0; i < 40; i++)
		hp_cohort_judged(&c, 3, last_dead + 1 + i, true, start);
	hp_cohort_judged_end(&c);
	cr_assert(hp_cohort_growing(&c, 3, last_dead + 1));
	/* 1024 other sites' drops standing, then site 3's next. */
	for (uint32_t site = 10; site < 10 + 1024; site++)
		grow_then_drop(&c, site, start + 1000, 40, 5);
	cr_assert_eq(c.nstanding, 1024u);
	int64_t u = grow_then_drop(&c, 3, start + 1000, 40, 5);
	cr_expect_eq(c.drops_lost, 1u);
	cr_expect(!hp_cohort_growing(&c, 3, last_dead + 1), "the lost drop's list counted alive");
	cr_expect(!hp_cohort_growing(&c, 3, u), "after it too, until the markings agree again");
	hp_cohort_free(&c);
}

/* One marking's judgments of `site`: `n` samples born `step` apart from
 * `born0`, those born at or before `dead_to` found dead. */
static void marking_judges(struct hp_cohort *c, uint32_t site, int64_t born0, int n, int64_t step, int64_t dead_to,
			   int64_t start)
{
	for (int i = 0; i < n; i++) {
		int64_t born = born0 + (int64_t)i * step;
		hp_cohort_judged(c, site, born, born > dead_to, start);
	}
}

/* A marking that began at `start` and judged one site (marking_judges). */
static void one_marking(struct hp_cohort *c, uint32_t site, int64_t born0, int n, int64_t step, int64_t dead_to,
			int64_t start)
{
	hp_cohort_marking(c, start);
	marking_judges(c, site, born0, n, step, dead_to, start);
	hp_cohort_judged_end(c);
}

/* Full collections as often as young ones (Parallel, Serial under load):
 * a marking is the first to see a list dropped. All of a list's samples
 * judged dead born before all of those judged alive is a drop, found by
 * the marking; what follows counts alive once the next marking agrees.
 * Not where the young die (a cache), nor from one marking that judged
 * two markings' samples; a FIFO queue splits so at every marking and
 * never gets the markings' agreement. */
Test(cohort, a_drop_a_marking_finds_moves_the_bound)
{
	struct hp_cohort c;
	cr_assert_eq(hp_cohort_init(&c, 8), 0);
	int64_t t = 1000000000;
	for (int k = 0; k < 60; k++, t += 100000000) {
		sweep(&c, 3, 8, 0, t, true);            /* a list: its young never die */
		sweep(&c, 6, 8, 0, t, true);            /* a FIFO queue's young never die either */
		sweep(&c, 7, 8, 0, t, true);            /* another list */
		sweep_of(&c, 4, k % 2 ? "adadaaad" : "daadadaa", t, true);       /* a cache's do */
	}
	cr_assert_eq(c.drops, 0u);
	/* The list, 40 samples born 100 ms apart, dropped after the 30th;
	 * the marking begins 100 ms after the 40th. */
	int64_t step = 100000000, drop = t + 29 * step, start = t + 40 * step;
	/* A marking before, that found the 40 born in the first 2 s alive. */
	hp_cohort_marking(&c, t + 20 * step);
	marking_judges(&c, 3, t, 40, step / 2, 0, t + 20 * step);
	marking_judges(&c, 4, t, 40, step / 2, 0, t + 20 * step);
	hp_cohort_judged_end(&c);
	cr_expect_eq(c.drops_marked, 0u);
	hp_cohort_marking(&c, start);
	marking_judges(&c, 3, t, 40, step, drop, start);
	marking_judges(&c, 4, t, 40, step, drop, start);
	hp_cohort_judged_end(&c);
	cr_expect_eq(c.drops_marked, 1u, "the list's, not the cache's");
	cr_expect_eq(c.sites[3].last_ns, drop);
	cr_expect(hp_cohort_growing(&c, 3, drop + step), "the marking before found none of it dead: agreed");
	cr_expect(!hp_cohort_dropped(&c, 3, drop), "the marking judged the list itself: none standing");
	/* The next, two seconds later: the 10 and the 30 born since alive. */
	int64_t start2 = start + 20 * step;
	hp_cohort_marking(&c, start2);
	marking_judges(&c, 3, drop + step, 40, step / 2, 0, start2);
	hp_cohort_judged_end(&c);
	cr_expect_eq(c.drops_marked, 1u);
	cr_expect(hp_cohort_growing(&c, 3, drop + step), "born after the drop: alive");
	cr_expect(!hp_cohort_growing(&c, 3, drop), "born by it: not");
	/* Dropped again, found by the marking after: the bound moves, the
	 * agreement stands. */
	int64_t drop2 = start2 + 5 * step, start3 = start2 + 10 * step;
	hp_cohort_marking(&c, start3);
	marking_judges(&c, 3, drop2 - 25 * step, 30, step, drop2, start3);
	hp_cohort_judged_end(&c);
	cr_expect_eq(c.drops_marked, 2u);
	cr_expect(hp_cohort_growing(&c, 3, drop2 + 1) && !hp_cohort_growing(&c, 3, drop2));
	/* Two markings' judgments in one sweep: neither is a marking's whole. */
	int64_t drop3 = start3 + 5 * step, start4 = start3 + 10 * step;
	marking_judges(&c, 3, drop2 + step, 10, step, drop3, start4 - 1);
	marking_judges(&c, 3, drop2 + 11 * step, 10, step, 0, start4);
	hp_cohort_judged_end(&c);
	cr_expect_eq(c.drops_marked, 2u);
	/* A FIFO queue: each object lives 3 s; markings a second apart each
	 * judge the samples born in the last 3 s alive and those that turned
	 * 3 s since dead. Every marking splits, but each marking before found
	 * some of it dead: no first drop (a list growing loses none). */
	int64_t life = 30 * step, s = t + 40 * step;
	uint64_t before = c.drops_marked;
	for (int m = 0; m < 10; m++, s += 10 * step) {
		hp_cohort_marking(&c, s);
		marking_judges(&c, 6, s - life - 10 * step, 40, step, s - life, s);
		hp_cohort_judged_end(&c);
	}
	cr_expect_eq(c.drops_marked - before, 0u, "the markings before saw it dying: no drop of its");
	cr_expect(!hp_cohort_growing(&c, 6, s - step), "a FIFO queue's young are read by the curve");
	/* A marking's judgments made after it was settled (samples it covers
	 * only since): not part of its whole, no drop of their own. */
	before = c.drops_marked;
	marking_judges(&c, 7, t, 40, step / 2, 0, t + 20 * step);
	hp_cohort_judged_end(&c);
	marking_judges(&c, 7, t, 40, step, drop, start);
	hp_cohort_judged_end(&c);
	cr_expect_eq(c.drops_marked, before + 1);
	for (int i = 1; i <= 6; i++)
		hp_cohort_judged(&c, 7, drop + i * step, false, start);
	hp_cohort_judged_end(&c);
	cr_expect_eq(c.drops_marked, before + 1);
	cr_expect_eq(c.sites[7].last_ns, drop);
	hp_cohort_free(&c);
}

/* Before its first drop, a list's samples judged by the markings all
 * lived: the agreement stands when a marking finds the drop, and what it
 * grows after counts alive at once. A FIFO queue filling up looks the
 * same until its first objects die, then splits at every marking: the
 * agreement from its filling decays by half a marking, gone in a few. A
 * site whose samples the markings found dying before any drop gets none. */
Test(cohort, a_list_that_never_lost_a_sample_counts_its_growth_alive_from_its_first_drop)
{
	struct hp_cohort c;
	cr_assert_eq(hp_cohort_init(&c, 8), 0);
	int64_t t = 1000000000, step = 100000000;
	for (int k = 0; k < 60; k++, t += step) {
		sweep(&c, 1, 8, 0, t, true);            /* a list */
		sweep(&c, 2, 8, 0, t, true);            /* a FIFO queue, 3 s of life */
		sweep(&c, 3, 8, 0, t, true);            /* a site whose old objects die now and then */
	}
	/* Markings a second apart, 10 samples a second: nothing dies. */
	int64_t s = t + 10 * step;
	for (int m = 1; m <= 3; m++, s += 10 * step) {
		hp_cohort_marking(&c, s);
		marking_judges(&c, 1, t, 10 * m, step, 0, s);
		marking_judges(&c, 2, t, 10 * m, step, 0, s);
		for (int i = 0; i < 10 * m; i++)          /* one in five dead, among the living */
			hp_cohort_judged(&c, 3, t + i * step, i % 5 != 2, s);
		hp_cohort_judged_end(&c);
	}
	cr_expect_eq(c.drops_marked, 0u);
	/* The list dropped after its 35th sample; the queue's first 5 died. */
	hp_cohort_marking(&c, s);
	marking_judges(&c, 1, t, 40, step, t + 34 * step, s);
	marking_judges(&c, 2, t, 40, step, t + 4 * step, s);
	marking_judges(&c, 3, t + 3 * step, 37, step, t + 10 * step, s);
	hp_cohort_judged_end(&c);
	cr_expect_eq(c.drops_marked, 2u, "the list's and the queue's: the markings before found site 3 dying");
	cr_expect_eq(c.sites[3].last_ns, 0, "no drop at the site whose samples died one by one");
	cr_expect(hp_cohort_growing(&c, 1, t + 35 * step), "the list's growth since its first drop: alive");
	cr_expect(!hp_cohort_growing(&c, 1, t + 34 * step));
	cr_expect(!hp_cohort_growing(&c, 3, t + 11 * step), "its samples died before: the curve");
	/* The queue splits at each marking after: its filling's agreement
	 * gone within a few. */
	int64_t dead_to = t + 4 * step;
	for (int m = 0; m < 4; m++) {
		s += 10 * step;
		dead_to += 10 * step;
		hp_cohort_marking(&c, s);
		marking_judges(&c, 2, dead_to - 9 * step, 40, step, dead_to, s);
		hp_cohort_judged_end(&c);
	}
	cr_expect(!hp_cohort_growing(&c, 2, dead_to + step), "a FIFO queue: the curve again");
	hp_cohort_free(&c);
}

/* At the first marking of all, a site whose every sample died (the
 * start-up's) is no drop found: no marking had judged it before. */
Test(cohort, no_first_drop_where_no_marking_judged_the_site_before)
{
	struct hp_cohort c;
	cr_assert_eq(hp_cohort_init(&c, 8), 0);
	int64_t t = 1000000000, step = 100000000;
	for (int k = 0; k < 60; k++, t += step)
		sweep(&c, 1, 8, 0, t, true);
	hp_cohort_marking(&c, t + 40 * step);
	marking_judges(&c, 1, t, 40, step, t + 40 * step, t + 40 * step);
	hp_cohort_judged_end(&c);
	cr_expect_eq(c.drops_marked, 0u);
	cr_expect_eq(c.drops, 0u);
	hp_cohort_free(&c);
}

/* A cache's first fill (LoadService's workers), then replaced at random:
 * its young samples never died while it filled, the marking after found
 * it alive, the next found some of it dead at random, and a third the
 * rest dead, or those of the thread that filled first dead and the other
 * thread's alive. Neither is a list dropped (Serial under load, both
 * cores busy: found so in 1 of 6 runs of a service that drops nothing). */
Test(cohort, no_first_drop_where_the_markings_before_found_the_site_dying)
{
	for (int variant = 0; variant < 2; variant++) {
		struct hp_cohort c;
		cr_assert_eq(hp_cohort_init(&c, 8), 0);
		int64_t t = 1000000000, step = 10000000;
		for (int k = 0; k < 60; k++)
			sweep(&c, 1, 8, 0, t + k * 8 * step, true);
		int64_t s = t + 500 * step;
		hp_cohort_marking(&c, s);
		marking_judges(&c, 1, t, 40, 10 * step, 0, s);
		hp_cohort_judged_end(&c);
		s += 100 * step;
		hp_cohort_marking(&c, s);
		for (int i = 0; i < 40; i++)
			hp_cohort_judged(&c, 1, t + i * 10 * step, uniform() < 0.4, s);
		hp_cohort_judged_end(&c);
		cr_expect_eq(c.drops_marked, 0u);
		s += 100 * step;
		hp_cohort_marking(&c, s);
		/* All 40 dead, or the first 20 dead and the last 20 alive. */
		marking_judges(&c, 1, t, 40, 10 * step, variant ? t + 190 * step : s, s);
		hp_cohort_judged_end(&c);
		cr_expect_eq(c.drops_marked, 0u, "variant %d: a drop found at a site the markings saw dying", variant);
		cr_expect_eq(c.drops, 0u);
		hp_cohort_free(&c);
	}
}

/* What the markings judged before a first drop is carried into it at most
 * as 2 x 16: a FIFO queue of hundreds of samples, each judged again at
 * every marking while it filled, splits at every marking after and is
 * read by the curve again two markings after its first split. */
Test(cohort, the_agreement_before_a_first_drop_is_carried_capped)
{
	struct hp_cohort c;
	cr_assert_eq(hp_cohort_init(&c, 8), 0);
	int64_t t = 1000000000, ms = 1000000;
	for (int k = 0; k < 60; k++, t += 100 * ms)
		sweep(&c, 2, 8, 0, t, true);
	/* 300 samples a second, markings a second apart, each object lives 3 s. */
	int64_t s = t + 1000 * ms;
	for (int m = 1; m <= 3; m++, s += 1000 * ms) {
		hp_cohort_marking(&c, s);
		marking_judges(&c, 2, t, 300 * m, 3 * ms + ms / 3, 0, s);
		hp_cohort_judged_end(&c);
	}
	int64_t life = 3000 * ms;
	for (int m = 0; m < 3; m++, s += 1000 * ms) {
		hp_cohort_marking(&c, s);
		marking_judges(&c, 2, s - life - 1000 * ms, 1200, 3 * ms + ms / 3, s - life, s);
		hp_cohort_judged_end(&c);
		if (m == 0)
			cr_expect(hp_cohort_growing(&c, 2, s - ms), "agreed at its first split, from its filling");
	}
	cr_expect_eq(c.drops_marked, 3u);
	cr_expect(!hp_cohort_growing(&c, 2, s - 2 * ms), "two markings after its first split: the curve again");
	hp_cohort_free(&c);
}

/* A marking that found every sample of the site it judged dead (generational
 * ZGC's majors judge only what was promoted: the list's young part, born
 * up to the major's start, is not judged): the drop happened before the
 * marking began, but the samples born between the last one it found dead
 * and its start may be the dropped list's, not judged. Only those born
 * after its start count alive; the ones between are the curve's. Before,
 * the drop ended at the last death found, and the young part of a list
 * dropped just before a major counted alive with what grew since
 * (generational ZGC at 64k: a major 0.1 s after a drop found the list
 * dead up to 2.5 s before it). */
/* list_grown's site 1 where markings judge only the promoted (generational
 * ZGC), and a marking that found 40 of its samples alive; returns the
 * time list_grown did. */
static int64_t promoted_list_judged(struct hp_cohort *c)
{
	int64_t t = list_grown(c, 8);
	c->promoted_only = true;
	one_marking(c, 1, t, 40, 50000000, 0, t + 2000000000);
	return t;
}

Test(cohort, a_marking_that_found_all_it_judged_dead_bounds_the_growth_at_its_start)
{
	struct hp_cohort c;
	int64_t t = promoted_list_judged(&c), step = 100000000;
	/* 40 born up to t + 39 step, the first 30 promoted and judged dead,
	 * the last 10 young, not judged; the marking begins at t + 45 step. */
	int64_t start = t + 45 * step;
	one_marking(&c, 1, t, 30, step, start, start);
	cr_expect_eq(c.drops_marked, 1u);
	cr_expect_eq(c.sites[1].last_ns, start, "the drop is known to lie before the marking's start only");
	cr_expect(!hp_cohort_growing(&c, 1, t + 35 * step), "not judged, maybe dropped: the curve");
	cr_expect(hp_cohort_growing(&c, 1, start + step), "born after the marking began: grown since the drop");
	/* A split (dead, then alive) still bounds it at the last death. */
	int64_t start2 = start + 40 * step, drop2 = start + 20 * step;
	one_marking(&c, 1, start + step, 30, step, drop2, start2);
	cr_expect_eq(c.drops_marked, 2u);
	cr_expect_eq(c.sites[1].last_ns, drop2);
	hp_cohort_free(&c);
}

/* Where young collections leave weak references to the markings
 * (generational ZGC), a sweep's run of deaths is a marking's, never a
 * drop; the young sums are kept for the markings' test, which still finds
 * one. */
Test(cohort, no_drop_from_a_sweep_where_young_collections_do_not_clear)
{
	struct hp_cohort c;
	cr_assert_eq(hp_cohort_init(&c, 8), 0);
	c.promoted_only = true;
	int64_t t = 1000000000, step = 100000000;
	for (int k = 0; k < 6; k++)
		t = grow_then_drop(&c, 3, t, 20, 8) + step;
	cr_expect_eq(c.drops, 0u, "a sweep's run where young collections do not clear");
	/* Not in its share of young deaths either: six drops 21 sweeps apart
	 * would have raised it to ~0.05, and no marking would find the next. */
	cr_expect(c.sites[3].young_dead == 0.0f && c.sites[3].young_n > 32, "young %.1f, dead %.1f",
		  c.sites[3].young_n, c.sites[3].young_dead);
	one_marking(&c, 3, t - 40 * step, 40, step / 2, 0, t);
	int64_t start = t + 50 * step, drop = t + 20 * step;
	one_marking(&c, 3, t, 40, step, drop, start);
	cr_expect_eq(c.drops_marked, 1u, "the marking's judgments find it");
	cr_expect(hp_cohort_growing(&c, 3, drop + step));
	hp_cohort_free(&c);
}

/* Where markings judge only the promoted, the agreement a list carries
 * into its drop is decayed by the markings that judged its growth since,
 * not by every marking: generational ZGC's majors, some under a second
 * apart, judged only the dropped list's older samples (all dead), and two
 * of them halved the agreement below MIN_AFTER (the growth read by the
 * curve, -53% at 106 MiB, at 64k). */
Test(cohort, markings_that_judged_none_of_the_growth_leave_its_agreement)
{
	struct hp_cohort c;
	int64_t t = promoted_list_judged(&c), step = 100000000;
	int64_t drop = t + 40 * step, start = t + 45 * step;
	one_marking(&c, 1, t, 40, step, drop, start);                   /* the 40 born before it dead */
	cr_expect_eq(c.drops_marked, 1u);
	cr_expect(hp_cohort_growing(&c, 1, start + step));
	/* Three majors, 0.8 s apart, judging only the dropped list's samples
	 * promoted since (all dead, born before the drop). */
	for (int m = 1; m <= 3; m++)
		one_marking(&c, 1, drop - 5 * step, 5, step, drop, start + m * 8 * step);
	cr_expect_eq(c.drops_marked, 1u);
	cr_expect(hp_cohort_growing(&c, 1, start + step), "none of its growth judged: the agreement stands");
	hp_cohort_free(&c);
}

/* The agreement's decay by the markings that judged the growth holds
 * however their judgments come: those a marking makes after it settled
 * (samples it covers only since) halve the sums once for it too. Not
 * halved, the 32 carried into the drop outweighed 2 deaths in 20 of the
 * growth (2.5 / 53 <= 0.05): the growth kept counting alive. */
Test(cohort, judgments_after_a_promoted_only_marking_settled_decay_the_agreement)
{
	struct hp_cohort c;
	int64_t t = promoted_list_judged(&c), step = 100000000;
	one_marking(&c, 1, t, 80, step / 2, 0, t + 41 * step);         /* 80 alive: 32 carried into the drop */
	int64_t drop = t + 40 * step, start = t + 45 * step;
	one_marking(&c, 1, t, 40, step, drop, start);
	cr_expect_eq(c.drops_marked, 1u);
	cr_expect(hp_cohort_growing(&c, 1, start + step));
	/* The next marking settles with the dropped list's older samples
	 * alone, then judges 20 of the growth, 2 of them dead. */
	int64_t s2 = start + 40 * step;
	one_marking(&c, 1, drop - 5 * step, 5, step, drop, s2);
	for (int i = 0; i < 20; i++)
		hp_cohort_judged(&c, 1, start + (i + 1) * step, i >= 2, s2);
	hp_cohort_judged_end(&c);
	cr_expect(!hp_cohort_growing(&c, 1, start + step), "2 of 20 dead after the agreement halved: the curve");
	hp_cohort_free(&c);
}
