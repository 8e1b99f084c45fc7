/* JEP 331 sampling, liveness, and the statistics that turn samples into
 * bytes.
 *
 * Sampling. HotSpot samples allocations as a Poisson process over bytes
 * with mean interval R (SetHeapSamplingInterval): an object of S bytes is
 * sampled with probability p(S) = 1 - exp(-S/R).
 *
 * Allocation estimate. Each sample stands for 1/p(S) objects and S/p(S)
 * bytes (Horvitz-Thompson); a site's estimate is the sum over its samples.
 * Unbias each sample, then sum, never the reverse: a site's samples have
 * different sizes, and 1/p is not linear in S (Go's runtime/pprof
 * scaleHeapSample, jemalloc's prof). At S = R one sample is 1.58 objects,
 * not 1 (async-profiler's max(S, R) is 37% low there).
 *
 * Live estimate. Each tracked sample has a weak reference. A reference
 * still set proves the object alive only once a marking that began after
 * the allocation has ended (marks.h): a young collection never clears the
 * reference of an object that died in the old generation, and a concurrent
 * cycle treats what is allocated during it as live. So the live view
 * ("inuse") sums, Horvitz-Thompson as above, only the samples a marking has
 * verified; the others are reported apart as "recent" (alive or not, no
 * marking has looked yet). Before a profile is written the agent asks for a
 * concurrent marking when the cost allows (option mark=, marks.c), and
 * counts the collector's own markings too. Between markings, the view is
 * an estimate of what is alive now: each verified or recent sample counts
 * for its probability of being alive now, from its site's survival by age
 * learnt from the markings (survival.c); the profile says how much of the
 * view is verified and how much estimated.
 *
 * Scaling, and only to live bytes. The sum over verified samples is an
 * unbiased estimate of the live bytes of everything allocated since
 * sampling began; scaling it to the heap's `used` adds the bias of every
 * way `used` is not live object bytes: old garbage after a young pause
 * (G1, +88% measured), garbage in pages a ZGC cycle did not relocate
 * (+28..42%), whole humongous regions (G1 small regions, +10..21%), and
 * the start-up heap that was never sampled. Only a figure the marking
 * itself found (ZGC's mark-end live) is live object bytes, and the view is
 * scaled to it only where that is the better estimate (choose_scale); a full
 * GC's used is not (dead objects left as fillers, marking_figure). Objects from before sampling began (CDS
 * archive, start-up, or the whole heap before a late attach) are left out,
 * and the profile says how much heap was in use then.
 *
 * Error. The Horvitz-Thompson variance estimate for a site's live bytes is
 * sum S^2 (1 - pi) / pi^2 over its verified samples, pi being the sample's
 * overall inclusion probability; the 95% interval is the estimate +-1.96
 * sqrt(variance). For small objects (S << R) the total's relative standard
 * error is about sqrt(R / live bytes): 5% at 200 MiB live and R = 512 KiB,
 * 2.2% at 1 GiB. Objects far larger than R are sampled with pi ~ 1: a
 * census, weight ~1, no variance; the formula needs no special case. The
 * interval covers sampling error, not deaths since the marking (which the
 * request before each profile keeps to a moment).
 */
#include "agent/sampler.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/history.h"
#include "agent/live.h"
#include "agent/marks.h"
#include "agent/profile.h"
#include "agent/samplelog.h"
#include "agent/upload.h"
#include "agent/stackcache.h"
#include "agent/stacks.h"
#include "agent/stripe.h"
#include "agent/survival.h"
#include "heapusage/marking.h"
#include "heapusage/probe.h"
#include "heapusage/symdata.h"
#include "vmstructs/framedecode.h"
#include "vmstructs/framewalk.h"
#include "vmstructs/safefetch.h"
#include "vmstructs/stackchunk.h"
#include "vmstructs/symtab.h"

#define MAX_SITES 65536
#define STACK_CACHE_SLOTS 32768       /* 256 KiB */
#define STACK_CACHE_BYTES (2u << 20)  /* ~43k stacks of 48 bytes */

static struct profiler {
	JavaVM *vm;
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
	bool canary_tried;
	/* The allocation clock of the estimate (survival.h): samples taken by
	 * the end of each pause. */
	struct hp_alloc_clock clock;
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
} prof = { .dump_lock = PTHREAD_MUTEX_INITIALIZER };

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	FILE *out = hp_log_open(&prof.o);
	va_list ap;
	va_start(ap, fmt);
	fputs("heapprobe: ", out);
	vfprintf(out, fmt, ap);
	fputc('\n', out);
	va_end(ap);
	hp_log_close(out);
}

/* The pause count a sample records (marks.h). */
static uint32_t pauses_now(void)
{
	return (uint32_t)atomic_load_explicit(&prof.gc_events, memory_order_acquire);
}

/* P(sample | object of `size` bytes) at mean interval R. */
static double sample_probability(uint64_t size)
{
	double r = (double)prof.o.interval;
	if (r <= 0)
		return 1.0;
	double p = -expm1(-(double)size / r);
	return p > 0 ? p : 1e-12;
}

/* A tracked sample's Horvitz-Thompson bytes B = size / pi and variance
 * term size^2 (1 - pi) / pi^2 = B (B - size); pi = P(sampled) / thinning. */
static double entry_bytes(const struct hp_live_entry *e, double *var)
{
	double pi = sample_probability(e->size) / e->thin;
	double b = (double)e->size / pi;
	*var = b * (b - (double)e->size);
	return b;
}

/* Markings the rings have counted (the count hp_marks_age is relative to). */
static uint64_t markings_counted(void)
{
	return atomic_load(&prof.marks.seen.n) + atomic_load(&prof.marks.requested.n);
}

/* Where a sample's time goes, for work on the per-sample cost: built with
 * -DHP_SAMPLE_TIMING=ON, the agent prints the mean TSC cycles of each step
 * at exit (wall cycles on the allocating thread: they include preemption). */
#ifdef HP_SAMPLE_TIMING
#include <x86intrin.h>
enum { T_STACK, T_CLASS, T_SITE, T_LIVE, T_STEPS };
static _Atomic uint64_t step_cycles[T_STEPS], timed_samples;
#define STEP_START() uint64_t step_t = __rdtsc()
#define STEP_END(k)                                                                                \
	do {                                                                                       \
		uint64_t now_ = __rdtsc();                                                         \
		atomic_fetch_add_explicit(&step_cycles[k], now_ - step_t, memory_order_relaxed);   \
		step_t = now_;                                                                     \
	} while (0)
__attribute__((destructor)) static void print_step_cycles(void)
{
	uint64_t n = atomic_load(&timed_samples);
	if (n)
		fprintf(stderr, "heapprobe sample timing: %llu samples, mean TSC cycles: stack %.0f, "
			"remembered site %.0f, class id + site %.0f, live ref %.0f\n", (unsigned long long)n,
			(double)step_cycles[T_STACK] / n, (double)step_cycles[T_CLASS] / n,
			(double)step_cycles[T_SITE] / n, (double)step_cycles[T_LIVE] / n);
}
#else
#define STEP_START() (void)0
#define STEP_END(k) (void)0
#endif

/* Hits since this thread last checked a cached stack against
 * GetStackTrace, and decodes since it last checked a decoded one. */
static __thread uint32_t hits_since_check, decodes_since_check;

/* One decoded stack in HP_DECODE_CHECK_EVERY per thread is compared with
 * GetStackTrace (every one with stacks=verify) until the run has checked
 * HP_DECODE_CHECKS_FIRST of them, then one in HP_DECODE_CHECK_LATER.
 * Decodes happen on cache misses only, so at first this is ~1.5% of the
 * samples of a workload whose every stack is new (javac), and less
 * elsewhere. A check is a GetStackTrace (~14 us on javac's 30-60 frames):
 * one in 64 throughout was ~6% of javac's callback. A decoder wrong for a
 * JVM is wrong from its first stacks (frame layouts, scope data and
 * Method fields are per release), which the first 64 checks, over the
 * first ~4k decoded stacks, see as before; one in 512 then keeps watching
 * for the rest of the run (a mismatch still turns the fast path off). */
#define HP_DECODE_CHECK_EVERY 64
#define HP_DECODE_CHECKS_FIRST 64
#define HP_DECODE_CHECK_LATER 512

_Static_assert(sizeof(struct hp_java_frame) == sizeof(jvmtiFrameInfo) &&
		       __builtin_offsetof(struct hp_java_frame, location) == __builtin_offsetof(jvmtiFrameInfo, location),
	       "hp_java_frame is laid out as jvmtiFrameInfo");

/* The index of the first frame where two stacks differ, or -1 if they
 * are the same. */
static jint first_difference(const jvmtiFrameInfo *a, jint na, const jvmtiFrameInfo *b, jint nb)
{
	jint i = 0;
	while (i < na && i < nb && a[i].method == b[i].method && a[i].location == b[i].location)
		i++;
	return i == na && i == nb ? -1 : i;
}

/* walk_failed's last slot: a key naming a Method* with no epoch to date it. */
#define WALK_NO_EPOCH (-(HP_FW_RESULTS + 1))

/* The cached stack for this sample's walk key, or NULL (key and its
 * length, or a negative hp_fw_result, left in key/nkey for the insert). */
static struct hp_stack_entry *cached_stack(JNIEnv *jni, uint64_t *key, uintptr_t *aux, int cap, int *nkey,
						 bool *interpreted, uint64_t *epoch, uint64_t *redefs, bool *cacheable)
{
	*cacheable = false;
	*nkey = HP_FW_NO_JAVA_FRAMES;
	if (!atomic_load_explicit(&prof.walk_ready, memory_order_acquire) ||
	    atomic_load_explicit(&prof.stack_cache.disabled, memory_order_relaxed))
		return NULL;
	/* The epoch of keys holding a Method*: the classes-unloaded counter;
	 * without it (-XX:-UsePerfData), collections seen, where classes are
	 * only unloaded inside a pause (a Method* is reused only after its
	 * class is unloaded, and mutators run again only after the pause's
	 * GarbageCollectionFinish has counted it); else none. */
	const volatile int64_t *unloaded = atomic_load_explicit(&prof.classes_unloaded, memory_order_relaxed);
	bool have_epoch = unloaded || prof.unloads_in_pauses;
	*epoch = unloaded ? (uint64_t)*unloaded : (1ull << 63) | atomic_load_explicit(&prof.gc_events, memory_order_acquire);
	*nkey = hp_framewalk_key(&prof.walk, jni, (int)prof.o.depth, key, cap, interpreted, aux);
	if (*nkey <= 0) {
		atomic_fetch_add_explicit(&prof.walk_failed[*nkey < 0 ? -*nkey - 1 : 0], 1, memory_order_relaxed);
		return NULL;
	}
	if (*interpreted && !have_epoch) {
		/* A Method* key with no way to see it go stale: not cached,
		 * but decoded (methods.h re-checks each Method at every use). */
		atomic_fetch_add_explicit(&prof.walk_failed[-WALK_NO_EPOCH - 1], 1, memory_order_relaxed);
		return NULL;
	}
	*redefs = prof.redefinitions ? *prof.redefinitions : 0;
	if (prof.has_redefined && *prof.has_redefined) {
		/* JDK 11 after a redefinition: no count to date entries by */
		atomic_fetch_add_explicit(&prof.walk_failed[-WALK_NO_EPOCH - 1], 1, memory_order_relaxed);
		return NULL;
	}
	*cacheable = true;
	return hp_stackcache_find(&prof.stack_cache, key, (uint32_t)*nkey, *epoch, *redefs);
}

/* Class redefinitions so far: the count (JDK 17+), the flag (JDK 11), 0
 * when neither is known. */
static inline uint64_t redefinitions_now(void)
{
	return prof.redefinitions ? *prof.redefinitions : prof.has_redefined ? *prof.has_redefined : 0;
}

/* The version of a jmethodID's method for hp_sites (stacks.h): the Method
 * it names, read safely, once any class was redefined (a redefined method
 * keeps its jmethodID, pointed at the new Method); 0 before, or where a
 * jmethodID is not a Method** (JDK 26's table kind). */
static uint64_t method_version(void *ctx, jmethodID id)
{
	(void)ctx;
	if (redefinitions_now() == 0 || !atomic_load_explicit(&prof.decode_ready, memory_order_acquire) ||
	    !prof.decode.methods.jmid_is_pointer)
		return 0;
	uintptr_t m = 0;
	return hp_safefetch_read(prof.decode.methods.fetch, &m, (uintptr_t)id, sizeof(m)) ? 0 : m;
}

/* Whether a jmethodID from GetStackTrace may be given to JVMTI (see
 * hp_methods_check_id); without the decoder's layout, trusted. */
static int check_jmid(void *ctx, jmethodID id)
{
	(void)ctx;
	if (!atomic_load_explicit(&prof.decode_ready, memory_order_acquire) || !prof.decode.methods.jmid_is_pointer)
		return 0;
	/* The race that hands out bad jmethodIDs needs a redefinition (the
	 * jmethodID cache grows outside a safepoint only after one): with the
	 * count known and still 0, nothing to check (~10 system calls saved
	 * per new method). */
	if ((prof.redefinitions || prof.has_redefined) && redefinitions_now() == 0)
		return 0;
	return hp_methods_check_id(&prof.decode.methods, (uintptr_t)id);
}


/* A fast answer that differs from GetStackTrace's is no evidence against
 * the fast path when a class was redefined in between (the callback runs
 * in native state: a redefinition's safepoint can pass between the two,
 * and a method that became obsolete gets a jmethodID of its own), or when
 * decoding the same frames again now gives GetStackTrace's answer (JDK
 * 11, whose flag says only that some class was redefined once). Counted. */
static bool overtaken(uint64_t redef_before, const uint64_t *key, const uintptr_t *aux, int nkey,
		      const uint64_t *epoch, const jvmtiFrameInfo *asked, jint nasked)
{
	bool moved = redefinitions_now() != redef_before;
	if (!moved && key && prof.has_redefined && *prof.has_redefined) {
		jvmtiFrameInfo again[prof.o.depth];
		int mr, nd = hp_framedecode(&prof.decode, key, aux, nkey, *epoch, prof.enter_special,
					    (struct hp_java_frame *)again, (int)prof.o.depth, &mr);
		moved = nd < 0 || first_difference(asked, nasked, again, nd) < 0;
	}
	if (moved)
		atomic_fetch_add_explicit(&prof.checks_overtaken, 1, memory_order_relaxed);
	return moved;
}

/* Names the frame where a decoded stack and GetStackTrace's differ. */
static void name_frame(jvmtiEnv *jvmti, const jvmtiFrameInfo *f, jint n, jint at, char *out, size_t cap)
{
	char *name = NULL, *cls_sig = NULL;
	jclass cls = NULL;
	if (at >= n) {
		snprintf(out, cap, "none: the other stack is longer");
		return;
	}
	if (check_jmid(NULL, f[at].method)) {
		snprintf(out, cap, "an invalid jmethodID %p", (void *)f[at].method);
		return;
	}
	if ((*jvmti)->GetMethodName(jvmti, f[at].method, &name, NULL, NULL) == JVMTI_ERROR_NONE &&
	    (*jvmti)->GetMethodDeclaringClass(jvmti, f[at].method, &cls) == JVMTI_ERROR_NONE && cls)
		(*jvmti)->GetClassSignature(jvmti, cls, &cls_sig, NULL);
	snprintf(out, cap, "%s.%s bci %lld", cls_sig ? cls_sig : "?", name ? name : "?", (long long)f[at].location);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)cls_sig);
}

/* The fast path is wrong somewhere: off for the rest of the run, with the
 * frame that differed. GetStackTrace's frame is named through JVMTI; the
 * fast path's is shown raw (jmethodID and location): a wrong answer may
 * hold a jmethodID whose method is gone, which JVMTI must not be given. */
static void fast_path_mismatch(jvmtiEnv *jvmti, const char *what, const jvmtiFrameInfo *asked, jint n,
			       const jvmtiFrameInfo *fast, jint nfast)
{
	jint at = first_difference(asked, n, fast, nfast);
	char want[256], got[96];
	for (jint i = at; i < n; i++)
		if (check_jmid(NULL, asked[i].method)) {
			/* GetStackTrace's own answer is broken (a jmethodID
			 * read from a freed cache, under class redefinition):
			 * no evidence against the fast path. */
			atomic_fetch_add_explicit(&prof.asked_invalid, 1, memory_order_relaxed);
			return;
		}
	name_frame(jvmti, asked, n, at, want, sizeof(want));
	if (at < nfast)
		snprintf(got, sizeof(got), "jmethodID %p location %lld (GetStackTrace's: %p)", (void *)fast[at].method,
			 (long long)fast[at].location, at < n ? (void *)asked[at].method : NULL);
	else
		snprintf(got, sizeof(got), "ends there");
	atomic_fetch_add_explicit(&prof.stack_cache.mismatches, 1, memory_order_relaxed);
	hp_stackcache_disable(&prof.stack_cache, "a %s stack (%d frames) differed from GetStackTrace (%d frames) at "
			      "frame %d: GetStackTrace has %s, the %s stack %s", what, (int)nfast, (int)n, (int)at, want,
			      what, got);
}

static void record_sample(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jclass klass,
			  uint64_t size)
{
	jvmtiFrameInfo frames_buf[prof.o.depth], asked_buf[prof.o.depth];
	const jvmtiFrameInfo *frames = frames_buf;
	jint n = 0, nasked = 0;
	uint64_t key[2 * prof.o.depth + 16], epoch = 0, redefs = 0;
	uintptr_t aux[prof.o.depth + 8];
	int nkey;
	bool interpreted = false, asked = false, have = false, cacheable;
	uint64_t redef_before = redefinitions_now();
	STEP_START();
	struct hp_stack_entry *hit = cached_stack(jni, key, aux, (int)(sizeof(key) / sizeof(key[0])), &nkey,
							&interpreted, &epoch, &redefs, &cacheable);
	bool check = hit && (prof.o.stacks == HP_STACKS_VERIFY || ++hits_since_check >= HP_STACKCACHE_VERIFY_EVERY);
	bool fast_on = !atomic_load_explicit(&prof.stack_cache.disabled, memory_order_relaxed);
	bool check_decode = false;
	if (hit && !check) {
		hp_sites_raw(&prof.sites, hit->ids, hit->nframes, frames_buf);
		n = (jint)hit->nframes;
		have = true;
		atomic_fetch_add_explicit(&prof.cache_hits.s[hp_thread_stripe()].v, 1, memory_order_relaxed);
	} else if (!hit && nkey > 0 && fast_on && atomic_load_explicit(&prof.decode_ready, memory_order_acquire)) {
		int mr = 0;
		int nd = hp_framedecode(&prof.decode, key, aux, nkey, epoch, prof.enter_special,
					(struct hp_java_frame *)frames_buf, (int)prof.o.depth, &mr);
		if (nd > 0) {
			n = nd;
			have = true;
			if (prof.probe && (prof.probe->faults & HP_FAULT_CORRUPT_FRAME))
				frames_buf[0].location++;       /* HEAPPROBE_FAULTS=corrupt-frame */
			atomic_fetch_add_explicit(&prof.decoded, 1, memory_order_relaxed);
			uint32_t every = atomic_load_explicit(&prof.decode_checked, memory_order_relaxed) <
							 HP_DECODE_CHECKS_FIRST
						 ? HP_DECODE_CHECK_EVERY
						 : HP_DECODE_CHECK_LATER;
			check_decode = prof.o.stacks == HP_STACKS_VERIFY || ++decodes_since_check >= every;
		} else if (nd < 0) {
			atomic_fetch_add_explicit(&prof.decode_failed[-nd - 1], 1, memory_order_relaxed);
			if (nd == HP_FD_METHOD && mr < 0)
				atomic_fetch_add_explicit(&prof.method_failed[-mr - 1], 1, memory_order_relaxed);
		}
	}
	if (!have || check || check_decode) {
		/* The event's own jthread, not NULL ("current thread"),
		 * though both name the allocating thread: on JDK 21 builds a
		 * NULL thread makes GetStackTrace disable virtual-thread mount
		 * transitions for ALL threads (JvmtiVTMSTransitionDisabler: a
		 * global monitor and a walk of every JavaThread) where a named
		 * platform or virtual thread costs a no-op or one thread. */
		asked = (*jvmti)->GetStackTrace(jvmti, thread, 0, (jint)prof.o.depth, asked_buf, &nasked) ==
			JVMTI_ERROR_NONE;
		atomic_fetch_add_explicit(&prof.asked, 1, memory_order_relaxed);
		if (!asked)
			nasked = 0;
		if (!have) {
			frames = asked_buf;
			n = nasked;
			have = asked;
		}
	}
	if (check) {
		hits_since_check = 0;
		hp_sites_raw(&prof.sites, hit->ids, hit->nframes, frames_buf);
		if (asked && first_difference(asked_buf, nasked, frames_buf, (jint)hit->nframes) >= 0 &&
		    !overtaken(redef_before, NULL, NULL, 0, NULL, asked_buf, nasked))
			fast_path_mismatch(jvmti, "cached", asked_buf, nasked, frames_buf, (jint)hit->nframes);
		else if (asked)
			atomic_fetch_add_explicit(&prof.stack_cache.verified, 1, memory_order_relaxed);
		if (!asked) {
			frames = frames_buf;
			n = (jint)hit->nframes;
		}
	} else if (check_decode) {
		decodes_since_check = 0;
		if (asked && first_difference(asked_buf, nasked, frames_buf, n) >= 0) {
			if (!overtaken(redef_before, key, aux, nkey, &epoch, asked_buf, nasked))
				fast_path_mismatch(jvmti, "decoded", asked_buf, nasked, frames_buf, n);
			frames = asked_buf;     /* GetStackTrace's answer, not the other */
			n = nasked;
		} else if (asked) {
			atomic_fetch_add_explicit(&prof.decode_checked, 1, memory_order_relaxed);
		}
	}
	if (!hit && cacheable)
		atomic_fetch_add_explicit(&prof.stack_cache.misses, 1, memory_order_relaxed);
	STEP_END(T_STACK);
	/* A cached stack whose samples had this class before knows its site. */
	struct hp_site *site = hit && !check ? hp_stackcache_memo_site(hit, jni, klass) : NULL;
	STEP_END(T_CLASS);
	if (!site) {
		uint32_t class_id = hp_sites_class_id(&prof.sites, jvmti, klass);
		site = hp_sites_intern(&prof.sites, jvmti, jni, frames, n, class_id);
		if (hit && !check && site)
			hp_stackcache_memo(hit, jni, klass, site);
	}
	STEP_END(T_SITE);
	atomic_fetch_add_explicit(&prof.samples.s[hp_thread_stripe()].v, 1, memory_order_relaxed);
	if (!site)
		return;
	if (!hit && have && cacheable && !site->invalid &&
	    !atomic_load_explicit(&prof.stack_cache.disabled, memory_order_relaxed))
		hp_stackcache_insert(&prof.stack_cache, key, (uint32_t)nkey, interpreted, epoch, redefs, site->ids,
				     site->nframes);
	double w = 1.0 / sample_probability(size);
	atomic_fetch_add_explicit(&site->samples, 1, memory_order_relaxed);
	hp_atomic_add_double(&site->alloc_objects_bits, w);
	hp_atomic_add_double(&site->alloc_bytes_bits, w * (double)size);
	uint32_t slot = (uint32_t)(site - prof.sites.slots), th = HP_SAMPLELOG_NO_THREAD;
	int64_t now_ns = 0;
	if (prof.keep_samples) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		now_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
		th = hp_samplelog_thread(&prof.log, jvmti, jni, thread);
		hp_samplelog_alloc(&prof.log, &(struct hp_alloc_rec){ slot, th, now_ns, size, w * (double)size });
	} else if (prof.o.live) {
		/* The sample's age for the estimate between markings
		 * (survival.h): the coarse clock (a few ns, 1-4 ms ticks). */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME_COARSE, &ts);
		now_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	}
	if (prof.o.live)
		hp_live_add(&prof.live, jni, object, slot, size, pauses_now(), now_ns, th);
	STEP_END(T_LIVE);
#ifdef HP_SAMPLE_TIMING
	atomic_fetch_add_explicit(&timed_samples, 1, memory_order_relaxed);
#endif
}

static void JNICALL on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jclass klass,
				     jlong size)
{
	/* Dekker-style with hp_profiler_stop: both sides use seq_cst, so
	 * either stop sees this callback counted or the callback sees
	 * running == 0 (acquire/release alone does not order a store before a
	 * later load). */
	_Atomic int64_t *in = &prof.in_callbacks.s[hp_thread_stripe()].v;
	atomic_fetch_add(in, 1);
	if (atomic_load(&prof.running) && size > 0)
		record_sample(jvmti, jni, thread, object, klass, (uint64_t)size);
	atomic_fetch_sub(in, 1);
}

/* GC callback rules: no JNI, no allocation, no blocking lock. sem_post is
 * none of those (and async-signal-safe). */
static void JNICALL on_gc_finish(jvmtiEnv *jvmti)
{
	/* The world is stopped: no sample is allocated between the two. */
	uint64_t before = atomic_load_explicit(&prof.gc_events, memory_order_relaxed);
	hp_marks_on_gc(&prof.marks, prof.probe, (uint32_t)before);
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	hp_alloc_clock_tick(&prof.clock, (int64_t)t.tv_sec * 1000000000 + t.tv_nsec,
			    (uint64_t)hp_striped_sum(&prof.samples, memory_order_relaxed));
	atomic_fetch_add_explicit(&prof.gc_events, 1, memory_order_release);
	atomic_store_explicit(&prof.gc_pending, 1, memory_order_release);
	sem_post(&prof.wake);
}

/* ---- stack walker set-up --------------------------------------------------- */

/* A virtual thread's stack, as GetStackTrace gives it, ends above the
 * continuation's entry, Continuation.enterSpecial (JDK 21+): its
 * jmethodID, made here, tells the decoder where to stop. 0 before JDK 21. */
static uintptr_t enter_special_id(jvmtiEnv *jvmti, JNIEnv *jni)
{
	uintptr_t id = 0;
	jclass c = (*jni)->FindClass(jni, "jdk/internal/vm/Continuation");
	if (!c) {
		(*jni)->ExceptionClear(jni);
		return 0;
	}
	jint count = 0;
	jmethodID *methods = NULL;
	if ((*jvmti)->GetClassMethods(jvmti, c, &count, &methods) == JVMTI_ERROR_NONE) {
		for (jint i = 0; i < count && !id; i++) {
			char *name = NULL;
			if ((*jvmti)->GetMethodName(jvmti, methods[i], &name, NULL, NULL) == JVMTI_ERROR_NONE && name &&
			    strcmp(name, "enterSpecial") == 0)
				id = (uintptr_t)methods[i];
			(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
		}
		(*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
	}
	(*jni)->DeleteLocalRef(jni, c);
	return id;
}

/* The decoder names a Method by the jmethodID its class keeps, which
 * exists only once JVMTI or JNI asked for one: GetClassMethods makes them
 * for every method of a class, once, when the class is prepared (and for
 * the classes already loaded when decoding starts), as async-profiler
 * does. Without it, each stack with a method never named before would go
 * to GetStackTrace. Costs a JVMTI call per class and 8 bytes per method. */
static void make_method_ids(jvmtiEnv *jvmti, jclass klass)
{
	jint count = 0;
	jmethodID *methods = NULL;
	if ((*jvmti)->GetClassMethods(jvmti, klass, &count, &methods) == JVMTI_ERROR_NONE)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
}

static void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
	(void)jni, (void)thread;
	if (atomic_load_explicit(&prof.decode_ready, memory_order_acquire))
		make_method_ids(jvmti, klass);
}

static void make_loaded_method_ids(jvmtiEnv *jvmti, JNIEnv *jni)
{
	jint count = 0;
	jclass *classes = NULL;
	if ((*jvmti)->GetLoadedClasses(jvmti, &count, &classes) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < count; i++) {
		make_method_ids(jvmti, classes[i]);
		(*jni)->DeleteLocalRef(jni, classes[i]);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
}

/* The address of the libjvm symbol symbols/ names under `key` (a
 * static.* entry), or 0. */
static uintptr_t libjvm_symbol(const char *key)
{
	const char *name = hp_symdata_get(prof.probe->data, key);
	const struct hp_sym *s = name ? hp_probe_sym(prof.probe, name) : NULL;
	return s ? (uintptr_t)s->addr : 0;
}

/* The address of a libjvm static that symbols/ names under `key`
 * (static.Type._field), checked to lie in libjvm's data segments for `n`
 * bytes (.bss is in a writable segment, not a file-backed one), or NULL. */
static const volatile void *libjvm_static(const char *key, size_t n)
{
	uintptr_t a = libjvm_symbol(key);
	return a && hp_libjvm_writable(&prof.probe->jvm, a, n) ? (const volatile void *)a : NULL;
}

/* Where the JVM counts class redefinitions (symbols/ static.JvmtiExport.*). */
static void find_redefinition_count(void)
{
	const char *count = hp_symdata_get(prof.probe->data, "static.JvmtiExport._redefinition_count");
	const char *flag = hp_symdata_get(prof.probe->data, "static.JvmtiExport._has_redefined_a_class");
	prof.redefinitions = libjvm_static("static.JvmtiExport._redefinition_count", 8);
	prof.has_redefined = prof.redefinitions ? NULL : libjvm_static("static.JvmtiExport._has_redefined_a_class", 1);
	if (!prof.redefinitions && !prof.has_redefined)
		logf_("no class-redefinition count in libjvm (%s): cached stacks are not retired when classes are "
		      "redefined (the periodic check against GetStackTrace turns the cache off if one goes wrong)",
		      count ? count : flag ? flag : "no symbols/ entry");
}

/* The decoder answers cache misses; without it they go to GetStackTrace.
 * With stacks=jvmti (`decoding` false) only its Method layout is set up,
 * for check_jmid. */
static void setup_decoder(jvmtiEnv *jvmti, JNIEnv *jni, bool decoding)
{
	char err[256] = "";
	int rc = hp_framedecode_init(&prof.decode, prof.probe->vms, prof.probe->data, err, sizeof(err));
	if (rc) {
		hp_framedecode_free(&prof.decode);
		snprintf(prof.decode_reason, sizeof(prof.decode_reason), "frame decoder unavailable: %s",
			 err[0] ? err : strerror(-rc));
		logf_("%s; new stacks come from GetStackTrace", prof.decode_reason);
		return;
	}
	prof.enter_special = decoding ? enter_special_id(jvmti, jni) : 0;
	prof.decode.walk = &prof.walk;
	prof.decode.methods.fetch = prof.safefetch.fetch ? &prof.safefetch : NULL;
	/* decoded return pcs are dated by the redefinition count */
	prof.decode.redefinitions = prof.redefinitions;
	prof.decode.has_redefined = prof.has_redefined;
	atomic_store_explicit(&prof.decode_ready, 1, memory_order_release);
	pthread_mutex_lock(&prof.sites.lock);
	prof.sites.check_id = check_jmid;
	prof.sites.version = method_version;
	pthread_mutex_unlock(&prof.sites.lock);
	if (!decoding)
		return;
	/* Prepared from now on, then the ones before: none is missed. */
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_PREPARE, NULL);
	make_loaded_method_ids(jvmti, jni);
}

static const void *chunk_static(void *ctx, const char *key)
{
	(void)ctx;
	char full[128];
	snprintf(full, sizeof(full), "static.%s", key);
	return (const void *)libjvm_static(full, 4);
}

/* Frames past the continuation return barrier, in heap stack chunks: read
 * as the collector stores references (stackchunk.h). */
static void setup_chunks(void)
{
	const struct hp_heap_info *h = &prof.probe->heap;
	bool compressed = false, x_colored = false;
	enum hp_heap_oops oops = HP_OOPS_WIDE;
	if (h->kind == HP_GC_Z) {
		oops = h->generational == 1 ? HP_OOPS_ZPOINTER : HP_OOPS_WIDE;
		x_colored = h->generational == 0;
	} else if (!hp_vmflags_bool(&prof.probe->flags, "UseCompressedOops", &compressed) && compressed) {
		oops = HP_OOPS_NARROW;
	}
	char err[256] = "";
	int rc = h->kind == HP_GC_Z && h->generational < 0 ? -ENOENT : 0;
	if (rc)
		snprintf(err, sizeof(err), "which ZGC runs (generational or not) is unknown");
	else
		rc = hp_stackchunk_init(&prof.chunks, prof.probe->vms, prof.probe->data, chunk_static, NULL, oops,
					x_colored, err, sizeof(err));
	if (rc) {
		snprintf(prof.chunk_reason, sizeof(prof.chunk_reason), "heap stack chunks not read: %s",
			 err[0] ? err : strerror(-rc));
		logf_("%s; virtual thread stacks past a return barrier come from GetStackTrace", prof.chunk_reason);
		return;
	}
	/* heap words by SafeFetchN where it checked out */
	prof.chunks.fetch = prof.safefetch.fetch ? &prof.safefetch : NULL;
	prof.walk.chunks = &prof.chunks;
}

/* HotSpot's SafeFetchN for the fast path's reads of memory that may be
 * gone (a Method's first sight, heap stack chunks): checked once, else
 * those reads are process_vm_readv system calls (safefetch.h). */
static void setup_safefetch(void)
{
	char err[256] = "";
	/* hp_safefetch_init checks that they lie in libjvm's code */
	int rc = hp_safefetch_init(&prof.safefetch, &prof.probe->jvm, libjvm_symbol("static.SafeFetchN_impl"),
				   libjvm_symbol("static._SafeFetchN_fault"),
				   libjvm_symbol("static._SafeFetchN_continuation"), err, sizeof(err));
	if (rc)
		logf_("safe reads are process_vm_readv system calls, not HotSpot's SafeFetchN: %s",
		      err[0] ? err : strerror(-rc));
}

/* The frame walker needs the code cache and the interpreter, which exist
 * from VM init on, and one JavaThread* to learn where JNIEnv sits in it:
 * java.lang.Thread.eetop of the calling thread. */
static void setup_walker(jvmtiEnv *jvmti, JNIEnv *jni)
{
	char err[256] = "";
	setup_safefetch();
	if (prof.o.stacks == HP_STACKS_JVMTI) {
		snprintf(prof.walk_reason, sizeof(prof.walk_reason), "stacks=jvmti");
		find_redefinition_count();
		setup_decoder(jvmti, jni, false);   /* jmethodID checks only */
		return;
	}
	int rc = hp_framewalk_init(&prof.walk, prof.probe->vms, prof.probe->data, &prof.probe->jvm, err,
				   sizeof(err));
	jthread self = NULL;
	if (!rc) {
		jlong eetop = 0;
		jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
		jfieldID f = tc ? (*jni)->GetFieldID(jni, tc, "eetop", "J") : NULL;
		if (f && (*jvmti)->GetCurrentThread(jvmti, &self) == JVMTI_ERROR_NONE && self)
			eetop = (*jni)->GetLongField(jni, self, f);
		(*jni)->ExceptionClear(jni);
		if (tc)
			(*jni)->DeleteLocalRef(jni, tc);
		if (self)
			(*jni)->DeleteLocalRef(jni, self);
		rc = eetop ? hp_framewalk_set_thread(&prof.walk, jni, (uintptr_t)eetop, err, sizeof(err))
			   : (snprintf(err, sizeof(err), "java.lang.Thread.eetop is unreadable"), -ENOENT);
	}
	if (!rc)
		rc = hp_stackcache_init(&prof.stack_cache, STACK_CACHE_SLOTS, STACK_CACHE_BYTES);
	if (rc) {
		snprintf(prof.walk_reason, sizeof(prof.walk_reason), "frame walker unavailable: %s",
			 err[0] ? err : strerror(-rc));
		logf_("%s; stacks come from GetStackTrace", prof.walk_reason);
		return;
	}
	find_redefinition_count();
	setup_decoder(jvmti, jni, true);
	atomic_store(&prof.classes_unloaded, hp_perfdata_classes_unloaded(prof.probe));
	/* the continuation return barrier's address, where symbols/ names it */
	const volatile uintptr_t *rb = libjvm_static("static.StubRoutines._cont_returnBarrier", 8);
	if (rb) {
		prof.walk.cont_return_barrier = *rb;
		setup_chunks();
	}
	enum hp_gc_kind gc = prof.probe->heap.kind;
	prof.unloads_in_pauses = gc == HP_GC_SERIAL || gc == HP_GC_PARALLEL || gc == HP_GC_G1 || gc == HP_GC_EPSILON;
	atomic_store_explicit(&prof.walk_ready, 1, memory_order_release);
}

/* One line on where stacks came from, for the profile and the log. */
static void describe_stacks(char *out, size_t cap)
{
	struct hp_stackcache *c = &prof.stack_cache;
	if (!atomic_load(&prof.walk_ready)) {
		snprintf(out, cap, "stacks: GetStackTrace for every sample (%s)",
			 prof.walk_reason[0] ? prof.walk_reason : "walker not set up yet");
		return;
	}
	uint64_t failed = 0, top = 0;
	int top_reason = 0;
	for (int i = 0; i < HP_FW_RESULTS; i++) {
		uint64_t f = atomic_load(&prof.walk_failed[i]);
		failed += f;
		if (f > top)
			top = f, top_reason = i;
	}
	/* Why misses were not decoded: the decoder's reasons, then the
	 * method table's (for "method without a jmethodID"). */
	uint64_t undecoded = 0, dtop = 0, mtop = 0;
	int dtop_result = 0;
	for (int i = 0; i < HP_FD_RESULTS; i++) {
		uint64_t f = atomic_load(&prof.decode_failed[i]);
		undecoded += f;
		if (f > dtop)
			dtop = f, dtop_result = -i - 1;
	}
	const char *dreason = dtop ? hp_framedecode_result_name(dtop_result) : "none";
	for (int i = 0; i < HP_METHOD_RESULTS && dtop_result == HP_FD_METHOD; i++) {
		uint64_t f = atomic_load(&prof.method_failed[i]);
		if (f > mtop)
			mtop = f, dreason = hp_method_result_name(-i - 1);
	}
	if (!atomic_load(&prof.decode_ready))
		dreason = prof.decode_reason[0] ? prof.decode_reason : "decoder not set up";
	uint64_t asked = atomic_load(&prof.asked);
	int len = snprintf(out, cap, "stacks: %llu cached, %llu decoded, %llu asked GetStackTrace (%llu not walkable "
			   "(most: %s), %llu walked, not decoded (most: %s)), %llu cached and %llu decoded checked "
			   "against GetStackTrace, %llu mismatches, %llu stale, cache %zu bytes%s, %u methods, "
			   "%llu not cacheable (interpreted frames, no class-unload epoch; or JDK 11 after a class "
			   "redefinition), %llu GetStackTrace answers "
			   "with an invalid jmethodID, %llu checks overtaken by a class redefinition, frame table: %u "
			   "distinct frames, %zu bytes with the sites' frame ids, return pcs (%s): %llu compiled "
			   "frames named from kept ones (%llu after a class redefinition), %llu entries written, "
			   "%llu chains more than %d deep decoded each time",
			   (unsigned long long)hp_striped_sum(&prof.cache_hits, memory_order_relaxed),
			   (unsigned long long)atomic_load(&prof.decoded), (unsigned long long)asked,
			   (unsigned long long)failed,
			   !top ? "none" : hp_framewalk_result_name(-top_reason - 1),
			   (unsigned long long)undecoded, dreason, (unsigned long long)atomic_load(&c->verified),
			   (unsigned long long)atomic_load(&prof.decode_checked),
			   (unsigned long long)atomic_load(&c->mismatches), (unsigned long long)atomic_load(&c->stale),
			   atomic_load(&c->bytes), atomic_load(&c->full) ? ", full" : "",
			   atomic_load(&prof.decode_ready) ? atomic_load(&prof.decode.methods.count) : 0u,
			   (unsigned long long)atomic_load(&prof.walk_failed[-WALK_NO_EPOCH - 1]),
			   (unsigned long long)(atomic_load(&prof.asked_invalid) + atomic_load(&prof.sites.invalid_ids)),
			   (unsigned long long)atomic_load(&prof.checks_overtaken), atomic_load(&prof.sites.nframes),
			   hp_sites_frame_bytes(&prof.sites),
			   !prof.decode.pcs ? "not kept: no table"
			   : prof.decode.redefinitions ? "dated by the class redefinition count"
			   : prof.decode.has_redefined ? "JDK 11's redefinition flag: none kept once set"
						       : "not kept: no class redefinition count",
			   (unsigned long long)atomic_load(&prof.decode.pc_hits),
			   (unsigned long long)atomic_load(&prof.decode.pc_hits_redefined),
			   (unsigned long long)atomic_load(&prof.decode.pc_kept),
			   (unsigned long long)atomic_load(&prof.decode.pc_deep), HP_FD_PC_CHAIN);
	if (len > 0 && (size_t)len < cap && prof.walk.cont_return_barrier) {
		/* virtual threads: the frames past a return barrier */
		struct hp_stackchunk *k = &prof.chunks;
		uint64_t kfailed = 0, ktop = 0;
		int ktop_reason = 0;
		for (int i = 0; i < HP_SC_RESULTS; i++) {
			uint64_t f = atomic_load(&k->failed[i]);
			kfailed += f;
			if (f > ktop)
				ktop = f, ktop_reason = -i - 1;
		}
		if (prof.walk.chunks)
			len += snprintf(out + len, cap - (size_t)len, ", heap stack chunks: %llu stacks read past a "
					"return barrier (%llu frames), %llu not read (most: %s), heap read by %s",
					(unsigned long long)atomic_load(&k->walked), (unsigned long long)atomic_load(&k->frames),
					(unsigned long long)kfailed, ktop ? hp_stackchunk_result_name(ktop_reason) : "none",
					k->fetch ? "SafeFetchN" : "process_vm_readv");
		else
			len += snprintf(out + len, cap - (size_t)len, ", %s", prof.chunk_reason);
	}
	if (atomic_load(&c->disabled) == 1 && len > 0 && (size_t)len < cap)
		snprintf(out + len, cap - (size_t)len, "; cache and decoder OFF: %s", c->reason);
}

/* The heap figure beside the profile (JFR's jdk.GCHeapSummary, the text
 * report's and the HTML page's heading). */
static bool heap_figure(struct hp_prof_heap *out, int64_t now_ns)
{
	struct hp_heap_usage u = { .sz = sizeof(u) };
	struct hp_marking m = { .sz = sizeof(m) };
	if (hp_heap_usage(prof.probe, HP_USAGE_POST_GC, &u) != 0)
		return false;
	*out = (struct hp_prof_heap){ now_ns, u.used, u.committed, (uint32_t)u.gc_count, hp_usage_kind_name(u.kind),
				      hp_mode_name(u.mode), 0, "" };
	if (hp_marking(prof.probe, &m) == 0) {
		out->marked_live = m.live;
		out->marked_source = m.live_source ? m.live_source : "";
	}
	return true;
}

/* ---- history ------------------------------------------------------------- */

static int64_t realtime_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* When the latest marking began, on CLOCK_REALTIME (the samples' clock);
 * now if none. */
static int64_t last_start_real(void)
{
	struct timespec mono;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	int64_t mono_now = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec, real_now = realtime_ns(), start;
	return hp_marks_last_start(&prof.marks, &start) ? real_now - (mono_now - start) : real_now;
}

/* A reading of the allocation clock now, and the clock at a moment. */
struct clock_now {
	int64_t ns;
	uint64_t samples;
};

static struct clock_now clock_now(void)
{
	return (struct clock_now){ realtime_ns(), (uint64_t)hp_striped_sum(&prof.samples, memory_order_relaxed) };
}

static double clock_at(int64_t real_ns, void *ctx)
{
	const struct clock_now *n = ctx;
	return hp_alloc_clock_at(&prof.clock, real_ns, n->ns, n->samples);
}

/* The pending dead (survival.h) that the latest marking covers. */
static void settle_pending(void)
{
	uint32_t cover;
	struct clock_now now = clock_now();
	if (prof.have_surv && hp_marks_horizon(&prof.marks, &cover))
		hp_survival_settle(&prof.surv, cover, clock_at(last_start_real(), &now), clock_at, &now);
}

/* A sample's age on the allocation clock when the latest marking began. */
static double age_at_last_start(const struct hp_live_entry *e)
{
	struct clock_now now = clock_now();
	return clock_at(last_start_real(), &now) - clock_at(e->time_ns, &now);
}

/* A sample's judgment by the markings, for the survival estimates: the
 * first time a marking covers it (alive) or it is found dead before or at
 * that, and each later marking that finds it still alive or dead. */
static void judge(struct hp_live_entry *e, bool alive)
{
	if (!prof.have_surv)
		return;
	double var, b = entry_bytes(e, &var);
	uint64_t m = markings_counted();
	bool covered = hp_marks_age(&prof.marks, e->pause_at_alloc) > 0;
	if (!alive) {
		hp_survival_judge(&prof.surv, e->site, b, e->judged == 0, false);
		if (e->judged == 0 && !covered)
			hp_survival_pend(&prof.surv, e->site, e->pause_at_alloc, e->time_ns, b);
		else if (e->judged == 0)
			hp_survival_judge_age(&prof.surv, e->site, b, age_at_last_start(e), false);
		else if (e->judged == (uint32_t)m)
			hp_survival_cleared(&prof.surv, e->site, b);
		return;
	}
	if (e->judged >= (uint32_t)m || !covered)
		return;         /* no marking has looked since the last judgment */
	if (e->judged == 0)
		hp_survival_judge_age(&prof.surv, e->site, b, age_at_last_start(e), true);
	hp_survival_judge(&prof.surv, e->site, b, e->judged == 0, true);
	e->judged = (uint32_t)m;
}

/* A sample found dead by any sweep: its bytes are freed, and if it was
 * counted at the last marking record, its going is part of the change. */
static void hist_dead(struct hp_live_entry *e, void *ctx)
{
	judge(e, false);
	if (!prof.have_history)
		return;
	double var, b = entry_bytes(e, &var);
	hp_history_dead(&prof.history, e->site, b, var, hp_marks_age(&prof.marks, e->pause_at_alloc),
			markings_counted());
}

static void sweep_alive(struct hp_live_entry *e, void *ctx)
{
	judge(e, true);
}

static void hist_alive(struct hp_live_entry *e, void *ctx)
{
	judge(e, true);
	double var, b = entry_bytes(e, &var);
	hp_history_alive(&prof.history, e->site, b, var, hp_marks_age(&prof.marks, e->pause_at_alloc),
			 *(const uint64_t *)ctx);
}

/* The collector's own markings a canary shows (single-generation ZGC and
 * Shenandoah), and a new epoch of the survival sums for each new marking.
 * Dump lock held. */
static void markings_tick(JNIEnv *jni)
{
	if (!prof.canary_tried && prof.o.live) {
		hp_marks_canary_setup(&prof.marks, prof.probe, jni, &prof.gc_events);
		prof.canary_tried = true;
	}
	hp_marks_canary_check(&prof.marks, jni, &prof.gc_events);
	uint64_t m = markings_counted();
	if (prof.have_surv && prof.surv_markings < m) {
		for (; prof.surv_markings < m; prof.surv_markings++)
			hp_survival_next_epoch(&prof.surv);
		settle_pending();
	}
}

/* After collections (agent thread) and after a requested marking (before
 * a profile): frees dead samples' references, and records the history
 * when a marking completed since the last record or a young record is due.
 * Dump lock held. */
static void history_tick(JNIEnv *jni, bool profile)
{
	if (!prof.o.live || !prof.sites.slots)
		return;
	markings_tick(jni);
	uint64_t m = markings_counted();
	int64_t now = realtime_ns();
	uint64_t pauses = atomic_load(&prof.gc_events);
	if (!prof.have_history || !hp_history_due(&prof.history, m, now, pauses, profile)) {
		hp_live_sweep(&prof.live, jni, sweep_alive, hist_dead, NULL);
		return;
	}
	struct timespec c0, c1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	hp_live_sweep(&prof.live, jni, hist_alive, hist_dead, &m);
	struct hp_heap_usage u = { .sz = sizeof(u) };
	uint64_t heap = hp_heap_usage(prof.probe, HP_USAGE_POST_GC | HP_USAGE_NO_JNI, &u) == 0 ? u.live : 0;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	uint64_t spent = (uint64_t)((c1.tv_sec - c0.tv_sec) * 1000000000 + (c1.tv_nsec - c0.tv_nsec));
	hp_history_record(&prof.history, m, now, pauses, heap, spent);
}

/* ---- snapshot ------------------------------------------------------------ */

struct live_acc {
	double objects, bytes, var;
	double recent_objects, recent_bytes;
	double age_bytes[4];            /* verified bytes by markings survived: 1, 2-3, 4-7, 8+ */
	/* The estimate's parts before finish_estimate: bytes still
	 * referenced (raw) and expected alive now (est), recent and verified. */
	double rec_est, rec_obj, rec_var;
	double rec_cleared;             /* expected alive now among the recent samples found dead (0 in truth) */
	double ver_raw, ver_est, ver_obj, ver_var;
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
	uint32_t nslots;
	double gap_s, since_s;          /* between markings; since the last one began (seconds of wall time) */
	double gap, since;              /* the same on the allocation clock (samples) */
	struct clock_now now;
	double verified_raw, verified_est, recent_est;
	uint64_t recent_estimated;      /* recent samples counted through the estimate */
};

static void add_live(struct hp_live_entry *e, void *vctx)
{
	struct snap_ctx *c = vctx;
	unsigned age = hp_marks_age(&prof.marks, e->pause_at_alloc);
	double pi = sample_probability(e->size) / e->thin;
	double w = 1.0 / pi, s = (double)e->size;
	struct live_acc *a = &c->acc[e->site];
	if (prof.keep_samples && (age == 0 || age >= c->min_age) && !c->recs_oom) {
		if (c->nrecs == c->caprecs) {
			size_t cap = c->caprecs ? c->caprecs * 2 : 1024;
			struct live_rec *r = realloc(c->recs, cap * sizeof(*r));
			if (r) {
				c->recs = r;
				c->caprecs = cap;
			} else {
				c->recs_oom = true;
			}
		}
		if (c->nrecs < c->caprecs)
			c->recs[c->nrecs++] = (struct live_rec){ e->site, e->thread, age, age > 0, e->time_ns, e->size,
								  s * w };
	}
	if (age == 0) {
		a->recent_objects += w;
		a->recent_bytes += s * w;
		c->recent_bytes += s * w;
		c->recent++;
		if (!c->estimating)
			return;
		/* Not judged yet: alive now with its site's survival at its age. */
		double f = hp_survival_first(&prof.surv, e->site, NULL);
		if (f < 0)
			return;
		double age_now = (double)c->now.samples - clock_at(e->time_ns, &c->now);
		double p = hp_survival_by_age(&prof.surv, e->site, age_now);
		if (p < 0)
			p = hp_survival_at_age(f, c->gap, age_now);
		double b = s * w;
		a->rec_est += b * p;
		a->rec_obj += w * p;
		a->rec_var += s * s * (1.0 - pi) / (pi * pi) * p * p + b * b * p * (1 - p);
		c->recent_estimated++;
		return;
	}
	if (age < c->min_age) {
		c->younger++;
		return;
	}
	/* Verified alive by the last marking: alive now with the site's
	 * survival over the time since that marking began. The variance adds
	 * the Bernoulli term of not knowing which survived. */
	double p = 1;
	if (c->estimating) {
		double n, g = hp_survival_next(&prof.surv, e->site, &n);
		if (g >= 0 && n >= 8) {
			p = hp_survival_since(g, c->gap, c->since);
		} else {
			/* Too few re-judgments yet: the exponential model of the
			 * first ones (memoryless: alive at the marking, alive
			 * now with e^{-lambda since}). */
			double f = hp_survival_first(&prof.surv, e->site, NULL);
			if (f >= 0)
				p = hp_survival_at_age(f, c->gap, c->since);
		}
	}
	double b = s * w;
	a->age_bytes[age >= 8 ? 3 : age >= 4 ? 2 : age >= 2 ? 1 : 0] += b * p;
	a->ver_raw += b;
	a->ver_est += b * p;
	a->ver_obj += w * p;
	a->ver_var += s * s * (1.0 - pi) / (pi * pi) * p * p + b * b * p * (1 - p);
	c->verified_raw += b;
	c->counted++;
}

/* A recent sample found dead before a marking covered it: what the model
 * expected of it alive now (finish_estimate). */
static void add_pending(uint32_t site, int64_t born_ns, double bytes, void *vctx)
{
	struct snap_ctx *c = vctx;
	if (site >= c->nslots)
		return;
	double p = hp_survival_by_age(&prof.surv, site, (double)c->now.samples - clock_at(born_ns, &c->now));
	if (p > 0)
		c->acc[site].rec_cleared += bytes * p;
}

/* Per site, the parts into the view, then the totals. Recent samples: the
 * model's expectation over every sample allocated since the last marking,
 * those found dead meanwhile included (the pending ones, whose ages are
 * known), all of it among the samples still referenced, never above their
 * bytes. (Those found dead carry what the model expected alive: leaving
 * them out read generational collectors 25-40% low, where young
 * collections clear the young dead; giving them the mean survival of the
 * referenced ones, which are younger, read them 10-100% high.) Verified
 * samples: the same with the dead since the marking at the referenced
 * ones' mean (hp_survival_with_cleared). */
static void finish_estimate(struct snap_ctx *c, uint32_t nslots)
{
	c->nslots = nslots;
	if (c->estimating)
		hp_survival_each_pending(&prof.surv, add_pending, c);
	for (uint32_t i = 0; i < nslots; i++) {
		struct live_acc *a = &c->acc[i];
		if (!(a->ver_raw > 0) && !(a->rec_est > 0))
			continue;
		double cv = c->estimating ? hp_survival_cleared_since(&prof.surv, i) : 0;
		double kr = 0, kv = 0;
		if (a->rec_est > 0)
			kr = fmin(a->recent_bytes, a->rec_est + a->rec_cleared) / a->rec_est;
		if (a->ver_est > 0)
			kv = hp_survival_with_cleared(a->ver_raw, a->ver_est, cv) / a->ver_est;
		for (int k = 0; k < 4; k++)
			a->age_bytes[k] *= kv;
		a->objects = a->ver_obj * kv + a->rec_obj * kr;
		a->bytes = a->ver_est * kv + a->rec_est * kr;
		a->var = a->ver_var * kv * kv + a->rec_var * kr * kr;
		c->bytes += a->bytes;
		c->var += a->var;
		c->verified_est += a->ver_est * kv;
		c->recent_est += a->rec_est * kr;
	}
}

/* What the estimate between markings needs (survival.h): the time between
 * markings and since the last began. Off (the verified samples as found,
 * the recent ones apart) until a marking has judged samples. */
static void setup_estimate(struct snap_ctx *c)
{
	int64_t last;
	double n;
	c->estimating = false;
	if (!prof.have_surv || !hp_marks_last_start(&prof.marks, &last) || hp_survival_first(&prof.surv, 0, &n) < 0)
		return;
	struct timespec mono;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	int64_t mono_now = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
	c->now = clock_now();
	int64_t gap = hp_marks_gap_ns(&prof.marks);
	if (gap <= 0) {
		/* One marking so far: it judged what was allocated since sampling began. */
		int64_t start_mono = mono_now - (c->now.ns - prof.start_realtime_ns);
		gap = last - start_mono;
	}
	if (gap <= 0)
		return;
	c->gap_s = (double)gap / 1e9;
	c->since_s = mono_now > last ? (double)(mono_now - last) / 1e9 : 0;
	/* On the allocation clock: objects die as the program allocates. */
	int64_t last_real = c->now.ns - (mono_now - last);
	double at_last = clock_at(last_real, &c->now);
	c->since = (double)c->now.samples - at_last;
	c->gap = at_last - clock_at(last_real - gap, &c->now);
	if (!(c->gap > 0))
		return;
	c->estimating = true;
}

/* The live bytes the marking that verified the view found, heap-wide
 * (sampled objects or not), when it describes the same moment as the view:
 * a ZGC cycle we requested with no pause since (its mark-end live bytes,
 * heapusage/marking.c). Not a full GC's used after compaction: Serial and
 * Parallel leave dead objects in place as fillers (MarkSweepDeadRatio,
 * Parallel's dense prefix), so it is not live object bytes; measured on
 * JDK 25 Parallel, 40-75 MiB of fillers in a 600 MiB heap, and scaling to
 * it put the kept set 10% high (docs/steady-state.md). G1's and
 * Shenandoah's concurrent markings keep theirs per region: none. */
static bool marking_figure(uint64_t *live, char *what, size_t len)
{
	uint32_t horizon, now = pauses_now();
	if (!hp_marks_horizon(&prof.marks, &horizon))
		return false;
	struct hp_marking mk = { .sz = sizeof(mk) };
	if (hp_marking(prof.probe, &mk) == 0 && mk.live && prof.marks.requests_ok &&
	    prof.marks.request_cover == horizon && prof.marks.request_end_pause == now) {
		*live = mk.live;
		snprintf(what, len, "%s", mk.live_source);
		return true;
	}
	return false;
}

/* Which estimate the live view gives, and why (for the profile).
 *
 * The Horvitz-Thompson sum over verified samples (HT) is unbiased for
 * what was allocated since sampling began; its relative standard error
 * is sd/HT (about sqrt(R / live bytes) for small objects). When the
 * marking found the live bytes M itself, M less what was never sampled
 * has no sampling error in total, and only the per-site shares keep
 * theirs. What was never sampled, U, lies between 0 and the heap in use
 * when sampling began (B): taking U = B/2 errs by at most B/2. So scale
 * to M - B/2 when that worst case is below half the sampling error
 * (B/2 / (M - B/2) < sd / (2 HT)); otherwise (small live sets, a late
 * attach into a big heap) the unbiased sum is the better estimate. Not
 * when recent samples are more than 1% of the view (the figure and the
 * view would describe different moments). */
static double choose_scale(const struct snap_ctx *c, char *out, size_t cap)
{
	uint64_t m;
	char what[240];
	double ht = c->bytes, err = ht > 0 ? sqrt(c->var) / ht : 0;
	if (!prof.o.live)
		return 1.0;
	if (!marking_figure(&m, what, sizeof(what))) {
		snprintf(out, cap, "unscaled (no live-bytes figure from that marking)");
		return 1.0;
	}
	double half_base = (double)prof.baseline_bytes / 2, target = (double)m - half_base;
	if (ht <= 0 || target <= 0) {
		snprintf(out, cap, "unscaled (%s: %llu bytes, not above what was never sampled)", what,
			 (unsigned long long)m);
		return 1.0;
	}
	double bias = half_base / target;
	if (c->recent_bytes > 0.01 * ht) {
		snprintf(out, cap, "unscaled (recent samples are %.1f%% of the view: %s does not cover them)",
			 100 * c->recent_bytes / ht, what);
		return 1.0;
	}
	if (bias >= err / 2) {
		snprintf(out, cap, "unscaled: %s found %llu bytes, but scaling to it could be off by %.1f%% (half the "
			 "%llu bytes in use before sampling, never sampled), not below half the sum's %.1f%% "
			 "sampling error", what, (unsigned long long)m, 100 * bias,
			 (unsigned long long)prof.baseline_bytes, 100 * err);
		return 1.0;
	}
	double scale = target / ht;
	snprintf(out, cap, "scaled x%.4f to %s: %llu bytes live heap-wide, less half the %llu bytes in use "
		 "before sampling began (worst-case bias %.2f%%, vs the unscaled sum's %.1f%% sampling error)",
		 scale, what, (unsigned long long)m, (unsigned long long)prof.baseline_bytes, 100 * bias, 100 * err);
	return scale;
}

/* What the live view covers, for the profile's comment. */
static void describe_live(char *out, size_t cap, const struct snap_ctx *c, double scale, const char *estimate)
{
	if (!prof.o.live) {
		snprintf(out, cap, "live tracking off: inuse values are 0");
		return;
	}
	uint32_t horizon;
	bool have = hp_marks_horizon(&prof.marks, &horizon);
	struct hp_marking mk = { .sz = sizeof(mk) };
	hp_marking(prof.probe, &mk);
	double half = 1.96 * sqrt(c->var) * scale, bytes = c->bytes * scale;
	double all = c->verified_raw + c->recent_bytes;
	int len = snprintf(out, cap,
			   "inuse: %.0f bytes [95%% %.0f..%.0f] estimated alive now (Horvitz-Thompson sum, %s): %.0f of the %.0f bytes in %llu "
			   "samples verified alive by a marking (the last began %.2f s ago on the allocation clock; "
			   "min_age %u markings, %llu verified samples seen by fewer left out), and %.0f of the recent "
			   "ones, by each site's survival learnt from the markings (markings %.2f s apart; none before "
			   "a marking has judged samples); recent, not yet verified: %.0f bytes (%.1f%%) in %llu samples "
			   "(recent_space, unscaled); ",
			   bytes, fmax(0.0, bytes - half), bytes + half, estimate, c->verified_est * scale, c->verified_raw,
			   (unsigned long long)c->counted, c->since_s, c->min_age, (unsigned long long)c->younger,
			   c->recent_est * scale, c->estimating ? c->gap_s : 0.0, c->recent_bytes,
			   all > 0 ? 100.0 * c->recent_bytes / all : 0.0, (unsigned long long)c->recent);
	if (len < 0 || (size_t)len >= cap)
		return;
	if (have)
		len += snprintf(out + len, cap - (size_t)len,
				"markings: %llu (source: %s; %s: %llu), last covers samples before GC pause #%u of %llu; ",
				(unsigned long long)markings_counted(), mk.source ? mk.source : "?",
				prof.marks.canary_state[0] ? prof.marks.canary_state : "canaries not set up yet",
				(unsigned long long)prof.marks.canary_markings, horizon,
				(unsigned long long)atomic_load(&prof.gc_events));
	else
		len += snprintf(out + len, cap - (size_t)len, "no marking since sampling began (source: %s; %s); ",
				mk.source ? mk.source : "?",
				prof.marks.canary_state[0] ? prof.marks.canary_state : "canaries not set up yet");
	if (len < 0 || (size_t)len >= cap)
		return;
	snprintf(out + len, cap - (size_t)len,
		 "request: %s; not covered: the %llu bytes in use when sampling began (never sampled)",
		 prof.marks.last_request, (unsigned long long)prof.baseline_bytes);
}

struct frame_key {
	const char *function, *file;
	int line;
};

static uint64_t frame_hash(const struct hp_frame *f)
{
	uint64_t h = (uint64_t)(uintptr_t)f->function * 0x9e3779b97f4a7c15ull;
	h ^= (uint64_t)(uintptr_t)f->file + (h << 7);
	h ^= (uint64_t)(unsigned)f->line * 0xff51afd7ed558ccdull;
	return h ^ (h >> 29);
}

/* ---- per-sample events (format=jfr) ---------------------------------------
 *
 * Each allocation sample and each live sample becomes an event whose weight
 * is the bytes it stands for. Weights are rounded so that per stack and
 * kind they add up to exactly the totals the other formats write: a running
 * sum is rounded, and each event gets the step of the rounded sum (the
 * steps of round(x_1 + ... + x_k) add up to the rounded total). Allocation
 * samples the reservoir let go (samplelog.h) are one more event per stack,
 * the rest of its total. */
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

static void ev_push(struct events *ev, const struct hp_prof_event *e)
{
	if (ev->n == ev->cap) {
		size_t cap = ev->cap ? ev->cap * 2 : 4096;
		struct hp_prof_event *n = realloc(ev->events, cap * sizeof(*n));
		if (!n) {
			ev->oom = true;
			return;
		}
		ev->events = n;
		ev->cap = cap;
	}
	ev->events[ev->n++] = *e;
}

static void collect_alloc(const struct hp_alloc_rec *r, void *vctx)
{
	struct events *ev = vctx;
	if (ev->nallocs == ev->capallocs) {
		size_t cap = ev->capallocs ? ev->capallocs * 2 : 4096;
		struct hp_alloc_rec *n = realloc(ev->allocs, cap * sizeof(*n));
		if (!n) {
			ev->oom = true;
			return;
		}
		ev->allocs = n;
		ev->capallocs = cap;
	}
	ev->allocs[ev->nallocs++] = *r;
}

static int by_slot_alloc(const void *a, const void *b)
{
	const struct hp_alloc_rec *x = a, *y = b;
	return x->site != y->site ? (x->site < y->site ? -1 : 1) : (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

static int by_slot_live(const void *a, const void *b)
{
	const struct live_rec *x = a, *y = b;
	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	if (x->verified != y->verified)
		return x->verified ? -1 : 1;
	return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

/* One stack's events of one kind, their weights rounded as they come:
 * each event gets the step of the rounded running sum, so the group adds
 * up to the rounded sum of its real weights; ev_group_end then gives the
 * last one whatever makes the group's sum exactly the total the other
 * formats write (a rounding step, from the order of the additions). */
struct ev_group {
	size_t first;           /* its first event in ev->events */
	double run;             /* sum of the real weights so far */
	int64_t given;          /* sum of the rounded weights so far */
};

static void ev_group_push(struct events *ev, struct ev_group *g, struct hp_prof_event e, double weight)
{
	g->run += weight;
	int64_t upto = llround(g->run);
	e.weight = upto - g->given;
	g->given = upto;
	ev_push(ev, &e);
}

static void ev_group_end(struct events *ev, const struct ev_group *g, int64_t target)
{
	if (ev->n > g->first)
		ev->events[ev->n - 1].weight += target - g->given;
}

static int build_events(struct events *ev, struct snap_ctx *ctx, const struct hp_prof_sample *samples,
			const uint32_t *slot_sample, uint32_t nslots, double scale, int64_t now_ns)
{
	/* Allocation samples, by stack. */
	hp_samplelog_each(&prof.log, collect_alloc, ev);
	if (ev->oom)
		return -ENOMEM;
	qsort(ev->allocs, ev->nallocs, sizeof(*ev->allocs), by_slot_alloc);
	size_t k = 0;
	for (uint32_t slot = 0; slot < nslots && !ev->oom; slot++) {
		if (!slot_sample[slot]) {
			while (k < ev->nallocs && ev->allocs[k].site == slot)
				k++;
			continue;
		}
		uint32_t si = slot_sample[slot] - 1;
		struct ev_group g = { .first = ev->n };
		for (; k < ev->nallocs && ev->allocs[k].site == slot; k++) {
			const struct hp_alloc_rec *r = &ev->allocs[k];
			ev_group_push(ev, &g, (struct hp_prof_event){ si, r->thread, r->time_ns, (int64_t)r->size, 0, 0,
								      HP_EVENT_ALLOC }, r->weight);
		}
		int64_t rest = samples[si].alloc_bytes - g.given;
		if (rest > 0)   /* what the reservoir let go: one remainder event */
			ev_push(ev, &(struct hp_prof_event){ si, HP_PROF_NO_THREAD, now_ns, 0, rest, 0, HP_EVENT_ALLOC });
		else
			ev_group_end(ev, &g, samples[si].alloc_bytes);
	}
	/* Live samples, by stack: verified first, then recent. */
	qsort(ctx->recs, ctx->nrecs, sizeof(*ctx->recs), by_slot_live);
	for (size_t i = 0; i < ctx->nrecs && !ev->oom;) {
		uint32_t slot = ctx->recs[i].slot;
		bool verified = ctx->recs[i].verified;
		struct ev_group g = { .first = ev->n };
		uint32_t si = slot < nslots ? slot_sample[slot] : 0;
		for (; i < ctx->nrecs && ctx->recs[i].slot == slot && ctx->recs[i].verified == verified; i++) {
			const struct live_rec *r = &ctx->recs[i];
			if (si)
				ev_group_push(ev, &g,
					      (struct hp_prof_event){ si - 1, r->thread, r->time_ns, (int64_t)r->size, 0,
								      (int32_t)r->markings,
								      verified ? HP_EVENT_LIVE : HP_EVENT_RECENT },
					      verified ? r->weight * scale : r->weight);
		}
		if (si)
			ev_group_end(ev, &g, verified ? samples[si - 1].inuse_bytes : samples[si - 1].recent_bytes);
	}
	if (ev->oom || ctx->recs_oom)
		return -ENOMEM;
	/* Threads: the names are copied while the table is locked. */
	pthread_mutex_lock(&prof.log.lock);
	ev->nthreads = prof.log.nthreads;
	ev->threads = calloc(ev->nthreads + 1, sizeof(*ev->threads));
	for (size_t i = 0; ev->threads && i < ev->nthreads; i++) {
		ev->threads[i].os_tid = prof.log.threads[i].tid;
		ev->threads[i].name = strdup(prof.log.threads[i].name);
	}
	pthread_mutex_unlock(&prof.log.lock);
	if (!ev->threads)
		return -ENOMEM;
	ev->have_heap = heap_figure(&ev->heap, now_ns);
	return 0;
}

static void free_events(struct events *ev)
{
	for (size_t i = 0; ev->threads && i < ev->nthreads; i++)
		free((char *)ev->threads[i].name);
	free(ev->threads);
	free(ev->events);
	free(ev->allocs);
}

/* ---- upload= ------------------------------------------------------------------
 *
 * Each profile also goes to the server as a Go heap profile: inuse as it is
 * now (a gauge), allocations since the previous upload (the server adds up
 * what it receives over a time range, so cumulative totals would count
 * every period again). */
static void push_upload(const struct hp_profile *p, const struct hp_prof_sample *samples, const uint32_t *slot_sample,
			uint32_t nslots, int64_t now_ns)
{
	if (prof.up_nslots != nslots) {
		double *o = calloc(nslots, sizeof(double)), *b = calloc(nslots, sizeof(double));
		if (!o || !b) {
			free(o);
			free(b);
			return;
		}
		free(prof.up_objects);
		free(prof.up_bytes);
		prof.up_objects = o;
		prof.up_bytes = b;
		prof.up_nslots = nslots;
	}
	struct hp_prof_sample *d = malloc(sizeof(*d) * (p->nsamples + 1));
	if (!d)
		return;
	memcpy(d, samples, sizeof(*d) * p->nsamples);
	for (uint32_t slot = 0; slot < nslots; slot++) {
		if (!slot_sample[slot])
			continue;
		struct hp_prof_sample *x = &d[slot_sample[slot] - 1];
		double ao = (double)x->alloc_objects, ab = (double)x->alloc_bytes;
		x->alloc_objects = llround(fmax(0.0, ao - prof.up_objects[slot]));
		x->alloc_bytes = llround(fmax(0.0, ab - prof.up_bytes[slot]));
		prof.up_objects[slot] = ao;
		prof.up_bytes[slot] = ab;
	}
	struct hp_profile q = *p;
	q.samples = d;
	/* Stamped with the moment it describes (the server files a profile
	 * under its own time, to the millisecond); the period in the URL. */
	q.time_nanos = now_ns;
	q.duration_nanos = now_ns - prof.up_from_s * 1000000000;
	q.events = NULL;
	q.nevents = 0;
	unsigned char *gz = NULL;
	size_t len = 0;
	if (hp_encode_pprof_go_heap(&q, &gz, &len) == 0)
		hp_upload_push(prof.upload, gz, len, prof.up_from_s, now_ns / 1000000000);
	prof.up_from_s = now_ns / 1000000000;
	free(d);
}

/* Sends what is queued (5 s at most), then stops the sender. Under the
 * dump lock: a late periodic profile of the agent thread cannot push to a
 * freed sender. */
static void stop_upload(void)
{
	pthread_mutex_lock(&prof.dump_lock);
	if (!prof.upload) {
		pthread_mutex_unlock(&prof.dump_lock);
		return;
	}
	struct hp_upload_stats st;
	hp_upload_stop(prof.upload, 5000, &st);
	prof.upload = NULL;
	pthread_mutex_unlock(&prof.dump_lock);
	logf_("upload: %llu profiles delivered, %llu dropped, %llu failed attempts%s%s",
	      (unsigned long long)st.delivered, (unsigned long long)st.dropped, (unsigned long long)st.attempts_failed,
	      st.last_error[0] ? "; last error: " : "", st.last_error);
	free(prof.up_objects);
	free(prof.up_bytes);
	prof.up_objects = prof.up_bytes = NULL;
	prof.up_nslots = 0;
}

/* The profile in one format; collapsed with live also writes PATH.alloc.
 * 0, or a negative errno with the reason in err. */
static int write_format(enum hp_format f, const struct hp_profile *p, const char *path, char *err, size_t errlen)
{
	switch (f) {
	case HP_FORMAT_PPROF: return hp_write_pprof(p, path, err, errlen);
	case HP_FORMAT_HTML: return hp_write_html(p, path, err, errlen);
	case HP_FORMAT_JFR: return hp_write_jfr(p, path, err, errlen);
	case HP_FORMAT_TEXT: return hp_write_text(p, path, err, errlen);
	case HP_FORMAT_COLLAPSED: break;
	}
	int rc = hp_write_collapsed(p, prof.o.live ? HP_VIEW_INUSE : HP_VIEW_ALLOC, path, err, errlen);
	if (rc == 0 && prof.o.live) {
		char alloc_path[PATH_MAX + 8];
		snprintf(alloc_path, sizeof(alloc_path), "%s.alloc", path);
		rc = hp_write_collapsed(p, HP_VIEW_ALLOC, alloc_path, err, errlen);
	}
	return rc;
}

/* Every configured format: one to PATH itself, several each to
 * PATH.<extension> (format=jfr+pprof: p.jfr, p.pb.gz from file=p), named
 * in `shown` for the log (PATH, or PATH.{pb.gz,jfr}). All are tried; the
 * first failure is returned. */
static int write_formats(const struct hp_profile *p, const struct hp_agent_options *d, const char *path, char *err,
			 size_t errlen, char *shown, size_t shownlen)
{
	unsigned fs = d->formats;
	if (!(fs & (fs - 1))) {
		snprintf(shown, shownlen, "%s", path);
		return write_format(d->format, p, path, err, errlen);
	}
	int first = 0;
	size_t n = (size_t)snprintf(shown, shownlen, "%s.{", path);
	for (int f = 0; f <= HP_FORMAT_LAST; f++) {
		if (!(fs & (1u << f)))
			continue;
		const char *ext = hp_format_extension((enum hp_format)f);
		char one[PATH_MAX + 16], e[512] = "";
		snprintf(one, sizeof(one), "%s.%s", path, ext);
		int rc = write_format((enum hp_format)f, p, one, e, sizeof(e));
		if (rc && !first) {
			first = rc;
			snprintf(err, errlen, "%s", e);
		}
		if (n < shownlen)
			n += (size_t)snprintf(shown + n, shownlen - n, "%s%s", shown[n - 1] == '{' ? "" : ",", ext);
	}
	if (n < shownlen)
		snprintf(shown + n, shownlen - n, "}");
	return first;
}

/* Where the last profile goes when its own path fails (disk full, the
 * directory removed, a FIFO nobody reads): $TMPDIR, else the working
 * directory, whichever is not the failed path's own directory, under a name
 * nothing has yet (heapprobe-fallback-PID-N-<file name>), so that the
 * fallback cannot replace anything either. 0, or -ENOENT. */
static int fallback_path(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char pdir[PATH_MAX], here[PATH_MAX];
	char *d = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	bool have_pdir = d && realpath(d, pdir);
	free(d);
	const char *tmpdir = getenv("TMPDIR");
	const char *dirs[] = { tmpdir && *tmpdir ? tmpdir : NULL, getcwd(here, sizeof(here)) };
	for (size_t i = 0; i < 2; i++) {
		char real[PATH_MAX];
		if (!dirs[i] || !realpath(dirs[i], real) || (have_pdir && strcmp(real, pdir) == 0))
			continue;
		for (int n = 0; n < 100; n++) {
			struct stat st;
			int w = snprintf(out, cap, "%s/heapprobe-fallback-%d-%d-%s", real, (int)getpid(), n, base);
			if (w < 0 || (size_t)w >= cap)
				break;
			if (lstat(out, &st) != 0 && errno == ENOENT)
				return 0;
		}
	}
	return -ENOENT;
}

/* The history as the writers see it (profile.h): the records by time, the
 * largest sites' series, the leak suspects. Dump lock held. */
#define HIST_SERIES 8
#define HIST_SUSPECTS 32

struct hist_view {
	struct hp_prof_history h;
	struct hp_prof_point *points;
	uint32_t *series_samples;
	double *series;
	struct hp_prof_suspect *suspects;
};

static int by_live_desc(const void *x, const void *y)
{
	const struct hp_hist_site *a = x, *b = y;
	return a->live < b->live ? 1 : a->live > b->live ? -1 : 0;
}

static void build_history(struct hist_view *v, const struct snap_ctx *ctx, const uint32_t *slot_sample,
			  uint32_t nslots)
{
	memset(v, 0, sizeof(*v));
	size_t n = hp_history_count(&prof.history);
	if (!prof.have_history || n == 0)
		return;
	v->points = calloc(n, sizeof(*v->points));
	v->series_samples = calloc(HIST_SERIES + HIST_SUSPECTS, sizeof(*v->series_samples));
	v->suspects = calloc(HIST_SUSPECTS, sizeof(*v->suspects));
	struct hp_hist_suspect found[HIST_SUSPECTS];
	if (!v->points || !v->series_samples || !v->suspects)
		return;
	const struct hp_hist_rec *last = NULL;
	for (size_t i = 0; i < n; i++) {
		enum hp_hist_kind kind;
		const struct hp_hist_rec *r = hp_history_at(&prof.history, i, &kind);
		v->points[i] = (struct hp_prof_point){ r->time_ns, (uint8_t)kind, r->collections, r->heap_used,
						       r->live, r->recent, r->freed };
		last = r;
	}
	/* Suspects, and the series: suspects first, then the largest sites at
	 * the last record. After a late attach the objects in use before
	 * sampling began are invisible: a site that replaces them with sampled
	 * ones shows its sampled bytes rise as a leak would, until it has
	 * replaced them all. It cannot gain more than those bytes that way, so
	 * a suspect below them is marked, and ranked after the others, when
	 * they were a significant part of the heap (over a quarter of what is
	 * verified now; an agent loaded at start-up has a few MiB). */
	size_t ns = hp_history_suspects(&prof.history, found, HIST_SUSPECTS), nser = 0;
	bool late = (double)prof.baseline_bytes > 0.25 * last->live;
	uint32_t sites[HIST_SERIES + HIST_SUSPECTS];
	for (size_t i = 0; i < ns; i++) {
		uint32_t slot = found[i].site;
		if (slot >= nslots || !slot_sample[slot])
			continue;
		struct hp_prof_suspect *o = &v->suspects[v->h.nsuspects++];
		*o = (struct hp_prof_suspect){ slot_sample[slot] - 1, found[i].live, found[i].per_min, found[i].z,
					       found[i].z_recent, found[i].window, found[i].span_s, { 0 },
					       late && found[i].live <= (double)prof.baseline_bytes, prof.baseline_bytes };
		memcpy(o->age_bytes, ctx->acc[slot].age_bytes, sizeof(o->age_bytes));
		sites[nser++] = slot;
	}
	/* the unambiguous first, each group by growth (stable: found is sorted) */
	for (size_t i = 1; i < v->h.nsuspects; i++)
		for (size_t k = i; k > 0 && !v->suspects[k].may_be_replacement && v->suspects[k - 1].may_be_replacement; k--) {
			struct hp_prof_suspect t = v->suspects[k];
			v->suspects[k] = v->suspects[k - 1];
			v->suspects[k - 1] = t;
		}
	struct hp_hist_site *top = last->nsites ? malloc(sizeof(*top) * last->nsites) : NULL;
	if (top) {
		memcpy(top, last->sites, sizeof(*top) * last->nsites);
		qsort(top, last->nsites, sizeof(*top), by_live_desc);
		for (uint32_t i = 0, taken = 0; i < last->nsites && taken < HIST_SERIES; i++) {
			bool dup = false;
			for (size_t k = 0; k < nser; k++)
				dup |= sites[k] == top[i].site;
			if (dup || top[i].live <= 0 || top[i].site >= nslots || !slot_sample[top[i].site])
				continue;
			sites[nser++] = top[i].site;
			taken++;
		}
		free(top);
	}
	v->series = calloc(nser * n + 1, sizeof(*v->series));
	if (!v->series)
		nser = 0;
	for (size_t k = 0; k < nser; k++) {
		v->series_samples[k] = slot_sample[sites[k]] - 1;
		for (size_t i = 0; i < n; i++) {
			enum hp_hist_kind kind;
			const struct hp_hist_site *e = hp_history_site(hp_history_at(&prof.history, i, &kind), sites[k]);
			v->series[k * n + i] = e ? e->live : 0.0;
		}
	}
	v->h = (struct hp_prof_history){ v->points, n, v->series_samples, nser, v->series, v->suspects,
					 v->h.nsuspects, (uint32_t)prof.history.marking.n, prof.history.bytes };
}

/* What the history holds and what recording it cost, for the comment. */
static void describe_history(char *out, size_t cap)
{
	if (!prof.have_history) {
		snprintf(out, cap, "history: none (live tracking off)");
		return;
	}
	const struct hp_history *h = &prof.history;
	snprintf(out, cap, "history: %llu marking and %llu young-collection records kept of %llu made, %llu bytes "
		 "held, %.3f ms CPU in records (%.1f us per record)",
		 (unsigned long long)(h->marking.n < HP_HIST_RECORDS ? h->marking.n : HP_HIST_RECORDS),
		 (unsigned long long)(h->young.n < HP_HIST_RECORDS ? h->young.n : HP_HIST_RECORDS),
		 (unsigned long long)h->records, (unsigned long long)h->bytes, (double)h->record_ns / 1e6,
		 h->records ? (double)h->record_ns / 1e3 / (double)h->records : 0.0);
}

static void free_history_view(struct hist_view *v)
{
	free(v->points);
	free(v->series_samples);
	free(v->series);
	free(v->suspects);
}

/* What a snapshot is for, when not the configured outputs: a command's
 * own file= and format= (dump, stop), or the top sites as text (top=N). */
struct snap_req {
	const struct hp_agent_options *dest;    /* file= and format(s) of this write; NULL: the profiler's */
	FILE *top;                              /* top=N: lines to here instead of any file */
	unsigned top_n;
};

static void write_top(FILE *out, unsigned n, const struct hp_profile *p, const struct snap_ctx *c, double scale,
		      const char *estimate);

/* Builds the profile and writes it. Runs on a thread with a JNIEnv. */
static int write_snapshot(JNIEnv *jni, const char *why, bool periodic, bool final, const struct snap_req *req)
{
	struct hp_sites *t = &prof.sites;
	uint32_t nslots = t->mask + 1;
	struct snap_ctx ctx = { .acc = calloc(nslots, sizeof(struct live_acc)) };
	struct hp_prof_sample *samples = calloc(nslots, sizeof(*samples));
	uint32_t *slot_sample = calloc(nslots, sizeof(*slot_sample));   /* site slot -> sample index + 1 */
	struct events ev = { 0 };
	struct hist_view hv = { 0 };
	struct hp_frame *frames = NULL;
	uint32_t *ftab = NULL, *remap = NULL;
	int rc = -ENOMEM;
	if (!ctx.acc || !samples || !slot_sample)
		goto out;

	ctx.min_age = prof.o.min_age > 1 ? prof.o.min_age : 1;
	if (prof.o.live) {
		setup_estimate(&ctx);
		hp_live_each(&prof.live, jni, add_live, hist_dead, &ctx);
		finish_estimate(&ctx, nslots);
	}
	char estimate[600];
	double scale = choose_scale(&ctx, estimate, sizeof(estimate));

	/* Frames shared across stacks are written once. The lock keeps new
	 * sites and frames out while they are read (and class names still).
	 * Sites are dense, in the order they were made (stacks.h): the slots
	 * past the count were never touched and are not read. Named frames
	 * are deduplicated by frame id first (a frame id is named once, so
	 * the tables are sized by the distinct frames, not by every frame of
	 * every site: javac at 32k, ~5k ids against ~400k frame references),
	 * then by what they name (two locations on one line name one frame).
	 * Samples point at their sites' own ids, through remap. */
	pthread_mutex_lock(&t->lock);
	uint32_t nsites = atomic_load(&t->count), nfr = atomic_load(&t->nframes);
	size_t nsamples = 0;
	size_t fcap = 16;
	while (fcap < (size_t)nfr * 2 + 2)
		fcap <<= 1;
	ftab = malloc(sizeof(*ftab) * fcap);
	remap = malloc(sizeof(*remap) * ((size_t)nfr + 1));
	frames = malloc(sizeof(*frames) * ((size_t)nfr + 1));
	if (!ftab || !remap || !frames) {
		pthread_mutex_unlock(&t->lock);
		goto out;
	}
	memset(ftab, 0xff, sizeof(*ftab) * fcap);
	memset(remap, 0xff, sizeof(*remap) * ((size_t)nfr + 1));
	size_t nframes = 0;
	for (uint32_t i = 0; i < nsites; i++) {
		struct hp_site *s = hp_sites_at(t, i);
		if (!s)
			continue;
		struct hp_prof_sample *out = &samples[nsamples];
		slot_sample[i] = (uint32_t)nsamples + 1;
		out->frames = s->ids;   /* allocated once, never moved or freed before the sites */
		for (uint32_t k = 0; k < s->nframes; k++) {
			uint32_t id = s->ids[k];
			if (remap[id] == UINT32_MAX) {
				const struct hp_frame *f = &hp_sites_frame(t, id)->named;
				size_t j = frame_hash(f) & (fcap - 1);
				while (ftab[j] != UINT32_MAX) {
					const struct hp_frame *g = &frames[ftab[j]];
					if (g->function == f->function && g->file == f->file && g->line == f->line &&
					    g->descriptor == f->descriptor)
						break;
					j = (j + 1) & (fcap - 1);
				}
				if (ftab[j] == UINT32_MAX) {
					frames[nframes] = *f;
					ftab[j] = (uint32_t)nframes++;
				}
				remap[id] = ftab[j];
			}
		}
		out->nframes = s->nframes;
		out->alloc_objects = llround(hp_atomic_load_double(&s->alloc_objects_bits));
		out->alloc_bytes = llround(hp_atomic_load_double(&s->alloc_bytes_bits));
		const struct live_acc *a = &ctx.acc[i];
		out->inuse_objects = llround(a->objects * scale);
		out->inuse_bytes = llround(a->bytes * scale);
		double half = 1.96 * sqrt(a->var) * scale;
		out->inuse_bytes_lo = llround(fmax(0.0, a->bytes * scale - half));
		out->inuse_bytes_hi = llround(a->bytes * scale + half);
		out->recent_objects = llround(a->recent_objects);
		out->recent_bytes = llround(a->recent_bytes);
		out->class_name = hp_sites_class_name(t, s->class_id);
		nsamples++;
	}

	char c1[256], c2[2200], c3[256], c4[1536], c5[320];
	snprintf(c1, sizeof(c1), "heapprobe %s: %llu samples at interval %llu bytes, %llu sites, %llu live samples "
		 "tracked, %llu dropped by thinning, %llu samples beyond the site table",
		 why, (unsigned long long)hp_striped_sum(&prof.samples, memory_order_relaxed), (unsigned long long)prof.o.interval,
		 (unsigned long long)nsamples, (unsigned long long)hp_live_count(&prof.live),
		 (unsigned long long)atomic_load(&prof.live.dropped), (unsigned long long)atomic_load(&t->overflow));
	describe_live(c2, sizeof(c2), &ctx, scale, estimate);
	snprintf(c3, sizeof(c3), "inuse intervals: 95%% Horvitz-Thompson sampling error per site");
	describe_stacks(c4, sizeof(c4));
	describe_history(c5, sizeof(c5));
	/* Site names and class names stay valid without the lock: only the
	 * arrays that hold them may move, and we have taken the pointers. */
	pthread_mutex_unlock(&t->lock);
	const char *comments[] = { c1, c2, c3, c4, c5 };
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	struct hp_profile p = {
		.frames = frames, .nframes = nframes, .frame_map = remap, .nframe_map = nfr,
		.samples = samples, .nsamples = nsamples,
		.period = (int64_t)prof.o.interval, .time_nanos = prof.start_realtime_ns,
		.duration_nanos = now_ns - prof.start_realtime_ns, .comments = comments, .ncomments = 5,
	};
	struct hp_prof_heap heap;
	if (heap_figure(&heap, now_ns))
		p.heap = &heap;
	if (prof.o.live) {
		build_history(&hv, &ctx, slot_sample, nslots);
		if (hv.h.npoints)
			p.history = &hv.h;
	}
	if (prof.keep_samples && build_events(&ev, &ctx, samples, slot_sample, nslots, scale, now_ns) == 0) {
		p.events = ev.events;
		p.nevents = ev.n;
		p.threads = ev.threads;
		p.nthreads = ev.nthreads;
		if (ev.have_heap)
			p.heap = &ev.heap;
	}
	if (req && req->top) {
		write_top(req->top, req->top_n, &p, &ctx, scale, c2);
		rc = 0;
		goto out;
	}
	if (prof.upload)
		push_upload(&p, samples, slot_sample, nslots, now_ns);
	/* With upload=, periodic profiles go to the server only. */
	if (periodic && prof.upload) {
		rc = 0;
		goto out;
	}
	const struct hp_agent_options *d = &prof.o;
	if (req && req->dest && req->dest->file[0])
		d = req->dest;
	struct hp_agent_options dd;
	if (req && req->dest && req->dest->format_given) {
		dd = *d;
		dd.format = req->dest->format;
		dd.formats = req->dest->formats;
		d = &dd;
	}
	char path[600], err[512] = "";
	hp_options_output_path(d, path, sizeof(path));
	char shown[PATH_MAX + 64];
	rc = write_formats(&p, d, path, err, sizeof(err), shown, sizeof(shown));
	if (rc == 0) {
		snprintf(prof.last_written, sizeof(prof.last_written), "%s", shown);
		snprintf(prof.last_why, sizeof(prof.last_why), "%s", why);
		prof.last_write_ns = now_ns;
		prof.last_error[0] = '\0';
		prof.profiles_written++;
		logf_("wrote %s (%zu sites, %s; %s)", shown, nsamples, c2, c4);
	}
	if (rc != 0)
		snprintf(prof.last_error, sizeof(prof.last_error), "%s", err[0] ? err : strerror(-rc));
	if (rc == 0) {
	} else if (!final) {
		logf_("%s; profile data kept, the next write (period, dump, stop or exit) retries", err[0] ? err : strerror(-rc));
	} else {
		/* No next write: one more try, somewhere else. */
		char alt[PATH_MAX], err2[512] = "";
		if (fallback_path(path, alt, sizeof(alt)) < 0)
			logf_("%s; no fallback directory ($TMPDIR, the working directory) differs from it: this profile is lost",
			      err[0] ? err : strerror(-rc));
		else if (write_formats(&p, d, alt, err2, sizeof(err2), shown, sizeof(shown)) == 0)
			logf_("%s; wrote %s instead (%zu sites, %s; %s)", err[0] ? err : strerror(-rc), shown, nsamples, c2,
			      c4);
		else
			logf_("%s; the fallback failed too (%s): this profile is lost", err[0] ? err : strerror(-rc), err2);
	}
out:
	free(ctx.acc);
	free(ctx.recs);
	free(slot_sample);
	free_events(&ev);
	free_history_view(&hv);
	free(samples);
	free(frames);
	free(ftab);
	free(remap);
	return rc;
}

/* Asks for a marking (mark= policy) so that the profile about to be
 * written is verified as of now. Dump lock held. Never from VMDeath: the
 * collector's threads have stopped by then and a request would not return
 * (the exit profile relies on the shutdown hook below instead). */
static void mark_before_profile(JNIEnv *jni, bool periodic)
{
	if (!prof.o.live || prof.o.mark == HP_MARK_OFF)
		return;
	/* Periodic profiles keep the cost bounded; asked-for ones (dump,
	 * stop, exit) always get their marking. */
	if (periodic && !hp_marks_may_request(&prof.marks))
		return;
	markings_tick(jni);     /* a cycle of the collector's own that ended first is counted as its own */
	uint64_t before = markings_counted();
	int rc = hp_marks_request(&prof.marks, prof.probe, prof.o.mark == HP_MARK_FULL, &prof.gc_events);
	/* G1, for an asked-for profile: a second cycle. The first one's
	 * concurrent-start pause copies young objects that dead old ones
	 * still point to (their cards are roots to a young collection) into
	 * survivor regions, which that marking takes as live: a cache held by
	 * a thread that ended showed 110-127 MiB of its 190 after one cycle,
	 * nothing after two (docs/load.md). The second marking knows the old
	 * referrers dead. */
	struct hp_gc_info g = { .sz = sizeof(g) };
	if (rc == 0 && !periodic && hp_gc_info(prof.probe, &g) == 0 && g.kind == HP_GC_G1) {
		char first[sizeof(prof.marks.last_request)];
		snprintf(first, sizeof(first), "%s", prof.marks.last_request);
		rc = hp_marks_request(&prof.marks, prof.probe, prof.o.mark == HP_MARK_FULL, &prof.gc_events);
		if (rc == 0)
			snprintf(prof.marks.last_request, sizeof(prof.marks.last_request),
				 "%.90s, then another (G1: the first keeps young objects dead old ones point to)", first);
	}
	if (rc == 0) {
		hp_marks_canary_rearm(&prof.marks, jni, &prof.gc_events);      /* counted: not again */
		if (prof.have_surv && markings_counted() > before) {
			for (; prof.surv_markings < markings_counted(); prof.surv_markings++)
				hp_survival_next_epoch(&prof.surv);
			settle_pending();
		}
	}
	if (rc < 0 && prof.marks.requests == 1)
		logf_("no marking before profiles: %s", prof.marks.last_request);
}

/* final: the last profile of this profiler (stop, exit), retried to a
 * fallback when its path fails. */
static int dump(JNIEnv *jni, const char *why, bool may_mark, bool periodic, bool final, const struct snap_req *req)
{
	pthread_mutex_lock(&prof.dump_lock);
	/* Checked under the lock: a stop frees the tables under it too. */
	int rc = -ESRCH;
	if (prof.sites.slots) {
		if (may_mark) {
			mark_before_profile(jni, periodic);
			history_tick(jni, true);        /* the marking just made, in the history */
		}
		rc = write_snapshot(jni, why, periodic, final, req);
	}
	pthread_mutex_unlock(&prof.dump_lock);
	return rc;
}

int hp_profiler_dump(JNIEnv *jni, const char *why, const struct hp_agent_options *dest)
{
	struct snap_req req = { .dest = dest };
	return dump(jni, why, true, false, false, &req);
}

/* top=N: a marking is asked for as for a periodic profile, only while
 * requested markings stay under 1/50 of the wall clock (marks.h), so that
 * a view refreshed after every collection cannot keep the collector
 * busy with the markings it then waits for. */
int hp_profiler_top(JNIEnv *jni, FILE *out, unsigned n)
{
	struct snap_req req = { .top = out, .top_n = n };
	return dump(jni, "top", true, true, false, &req);
}

/* ---- the heapprobe command's answers ----------------------------------- */

static int by_view_desc(const void *a, const void *b)
{
	const struct hp_prof_sample *x = *(const struct hp_prof_sample *const *)a;
	const struct hp_prof_sample *y = *(const struct hp_prof_sample *const *)b;
	int64_t vx = x->inuse_bytes + x->recent_bytes, vy = y->inuse_bytes + y->recent_bytes;
	return vx < vy ? 1 : vx > vy ? -1 : 0;
}

/* Tab-separated lines, one record per line, the first field its kind, so
 * that the command (src/cli/top.c) lays them out for its terminal and a
 * script can read them:
 *   heap  <post-GC bytes> <what it is> <source> <collections>
 *   view  <inuse bytes> <95% lo> <95% hi> <recent bytes> <samples> <markings> <estimate>
 *   suspect <rank> <growth bytes/min> <z> <z second half> <live bytes> <class> <leaf frame> <"replacing" or "">
 *   site  <inuse bytes> <lo> <hi> <inuse objects> <recent bytes> <alloc bytes> <class> <frames leaf first, ';'>
 * Leak suspects (history.c) most growth first, then sites in order of
 * inuse + recent bytes, at most 16 frames each. Tabs and
 * newlines cannot occur in JVM names, so fields need no quoting. */
static void write_top(FILE *out, unsigned n, const struct hp_profile *p, const struct snap_ctx *c, double scale,
		      const char *estimate)
{
	struct hp_heap_usage u = { .sz = sizeof(u) };
	if (hp_heap_usage(prof.probe, HP_USAGE_POST_GC, &u) == 0 && u.live)
		fprintf(out, "heap\t%llu\t%s\t%s\t%llu\n", (unsigned long long)u.live, hp_usage_kind_name(u.live_kind),
			u.live_kind == HP_USAGE_MARKED_LIVE ? "marking" : hp_mode_name(u.live_mode),
			(unsigned long long)u.live_gc_count);
	else
		fprintf(out, "heap\t0\tnone\tno collection yet\t0\n");
	struct hp_marking mk = { .sz = sizeof(mk) };
	hp_marking(prof.probe, &mk);
	double half = 1.96 * sqrt(c->var) * scale, bytes = c->bytes * scale;
	/* The estimate text without tabs (it has none; newlines neither). */
	fprintf(out, "view\t%.0f\t%.0f\t%.0f\t%.0f\t%llu\t%llu\t%s\n", bytes, fmax(0.0, bytes - half), bytes + half,
		c->recent_bytes, (unsigned long long)hp_striped_sum(&prof.samples, memory_order_relaxed),
		(unsigned long long)mk.count, estimate);
	for (size_t i = 0; p->history && i < p->history->nsuspects; i++) {
		const struct hp_prof_suspect *x = &p->history->suspects[i];
		const struct hp_prof_sample *smp = &p->samples[x->sample];
		const char *leaf = smp->nframes ? p->frames[hp_prof_frame(p, smp, 0)].function : NULL;
		if (!leaf)
			leaf = "?";
		fprintf(out, "suspect\t%zu\t%.0f\t%.1f\t%.1f\t%.0f\t%s\t%s\t%s\n", i + 1, x->per_min, x->z, x->z_recent,
			x->live, smp->class_name ? smp->class_name : "", leaf, x->may_be_replacement ? "replacing" : "");
	}
	const struct hp_prof_sample **order = malloc(sizeof(*order) * (p->nsamples + 1));
	if (!order) {
		fprintf(out, "error\tout of memory\n");
		return;
	}
	for (size_t i = 0; i < p->nsamples; i++)
		order[i] = &p->samples[i];
	qsort(order, p->nsamples, sizeof(*order), by_view_desc);
	for (size_t i = 0; i < p->nsamples && i < n; i++) {
		const struct hp_prof_sample *smp = order[i];
		if (smp->inuse_bytes + smp->recent_bytes <= 0)
			break;
		fprintf(out, "site\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%s\t", (long long)smp->inuse_bytes,
			(long long)smp->inuse_bytes_lo, (long long)smp->inuse_bytes_hi, (long long)smp->inuse_objects,
			(long long)smp->recent_bytes, (long long)smp->alloc_bytes, (smp->class_name ? smp->class_name : ""));
		for (size_t k = 0; k < smp->nframes && k < 16; k++) {
			const char *fn = p->frames[hp_prof_frame(p, smp, k)].function;
			fprintf(out, "%s%s", k ? ";" : "", fn ? fn : "?");
		}
		fputc('\n', out);
	}
	free(order);
}

static void fmt_time(int64_t ns, char *buf, size_t cap)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm);
}

void hp_profiler_status(FILE *out)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	fprintf(out, "pid: %d\n", (int)getpid());
	if (!atomic_load(&prof.running)) {
		fprintf(out, "profiler: not running\n");
		return;
	}
	char when[64];
	fmt_time(prof.start_realtime_ns, when, sizeof(when));
	fprintf(out, "profiler: running since %s (%.0f s)\n", when, (now_ns - prof.start_realtime_ns) / 1e9);
	static const char *const marks[] = { "concurrent", "full", "off" };
	static const char *const stacks[] = { "cache", "verify", "jvmti" };
	fprintf(out, "interval: %llu bytes\n", (unsigned long long)prof.o.interval);
	fprintf(out, "live: %s (mark=%s, min_age=%u, max_live=%u)\n", prof.o.live ? "on" : "off", marks[prof.o.mark],
		prof.o.min_age, prof.o.max_live);
	fprintf(out, "stacks: %s, depth %u\n", stacks[prof.o.stacks], prof.o.depth);
	fprintf(out, "samples: %llu\n", (unsigned long long)hp_striped_sum(&prof.samples, memory_order_relaxed));
	fprintf(out, "sites: %u\n", atomic_load(&prof.sites.count));
	fprintf(out, "live samples tracked: %llu\n", prof.o.live ? (unsigned long long)hp_live_count(&prof.live) : 0ull);
	struct hp_marking mk = { .sz = sizeof(mk) };
	if (hp_marking(prof.probe, &mk) == 0)
		fprintf(out, "markings: %llu (source: %s); requested by us: %llu\n", (unsigned long long)mk.count,
			mk.source ? mk.source : "?", (unsigned long long)prof.marks.requests);
	fprintf(out, "collector's own cycles: %s (%llu seen)\n",
		prof.marks.canary_state[0] ? prof.marks.canary_state : "not looked at yet (after the first collection)",
		(unsigned long long)prof.marks.canary_markings);
	fprintf(out, "collections seen: %llu\n", (unsigned long long)atomic_load(&prof.gc_events));
	char path[600], cwd[PATH_MAX];
	hp_options_output_path(&prof.o, path, sizeof(path));
	bool rel = path[0] != '/' && getcwd(cwd, sizeof(cwd));
	char fmts[64] = "";
	for (int f = 0; f <= HP_FORMAT_LAST; f++)
		if (prof.o.formats & (1u << f)) {
			static const char *const names[] = { "pprof", "collapsed", "html", "jfr", "text" };
			size_t l = strlen(fmts);
			snprintf(fmts + l, sizeof(fmts) - l, "%s%s", l ? "+" : "", names[f]);
		}
	fprintf(out, "output: %s%s%s (format %s; %s)\n", rel ? cwd : "", rel ? "/" : "", path, fmts,
		prof.upload ? "periodic profiles to the server" : prof.o.period ? "also every period" : "at dump, stop and exit");
	if (prof.o.period)
		fprintf(out, "period: %u s\n", prof.o.period);
	pthread_mutex_lock(&prof.dump_lock);
	if (prof.profiles_written) {
		fmt_time(prof.last_write_ns, when, sizeof(when));
		fprintf(out, "profiles written: %llu; last: %s at %s (%s)\n", (unsigned long long)prof.profiles_written,
			prof.last_written, when, prof.last_why);
	} else {
		fprintf(out, "profiles written: 0\n");
	}
	if (prof.last_error[0])
		fprintf(out, "last write failed: %s\n", prof.last_error);
	pthread_mutex_unlock(&prof.dump_lock);
	if (prof.upload) {
		struct hp_upload_stats st;
		hp_upload_stats(prof.upload, &st);
		fprintf(out, "upload: %s (app %s): %llu delivered, %llu dropped, %llu attempts failed, %u queued%s%s\n",
			prof.o.upload, prof.o.app[0] ? prof.o.app : "heapprobe", (unsigned long long)st.delivered,
			(unsigned long long)st.dropped, (unsigned long long)st.attempts_failed, st.queued,
			st.last_error[0] ? "; last error: " : "", st.last_error);
	}
}

/* ---- exit marking ---------------------------------------------------------
 *
 * The profile at exit is written at VMDeath, after the collector's threads
 * have stopped, when no marking can be asked for. A shutdown hook runs
 * before that: an unstarted java.lang.Thread registered with
 * Runtime.addShutdownHook, whose ThreadStart event (on the hook's own
 * thread, JNI legal) asks for the marking. Its run() does nothing. */
static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	jobject hook = prof.exit_hook;
	if (!hook || !(*jni)->IsSameObject(jni, thread, hook) || !atomic_load(&prof.running))
		return;
	pthread_mutex_lock(&prof.dump_lock);
	if (prof.sites.slots)
		mark_before_profile(jni, false);
	pthread_mutex_unlock(&prof.dump_lock);
}

/* Runtime.getRuntime(), or NULL with no exception pending. Every JNI call
 * that can throw is checked before the next (-Xcheck:jni holds us to it). */
static jobject runtime(JNIEnv *jni, jclass *cls)
{
	jmethodID get = NULL;
	jobject rt = NULL;
	if ((*cls = (*jni)->FindClass(jni, "java/lang/Runtime")) != NULL &&
	    (get = (*jni)->GetStaticMethodID(jni, *cls, "getRuntime", "()Ljava/lang/Runtime;")) != NULL)
		rt = (*jni)->CallStaticObjectMethod(jni, *cls, get);
	if ((*jni)->ExceptionCheck(jni)) {
		(*jni)->ExceptionClear(jni);
		rt = NULL;
	}
	return rt;
}

static void add_exit_hook(JNIEnv *jni)
{
	if (!prof.o.live || prof.o.mark == HP_MARK_OFF || prof.exit_hook)
		return;
	jclass tcls = NULL, rcls = NULL;
	jmethodID init = NULL, add = NULL;
	jstring name = NULL;
	jobject t = NULL, rt = NULL, ref = NULL;
	if ((tcls = (*jni)->FindClass(jni, "java/lang/Thread")) == NULL ||
	    (init = (*jni)->GetMethodID(jni, tcls, "<init>", "(Ljava/lang/String;)V")) == NULL ||
	    (name = (*jni)->NewStringUTF(jni, "heapprobe-exit-marking")) == NULL ||
	    (t = (*jni)->NewObject(jni, tcls, init, name)) == NULL)
		goto fail;
	if ((rt = runtime(jni, &rcls)) == NULL ||
	    (add = (*jni)->GetMethodID(jni, rcls, "addShutdownHook", "(Ljava/lang/Thread;)V")) == NULL ||
	    (ref = (*jni)->NewGlobalRef(jni, t)) == NULL)
		goto fail;
	prof.exit_hook = ref;
	(*prof.jvmti)->SetEventNotificationMode(prof.jvmti, JVMTI_ENABLE, JVMTI_EVENT_THREAD_START, NULL);
	(*jni)->CallVoidMethod(jni, rt, add, t);
	if (!(*jni)->ExceptionCheck(jni))
		return;
	prof.exit_hook = NULL;
	(*prof.jvmti)->SetEventNotificationMode(prof.jvmti, JVMTI_DISABLE, JVMTI_EVENT_THREAD_START, NULL);
fail:
	(*jni)->ExceptionClear(jni);
	if (ref)
		(*jni)->DeleteGlobalRef(jni, ref);
	logf_("no shutdown hook: the profile at exit is verified only by the markings before it");
}

static void remove_exit_hook(JNIEnv *jni)
{
	jobject hook = prof.exit_hook;
	if (!hook || !jni)
		return;
	(*prof.jvmti)->SetEventNotificationMode(prof.jvmti, JVMTI_DISABLE, JVMTI_EVENT_THREAD_START, NULL);
	jclass rcls;
	jobject rt = runtime(jni, &rcls);
	jmethodID rm = rt ? (*jni)->GetMethodID(jni, rcls, "removeShutdownHook", "(Ljava/lang/Thread;)Z") : NULL;
	if (rm)
		(*jni)->CallBooleanMethod(jni, rt, rm, hook);
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);    /* IllegalStateException once shutdown has begun */
	prof.exit_hook = NULL;
	(*jni)->DeleteGlobalRef(jni, hook);
}

/* ---- agent thread --------------------------------------------------------- */

static void JNICALL agent_thread(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
	atomic_store(&prof.thread_alive, 1);
	struct timespec next;
	clock_gettime(CLOCK_REALTIME, &next);
	next.tv_sec += prof.o.period ? prof.o.period : 3600;
	int tries_left = 600;
	while (!atomic_load(&prof.stopping)) {
		/* Until the class-unload counter shows up (the perfdata region
		 * opens after VM init on JDK 11), look ten times a second. */
		bool want_counter = !atomic_load(&prof.classes_unloaded) && tries_left > 0;
		struct timespec wait;
		clock_gettime(CLOCK_REALTIME, &wait);
		if (want_counter) {
			wait.tv_nsec += 100000000;
			if (wait.tv_nsec >= 1000000000) {
				wait.tv_sec++;
				wait.tv_nsec -= 1000000000;
			}
		} else {
			wait.tv_sec += 1;
		}
		if (wait.tv_sec > next.tv_sec)
			wait = next;
		sem_timedwait(&prof.wake, &wait);
		if (atomic_load(&prof.stopping))
			break;
		if (want_counter) {
			struct hp_heap_usage u = { .sz = sizeof(u) };
			hp_heap_usage(prof.probe, 0, &u);       /* retries modes waiting for the VM */
			hp_marking_locate(prof.probe);          /* G1's cycle counter is in perfdata */
			atomic_store(&prof.classes_unloaded, hp_perfdata_classes_unloaded(prof.probe));
			tries_left--;
		}
		if (atomic_exchange(&prof.gc_pending, 0) && prof.o.live) {
			/* free dead samples' references promptly; record the history */
			pthread_mutex_lock(&prof.dump_lock);
			history_tick(jni, false);
			pthread_mutex_unlock(&prof.dump_lock);
		}
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		if (prof.o.period && now.tv_sec >= next.tv_sec) {
			dump(jni, "periodic profile", true, true, false, NULL);
			next.tv_sec = now.tv_sec + prof.o.period;
		}
	}
	atomic_store(&prof.thread_alive, 0);
}

static int start_thread(JNIEnv *jni)
{
	jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
	jmethodID init = cls ? (*jni)->GetMethodID(jni, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
	jstring name = init ? (*jni)->NewStringUTF(jni, "heapprobe") : NULL;
	jobject thread = name ? (*jni)->NewObject(jni, cls, init, name) : NULL;
	if (!thread) {
		(*jni)->ExceptionClear(jni);    /* no JNI call runs with it pending */
		return -ENOMEM;
	}
	jvmtiError e = (*prof.jvmti)->RunAgentThread(prof.jvmti, thread, agent_thread, NULL,
						      JVMTI_THREAD_NORM_PRIORITY);
	return e == JVMTI_ERROR_NONE ? 0 : -EIO;
}

/* The heap in use as sampling begins: never sampled, so kept out of the
 * scaling. After a late attach the last post-GC figure is the better
 * estimate (the current usage holds garbage). */
static void record_baseline(void)
{
	struct hp_heap_usage u = { .sz = sizeof(u) };
	if (hp_heap_usage(prof.probe, HP_USAGE_POST_GC, &u) == 0 && u.gc_count > 0)
		prof.baseline_bytes = u.used;
	else if (hp_heap_usage(prof.probe, 0, &u) == 0)
		prof.baseline_bytes = u.used;
	else
		prof.baseline_bytes = 0;
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	record_baseline();
	setup_walker(jvmti, jni);
	hp_symtab_trim(prof.probe->syms);       /* set-up's symbol lookups are done */
	add_exit_hook(jni);
	if (start_thread(jni))
		logf_("cannot start the agent thread: liveness is checked only when a profile is written");
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	if (!atomic_load(&prof.running))
		return;
	atomic_store(&prof.stopping, 1);
	sem_post(&prof.wake);
	for (int i = 0; i < 200 && atomic_load(&prof.thread_alive); i++)
		usleep(10000);
	dump(jni, "profile at exit", false, false, true, NULL);
	stop_upload();
	atomic_store(&prof.running, 0);
}

void hp_profiler_release_env(void)
{
	if (prof.jvmti && !atomic_load(&prof.running)) {
		(*prof.jvmti)->DisposeEnvironment(prof.jvmti);
		prof.jvmti = NULL;
	}
}

int hp_profiler_running(void)
{
	return atomic_load(&prof.running);
}

/* A start that fails gives back what it set up so far: the tables and the
 * upload sender. Each part is safe to free when it was never set up. */
static void undo_start(JNIEnv *jni)
{
	if (prof.upload) {
		hp_upload_stop(prof.upload, 0, NULL);
		prof.upload = NULL;
	}
	hp_live_free(&prof.live, jni);
	if (prof.have_history)
		hp_history_free(&prof.history);
	prof.have_history = false;
	if (prof.have_surv)
		hp_survival_free(&prof.surv);
	prof.have_surv = false;
	hp_sites_free(&prof.sites);
	prof.keep_samples = false;
	hp_samplelog_free(&prof.log);
}

int hp_profiler_start(JavaVM *vm, struct hp_probe *probe, const struct hp_agent_options *o, JNIEnv *jni,
		      int live_phase, char *err, size_t errlen)
{
	if (atomic_load(&prof.running)) {
		snprintf(err, errlen, "heapprobe: the profiler is already running");
		return -EALREADY;
	}
	if (atomic_load(&prof.thread_alive)) {
		snprintf(err, errlen, "heapprobe: the previous session's agent thread is still finishing; try again");
		return -EBUSY;
	}
	prof.vm = vm;
	prof.probe = probe;
	prof.o = *o;
	if (o->upload[0] && !o->period)
		prof.o.period = 10;     /* upload=: a profile every 10 s unless period= says otherwise */
	atomic_store(&prof.stopping, 0);
	for (int i = 0; i < HP_STRIPES; i++) {
		atomic_store(&prof.samples.s[i].v, 0);
		atomic_store(&prof.cache_hits.s[i].v, 0);
	}
	atomic_store(&prof.walk_ready, 0);
	atomic_store(&prof.classes_unloaded, NULL);
	prof.walk_reason[0] = '\0';
	for (int i = 0; i <= HP_FW_RESULTS; i++)
		atomic_store(&prof.walk_failed[i], 0);
	atomic_store(&prof.decode_ready, 0);
	prof.decode_reason[0] = '\0';
	atomic_store(&prof.decoded, 0);
	atomic_store(&prof.decode_checked, 0);
	atomic_store(&prof.asked, 0);
	atomic_store(&prof.asked_invalid, 0);
	atomic_store(&prof.checks_overtaken, 0);
	for (int i = 0; i < HP_FD_RESULTS; i++)
		atomic_store(&prof.decode_failed[i], 0);
	for (int i = 0; i < HP_METHOD_RESULTS; i++)
		atomic_store(&prof.method_failed[i], 0);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	prof.start_realtime_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	if (!prof.jvmti && (*vm)->GetEnv(vm, (void **)&prof.jvmti, JVMTI_VERSION_11) != JNI_OK) {
		snprintf(err, errlen, "heapprobe: JVMTI 11 (SampledObjectAlloc) is not available in this JVM");
		prof.jvmti = NULL;
		return -ENOTSUP;
	}
	jvmtiEnv *j = prof.jvmti;
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_sampled_object_alloc_events = 1;
	caps.can_generate_garbage_collection_events = 1;
	caps.can_tag_objects = 1;
	if ((*j)->AddCapabilities(j, &caps) != JVMTI_ERROR_NONE) {
		/* can_generate_sampled_object_alloc_events is held by one
		 * environment at a time: if it is no longer potential, another
		 * agent has it (a second copy of heapprobe, another heap
		 * profiler). */
		jvmtiCapabilities pot;
		memset(&pot, 0, sizeof(pot));
		if ((*j)->GetPotentialCapabilities(j, &pot) == JVMTI_ERROR_NONE && !pot.can_generate_sampled_object_alloc_events) {
			snprintf(err, errlen, "heapprobe: another JVMTI agent in this JVM holds can_generate_sampled_object_alloc_events "
				 "(a second copy of heapprobe, or another heap profiler): only one may sample allocations; "
				 "this heapprobe does not profile");
			return -EBUSY;
		}
		snprintf(err, errlen, "heapprobe: JVMTI refused SampledObjectAlloc/GC/tagging capabilities");
		return -ENOTSUP;
	}
	memset(&caps, 0, sizeof(caps));
	caps.can_get_line_numbers = 1;
	caps.can_get_source_file_name = 1;
	prof.have_lines = (*j)->AddCapabilities(j, &caps) == JVMTI_ERROR_NONE;

	prof.keep_samples = (o->formats & (1u << HP_FORMAT_JFR)) != 0;
	int rc = hp_sites_init(&prof.sites, MAX_SITES);
	if (!rc && o->live)
		rc = hp_live_init(&prof.live, o->max_live);
	if (!rc && o->live) {
		rc = hp_history_init(&prof.history, prof.sites.mask + 1);
		prof.have_history = rc == 0;
	}
	if (!rc && o->live) {
		rc = hp_survival_init(&prof.surv, prof.sites.mask + 1);
		prof.have_surv = rc == 0;
		prof.surv_markings = 0;
		prof.canary_tried = false;
		hp_alloc_clock_reset(&prof.clock);
	}
	if (!rc)
		rc = hp_samplelog_init(&prof.log, prof.keep_samples);
	if (rc) {
		snprintf(err, errlen, "heapprobe: out of memory for the site and live tables");
		undo_start(jni);
		return rc;
	}
	if (o->upload[0]) {
		/* Before anything is enabled: a bad URL fails the start with
		 * nothing to undo but the tables. */
		rc = hp_upload_start(&prof.upload, o->upload, o->app, o->labels, o->upload_queue, err, errlen);
		if (rc) {
			undo_start(jni);
			return rc;
		}
		prof.up_from_s = now.tv_sec;
	}
	sem_init(&prof.wake, 0, 0);

	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.SampledObjectAlloc = on_sampled_alloc;
	cb.GarbageCollectionFinish = on_gc_finish;
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.ThreadStart = on_thread_start;
	cb.ClassPrepare = on_class_prepare;
	(*j)->SetEventCallbacks(j, &cb, sizeof(cb));
	if ((*j)->SetHeapSamplingInterval(j, (jint)o->interval) != JVMTI_ERROR_NONE) {
		snprintf(err, errlen, "heapprobe: SetHeapSamplingInterval(%llu) refused",
			 (unsigned long long)o->interval);
		undo_start(jni);
		sem_destroy(&prof.wake);
		return -EINVAL;
	}
	atomic_store(&prof.running, 1);
	hp_marking_locate(probe);
	hp_marks_reset(&prof.marks, probe, pauses_now());
	(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
	(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
	if (live_phase) {
		record_baseline();
		setup_walker(j, jni);
		hp_symtab_trim(prof.probe->syms);
		add_exit_hook(jni);
		if (start_thread(jni))
			logf_("cannot start the agent thread");
	} else {
		(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
	}
	(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	return 0;
}

int hp_profiler_stop(JNIEnv *jni, const struct hp_agent_options *dest, bool discard)
{
	if (!atomic_load(&prof.running))
		return -ESRCH;
	jvmtiEnv *j = prof.jvmti;
	(*j)->SetEventNotificationMode(j, JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	(*j)->SetEventNotificationMode(j, JVMTI_DISABLE, JVMTI_EVENT_CLASS_PREPARE, NULL);
	atomic_store(&prof.running, 0);
	/* Callbacks already inside must finish before the tables go. They
	 * always do (one may wait out a safepoint), so wait as long as it
	 * takes rather than free memory under a running thread. */
	while (hp_striped_sum(&prof.in_callbacks, memory_order_seq_cst))
		usleep(1000);
	atomic_store(&prof.stopping, 1);
	sem_post(&prof.wake);
	for (int i = 0; i < 500 && atomic_load(&prof.thread_alive); i++)
		usleep(10000);
	struct snap_req req = { .dest = dest };
	int rc = discard ? 0 : dump(jni, "profile at stop", true, false, true, &req);
	stop_upload();
	remove_exit_hook(jni);
	(*j)->SetEventNotificationMode(j, JVMTI_DISABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
	pthread_mutex_lock(&prof.dump_lock);
	if (prof.o.live)
		hp_live_free(&prof.live, jni);
	if (prof.have_history)
		hp_history_free(&prof.history);
	prof.have_history = false;
	if (prof.have_surv)
		hp_survival_free(&prof.surv);
	prof.have_surv = false;
	hp_marks_canary_free(&prof.marks, jni);
	prof.canary_tried = false;
	atomic_store(&prof.walk_ready, 0);
	hp_stackcache_free(&prof.stack_cache, jni);
	if (atomic_exchange(&prof.decode_ready, 0))
		hp_framedecode_free(&prof.decode);
	hp_sites_free(&prof.sites);
	prof.keep_samples = false;
	hp_samplelog_free(&prof.log);
	pthread_mutex_unlock(&prof.dump_lock);
	if (!atomic_load(&prof.thread_alive)) {
		sem_destroy(&prof.wake);
		/* Class ids live in this env's object tags: a new session gets a
		 * new env, so no stale tag can name a class of the old table. */
		(*j)->DisposeEnvironment(j);
		prof.jvmti = NULL;
	}
	return rc;
}
