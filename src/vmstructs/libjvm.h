/* The libjvm loaded in this process: where it is, its exported symbols,
 * and the VMStructs table descriptors it exports. */
#ifndef HP_LIBJVM_H
#define HP_LIBJVM_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmstructs/vmstructs.h"

#define HP_LIBJVM_MAX_SEGMENTS 8

struct hp_libjvm {
	char path[PATH_MAX];
	uintptr_t base;                 /* dlpi_addr: added to st_value */
	void *handle;                   /* dlopen(RTLD_NOLOAD) handle */
	unsigned nexec;
	struct { uintptr_t start, end; } exec[HP_LIBJVM_MAX_SEGMENTS];   /* r-x PT_LOADs */
	unsigned nread;
	struct { uintptr_t start, end; } read[HP_LIBJVM_MAX_SEGMENTS];   /* readable PT_LOADs */
	unsigned nwrite;
	struct { uintptr_t start, end; } write[HP_LIBJVM_MAX_SEGMENTS];  /* writable PT_LOADs, .bss included */
};

/* Finds the libjvm mapped in this process. `name_hint` overrides the file
 * name matched (default "libjvm.so", matched as the last path component).
 * Returns 0, or -ENOENT "no libjvm.so is loaded in this process". */
int hp_libjvm_find(struct hp_libjvm *jvm, const char *name_hint, char *err, size_t errlen);
void hp_libjvm_release(struct hp_libjvm *jvm);

/* An exported (.dynsym) symbol's address via dlsym, or NULL. */
void *hp_libjvm_export(const struct hp_libjvm *jvm, const char *name);

/* true if addr lies in an executable segment of libjvm: the check every
 * non-exported function address must pass before it is called. */
bool hp_libjvm_in_text(const struct hp_libjvm *jvm, uintptr_t addr);

/* true if [addr, addr + n) lies in one readable segment of libjvm (its
 * string literals, for instance), so plain loads from it cannot fault. */
bool hp_libjvm_readable(const struct hp_libjvm *jvm, uintptr_t addr, size_t n);

/* true if [addr, addr + n) lies in one writable segment of libjvm (its
 * globals, -XX flags among them; .bss included). */
bool hp_libjvm_writable(const struct hp_libjvm *jvm, uintptr_t addr, size_t n);

/* Reads gHotSpotVM* exports into table descriptors. -ENOENT with the name
 * of the first missing export; -EFAULT if one is unreadable. */
int hp_libjvm_vms_tables(const struct hp_libjvm *jvm, struct hp_vms_tables *t, char *err, size_t errlen);

#endif
