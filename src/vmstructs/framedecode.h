/* Java frames from the physical frames the walker found (framewalk.h),
 * without JVMTI GetStackTrace: what GetStackTrace would answer for the
 * same event, as (jmethodID, jlocation) pairs, leaf first.
 *
 *   interpreted frame:  (Method*, bcp) from the frame -> methods.h.
 *   compiled frame:     the nmethod's PcDesc for the return pc (exact
 *                       match of pc - code_begin, as nmethod::pc_desc_at)
 *                       names a chain of ScopeDescs in the scopes data, a
 *                       CompressedReadStream of UNSIGNED5 ints: at each
 *                       scope's decode offset sender_decode_offset, the
 *                       method's index in the nmethod's metadata table
 *                       (1-based, metadata_at), bci - InvocationEntryBci
 *                       (ScopeDesc::decode_body). The first scope is the
 *                       innermost (inlined) method; the chain ends at
 *                       sender offset 0 (serialized_null).
 *   native wrapper:     the nmethod's Method, location -1.
 *   runtime stub, entry frame: no Java frame.
 * The bytes are read from the nmethod (in a checked code heap) and, on JDK
 * 25, its immutable data (PcDescs, scopes) and mutable data (relocations,
 * oops, metadata), both checked readable once per nmethod; every offset is
 * bounded by the section it must lie in.
 *
 * Where the sections are differs by release: VMStructs names the fields
 * (nmethod::_scopes_pcs_offset and _dependencies_offset with
 * CompiledMethod::_scopes_data_begin up to JDK 21; nmethod::_immutable_data
 * with _scopes_pcs_offset and _scopes_data_offset on JDK 25), symbols/
 * gives what VMStructs does not publish (code.unsigned5_excluded: 0 on
 * JDK 11/17's CompressedStream, 1 on 21+'s UNSIGNED5). JDK 25 keeps the
 * metadata table in the mutable data, after the relocations.
 *
 * Every chain is checked as it is read: its outermost scope must name the
 * nmethod's own Method (nmethod::_method), so a wrong section, stream
 * encoding or table base fails the decode instead of naming other frames.
 *
 * Decoded return pcs are kept. A compiled frame's Java frames are a
 * function of (return pc, compile id) while that nmethod lives, and it
 * does while it has a frame on the calling thread's stack: compile ids are
 * never reused (CompileBroker::assign_compile_id), the nmethod's metadata
 * (its Methods) outlives it, and a live Method's jmethodID changes only
 * when its class is redefined. So the jmethodIDs and locations one decode
 * found are kept in a small direct-mapped table keyed by (pc, compile id),
 * dated by the JVM's class-redefinition count, read before the decode
 * (VM_RedefineClasses::doit increments it after all methods were swapped,
 * so an entry dated by the new count was decoded after the swap; on JDK 11, which has only
 * the flag, nothing is kept once a class was redefined; with neither,
 * nothing is kept at all). A hit costs one cache line where a decode reads
 * the nmethod's header, a binary search of its PcDescs, the scopes, the
 * metadata table and, per frame, the Method and its jmethodID slot: ~12
 * cache misses on a large program (javac). An entry holds 3 frames; a
 * chain of up to HP_FD_PC_CHAIN goes on in the other entry of its 128-byte
 * pair (javac at 32k: ~3% of compiled frames are 4-6 deep); deeper chains
 * are decoded every time.
 */
#ifndef HP_FRAMEDECODE_H
#define HP_FRAMEDECODE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmstructs/methods.h"

struct hp_vms;
struct hp_symdata;
struct hp_framewalk;

/* As jvmtiFrameInfo: {jmethodID method; jlocation location}. */
struct hp_java_frame {
	uintptr_t jmid;
	int64_t location;
};

enum hp_fd_result {
	HP_FD_NO_PCDESC = -1,           /* no PcDesc at the return pc */
	HP_FD_BAD_SCOPE = -2,           /* scope data or metadata index out of bounds */
	HP_FD_BAD_NMETHOD = -3,         /* sections of the nmethod read as nonsense */
	HP_FD_METHOD = -4,              /* a Method got no jmethodID (methods.h says why) */
	HP_FD_RESULTS = 4
};
const char *hp_framedecode_result_name(int result);

#define HP_FD_CHECKED_NMETHODS 4096
#define HP_FD_PC_SLOTS 8192             /* 64 bytes each */
#define HP_FD_PC_FRAMES 3               /* in one entry */
#define HP_FD_PC_CHAIN 6                /* in an entry and its buddy */

/* A decoded return pc (see above); seq is odd while being written. */
struct hp_fd_pc_entry {
	_Alignas(64) _Atomic uint32_t seq;
	uint32_t compile_id;
	uintptr_t pc;
	uint64_t redefs;
	uint32_t n;
	int32_t location[HP_FD_PC_FRAMES];
	uintptr_t jmid[HP_FD_PC_FRAMES];
};

struct hp_framedecode {
	struct hp_methods methods;
	int64_t off_nm_method, off_blob_size, off_data_offset;
	int64_t off_pcs_offset, off_pcs_end_offset;       /* old: _scopes_pcs_offset, _dependencies_offset */
	int64_t off_scopes_data_begin;                    /* old: CompiledMethod::_scopes_data_begin */
	int64_t off_metadata_offset;                      /* old: nmethod::_metadata_offset */
	int64_t off_immutable, off_immutable_size, off_scopes_data_offset;   /* 25 */
	int64_t off_mutable, off_mutable_size, off_relocation_size;         /* 25 */
	int64_t off_code_begin, off_code_offset;          /* as the walker's */
	int64_t pcdesc_size, off_pc_offset, off_scope_decode_offset;
	int unsigned5_x;
	/* the walker whose keys are decoded: an nmethod's size must keep it in
	 * a code heap (NULL: not checked, for tests) */
	const struct hp_framewalk *walk;
	/* nmethods whose immutable data was found readable, by compile id */
	_Atomic uint64_t checked[HP_FD_CHECKED_NMETHODS];
	/* Decoded return pcs (see above), NULL when not kept. The caller
	 * sets where the JVM counts class redefinitions (JDK 17+) or flags
	 * one (JDK 11) before decoding; with neither set, none are kept. */
	struct hp_fd_pc_entry *pcs;
	const volatile uint64_t *redefinitions;
	const volatile uint8_t *has_redefined;
	/* compiled frames answered from the table (of stacks decoded), those
	 * while the redefinition count was not 0, entries written (a pc
	 * evicted or re-dated is written again), chains too deep to keep */
	_Atomic uint64_t pc_hits, pc_hits_redefined, pc_kept, pc_deep;
};

/* 0, or a negative errno with the missing fact named. */
int hp_framedecode_init(struct hp_framedecode *d, const struct hp_vms *vms, const struct hp_symdata *data,
			char *err, size_t errlen);
void hp_framedecode_free(struct hp_framedecode *d);

/* Decodes the walk's key (framewalk.h: 2 words per physical frame, `aux`
 * one word per physical frame: the nmethod, HP_FW_AUX_INTERPRETED or 0)
 * into at most `max` Java frames. `epoch` as methods.h. Returns the number
 * of frames, or an hp_fd_result (with *method_result set for HP_FD_METHOD).
 * `stop_jmid`, when not 0, ends the stack before a frame of that method
 * (a virtual thread's stack ends before Continuation.enterSpecial). */
int hp_framedecode(struct hp_framedecode *d, const uint64_t *key, const uintptr_t *aux, int nkey, uint64_t epoch,
		   uintptr_t stop_jmid, struct hp_java_frame *out, int max, int *method_result);

#endif
