/* The member offset read from an increment's machine code (codefield.h):
 * the instruction forms compilers emit for `this->_counter++` on x86_64
 * and aarch64 (encoded here by hand, as the ISA manuals give them), and
 * the near misses that must be refused. (Real libjvms: test_heap_usage's
 * info check of marking.starts on G1, every JDK the suite runs.) */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "vmstructs/codefield.h"

typedef int (*decoder)(const uint8_t *code, size_t n, int64_t *offset, char *why, size_t len);

/* The offset a decoder reads, or its negative errno. */
static int64_t run(decoder f, const uint8_t *c, size_t n)
{
	int64_t off = -1;
	char why[160] = "";
	int rc = f(c, n, &off, why, sizeof(why));
	return rc == 0 ? off : rc;
}

/* aarch64 instruction words, little-endian. */
static int64_t run_words(decoder f, const uint32_t *w, size_t nw)
{
	uint8_t c[64];
	for (size_t i = 0; i < nw; i++)
		for (int b = 0; b < 4; b++)
			c[4 * i + (size_t)b] = (uint8_t)(w[i] >> (8 * b));
	return run(f, c, 4 * nw);
}

static int64_t x86(const uint8_t *c, size_t n)
{
	return run(hp_codefield_inc_x86_64, c, n);
}

static int64_t a64(const uint32_t *w, size_t nw)
{
	return run_words(hp_codefield_inc_aarch64, w, nw);
}

Test(codefield, x86_load_add_store)
{
	/* mov 0x3c8(%rdi),%eax; add $0x1,%eax; mov %eax,0x3c8(%rdi); ret */
	const uint8_t c[] = { 0x8b, 0x87, 0xc8, 0x03, 0, 0, 0x83, 0xc0, 0x01, 0x89, 0x87, 0xc8, 0x03, 0, 0, 0xc3 };
	cr_assert_eq(x86(c, sizeof(c)), 0x3c8);
}

Test(codefield, x86_endbr_and_frame_between)
{
	/* endbr64; mov 0x4bc(%rdi),%eax; push %rbp; mov %rsp,%rbp;
	 * add $0x1,%eax; mov %eax,0x4bc(%rdi) */
	const uint8_t c[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x8b, 0x87, 0xbc, 0x04, 0, 0, 0x55, 0x48, 0x89, 0xe5,
			      0x83, 0xc0, 0x01, 0x89, 0x87, 0xbc, 0x04, 0, 0 };
	cr_assert_eq(x86(c, sizeof(c)), 0x4bc);
}

Test(codefield, x86_in_place_and_short_forms)
{
	/* endbr64; addl $0x1,0x410(%rdi) */
	const uint8_t a[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x83, 0x87, 0x10, 0x04, 0, 0, 0x01, 0xc3 };
	cr_assert_eq(x86(a, sizeof(a)), 0x410);
	/* incl 0x40(%rdi) (disp8) */
	const uint8_t b[] = { 0xff, 0x47, 0x40, 0xc3 };
	cr_assert_eq(x86(b, sizeof(b)), 0x40);
	/* mov 0x7c(%rdi),%edx; inc %edx; mov %edx,0x7c(%rdi) */
	const uint8_t d[] = { 0x8b, 0x57, 0x7c, 0xff, 0xc2, 0x89, 0x57, 0x7c, 0xc3 };
	cr_assert_eq(x86(d, sizeof(d)), 0x7c);
}

Test(codefield, x86_near_misses_refused)
{
	/* The store goes elsewhere. */
	const uint8_t a[] = { 0x8b, 0x87, 0xc8, 0x03, 0, 0, 0x83, 0xc0, 0x01, 0x89, 0x87, 0xcc, 0x03, 0, 0 };
	cr_assert_eq(x86(a, sizeof(a)), -ENOEXEC);
	/* Adds 2. */
	const uint8_t b[] = { 0x8b, 0x87, 0xc8, 0x03, 0, 0, 0x83, 0xc0, 0x02, 0x89, 0x87, 0xc8, 0x03, 0, 0 };
	cr_assert_eq(x86(b, sizeof(b)), -ENOEXEC);
	/* Through %rsi, not the first argument. */
	const uint8_t c[] = { 0x8b, 0x86, 0xc8, 0x03, 0, 0, 0x83, 0xc0, 0x01, 0x89, 0x86, 0xc8, 0x03, 0, 0 };
	cr_assert_eq(x86(c, sizeof(c)), -ENOEXEC);
	/* Adds to another register than the one loaded. */
	const uint8_t d[] = { 0x8b, 0x87, 0xc8, 0x03, 0, 0, 0x83, 0xc2, 0x01, 0x89, 0x87, 0xc8, 0x03, 0, 0 };
	cr_assert_eq(x86(d, sizeof(d)), -ENOEXEC);
	/* addl $2 in place; a subtraction (83 /5). */
	const uint8_t e[] = { 0x83, 0x87, 0x10, 0x04, 0, 0, 0x02 };
	cr_assert_eq(x86(e, sizeof(e)), -ENOEXEC);
	const uint8_t f[] = { 0x83, 0xaf, 0x10, 0x04, 0, 0, 0x01 };
	cr_assert_eq(x86(f, sizeof(f)), -ENOEXEC);
	/* A call, a jump: not the pattern. */
	const uint8_t g[] = { 0xe8, 0, 0, 0, 0, 0xc3 };
	cr_assert_eq(x86(g, sizeof(g)), -ENOEXEC);
	/* Truncated anywhere: refused, no read past n. */
	const uint8_t h[] = { 0x8b, 0x87, 0xc8, 0x03, 0, 0, 0x83, 0xc0, 0x01, 0x89, 0x87, 0xc8, 0x03, 0, 0 };
	for (size_t n = 0; n < sizeof(h); n++)
		cr_assert_eq(x86(h, n), -ENOEXEC, "n = %zu", n);
	cr_assert_eq(x86(h, sizeof(h)), 0x3c8);
}

/* aarch64 encodings: ldr w1,[x0,#imm]: 0xb9400001 | (imm/4) << 10;
 * add w1,w1,#1: 0x11000421; str w1,[x0,#imm]: 0xb9000001 | (imm/4) << 10. */
#define LDR_W1_X0(imm) (0xb9400001u | ((uint32_t)(imm) / 4) << 10)
#define STR_W1_X0(imm) (0xb9000001u | ((uint32_t)(imm) / 4) << 10)
#define ADD_W1_W1_1 0x11000421u
#define RET 0xd65f03c0u

Test(codefield, aarch64_load_add_store)
{
	const uint32_t w[] = { LDR_W1_X0(0x3c8), ADD_W1_W1_1, STR_W1_X0(0x3c8), RET };
	cr_assert_eq(a64(w, 4), 0x3c8);
	const uint32_t bti[] = { 0xd503245fu, 0xd503233fu, LDR_W1_X0(0x3d8), ADD_W1_W1_1, STR_W1_X0(0x3d8), RET };
	cr_assert_eq(a64(bti, 6), 0x3d8);
}

Test(codefield, aarch64_near_misses_refused)
{
	const uint32_t other[] = { LDR_W1_X0(0x3c8), ADD_W1_W1_1, STR_W1_X0(0x3cc), RET };
	cr_assert_eq(a64(other, 4), -ENOEXEC);
	const uint32_t two[] = { LDR_W1_X0(0x3c8), 0x11000821u /* add w1,w1,#2 */, STR_W1_X0(0x3c8), RET };
	cr_assert_eq(a64(two, 4), -ENOEXEC);
	const uint32_t x1[] = { LDR_W1_X0(0x3c8) | (1u << 5) /* [x1] */, ADD_W1_W1_1, STR_W1_X0(0x3c8), RET };
	cr_assert_eq(a64(x1, 4), -ENOEXEC);
	const uint32_t wide[] = { 0xf9400001u /* ldr x1,[x0] */, ADD_W1_W1_1, STR_W1_X0(0), RET };
	cr_assert_eq(a64(wide, 4), -ENOEXEC);
	const uint32_t shifted[] = { LDR_W1_X0(0x3c8), 0x11400421u /* add w1,w1,#1,lsl #12 */, STR_W1_X0(0x3c8), RET };
	cr_assert_eq(a64(shifted, 4), -ENOEXEC);
	const uint32_t reg[] = { LDR_W1_X0(0x3c8), 0x11000422u /* add w2,w1,#1 */, STR_W1_X0(0x3c8), RET };
	cr_assert_eq(a64(reg, 4), -ENOEXEC);
	cr_assert_eq(a64(other, 2), -ENOEXEC);
}

Test(codefield, host_decoder)
{
	int64_t off = -1;
	char why[160];
#if defined(__x86_64__)
	const uint8_t c[] = { 0x83, 0x87, 0x10, 0x04, 0, 0, 0x01 };
	cr_assert_eq(hp_codefield_inc(c, sizeof(c), &off, why, sizeof(why)), 0);
	cr_assert_eq(off, 0x410);
#elif defined(__aarch64__)
	const uint32_t w[] = { LDR_W1_X0(0x410), ADD_W1_W1_1, STR_W1_X0(0x410) };
	cr_assert_eq(hp_codefield_inc((const uint8_t *)w, sizeof(w), &off, why, sizeof(why)), 0);
	cr_assert_eq(off, 0x410);
#else
	cr_assert_eq(hp_codefield_inc(NULL, 0, &off, why, sizeof(why)), -ENOTSUP);
#endif
}

/* ---- an address taken (hp_codefield_lea): ShenandoahHeap::_gc_state ---- */

static int64_t x86_lea(const uint8_t *c, size_t n)
{
	return run(hp_codefield_lea_x86_64, c, n);
}

static int64_t a64_lea(const uint32_t *w, size_t nw)
{
	return run_words(hp_codefield_lea_aarch64, w, nw);
}

Test(codefield, x86_lea_after_a_branch_or_endbr)
{
	/* test %dl,%dl; jne +0x3c; mov %esi,%r9d; lea 0x279(%rdi),%r8;
	 * mov %edx,%eax; lock cmpxchg %cl,(%r8) */
	const uint8_t a[] = { 0x84, 0xd2, 0x75, 0x3c, 0x41, 0x89, 0xf1, 0x4c, 0x8d, 0x87, 0x79, 0x02, 0, 0,
			      0x89, 0xd0, 0xf0, 0x41, 0x0f, 0xb0, 0x08 };
	cr_assert_eq(x86_lea(a, sizeof(a)), 0x279);
	/* endbr64; lea 0x48c(%rdi),%rsi; lock cmpxchg %ecx,(%rsi) */
	const uint8_t b[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x8d, 0xb7, 0x8c, 0x04, 0, 0, 0xf0, 0x0f, 0xb1, 0x0e };
	cr_assert_eq(x86_lea(b, sizeof(b)), 0x48c);
}

Test(codefield, x86_lea_of_an_address_not_updated_is_refused)
{
	/* lea 0x279(%rdi),%r8 and no cmpxchg */
	const uint8_t a[] = { 0x4c, 0x8d, 0x87, 0x79, 0x02, 0, 0, 0xc3 };
	cr_assert_eq(x86_lea(a, sizeof(a)), -ENOEXEC);
	/* lea 0x279(%rdi),%r8; lock cmpxchg %cl,(%rsi): through another register */
	const uint8_t b[] = { 0x4c, 0x8d, 0x87, 0x79, 0x02, 0, 0, 0xf0, 0x0f, 0xb0, 0x0e };
	cr_assert_eq(x86_lea(b, sizeof(b)), -ENOEXEC);
}

Test(codefield, x86_lea_through_another_base_is_refused)
{
	/* lea 0x279(%r15),%r8 (REX.B: the base is %r15) */
	const uint8_t a[] = { 0x4d, 0x8d, 0x87, 0x79, 0x02, 0, 0 };
	cr_assert_eq(x86_lea(a, sizeof(a)), -ENOEXEC);
	/* lea 0x279(%rip),%r8 (ModRM r/m 101, mod 00) */
	const uint8_t b[] = { 0x4c, 0x8d, 0x05, 0x79, 0x02, 0, 0 };
	cr_assert_eq(x86_lea(b, sizeof(b)), -ENOEXEC);
	/* lea 0x79(%rdi),%r8 (disp8: not a member this far in) and a truncated one */
	const uint8_t c[] = { 0x4c, 0x8d, 0x47, 0x79, 0x4c, 0x8d, 0x87, 0x79, 0x02 };
	cr_assert_eq(x86_lea(c, sizeof(c)), -ENOEXEC);
}

Test(codefield, aarch64_add_from_x0)
{
	/* stp x29, x30, [sp, #-16]!; sxtb w6, w1; add x5, x0, #0x279 */
	const uint32_t w[] = { 0xa9bf7bfd, 0x13001c26, 0x91000000u | (0x279u << 10) | 5u };
	cr_assert_eq(a64_lea(w, 3), 0x279);
}

Test(codefield, aarch64_add_from_another_register_or_shifted_is_refused)
{
	/* add x5, x1, #0x279; add x5, x0, #0x279, lsl #12 */
	const uint32_t w[] = { 0x91000000u | (0x279u << 10) | (1u << 5) | 5u, 0x91400000u | (0x279u << 10) | 5u };
	cr_assert_eq(a64_lea(w, 2), -ENOEXEC);
}
