/* The thread we are called on: inside a GarbageCollectionFinish callback
 * (the VM thread or a GC worker, where JNI and most of JVMTI are forbidden)
 * or not, and its JNIEnv when JNI is legal. A leaf: events.c marks the
 * callbacks, every source asks. */
#ifndef HP_GCTHREAD_H
#define HP_GCTHREAD_H

#include <jni.h>
#include <stdbool.h>


/* Brackets a GC callback of ours (events.c). */
void hp_gc_callback_enter(void);
void hp_gc_callback_leave(void);

/* Whether the calling thread is inside one. */
bool hp_in_gc_callback(void);

/* A JNIEnv for the calling thread if it is attached to the VM and JNI is
 * legal here, else NULL. */
JNIEnv *hp_jni_env(JavaVM *vm);

/* A host's callback that GC threads call through (hp_set_gc_callback,
 * hp_set_marking_callback): the function and its context published as one
 * pointer, so a collection never pairs one with the other's old value, and
 * the calls in flight counted, so that replacing it can wait them out. */
struct hp_cb_pair {
	void (*fn)(void);           /* cast back to its own type by the caller */
	void *ctx;
};
struct hp_cb_slot {
	struct hp_cb_pair *pair;
	int running;
};
/* Publishes fn/ctx (fn NULL: none) and returns once no thread is inside
 * the old one, which it frees. Never from a GC callback. 0 or -ENOMEM. */
int hp_cb_slot_set(struct hp_cb_slot *s, void (*fn)(void), void *ctx);
/* Around a call through the slot: begin counts the call and returns the
 * pair (NULL: none set); end uncounts it. Lock-free. */
const struct hp_cb_pair *hp_cb_slot_begin(struct hp_cb_slot *s);
void hp_cb_slot_end(struct hp_cb_slot *s);

#endif
