#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmstructs/safemem.h"

static char *guarded_page(void)
{
	/* One readable page followed by an inaccessible one. */
	long ps = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(p, MAP_FAILED);
	cr_assert_eq(mprotect(p + ps, ps, PROT_NONE), 0);
	return p;
}

Test(safemem, reads_mapped_and_refuses_unmapped)
{
	long ps = sysconf(_SC_PAGESIZE);
	char *p = guarded_page();
	memset(p, 'x', ps);
	char buf[16];
	cr_assert_eq(hp_safe_read(buf, p + ps - 16, 16), 0);
	cr_assert_eq(buf[0], 'x');
	cr_assert_eq(hp_safe_read(buf, p + ps - 8, 16), -EFAULT, "straddles the guard page");
	cr_assert_eq(hp_safe_read(buf, NULL, 8), -EFAULT);
	cr_assert_eq(hp_safe_read(buf, (void *)16, 8), -EFAULT);
	cr_assert(hp_readable(p, ps));
	cr_assert_not(hp_readable(p, ps + 1));
}

Test(safemem, strings_end_at_nul_or_fail_cleanly)
{
	long ps = sysconf(_SC_PAGESIZE);
	char *p = guarded_page();
	memset(p, 'a', ps);
	char buf[64];
	/* "abc" ending exactly at the last byte before the guard page. */
	strcpy(p + ps - 4, "abc");
	cr_assert_eq(hp_safe_read_string(buf, sizeof(buf), p + ps - 4), 3);
	cr_assert_str_eq(buf, "abc");
	/* No NUL before the guard page: unreadable, not a crash. */
	memset(p + ps - 10, 'b', 10);
	cr_assert_eq(hp_safe_read_string(buf, sizeof(buf), p + ps - 10), -EFAULT);
	/* No NUL within the cap. */
	cr_assert_eq(hp_safe_read_string(buf, 8, p), -ENAMETOOLONG);
	cr_assert_eq(hp_safe_read_string(buf, sizeof(buf), NULL), -EFAULT);
}

Test(safemem, reading_some_stops_at_the_first_unreadable_page)
{
	long ps = sysconf(_SC_PAGESIZE);
	char *p = guarded_page();
	memset(p, 'y', ps);
	static char buf[3 * 4096];
	cr_assert_eq(hp_safe_read_some(buf, p + ps - 100, 2000), 100, "up to the guard page");
	cr_assert_eq(buf[99], 'y');
	cr_assert_eq(hp_safe_read_some(buf, p + 8, 1000), 1000, "all of it when mapped");
	cr_assert_eq(hp_safe_read_some(buf, p, (size_t)ps), ps, "a whole page");
	cr_assert_eq(hp_safe_read_some(buf, p + ps, 64), 0, "nothing readable");
	cr_assert_eq(hp_safe_read_some(buf, p + 10, 0), 0);
	cr_assert_eq(hp_safe_read_some(buf, NULL, 8), -EFAULT);
	cr_assert_eq(hp_safe_read_some(buf, p, 64 * 4096), -EFAULT, "more than the pages it splits into");
}

/* Pages mapped in as written, none left out, contents kept. */
Test(safemem, prefault_maps_every_page_in_and_keeps_contents)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t pages = 64;
	char *m = mmap(NULL, pages * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(m, MAP_FAILED);
	unsigned char vec[64];
	cr_assert_eq(mincore(m, pages * (size_t)page, vec), 0);
	int before = 0;
	for (size_t i = 0; i < pages; i++)
		before += vec[i] & 1;
	cr_assert_eq(before, 0, "a fresh mapping has no page in");
	m[3 * page + 7] = 42;
	/* from the middle of a page to the middle of another: both ends in */
	hp_prefault_write(m + 100, (pages - 1) * (size_t)page);
	cr_assert_eq(mincore(m, pages * (size_t)page, vec), 0);
	for (size_t i = 0; i < pages; i++)
		cr_expect(vec[i] & 1, "page %zu not in", i);
	cr_expect_eq(m[3 * page + 7], 42);
	for (size_t i = 0; i < pages * (size_t)page; i++)
		if (i != 3 * (size_t)page + 7)
			cr_assert_eq(m[i], 0, "byte %zu", i);
	hp_prefault_write(NULL, 10);    /* nothing to do */
	munmap(m, pages * (size_t)page);
}
