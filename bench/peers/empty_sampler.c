/*
 * The floor for any JEP 331 sampler: a JVMTI agent that turns on
 * SampledObjectAlloc with an empty callback. Whatever a profiler costs above
 * this is its own work (stack walk, bookkeeping, weak refs, output).
 *
 *   java -agentpath:libempty_sampler.so=INTERVAL_BYTES ...   (default 524288)
 *
 * Built by bench/peers/run.sh:
 *   gcc -O2 -shared -fPIC -I$JAVA_HOME/include -I$JAVA_HOME/include/linux \
 *       -o libempty_sampler.so empty_sampler.c
 */
#include <jvmti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void JNICALL on_sample(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
			      jclass klass, jlong size)
{
	(void)jvmti; (void)jni; (void)thread; (void)object; (void)klass; (void)size;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	jvmtiEnv *jvmti = NULL;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_11) != JNI_OK || !jvmti) {
		fprintf(stderr, "empty_sampler: no JVMTI 11 environment\n");
		return JNI_ERR;
	}
	jint interval = 524288;
	if (options && *options) {
		char *end;
		long v = strtol(options, &end, 0);
		if (*end == 'k' || *end == 'K') v *= 1024;
		else if (*end == 'm' || *end == 'M') v *= 1024 * 1024;
		if (v < 0 || v > 0x7fffffff) {
			fprintf(stderr, "empty_sampler: bad interval '%s'\n", options);
			return JNI_ERR;
		}
		interval = (jint)v;
	}
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_sampled_object_alloc_events = 1;
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.SampledObjectAlloc = on_sample;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetHeapSamplingInterval(jvmti, interval) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL) !=
		    JVMTI_ERROR_NONE) {
		fprintf(stderr, "empty_sampler: JVMTI setup failed\n");
		return JNI_ERR;
	}
	return JNI_OK;
}
