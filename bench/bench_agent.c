/* Benchmark agent for UsageBench.java: times hp_heap_usage() and each
 * mode's raw read in C, so JNI transition cost is paid once per batch. */
#include <jni.h>
#include <time.h>

#include "heapprobe.h"
#include "heapusage/modes.h"

static struct hp_probe *probe;

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	return hp_open(vm, NULL, &probe) ? JNI_ERR : JNI_OK;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

JNIEXPORT jdouble JNICALL Java_UsageBench_nsPerCall(JNIEnv *env, jclass cls, jint flags, jint iters)
{
	struct hp_heap_usage u = { .sz = sizeof(u) };
	volatile uint64_t sink = 0;
	if (hp_heap_usage(probe, (unsigned)flags, &u))
		return -1;
	double t0 = now_ns();
	for (int i = 0; i < iters; i++) {
		hp_heap_usage(probe, (unsigned)flags, &u);
		sink += u.used;
	}
	return (now_ns() - t0) / iters;
}

JNIEXPORT jdouble JNICALL Java_UsageBench_rawNsPerCall(JNIEnv *env, jclass cls, jint mode, jint iters)
{
	struct hp_mode_reading r;
	volatile uint64_t sink = 0;
	if (hp_mode_read(probe, mode, env, &r))
		return -1;
	double t0 = now_ns();
	for (int i = 0; i < iters; i++) {
		hp_mode_read(probe, mode, env, &r);
		sink += r.used;
	}
	return (now_ns() - t0) / iters;
}

JNIEXPORT jdouble JNICALL Java_UsageBench_liveNsPerCall(JNIEnv *env, jclass cls, jint iters)
{
	volatile uint64_t sink = 0;
	double t0 = now_ns();
	for (int i = 0; i < iters; i++)
		sink += hp_live_bytes(probe);
	return (now_ns() - t0) / iters;
}
