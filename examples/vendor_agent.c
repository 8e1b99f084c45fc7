/* A profiler vendor's own JVMTI agent that embeds heapprobe: the way to get
 * the live heap figure and the marking signal into an agent of your own.
 *
 *   java -agentpath:/path/libvendor_agent.so[=OPTIONS] ...
 *
 * OPTIONS (comma-separated):
 *   sampler         also run our own JEP 331 allocation sampler (variant 2)
 *   interval=BYTES  its mean sampling interval (default 32768)
 *   mark_every=S    ask heapprobe for a marking every S seconds (0: never)
 *   allow_full      ... a full collection where there is no concurrent one
 *   out=PATH        the report at VM death (default stderr)
 *
 * What it shows:
 *  - Variant 1 (always): the agent keeps its own jvmtiEnv and its own
 *    GarbageCollectionFinish handler; heapprobe opens a second env of its
 *    own (hp_open), so neither sees the other's callbacks. Inside our
 *    GarbageCollectionFinish, where JNI is forbidden, hp_live_bytes() gives
 *    the heap figure with two loads; heapprobe's post-GC callback
 *    (hp_set_gc_callback) and marking callback (hp_set_marking_callback)
 *    feed our counters too.
 *  - Variant 2 (`sampler`): our own sampler holds
 *    can_generate_sampled_object_alloc_events (only one env in the JVM can)
 *    and uses heapprobe's marking signal to tell which samples are live:
 *    a sample still referenced is verified alive once two markings have
 *    completed since it was allocated (hp_marking's count at allocation
 *    plus 2: the second began after the first ended, hence after the
 *    allocation; a dead object's weak reference is cleared by then). The
 *    live estimate is the Horvitz-Thompson sum of verified samples
 *    (size / P(sampled), P = 1 - exp(-size / interval)).
 *
 * Built by the test suite twice (test/CMakeLists.txt): against
 * libheapprobe.so, and with libheapprobe.a linked in, which exports only
 * hp_* so that this agent may carry its own copy of anything else. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jvmti.h>

#include "heapprobe.h"

static jvmtiEnv *jvmti;                 /* ours */
static struct hp_probe *probe;          /* heapprobe's (its own env inside) */

static struct {
	bool sampler;
	long interval;
	int mark_every;
	bool allow_full;
	char out[512];
} opt = { .interval = 32768 };

/* Counters the callbacks bump: atomics only, no lock (GC callbacks). */
static _Atomic uint64_t gc_finish_events, live_at_gc_finish;
static _Atomic uint64_t hp_post_gc_calls, hp_post_gc_live;
static _Atomic uint64_t marking_calls, marking_last_count;
static _Atomic int marking_last_kind;
static _Atomic uint64_t requests_ok, requests_failed;
static char request_error[200];
static char sampler_state[200] = "off";

/* Samples: weak reference, size, marking count at allocation. */
struct sample {
	jweak ref;
	jlong size;
	uint64_t epoch;
};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sample *samples;
static size_t nsamples, capsamples;
static uint64_t samples_taken;
static double verified_bytes, recent_bytes;     /* the last tally */
static uint64_t verified_n, recent_n;
static atomic_bool stopping;

/* ---- variant 1: counters ------------------------------------------------ */

/* Our own GarbageCollectionFinish: no JNI here, but hp_live_bytes is two
 * plain loads. */
static void JNICALL on_gc_finish(jvmtiEnv *env)
{
	atomic_fetch_add(&gc_finish_events, 1);
	atomic_store(&live_at_gc_finish, hp_live_bytes(probe));
}

/* heapprobe's post-GC callback: on the GC thread, same rules. */
static void on_hp_post_gc(const struct hp_heap_usage *u, void *ctx)
{
	atomic_fetch_add(&hp_post_gc_calls, 1);
	atomic_store(&hp_post_gc_live, u->live);
}

/* heapprobe's marking signal. */
static void on_hp_marking(const struct hp_marking *m, void *ctx)
{
	atomic_fetch_add(&marking_calls, 1);
	atomic_store(&marking_last_count, m->last_count);
	atomic_store(&marking_last_kind, (int)m->last_kind);
}

/* ---- variant 2: our own sampler ------------------------------------------ */

static uint64_t marking_count(void)
{
	struct hp_marking m = { .sz = sizeof(m) };
	return hp_marking(probe, &m) == 0 ? m.count : 0;
}

static void JNICALL on_sampled_alloc(jvmtiEnv *env, JNIEnv *jni, jthread thread, jobject object, jclass klass,
				     jlong size)
{
	jweak ref = (*jni)->NewWeakGlobalRef(jni, object);
	if (!ref)
		return;
	uint64_t epoch = marking_count();
	pthread_mutex_lock(&lock);
	samples_taken++;
	if (nsamples == capsamples) {
		size_t cap = capsamples ? capsamples * 2 : 4096;
		struct sample *n = realloc(samples, cap * sizeof(*n));
		if (!n) {
			pthread_mutex_unlock(&lock);
			(*jni)->DeleteWeakGlobalRef(jni, ref);
			return;
		}
		samples = n;
		capsamples = cap;
	}
	samples[nsamples++] = (struct sample){ ref, size, epoch };
	pthread_mutex_unlock(&lock);
}

/* Drops dead samples and sums the live ones, verified or not yet. */
static void tally(JNIEnv *jni)
{
	uint64_t now = marking_count();
	double ver = 0, rec = 0;
	uint64_t vn = 0, rn = 0;
	pthread_mutex_lock(&lock);
	size_t keep = 0;
	for (size_t i = 0; i < nsamples; i++) {
		struct sample s = samples[i];
		if ((*jni)->IsSameObject(jni, s.ref, NULL)) {
			(*jni)->DeleteWeakGlobalRef(jni, s.ref);
			continue;
		}
		samples[keep++] = s;
		double p = 1.0 - exp(-(double)s.size / (double)opt.interval);
		double w = (double)s.size / (p > 0 ? p : 1.0);
		if (now >= s.epoch + 2)
			ver += w, vn++;
		else
			rec += w, rn++;
	}
	nsamples = keep;
	verified_bytes = ver, recent_bytes = rec;
	verified_n = vn, recent_n = rn;
	pthread_mutex_unlock(&lock);
}

/* Our agent thread: markings asked for (heapprobe blocks it for the
 * cycle), then a tally. */
static void JNICALL agent_thread(jvmtiEnv *env, JNIEnv *jni, void *arg)
{
	while (!atomic_load(&stopping)) {
		for (int i = 0; i < opt.mark_every * 10 && !atomic_load(&stopping); i++)
			usleep(100000);
		if (atomic_load(&stopping))
			break;
		char why[200];
		if (hp_request_marking(probe, opt.allow_full ? HP_MARK_ALLOW_FULL : 0, why, sizeof(why)) == 0) {
			atomic_fetch_add(&requests_ok, 1);
		} else {
			atomic_fetch_add(&requests_failed, 1);
			snprintf(request_error, sizeof(request_error), "%s", why);
		}
		if (opt.sampler)
			tally(jni);
	}
}

static void JNICALL on_vm_init(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
	if (opt.mark_every <= 0)
		return;
	jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
	jmethodID init = cls ? (*jni)->GetMethodID(jni, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
	jstring name = (*jni)->NewStringUTF(jni, "vendor-agent marking");
	jobject t = init && name ? (*jni)->NewObject(jni, cls, init, name) : NULL;
	if (!t || (*jvmti)->RunAgentThread(jvmti, t, agent_thread, NULL, JVMTI_THREAD_NORM_PRIORITY) != JVMTI_ERROR_NONE)
		fprintf(stderr, "vendor-agent: no marking thread\n");
}

static void JNICALL on_vm_death(jvmtiEnv *env, JNIEnv *jni)
{
	atomic_store(&stopping, true);
	if (opt.sampler)
		tally(jni);
	FILE *out = opt.out[0] ? fopen(opt.out, "w") : stderr;
	if (!out)
		out = stderr;
	struct hp_heap_usage u = { .sz = sizeof(u) };
	int urc = hp_heap_usage(probe, HP_USAGE_POST_GC, &u);
	struct hp_marking m = { .sz = sizeof(m) };
	hp_marking(probe, &m);
	fprintf(out, "vendor.gc_finish_events: %llu\n", (unsigned long long)atomic_load(&gc_finish_events));
	fprintf(out, "vendor.live_at_gc_finish: %llu\n", (unsigned long long)atomic_load(&live_at_gc_finish));
	fprintf(out, "vendor.hp_post_gc_calls: %llu\n", (unsigned long long)atomic_load(&hp_post_gc_calls));
	fprintf(out, "vendor.hp_post_gc_live: %llu\n", (unsigned long long)atomic_load(&hp_post_gc_live));
	fprintf(out, "vendor.post_gc_used: %llu (%s, %s)\n", urc ? 0ull : (unsigned long long)u.used,
		urc ? "none" : hp_mode_name(u.mode), urc ? strerror(-urc) : hp_usage_kind_name(u.kind));
	fprintf(out, "vendor.markings: %llu (%s)\n", (unsigned long long)m.count, m.source ? m.source : "?");
	fprintf(out, "vendor.marking_calls: %llu\n", (unsigned long long)atomic_load(&marking_calls));
	fprintf(out, "vendor.marking_last_count: %llu\n", (unsigned long long)atomic_load(&marking_last_count));
	fprintf(out, "vendor.marking_last_kind: %s\n",
		hp_marking_kind_name((enum hp_marking_kind)atomic_load(&marking_last_kind)));
	fprintf(out, "vendor.marking_requests_ok: %llu\n", (unsigned long long)atomic_load(&requests_ok));
	fprintf(out, "vendor.marking_requests_failed: %llu%s%s\n", (unsigned long long)atomic_load(&requests_failed),
		request_error[0] ? " " : "", request_error);
	fprintf(out, "vendor.sampler: %s\n", sampler_state);
	fprintf(out, "vendor.samples: %llu\n", (unsigned long long)samples_taken);
	fprintf(out, "vendor.verified_live_bytes: %.0f (%llu samples)\n", verified_bytes,
		(unsigned long long)verified_n);
	fprintf(out, "vendor.recent_bytes: %.0f (%llu samples)\n", recent_bytes, (unsigned long long)recent_n);
	if (out != stderr)
		fclose(out);
}

static void parse(const char *s)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", s ? s : "");
	for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "sampler"))
			opt.sampler = true;
		else if (!strcmp(t, "allow_full"))
			opt.allow_full = true;
		else if (!strncmp(t, "interval=", 9))
			opt.interval = atol(t + 9) > 0 ? atol(t + 9) : 32768;
		else if (!strncmp(t, "mark_every=", 11))
			opt.mark_every = atoi(t + 11);
		else if (!strncmp(t, "out=", 4))
			snprintf(opt.out, sizeof(opt.out), "%s", t + 4);
		else
			fprintf(stderr, "vendor-agent: unknown option '%s'\n", t);
	}
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	parse(options);
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_11) != JNI_OK)
		return JNI_ERR;
	/* heapprobe next to us: its own env; our callbacks stay ours. */
	int rc = hp_open(vm, NULL, &probe);
	if (rc) {
		fprintf(stderr, "vendor-agent: hp_open: %s\n", strerror(-rc));
		return JNI_ERR;
	}
	hp_set_gc_callback(probe, on_hp_post_gc, NULL);
	hp_set_marking_callback(probe, on_hp_marking, NULL);

	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_garbage_collection_events = 1;
	(*jvmti)->AddCapabilities(jvmti, &caps);
	if (opt.sampler) {
		jvmtiCapabilities s;
		memset(&s, 0, sizeof(s));
		s.can_generate_sampled_object_alloc_events = 1;
		jvmtiError e = (*jvmti)->AddCapabilities(jvmti, &s);
		if (e == JVMTI_ERROR_NONE &&
		    (*jvmti)->SetHeapSamplingInterval(jvmti, (jint)opt.interval) == JVMTI_ERROR_NONE)
			snprintf(sampler_state, sizeof(sampler_state), "on, interval %ld", opt.interval);
		else
			snprintf(sampler_state, sizeof(sampler_state), "off: cannot get "
				 "can_generate_sampled_object_alloc_events (another agent in this JVM holds it; error %d)", e);
	}
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.GarbageCollectionFinish = on_gc_finish;
	cb.SampledObjectAlloc = on_sampled_alloc;
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	(*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb));
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
	if (!strncmp(sampler_state, "on", 2))
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	return JNI_OK;
}
