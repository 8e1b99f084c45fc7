/* Test agent: embeds heapprobe the way a profiler vendor would (static
 * library, its own Agent_OnLoad), registers a GC callback, and gives the
 * Java test program a native probe() over hp_heap_usage(). HotSpot resolves
 * Java_HeapUsageCheck_* in agent libraries too, so no System.loadLibrary. */
#include <jni.h>
#include <jvmti.h>
#include <stdio.h>
#include <string.h>

#include "heapprobe.h"

static struct hp_probe *probe;
static volatile long gc_callbacks;
static volatile long bad_callbacks;

static void on_gc(const struct hp_heap_usage *u, void *ctx)
{
	/* No JNI, no allocation: just check and count. */
	if (ctx == &gc_callbacks && u->used <= u->committed && u->kind != HP_USAGE_CURRENT)
		__atomic_add_fetch(&gc_callbacks, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&bad_callbacks, 1, __ATOMIC_RELAXED);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	int rc = hp_open(vm, NULL, &probe);
	if (rc) {
		fprintf(stderr, "usage_agent: hp_open failed: %d\n", rc);
		return JNI_ERR;
	}
	hp_set_gc_callback(probe, on_gc, (void *)&gc_callbacks);
	if (options && strcmp(options, "info") == 0)
		hp_write_info(probe, stdout);
	return JNI_OK;
}

JNIEXPORT jlongArray JNICALL Java_HeapUsageCheck_probe(JNIEnv *env, jclass cls, jint flags)
{
	struct hp_heap_usage u = { .sz = sizeof(u) };
	int rc = hp_heap_usage(probe, (unsigned)flags, &u);
	jlong out[9] = { rc, u.mode, u.kind, (jlong)u.used, (jlong)u.committed, (jlong)u.max, (jlong)u.live,
			 u.live_kind, (jlong)u.gc_count };
	jlongArray arr = (*env)->NewLongArray(env, 9);
	if (arr)
		(*env)->SetLongArrayRegion(env, arr, 0, 9, out);
	return arr;
}

JNIEXPORT jlong JNICALL Java_HeapUsageCheck_callbacks(JNIEnv *env, jclass cls)
{
	return bad_callbacks ? -bad_callbacks : gc_callbacks;
}

/* The samplers' fast path, read right after probe(POST_GC): the header
 * promises it is hp_heap_usage's `live`. */
JNIEXPORT jlong JNICALL Java_HeapUsageCheck_liveBytes(JNIEnv *env, jclass cls)
{
	return (jlong)hp_live_bytes(probe);
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	hp_close(probe);
}
