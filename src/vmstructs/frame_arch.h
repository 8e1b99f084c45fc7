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
#include "vmstructs/frame_record.h"
#define HP_ARCH_SUPPORTED 0
#define HP_ARCH_NAME "this architecture"
#endif

#endif
