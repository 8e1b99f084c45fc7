/* aarch64's frame rules (frame_aarch64.hpp, frame_aarch64.inline.hpp,
 * stackChunkFrameStream_aarch64.inline.hpp): the two-word frame record of
 * frame_record.h, (fp, lr) stored at the top of each compiled frame. The
 * interpreter's frame slots are per release data (symbols/
 * frame.aarch64.*: VMStructs publishes none of them on aarch64).
 * Return addresses may be signed (-XX:UseBranchProtection=pac-ret; off by
 * default): a signed pc lies outside the code cache, and the walk stops
 * there. */
#ifndef HP_FRAME_AARCH64_H
#define HP_FRAME_AARCH64_H

#include "vmstructs/frame_record.h"

#define HP_ARCH_NAME "aarch64"

#endif
