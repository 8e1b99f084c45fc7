/* Java frames from physical frames (see framedecode.h). */
#include "vmstructs/framedecode.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vmstructs/symdata.h"
#include "vmstructs/errmsg.h"
#include "vmstructs/framewalk.h"
#include "vmstructs/safemem.h"
#include "vmstructs/vmstructs.h"

#define WORD 8
#define MAX_INLINE_DEPTH 256            /* scopes in one PcDesc's chain */
#define MAX_IMMUTABLE (64 << 20)
#define PC_TABLE_BYTES (HP_FD_PC_SLOTS * sizeof(struct hp_fd_pc_entry))
_Static_assert(sizeof(struct hp_fd_pc_entry) == 64, "a kept pc entry is one cache line");

static const char *const result_names[HP_FD_RESULTS] = {
	"no PcDesc at the return pc", "scope data out of bounds", "nmethod sections read as nonsense",
	"method without a jmethodID",
};

const char *hp_framedecode_result_name(int result)
{
	return result < 0 && result >= -HP_FD_RESULTS ? result_names[-result - 1] : "ok";
}

#define FD(type, field, member, need, since, until) \
	{ type, field, HP_VMS_OFFSET, offsetof(struct hp_framedecode, member), need, since, until }

/* What the decoder reads of a compiled method, every release: the PcDesc
 * table and the method (CompiledMethod merged into nmethod in 23). */
static const struct hp_vms_entry fd_common[] = {
	{ "PcDesc", NULL, HP_VMS_SIZE, offsetof(struct hp_framedecode, pcdesc_size), HP_VMS_REQUIRED, 0, 0 },
	FD("PcDesc", "_pc_offset", off_pc_offset, HP_VMS_REQUIRED, 0, 0),
	FD("PcDesc", "_scope_decode_offset", off_scope_decode_offset, HP_VMS_REQUIRED, 0, 0),
	FD("nmethod|CompiledMethod", "_method", off_nm_method, HP_VMS_REQUIRED, 0, 0),
	FD("CodeBlob", "_size", off_blob_size, HP_VMS_REQUIRED, 0, 0),
	FD("CodeBlob", "_data_offset", off_data_offset, HP_VMS_REQUIRED, 0, 0),
	FD("nmethod", "_scopes_pcs_offset", off_pcs_offset, HP_VMS_REQUIRED, 0, 0),
	FD("CodeBlob", "_code_begin", off_code_begin, 1, 0, 21),
	FD("CodeBlob", "_code_offset", off_code_offset, 1, 25, 0),
	FD("nmethod", "_immutable_data", off_immutable, HP_VMS_OPTIONAL, 25, 0),
};
/* Scopes in the immutable data, metadata after the oops (25 on). */
static const struct hp_vms_entry fd_immutable[] = {
	FD("nmethod", "_immutable_data_size", off_immutable_size, HP_VMS_REQUIRED, 25, 0),
	FD("nmethod", "_scopes_data_offset", off_scopes_data_offset, HP_VMS_REQUIRED, 25, 0),
	FD("CodeBlob", "_mutable_data", off_mutable, HP_VMS_REQUIRED, 25, 0),
	FD("CodeBlob", "_mutable_data_size", off_mutable_size, HP_VMS_REQUIRED, 25, 0),
	FD("CodeBlob", "_relocation_size", off_relocation_size, HP_VMS_REQUIRED, 25, 0),
};
/* Before: every section in the nmethod, by offsets from it. */
static const struct hp_vms_entry fd_inline[] = {
	FD("nmethod", "_dependencies_offset", off_pcs_end_offset, HP_VMS_REQUIRED, 0, 21),
	FD("nmethod|CompiledMethod", "_scopes_data_begin", off_scopes_data_begin, HP_VMS_REQUIRED, 0, 21),
	FD("nmethod", "_metadata_offset", off_metadata_offset, HP_VMS_REQUIRED, 0, 21),
};

int hp_framedecode_init(struct hp_framedecode *d, const struct hp_vms *v, const struct hp_symdata *data,
			char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	int rc = hp_vms_bind(v, fd_common, HP_VMS_N(fd_common), d, "frame decoder", err, errlen);
	if (rc)
		return rc;
	if (d->pcdesc_size < 16)
		return hp_fail(err, errlen, -EINVAL, "frame decoder: sizeof(PcDesc) is %lld", (long long)d->pcdesc_size);
	if (d->off_immutable >= 0)
		rc = hp_vms_bind(v, fd_immutable, HP_VMS_N(fd_immutable), d, "frame decoder (immutable data layout)",
				 err, errlen);
	else
		rc = hp_vms_bind(v, fd_inline, HP_VMS_N(fd_inline), d, "frame decoder (inline sections layout)", err,
				 errlen);
	if (rc)
		return rc;
	const char *x = data ? hp_symdata_get(data, "code.unsigned5_excluded") : NULL;
	if (!x || (strcmp(x, "0") && strcmp(x, "1")))
		return hp_fail(err, errlen, -ENOENT, "symbols/ data has no usable code.unsigned5_excluded");
	d->unsigned5_x = x[0] - '0';
	rc = hp_methods_init(&d->methods, v, data, err, errlen);
	if (rc)
		return rc;
	/* Page-aligned (each entry one cache line, each pair two), mapped in
	 * as written up front (safemem.h: an entry is read before it is
	 * written). Without it, every pc is decoded. */
	void *pcs = mmap(NULL, PC_TABLE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	d->pcs = pcs == MAP_FAILED ? NULL : pcs;
	hp_prefault_write(d->pcs, PC_TABLE_BYTES);
	return 0;
}

void hp_framedecode_free(struct hp_framedecode *d)
{
	hp_methods_free(&d->methods);
	if (d->pcs)
		munmap(d->pcs, PC_TABLE_BYTES);
	d->pcs = NULL;
}

/* ---- decoded return pcs (framedecode.h) ------------------------------- */

/* The redefinition count that dates kept pcs, or false when none may be
 * kept now (no count known; JDK 11 after a redefinition). */
static inline bool pc_date(const struct hp_framedecode *d, uint64_t *redefs)
{
	if (!d->pcs || !(d->redefinitions || d->has_redefined))
		return false;
	if (d->has_redefined && *d->has_redefined)
		return false;
	*redefs = d->redefinitions ? *d->redefinitions : 0;
	return true;
}

static inline uint32_t pc_slot(uintptr_t pc, uint32_t compile_id)
{
	uint64_t h = ((uint64_t)pc ^ ((uint64_t)compile_id << 20)) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 40) & (HP_FD_PC_SLOTS - 1);
}

/* hp_fd_pc_entry.n: frames in this entry, whether the chain goes on in
 * the entry's buddy (the other half of its 128-byte pair), whether this
 * entry is such a continuation. */
#define PC_MORE 0x100u
#define PC_CONT 0x200u

/* One entry of (pc, compile_id)'s chain copied out (seqlock read): its
 * frame count, or -1; *n its flags. */
static int entry_read(const struct hp_fd_pc_entry *e, uintptr_t pc, uint32_t compile_id, uint64_t redefs,
		      uint32_t cont, uintptr_t *jmid, int32_t *location, uint32_t *n)
{
	uint32_t s0 = atomic_load_explicit(&e->seq, memory_order_acquire);
	if (s0 & 1)
		return -1;
	uintptr_t at = e->pc;
	uint32_t cid = e->compile_id;
	uint64_t r = e->redefs;
	*n = e->n;
	uint32_t k = *n & 0xff;
	if (at != pc || cid != compile_id || r != redefs || k == 0 || k > HP_FD_PC_FRAMES || (*n & PC_CONT) != cont)
		return -1;
	for (uint32_t i = 0; i < k; i++) {
		jmid[i] = e->jmid[i];
		location[i] = e->location[i];
	}
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&e->seq, memory_order_relaxed) == s0 ? (int)k : -1;
}

/* The kept frames of (pc, compile_id) (room for HP_FD_PC_CHAIN): how
 * many, or -1. */
static int pc_find(const struct hp_framedecode *d, uintptr_t pc, uint32_t compile_id, uint64_t redefs,
		   uintptr_t *jmid, int32_t *location)
{
	uint32_t i = pc_slot(pc, compile_id), n;
	int k = entry_read(&d->pcs[i], pc, compile_id, redefs, 0, jmid, location, &n);
	if (k > 0 && (n & PC_MORE)) {
		int more = entry_read(&d->pcs[i ^ 1], pc, compile_id, redefs, PC_CONT, jmid + k, location + k, &n);
		k = more > 0 ? k + more : -1;
	}
	return k;
}

/* Writes one entry unless another thread is writing it (no lock:
 * samplers never wait); false then. */
static bool entry_write(struct hp_fd_pc_entry *e, uintptr_t pc, uint32_t compile_id, uint64_t redefs, uint32_t n,
			const struct hp_java_frame *f)
{
	uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);
	if ((s & 1) || !atomic_compare_exchange_strong_explicit(&e->seq, &s, s + 1, memory_order_acquire,
								memory_order_relaxed))
		return false;
	atomic_thread_fence(memory_order_release);
	e->pc = pc;
	e->compile_id = compile_id;
	e->redefs = redefs;
	e->n = n;
	for (uint32_t i = 0; i < (n & 0xff); i++) {
		e->jmid[i] = f[i].jmid;
		e->location[i] = (int32_t)f[i].location;
	}
	atomic_store_explicit(&e->seq, s + 2, memory_order_release);
	return true;
}

/* Keeps what a decode of (pc, compile_id) found: up to HP_FD_PC_FRAMES
 * frames in its slot, up to HP_FD_PC_CHAIN with the rest in the buddy
 * (written first: a reader that sees the head finds its continuation,
 * or a mismatch and decodes). */
static void pc_keep(struct hp_framedecode *d, uintptr_t pc, uint32_t compile_id, uint64_t redefs,
		    const struct hp_java_frame *f, int n)
{
	if (n <= 0 || n > HP_FD_PC_CHAIN) {
		if (n > HP_FD_PC_CHAIN)
			atomic_fetch_add_explicit(&d->pc_deep, 1, memory_order_relaxed);
		return;
	}
	for (int i = 0; i < n; i++)
		if (f[i].location < INT32_MIN || f[i].location > INT32_MAX)
			return;
	uint32_t i = pc_slot(pc, compile_id), head = (uint32_t)n;
	if (n > HP_FD_PC_FRAMES) {
		if (!entry_write(&d->pcs[i ^ 1], pc, compile_id, redefs, (uint32_t)(n - HP_FD_PC_FRAMES) | PC_CONT,
				 f + HP_FD_PC_FRAMES))
			return;
		head = HP_FD_PC_FRAMES | PC_MORE;
	}
	if (entry_write(&d->pcs[i], pc, compile_id, redefs, head, f))
		atomic_fetch_add_explicit(&d->pc_kept, 1, memory_order_relaxed);
}

/* One nmethod's sections, each [begin, end). */
struct nm_sections {
	uintptr_t code_begin, pcs, pcs_end, scopes, scopes_end, metadata, metadata_end;
	uintptr_t mutable_data;         /* JDK 25 */
};

static inline int32_t i32_at(uintptr_t a)
{
	return *(const volatile int32_t *)a;
}

static inline uintptr_t word_at(uintptr_t a)
{
	return *(const volatile uintptr_t *)a;
}

static bool in(uintptr_t lo, uintptr_t hi, uintptr_t a, uintptr_t b)
{
	return lo <= a && a <= b && b <= hi;
}

static int sections(struct hp_framedecode *d, uintptr_t nm, struct nm_sections *s)
{
	/* The walker checked that the nmethod's header lies in its code heap;
	 * its size bounds everything inside it. */
	int32_t size = i32_at(nm + (uintptr_t)d->off_blob_size);
	if (size <= 0)
		return HP_FD_BAD_NMETHOD;
	uintptr_t end = nm + (uintptr_t)size;
	if (d->walk && !hp_framewalk_in_code(d->walk, nm, end))
		return HP_FD_BAD_NMETHOD;
	s->code_begin = d->off_code_begin >= 0 ? word_at(nm + (uintptr_t)d->off_code_begin)
					       : nm + (uintptr_t)i32_at(nm + (uintptr_t)d->off_code_offset);
	if (d->off_immutable < 0) {
		s->pcs = nm + (uintptr_t)i32_at(nm + (uintptr_t)d->off_pcs_offset);
		s->pcs_end = nm + (uintptr_t)i32_at(nm + (uintptr_t)d->off_pcs_end_offset);
		s->scopes = word_at(nm + (uintptr_t)d->off_scopes_data_begin);
		s->scopes_end = s->pcs;
		s->metadata = nm + (uintptr_t)i32_at(nm + (uintptr_t)d->off_metadata_offset);
		s->metadata_end = s->scopes;
		if (!in(nm, end, s->pcs, s->pcs_end) || !in(nm, end, s->scopes, s->scopes_end) ||
		    !in(nm, end, s->metadata, s->metadata_end))
			return HP_FD_BAD_NMETHOD;
		return 0;
	}
	uintptr_t imm = word_at(nm + (uintptr_t)d->off_immutable);
	int32_t imm_size = i32_at(nm + (uintptr_t)d->off_immutable_size);
	if (!imm || imm_size <= 0 || imm_size > MAX_IMMUTABLE)
		return HP_FD_BAD_NMETHOD;
	uintptr_t imm_end = imm + (uintptr_t)imm_size;
	s->pcs = imm + (uintptr_t)i32_at(nm + (uintptr_t)d->off_pcs_offset);
	s->pcs_end = imm + (uintptr_t)i32_at(nm + (uintptr_t)d->off_scopes_data_offset);
	s->scopes = s->pcs_end;
	s->scopes_end = imm_end;
	/* The mutable data: relocations, then the metadata (the oops stay in
	 * the nmethod's data section). */
	uintptr_t mut = word_at(nm + (uintptr_t)d->off_mutable);
	int32_t mut_size = i32_at(nm + (uintptr_t)d->off_mutable_size);
	int32_t rel_size = i32_at(nm + (uintptr_t)d->off_relocation_size);
	if (!mut || mut_size <= 0 || mut_size > MAX_IMMUTABLE || rel_size < 0)
		return HP_FD_BAD_NMETHOD;
	s->mutable_data = mut;
	s->metadata = mut + (uintptr_t)rel_size;
	s->metadata_end = mut + (uintptr_t)mut_size;
	if (!in(imm, imm_end, s->pcs, s->pcs_end) || !in(mut, s->metadata_end, s->metadata, s->metadata_end))
		return HP_FD_BAD_NMETHOD;
	return 0;
}

/* CompressedReadStream::read_int: UNSIGNED5 with X excluded byte values
 * (X = 0 before JDK 21: L = 192; X = 1 since: L = 191), H = 64, at most 5
 * bytes. 0 and the value, or -1 past `end`. */
static int read_u5(uintptr_t *pos, uintptr_t end, int x, uint32_t *out)
{
	const uint32_t lg_h = 6, l = 256 - (uint32_t)x - 64;
	uint32_t sum = 0;
	for (int i = 0; i < 5; i++) {
		if (*pos >= end)
			return -1;
		uint32_t b = *(const volatile uint8_t *)(*pos)++;
		if (b < (uint32_t)x)
			return -1;      /* an excluded byte: not this encoding */
		sum += (b - (uint32_t)x) << (i * lg_h);
		if (b < (uint32_t)x + l || i == 4) {
			*out = sum;
			return 0;
		}
	}
	return -1;
}

/* nmethod::find_pc_desc(pc, false): the PcDesc whose pc_offset is exactly
 * pc - code_begin; PcDescs are sorted by pc_offset. */
static uintptr_t find_pc_desc(const struct hp_framedecode *d, const struct nm_sections *s, uintptr_t pc)
{
	if (pc < s->code_begin)
		return 0;
	int64_t want = (int64_t)(pc - s->code_begin);
	int64_t n = (int64_t)(s->pcs_end - s->pcs) / d->pcdesc_size, lo = 0, hi = n - 1;
	while (lo <= hi) {
		int64_t mid = lo + (hi - lo) / 2;
		uintptr_t p = s->pcs + (uintptr_t)(mid * d->pcdesc_size);
		int32_t off = i32_at(p + (uintptr_t)d->off_pc_offset);
		if (off == want)
			return p;
		if (off < want)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

/* JDK 25's immutable and mutable data are malloc'd apart from the
 * nmethod: checked readable once per (nmethod, data) triple, in a small
 * direct-mapped set. */
static bool immutable_checked(struct hp_framedecode *d, uintptr_t nm, const struct nm_sections *s)
{
	if (d->off_immutable < 0)
		return true;
	uint64_t tag = (uint64_t)nm ^ ((uint64_t)s->scopes << 1) ^ ((uint64_t)s->mutable_data << 2);
	_Atomic uint64_t *slot = &d->checked[(tag >> 5) % HP_FD_CHECKED_NMETHODS];
	if (atomic_load_explicit(slot, memory_order_relaxed) == tag)
		return true;
	if (!hp_readable((const void *)s->pcs, s->scopes_end - s->pcs) ||
	    !hp_readable((const void *)s->mutable_data, s->metadata_end - s->mutable_data))
		return false;
	atomic_store_explicit(slot, tag, memory_order_relaxed);
	return true;
}

static int emit(struct hp_framedecode *d, uintptr_t method, bool interpreted, uintptr_t bcp, int32_t bci,
		uint64_t epoch, uintptr_t stop_jmid, struct hp_java_frame *f, int *method_result)
{
	int rc = hp_methods_frame(&d->methods, method, interpreted, bcp, bci, epoch, &f->jmid, &f->location);
	if (rc) {
		*method_result = rc;
		return HP_FD_METHOD;
	}
	return stop_jmid && f->jmid == stop_jmid ? 1 : 0;
}

static int decode(struct hp_framedecode *d, const uint64_t *key, const uintptr_t *aux, int nkey, uint64_t epoch,
		  uintptr_t stop_jmid, struct hp_java_frame *out, int max, int *method_result, uint64_t *hits,
		  uint64_t *redefs_out)
{
	int n = 0;
	uint64_t redefs = 0;
	bool keep = pc_date(d, &redefs);
	*redefs_out = redefs;
	*method_result = 0;
	/* Each kept pc, and each interpreted frame's Method, is a cache miss
	 * on a large program: asked for all at once, they arrive together
	 * instead of one after another. */
	for (int i = 0; i + 1 < nkey; i += 2) {
		if (aux[i / 2] == HP_FW_AUX_INTERPRETED)
			hp_methods_prefetch(&d->methods, (uintptr_t)(key[i] & ~(uint64_t)1));
		else if (aux[i / 2] != 0 && keep) {
			uint32_t at = pc_slot((uintptr_t)key[i], (uint32_t)key[i + 1]);
			__builtin_prefetch(&d->pcs[at]);
			__builtin_prefetch(&d->pcs[at ^ 1]);
		}
	}
	for (int i = 0; i + 1 < nkey && n < max; i += 2) {
		uintptr_t a = aux[i / 2];
		int rc;
		if (a == 0)
			continue;       /* runtime stub or entry frame */
		if (a == HP_FW_AUX_INTERPRETED) {
			rc = emit(d, (uintptr_t)(key[i] & ~(uint64_t)1), true, (uintptr_t)key[i + 1], 0, epoch, stop_jmid,
				  &out[n], method_result);
			if (rc < 0)
				return rc;
			if (rc > 0)
				return n;
			n++;
			continue;
		}
		uintptr_t nm = a, pc = (uintptr_t)key[i];
		/* the walker's key: (return pc, compile id) */
		uint32_t compile_id = (uint32_t)key[i + 1];
		bool keep_pc = keep && compile_id != 0;
		if (keep_pc) {
			uintptr_t jmid[HP_FD_PC_CHAIN];
			int32_t loc[HP_FD_PC_CHAIN];
			int k = pc_find(d, pc, compile_id, redefs, jmid, loc);
			if (k > 0) {
				++*hits;
				for (int j = 0; j < k && n < max; j++) {
					out[n] = (struct hp_java_frame){ jmid[j], loc[j] };
					if (stop_jmid && jmid[j] == stop_jmid)
						return n;
					n++;
				}
				continue;
			}
		}
		int first = n;
		uintptr_t method = word_at(nm + (uintptr_t)d->off_nm_method);
		struct nm_sections s;
		int srs = sections(d, nm, &s);
		if (!srs && !immutable_checked(d, nm, &s))
			srs = HP_FD_BAD_NMETHOD;
		uintptr_t pd = srs ? 0 : find_pc_desc(d, &s, pc);
		if (!pd) {
			/* A native wrapper has no scopes (nor, on JDK 25, data
			 * sections): its method, location -1 (methods.h gives -1
			 * for a native method). */
			rc = emit(d, method, false, 0, 0, epoch, stop_jmid, &out[n], method_result);
			if (rc < 0)
				return rc;
			if (out[n].location != -1)
				return srs ? srs : HP_FD_NO_PCDESC;
			if (rc > 0)
				return n;
			n++;
			if (keep_pc)
				pc_keep(d, pc, compile_id, redefs, &out[first], n - first);
			continue;
		}
		uint32_t decode = (uint32_t)i32_at(pd + (uintptr_t)d->off_scope_decode_offset);
		if (decode == 0)
			return HP_FD_BAD_SCOPE;         /* a call site always has a scope */
		for (int depth = 0; decode != 0 && n < max; depth++) {
			uint32_t sender = 0, index = 0, bci_raw = 0;
			uintptr_t pos = s.scopes + decode;
			if (depth == MAX_INLINE_DEPTH || pos >= s.scopes_end ||
			    read_u5(&pos, s.scopes_end, d->unsigned5_x, &sender) ||
			    read_u5(&pos, s.scopes_end, d->unsigned5_x, &index) ||
			    read_u5(&pos, s.scopes_end, d->unsigned5_x, &bci_raw) || index == 0 || sender >= decode ||
			    s.metadata + (uintptr_t)index * WORD > s.metadata_end)
				return HP_FD_BAD_SCOPE;
			uintptr_t m = word_at(s.metadata + (uintptr_t)(index - 1) * WORD);
			/* The outermost scope is the nmethod's own method: a check
			 * of the whole chain's reading (sections, stream, table). */
			if (sender == 0 && m != method) {
				return HP_FD_BAD_SCOPE;
			}
			/* read_bci: the stored value + InvocationEntryBci (-1). A
			 * sender is serialized before its callee (sender < decode:
			 * no loop). */
			rc = emit(d, m, false, 0, (int32_t)bci_raw - 1, epoch, stop_jmid, &out[n], method_result);
			if (rc < 0)
				return rc;
			if (rc > 0)
				return n;
			n++;
			decode = sender;
		}
		/* the whole chain read (not cut by max): kept */
		if (keep_pc && decode == 0)
			pc_keep(d, pc, compile_id, redefs, &out[first], n - first);
	}
	return n;
}

int hp_framedecode(struct hp_framedecode *d, const uint64_t *key, const uintptr_t *aux, int nkey, uint64_t epoch,
		   uintptr_t stop_jmid, struct hp_java_frame *out, int max, int *method_result)
{
	uint64_t hits = 0, redefs;
	int n = decode(d, key, aux, nkey, epoch, stop_jmid, out, max, method_result, &hits, &redefs);
	if (hits && n >= 0) {
		/* counted for stacks answered, not for decodes that failed;
		 * apart, those the table answered under a count above 0 */
		atomic_fetch_add_explicit(&d->pc_hits, hits, memory_order_relaxed);
		if (redefs)
			atomic_fetch_add_explicit(&d->pc_hits_redefined, hits, memory_order_relaxed);
	}
	return n;
}
