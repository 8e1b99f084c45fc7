/* Allocation sites: a concurrent table of (stack trace, allocated class).
 *
 * Sites share one frame table: a site holds frame ids (4 bytes a frame),
 * and each distinct (jmethodID, location) is stored and named once, so
 * memory grows with distinct frames, not with distinct stacks x depth
 * (javac at 32k: ~9k sites of ~40 frames over ~20k distinct frames).
 *
 * Lookups are lock-free (SampledObjectAlloc runs on every allocating thread);
 * only the first sample of a new site takes the table's mutex, to copy the
 * frames and name them. Names are resolved right then, on the allocating
 * thread, while the methods' classes are certainly loaded: nothing later
 * has to call JVMTI with a jmethodID that may have gone stale (class
 * unloading frees them). */
#ifndef HP_STACKS_H
#define HP_STACKS_H

#include <jvmti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "agent/profile.h"

struct hp_site {
	_Atomic uint64_t hash;          /* 0 = empty slot; published last */
	uint32_t nframes;
	uint32_t class_id;
	bool invalid;                   /* a frame's jmethodID failed check_id: never cached */
	uint32_t *ids;                  /* frame ids (hp_sites_frame), leaf first */
	/* Allocation estimate: sums of unbiased weights (see estimate.c), as
	 * the bits of doubles so that adding is one lock-free CAS loop
	 * without libatomic's floating-point helpers. */
	_Atomic uint64_t alloc_objects_bits, alloc_bytes_bits;
	_Atomic uint64_t samples;
};

/* One distinct frame: what GetStackTrace said and its name. */
struct hp_frame_rec {
	jvmtiFrameInfo raw;
	uint64_t version;               /* its method's version (hp_sites.version) when named */
	struct hp_frame named;
	bool invalid;                   /* its jmethodID failed check_id */
};
#define HP_FRAME_CHUNK 4096
#define HP_FRAME_CHUNKS 1024            /* 4M distinct frames at most */
#define HP_CACHE_LINE 64
_Static_assert(sizeof(struct hp_frame_rec) == HP_CACHE_LINE, "a frame record is one cache line (chunks are aligned)");

/* One class, named once: what every method of it shares. */
struct hp_class_rec {
	char *name;                     /* "java.lang.String[]" */
	char *file;                     /* its source file, NULL until a method of it is named */
};
#define HP_CLASS_CHUNK 1024
#define HP_CLASS_CHUNKS 1024            /* 1M classes at most */

struct hp_sites {
	/* Sites in the order they were made (slot = that order: per-site
	 * arrays elsewhere are indexed by it), found through `index`, an
	 * open-addressing table of slot + 1 by the site's hash. Both have
	 * mask + 1 entries; the sites are at most `limit`, half of that. */
	struct hp_site *slots;
	_Atomic uint32_t *index;
	/* The frame table: records in chunks that never move (lock-free reads
	 * by id), an index (jmethodID, location) -> hash << 32 | id + 1
	 * used under lock. */
	_Atomic(struct hp_frame_rec *) frame_chunks[HP_FRAME_CHUNKS];
	_Atomic uint32_t nframes;
	uint64_t *frame_index;
	uint32_t frame_mask;
	uint32_t mask;
	_Atomic uint32_t count;
	uint32_t limit;                 /* load factor cap */
	_Atomic uint64_t overflow;      /* samples that found the table full */
	pthread_mutex_t lock;           /* inserts, method and class caches */
	/* jmethodID -> name cache (under lock) */
	struct hp_method_cache *methods;
	/* Classes by id - 1: the allocated classes and the classes of named
	 * methods, in chunks that never move (read without the lock up to
	 * nclasses; added under it). */
	_Atomic(struct hp_class_rec *) class_chunks[HP_CLASS_CHUNKS];
	_Atomic uint32_t nclasses;
	uint32_t generation;            /* this table's, in its class tags: another's are not ours */
	/* Asked before a jmethodID is given to JVMTI to be named (0: fine);
	 * NULL: not asked. One that fails is named "[invalid jmethodID]". */
	int (*check_id)(void *ctx, jmethodID id);
	void *check_ctx;
	/* A method's version: what tells a redefined method from its earlier
	 * self under the same jmethodID (the Method it names), 0 where no
	 * class was redefined; NULL: always 0. Called without the lock. */
	uint64_t (*version)(void *ctx, jmethodID id);
	void *version_ctx;
	_Atomic uint64_t invalid_ids;
};

int hp_sites_init(struct hp_sites *t, uint32_t max_sites);
void hp_sites_free(struct hp_sites *t);

/* The site for these frames and class, created on first use. NULL when the
 * table is full (counted in overflow). A redefined method keeps its
 * jmethodID but takes the new version's line table: frames, their
 * method's names and line table, and so the sites holding them, are kept
 * per method version (`version` below), so that only a redefined class's
 * frames are named afresh. */
struct hp_site *hp_sites_intern(struct hp_sites *t, jvmtiEnv *jvmti, JNIEnv *jni, const jvmtiFrameInfo *frames,
				int n, uint32_t class_id);

/* Class id (>= 1) for a class, cached in the class object's JVMTI tag.
 * 0 if it cannot be named. */
uint32_t hp_sites_class_id(struct hp_sites *t, jvmtiEnv *jvmti, jclass klass);
const char *hp_sites_class_name(const struct hp_sites *t, uint32_t class_id);

/* A frame of the table (ids from a published site are always valid). */
static inline const struct hp_frame_rec *hp_sites_frame(const struct hp_sites *t, uint32_t id)
{
	struct hp_frame_rec *c = atomic_load_explicit(&t->frame_chunks[id / HP_FRAME_CHUNK], memory_order_acquire);
	return &c[id % HP_FRAME_CHUNK];
}

/* A site's frames as GetStackTrace gave them, into out (room for nframes). */
static inline void hp_sites_raw(const struct hp_sites *t, const uint32_t *ids, uint32_t n, jvmtiFrameInfo *out)
{
	for (uint32_t i = 0; i < n; i++)
		out[i] = hp_sites_frame(t, ids[i])->raw;
}

/* Bytes the frame table and the sites' frame ids hold. */
size_t hp_sites_frame_bytes(const struct hp_sites *t);

static inline void hp_atomic_add_double(_Atomic uint64_t *bits, double v)
{
	uint64_t old = atomic_load_explicit(bits, memory_order_relaxed), new_bits;
	do {
		double d;
		__builtin_memcpy(&d, &old, sizeof(d));
		d += v;
		__builtin_memcpy(&new_bits, &d, sizeof(d));
	} while (!atomic_compare_exchange_weak_explicit(bits, &old, new_bits, memory_order_relaxed,
						       memory_order_relaxed));
}

static inline double hp_atomic_load_double(_Atomic uint64_t *bits)
{
	uint64_t b = atomic_load_explicit(bits, memory_order_relaxed);
	double d;
	__builtin_memcpy(&d, &b, sizeof(d));
	return d;
}

/* Iteration over used slots: i from 0 to mask. */
static inline struct hp_site *hp_sites_at(struct hp_sites *t, uint32_t i)
{
	struct hp_site *s = &t->slots[i];
	return atomic_load_explicit(&s->hash, memory_order_acquire) ? s : NULL;
}

#endif
