#include "heapusage/probe.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmstructs/safemem.h"

static void part_fail(struct hp_probe *p, enum hp_part part, int rc, const char *fmt, ...)
{
	p->status[part] = rc;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->reason[part], HP_REASON_LEN, fmt, ap);
	va_end(ap);
}

unsigned hp_parse_faults(const char *spec)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "hide-libjvm", HP_FAULT_HIDE_LIBJVM },
		{ "hide-vmstructs", HP_FAULT_HIDE_VMSTRUCTS },
		{ "corrupt-vmstructs", HP_FAULT_BAD_VMSTRUCTS },
		{ "strip-symtab", HP_FAULT_STRIP_SYMTAB },
		{ "hide-flags", HP_FAULT_HIDE_FLAGS },
		{ "unreadable-libjvm", HP_FAULT_BAD_LIBJVM_FILE },
	};
	unsigned bits = 0;
	if (!spec)
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *at = strstr(spec, names[i].name);
		size_t n = strlen(names[i].name);
		if (at && (at == spec || at[-1] == ',') && (at[n] == '\0' || at[n] == ','))
			bits |= names[i].bit;
	}
	return bits;
}

static void read_vm_version(struct hp_probe *p)
{
	const void *rel = hp_vms_address(p->vms, "Abstract_VM_Version", "_s_vm_release");
	const char *str;
	if (rel && hp_safe_read_ptr((const void **)&str, rel) == 0 && str)
		hp_safe_read_string(p->vm_release, sizeof(p->vm_release), str);
	const void *major = hp_vms_address(p->vms, "Abstract_VM_Version", "_vm_major_version");
	int v;
	if (major && hp_safe_read(&v, major, sizeof(v)) == 0 && v > 0 && v < 1000)
		p->feature = v;
	else if (p->vm_release[0])
		p->feature = atoi(p->vm_release);
}

static void read_vm_version_jvmti(struct hp_probe *p)
{
	/* Without VMStructs (a non-HotSpot VM) the system property still says
	 * which release runs. Allowed from the live phase of OnLoad onward. */
	char *value = NULL;
	if (!p->jvmti || p->vm_release[0])
		return;
	if ((*p->jvmti)->GetSystemProperty(p->jvmti, "java.vm.version", &value) == JVMTI_ERROR_NONE && value) {
		snprintf(p->vm_release, sizeof(p->vm_release), "%s", value);
		p->feature = atoi(value);
		(*p->jvmti)->Deallocate(p->jvmti, (unsigned char *)value);
	}
}

static void open_libjvm(struct hp_probe *p)
{
	char err[HP_REASON_LEN] = "";
	const char *name = p->opts.libjvm_name;
	if (p->faults & HP_FAULT_HIDE_LIBJVM)
		name = "libjvm-hidden-by-HEAPPROBE_FAULTS.so";
	int rc = hp_libjvm_find(&p->jvm, name, err, sizeof(err));
	if (rc)
		part_fail(p, HP_PART_LIBJVM, rc, "%s", err);
}

static void open_vmstructs(struct hp_probe *p)
{
	char err[HP_REASON_LEN] = "";
	struct hp_vms_tables tables;
	int rc;
	if (p->status[HP_PART_LIBJVM]) {
		part_fail(p, HP_PART_VMSTRUCTS, -ENOENT, "no libjvm");
		return;
	}
	if (p->faults & HP_FAULT_HIDE_VMSTRUCTS) {
		part_fail(p, HP_PART_VMSTRUCTS, -ENOENT,
			  "libjvm does not export gHotSpotVMStructs (hidden by HEAPPROBE_FAULTS)");
		return;
	}
	rc = hp_libjvm_vms_tables(&p->jvm, &tables, err, sizeof(err));
	if (!rc && (p->faults & HP_FAULT_BAD_VMSTRUCTS))
		tables.structs.stride = 1u << 20;
	if (!rc)
		rc = hp_vms_load(&tables, &p->vms, err, sizeof(err));
	if (rc)
		part_fail(p, HP_PART_VMSTRUCTS, rc, "%s", err);
}

static void open_symbols(struct hp_probe *p)
{
	char err[HP_REASON_LEN] = "";
	if (p->status[HP_PART_LIBJVM]) {
		part_fail(p, HP_PART_SYMBOLS, -ENOENT, "no libjvm");
		return;
	}
	struct hp_symtab_opts so = {
		.sz = sizeof(so),
		.load_base = p->jvm.base,
		.debug_root = p->opts.debug_root,
		.no_debug_search = !!(p->opts.flags & HP_OPEN_NO_DEBUG_SEARCH),
	};
	const char *path = p->jvm.path;
	if (p->faults & HP_FAULT_BAD_LIBJVM_FILE)
		path = "/proc/self/status";     /* readable, not ELF */
	int rc = hp_symtab_open(path, &so, &p->syms, err, sizeof(err));
	if (rc) {
		part_fail(p, HP_PART_SYMBOLS, rc, "%s", err);
		return;
	}
	if ((p->opts.flags & HP_OPEN_IGNORE_SYMTAB) || (p->faults & HP_FAULT_STRIP_SYMTAB)) {
		/* Re-open as if stripped: only .dynsym, no debug search. */
		hp_symtab_close(p->syms);
		p->syms = NULL;
		part_fail(p, HP_PART_SYMBOLS, -ENOENT, "libjvm .symtab ignored (stripped libjvm simulated)");
	}
}

static void open_flags(struct hp_probe *p)
{
	char err[HP_REASON_LEN] = "";
	if (!p->vms) {
		part_fail(p, HP_PART_FLAGS, -ENOENT, "no VMStructs");
		return;
	}
	if (p->faults & HP_FAULT_HIDE_FLAGS) {
		part_fail(p, HP_PART_FLAGS, -ENOENT, "flag table hidden by HEAPPROBE_FAULTS");
		return;
	}
	int rc = hp_vmflags_load(p->vms, &p->flags, err, sizeof(err));
	if (rc)
		part_fail(p, HP_PART_FLAGS, rc, "%s", err);
}

static int detect_heap(struct hp_probe *p)
{
	if (p->status[HP_PART_HEAP] == 0 && p->heap.heap)
		return 0;
	if (!p->vms) {
		part_fail(p, HP_PART_HEAP, -ENOENT, "no VMStructs");
		return -ENOENT;
	}
	int rc = hp_heap_detect(p->vms, p->syms, p->status[HP_PART_FLAGS] ? NULL : &p->flags, &p->heap);
	if (rc)
		part_fail(p, HP_PART_HEAP, rc, "%s", p->heap.err);
	else
		p->status[HP_PART_HEAP] = 0, p->reason[HP_PART_HEAP][0] = '\0';
	return rc;
}

int hp_open(JavaVM *vm, const struct hp_open_opts *opts, struct hp_probe **out)
{
	if (!out || (opts && opts->sz < sizeof(size_t)))
		return -EINVAL;
	*out = NULL;
	struct hp_probe *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (opts) {
		/* Take what the caller's (possibly older, smaller) struct has. */
		size_t n = opts->sz < sizeof(p->opts) ? opts->sz : sizeof(p->opts);
		memcpy(&p->opts, opts, n);
	}
	p->opts.sz = sizeof(p->opts);
	p->faults = hp_parse_faults(getenv("HEAPPROBE_FAULTS"));
	p->vm = vm;
	if (vm && (*vm)->GetEnv(vm, (void **)&p->jvmti, JVMTI_VERSION_1_2) != JNI_OK)
		p->jvmti = NULL;

	open_libjvm(p);
	open_vmstructs(p);
	open_symbols(p);
	open_flags(p);
	part_fail(p, HP_PART_HEAP, -EAGAIN, "not looked at yet");
	if (p->vms)
		read_vm_version(p);
	read_vm_version_jvmti(p);
	*out = p;
	return 0;
}

void hp_close(struct hp_probe *p)
{
	if (!p)
		return;
	if (p->jvmti)
		(*p->jvmti)->DisposeEnvironment(p->jvmti);
	hp_vmflags_free(&p->flags);
	hp_symtab_close(p->syms);
	hp_vms_free(p->vms);
	hp_libjvm_release(&p->jvm);
	free(p);
}

int hp_status(struct hp_probe *p, enum hp_part part, const char **reason)
{
	if (!p || part < 0 || part >= HP_PART_COUNT)
		return -EINVAL;
	if (part == HP_PART_HEAP)
		detect_heap(p);
	if (reason)
		*reason = p->reason[part];
	return p->status[part];
}

int hp_jdk_info(struct hp_probe *p, struct hp_jdk_info *info)
{
	if (!p || !info || info->sz < sizeof(size_t))
		return -EINVAL;
	struct hp_jdk_info j = { .sz = sizeof(j) };
	read_vm_version_jvmti(p);
	j.vm_release = p->vm_release[0] ? p->vm_release : NULL;
	j.feature = p->feature;
	j.libjvm_path = p->status[HP_PART_LIBJVM] ? NULL : p->jvm.path;
	if (p->syms) {
		j.build_id = hp_symtab_build_id(p->syms);
		j.symbols_origin = hp_symtab_origin_name(hp_symtab_origin(p->syms));
		j.symbols_path = hp_symtab_symbols_path(p->syms);
		j.symtab_count = hp_symtab_count_symtab(p->syms);
		j.dynsym_count = hp_symtab_count_dynsym(p->syms);
	}
	if (p->vms) {
		j.vms_fields = hp_vms_field_count(p->vms);
		j.vms_types = hp_vms_type_count(p->vms);
		j.vms_int_constants = hp_vms_int_constant_count(p->vms);
		j.vms_long_constants = hp_vms_long_constant_count(p->vms);
	}
	size_t n = info->sz < sizeof(j) ? info->sz : sizeof(j);
	size_t caller_sz = info->sz;
	memcpy(info, &j, n);
	info->sz = caller_sz;
	return 0;
}

int hp_gc_info(struct hp_probe *p, struct hp_gc_info *info)
{
	if (!p || !info || info->sz < sizeof(size_t))
		return -EINVAL;
	int rc = detect_heap(p);
	struct hp_gc_info g = { .sz = sizeof(g) };
	g.kind = p->heap.kind;
	g.generational = p->heap.generational;
	g.heap_class = p->heap.heap_class;
	g.how = rc ? p->reason[HP_PART_HEAP] : p->heap.how;
	g.heap = p->heap.heap;
	g.reserved_start = p->heap.reserved_start;
	g.reserved_bytes = p->heap.reserved_bytes;
	g.total_collections = p->heap.total_collections;
	size_t n = info->sz < sizeof(g) ? info->sz : sizeof(g);
	size_t caller_sz = info->sz;
	memcpy(info, &g, n);
	info->sz = caller_sz;
	return rc;
}
