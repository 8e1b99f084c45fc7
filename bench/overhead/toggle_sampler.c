/*
 * The floor of any JEP 331 sampler, switchable at run time for
 * bench/overhead/Toggle.java: an agent whose SampledObjectAlloc callback does
 * nothing. Loaded (or attached again) with options:
 *   <bytes>   enable sampling at that mean interval
 *   off       disable the event (HotSpot stops sampling when no env has it)
 * Whatever a profiler costs above this, at the same interval, is its own work.
 *
 * can_generate_sampled_object_alloc_events is a solo capability (one JVMTI
 * env at a time, jvmtiManageCapabilities.cpp), so "off" relinquishes it and
 * the profiler under test can take it in the next phase.
 */
#include <jvmti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jvmtiEnv *jvmti;

static void JNICALL on_sample(jvmtiEnv *j, JNIEnv *jni, jthread thread, jobject object, jclass klass, jlong size)
{
	(void)j; (void)jni; (void)thread; (void)object; (void)klass; (void)size;
}

static jint apply(JavaVM *vm, const char *options)
{
	if (!jvmti && (*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_11) != JNI_OK)
		return JNI_ERR;
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_sampled_object_alloc_events = 1;
	if (options && strcmp(options, "off") == 0) {
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
		return (*jvmti)->RelinquishCapabilities(jvmti, &caps) == JVMTI_ERROR_NONE ? JNI_OK : JNI_ERR;
	}
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.SampledObjectAlloc = on_sample;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE) {
		fprintf(stderr, "toggle_sampler: SampledObjectAlloc capability refused (another agent holds it?)\n");
		return JNI_ERR;
	}
	char *end;
	long v = strtol(options ? options : "524288", &end, 10);
	if (*end || v <= 0 || v > 0x7fffffff) {
		fprintf(stderr, "toggle_sampler: bad option '%s' (bytes or off)\n", options);
		return JNI_ERR;
	}
	if ((*jvmti)->SetHeapSamplingInterval(jvmti, (jint)v) != JVMTI_ERROR_NONE)
		return JNI_ERR;
	return (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL) ==
	       JVMTI_ERROR_NONE ? JNI_OK : JNI_ERR;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	return apply(vm, options);
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	return apply(vm, options);
}
