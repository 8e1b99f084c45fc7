/* The sampler's real interval (samplerate.h). */
#include "agent/samplerate.h"
#include "agent/weights.h"

#include <math.h>
#include <string.h>

/* The calling thread's last reading and the generation it belongs to
 * (0: none), and its own sums (decayed) of the gaps and of what its
 * samples estimate them, for its factor. */
static __thread uint64_t last_allocated;
static __thread uint32_t last_generation;
static __thread double thread_bytes, thread_estimated;
static __thread double thread_prior;            /* the prior's part of thread_estimated, decayed with it */
static __thread uint32_t sums_generation;       /* the session the sums belong to */

/* A gap this large is not one (a thread that allocated 16 GiB between two
 * samples at any interval the options allow is counted wrong somewhere). */
#define GAP_SANE_BYTES ((uint64_t)1 << 34)

void hp_sample_rate_reset(struct hp_sample_rate *r, uint64_t interval)
{
	atomic_store(&r->interval, interval);
	atomic_store(&r->bytes, 0);
	atomic_store(&r->estimated, 0);
	atomic_store(&r->gaps, 0);
	atomic_store(&r->refused, 0);
	atomic_store(&r->ended, 0);
	atomic_store(&r->credited, 0);
	atomic_fetch_add(&r->generation, 1);
}

double hp_sample_rate_factor(uint64_t bytes, uint64_t estimated, uint64_t gaps, double *measured)
{
	double m = gaps && estimated ? (double)bytes / (double)estimated : 0;
	if (measured)
		*measured = m;
	if (gaps < HP_RATE_MIN_GAPS || !(m > 0.5 && m < 2))
		return 1;
	return fabs(m - 1) > HP_RATE_SDS / sqrt((double)gaps) ? m : 1;
}

double hp_sample_rate_thread_factor(double bytes, double estimated)
{
	if (!(bytes >= 0) || !(estimated > 0))
		return 1;
	double k = bytes / estimated;
	return k < HP_RATE_MIN_FACTOR ? HP_RATE_MIN_FACTOR : k > HP_RATE_MAX_FACTOR ? HP_RATE_MAX_FACTOR : k;
}

double hp_sample_rate_note(struct hp_sample_rate *r, uint64_t allocated, int read, uint64_t size)
{
	uint32_t gen = atomic_load_explicit(&r->generation, memory_order_relaxed) + 1;
	double interval = (double)atomic_load_explicit(&r->interval, memory_order_relaxed);
	if (sums_generation != gen) {
		/* A new session: its own measure, begun with the prior's
		 * gaps of a sampler that keeps the interval (they decay as
		 * the thread's own gaps come). */
		thread_bytes = thread_estimated = thread_prior = HP_RATE_PRIOR_GAPS * interval;
		sums_generation = gen;
	}
	/* The factor this sample weighs at: from the gaps before its own.
	 * Its own gap would lift it where the object is large: a sampled
	 * object of the interval's size or more ends a gap that holds it
	 * and, about, an interval of other bytes, against its estimate of
	 * about its size (large-object sites +1.4..+2.3% in a simulation,
	 * 0 so). */
	double k = interval > 0 ? hp_sample_rate_thread_factor(thread_bytes, thread_estimated)
				: 1;    /* interval=0: every object sampled, each counts for itself */
	if (read < 0) {
		atomic_fetch_add_explicit(&r->refused, 1, memory_order_relaxed);
		last_generation = 0;    /* the next gap would span two */
		return k;
	}
	if (last_generation == gen && allocated > last_allocated && allocated - last_allocated < GAP_SANE_BYTES) {
		double ht = (double)size / hp_sample_probability(size, interval);
		const double keep = 1.0 - 1.0 / HP_RATE_WINDOW;
		thread_bytes = thread_bytes * keep + (double)(allocated - last_allocated);
		thread_estimated = thread_estimated * keep + ht;
		thread_prior *= keep;
		atomic_fetch_add_explicit(&r->bytes, allocated - last_allocated, memory_order_relaxed);
		atomic_fetch_add_explicit(&r->estimated, (uint64_t)llround(ht), memory_order_relaxed);
		atomic_fetch_add_explicit(&r->gaps, 1, memory_order_relaxed);
	}
	last_allocated = allocated;
	last_generation = gen;
	return k;
}

double hp_sample_rate_own_share(double prior, double estimated)
{
	if (!(estimated > 0) || !(prior >= 0))
		return 0;
	double own = 1.0 - prior / estimated;
	return own < 0 ? 0 : own > 1 ? 1 : own;
}

double hp_sample_rate_end(struct hp_sample_rate *r, uint64_t allocated, int read)
{
	uint32_t gen = atomic_load_explicit(&r->generation, memory_order_relaxed) + 1;
	double credit = 0;
	if (read >= 0 && last_generation == gen && sums_generation == gen && allocated >= last_allocated &&
	    allocated - last_allocated < GAP_SANE_BYTES) {
		credit = (double)(allocated - last_allocated) * hp_sample_rate_own_share(thread_prior, thread_estimated);
		/* The JVM's ratio takes the stretch too: its gaps alone, each
		 * closed by a sample, are short of the bytes their samples
		 * estimate wherever threads are short (a gap that would run
		 * past a thread's end is never closed: at ~5 samples a thread
		 * the gaps read 0.79 of their estimate). The samples after a
		 * thread's first are drawn afresh from it, so the bytes from
		 * its first sample to its end are what they estimate. */
		atomic_fetch_add_explicit(&r->bytes, allocated - last_allocated, memory_order_relaxed);
	}
	last_generation = sums_generation = 0;
	return credit;
}
