/* The interval the JVM's allocation sampler really keeps, measured per
 * thread, and each sample weighed at its thread's.
 *
 * Why. Every Horvitz-Thompson weight is 1 / (1 - e^{-size/interval}) at
 * the interval the agent asked for. A JVM that samples more often than
 * asked puts every sum that much high: JDK 11 at 64k takes 3.8% more
 * samples than the interval asks, with byte[] of 64..4159 bytes, and its
 * live view reads +4.5% (docs/sampler-rate.md). And on 11 to 25 a thread
 * whose allocations go now inside its TLAB, now outside (objects of a few
 * KiB from a thread that allocates little: its TLAB is small, and an
 * object that does not fit while the TLAB's free part is above the refill
 * waste limit goes outside) is sampled more often than the bytes it
 * allocates: each allocation outside the TLAB takes the slow path, which
 * adds the TLAB's free part again to the bytes counted since the last
 * sample point (ThreadLocalAllocBuffer::set_sample_end, 17 and 21; waste
 * at refills counts too), and the object that next refills the TLAB is
 * charged all of it (JDK-8356372, "JVMTI heap sampling not working
 * properly with outside TLAB allocations", rewrote the accounting). Measured:
 * LoadService's growing list (byte[4080] from the main thread, 20 MiB/s,
 * beside two threads allocating GB/s), its allocated bytes estimated
 * +12..+30% over the exact count on 11, 17, 21 (G1, Parallel) and 25;
 * with -XX:-ResizeTLAB -XX:TLABSize=1m, or on 26 (whose sampler counts
 * the bytes outside the TLAB apart), within a few % (docs/sampler-rate.md).
 * One factor for the whole JVM cannot see that: the main thread is 1% of
 * the bytes.
 *
 * The first object after a collection, set aside (sample.c). The same
 * accounting on 11 to 24 counts, when it sets a sample point inside the
 * TLAB, the bytes up to it as allocated; a collection that retires the
 * TLAB before they are leaves them counted, and the first object of the
 * thread's next TLAB is sampled at once, ahead of its turn. (A sample
 * point past the TLAB's end counts the bytes to the end instead; then the
 * first object keeps its fair chance and the residual, memoryless, is
 * what it would be.) Every other sample point is where a Poisson process
 * over the bytes really allocated would put it, so the extra samples fall
 * on whatever each thread allocates first after a pause, not in
 * proportion to bytes: LoadService's workers on Serial and Parallel 17
 * resume at the cache's entry, whose allocated bytes read +36.5% and
 * +20.1% on the median though the threads' totals were right (their
 * factor weighs every sample down, the garbage's too). Such a sample is
 * recognised in its callback: the object at the start of a TLAB whose
 * _number_of_refills is 1 (vmstructs/allocated.h), with a collection
 * since the thread's last sample (a thread's own first TLAB has refills 1
 * too); it is set aside before its gap is read (the gap runs on to the
 * next sample), and the process restarts at that object, as a Poisson
 * process does anywhere. Where the data says the sampler does this
 * (symbols/: sampler.after_gc_tlab, 11-24, witnessed by the old
 * accounting's ThreadHeapSampler::check_for_sampling); 25's accounting
 * (JDK-8356372) does not. The cost: that object's fair chance goes too
 * where the sample point lay past the TLAB's end, so each thread's first
 * object after each collection is never sampled (in expectation its own
 * size a collection and thread, which the thread's factor spreads over
 * its other sites). Set-aside samples are not in the allocation clock nor
 * the profile's sample count. docs/sampler-after-gc.md measures it.
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
 * 1.8% longer than the interval on 17 and 25, which keep it.) Per thread,
 * the factor is the exact bytes over the estimated ones, both decayed
 * over the thread's last HP_RATE_WINDOW gaps before the one the sample
 * closes (its own would lift the weight of a large object: its gap holds
 * it and, about, an interval of other bytes, against its estimate of
 * about its size; test_samplerate large_objects_weigh_their_bytes),
 * both begun at HP_RATE_PRIOR_GAPS gaps' worth of a sampler
 * that keeps its interval, which decay like the rest (so a thread's
 * first samples weigh about as asked). Each sample is weighed at
 * interval * its thread's factor then: a ratio estimator per thread, the
 * thread's allocated bytes as HotSpot counts them.
 *
 * Why a window of 32 gaps, not thousands. The over-count is not steady:
 * LoadService's list thread on Serial 17, in blocks of 40 samples, read
 * 0.81-1.28 of its estimate in its first 200 samples and 0.34-0.73 in 7
 * of its last 8 blocks (probably its TLAB, resized at each collection),
 * so a factor carried over the whole run (16,384 gaps: longer than the
 * run at that thread's ~40 samples a second) weighed the late samples at
 * the early ratio: the list's allocated bytes +7..+12% over HotSpot's
 * exact count in two runs (the factor replayed offline from every
 * sample's reading; 32 gaps: +0.1..+1.9%, the two worker threads within
 * 0.02%; docs/load-rate-window.md). The noise of a short window does not
 * add to the sums: over any run of the thread's samples the weights add
 * up to about the bytes it allocated in that run, whatever the count of
 * samples in it (that is the point of a ratio estimator), and what
 * survives of a random turnover (a cache) is read by its share of the
 * samples, whose variance, sigma (1 - sigma) over n, is below
 * Horvitz-Thompson's sigma over n. The prior decays with the rest for
 * the same reason: kept constant beside the 32 gaps, 4 gaps of it held
 * the list's thread (0.55 late) toward 1, +3.9% and +5.0% in the same
 * replays.
 * The whole JVM's ratio is kept too, for `info` and the profile's line,
 * with each ended thread's stretch after its last sample in its bytes
 * (without it, short threads' gaps read short of their estimate: a gap
 * that would run past a thread's end is never closed; 0.79 with threads
 * of ~5 samples, where the sampler keeps its interval).
 *
 * What it does not know: which sizes or sites a thread's other extra
 * samples (outside the TLAB, above) fall on; its factor is one for all
 * its samples at a time (the held set of docs/sampler-rate.md, sizes
 * below 2 KiB, reads as high as the whole). The factor's own error (sd about 1/sqrt(63) = 12.6% on one
 * sample: decayed, 32 gaps count as 63) is not in the intervals: it runs
 * against the error of the thread's samples' count, which it corrects.
 * And a thread's weights add up to the bytes it allocated up to its last
 * sample, not past it: where Horvitz-Thompson counts the stretch after a
 * thread's last sample in expectation, a ratio leaves it out, so a thread
 * that dies after n samples is short by up to about 1/n of its bytes,
 * less while the prior still weighs (-4.6% at 20 samples, -0.5% at 200,
 * in a simulation; -1.7% at 1 interval a thread, -7.1% at 4, -5.2% at 16
 * in test_samplerate; the factor over 16,384 gaps
 * was short by about half that), on its last samples' sites. So at a
 * thread's end (JVMTI ThreadEnd, on the thread) the stretch is read,
 * exactly, and credited to its last sample's site (hp_sample_rate_end): only
 * the share the thread's own gaps carry in its sums, since the prior's
 * share weighs samples as Horvitz-Thompson does, which counts the
 * stretch in expectation already (crediting it whole read +25% at 1-2
 * samples a thread, +11% at 5, in a simulation; this share: within
 * 0.6% from 1 to 200 with objects far below the interval). The last
 * sample's site takes it whole: in expectation over which sample came
 * last, each site gets it by its share of the thread's samples, which
 * assumes the stretch holds the thread's mix (its allocations on the way
 * out, Thread.exit's, go to the last sample's site too). Not by the last
 * sample's Horvitz-Thompson bytes over the interval, whose mean is above
 * 1 where objects are not small beside the interval (byte[1000] at 4k:
 * +1.7% in a review's simulation where the whole stretch reads +0.9%;
 * and a site of large objects, which needs almost no credit, its weights
 * hardly hanging on the factor, took the small objects' stretch
 * multiplied: +2.3..+2.9%). Per site, large objects beside small ones
 * still come out a little off either way (a review's simulation, half
 * the bytes in 128 KiB objects at 64k: the large site +0.0..+0.6%). A
 * thread still running at a profile is short by its current stretch
 * (about an interval: nothing for a thread that has run long). */
#ifndef HP_AGENT_SAMPLERATE_H
#define HP_AGENT_SAMPLERATE_H

#include <stdatomic.h>
#include <stdint.h>

#define HP_RATE_MIN_GAPS 10000   /* the JVM's ratio described off 1 only past this many gaps */
#define HP_RATE_SDS 5.0
#define HP_RATE_WINDOW 32.0      /* a thread's gaps its factor weighs (decayed) */
#define HP_RATE_PRIOR_GAPS 4.0   /* gaps' worth of a sampler that keeps the interval, at a thread's start */
#define HP_RATE_MIN_FACTOR 0.25  /* a thread's factor, clamped: the list's thread read 0.34 over 40 gaps */
#define HP_RATE_MAX_FACTOR 4.0

struct hp_sample_rate {
	_Atomic uint64_t bytes;         /* sum of the gaps, every thread */
	_Atomic uint64_t estimated;     /* sum of the closing samples' Horvitz-Thompson bytes at the interval asked */
	_Atomic uint64_t gaps;
	_Atomic uint32_t generation;    /* bumped by reset: threads' last readings are stale */
	_Atomic uint64_t refused;       /* readings refused (a pause retired the TLAB during the read) */
	_Atomic uint64_t interval;      /* the interval asked */
	_Atomic uint64_t ended;         /* threads whose end credited a stretch to a sample (sample.c) */
	_Atomic uint64_t credited;      /* the bytes credited so */
};

/* Starts over (a new profiling session at `interval` bytes): the
 * threads' last readings and factors no longer count. */
void hp_sample_rate_reset(struct hp_sample_rate *r, uint64_t interval);

/* One sample of `size` bytes on the calling thread, which has allocated
 * `allocated` bytes so far (or read < 0: the reading was refused).
 * Returns the calling thread's factor on the interval asked, for this
 * sample's weight. Lock-free. */
double hp_sample_rate_note(struct hp_sample_rate *r, uint64_t allocated, int read, uint64_t size);

/* The calling thread ends, having allocated `allocated` bytes (or read <
 * 0: the reading was refused): the bytes of the stretch after its last
 * sample this session to credit to that sample's site, its own gaps'
 * share in its sums (samplerate.h above), 0 with no sample or no
 * reading. The thread's measure starts over (a native thread that
 * attaches again is a new thread). Lock-free. */
double hp_sample_rate_end(struct hp_sample_rate *r, uint64_t allocated, int read);

/* Pure: the share of a thread's decayed estimated sum (`estimated`) that
 * its own gaps carry, the prior's part (`prior`) left out: 0..1. */
double hp_sample_rate_own_share(double prior, double estimated);

/* Pure: a thread's factor from its decayed sums of gaps (`bytes`) and of
 * its samples' estimates of them (the prior in both), within
 * [HP_RATE_MIN_FACTOR, HP_RATE_MAX_FACTOR]; 1 with no estimate. */
double hp_sample_rate_thread_factor(double bytes, double estimated);

/* Pure: the JVM's ratio, whether it is off 1: the factor for `bytes`
 * allocated over `gaps` that the samples estimated as `estimated`, 1 where
 * within HP_RATE_SDS sd or fewer than HP_RATE_MIN_GAPS gaps; *measured (if
 * not NULL) bytes over estimated, 0 with none. */
double hp_sample_rate_factor(uint64_t bytes, uint64_t estimated, uint64_t gaps, double *measured);

#endif
