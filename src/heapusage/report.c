/* The `info` report: everything the probe found, and why anything is
 * missing. One "key: value" per line so that people and tests can read it. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "heapusage/events.h"
#include "heapusage/jmm.h"
#include "heapusage/jmx.h"
#include "heapusage/layout.h"
#include "heapusage/marking.h"
#include "heapusage/probe.h"
#include "vmstructs/safemem.h"

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
	fprintf(out, "jdk.feature: %d%s%s\n", j.feature, p->feature_note[0] ? " " : "", p->feature_note);
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
	if (p->vms) {
		const struct hp_vms_type *t = hp_vms_type(p->vms, "CollectedHeap");
		fprintf(out, "vmstructs.CollectedHeap: size=%lld _reserved=%lld _total_collections=%lld\n",
			t ? (long long)t->size : -1LL, (long long)hp_vms_offset(p->vms, "CollectedHeap", "_reserved"),
			(long long)hp_vms_offset(p->vms, "CollectedHeap", "_total_collections"));
	}
	if (hp_safe_read_fallback())
		fprintf(out, "safe_read: /proc/self/mem (process_vm_readv refused here)\n");
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
	if (p->data) {
		/* Source and checks on one line, then each fact that is off. */
		char line[4096];
		hp_symdata_describe(p->data, line, sizeof(line));
		fprintf(out, "data: %s\n", line);
		const char *why, *key;
		for (size_t i = 0; (key = hp_symdata_off(p->data, i, &why)); i++)
			fprintf(out, "data.off: %s: %s\n", key, why);
	} else {
		fprintf(out, "data: %s\n", p->data_reason);
	}

	/* Markings: how they are counted, and the live figure they give. */
	hp_marking_locate(p);
	struct hp_marking mk = { .sz = sizeof(mk) };
	if (hp_marking(p, &mk) == 0) {
		fprintf(out, "marking.source: %s\n", mk.source);
		fprintf(out, "marking.count: %" PRIu64 " (full %" PRIu64 ", concurrent %" PRIu64 ", requested %" PRIu64 ")\n",
			mk.count, mk.full, mk.concurrent, mk.requested);
	} else {
		fprintf(out, "marking.source: none: %s\n", mk.source ? mk.source : "the heap is not known");
	}
	const char *ss = hp_marking_starts_source(p);
	if (ss && ss[0])
		fprintf(out, "marking.starts: %s%s\n", ss, mk.starts_source ? "" : " (no marking starts counted)");
	if (mk.starts_source)
		fprintf(out, "marking.started: %" PRIu64 "\n", mk.starts);
	if (mk.phase_source && mk.phase >= 0) {
		char ph[128];
		hp_marking_phase_text(mk.phase, ph, sizeof(ph));
		fprintf(out, "marking.phase: %s from %s\n", ph, mk.phase_source);
	}
	else if (mk.phase_source && strncmp(mk.phase_source, "none: not generational", 22) != 0)
		fprintf(out, "marking.phase: %s\n", mk.phase_source);
	if (mk.live_source) {
		if (mk.live)
			fprintf(out, "marking.live: %" PRIu64 " bytes from %s\n", mk.live, mk.live_source);
		else
			fprintf(out, "marking.live: none yet (no completed cycle, or none kept): %s\n", mk.live_source);
		uint64_t young;
		if (hp_marking_young_live(p, &young) == 0)
			fprintf(out, "marking.young_live: %" PRIu64 " bytes (generational ZGC: the last young marking's; "
				"the live heap's figure is both)\n", young);
	}

	/* Every mode: enabled or why not, and a live reading where legal. */
	for (int m = 0; m < HP_MODE_COUNT; m++) {
		const char *reason;
		int rc = hp_mode_status(p, m, &reason);
		if (rc) {
			fprintf(out, "mode.%s: disabled (%s): %s\n", hp_mode_name(m), strerror(-rc), reason);
			continue;
		}
		struct hp_heap_usage u = { .sz = sizeof(u) };
		rc = hp_heap_usage(p, HP_USAGE_ONLY_MODE(m), &u);
		if (rc)
			fprintf(out, "mode.%s: ok, no reading here (%s)\n", hp_mode_name(m), strerror(-rc));
		else
			fprintf(out, "mode.%s: ok used=%" PRIu64 " committed=%" PRIu64 " max=%" PRIu64 " kind=%s\n",
				hp_mode_name(m), u.used, u.committed, u.max, hp_usage_kind_name(u.kind));
	}
	const char *note = hp_jmm_note(p);
	if (note && *note)
		fprintf(out, "jmm.note: %s\n", note);
	note = hp_jmx_capture_note(p);
	if (note && *note)
		fprintf(out, "jmx.note: %s\n", note);
	struct hp_events_stats st;
	hp_events_stats(p, &st);
	fprintf(out, "capture: %s gcs=%" PRIu64 " full=%" PRIu64 " failures=%" PRIu64 " pauses=%" PRIu64
		" cross_checks=%" PRIu64 " disagreements=%" PRIu64 "\n",
		p->events_reason[0] ? p->events_reason : st.capture_note, st.gc_finish_events, st.full_gcs,
		st.capture_failures, st.pause_events, st.cross_checks, st.disagreements);
	fprintf(out, "setup: hp_open %.1f ms, at VM start %.1f ms (of which forcing the JMX native %.1f ms)\n",
		p->open_ns / 1e6, p->vm_live_ns / 1e6, p->jmx_bind_ns / 1e6);
	struct hp_heap_usage best = { .sz = sizeof(best) };
	if (hp_heap_usage(p, 0, &best) == 0)
		fprintf(out, "usage.current: used=%" PRIu64 " committed=%" PRIu64 " max=%" PRIu64 " mode=%s\n",
			best.used, best.committed, best.max, hp_mode_name(best.mode));
	else
		fprintf(out, "usage.current: none\n");
	struct hp_heap_usage post = { .sz = sizeof(post) };
	if (hp_heap_usage(p, HP_USAGE_POST_GC, &post) == 0)
		fprintf(out, "usage.post_gc: used=%" PRIu64 " committed=%" PRIu64 " kind=%s mode=%s gc=%" PRIu64 "\n",
			post.used, post.committed, hp_usage_kind_name(post.kind), hp_mode_name(post.mode),
			post.gc_count);
	else
		fprintf(out, "usage.post_gc: none yet\n");
	/* The live figure (hp_live_bytes): filled whatever the POST_GC answer. */
	if (post.live)
		fprintf(out, "usage.live: %" PRIu64 " bytes kind=%s\n", post.live, hp_usage_kind_name(post.live_kind));
	else
		fprintf(out, "usage.live: none yet\n");
	fflush(out);
	return 0;
}

int hp_verify_layout(struct hp_probe *p, FILE *out)
{
	if (!p)
		return -EINVAL;
	return hp_layout_verify_dwarf(p, out);
}
