/* The coins of the thinnings: live.c's table of samples and survival.c's
 * rings of samples found dead. A store that fills is thinned: each entry
 * is kept with probability 1/2 (hp_coin_keep) and its weight doubled, and
 * the store's level goes up by one; an entry offered later is admitted
 * with probability 2^-level (hp_coin_admit) and weighs 2^level. Every
 * entry so weighs 1 / (its chance of being there), and the sums over the
 * entries stay unbiased (Horvitz-Thompson): the cost is variance. */
#ifndef HP_AGENT_COIN_H
#define HP_AGENT_COIN_H

#include <stdbool.h>
#include <stdint.h>

/* xorshift64*: a coin per entry, no need for more. The state is nonzero. */
static inline uint64_t hp_coin_next(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Whether an entry offered at `level` (0..63) is admitted: probability 2^-level. */
static inline bool hp_coin_admit(uint64_t *s, unsigned level)
{
	return level == 0 || (hp_coin_next(s) >> (64 - level)) == 0;
}

/* Whether a store being thinned keeps an entry: probability 1/2. */
static inline bool hp_coin_keep(uint64_t *s)
{
	return (hp_coin_next(s) >> 40) & 1;
}

#endif
