/* heapprobe: the Java heap, seen from native code.
 *
 * JVMTI and JNI cannot tell a native agent how big the live Java heap is,
 * and JNI is forbidden exactly where that figure is fresh (inside
 * GarbageCollectionFinish). heapprobe reads HotSpot's internals instead: its
 * self-description tables (VMStructs), the non-exported symbols of libjvm and
 * its VM flags.
 *
 * Conventions (after libbpf):
 *  - handles are opaque; option structs start with `sz` = sizeof(struct),
 *    so that the library can grow them without breaking callers;
 *  - functions returning int return 0 on success or a negative errno;
 *  - strings returned by the library are owned by the probe and live until
 *    hp_close().
 * Thread-safety: hp_open/hp_close must not race with other calls on the same
 * probe. Read-only queries (hp_status, hp_jdk_info, hp_gc_info after a first
 * successful call) may be called from any thread.
 */
#ifndef HEAPPROBE_H
#define HEAPPROBE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jni.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HP_API __attribute__((visibility("default")))

struct hp_probe;

enum hp_gc_kind {
	HP_GC_UNKNOWN = 0,
	HP_GC_SERIAL,
	HP_GC_PARALLEL,
	HP_GC_G1,
	HP_GC_Z,
	HP_GC_SHENANDOAH,
	HP_GC_EPSILON,
	HP_GC_CMS,
};

/* "serial", "parallel", "g1", "z", "shenandoah", "epsilon", "cms", "unknown". */
HP_API const char *hp_gc_kind_name(enum hp_gc_kind kind);

/* Open flags. */
#define HP_OPEN_NO_DEBUG_SEARCH  (1u << 0)   /* don't look for separate debug files */
#define HP_OPEN_IGNORE_SYMTAB    (1u << 1)   /* act as if libjvm were stripped (tests) */

struct hp_open_opts {
	size_t sz;                  /* sizeof(struct hp_open_opts) */
	unsigned flags;             /* HP_OPEN_* */
	/* File name of the JVM library to look for in the process;
	 * NULL = "libjvm.so". */
	const char *libjvm_name;
	/* Root of separate debug files; NULL = "/usr/lib/debug". */
	const char *debug_root;
};

/* Opens a probe on the JVM in this process. `vm` may be NULL (then nothing
 * that needs JVMTI is available); with a JavaVM, the probe creates its own
 * jvmtiEnv, so the host agent's callbacks and capabilities are untouched.
 * `opts` may be NULL.
 *
 * Succeeds even when parts of the JVM cannot be read (a non-HotSpot VM, a
 * stripped libjvm): each part then reports why through hp_status(). Fails
 * only with -EINVAL (bad opts) or -ENOMEM. Call from Agent_OnLoad,
 * Agent_OnAttach, or any thread later; never from a GC callback. */
HP_API int hp_open(JavaVM *vm, const struct hp_open_opts *opts, struct hp_probe **out);

/* Releases everything the probe holds. NULL is allowed. */
HP_API void hp_close(struct hp_probe *probe);

/* The parts a probe reads, each available or not with a reason. */
enum hp_part {
	HP_PART_LIBJVM = 0,         /* libjvm located in the process */
	HP_PART_VMSTRUCTS,          /* gHotSpotVMStructs & co read and indexed */
	HP_PART_SYMBOLS,            /* libjvm symbol index (.symtab, debug file or dynsym) */
	HP_PART_FLAGS,              /* -XX flag table */
	HP_PART_HEAP,               /* Universe::_collectedHeap and the GC kind */
	HP_PART_COUNT
};

/* 0 if `part` is available, else a negative errno; *reason (if not NULL)
 * gets a one-line explanation ("" when available). HP_PART_HEAP is retried
 * on each call until the heap exists. */
HP_API int hp_status(struct hp_probe *probe, enum hp_part part, const char **reason);

struct hp_jdk_info {
	size_t sz;                  /* sizeof(struct hp_jdk_info), set by caller */
	const char *vm_release;     /* "17.0.15+6-Debian-1deb12u1" */
	int feature;                /* 17 (0 if unknown) */
	const char *libjvm_path;
	const char *build_id;       /* hex, "" if none */
	const char *symbols_origin; /* "file .symtab", "debug file (build-id)", ... */
	const char *symbols_path;   /* file that supplied .symtab */
	size_t symtab_count, dynsym_count;
	size_t vms_fields, vms_types, vms_int_constants, vms_long_constants;
};

/* Fills what is known; fields that are unknown are NULL/0. Returns 0. */
HP_API int hp_jdk_info(struct hp_probe *probe, struct hp_jdk_info *info);

struct hp_gc_info {
	size_t sz;                  /* sizeof(struct hp_gc_info), set by caller */
	enum hp_gc_kind kind;
	int generational;           /* 1, 0, -1 unknown */
	const char *heap_class;     /* dynamic class of the heap, "" if unnamed */
	const char *how;            /* how the kind was determined */
	const void *heap;           /* the CollectedHeap object */
	uintptr_t reserved_start;   /* CollectedHeap::_reserved */
	uint64_t reserved_bytes;
	unsigned total_collections;
};

/* 0, or -EAGAIN before the heap exists (Agent_OnLoad time), or another
 * negative errno with the reason in hp_status(HP_PART_HEAP). */
HP_API int hp_gc_info(struct hp_probe *probe, struct hp_gc_info *info);

/* Writes the human-readable `info` report (one "key: value" per line). */
HP_API int hp_write_info(struct hp_probe *probe, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
