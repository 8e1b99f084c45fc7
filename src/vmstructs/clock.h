/* The clocks, one place (header-only: the command uses them too).
 * CLOCK_MONOTONIC for intervals and deadlines, CLOCK_REALTIME for what is
 * compared with the samples' timestamps and written in profiles; both
 * through the vDSO, no system call. */
#ifndef HP_CLOCK_H
#define HP_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t hp_mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static inline int64_t hp_real_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static inline int64_t hp_mono_ms(void)
{
	return hp_mono_ns() / 1000000;
}

#endif
