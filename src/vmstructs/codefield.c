/* The member a tiny HotSpot method increments (codefield.h).
 *
 * Written by hand: what is needed is one pattern of three instructions,
 * not a disassembler (libopcodes would print text to parse back, and is
 * GPL; a decoder library would be a new dependency for ~60 lines). The
 * forms below are the ones GCC emits for `this->_counter++` on a `volatile
 * uint` member at -O2/-O3, as found in the libjvm of every release
 * supported (tests/test_codefield.c holds their bytes). */
#include "vmstructs/codefield.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* ---- x86_64 --------------------------------------------------------------- */

/* endbr64, push %rbp, mov %rsp,%rbp: frame set-up that may come anywhere
 * among the three instructions (JDK 11's builds put it after the load). */
static size_t skip_x86_prologue(const uint8_t *c, size_t n, size_t i)
{
	for (;;) {
		if (i + 4 <= n && c[i] == 0xf3 && c[i + 1] == 0x0f && c[i + 2] == 0x1e && c[i + 3] == 0xfa)
			i += 4;
		else if (i + 1 <= n && c[i] == 0x55)
			i += 1;
		else if (i + 3 <= n && c[i] == 0x48 && c[i + 1] == 0x89 && c[i + 2] == 0xe5)
			i += 3;
		else
			return i;
	}
}

/* A ModRM byte addressing disp8(%rdi) or disp32(%rdi) at c[i] (after the
 * opcode): its reg field, displacement and length (ModRM + disp); false
 * for any other addressing. */
static bool rdi_disp(const uint8_t *c, size_t n, size_t i, unsigned *reg, int64_t *disp, size_t *len)
{
	if (i >= n)
		return false;
	unsigned modrm = c[i], mod = modrm >> 6, rm = modrm & 7;
	*reg = (modrm >> 3) & 7;
	if (rm != 7 || (mod != 1 && mod != 2))
		return false;
	if (mod == 1) {
		if (i + 2 > n)
			return false;
		*disp = (int8_t)c[i + 1];
		*len = 2;
	} else {
		if (i + 5 > n)
			return false;
		int32_t d;
		memcpy(&d, c + i + 1, 4);
		*disp = d;
		*len = 5;
	}
	return true;
}

int hp_codefield_inc_x86_64(const uint8_t *c, size_t n, int64_t *offset, char *why, size_t len)
{
	unsigned reg, reg2;
	int64_t disp, disp2;
	size_t l, i = skip_x86_prologue(c, n, 0);
	if (i < n && (c[i] == 0x83 || c[i] == 0xff) && rdi_disp(c, n, i + 1, &reg, &disp, &l) && reg == 0 &&
	    (c[i] == 0xff || (i + 1 + l < n && c[i + 1 + l] == 1))) {
		*offset = disp;         /* addl $1,disp(%rdi) or incl disp(%rdi) */
		return 0;
	}
	if (i >= n || c[i] != 0x8b || !rdi_disp(c, n, i + 1, &reg, &disp, &l)) {
		snprintf(why, len, "x86_64: no load through %%rdi at byte %zu", i);
		return -ENOEXEC;
	}
	i = skip_x86_prologue(c, n, i + 1 + l);
	if (i + 3 <= n && c[i] == 0x83 && c[i + 1] == (0xc0 | reg) && c[i + 2] == 1)
		i += 3;                 /* add $1,%reg */
	else if (i + 2 <= n && c[i] == 0xff && c[i + 1] == (0xc0 | reg))
		i += 2;                 /* inc %reg */
	else {
		snprintf(why, len, "x86_64: no add of 1 to the loaded register at byte %zu", i);
		return -ENOEXEC;
	}
	i = skip_x86_prologue(c, n, i);
	if (i >= n || c[i] != 0x89 || !rdi_disp(c, n, i + 1, &reg2, &disp2, &l) || reg2 != reg || disp2 != disp) {
		snprintf(why, len, "x86_64: no store of the register back to %lld(%%rdi) at byte %zu", (long long)disp, i);
		return -ENOEXEC;
	}
	*offset = disp;
	return 0;
}

/* ---- aarch64 -------------------------------------------------------------- */

static uint32_t word(const uint8_t *c, size_t i)
{
	return (uint32_t)c[i] | (uint32_t)c[i + 1] << 8 | (uint32_t)c[i + 2] << 16 | (uint32_t)c[i + 3] << 24;
}

int hp_codefield_inc_aarch64(const uint8_t *c, size_t n, int64_t *offset, char *why, size_t len)
{
	size_t i = 0;
	while (i + 4 <= n && (word(c, i) == 0xd503245f || word(c, i) == 0xd503233f))
		i += 4;                 /* bti c, paciasp */
	if (i + 12 > n) {
		snprintf(why, len, "aarch64: fewer than three instructions");
		return -ENOEXEC;
	}
	uint32_t ld = word(c, i), add = word(c, i + 4), st = word(c, i + 8);
	/* ldr wT, [x0, #imm12 * 4] */
	if ((ld & 0xffc00000u) != 0xb9400000u || ((ld >> 5) & 31) != 0) {
		snprintf(why, len, "aarch64: no 32-bit load through x0 (0x%08x)", ld);
		return -ENOEXEC;
	}
	unsigned t = ld & 31, imm = (ld >> 10) & 0xfff;
	/* add wD, wT, #1 */
	unsigned d = add & 31;
	if ((add & 0xffc00000u) != 0x11000000u || ((add >> 10) & 0xfff) != 1 || ((add >> 5) & 31) != t) {
		snprintf(why, len, "aarch64: no add of 1 to the loaded register (0x%08x)", add);
		return -ENOEXEC;
	}
	/* str wD, [x0, #imm12 * 4] */
	if ((st & 0xffc00000u) != 0xb9000000u || ((st >> 5) & 31) != 0 || (st & 31) != d || ((st >> 10) & 0xfff) != imm) {
		snprintf(why, len, "aarch64: no store of the sum back to [x0, #%u] (0x%08x)", imm * 4, st);
		return -ENOEXEC;
	}
	*offset = (int64_t)imm * 4;
	return 0;
}

/* ---- an address taken (lea / add) ---------------------------------------- */

int hp_codefield_lea_x86_64(const uint8_t *c, size_t n, int64_t *offset, char *why, size_t len)
{
	/* REX.W with no REX.B or X (the base is %rdi, not %r15), opcode 8d, ModRM
	 * mod 10 (disp32) r/m 111 (%rdi), any destination register; then, for
	 * the address to be the one updated, a `lock cmpxchg` (f0, optional
	 * REX, 0f b0|b1) through that register (ModRM mod 00, no SIB, no
	 * disp). */
	for (size_t i = 0; i + 7 <= n; i++) {
		if ((c[i] & 0xfb) != 0x48 || c[i + 1] != 0x8d || (c[i + 2] & 0xc7) != 0x87)
			continue;
		unsigned dest = ((c[i + 2] >> 3) & 7) | ((c[i] >> 2) & 1) << 3;
		for (size_t j = i + 7; j + 4 <= n; j++) {
			if (c[j] != 0xf0)
				continue;
			size_t k = j + 1;
			unsigned b = 0;
			if (c[k] >= 0x40 && c[k] <= 0x4f)
				b = c[k++] & 1;
			if (k + 3 > n || c[k] != 0x0f || (c[k + 1] != 0xb0 && c[k + 1] != 0xb1))
				continue;
			unsigned modrm = c[k + 2], rm = modrm & 7;
			if ((modrm >> 6) == 0 && rm != 4 && rm != 5 && (rm | b << 3) == dest) {
				int32_t d;
				memcpy(&d, c + i + 3, 4);
				*offset = d;
				return 0;
			}
		}
		snprintf(why, len, "x86_64: no lock cmpxchg through the register the lea at byte %zu loads", i);
		return -ENOEXEC;
	}
	snprintf(why, len, "x86_64: no lea disp32(%%rdi) in the first %zu bytes", n);
	return -ENOEXEC;
}

int hp_codefield_lea_aarch64(const uint8_t *c, size_t n, int64_t *offset, char *why, size_t len)
{
	/* add xD, x0, #imm12 (64-bit, no shift): sf 1, op 0, S 0, 100010, sh 0. */
	for (size_t i = 0; i + 4 <= n; i += 4) {
		uint32_t w = word(c, i);
		if ((w & 0xffc003e0u) == 0x91000000u) {
			*offset = (w >> 10) & 0xfff;
			return 0;
		}
	}
	snprintf(why, len, "aarch64: no add xD, x0, #imm in the first %zu bytes", n);
	return -ENOEXEC;
}

int hp_codefield_lea(const uint8_t *code, size_t n, int64_t *offset, char *why, size_t len)
{
#if defined(__x86_64__)
	return hp_codefield_lea_x86_64(code, n, offset, why, len);
#elif defined(__aarch64__)
	return hp_codefield_lea_aarch64(code, n, offset, why, len);
#else
	(void)code, (void)n, (void)offset;
	snprintf(why, len, "no decoder for this architecture");
	return -ENOTSUP;
#endif
}

int hp_codefield_inc(const uint8_t *code, size_t n, int64_t *offset, char *why, size_t len)
{
#if defined(__x86_64__)
	return hp_codefield_inc_x86_64(code, n, offset, why, len);
#elif defined(__aarch64__)
	return hp_codefield_inc_aarch64(code, n, offset, why, len);
#else
	(void)code, (void)n, (void)offset;
	snprintf(why, len, "no decoder for this architecture");
	return -ENOTSUP;
#endif
}
