/* Exact class layouts from libjvm's DWARF (libdw), where a debug file is
 * installed (Debian: openjdk-17-dbg). Used to cross-check the per-release
 * data in symbols/, not on the start-up path: libdw decompresses the debug
 * sections when it opens them (about 3 s for Debian's 150 MB JDK 17 file). */
#ifndef HP_DWARF_H
#define HP_DWARF_H

#include <stddef.h>
#include <stdint.h>

struct hp_dwarf_member {
	char name[64];
	int64_t offset;
};

/* Finds the file holding libjvm's .debug_info: the object itself, or
 * <debug_root>/.build-id/xx/rest.debug. 0 and path filled, or -ENOENT. */
int hp_dwarf_find_file(const char *object_path, const char *build_id, const char *debug_root, char *path,
		       size_t cap);

/* Reads the data members of class `cls` from the compilation unit that
 * contains file address `cu_pc` (any function defined in the class's .cpp
 * file). Returns the number of members (<= cap) or a negative errno with a
 * reason in err. */
int hp_dwarf_class_layout(const char *debug_path, uint64_t cu_pc, const char *cls, struct hp_dwarf_member *out,
			  size_t cap, char *err, size_t errlen);

#endif
