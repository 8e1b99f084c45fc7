/* The `info` report: everything the probe found, and why anything is
 * missing. One "key: value" per line so that people and tests can read it. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "heapusage/probe.h"

static const char *part_names[HP_PART_COUNT] = {
	[HP_PART_LIBJVM] = "libjvm",
	[HP_PART_VMSTRUCTS] = "vmstructs",
	[HP_PART_SYMBOLS] = "symbols",
	[HP_PART_FLAGS] = "flags",
	[HP_PART_HEAP] = "heap",
};

static const char *or_unknown(const char *s)
{
	return s && *s ? s : "unknown";
}

int hp_write_info(struct hp_probe *p, FILE *out)
{
	if (!p || !out)
		return -EINVAL;
	struct hp_jdk_info j = { .sz = sizeof(j) };
	struct hp_gc_info g = { .sz = sizeof(g) };
	hp_jdk_info(p, &j);
	int gc_rc = hp_gc_info(p, &g);

	fprintf(out, "heapprobe %s info\n", HP_VERSION);
	fprintf(out, "jdk.release: %s\n", or_unknown(j.vm_release));
	fprintf(out, "jdk.feature: %d\n", j.feature);
	fprintf(out, "libjvm.path: %s\n", or_unknown(j.libjvm_path));
	fprintf(out, "libjvm.build_id: %s\n", or_unknown(j.build_id));
	for (int part = 0; part < HP_PART_COUNT; part++) {
		const char *reason;
		int rc = hp_status(p, part, &reason);
		if (rc)
			fprintf(out, "status.%s: unavailable (%s): %s\n", part_names[part], strerror(-rc), reason);
		else
			fprintf(out, "status.%s: ok\n", part_names[part]);
	}
	if (p->syms) {
		fprintf(out, "symbols.origin: %s\n", j.symbols_origin);
		fprintf(out, "symbols.file: %s\n", or_unknown(j.symbols_path));
		fprintf(out, "symbols.symtab: %zu\n", j.symtab_count);
		fprintf(out, "symbols.dynsym: %zu\n", j.dynsym_count);
		const char *note = hp_symtab_debug_note(p->syms);
		if (note && *note)
			fprintf(out, "symbols.note: %s\n", note);
	}
	if (p->vms)
		fprintf(out, "vmstructs.entries: structs=%zu types=%zu int_constants=%zu long_constants=%zu\n",
			j.vms_fields, j.vms_types, j.vms_int_constants, j.vms_long_constants);
	if (!p->status[HP_PART_FLAGS])
		fprintf(out, "flags.count: %zu\n", p->flags.count);
	if (gc_rc == 0) {
		fprintf(out, "heap.address: %p\n", g.heap);
		fprintf(out, "heap.class: %s\n", or_unknown(g.heap_class));
		fprintf(out, "heap.reserved: start=0x%" PRIxPTR " bytes=%" PRIu64 "\n", g.reserved_start,
			g.reserved_bytes);
		fprintf(out, "heap.total_collections: %u\n", g.total_collections);
		fprintf(out, "gc.kind: %s\n", hp_gc_kind_name(g.kind));
		fprintf(out, "gc.generational: %s\n",
			g.generational < 0 ? "unknown" : g.generational ? "yes" : "no");
		fprintf(out, "gc.determined_by: %s\n", g.how);
	} else {
		fprintf(out, "gc.kind: unknown\n");
		fprintf(out, "gc.determined_by: none: %s\n", g.how);
	}
	fflush(out);
	return 0;
}
