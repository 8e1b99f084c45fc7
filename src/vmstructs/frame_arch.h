/* The frame rules of the architecture being built for (frame_x86_64.h,
 * frame_aarch64.h: the same names in each). HP_ARCH_SUPPORTED is 0 elsewhere: the walker
 * then refuses to start (-ENOTSUP) and stacks come from GetStackTrace. */
#ifndef HP_FRAME_ARCH_H
#define HP_FRAME_ARCH_H

#if defined(__x86_64__)
#include "vmstructs/frame_x86_64.h"
#define HP_ARCH_SUPPORTED 1
#elif defined(__aarch64__)
#include "vmstructs/frame_aarch64.h"
#define HP_ARCH_SUPPORTED 1
#else
/* Compiles, never walks: hp_framewalk_init refuses first. */
#define HP_ARCH_SUPPORTED 0
#define HP_ARCH_NAME "this architecture"
#define HP_ARCH_WORD 8
#define HP_ARCH_RET_BELOW_SENDER_SP 1
#define HP_ARCH_LINK_BELOW_SENDER_SP 2
#define HP_ARCH_FP_LINK_SLOT 0
#define HP_ARCH_FP_RETURN_SLOT 1
#define HP_ARCH_PC_BELOW_SP 1
#include <stdint.h>
static inline uintptr_t hp_arch_slot(uintptr_t base, intptr_t words)
{
	return base + (uintptr_t)(words * HP_ARCH_WORD);
}
#endif

#endif
