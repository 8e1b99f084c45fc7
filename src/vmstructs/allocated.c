/* A Java thread's allocated bytes (allocated.h). */
#include "vmstructs/allocated.h"
#include "vmstructs/errmsg.h"

#include <errno.h>
#include <string.h>

static const struct hp_vms_entry allocated_table[] = {
	{ "Thread", "_allocated_bytes", HP_VMS_OFFSET, offsetof(struct hp_allocated, off_allocated), HP_VMS_REQUIRED,
	  0, 0 },
	{ "Thread", "_tlab", HP_VMS_OFFSET, offsetof(struct hp_allocated, off_tlab), HP_VMS_REQUIRED, 0, 0 },
	{ "ThreadLocalAllocBuffer", "_start", HP_VMS_OFFSET, offsetof(struct hp_allocated, off_start), HP_VMS_REQUIRED,
	  0, 0 },
	{ "ThreadLocalAllocBuffer", "_top", HP_VMS_OFFSET, offsetof(struct hp_allocated, off_top), HP_VMS_REQUIRED, 0,
	  0 },
	{ "ThreadLocalAllocBuffer", "_number_of_refills", HP_VMS_OFFSET, offsetof(struct hp_allocated, off_refills),
	  HP_VMS_OPTIONAL, 0, 0 },
	{ "JavaThread", NULL, HP_VMS_SIZE, offsetof(struct hp_allocated, thread_size), HP_VMS_REQUIRED, 0, 0 },
};

/* A TLAB larger than this is not one (HotSpot's own bound,
 * ThreadLocalAllocBuffer::max_size(), is at most a few hundred MiB). */
#define TLAB_SANE_BYTES ((uint64_t)1 << 32)

int hp_allocated_init(struct hp_allocated *a, const struct hp_vms *v, char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	int rc = hp_vms_bind(v, allocated_table, HP_VMS_N(allocated_table), a, "thread allocated bytes", err, errlen);
	if (rc)
		return rc;
	int64_t end = a->off_tlab + (a->off_start > a->off_top ? a->off_start : a->off_top) + 8;
	if (a->off_allocated < 0 || a->off_allocated + 8 > a->thread_size || a->off_tlab < 0 || end > a->thread_size) {
		return hp_fail(err, errlen, -EINVAL, "thread allocated bytes: Thread::_allocated_bytes (%lld) or the TLAB's fields "
			 "(%lld + %lld, %lld) lie outside JavaThread's %lld bytes", (long long)a->off_allocated,
			 (long long)a->off_tlab, (long long)a->off_start, (long long)a->off_top,
			 (long long)a->thread_size);
	}
	if (a->off_refills >= 0 && a->off_tlab + a->off_refills + 4 > a->thread_size)
		a->off_refills = -1;    /* not where it could be read: the first-TLAB test is off */
	return 0;
}

int hp_allocated_read(const struct hp_allocated *a, uintptr_t java_thread, uint64_t *out)
{
	const volatile char *t = (const volatile char *)java_thread;
	int64_t before = *(const volatile int64_t *)(t + a->off_allocated);
	uintptr_t start = *(const volatile uintptr_t *)(t + a->off_tlab + a->off_start);
	uintptr_t top = *(const volatile uintptr_t *)(t + a->off_tlab + a->off_top);
	int64_t after = *(const volatile int64_t *)(t + a->off_allocated);
	if (before != after || before < 0 || top < start || top - start >= TLAB_SANE_BYTES)
		return -EAGAIN;
	*out = (uint64_t)before + (top - start);
	return 0;
}

int hp_allocated_first_after_gc(const struct hp_allocated *a, uintptr_t java_thread, const void *ref)
{
	if (a->off_refills < 0)
		return -ENOENT;
	if (!ref || ((uintptr_t)ref & 7))
		return 0;
	uintptr_t obj = *(const volatile uintptr_t *)ref;
	const volatile char *tlab = (const volatile char *)java_thread + a->off_tlab;
	uint32_t refills = *(const volatile uint32_t *)(tlab + a->off_refills);
	uintptr_t start = *(const volatile uintptr_t *)(tlab + a->off_start);
	return refills == 1 && obj != 0 && obj == start;
}
