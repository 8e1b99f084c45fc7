#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "vmstructs/strmap.h"

static char keys[5000][16];
static const char *key_of(const void *ctx, uint32_t id)
{
	return keys[id];
}

Test(strmap, finds_every_key_and_rejects_absent_ones)
{
	struct hp_strmap m;
	cr_assert_eq(hp_strmap_init(&m, 5000, key_of, NULL), 0);
	for (uint32_t i = 0; i < 5000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "key%u", i);
		cr_assert_eq(hp_strmap_insert(&m, i), 0);
	}
	for (uint32_t i = 0; i < 5000; i++) {
		char k[16];
		snprintf(k, sizeof(k), "key%u", i);
		cr_assert_eq(hp_strmap_find(&m, k), i);
	}
	cr_assert_eq(hp_strmap_find(&m, "key5000"), HP_STRMAP_NONE);
	cr_assert_eq(hp_strmap_find(&m, "key"), HP_STRMAP_NONE);
	cr_assert_eq(hp_strmap_find(&m, ""), HP_STRMAP_NONE);
	/* A prefix given by length must not match a longer key. */
	cr_assert_eq(hp_strmap_find_n(&m, "key12", 4), 1);
	hp_strmap_free(&m);
}

Test(strmap, duplicate_keeps_first_and_full_table_refuses)
{
	struct hp_strmap m;
	cr_assert_eq(hp_strmap_init(&m, 4, key_of, NULL), 0);
	strcpy(keys[0], "same");
	strcpy(keys[1], "same");
	cr_assert_eq(hp_strmap_insert(&m, 0), 0);
	cr_assert_eq(hp_strmap_insert(&m, 1), 1);
	cr_assert_eq(hp_strmap_find(&m, "same"), 0);
	/* capacity 16 for 4 expected: at most 8 keys before -ENOSPC */
	int rc = 0;
	uint32_t i;
	for (i = 2; i < 40 && rc == 0; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%u", i);
		rc = hp_strmap_insert(&m, i);
	}
	cr_assert_lt(rc, 0, "a full map must refuse inserts rather than loop");
	hp_strmap_free(&m);
}
