/* Open-addressing hash index from strings to dense uint32 ids.
 *
 * The map does not own or copy keys: the caller keeps its records in an
 * array and hands the map a function that returns the key of record `id`.
 * This keeps the index at 8 bytes a slot, which matters for the 58k+ symbols
 * of libjvm (the symbol index must stay under a few MB).
 */
#ifndef HP_STRMAP_H
#define HP_STRMAP_H

#include <stddef.h>
#include <stdint.h>

#define HP_STRMAP_NONE UINT32_MAX

typedef const char *(*hp_strmap_key_fn)(const void *ctx, uint32_t id);

struct hp_strmap {
	struct hp_strmap_slot { uint32_t hash, id; } *slots;   /* id NONE = empty */
	uint32_t mask;
	uint32_t count;
	hp_strmap_key_fn key_of;
	const void *ctx;
};

/* Sizes the table for `expected` keys at a load factor below 1/2.
 * Returns 0 or -ENOMEM. */
int hp_strmap_init(struct hp_strmap *m, uint32_t expected, hp_strmap_key_fn key_of, const void *ctx);
void hp_strmap_free(struct hp_strmap *m);

uint32_t hp_strmap_hash(const char *s, size_t len);

/* Inserts `id` under its key (key_of(ctx, id)). A key already present keeps
 * its first id; returns 0 if inserted, 1 if the key was a duplicate,
 * -ENOSPC if the table is full (more keys than `expected` allowed). */
int hp_strmap_insert(struct hp_strmap *m, uint32_t id);

/* Returns the id stored under the key s[0..len), or HP_STRMAP_NONE. */
uint32_t hp_strmap_find_n(const struct hp_strmap *m, const char *s, size_t len);
uint32_t hp_strmap_find(const struct hp_strmap *m, const char *s);

#endif
