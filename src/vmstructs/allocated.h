/* The bytes a Java thread has allocated, as HotSpot counts them
 * (Thread::cooked_allocated_bytes, the figure behind
 * ThreadMXBean.getThreadAllocatedBytes), read from native code on the
 * thread itself, for the sampler's real interval (agent/samplerate.h).
 *
 * HotSpot's own (thread.inline.hpp, threadLocalAllocBuffer.hpp):
 *   Thread::_allocated_bytes        bytes in the TLABs it retired and
 *                                   those it allocated outside a TLAB;
 *   Thread::_tlab                   its TLAB, embedded in the Thread;
 *   ThreadLocalAllocBuffer::_start, _top   the current TLAB's used part.
 * All three are in VMStructs on every release from 11 on (the
 * serviceability agent's Thread.allocatedBytes reads the first).
 *
 * Safety. The callback that reads them runs on the thread itself, in
 * native state: a pause may retire its TLAB meanwhile (start and top set
 * again), so the read is _allocated_bytes, the TLAB, _allocated_bytes
 * again, refused where the two differ or the TLAB is not a sane range.
 * The Thread is the caller's own (its JNIEnv inside it: framewalk.h
 * hp_framewalk_set_thread), so the loads are plain.
 *
 * And where a sampled object lies in its thread's TLAB
 * (hp_allocated_first_after_gc): ThreadLocalAllocBuffer::_number_of_refills,
 * which each TLAB fill counts and a collection's retiring of every TLAB
 * sets back to 0 (threadLocalAllocBuffer.cpp: fill; 11's
 * accumulate_statistics_before_gc and initialize_statistics, 17-24's
 * retire(stats) and reset_statistics; VMStructs publishes it), is 1 in a
 * thread's first TLAB since the last collection (and in a new thread's
 * first: its TLAB's initialize resets it too), whose first object is at
 * its _start. Why that object matters: agent/samplerate.h. */
#ifndef HP_VMSTRUCTS_ALLOCATED_H
#define HP_VMSTRUCTS_ALLOCATED_H

#include <stddef.h>
#include <stdint.h>

#include "vmstructs/vmstructs.h"

struct hp_allocated {
	int64_t off_allocated;          /* Thread::_allocated_bytes */
	int64_t off_tlab;               /* Thread::_tlab */
	int64_t off_start, off_top;     /* ThreadLocalAllocBuffer::_start, _top */
	int64_t off_refills;            /* ThreadLocalAllocBuffer::_number_of_refills (unsigned), -1 absent */
	int64_t thread_size;            /* sizeof(JavaThread): every offset within it */
};

/* 0, or a negative errno and a one-line reason naming what VMStructs
 * lacks. */
int hp_allocated_init(struct hp_allocated *a, const struct hp_vms *v, char *err, size_t errlen);

/* The bytes `java_thread` (the calling thread's own JavaThread*) has
 * allocated so far: 0 and *out, or -EAGAIN where a pause retired its TLAB
 * during the read or the TLAB's bounds are not a range (try at the next
 * sample). */
int hp_allocated_read(const struct hp_allocated *a, uintptr_t java_thread, uint64_t *out);

/* Whether the object the calling thread (`java_thread`, its own
 * JavaThread*) has just allocated, `ref` (the JNI local reference a
 * SampledObjectAlloc event gives: in HotSpot the address of a handle
 * slot holding the object's address, untagged, jniHandles.hpp), is the
 * first object of the thread's first TLAB since a collection retired its
 * TLABs: 1 (the TLAB's _number_of_refills is 1 and the object is at its
 * _start), 0 (not, or a reference with tag bits: not read), or -ENOENT
 * (VMStructs has no _number_of_refills: not known). A pause that moves
 * the object or retires the TLAB during the read makes it 0. */
int hp_allocated_first_after_gc(const struct hp_allocated *a, uintptr_t java_thread, const void *ref);

#endif
