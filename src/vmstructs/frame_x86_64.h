/* x86_64's frame rules, as HotSpot states them (frame_x86.hpp,
 * frame_x86.inline.hpp, stackChunkFrameStream_x86.inline.hpp): the only
 * architecture-specific part of the walk (framewalk.c) and of the heap
 * stack chunk reader (stackchunk.c). Another architecture is a file of its
 * own with these names, chosen in frame_arch.h.
 *
 * All slots are in words (8 bytes).
 */
#ifndef HP_FRAME_X86_64_H
#define HP_FRAME_X86_64_H

#include <stdint.h>

#define HP_ARCH_NAME "x86_64"
#define HP_ARCH_WORD 8

/* A call pushes the return address; the callee pushes rbp. So, from the
 * sender's sp as the callee computes it (unextended sp + frame size):
 * frame::return_addr_offset / sender_sp_offset (1 and 2 from fp): */
#define HP_ARCH_RET_BELOW_SENDER_SP 1   /* return pc at sender_sp[-1] */
#define HP_ARCH_LINK_BELOW_SENDER_SP 2  /* saved rbp at sender_sp[-2] */

/* An fp-based (interpreted) frame: frame::link_offset 0,
 * frame::return_addr_offset 1. */
#define HP_ARCH_FP_LINK_SLOT 0
#define HP_ARCH_FP_RETURN_SLOT 1

/* A last Java frame recorded without a pc (JavaFrameAnchor::_last_Java_pc
 * 0) returns to the word just below its sp: frame(sp, fp) on x86_64 reads
 * sp[-1]. Also frame::sender_sp_ret_address_offset() in a stack chunk. */
#define HP_ARCH_PC_BELOW_SP 1

static inline uintptr_t hp_arch_slot(uintptr_t base, intptr_t words)
{
	return base + (uintptr_t)(words * HP_ARCH_WORD);
}

#endif
