/* The JVMTI agent: java -agentpath:libheapprobe.so=OPTIONS. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jvmti.h>

#include "agent/options.h"
#include "heapprobe.h"

static struct hp_agent_options options;
static struct hp_probe *probe;
static jvmtiEnv *agent_jvmti;

static FILE *open_log(void)
{
	if (!options.log[0])
		return stderr;
	FILE *f = fopen(options.log, "a");
	if (!f) {
		fprintf(stderr, "heapprobe: cannot open log %s: %s; writing to stderr\n", options.log,
			strerror(errno));
		return stderr;
	}
	return f;
}

static void write_info(void)
{
	FILE *out = open_log();
	if (options.verify)
		hp_verify_layout(probe, out);
	hp_write_info(probe, out);
	if (out != stderr)
		fclose(out);
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	if (options.info)
		write_info();
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	if (options.info_at_exit)
		write_info();
}

static jint start(JavaVM *vm, const char *spec, int live_phase)
{
	char err[512];
	if (hp_options_parse(spec, &options, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return JNI_ERR;
	}
	int rc = hp_open(vm, NULL, &probe);
	if (rc) {
		fprintf(stderr, "heapprobe: cannot open probe: %s\n", strerror(-rc));
		return JNI_ERR;
	}
	if (live_phase) {
		if (options.info || options.info_at_exit)
			write_info();
		return JNI_OK;
	}
	if ((*vm)->GetEnv(vm, (void **)&agent_jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
		fprintf(stderr, "heapprobe: JVMTI 1.2 is not available\n");
		return JNI_ERR;
	}
	jvmtiEventCallbacks callbacks;
	memset(&callbacks, 0, sizeof(callbacks));
	callbacks.VMInit = on_vm_init;
	callbacks.VMDeath = on_vm_death;
	(*agent_jvmti)->SetEventNotificationMode(agent_jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
	if ((*agent_jvmti)->SetEventCallbacks(agent_jvmti, &callbacks, sizeof(callbacks)) != JVMTI_ERROR_NONE ||
	    (*agent_jvmti)->SetEventNotificationMode(agent_jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL) !=
		    JVMTI_ERROR_NONE) {
		fprintf(stderr, "heapprobe: cannot enable the VMInit event\n");
		return JNI_ERR;
	}
	return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *spec, void *reserved)
{
	return start(vm, spec, 0);
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *spec, void *reserved)
{
	if (probe) {
		/* Already loaded: a second attach only re-runs what it asks for. */
		struct hp_agent_options again;
		char err[512];
		if (hp_options_parse(spec, &again, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return JNI_ERR;
		}
		if (again.info)
			hp_write_info(probe, stderr);
		return JNI_OK;
	}
	return start(vm, spec, 1);
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	hp_close(probe);
	probe = NULL;
}
