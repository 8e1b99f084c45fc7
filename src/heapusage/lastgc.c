/* Mode "last-gc-fields": the heap's own record of its size after the last
 * collection, read straight from memory.
 *
 * HotSpot keeps these for the SoftReference clearing policy
 * (LRUMaxHeapPolicy uses capacity at last GC, used at last GC):
 *   JDK 11      statics Universe::_heap_capacity_at_last_gc / _heap_used_at_last_gc
 *   JDK 17..25  CollectedHeap::_capacity_at_last_gc / _used_at_last_gc
 * VMStructs does not publish them, so symbols/jdk-N.txt places them relative
 * to CollectedHeap::_reserved, which it does publish. Collectors refresh them
 * at different times (refresh.<gc> in the data): after whole-heap
 * collections only (Serial, Parallel), after every collection (G1: young
 * ones too, so "used" still holds dead old objects), at the end of each
 * cycle (ZGC, Shenandoah), never (Epsilon).
 *
 * A read is two plain loads: fit for a GC callback.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapusage/lastgc.h"
#include "heapusage/layout.h"
#include "heapusage/modes.h"
#include "heapusage/probe.h"
#include "vmstructs/safemem.h"

/* When the last-GC fields are refreshed (symbols/: refresh.<collector>):
 * at full collections, at every pause young ones included, at the end of
 * every concurrent cycle, at the end of concurrent major cycles only
 * (generational ZGC), never. */
enum refresh_policy { REFRESH_FULL, REFRESH_YOUNG, REFRESH_CYCLE, REFRESH_MAJOR, REFRESH_NEVER };

struct lastgc_state {
	const volatile size_t *used, *capacity;
	enum refresh_policy refresh;
	uint64_t max;
};

static int locate(struct hp_probe *p, const struct hp_heap_info *heap, struct lastgc_state *s, char *reason,
		  size_t len)
{
	/* JDK 11: statics named by symbol. */
	const char *used_sym = hp_symdata_get(p->data, "static.Universe._heap_used_at_last_gc");
	const char *cap_sym = hp_symdata_get(p->data, "static.Universe._heap_capacity_at_last_gc");
	if (used_sym && cap_sym) {
		if (!p->syms) {
			snprintf(reason, len, "needs libjvm .symtab for %s: %s", used_sym, p->reason[HP_PART_SYMBOLS]);
			return -ENOENT;
		}
		const struct hp_sym *u = hp_probe_sym(p, used_sym);
		const struct hp_sym *c = hp_probe_sym(p, cap_sym);
		if (!u || !c) {
			snprintf(reason, len, "symbol %s not in libjvm", !u ? used_sym : cap_sym);
			return -ENOENT;
		}
		s->used = (const volatile size_t *)(uintptr_t)u->addr;
		s->capacity = (const volatile size_t *)(uintptr_t)c->addr;
		return 0;
	}
	int64_t used_off, cap_off;
	char how[160];
	int rc = hp_layout_member(p, "CollectedHeap", "_used_at_last_gc", &used_off, how, sizeof(how));
	if (!rc)
		rc = hp_layout_member(p, "CollectedHeap", "_capacity_at_last_gc", &cap_off, how, sizeof(how));
	if (rc) {
		snprintf(reason, len, "%s", how);
		return rc;
	}
	const struct hp_vms_type *t = hp_vms_type(p->vms, "CollectedHeap");
	if (used_off < 8 || cap_off < 8 || (t && ((uint64_t)used_off + 8 > t->size || (uint64_t)cap_off + 8 > t->size))) {
		snprintf(reason, len, "offsets %lld/%lld fall outside CollectedHeap (%llu bytes)", (long long)used_off,
			 (long long)cap_off, t ? (unsigned long long)t->size : 0ull);
		return -EINVAL;
	}
	s->used = (const volatile size_t *)((const char *)heap->heap + used_off);
	s->capacity = (const volatile size_t *)((const char *)heap->heap + cap_off);
	return 0;
}

static int lastgc_init(struct hp_probe *p, char *reason, size_t len)
{
	const struct hp_heap_info *heap = hp_probe_heap(p);
	if (!heap) {
		snprintf(reason, len, "waiting for the heap: %s", p->reason[HP_PART_HEAP]);
		return p->status[HP_PART_HEAP] == -EAGAIN ? -EAGAIN : -ENOENT;
	}
	if (!p->data) {
		snprintf(reason, len, "%s", p->data_reason);
		return -ENOENT;
	}
	const char *policy = hp_symdata_getf(p->data, "refresh.%s", hp_gc_data_key(heap));
	struct lastgc_state s = { 0 };
	if (!policy) {
		snprintf(reason, len, "%s says nothing of when %s refreshes the last-GC fields",
			 hp_symdata_source(p->data), hp_gc_data_key(heap));
		return -ENOENT;
	} else if (strcmp(policy, "full") == 0) {
		s.refresh = REFRESH_FULL;
	} else if (strcmp(policy, "young") == 0) {
		s.refresh = REFRESH_YOUNG;
	} else if (strcmp(policy, "cycle") == 0) {
		s.refresh = REFRESH_CYCLE;
	} else if (strcmp(policy, "major") == 0) {
		s.refresh = REFRESH_MAJOR;
	} else if (strcmp(policy, "never") == 0) {
		snprintf(reason, len, "the %s collector never refreshes the last-GC fields", hp_gc_data_key(heap));
		return -ENOTSUP;
	} else {
		snprintf(reason, len, "%s: refresh.%s has a bad value '%s'", hp_symdata_source(p->data),
			 hp_gc_data_key(heap), policy);
		return -EINVAL;
	}
	int rc = locate(p, heap, &s, reason, len);
	if (rc)
		return rc;

	size_t used, capacity;
	if (hp_safe_read(&used, (const void *)s.used, sizeof(used)) ||
	    hp_safe_read(&capacity, (const void *)s.capacity, sizeof(capacity))) {
		snprintf(reason, len, "last-GC fields at %p/%p are unreadable", (const void *)s.used,
			 (const void *)s.capacity);
		return -EFAULT;
	}
	size_t max_heap = 0;
	if (p->status[HP_PART_FLAGS] == 0)
		hp_vmflags_size(&p->flags, "MaxHeapSize", &max_heap);
	s.max = max_heap;
	/* A wrong offset reads a pointer, a flag or a count: none of them
	 * passes these. */
	if (capacity == 0 || used > capacity || (max_heap && capacity > max_heap) || (capacity & 4095)) {
		snprintf(reason, len,
			 "values fail sanity (used=%zu capacity=%zu MaxHeapSize=%zu): the layout in %s does not fit this build",
			 used, capacity, max_heap, hp_symdata_source(p->data));
		return -EBADMSG;
	}
	struct lastgc_state *copy = malloc(sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	*copy = s;
	p->mode_state[HP_MODE_LAST_GC_FIELDS] = copy;
	return 0;
}

static int lastgc_read(struct hp_probe *p, JNIEnv *env, struct hp_mode_reading *r)
{
	const struct lastgc_state *s = p->mode_state[HP_MODE_LAST_GC_FIELDS];
	r->used = *s->used;
	r->committed = *s->capacity;
	r->max = s->max;
	/* A concurrent cycle's end is not a full collection's: the program
	 * allocated all through it (Shenandoah under load: ~1 GB here for
	 * ~0.2 GB live, labelled "after-full-gc" before). */
	r->kind = s->refresh == REFRESH_YOUNG ? HP_USAGE_AFTER_YOUNG_GC :
		  s->refresh == REFRESH_CYCLE || s->refresh == REFRESH_MAJOR ? HP_USAGE_AFTER_CONCURRENT_CYCLE :
									       HP_USAGE_AFTER_FULL_GC;
	return 0;
}

static void lastgc_fini(struct hp_probe *p)
{
	free(p->mode_state[HP_MODE_LAST_GC_FIELDS]);
	p->mode_state[HP_MODE_LAST_GC_FIELDS] = NULL;
}

bool hp_lastgc_refreshed_by(struct hp_probe *p, bool full_gc)
{
	const struct lastgc_state *s = p->mode_state[HP_MODE_LAST_GC_FIELDS];
	if (!s)
		return false;
	return s->refresh == REFRESH_YOUNG || s->refresh == REFRESH_CYCLE || full_gc;
}

const struct hp_mode_ops hp_mode_last_gc_fields = {
	.mode = HP_MODE_LAST_GC_FIELDS,
	.needs_jni = false,
	.init = lastgc_init,
	.read = lastgc_read,
	.fini = lastgc_fini,
};
