/* JNI-based heap figures shared by the "jmm" and "jmx-native" modes, and the
 * post-GC figure JMX shows as MemoryPoolMXBean.getCollectionUsage().
 */
#ifndef HP_JMM_H
#define HP_JMM_H

#include <jni.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapusage/modes.h"

struct hp_probe;

/* Sum, over the heap's memory pools (MemoryType.HEAP), of each pool's usage
 * right after the last collection that touched it: what the
 * MemoryPoolMXBean.getCollectionUsage() figures add up to. Needs the JMM
 * mode's JmmInterface (set up here if the mode has not done it yet) and a
 * JNIEnv of an attached thread outside GC callbacks. Returns 0, -ENODATA
 * before the first collection (every pool reports zero), -ENOTSUP if the
 * JmmInterface is unusable, -EAGAIN if the VM is not live yet or the caller
 * has a Java exception pending, another negative errno on a JNI failure. */
int hp_jmm_collection_usage(struct hp_probe *p, JNIEnv *env, uint64_t *used, uint64_t *committed);

/* One line for the info report: the JMM version and table layout in use
 * ("JMM version 0x20030000, layout v3 (JDK 14-20), 4 of 4 slots confirmed
 * by symbol name"), or why there is none. Owned by the probe. */
const char *hp_jmm_note(struct hp_probe *p);

#endif
