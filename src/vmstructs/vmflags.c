#include "vmstructs/vmflags.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmstructs/errmsg.h"

#include "vmstructs/safemem.h"

#define MAX_FLAGS 10000

static const char *flag_key(const void *ctx, uint32_t id)
{
	return ((const struct hp_vmflags *)ctx)->flags[id].name;
}

int hp_vmflags_load(const struct hp_vms *vms, struct hp_vmflags *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	const void *flags_addr = hp_vms_address(vms, "JVMFlag", "flags");
	const void *num_addr = hp_vms_address(vms, "JVMFlag", "numFlags");
	int64_t name_off = hp_vms_offset(vms, "JVMFlag", "_name");
	int64_t addr_off = hp_vms_offset(vms, "JVMFlag", "_addr");
	const struct hp_vms_type *type = hp_vms_type(vms, "JVMFlag");
	if (!flags_addr || !num_addr || name_off < 0 || addr_off < 0 || !type) {
		hp_set_err(err, errlen, "VMStructs has no JVMFlag table (JVMFlag::flags/numFlags/_name/_addr)");
		return -ENOENT;
	}
	const char *table;
	uint64_t num;
	if (hp_safe_read_ptr((const void **)&table, flags_addr) || hp_safe_read_u64(&num, num_addr)) {
		hp_set_err(err, errlen, "JVMFlag::flags or JVMFlag::numFlags is unreadable");
		return -EFAULT;
	}
	uint64_t stride = type->size;
	if (num == 0 || num > MAX_FLAGS || stride < 16 || stride > 256 || (uint64_t)name_off + 8 > stride ||
	    (uint64_t)addr_off + 8 > stride) {
		hp_set_err(err, errlen, "JVMFlag table looks wrong: %llu flags of %llu bytes", (unsigned long long)num,
			(unsigned long long)stride);
		return -EBADMSG;
	}
	size_t bytes = (size_t)(num * stride);
	char *copy = malloc(bytes);
	out->flags = calloc((size_t)num, sizeof(*out->flags));
	out->names = malloc((size_t)num * 80);
	if (!copy || !out->flags || !out->names) {
		free(copy);
		hp_vmflags_free(out);
		hp_set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (hp_safe_read(copy, table, bytes)) {
		free(copy);
		hp_vmflags_free(out);
		hp_set_err(err, errlen, "JVMFlag table at %p (%zu bytes) is unreadable", (const void *)table, bytes);
		return -EFAULT;
	}
	char *names = out->names;
	size_t n = 0;
	for (uint64_t i = 0; i < num; i++) {
		const void *name_ptr, *value_ptr;
		memcpy(&name_ptr, copy + i * stride + name_off, sizeof(name_ptr));
		memcpy(&value_ptr, copy + i * stride + addr_off, sizeof(value_ptr));
		/* The table ends with a NULL-named sentinel in some releases. */
		if (!name_ptr)
			continue;
		long len = hp_safe_read_string(names, 80, name_ptr);
		if (len < 0)
			continue;       /* skip one bad name, keep the rest */
		out->flags[n].name = names;
		out->flags[n].addr = value_ptr;
		names += len + 1;
		n++;
	}
	free(copy);
	out->count = n;
	if (hp_strmap_init(&out->map, (uint32_t)n, flag_key, out)) {
		hp_vmflags_free(out);
		hp_set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		hp_strmap_insert(&out->map, (uint32_t)i);
	return 0;
}

void hp_vmflags_free(struct hp_vmflags *f)
{
	hp_strmap_free(&f->map);
	free(f->flags);
	free(f->names);
	memset(f, 0, sizeof(*f));
}

const void *hp_vmflags_addr(const struct hp_vmflags *f, const char *name)
{
	uint32_t id = hp_strmap_find(&f->map, name);
	return id == HP_STRMAP_NONE ? NULL : f->flags[id].addr;
}

int hp_vmflags_bool(const struct hp_vmflags *f, const char *name, bool *value)
{
	const void *addr = hp_vmflags_addr(f, name);
	if (!addr)
		return -ENOENT;
	unsigned char b;
	if (hp_safe_read(&b, addr, 1))
		return -EFAULT;
	*value = b != 0;
	return 0;
}

int hp_vmflags_size(const struct hp_vmflags *f, const char *name, size_t *value)
{
	const void *addr = hp_vmflags_addr(f, name);
	if (!addr)
		return -ENOENT;
	return hp_safe_read(value, addr, sizeof(*value)) ? -EFAULT : 0;
}
