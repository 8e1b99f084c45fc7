/* The stack cache (src/agent/stackcache.c) without a JVM: what a key finds,
 * when an entry is stale (classes unloaded for keys with interpreted
 * frames; any class redefinition for all), its replacement, the byte
 * budget and the table's fill, and turning it off with a reason. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "agent/stackcache.h"

static const uint32_t frames_a[] = { 1, 2, 3 }, frames_b[] = { 7, 8 };

Test(stackcache, a_key_finds_what_was_inserted_for_it_only)
{
	struct hp_stackcache c;
	cr_assert_eq(hp_stackcache_init(&c, 64, 1 << 20), 0);
	uint64_t k1[] = { 0x1000, 0x2000, 0x3000 }, k2[] = { 0x1000, 0x2000, 0x3001 }, k3[] = { 0x1000, 0x2000 };
	cr_expect_null(hp_stackcache_find(&c, k1, 3, 0, 0));
	hp_stackcache_insert(&c, k1, 3, false, 0, 0, frames_a, 3);
	struct hp_stack_entry *e = hp_stackcache_find(&c, k1, 3, 0, 0);
	cr_assert_not_null(e);
	cr_expect_eq(e->nframes, 3);
	cr_expect_eq(e->ids, frames_a, "the caller's frames, not a copy");
	cr_expect_null(hp_stackcache_find(&c, k2, 3, 0, 0), "one word differs");
	cr_expect_null(hp_stackcache_find(&c, k3, 2, 0, 0), "a prefix is another key");
	/* A second insert of a current key keeps the first. */
	hp_stackcache_insert(&c, k1, 3, false, 0, 0, frames_b, 2);
	cr_expect_eq(hp_stackcache_find(&c, k1, 3, 0, 0)->ids, frames_a);
	hp_stackcache_free(&c, NULL);
}

Test(stackcache, unloads_stale_interpreted_keys_and_redefinitions_stale_all)
{
	struct hp_stackcache c;
	cr_assert_eq(hp_stackcache_init(&c, 64, 1 << 20), 0);
	uint64_t compiled[] = { 0xc0de }, interp[] = { 0x5eed1 };
	hp_stackcache_insert(&c, compiled, 1, false, 5, 0, frames_a, 3);
	hp_stackcache_insert(&c, interp, 1, true, 5, 0, frames_b, 2);
	/* classes unloaded (epoch 5 -> 6): only the Method* key goes stale */
	cr_expect_not_null(hp_stackcache_find(&c, compiled, 1, 6, 0));
	cr_expect_null(hp_stackcache_find(&c, interp, 1, 6, 0));
	cr_expect_eq(atomic_load(&c.stale), 1);
	/* a redefinition: both */
	cr_expect_null(hp_stackcache_find(&c, compiled, 1, 5, 1));
	cr_expect_null(hp_stackcache_find(&c, interp, 1, 5, 1));
	/* a stale entry is replaced by a current one */
	hp_stackcache_insert(&c, interp, 1, true, 6, 0, frames_a, 3);
	struct hp_stack_entry *e = hp_stackcache_find(&c, interp, 1, 6, 0);
	cr_assert_not_null(e);
	cr_expect_eq(e->ids, frames_a);
	cr_expect_null(hp_stackcache_find(&c, interp, 1, 5, 0), "the old epoch's no longer");
	hp_stackcache_free(&c, NULL);
}

Test(stackcache, the_byte_budget_and_a_full_table_refuse_quietly)
{
	struct hp_stackcache c;
	/* room for two entries' bytes */
	cr_assert_eq(hp_stackcache_init(&c, 1024, 2 * sizeof(struct hp_stack_entry)), 0);
	uint64_t k[3][1] = { { 1 }, { 2 }, { 3 } };
	for (int i = 0; i < 3; i++)
		hp_stackcache_insert(&c, k[i], 1, false, 0, 0, frames_a, 3);
	cr_expect_not_null(hp_stackcache_find(&c, k[0], 1, 0, 0));
	cr_expect_not_null(hp_stackcache_find(&c, k[1], 1, 0, 0));
	cr_expect_null(hp_stackcache_find(&c, k[2], 1, 0, 0));
	cr_expect_eq(atomic_load(&c.full), 1);
	cr_expect_eq(atomic_load(&c.bytes), 2 * sizeof(struct hp_stack_entry));
	hp_stackcache_free(&c, NULL);
	/* a small table: inserts past its probes are counted, never lost in it */
	cr_assert_eq(hp_stackcache_init(&c, 4, 1 << 20), 0);
	uint64_t many[64][1];
	int found = 0;
	for (int i = 0; i < 64; i++) {
		many[i][0] = 0x9000 + (uint64_t)i;
		hp_stackcache_insert(&c, many[i], 1, false, 0, 0, frames_b, 2);
	}
	for (int i = 0; i < 64; i++)
		found += hp_stackcache_find(&c, many[i], 1, 0, 0) != NULL;
	cr_expect_leq(found, 4);
	cr_expect_eq(found + (int)atomic_load(&c.full), 64, "each insert either kept or counted full");
	hp_stackcache_free(&c, NULL);
}

Test(stackcache, disable_keeps_the_first_reason)
{
	struct hp_stackcache c;
	cr_assert_eq(hp_stackcache_init(&c, 16, 1 << 16), 0);
	cr_expect_eq(atomic_load(&c.disabled), 0);
	hp_stackcache_disable(&c, "a cached stack differed at frame %d", 2);
	hp_stackcache_disable(&c, "a later reason");
	cr_expect_eq(atomic_load(&c.disabled), 1);
	cr_expect_str_eq(c.reason, "a cached stack differed at frame 2");
	hp_stackcache_free(&c, NULL);
}
