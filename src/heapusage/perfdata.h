/* Mode "perfdata": the heap's jvmstat counters (hsperfdata), read in process.
 *
 * HotSpot keeps its jvmstat counters in one memory region (PerfMemory::_start,
 * _capacity, published by VMStructs; the same bytes jstat maps from
 * /tmp/hsperfdata_<user>/<pid>). The region is a 32-byte prologue followed by
 * self-describing entries: a fixed header, the NUL-terminated name, padding,
 * then the value. The collectors publish their sizes there as
 *   sun.gc.generation.<N>.{capacity,maxCapacity,spaces}
 *   sun.gc.generation.<N>.space.<M>.{used,capacity,maxCapacity}
 * with N = 0 (young) and 1 (old / the whole heap); metaspace and the
 * compressed class space live elsewhere (sun.gc.metaspace.*,
 * sun.gc.compressedclassspace.*) and are not heap.
 *
 * The parser below takes a (start, capacity) pair instead of reading
 * VMStructs itself, so that tests can hand it a region built in memory.
 */
#ifndef HP_PERFDATA_H
#define HP_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapprobe.h"
#include "heapusage/modes.h"

/* The region's fixed layout (perfMemory.hpp, PERFDATA_MAJOR_VERSION 2). It is
 * a published format that jvmstat readers outside the VM depend on, so it is
 * stable across releases; init() still cross-checks it against the offsets
 * VMStructs gives for PerfDataPrologue and PerfDataEntry. */
struct hp_pd_prologue {
	uint8_t magic[4];           /* CA FE C0 C0, whatever the byte order */
	int8_t byte_order;          /* 0 big endian, 1 little endian */
	int8_t major_version;       /* 2 */
	int8_t minor_version;
	int8_t accessible;          /* set once the VM has finished starting */
	int32_t used;               /* bytes of the region in use, prologue included */
	int32_t overflow;           /* bytes of entries that did not fit (went to the C heap) */
	int64_t mod_time_stamp;
	int32_t entry_offset;       /* first entry, from the region start */
	int32_t num_entries;
};

struct hp_pd_entry {
	int32_t entry_length;       /* whole entry, 8-byte multiple */
	int32_t name_offset;        /* from the entry start */
	int32_t vector_length;      /* 0 for a scalar */
	int8_t data_type;           /* a JVM type char: 'J' for jlong */
	int8_t flags;
	int8_t data_units;
	int8_t data_variability;
	int32_t data_offset;        /* from the entry start */
};

#define HP_PD_MAGIC0 0xca
#define HP_PD_MAGIC1 0xfe
#define HP_PD_MAGIC2 0xc0
#define HP_PD_MAGIC3 0xc0
#define HP_PD_MAJOR 2
#define HP_PD_LITTLE_ENDIAN 1
#define HP_PD_BIG_ENDIAN 0

/* Far beyond any real region (64 KiB by default, -XX:PerfDataMemorySize):
 * a bigger capacity means a wrong pointer, not a big region. */
#define HP_PD_MAX_CAPACITY (256u << 20)
#define HP_PD_MAX_NAME 256

#define HP_PD_GENS 2                /* generation.0 and generation.1 */
#define HP_PD_MAX_SPACES 4          /* the most any collector has is 3 (eden, s0, s1) */
#define HP_PD_COLLECTORS 4          /* sun.gc.collector.0..3 */

/* Pointers into the live region. The values change under our feet (the GC
 * and the StatSampler write them); 8-byte aligned 64-bit loads are atomic on
 * the targets HotSpot supports, so a read sees either the old or the new
 * value of each counter, never a torn one. */
struct hp_pd_space {
	const volatile int64_t *used, *capacity, *max_capacity;
};

struct hp_pd_gen {
	bool present;
	int64_t spaces;             /* sun.gc.generation.N.spaces, a constant */
	const volatile int64_t *capacity, *max_capacity;
	struct hp_pd_space space[HP_PD_MAX_SPACES];
};

struct hp_perfdata_counters {
	const void *start;
	size_t capacity;
	int32_t used_bytes;         /* prologue "used" when indexed */
	int32_t num_entries;        /* entries walked */
	struct hp_pd_gen gen[HP_PD_GENS];
	/* sun.gc.collector.<N>.invocations, NULL where absent (optional: ZGC
	 * on JDK 11 has none) */
	const volatile int64_t *invocations[HP_PD_COLLECTORS];
	/* sun.gc.policy.desiredSurvivorSize (Parallel's adaptive size policy),
	 * NULL where absent */
	const volatile int64_t *desired_survivor;
	/* sun.gc.lastCause, a NUL-terminated byte vector ("No GC" until the
	 * first collection ends), NULL where absent; at least 6 bytes */
	const volatile char *last_cause;
	/* sun.gc.cause: the cause of the collection under way ("No GC" between
	 * them; Shenandoah sets it for a whole concurrent cycle,
	 * ShenandoahGCSession), its vector length; NULL where absent */
	const volatile char *cause;
	int32_t cause_len;
	/* java.cls.unloadedClasses, NULL where absent: the agent's stack cache
	 * keys on Method* addresses, which only class unloading can reuse */
	const volatile int64_t *classes_unloaded;
};

/* Validates the region at `start` (capacity bytes) with safe reads and fills
 * `out` with pointers to the sun.gc.generation.* counters. Returns 0, or:
 *   -EFAULT   the region (or the part in use) is unreadable
 *   -EBADMSG  bad magic, or a prologue/entry that breaks the format: an
 *             entry beyond the bytes in use, a name not NUL-terminated inside
 *             its entry, a heap counter that is not an aligned scalar jlong,
 *             a duplicate heap counter
 *   -ENOTSUP  other byte order, or a major version other than 2
 *   -EAGAIN   the region is not marked accessible yet (the VM is starting)
 *   -ENOENT   sun.gc.generation.1 is missing, or a generation lacks one of
 *             its counters or of the space counters its "spaces" announces
 *   -ENOMEM
 * with a one-line reason in err. `out` is zeroed on error. */
int hp_perfdata_index(const void *start, size_t capacity, struct hp_perfdata_counters *out, char *err,
		      size_t errlen);

/* Walks the entries of `snap`, a copy (or a mapping) of a region's first
 * pro->used bytes whose prologue is `pro`, each checked against the bytes
 * in use (header, length, NUL-terminated name, data inside its entry), and
 * calls fn with its name, type ('J', 'B'...), vector length (0: a scalar)
 * and the data's offset from the region's start. Stops at the first entry
 * still being written (length 0), or when fn returns non-zero (returned).
 * Returns the entries walked, or -EBADMSG with the reason in err. The
 * library's index (hp_perfdata_index) and the command's jvmstat reader
 * walk with it. */
/* A type char fit for a one-line reason ('?' for anything unprintable). */
char hp_pd_printable(int8_t t);
typedef int (*hp_pd_entry_fn)(const char *name, char type, int32_t veclen, size_t data_at, void *ctx);
int hp_perfdata_each(const char *snap, const struct hp_pd_prologue *pro, hp_pd_entry_fn fn, void *ctx, char *err,
		     size_t errlen);

/* How the counters of a given collector add up to the heap's used, committed
 * and max (see perfdata.c for each collector's peculiarities). */
struct hp_perfdata_plan {
	enum hp_gc_kind kind;
	struct hp_perfdata_counters c;
	int64_t g1_pad;             /* G1 on JDK <= 17: bytes added to each capacity counter */
};

/* 0, or -ENOTSUP (a collector whose counters we cannot add up) / -ENOENT
 * (counters that collector should have are missing), reason in err. */
int hp_perfdata_plan(const struct hp_perfdata_counters *c, enum hp_gc_kind kind, struct hp_perfdata_plan *out,
		     char *err, size_t errlen);

/* Plain loads only: no allocation, locks or system calls (GC callbacks).
 * 0, -EBADMSG if a counter is negative or absurd, or -ENODATA for ZGC before
 * its first pause (its counters hold placeholders until then). r->kind is
 * HP_USAGE_CURRENT; used <= committed <= max. */
int hp_perfdata_compute(const struct hp_perfdata_plan *plan, struct hp_mode_reading *r);

#endif
