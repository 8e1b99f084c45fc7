/* The sampler's real interval (samplerate.h). */
#include "agent/samplerate.h"
#include "agent/weights.h"

#include <math.h>
#include <string.h>

/* The calling thread's last reading and the generation it belongs to
 * (0: none). */
static __thread uint64_t last_allocated;
static __thread uint32_t last_generation;

/* A gap this large is not one (a thread that allocated 16 GiB between two
 * samples at any interval the options allow is counted wrong somewhere). */
#define GAP_SANE_BYTES ((uint64_t)1 << 34)

void hp_sample_rate_reset(struct hp_sample_rate *r, uint64_t interval)
{
	atomic_store(&r->interval, interval);
	atomic_store(&r->bytes, 0);
	atomic_store(&r->estimated, 0);
	atomic_store(&r->gaps, 0);
	atomic_store(&r->factor_bits, 0);
	atomic_store(&r->refused, 0);
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

void hp_sample_rate_note(struct hp_sample_rate *r, uint64_t allocated, int read, uint64_t size)
{
	uint32_t gen = atomic_load_explicit(&r->generation, memory_order_relaxed) + 1;
	if (read < 0) {
		atomic_fetch_add_explicit(&r->refused, 1, memory_order_relaxed);
		last_generation = 0;    /* the next gap would span two */
		return;
	}
	if (last_generation == gen && allocated > last_allocated && allocated - last_allocated < GAP_SANE_BYTES) {
		double interval = (double)atomic_load_explicit(&r->interval, memory_order_relaxed);
		double ht = (double)size / hp_sample_probability(size, interval);
		atomic_fetch_add_explicit(&r->bytes, allocated - last_allocated, memory_order_relaxed);
		atomic_fetch_add_explicit(&r->estimated, (uint64_t)llround(ht), memory_order_relaxed);
		uint64_t n = atomic_fetch_add_explicit(&r->gaps, 1, memory_order_relaxed) + 1;
		if (n % HP_RATE_REFRESH == 0) {
			double f = hp_sample_rate_factor(atomic_load_explicit(&r->bytes, memory_order_relaxed),
							 atomic_load_explicit(&r->estimated, memory_order_relaxed), n,
							 NULL);
			uint64_t bits;
			memcpy(&bits, &f, sizeof(bits));
			atomic_store_explicit(&r->factor_bits, f == 1 ? 0 : bits, memory_order_relaxed);
		}
	}
	last_allocated = allocated;
	last_generation = gen;
}

double hp_sample_rate_factor_now(const struct hp_sample_rate *r)
{
	uint64_t bits = atomic_load_explicit(&r->factor_bits, memory_order_relaxed);
	double f;
	memcpy(&f, &bits, sizeof(f));
	return bits ? f : 1;
}
