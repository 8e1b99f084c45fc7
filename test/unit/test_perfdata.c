/* The perfdata parser and arithmetic on regions built in memory, laid out
 * the way PerfData::create_entry lays them out: header, name, padding to the
 * value's size, the value, the whole rounded up to 8 bytes. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heapusage/perfdata.h"

#define REGION 65536

struct region {
	_Alignas(4096) char mem[REGION];
	size_t top;
};

static struct region *region_new(void)
{
	static struct region r;
	memset(&r, 0, sizeof(r));
	struct hp_pd_prologue *pro = (struct hp_pd_prologue *)r.mem;
	pro->magic[0] = 0xca, pro->magic[1] = 0xfe, pro->magic[2] = 0xc0, pro->magic[3] = 0xc0;
	pro->byte_order = HP_PD_LITTLE_ENDIAN;
	pro->major_version = 2;
	pro->accessible = 1;
	pro->entry_offset = sizeof(*pro);
	r.top = sizeof(*pro);
	pro->used = (int32_t)r.top;
	return &r;
}

static struct hp_pd_prologue *prologue(struct region *r)
{
	return (struct hp_pd_prologue *)r->mem;
}

/* Appends one entry; returns it (header) so tests can break it. */
static struct hp_pd_entry *add_entry(struct region *r, const char *name, char type, const void *data, size_t dsize,
				     int vlen)
{
	size_t dlen = vlen ? (size_t)vlen : 1;
	size_t size = sizeof(struct hp_pd_entry) + strlen(name) + 1;
	size += (dsize - size % dsize) % dsize;
	size_t data_start = size;
	size += dsize * dlen;
	size = (size + 7) & ~(size_t)7;
	cr_assert_lt(r->top + size, REGION);
	char *e = r->mem + r->top;
	struct hp_pd_entry *h = (struct hp_pd_entry *)e;
	strcpy(e + sizeof(*h), name);
	memcpy(e + data_start, data, dsize * dlen);
	h->entry_length = (int32_t)size;
	h->name_offset = sizeof(*h);
	h->vector_length = vlen;
	h->data_type = type;
	h->data_units = 1;
	h->data_variability = 3;
	h->data_offset = (int32_t)data_start;
	r->top += size;
	prologue(r)->used = (int32_t)r->top;
	prologue(r)->num_entries++;
	return h;
}

/* The entry named `name`, walking the region as a reader would. */
static struct hp_pd_entry *find_entry(struct region *r, const char *name)
{
	size_t off = (size_t)prologue(r)->entry_offset;
	for (int i = 0; i < prologue(r)->num_entries; i++) {
		struct hp_pd_entry *e = (struct hp_pd_entry *)(r->mem + off);
		if (strcmp((char *)e + e->name_offset, name) == 0)
			return e;
		off += (size_t)e->entry_length;
	}
	cr_assert_fail("no entry %s", name);
	return NULL;
}

static struct hp_pd_entry *add_long(struct region *r, const char *name, int64_t v)
{
	return add_entry(r, name, 'J', &v, sizeof(v), 0);
}

static void add_string(struct region *r, const char *name, const char *s)
{
	add_entry(r, name, 'B', s, 1, (int)strlen(s) + 1);
}

/* Generation N with its spaces: {used, capacity, maxCapacity} each. */
static void add_gen(struct region *r, int n, int64_t cap, int64_t max, int nspaces, const int64_t (*sp)[3])
{
	char name[96];
	snprintf(name, sizeof(name), "sun.gc.generation.%d.name", n);
	add_string(r, name, n ? "old" : "young");
	snprintf(name, sizeof(name), "sun.gc.generation.%d.capacity", n);
	add_long(r, name, cap);
	snprintf(name, sizeof(name), "sun.gc.generation.%d.maxCapacity", n);
	add_long(r, name, max);
	snprintf(name, sizeof(name), "sun.gc.generation.%d.minCapacity", n);
	add_long(r, name, 0);
	snprintf(name, sizeof(name), "sun.gc.generation.%d.spaces", n);
	add_long(r, name, nspaces);
	for (int m = 0; m < nspaces; m++) {
		snprintf(name, sizeof(name), "sun.gc.generation.%d.space.%d.used", n, m);
		add_long(r, name, sp[m][0]);
		snprintf(name, sizeof(name), "sun.gc.generation.%d.space.%d.capacity", n, m);
		add_long(r, name, sp[m][1]);
		snprintf(name, sizeof(name), "sun.gc.generation.%d.space.%d.maxCapacity", n, m);
		add_long(r, name, sp[m][2]);
		snprintf(name, sizeof(name), "sun.gc.generation.%d.space.%d.initCapacity", n, m);
		add_long(r, name, sp[m][1]);
	}
}

/* Unrelated counters around the heap's, as in a real region. */
static void add_noise(struct region *r)
{
	add_long(r, "sun.os.hrt.frequency", 1000000000);
	add_string(r, "java.property.java.vm.name", "OpenJDK 64-Bit Server VM");
	add_long(r, "sun.gc.metaspace.used", 123456);
	add_long(r, "sun.gc.compressedclassspace.capacity", 1 << 20);
	add_long(r, "sun.gc.generation.2.capacity", 999);  /* JDK 8's perm gen: not ours */
	add_long(r, "sun.gc.generation.0.agetable.size", 16);
	int32_t i = 7;
	add_entry(r, "sun.ci.threads", 'I', &i, sizeof(i), 0);
	add_string(r, "sun.gc.collector.9.name", "not ours");
	add_long(r, "sun.gc.collector.9.invocations", 1);
	add_long(r, "sun.gc.collector.0.time", 1);
}

#define MB (1ll << 20)

/* JDK 17 G1, values taken from a real run: capacities padded by 8. */
static struct region *g1_region(int64_t pad)
{
	struct region *r = region_new();
	add_noise(r);
	const int64_t young[3][3] = { { 1 * MB, 6 * MB + pad, 96 * MB + pad }, { 0, pad, pad },
				      { 512 * 1024, 1 * MB + pad, 96 * MB + pad } };
	const int64_t old[1][3] = { { 2105736, 8 * MB + pad, 96 * MB + pad } };
	add_gen(r, 0, 7 * MB + 3 * pad, 96 * MB + 3 * pad, 3, young);
	add_gen(r, 1, 8 * MB + pad, 96 * MB + pad, 1, old);
	add_noise(r);
	return r;
}

static int index_region(struct region *r, struct hp_perfdata_counters *c, char *err, size_t len)
{
	err[0] = '\0';
	return hp_perfdata_index(r->mem, REGION, c, err, len);
}

static void expect_reading(struct region *r, enum hp_gc_kind kind, uint64_t used, uint64_t committed, uint64_t max)
{
	struct hp_perfdata_counters c;
	struct hp_perfdata_plan plan;
	struct hp_mode_reading rd;
	char err[256];
	int rc = index_region(r, &c, err, sizeof(err));
	cr_assert_eq(rc, 0, "index: %d %s", rc, err);
	rc = hp_perfdata_plan(&c, kind, &plan, err, sizeof(err));
	cr_assert_eq(rc, 0, "plan: %d %s", rc, err);
	cr_assert_eq(hp_perfdata_compute(&plan, &rd), 0);
	cr_assert_eq(rd.kind, HP_USAGE_CURRENT);
	cr_assert_eq(rd.used, used, "used %llu, want %llu", (unsigned long long)rd.used, (unsigned long long)used);
	cr_assert_eq(rd.committed, committed, "committed %llu, want %llu", (unsigned long long)rd.committed,
		     (unsigned long long)committed);
	cr_assert_eq(rd.max, max, "max %llu, want %llu", (unsigned long long)rd.max, (unsigned long long)max);
}

static void expect_error(struct region *r, int want, const char *needle)
{
	struct hp_perfdata_counters c;
	char err[256];
	int rc = index_region(r, &c, err, sizeof(err));
	cr_assert_eq(rc, want, "rc %d (%s), want %d", rc, err, want);
	cr_assert(strstr(err, needle), "reason '%s' lacks '%s'", err, needle);
	cr_assert_null(c.gen[1].capacity, "out is zeroed on error");
}

Test(perfdata, good_region_points_into_the_live_counters)
{
	struct region *r = g1_region(8);
	struct hp_perfdata_counters c;
	char err[256];
	cr_assert_eq(index_region(r, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert(c.gen[0].present && c.gen[1].present);
	cr_assert_eq(c.gen[0].spaces, 3);
	cr_assert_eq(c.gen[1].spaces, 1);
	cr_assert_eq(c.num_entries, prologue(r)->num_entries);
	for (int n = 0; n < 2; n++)
		for (int m = 0; m < c.gen[n].spaces; m++) {
			const char *p = (const char *)c.gen[n].space[m].used;
			cr_assert(p >= r->mem && p < r->mem + r->top);
			cr_assert_eq((uintptr_t)p % 8, 0);
		}
	cr_assert_eq(*c.gen[1].space[0].used, 2105736);
	/* The pointers are live: a change in the region is seen by a read. */
	struct hp_perfdata_plan plan;
	struct hp_mode_reading rd;
	cr_assert_eq(hp_perfdata_plan(&c, HP_GC_G1, &plan, err, sizeof(err)), 0, "%s", err);
	*(int64_t *)c.gen[1].space[0].used = 3 * MB;
	cr_assert_eq(hp_perfdata_compute(&plan, &rd), 0);
	cr_assert_eq(rd.used, 1 * MB + 512 * 1024 + 3 * MB);
}

Test(perfdata, g1_padding_removed)
{
	/* JDK 11/17: every capacity padded by MinObjAlignmentInBytes. */
	expect_reading(g1_region(8), HP_GC_G1, 1 * MB + 512 * 1024 + 2105736, 15 * MB, 96 * MB);
	/* JDK 21+: no padding (s0 capacity 0). */
	expect_reading(g1_region(0), HP_GC_G1, 1 * MB + 512 * 1024 + 2105736, 15 * MB, 96 * MB);
	/* -XX:ObjectAlignmentInBytes=16 */
	expect_reading(g1_region(16), HP_GC_G1, 1 * MB + 512 * 1024 + 2105736, 15 * MB, 96 * MB);
}

static struct region *young_old_region(int64_t s0_used, int64_t s1_used, int64_t s0_cap, int64_t s1_cap)
{
	/* Serial/Parallel shape: 32 MiB young (eden 28), 64 MiB old. */
	struct region *r = region_new();
	const int64_t young[3][3] = { { 5 * MB, 28 * MB, 31 * MB }, { s0_used, s0_cap, 3 * MB },
				      { s1_used, s1_cap, 3 * MB } };
	const int64_t old[1][3] = { { 10 * MB, 64 * MB, 64 * MB } };
	add_gen(r, 0, 28 * MB + s0_cap + s1_cap, 32 * MB, 3, young);
	add_gen(r, 1, 64 * MB, 64 * MB, 1, old);
	return r;
}

Test(perfdata, serial_parallel_leave_out_the_to_survivor)
{
	/* s0 holds survivors: s1 is "to". */
	expect_reading(young_old_region(MB, 0, 2 * MB, 2 * MB), HP_GC_SERIAL, 16 * MB, 94 * MB, 94 * MB);
	/* s1 holds survivors, and the survivors differ (Parallel resized them). */
	expect_reading(young_old_region(0, MB, 1 * MB, 2 * MB), HP_GC_PARALLEL, 16 * MB, 94 * MB, 94 * MB);
	expect_reading(young_old_region(MB, 0, 1 * MB, 2 * MB), HP_GC_PARALLEL, 16 * MB, 93 * MB, 93 * MB);
	/* Both empty: the larger counts as "to"... */
	expect_reading(young_old_region(0, 0, 1 * MB, 2 * MB), HP_GC_PARALLEL, 15 * MB, 93 * MB, 93 * MB);
	/* ...unless Parallel's policy says which size it gave "to". */
	struct region *r = young_old_region(0, 0, 1 * MB, 2 * MB);
	add_long(r, "sun.gc.policy.desiredSurvivorSize", 1 * MB);
	expect_reading(r, HP_GC_PARALLEL, 15 * MB, 94 * MB, 94 * MB);
	r = young_old_region(0, 0, 1 * MB, 2 * MB);
	add_long(r, "sun.gc.policy.desiredSurvivorSize", 2 * MB);
	expect_reading(r, HP_GC_PARALLEL, 15 * MB, 93 * MB, 93 * MB);
	r = young_old_region(0, 0, 1 * MB, 2 * MB);
	add_long(r, "sun.gc.policy.desiredSurvivorSize", 5 * MB);   /* not achieved: no help */
	expect_reading(r, HP_GC_PARALLEL, 15 * MB, 93 * MB, 93 * MB);
	/* max never below committed (ParallelScavengeHeap::max_capacity()). */
	expect_reading(young_old_region(0, 0, 3 * MB, 3 * MB), HP_GC_CMS, 15 * MB, 95 * MB, 95 * MB);
}

Test(perfdata, z_shenandoah_epsilon)
{
	/* ZGC, single generation (JDK 11-21) */
	struct region *r = region_new();
	const int64_t zold[1][3] = { { 4 * MB, 96 * MB, 96 * MB } };
	add_gen(r, 1, 96 * MB, 96 * MB, 1, zold);
	expect_reading(r, HP_GC_Z, 4 * MB, 96 * MB, 96 * MB);

	/* Before its first pause ZGC's counters are placeholders: no data,
	 * judged by its collector counters when it has them (JDK 17+). */
	add_long(r, "sun.gc.collector.2.invocations", 0);
	struct hp_perfdata_counters c;
	struct hp_perfdata_plan plan;
	struct hp_mode_reading rd;
	char err[256];
	cr_assert_eq(index_region(r, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_not_null(c.invocations[2]);
	cr_assert_eq(hp_perfdata_plan(&c, HP_GC_Z, &plan, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hp_perfdata_compute(&plan, &rd), -ENODATA);
	*(int64_t *)c.invocations[2] = 3;
	cr_assert_eq(hp_perfdata_compute(&plan, &rd), 0);
	cr_assert_eq(rd.used, 4 * MB);

	/* JDK 11's ZGC has no collector counters: sun.gc.lastCause tells. */
	r = region_new();
	add_gen(r, 1, 96 * MB, 96 * MB, 1, zold);
	char cause[80] = "No GC";
	add_entry(r, "sun.gc.lastCause", 'B', cause, 1, sizeof(cause));
	cr_assert_eq(index_region(r, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_not_null(c.last_cause);
	cr_assert_eq(hp_perfdata_plan(&c, HP_GC_Z, &plan, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hp_perfdata_compute(&plan, &rd), -ENODATA);
	strcpy((char *)c.last_cause, "No GCs?");    /* not "No GC" itself */
	cr_assert_eq(hp_perfdata_compute(&plan, &rd), 0);
	strcpy((char *)c.last_cause, "System.gc()");
	cr_assert_eq(hp_perfdata_compute(&plan, &rd), 0);
	cr_assert_eq(rd.committed, 96 * MB);
	/* Other collectors do not care. */
	strcpy((char *)c.last_cause, "No GC");
	cr_assert_eq(hp_perfdata_plan(&c, HP_GC_EPSILON, &plan, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hp_perfdata_compute(&plan, &rd), 0);

	/* ZGC, generational (JDK 21 +ZGenerational, 25) */
	r = region_new();
	const int64_t zy[1][3] = { { 2 * MB, 90 * MB, 96 * MB } };
	const int64_t zo[1][3] = { { 6 * MB, 6 * MB, 96 * MB } };
	add_gen(r, 0, 90 * MB, 96 * MB, 1, zy);
	add_gen(r, 1, 6 * MB, 96 * MB, 1, zo);
	expect_reading(r, HP_GC_Z, 8 * MB, 96 * MB, 96 * MB);

	/* Shenandoah: empty young placeholder; the space's capacity is the max,
	 * the generation's the committed size. */
	r = region_new();
	add_gen(r, 0, 0, 0, 0, NULL);
	const int64_t sh[1][3] = { { 3 * MB, 512 * MB, 512 * MB } };
	add_gen(r, 1, 40 * MB, 512 * MB, 1, sh);
	expect_reading(r, HP_GC_SHENANDOAH, 3 * MB, 40 * MB, 512 * MB);

	/* Epsilon */
	r = region_new();
	const int64_t ep[1][3] = { { 200 * MB, 376 * MB, 512 * MB } };
	add_gen(r, 1, 376 * MB, 512 * MB, 1, ep);
	expect_reading(r, HP_GC_EPSILON, 200 * MB, 376 * MB, 512 * MB);
}

Test(perfdata, racing_counters_are_clamped_not_insane)
{
	/* used written before capacity: momentarily above it */
	struct region *r = region_new();
	const int64_t ep[1][3] = { { 380 * MB, 376 * MB, 512 * MB } };
	add_gen(r, 1, 376 * MB, 512 * MB, 1, ep);
	expect_reading(r, HP_GC_EPSILON, 376 * MB, 376 * MB, 512 * MB);

	/* Shenandoah's own MemoryUsage raises committed instead. */
	r = region_new();
	const int64_t sh[1][3] = { { 12 * MB, 512 * MB, 512 * MB } };
	add_gen(r, 1, 10 * MB, 512 * MB, 1, sh);
	expect_reading(r, HP_GC_SHENANDOAH, 12 * MB, 12 * MB, 512 * MB);
}

Test(perfdata, negative_counter_refused_at_read)
{
	struct region *r = region_new();
	const int64_t ep[1][3] = { { -1, 376 * MB, 512 * MB } };
	add_gen(r, 1, 376 * MB, 512 * MB, 1, ep);
	struct hp_perfdata_counters c;
	struct hp_perfdata_plan plan;
	struct hp_mode_reading rd;
	char err[256];
	cr_assert_eq(index_region(r, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hp_perfdata_plan(&c, HP_GC_EPSILON, &plan, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hp_perfdata_compute(&plan, &rd), -EBADMSG);
}

Test(perfdata, bad_magic)
{
	struct region *r = g1_region(8);
	prologue(r)->magic[0] = 0xc0;    /* e.g. read as a host-order int */
	expect_error(r, -EBADMSG, "bad magic");
}

Test(perfdata, wrong_version_or_byte_order)
{
	struct region *r = g1_region(8);
	prologue(r)->major_version = 3;
	expect_error(r, -ENOTSUP, "version 3");
	r = g1_region(8);
	prologue(r)->byte_order = HP_PD_BIG_ENDIAN;
	expect_error(r, -ENOTSUP, "byte order");
}

Test(perfdata, not_accessible_yet_is_transient)
{
	struct region *r = g1_region(8);
	prologue(r)->accessible = 0;
	expect_error(r, -EAGAIN, "accessible");
}

Test(perfdata, prologue_out_of_bounds)
{
	struct region *r = g1_region(8);
	prologue(r)->used = REGION + 8;
	expect_error(r, -EBADMSG, "bytes in use");
	r = g1_region(8);
	prologue(r)->entry_offset = 12;
	expect_error(r, -EBADMSG, "first entry");
	r = g1_region(8);
	prologue(r)->num_entries = 100000;
	expect_error(r, -EBADMSG, "entries cannot fit");
	struct hp_perfdata_counters c;
	char err[128];
	cr_assert_eq(hp_perfdata_index(r->mem, 8, &c, err, sizeof(err)), -EBADMSG);
	cr_assert_eq(hp_perfdata_index(r->mem + 4, REGION - 8, &c, err, sizeof(err)), -EBADMSG, "misaligned");
}

Test(perfdata, entry_out_of_bounds)
{
	/* An entry claiming to run past the bytes in use. */
	struct region *r = region_new();
	add_noise(r);
	struct hp_pd_entry *e = add_long(r, "sun.gc.generation.1.capacity", 1);
	e->entry_length = 4096;
	expect_error(r, -EBADMSG, "out of bounds");

	/* Shorter than a header, or not a multiple of 8. */
	r = region_new();
	e = add_long(r, "x", 1);
	e->entry_length = 8;
	expect_error(r, -EBADMSG, "out of bounds");

	/* More entries announced than there are bytes for their headers. */
	r = g1_region(8);
	prologue(r)->num_entries += 3;
	expect_error(r, -EBADMSG, "header beyond");

	/* Data outside the entry. */
	r = region_new();
	e = add_long(r, "sun.gc.generation.1.capacity", 1);
	e->data_offset = e->entry_length - 4;
	expect_error(r, -EBADMSG, "outside its");

	/* Name offset outside the entry. */
	r = region_new();
	e = add_long(r, "sun.gc.generation.1.capacity", 1);
	e->name_offset = e->entry_length;
	expect_error(r, -EBADMSG, "name offset");
}

Test(perfdata, region_unreadable)
{
	long ps = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * (size_t)ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(m, MAP_FAILED);
	struct region *r = g1_region(8);
	while ((long)r->top <= ps)
		add_noise(r);
	memcpy(m, r->mem, (size_t)ps);
	cr_assert_eq(mprotect(m + ps, (size_t)ps, PROT_NONE), 0);
	struct hp_perfdata_counters c;
	char err[128];
	cr_assert_eq(hp_perfdata_index(m, 2 * (size_t)ps, &c, err, sizeof(err)), -EFAULT, "%s", err);
	cr_assert_eq(hp_perfdata_index(m + ps, (size_t)ps, &c, err, sizeof(err)), -EFAULT, "%s", err);
	cr_assert_eq(hp_perfdata_index(NULL, REGION, &c, err, sizeof(err)), -EFAULT, "%s", err);
	munmap(m, 2 * (size_t)ps);
}

Test(perfdata, name_not_terminated)
{
	struct region *r = region_new();
	add_noise(r);
	struct hp_pd_entry *e = add_long(r, "sun.gc.generation.1.capacity", 1);
	/* Fill the name and the padding up to the data with non-NUL bytes, and
	 * move the data to the entry's end so nothing in the entry is NUL. */
	char *base = (char *)e;
	memset(base + e->name_offset, 'x', (size_t)(e->entry_length - e->name_offset));
	e->data_offset = e->entry_length;
	expect_error(r, -EBADMSG, "not NUL-terminated");
}

Test(perfdata, heap_counter_of_wrong_type)
{
	struct region *r = region_new();
	int32_t v = 5;
	add_entry(r, "sun.gc.generation.1.capacity", 'I', &v, sizeof(v), 0);
	expect_error(r, -EBADMSG, "not an aligned jlong");

	r = region_new();
	int64_t vec[2] = { 1, 2 };
	add_entry(r, "sun.gc.generation.1.space.0.used", 'J', vec, sizeof(vec[0]), 2);
	expect_error(r, -EBADMSG, "not an aligned jlong");

	r = region_new();
	add_long(r, "sun.gc.generation.1.capacity", 1);
	add_long(r, "sun.gc.generation.1.capacity", 2);
	expect_error(r, -EBADMSG, "twice");
}

Test(perfdata, missing_counters)
{
	/* Nothing of the heap at all. */
	struct region *r = region_new();
	add_noise(r);
	expect_error(r, -ENOENT, "no sun.gc.generation.1");
	/* ... because the region overflowed: say so. */
	prologue(r)->overflow = 4242;
	expect_error(r, -ENOENT, "4242 bytes of counters overflowed");

	/* A space announced but not there. */
	r = region_new();
	const int64_t sp[3][3] = { { 1, 2, 3 }, { 1, 2, 3 }, { 1, 2, 3 } };
	add_gen(r, 0, 6, 9, 2, sp);
	add_long(r, "sun.gc.generation.0.spaces", 3);   /* a second "spaces" is refused */
	expect_error(r, -EBADMSG, "twice");

	r = region_new();
	add_gen(r, 1, 6, 9, 1, sp);
	add_long(r, "sun.gc.generation.0.capacity", 1);   /* young without the rest */
	expect_error(r, -ENOENT, "sun.gc.generation.0.maxCapacity missing");

	/* Generation announcing 3 spaces but publishing 2. */
	r = region_new();
	add_gen(r, 1, 6, 9, 1, sp);
	add_gen(r, 0, 6, 9, 2, sp);
	struct hp_pd_entry *e = find_entry(r, "sun.gc.generation.0.spaces");
	*(int64_t *)((char *)e + e->data_offset) = 3;
	expect_error(r, -ENOENT, "sun.gc.generation.0.space.2.used missing");

	/* Absurd number of spaces. */
	*(int64_t *)((char *)e + e->data_offset) = 1000;
	expect_error(r, -EBADMSG, "spaces is 1000");
}

Test(perfdata, trailing_entry_being_created_ends_the_walk)
{
	/* Space allocated and counted, header not written yet (zeros). */
	struct region *r = g1_region(8);
	prologue(r)->num_entries++;
	prologue(r)->used += 64;
	struct hp_perfdata_counters c;
	char err[256];
	cr_assert_eq(index_region(r, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.num_entries, prologue(r)->num_entries - 1);
}

Test(perfdata, plan_checks_the_collector_shape)
{
	struct hp_perfdata_counters c;
	struct hp_perfdata_plan plan;
	char err[256];

	/* Only an old generation: not G1, not Serial. */
	struct region *r = region_new();
	const int64_t one[1][3] = { { 1, 2, 3 } };
	add_gen(r, 1, 2, 3, 1, one);
	cr_assert_eq(index_region(r, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hp_perfdata_plan(&c, HP_GC_G1, &plan, err, sizeof(err)), -ENOENT);
	cr_assert(strstr(err, "generation.0"), "%s", err);
	cr_assert_eq(hp_perfdata_plan(&c, HP_GC_SERIAL, &plan, err, sizeof(err)), -ENOENT);
	cr_assert_eq(hp_perfdata_plan(&c, HP_GC_Z, &plan, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hp_perfdata_plan(&c, HP_GC_UNKNOWN, &plan, err, sizeof(err)), -ENOTSUP);
	cr_assert(strstr(err, "unknown"), "%s", err);

	/* G1 whose s0 capacity is not a padding. */
	r = region_new();
	const int64_t young[3][3] = { { 0, 1 * MB, 2 * MB }, { 0, 12345, 12345 }, { 0, 0, 0 } };
	add_gen(r, 0, MB, 2 * MB, 3, young);
	add_gen(r, 1, 2, 3, 1, one);
	cr_assert_eq(index_region(r, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hp_perfdata_plan(&c, HP_GC_G1, &plan, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "padding"), "%s", err);
}
