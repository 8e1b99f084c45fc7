#include "heapusage/gcthread.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>


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

JNIEnv *hp_jni_env(JavaVM *vm)
{
	JNIEnv *env = NULL;
	if (!vm || hp_in_gc_callback())
		return NULL;
	if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK)
		return NULL;
	return env;
}

int hp_cb_slot_set(struct hp_cb_slot *s, void (*fn)(void), void *ctx)
{
	struct hp_cb_pair *pair = NULL;
	if (fn) {
		pair = malloc(sizeof(*pair));
		if (!pair)
			return -ENOMEM;
		pair->fn = fn;
		pair->ctx = ctx;
	}
	struct hp_cb_pair *old = __atomic_exchange_n(&s->pair, pair, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&s->running, __ATOMIC_SEQ_CST))
		sched_yield();
	free(old);
	return 0;
}

const struct hp_cb_pair *hp_cb_slot_begin(struct hp_cb_slot *s)
{
	__atomic_add_fetch(&s->running, 1, __ATOMIC_SEQ_CST);
	return __atomic_load_n(&s->pair, __ATOMIC_SEQ_CST);
}

void hp_cb_slot_end(struct hp_cb_slot *s)
{
	__atomic_sub_fetch(&s->running, 1, __ATOMIC_SEQ_CST);
}
