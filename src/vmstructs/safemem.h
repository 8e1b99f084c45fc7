/* Reading memory that may not be mapped, without faulting.
 *
 * Every HotSpot pointer heapprobe follows at set-up time goes through these:
 * a wrong offset or a stale pointer must disable one source, never crash the
 * JVM. process_vm_readv() on our own pid returns EFAULT for unmapped ranges
 * instead of raising SIGSEGV, needs no signal handler (the JVM owns SIGSEGV)
 * and is async-signal-safe. Cost is a syscall (~0.5-1 us), so hot paths
 * validate once and then read directly. Where process_vm_readv is refused
 * (qemu-user running another architecture's JVM; a seccomp profile), a
 * pread of /proc/self/mem stands in (see safemem.c for how it differs).
 */
#ifndef HP_SAFEMEM_H
#define HP_SAFEMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Copies n bytes from src to dst. Returns 0, or -EFAULT if any byte of the
 * source range is unreadable (dst is then unspecified). */
int hp_safe_read(void *dst, const void *src, size_t n);

/* Copies up to n bytes from src, stopping at the first page that cannot be
 * read: the number of bytes copied (a prefix of the range, maybe 0), or
 * -EFAULT for a bad range. One system call, for a read that may run past
 * the end of what is mapped (process_vm_readv transfers whole iovecs, so
 * the range is split at page boundaries; n at most 16 pages). */
long hp_safe_read_some(void *dst, const void *src, size_t n);

/* true once process_vm_readv was refused and reads go through
 * /proc/self/mem. */
bool hp_safe_read_fallback(void);

/* true if [p, p+n) is readable now. */
bool hp_readable(const void *p, size_t n);

/* Maps in every page of [p, p+n), writable memory of ours, as written,
 * its contents unchanged (madvise MADV_POPULATE_WRITE, else a byte of each
 * page stored back); nothing for p NULL. For a table whose slots are read
 * before they are written, from a sampling callback: the first read of an
 * untouched page maps the shared zero page and the first write then
 * replaces it, which flushes the TLBs of every CPU the process runs on (an
 * inter-processor interrupt each: 5.7% of javac's callback samples for the
 * kept-pcs and Method tables, by perf). Costs the table's size in RSS at
 * once. */
void hp_prefault_write(void *p, size_t n);

/* Reads a NUL-terminated string at src into dst (cap bytes including NUL).
 * Returns its length, -EFAULT if unreadable, -ENAMETOOLONG if no NUL within
 * cap-1 bytes. */
long hp_safe_read_string(char *dst, size_t cap, const void *src);

int hp_safe_read_u64(uint64_t *out, const void *src);
int hp_safe_read_ptr(const void **out, const void *src);

#endif
