#include "heapusage/gcthread.h"

#include "heapusage/probe.h"

/* Default TLS model: initial-exec would save a __tls_get_addr call but can
 * make a late dlopen (jcmd JVMTI.agent_load) fail for want of static TLS. */
static __thread int in_gc_callback;

void hp_gc_callback_enter(void)
{
	in_gc_callback = 1;
}

void hp_gc_callback_leave(void)
{
	in_gc_callback = 0;
}

bool hp_in_gc_callback(void)
{
	return in_gc_callback != 0;
}

JNIEnv *hp_jni_env(struct hp_probe *p)
{
	JNIEnv *env = NULL;
	if (!p->vm || hp_in_gc_callback())
		return NULL;
	if ((*p->vm)->GetEnv(p->vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK)
		return NULL;
	return env;
}
