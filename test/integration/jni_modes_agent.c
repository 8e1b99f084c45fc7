/* Test agent for the JNI-based heap modes: jmm, jmx-native, exported-totals
 * and the JMM collection usage.
 *
 *   java -agentpath:libjni_modes_agent.so[=OPTIONS] -cp CLASSES JniModes
 *
 * It opens a probe (the static library's objects are linked in), reads each
 * mode at VMInit and prints "agent.<...>: value" lines, and implements
 * JniModes.probe() (HotSpot looks natives up in agent libraries too), which
 * JniModes calls at a quiet point to compare with what Java sees.
 *
 * OPTIONS, comma-separated:
 *   late      open the probe only in VMInit, after making the first
 *             getHeapMemoryUsage() call itself: the probe cannot see the
 *             native being bound and must fall back to dlsym
 *   direct    call the modes' init/read directly instead of hp_heap_usage
 *   pending   also check that a pending Java exception makes the JNI modes
 *             decline (-EAGAIN) and stays pending
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jvmti.h>

#include "heapprobe.h"
#include "heapusage/jmm.h"
#include "heapusage/jmx.h"
#include "heapusage/jnimode.h"
#include "heapusage/modes.h"
#include "heapusage/probe.h"

static struct hp_probe *probe;
static JavaVM *the_vm;
static jvmtiEnv *agent_jvmti;
static struct {
	bool late, direct, pending;
} opt;

static const enum hp_mode modes[] = { HP_MODE_JMM, HP_MODE_JMX_NATIVE, HP_MODE_EXPORTED_TOTALS };
static const struct hp_mode_ops *const mode_ops[] = { &hp_mode_jmm, &hp_mode_jmx_native, &hp_mode_exported_totals };
#define NMODES (sizeof(modes) / sizeof(modes[0]))
/* The other modes, read in probe() after the collection usage (stress). */
static const enum hp_mode other_modes[] = { HP_MODE_MEMORY_USAGE_CALL, HP_MODE_HEAP_SUMMARY_CALL,
					    HP_MODE_LAST_GC_FIELDS, HP_MODE_PERFDATA };
#define NOTHER (sizeof(other_modes) / sizeof(other_modes[0]))
#define NPROBE (16 + 4 * NOTHER)

/* Mode m through the dispatcher (hp_heap_usage, that mode only). */
static int read_dispatched(enum hp_mode m, struct hp_mode_reading *r)
{
	memset(r, 0, sizeof(*r));
	if (!probe)
		return -ENODEV;
	struct hp_heap_usage u = { .sz = sizeof(u) };
	int rc = hp_heap_usage(probe, HP_USAGE_ONLY_MODE(m), &u);
	if (rc == 0) {
		if (u.mode != m)
			return -EPROTO;
		r->used = u.used;
		r->committed = u.committed;
		r->max = u.max;
		r->kind = u.kind;
	}
	return rc;
}

/* JNI mode modes[i]: through the dispatcher, or its ops directly. */
static int read_mode(JNIEnv *env, size_t i, struct hp_mode_reading *r)
{
	if (!opt.direct || !probe)
		return read_dispatched(modes[i], r);
	/* Bypasses the dispatcher: init is idempotent once it succeeded. */
	memset(r, 0, sizeof(*r));
	char reason[HP_REASON_LEN];
	int rc = mode_ops[i]->init(probe, reason, sizeof(reason));
	return rc ? rc : mode_ops[i]->read(probe, env, r);
}

/* A reading into probe()'s array: rc, used, committed, max. */
static void put_reading(jlong *v, int rc, const struct hp_mode_reading *r)
{
	v[0] = rc;
	if (rc == 0) {
		v[1] = (jlong)r->used;
		v[2] = (jlong)r->committed;
		v[3] = (jlong)r->max;
	}
}

static void print_modes(JNIEnv *env, const char *when)
{
	for (size_t i = 0; i < NMODES; i++) {
		struct hp_mode_reading r;
		int rc = read_mode(env, i, &r);
		if (rc == 0) {
			printf("agent.%s.%s: ok used=%llu committed=%llu max=%llu kind=%s\n", when,
			       hp_mode_name(modes[i]), (unsigned long long)r.used, (unsigned long long)r.committed,
			       (unsigned long long)r.max, hp_usage_kind_name(r.kind));
		} else {
			const char *reason = "";
			hp_mode_status(probe, modes[i], &reason);
			printf("agent.%s.%s: failed rc=%d (%s): %s\n", when, hp_mode_name(modes[i]), rc,
			       strerror(-rc), reason);
		}
	}
	uint64_t used = 0, committed = 0;
	int rc = hp_jmm_collection_usage(probe, env, &used, &committed);
	if (rc == 0)
		printf("agent.%s.collection: ok used=%llu committed=%llu\n", when, (unsigned long long)used,
		       (unsigned long long)committed);
	else
		printf("agent.%s.collection: failed rc=%d (%s)\n", when, rc, strerror(-rc));
	printf("agent.jmx.capture: %s\n", hp_jmx_capture_note(probe));
	printf("agent.jmm.layout: %s\n", hp_jmm_note(probe));
	fflush(stdout);
}

/* true if the last JNI call threw (described and cleared). */
static bool threw(JNIEnv *env)
{
	if (!(*env)->ExceptionCheck(env))
		return false;
	(*env)->ExceptionDescribe(env);
	(*env)->ExceptionClear(env);
	return true;
}

/* What any Java code would do first: bind MemoryImpl.getMemoryUsage0. */
static void call_get_heap_memory_usage(JNIEnv *env)
{
	jobject u = NULL;
	jclass f = (*env)->FindClass(env, "java/lang/management/ManagementFactory");
	jmethodID gb = threw(env) || !f ? NULL :
		(*env)->GetStaticMethodID(env, f, "getMemoryMXBean", "()Ljava/lang/management/MemoryMXBean;");
	jobject bean = threw(env) || !gb ? NULL : (*env)->CallStaticObjectMethod(env, f, gb);
	jclass b = threw(env) || !bean ? NULL : (*env)->FindClass(env, "java/lang/management/MemoryMXBean");
	jmethodID gh = threw(env) || !b ? NULL :
		(*env)->GetMethodID(env, b, "getHeapMemoryUsage", "()Ljava/lang/management/MemoryUsage;");
	if (!threw(env) && gh) {
		u = (*env)->CallObjectMethod(env, bean, gh);
		if (threw(env))
			u = NULL;
	}
	printf("agent.pre_bound: %s\n", u ? "yes" : "no");
}

/* Every mode's status and reason: at VMInit (after the reads there) and
 * at VMDeath, so that a mode disabled meanwhile shows, with its reason. */
static void print_status(const char *when)
{
	for (int m = 0; m < HP_MODE_COUNT; m++) {
		const char *reason = "";
		int rc = hp_mode_status(probe, (enum hp_mode)m, &reason);
		printf("agent.%s.%s: status %d %s\n", when, hp_mode_name((enum hp_mode)m), rc, reason);
	}
	fflush(stdout);
}

static int open_probe(JavaVM *vm)
{
	int rc = hp_open(vm, NULL, &probe);
	if (rc)
		fprintf(stderr, "jni_modes_agent: hp_open: %s\n", strerror(-rc));
	return rc;
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *env, jthread thread)
{
	if (opt.late) {
		call_get_heap_memory_usage(env);
		if (open_probe(the_vm))
			return;
	}
	print_modes(env, "vminit");
	print_status("start");
	if (opt.pending) {
		jclass re = (*env)->FindClass(env, "java/lang/RuntimeException");
		(*env)->ThrowNew(env, re, "pending on purpose");
		int ok = 1;
		for (size_t i = 0; i < NMODES; i++) {
			struct hp_mode_reading r;
			int rc = read_mode(env, i, &r);
			ok &= rc == -EAGAIN;
			printf("agent.pending.%s: rc=%d\n", hp_mode_name(modes[i]), rc);
		}
		uint64_t u, c;
		ok &= hp_jmm_collection_usage(probe, env, &u, &c) == -EAGAIN;
		jboolean kept = (*env)->ExceptionCheck(env);
		(*env)->ExceptionClear(env);
		printf("agent.pending: %s\n", ok && kept ? "declined, exception kept" :
		       kept ? "read with an exception pending" : "exception lost");
		fflush(stdout);
	}
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *env)
{
	if (probe)
		print_status("end");
}

JNIEXPORT jlongArray JNICALL Java_JniModes_probe(JNIEnv *env, jclass cls)
{
	jlong v[NPROBE];
	for (size_t i = 0; i < NPROBE; i++)
		v[i] = 0;
	for (size_t i = 0; i < NMODES; i++) {
		struct hp_mode_reading r;
		int rc = read_mode(env, i, &r);
		put_reading(&v[4 * i], rc, &r);
		/* A call that threw: which exception (the first of each mode). */
		static int said[NMODES];
		if (rc == -EIO && !__atomic_exchange_n(&said[i], 1, __ATOMIC_RELAXED))
			printf("agent.threw.%s: %s\n", hp_mode_name(modes[i]),
			       hp_jni_last_exception()[0] ? hp_jni_last_exception() : "(unnamed)");
	}
	uint64_t used = 0, committed = 0;
	v[12] = probe ? hp_jmm_collection_usage(probe, env, &used, &committed) : -ENODEV;
	v[13] = (jlong)used;
	v[14] = (jlong)committed;
	/* Then the modes without JNI, each through the dispatcher. */
	for (size_t i = 0; i < NOTHER; i++) {
		struct hp_mode_reading r;
		put_reading(&v[16 + 4 * i], read_dispatched(other_modes[i], &r), &r);
	}
	jlongArray a = (*env)->NewLongArray(env, NPROBE);
	if (a)
		(*env)->SetLongArrayRegion(env, a, 0, NPROBE, v);
	return a;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	the_vm = vm;
	if (options) {
		opt.late = strstr(options, "late") != NULL;
		opt.direct = strstr(options, "direct") != NULL;
		opt.pending = strstr(options, "pending") != NULL;
	}
	if (!opt.late && open_probe(vm))
		return JNI_ERR;
	if ((*vm)->GetEnv(vm, (void **)&agent_jvmti, JVMTI_VERSION_1_2) != JNI_OK)
		return JNI_ERR;
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	if ((*agent_jvmti)->SetEventCallbacks(agent_jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE ||
	    (*agent_jvmti)->SetEventNotificationMode(agent_jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL) !=
		    JVMTI_ERROR_NONE ||
	    (*agent_jvmti)->SetEventNotificationMode(agent_jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL) !=
		    JVMTI_ERROR_NONE)
		return JNI_ERR;
	return JNI_OK;
}
