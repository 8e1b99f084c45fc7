#include "vmstructs/strmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

uint32_t hp_strmap_hash(const char *s, size_t len)
{
	/* XXH3 from libxxhash: 8-32 bytes per step where FNV-1a took one, and
	 * the symbol index hashes ~58k mangled names of 30-100 bytes. */
	return (uint32_t)XXH3_64bits(s, len);
}

int hp_strmap_init(struct hp_strmap *m, uint32_t expected, hp_strmap_key_fn key_of, const void *ctx)
{
	uint32_t cap = 16;
	while (cap < expected * 2u + 1u) {
		if (cap >= (1u << 30))
			return -ENOMEM;
		cap <<= 1;
	}
	m->slots = malloc(sizeof(*m->slots) * cap);
	if (!m->slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < cap; i++)
		m->slots[i].id = HP_STRMAP_NONE;
	m->mask = cap - 1;
	m->count = 0;
	m->key_of = key_of;
	m->ctx = ctx;
	return 0;
}

void hp_strmap_free(struct hp_strmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->mask = m->count = 0;
}

static int key_equals(const struct hp_strmap *m, uint32_t id, const char *s, size_t len)
{
	const char *k = m->key_of(m->ctx, id);
	return strncmp(k, s, len) == 0 && k[len] == '\0';
}

int hp_strmap_insert(struct hp_strmap *m, uint32_t id)
{
	if (!m->slots || m->count >= (m->mask + 1) / 2)
		return -ENOSPC;
	const char *key = m->key_of(m->ctx, id);
	size_t len = strlen(key);
	uint32_t h = hp_strmap_hash(key, len);
	for (uint32_t i = h & m->mask;; i = (i + 1) & m->mask) {
		struct hp_strmap_slot *slot = &m->slots[i];
		if (slot->id == HP_STRMAP_NONE) {
			slot->hash = h;
			slot->id = id;
			m->count++;
			return 0;
		}
		if (slot->hash == h && key_equals(m, slot->id, key, len))
			return 1;
	}
}

uint32_t hp_strmap_find_n(const struct hp_strmap *m, const char *s, size_t len)
{
	if (!m->slots)
		return HP_STRMAP_NONE;
	uint32_t h = hp_strmap_hash(s, len);
	for (uint32_t i = h & m->mask;; i = (i + 1) & m->mask) {
		const struct hp_strmap_slot *slot = &m->slots[i];
		if (slot->id == HP_STRMAP_NONE)
			return HP_STRMAP_NONE;
		if (slot->hash == h && key_equals(m, slot->id, s, len))
			return slot->id;
	}
}

uint32_t hp_strmap_find(const struct hp_strmap *m, const char *s)
{
	return hp_strmap_find_n(m, s, strlen(s));
}
