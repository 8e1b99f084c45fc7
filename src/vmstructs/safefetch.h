/* HotSpot's own SafeFetchN: a load from memory that may be unmapped, which
 * the JVM's SIGSEGV handler turns into a default value instead of a crash
 * (runtime/safefetch.hpp; since JDK 17's static implementation,
 * safefetch_linux_x86_64.S: SafeFetchN_impl is `movq (%rdi), %rax; ret`
 * at _SafeFetchN_fault, and the handler (handle_safefetch, checked first
 * for every SIGSEGV/SIGBUS in the process) resumes a fault there at
 * _SafeFetchN_continuation, `movq %rsi, %rax; ret`).
 *
 * Why: a safe read by process_vm_readv (safemem.h) is a system call, ~0.8 us
 * here and ~3 us per virtual-thread sample under load (the mmap lock it
 * takes is the one the heap's page faults take); reading a heap stack chunk
 * (stackchunk.h) on every sample past a return barrier needs a dozen words
 * of the Java heap, which SafeFetchN reads in nanoseconds each.
 *
 * Trusted only after checks: the three .symtab symbols (names in
 * symbols/, static.SafeFetchN_*) must lie in libjvm's executable segment
 * and hold exactly the instructions above (so it is a plain load, nothing
 * else); the process's SIGSEGV and SIGBUS handlers must be HotSpot's (in
 * libjvm's code: another handler in front, e.g. a chaining profiler's, may
 * not resume the fault); then a fault must come back as the default value.
 * (No forked child tries it first: fork() of a JVM copies the page tables
 * of the whole heap and write-protects every page of it.)
 */
#ifndef HP_SAFEFETCH_H
#define HP_SAFEFETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hp_libjvm;

struct hp_safefetch {
	intptr_t (*fetch)(intptr_t *adr, intptr_t errval);   /* NULL: not usable */
};

/* Checks the symbols at `impl`, `fault` and `cont` (runtime addresses) as
 * above. 0, or a negative errno with a one-line reason: -ENOENT (a symbol
 * missing), -ENOEXEC (not the expected code), -EFAULT (a fault was not
 * caught; or the signal handlers are not HotSpot's), -ENOSYS (not x86_64). */
int hp_safefetch_init(struct hp_safefetch *s, const struct hp_libjvm *jvm, uintptr_t impl, uintptr_t fault,
		      uintptr_t cont, char *err, size_t errlen);

/* The aligned word at addr, or false if it cannot be read. */
static inline bool hp_safefetch_word(const struct hp_safefetch *s, uintptr_t addr, uintptr_t *out)
{
	/* the default value may be the word itself: a second fetch with
	 * another default tells a fault from that */
	const intptr_t a = (intptr_t)0x5afe5afe5afe5afeull, b = ~a;
	intptr_t v = s->fetch((intptr_t *)addr, a);
	if (v == a && s->fetch((intptr_t *)addr, b) != a)
		return false;   /* a fault, or a word that changed: not read */
	*out = (uintptr_t)v;
	return true;
}

/* n bytes at src into dst: word by word with SafeFetchN when `s` has it,
 * else one process_vm_readv (safemem.h). 0 or -EFAULT. */
int hp_safefetch_read(const struct hp_safefetch *s, void *dst, uintptr_t src, size_t n);

#endif
