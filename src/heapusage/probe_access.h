/* What the agent asks of the probe beyond heapprobe.h (not public): the
 * few things its stack walker and its profiles need, behind functions, so
 * that struct hp_probe stays the heapusage floor's own (probe.h) and the
 * agent never reads its fields. */
#ifndef HP_PROBE_ACCESS_H
#define HP_PROBE_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapprobe.h"
#include "heapusage/gckind.h"

struct hp_probe;
struct hp_vms;
struct hp_symdata;
struct hp_libjvm;

/* Test-only fault injection, from the HEAPPROBE_FAULTS environment variable
 * (comma-separated): proves each part fails alone with a reason. */
#define HP_FAULT_HIDE_LIBJVM     (1u << 0)   /* "hide-libjvm" */
#define HP_FAULT_HIDE_VMSTRUCTS  (1u << 1)   /* "hide-vmstructs" */
#define HP_FAULT_BAD_VMSTRUCTS   (1u << 2)   /* "corrupt-vmstructs": absurd stride */
#define HP_FAULT_STRIP_SYMTAB    (1u << 3)   /* "strip-symtab": ignore .symtab */
#define HP_FAULT_HIDE_FLAGS      (1u << 4)   /* "hide-flags" */
#define HP_FAULT_BAD_LIBJVM_FILE (1u << 5)   /* "unreadable-libjvm": open a non-ELF */
#define HP_FAULT_CORRUPT_DATA    (1u << 6)   /* "corrupt-data": symbols/ data gets a bad line */
#define HP_FAULT_CORRUPT_FRAME   (1u << 7)   /* "corrupt-frame": the agent's frame decoder answers one
                                                bytecode index off (its checks against GetStackTrace
                                                must catch it and turn the fast path off) */
#define HP_FAULT_COUNTER_BACK    (1u << 8)   /* "counter-back": hp_marking's count of full collections
                                                reads 1000 high until the 8th collection (hp_gc_count),
                                                so it goes back then */
#define HP_FAULT_COUNTER_JUMP    (1u << 9)   /* "counter-jump": ... 1000 high from the 8th on, so it
                                                jumps then */
#define HP_FAULT_REQUEST_STALL   (1u << 10)  /* "request-stall": the first hp_request_marking sleeps
                                                25 s before it asks (a request that outlives the
                                                agent's mark_timeout=) */

/* Whether HEAPPROBE_FAULTS asked for `fault` (HP_FAULT_*). */
bool hp_probe_fault(const struct hp_probe *p, unsigned fault);

/* The JVM's VMStructs tables, or NULL (see hp_info). */
const struct hp_vms *hp_probe_vmstructs(const struct hp_probe *p);

/* symbols/ data for this release, or NULL. */
const struct hp_symdata *hp_probe_symdata(const struct hp_probe *p);

/* One line on the symbols/ data: which file and what it holds, or why
 * there is none. */
void hp_probe_describe_symdata(const struct hp_probe *p, char *out, size_t cap);

/* libjvm as loaded (its segments), for checking addresses. */
const struct hp_libjvm *hp_probe_libjvm(const struct hp_probe *p);

/* The address of the libjvm symbol symbols/ names under `key` (a static.*
 * entry), or 0: no entry, or the symbol is not in libjvm's symbol table
 * (or hidden by a fault). With n > 0, also 0 unless [address, address + n)
 * lies in a writable segment of libjvm (a static variable). */
uintptr_t hp_probe_static(struct hp_probe *p, const char *key, size_t n);

/* A boolean JVM flag: 0 and its value, or a negative errno. */
int hp_probe_flag_bool(const struct hp_probe *p, const char *name, bool *value);

/* Frees the symbol table's lookup index once set-up's lookups are done. */
void hp_probe_trim_symbols(struct hp_probe *p);

/* The heap, detected on first use once it exists; NULL before (or if it
 * cannot be read: see hp_info). Not from GC callbacks before the first
 * successful call. */
const struct hp_heap_info *hp_probe_heap(struct hp_probe *p);

/* The live java.cls.unloadedClasses counter (perfdata mode), or NULL. */
const volatile int64_t *hp_perfdata_classes_unloaded(struct hp_probe *p);

#endif
