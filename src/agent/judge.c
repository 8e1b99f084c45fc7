/* What each marking says of the samples: survival judgments (survival.h),
 * sweeps of the live table, and the history's records (history.h). */
#include "agent/prof.h"

/* ---- history ------------------------------------------------------------- */

/* When the latest marking began, on CLOCK_REALTIME (the samples' clock);
 * now if none. */
static int64_t last_start_real(void)
{
	int64_t mono_now = hp_mono_ns(), real_now = hp_real_ns(), start;
	return hp_marks_last_start(&prof.marks, &start) ? real_now - (mono_now - start) : real_now;
}

struct clock_now clock_now(void)
{
	return (struct clock_now){ hp_real_ns(), (uint64_t)hp_striped_sum(&prof.samples, memory_order_relaxed) };
}

double clock_at(int64_t real_ns, void *ctx)
{
	const struct clock_now *n = ctx;
	return hp_alloc_clock_at(&prof.clock, real_ns, n->ns, n->samples);
}

/* The pending dead (survival.h) that the latest marking covers: alive
 * when it began if cleared inside its young window (marks.h). */
void settle_pending(void)
{
	uint32_t cover, from = 0, before = 0;
	struct clock_now now = clock_now();
	if (!prof.have_surv || !hp_marks_horizon(&prof.marks, &cover))
		return;
	hp_marks_young_window(&prof.marks, cover, &from, &before);
	hp_survival_settle(&prof.surv, cover, from, before, clock_at(last_start_real(), &now), clock_at, &now);
}

/* The pause counts when the last sweep and the one before began: a sample
 * found cleared in a sweep was referenced when the one before began. */
static uint32_t sweep_prev, sweep_now;

static bool asking;

/* Generational Shenandoah (marks.h, sh_on): its young collections are
 * concurrent cycles, several pauses each, and a sweep can fall anywhere in
 * one; so young is not "born within HP_COHORT_YOUNG_PAUSES pauses" but
 * "first judged by a young cycle past its Final Mark since the sweep
 * before began": born at or before the cover of the latest such cycle
 * when this sweep began, after that of the cycle HP_COHORT_YOUNG_CYCLES -
 * 1 before the latest one when the sweep before began (sh_from: a sample
 * its first cycle found alive just before a drop is still young at the
 * next, unless promoted then, and dies with the list; without it a drop
 * soon after a cycle's Init Mark left fewer than the run's 4 young
 * samples dead, one drop of two found under load). A sweep counts only if
 * no whole-heap marking's weak roots, degenerated or full collection
 * (w_events) fell since the sweep before began. With a window of pauses
 * instead, the young samples of a cache were found dying together where
 * no list was dropped (docs/load-grow-drops.md); counting a cycle only
 * once its weak roots were done, the sweeps in between had already taken
 * its young deaths away, and no drop was found from them (by hand). */
static struct sh_sweep {
	uint64_t done, events;
	uint32_t cover;
} sh_prev, sh_now;
#define HP_COHORT_YOUNG_CYCLES 2
static uint32_t sh_from;
static bool sh_kept;

static bool sh_mode(void)
{
	return __atomic_load_n(&prof.marks.sh_on, __ATOMIC_ACQUIRE);
}

void sweep_begin(void)
{
	sweep_prev = sweep_now;
	sweep_now = (uint32_t)atomic_load(&prof.gc_events);
	bool sh = sh_mode();
	if (sh) {
		sh_prev = sh_now;
		sh_now.events = hp_sh_events(&prof.marks.sh);
		sh_now.done = hp_sh_young_done(&prof.marks.sh, &sh_now.cover);
		/* A start no longer kept (more young cycles since the sweep
		 * before than the ring holds): no window, the sweep not
		 * counted; 0 before the first cycles. */
		sh_from = 0;
		sh_kept = sh_prev.done < HP_COHORT_YOUNG_CYCLES ||
			  hp_sh_young_cover(&prof.marks.sh, sh_prev.done - (HP_COHORT_YOUNG_CYCLES - 1), &sh_from);
	}
	if (!prof.cohort_on)
		return;
	/* Only young collections cleared references since the last sweep:
	 * a pause since (back-to-back sweeps would count the living young
	 * again and no death, the share too low), no marking counted since
	 * it began, none asked for under way. */
	uint64_t m = markings_counted();
	bool young = sh ? sh_now.done != sh_prev.done && sh_now.events == sh_prev.events && !(sh_now.events & 1) &&
				  sh_kept
			: sweep_now != sweep_prev;
	hp_cohort_sweep_begin(&prof.cohort, !asking && m == prof.cohort_markings && young, hp_real_ns());
	prof.cohort_markings = m;
}

void sweep_end(void)
{
	if (!prof.cohort_on)
		return;
	/* One counted meanwhile: not only young deaths. */
	hp_cohort_sweep_end(&prof.cohort, markings_counted() == prof.cohort_markings &&
					  (!sh_mode() || hp_sh_events(&prof.marks.sh) == sh_now.events));
	/* A marking's judgments are made in the first sweep after it is
	 * counted, with its rings' at the catch-up before. Not a sweep while
	 * a marking asked for runs: it judges nothing, and what a catch-up
	 * just listed (an own G1 cycle counted before the request) is that
	 * marking's rings alone, mostly dead; settled then, they would look
	 * like a drop. They are settled, never split, when the next marking's
	 * judgments come. */
	if (!asking)
		hp_cohort_judged_end(&prof.cohort);
}

/* A sample the sweep looked at: its site's young deaths (cohort.h). Young
 * as of the sweep before (the agent thread may sweep pauses apart): one
 * that died young is found cleared by the first sweep after the young
 * pause that cleared it. Only one allocated before the latest pause when
 * the sweep began: one allocated since no collection has looked at, and
 * it would count as a young sample that lived (garbage allocated between
 * a pause and a sweep made a garbage site's share of young deaths 0.007
 * on G1 at 64k under load, and it was then found dropped at every sweep
 * with up to 7000 young samples, near the 8192 a sweep keeps: one that
 * overflows looks for no drop). */
void sweep_saw(const struct hp_live_entry *e, bool dead)
{
	if (!prof.cohort_on || !prof.cohort.counting)
		return;
	bool young = sh_mode() ? e->pause_at_alloc > sh_from && e->pause_at_alloc <= sh_now.cover
			       : e->pause_at_alloc + HP_COHORT_YOUNG_PAUSES >= sweep_prev && e->pause_at_alloc < sweep_now;
	if (young)
		hp_cohort_seen(&prof.cohort, e->site, dead, e->time_ns);
}

/* The pause count by which a sample found cleared now was cleared: read
 * after its reference was looked at (a cleared reference is seen only
 * once the pause that cleared it, and its GC event, are over). Not the
 * sweep's starting count: a sweep takes long enough under load for a
 * pause to fall inside it, and a sample cleared by G1's Remark (dead when
 * the cycle began) then looked cleared before Remark, inside the young
 * window, and was judged alive. */
static uint32_t found_by(void)
{
	return (uint32_t)atomic_load(&prof.gc_events);
}

/* Whether a sample the latest marking covers, still referenced at a sweep
 * that began at pause count `seen` and found cleared at `found`, was alive
 * when that marking began (hp_survival_alive_at_start, with its window). */
static bool alive_at_last_start(uint32_t seen, uint32_t found)
{
	uint32_t cover, from = 0, before = 0;
	if (!hp_marks_horizon(&prof.marks, &cover))
		return false;
	hp_marks_young_window(&prof.marks, cover, &from, &before);
	return hp_survival_alive_at_start(seen, found, from, before);
}

/* A sample's age on the allocation clock when the latest marking began. */
static double age_at_last_start(const struct hp_live_entry *e)
{
	struct clock_now now = clock_now();
	return clock_at(last_start_real(), &now) - clock_at(e->time_ns, &now);
}

/* The allocation clock from marking i's start to marking j's; < 0 where
 * either is no longer kept. */
static double span_between(uint64_t i, uint64_t j, struct clock_now *now)
{
	if (i == 0 || j <= i || j - i >= HP_MARK_STARTS)
		return -1;
	int64_t from = prof.mark_start_real[i % HP_MARK_STARTS], to = prof.mark_start_real[j % HP_MARK_STARTS];
	if (from <= 0 || to < from)
		return -1;
	return clock_at(to, now) - clock_at(from, now);
}

/* A later judgment of a sample last found alive by marking `judged`, at a
 * later marking m's start: alive (m found it so) or dead by then. Each is
 * observed when a marking looks, alive or dead alike: current-status data
 * (survival.c). One found dead before the next marking (a young
 * collection cleared it) is counted in hp_survival_cleared and judged when
 * that marking comes (survival_catch_up): dead, or alive if a young pause
 * of that marking cleared it (its young window, marks.h). Judged at the
 * moment it was found, the dead would be seen at short spans and the
 * alive never, and the curve would fall to 0 there (measured: 0 alive of
 * 140 at 0.2 s on G1 under load, for e^{-0.8} true). */
static void judge_span(const struct hp_live_entry *e, double b, uint64_t m, bool alive)
{
	struct clock_now now = clock_now();
	double span = span_between(e->judged, m, &now);
	if (span >= 0)
		hp_survival_judge_span(&prof.surv, e->site, b, span, alive);
}

/* A sweep at each pause while a marking asked for runs on a helper thread
 * (hp_marks_request's watch; the asker holds the dump lock): it records
 * which samples were still referenced when (sweep_begin's pause counts),
 * so that one found dead after the request is judged alive at the start
 * if it was still referenced after Remark, or cleared inside the young
 * window (hp_survival_alive_at_start). It judges nothing itself: the
 * marking under way is counted only once the request returns, with its
 * exact cover; the markings counted before it stand (asking_m), and
 * samples found dead meanwhile that no judgment holds are pending. */
static uint64_t asking_m;
static uint32_t asking_pauses;

static void sweep_alive(struct hp_live_entry *e, void *ctx);

void sweep_ask_begin(void)
{
	asking_m = markings_counted();
	asking_pauses = (uint32_t)atomic_load(&prof.gc_events);
}

void sweep_while_asking(void *ctx)
{
	JNIEnv *jni = ctx;
	uint32_t now = (uint32_t)atomic_load(&prof.gc_events);
	if (!prof.o.live || !prof.sites.slots || now == asking_pauses)
		return;
	asking_pauses = now;
	asking = true;
	sweep_begin();
	hp_live_sweep(&prof.live, jni, sweep_alive, hist_dead, NULL);
	sweep_end();
	asking = false;
}

/* Marking m's judgment of a sample, for what a site grows after its
 * drops (cohort.h). Its start as kept when it was counted
 * (survival_catch_up), one value for all of its judgments: computed
 * afresh (last_start_real), two clocks read apart differ by nanoseconds
 * from one sample to the next, and the marking's judgments of a site
 * looked like many markings' (Serial under load: a dropped list's
 * 200 dead in groups of 4 to 9). */
static void cohort_judged(const struct hp_live_entry *e, bool alive, uint64_t m)
{
	/* A marking counted while this sweep runs (G1's Cleanup, snapshot.c)
	 * is not caught up yet: its start is not kept, and this sweep sees
	 * only part of its judgments (a profile's walk only its dead). Not
	 * handed on: the next sweep makes them all. */
	if (!prof.cohort_on || !m || prof.surv_markings < m)
		return;
	int64_t start = prof.mark_start_real[m % HP_MARK_STARTS];
	if (start > 0)
		hp_cohort_judged(&prof.cohort, e->site, e->time_ns, alive, start);
}

/* The start of the marking survival_catch_up counts, for cohort_ring_judged. */
static int64_t ring_start;

/* A sample of the survival rings (found dead before the marking that
 * judges it was counted: a requested G1 cycle's Remark clears a dropped
 * list before the request returns) judged by the marking being counted
 * (survival.h, judged): to the cohort with the marking's other judgments,
 * which the sweep after makes. */
void cohort_ring_judged(uint32_t site, int64_t born_ns, bool alive, void *ctx)
{
	(void)ctx;
	if (prof.cohort_on && ring_start > 0)
		hp_cohort_judged(&prof.cohort, site, born_ns, alive, ring_start);
}

/* A sample's judgment by the markings, for the survival estimates: the
 * first time a marking covers it (alive) or it is found dead before or at
 * that, and each later marking that finds it still alive or dead. */
static void judge(struct hp_live_entry *e, bool alive)
{
	if (!prof.have_surv)
		return;
	double var, b = entry_bytes(e, &var);
	uint64_t m = asking ? asking_m : markings_counted();
	/* While a marking asked for runs, nothing counts as covered: the
	 * samples found dead are pending, judged when it is counted. */
	bool covered = !asking && hp_marks_age(&prof.marks, e->pause_at_alloc) > 0;
	if (!alive) {
		uint32_t seen = sweep_prev > e->pause_at_alloc ? sweep_prev : e->pause_at_alloc, found = found_by();
		if (e->judged == 0 && covered && alive_at_last_start(seen, found)) {
			/* First found gone after the marking that covers it
			 * ended, or cleared by a young pause inside it: alive
			 * when it began. Its first judgment is alive, then it
			 * is a verified sample gone since (judged at the next
			 * marking). Judged dead at its start, the young that
			 * died in the pauses between G1's Remark and the sweep
			 * that first counted the marking read G1's curve at
			 * young ages at half the truth. */
			hp_survival_judge_age(&prof.surv, e->site, b, age_at_last_start(e), true);
			hp_survival_judge(&prof.surv, e->site, b, true, true);
			cohort_judged(e, true, m);
			e->judged = (uint32_t)m;
			hp_survival_cleared(&prof.surv, e->site, b, seen, found, e->time_ns);
			return;
		}
		hp_survival_judge(&prof.surv, e->site, b, e->judged == 0, false);
		judge_span(e, b, m, false);
		if (covered && e->judged < (uint32_t)m)
			cohort_judged(e, false, m);        /* dead at this marking, first judged or alive at one before */
		if (e->judged == 0 && !covered)
			hp_survival_pend(&prof.surv, e->site, e->pause_at_alloc, seen, found, e->time_ns, b);
		else if (e->judged == 0)
			hp_survival_judge_age(&prof.surv, e->site, b, age_at_last_start(e), false);
		else if (e->judged == (uint32_t)m)
			hp_survival_cleared(&prof.surv, e->site, b, sweep_prev, found_by(), e->time_ns);
		return;
	}
	if (e->judged >= (uint32_t)m || !covered)
		return;         /* no marking has looked since the last judgment */
	if (e->judged == 0)
		hp_survival_judge_age(&prof.surv, e->site, b, age_at_last_start(e), true);
	else
		judge_span(e, b, m, true);
	cohort_judged(e, true, m);
	hp_survival_judge(&prof.surv, e->site, b, e->judged == 0, true);
	e->judged = (uint32_t)m;
}

/* A sample found dead by any sweep: its bytes are freed, and if it was
 * counted at the last marking record, its going is part of the change. */
void hist_dead(struct hp_live_entry *e, void *ctx)
{
	sweep_saw(e, true);
	if (__atomic_load_n(&prof.marks.z_own, __ATOMIC_ACQUIRE)) {
		/* Cleared by an old marking: promoted by then (marks.h, z_back). */
		uint32_t born = e->pause_at_alloc + 1, was = atomic_load(&prof.marks.z_dead_newest);
		while (was < born && !atomic_compare_exchange_weak(&prof.marks.z_dead_newest, &was, born))
			;
	}
	judge(e, false);
	if (!prof.have_history)
		return;
	double var, b = entry_bytes(e, &var);
	hp_history_dead(&prof.history, e->site, b, var, hp_marks_age(&prof.marks, e->pause_at_alloc),
			markings_counted());
}

static void sweep_alive(struct hp_live_entry *e, void *ctx)
{
	sweep_saw(e, false);
	judge(e, true);
}

static void hist_alive(struct hp_live_entry *e, void *ctx)
{
	sweep_saw(e, false);
	judge(e, true);
	uint64_t m = *(const uint64_t *)ctx;
	double var, b = entry_bytes(e, &var);
	unsigned age = hp_marks_age(&prof.marks, e->pause_at_alloc);
	hp_history_alive(&prof.history, e->site, b, var, age, m);
	if (age > 0 && hp_history_marking_record(&prof.history, m)) {
		/* Counted in L at this marking record: a weight moved since
		 * the last one counted it (history.c) is part of the change. */
		if (e->thin_rec > 0 && (float)e->thin != e->thin_rec)
			hp_history_reweighed(&prof.history, e->site, hp_history_moved_var(b, e->thin_rec, e->thin));
		e->thin_rec = (float)e->thin;
	}
}

/* The collector's own markings a canary shows (single-generation ZGC and
 * Shenandoah), and a new epoch of the survival sums for each new marking.
 * Dump lock held. */
void markings_tick(JNIEnv *jni)
{
	if (!prof.canary_tried && prof.o.live) {
		prof.canary_tried = hp_marks_canary_setup(&prof.marks, prof.probe, jni, &prof.gc_events) != -EAGAIN;
		/* Generational ZGC's own majors judge only the promoted: the
		 * curves' young buckets age only when a marking judges them. */
		prof.surv.age_when_judged = __atomic_load_n(&prof.marks.z_own, __ATOMIC_ACQUIRE);
		/* Drops are looked for where young collections are pauses,
		 * and on generational ZGC, whose majors find them (a major's
		 * judgments of the list: those born before the drop dead,
		 * those since alive; docs/load-grow-zgen-drops.md): its late
		 * growth read by the curve between majors -19..-53% before.
		 * On generational Shenandoah only where its phase is read
		 * (sh_mode): with a window of pauses instead of its young
		 * cycles, measured under load, one drop of two was missed and
		 * a site's young samples found dying together where no list
		 * was dropped (one `heapprobe top` screen at -50.7%,
		 * docs/load-grow-drops.md). Not on single-generation ZGC and
		 * Shenandoah: no young collection, and their own cycles,
		 * ~0.1 s apart under load, judge a dropped list at once. */
		struct hp_gc_info g = { .sz = sizeof(g) };
		bool known = hp_gc_info(prof.probe, &g) == 0;
		bool zgen = known && g.kind == HP_GC_Z && g.generational == 1;
		prof.cohort_on = prof.have_cohort && known &&
				 (g.kind == HP_GC_G1 || g.kind == HP_GC_PARALLEL || g.kind == HP_GC_SERIAL || zgen ||
				  sh_mode());
		/* Generational ZGC's young collections take weak references
		 * as strong (only the old generation processes them: the
		 * garbage site's samples stay referenced between majors,
		 * 3.3 GiB "recent" in a profile under load): a sweep's
		 * deaths there are a major's, and a major judges only what
		 * was promoted when it began. */
		prof.cohort.promoted_only = zgen;
	}
	/* The counters turned off (marks.h, the counters' guard): the
	 * collector's own full collections and cycles no longer count, so a
	 * sweep after one would take its old deaths for young ones. */
	if (prof.cohort_on && hp_marks_counters_off(&prof.marks))
		prof.cohort_on = false;
	hp_marks_canary_check(&prof.marks, jni, &prof.gc_events);
	survival_catch_up();
}

/* A new epoch of the survival sums for each marking counted since the
 * last, its start kept (judge_span), and the pending dead it covers
 * judged. Dump lock held. */
void survival_catch_up(void)
{
	uint64_t m = markings_counted();
	if (!prof.have_surv || prof.surv_markings >= m)
		return;
	int64_t start = last_start_real();
	for (uint64_t k = prof.surv_markings + 1; k <= m; k++)
		prof.mark_start_real[k % HP_MARK_STARTS] = start;
	ring_start = start;
	struct clock_now now = clock_now();
	double span = span_between(prof.surv_markings, m, &now);
	uint32_t cover, from = 0, before = 0;
	if (hp_marks_horizon(&prof.marks, &cover))
		hp_marks_young_window(&prof.marks, cover, &from, &before);
	if (span >= 0)
		hp_survival_settle_cleared(&prof.surv, span, from, before);        /* before the epoch moves on */
	for (; prof.surv_markings < m; prof.surv_markings++)
		hp_survival_next_epoch(&prof.surv);
	hp_cohort_marking(&prof.cohort, start);         /* it judges the drops found before it */
	settle_pending();
}

/* After collections (agent thread) and after a requested marking (before
 * a profile): frees dead samples' references, and records the history
 * when a marking completed since the last record or a young record is due.
 * Dump lock held. */
void history_tick(JNIEnv *jni, bool profile)
{
	if (!prof.o.live || !prof.sites.slots)
		return;
	markings_tick(jni);
	uint64_t m = markings_counted();
	int64_t now = hp_real_ns();
	uint64_t pauses = atomic_load(&prof.gc_events);
	sweep_begin();
	if (!prof.have_history || !hp_history_due(&prof.history, m, now, pauses, profile)) {
		hp_live_sweep(&prof.live, jni, sweep_alive, hist_dead, NULL);
		sweep_end();
		return;
	}
	struct timespec c0, c1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	hp_live_sweep(&prof.live, jni, hist_alive, hist_dead, &m);
	sweep_end();
	struct hp_heap_usage u = { .sz = sizeof(u) };
	/* Not a concurrent cycle's end figure: it counts what was allocated
	 * while the cycle ran (Shenandoah under load: 1.5 GB for 0.2 GB live,
	 * docs/heap-under-load.md), and would flatten the history's chart. */
	uint64_t heap = hp_heap_usage(prof.probe, HP_USAGE_POST_GC | HP_USAGE_NO_JNI, &u) == 0 &&
				u.live_kind != HP_USAGE_AFTER_CONCURRENT_CYCLE ? u.live : 0;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	uint64_t spent = (uint64_t)((c1.tv_sec - c0.tv_sec) * 1000000000 + (c1.tv_nsec - c0.tv_nsec));
	hp_history_record(&prof.history, m, now, pauses, heap, spent);
}
