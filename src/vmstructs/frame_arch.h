/* The frame rules of the architecture being built for (see frame_x86_64.h
 * for what one must define). HP_ARCH_SUPPORTED is 0 elsewhere: the walker
 * then refuses to start (-ENOTSUP) and stacks come from GetStackTrace. */
#ifndef HP_FRAME_ARCH_H
#define HP_FRAME_ARCH_H

#if defined(__x86_64__)
#include "vmstructs/frame_x86_64.h"
#define HP_ARCH_SUPPORTED 1
#else
#define HP_ARCH_SUPPORTED 0
#define HP_ARCH_NAME "this architecture"
#endif

#endif
