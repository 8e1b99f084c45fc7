/* The last stack each thread decoded, kept by physical frame, so that the
 * next one decodes and interns only the frames that differ.
 *
 * Why: on a program whose every sample is a new stack (javac: the stack
 * cache answers ~10%), each sample decoded and looked up 30-60 frames,
 * though consecutive samples of one thread share most of them: the frames
 * from main() down to the method that allocates change at the top. A
 * physical frame's Java frames are a function of its walk key words (the
 * return pc and compile id of a compiled frame, the Method* and bcp of an
 * interpreted one) and its aux word (the nmethod), under one epoch
 * (classes-unloaded count) and class-redefinition count: the argument of
 * the stack cache (stackcache.h), applied to a suffix of the stack instead
 * of the whole of it. So the memo holds the last decoded stack's key, aux,
 * where each physical frame's Java frames end, the Java frames and the
 * frame ids of the site they were interned as; the next decode on the
 * thread compares keys from the bottom, decodes only the physical frames
 * above the common part and takes the rest's Java frames and frame ids
 * from the memo.
 *
 * Kept only for a stack decoded whole (fewer Java frames than the depth:
 * none cut), under the epoch and count it was decoded under; forgotten
 * when the sampler stops trusting the decoder. Frame ids are taken only
 * from a site made from exactly these frames, and none invalid.
 *
 * One per thread (thread-local, freed at thread exit), made on a thread's
 * first decode: (depth + 8) * 44 bytes.
 */
#ifndef HP_STACKMEMO_H
#define HP_STACKMEMO_H

#include <stdbool.h>
#include <stdint.h>

#include "vmstructs/framedecode.h"

struct hp_stackmemo;

/* This thread's memo for profiler session `generation` at stacks of at
 * most `depth` frames (a memo of another session or depth starts empty).
 * NULL when out of memory. */
struct hp_stackmemo *hp_stackmemo_get(unsigned generation, int depth);

/* What hp_stackmemo_decode took from the memo. */
struct hp_stackmemo_use {
	int reused;                     /* Java frames at the end of out taken from the memo */
	const uint32_t *known;          /* their frame ids (nknown of them), valid until the next call */
	int nknown;
};

/* hp_framedecode for the walk's key (framedecode.h), with the frames
 * below the physical frames that differ from the memo's taken from it;
 * the result becomes the memo. `max` must be the memo's depth. */
int hp_stackmemo_decode(struct hp_stackmemo *m, struct hp_framedecode *d, const uint64_t *key, const uintptr_t *aux,
			int nkey, uint64_t epoch, uint64_t redefs, uintptr_t stop_jmid, struct hp_java_frame *out,
			int max, int *method_result, struct hp_stackmemo_use *use);

/* The site the last decoded stack was interned as: its frame ids (n of
 * them, leaf first). Taken only when they are the decoded frames' (n
 * equal) and `invalid` (hp_site.invalid) is false. */
void hp_stackmemo_keep_ids(struct hp_stackmemo *m, const uint32_t *ids, int n, bool invalid);

/* The memo's stack, when this thread's last sample was decoded (not
 * answered by the stack cache): the caller prefetches what walking it
 * again reads (framewalk.h). false when there is none. */
bool hp_stackmemo_recent(const struct hp_stackmemo *m, const uint64_t **key, const uintptr_t **aux, int *nkey);

/* This thread's sample was answered by the stack cache. */
void hp_stackmemo_hit(struct hp_stackmemo *m);

/* The last decode is not to be built on (GetStackTrace's answer replaced
 * it, or the fast path was turned off). */
void hp_stackmemo_forget(struct hp_stackmemo *m);

#endif
