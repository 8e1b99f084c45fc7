#include "heapusage/probe.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapusage/gcthread.h"
#include "vmstructs/safemem.h"

static void part_fail(struct hp_probe *p, enum hp_part part, int rc, const char *fmt, ...)
{
	p->status[part] = rc;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->reason[part], HP_REASON_LEN, fmt, ap);
	va_end(ap);
}

void hp_parse_faults(struct hp_probe *p, const char *spec)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "hide-libjvm", HP_FAULT_HIDE_LIBJVM },
		{ "hide-vmstructs", HP_FAULT_HIDE_VMSTRUCTS },
		{ "corrupt-vmstructs", HP_FAULT_BAD_VMSTRUCTS },
		{ "strip-symtab", HP_FAULT_STRIP_SYMTAB },
		{ "hide-flags", HP_FAULT_HIDE_FLAGS },
		{ "unreadable-libjvm", HP_FAULT_BAD_LIBJVM_FILE },
		{ "corrupt-data", HP_FAULT_CORRUPT_DATA },
		{ "corrupt-frame", HP_FAULT_CORRUPT_FRAME },
		{ "counter-back", HP_FAULT_COUNTER_BACK },
		{ "counter-jump", HP_FAULT_COUNTER_JUMP },
		{ "request-stall", HP_FAULT_REQUEST_STALL },
	};
	size_t nsyms = 0, nmodes = 0;
	while (spec && *spec) {
		const char *end = strchr(spec, ',');
		size_t len = end ? (size_t)(end - spec) : strlen(spec);
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == len && strncmp(spec, names[i].name, len) == 0)
				p->faults |= names[i].bit;
		if (len > 12 && strncmp(spec, "hide-symbol=", 12) == 0 && nsyms < HP_MAX_FAULT_NAMES)
			snprintf(p->hidden_symbols[nsyms++], sizeof(p->hidden_symbols[0]), "%.*s", (int)(len - 12),
				 spec + 12);
		/* "release=N": the JVM is taken for release N (tests the data
		 * of a release newer than the data knows). */
		if (len > 8 && strncmp(spec, "release=", 8) == 0)
			p->fault_release = atoi(spec + 8);
		if (len > 13 && strncmp(spec, "disable-mode=", 13) == 0 && nmodes < HP_MAX_FAULT_NAMES)
			snprintf(p->disabled_modes[nmodes++], sizeof(p->disabled_modes[0]), "%.*s", (int)(len - 13),
				 spec + 13);
		spec = end ? end + 1 : NULL;
	}
}

const struct hp_sym *hp_probe_sym(struct hp_probe *p, const char *name)
{
	if (!p->syms)
		return NULL;
	for (int i = 0; i < HP_MAX_FAULT_NAMES && p->hidden_symbols[i][0]; i++)
		if (strcmp(p->hidden_symbols[i], name) == 0)
			return NULL;
	return hp_symtab_find(p->syms, name);
}

bool hp_probe_sym_is_text_function(const struct hp_probe *p, const struct hp_sym *s)
{
	return s && s->type == 2 /* STT_FUNC */ && hp_libjvm_in_text(&p->jvm, (uintptr_t)s->addr);
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
		.debug_root = p->opts.debug_root ? p->opts.debug_root : getenv("HEAPPROBE_DEBUG_ROOT"),
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

static const struct hp_sym *data_sym(void *ctx, const char *mangled)
{
	return hp_probe_sym(ctx, mangled);
}

static void load_data(struct hp_probe *p)
{
	const char *dir = p->opts.symbols_dir ? p->opts.symbols_dir : getenv("HEAPPROBE_SYMBOLS_DIR");
	if (!p->feature) {
		p->data_status = -ENOENT;
		snprintf(p->data_reason, sizeof(p->data_reason), "JDK release unknown: no symbols/ data");
		return;
	}
	if (p->faults & HP_FAULT_CORRUPT_DATA) {
		static const char bad[] = "release 17\nfield.CollectedHeap._used_at_last_gc\n";
		p->data_status = hp_symdata_parse(bad, sizeof(bad) - 1, "corrupted jdk-17.txt (HEAPPROBE_FAULTS)", 0,
						  &p->data, p->data_reason, sizeof(p->data_reason));
		return;
	}
	p->data_status = hp_symdata_load(p->feature, dir, &p->data, p->data_reason, sizeof(p->data_reason));
	if (p->data)
		hp_symdata_check(p->data, p->vms, p->syms ? data_sym : NULL, p);
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

/* The probe's own parts, in order (probe.h): libjvm, VMStructs, its
 * symbols, the flags, the release and its symbols/ data. */
void hp_probe_load(struct hp_probe *p)
{
	open_libjvm(p);
	open_vmstructs(p);
	open_symbols(p);
	open_flags(p);
	part_fail(p, HP_PART_HEAP, -EAGAIN, "not looked at yet");
	if (p->vms)
		read_vm_version(p);
	read_vm_version_jvmti(p);
	if (p->fault_release > 0 && p->feature) {
		snprintf(p->feature_note, sizeof(p->feature_note), "taken for JDK %d by HEAPPROBE_FAULTS (JDK %d runs)",
			 p->fault_release, p->feature);
		p->feature = p->fault_release;
	}
	load_data(p);
}

void hp_probe_release(struct hp_probe *p)
{
	hp_symdata_free(p->data);
	hp_vmflags_free(&p->flags);
	hp_symtab_close(p->syms);
	hp_vms_free(p->vms);
	hp_libjvm_release(&p->jvm);
	free(p);
}

const struct hp_heap_info *hp_probe_heap(struct hp_probe *p)
{
	if (hp_in_gc_callback())
		return p->heap.heap && p->status[HP_PART_HEAP] == 0 ? &p->heap : NULL;
	return detect_heap(p) == 0 ? &p->heap : NULL;
}

int hp_set_gc_callback(struct hp_probe *p, hp_gc_callback cb, void *ctx)
{
	if (!p)
		return -EINVAL;
	if (!p->capture)
		return -ENOTSUP;
	/* Never called from a GC callback: waiting for the old one is safe. */
	return hp_cb_slot_set(&p->gc_cb, (void (*)(void))cb, ctx);
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

/* ---- what the agent asks (probe_access.h) ------------------------------- */

bool hp_probe_fault(const struct hp_probe *p, unsigned fault)
{
	return p && (p->faults & fault);
}

const struct hp_vms *hp_probe_vmstructs(const struct hp_probe *p)
{
	return p ? p->vms : NULL;
}

const struct hp_symdata *hp_probe_symdata(const struct hp_probe *p)
{
	return p ? p->data : NULL;
}

void hp_probe_describe_symdata(const struct hp_probe *p, char *out, size_t cap)
{
	if (p && p->data)
		hp_symdata_describe(p->data, out, cap);
	else
		snprintf(out, cap, "%s", p ? p->data_reason : "no probe");
}

const struct hp_libjvm *hp_probe_libjvm(const struct hp_probe *p)
{
	return &p->jvm;
}

uintptr_t hp_probe_static(struct hp_probe *p, const char *key, size_t n)
{
	const char *name = hp_symdata_get(p->data, key);
	const struct hp_sym *s = name ? hp_probe_sym(p, name) : NULL;
	uintptr_t a = s ? (uintptr_t)s->addr : 0;
	return a && (n == 0 || hp_libjvm_writable(&p->jvm, a, n)) ? a : 0;
}

int hp_probe_flag_bool(const struct hp_probe *p, const char *name, bool *value)
{
	return hp_vmflags_bool(&p->flags, name, value);
}

void hp_probe_trim_symbols(struct hp_probe *p)
{
	hp_symtab_trim(p->syms);
}
