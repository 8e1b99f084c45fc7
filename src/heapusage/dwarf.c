#include "heapusage/dwarf.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int hp_dwarf_find_file(const char *object_path, const char *build_id, const char *debug_root, char *path,
		       size_t cap)
{
	if (build_id && strlen(build_id) > 2) {
		snprintf(path, cap, "%s/.build-id/%.2s/%s.debug", debug_root ? debug_root : "/usr/lib/debug",
			 build_id, build_id + 2);
		if (access(path, R_OK) == 0)
			return 0;
	}
	/* The object itself may carry DWARF (an unstripped build). */
	int fd = open(object_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	int rc = -ENOENT;
	if (dw) {
		snprintf(path, cap, "%s", object_path);
		dwarf_end(dw);
		rc = 0;
	}
	close(fd);
	return rc;
}

static int member_offset(Dwarf_Die *m, int64_t *off)
{
	Dwarf_Attribute at;
	Dwarf_Word w;
	if (!dwarf_attr(m, DW_AT_data_member_location, &at) || dwarf_formudata(&at, &w) != 0)
		return -1;
	*off = (int64_t)w;
	return 0;
}

int hp_dwarf_class_layout(const char *debug_path, uint64_t cu_pc, const char *cls, struct hp_dwarf_member *out,
			  size_t cap, char *err, size_t errlen)
{
	int fd = open(debug_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", debug_path, strerror(errno));
		return -ENOENT;
	}
	int rc = -ENOENT;
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	Dwarf_Die cu, child;
	if (!dw) {
		snprintf(err, errlen, "%s has no usable DWARF: %s", debug_path, dwarf_errmsg(-1));
		goto out;
	}
	if (!dwarf_addrdie(dw, cu_pc, &cu)) {
		snprintf(err, errlen, "no compilation unit covers 0x%llx in %s", (unsigned long long)cu_pc, debug_path);
		goto out;
	}
	snprintf(err, errlen, "class %s not defined in compilation unit %s", cls, dwarf_diename(&cu));
	if (dwarf_child(&cu, &child) != 0)
		goto out;
	do {
		int tag = dwarf_tag(&child);
		if (tag != DW_TAG_class_type && tag != DW_TAG_structure_type)
			continue;
		const char *name = dwarf_diename(&child);
		if (!name || strcmp(name, cls) != 0 || dwarf_hasattr(&child, DW_AT_declaration))
			continue;
		Dwarf_Die m;
		size_t n = 0;
		if (dwarf_child(&child, &m) == 0) {
			do {
				int64_t off;
				const char *mname = dwarf_diename(&m);
				if (dwarf_tag(&m) != DW_TAG_member || !mname || member_offset(&m, &off))
					continue;       /* static members have no location */
				if (n < cap) {
					snprintf(out[n].name, sizeof(out[n].name), "%s", mname);
					out[n].offset = off;
				}
				n++;
			} while (dwarf_siblingof(&m, &m) == 0);
		}
		err[0] = '\0';
		rc = (int)(n < cap ? n : cap);
		break;
	} while (dwarf_siblingof(&child, &child) == 0);
out:
	if (dw)
		dwarf_end(dw);
	close(fd);
	return rc;
}
