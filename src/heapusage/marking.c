/* Markings: when the collector last found out which objects are alive.
 *
 * A sampled object whose weak reference is still set is not known to be
 * alive until a marking that began after it was allocated has finished:
 * until then a dead object's reference is simply not cleared yet (a young
 * collection never looks at the old generation; a concurrent cycle treats
 * what is allocated during it as live). So the live view needs to know
 * when markings happen, and sometimes to ask for one.
 *
 * Counted here, per collector, with plain loads (fit for GC callbacks):
 *  - stop-the-world full collections (Serial, Parallel, G1 full):
 *    CollectedHeap::_total_full_collections (symbols/ data, events.c);
 *  - G1 concurrent cycles: perfdata sun.gc.collector.2.invocations, which
 *    G1 bumps at the start of each Remark and each Cleanup pause ("G1
 *    stop-the-world phases" on 11, "G1 concurrent cycle pauses" on 17+:
 *    g1MonitoringSupport.cpp; g1VMOperations.cpp VM_G1PauseConcurrent), so
 *    a cycle is complete at each even value;
 *  - markings this probe requested and saw complete (hp_request_marking),
 *    where nothing above counts them (ZGC, Shenandoah: their perfdata
 *    counts pauses or phases, not cycles);
 *  - ZGC markings begun (`starts`): CollectedHeap::_total_full_collections,
 *    which ZGC bumps in the pause that starts a marking (VM_ZMarkStart on
 *    11-21 single-generation, VM_ZMarkStartYoungAndOld on generational:
 *    zDriver.cpp, zGeneration.cpp), not at a full collection.
 *
 * Requesting (hp_request_marking), per collector, as HotSpot implements
 * System.gc() (jvm.cpp JVM_GC, checked on 11/17/21/25):
 *  - ZGC (single and generational): a synchronous concurrent cycle (major
 *    on generational ZGC); the call returns when it has finished, weak
 *    roots processed (zDriver.cpp send_sync).
 *  - Shenandoah: ExplicitGCInvokesConcurrent defaults to true in its SATB
 *    and generational modes: a concurrent (global) cycle, the caller waits
 *    for it (shenandoahControlThread.cpp handle_requested_gc); in the
 *    generational mode it can return at that cycle's start instead, and
 *    the request waits for its end (wait_explicit_cycle).
 *  - G1: with ExplicitGCInvokesConcurrent set, a concurrent-start pause and
 *    a wait until _old_marking_cycles_completed moves (Remark, Cleanup
 *    done; g1CollectedHeap.cpp try_collect_concurrently, JDK 11
 *    vm_operations_g1.cpp). The flag is not manageable, so it is set for
 *    the duration of the call through its address in the flag table and
 *    put back after: a System.gc() another thread makes meanwhile is also
 *    concurrent, the only side effect.
 *  - Serial, Parallel (no concurrent marking): only with HP_MARK_ALLOW_FULL
 *    (or HP_MARK_FULL_UNLESS_DISABLED without -XX:+DisableExplicitGC), a
 *    full collection through JVMTI ForceGarbageCollection.
 * -XX:+DisableExplicitGC turns System.gc() off, and with it every
 * concurrent request (we do not lift the user's switch).
 */
#include "heapusage/marking.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapusage/gcthread.h"
#include "heapusage/layout.h"
#include "heapusage/perfdata.h"
#include "heapusage/probe.h"
#include "heapusage/probe_access.h"
#include "heapusage/zstat.h"
#include "vmstructs/clock.h"
#include "vmstructs/codefield.h"
#include "vmstructs/symdata.h"
#include "vmstructs/errmsg.h"
#include "vmstructs/safemem.h"

struct hp_marking_state {
	bool located;
	const volatile unsigned *full;          /* CollectedHeap::_total_full_collections */
	const volatile unsigned *starts;        /* the same, on ZGC: marking starts; G1: locate_g1_starts */
	char starts_source[200];                /* where starts is read, "" none */
	const volatile int64_t *g1_phases;      /* perfdata sun.gc.collector.2.invocations (G1) */
	bool shenandoah;                        /* explicit_cycle reads sun.gc.cause (GC callbacks too) */
	uint64_t requested;                     /* completed through hp_request_marking */
	uint64_t extra;                         /* of those, counted by nothing else */
	uint64_t request_ns;                    /* wall time of the last request */
	const volatile uint64_t *marked_live;   /* the collector's live bytes at mark end */
	const volatile uint64_t *young_live;    /* generational ZGC: the same, young and old (zstat.h) */
	const volatile uint64_t *old_live;
	uint64_t heap_bytes;                    /* bound for marked_live */
	char source[300];
	char live_source[200];
	/* The last marking seen complete (hp_marking_observe). Whoever moves
	 * seen_count by CAS owns the fields after it; a GC thread never waits. */
	uint64_t seen_count, seen_full;
	int last_kind;
	uint64_t last_seen_ns, last_gc_count, last_count;
	uint64_t gc_count_now;          /* collections at the last GC event */
	struct hp_cb_slot cb;           /* an hp_marking_callback (gcthread.h) */
	/* Generational Shenandoah: ShenandoahHeap::_gc_state's low byte and the
	 * symbols/ data's bit for each HP_PHASE_* (locate_shenandoah_phase). */
	const volatile uint8_t *sh_state;
	uint8_t sh_bits[7];
	char phase_source[240];
};

/* Fault injection (HEAPPROBE_FAULTS=hide-marking): no marking counter and
 * no request, so tests can show the agent's fallback. */
static bool hidden(struct hp_probe *p)
{
	for (int i = 0; i < HP_MAX_FAULT_NAMES; i++)
		if (strcmp(p->disabled_modes[i], "marking") == 0)
			return true;
	return false;
}

static struct hp_marking_state *state(struct hp_probe *p)
{
	if (!p->marking)
		p->marking = calloc(1, sizeof(*p->marking));
	return p->marking;
}

/* The bound a live figure must keep. ZGC leaves CollectedHeap::_reserved
 * empty: bound by MaxHeapSize. */
static void set_heap_bytes(struct hp_probe *p, struct hp_marking_state *m, const struct hp_heap_info *heap)
{
	size_t max_heap = 0;
	m->heap_bytes = heap->reserved_bytes;
	if (!m->heap_bytes && p->status[HP_PART_FLAGS] == 0 && hp_vmflags_size(&p->flags, "MaxHeapSize", &max_heap) == 0)
		m->heap_bytes = max_heap;
	if (!m->heap_bytes)
		m->heap_bytes = UINT64_MAX >> 1;
}

/* ZGC single-generation keeps the live bytes its marking found in a static
 * struct (zStat.hpp ZStatHeap::_at_mark_end, XStatHeap in JDK 21), set
 * when the relocation set is selected, right after mark end: symbols/
 * data names the symbol (symbol.z_at_mark_end) and the member's offset
 * (field.ZAtMarkEnd.live). Generational ZGC keeps one per generation in
 * ZGeneration objects (zstat.c): the figure is the old generation's, the
 * last major marking's (a requested one promotes everything first), and
 * the young one's is read apart. Shenandoah and G1 keep theirs only per
 * region: not read. */
static void locate_live(struct hp_probe *p, struct hp_marking_state *m, const struct hp_heap_info *heap)
{
	const char *sym_name = hp_symdata_getf(p->data, "symbol.z_at_mark_end");
	int64_t off;
	char how[160];
	if (heap->kind != HP_GC_Z) {
		snprintf(m->live_source, sizeof(m->live_source), "none: %s's marking keeps no live total "
			 "(G1, Shenandoah: per region); a full GC's used is live", hp_gc_kind_name(heap->kind));
		return;
	}
	if (heap->generational == 1) {
		char why[160];
		if (hp_zgen_live_locate(p, &m->young_live, &m->old_live, why, sizeof(why)) != 0) {
			snprintf(m->live_source, sizeof(m->live_source), "none: generational ZGC: %s", why);
			return;
		}
		set_heap_bytes(p, m, heap);
		snprintf(m->live_source, sizeof(m->live_source), "ZGeneration::old()->_stat_heap.live_at_mark_end() "
			 "(generational ZGC: live bytes of the last major marking; young(): of the last young one)");
		return;
	}
	if (!sym_name) {
		snprintf(m->live_source, sizeof(m->live_source), "none: no symbol.z_at_mark_end in the symbols/ data "
			 "for this release");
		return;
	}
	const struct hp_sym *s = hp_probe_sym(p, sym_name);
	if (!s || hp_layout_member(p, "ZAtMarkEnd", "live", &off, how, sizeof(how)) != 0) {
		snprintf(m->live_source, sizeof(m->live_source), "none: %s", s ? how : "symbol not in libjvm");
		return;
	}
	uint64_t v;
	const void *at = (const char *)(uintptr_t)s->addr + off;
	if (off < 0 || (s->size && (uint64_t)off + 8 > s->size) || !hp_libjvm_writable(&p->jvm, (uintptr_t)at, 8) ||
	    hp_safe_read_u64(&v, at) || (heap->reserved_bytes && v > heap->reserved_bytes)) {
		snprintf(m->live_source, sizeof(m->live_source), "none: %s+%lld fails validation", sym_name,
			 (long long)off);
		return;
	}
	m->marked_live = at;
	set_heap_bytes(p, m, heap);
	snprintf(m->live_source, sizeof(m->live_source), "%s+%lld (ZGC mark end: live bytes of the last cycle)",
		 sym_name, (long long)off);
}

/* G1's cycles begun: G1CollectedHeap::_old_marking_cycles_started, which
 * G1 bumps in a cycle's concurrent start pause (gc_prologue in 17+,
 * do_collection_pause_at_safepoint in 11; an undo cycle's too) and in each
 * full collection, before the pause's GarbageCollectionFinish. No VMStructs
 * table has it, and its offset moves with the release, so it is read from
 * the code of the method that increments it (symbols/ data names the
 * method: symbol.g1_marking_started; vmstructs/codefield.c), then checked:
 * inside the object VMStructs sizes, and beside _old_marking_cycles_completed
 * (the next member), which may trail it by at most the cycle under way and
 * a full collection inside it. */
static void locate_g1_starts(struct hp_probe *p, struct hp_marking_state *m, const struct hp_heap_info *heap)
{
	const char *name = hp_symdata_getf(p->data, "symbol.g1_marking_started");
	const struct hp_sym *s = name ? hp_probe_sym(p, name) : NULL;
	const struct hp_vms_type *t = p->vms ? hp_vms_type(p->vms, "G1CollectedHeap") : NULL;
	uint8_t code[32];
	size_t n = s && s->size && s->size < sizeof(code) ? s->size : sizeof(code);  /* the function's, at most */
	unsigned v[2];
	int64_t off = -1;
	char why[160] = "";
	if (!name) {
		snprintf(m->starts_source, sizeof(m->starts_source), "none: no symbol.g1_marking_started in the "
			 "symbols/ data for this release");
	} else if (!hp_probe_sym_is_text_function(p, s)) {
		snprintf(m->starts_source, sizeof(m->starts_source), "none: %s not in libjvm's text", name);
	} else if (hp_safe_read(code, (const void *)(uintptr_t)s->addr, n) != 0 ||
		   hp_codefield_inc(code, n, &off, why, sizeof(why)) != 0) {
		snprintf(m->starts_source, sizeof(m->starts_source), "none: %s's code not understood: %s", name,
			 why[0] ? why : "unreadable");
	} else if (!t || off < 8 || off % 4 || (uint64_t)off + 8 > t->size) {
		snprintf(m->starts_source, sizeof(m->starts_source), "none: offset %lld from %s's code is outside "
			 "G1CollectedHeap (%llu bytes)", (long long)off, name, t ? (unsigned long long)t->size : 0ULL);
	} else if (hp_safe_read(v, (const char *)heap->heap + off, sizeof(v)) != 0 || v[0] < v[1] || v[0] - v[1] > 2) {
		snprintf(m->starts_source, sizeof(m->starts_source), "none: G1CollectedHeap+%lld fails validation "
			 "(started %u, completed %u)", (long long)off, v[0], v[1]);
	} else {
		/* The text first: a GC callback that sees `starts` reads it. */
		snprintf(m->starts_source, sizeof(m->starts_source), "G1CollectedHeap::_old_marking_cycles_started "
			 "(+%lld, from the code of increment_old_marking_cycles_started): concurrent start pauses and "
			 "full collections", (long long)off);
		__atomic_store_n(&m->starts, (const volatile unsigned *)((const char *)heap->heap + off),
				 __ATOMIC_RELEASE);
	}
}

/* Generational Shenandoah's phase: ShenandoahHeap::_gc_state, whose bits
 * say which phases of a cycle are under way (symbols/ data: gcstate.*).
 * No VMStructs table has it and its offset moves with the release, so it
 * is read from the code of the two methods that update it, each of which
 * takes its address first (vmstructs/codefield.c, hp_codefield_lea), and
 * taken only where both give the same offset inside the object VMStructs
 * sizes and the byte there holds no bit the data does not name (the data
 * names bits 0-6: a weak check, bit 7 alone; the two setters agreeing and
 * test_load's count of cycles against the JVM's log are the strong ones).
 * 32 bits wide on 27: its low byte (little-endian) holds the same bits. */
static const char *const sh_bit_names[7] = { "MARKING", "YOUNG_MARKING", "OLD_MARKING", "WEAK_ROOTS", "EVACUATION",
					     "UPDATE_REFS", "HAS_FORWARDED" };       /* HP_PHASE_* bit k: 1 << k */

void hp_marking_phase_text(int phase, char *buf, size_t len)
{
	size_t n = 0;
	if (len)
		buf[0] = '\0';
	for (int k = 0; k < 7 && n < len; k++)
		if (phase & (1 << k))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "|" : "", sh_bit_names[k]);
	if (!n)
		snprintf(buf, len, "idle");
}

static void locate_shenandoah_phase(struct hp_probe *p, struct hp_marking_state *m, const struct hp_heap_info *heap)
{
	const char *names[2] = { hp_symdata_getf(p->data, "symbol.shenandoah_gc_state_concurrent"),
				 hp_symdata_getf(p->data, "symbol.shenandoah_gc_state_at_safepoint") };
	const struct hp_vms_type *t = p->vms ? hp_vms_type(p->vms, "ShenandoahHeap") : NULL;
	int64_t off[2] = { -1, -1 };
	unsigned known = 0;
	uint8_t bits[7];
	for (int k = 0; k < 7; k++) {
		const char *v = hp_symdata_getf(p->data, "gcstate.%s", sh_bit_names[k]);
		char *end = NULL;
		unsigned long b = v ? strtoul(v, &end, 0) : 0;
		if (!v || *end || !b || b > 0x80 || (b & (b - 1)) || (known & b)) {
			snprintf(m->phase_source, sizeof(m->phase_source), "none: %s gcstate.%s in the symbols/ data "
				 "for this release", v ? "a bad" : "no", sh_bit_names[k]);
			return;
		}
		bits[k] = (uint8_t)b;
		known |= (unsigned)b;
	}
	for (int k = 0; k < 2; k++) {
		const struct hp_sym *s = names[k] ? hp_probe_sym(p, names[k]) : NULL;
		uint8_t code[96];
		size_t n = s && s->size && s->size < sizeof(code) ? s->size : sizeof(code);
		char why[160] = "";
		if (!names[k]) {
			snprintf(m->phase_source, sizeof(m->phase_source), "none: no symbol.shenandoah_gc_state_* in the "
				 "symbols/ data for this release");
			return;
		}
		if (!hp_probe_sym_is_text_function(p, s)) {
			snprintf(m->phase_source, sizeof(m->phase_source), "none: %s not in libjvm's text", names[k]);
			return;
		}
		if (hp_safe_read(code, (const void *)(uintptr_t)s->addr, n) != 0 ||
		    hp_codefield_lea(code, n, &off[k], why, sizeof(why)) != 0) {
			snprintf(m->phase_source, sizeof(m->phase_source), "none: %s's code not understood: %s", names[k],
				 why[0] ? why : "unreadable");
			return;
		}
	}
	uint8_t v;
	if (off[0] != off[1]) {
		snprintf(m->phase_source, sizeof(m->phase_source), "none: the two setters of _gc_state name "
			 "different offsets (%lld, %lld)", (long long)off[0], (long long)off[1]);
	} else if (!t || off[0] < 8 || (uint64_t)off[0] + 1 > t->size) {
		snprintf(m->phase_source, sizeof(m->phase_source), "none: offset %lld from the setters' code is "
			 "outside ShenandoahHeap (%llu bytes)", (long long)off[0], t ? (unsigned long long)t->size : 0ULL);
	} else if (hp_safe_read(&v, (const char *)heap->heap + off[0], 1) != 0 || (v & ~known)) {
		snprintf(m->phase_source, sizeof(m->phase_source), "none: ShenandoahHeap+%lld fails validation "
			 "(0x%02x has bits the data does not name)", (long long)off[0], v);
	} else {
		memcpy(m->sh_bits, bits, sizeof(bits));
		snprintf(m->phase_source, sizeof(m->phase_source), "ShenandoahHeap::_gc_state (+%lld, from the code "
			 "of set_gc_state_concurrent and set_gc_state_at_safepoint; bits from the symbols/ data)",
			 (long long)off[0]);
		__atomic_store_n(&m->sh_state, (const volatile uint8_t *)((const char *)heap->heap + off[0]),
				 __ATOMIC_RELEASE);
	}
}

/* hp_marking's phase: one byte load, the bits mapped. */
static int shenandoah_phase(const struct hp_marking_state *m)
{
	const volatile uint8_t *at = __atomic_load_n(&m->sh_state, __ATOMIC_ACQUIRE);
	if (!at)
		return -1;
	uint8_t v = *at;
	int out = 0;
	for (int k = 0; k < 7; k++)
		if (v & m->sh_bits[k])
			out |= 1 << k;
	return out;
}

void hp_marking_locate(struct hp_probe *p)
{
	struct hp_marking_state *m = state(p);
	const struct hp_heap_info *heap = m ? hp_probe_heap(p) : NULL;
	if (!m || !heap || (m->located && (m->g1_phases || heap->kind != HP_GC_G1)))
		return;
	if (hidden(p)) {
		m->located = true;
		snprintf(m->source, sizeof(m->source), "hidden (HEAPPROBE_FAULTS=disable-mode=marking)");
		snprintf(m->phase_source, sizeof(m->phase_source), "hidden (HEAPPROBE_FAULTS=disable-mode=marking)");
		return;
	}
	int64_t off;
	char how[160];
	if (!m->full && !m->starts &&
	    (heap->kind == HP_GC_SERIAL || heap->kind == HP_GC_PARALLEL || heap->kind == HP_GC_G1 || heap->kind == HP_GC_Z) &&
	    hp_layout_member(p, "CollectedHeap", "_total_full_collections", &off, how, sizeof(how)) == 0) {
		unsigned v;
		const void *at = (const char *)heap->heap + off;
		/* ZGC counts a marking's start there, not a full collection. */
		if (hp_safe_read(&v, at, sizeof(v)) == 0) {
			if (heap->kind == HP_GC_Z) {
				snprintf(m->starts_source, sizeof(m->starts_source), "CollectedHeap::_total_full_collections "
					 "(ZGC: Mark Start pauses)");
				__atomic_store_n(&m->starts, (const volatile unsigned *)at, __ATOMIC_RELEASE);
			} else
				__atomic_store_n(&m->full, (const volatile unsigned *)at, __ATOMIC_RELEASE);
		}
	}
	if (heap->kind == HP_GC_G1) {
		__atomic_store_n(&m->g1_phases, hp_perfdata_invocations(p, 2), __ATOMIC_RELEASE);
		/* Without `full` a full collection would look like a start. */
		if (!m->starts && !m->starts_source[0] && m->full)
			locate_g1_starts(p, m, heap);
		else if (!m->full && !m->starts_source[0])
			snprintf(m->starts_source, sizeof(m->starts_source), "none: _total_full_collections "
				 "unreadable (a full collection would look like a cycle's start)");
	}
	m->shenandoah = heap->kind == HP_GC_SHENANDOAH;
	if (!m->located && m->shenandoah && heap->generational == 1)
		locate_shenandoah_phase(p, m, heap);
	else if (!m->located)
		snprintf(m->phase_source, sizeof(m->phase_source), "none: %s", m->shenandoah
			 ? "single-generation Shenandoah (its cycles are seen by canary objects)"
			 : "not generational Shenandoah");
	if (!m->located)
		locate_live(p, m, heap);
	m->located = true;
	switch (heap->kind) {
	case HP_GC_SERIAL:
	case HP_GC_PARALLEL:
		snprintf(m->source, sizeof(m->source), "%s", m->full ? "full collections (_total_full_collections)"
			 : "none: _total_full_collections unreadable");
		break;
	case HP_GC_G1:
		snprintf(m->source, sizeof(m->source), "full collections (%s) + concurrent cycles (%s)",
			 m->full ? "_total_full_collections" : "unreadable",
			 m->g1_phases ? "perfdata sun.gc.collector.2.invocations / 2"
				      : "perfdata unavailable: only requested ones");
		break;
	case HP_GC_Z:
	case HP_GC_SHENANDOAH:
		snprintf(m->source, sizeof(m->source), "no counter of the collector's own cycles (its perfdata counts "
			 "pauses): concurrent cycles this probe requested, and those the profiler finds by other means "
			 "(see its canaries)%s", m->starts ? "; their start: the Mark Start pause (_total_full_collections)" : "");
		break;
	default:
		snprintf(m->source, sizeof(m->source), "none: %s has no marking", hp_gc_kind_name(heap->kind));
	}
}

const char *hp_marking_starts_source(struct hp_probe *p)
{
	return p && p->marking ? p->marking->starts_source : NULL;
}

/* One of the collector's live figures, if set and within the heap: 0 when
 * no cycle has set it yet, above the heap when torn by a race. */
static int read_live(const struct hp_marking_state *m, const volatile uint64_t *at, uint64_t *out)
{
	if (!m || !at)
		return -ENODATA;
	uint64_t v = *at;
	if (v == 0 || v > m->heap_bytes)
		return -ENODATA;
	*out = v;
	return 0;
}

int hp_marking_live(struct hp_probe *p, uint64_t *out)
{
	const struct hp_marking_state *m = p ? p->marking : NULL;
	/* Generational: the old generation's, the last major marking's (a
	 * requested one promotes everything first: the heap's). */
	return read_live(m, m && m->old_live ? m->old_live : m ? m->marked_live : NULL, out);
}

int hp_marking_heap_live(struct hp_probe *p, uint64_t *out)
{
	uint64_t old, young;
	int rc = hp_marking_live(p, &old);
	if (rc != 0)
		return rc;
	*out = old + (hp_marking_young_live(p, &young) == 0 ? young : 0);
	const struct hp_marking_state *m = p->marking;
	if (m && m->heap_bytes && *out > m->heap_bytes)
		*out = m->heap_bytes;   /* two moments added: never above the heap */
	return 0;
}

int hp_marking_young_live(struct hp_probe *p, uint64_t *out)
{
	const struct hp_marking_state *m = p ? p->marking : NULL;
	return read_live(m, m ? m->young_live : NULL, out);
}

static const char explicit_cause[] = "System.gc()";     /* GCCause::_java_lang_system_gc */

/* hp_marking's explicit_cycle: plain loads (a GC callback reads it), on
 * the collector hp_marking_locate found. */
static int explicit_cycle(struct hp_probe *p, const struct hp_marking_state *m)
{
	char cause[64];
	if (!m->shenandoah || hp_perfdata_gc_cause(p, cause, sizeof(cause)) != 0)
		return -1;
	return strcmp(cause, explicit_cause) == 0;
}

int hp_marking(struct hp_probe *p, struct hp_marking *out)
{
	if (!p || !out || out->sz < offsetof(struct hp_marking, source) + sizeof(out->source))
		return -EINVAL;
	size_t sz = out->sz;
	memset(out, 0, sz);
	out->sz = sz;
	struct hp_marking_state *m = p->marking;
	if (!m || !m->located) {
		out->source = "not set up yet (call once outside a GC callback)";
		return -EAGAIN;
	}
	out->source = m->source;
	/* Each pointer loaded once: the agent thread may set one meanwhile
	 * (hp_marking_locate), and a count and its `read` bit must agree. */
	const volatile unsigned *full = __atomic_load_n(&m->full, __ATOMIC_ACQUIRE);
	const volatile int64_t *g1_phases = __atomic_load_n(&m->g1_phases, __ATOMIC_ACQUIRE);
	if (full)
		out->full = *full;
	/* Test-only (HEAPPROBE_FAULTS): a counter gone wrong, for the agent's
	 * guard (agent/marks.h). Plain loads, fit for GC callbacks. */
	if (hp_probe_fault(p, HP_FAULT_COUNTER_BACK | HP_FAULT_COUNTER_JUMP)) {
		bool late = hp_gc_count(p) >= 8;
		if (hp_probe_fault(p, late ? HP_FAULT_COUNTER_JUMP : HP_FAULT_COUNTER_BACK))
			out->full += 1000;
	}
	uint64_t marked = 0;
	if (g1_phases) {
		int64_t v = *g1_phases;
		out->concurrent = v > 0 ? (uint64_t)v / 2 : 0;
		marked = v > 0 ? ((uint64_t)v + 1) / 2 : 0;    /* Remark, then Cleanup */
	}
	uint64_t extra = __atomic_load_n(&m->extra, __ATOMIC_ACQUIRE);
	out->requested = __atomic_load_n(&m->requested, __ATOMIC_ACQUIRE);
	out->count = out->full + out->concurrent + extra;
	/* Fields a caller built against an older header does not have. */
	if (sz >= offsetof(struct hp_marking, live_source) + sizeof(out->live_source)) {
		out->live_source = m->live_source[0] ? m->live_source : "none";
		hp_marking_live(p, &out->live);
	}
	if (sz >= offsetof(struct hp_marking, last_count) + sizeof(out->last_count)) {
		out->last_kind = (enum hp_marking_kind)__atomic_load_n(&m->last_kind, __ATOMIC_ACQUIRE);
		out->last_scope = HP_MARKING_WHOLE_HEAP;
		out->last_seen_ns = __atomic_load_n(&m->last_seen_ns, __ATOMIC_ACQUIRE);
		out->last_gc_count = __atomic_load_n(&m->last_gc_count, __ATOMIC_ACQUIRE);
		out->last_count = __atomic_load_n(&m->last_count, __ATOMIC_ACQUIRE);
	}
	const volatile unsigned *starts = __atomic_load_n(&m->starts, __ATOMIC_ACQUIRE);
	if (sz >= offsetof(struct hp_marking, starts) + sizeof(out->starts) && starts)
		out->starts = *starts;
	if (sz >= offsetof(struct hp_marking, marked) + sizeof(out->marked))
		out->marked = marked;
	if (sz >= offsetof(struct hp_marking, explicit_cycle) + sizeof(out->explicit_cycle))
		out->explicit_cycle = explicit_cycle(p, m);
	if (sz >= offsetof(struct hp_marking, starts_source) + sizeof(out->starts_source))
		out->starts_source = starts ? m->starts_source : NULL;
	if (sz >= offsetof(struct hp_marking, read) + sizeof(out->read))
		out->read = (full ? HP_MARKING_READ_FULL : 0) | (g1_phases ? HP_MARKING_READ_CONCURRENT : 0) |
			    (starts ? HP_MARKING_READ_STARTS : 0);
	if (sz >= offsetof(struct hp_marking, phase_source) + sizeof(out->phase_source)) {
		out->phase = shenandoah_phase(m);
		out->phase_source = m->phase_source[0] ? m->phase_source : "none";
	}
	return 0;
}

const char *hp_marking_kind_name(enum hp_marking_kind kind)
{
	switch (kind) {
	case HP_MARKING_FULL: return "full";
	case HP_MARKING_CONCURRENT: return "concurrent";
	case HP_MARKING_REQUESTED: return "requested";
	case HP_MARKING_NONE: break;
	}
	return "none";
}

void hp_marking_observe(struct hp_probe *p, uint64_t gc_count, bool requested)
{
	struct hp_marking_state *m = p ? p->marking : NULL;
	if (!m || !__atomic_load_n(&m->located, __ATOMIC_ACQUIRE))
		return;
	/* The GC events pass the collection count at every pause; a request
	 * (0) takes the last one they passed. */
	if (gc_count)
		__atomic_store_n(&m->gc_count_now, gc_count, __ATOMIC_RELEASE);
	else
		gc_count = __atomic_load_n(&m->gc_count_now, __ATOMIC_ACQUIRE);
	struct hp_marking now = { .sz = sizeof(now) };
	if (hp_marking(p, &now))
		return;
	uint64_t old = __atomic_load_n(&m->seen_count, __ATOMIC_ACQUIRE);
	if (now.count <= old ||
	    !__atomic_compare_exchange_n(&m->seen_count, &old, now.count, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;         /* nothing new, or another thread reports it */
	uint64_t full_before = __atomic_exchange_n(&m->seen_full, now.full, __ATOMIC_ACQ_REL);
	int kind = now.full > full_before ? HP_MARKING_FULL : requested ? HP_MARKING_REQUESTED : HP_MARKING_CONCURRENT;
	__atomic_store_n(&m->last_kind, kind, __ATOMIC_RELEASE);
	__atomic_store_n(&m->last_seen_ns, hp_now_ns(), __ATOMIC_RELEASE);
	__atomic_store_n(&m->last_gc_count, gc_count, __ATOMIC_RELEASE);
	__atomic_store_n(&m->last_count, now.count, __ATOMIC_RELEASE);
	const struct hp_cb_pair *pair = hp_cb_slot_begin(&m->cb);
	if (pair) {
		hp_marking(p, &now);
		((hp_marking_callback)pair->fn)(&now, pair->ctx);
	}
	hp_cb_slot_end(&m->cb);
}

int hp_set_marking_callback(struct hp_probe *p, hp_marking_callback cb, void *ctx)
{
	if (!p)
		return -EINVAL;
	if (!p->capture)
		return -ENOTSUP;
	struct hp_marking_state *m = state(p);
	if (!m)
		return -ENOMEM;
	hp_marking_locate(p);
	if (!m->seen_count) {
		/* Markings before the callback was set are not reported. */
		struct hp_marking now = { .sz = sizeof(now) };
		if (hp_marking(p, &now) == 0) {
			__atomic_store_n(&m->seen_count, now.count, __ATOMIC_RELEASE);
			__atomic_store_n(&m->seen_full, now.full, __ATOMIC_RELEASE);
		}
	}
	return hp_cb_slot_set(&m->cb, (void (*)(void))cb, ctx);
}


/* The flag's bool, if its address is a plausible one: inside libjvm's
 * writable data (the flag globals; default-false ones are in .bss) and
 * holding 0 or 1. */
static volatile bool *flag_at(struct hp_probe *p, const char *name)
{
	if (p->status[HP_PART_FLAGS])
		return NULL;
	const void *a = hp_vmflags_addr(&p->flags, name);
	if (!a || !hp_libjvm_writable(&p->jvm, (uintptr_t)a, 1))
		return NULL;
	unsigned char v;
	if (hp_safe_read(&v, a, 1) || v > 1)
		return NULL;
	return (volatile bool *)a;
}

static int call_system_gc(JNIEnv *jni, char *why, size_t len)
{
	jclass sys = (*jni)->FindClass(jni, "java/lang/System");
	jmethodID gc = sys ? (*jni)->GetStaticMethodID(jni, sys, "gc", "()V") : NULL;
	if (!gc) {
		if ((*jni)->ExceptionCheck(jni))
			(*jni)->ExceptionClear(jni);
		return hp_fail(why, len, -ENOENT, "java.lang.System.gc not found");
	}
	(*jni)->CallStaticVoidMethod(jni, sys, gc);
	bool threw = (*jni)->ExceptionCheck(jni);
	if (threw)
		(*jni)->ExceptionClear(jni);
	(*jni)->DeleteLocalRef(jni, sys);
	return threw ? hp_fail(why, len, -EIO, "System.gc() threw") : 0;
}

/* Generational Shenandoah's System.gc() can return at the start of the
 * global cycle it asked for instead of at its end. The caller waits until
 * the control thread's cycle id has moved past the one under way at the
 * request (shenandoahGenerationalControlThread.cpp handle_requested_gc),
 * and it is woken at the end of every cycle, not only the one it asked
 * for; the id moves when a cycle starts. So when a young cycle was under
 * way, the caller wakes at its end, and if the control thread has already
 * started the global cycle for the request by then, the id has moved and
 * the call returns with the old generation unmarked: the samples of its
 * dead objects still referenced and counted as verified. Seen in 2 of 8
 * requests under LoadService (JDK 25, -Xlog:gc: the call returned at the
 * millisecond the "Trigger (Global): GC request" line was logged).
 *
 * Shenandoah names the cause of a whole cycle in perfdata sun.gc.cause
 * (ShenandoahGCSession), and only an explicit request runs a cycle whose
 * cause is "System.gc()"; so while it reads so, the asked-for cycle is still
 * under way: wait for it. Two readings in a row, 2 ms apart, must say
 * otherwise (the VM rewrites the string in place). *waited: 1 if it read
 * so at least once, 0 if not, -1 without the counter (-XX:-UsePerfData:
 * nothing can be checked). */
static int wait_explicit_cycle(struct hp_probe *p, int *waited, char *why, size_t len)
{
	char cause[64];
	*waited = -1;
	if (hp_perfdata_gc_cause(p, cause, sizeof(cause)) != 0)
		return 0;
	*waited = 0;
	int64_t t0 = hp_mono_ns();
	const int64_t limit_ns = 60 * (int64_t)1000000000;
	for (int clear = 0;;) {
		clear = strcmp(cause, explicit_cause) == 0 ? 0 : clear + 1;
		if (clear == 0)
			*waited = 1;
		if (clear == 2)
			return 0;
		if (hp_mono_ns() - t0 > limit_ns)
			return hp_fail(why, len, -ETIMEDOUT, "generational Shenandoah: the requested global cycle "
				       "had not ended %d s after System.gc() returned", (int)(limit_ns / 1000000000));
		struct timespec ts = { 0, 2 * 1000000 };
		nanosleep(&ts, NULL);
		hp_perfdata_gc_cause(p, cause, sizeof(cause));
	}
}

static int request_marking(struct hp_probe *p, unsigned flags, char *why, size_t len);

/* One request at a time per process: two threads flipping G1's flag could
 * leave it unset under the other's System.gc(), which would then be a full
 * collection. A blocking lock is fine here (never a GC callback). */
int hp_request_marking(struct hp_probe *p, unsigned flags, char *why, size_t len)
{
	static pthread_mutex_t one_at_a_time = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&one_at_a_time);
	int rc = request_marking(p, flags, why, len);
	pthread_mutex_unlock(&one_at_a_time);
	return rc;
}

static int request_marking(struct hp_probe *p, unsigned flags, char *why, size_t len)
{
	if (why && len)
		why[0] = '\0';
	if (!p)
		return -EINVAL;
	JNIEnv *jni = hp_jni_env(p->vm);
	if (!jni)
		return hp_fail(why, len, -EPERM, "not on a thread attached to the VM (or inside a GC callback)");
	hp_marking_locate(p);
	struct hp_marking_state *m = p->marking;
	const struct hp_heap_info *heap = hp_probe_heap(p);
	if (!m || !heap)
		return hp_fail(why, len, -ENODATA, "the heap is not known: %s", p->reason[HP_PART_HEAP]);
	if (hidden(p))
		return hp_fail(why, len, -ENOTSUP, "marking requests hidden (HEAPPROBE_FAULTS)");
	/* HEAPPROBE_FAULTS=request-stall: the first request stalls (the
	 * agent's mark_timeout= gives up on it, then sees it return). */
	static _Atomic bool stalled;
	if (hp_probe_fault(p, HP_FAULT_REQUEST_STALL) && !atomic_exchange(&stalled, true)) {
		struct timespec ts = { 25, 0 };
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	}
	if (heap->kind != HP_GC_G1 && heap->kind != HP_GC_Z && heap->kind != HP_GC_SHENANDOAH &&
	    heap->kind != HP_GC_SERIAL && heap->kind != HP_GC_PARALLEL)
		return hp_fail(why, len, -ENOTSUP, "%s: no marking to ask for", hp_gc_kind_name(heap->kind));
	struct hp_marking before = { .sz = sizeof(before) }, after = { .sz = sizeof(after) };
	hp_marking(p, &before);
	bool concurrent = heap->kind == HP_GC_G1 || heap->kind == HP_GC_Z || heap->kind == HP_GC_SHENANDOAH;
	volatile bool *disable = flag_at(p, "DisableExplicitGC");
	volatile bool *explicit_conc = flag_at(p, "ExplicitGCInvokesConcurrent");
	if (concurrent && !disable)
		return hp_fail(why, len, -ENOENT, "flag DisableExplicitGC not readable in the flag table");
	if (concurrent && *disable)
		concurrent = false;
	if (concurrent && heap->kind != HP_GC_Z && !explicit_conc)
		return hp_fail(why, len, -ENOENT, "flag ExplicitGCInvokesConcurrent not readable in the flag table");
	if (concurrent && heap->kind == HP_GC_SHENANDOAH && !*explicit_conc)
		concurrent = false;     /* passive mode: System.gc() would be a full collection */
	int rc;
	if (concurrent) {
		bool was = heap->kind == HP_GC_G1 ? *explicit_conc : true;
		if (heap->kind == HP_GC_G1 && !was)
			__atomic_store_n(explicit_conc, true, __ATOMIC_SEQ_CST);
		rc = call_system_gc(jni, why, len);
		if (heap->kind == HP_GC_G1 && !was)
			__atomic_store_n(explicit_conc, false, __ATOMIC_SEQ_CST);
	} else if ((flags & HP_MARK_ALLOW_FULL) || ((flags & HP_MARK_FULL_UNLESS_DISABLED) && !(disable && *disable))) {
		jvmtiError e = p->jvmti ? (*p->jvmti)->ForceGarbageCollection(p->jvmti) : JVMTI_ERROR_NOT_AVAILABLE;
		rc = e == JVMTI_ERROR_NONE ? 0 : hp_fail(why, len, -EIO, "JVMTI ForceGarbageCollection failed (%d)", e);
	} else if (disable && *disable && (flags & HP_MARK_FULL_UNLESS_DISABLED) &&
		   (heap->kind == HP_GC_SERIAL || heap->kind == HP_GC_PARALLEL)) {
		return hp_fail(why, len, -EPERM, "%s has no concurrent marking, and -XX:+DisableExplicitGC: no full "
			    "collection asked for (mark=full asks anyway)", hp_gc_kind_name(heap->kind));
	} else if (disable && *disable && heap->kind != HP_GC_SERIAL && heap->kind != HP_GC_PARALLEL) {
		return hp_fail(why, len, -EPERM, "-XX:+DisableExplicitGC: no concurrent marking can be requested");
	} else if (heap->kind == HP_GC_SHENANDOAH) {
		return hp_fail(why, len, -ENOTSUP, "Shenandoah with -XX:-ExplicitGCInvokesConcurrent: a request "
			    "would be a full collection");
	} else {
		return hp_fail(why, len, -ENOTSUP, "%s has no concurrent marking; a full collection only when "
			    "allowed (mark=auto, the default, unless -XX:+DisableExplicitGC; mark=full)", hp_gc_kind_name(heap->kind));
	}
	int waited = 0;
	if (!rc && concurrent && heap->kind == HP_GC_SHENANDOAH && heap->generational == 1)
		rc = wait_explicit_cycle(p, &waited, why, len);
	if (rc)
		return rc;
	hp_marking(p, &after);
	__atomic_add_fetch(&m->requested, 1, __ATOMIC_RELEASE);
	bool uncounted = after.count == before.count;
	if (uncounted)
		__atomic_add_fetch(&m->extra, 1, __ATOMIC_RELEASE);     /* nothing else counted it */
	/* A marking the GC events did not report yet (no counter, or the
	 * counter moved without a pause after it): reported from here. */
	hp_marking_observe(p, 0, uncounted);
	if (why && len)
		snprintf(why, len, "%s%s", concurrent ? "concurrent cycle" : "full collection",
			 waited > 0 ? " (returned at its start: waited for its end)" :
			 waited < 0 ? " (no sun.gc.cause: its end not checked)" : "");
	return 0;
}

void hp_marking_free(struct hp_probe *p)
{
	if (p->marking)
		hp_cb_slot_set(&p->marking->cb, NULL, NULL);
	free(p->marking);
	p->marking = NULL;
}
