/* What the JNI-based modes (jmm, jmx-native, exported-totals) share: JNI
 * exception handling, a live-phase JNIEnv, one-time set-up on a Java thread,
 * the MemoryUsage accessors, and per-mode state made on first use. */
#ifndef HP_JNIMODE_H
#define HP_JNIMODE_H

#include <jni.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapusage/modes.h"

struct hp_probe;

/* java.lang.management.MemoryUsage accessors, looked up once. */
struct hp_musage {
	jclass cls;                 /* global ref */
	jmethodID get_used, get_committed, get_max;
};

/* Looks the accessors up (the class must be loadable: live phase). 0, or a
 * negative errno with a one-line reason. */
int hp_musage_init(JNIEnv *env, struct hp_musage *m, char *reason, size_t len);
void hp_musage_release(JNIEnv *env, struct hp_musage *m);

/* Reads used/committed/max of a MemoryUsage object into *r (max -1, the
 * "undefined" of MemoryUsage, becomes 0). Deletes nothing: `usage` stays the
 * caller's. 0, -EINVAL for a null or foreign object, -EIO if a getter threw
 * (the exception is cleared), -ERANGE for negative figures. */
int hp_musage_read(JNIEnv *env, const struct hp_musage *m, jobject usage, struct hp_mode_reading *r);

/* A reading through a Java call that returns a MemoryUsage (the JMM
 * interface's GetMemoryUsage, the captured jmx native): get(env, ctx) is
 * called in a local frame of its own and what it returns read as
 * hp_musage_read. -EAGAIN without a JNIEnv or with an exception already
 * pending (not ours to clear), -ENOMEM if no frame, -EIO if the call threw
 * (its class kept: hp_jni_last_exception), -ENODATA if it returned null. */
int hp_musage_call(JNIEnv *env, const struct hp_musage *m, jobject (*get)(JNIEnv *env, void *ctx), void *ctx,
		   struct hp_mode_reading *r);

/* The calling thread's JNIEnv if JNI is legal here (hp_jni_env) and the
 * VM is in the live phase, else NULL: set-up that loads classes or runs
 * Java code waits for such a thread. */
JNIEnv *hp_jni_live_env(struct hp_probe *p);

/* p->mode_state[mode], calloc'ed (size bytes, then setup(state) if not
 * NULL) on first use. Threads may race here (NativeMethodBind, init): the
 * state is published with a compare-and-swap. NULL if out of memory. */
void *hp_mode_state_get(struct hp_probe *p, enum hp_mode mode, size_t size, void (*setup)(void *));

/* true, after clearing it, if a Java exception is pending. Every JNI call
 * that can throw is followed by this. */
bool hp_jni_threw(JNIEnv *env);
/* The same in a reading (live phase): also keeps the exception's class
 * name for hp_jni_last_exception. */
bool hp_jni_threw_named(JNIEnv *env);
/* The class of the last exception hp_jni_threw_named cleared on this thread
 * ("java.lang.OutOfMemoryError"), "" if none or unnamed: for the reasons
 * and tests that say why a JNI mode's call failed. */
const char *hp_jni_last_exception(void);

/* One-time set-up of a JNI-based mode, shared by jmm and jmx-native: runs
 * `setup` once, on an attached Java thread, inside a local frame, under a
 * trylock (another thread setting up means "not yet", never a wait). A
 * failure is kept, with its reason, for good. */
struct hp_jni_once {
	pthread_mutex_t lock;           /* set-up only, taken with trylock */
	bool ready;                     /* set-up done: the state is fixed */
	int fail_rc;                    /* set-up failed for good */
	char fail[256];                 /* HP_REASON_LEN */
};

typedef int (*hp_jni_setup_fn)(struct hp_probe *p, void *state, JNIEnv *env, char *reason, size_t len);

/* 0 when ready; -EAGAIN with `waiting` as the reason when env is NULL or
 * another thread is at it; the stored failure otherwise. */
int hp_jni_once_run(struct hp_jni_once *o, struct hp_probe *p, JNIEnv *env, const char *waiting,
		    hp_jni_setup_fn setup, void *state, char *reason, size_t len);

#endif
