/* HotSpot's SafeFetchN, checked before it is trusted (see safefetch.h). */
#include "vmstructs/safefetch.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#include "vmstructs/errmsg.h"
#include "vmstructs/libjvm.h"
#include "vmstructs/safemem.h"

#define WORD 8

int hp_safefetch_read(const struct hp_safefetch *s, void *dst, uintptr_t src, size_t n)
{
	if (!s || !s->fetch)
		return hp_safe_read(dst, (const void *)src, n);
	if (n == 0)
		return 0;
	if (!src || src + n < src)
		return -EFAULT;
	/* each aligned word the range touches, its overlapping bytes copied */
	unsigned char *out = dst;
	for (uintptr_t a = src & ~(uintptr_t)(WORD - 1); a < src + n; a += WORD) {
		uintptr_t w;
		if (!hp_safefetch_word(s, a, &w))
			return -EFAULT;
		uintptr_t from = a < src ? src : a, to = a + WORD > src + n ? src + n : a + WORD;
		memcpy(out + (from - src), (const unsigned char *)&w + (from - a), to - from);
	}
	return 0;
}

int hp_safefetch_init(struct hp_safefetch *s, const struct hp_libjvm *jvm, uintptr_t impl, uintptr_t fault,
		      uintptr_t cont, char *err, size_t errlen)
{
	s->fetch = NULL;
#if defined(__x86_64__)
	/* safefetch_linux_x86_64.S: movq (%rdi), %rax; ret  and  movq %rsi, %rax; ret */
	static const unsigned char load[] = { 0x48, 0x8b, 0x07, 0xc3 }, deflt[] = { 0x48, 0x89, 0xf0, 0xc3 };
#elif defined(__aarch64__)
	/* safefetch_linux_aarch64.S: ldr x0, [x0]; ret  and  mov x0, x1; ret
	 * (little-endian words f9400000 d65f03c0 / aa0103e0 d65f03c0) */
	static const unsigned char load[] = { 0x00, 0x00, 0x40, 0xf9, 0xc0, 0x03, 0x5f, 0xd6 },
				   deflt[] = { 0xe0, 0x03, 0x01, 0xaa, 0xc0, 0x03, 0x5f, 0xd6 };
#else
	static const unsigned char load[1], deflt[1];
	(void)jvm, (void)impl, (void)fault, (void)cont, (void)load, (void)deflt;
	return hp_fail(err, errlen, -ENOSYS, "SafeFetchN is checked on x86_64 and aarch64 only");
#endif
#if defined(__x86_64__) || defined(__aarch64__)
	if (!impl || !fault || !cont)
		return hp_fail(err, errlen, -ENOENT, "libjvm has no SafeFetchN_impl/_SafeFetchN_fault/_continuation");
	unsigned char got[sizeof(load)], got2[sizeof(deflt)];
	if (!hp_libjvm_in_text(jvm, impl) || !hp_libjvm_in_text(jvm, cont) || fault != impl ||
	    hp_safe_read(got, (const void *)impl, sizeof(got)) || hp_safe_read(got2, (const void *)cont, sizeof(got2)))
		return hp_fail(err, errlen, -ENOEXEC, "SafeFetchN's symbols are not where libjvm's code is");
	if (memcmp(got, load, sizeof(load)) || memcmp(got2, deflt, sizeof(deflt)))
		return hp_fail(err, errlen, -ENOEXEC, "SafeFetchN is not the plain load this build expects "
			       "(%02x %02x %02x %02x / %02x %02x %02x %02x)", got[0], got[1], got[2], got[3], got2[0],
			       got2[1], got2[2], got2[3]);
	intptr_t (*fetch)(intptr_t *, intptr_t) = (intptr_t(*)(intptr_t *, intptr_t))impl;
	/* HotSpot's handler must be the one a fault reaches first. */
	int sigs[] = { SIGSEGV, SIGBUS };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa;
		if (sigaction(sigs[i], NULL, &sa) || !(sa.sa_flags & SA_SIGINFO) ||
		    !hp_libjvm_in_text(jvm, (uintptr_t)sa.sa_sigaction))
			return hp_fail(err, errlen, -EFAULT, "the %s handler is not HotSpot's (%p): a fault in "
				       "SafeFetchN might not be resumed", sigs[i] == SIGSEGV ? "SIGSEGV" : "SIGBUS",
				       (void *)sa.sa_sigaction);
	}
	/* A page that faults when read. */
	void *guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guard == MAP_FAILED)
		return hp_fail(err, errlen, -ENOMEM, "no page to try SafeFetchN on");
	int rc = -EFAULT;
	/* A fault, then a word that is readable. */
	intptr_t word = 0x1234567890abcdefll;
	bool ok = fetch((intptr_t *)guard, 42) == 42 && fetch((intptr_t *)guard, -7) == -7 && fetch(&word, 0) == word;
	munmap(guard, 4096);
	if (!ok)
		return hp_fail(err, errlen, rc, "SafeFetchN gave wrong answers in this process");
	s->fetch = fetch;
	return 0;
#endif
}
