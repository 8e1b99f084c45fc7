/* Which markings have seen which samples: the verification of the live view.
 *
 * A sample's weak reference still being set proves nothing until a marking
 * that began after the sample was allocated has completed (marking.c in
 * heapusage says why, and counts the markings). Every sample records the
 * number of GarbageCollectionFinish events seen when it was allocated
 * (`pause_at_alloc`); every marking gets a `cover`: samples with
 * pause_at_alloc <= cover were allocated before it began, so it has
 * verified them (alive if their reference is still set now). */
#ifndef HP_MARKS_H
#define HP_MARKS_H

#include <jni.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/shcycles.h"
#include "heapprobe.h"

#define HP_MARKS_RING 256       /* markings remembered for ages (min_age) */

/* The marking counters the GC callback reads (hp_marking's fields), as
 * the counters' guard names them. */
enum hp_counter { HP_COUNTER_FULL, HP_COUNTER_CONCURRENT, HP_COUNTER_STARTS, HP_COUNTER_MARKED, HP_COUNTERS };

struct hp_mark_ring {
	_Atomic uint32_t cover[HP_MARKS_RING];  /* non-decreasing in order of completion */
	_Atomic int64_t start_ns[HP_MARKS_RING]; /* CLOCK_MONOTONIC: when the marking began, at the latest
						    (the end of the pause its cover names, or the request) */
	_Atomic uint32_t done[HP_MARKS_RING];   /* pause count when it was seen to end */
	_Atomic uint64_t n;                     /* markings pushed */
};

struct hp_marks {
	/* Markings the collector's counters show, pushed by the GC callback
	 * (one writer: the thread that ends a pause). */
	struct hp_mark_ring seen;
	/* Markings we requested that no counter shows (ZGC, Shenandoah, G1
	 * without perfdata): pushed by the requesting thread under the
	 * profiler's dump lock. */
	struct hp_mark_ring requested;
	bool primed;
	uint64_t count_seen, full_seen;         /* hp_marking() at the last look */
	uint32_t last_completion;               /* pause count when the last marking was seen to end */
	int64_t last_completion_ns;             /* ... and when */
	uint32_t last_full_pause;               /* pause count at the end of the last full collection */
	/* ZGC: markings begun (hp_marking's `starts`), seen by the GC callback
	 * at the end of the Mark Start pause that counts them. A marking
	 * judges objects as they were when it began: a requested one's start
	 * is this pause, not the request (generational ZGC first runs a young
	 * collection that promotes everything, 0.2-3.5 s under load, so ages at
	 * judgment taken from the request came out that much young and the
	 * survival learnt that much low). */
	uint64_t starts_seen;
	_Atomic int64_t start_ns;               /* end of the latest Mark Start pause (CLOCK_MONOTONIC), 0 none */
	/* Generational ZGC: the cover of the major that began there, if it is
	 * a requested one. Its young collection major_full_preclean promoted
	 * every sample allocated before that collection's Mark Start pause
	 * (the collection before the major's own, zDriver.cpp collect_young),
	 * so the old marking that began at start_ns judges exactly those:
	 * the pause count before it, 0 where the callback did not see that
	 * collection begin. With the request's pause count instead, the
	 * samples allocated during the wait (0.2-3.5 s under load) were judged
	 * by no marking and the ages at first judgment began there: the
	 * survival of the youngest was extrapolated and the view came out
	 * 15-48% low (docs/load-releases.md, generational ZGC on 25). */
	_Atomic uint32_t start_cover;
	/* Shenandoah: a requested cycle begins at the first pause the
	 * collector names System.gc() (hp_marking's explicit_cycle) after the
	 * request, not at the request: one already under way (a young cycle
	 * on generational Shenandoah, any cycle on the others) runs first,
	 * 50-300 ms under load, and a marking judges objects as they were at
	 * its Init Mark (SATB). Ages at judgment taken from the request came
	 * out that much young: with caches turning over 4 times a second the
	 * survival learnt was 45% low (bench/load, generational Shenandoah).
	 * The requester arms it; the GC callback records that pause's end and
	 * the pause count before it (the samples the marking judges). */
	_Atomic bool explicit_armed;
	_Atomic int64_t explicit_start_ns;      /* 0 none since the arming */
	_Atomic uint32_t explicit_cover;
	/* G1: the pause count after the latest Remark (hp_marking's `marked`
	 * moved at its end), when the cycle's weak references are processed:
	 * before it, during the cycle, only young pauses clear references.
	 * 0 none. GC callback writes. */
	uint64_t marked_seen;
	_Atomic uint32_t remark_pause;
	/* G1 with its count of cycles begun (hp_marking's starts_source:
	 * G1CollectedHeap::_old_marking_cycles_started): the pause in which it
	 * moved by one with no full collection is a cycle's concurrent start,
	 * and the marking judges what was allocated before it, as of its end
	 * (SATB). So an own cycle, seen complete at its Cleanup, gets the exact
	 * cover and start a requested one has, not the lower bounds (the end
	 * of the previous marking) that left its ages young and the view low,
	 * and the young window opens from that pause (hp_marks_young_window).
	 * g1_count_starts: set by hp_marks_canary_setup where the count is
	 * known (the callback then leaves start_ns, ZGC's, alone). g1_start_*
	 * and g1_done_*: the latest concurrent start pause and the latest
	 * marking the callback saw end, GC callback only (the requester moves
	 * last_completion after a request returns, possibly after the next
	 * cycle's start). g1_exact: the newest exact cycle's cover (low 32
	 * bits) and the pause count when it ended (high), one word so that a
	 * reader never pairs one cycle's cover with another's end. */
	bool g1_count_starts;                   /* __atomic_* (set once by the agent thread, read by the GC callback) */
	uint32_t g1_start_pause;                /* pause count of the latest concurrent start pause, 0 none */
	int64_t g1_start_ns;                    /* ... its end (CLOCK_MONOTONIC) */
	uint32_t g1_done_pause;                 /* pause count when the callback last saw a marking end */
	int64_t g1_done_ns;                     /* ... and when */
	_Atomic uint64_t g1_exact;
	/* Generational ZGC's own major cycles. A young collection marks
	 * through weak roots as if strong (ZRootsIteratorAllColored), so a
	 * sample's weak reference is cleared only by an old marking, once the
	 * object is in the old generation: a major cycle the collector starts
	 * itself (young type major_partial_roots, not the promote-all of a
	 * requested one) judges only the samples promoted before it began. A
	 * young collection ages every object it keeps by one (relocated or
	 * its page flipped), and promotes past the tenuring threshold, at
	 * most MaxTenuringThreshold = 15: a sample allocated before the first
	 * pause of the collection HP_Z_PROMOTED_AFTER before the major's is in
	 * the old generation when the major begins. So the cover is the pause
	 * count before that collection's first pause (young_start, by
	 * CollectedHeap::_total_collections, which each Mark Start pause
	 * bumps). The major driver runs one cycle at a time: a major is seen
	 * complete at its old Relocate Start pause (z_end below), else when
	 * the next one begins (or consumed by the request that asked for
	 * it). GC callback writes; z_pending is exchanged with the
	 * requester. */
#define HP_Z_PROMOTED_AFTER 16
#define HP_YOUNG_RING 64
	bool z_own;                             /* generational ZGC: set once before the events matter */
	uint64_t young_first, young_seen;       /* _total_collections at the reset, at the last pause */
	uint32_t young_start[HP_YOUNG_RING];    /* pause count before collection c's first pause, at c % ring */
	_Atomic bool z_pending;                 /* a major began that no one has pushed yet */
	uint32_t z_cover;                       /* ... its cover */
	/* The collections back a major's cover is taken (z_major_began):
	 * HP_Z_PROMOTED_AFTER until learnt. What is promoted is what outlived
	 * the tenuring threshold, adaptive, 1-3 young collections in the load
	 * bench (-Xlog:gc+reloc), not 15: a cover 16 collections back (~4 s
	 * there) left the samples born in the 3 s before it judged by no
	 * marking. A reference only an old marking clears (above): the newest
	 * birth among the samples found cleared after a major began is a
	 * sample promoted by then. Its age in young collections at that
	 * major's start, plus one, the largest of the last HP_Z_AGES majors,
	 * is the cover of the next (never under HP_Z_BACK_MIN, never past
	 * HP_Z_PROMOTED_AFTER); a quiet program whose newest death is old
	 * keeps it long (the safe side: a cover too recent would judge young
	 * garbage alive); a major swept late shows its deaths to the next,
	 * older there than at their own (the safe side too). Not from a major
	 * we asked for, nor one under way while a request that timed out
	 * still runs (request.c keeps z_requesting set). The agent thread
	 * writes z_dead_newest (a max); the GC callback the rest. */
#define HP_Z_AGES 4
	/* A major of the collector's own can promote all as a requested one
	 * does (ZDriver should_preclean_young: an allocation stall, threads
	 * stalled for old), and show deaths at age 2: a few in a row would
	 * judge samples not yet promoted. 4 is past the thresholds the bench
	 * showed (1-3). */
#define HP_Z_BACK_MIN 4
	_Atomic uint32_t z_dead_newest;         /* newest pause_at_alloc found cleared since the latest major began, +1 (0: none) */
	_Atomic uint32_t z_back;                /* collections back for the cover now (HP_Z_PROMOTED_AFTER until learnt) */
	uint64_t z_young_begin;                 /* the latest major's young collection (0: none seen begin) */
	bool z_begin_requested;                 /* ... it began while we asked for one: nothing learnt from it */
	uint32_t z_age[HP_Z_AGES];              /* ages learnt at the last majors */
	_Atomic uint32_t z_nage;                /* ages learnt so far (read by the status text) */
	_Atomic int64_t z_start_ns;             /* ... when it began */
	/* A major counted at its end rather than when the next one begins
	 * (0.5-1 s later under load). Its old Relocate Start pause comes after
	 * the old marking cleared the weak references it found dead. Each
	 * young collection has three pauses (Mark Start, which bumps
	 * _total_collections, Mark End, Relocate Start), one at a time, and
	 * the old generation's two (Mark End, Relocate Start) fall among them:
	 * so the pauses since the Major Mark Start, less three for each young
	 * collection begun since (its own included, the one under way counted
	 * whole), are the old ones done, at least; at two the major has
	 * ended. (Not the perfdata count of major pauses: it counts an old
	 * pause as a minor one when a young collection is under way, 3 to 5
	 * a major on JDK 25.) Trusted once HP_Z_END_STEPS majors in a row
	 * began exactly two such pauses apart; off for good at fewer than
	 * two. A Mark End repeated (ZGC retries one that finds marking not
	 * done) adds a pause: a major so counted early by as many pauses as
	 * repeats came before its old Mark End succeeded, its dead samples
	 * not yet cleared judged alive (two repeats: still marking); none in
	 * two runs of the load bench's service under -Xlog:gc+phases, and
	 * learnt again from the next major on. Not while a request is in flight
	 * (z_requesting): its major is the requester's (an own major under
	 * way then is counted when the next begins, as before). GC callback
	 * writes (z_requesting: the requester). */
#define HP_Z_END_STEPS 3
	bool z_p0_set;
	uint32_t z_p0;                          /* pauses before the latest Major Mark Start seen */
	uint64_t z_y0;                          /* ... and the young collections then, its own included */
	unsigned z_end_run;                     /* majors in a row whose old pauses came to two */
	_Atomic int z_end;                      /* 0 learning, 1 counted at their end, -1 off */
	int64_t z_end_step;                     /* the count that turned it off */
	uint64_t z_ended;                       /* majors counted at their end */
	_Atomic bool z_requesting;
	/* Generational Shenandoah's cycles from its phase at each pause's end
	 * (shcycles.h): its young cycles, for the drops a sweep looks for
	 * (judge.c), and its whole-heap markings (global cycles, old
	 * markings), pushed to `seen` with their cover. sh_on: set once by
	 * hp_marks_canary_setup where hp_marking's phase is read. GC callback
	 * writes. */
	bool sh_on;                             /* __atomic_* */
	struct hp_sh_cycles sh;
	/* The young window of the latest own whole-heap marking pushed: its
	 * cover (low 32 bits), from - cover (next 16) and before - cover
	 * (high 16), one word so that a reader never pairs one marking's
	 * cover with another's window; 0 none (hp_marks_young_window). */
	_Atomic uint64_t sh_window;
	/* Requests (under the dump lock). */
	uint64_t requests, requests_ok;
	uint64_t request_ns_total, request_ns_max;
	uint64_t last_ns, last_end_ns;          /* the last completed request: its wall time, when it ended */
	double budget;                          /* share of the wall clock for periodic requests (0: 1/50) */
	/* A request that outlived its time (hp_marks_request): the profile
	 * went on without it; its helper thread still waits in the call and
	 * no request is made until it returns. */
	int64_t timeout_ns;                     /* a request's time (0: mark_timeout's default) */
	struct hp_marks_helper *stuck;          /* the request timed out and not returned yet, NULL none */
	int64_t stuck_ns;                       /* ... when it was asked for */
	uint64_t requests_timed_out;
	/* Serial or Parallel refused a full collection asked for unless
	 * -XX:+DisableExplicitGC (mark=auto): the flag is not manageable, so
	 * every such request after it is refused at once, no helper thread. */
	bool full_disabled;
	int64_t deadline_ns;                    /* set by the asker: no request runs past it (0: none) */
	uint32_t request_cover, request_end_pause;      /* ... its cover, the pause count when it ended */
	uint64_t request_live;                  /* ... the collector's live figure read when it returned, 0 none */
	const char *request_live_source;        /* ... where that figure is read (hp_marking's live_source) */
	char last_request[200];                 /* what the last request did, or why it did not */
	uint64_t own_waits, own_waits_ok;       /* hp_marks_await_own, _await_z_major: waits, own cycles that came */
	uint64_t own_wait_ns_total;
	/* Canaries (ZGC and Shenandoah, single generation: their counters
	 * count pauses, not cycles): objects only a weak reference holds, one
	 * made after each pause. Only a marking that began after a canary was
	 * made clears it, so the newest canary cleared shows a marking that
	 * covers every sample allocated before it was made: made right after
	 * the pause before the cycle's first, it gives the exact cover. Oldest
	 * first; dump lock. */
#define HP_CANARIES 16
	struct hp_canary {
		jweak ref;
		uint32_t pause;                 /* pause count when it was made */
	} canary[HP_CANARIES];
	unsigned ncanary;
	bool canary_on;
	/* The collector's own cycles are not counted (generational
	 * Shenandoah; generational ZGC without its count of majors): only
	 * requested markings judge samples. Without period= the agent thread
	 * then asks for one now and then for the leak history (sampler.c,
	 * HP_HISTORY_MARK_S). Set by hp_marks_canary_setup. */
	bool own_uncounted;
	_Atomic uint64_t canary_markings;       /* markings they showed (G1: cycles whose start they found, or
						   the count of cycles begun named); GC callback too */
	/* G1's canaries. Its own cycles are counted by perfdata at Cleanup,
	 * and their start is not known: the cover is then a lower bound (the
	 * end of the previous marking), ages at judgment come out young and
	 * the view low between markings. A dead young canary would be cleared
	 * by any young collection, so these are held by a strong reference
	 * for HP_G1_AGE_PAUSES pauses (past the largest tenuring threshold,
	 * 15: then in the old generation), then released to a weak one,
	 * recording the pause count. An old canary is cleared only by a
	 * marking that began after its release (at Remark), a full collection,
	 * or a mixed collection; mixed ones come only after a cycle's Cleanup
	 * (the first collection after it is the young-only Prepare Mixed),
	 * before the next cycle begins. So the newest release among the
	 * canaries found cleared by a look at most one pause after a cycle's
	 * Cleanup is a cover of that cycle; one found later is kept for the
	 * next cycle (its release came before that one began). Dump lock. */
#define HP_G1_AGING 48
#define HP_G1_OLD 64
#define HP_G1_AGE_PAUSES 40
	struct hp_canary g1_aging[HP_G1_AGING];         /* .ref strong; .pause made; oldest first */
	struct hp_canary g1_old[HP_G1_OLD];             /* .ref weak; .pause released; oldest first */
	unsigned g1_naging, g1_nold;
	bool g1_mode;
	bool g1_have_rel;                       /* a cleared canary's release not yet applied */
	uint32_t g1_rel;                        /* ... the newest */
	/* An own cycle whose start the canaries bound from above: the oldest
	 * canary released after the newest cleared one and still set was
	 * released after the cycle began (a marking clears only what it
	 * covers), so the concurrent start pause is at most that release's
	 * pause count, g1_win_from. Its cover (the newest cleared release, a
	 * lower bound), g1_win_from, and the pause count when it ended
	 * (hp_marks_young_window). Pinned to one pause (exact, as a requested
	 * cycle's) when g1_win_from = g1_win_cover + 1. 0: none. */
	uint32_t g1_win_cover, g1_win_from, g1_win_done;
	uint64_t g1_looked_n;                   /* seen entries looked at */
	jclass object_class;                    /* global reference to java.lang.Object (canaries) */
	/* End of each pause (CLOCK_MONOTONIC ns) by pause count mod the ring:
	 * a marking's start is the end of the pause its cover names (or later).
	 * 4096: the latest marking's cover still in it when a profile says
	 * how long before the marking began it was (generational ZGC under
	 * load: ~24 pauses a second; hp_marks_pause_end). */
#define HP_PAUSE_RING 4096
	_Atomic int64_t pause_end_ns[HP_PAUSE_RING];
	char canary_state[240];                 /* on, or why not */
	/* The counters' guard. The counters above are fields of the JVM read
	 * at offsets found at start (symbols/ data, VMStructs, machine code)
	 * and perfdata entries. One that goes back, or rises in one
	 * collection by more than HP_COUNTER_STEP_MAX beyond the collections
	 * counted since (a pause completes at most two full collections, or
	 * one cycle's Remark or Cleanup; heap inspections and dumps,
	 * jmap -histo:live, GC.class_histogram, GC.heap_dump, run full
	 * collections with no GC event, which move `full` and G1's `starts`
	 * and the collections counted), is no longer the collector's count (a
	 * layout moved, a torn read, a perfdata entry reused): it would count
	 * markings that never happened, or miss them. From the first such
	 * reading on, nothing is counted from the counters: only requested
	 * markings (and canaries, which are no counter) judge samples, the
	 * agent thread asks for history markings as where own cycles are
	 * uncounted, and info, status, the log and each profile say which
	 * counter did what. The first reading of a counter found since the
	 * last one (hp_marking's `read`: G1's perfdata and cycle count can be
	 * found after the first collections, JDK 11's perfdata opens late) is
	 * no jump. GC callback writes the guard_* and off_* fields, then
	 * counters_off with release; others read it with acquire first. */
#define HP_COUNTER_STEP_MAX 8
	bool guard_primed;
	uint64_t guard_prev[HP_COUNTERS];
	uint64_t guard_young;                   /* hp_gc_count at the last reading */
	unsigned guard_read;                    /* hp_marking's `read` then */
	_Atomic int counters_off;               /* 0 trusted, else 1 + the enum hp_counter that failed */
	bool off_back;                          /* it went back (else it jumped) */
	uint64_t off_from, off_to;              /* its readings before and then */
	uint32_t off_pause;                     /* the pause count then */
};

/* The rings' writers, shared with canary.c: a marking pushed to a ring
 * (covers never decrease), and a seen entry's cover and start raised to
 * at least these. */
void hp_marks_ring_push(struct hp_mark_ring *r, uint32_t cover, int64_t start_ns, uint32_t done);
void hp_marks_seen_raise(struct hp_marks *m, uint64_t k, uint32_t cover, int64_t start_ns);

/* The canaries (canary.c): hp_marks_canary_setup decides whether this collector needs
 * them (single-generation ZGC and Shenandoah); check counts a marking they
 * show (returns 1) and makes a canary for the pauses since; rearm drops
 * them without counting (after a request, which has been counted). Dump lock held, on a
 * thread attached to the VM, never in a GC callback. */
/* True on a thread while it makes a canary: the sampler leaves its
 * allocation out (the agent's own objects are not the program's). */
extern _Thread_local bool hp_marks_allocating;

/* Returns -EAGAIN when what it decides by is not read yet (hp_marking
 * not set up: call again later), else 0. */
int hp_marks_canary_setup(struct hp_marks *m, struct hp_probe *probe, JNIEnv *jni, const _Atomic uint64_t *pauses);
int hp_marks_canary_check(struct hp_marks *m, JNIEnv *jni, const _Atomic uint64_t *pauses);
void hp_marks_canary_rearm(struct hp_marks *m, JNIEnv *jni, const _Atomic uint64_t *pauses);
void hp_marks_canary_free(struct hp_marks *m, JNIEnv *jni);

/* When the latest marking began (CLOCK_MONOTONIC ns; false if none), and
 * the median time between the starts of the last markings (0 if fewer
 * than two). */
bool hp_marks_last_start(const struct hp_marks *m, int64_t *ns);
int64_t hp_marks_gap_ns(const struct hp_marks *m);

/* Starts counting from now (no GC callback may run concurrently with it on
 * this struct: call before enabling the profiler's GC events). */
void hp_marks_reset(struct hp_marks *m, struct hp_probe *probe, uint32_t pauses_now);

/* From GarbageCollectionFinish: plain loads and atomics only. `pauses_before`
 * is the pause count before this pause was counted. */
void hp_marks_on_gc(struct hp_marks *m, struct hp_probe *probe, uint32_t pauses_before);

/* The counters' guard (hp_marks above), given this collection's readings
 * (by enum hp_counter): false once a counter has gone back or jumped, at
 * this reading or before; the GC callback then counts nothing from them.
 * GC callback only (plain loads and stores). */
bool hp_marks_guard(struct hp_marks *m, const uint64_t now[HP_COUNTERS], unsigned read, uint64_t young,
		    uint32_t pauses_before);
bool hp_marks_counters_off(const struct hp_marks *m);
/* "none refused ..." or "off: <which counter did what, when>; ..." for info,
 * status, the log and the profile. */
void hp_marks_counters_text(const struct hp_marks *m, char *buf, size_t len);
/* The collector's own markings are not counted: generational Shenandoah,
 * generational ZGC without its count of majors (own_uncounted), or
 * counters the guard turned off where no canary counts them. */
bool hp_marks_own_uncounted(const struct hp_marks *m);

/* What hp_marks_on_gc does with one reading of the counters (`young`:
 * hp_gc_count), the guard first (tests). */
void hp_marks_on_reading(struct hp_marks *m, const struct hp_marking *mk, uint64_t young, int64_t now,
			 uint32_t pauses_before);
/* The bookkeeping of hp_marks_on_gc, given the counters (tests). */
void hp_marks_observe(struct hp_marks *m, uint64_t full, uint64_t concurrent, uint32_t pauses_before);
/* ... and of the markings begun (hp_marking's `starts`) with the
 * collections so far (hp_gc_count; used only on generational ZGC). */
/* ... and whether the collection under way was asked for (hp_marking's
 * explicit_cycle): the first such pause after a request arms it is the
 * requested cycle's start (explicit_start_ns). */
void hp_marks_arm_explicit(struct hp_marks *m);        /* by the requester, before it asks */
void hp_marks_observe_explicit(struct hp_marks *m, int explicit_cycle, int64_t now, uint32_t pauses_before);
void hp_marks_observe_starts(struct hp_marks *m, uint64_t starts, uint64_t young, int64_t now, uint32_t pauses_before);
/* ... or, instead, on G1 with its count of cycles begun (g1_count_starts):
 * the concurrent start pause (g1_start_pause), from hp_marking's `starts`
 * and `full`. */
void hp_marks_observe_g1_start(struct hp_marks *m, uint64_t starts, uint64_t full, int64_t now,
			       uint32_t pauses_before);
/* Generational ZGC (z_end above), at each GC event: `young` the
 * collections begun (hp_gc_count), `began` whether it is a Major Mark
 * Start (hp_marks_observe_starts saw `starts` move). Pushes the pending
 * major at its old Relocate Start once trusted. GC callback. */
void hp_marks_observe_z_end(struct hp_marks *m, uint64_t young, bool began, uint32_t pauses_before);

/* What z_end says, for info, status and the profile. */
void hp_marks_z_end_text(const struct hp_marks *m, char *buf, size_t len);
/* What generational Shenandoah's cycles showed (sh), for status and the
 * profile. */
void hp_marks_sh_text(const struct hp_marks *m, char *buf, size_t len);

/* Records a requested marking that completed: it covers the samples
 * allocated at or before `at_request` (the pause count when it was asked
 * for). `seen_before`: m->seen.n then. (The bookkeeping of
 * hp_marks_request, for tests.) */
void hp_marks_requested(struct hp_marks *m, uint32_t at_request, uint64_t seen_before, uint32_t pauses_now);
/* The same, the request made at request_ns (hp_mono_ns): a marking that
 * began after it began at its first pause, not at the request (request.c). */
void hp_marks_requested_at(struct hp_marks *m, uint32_t at_request, uint64_t seen_before, uint32_t pauses_now,
			   int64_t request_ns);

/* Markings that began after a sample with `pause_at_alloc` was allocated
 * and have completed (0: not verified yet). Saturates at HP_MARKS_RING. */
unsigned hp_marks_age(const struct hp_marks *m, uint32_t pause_at_alloc);

/* The markings counted at one moment. A profile's walk of the live table
 * is built against them (its ages, the last start, the gap), so that a
 * marking the GC callback counts during the walk does not make the
 * samples walked after it verified at the survival since the marking
 * before. (The walk still sees that marking's clearing: snapshot.c walks
 * again when one was counted.) */
struct hp_marks_at {
	uint64_t seen, requested;       /* each ring's n */
};
void hp_marks_at_now(const struct hp_marks *m, struct hp_marks_at *at);
/* hp_marks_age, hp_marks_last_start and hp_marks_gap_ns as of `at`. */
unsigned hp_marks_age_at(const struct hp_marks *m, const struct hp_marks_at *at, uint32_t pause_at_alloc);
bool hp_marks_last_start_at(const struct hp_marks *m, const struct hp_marks_at *at, int64_t *ns);
int64_t hp_marks_gap_ns_at(const struct hp_marks *m, const struct hp_marks_at *at);

/* The latest cover: samples allocated at or before it are verified.
 * false if no marking has completed since counting began. */
bool hp_marks_horizon(const struct hp_marks *m, uint32_t *cover);
/* When pause count `p` ended (CLOCK_MONOTONIC ns), `now` the count now:
 * false if the ring no longer holds it. */
bool hp_marks_pause_end(const struct hp_marks *m, uint32_t p, uint32_t now, int64_t *ns);
/* GC callback, before hp_marks_observe: hp_marking's `marked` after a pause
 * (pauses_before counted before it). */
void hp_marks_observe_marked(struct hp_marks *m, uint64_t marked, uint32_t pauses_before);
/* The pause counts between which a sample the latest marking covers, still
 * referenced after its first pause and cleared before its end, was alive
 * when it began (hp_survival_alive_at_start): G1, for a cycle we requested
 * or an own one whose start pause the count of cycles begun named (g1_exact)
 * (whose cover is exact), from the concurrent start pause (cover + 1), or
 * an own cycle the canaries bound, from that bound (g1_win_from), to
 * Remark; true then. Otherwise false with an empty window: `before` the
 * Remark wherever one came after the cover (a sample still referenced
 * after it was alive at the start), `from` equal to it; 0, 0 outside G1
 * or with no such Remark. Generational Shenandoah's own whole-heap
 * markings (sh_window): an old marking's window runs from its bootstrap
 * cycle's weak roots to its own Final Mark; a global cycle's is empty,
 * `before` its Final Mark. */
bool hp_marks_young_window(const struct hp_marks *m, uint32_t cover, uint32_t *from, uint32_t *before);

/* G1: an upper bound on the concurrent start pause of the cycle that ended
 * at pause count `done`, whose newest cleared canary was released at
 * `best` (its cover's lower bound): the oldest canary released after it
 * and still set, or the pause before the cycle's Remark if earlier; 0 if
 * neither is known by `done`. Equal to best + 1, the start is pinned.
 * (Used by the canary look; tests.) */
uint32_t hp_marks_g1_start_bound(const struct hp_marks *m, uint32_t best, uint32_t done);

/* How a request is made (hp_marks_request): on a helper thread attached
 * to `vm`, so that the requester can give up on it after m->timeout_ns;
 * on G1 the requester calls tick(ctx) every ~2 ms meanwhile (NULL: none). */
struct hp_marks_watch {
	JavaVM *vm;
	void (*tick)(void *ctx);
	void *ctx;
};

/* Asks for a marking (hp_request_marking) if samples exist that no marking
 * has seen, and records its cover; flags as hp_request_marking's (HP_MARK_*).
 * `pauses` is the profiler's live pause
 * counter. Blocks for the marking. Returns 0 if one completed, 1 if none was
 * needed, else a negative errno; m->last_request says what happened. Call
 * with the dump lock held, from a JVM thread, never after VMDeath.
 * With `watch` (NULL: none) the call is made on a helper thread; on G1
 * the caller ticks until the request returns, so it can look at the
 * samples during the marking (a sample still referenced after its Remark
 * was alive at its start: request.c). A request that has not returned after
 * m->timeout_ns (or at m->deadline_ns, set by the asker for all of a
 * profile's requests) is given up: -ETIME, nothing counted, the helper left
 * to finish (its time charged to the budget); until it does, each request
 * returns -EBUSY at once (a marking it completes late is the collector's
 * own to the counters and canaries). Where the helper cannot be started
 * or attached, the request runs on the calling thread, with no time limit. */
int hp_marks_request(struct hp_marks *m, struct hp_probe *probe, unsigned flags, const _Atomic uint64_t *pauses,
		     const struct hp_marks_watch *watch);

/* A request's time limit: m->timeout_ns, or mark_timeout='s default. */
int64_t hp_marks_time_limit_ns(const struct hp_marks *m);

/* Serial and Parallel: no concurrent marking to ask for (a request is a
 * full collection, or refused without one allowed). */
bool hp_marks_no_concurrent(struct hp_probe *probe);

/* For periodic profiles, before asking: where the collector's own cycles
 * are seen by canaries (single-generation ZGC and Shenandoah) and have
 * come at most HP_OWN_GAP_MAX_NS apart lately, waits up to twice their
 * median gap (at most HP_OWN_WAIT_MAX_NS) for one that begins after this
 * call: the canary made after the latest pause is cleared only by a
 * marking whose first pause comes later. Returns 1 if one came (counted
 * at the next hp_marks_canary_check; m->last_request says so), 0 if none
 * came or none was expected (ask then), -ENOTSUP where canaries do not
 * see the collector's cycles. A cycle of the collector's own costs the
 * program nothing more; a requested one comes on top of them (Shenandoah
 * under load: +10..+19% of the process's CPU with period=10,
 * docs/load-cost.md). Stops early (0) once *stop is set (NULL: never).
 * Dump lock held; JVM thread. */
#define HP_OWN_GAP_MAX_NS (2 * 1000000000LL)
#define HP_OWN_WAIT_MAX_NS (3 * 1000000000LL)
int hp_marks_await_own(struct hp_marks *m, JNIEnv *jni, const _Atomic uint64_t *pauses, const _Atomic int *stop);

/* For periodic profiles on generational ZGC, before asking (as
 * hp_marks_await_own elsewhere): where its own majors are counted at their
 * end (z_end trusted, no request in flight) and have begun at most
 * HP_Z_GAP_MAX_NS apart lately (the median gap, the latest within two
 * gaps), waits up to twice that gap (at most HP_Z_BEGIN_WAIT_MAX_NS) for
 * one to begin after this call, and then up to HP_Z_MAJOR_WAIT_MAX_NS from
 * its start for it to end (pushed at its old Relocate Start). Majors came
 * 2.3-2.8 s apart on JDK 25 under the load bench's grow site, 2.8-4.5 s on
 * 21, and took ~1 s: a profile waits ~1-4 s, at most ~8. Why: its young
 * collections clear no weak reference, so only a major shows what died in
 * the old generation; a requested major (1-3 s under load) fits the
 * 1/50 budget about once a minute, and a profile written between majors
 * read a list dropped since the last one as the list before it (+285% to
 * +586% in 8 of 36 profiles, docs/load-zgen-cover-learnt.md). An own
 * major judges only what was promoted by its start (z_back collections
 * before it), the rest is estimated as after any; a drop after the major
 * began still reads as the list before it (docs/load-zgen-await-major.md).
 * Returns 1 if one came (counted at the next tick; m->last_request says
 * so), 0 if none came or none was expected (ask then), -ENOTSUP off
 * generational ZGC. Stops early
 * (0) once *stop or *stop2 is set (NULL: never; the sampler passes the
 * exit hook's flag and the agent thread's stop, so VMDeath and `stop`,
 * which wait 2 s and 5 s for the agent thread, are not held by a wait).
 * Dump lock held: a `heapprobe top` screen or a `dump` asked for
 * meanwhile waits behind it. A major whose old Mark End was repeated may
 * be pushed a pause early (z_end above), its dead not yet cleared: a
 * profile that waited for it is written then. A request that timed out
 * and has since returned leaves z_requesting set until
 * hp_marks_may_request sees it: that profile does not wait. "Lately"
 * counts requested majors' starts too (hp_marks_gap_ns). Agent or JVM
 * thread (no JNI). */
#define HP_Z_GAP_MAX_NS (5 * 1000000000LL)
#define HP_Z_BEGIN_WAIT_MAX_NS (5 * 1000000000LL)
#define HP_Z_MAJOR_WAIT_MAX_NS (3 * 1000000000LL)
int hp_marks_await_z_major(struct hp_marks *m, const _Atomic int *stop, const _Atomic int *stop2);

/* Whether the collector's own cycles carry the view now, where canaries
 * see them (single-generation ZGC and Shenandoah): 1 if they came at most
 * HP_OWN_GAP_MAX_NS apart lately (the median gap, *gap) and the latest
 * began at most `within` ns ago (*ago), 0 if
 * not, -ENOTSUP where canaries do not see them. A `heapprobe top` screen
 * asks for no marking then (sampler.c): the view is at most about a gap
 * old, and a request would add a cycle to the collector's own. Dump
 * lock held. */
int hp_marks_own_lately(const struct hp_marks *m, int64_t within, int64_t *gap, int64_t *ago);

/* For periodic profiles: false (and m->last_request says why) if asking
 * now would spend more than m->budget of the wall clock in requested
 * markings (1/50 where it is not set), judged by the last one's duration:
 * since the last one ended, at least its duration / budget. */
bool hp_marks_may_request(struct hp_marks *m);

#endif
