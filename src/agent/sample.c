/* The allocation callback (SampledObjectAlloc): the sample's stack from
 * the cache, the decoder or GetStackTrace (and the checks of the first two
 * against the last), its site, its live reference; and the GC callback. */
#include "agent/prof.h"

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

/* The epoch the method table dates its entries by. Pointer jmethodIDs
 * (to JDK 25): the caller's (classes unloaded), since an entry's JNIMethodBlock
 * slot lives as long as the class. Table jmethodIDs (JDK 26): an entry
 * re-reads its holder's jmethodID cache array, which every redefinition of
 * the class reallocates and frees (InstanceKlass::update_methods_jmethod_cache
 * from redefine_single_class): the redefinition count is mixed in, so that
 * no entry outlives the array it points into. Both counts stay far below
 * 2^40 and 2^23 in any run, so the sum is unique. */
static inline uint64_t methods_epoch(uint64_t epoch, uint64_t redefs)
{
	return prof.decode.methods.jmid_is_pointer ? epoch : epoch ^ (redefs << 40);
}

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
	*redefs = prof.redefinitions ? *prof.redefinitions : 0;
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

/* The version of a jmethodID's method for hp_sites (stacks.h), once any
 * class was redefined (0 before): a redefined method keeps its jmethodID,
 * pointed at the new Method, whose line table differs. Pointer jmethodIDs
 * (to JDK 25), with the decoder set up: the Method it names, read safely.
 * Otherwise (JDK 26's table jmethodIDs, or no decoder): its declaring
 * class's java.lang.Class.classRedefinedCount (bumped at each redefinition
 * of that class, which gives all its methods new Methods), plus one; two
 * JNI/JVMTI calls a frame, paid only in runs that redefine classes. */
uint64_t method_version(void *ctx, jmethodID id)
{
	(void)ctx;
	if (redefinitions_now() == 0)
		return 0;
	if (atomic_load_explicit(&prof.decode_ready, memory_order_acquire) && prof.decode.methods.jmid_is_pointer) {
		uintptr_t m = 0;
		return hp_safefetch_read(prof.decode.methods.fetch, &m, (uintptr_t)id, sizeof(m)) ? 0 : m;
	}
	JNIEnv *jni = NULL;
	jclass k = NULL;
	if (!prof.class_redefined_count || !prof.vm ||
	    (*prof.vm)->GetEnv(prof.vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK || !jni ||
	    (*prof.jvmti)->GetMethodDeclaringClass(prof.jvmti, id, &k) != JVMTI_ERROR_NONE || !k)
		return 0;
	jint n = (*jni)->GetIntField(jni, k, prof.class_redefined_count);
	(*jni)->DeleteLocalRef(jni, k);
	return (uint64_t)(uint32_t)n + 1;
}

/* Whether a jmethodID from GetStackTrace may be given to JVMTI (see
 * hp_methods_check_id); without the decoder's layout, trusted. */
int check_jmid(void *ctx, jmethodID id)
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
bool overtaken(uint64_t redef_before, const uint64_t *key, const uintptr_t *aux, int nkey,
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

/* This thread's last sample, to credit it at the thread's end with the
 * bytes allocated after it (samplerate.h): its session (the sampler
 * rate's generation, 0: none), site, size, weight 1/p and live entry. */
static __thread struct last_sample {
	uint32_t generation;
	uint32_t site;
	uint64_t size;
	double w;
	struct hp_live_handle live;
} last_sample;

/* The JVMTI collection count (pauses_now) at this thread's last sample,
 * plus 1 (0: none yet). A thread's first TLAB also starts with refills 1,
 * and its first sample there is a fair one (JDK 11's, the sampler's own
 * start, docs/short-threads.md): only a TLAB first since a collection
 * that came after the thread's last sample is set aside. */
static __thread uint32_t gc_seen_plus1;

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
	/* This thread's sampler factor (samplerate.h): the sample weighs as
	 * if drawn at the interval asked times it. */
	double factor = 1;
	if (atomic_load_explicit(&prof.rate_ready, memory_order_acquire)) {
		uintptr_t java_thread = (uintptr_t)jni - (uintptr_t)prof.walk.env_offset;
		/* Taken ahead of its turn (samplerate.h): set aside, before the
		 * thread's gap closes on it, so the thread's samples are the
		 * Poisson process they would be without it. */
		if (prof.after_gc_aside) {
			uint32_t seen = gc_seen_plus1, gcs = pauses_now();
			gc_seen_plus1 = gcs + 1;
			if (seen && seen != gcs + 1 &&
			    hp_allocated_first_after_gc(&prof.allocated, java_thread, object) == 1) {
				atomic_fetch_add_explicit(&prof.after_gc_set_aside, 1, memory_order_relaxed);
				return;
			}
		}
		uint64_t allocated = 0;
		int rd = hp_allocated_read(&prof.allocated, java_thread, &allocated);
		factor = hp_sample_rate_note(&prof.rate, allocated, rd, size);
	}
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
		int nd = hp_framedecode(&prof.decode, key, aux, nkey, methods_epoch(epoch, redefs), prof.enter_special,
					(struct hp_java_frame *)frames_buf, (int)prof.o.depth, &mr);
		if (nd > 0) {
			n = nd;
			have = true;
			if (hp_probe_fault(prof.probe, HP_FAULT_CORRUPT_FRAME))
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
	if (!site) {
		last_sample.generation = 0;     /* the stretch from here is no earlier sample's */
		return;
	}
	if (!hit && have && cacheable && !site->invalid &&
	    !atomic_load_explicit(&prof.stack_cache.disabled, memory_order_relaxed))
		hp_stackcache_insert(&prof.stack_cache, key, (uint32_t)nkey, interpreted, epoch, redefs, site->ids,
				     site->nframes);
	double p_asked = sample_probability(size), p = hp_sample_probability(size, sampling_interval() * factor);
	double w = 1.0 / p;
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
	struct hp_live_handle at = { 0 };
	if (prof.o.live)
		hp_live_add(&prof.live, jni, object, slot, size, pauses_now(), now_ns, th, p_asked / p, &at);
	last_sample = (struct last_sample){ atomic_load_explicit(&prof.rate.generation, memory_order_relaxed) + 1,
					    slot, size, w, at };
	STEP_END(T_LIVE);
#ifdef HP_SAMPLE_TIMING
	atomic_fetch_add_explicit(&timed_samples, 1, memory_order_relaxed);
#endif
}

void JNICALL on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jclass klass,
				     jlong size)
{
	/* Dekker-style with hp_profiler_stop: both sides use seq_cst, so
	 * either stop sees this callback counted or the callback sees
	 * running == 0 (acquire/release alone does not order a store before a
	 * later load). */
	if (hp_marks_allocating)
		return;         /* a canary (marks.h): the agent's object, not the program's */
	_Atomic int64_t *in = &prof.in_callbacks.s[hp_thread_stripe()].v;
	atomic_fetch_add(in, 1);
	if (atomic_load(&prof.running) && size > 0)
		record_sample(jvmti, jni, thread, object, klass, (uint64_t)size);
	atomic_fetch_sub(in, 1);
}

/* The calling thread ends: the bytes it allocated after its last sample,
 * exactly (HotSpot's count), credited to that sample (samplerate.h, which
 * says why and how much): to its site's allocated bytes, and to its live
 * entry's weight while it is tracked. format=jfr's kept allocation
 * samples keep their weight as sampled; the credit reaches its per-site
 * remainder event (events.c), so its sums stay the other formats'. */
static void credit_thread_end(JNIEnv *jni)
{
	uint64_t allocated = 0;
	int rd = hp_allocated_read(&prof.allocated, (uintptr_t)jni - (uintptr_t)prof.walk.env_offset, &allocated);
	double own = hp_sample_rate_end(&prof.rate, allocated, rd);
	struct last_sample last = last_sample;
	last_sample.generation = 0;
	double interval = sampling_interval();
	if (!(own > 0) || !(interval > 0) ||
	    last.generation != atomic_load_explicit(&prof.rate.generation, memory_order_relaxed) + 1 ||
	    last.site >= atomic_load(&prof.sites.count) || !prof.sites.slots || !(last.w > 0) || !last.size)
		return;
	/* The whole stretch (its own gaps' share) to the last sample's site:
	 * in expectation over which sample came last, each site gets it in
	 * proportion to its share of the thread's samples (samplerate.h). */
	double credit = own;
	atomic_fetch_add_explicit(&prof.rate.ended, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&prof.rate.credited, (uint64_t)llround(credit), memory_order_relaxed);
	struct hp_site *site = &prof.sites.slots[last.site];
	hp_atomic_add_double(&site->alloc_objects_bits, credit / (double)last.size);
	hp_atomic_add_double(&site->alloc_bytes_bits, credit);
	if (prof.o.live)
		hp_live_scale(&prof.live, &last.live, 1.0 + credit / (last.w * (double)last.size));
}

void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)jvmti, (void)thread;
	_Atomic int64_t *in = &prof.in_callbacks.s[hp_thread_stripe()].v;
	atomic_fetch_add(in, 1);
	if (atomic_load(&prof.running) && jni && atomic_load_explicit(&prof.rate_ready, memory_order_acquire))
		credit_thread_end(jni);
	atomic_fetch_sub(in, 1);
}

/* GC callback rules: no JNI, no allocation, no blocking lock; sem_post is
 * none of those (and async-signal-safe).
 *
 * A checkpoint of the allocation clock at both ends of each pause: nothing
 * is allocated in between. With the end alone, interpolated over a pause
 * the clock put every sample allocated since the last checkpoint early,
 * by up to the samples a pause's length is worth (G1 on JDK 11 under load
 * at 64k: pauses of 20-40 ms, 7 a second, ~150k samples a second), so ages
 * at judgment came out old, the survival curve high at young ages and the
 * view high (docs/load-clock.md). Plain stores. */
static void clock_checkpoint(void)
{
	hp_alloc_clock_tick(&prof.clock, hp_real_ns(),
			    (uint64_t)hp_striped_sum(&prof.samples, memory_order_relaxed));
}

void JNICALL on_gc_start(jvmtiEnv *jvmti)
{
	clock_checkpoint();
}

void JNICALL on_gc_finish(jvmtiEnv *jvmti)
{
	/* The world is stopped: no sample is allocated between the two. */
	uint64_t before = atomic_load_explicit(&prof.gc_events, memory_order_relaxed);
	hp_marks_on_gc(&prof.marks, prof.probe, (uint32_t)before);
	clock_checkpoint();
	atomic_fetch_add_explicit(&prof.gc_events, 1, memory_order_release);
	atomic_store_explicit(&prof.gc_pending, 1, memory_order_release);
	sem_post(&prof.wake);
}
