/* The sampler's state and the functions its files share (internal: not
 * part of the API). One profiler per process: `prof`, defined in sampler.c.
 * The files, one concern each:
 *   sampler.c   start and stop, the agent thread, dump, the exit marking
 *   snapshot.c  a profile built and written to each format, upload=
 *   status.c    the heapprobe command's answers: status, top
 *   sample.c    the allocation callback: stack (cache, decoder, checker),
 *               site, live reference; the GC callback
 *   walker.c    setting up the stack walker, decoder and chunk reader
 *   judge.c     what each marking says of the samples: survival
 *               judgments, sweeps, history records
 *   estimate.c  the live view: verified and estimated bytes, the scale
 *   events.c    per-sample events for format=jfr */
#ifndef HP_AGENT_PROF_H
#define HP_AGENT_PROF_H

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vmstructs/clock.h"
#include "vmstructs/allocated.h"
#include "agent/history.h"
#include "agent/live.h"
#include "agent/marks.h"
#include "agent/profile.h"
#include "agent/samplelog.h"
#include "agent/upload.h"
#include "agent/weights.h"
#include "agent/stackcache.h"
#include "agent/stacks.h"
#include "agent/stripe.h"
#include "agent/allocclock.h"
#include "agent/samplerate.h"
#include "agent/survival.h"
#include "agent/cohort.h"
#include "heapusage/marking.h"
#include "heapusage/probe_access.h"
#include "vmstructs/symdata.h"
#include "vmstructs/framedecode.h"
#include "vmstructs/framewalk.h"
#include "vmstructs/safefetch.h"
#include "vmstructs/stackchunk.h"
#include "vmstructs/symtab.h"
#include "agent/options.h"

#define MAX_SITES 65536
#define STACK_CACHE_SLOTS 32768       /* 256 KiB */
#define STACK_CACHE_BYTES (2u << 20)  /* ~43k stacks of 48 bytes */

/* What a marking is asked for (sampler.c, mark_before_profile); the
 * index of prof.asked_by. */
enum mark_for {
	MARK_ASKED,             /* dump, stop: always a marking */
	MARK_PERIODIC,          /* period=: waits for an own cycle, else asks within the budget */
	MARK_TOP,               /* a `heapprobe top` screen: none while own cycles carry the view */
	MARK_HISTORY,           /* the history's (no period=): asks within the budget */
	MARK_EXIT,              /* the exit hook: always, a full collection on Serial and Parallel */
	MARK_FOR_COUNT,
};

struct profiler {
	JavaVM *vm;
	jfieldID class_redefined_count; /* java.lang.Class.classRedefinedCount, or NULL */
	jvmtiEnv *jvmti;
	struct hp_probe *probe;
	struct hp_agent_options o;
	struct hp_sites sites;
	struct hp_live live;
	struct hp_samplelog log;        /* threads and allocation samples, for format=jfr */
	bool keep_samples;              /* format=jfr: samples keep their time and thread */
	/* upload=: the server pusher, and per site slot the allocation totals
	 * of the last upload (the server wants allocations per period). */
	struct hp_upload *upload;
	double *up_objects, *up_bytes;
	uint32_t up_nslots;
	int64_t up_from_s;
	sem_t wake;
	_Atomic int running;            /* sampling on */
	_Atomic int stopping;           /* agent thread must leave */
	/* The exit hook has started (the JVM is shutting down): no marking is
	 * asked for or waited for after it, but its own. Set before it takes
	 * the dump lock, read under it (mark_before_profile). */
	_Atomic int exiting;
	/* Markings asked for (attempts, refused ones included; G1's second
	 * cycle for an asked-for profile not counted), by what asked; written
	 * under the dump lock, `status` reads them without it. */
	uint64_t asked_by[MARK_FOR_COUNT];
	/* The first requested stop-the-world collection that took longer
	 * than mark_pause= (ns; 0 = none): periodic profiles, `top` screens
	 * and the leak history ask for none after it. Written under the dump
	 * lock; `status` reads it without. */
	_Atomic uint64_t pause_over_ns;
	_Atomic int unloading;          /* the JVM is going: no more profiles (hp_profiler_quiesce) */
	_Atomic int thread_alive;
	/* Counters every allocating thread bumps: one cache line per thread
	 * stripe, so that 4 threads on 2 CPUs do not pass lines around. */
	struct hp_striped_counter in_callbacks;     /* SampledObjectAlloc calls under way */
	struct hp_striped_counter samples, cache_hits;
	_Atomic int gc_pending;
	_Atomic uint64_t gc_events;
	int64_t start_realtime_ns;
	uint64_t baseline_bytes;        /* heap in use when sampling began: never sampled, not in the view */
	/* Markings and what they verified (marks.h); written by the GC callback
	 * and, for requests, under dump_lock. */
	struct hp_marks marks;
	/* Live bytes per site over time (history.h); under dump_lock. */
	struct hp_history history;
	bool have_history;
	/* Survival per site learnt from the markings (survival.h): the view
	 * between markings. Under dump_lock. */
	struct hp_survival surv;
	bool have_surv;
	uint64_t surv_markings;         /* markings_counted() at the last epoch */
	/* Sites whose objects died together since the last marking
	 * (cohort.h), seen by the sweeps. Under dump_lock. */
	struct hp_cohort cohort;
	bool have_cohort;
	bool cohort_on;                 /* young collections are pauses (Serial, Parallel, G1): looked for */
	uint64_t cohort_markings;       /* markings_counted() when the last sweep began */
	/* When marking number i (markings_counted()) began, CLOCK_REALTIME,
	 * at [i % HP_MARK_STARTS]; 0 unknown: the span of later judgments. */
#define HP_MARK_STARTS 64
	int64_t mark_start_real[HP_MARK_STARTS];
	bool canary_tried;
	/* The allocation clock of the estimate (allocclock.h): samples taken by
	 * the end of each pause. */
	struct hp_alloc_clock clock;
	/* The interval the sampler really keeps (samplerate.h), from each
	 * thread's allocated bytes (vmstructs/allocated.h); rate_reason says
	 * why not measured where it is not. */
	struct hp_sample_rate rate;
	struct hp_allocated allocated;
	_Atomic int rate_ready;
	char rate_reason[320];
	/* HotSpot 11-24's sampler takes the first object of a thread's first
	 * TLAB after a collection ahead of its turn (samplerate.h): where the
	 * data says so (symbols/: sampler.after_gc_tlab) and VMStructs has the
	 * TLAB's refills, such samples are set aside. Set before rate_ready. */
	bool after_gc_aside;
	_Atomic uint64_t after_gc_set_aside;
	jobject exit_hook;              /* shutdown hook Thread whose start asks for a last marking */
	pthread_mutex_t dump_lock;
	bool have_lines;
	/* Stacks from the cache keyed by the frame walk (stackcache.h); off
	 * until the walker is set up at VM init or attach. */
	struct hp_framewalk walk;
	struct hp_stackcache stack_cache;
	_Atomic int walk_ready;
	char walk_reason[320];          /* why stacks come from GetStackTrace alone (err + prefix) */
	struct hp_stackchunk chunks;    /* virtual thread frames past the return barrier */
	char chunk_reason[320];         /* why they are not read, or "" */
	struct hp_safefetch safefetch;  /* how the chunks' heap words are read */
	_Atomic(const volatile int64_t *) classes_unloaded;
	/* Class redefinitions (JvmtiExport::_redefinition_count, JDK 17+; on
	 * JDK 11 only the bool _has_redefined_a_class, after which nothing
	 * is cached): stale every cached stack. NULL without .symtab. */
	const volatile uint64_t *redefinitions;
	const volatile uint8_t *has_redefined;
	bool unloads_in_pauses;         /* the collector unloads classes only in pauses */
	_Atomic uint64_t walk_failed[HP_FW_RESULTS + 1];   /* by -result - 1; last: WALK_NO_EPOCH */
	/* Stacks decoded from the walk on a cache miss (framedecode.h), so
	 * GetStackTrace runs only for what the decoder cannot name and as the
	 * one-in-HP_DECODE_CHECK_EVERY (later one-in-HP_DECODE_CHECK_LATER)
	 * checker. Set up with the walker. */
	struct hp_framedecode decode;
	_Atomic int decode_ready;
	char decode_reason[320];        /* why misses go to GetStackTrace */
	uintptr_t enter_special;        /* jmethodID of Continuation.enterSpecial (JDK 21+), or 0 */
	_Atomic uint64_t decoded, decode_checked, asked;
	_Atomic uint64_t asked_invalid;   /* GetStackTrace answers holding an invalid jmethodID */
	_Atomic uint64_t checks_overtaken; /* checks voided by a redefinition in between */
	_Atomic uint64_t decode_failed[HP_FD_RESULTS], method_failed[HP_METHOD_RESULTS];
	/* The last profile written (status): where, when, why; or the last
	 * failure. Under dump_lock. */
	char last_written[PATH_MAX + 64];
	char last_why[64];
	int64_t last_write_ns;
	char last_error[512];
	uint64_t profiles_written;
};

extern struct profiler prof;

/* walk_failed's last slot: a key naming a Method* with no epoch to date it. */
#define WALK_NO_EPOCH (-(HP_FW_RESULTS + 1))

/* A reading of the allocation clock now, and the clock at a moment. */
struct clock_now {
	int64_t ns;
	uint64_t samples;
};

struct live_acc {
	double objects, bytes, var;
	double recent_objects, recent_bytes;
	double age_bytes[4];            /* verified bytes by markings survived: 1, 2-3, 4-7, 8+ */
	/* The estimate's parts before finish_estimate: bytes still
	 * referenced (raw) and expected alive now (est), recent and verified. */
	double rec_est, rec_obj, rec_var;
	double rec_cleared;             /* expected alive now among the recent samples found dead (0 in truth) */
	double ver_raw, ver_est, ver_obj, ver_var;
	double rec_bytes, rec_objects, rec_var2;        /* the recent part of bytes, objects, var (anchor_estimate) */
	/* The survival curve's own error, shared by every recent sample a
	 * block of its buckets serves (survival.h hp_surv_unc): per block,
	 * the bytes it stands behind (times the log coefficient) and the
	 * variance of its log share. */
	float unc_bytes[HP_SURV_AGES], unc_var_log[HP_SURV_AGES];
	/* The same for the verified part: each verified sample's expected
	 * alive bytes times the sd of the log of the survival it was read
	 * at (the span curve, or the curve by age at its own age), summed.
	 * The readings rest on the same few blocks, so their errors are
	 * taken as one (fully correlated): the square of the sum is the
	 * site's model variance, ver_est^2 var_log where every sample read
	 * the same value. (Before, the last sample's variance stood for all
	 * of them.) */
	double span_sd_bytes;
};

/* A live sample as the JFR writer wants it (format=jfr only). */
struct live_rec {
	uint32_t slot, thread, markings;
	bool verified;
	int64_t time_ns;
	uint64_t size;
	double weight;                  /* bytes, before the view's scale */
};

struct snap_ctx {
	struct live_acc *acc;
	struct live_rec *recs;          /* format=jfr: every sample counted in the view or recent */
	size_t nrecs, caprecs;
	bool recs_oom;
	uint32_t min_age;               /* in the view: verified by >= min_age markings (>= 1) */
	uint64_t counted, recent, younger;      /* samples: in the view, not verified, verified < min_age */
	double bytes, var, recent_bytes;        /* totals */
	/* The estimate of what is alive now (survival.h): the verified bytes
	 * as the marking found them and after their survival since, and the
	 * recent bytes counted by their sites' survival at their age. */
	bool estimating;                /* survival known (a marking has judged samples) */
	struct hp_marks_at marks_at;    /* the markings the profile is built against (marks.h) */
	uint32_t nslots;
	double gap_s, since_s;          /* between markings; since the last one began (seconds of wall time) */
	double gap, since;              /* the same on the allocation clock (samples) */
	struct clock_now now;
	double verified_raw, verified_est, recent_est;
	uint64_t recent_estimated;      /* recent samples counted through the estimate */
};

/* What a snapshot is for, when not the configured outputs: a command's
 * own file= and format= (dump, stop), or the top sites as text (top=N). */
struct snap_req {
	const struct hp_agent_options *dest;    /* file= and format(s) of this write; NULL: the profiler's */
	FILE *top;                              /* top=N: lines to here instead of any file */
	unsigned top_n;
};

/* Per-sample events being built for a format=jfr profile (events.c). */
struct events {
	struct hp_prof_event *events;
	size_t n, cap;
	struct hp_prof_thread *threads;
	size_t nthreads;
	struct hp_prof_heap heap;
	bool have_heap;
	struct hp_alloc_rec *allocs;
	size_t nallocs, capallocs;
	bool oom;
};

/* Room for element n of a doubling array of `size`-byte elements, the
 * first allocation `first` of them: the array (moved if it grew), or NULL
 * if it cannot grow, the old one left as it was. */
static inline void *grow_for(void *arr, size_t *cap, size_t n, size_t size, size_t first)
{
	if (n < *cap)
		return arr;
	size_t want = *cap ? *cap * 2 : first;
	if (want > SIZE_MAX / size)
		return NULL;
	void *grown = realloc(arr, want * size);
	if (grown)
		*cap = want;
	return grown;
}

/* sampler.c */
void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint32_t pauses_now(void);
double sampling_interval(void);
void describe_rate(char *out, size_t cap);
double sample_probability(uint64_t size);
double entry_bytes(const struct hp_live_entry *e, double *var);
uint64_t markings_counted(void);
bool heap_figure(struct hp_prof_heap *out, int64_t now_ns);

/* sample.c */
uint64_t method_version(void *ctx, jmethodID id);
int check_jmid(void *ctx, jmethodID id);
bool overtaken(uint64_t redef_before, const uint64_t *key, const uintptr_t *aux, int nkey, const uint64_t *epoch,
	       const jvmtiFrameInfo *asked, jint nasked);
void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
void JNICALL on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jclass klass,
			      jlong size);
void JNICALL on_gc_start(jvmtiEnv *jvmti);
void JNICALL on_gc_finish(jvmtiEnv *jvmti);

/* walker.c */
void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass);
void setup_walker(jvmtiEnv *jvmti, JNIEnv *jni);
void describe_stacks(char *out, size_t cap);

/* judge.c */
struct clock_now clock_now(void);
double clock_at(int64_t real_ns, void *ctx);
void settle_pending(void);
void sweep_begin(void);
void sweep_end(void);
void sweep_saw(const struct hp_live_entry *e, bool dead);
void sweep_ask_begin(void);
void sweep_while_asking(void *jni);
void survival_catch_up(void);
void cohort_ring_judged(uint32_t site, int64_t born_ns, bool alive, void *ctx);
void hist_dead(struct hp_live_entry *e, void *ctx);
void markings_tick(JNIEnv *jni);
void history_tick(JNIEnv *jni, bool profile);

/* snapshot.c: writes a profile (dump lock held); stop_upload ends upload= */
int write_snapshot(JNIEnv *jni, const char *why, bool periodic, bool final, const struct snap_req *req);
void stop_upload(void);

/* status.c: the top sites as the command's tab-separated lines */
void write_top(FILE *out, unsigned n, const struct hp_profile *p, const struct snap_ctx *c, double scale,
	       const char *estimate);

/* estimate.c */
void add_live(struct hp_live_entry *e, void *vctx);
void finish_estimate(struct snap_ctx *c, uint32_t nslots);
void setup_estimate(struct snap_ctx *c);
double choose_scale(const struct snap_ctx *c, char *out, size_t cap);
void anchor_estimate(struct snap_ctx *c, char *out, size_t cap);
void describe_live(char *out, size_t cap, const struct snap_ctx *c, double scale, const char *estimate);
/* One clause for the log line: the live total, its interval, how much a
 * marking verified (the profile's comments carry describe_live). */
void describe_live_short(char *out, size_t cap, const struct snap_ctx *c, double scale);

/* events.c */
int build_events(struct events *ev, struct snap_ctx *ctx, const struct hp_prof_sample *samples,
		 const uint32_t *slot_sample, uint32_t nslots, double scale, int64_t now_ns);
void free_events(struct events *ev);

#endif
