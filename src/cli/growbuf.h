/* A buffer that grows by doubling, for reading whole answers and files. */
#ifndef HP_CLI_GROWBUF_H
#define HP_CLI_GROWBUF_H

#include <stdlib.h>

/* `buf` (capacity *cap) with room for `need` bytes, doubled as often as
 * needed; NULL when out of memory, `buf` then freed. */
static inline void *hp_growbuf(void *buf, size_t *cap, size_t need)
{
	size_t c = *cap;
	while (c < need)
		c *= 2;
	if (c == *cap)
		return buf;
	void *nb = realloc(buf, c);
	if (!nb) {
		free(buf);
		return NULL;
	}
	*cap = c;
	return nb;
}

#endif
