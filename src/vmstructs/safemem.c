#include "vmstructs/safemem.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

int hp_safe_read(void *dst, const void *src, size_t n)
{
	if (n == 0)
		return 0;
	if (!src || (uintptr_t)src + n < (uintptr_t)src)
		return -EFAULT;
	struct iovec local = { dst, n };
	struct iovec remote = { (void *)src, n };
	ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	return got == (ssize_t)n ? 0 : -EFAULT;
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
