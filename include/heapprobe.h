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
/* Set up the JNI-based modes (jmm, jmx-native, exported-totals) only when
 * a reading first needs them, instead of at VM start: saves the ~50 ms of
 * java.management class loading when the HotSpot modes answer. */
#define HP_OPEN_LAZY_JNI_MODES   (1u << 2)

struct hp_open_opts {
	size_t sz;                  /* sizeof(struct hp_open_opts) */
	unsigned flags;             /* HP_OPEN_* */
	/* File name of the JVM library to look for in the process;
	 * NULL = "libjvm.so". */
	const char *libjvm_name;
	/* Root of separate debug files; NULL = $HEAPPROBE_DEBUG_ROOT, else
	 * "/usr/lib/debug". */
	const char *debug_root;
	/* Directory with jdk-NN.txt data files to use instead of the copies
	 * compiled in; NULL = $HEAPPROBE_SYMBOLS_DIR, else built-in. */
	const char *symbols_dir;
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


/* ---- Heap usage ----------------------------------------------------------
 *
 * Every reading names the mode (source) that produced it. Modes, in the
 * order the dispatcher prefers them for the current usage:
 */
enum hp_mode {
	HP_MODE_MEMORY_USAGE_CALL = 0, /* CollectedHeap::memory_usage() (or the heap's override), via libffi */
	HP_MODE_HEAP_SUMMARY_CALL,     /* CollectedHeap::create_heap_summary() via libffi (JDK 11) */
	HP_MODE_LAST_GC_FIELDS,        /* used/capacity at last GC, read from memory */
	HP_MODE_JMM,                   /* JVM_GetManagement -> JmmInterface (JNI) */
	HP_MODE_JMX_NATIVE,            /* sun.management.MemoryImpl.getMemoryUsage0 (JNI) */
	HP_MODE_EXPORTED_TOTALS,       /* JVM_TotalMemory / JVM_FreeMemory / JVM_MaxMemory (JNI thread) */
	HP_MODE_PERFDATA,              /* in-process hsperfdata sun.gc.* counters */
	HP_MODE_COUNT
};

/* "memory-usage-call", "heap-summary-call", "last-gc-fields", "jmm",
 * "jmx-native", "exported-totals", "perfdata". */
HP_API const char *hp_mode_name(enum hp_mode mode);

/* What a `used` figure is. */
enum hp_usage_kind {
	HP_USAGE_CURRENT = 0,          /* used now: includes garbage not yet collected */
	HP_USAGE_AFTER_YOUNG_GC,       /* right after a young collection: dead old objects still counted */
	HP_USAGE_AFTER_FULL_GC,        /* right after a whole-heap collection: the live heap */
	HP_USAGE_MARKED_LIVE,          /* live object bytes the last marking found (no garbage, no
	                                  free space in pages; see hp_marking().live_source); on
	                                  generational ZGC the old generation's at the last major
	                                  marking plus the young one's at the last young marking
	                                  (two moments: under load up to a third high,
	                                  docs/heap-under-load.md) */
	HP_USAGE_AFTER_CONCURRENT_CYCLE, /* when the last cycle of a concurrent collector ended
	                                  (Shenandoah, ZGC; appended in 0.6): what it found dead is
	                                  freed, what was allocated while it ran is counted, live or
	                                  not. Near the live heap in an idle program; under load
	                                  several times it (LoadService on Shenandoah, JDK 17: ~1 GB
	                                  for ~0.2 GB live) */
};

/* "current", "after-young-gc", "after-full-gc", "marked-live", "after-concurrent-cycle". */
HP_API const char *hp_usage_kind_name(enum hp_usage_kind kind);

struct hp_heap_usage {
	size_t sz;                  /* sizeof(struct hp_heap_usage), set by caller */
	enum hp_mode mode;          /* produced used/committed/max */
	enum hp_usage_kind kind;    /* what `used` is */
	uint64_t used, committed;   /* bytes */
	uint64_t max;               /* bytes; 0 if the mode does not know it */
	uint64_t gc_count;          /* collections finished when read; 0 if unknown */
	uint64_t timestamp_ns;      /* CLOCK_MONOTONIC when read: tick resolution
	                               (CLOCK_MONOTONIC_COARSE, 1-4 ms) for current
	                               readings, exact for post-GC captures */
	/* The most recent post-GC figure the probe has, whatever mode it came
	 * from (the heap's own last-GC fields only where every collection or
	 * cycle refreshes them: not Serial's and Parallel's, which a full
	 * collection alone refreshes): `live` is 0 when none is known yet. */
	uint64_t live;
	enum hp_mode live_mode;
	enum hp_usage_kind live_kind;   /* AFTER_FULL_GC, AFTER_YOUNG_GC, AFTER_CONCURRENT_CYCLE
	                                   (Shenandoah; ZGC without its marking's figure), or
	                                   MARKED_LIVE (then live_mode is meaningless: hp_marking()
	                                   names the source) */
	uint64_t live_gc_count;
	uint64_t live_timestamp_ns;
};

/* hp_heap_usage flags. */
#define HP_USAGE_NO_JNI   (1u << 0)  /* the caller may not use JNI (e.g. in a GC callback).
                                        Threads not attached to the JVM are detected anyway. */
#define HP_USAGE_POST_GC  (1u << 1)  /* fill used/committed from the last post-GC figure */
#define HP_USAGE_ONLY_MODE(m) ((1u << 8) | ((unsigned)(m) << 9))  /* this mode or fail */

/* Reads the heap usage with the best mode that is available, validated and
 * legal here. Never allocates, never takes a blocking lock, never calls JNI
 * with HP_USAGE_NO_JNI or off a Java thread: safe inside
 * GarbageCollectionFinish. Returns 0, -ENODATA if no mode can answer here
 * (-ENODATA with POST_GC before the first collection), -ENOTSUP if the
 * forced mode is disabled, -EINVAL. */
HP_API int hp_heap_usage(struct hp_probe *probe, unsigned flags, struct hp_heap_usage *out);

/* The fast path for samplers: the live heap in bytes after the most recent
 * collection that measured it (the `live` of hp_heap_usage: the marking's
 * own live bytes where the collector has them, ZGC: on generational ZGC
 * the old generation's at the last major marking plus the young one's at
 * the last young marking; on Shenandoah the heap's used when the last
 * cycle ended, AFTER_CONCURRENT_CYCLE), or 0
 * if none is known. A few loads, no system call, no JNI: fit for allocation hooks and
 * GC callbacks. */
HP_API uint64_t hp_live_bytes(struct hp_probe *probe);

/* Collections finished so far (CollectedHeap::_total_collections, or the
 * GarbageCollectionFinish events seen where the heap does not count).
 * Two loads; fit for any context. */
HP_API uint64_t hp_gc_count(struct hp_probe *probe);

/* 0 if `mode` is validated and enabled, else a negative errno; *reason gets
 * the one-line reason it was disabled ("" when enabled). */
HP_API int hp_mode_status(struct hp_probe *probe, enum hp_mode mode, const char **reason);

/* Called at the end of every stop-the-world collection JVMTI reports
 * (GarbageCollectionFinish), on the thread that ran it, with the post-GC
 * reading the probe just took. The callback must obey the JVMTI rules for
 * that event: no JNI, no allocation that can block, no blocking lock.
 * One callback per probe; NULL removes it. Needs a JavaVM given to hp_open. */
typedef void (*hp_gc_callback)(const struct hp_heap_usage *post_gc, void *ctx);
HP_API int hp_set_gc_callback(struct hp_probe *probe, hp_gc_callback cb, void *ctx);

/* ---- Markings --------------------------------------------------------------
 *
 * A marking is the collector finding out which objects are alive: a
 * stop-the-world full collection, or a completed concurrent cycle (G1's
 * concurrent start .. Remark/Cleanup, a ZGC or Shenandoah cycle). Only a
 * marking clears the weak references of objects that died in the old
 * generation, so a sampler knows a sample is alive (not merely "not yet
 * found dead") once a marking that began after its allocation has ended.
 */
enum hp_marking_kind {
	HP_MARKING_NONE = 0,
	HP_MARKING_FULL,            /* a stop-the-world full collection */
	HP_MARKING_CONCURRENT,      /* a concurrent cycle the collector's counters show (G1) */
	HP_MARKING_REQUESTED,       /* a cycle hp_request_marking asked for that no counter shows (ZGC, Shenandoah) */
};

/* What a counted marking covered. Every marking heapprobe counts covers
 * the whole heap: young-only markings (generational ZGC's minor cycles,
 * generational Shenandoah's young cycles) cannot tell an old object dead
 * and are not counted. */
enum hp_marking_scope {
	HP_MARKING_WHOLE_HEAP = 0,
};

/* "none", "full", "concurrent", "requested". */
HP_API const char *hp_marking_kind_name(enum hp_marking_kind kind);

struct hp_marking {
	size_t sz;                  /* sizeof(struct hp_marking), set by caller */
	uint64_t count;             /* whole-heap markings completed that the probe knows of: full +
	                               concurrent + requested ones no counter saw (ZGC, Shenandoah) */
	uint64_t full;              /* stop-the-world full collections */
	uint64_t concurrent;        /* concurrent cycles the collector's counters show (G1, perfdata) */
	uint64_t requested;         /* markings completed through hp_request_marking */
	const char *source;         /* how this collector's markings are counted, or why not */
	uint64_t live;              /* live object bytes the last marking found, 0 if not known */
	const char *live_source;    /* where `live` comes from, or why there is none */
	/* The last marking the probe saw complete (appended in 0.2: a caller
	 * whose sz stops above gets the fields above only). The probe sees a
	 * marking at the end of the collector pause after which its counter
	 * moved (GarbageCollectionFinish), or when hp_request_marking returns
	 * for one no counter shows (ZGC, Shenandoah). Written after `count`
	 * moves: a reader racing a new marking may pair the new count with the
	 * previous marking's fields. */
	enum hp_marking_kind last_kind;     /* HP_MARKING_NONE until one is seen */
	enum hp_marking_scope last_scope;
	uint64_t last_seen_ns;      /* CLOCK_MONOTONIC when the probe saw it end; 0 = none */
	uint64_t last_gc_count;     /* collections finished then (hp_gc_count) */
	uint64_t last_count;        /* `count` then: markings up to and including it */
	/* Appended in 0.3. Concurrent markings begun, where the collector
	 * counts them at their first pause: ZGC bumps
	 * CollectedHeap::_total_full_collections in its Mark Start pause
	 * (single generation) and Major Mark Start pause (generational; a
	 * major cycle's old marking begins there, after any young collection
	 * that first promotes everything). G1 (0.6): concurrent start pauses
	 * and full collections (starts_source). 0 where not known (other
	 * collectors: their full collections are in `full`). */
	uint64_t starts;
	/* Appended in 0.4. Concurrent markings whose marking is done, where
	 * the collector's counters show it before the cycle ends: G1 counts a
	 * cycle's Remark and Cleanup pauses (`concurrent` moves at Cleanup,
	 * this at Remark, where the marking's weak references are processed).
	 * 0 where not known. */
	uint64_t marked;
	/* Appended in 0.5. Whether the collection under way was asked for
	 * with System.gc(): 1 yes, 0 no (none under way, or another cause),
	 * -1 not known. Read from the collector's cause (perfdata
	 * sun.gc.cause), where it names the cause of a whole concurrent cycle:
	 * Shenandoah (ShenandoahGCSession), so a pause that reads 1 belongs to
	 * the cycle a request started; -1 on other collectors and without
	 * -XX:+UsePerfData. */
	int explicit_cycle;
	/* Appended in 0.6. Where `starts` is read, NULL where it is not known
	 * (ZGC: CollectedHeap::_total_full_collections). On G1 `starts` is
	 * G1CollectedHeap::_old_marking_cycles_started, found in libjvm's code
	 * and checked: it moves in each concurrent cycle's concurrent start
	 * pause (the pause whose end the cycle's marking judges from) and in
	 * each full collection (`full` moves with it then); a cycle undone or
	 * aborted counts here but never in `concurrent`. */
	const char *starts_source;
	/* Appended in 0.7. Which counts above are read from the JVM now
	 * (HP_MARKING_READ_*; a count not read is 0). A counter can be found
	 * after the first collections (G1's perfdata, which JDK 11 opens late;
	 * G1's count of cycles begun): its first reading is no jump. */
	unsigned read;
	/* Appended in 0.8. Generational Shenandoah's phase now: which of its
	 * cycles' phases are under way (HP_PHASE_* bits), read from
	 * ShenandoahHeap::_gc_state, which the collector sets in the pauses
	 * that begin and end them; -1 where not read (other collectors and
	 * modes, or its offset not found: phase_source says why). A young
	 * cycle's Init Mark turns HP_PHASE_YOUNG_MARKING on; an old marking's
	 * bootstrap cycle or a global cycle turns HP_PHASE_OLD_MARKING on too,
	 * and their Final Mark turns both off and HP_PHASE_WEAK_ROOTS on until
	 * the weak references of what they found dead are cleared. */
	int phase;
	const char *phase_source;
};
#define HP_MARKING_READ_FULL       1u   /* `full` */
#define HP_MARKING_READ_CONCURRENT 2u   /* `concurrent` and `marked` (G1's perfdata) */
#define HP_MARKING_READ_STARTS     4u   /* `starts` */
#define HP_PHASE_MARKING       1        /* hp_marking's `phase`: a marking under way */
#define HP_PHASE_YOUNG_MARKING 2        /* ... of the young generation */
#define HP_PHASE_OLD_MARKING   4        /* ... of the old generation (an old marking, a global cycle) */
#define HP_PHASE_WEAK_ROOTS    8        /* weak references being cleared after a Final Mark */
#define HP_PHASE_EVACUATION    16
#define HP_PHASE_UPDATE_REFS   32
#define HP_PHASE_FORWARDED     64       /* objects forwarded (evacuated) not yet all updated */

/* Plain loads, no JNI, no lock: fit for GC callbacks and allocation hooks,
 * once set up (the probe sets it up at VM start; any call outside a GC
 * callback retries). 0, -EAGAIN before set-up, -EINVAL. */
HP_API int hp_marking(struct hp_probe *probe, struct hp_marking *out);

/* Called once per marking the probe sees complete (hp_marking's last_*
 * fields describe it; `m` is filled as hp_marking would with the full
 * size): on the GC thread at the end of the pause after which the
 * collector's counter moved, with the GarbageCollectionFinish rules (no
 * JNI, no allocation that can block, no blocking lock), or on the thread
 * whose hp_request_marking completed a marking no counter shows (the same
 * rules apply: write the callback for the stricter one). One callback per
 * probe; NULL removes it (returns once no call is in flight). Needs a
 * JavaVM given to hp_open. 0, -EINVAL, -ENOTSUP (no GC events), -ENOMEM. */
typedef void (*hp_marking_callback)(const struct hp_marking *m, void *ctx);
HP_API int hp_set_marking_callback(struct hp_probe *probe, hp_marking_callback cb, void *ctx);

#define HP_MARK_ALLOW_FULL (1u << 0)   /* no concurrent marking (Serial, Parallel): a full GC */
/* The same full GC, only where System.gc() would make one: not with
 * -XX:+DisableExplicitGC (the agent's marking at exit, and before every
 * profile with its default mark=auto on Serial and Parallel). Since 0.3.
 * (Also where a concurrent collector cannot be asked for a concurrent
 * cycle: Shenandoah with -XX:-ExplicitGCInvokesConcurrent gets a full GC.) */
#define HP_MARK_FULL_UNLESS_DISABLED (1u << 1)

/* Asks the collector for a marking and returns once it has completed: a
 * concurrent cycle on G1 (System.gc() with ExplicitGCInvokesConcurrent set
 * for the call), ZGC and Shenandoah; a stop-the-world full collection only
 * with HP_MARK_ALLOW_FULL, or HP_MARK_FULL_UNLESS_DISABLED without
 * -XX:+DisableExplicitGC. Blocks the calling thread for the cycle (tens of
 * ms to seconds on large heaps); other threads run. Call from a thread
 * attached to the VM, never from a GC callback, never after VMDeath (the
 * collector's threads have stopped by then). 0 (why = "concurrent cycle" or
 * "full collection"), -ENOTSUP (no concurrent marking and no ALLOW_FULL),
 * -EPERM (-XX:+DisableExplicitGC, or not on a JVM thread), -ENOENT, -EIO,
 * with the reason in why. */
HP_API int hp_request_marking(struct hp_probe *probe, unsigned flags, char *why, size_t len);

/* Writes the human-readable `info` report (one "key: value" per line). */
HP_API int hp_write_info(struct hp_probe *probe, FILE *out);

/* Compares the per-release layout data with libjvm's DWARF, where a debug
 * file is installed, writing "layout.*" lines to `report` (may be NULL).
 * Returns the number of mismatches (a mismatch disables the last-GC-fields
 * mode), or -ENOENT without DWARF. Takes seconds (libdw decompresses the
 * debug sections): call it from a tool or a background thread, not from
 * start-up code on a latency budget. */
HP_API int hp_verify_layout(struct hp_probe *probe, FILE *report);

#ifdef __cplusplus
}
#endif
#endif
