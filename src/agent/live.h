/* Which sampled objects are still alive: one JNI weak global reference per
 * tracked sample, checked after collections by the agent thread.
 *
 * The table is split into stripes, each with its own mutex, picked by the
 * allocating thread: threads rarely meet on a lock, and no lock is global.
 * When a stripe is full it is thinned (see live.c): the estimates stay
 * unbiased and what was dropped is counted. */
#ifndef HP_LIVE_H
#define HP_LIVE_H

#include <jni.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define HP_LIVE_STRIPES 16

struct hp_live_entry {
	jweak ref;                  /* NULL = free slot */
	uint32_t site;              /* index of the site slot */
	uint32_t pause_at_alloc;    /* GarbageCollectionFinish events seen when sampled (marks.h) */
	uint64_t size;              /* object size in bytes */
	double thin;                /* the weight's factor: 2^level at insertion (thinning) times the
	                               sampler's own (hp_live_add's weight) */
	int64_t time_ns;            /* CLOCK_REALTIME when sampled */
	uint32_t thread;            /* samplelog.h thread index, HP_SAMPLELOG_NO_THREAD if none */
	uint32_t judged;            /* markings counted when a marking last found it alive; 0: never
	                               (survival.h; written by the sweeps' callbacks) */
	float thin_rec;             /* `thin` at the last marking record that counted it; 0: none
	                               (history.c; written by the sweeps' callbacks) */
};

struct hp_live_stripe {
	pthread_mutex_t lock;
	struct hp_live_entry *entries;
	uint32_t *free_list;
	uint32_t cap, nfree;
	unsigned level;             /* new samples kept with probability 2^-level */
	uint64_t rng;
};

struct hp_live {
	struct hp_live_stripe stripes[HP_LIVE_STRIPES];
	_Atomic uint64_t tracked, dropped, freed;
};

int hp_live_init(struct hp_live *l, uint32_t max_live);
/* Deletes every weak reference (needs a JNIEnv) and frees the table. */
void hp_live_free(struct hp_live *l, JNIEnv *jni);

/* Where a tracked sample sits, to find it again (hp_live_scale): its
 * stripe and slot, and what it held then, which a slot freed and taken
 * again by another sample would hardly match all of (HotSpot may hand the
 * freed jweak out again, and the coarse clock's tick is milliseconds). */
struct hp_live_handle {
	jweak ref;                  /* NULL: not tracked */
	uint32_t stripe, slot;
	int64_t time_ns;
	uint32_t site;
	uint64_t size;
};

/* Tracks `object`. Called from SampledObjectAlloc on the allocating
 * thread. `weight`: the sample's probability at the interval asked over
 * its probability as its thread was really sampled (samplerate.h; 1 for a
 * sampler that keeps the interval), a factor on its weight as thinning is.
 * `at` (if not NULL) gets where it went, ref NULL if not admitted. */
void hp_live_add(struct hp_live *l, JNIEnv *jni, jobject object, uint32_t site, uint64_t size, uint32_t pause_now,
		 int64_t time_ns, uint32_t thread, double weight, struct hp_live_handle *at);

/* Multiplies the weight of the sample `at` by `factor` (a thread's stretch
 * after its last sample credited to it, samplerate.h) if it is still
 * tracked: 0, or -ENOENT (it died, or was thinned away). */
int hp_live_scale(struct hp_live *l, const struct hp_live_handle *at, double factor);

typedef void (*hp_live_fn)(struct hp_live_entry *e, void *ctx);

/* Frees the references of samples that died, calling dead (if set) for
 * each first, and alive (if set) for each sample still alive. Agent
 * thread, after a GC; stripes locked a chunk at a time. */
void hp_live_sweep(struct hp_live *l, JNIEnv *jni, hp_live_fn alive, hp_live_fn dead, void *ctx);

/* Calls fn for every sample still alive (stripe locked meanwhile), and
 * dead (if set) for each found dead, whose reference it frees. */
void hp_live_each(struct hp_live *l, JNIEnv *jni, hp_live_fn fn, hp_live_fn dead, void *ctx);

uint64_t hp_live_count(struct hp_live *l);

#endif
