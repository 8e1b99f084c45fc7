/* x86_64's frame rules (frame_x86.hpp, frame_x86.inline.hpp,
 * stackChunkFrameStream_x86.inline.hpp): the two-word frame record of
 * frame_record.h. The interpreter's frame slots are per release data
 * (symbols/ frame.x86_64.*; VMStructs publishes a few of them here). */
#ifndef HP_FRAME_X86_64_H
#define HP_FRAME_X86_64_H

#include "vmstructs/frame_record.h"

#define HP_ARCH_NAME "x86_64"

#endif
