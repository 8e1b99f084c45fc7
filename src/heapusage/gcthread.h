/* The thread we are called on: inside a GarbageCollectionFinish callback
 * (the VM thread or a GC worker, where JNI and most of JVMTI are forbidden)
 * or not, and its JNIEnv when JNI is legal. A leaf: events.c marks the
 * callbacks, every source asks. */
#ifndef HP_GCTHREAD_H
#define HP_GCTHREAD_H

#include <jni.h>
#include <stdbool.h>

struct hp_probe;

/* Brackets a GC callback of ours (events.c). */
void hp_gc_callback_enter(void);
void hp_gc_callback_leave(void);

/* Whether the calling thread is inside one. */
bool hp_in_gc_callback(void);

/* A JNIEnv for the calling thread if it is attached to the VM and JNI is
 * legal here, else NULL. */
JNIEnv *hp_jni_env(struct hp_probe *p);

#endif
