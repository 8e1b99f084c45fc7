/* Where HotSpot keeps a member (layout.h): VMStructs, or symbols/ data
 * relative to a member VMStructs publishes; and the check of that data
 * against libjvm's DWARF where a debug file exists. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "heapusage/dwarf.h"
#include "heapusage/layout.h"
#include "heapusage/modes.h"
#include "heapusage/probe.h"

int hp_layout_member(struct hp_probe *p, const char *type, const char *member, int64_t *offset, char *how,
		     size_t len)
{
	return hp_symdata_member(p->vms, p->data, p->data_reason, type, member, offset, how, len);
}

int hp_layout_verify_dwarf(struct hp_probe *p, FILE *out)
{
	char path[512], err[256];
	if (!p->syms || !p->data)
		return -ENOENT;
	if (hp_dwarf_find_file(p->jvm.path, hp_symtab_build_id(p->syms), p->opts.debug_root, path,
			       sizeof(path))) {
		if (out)
			fprintf(out, "layout.dwarf: none (no debug file with .debug_info for build-id %s)\n",
				hp_symtab_build_id(p->syms));
		return -ENOENT;
	}
	const struct hp_sym *anchor = hp_probe_sym(p, "_ZN13CollectedHeap12memory_usageEv");
	if (!anchor) {
		if (out)
			fprintf(out, "layout.dwarf: none (no CollectedHeap::memory_usage to find its unit)\n");
		return -ENOENT;
	}
	struct hp_dwarf_member members[64];
	int n = hp_dwarf_class_layout(path, anchor->addr - p->jvm.base, "CollectedHeap", members, 64, err,
				      sizeof(err));
	if (n < 0) {
		if (out)
			fprintf(out, "layout.dwarf: unreadable: %s\n", err);
		return n;
	}
	static const char *const checked[] = { "_capacity_at_last_gc", "_used_at_last_gc",
					       "_total_full_collections", "_reserved" };
	int mismatches = 0;
	for (size_t i = 0; i < sizeof(checked) / sizeof(checked[0]); i++) {
		int64_t ours = -1, theirs = -1;
		char how[160];
		hp_layout_member(p, "CollectedHeap", checked[i], &ours, how, sizeof(how));
		for (int j = 0; j < n; j++)
			if (strcmp(members[j].name, checked[i]) == 0)
				theirs = members[j].offset;
		bool ok = ours == theirs;
		if (!ok && theirs >= 0)
			mismatches++;
		if (out)
			fprintf(out, "layout.CollectedHeap.%s: ours=%lld dwarf=%lld %s\n", checked[i], (long long)ours,
				(long long)theirs, ok ? "agree" : theirs < 0 ? "not in DWARF" : "MISMATCH");
	}
	if (out)
		fprintf(out, "layout.dwarf: %s (%d mismatches)\n", path, mismatches);
	if (mismatches)
		hp_mode_disable(p, HP_MODE_LAST_GC_FIELDS, -EBADMSG,
				"symbols/ layout disagrees with libjvm DWARF (%d members)", mismatches);
	return mismatches;
}
