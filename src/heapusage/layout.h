/* Where HotSpot keeps a member: VMStructs when it publishes the member,
 * else symbols/ data relative to a member VMStructs does publish. */
#ifndef HP_LAYOUT_H
#define HP_LAYOUT_H

#include <stdint.h>
#include <stdio.h>

struct hp_probe;

/* Offset of Type::member inside an instance. 0, or -ENOENT with a reason in
 * `how`; on success `how` says where the offset came from. */
int hp_layout_member(struct hp_probe *p, const char *type, const char *member, int64_t *offset, char *how,
		     size_t len);

/* Compares symbols/ data with libjvm's DWARF where a debug file exists and
 * writes "layout.*" lines to `out` (NULL: no report). Returns the number
 * of mismatches, or a negative errno if no DWARF could be read. A mismatch
 * disables the last-GC-fields mode. Slow (seconds): never on start-up. */
int hp_layout_verify_dwarf(struct hp_probe *p, FILE *out);

#endif
