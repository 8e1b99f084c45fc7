/* Stack keys from the calling thread's own frames (see framewalk.h). */
#include "vmstructs/framewalk.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vmstructs/symdata.h"
#include "vmstructs/errmsg.h"
#include "vmstructs/frame_arch.h"
#include "vmstructs/libjvm.h"
#include "vmstructs/safemem.h"
#include "vmstructs/stackchunk.h"
#include "vmstructs/vmstructs.h"

#define WORD 8
#define MAX_PHYSICAL_FRAMES 1024
#define MAX_FRAME_WORDS (1 << 16)       /* a frame larger than 512 KiB is not one */
#define MAX_SEGMENT_HOPS 65536
#define KEY_ENTRY_TAG 0x454e545259ull   /* "ENTRY": an entry frame (no Java code) */

static const char *const result_names[HP_FW_RESULTS] = {
	"no Java frames", "not the calling thread", "read outside the checked ranges",
	"pc outside the code cache", "unexpected code blob", "deoptimized frame", "stack deeper than the key",
	"virtual thread frames in a heap stack chunk, past the return barrier",
};

const char *hp_framewalk_result_name(int result)
{
	return result < 0 && result >= -HP_FW_RESULTS ? result_names[-result - 1] : "ok";
}

/* The code heaps: CodeCache::_heaps, a GrowableArray<CodeHeap*>*. */
struct heap_layout {
	const void *heaps_at;
	int64_t off_len, off_data, off_mem, off_seg, off_log2, off_vlow, off_vhigh;
};
#define HL(type, field, what, member) \
	{ type, field, what, offsetof(struct heap_layout, member), HP_VMS_REQUIRED, 0, 0 }
static const struct hp_vms_entry heap_table[] = {
	HL("CodeCache", "_heaps", HP_VMS_ADDRESS, heaps_at),
	HL("GrowableArrayBase|GenericGrowableArray", "_len", HP_VMS_OFFSET, off_len),   /* the second: JDK 11 */
	HL("GrowableArray<int>", "_data", HP_VMS_OFFSET, off_data),
	HL("CodeHeap", "_memory", HP_VMS_OFFSET, off_mem),
	HL("CodeHeap", "_segmap", HP_VMS_OFFSET, off_seg),
	HL("CodeHeap", "_log2_segment_size", HP_VMS_OFFSET, off_log2),
	HL("VirtualSpace", "_low", HP_VMS_OFFSET, off_vlow),
	HL("VirtualSpace", "_high", HP_VMS_OFFSET, off_vhigh),
};

static int read_heaps(struct hp_framewalk *w, const struct hp_vms *v, char *err, size_t errlen)
{
	struct heap_layout l;
	int rc = hp_vms_bind(v, heap_table, HP_VMS_N(heap_table), &l, "frame walker (code heaps)", err, errlen);
	if (rc)
		return rc;
	const void *heaps_at = l.heaps_at;
	int64_t off_len = l.off_len, off_data = l.off_data, off_mem = l.off_mem, off_seg = l.off_seg;
	int64_t off_log2 = l.off_log2, off_vlow = l.off_vlow, off_vhigh = l.off_vhigh;
	const void *array, *data;
	int32_t len;
	if (hp_safe_read_ptr(&array, heaps_at) || !array || hp_safe_read(&len, (const char *)array + off_len, 4) ||
	    hp_safe_read_ptr(&data, (const char *)array + off_data) || !data)
		return hp_fail(err, errlen, -EFAULT, "CodeCache::_heaps is unreadable");
	if (len < 1 || len > HP_FW_MAX_HEAPS)
		return hp_fail(err, errlen, -EINVAL, "CodeCache::_heaps holds %d heaps", len);
	for (int32_t i = 0; i < len; i++) {
		const char *heap;
		int32_t log2;
		uintptr_t low, high, slow, shigh;
		if (hp_safe_read_ptr((const void **)&heap, (const char *)data + (size_t)i * WORD) || !heap ||
		    hp_safe_read(&log2, heap + off_log2, 4) || hp_safe_read(&low, heap + off_mem + off_vlow, WORD) ||
		    hp_safe_read(&high, heap + off_mem + off_vhigh, WORD) ||
		    hp_safe_read(&slow, heap + off_seg + off_vlow, WORD) ||
		    hp_safe_read(&shigh, heap + off_seg + off_vhigh, WORD))
			return hp_fail(err, errlen, -EFAULT, "code heap %d is unreadable", i);
		if (log2 < 4 || log2 > 16 || low > high || slow > shigh || ((high - low) >> log2) > shigh - slow)
			return hp_fail(err, errlen, -EINVAL,
				       "code heap %d reads as nonsense (segment 2^%d, code %zu bytes, map %zu bytes)", i,
				       log2, (size_t)(high - low), (size_t)(shigh - slow));
		struct hp_fw_heap *h = &w->heaps[i];
		h->low = (const volatile uintptr_t *)(heap + off_mem + off_vlow);
		h->high = (const volatile uintptr_t *)(heap + off_mem + off_vhigh);
		h->seg_low = (const volatile uintptr_t *)(heap + off_seg + off_vlow);
		h->seg_high = (const volatile uintptr_t *)(heap + off_seg + off_vhigh);
		h->log2_segment = log2;
	}
	w->nheaps = (unsigned)len;
	return 0;
}

#define FW(type, field, member, need, since, until) \
	{ type, field, HP_VMS_OFFSET, offsetof(struct hp_framewalk, member), need, since, until }

/* What the walker reads of threads and code blobs. */
static const struct hp_vms_entry walker_table[] = {
	{ "JavaThread", NULL, HP_VMS_SIZE, offsetof(struct hp_framewalk, thread_size), HP_VMS_REQUIRED, 0, 0 },
	{ "HeapBlock", NULL, HP_VMS_SIZE, offsetof(struct hp_framewalk, block_header_size), HP_VMS_REQUIRED, 0, 0 },
	FW("JavaThread", "_anchor", off_anchor, HP_VMS_REQUIRED, 0, 0),
	FW("JavaFrameAnchor", "_last_Java_sp", off_last_sp, HP_VMS_REQUIRED, 0, 0),
	FW("JavaFrameAnchor", "_last_Java_fp", off_last_fp, HP_VMS_REQUIRED, 0, 0),
	FW("JavaFrameAnchor", "_last_Java_pc", off_last_pc, HP_VMS_REQUIRED, 0, 0),
	FW("JavaCallWrapper", "_anchor", off_wrapper_anchor, HP_VMS_REQUIRED, 0, 0),
	FW("HeapBlock::Header", "_used", off_block_used, HP_VMS_REQUIRED, 0, 0),
	FW("CodeBlob", "_frame_size", off_frame_size, HP_VMS_REQUIRED, 0, 0),
	FW("nmethod", "_stub_offset", off_stub_offset, HP_VMS_REQUIRED, 0, 0),
	FW("nmethod", "_compile_id", off_compile_id, HP_VMS_REQUIRED, 0, 0),
	/* The stack bounds: in Thread up to 17, in JavaThread since. */
	FW("JavaThread|Thread", "_stack_base", off_stack_base, HP_VMS_REQUIRED, 0, 0),
	FW("JavaThread|Thread", "_stack_size", off_stack_size, HP_VMS_REQUIRED, 0, 0),
	/* Which blobs are nmethods: CodeBlob::_kind where it exists (its
	 * CodeBlob has no vtable), else the name nmethods are built with. */
	FW("CodeBlob", "_kind", off_kind, 1, 25, 0),
	FW("CodeBlob", "_name", off_name, 1, 0, 0),
	/* Where instructions begin: an address up to 21, an offset since. */
	FW("CodeBlob", "_code_begin", off_code_begin, 2, 0, 21),
	FW("CodeBlob", "_code_offset", off_code_offset, 2, 25, 0),
};

/* The call stub's return address and the interpreter's code. */
struct stubs_layout {
	const void *csr, *code;
	int64_t off_buf, off_limit;
};
static const struct hp_vms_entry stubs_table[] = {
	{ "StubRoutines", "_call_stub_return_address", HP_VMS_ADDRESS, offsetof(struct stubs_layout, csr),
	  HP_VMS_REQUIRED, 0, 0 },
	{ "AbstractInterpreter", "_code", HP_VMS_ADDRESS, offsetof(struct stubs_layout, code), HP_VMS_REQUIRED, 0, 0 },
	{ "StubQueue", "_stub_buffer", HP_VMS_OFFSET, offsetof(struct stubs_layout, off_buf), HP_VMS_REQUIRED, 0, 0 },
	{ "StubQueue", "_buffer_limit", HP_VMS_OFFSET, offsetof(struct stubs_layout, off_limit), HP_VMS_REQUIRED, 0, 0 },
};

int hp_framewalk_init(struct hp_framewalk *w, const struct hp_vms *v, const struct hp_symdata *d,
		      const struct hp_libjvm *jvm, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	if (!HP_ARCH_SUPPORTED)
		return hp_fail(err, errlen, -ENOTSUP, "the frame walker has no frame rules for " HP_ARCH_NAME
			       " (src/vmstructs/frame_x86_64.h and frame_aarch64.h are the ones there are)");
	if (!v)
		return hp_fail(err, errlen, -ENOENT, "no VMStructs");
	if (!jvm)
		return hp_fail(err, errlen, -ENOENT, "no libjvm segments");
	w->jvm = jvm;
	int rc = hp_vms_bind(v, walker_table, HP_VMS_N(walker_table), w, "frame walker", err, errlen);
	if (rc)
		return rc;
	if (w->off_kind >= 0 && hp_vms_int_constant(v, "CodeBlobKind::Nmethod", &w->kind_nmethod))
		return hp_fail(err, errlen, -ENOENT, "frame walker: VMStructs has CodeBlob::_kind but no "
			       "CodeBlobKind::Nmethod");
	int32_t wrapper_slot, slot;
	if ((rc = hp_symdata_frame(v, d, HP_ARCH_NAME, "entry_frame_call_wrapper_offset", &wrapper_slot, err, errlen)) ||
	    (rc = hp_symdata_frame(v, d, HP_ARCH_NAME, "interpreter_frame_sender_sp_offset", &w->interp_sender_sp_slot,
				   err, errlen)))
		return rc;
	w->entry_wrapper_slot = wrapper_slot;
	if ((rc = hp_symdata_frame(v, d, HP_ARCH_NAME, "interpreter_frame_method_offset", &slot, err, errlen)))
		return rc;
	w->interp_method_slot = slot;
	if ((rc = hp_symdata_frame(v, d, HP_ARCH_NAME, "interpreter_frame_bcp_offset", &slot, err, errlen)))
		return rc;
	w->interp_bcp_slot = slot;

	struct stubs_layout sl;
	if ((rc = hp_vms_bind(v, stubs_table, HP_VMS_N(stubs_table), &sl, "frame walker (call stub, interpreter)", err,
			      errlen)))
		return rc;
	const void *csr = sl.csr, *code = sl.code;
	int64_t off_buf = sl.off_buf, off_limit = sl.off_limit;
	const void *queue;
	uintptr_t buf;
	int32_t limit;
	if (hp_safe_read(&w->call_stub_return, csr, WORD) || hp_safe_read_ptr(&queue, code) || !queue ||
	    hp_safe_read(&buf, (const char *)queue + off_buf, WORD) ||
	    hp_safe_read(&limit, (const char *)queue + off_limit, 4))
		return hp_fail(err, errlen, -EFAULT, "the interpreter's code or the call stub is unreadable");
	if (!w->call_stub_return || !buf || limit <= 0)
		return hp_fail(err, errlen, -EINVAL, "the interpreter (%p, %d bytes) or the call stub is not generated",
			       (void *)buf, limit);
	w->interp_lo = buf;
	w->interp_hi = buf + (uintptr_t)limit;
	return read_heaps(w, v, err, errlen);
}

int hp_framewalk_set_thread(struct hp_framewalk *w, const void *jni, uintptr_t java_thread, char *err,
			    size_t errlen)
{
	int64_t off = (int64_t)((uintptr_t)jni - java_thread);
	if (!java_thread || off <= 0 || off >= w->thread_size)
		return hp_fail(err, errlen, -EINVAL, "the JNIEnv (%p) is not inside JavaThread %p (%llu bytes)", jni,
			       (void *)java_thread, (unsigned long long)w->thread_size);
	uintptr_t base, size, here = (uintptr_t)&base;
	if (hp_safe_read(&base, (const char *)java_thread + w->off_stack_base, WORD) ||
	    hp_safe_read(&size, (const char *)java_thread + w->off_stack_size, WORD) || size > base ||
	    here < base - size || here >= base)
		return hp_fail(err, errlen, -EINVAL, "JavaThread %p's stack bounds do not hold the calling thread",
			       (void *)java_thread);
	w->env_offset = off;
	return 0;
}

/* ---- the walk: plain loads, each one checked before it is made ---------- */

struct range {
	uintptr_t lo, hi;
};

static inline bool stack_word(const struct range *s, uintptr_t a, uintptr_t *out)
{
	if (a < s->lo || a > s->hi - WORD || (a & (WORD - 1)))
		return false;
	*out = *(const uintptr_t *)a;
	return true;
}

/* CodeHeap::find_block_for + HeapBlock::allocated_space: the blob holding
 * pc, or 0. *heap_hi is the heap's committed end, the bound for reading
 * the blob's header. */
static uintptr_t find_blob(const struct hp_framewalk *w, uintptr_t pc, uintptr_t *heap_hi)
{
	for (unsigned i = 0; i < w->nheaps; i++) {
		const struct hp_fw_heap *h = &w->heaps[i];
		uintptr_t low = *h->low, high = *h->high;
		if (pc < low || pc >= high)
			continue;
		uintptr_t seg_low = *h->seg_low, seg_high = *h->seg_high;
		uintptr_t idx = (pc - low) >> h->log2_segment;
		if (seg_low + idx >= seg_high)
			return 0;
		const volatile uint8_t *map = (const volatile uint8_t *)seg_low;
		if (map[idx] == 0xff)           /* free_sentinel: unused segment */
			return 0;
		for (int hops = 0; map[idx] > 0; hops++) {
			if (hops == MAX_SEGMENT_HOPS || map[idx] > idx)
				return 0;
			idx -= map[idx];
		}
		uintptr_t block = low + (idx << h->log2_segment);
		if (block + w->block_header_size > high || !*(const volatile uint8_t *)(block + w->off_block_used))
			return 0;
		*heap_hi = high;
		return block + w->block_header_size;
	}
	return 0;
}

bool hp_framewalk_in_code(const struct hp_framewalk *w, uintptr_t lo, uintptr_t hi)
{
	for (unsigned i = 0; i < w->nheaps; i++) {
		uintptr_t low = *w->heaps[i].low, high = *w->heaps[i].high;
		if (lo >= low && lo <= hi && hi <= high)
			return true;
	}
	return false;
}

static inline bool blob_field(uintptr_t blob, uintptr_t heap_hi, int64_t off, size_t n)
{
	return blob + (uintptr_t)off + n <= heap_hi;
}

static bool is_nmethod(const struct hp_framewalk *w, uintptr_t blob, uintptr_t heap_hi)
{
	if (w->off_kind >= 0)
		return blob_field(blob, heap_hi, w->off_kind, 1) &&
		       *(const volatile uint8_t *)(blob + w->off_kind) == (uint8_t)w->kind_nmethod;
	if (!blob_field(blob, heap_hi, w->off_name, WORD))
		return false;
	uintptr_t name = *(const volatile uintptr_t *)(blob + w->off_name);
	/* nmethod.cpp names them "nmethod" and "native nmethod" */
	if (hp_libjvm_readable(w->jvm, name, 8) && memcmp((const void *)name, "nmethod", 8) == 0)
		return true;
	return hp_libjvm_readable(w->jvm, name, 15) && memcmp((const void *)name, "native nmethod", 15) == 0;
}

/* The code blob at pc and its frame size: 1 for an nmethod whose code
 * holds pc, 0 for another blob, or an hp_fw_result. */
static int code_frame(const struct hp_framewalk *w, uintptr_t pc, uintptr_t *blob_out, int32_t *frame_words)
{
	uintptr_t heap_hi = 0, blob = find_blob(w, pc, &heap_hi);
	if (!blob)
		return HP_FW_UNKNOWN_PC;
	if (!blob_field(blob, heap_hi, w->off_frame_size, 4))
		return HP_FW_BAD_READ;
	*frame_words = *(const volatile int32_t *)(blob + w->off_frame_size);
	if (*frame_words <= 0 || *frame_words > MAX_FRAME_WORDS)
		return HP_FW_UNEXPECTED_BLOB;
	*blob_out = blob;
	if (!is_nmethod(w, blob, heap_hi))
		return 0;
	if (!blob_field(blob, heap_hi, w->off_compile_id, 4) || !blob_field(blob, heap_hi, w->off_stub_offset, 4) ||
	    !blob_field(blob, heap_hi, w->off_code_begin >= 0 ? w->off_code_begin : w->off_code_offset, WORD))
		return HP_FW_BAD_READ;
	uintptr_t code_begin = w->off_code_begin >= 0 ? *(const volatile uintptr_t *)(blob + w->off_code_begin)
						      : blob + (uintptr_t)*(const volatile int32_t *)(blob + w->off_code_offset);
	uintptr_t stub_begin = blob + (uintptr_t)*(const volatile int32_t *)(blob + w->off_stub_offset);
	/* A return pc in the stub section is a deoptimization handler
	 * patched in: the real pc is elsewhere. */
	if (pc < code_begin || pc >= stub_begin)
		return HP_FW_DEOPTIMIZED;
	return 1;
}

static inline uint64_t compile_id(const struct hp_framewalk *w, uintptr_t blob)
{
	return (uint64_t)(uint32_t)*(const volatile int32_t *)(blob + w->off_compile_id);
}

static inline bool in_interpreter(const struct hp_framewalk *w, uintptr_t pc)
{
	return pc >= w->interp_lo && pc < w->interp_hi;
}

#define MAX_CHUNKS 64

/* An interpreted frame in a chunk: its fp, derelativized from the link
 * slot below its sp (StackChunkFrameStream::fp, Mixed). */
static bool chunk_fp(struct hp_chunk_window *win, uintptr_t sp, uintptr_t *fp)
{
	uintptr_t at = hp_arch_slot(sp, -HP_ARCH_LINK_BELOW_SENDER_SP), rel;
	if (!hp_chunk_word(win, at, &rel) || (intptr_t)rel <= 0 || rel > MAX_FRAME_WORDS)
		return false;
	*fp = hp_arch_slot(at, (intptr_t)rel);
	return true;
}

/* The word at fp[slot] of a chunk frame, a relative slot made absolute. */
static bool chunk_rel(struct hp_chunk_window *win, uintptr_t fp, int slot, uintptr_t *out)
{
	uintptr_t rel;
	if (!hp_chunk_word(win, hp_arch_slot(fp, slot), &rel) || (intptr_t)rel < -MAX_FRAME_WORDS ||
	    (intptr_t)rel > MAX_FRAME_WORDS)
		return false;
	*out = hp_arch_slot(fp, (intptr_t)rel);
	return true;
}

/* The pc of the chunk frame at sp and, for an interpreted frame of a
 * mixed chunk, its fp and unextended sp (fp-relative last_sp); usp is
 * left as it is for a compiled one. 0 or an hp_sc_result. */
static int chunk_frame_at(const struct hp_framewalk *w, struct hp_chunk_window *win, bool mixed, uintptr_t sp,
			  uintptr_t *pc, uintptr_t *fp, uintptr_t *usp)
{
	if (!hp_chunk_word(win, hp_arch_slot(sp, -HP_ARCH_PC_BELOW_SP), pc))
		return HP_SC_UNREADABLE;
	if (mixed && in_interpreter(w, *pc) &&
	    (!chunk_fp(win, sp, fp) || !chunk_rel(win, *fp, w->chunks->interp_last_sp_slot, usp)))
		return HP_SC_BAD_FRAME;
	return 0;
}

/* Past the return barrier: the frames in the mounted continuation's heap
 * stack chunks, as StackChunkFrameStream steps through them (stackchunk.h).
 * Keys as for frames on the stack. Returns the key length, or an
 * hp_fw_result (HP_FW_CONTINUATION when a chunk did not check out: the
 * reason is counted in the chunk reader's stats). */
static int walk_chunks(const struct hp_framewalk *w, uintptr_t thread, const struct range *st, uintptr_t barrier_sp,
		       int n, int java, int max_java, uint64_t *key, int cap, bool *interpreted, uintptr_t *aux)
{
	struct hp_stackchunk *c = w->chunks;
	struct hp_chunk_frames f;
	struct hp_chunk_window win;
	int java_before = java;
	int rc = hp_stackchunk_first(c, thread, barrier_sp, st->lo, st->hi, &f, &win);
	for (int chunks = 0; rc >= 0; chunks++) {
		if (chunks == MAX_CHUNKS) {
			rc = HP_SC_BAD_CHUNK;
			break;
		}
		uintptr_t sp = f.sp, usp = sp, pc, fp = 0;
		rc = chunk_frame_at(w, &win, f.mixed, sp, &pc, &fp, &usp);
		while (rc >= 0 && sp < f.end) {
			if (java >= max_java)
				goto done;
			if (n + 2 > cap)
				return HP_FW_TOO_DEEP;
			uintptr_t next_sp;
			if (in_interpreter(w, pc)) {
				uintptr_t method, bcp, locals, sender_usp;
				if (!f.mixed || !chunk_fp(&win, sp, &fp) ||
				    !hp_chunk_word(&win, hp_arch_slot(fp, w->interp_method_slot), &method) ||
				    !hp_chunk_word(&win, hp_arch_slot(fp, w->interp_bcp_slot), &bcp) ||
				    !chunk_rel(&win, fp, c->interp_locals_slot, &locals) || !method ||
				    (method & (WORD - 1))) {
					rc = HP_SC_BAD_FRAME;
					break;
				}
				if (aux)
					aux[n / 2] = HP_FW_AUX_INTERPRETED;
				key[n++] = method | 1;
				key[n++] = bcp;
				*interpreted = true;
				java++;
				/* next_for_interpreter_frame */
				if (locals + WORD >= f.end) {
					next_sp = f.end;
				} else if (!chunk_rel(&win, fp, w->interp_sender_sp_slot, &sender_usp)) {
					rc = HP_SC_BAD_FRAME;
					break;
				} else {
					next_sp = hp_arch_slot(fp, HP_ARCH_LINK_BELOW_SENDER_SP);
					usp = sender_usp;
				}
			} else {
				uintptr_t blob;
				int32_t frame_words;
				if (code_frame(w, pc, &blob, &frame_words) != 1) {
					rc = HP_SC_BAD_FRAME;   /* a stub, a deoptimized or unknown pc */
					break;
				}
				if (aux)
					aux[n / 2] = blob;
				key[n++] = pc;
				key[n++] = compile_id(w, blob);
				java++;
				next_sp = usp + (uintptr_t)frame_words * WORD;
				if (f.mixed && next_sp >= f.end - 2 * WORD)
					next_sp = f.end;
				usp = next_sp;
			}
			if (next_sp <= sp) {
				rc = HP_SC_BAD_FRAME;   /* no progress: not a frame chain */
				break;
			}
			sp = next_sp;
			if (sp >= f.end)
				break;
			rc = chunk_frame_at(w, &win, f.mixed, sp, &pc, &fp, &usp);
		}
		if (rc < 0)
			break;
		rc = hp_stackchunk_next(c, &f, &win);
		if (rc == 0)
			goto done;
	}
	atomic_fetch_add_explicit(&c->failed[-rc - 1], 1, memory_order_relaxed);
	return HP_FW_CONTINUATION;
done:
	atomic_fetch_add_explicit(&c->walked, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->frames, (uint64_t)(java - java_before), memory_order_relaxed);
	return n;
}

int hp_framewalk_key(const struct hp_framewalk *w, const void *jni, int max_java, uint64_t *key, int cap,
		     bool *interpreted, uintptr_t *aux)
{
	uintptr_t thread = (uintptr_t)jni - (uintptr_t)w->env_offset;
	uintptr_t base = *(const uintptr_t *)(thread + w->off_stack_base);
	uintptr_t size = *(const uintptr_t *)(thread + w->off_stack_size);
	/* Our own frame is below every frame we read: that bound keeps the
	 * walk out of the guard zones at the stack's low end. */
	struct range st = { (uintptr_t)__builtin_frame_address(0), base };
	if (size > base || st.lo < base - size || st.lo >= base)
		return HP_FW_NOT_THIS_THREAD;
	uintptr_t anchor = thread + w->off_anchor;
	uintptr_t sp = *(const volatile uintptr_t *)(anchor + w->off_last_sp);
	uintptr_t fp = *(const volatile uintptr_t *)(anchor + w->off_last_fp);
	uintptr_t pc = *(const volatile uintptr_t *)(anchor + w->off_last_pc);
	if (!sp)
		return HP_FW_NO_JAVA_FRAMES;
	if (!pc && !stack_word(&st, hp_arch_slot(sp, -HP_ARCH_PC_BELOW_SP), &pc))
		return HP_FW_BAD_READ;
	uintptr_t unextended_sp = sp;
	int n = 0, java = 0;
	*interpreted = false;
	for (int physical = 0; physical < MAX_PHYSICAL_FRAMES; physical++) {
		if (java >= max_java)
			return n;
		if (n + 2 > cap)
			return HP_FW_TOO_DEEP;
		if (pc == w->call_stub_return) {
			/* Entry frame: Java called from native code. Below it
			 * are native frames, then (unless this is the thread's
			 * first Java call) the Java frames that called out,
			 * found through the JavaCallWrapper's saved anchor. */
			uintptr_t wrapper, jsp, jfp, jpc;
			if (!stack_word(&st, hp_arch_slot(fp, w->entry_wrapper_slot), &wrapper))
				return HP_FW_BAD_READ;
			uintptr_t wa = wrapper + (uintptr_t)w->off_wrapper_anchor;
			if (!stack_word(&st, wa + (uintptr_t)w->off_last_sp, &jsp) ||
			    !stack_word(&st, wa + (uintptr_t)w->off_last_fp, &jfp) ||
			    !stack_word(&st, wa + (uintptr_t)w->off_last_pc, &jpc))
				return HP_FW_BAD_READ;
			if (!jsp)
				return n;       /* the bottom */
			if (aux)
				aux[n / 2] = 0;
			key[n++] = KEY_ENTRY_TAG;
			key[n++] = 0;
			if (!jpc && !stack_word(&st, hp_arch_slot(jsp, -HP_ARCH_PC_BELOW_SP), &jpc))
				return HP_FW_BAD_READ;
			unextended_sp = jsp;
			fp = jfp;
			pc = jpc;
			continue;
		}
		if (in_interpreter(w, pc)) {
			uintptr_t method, bcp, sender_usp, ret, link;
			if (!stack_word(&st, hp_arch_slot(fp, w->interp_method_slot), &method) ||
			    !stack_word(&st, hp_arch_slot(fp, w->interp_bcp_slot), &bcp) ||
			    !stack_word(&st, hp_arch_slot(fp, w->interp_sender_sp_slot), &sender_usp) ||
			    !stack_word(&st, hp_arch_slot(fp, HP_ARCH_FP_RETURN_SLOT), &ret) ||
			    !stack_word(&st, hp_arch_slot(fp, HP_ARCH_FP_LINK_SLOT), &link) || !method ||
			    (method & (WORD - 1)))
				return HP_FW_BAD_READ;
			if (aux)
				aux[n / 2] = HP_FW_AUX_INTERPRETED;
			key[n++] = method | 1;
			key[n++] = bcp;
			*interpreted = true;
			java++;
			unextended_sp = sender_usp;    /* the sender's sp before the callee's extension */
			pc = ret;
			fp = link;
			continue;
		}
		if (pc && pc == w->cont_return_barrier) {
			if (!w->chunks)
				return HP_FW_CONTINUATION;
			return walk_chunks(w, thread, &st, unextended_sp, n, java, max_java, key, cap, interpreted, aux);
		}
		uintptr_t blob;
		int32_t frame_words;
		int rc = code_frame(w, pc, &blob, &frame_words);
		if (rc == 1) {
			if (aux)
				aux[n / 2] = blob;
			key[n++] = pc;
			key[n++] = compile_id(w, blob);
			java++;
		} else if (rc == 0 && physical == 0) {
			if (aux)
				aux[n / 2] = 0;
			key[n++] = pc;  /* the runtime stub of an allocation slow path */
			key[n++] = 0;
		} else if (rc == 0) {
			return HP_FW_UNEXPECTED_BLOB;
		} else {
			return rc;      /* unknown pc, bad read, bad frame size, deoptimized */
		}
		uintptr_t sender_sp = unextended_sp + (uintptr_t)frame_words * WORD, ret, link;
		if (!stack_word(&st, hp_arch_slot(sender_sp, -HP_ARCH_RET_BELOW_SENDER_SP), &ret) ||
		    !stack_word(&st, hp_arch_slot(sender_sp, -HP_ARCH_LINK_BELOW_SENDER_SP), &link))
			return HP_FW_BAD_READ;
		unextended_sp = sender_sp;
		pc = ret;
		fp = link;
	}
	return HP_FW_TOO_DEEP;
}
