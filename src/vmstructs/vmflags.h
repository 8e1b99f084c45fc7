/* HotSpot's -XX flag table, read through VMStructs (JVMFlag::flags,
 * JVMFlag::numFlags, JVMFlag::_name, JVMFlag::_addr): the ground truth for
 * which collector the user selected. */
#ifndef HP_VMFLAGS_H
#define HP_VMFLAGS_H

#include <stdbool.h>
#include <stddef.h>

#include "vmstructs/strmap.h"
#include "vmstructs/vmstructs.h"

struct hp_vmflags {
	size_t count;
	struct hp_vmflag { char *name; const void *addr; } *flags;
	struct hp_strmap map;
	char *names;                /* one block holding every name */
};

/* Reads the flag table; -ENOENT if VMStructs lacks JVMFlag entries,
 * -EFAULT / -EBADMSG for an unreadable or absurd table; reason in err. */
int hp_vmflags_load(const struct hp_vms *vms, struct hp_vmflags *out, char *err, size_t errlen);
void hp_vmflags_free(struct hp_vmflags *f);

/* The flag's value address (the global HotSpot reads it from), or NULL. */
const void *hp_vmflags_addr(const struct hp_vmflags *f, const char *name);
/* 0 and *value set, -ENOENT if no such flag, -EFAULT if unreadable. */
int hp_vmflags_bool(const struct hp_vmflags *f, const char *name, bool *value);
int hp_vmflags_size(const struct hp_vmflags *f, const char *name, size_t *value);

#endif
