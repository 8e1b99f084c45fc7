/* Which collector runs, and where its heap object is.
 *
 * Two independent witnesses: the heap object's dynamic class, named by its
 * vtable pointer through the libjvm symbol index (_ZTV15G1CollectedHeap ...),
 * and the -XX:+Use*GC flags read from the JVMFlag table. Either alone is
 * enough; when both are there they must agree.
 */
#ifndef HP_GCKIND_H
#define HP_GCKIND_H

#include <stdbool.h>
#include <stdint.h>

#include "heapprobe.h"
#include "vmstructs/symtab.h"
#include "vmstructs/vmflags.h"
#include "vmstructs/vmstructs.h"

struct hp_heap_info {
	int rc;                         /* 0, or negative errno: see err */
	char err[256];
	const void *heap;               /* CollectedHeap* (Universe::_collectedHeap) */
	const void *vptr;
	char vtable_symbol[96];         /* "_ZTV15G1CollectedHeap", "" if unnamed */
	char heap_class[64];            /* "G1CollectedHeap", "" if unknown */
	enum hp_gc_kind kind_by_class, kind_by_flags, kind;
	char flag_name[32];             /* the Use*GC flag found set, "" if none */
	int generational;               /* 1, 0, or -1 unknown */
	char how[200];                  /* how `kind` was determined, one line */
	uintptr_t reserved_start;       /* CollectedHeap::_reserved */
	uint64_t reserved_bytes;
	unsigned total_collections;     /* CollectedHeap::_total_collections */
};

/* Fills `out`; never faults. `syms` and `flags` may be NULL. Returns out->rc. */
int hp_heap_detect(const struct hp_vms *vms, const struct hp_symtab *syms, const struct hp_vmflags *flags,
		   struct hp_heap_info *out);

/* "_ZTV15G1CollectedHeap" -> "G1CollectedHeap". false if not a plain vtable name. */
bool hp_vtable_class_name(const char *sym, char *out, size_t cap);

/* The collector's name in symbols/ keys: "g1", ..., "z" for single-
 * generation ZGC and "zgen" for generational ZGC. */
const char *hp_gc_data_key(const struct hp_heap_info *heap);

#endif
