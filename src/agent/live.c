/* Tracking of live samples, and how a full table drops samples without
 * biasing the estimates.
 *
 * A thread's samples go to its home stripe, or to any stripe with room.
 * Thinning (coin.h): when no stripe has a free slot, every entry in the home stripe is kept with
 * probability 1/2 (a coin per entry) and the stripe's level goes up by one;
 * from then on a new sample enters that stripe with probability 2^-level.
 * An entry that entered at level L and survived later thinnings was kept
 * with overall probability 2^-(its insertion level + thinnings since), and
 * the estimator divides by exactly that probability (Horvitz-Thompson), so
 * sums over surviving samples stay unbiased. `thin` records the factor at
 * insertion; later thinnings double it in place. The cost is variance, not
 * bias: reported as `dropped` and in the confidence intervals.
 */
#include "agent/live.h"
#include "agent/coin.h"
#include "agent/stripe.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

int hp_live_init(struct hp_live *l, uint32_t max_live)
{
	memset(l, 0, sizeof(*l));
	uint32_t per = (max_live + HP_LIVE_STRIPES - 1) / HP_LIVE_STRIPES;
	if (per < 4)
		per = 4;
	for (int i = 0; i < HP_LIVE_STRIPES; i++) {
		struct hp_live_stripe *s = &l->stripes[i];
		pthread_mutex_init(&s->lock, NULL);
		s->entries = calloc(per, sizeof(*s->entries));
		s->free_list = malloc(sizeof(*s->free_list) * per);
		if (!s->entries || !s->free_list)
			return -ENOMEM;
		s->cap = per;
		for (uint32_t k = 0; k < per; k++)
			s->free_list[k] = per - 1 - k;
		s->nfree = per;
		s->rng = 0x853c49e6748fea9bull ^ ((uint64_t)i << 32) ^ (uint64_t)(uintptr_t)s;
	}
	return 0;
}

void hp_live_free(struct hp_live *l, JNIEnv *jni)
{
	for (int i = 0; i < HP_LIVE_STRIPES; i++) {
		struct hp_live_stripe *s = &l->stripes[i];
		if (!s->entries)
			continue;
		pthread_mutex_lock(&s->lock);
		for (uint32_t k = 0; k < s->cap; k++)
			if (s->entries[k].ref && jni)
				(*jni)->DeleteWeakGlobalRef(jni, s->entries[k].ref);
		free(s->entries);
		free(s->free_list);
		s->entries = NULL;
		s->free_list = NULL;
		pthread_mutex_unlock(&s->lock);
		pthread_mutex_destroy(&s->lock);
	}
}

static void release(struct hp_live *l, struct hp_live_stripe *s, JNIEnv *jni, uint32_t k)
{
	(*jni)->DeleteWeakGlobalRef(jni, s->entries[k].ref);
	s->entries[k].ref = NULL;
	s->free_list[s->nfree++] = k;
	atomic_fetch_add(&l->freed, 1);
}

static void thin(struct hp_live *l, struct hp_live_stripe *s, JNIEnv *jni)
{
	for (uint32_t k = 0; k < s->cap; k++) {
		if (!s->entries[k].ref)
			continue;
		if (hp_coin_keep(&s->rng)) {
			s->entries[k].thin *= 2.0;
		} else {
			release(l, s, jni, k);
			atomic_fetch_add(&l->dropped, 1);
		}
	}
	s->level++;
}

/* A free slot in another stripe, locked; NULL if every stripe is full. A
 * single allocating thread must be able to use the whole table. */
static struct hp_live_stripe *stripe_with_room(struct hp_live *l, struct hp_live_stripe *busy)
{
	for (int i = 0; i < HP_LIVE_STRIPES; i++) {
		struct hp_live_stripe *s = &l->stripes[i];
		if (s == busy || __atomic_load_n(&s->nfree, __ATOMIC_RELAXED) == 0)
			continue;
		pthread_mutex_lock(&s->lock);
		if (s->entries && s->nfree)
			return s;
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

void hp_live_add(struct hp_live *l, JNIEnv *jni, jobject object, uint32_t site, uint64_t size, uint32_t pause_now,
		 int64_t time_ns, uint32_t thread, double weight, struct hp_live_handle *at)
{
	if (at)
		at->ref = NULL;
	struct hp_live_stripe *s = &l->stripes[hp_thread_stripe() % HP_LIVE_STRIPES];
	/* The reference is made before the stripe is locked: NewWeakGlobalRef
	 * takes HotSpot's own OopStorage lock and may wait out a safepoint,
	 * and no other thread should wait on our stripe meanwhile. It is
	 * deleted again in the rare case the sample is not admitted. */
	jweak ref = (*jni)->NewWeakGlobalRef(jni, object);
	if (!ref) {
		(*jni)->ExceptionClear(jni);
		return;
	}
	struct hp_live_stripe *target = s;
	pthread_mutex_lock(&s->lock);
	if (!s->entries)
		goto drop;
	/* Admission at the home stripe's level; the sample records exactly
	 * the probability it was admitted with, wherever it is stored. */
	if (!hp_coin_admit(&s->rng, s->level)) {
		atomic_fetch_add(&l->dropped, 1);
		goto drop;
	}
	double thin_factor = (double)(1ull << s->level) * weight;
	if (s->nfree == 0) {
		target = stripe_with_room(l, s);
		if (!target) {
			target = s;
			/* Each thinning raises the level by one, and the new
			 * sample faces that level's coin too; thin again in the
			 * (2^-cap) case where every coin kept its entry. */
			do {
				thin(l, s, jni);
				if (!hp_coin_keep(&s->rng)) {
					atomic_fetch_add(&l->dropped, 1);
					goto drop;
				}
				thin_factor *= 2.0;
			} while (s->nfree == 0);
		}
	}
	uint32_t k = target->free_list[--target->nfree];
	target->entries[k] = (struct hp_live_entry){ ref, site, pause_now, size, thin_factor, time_ns, thread, 0, 0 };
	if (at)
		*at = (struct hp_live_handle){ ref, (uint32_t)(target - l->stripes), k, time_ns, site, size };
	ref = NULL;
	atomic_fetch_add_explicit(&l->tracked, 1, memory_order_relaxed);
drop:
	if (target != s)
		pthread_mutex_unlock(&target->lock);
	pthread_mutex_unlock(&s->lock);
	if (ref)
		(*jni)->DeleteWeakGlobalRef(jni, ref);
}

int hp_live_scale(struct hp_live *l, const struct hp_live_handle *at, double factor)
{
	if (!at || !at->ref || at->stripe >= HP_LIVE_STRIPES || !(factor > 0))
		return -ENOENT;
	struct hp_live_stripe *s = &l->stripes[at->stripe];
	int rc = -ENOENT;
	pthread_mutex_lock(&s->lock);
	const struct hp_live_entry *e = s->entries && at->slot < s->cap ? &s->entries[at->slot] : NULL;
	if (e && e->ref == at->ref && e->time_ns == at->time_ns && e->site == at->site && e->size == at->size) {
		s->entries[at->slot].thin *= factor;
		rc = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* In chunks, so that a sampling thread never waits on its stripe for more
 * than a chunk's IsSameObject calls. */
#define SWEEP_CHUNK 256

/* Entries [from, to) of a stripe, its lock held: a cleared reference is
 * dead (dead, then freed), a set one alive. */
static void look_at(struct hp_live *l, struct hp_live_stripe *s, JNIEnv *jni, uint32_t from, uint32_t to,
		    hp_live_fn alive, hp_live_fn dead, void *ctx)
{
	for (uint32_t k = from; k < to; k++) {
		if (!s->entries[k].ref)
			continue;
		if ((*jni)->IsSameObject(jni, s->entries[k].ref, NULL)) {
			if (dead)
				dead(&s->entries[k], ctx);
			release(l, s, jni, k);
		} else if (alive) {
			alive(&s->entries[k], ctx);
		}
	}
}

void hp_live_sweep(struct hp_live *l, JNIEnv *jni, hp_live_fn alive, hp_live_fn dead, void *ctx)
{
	for (int i = 0; i < HP_LIVE_STRIPES; i++) {
		struct hp_live_stripe *s = &l->stripes[i];
		for (uint32_t from = 0;; from += SWEEP_CHUNK) {
			pthread_mutex_lock(&s->lock);
			if (!s->entries || from >= s->cap) {
				pthread_mutex_unlock(&s->lock);
				break;
			}
			look_at(l, s, jni, from, from + SWEEP_CHUNK < s->cap ? from + SWEEP_CHUNK : s->cap, alive, dead, ctx);
			pthread_mutex_unlock(&s->lock);
		}
	}
}

void hp_live_each(struct hp_live *l, JNIEnv *jni, hp_live_fn fn, hp_live_fn dead, void *ctx)
{
	for (int i = 0; i < HP_LIVE_STRIPES; i++) {
		struct hp_live_stripe *s = &l->stripes[i];
		pthread_mutex_lock(&s->lock);
		if (s->entries)
			look_at(l, s, jni, 0, s->cap, fn, dead, ctx);
		pthread_mutex_unlock(&s->lock);
	}
}

uint64_t hp_live_count(struct hp_live *l)
{
	return atomic_load(&l->tracked) - atomic_load(&l->freed);
}
