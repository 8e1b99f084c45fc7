/* The frame rules HotSpot follows on x86_64 and aarch64 alike (frame_x86.hpp
 * / frame_aarch64.hpp: link_offset 0, return_addr_offset 1,
 * sender_sp_offset 2): every frame that has a frame pointer keeps a
 * two-word record (saved fp, return pc) just below its sender's sp. The
 * only architecture-specific part of the walk (framewalk.c) and of the heap
 * stack chunk reader (stackchunk.c); included by the architecture's file
 * (frame_x86_64.h, frame_aarch64.h), which frame_arch.h chooses. An
 * architecture whose frames differ gets a file of its own with these names.
 *
 * All slots are in words (8 bytes).
 */
#ifndef HP_FRAME_RECORD_H
#define HP_FRAME_RECORD_H

#include <stdint.h>

#define HP_ARCH_WORD 8

/* From the sender's sp as the callee computes it (unextended sp + frame
 * size): x86_64's call pushes the return address and the callee pushes rbp;
 * aarch64's prologue stores (fp, lr) at the top of the frame. */
#define HP_ARCH_RET_BELOW_SENDER_SP 1   /* return pc at sender_sp[-1] */
#define HP_ARCH_LINK_BELOW_SENDER_SP 2  /* saved fp at sender_sp[-2] */

/* An fp-based (interpreted) frame: frame::link_offset 0,
 * frame::return_addr_offset 1. */
#define HP_ARCH_FP_LINK_SLOT 0
#define HP_ARCH_FP_RETURN_SLOT 1

/* A last Java frame recorded without a pc (JavaFrameAnchor::_last_Java_pc
 * 0) returns to the word just below its sp: frame(sp, fp) reads sp[-1] on
 * both. Also frame::sender_sp_ret_address_offset() (sender_sp_offset -
 * return_addr_offset) in a stack chunk. */
#define HP_ARCH_PC_BELOW_SP 1

static inline uintptr_t hp_arch_slot(uintptr_t base, intptr_t words)
{
	return base + (uintptr_t)(words * HP_ARCH_WORD);
}

#endif
