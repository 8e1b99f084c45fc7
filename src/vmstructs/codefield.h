/* The member a tiny HotSpot method increments, read from its machine code.
 *
 * Some counters HotSpot keeps are in no VMStructs table, and their offset
 * moves from release to release (G1CollectedHeap::_old_marking_cycles_started:
 * 0x4bc on 11, 0x3c8 on 17, 0x3d8 on 21 and 25, 0x410 on 26 and 27). Where
 * the class has an out-of-line method that only increments the member
 * (`void G1CollectedHeap::increment_old_marking_cycles_started() {
 * _old_marking_cycles_started++; }`, its asserts compiled out in product
 * builds), the offset is in that method's few instructions, for this very
 * build. These read it: a fixed handful of instruction forms that load,
 * add one and store back through the first argument register (or add one in
 * place), each accepted only when the load and the store name the same
 * offset. Anything else is refused: the caller goes without the counter. */
#ifndef HP_CODEFIELD_H
#define HP_CODEFIELD_H

#include <stddef.h>
#include <stdint.h>

/* x86_64: optional endbr64, push %rbp / mov %rsp,%rbp; then either
 * `mov disp(%rdi),%eax|%edx ... add $1 ... mov %eax|%edx,disp(%rdi)` or
 * `addl $1,disp(%rdi)` / `incl disp(%rdi)` (disp8 or disp32), within the
 * first n bytes. 0 and *offset, or -ENOEXEC with a one-line reason. */
int hp_codefield_inc_x86_64(const uint8_t *code, size_t n, int64_t *offset, char *why, size_t len);

/* aarch64: optional bti c / paciasp; `ldr wT, [x0, #imm]`, `add wT, wT,
 * #1`, `str wT, [x0, #imm]` (32-bit, unsigned offset), within the first n
 * bytes (whole instructions, little-endian). */
int hp_codefield_inc_aarch64(const uint8_t *code, size_t n, int64_t *offset, char *why, size_t len);

/* The one for the architecture heapprobe was built for; -ENOTSUP on others. */
int hp_codefield_inc(const uint8_t *code, size_t n, int64_t *offset, char *why, size_t len);

/* The address of a member taken through the first argument register, for a
 * method that updates it in a loop (compare-and-exchange) rather than
 * increments it: Shenandoah's ShenandoahHeap::set_gc_state_concurrent and
 * set_gc_state_at_safepoint (`lea disp32(%rdi),%r8` followed by a `lock
 * cmpxchg` through %r8 on x86_64; `add xD, x0, #imm` on aarch64, whose
 * builds call an atomic stub instead), the first such instruction within
 * the first n bytes. A scan, not a decode: the caller must check the
 * offset with a second method and the object's size. */
int hp_codefield_lea_x86_64(const uint8_t *code, size_t n, int64_t *offset, char *why, size_t len);
int hp_codefield_lea_aarch64(const uint8_t *code, size_t n, int64_t *offset, char *why, size_t len);
int hp_codefield_lea(const uint8_t *code, size_t n, int64_t *offset, char *why, size_t len);

#endif
