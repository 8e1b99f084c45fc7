/* Per-thread stripes for counters and tables that every allocating thread
 * updates: threads get stripe numbers round-robin on first use, so up to
 * HP_STRIPES threads never share one (a JNIEnv address hash collided). */
#ifndef HP_STRIPE_H
#define HP_STRIPE_H

#include <stdatomic.h>
#include <stdint.h>

#define HP_STRIPES 16

static inline unsigned hp_thread_stripe(void)
{
	static _Atomic unsigned next;
	static __thread unsigned mine;     /* stripe + 1; 0 = not assigned yet */
	if (!mine)
		mine = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed) % HP_STRIPES + 1;
	return mine - 1;
}

/* A counter each thread adds to in its own cache line. */
struct hp_striped_counter {
	struct {
		_Alignas(64) _Atomic int64_t v;
	} s[HP_STRIPES];
};

static inline int64_t hp_striped_sum(struct hp_striped_counter *c, memory_order order)
{
	int64_t sum = 0;
	for (int i = 0; i < HP_STRIPES; i++)
		sum += atomic_load_explicit(&c->s[i].v, order);
	return sum;
}

#endif
