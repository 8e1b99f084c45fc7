#include "heapusage/gckind.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmstructs/safemem.h"

/* Heap classes across JDK 11..25 (gc/NAME/NAMEHeap.hpp). Names, not
 * releases: a class that appears in a new release is one more row. */
static const struct {
	const char *heap_class;
	enum hp_gc_kind kind;
	int generational;           /* -1: decided elsewhere */
} heap_classes[] = {
	{ "G1CollectedHeap", HP_GC_G1, 1 },
	{ "ParallelScavengeHeap", HP_GC_PARALLEL, 1 },
	{ "SerialHeap", HP_GC_SERIAL, 1 },
	{ "GenCollectedHeap", HP_GC_SERIAL, 1 },   /* Serial's base before it was split out */
	{ "CMSHeap", HP_GC_CMS, 1 },               /* JDK 11..13 */
	{ "ZCollectedHeap", HP_GC_Z, -1 },         /* single-gen in 11..20, generational in 21+ */
	{ "XCollectedHeap", HP_GC_Z, 0 },          /* JDK 21..23 single-generation ZGC */
	{ "ShenandoahHeap", HP_GC_SHENANDOAH, 0 },
	{ "ShenandoahGenerationalHeap", HP_GC_SHENANDOAH, 1 },
	{ "EpsilonHeap", HP_GC_EPSILON, 0 },
};

static const struct {
	const char *flag;
	enum hp_gc_kind kind;
} gc_flags[] = {
	{ "UseG1GC", HP_GC_G1 },
	{ "UseParallelGC", HP_GC_PARALLEL },
	{ "UseSerialGC", HP_GC_SERIAL },
	{ "UseZGC", HP_GC_Z },
	{ "UseShenandoahGC", HP_GC_SHENANDOAH },
	{ "UseEpsilonGC", HP_GC_EPSILON },
	{ "UseConcMarkSweepGC", HP_GC_CMS },
};

const char *hp_gc_kind_name(enum hp_gc_kind kind)
{
	switch (kind) {
	case HP_GC_SERIAL: return "serial";
	case HP_GC_PARALLEL: return "parallel";
	case HP_GC_G1: return "g1";
	case HP_GC_Z: return "z";
	case HP_GC_SHENANDOAH: return "shenandoah";
	case HP_GC_EPSILON: return "epsilon";
	case HP_GC_CMS: return "cms";
	case HP_GC_UNKNOWN: break;
	}
	return "unknown";
}

static int heap_class_index(const char *heap_class)
{
	for (size_t i = 0; i < sizeof(heap_classes) / sizeof(heap_classes[0]); i++)
		if (strcmp(heap_classes[i].heap_class, heap_class) == 0)
			return (int)i;
	return -1;
}

bool hp_vtable_class_name(const char *sym, char *out, size_t cap)
{
	/* Itanium ABI: _ZTV <length> <identifier> for a class at global scope. */
	if (strncmp(sym, "_ZTV", 4) != 0 || !isdigit((unsigned char)sym[4]))
		return false;
	char *end;
	unsigned long len = strtoul(sym + 4, &end, 10);
	if (len == 0 || len >= cap || strlen(end) != len)
		return false;
	memcpy(out, end, len);
	out[len] = '\0';
	return true;
}

static void name_class(const struct hp_symtab *syms, struct hp_heap_info *out)
{
	const struct hp_sym *s = hp_symtab_containing(syms, (uint64_t)(uintptr_t)out->vptr);
	if (!s) {
		snprintf(out->how, sizeof(out->how), "vptr %p is in no known symbol", out->vptr);
		return;
	}
	snprintf(out->vtable_symbol, sizeof(out->vtable_symbol), "%s", s->name);
	if (!hp_vtable_class_name(s->name, out->heap_class, sizeof(out->heap_class))) {
		snprintf(out->how, sizeof(out->how), "vptr %p lies in %s, not a vtable", out->vptr, s->name);
		return;
	}
	int i = heap_class_index(out->heap_class);
	if (i >= 0) {
		out->kind_by_class = heap_classes[i].kind;
		out->generational = heap_classes[i].generational;
	}
}

static void read_flags(const struct hp_vmflags *flags, struct hp_heap_info *out)
{
	for (size_t i = 0; i < sizeof(gc_flags) / sizeof(gc_flags[0]); i++) {
		bool on;
		if (hp_vmflags_bool(flags, gc_flags[i].flag, &on) == 0 && on) {
			out->kind_by_flags = gc_flags[i].kind;
			snprintf(out->flag_name, sizeof(out->flag_name), "%s", gc_flags[i].flag);
			return;
		}
	}
}

static void decide_z_generational(const struct hp_vms *vms, const struct hp_vmflags *flags,
				  struct hp_heap_info *out)
{
	bool gen;
	if (flags && hp_vmflags_bool(flags, "ZGenerational", &gen) == 0) {
		out->generational = gen;
		return;
	}
	if (out->generational >= 0)
		return;
	/* Generational ZGC publishes colored-pointer masks named ZPointer*;
	 * single-generation ZGC published _ZAddressGoodMask instead. */
	if (hp_vms_field(vms, "ZGlobalsForVMStructs", "_ZPointerLoadGoodMask"))
		out->generational = 1;
	else if (hp_vms_field(vms, "ZGlobalsForVMStructs", "_ZAddressGoodMask"))
		out->generational = 0;
}

/* The heap object and what every collector's has (collectedHeap.hpp). */
struct heap_layout {
	const void *slot;
	int64_t reserved, start_off, words_off, total_off;
};
#define HL(type, field, what, member, need) \
	{ type, field, what, offsetof(struct heap_layout, member), need, 0, 0 }
static const struct hp_vms_entry heap_table[] = {
	HL("Universe", "_collectedHeap", HP_VMS_ADDRESS, slot, HP_VMS_REQUIRED),
	HL("CollectedHeap", "_reserved", HP_VMS_OFFSET, reserved, HP_VMS_OPTIONAL),
	HL("MemRegion", "_start", HP_VMS_OFFSET, start_off, HP_VMS_OPTIONAL),
	HL("MemRegion", "_word_size", HP_VMS_OFFSET, words_off, HP_VMS_OPTIONAL),
	HL("CollectedHeap", "_total_collections", HP_VMS_OFFSET, total_off, HP_VMS_OPTIONAL),
};

int hp_heap_detect(const struct hp_vms *vms, const struct hp_symtab *syms, const struct hp_vmflags *flags,
		   struct hp_heap_info *out)
{
	memset(out, 0, sizeof(*out));
	out->generational = -1;
	if (!vms) {
		snprintf(out->err, sizeof(out->err), "no VMStructs");
		return out->rc = -ENOENT;
	}
	struct heap_layout l;
	int rc = hp_vms_bind(vms, heap_table, HP_VMS_N(heap_table), &l, "the heap", out->err, sizeof(out->err));
	if (rc)
		return out->rc = rc;
	const void *slot = l.slot;
	if (hp_safe_read_ptr(&out->heap, slot)) {
		snprintf(out->err, sizeof(out->err), "Universe::_collectedHeap at %p is unreadable", slot);
		return out->rc = -EFAULT;
	}
	if (!out->heap) {
		snprintf(out->err, sizeof(out->err), "Universe::_collectedHeap is NULL (heap not created yet)");
		return out->rc = -EAGAIN;
	}
	if (hp_safe_read_ptr(&out->vptr, out->heap)) {
		snprintf(out->err, sizeof(out->err), "heap object %p is unreadable", out->heap);
		return out->rc = -EFAULT;
	}

	int64_t reserved = l.reserved, start_off = l.start_off, words_off = l.words_off;
	if (reserved >= 0 && start_off >= 0 && words_off >= 0) {
		const char *base = (const char *)out->heap + reserved;
		uint64_t words = 0;
		if (hp_safe_read(&out->reserved_start, base + start_off, sizeof(out->reserved_start)) == 0 &&
		    hp_safe_read_u64(&words, base + words_off) == 0)
			out->reserved_bytes = words * 8;    /* HeapWordSize on LP64 */
	}
	int64_t total_off = l.total_off;
	if (total_off >= 0)
		hp_safe_read(&out->total_collections, (const char *)out->heap + total_off,
			     sizeof(out->total_collections));

	if (syms)
		name_class(syms, out);
	if (flags)
		read_flags(flags, out);
	if (out->kind_by_class == HP_GC_Z || out->kind_by_flags == HP_GC_Z)
		decide_z_generational(vms, flags, out);

	if (out->kind_by_class && out->kind_by_flags) {
		if (out->kind_by_class == out->kind_by_flags) {
			out->kind = out->kind_by_class;
			snprintf(out->how, sizeof(out->how), "vtable %s and flag %s agree", out->vtable_symbol,
				 out->flag_name);
		} else {
			/* The flag is what the user asked for; the vtable is what
			 * runs. A mismatch means our symbol naming is off. */
			out->kind = out->kind_by_class;
			snprintf(out->how, sizeof(out->how), "CONFLICT: vtable %s says %s but flag %s says %s",
				 out->vtable_symbol, hp_gc_kind_name(out->kind_by_class), out->flag_name,
				 hp_gc_kind_name(out->kind_by_flags));
		}
	} else if (out->kind_by_class) {
		out->kind = out->kind_by_class;
		snprintf(out->how, sizeof(out->how), "vtable %s (no Use*GC flag readable)", out->vtable_symbol);
	} else if (out->kind_by_flags) {
		out->kind = out->kind_by_flags;
		char why[sizeof(out->how)];
		snprintf(why, sizeof(why), "%s", out->how[0] ? out->how : "vtable not named");
		snprintf(out->how, sizeof(out->how), "flag %s (%.150s)", out->flag_name, why);
	} else {
		snprintf(out->err, sizeof(out->err), "GC kind unknown: %s; no Use*GC flag set",
			 out->how[0] ? out->how : "no symbols to name the vtable");
		return out->rc = -ENOENT;
	}
	return out->rc = 0;
}

const char *hp_gc_data_key(const struct hp_heap_info *heap)
{
	if (heap->kind == HP_GC_Z && heap->generational == 1)
		return "zgen";
	return hp_gc_kind_name(heap->kind);
}
