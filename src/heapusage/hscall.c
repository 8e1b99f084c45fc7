/* Modes that call HotSpot's own C++ methods through libffi:
 *
 * "memory-usage-call": MemoryUsage CollectedHeap::memory_usage(), or the
 *   concrete heap's override. MemoryUsage is four size_t (init, used,
 *   committed, max): 32 bytes, trivially copyable, so the Itanium ABI returns
 *   it through a hidden pointer exactly as C returns a 32-byte struct; libffi
 *   with a struct return type does the right thing on every ABI it knows.
 * "heap-summary-call": GCHeapSummary CollectedHeap::create_heap_summary().
 *   GCHeapSummary has a vtable, so it is not trivially copyable and is
 *   always returned through a hidden pointer: in the first argument
 *   register on x86_64 (before `this`), in x8 on aarch64 (the indirect
 *   result register, `this` in x0). A C struct too large for registers
 *   (256 bytes here, room for any GCHeapSummary) is returned the same way
 *   on both, so libffi is told that. Its layout (vptr, a
 *   VirtualSpaceSummary {start, committed_end, reserved_end}, used) comes
 *   from symbols/.
 *
 * Each function address is looked up in the symbol index and must lie in
 * libjvm's executable segments before it is ever called. Neither method
 * allocates in product builds. G1's memory_usage() override takes its
 * MonitoringSupport_lock (never held across a safepoint), so the GC capture
 * prefers create_heap_summary, which takes none.
 */
#include <errno.h>
#include <ffi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapusage/layout.h"
#include "heapusage/modes.h"
#include "heapusage/probe.h"

#define HEAP_SUMMARY_WORDS 32     /* 256 bytes */

struct call_state {
	ffi_cif cif;
	ffi_type *arg_types[2];
	ffi_type ret_type;
	ffi_type *ret_elements[HEAP_SUMMARY_WORDS + 1];
	void *fn;
	void *heap;
	char symbol[128];
	/* heap summary layout */
	int64_t used_off, start_off, committed_end_off, reserved_end_off;
};

/* The symbol for `function` on this heap: symbols/ data first (a heap-class
 * specific entry, then the generic one); without data, the Itanium mangling
 * of HeapClass::function() and CollectedHeap::function(). */
static const struct hp_sym *find_method(struct hp_probe *p, const char *function, const char *heap_class,
					char *reason, size_t len)
{
	const char *names[4];
	char mangled_heap[128], mangled_base[128];
	size_t n = 0;
	const char *specific = hp_symdata_getf(p->data, "symbol.%s.%s", function, heap_class);
	if (specific && strcmp(specific, "none") == 0) {
		snprintf(reason, len, "%s says %s::%s must not be called (%s)", hp_symdata_source(p->data),
			 heap_class, function, "see the comment there");
		return NULL;
	}
	if (specific)
		names[n++] = specific;
	const char *generic = hp_symdata_getf(p->data, "symbol.%s", function);
	if (generic)
		names[n++] = generic;
	if (!p->data) {
		snprintf(mangled_heap, sizeof(mangled_heap), "_ZN%zu%s%zu%sEv", strlen(heap_class), heap_class,
			 strlen(function), function);
		snprintf(mangled_base, sizeof(mangled_base), "_ZN13CollectedHeap%zu%sEv", strlen(function), function);
		names[n++] = mangled_heap;
		names[n++] = mangled_base;
	}
	for (size_t i = 0; i < n; i++) {
		const struct hp_sym *s = hp_probe_sym(p, names[i]);
		if (s)
			return s;
	}
	snprintf(reason, len, "no %s symbol in libjvm (tried %s%s%s)", function, n ? names[0] : "nothing",
		 n > 1 ? ", " : "", n > 1 ? names[1] : "");
	return NULL;
}

static int common_init(struct hp_probe *p, enum hp_mode mode, const char *function, struct call_state **out,
		       char *reason, size_t len)
{
	const struct hp_heap_info *heap = hp_probe_heap(p);
	if (!heap) {
		snprintf(reason, len, "waiting for the heap: %s", p->reason[HP_PART_HEAP]);
		return p->status[HP_PART_HEAP] == -EAGAIN ? -EAGAIN : -ENOENT;
	}
	if (!p->syms) {
		snprintf(reason, len, "needs libjvm .symtab: %s", p->reason[HP_PART_SYMBOLS]);
		return -ENOENT;
	}
	const struct hp_sym *sym = find_method(p, function, heap->heap_class[0] ? heap->heap_class : "CollectedHeap",
					       reason, len);
	if (!sym)
		return -ENOENT;
	if (!hp_probe_sym_is_text_function(p, sym)) {
		snprintf(reason, len, "%s at 0x%llx is not a function in libjvm's text", sym->name,
			 (unsigned long long)sym->addr);
		return -EFAULT;
	}
	struct call_state *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fn = (void *)(uintptr_t)sym->addr;
	s->heap = (void *)heap->heap;
	snprintf(s->symbol, sizeof(s->symbol), "%s", sym->name);
	*out = s;
	p->mode_state[mode] = s;
	return 0;
}

static int memory_usage_init(struct hp_probe *p, char *reason, size_t len)
{
	struct call_state *s;
	int rc = common_init(p, HP_MODE_MEMORY_USAGE_CALL, "memory_usage", &s, reason, len);
	if (rc)
		return rc;
	for (int i = 0; i < 4; i++)
		s->ret_elements[i] = &ffi_type_uint64;
	s->ret_elements[4] = NULL;
	s->ret_type = (ffi_type){ .size = 0, .alignment = 0, .type = FFI_TYPE_STRUCT, .elements = s->ret_elements };
	s->arg_types[0] = &ffi_type_pointer;
	if (ffi_prep_cif(&s->cif, FFI_DEFAULT_ABI, 1, &s->ret_type, s->arg_types) != FFI_OK || s->ret_type.size != 32) {
		snprintf(reason, len, "libffi cannot describe MemoryUsage (size %zu)", s->ret_type.size);
		return -EINVAL;
	}
	return 0;
}

static int memory_usage_read(struct hp_probe *p, JNIEnv *env, struct hp_mode_reading *r)
{
	struct call_state *s = p->mode_state[HP_MODE_MEMORY_USAGE_CALL];
	uint64_t mu[4] __attribute__((aligned(16)));      /* init, used, committed, max */
	void *args[1] = { &s->heap };
	ffi_call(&s->cif, FFI_FN(s->fn), mu, args);
	r->used = mu[1];
	r->committed = mu[2];
	r->max = mu[3];
	r->kind = HP_USAGE_CURRENT;
	return 0;
}

static int heap_summary_init(struct hp_probe *p, char *reason, size_t len)
{
	struct call_state *s;
	int rc = common_init(p, HP_MODE_HEAP_SUMMARY_CALL, "create_heap_summary", &s, reason, len);
	if (rc)
		return rc;
	char how[160];
	int64_t heap_off;
	if ((rc = hp_layout_member(p, "GCHeapSummary", "_heap", &heap_off, how, sizeof(how))) ||
	    (rc = hp_layout_member(p, "GCHeapSummary", "_used", &s->used_off, how, sizeof(how))) ||
	    (rc = hp_layout_member(p, "VirtualSpaceSummary", "_start", &s->start_off, how, sizeof(how))) ||
	    (rc = hp_layout_member(p, "VirtualSpaceSummary", "_committed_end", &s->committed_end_off, how,
				   sizeof(how))) ||
	    (rc = hp_layout_member(p, "VirtualSpaceSummary", "_reserved_end", &s->reserved_end_off, how,
				   sizeof(how)))) {
		snprintf(reason, len, "GCHeapSummary layout: %s", how);
		return rc;
	}
	s->start_off += heap_off;
	s->committed_end_off += heap_off;
	s->reserved_end_off += heap_off;
	if (s->used_off < 0 || s->start_off < 0 || s->committed_end_off < 0 || s->reserved_end_off < 0 ||
	    s->used_off > 248 || s->reserved_end_off > 248 || s->committed_end_off > 248 || s->start_off > 248) {
		snprintf(reason, len, "GCHeapSummary layout outside [0, 256) bytes");
		return -EINVAL;
	}
	for (int i = 0; i < HEAP_SUMMARY_WORDS; i++)
		s->ret_elements[i] = &ffi_type_uint64;
	s->ret_elements[HEAP_SUMMARY_WORDS] = NULL;
	s->ret_type = (ffi_type){ .size = 0, .alignment = 0, .type = FFI_TYPE_STRUCT, .elements = s->ret_elements };
	s->arg_types[0] = &ffi_type_pointer;
	if (ffi_prep_cif(&s->cif, FFI_DEFAULT_ABI, 1, &s->ret_type, s->arg_types) != FFI_OK ||
	    s->ret_type.size != HEAP_SUMMARY_WORDS * 8) {
		snprintf(reason, len, "libffi cannot describe a %d-byte GCHeapSummary (size %zu)", HEAP_SUMMARY_WORDS * 8,
			 s->ret_type.size);
		return -EINVAL;
	}
	return 0;
}

static int heap_summary_read(struct hp_probe *p, JNIEnv *env, struct hp_mode_reading *r)
{
	struct call_state *s = p->mode_state[HP_MODE_HEAP_SUMMARY_CALL];
	/* Room for any GCHeapSummary; its destructor is trivial in effect
	 * (no resources), so we never run it. */
	unsigned char summary[HEAP_SUMMARY_WORDS * 8] __attribute__((aligned(16)));
	void *args[1] = { &s->heap };
	ffi_call(&s->cif, FFI_FN(s->fn), summary, args);
	uint64_t used, start, committed_end, reserved_end;
	memcpy(&used, summary + s->used_off, 8);
	memcpy(&start, summary + s->start_off, 8);
	memcpy(&committed_end, summary + s->committed_end_off, 8);
	memcpy(&reserved_end, summary + s->reserved_end_off, 8);
	if (committed_end < start || reserved_end < committed_end)
		return -EBADMSG;
	r->used = used;
	r->committed = committed_end - start;
	/* ZGC and Shenandoah report no contiguous reservation; max stays unknown. */
	r->max = reserved_end - start;
	r->kind = HP_USAGE_CURRENT;
	return 0;
}

static void memory_usage_fini(struct hp_probe *p)
{
	free(p->mode_state[HP_MODE_MEMORY_USAGE_CALL]);
	p->mode_state[HP_MODE_MEMORY_USAGE_CALL] = NULL;
}

static void heap_summary_fini(struct hp_probe *p)
{
	free(p->mode_state[HP_MODE_HEAP_SUMMARY_CALL]);
	p->mode_state[HP_MODE_HEAP_SUMMARY_CALL] = NULL;
}

const struct hp_mode_ops hp_mode_memory_usage_call = {
	.mode = HP_MODE_MEMORY_USAGE_CALL,
	.needs_jni = false,
	.init = memory_usage_init,
	.read = memory_usage_read,
	.fini = memory_usage_fini,
};

const struct hp_mode_ops hp_mode_heap_summary_call = {
	.mode = HP_MODE_HEAP_SUMMARY_CALL,
	.needs_jni = false,
	.init = heap_summary_init,
	.read = heap_summary_read,
	.fini = heap_summary_fini,
};
