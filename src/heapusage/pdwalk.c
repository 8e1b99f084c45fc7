/* The hsperfdata entry walk (perfdata.h, hp_perfdata_each): one checked
 * walker for the library's index and the command's jvmstat reader, and the
 * one the fuzz target reaches through hp_perfdata_index. Apart from
 * perfdata.c so the command links it alone. */
#include "heapusage/perfdata.h"
#include "vmstructs/errmsg.h"

#include <errno.h>
#include <string.h>

/* A type char fit for a one-line reason (garbage may be anything, NUL too). */
char hp_pd_printable(int8_t t)
{
	return t >= 32 && t < 127 ? (char)t : '?';
}

/* Bytes per element of a PerfData type char, 0 if we do not know it (the
 * entry is then only bounds-checked). */
static size_t type_size(int8_t t)
{
	switch (t) {
	case 'B': case 'Z': return 1;
	case 'C': case 'S': return 2;
	case 'I': case 'F': return 4;
	case 'J': case 'D': return 8;
	}
	return 0;
}

int hp_perfdata_each(const char *snap, const struct hp_pd_prologue *pro, hp_pd_entry_fn fn, void *ctx, char *err,
		     size_t errlen)
{
	size_t used = pro->used > 0 ? (size_t)pro->used : 0;
	size_t off = pro->entry_offset > 0 ? (size_t)pro->entry_offset : used;
	if (pro->entry_offset < (int32_t)sizeof(*pro) || off > used || pro->num_entries < 0)
		return hp_fail(err, errlen, -EBADMSG, "first entry at offset %d, %d entries (%zu bytes in use)",
			       pro->entry_offset, pro->num_entries, used);
	int32_t i;
	for (i = 0; i < pro->num_entries; i++) {
		struct hp_pd_entry e;
		if (off + sizeof(e) > used) {
			/* The count is bumped with the space allocation, so an entry
			 * header must fit in the bytes in use. */
			return hp_fail(err, errlen, -EBADMSG, "entry %d at offset %zu: header beyond the %zu bytes in use", i,
				    off, used);
		}
		memcpy(&e, snap + off, sizeof(e));
		if (e.entry_length == 0) {
			/* Allocated but not filled in yet (entries are created while we
			 * look, the header last): the entries before it are complete. */
			break;
		}
		if (e.entry_length < (int32_t)sizeof(e) || e.entry_length % 8 != 0 ||
		    (size_t)e.entry_length > used - off)
			return hp_fail(err, errlen, -EBADMSG,
				    "entry %d at offset %zu: length %d out of bounds (%zu bytes in use)", i, off,
				    e.entry_length, used);
		size_t len = (size_t)e.entry_length;
		if (e.name_offset < (int32_t)sizeof(e) || (size_t)e.name_offset >= len)
			return hp_fail(err, errlen, -EBADMSG, "entry %d at offset %zu: name offset %d outside its %zu bytes",
				    i, off, e.name_offset, len);
		const char *name = snap + off + (size_t)e.name_offset;
		const char *nul = memchr(name, '\0', len - (size_t)e.name_offset);
		if (!nul)
			return hp_fail(err, errlen, -EBADMSG, "entry %d at offset %zu: name not NUL-terminated", i, off);
		size_t name_end = (size_t)(nul + 1 - (snap + off));
		size_t elems = e.vector_length > 0 ? (size_t)e.vector_length : 1;
		if (e.vector_length < 0 || e.data_offset < 0 || (size_t)e.data_offset < name_end ||
		    (size_t)e.data_offset > len || elems * type_size(e.data_type) > len - (size_t)e.data_offset)
			return hp_fail(err, errlen, -EBADMSG, "entry %d (%.60s): data at %d (%zu x '%c') outside its %zu bytes",
				    i, name, e.data_offset, elems, hp_pd_printable(e.data_type), len);
		int rc = fn(name, (char)e.data_type, e.vector_length, off + (size_t)e.data_offset, ctx);
		if (rc)
			return rc;
		off += len;
	}
	return i;
}

