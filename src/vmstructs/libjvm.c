#include "vmstructs/libjvm.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vmstructs/errmsg.h"

#include "vmstructs/safemem.h"

struct find_ctx {
	const char *name;
	struct hp_libjvm *jvm;
	bool found;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_ctx *ctx = data;
	const char *path = info->dlpi_name;
	if (!path || !*path)
		return 0;
	const char *slash = strrchr(path, '/');
	const char *file = slash ? slash + 1 : path;
	if (strcmp(file, ctx->name) != 0)
		return 0;
	struct hp_libjvm *jvm = ctx->jvm;
	snprintf(jvm->path, sizeof(jvm->path), "%s", path);
	jvm->base = info->dlpi_addr;
	jvm->nexec = 0;
	jvm->nread = 0;
	jvm->nwrite = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		/* p_filesz, not p_memsz: the file-backed part is certainly
		 * mapped (the .bss tail rounds to pages we need not trust). */
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && jvm->nread < HP_LIBJVM_MAX_SEGMENTS) {
			jvm->read[jvm->nread].start = info->dlpi_addr + ph->p_vaddr;
			jvm->read[jvm->nread].end = info->dlpi_addr + ph->p_vaddr + ph->p_filesz;
			jvm->nread++;
		}
		/* Writable data: p_memsz, .bss included (the loader maps it,
		 * zero-filled, with the segment). */
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && jvm->nwrite < HP_LIBJVM_MAX_SEGMENTS) {
			jvm->write[jvm->nwrite].start = info->dlpi_addr + ph->p_vaddr;
			jvm->write[jvm->nwrite].end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			jvm->nwrite++;
		}
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && jvm->nexec < HP_LIBJVM_MAX_SEGMENTS) {
			jvm->exec[jvm->nexec].start = info->dlpi_addr + ph->p_vaddr;
			jvm->exec[jvm->nexec].end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			jvm->nexec++;
		}
	}
	ctx->found = true;
	return 1;
}

int hp_libjvm_find(struct hp_libjvm *jvm, const char *name_hint, char *err, size_t errlen)
{
	memset(jvm, 0, sizeof(*jvm));
	struct find_ctx ctx = { name_hint ? name_hint : "libjvm.so", jvm, false };
	dl_iterate_phdr(find_cb, &ctx);
	if (!ctx.found) {
		hp_set_err(err, errlen, "no %s is loaded in this process", ctx.name);
		return -ENOENT;
	}
	/* RTLD_NOLOAD: take a reference to the copy already mapped, never load
	 * a second one. */
	jvm->handle = dlopen(jvm->path, RTLD_LAZY | RTLD_NOLOAD);
	if (!jvm->handle) {
		hp_set_err(err, errlen, "dlopen(%s, RTLD_NOLOAD) failed: %s", jvm->path, dlerror());
		return -ENOENT;
	}
	return 0;
}

void hp_libjvm_release(struct hp_libjvm *jvm)
{
	if (jvm->handle)
		dlclose(jvm->handle);
	jvm->handle = NULL;
}

void *hp_libjvm_export(const struct hp_libjvm *jvm, const char *name)
{
	return jvm->handle ? dlsym(jvm->handle, name) : NULL;
}

bool hp_libjvm_readable(const struct hp_libjvm *jvm, uintptr_t addr, size_t n)
{
	for (unsigned i = 0; i < jvm->nread; i++)
		if (addr >= jvm->read[i].start && addr < jvm->read[i].end && n <= jvm->read[i].end - addr)
			return true;
	return false;
}

bool hp_libjvm_writable(const struct hp_libjvm *jvm, uintptr_t addr, size_t n)
{
	for (unsigned i = 0; i < jvm->nwrite; i++)
		if (addr >= jvm->write[i].start && addr < jvm->write[i].end && n <= jvm->write[i].end - addr)
			return true;
	return false;
}

bool hp_libjvm_in_text(const struct hp_libjvm *jvm, uintptr_t addr)
{
	for (unsigned i = 0; i < jvm->nexec; i++)
		if (addr >= jvm->exec[i].start && addr < jvm->exec[i].end)
			return true;
	return false;
}

static int read_export_u64(const struct hp_libjvm *jvm, const char *name, uint64_t *out, char *err,
			   size_t errlen)
{
	const void *p = hp_libjvm_export(jvm, name);
	if (!p) {
		hp_set_err(err, errlen, "libjvm does not export %s (not a HotSpot VM, or built without VMStructs)",
			name);
		return -ENOENT;
	}
	if (hp_safe_read_u64(out, p) != 0) {
		hp_set_err(err, errlen, "%s at %p is not readable", name, p);
		return -EFAULT;
	}
	return 0;
}

static int read_export_ptr(const struct hp_libjvm *jvm, const char *name, const void **out, char *err,
			   size_t errlen)
{
	uint64_t v;
	int rc = read_export_u64(jvm, name, &v, err, errlen);
	*out = (const void *)(uintptr_t)v;
	return rc;
}

int hp_libjvm_vms_tables(const struct hp_libjvm *jvm, struct hp_vms_tables *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	/* Each array global is a pointer variable (VMStructEntry* gHotSpotVMStructs),
	 * each offset/stride a uint64_t. */
	const struct { const char *name; uint64_t *dst; } u64s[] = {
		{ "gHotSpotVMStructEntryTypeNameOffset", &t->structs.type_name },
		{ "gHotSpotVMStructEntryFieldNameOffset", &t->structs.field_name },
		{ "gHotSpotVMStructEntryTypeStringOffset", &t->structs.type_string },
		{ "gHotSpotVMStructEntryIsStaticOffset", &t->structs.is_static },
		{ "gHotSpotVMStructEntryOffsetOffset", &t->structs.offset },
		{ "gHotSpotVMStructEntryAddressOffset", &t->structs.address },
		{ "gHotSpotVMStructEntryArrayStride", &t->structs.stride },
		{ "gHotSpotVMTypeEntryTypeNameOffset", &t->types.type_name },
		{ "gHotSpotVMTypeEntrySuperclassNameOffset", &t->types.superclass_name },
		{ "gHotSpotVMTypeEntryIsOopTypeOffset", &t->types.is_oop },
		{ "gHotSpotVMTypeEntryIsIntegerTypeOffset", &t->types.is_integer },
		{ "gHotSpotVMTypeEntryIsUnsignedOffset", &t->types.is_unsigned },
		{ "gHotSpotVMTypeEntrySizeOffset", &t->types.size },
		{ "gHotSpotVMTypeEntryArrayStride", &t->types.stride },
		{ "gHotSpotVMIntConstantEntryNameOffset", &t->int_constants.name },
		{ "gHotSpotVMIntConstantEntryValueOffset", &t->int_constants.value },
		{ "gHotSpotVMIntConstantEntryArrayStride", &t->int_constants.stride },
		{ "gHotSpotVMLongConstantEntryNameOffset", &t->long_constants.name },
		{ "gHotSpotVMLongConstantEntryValueOffset", &t->long_constants.value },
		{ "gHotSpotVMLongConstantEntryArrayStride", &t->long_constants.stride },
	};
	int rc;
	if ((rc = read_export_ptr(jvm, "gHotSpotVMStructs", &t->structs.array, err, errlen)) ||
	    (rc = read_export_ptr(jvm, "gHotSpotVMTypes", &t->types.array, err, errlen)) ||
	    (rc = read_export_ptr(jvm, "gHotSpotVMIntConstants", &t->int_constants.array, err, errlen)) ||
	    (rc = read_export_ptr(jvm, "gHotSpotVMLongConstants", &t->long_constants.array, err, errlen)))
		return rc;
	for (size_t i = 0; i < sizeof(u64s) / sizeof(u64s[0]); i++)
		if ((rc = read_export_u64(jvm, u64s[i].name, u64s[i].dst, err, errlen)))
			return rc;
	for (unsigned i = 0; i < jvm->nread && i < HP_VMS_MAX_READABLE; i++) {
		t->readable[i].start = jvm->read[i].start;
		t->readable[i].end = jvm->read[i].end;
		t->nreadable = i + 1;
	}
	return 0;
}
