/* GetStackTrace answers keyed by stack keys (see stackcache.h). */
#include "agent/stackcache.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define MAX_PROBES 16

int hp_stackcache_init(struct hp_stackcache *c, uint32_t slots, size_t max_bytes)
{
	memset(c, 0, sizeof(*c));
	c->slots = calloc(slots, sizeof(*c->slots));
	if (!c->slots)
		return -ENOMEM;
	c->mask = slots - 1;
	c->max_bytes = max_bytes;
	pthread_mutex_init(&c->retired_lock, NULL);
	return 0;
}

static void free_entry(struct hp_stack_entry *e, JNIEnv *jni)
{
	if (!e)
		return;
	jweak ref = atomic_load(&e->memo_class);
	if (ref && jni)
		(*jni)->DeleteWeakGlobalRef(jni, ref);
	free(e);
}

void hp_stackcache_free(struct hp_stackcache *c, JNIEnv *jni)
{
	if (!c->slots)
		return;
	for (uint32_t i = 0; i <= c->mask; i++)
		free_entry(atomic_load(&c->slots[i]), jni);
	for (struct hp_stack_entry *e = c->retired, *next; e; e = next) {
		next = e->retired_next;
		free_entry(e, jni);
	}
	free(c->slots);
	pthread_mutex_destroy(&c->retired_lock);
	c->slots = NULL;
}

static inline XXH128_hash_t key_hash(const uint64_t *key, uint32_t nkey)
{
	return XXH3_128bits(key, (size_t)nkey * sizeof(*key));
}

static inline bool same_key(const struct hp_stack_entry *e, XXH128_hash_t h)
{
	return e->hash_lo == h.low64 && e->hash_hi == h.high64;
}

static inline bool stale(const struct hp_stack_entry *e, uint64_t epoch, uint64_t redefs)
{
	return (e->interpreted && e->epoch != epoch) || e->redefs != redefs;
}

struct hp_stack_entry *hp_stackcache_find(struct hp_stackcache *c, const uint64_t *key, uint32_t nkey,
					  uint64_t epoch, uint64_t redefs)
{
	XXH128_hash_t h = key_hash(key, nkey);
	for (uint32_t i = 0; i < MAX_PROBES; i++) {
		struct hp_stack_entry *e =
			atomic_load_explicit(&c->slots[(h.low64 + i) & c->mask], memory_order_acquire);
		if (!e)
			return NULL;
		if (same_key(e, h)) {
			if (stale(e, epoch, redefs)) {
				atomic_fetch_add_explicit(&c->stale, 1, memory_order_relaxed);
				return NULL;
			}
			return e;
		}
	}
	return NULL;
}

void hp_stackcache_insert(struct hp_stackcache *c, const uint64_t *key, uint32_t nkey, bool interpreted,
			  uint64_t epoch, uint64_t redefs, const uint32_t *ids, uint32_t nframes)
{
	size_t size = sizeof(struct hp_stack_entry);
	if (atomic_fetch_add_explicit(&c->bytes, size, memory_order_relaxed) + size > c->max_bytes) {
		atomic_fetch_sub_explicit(&c->bytes, size, memory_order_relaxed);
		atomic_fetch_add_explicit(&c->full, 1, memory_order_relaxed);
		return;
	}
	struct hp_stack_entry *e = malloc(size);
	if (!e) {
		atomic_fetch_sub_explicit(&c->bytes, size, memory_order_relaxed);
		return;
	}
	XXH128_hash_t h = key_hash(key, nkey);
	e->hash_lo = h.low64;
	e->hash_hi = h.high64;
	e->epoch = epoch;
	e->redefs = redefs;
	e->interpreted = interpreted;
	e->nframes = nframes;
	e->ids = ids;
	atomic_init(&e->memo_class, NULL);
	atomic_init(&e->memo_site, NULL);
	e->retired_next = NULL;
	for (uint32_t i = 0; i < MAX_PROBES; i++) {
		_Atomic(struct hp_stack_entry *) *slot = &c->slots[(h.low64 + i) & c->mask];
		struct hp_stack_entry *old = atomic_load_explicit(slot, memory_order_acquire);
		if (!old && atomic_compare_exchange_strong(slot, &old, e))
			return;
		if (old && same_key(old, h)) {
			/* A stale entry is replaced; the old one may still be
			 * read by a lookup under way, so it is freed only with
			 * the cache. A current one means another thread won. */
			if (stale(old, epoch, redefs) && atomic_compare_exchange_strong(slot, &old, e)) {
				pthread_mutex_lock(&c->retired_lock);
				old->retired_next = c->retired;
				c->retired = old;
				pthread_mutex_unlock(&c->retired_lock);
				return;
			}
			atomic_fetch_sub_explicit(&c->bytes, size, memory_order_relaxed);
			free(e);
			return;
		}
	}
	atomic_fetch_add_explicit(&c->full, 1, memory_order_relaxed);      /* no free slot nearby */
	atomic_fetch_sub_explicit(&c->bytes, size, memory_order_relaxed);
	free(e);
}

void hp_stackcache_memo(struct hp_stack_entry *e, JNIEnv *jni, jclass klass, void *site)
{
	if (!klass || !site || atomic_load_explicit(&e->memo_class, memory_order_relaxed))
		return;
	jweak ref = (*jni)->NewWeakGlobalRef(jni, klass);
	if (!ref) {
		(*jni)->ExceptionClear(jni);
		return;
	}
	jweak none = NULL;
	if (!atomic_compare_exchange_strong(&e->memo_class, &none, ref)) {
		(*jni)->DeleteWeakGlobalRef(jni, ref);
		return;
	}
	atomic_store_explicit(&e->memo_site, site, memory_order_release);
}

void hp_stackcache_disable(struct hp_stackcache *c, const char *fmt, ...)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&c->disabled, &expected, 2))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->reason, sizeof(c->reason), fmt, ap);
	va_end(ap);
	atomic_store(&c->disabled, 1);
}
