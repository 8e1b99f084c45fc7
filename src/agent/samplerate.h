/* The interval the JVM's allocation sampler really keeps, measured.
 *
 * Why. Every Horvitz-Thompson weight is 1 / (1 - e^{-size/interval}) at
 * the interval the agent asked for. A JVM that samples more often than
 * asked puts every sum that much high: JDK 11 at 64k takes 3.8% more
 * samples than the interval asks, with byte[] of 64..4159 bytes, and its
 * live view reads +4.5% (docs/sampler-rate.md); 17, 21 and 25 take what
 * they are asked.
 *
 * How. On each sample, in the allocating thread's own callback, the bytes
 * that thread has allocated so far (HotSpot's exact count:
 * vmstructs/allocated.h). Between two samples of one thread lie the bytes
 * the sampler let pass, exactly; the same bytes as the samples estimate
 * them are the Horvitz-Thompson terms size / (1 - e^{-size/interval}) of
 * the samples that close the gaps, whose sum has that expectation for a
 * sampler that keeps its interval. (The gaps' mean alone is not the
 * interval: a sampled object takes one sample however many sample points
 * fall in it, so with objects of 64..4159 bytes at 64k the gaps came out
 * 1.8% longer than the interval on 17 and 25, which keep it.) The factor is
 * the exact bytes over the estimated ones, its relative sd about
 * 1/sqrt(gaps) (the gaps are exponential, the terms nearly constant); the
 * weights use interval * factor (to first order in size / interval, the
 * weights times the factor) where it differs from 1 by more than
 * HP_RATE_SDS sd with at least HP_RATE_MIN_GAPS gaps, else 1 (a sampler
 * that keeps its interval gets no noise added).
 *
 * What it does not know: which sizes or sites the extra samples fall on;
 * the factor is one for all (the held set of docs/sampler-rate.md, sizes
 * below 2 KiB, reads as high as the whole). */
#ifndef HP_AGENT_SAMPLERATE_H
#define HP_AGENT_SAMPLERATE_H

#include <stdatomic.h>
#include <stdint.h>

#define HP_RATE_MIN_GAPS 10000
#define HP_RATE_SDS 5.0
#define HP_RATE_REFRESH 1024    /* gaps between recomputations of the factor */

struct hp_sample_rate {
	_Atomic uint64_t bytes;         /* sum of the gaps */
	_Atomic uint64_t estimated;     /* sum of the closing samples' Horvitz-Thompson bytes at the interval asked */
	_Atomic uint64_t gaps;
	_Atomic uint64_t factor_bits;   /* the factor in use (double bits); 0: 1 */
	_Atomic uint32_t generation;    /* bumped by reset: threads' last readings are stale */
	_Atomic uint64_t refused;       /* readings refused (a pause retired the TLAB during the read) */
	_Atomic uint64_t interval;      /* the interval asked */
};

/* Starts over (a new profiling session at `interval` bytes): the
 * threads' last readings no longer count. */
void hp_sample_rate_reset(struct hp_sample_rate *r, uint64_t interval);

/* One sample of `size` bytes on the calling thread, which has allocated
 * `allocated` bytes so far (or read < 0: the reading was refused).
 * Lock-free. */
void hp_sample_rate_note(struct hp_sample_rate *r, uint64_t allocated, int read, uint64_t size);

/* The factor on the interval asked that the weights use (1 until
 * measured off it). */
double hp_sample_rate_factor_now(const struct hp_sample_rate *r);

/* Pure: the factor for `bytes` allocated over `gaps` that the samples
 * estimated as `estimated` (rule above); *measured (if not NULL) bytes over
 * estimated, 0 with none. */
double hp_sample_rate_factor(uint64_t bytes, uint64_t estimated, uint64_t gaps, double *measured);

#endif
