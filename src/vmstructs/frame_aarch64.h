/* aarch64's frame rules, as HotSpot states them (frame_aarch64.hpp,
 * frame_aarch64.inline.hpp, stackChunkFrameStream_aarch64.inline.hpp): the
 * same names as frame_x86_64.h, chosen in frame_arch.h.
 *
 * All slots are in words (8 bytes).
 */
#ifndef HP_FRAME_AARCH64_H
#define HP_FRAME_AARCH64_H

#include <stdint.h>

#define HP_ARCH_NAME "aarch64"
#define HP_ARCH_WORD 8

/* A compiled frame keeps its frame record (fp, lr) at the top of the frame:
 * sender_for_compiled_frame reads the return pc at sender_sp[-1] and the
 * saved fp at sender_sp[-sender_sp_offset] (frame::return_addr_offset 1,
 * sender_sp_offset 2), as on x86_64. Return addresses may be signed
 * (-XX:UseBranchProtection=pac-ret; off by default): a signed pc lies
 * outside the code cache, and the walk stops there. */
#define HP_ARCH_RET_BELOW_SENDER_SP 1
#define HP_ARCH_LINK_BELOW_SENDER_SP 2

/* An fp-based (interpreted) frame: frame::link_offset 0,
 * frame::return_addr_offset 1. */
#define HP_ARCH_FP_LINK_SLOT 0
#define HP_ARCH_FP_RETURN_SLOT 1

/* frame(sp, fp) reads the pc at sp[-1] (frame_aarch64.inline.hpp), and
 * frame::sender_sp_ret_address_offset() is sender_sp_offset -
 * return_addr_offset = 1. */
#define HP_ARCH_PC_BELOW_SP 1

static inline uintptr_t hp_arch_slot(uintptr_t base, intptr_t words)
{
	return base + (uintptr_t)(words * HP_ARCH_WORD);
}

#endif
