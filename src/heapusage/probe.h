/* The probe object shared by the library's parts (not public). */
#ifndef HP_PROBE_H
#define HP_PROBE_H

#include <jvmti.h>

#include "heapprobe.h"
#include "heapusage/gckind.h"
#include "vmstructs/libjvm.h"
#include "vmstructs/symtab.h"
#include "vmstructs/vmflags.h"
#include "vmstructs/vmstructs.h"

#define HP_REASON_LEN 256

/* Test-only fault injection, from the HEAPPROBE_FAULTS environment variable
 * (comma-separated): proves each part fails alone with a reason. */
#define HP_FAULT_HIDE_LIBJVM     (1u << 0)   /* "hide-libjvm" */
#define HP_FAULT_HIDE_VMSTRUCTS  (1u << 1)   /* "hide-vmstructs" */
#define HP_FAULT_BAD_VMSTRUCTS   (1u << 2)   /* "corrupt-vmstructs": absurd stride */
#define HP_FAULT_STRIP_SYMTAB    (1u << 3)   /* "strip-symtab": ignore .symtab */
#define HP_FAULT_HIDE_FLAGS      (1u << 4)   /* "hide-flags" */
#define HP_FAULT_BAD_LIBJVM_FILE (1u << 5)   /* "unreadable-libjvm": open a non-ELF */

struct hp_probe {
	JavaVM *vm;
	jvmtiEnv *jvmti;
	unsigned faults;
	struct hp_open_opts opts;
	char debug_root[256];

	int status[HP_PART_COUNT];
	char reason[HP_PART_COUNT][HP_REASON_LEN];

	struct hp_libjvm jvm;
	struct hp_vms *vms;
	struct hp_symtab *syms;
	struct hp_vmflags flags;
	struct hp_heap_info heap;

	char vm_release[128];
	int feature;
};

unsigned hp_parse_faults(const char *spec);

#endif
