/* GetStackTrace answers, keyed by the frame walker's stack keys
 * (vmstructs/framewalk.h): one JVMTI stack walk per distinct stack instead
 * of one per sample.
 *
 * Lock-free lookups (open addressing, entries published by CAS and never
 * freed while sampling runs); inserts on the miss path only. An entry whose
 * key names an interpreted frame (a Method*) is valid only while no class
 * has been unloaded since it was made: it carries that count ("epoch") and
 * is replaced when the count moved. Entries point at the site table's own
 * copy of the frames and keep only a 128-bit hash of the key (XXH3-128: at
 * a million distinct stacks the chance that two share it is ~1e-27, far
 * below that of the periodic check catching anything), so an entry costs
 * 48 bytes however deep its stack.
 *
 * Trust is earned: the sampler compares a cached answer with GetStackTrace
 * every HP_STACKCACHE_VERIFY_EVERY hits per thread (every hit with
 * walker=verify), and one disagreement turns the cache off for the session
 * with the reason. */
#ifndef HP_STACKCACHE_H
#define HP_STACKCACHE_H

#include <jvmti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HP_STACKCACHE_VERIFY_EVERY 1024

struct hp_stack_entry {
	uint64_t hash_lo, hash_hi;
	uint64_t epoch;
	uint64_t redefs;                /* class redefinitions when made */
	bool interpreted;
	uint32_t nframes;
	const uint32_t *ids;            /* frame ids, owned by the site table (stacks.h) */
	/* The site this stack's samples went to, with a weak reference to
	 * their class: while a sample's class is that one (JNI IsSameObject,
	 * no lock), the site is known without the class's JVMTI tag (a lock
	 * every allocating thread takes) or hashing the frames. Set once;
	 * the class first, published by the site. */
	_Atomic(jweak) memo_class;
	_Atomic(void *) memo_site;
	struct hp_stack_entry *retired_next;
};

struct hp_stackcache {
	_Atomic(struct hp_stack_entry *) *slots;
	uint32_t mask;
	size_t max_bytes;
	_Atomic size_t bytes;
	pthread_mutex_t retired_lock;
	struct hp_stack_entry *retired;     /* replaced entries, freed with the cache */
	_Atomic int disabled;
	char reason[256];
	/* counts for the report */
	_Atomic uint64_t misses, full, stale, verified, mismatches;   /* hits: the sampler's */
};

/* 0 or -ENOMEM. `slots` a power of two; `max_bytes` caps entry memory. */
int hp_stackcache_init(struct hp_stackcache *c, uint32_t slots, size_t max_bytes);
/* Only when no thread can be inside lookup or insert. Deletes the weak
 * references (jni may be NULL at VM death: then they are left). */
void hp_stackcache_free(struct hp_stackcache *c, JNIEnv *jni);

/* Remembers (class, site) for the entry, once; a no-op if it has one. */
void hp_stackcache_memo(struct hp_stack_entry *e, JNIEnv *jni, jclass klass, void *site);

/* The remembered site if `klass` is the remembered class, else NULL. */
static inline void *hp_stackcache_memo_site(struct hp_stack_entry *e, JNIEnv *jni, jclass klass)
{
	void *site = atomic_load_explicit(&e->memo_site, memory_order_acquire);
	if (!site || !klass)
		return NULL;
	jweak ref = atomic_load_explicit(&e->memo_class, memory_order_relaxed);
	return (*jni)->IsSameObject(jni, klass, ref) ? site : NULL;
}

/* The entry for this key made at `epoch` (ignored for keys without
 * interpreted frames) and after `redefs` class redefinitions, or NULL. A
 * redefinition stales every entry: a compiled frame's code stays the same
 * while its method becomes obsolete and gets a jmethodID of its own. */
struct hp_stack_entry *hp_stackcache_find(struct hp_stackcache *c, const uint64_t *key, uint32_t nkey,
					  uint64_t epoch, uint64_t redefs);

/* Remembers frames (kept by the caller for the cache's life) for the key.
 * Silently does nothing when the table or the byte budget is full
 * (counted) or another thread inserted the key first. */
void hp_stackcache_insert(struct hp_stackcache *c, const uint64_t *key, uint32_t nkey, bool interpreted,
			  uint64_t epoch, uint64_t redefs, const uint32_t *ids, uint32_t nframes);

/* Turns the cache off with a reason (first caller wins). */
void hp_stackcache_disable(struct hp_stackcache *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
