/* Helpers the JNI-based modes share (jnimode.h). */
#include "heapusage/jnimode.h"
#include "heapusage/gcthread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jvmti.h>

#include "heapusage/probe.h"

static __thread char last_exception[96];

const char *hp_jni_last_exception(void)
{
	return last_exception;
}

bool hp_jni_threw(JNIEnv *env)
{
	if (!(*env)->ExceptionCheck(env))
		return false;
	(*env)->ExceptionClear(env);
	return true;
}

/* Readings only (live phase, never a GC callback, where JNI modes are not
 * legal): naming the class calls Class.getName, which set-up paths that
 * run before VMInit must not. */
bool hp_jni_threw_named(JNIEnv *env)
{
	if (!(*env)->ExceptionCheck(env))
		return false;
	jthrowable t = (*env)->ExceptionOccurred(env);
	(*env)->ExceptionClear(env);
	last_exception[0] = '\0';
	jclass c = t ? (*env)->GetObjectClass(env, t) : NULL;
	jclass cc = c ? (*env)->GetObjectClass(env, c) : NULL;
	jmethodID get_name = cc ? (*env)->GetMethodID(env, cc, "getName", "()Ljava/lang/String;") : NULL;
	jstring name = get_name ? (jstring)(*env)->CallObjectMethod(env, c, get_name) : NULL;
	if ((*env)->ExceptionCheck(env)) {
		(*env)->ExceptionClear(env);    /* naming it threw too: left unnamed */
		name = NULL;
	}
	const char *utf = name ? (*env)->GetStringUTFChars(env, name, NULL) : NULL;
	if (utf) {
		snprintf(last_exception, sizeof(last_exception), "%s", utf);
		(*env)->ReleaseStringUTFChars(env, name, utf);
	}
	(*env)->ExceptionClear(env);
	if (name)
		(*env)->DeleteLocalRef(env, name);
	if (cc)
		(*env)->DeleteLocalRef(env, cc);
	if (c)
		(*env)->DeleteLocalRef(env, c);
	if (t)
		(*env)->DeleteLocalRef(env, t);
	return true;
}

int hp_musage_call(JNIEnv *env, const struct hp_musage *m, jobject (*get)(JNIEnv *env, void *ctx), void *ctx,
		   struct hp_mode_reading *r)
{
	if (!env || (*env)->ExceptionCheck(env))
		return -EAGAIN;
	if ((*env)->PushLocalFrame(env, 8) < 0) {
		hp_jni_threw(env);
		return -ENOMEM;
	}
	jobject usage = get(env, ctx);
	int rc = hp_jni_threw_named(env) ? -EIO : !usage ? -ENODATA : hp_musage_read(env, m, usage, r);
	(*env)->PopLocalFrame(env, NULL);      /* frees `usage` */
	return rc;
}

/* A global ref to a class, or NULL (exception cleared). */
static jclass global_class(JNIEnv *env, const char *name)
{
	jclass local = (*env)->FindClass(env, name);
	if (hp_jni_threw(env) || !local)
		return NULL;
	jclass global = (*env)->NewGlobalRef(env, local);
	(*env)->DeleteLocalRef(env, local);
	return global;
}

int hp_musage_init(JNIEnv *env, struct hp_musage *m, char *reason, size_t len)
{
	memset(m, 0, sizeof(*m));
	m->cls = global_class(env, "java/lang/management/MemoryUsage");
	if (!m->cls) {
		snprintf(reason, len, "java.lang.management.MemoryUsage cannot be loaded "
			 "(no java.management module?)");
		return -ENOENT;
	}
	m->get_used = (*env)->GetMethodID(env, m->cls, "getUsed", "()J");
	if (!hp_jni_threw(env) && m->get_used)
		m->get_committed = (*env)->GetMethodID(env, m->cls, "getCommitted", "()J");
	if (!hp_jni_threw(env) && m->get_committed)
		m->get_max = (*env)->GetMethodID(env, m->cls, "getMax", "()J");
	if (hp_jni_threw(env) || !m->get_max) {
		hp_musage_release(env, m);
		snprintf(reason, len, "MemoryUsage lacks getUsed/getCommitted/getMax");
		return -ENOENT;
	}
	return 0;
}

void hp_musage_release(JNIEnv *env, struct hp_musage *m)
{
	if (env && m->cls)
		(*env)->DeleteGlobalRef(env, m->cls);
	memset(m, 0, sizeof(*m));
}

int hp_musage_read(JNIEnv *env, const struct hp_musage *m, jobject usage, struct hp_mode_reading *r)
{
	/* Calling a getter on an object of another class is undefined: check
	 * first, so that a wrong slot can at worst give -EINVAL. */
	if (!usage || !(*env)->IsInstanceOf(env, usage, m->cls))
		return -EINVAL;
	jlong used = (*env)->CallLongMethod(env, usage, m->get_used);
	if (hp_jni_threw_named(env))
		return -EIO;
	jlong committed = (*env)->CallLongMethod(env, usage, m->get_committed);
	if (hp_jni_threw_named(env))
		return -EIO;
	jlong max = (*env)->CallLongMethod(env, usage, m->get_max);
	if (hp_jni_threw_named(env))
		return -EIO;
	if (used < 0 || committed < 0)
		return -ERANGE;
	r->used = (uint64_t)used;
	r->committed = (uint64_t)committed;
	r->max = max < 0 ? 0 : (uint64_t)max;       /* -1: undefined */
	r->kind = HP_USAGE_CURRENT;
	return 0;
}

JNIEnv *hp_jni_live_env(struct hp_probe *p)
{
	JNIEnv *env = hp_jni_env(p->vm);
	jvmtiPhase phase;
	if (!env)
		return NULL;
	/* Without a jvmtiEnv the phase is unknown; a thread holding a JNIEnv
	 * outside VMStart callbacks is in the live phase. */
	if (p->jvmti && ((*p->jvmti)->GetPhase(p->jvmti, &phase) != JVMTI_ERROR_NONE || phase != JVMTI_PHASE_LIVE))
		return NULL;
	return env;
}

void *hp_mode_state_get(struct hp_probe *p, enum hp_mode mode, size_t size, void (*setup)(void *))
{
	void *st = __atomic_load_n(&p->mode_state[mode], __ATOMIC_ACQUIRE);
	if (st)
		return st;
	void *fresh = calloc(1, size);
	if (!fresh)
		return NULL;
	if (setup)
		setup(fresh);
	void *expected = NULL;
	if (__atomic_compare_exchange_n(&p->mode_state[mode], &expected, fresh, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return fresh;
	free(fresh);
	return expected;
}

int hp_jni_once_run(struct hp_jni_once *o, struct hp_probe *p, JNIEnv *env, const char *waiting,
		    hp_jni_setup_fn setup, void *state, char *reason, size_t len)
{
	if (__atomic_load_n(&o->ready, __ATOMIC_ACQUIRE))
		return 0;
	int failed = __atomic_load_n(&o->fail_rc, __ATOMIC_ACQUIRE);
	if (failed) {
		snprintf(reason, len, "%s", o->fail);
		return failed;
	}
	if (!env) {
		snprintf(reason, len, "%s", waiting);
		return -EAGAIN;
	}
	/* Never block: another thread setting up means "not yet". */
	if (pthread_mutex_trylock(&o->lock)) {
		snprintf(reason, len, "being set up on another thread");
		return -EAGAIN;
	}
	int rc = 0;
	if (!o->ready && !o->fail_rc) {
		if ((*env)->PushLocalFrame(env, 16) < 0) {
			hp_jni_threw(env);
			snprintf(reason, len, "PushLocalFrame failed");
			rc = -ENOMEM;
		} else {
			rc = setup(p, state, env, reason, len);
			(*env)->PopLocalFrame(env, NULL);
		}
	} else if (o->fail_rc) {
		snprintf(reason, len, "%s", o->fail);
		rc = o->fail_rc;
	}
	pthread_mutex_unlock(&o->lock);
	return rc;
}
