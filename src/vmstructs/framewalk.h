/* A walk of the calling Java thread's own stack that names each physical
 * frame by what determines its Java frames, without decoding them.
 *
 * Why: JVMTI GetStackTrace costs ~2 us for a five-frame stack (it builds a
 * javaVFrame, with a ~4.7 KB RegisterMap copy, per frame), 70% of a heap
 * sample. The frames of an allocation site repeat: the agent keys a cache
 * of GetStackTrace answers by this walk's output (agent/stackcache.c), so
 * GetStackTrace runs once per distinct stack instead of once per sample.
 *
 * What names a frame, so that equal keys mean equal GetStackTrace answers:
 *   compiled (nmethod):  (return pc, compile id). The pc picks the PcDesc and
 *                        with it the chain of inlined (method, bci); compile
 *                        ids are never reused, so a new nmethod at a freed
 *                        nmethod's address gets other keys.
 *   interpreted:         (Method* | 1, bcp). A Method* is reused only after
 *                        its class is unloaded: the caller pairs these keys
 *                        with the classes-unloaded counter.
 *   runtime stub at the top (the allocation slow path of compiled code):
 *                        (pc, 0); it holds no Java frame.
 *   entry frame (Java called from native code): (tag, 0), then the walk
 *                        continues below the native frames, as HotSpot's
 *                        frame::sender_for_entry_frame does.
 * The walk follows HotSpot's own x86_64 sender rules (frame_x86.cpp):
 * compiled and stub frames by CodeBlob::_frame_size from the unextended sp,
 * interpreted frames by their saved fp, the sender's unextended sp from
 * interpreter_frame_sender_sp.
 *
 * Safety. It walks only the calling thread, stopped in a JVMTI callback with
 * a walkable last Java frame, so no frame can vanish under it and no nmethod
 * on it can be freed. Every load is checked first: stack words against
 * [the caller's own stack pointer, JavaThread::_stack_base), code cache words
 * against a CodeHeap's committed range, the segment map against its own.
 * Anything unexpected (a pc outside the code cache, a blob kind it does not
 * know, a return barrier of a virtual thread, a deoptimized frame) ends the
 * walk with an error and the caller falls back to GetStackTrace.
 *
 * Layouts come from VMStructs; the two interpreter frame slots VMStructs
 * does not publish come from symbols/ (frame.*). The architecture's own
 * rules (return address and saved fp slots) are in frame_x86_64.h, chosen
 * by frame_arch.h; another architecture is a file of its own.
 */
#ifndef HP_FRAMEWALK_H
#define HP_FRAMEWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hp_vms;
struct hp_symdata;
struct hp_libjvm;
struct hp_stackchunk;

#define HP_FW_MAX_HEAPS 8

struct hp_framewalk {
	/* JavaThread */
	int64_t env_offset;             /* JNIEnv* - JavaThread*, set by hp_framewalk_set_thread */
	int64_t thread_size;
	int64_t off_stack_base, off_stack_size, off_anchor;
	/* JavaFrameAnchor, JavaCallWrapper */
	int64_t off_last_sp, off_last_fp, off_last_pc, off_wrapper_anchor;
	int entry_wrapper_slot;         /* frame::entry_frame_call_wrapper_offset (words from fp) */
	int interp_sender_sp_slot, interp_method_slot, interp_bcp_slot;
	/* Code cache */
	unsigned nheaps;
	struct hp_fw_heap {
		const volatile uintptr_t *low, *high;       /* CodeHeap::_memory */
		const volatile uintptr_t *seg_low, *seg_high;   /* CodeHeap::_segmap */
		int log2_segment;
	} heaps[HP_FW_MAX_HEAPS];
	int64_t block_header_size;      /* sizeof(HeapBlock) */
	int64_t off_block_used;         /* HeapBlock::Header::_used */
	int64_t off_frame_size, off_name, off_kind, off_code_begin, off_code_offset;
	int64_t off_stub_offset, off_compile_id;
	int kind_nmethod;               /* CodeBlobKind::Nmethod, where CodeBlob has _kind */
	uintptr_t interp_lo, interp_hi; /* the template interpreter's code */
	uintptr_t call_stub_return;     /* StubRoutines::_call_stub_return_address */
	/* StubRoutines::_cont_returnBarrier (JDK 21+, from .symtab: the
	 * caller sets it; 0 unknown): a virtual thread's lower frames are in a
	 * heap stack chunk, not on this stack */
	uintptr_t cont_return_barrier;
	/* what is past that barrier (stackchunk.h; the caller sets it up and
	 * owns it; NULL: the walk stops there with HP_FW_CONTINUATION) */
	struct hp_stackchunk *chunks;
	/* libjvm's segments: blob names are read only inside them (kept, not
	 * copied: the probe that owns it outlives the walker) */
	const struct hp_libjvm *jvm;
};

/* Reads the layout. 0, or a negative errno with a one-line reason:
 * -ENOTSUP (not x86_64), -ENOENT (a VMStructs entry or symbols/ fact is
 * missing: named), -EFAULT / -EINVAL (a code heap or the interpreter reads
 * as nonsense). `jvm` (libjvm's segments) must outlive the walker. */
int hp_framewalk_init(struct hp_framewalk *w, const struct hp_vms *vms, const struct hp_symdata *data,
		      const struct hp_libjvm *jvm, char *err, size_t errlen);

/* Learns where the JNIEnv sits inside JavaThread from one thread: `jni` is
 * that thread's JNIEnv, `java_thread` its JavaThread* (java.lang.Thread's
 * eetop field). Checked: inside the JavaThread, and the thread's stack
 * bounds hold the caller's stack. 0 or -EINVAL with a reason. */
int hp_framewalk_set_thread(struct hp_framewalk *w, const void *jni, uintptr_t java_thread, char *err,
			    size_t errlen);

/* Why a walk gave no key. */
enum hp_fw_result {
	HP_FW_NO_JAVA_FRAMES = -1,      /* the thread has no last Java frame */
	HP_FW_NOT_THIS_THREAD = -2,     /* stack bounds do not hold the caller */
	HP_FW_BAD_READ = -3,            /* a word outside the checked ranges */
	HP_FW_UNKNOWN_PC = -4,          /* a pc in no code heap, or a free block */
	HP_FW_UNEXPECTED_BLOB = -5,     /* a stub below the top, a bad frame size */
	HP_FW_DEOPTIMIZED = -6,         /* a return pc outside an nmethod's code */
	HP_FW_TOO_DEEP = -7,            /* key buffer full before the bottom */
	HP_FW_CONTINUATION = -8,        /* a return barrier: frames in a heap stack chunk not read */
	HP_FW_RESULTS = 8
};
const char *hp_framewalk_result_name(int result);

/* true if [lo, hi) lies inside one code heap's committed code. */
bool hp_framewalk_in_code(const struct hp_framewalk *w, uintptr_t lo, uintptr_t hi);

/* aux word of an interpreted frame (an nmethod's is its address, a frame
 * without Java code's 0). */
#define HP_FW_AUX_INTERPRETED ((uintptr_t)1)

/* Walks the calling thread (whose JNIEnv is `jni`) from its last Java frame
 * until `max_java` frames holding Java code are named or the bottom is
 * reached. Writes 2 words per frame into key (capacity `cap` words) and
 * returns the number of words, or an hp_fw_result. *interpreted is set when
 * a key word is a Method* (see above). When `aux` is not NULL (room for
 * cap / 2 words) it gets one word per frame, for framedecode.h: the
 * nmethod of a compiled frame, HP_FW_AUX_INTERPRETED, or 0. */
int hp_framewalk_key(const struct hp_framewalk *w, const void *jni, int max_java, uint64_t *key, int cap,
		     bool *interpreted, uintptr_t *aux);

#endif
