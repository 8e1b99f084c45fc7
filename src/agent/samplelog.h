/* What formats that keep samples (JFR) need beyond the per-site totals:
 * which thread took a sample, and a bounded record of allocation samples.
 *
 * Threads: each OS thread that samples registers once (its tid and the
 * name of the Java thread seen first on it: for virtual threads, the
 * first one its carrier ran), cached in a thread-local index.
 *
 * Allocation samples: a reservoir of at most HP_SAMPLELOG_KEEP per stripe
 * (Vitter's algorithm R: after n samples, each is kept with probability
 * KEEP/n), so memory is bounded however long the run. The writer gives the
 * site totals' remainder, beyond the samples kept, as one event per site,
 * so per-site sums stay equal to the other formats'. */
#ifndef HP_SAMPLELOG_H
#define HP_SAMPLELOG_H

#include <jvmti.h>
#include <pthread.h>
#include <stdint.h>

#define HP_SAMPLELOG_NO_THREAD UINT32_MAX
#define HP_SAMPLELOG_MAX_THREADS 8192
#define HP_SAMPLELOG_STRIPES 16
#define HP_SAMPLELOG_KEEP 2048          /* per stripe: 32768 samples, 1 MiB */

struct hp_alloc_rec {
	uint32_t site;              /* site slot index */
	uint32_t thread;
	int64_t time_ns;
	uint64_t size;
	double weight;              /* bytes the sample stands for (size / its probability) */
};

struct hp_samplelog_thread {
	int64_t tid;
	char name[64];
};

struct hp_samplelog {
	pthread_mutex_t lock;       /* threads */
	struct hp_samplelog_thread *threads;
	uint32_t nthreads;
	unsigned generation;        /* bumped by init: thread-local indices of an earlier run are stale */
	struct {
		pthread_mutex_t lock;
		struct hp_alloc_rec *recs;
		uint32_t n;
		uint64_t seen, rng;
	} stripes[HP_SAMPLELOG_STRIPES];
	int on;
};

/* keep_allocs: also keep allocation samples (JFR). 0 or -ENOMEM. */
int hp_samplelog_init(struct hp_samplelog *l, int keep_allocs);
void hp_samplelog_free(struct hp_samplelog *l);

/* The calling thread's index (registering it on first use), or
 * HP_SAMPLELOG_NO_THREAD when the table is full. JNI local references of
 * GetThreadInfo are released. Sampling callbacks only. */
uint32_t hp_samplelog_thread(struct hp_samplelog *l, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);

/* Offers one allocation sample to the reservoir (no-op unless kept). */
void hp_samplelog_alloc(struct hp_samplelog *l, const struct hp_alloc_rec *r);

/* Calls fn for every kept allocation sample, one stripe locked at a time. */
void hp_samplelog_each(struct hp_samplelog *l, void (*fn)(const struct hp_alloc_rec *r, void *ctx), void *ctx);

#endif
