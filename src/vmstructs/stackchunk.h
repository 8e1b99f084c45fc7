/* The frames of a mounted virtual thread that still wait in heap stack
 * chunks (JDK 21+), read from native code in the thread's own sampling
 * callback, for the frame walker (framewalk.h).
 *
 * Why: after a virtual thread is unmounted and mounted again, HotSpot thaws
 * only its top frames; the lowest thawed frame returns to
 * StubRoutines::_cont_returnBarrier, and the older frames stay in a
 * jdk.internal.vm.StackChunk object on the Java heap until returned to.
 * GetStackTrace walks on into the chunk (vframeStream with
 * WalkContinuation::include, down to Continuation.enter); so must the
 * walker, or every such sample pays GetStackTrace.
 *
 * The way in, as HotSpot's own (continuationEntry.hpp,
 * continuationJavaClasses.hpp, stackChunkOop.inline.hpp,
 * stackChunkFrameStream*.hpp):
 *   JavaThread::_cont_entry        the ContinuationEntry in the enterSpecial
 *                                  frame on this thread's stack (not in
 *                                  VMStructs: symbols/ field.JavaThread.*);
 *   ContinuationEntry::_cont       the Continuation, a raw oop in that frame
 *                                  (symbols/ field.ContinuationEntry.*);
 *   Continuation.tail              the newest chunk (an empty one's frames
 *                                  are in its parent);
 *   StackChunk sp, bottom (or      the frames, in words from the chunk's
 *     size - argsize), pc, flags,  stack start (oop +
 *     parent, cont                 InstanceStackChunkKlass::_offset_of_stack),
 *                                  the field offsets from libjvm's statics.
 * Heap fields are decoded as the collector stores them: narrow oops
 * (CompressedOops base and shift), plain 64-bit words (also single-
 * generation ZGC, whose coloured addresses are all mapped), or generational
 * ZGC's coloured pointers (shifted right by 13 + the remapped bit's index,
 * ZPointerLoadShiftTable). ContinuationEntry::_cont is a stack root: a plain
 * address on every collector.
 *
 * Safety. The chunk is a heap object a collection may move or rewrite while
 * the callback runs in native state (a stop-the-world pause can pass, and
 * ZGC and Shenandoah relocate concurrently). So every heap read is a safe
 * read (HotSpot's SafeFetchN where it checked out, else process_vm_readv); the entry must lie on this thread's stack, be
 * a virtual thread's, and sit where the lowest thawed frame says it does
 * (its sender sp is the entry's bottom_sender_sp); the chunk must point
 * back to the same Continuation and hold sp <= bottom <= size. The frames
 * are then checked as the walker checks its own (every pc an nmethod's, or
 * the interpreter's, frame sizes bounded), and the decoder's checks and
 * the one-in-N comparison with GetStackTrace stand behind the answer. A
 * chunk that fails any check ends the walk: the sample asks GetStackTrace.
 */
#ifndef HP_STACKCHUNK_H
#define HP_STACKCHUNK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hp_vms;
struct hp_symdata;
struct hp_safefetch;

/* How the collector stores a reference field. */
enum hp_heap_oops {
	HP_OOPS_NARROW,         /* 32-bit: base + (n << shift) */
	HP_OOPS_WIDE,           /* 64-bit address (single-generation ZGC: a mapped coloured view) */
	HP_OOPS_ZPOINTER,       /* 64-bit generational ZGC pointer: uncoloured per pointer */
};

/* Why a chunk was not read. */
enum hp_sc_result {
	HP_SC_NO_ENTRY = -1,            /* no continuation entry on this stack */
	HP_SC_NOT_VIRTUAL = -2,         /* the entry is not a virtual thread's */
	HP_SC_ENTRY_ELSEWHERE = -3,     /* the lowest thawed frame does not return to that entry */
	HP_SC_UNREADABLE = -4,          /* a heap read failed (moved, freed, unmapped) */
	HP_SC_BAD_CHUNK = -5,           /* the chunk's fields read as nonsense, or not this continuation's */
	HP_SC_BAD_FRAME = -6,           /* a frame in the chunk did not check out */
	HP_SC_RESULTS = 6
};
const char *hp_stackchunk_result_name(int result);

struct hp_stackchunk {
	int64_t off_cont_entry;                         /* JavaThread::_cont_entry */
	int64_t entry_cont, entry_flags, entry_argsize; /* in ContinuationEntry */
	int32_t cont_tail;                              /* Continuation.tail */
	int32_t chunk_parent, chunk_size, chunk_sp, chunk_bottom, chunk_argsize, chunk_flags, chunk_cont;
	int32_t offset_of_stack;                        /* bytes from the chunk oop to its stack */
	int interp_locals_slot, interp_last_sp_slot;    /* words from fp */
	enum hp_heap_oops oops;
	bool x_colored;                                 /* single-generation ZGC: compare offsets only */
	uintptr_t narrow_base;
	int narrow_shift;
	/* heap reads: HotSpot's SafeFetchN when set (safefetch.h: nanoseconds
	 * a word), else process_vm_readv (a system call a read) */
	const struct hp_safefetch *fetch;
	/* what happened, for the agent's `stacks:` line */
	_Atomic uint64_t walked, frames, failed[HP_SC_RESULTS];
};

/* Reads where everything is. `lookup(ctx, key)` answers a symbols/
 * static.* key with the address of that int in libjvm (NULL if absent).
 * `oops` as above; `narrow_base`/`narrow_shift` are read from VMStructs
 * here when oops is HP_OOPS_NARROW. 0, or a negative errno with the
 * missing fact named (-ENOENT) or a layout that reads as nonsense (-EINVAL). */
int hp_stackchunk_init(struct hp_stackchunk *c, const struct hp_vms *vms, const struct hp_symdata *data,
		       const void *(*lookup)(void *ctx, const char *key), void *ctx, enum hp_heap_oops oops,
		       bool x_colored, char *err, size_t errlen);

/* One chunk's frames: [sp, end) in this process's address space (the heap),
 * the first frame's pc at sp[-1]. */
struct hp_chunk_frames {
	uintptr_t chunk;                /* the StackChunk oop */
	uintptr_t start, limit;         /* its stack: every frame word lies inside */
	uintptr_t sp, end;
	bool mixed;                     /* FLAG_HAS_INTERPRETED_FRAMES: interpreted frames are relativized */
	uintptr_t parent;               /* the next (older) chunk, 0 at the last */
	uintptr_t cont;                 /* the Continuation all of them belong to */
};

struct hp_chunk_window;

/* The first chunk holding frames of the virtual thread mounted on
 * `thread` (a JavaThread*), whose lowest thawed frame returned to the
 * barrier with sender sp `barrier_sp`; `stack_lo`/`stack_hi` bound this
 * thread's stack. 0 or an hp_sc_result. `win` is left holding the words
 * of the chunk read with its fields (for hp_chunk_word). */
int hp_stackchunk_first(const struct hp_stackchunk *c, uintptr_t thread, uintptr_t barrier_sp, uintptr_t stack_lo,
			uintptr_t stack_hi, struct hp_chunk_frames *out, struct hp_chunk_window *win);

/* The chunk after `f` (its parent) into `f`: 1, 0 when there is none, or an
 * hp_sc_result. */
int hp_stackchunk_next(const struct hp_stackchunk *c, struct hp_chunk_frames *f, struct hp_chunk_window *win);

/* Words of a chunk, read a window at a time (one system call per window). */
#define HP_CHUNK_WINDOW_WORDS 512
struct hp_chunk_window {
	uintptr_t lo, hi;               /* the window's addresses; lo == hi: empty */
	uintptr_t floor, limit;         /* only [floor, limit) is read */
	const struct hp_safefetch *fetch;   /* set: each word read by SafeFetchN, no window */
	uintptr_t words[HP_CHUNK_WINDOW_WORDS];
};
void hp_chunk_window_reset(struct hp_chunk_window *win, uintptr_t floor, uintptr_t limit,
			   const struct hp_safefetch *fetch);
/* The word at addr (aligned, inside [floor, limit)), or false. */
bool hp_chunk_word(struct hp_chunk_window *win, uintptr_t addr, uintptr_t *out);

#endif
