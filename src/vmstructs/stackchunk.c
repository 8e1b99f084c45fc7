/* Heap stack chunks of the mounted virtual thread (see stackchunk.h). */
#include "vmstructs/stackchunk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmstructs/symdata.h"
#include "vmstructs/errmsg.h"
#include "vmstructs/frame_arch.h"
#include "vmstructs/safefetch.h"
#include "vmstructs/safemem.h"
#include "vmstructs/vmstructs.h"

#define WORD 8
#define MAX_CHUNK_WORDS (1 << 22)       /* 32 MiB of frames is not a chunk */
#define MAX_HEADER 256                  /* bytes before a chunk's stack */
/* ZGC's generational pointer: remapped bits 12-15, the address shifted
 * left past them by 13 + the set bit's index (zAddress.inline.hpp,
 * ZPointerLoadShiftTable; ZPointerRemappedShift 12). */
#define ZPOINTER_REMAPPED_SHIFT 12
/* single-generation ZGC: colours sit at and above bit 42 at the lowest
 * (XAddressOffsetBits >= 42); two references to one object agree below */
#define X_OFFSET_MASK ((1ull << 42) - 1)
#define FLAG_HAS_INTERPRETED_FRAMES 1   /* stackChunkOop.hpp */

static const char *const result_names[HP_SC_RESULTS] = {
	"no continuation entry", "not a virtual thread's continuation", "the thawed frames end elsewhere",
	"heap read failed", "chunk fields read as nonsense", "a frame in the chunk did not check out",
};

const char *hp_stackchunk_result_name(int result)
{
	return result < 0 && result >= -HP_SC_RESULTS ? result_names[-result - 1] : "ok";
}

/* A field VMStructs does not publish (symbols/ field.<type>.<name>). */
static int data_offset(const struct hp_vms *v, const struct hp_symdata *d, const char *type, const char *name,
		       int64_t *out, char *err, size_t errlen)
{
	char how[200];
	int rc = hp_symdata_member(v, d, NULL, type, name, out, how, sizeof(how));
	if (rc)
		return hp_fail(err, errlen, rc, "%s", how);
	return *out >= 0 && *out < 65536 ? 0 : hp_fail(err, errlen, -EINVAL, "%s::%s is at %lld", type, name,
						       (long long)*out);
}

/* A static int libjvm keeps an offset in (symbols/ static.<key>). */
static int static_int(const void *(*lookup)(void *, const char *), void *ctx, const char *key, int32_t *out,
		      bool optional, char *err, size_t errlen)
{
	const void *at = lookup(ctx, key);
	int32_t v;
	if (!at) {
		*out = -1;
		return optional ? 0 : hp_fail(err, errlen, -ENOENT, "libjvm has no %s (symbols/ static.%s)", key, key);
	}
	if (hp_safe_read(&v, at, 4) || v < 0 || v >= MAX_HEADER)
		return hp_fail(err, errlen, -EINVAL, "%s reads as %d", key, v);
	*out = v;
	return 0;
}

int hp_stackchunk_init(struct hp_stackchunk *c, const struct hp_vms *v, const struct hp_symdata *d,
		       const void *(*lookup)(void *ctx, const char *key), void *ctx, enum hp_heap_oops oops,
		       bool x_colored, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	if (!v || !d || !lookup)
		return hp_fail(err, errlen, -ENOENT, "no VMStructs, symbols/ data or libjvm symbols");
	int rc;
	if ((rc = data_offset(v, d, "JavaThread", "_cont_entry", &c->off_cont_entry, err, errlen)) ||
	    (rc = data_offset(v, d, "ContinuationEntry", "_cont", &c->entry_cont, err, errlen)) ||
	    (rc = data_offset(v, d, "ContinuationEntry", "_flags", &c->entry_flags, err, errlen)) ||
	    (rc = data_offset(v, d, "ContinuationEntry", "_argsize", &c->entry_argsize, err, errlen)))
		return rc;
	const struct hp_vms_type *jt = hp_vms_type(v, "JavaThread");
	if (!jt || c->off_cont_entry + WORD > (int64_t)jt->size)
		return hp_fail(err, errlen, -EINVAL, "JavaThread::_cont_entry (at %lld) lies past JavaThread (%llu bytes)",
			       (long long)c->off_cont_entry, jt ? (unsigned long long)jt->size : 0ull);
	/* the entry is read inside its 64 bytes (ContinuationEntry::size()) */
	if (c->entry_cont + WORD > 64 || c->entry_flags + 4 > 64 || c->entry_argsize + 4 > 64)
		return hp_fail(err, errlen, -EINVAL, "field.ContinuationEntry.* lie past the entry's 64 bytes");
	if ((rc = static_int(lookup, ctx, "jdk_internal_vm_Continuation._tail_offset", &c->cont_tail, false, err,
			     errlen)) ||
	    (rc = static_int(lookup, ctx, "jdk_internal_vm_StackChunk._parent_offset", &c->chunk_parent, false, err,
			     errlen)) ||
	    (rc = static_int(lookup, ctx, "jdk_internal_vm_StackChunk._size_offset", &c->chunk_size, false, err,
			     errlen)) ||
	    (rc = static_int(lookup, ctx, "jdk_internal_vm_StackChunk._sp_offset", &c->chunk_sp, false, err, errlen)) ||
	    (rc = static_int(lookup, ctx, "jdk_internal_vm_StackChunk._flags_offset", &c->chunk_flags, false, err,
			     errlen)) ||
	    (rc = static_int(lookup, ctx, "jdk_internal_vm_StackChunk._cont_offset", &c->chunk_cont, false, err,
			     errlen)) ||
	    (rc = static_int(lookup, ctx, "jdk_internal_vm_StackChunk._bottom_offset", &c->chunk_bottom, true, err,
			     errlen)) ||
	    (rc = static_int(lookup, ctx, "jdk_internal_vm_StackChunk._argsize_offset", &c->chunk_argsize, true, err,
			     errlen)) ||
	    (rc = static_int(lookup, ctx, "InstanceStackChunkKlass._offset_of_stack", &c->offset_of_stack, false, err,
			     errlen)))
		return rc;
	/* JDK 21 GA counts argsize, later releases (and 21's updates) bottom */
	if (c->chunk_bottom < 0 && c->chunk_argsize < 0)
		return hp_fail(err, errlen, -ENOENT, "libjvm has neither StackChunk._bottom_offset nor _argsize_offset");
	int ref = oops == HP_OOPS_NARROW ? 4 : WORD;
	int32_t ints[] = { c->chunk_size, c->chunk_sp, c->chunk_bottom >= 0 ? c->chunk_bottom : c->chunk_argsize };
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (ints[i] + 4 > c->offset_of_stack)
			return hp_fail(err, errlen, -EINVAL, "a StackChunk field (at %d) lies past its stack (at %d)",
				       ints[i], c->offset_of_stack);
	if (c->chunk_parent + ref > c->offset_of_stack || c->chunk_cont + ref > c->offset_of_stack ||
	    c->chunk_flags + 1 > c->offset_of_stack || (c->offset_of_stack & (WORD - 1)))
		return hp_fail(err, errlen, -EINVAL, "StackChunk's fields do not fit before its stack (at %d)",
			       c->offset_of_stack);
	int32_t slot;
	if ((rc = hp_symdata_frame(v, d, HP_ARCH_NAME, "interpreter_frame_last_sp_offset", &slot, err, errlen)))
		return rc;
	c->interp_last_sp_slot = slot;
	if ((rc = hp_symdata_frame(v, d, HP_ARCH_NAME, "interpreter_frame_locals_offset", &slot, err, errlen)))
		return rc;
	c->interp_locals_slot = slot;
	c->oops = oops;
	c->x_colored = x_colored;
	if (oops == HP_OOPS_NARROW) {
		/* JDK 21: CompressedOops::_narrow_oop (a NarrowPtrStruct:
		 * _base, then _shift); JDK 25: _base and _shift */
		const void *base = hp_vms_address(v, "CompressedOops", "_base");
		const void *shift = hp_vms_address(v, "CompressedOops", "_shift");
		if (!base || !shift) {
			base = hp_vms_address(v, "CompressedOops", "_narrow_oop._base");
			shift = hp_vms_address(v, "CompressedOops", "_narrow_oop._shift");
		}
		int32_t sh;
		if (!base || !shift)
			return hp_fail(err, errlen, -ENOENT, "VMStructs has no CompressedOops base and shift");
		if (hp_safe_read(&c->narrow_base, base, WORD) || hp_safe_read(&sh, shift, 4) || sh < 0 || sh > 8)
			return hp_fail(err, errlen, -EINVAL, "CompressedOops base/shift read as nonsense");
		c->narrow_shift = sh;
	}
	return 0;
}

/* n bytes of the heap at src: by SafeFetchN word by word, or in one safe
 * read. */
static bool heap_read(const struct hp_stackchunk *c, void *dst, uintptr_t src, size_t n)
{
	return hp_safefetch_read(c->fetch, dst, src, n) == 0;
}

/* A reference field's bits, as read from `p`, decoded to an address. */
static bool ref_field(const struct hp_stackchunk *c, const unsigned char *p, uintptr_t *out)
{
	if (c->oops == HP_OOPS_NARROW) {
		uint32_t n;
		memcpy(&n, p, 4);
		*out = n ? c->narrow_base + ((uintptr_t)n << c->narrow_shift) : 0;
		return true;
	}
	uint64_t w;
	memcpy(&w, p, WORD);
	if (c->oops == HP_OOPS_ZPOINTER && w) {
		unsigned remapped = (unsigned)(w >> ZPOINTER_REMAPPED_SHIFT) & 0xf;
		if (!remapped)
			return false;   /* not null, and no remapped bit: not a zpointer */
		w >>= ZPOINTER_REMAPPED_SHIFT + 1 + __builtin_ctz(remapped);
	}
	*out = (uintptr_t)w;
	return true;
}

static bool same_object(const struct hp_stackchunk *c, uintptr_t a, uintptr_t b)
{
	return c->x_colored ? ((a ^ b) & X_OFFSET_MASK) == 0 : a == b;
}

/* Reads chunk `oop`'s fields into f, and as much of the chunk as one read
 * gives (the window, which then holds its first frames too: one system
 * call for a chunk of up to HP_CHUNK_WINDOW_WORDS words). */
static int read_chunk(const struct hp_stackchunk *c, uintptr_t oop, uintptr_t cont, struct hp_chunk_frames *f,
		      struct hp_chunk_window *win)
{
	if (!oop || (oop & (WORD - 1)))
		return HP_SC_BAD_CHUNK;
	long got;
	win->lo = win->hi = 0;
	win->fetch = c->fetch;
	if (c->fetch)           /* the fields only: frame words are fetched one by one */
		got = heap_read(c, win->words, oop, (size_t)c->offset_of_stack) ? c->offset_of_stack : -1;
	else
		got = hp_safe_read_some(win->words, (const void *)oop, sizeof(win->words));
	if (got < c->offset_of_stack)
		return HP_SC_UNREADABLE;
	const unsigned char *h = (const unsigned char *)win->words;
	int32_t size, sp, bottom;
	memcpy(&size, h + c->chunk_size, 4);
	memcpy(&sp, h + c->chunk_sp, 4);
	if (c->chunk_bottom >= 0) {
		memcpy(&bottom, h + c->chunk_bottom, 4);
	} else {
		int32_t argsize;
		memcpy(&argsize, h + c->chunk_argsize, 4);
		int64_t b = (int64_t)size - argsize;
		bottom = b < INT32_MIN || b > INT32_MAX ? -1 : (int32_t)b;
	}
	uintptr_t back = 0, parent = 0;
	if (!ref_field(c, h + c->chunk_cont, &back) || !ref_field(c, h + c->chunk_parent, &parent))
		return HP_SC_BAD_CHUNK;
	if (size <= 0 || size > MAX_CHUNK_WORDS || sp < 0 || bottom < 0 || bottom > size || sp > bottom ||
	    !same_object(c, back, cont) || (parent & (WORD - 1)))
		return HP_SC_BAD_CHUNK;
	f->chunk = oop;
	f->start = oop + (uintptr_t)c->offset_of_stack;
	f->limit = f->start + (uintptr_t)size * WORD;
	f->sp = f->start + (uintptr_t)sp * WORD;
	f->end = f->start + (uintptr_t)bottom * WORD;
	f->mixed = h[c->chunk_flags] & FLAG_HAS_INTERPRETED_FRAMES;
	f->parent = parent;
	f->cont = cont;
	/* the window: what was read, inside this chunk's stack */
	win->floor = f->start;
	win->limit = f->limit;
	if (!c->fetch) {
		win->lo = oop;
		win->hi = oop + (uintptr_t)got < f->limit ? oop + ((uintptr_t)got & ~(uintptr_t)(WORD - 1)) : f->limit;
	}
	return 0;
}

int hp_stackchunk_first(const struct hp_stackchunk *c, uintptr_t thread, uintptr_t barrier_sp, uintptr_t stack_lo,
			uintptr_t stack_hi, struct hp_chunk_frames *out, struct hp_chunk_window *win)
{
	uintptr_t entry = *(const volatile uintptr_t *)(thread + (uintptr_t)c->off_cont_entry);
	if (!entry || (entry & (WORD - 1)) || entry < stack_lo || entry + 64 > stack_hi)
		return HP_SC_NO_ENTRY;
	int32_t flags = *(const volatile int32_t *)(entry + (uintptr_t)c->entry_flags);
	int32_t argsize = *(const volatile int32_t *)(entry + (uintptr_t)c->entry_argsize);
	uintptr_t cont = *(const volatile uintptr_t *)(entry + (uintptr_t)c->entry_cont);
	if (!flags)
		return HP_SC_NOT_VIRTUAL;
	/* ContinuationEntry::bottom_sender_sp: where thawed frames end */
	if (argsize < 0 || argsize > 256 ||
	    ((entry - (argsize > 0 ? (uintptr_t)argsize * WORD : 0)) & ~(uintptr_t)15) != barrier_sp)
		return HP_SC_ENTRY_ELSEWHERE;
	if (!cont || (cont & (WORD - 1)))
		return HP_SC_BAD_CHUNK;
	unsigned char tail[WORD];
	uintptr_t chunk;
	if (!heap_read(c, tail, cont + (uintptr_t)c->cont_tail, c->oops == HP_OOPS_NARROW ? 4 : WORD))
		return HP_SC_UNREADABLE;
	if (!ref_field(c, tail, &chunk))
		return HP_SC_BAD_CHUNK;
	int rc = read_chunk(c, chunk, cont, out, win);
	if (rc == 0 && out->sp == out->end) {
		/* an emptied tail: the frames are in its parent, and no
		 * chunk above that is empty */
		rc = hp_stackchunk_next(c, out, win);
		rc = rc == 1 ? 0 : rc == 0 ? HP_SC_BAD_CHUNK : rc;
	}
	return rc;
}

int hp_stackchunk_next(const struct hp_stackchunk *c, struct hp_chunk_frames *f, struct hp_chunk_window *win)
{
	if (!f->parent)
		return 0;
	int rc = read_chunk(c, f->parent, f->cont, f, win);
	if (rc)
		return rc;
	return f->sp < f->end ? 1 : HP_SC_BAD_CHUNK;
}

void hp_chunk_window_reset(struct hp_chunk_window *win, uintptr_t floor, uintptr_t limit,
			   const struct hp_safefetch *fetch)
{
	win->lo = win->hi = 0;
	win->fetch = fetch;
	win->floor = floor;
	win->limit = limit;
}

bool hp_chunk_word(struct hp_chunk_window *win, uintptr_t addr, uintptr_t *out)
{
	if ((addr & (WORD - 1)) || addr < win->floor || addr >= win->limit)
		return false;
	if (win->fetch)
		return hp_safefetch_word(win->fetch, addr, out);
	if (addr < win->lo || addr >= win->hi) {
		/* Frames are read from the top down (rising addresses): a
		 * window starts a little below the word asked for, for the
		 * fp-relative slots of an interpreted frame. */
		uintptr_t lo = addr - 16 * WORD < win->floor || addr < 16 * WORD ? win->floor : addr - 16 * WORD;
		uintptr_t hi = win->limit - lo > HP_CHUNK_WINDOW_WORDS * WORD ? lo + HP_CHUNK_WINDOW_WORDS * WORD
									   : win->limit;
		if (hp_safe_read(win->words, (const void *)lo, hi - lo))
			return false;
		win->lo = lo;
		win->hi = hi;
	}
	*out = win->words[(addr - win->lo) / WORD];
	return true;
}
