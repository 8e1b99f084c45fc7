/* Heap usage modes: the interface each source implements.
 *
 * A mode is set up once (init: find symbols, validate pointers, fail with a
 * one-line reason) and then read many times. State a mode needs lives in
 * p->mode_state[mode], owned by the mode (freed by its fini).
 *
 * read() runs wherever hp_heap_usage() is called, including inside
 * GarbageCollectionFinish for modes with needs_jni == false: those must not
 * allocate, block, or call JNI/JVMTI. Modes with needs_jni == true receive a
 * JNIEnv of the calling thread, which is attached and not in a GC callback.
 */
#ifndef HP_MODES_H
#define HP_MODES_H

#include <jni.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapprobe.h"

struct hp_probe;

struct hp_mode_reading {
	uint64_t used, committed, max;  /* max 0 = unknown */
	enum hp_usage_kind kind;        /* CURRENT unless the mode reads a post-GC figure */
};

struct hp_mode_ops {
	enum hp_mode mode;
	bool needs_jni;
	/* 0 when usable; else negative errno and `reason` filled. Called at
	 * hp_open and again (when it returned -EAGAIN) once the heap exists. */
	int (*init)(struct hp_probe *p, char *reason, size_t len);
	/* 0 and *r filled, or negative errno. */
	int (*read)(struct hp_probe *p, JNIEnv *env, struct hp_mode_reading *r);
	void (*fini)(struct hp_probe *p);
};

extern const struct hp_mode_ops hp_mode_memory_usage_call;
extern const struct hp_mode_ops hp_mode_heap_summary_call;
extern const struct hp_mode_ops hp_mode_last_gc_fields;
extern const struct hp_mode_ops hp_mode_jmm;
extern const struct hp_mode_ops hp_mode_jmx_native;
extern const struct hp_mode_ops hp_mode_exported_totals;
extern const struct hp_mode_ops hp_mode_perfdata;

/* Reads one mode if it is enabled and legal here (needs_jni modes need
 * env); a reading that fails sanity disables the mode. 0 or -errno. */
int hp_mode_read(struct hp_probe *p, enum hp_mode m, JNIEnv *env, struct hp_mode_reading *r);

/* Runs each mode's init; modes that said -EAGAIN (the heap or the VM was not
 * ready) are tried again on later calls (retry_only). Not in GC callbacks. */
void hp_modes_init(struct hp_probe *p, bool retry_only);
void hp_modes_fini(struct hp_probe *p);

/* Disables `mode` with a one-line reason (also usable from a GC callback:
 * no allocation). */
void hp_mode_disable(struct hp_probe *p, enum hp_mode mode, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* CLOCK_MONOTONIC in ns (vDSO: no system call, fit for GC callbacks). */
uint64_t hp_now_ns(void);
/* The same clock at tick resolution (1-4 ms), several times cheaper. */
uint64_t hp_now_coarse_ns(void);


/* Sanity every reading must pass: used <= committed <= max (when max known),
 * committed > 0. */
bool hp_reading_sane(const struct hp_mode_reading *r);

#endif
