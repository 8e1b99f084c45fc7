/* Test agent for the "perfdata" mode: opens a probe, reports the mode's
 * status and first reading at Agent_OnLoad and VMInit, reads the mode from
 * inside every GarbageCollectionFinish (the probe's GC callback), and gives
 * PerfDataCheck.java natives to compare the readings with MemoryMXBean.
 * HotSpot resolves Java_PerfDataCheck_* in agent libraries, so the Java side
 * needs no System.loadLibrary. */
#include <jni.h>
#include <jvmti.h>
#include <stdio.h>
#include <string.h>

#include "heapprobe.h"

#define ONLY_PERFDATA (HP_USAGE_ONLY_MODE(HP_MODE_PERFDATA) | HP_USAGE_NO_JNI)

static struct hp_probe *probe;
static jvmtiEnv *jvmti;

/* Written by the GC callback only (one GC at a time), read by Java after
 * System.gc() returned: the collection that wrote them is over. */
static volatile long gc_reads, gc_failures;
static volatile int gc_rc;
static volatile unsigned long long gc_used, gc_committed, gc_max;

static void print_status(const char *when)
{
	const char *reason = "";
	int rc = hp_mode_status(probe, HP_MODE_PERFDATA, &reason);
	printf("perfdata.%s.status: %d %s\n", when, rc, reason);
	fflush(stdout);
}

static void print_reading(const char *when)
{
	struct hp_heap_usage u = { .sz = sizeof(u) };
	int rc = hp_heap_usage(probe, ONLY_PERFDATA, &u);
	printf("perfdata.%s: rc=%d used=%llu committed=%llu max=%llu kind=%s\n", when, rc,
	       (unsigned long long)u.used, (unsigned long long)u.committed, (unsigned long long)u.max,
	       hp_usage_kind_name(u.kind));
	fflush(stdout);
}

static void on_gc(const struct hp_heap_usage *post_gc, void *ctx)
{
	/* Inside GarbageCollectionFinish: no JNI, no allocation, no stdio. The
	 * dispatcher knows it is in the probe's callback and never retries a
	 * mode's init here. */
	struct hp_heap_usage u = { .sz = sizeof(u) };
	int rc = hp_heap_usage(probe, ONLY_PERFDATA, &u);
	gc_rc = rc;
	if (rc) {
		gc_failures++;
		return;
	}
	gc_used = u.used;
	gc_committed = u.committed;
	gc_max = u.max;
	gc_reads++;
}

static void JNICALL on_vm_init(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
	struct hp_gc_info g = { .sz = sizeof(g) };
	hp_gc_info(probe, &g);
	printf("perfdata.gc: %s\n", hp_gc_kind_name(g.kind));
	print_status("vminit");
	print_reading("vminit");
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	int rc = hp_open(vm, NULL, &probe);
	if (rc) {
		fprintf(stderr, "perfdata_agent: hp_open failed: %d\n", rc);
		return JNI_ERR;
	}
	/* PerfMemory is created after Agent_OnLoad: expect "not yet" (-EAGAIN),
	 * or the -XX:-UsePerfData refusal. */
	print_status("onload");
	rc = hp_set_gc_callback(probe, on_gc, NULL);
	printf("perfdata.gc_callback: %d\n", rc);

	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK)
		return JNI_ERR;
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.VMInit = on_vm_init;
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL) != JVMTI_ERROR_NONE)
		return JNI_ERR;
	return JNI_OK;
}

/* {rc, used, committed, max} of the perfdata mode, now. */
JNIEXPORT jlongArray JNICALL Java_PerfDataCheck_read(JNIEnv *env, jclass cls)
{
	struct hp_heap_usage u = { .sz = sizeof(u) };
	int rc = hp_heap_usage(probe, ONLY_PERFDATA, &u);
	jlong out[4] = { rc, (jlong)u.used, (jlong)u.committed, (jlong)u.max };
	jlongArray arr = (*env)->NewLongArray(env, 4);
	if (arr)
		(*env)->SetLongArrayRegion(env, arr, 0, 4, out);
	return arr;
}

/* {reads, failures, last rc, used, committed, max} from the GC callback. */
JNIEXPORT jlongArray JNICALL Java_PerfDataCheck_lastGc(JNIEnv *env, jclass cls)
{
	jlong out[6] = { gc_reads, gc_failures, gc_rc, (jlong)gc_used, (jlong)gc_committed, (jlong)gc_max };
	jlongArray arr = (*env)->NewLongArray(env, 6);
	if (arr)
		(*env)->SetLongArrayRegion(env, arr, 0, 6, out);
	return arr;
}

/* The mode's status; the reason goes to stdout. */
JNIEXPORT jint JNICALL Java_PerfDataCheck_status(JNIEnv *env, jclass cls)
{
	const char *reason = "";
	int rc = hp_mode_status(probe, HP_MODE_PERFDATA, &reason);
	printf("perfdata.reason: %s\n", reason[0] ? reason : "(enabled)");
	fflush(stdout);
	return rc;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	hp_close(probe);
}
