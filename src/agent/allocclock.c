/* The allocation clock (allocclock.h). */
#include "agent/allocclock.h"

void hp_alloc_clock_reset(struct hp_alloc_clock *c)
{
	atomic_store(&c->n, 0);
}

void hp_alloc_clock_tick(struct hp_alloc_clock *c, int64_t ns, uint64_t samples)
{
	uint64_t n = atomic_load_explicit(&c->n, memory_order_relaxed);
	atomic_store_explicit(&c->ns[n % HP_CLOCK_POINTS], ns, memory_order_relaxed);
	atomic_store_explicit(&c->samples[n % HP_CLOCK_POINTS], samples, memory_order_relaxed);
	atomic_store_explicit(&c->n, n + 1, memory_order_release);
}

double hp_alloc_clock_at(const struct hp_alloc_clock *c, int64_t ns, int64_t now_ns, uint64_t now_samples)
{
	uint64_t n = atomic_load_explicit(&c->n, memory_order_acquire);
	uint64_t lo = n > HP_CLOCK_POINTS - 8 ? n - (HP_CLOCK_POINTS - 8) : 0;     /* slots a writer may not reach soon */
	if (ns >= now_ns || n == lo)
		return (double)now_samples;     /* the future, or no checkpoint yet: no age */
	/* The first checkpoint at or after ns (times never decrease). */
	uint64_t a = lo, b = n;
	while (a < b) {
		uint64_t mid = a + (b - a) / 2;
		if (atomic_load_explicit(&c->ns[mid % HP_CLOCK_POINTS], memory_order_relaxed) >= ns)
			b = mid;
		else
			a = mid + 1;
	}
	int64_t t1 = a < n ? atomic_load_explicit(&c->ns[a % HP_CLOCK_POINTS], memory_order_relaxed) : now_ns;
	double s1 = a < n ? (double)atomic_load_explicit(&c->samples[a % HP_CLOCK_POINTS], memory_order_relaxed)
			  : (double)now_samples;
	int64_t t0;
	double s0;
	if (a > lo) {
		t0 = atomic_load_explicit(&c->ns[(a - 1) % HP_CLOCK_POINTS], memory_order_relaxed);
		s0 = (double)atomic_load_explicit(&c->samples[(a - 1) % HP_CLOCK_POINTS], memory_order_relaxed);
	} else {
		/* Before the oldest checkpoint: at the rate from it to now. */
		t0 = t1;
		s0 = s1;
		t1 = now_ns;
		s1 = (double)now_samples;
		if (t1 <= t0)
			return s0;
		return s0 - (s1 - s0) * (double)(t0 - ns) / (double)(t1 - t0);
	}
	if (t1 <= t0)
		return s1;
	return s0 + (s1 - s0) * (double)(ns - t0) / (double)(t1 - t0);
}
