#include "vmstructs/safemem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define PAGE 4096
#define MAX_PAGES 16

/* Our pid, not asked for at every read (getpid is a system call of its
 * own in glibc >= 2.25: ~0.1 us here, an eighth of a safe read); a forked
 * child that runs on learns its own. */
static pid_t self_pid;

static inline pid_t my_pid(void)
{
	pid_t p = __atomic_load_n(&self_pid, __ATOMIC_RELAXED);
	return p ? p : getpid();
}

/* Where process_vm_readv is refused (ENOSYS under qemu-user's emulation of
 * another architecture; EPERM under a seccomp profile that forbids it),
 * reads go through /proc/self/mem instead: one pread, as thread-safe.
 * It differs in one way: it reads PROT_NONE pages that are mapped (the
 * kernel forces the access) where process_vm_readv fails; both fail on
 * unmapped addresses, and neither can fault. The file is opened on first
 * need (-1: not yet; -2: cannot be). */
static int refused;             /* process_vm_readv refused once: never again */
static int mem_fd = -1;

static void learn_pid(void)
{
	__atomic_store_n(&self_pid, getpid(), __ATOMIC_RELAXED);
	/* A forked child's copy of the descriptor still reads the parent. */
	int fd = __atomic_exchange_n(&mem_fd, -1, __ATOMIC_RELAXED);
	if (fd >= 0)
		close(fd);
}

static int self_mem(void)
{
	int fd = __atomic_load_n(&mem_fd, __ATOMIC_ACQUIRE);
	if (fd != -1)
		return fd;
	int f = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	if (f < 0)
		f = -2;
	int expect = -1;
	if (!__atomic_compare_exchange_n(&mem_fd, &expect, f, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (f >= 0)
			close(f);
		f = expect;
	}
	return f;
}

/* process_vm_readv, or the fallback when it is refused; -1 on failure. */
static ssize_t read_self(void *dst, const void *src, size_t n)
{
	if (!__atomic_load_n(&refused, __ATOMIC_RELAXED)) {
		struct iovec local = { dst, n };
		struct iovec remote = { (void *)src, n };
		ssize_t got = process_vm_readv(my_pid(), &local, 1, &remote, 1, 0);
		if (got >= 0 || (errno != ENOSYS && errno != EPERM))
			return got;
		__atomic_store_n(&refused, 1, __ATOMIC_RELAXED);
	}
	int fd = self_mem();
	if (fd < 0 || (uintptr_t)src > (uintptr_t)INT64_MAX - n) {
		errno = EFAULT;
		return -1;
	}
	return pread(fd, dst, n, (off_t)(uintptr_t)src);
}

bool hp_safe_read_fallback(void)
{
	return __atomic_load_n(&refused, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void safemem_init(void)
{
	learn_pid();
	pthread_atfork(NULL, NULL, learn_pid);
}


int hp_safe_read(void *dst, const void *src, size_t n)
{
	if (n == 0)
		return 0;
	if (!src || (uintptr_t)src + n < (uintptr_t)src)
		return -EFAULT;
	return read_self(dst, src, n) == (ssize_t)n ? 0 : -EFAULT;
}

long hp_safe_read_some(void *dst, const void *src, size_t n)
{
	uintptr_t a = (uintptr_t)src;
	if (!src || a + n < a || n > (MAX_PAGES - 1) * (size_t)PAGE)
		return -EFAULT;
	if (n == 0)
		return 0;
	struct iovec local = { dst, n }, remote[MAX_PAGES];
	int k = 0;
	for (uintptr_t at = a, end = a + n; at < end; k++) {
		uintptr_t next = (at & ~(uintptr_t)(PAGE - 1)) + PAGE;
		if (next > end)
			next = end;
		remote[k] = (struct iovec){ (void *)at, next - at };
		at = next;
	}
	if (__atomic_load_n(&refused, __ATOMIC_RELAXED)) {
		/* Page by page, up to the first that fails. */
		long done = 0;
		for (int i = 0; i < k; i++) {
			ssize_t got = read_self((char *)dst + done, remote[i].iov_base, remote[i].iov_len);
			if (got <= 0)
				break;
			done += got;
			if ((size_t)got < remote[i].iov_len)
				break;
		}
		return done;
	}
	ssize_t got = process_vm_readv(my_pid(), &local, 1, remote, (unsigned long)k, 0);
	if (got < 0 && (errno == ENOSYS || errno == EPERM)) {
		__atomic_store_n(&refused, 1, __ATOMIC_RELAXED);
		return hp_safe_read_some(dst, src, n);
	}
	return got < 0 ? (errno == EFAULT ? 0 : -EFAULT) : got;
}

bool hp_readable(const void *p, size_t n)
{
	char buf[256];
	const char *c = p;
	while (n > 0) {
		size_t chunk = n < sizeof(buf) ? n : sizeof(buf);
		if (hp_safe_read(buf, c, chunk) != 0)
			return false;
		c += chunk;
		n -= chunk;
	}
	return true;
}

long hp_safe_read_string(char *dst, size_t cap, const void *src)
{
	if (cap == 0)
		return -ENAMETOOLONG;
	size_t done = 0;
	const char *s = src;
	while (done < cap - 1) {
		/* Read up to the end of the current page so that a string ending
		 * just before an unmapped page is still read. */
		uintptr_t addr = (uintptr_t)(s + done);
		size_t to_page_end = 4096 - (addr & 4095);
		size_t chunk = cap - 1 - done;
		if (chunk > to_page_end)
			chunk = to_page_end;
		if (chunk > 64)
			chunk = 64;
		if (hp_safe_read(dst + done, s + done, chunk) != 0)
			return -EFAULT;
		void *nul = memchr(dst + done, '\0', chunk);
		if (nul)
			return (long)((char *)nul - dst);
		done += chunk;
	}
	dst[cap - 1] = '\0';
	return -ENAMETOOLONG;
}

int hp_safe_read_u64(uint64_t *out, const void *src)
{
	return hp_safe_read(out, src, sizeof(*out));
}

int hp_safe_read_ptr(const void **out, const void *src)
{
	return hp_safe_read(out, src, sizeof(*out));
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23          /* Linux 5.14 */
#endif

void hp_prefault_write(void *p, size_t n)
{
	long page = sysconf(_SC_PAGESIZE);
	if (!p || !n || page <= 0)
		return;
	uintptr_t lo = (uintptr_t)p & ~((uintptr_t)page - 1), hi = (uintptr_t)p + n;
	if (madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0)
		return;
	/* an older kernel: a byte of each page written back as it is */
	for (uintptr_t a = (uintptr_t)p; a < hi; a = (a & ~((uintptr_t)page - 1)) + (uintptr_t)page)
		*(volatile char *)a = *(volatile char *)a;
}
