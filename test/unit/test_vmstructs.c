/* VMStructs reader on synthetic images laid out like HotSpot's own tables. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmstructs/vmstructs.h"
#include "fake_vms.h"


static void *universe_heap_slot;

static struct fake_field fields[] = {
	{ "Universe", "_collectedHeap", "CollectedHeap*", 1, 0, &universe_heap_slot },
	{ "CollectedHeap", "_reserved", "MemRegion", 0, 32, NULL },
	{ "CollectedHeap", "_total_collections", "unsigned int", 0, 64, NULL },
	{ "MemRegion", "_start", NULL, 0, 0, NULL },
	{ NULL, NULL, NULL, 0, 0, NULL },
};
static struct fake_type types[] = {
	{ "CollectedHeap", NULL, 0, 0, 0, 120 },
	{ "G1CollectedHeap", "CollectedHeap", 0, 0, 0, 1800 },
	{ "size_t", NULL, 0, 1, 1, 8 },
	{ NULL, NULL, 0, 0, 0, 0 },
};
static struct fake_int ints[] = { { "oopSize", 8 }, { "negative", -5 }, { NULL, 0 } };
static struct fake_long longs[] = { { "markWord::age_shift", 3 }, { "big", UINT64_MAX }, { NULL, 0 } };

static struct hp_vms_tables good_tables(void)
{
	return fake_vms_tables(fields, types, ints, longs);
}

Test(vmstructs, indexes_fields_types_and_constants)
{
	struct hp_vms_tables t = good_tables();
	struct hp_vms *v;
	char err[256] = "";
	cr_assert_eq(hp_vms_load(&t, &v, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hp_vms_field_count(v), 4);
	cr_assert_eq(hp_vms_type_count(v), 3);
	cr_assert_eq(hp_vms_int_constant_count(v), 2);
	cr_assert_eq(hp_vms_long_constant_count(v), 2);

	cr_assert_eq(hp_vms_offset(v, "CollectedHeap", "_reserved"), 32);
	cr_assert_eq(hp_vms_offset(v, "CollectedHeap", "_total_collections"), 64);
	cr_assert_eq(hp_vms_offset(v, "CollectedHeap", "_nope"), -1);
	cr_assert_eq(hp_vms_offset(v, "Universe", "_collectedHeap"), -1, "static field has no offset");
	cr_assert_eq(hp_vms_address(v, "Universe", "_collectedHeap"), &universe_heap_slot);
	cr_assert_null(hp_vms_address(v, "CollectedHeap", "_reserved"));
	const struct hp_vms_field *f = hp_vms_field(v, "CollectedHeap", "_reserved");
	cr_assert_not_null(f);
	cr_assert_str_eq(f->type_string, "MemRegion");
	cr_assert_str_eq(hp_vms_field(v, "MemRegion", "_start")->type_string, "", "NULL typeString becomes \"\"");

	const struct hp_vms_type *g1 = hp_vms_type(v, "G1CollectedHeap");
	cr_assert_not_null(g1);
	cr_assert_eq(g1->size, 1800);
	cr_assert_str_eq(g1->superclass, "CollectedHeap");
	cr_assert(hp_vms_type(v, "size_t")->is_integer);
	cr_assert(hp_vms_type(v, "size_t")->is_unsigned);
	cr_assert_null(hp_vms_type(v, "ZCollectedHeap"));
	cr_assert(hp_vms_is_subtype(v, "G1CollectedHeap", "CollectedHeap"));
	cr_assert_not(hp_vms_is_subtype(v, "CollectedHeap", "G1CollectedHeap"));

	int32_t i32;
	uint64_t u64;
	cr_assert_eq(hp_vms_int_constant(v, "oopSize", &i32), 0);
	cr_assert_eq(i32, 8);
	cr_assert_eq(hp_vms_int_constant(v, "negative", &i32), 0);
	cr_assert_eq(i32, -5);
	cr_assert_eq(hp_vms_long_constant(v, "big", &u64), 0);
	cr_assert_eq(u64, UINT64_MAX);
	cr_assert_eq(hp_vms_long_constant(v, "oopSize", &u64), -ENOENT);
	hp_vms_free(v);
}

Test(vmstructs, copies_names_so_the_source_may_change)
{
	char type_name[] = "Volatile";
	struct fake_field local[] = { { type_name, "_f", "int", 0, 4, NULL }, { NULL, NULL, NULL, 0, 0, NULL } };
	struct hp_vms_tables t = good_tables();
	t.structs.array = local;
	struct hp_vms *v;
	cr_assert_eq(hp_vms_load(&t, &v, NULL, 0), 0);
	memset(type_name, 'z', sizeof(type_name) - 1);
	cr_assert_eq(hp_vms_offset(v, "Volatile", "_f"), 4);
	hp_vms_free(v);
}

static void expect_error(struct hp_vms_tables *t, int expected_rc, const char *expected_text)
{
	struct hp_vms *v = (struct hp_vms *)0x1;
	char err[256] = "";
	int rc = hp_vms_load(t, &v, err, sizeof(err));
	cr_assert_eq(rc, expected_rc, "rc %d, expected %d (%s)", rc, expected_rc, err);
	cr_assert_null(v, "no table is returned on error");
	cr_assert(strstr(err, expected_text), "reason '%s' should mention '%s'", err, expected_text);
}

Test(vmstructs, rejects_absurd_strides_and_member_offsets)
{
	struct hp_vms_tables t = good_tables();
	t.structs.stride = 0;
	expect_error(&t, -EINVAL, "absurd entry stride 0");
	t = good_tables();
	t.types.stride = 1u << 20;
	expect_error(&t, -EINVAL, "gHotSpotVMTypes: absurd entry stride");
	t = good_tables();
	t.structs.offset = sizeof(struct fake_field) - 4;   /* 8-byte member overruns */
	expect_error(&t, -EINVAL, "member offset");
	t = good_tables();
	t.long_constants.value = UINT64_MAX - 2;
	expect_error(&t, -EINVAL, "outside the");
}

Test(vmstructs, rejects_null_and_unreadable_arrays)
{
	struct hp_vms_tables t = good_tables();
	t.int_constants.array = NULL;
	expect_error(&t, -EFAULT, "gHotSpotVMIntConstants is NULL");
	t = good_tables();
	t.types.array = (void *)0x10;
	expect_error(&t, -EFAULT, "not readable");
}

Test(vmstructs, rejects_table_without_terminator)
{
	/* Entries run into an inaccessible page before any terminator. */
	long ps = sysconf(_SC_PAGESIZE);
	char *mem = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(mem, MAP_FAILED);
	mprotect(mem + ps, ps, PROT_NONE);
	struct fake_int *e = (struct fake_int *)mem;
	for (size_t i = 0; i < (size_t)ps / sizeof(*e); i++)
		e[i] = (struct fake_int){ "x", 1 };
	struct hp_vms_tables t = good_tables();
	t.int_constants.array = mem;
	expect_error(&t, -EFAULT, "not readable");
	munmap(mem, 2 * ps);

	/* A huge readable table with no terminator: bounded, -E2BIG. */
	size_t n = HP_VMS_MAX_ENTRIES + 10;
	struct fake_int *big = malloc(n * sizeof(*big));
	for (size_t i = 0; i < n; i++)
		big[i] = (struct fake_int){ "x", 1 };
	t = good_tables();
	t.int_constants.array = big;
	expect_error(&t, -E2BIG, "no terminating entry");
	free(big);
}

Test(vmstructs, rejects_null_unterminated_and_unreadable_names)
{
	struct fake_field null_field[] = { { "T", NULL, "int", 0, 0, NULL }, { NULL, NULL, NULL, 0, 0, NULL } };
	struct hp_vms_tables t = good_tables();
	t.structs.array = null_field;
	expect_error(&t, -EBADMSG, "NULL fieldName");

	char *long_name = malloc(HP_VMS_MAX_NAME + 100);
	memset(long_name, 'n', HP_VMS_MAX_NAME + 99);
	long_name[HP_VMS_MAX_NAME + 99] = '\0';
	struct fake_type long_type[] = { { long_name, NULL, 0, 0, 0, 8 }, { NULL, NULL, 0, 0, 0, 0 } };
	t = good_tables();
	t.types.array = long_type;
	expect_error(&t, -ENAMETOOLONG, "not NUL-terminated");
	free(long_name);

	struct fake_long bad_ptr[] = { { (const char *)0x20, 1 }, { NULL, 0 } };
	t = good_tables();
	t.long_constants.array = bad_ptr;
	expect_error(&t, -EFAULT, "unreadable memory");
}

Test(vmstructs, superclass_cycle_does_not_hang)
{
	struct fake_type cyclic[] = {
		{ "A", "B", 0, 0, 0, 8 }, { "B", "A", 0, 0, 0, 8 }, { NULL, NULL, 0, 0, 0, 0 },
	};
	struct hp_vms_tables t = good_tables();
	t.types.array = cyclic;
	struct hp_vms *v;
	cr_assert_eq(hp_vms_load(&t, &v, NULL, 0), 0);
	cr_assert_not(hp_vms_is_subtype(v, "A", "C"));
	cr_assert(hp_vms_is_subtype(v, "A", "B"));
	hp_vms_free(v);
}

/* The declarative loader: offsets, addresses and sizes into the consumer's
 * struct, "A|B" types tried in turn, and a message that names every
 * required entry and group missing, with its releases, and nothing else. */
struct bound {
	int64_t reserved, total, heap_size, renamed, absent_optional, either;
	const void *heap_slot;
};
#define B(type, field, what, member, need, since, until) \
	{ type, field, what, offsetof(struct bound, member), need, since, until }
static const struct hp_vms_entry all_there[] = {
	B("CollectedHeap", "_reserved", HP_VMS_OFFSET, reserved, HP_VMS_REQUIRED, 0, 0),
	B("OldName|CollectedHeap", "_total_collections", HP_VMS_OFFSET, renamed, HP_VMS_REQUIRED, 0, 0),
	B("G1CollectedHeap", NULL, HP_VMS_SIZE, heap_size, HP_VMS_REQUIRED, 0, 0),
	B("Universe", "_collectedHeap", HP_VMS_ADDRESS, heap_slot, HP_VMS_REQUIRED, 0, 0),
	B("CollectedHeap", "_nope", HP_VMS_OFFSET, absent_optional, HP_VMS_OPTIONAL, 0, 0),
	B("CollectedHeap", "_gone", HP_VMS_OFFSET, either, 1, 0, 21),
	B("CollectedHeap", "_total_collections", HP_VMS_OFFSET, total, 1, 25, 0),
};
static const struct hp_vms_entry some_missing[] = {
	B("CollectedHeap", "_reserved", HP_VMS_OFFSET, reserved, HP_VMS_REQUIRED, 0, 0),
	B("CollectedHeap", "_used_at_gc", HP_VMS_OFFSET, total, HP_VMS_REQUIRED, 25, 0),
	B("ZCollectedHeap", NULL, HP_VMS_SIZE, heap_size, HP_VMS_REQUIRED, 0, 0),
	B("CollectedHeap", "_nope", HP_VMS_OFFSET, absent_optional, HP_VMS_OPTIONAL, 0, 0),
	B("CollectedHeap", "_a", HP_VMS_OFFSET, renamed, 2, 0, 21),
	B("CollectedHeap", "_b", HP_VMS_OFFSET, either, 2, 25, 0),
	B("Universe", "_gone", HP_VMS_ADDRESS, heap_slot, HP_VMS_REQUIRED, 0, 17),
};

Test(vmstructs, bind_fills_a_table_and_names_exactly_what_is_missing)
{
	struct hp_vms_tables t = good_tables();
	struct hp_vms *v;
	char err[512] = "";
	cr_assert_eq(hp_vms_load(&t, &v, err, sizeof(err)), 0, "%s", err);
	struct bound b;
	memset(&b, 0x5a, sizeof(b));
	cr_assert_eq(hp_vms_bind(v, all_there, HP_VMS_N(all_there), &b, "test", err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(b.reserved, 32);
	cr_expect_eq(b.renamed, 64, "the second of OldName|CollectedHeap");
	cr_expect_eq(b.heap_size, 1800);
	cr_expect_eq(b.heap_slot, &universe_heap_slot);
	cr_expect_eq(b.absent_optional, -1);
	cr_expect_eq(b.either, -1, "the group is met by its other member");
	cr_expect_eq(b.total, 64);

	memset(&b, 0x5a, sizeof(b));
	err[0] = 0;
	cr_assert_eq(hp_vms_bind(v, some_missing, HP_VMS_N(some_missing), &b, "test", err, sizeof(err)), -ENOENT);
	cr_expect_str_eq(err, "test: VMStructs lacks CollectedHeap::_used_at_gc (JDK 25+), sizeof(ZCollectedHeap), "
			      "neither CollectedHeap::_a (JDK 11-21) nor CollectedHeap::_b (JDK 25+), "
			      "Universe::_gone (JDK 11-17)");
	cr_expect_eq(b.reserved, 32, "what is there is read all the same");
	cr_expect_null(b.heap_slot);
	cr_expect_eq(hp_vms_bind(NULL, all_there, HP_VMS_N(all_there), &b, "test", err, sizeof(err)), -ENOENT);
	cr_expect_str_eq(err, "test: no VMStructs");
	hp_vms_free(v);
}
