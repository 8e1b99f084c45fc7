/* Mode "perfdata": heap used/committed/max from the in-process jvmstat
 * counters (see perfdata.h for the region's format).
 *
 * Needs only VMStructs (PerfMemory::_start & co): no libjvm symbols, no JNI.
 * init() copies the part of the region in use with one safe read, checks it,
 * and keeps pointers to the handful of counters it needs; read() is a dozen
 * plain loads, fit for GarbageCollectionFinish.
 *
 * What each collector publishes (JDK 11, 17, 21, 25; checked with
 * jcmd PerfCounter.print and against the sources):
 *   Serial, Parallel (and CMS, JDK 11): generation.0 = eden, s0, s1;
 *       generation.1 = one old space. Space "used" counters are set at the
 *       end of every collection and, until JDK 24, also sampled by the
 *       StatSampler every PerfDataSamplingInterval (50 ms); JDK 25 dropped
 *       that sampling (JDK-8241678), so there "used" is the post-GC figure
 *       until the next collection.
 *   G1: generation.0 = eden, s0 (never used), s1 (the survivors);
 *       generation.1 = old. Refreshed only at the end of each pause and when a
 *       mutator allocation region is retired (G1MonitoringSupport::
 *       update_eden_size): between those points "used" lags by up to the
 *       regions being allocated into. The same figures back G1's
 *       MemoryMXBean, so JMX lags identically. Up to JDK 17 every capacity
 *       counter is padded by MinObjAlignmentInBytes (pad_capacity(), so that
 *       jstat never divides by zero); s0's capacity is exactly one pad.
 *   ZGC: single-generation (JDK 11-21) publishes generation.1 only; the
 *       generational one (JDK 21 -XX:+ZGenerational, 25) young and old, one
 *       space each. Refreshed only at the end of each GC pause
 *       (ZServiceabilityPauseTracer): between cycles "used" can be far behind,
 *       and before the first pause the counters are placeholders (capacity =
 *       the minimum heap size): read() then says -ENODATA, judging by
 *       sun.gc.collector.*.invocations (absent on JDK 11).
 *   Shenandoah: generation.0 is an empty placeholder (0 spaces); generation.1
 *       "Heap" has the committed size as its capacity, while its one space's
 *       capacity is the maximum. Refreshed by a 100 ms periodic task after an
 *       allocation opened a new region, and at the end of each cycle (so for
 *       up to 100 ms after a cycle, "used" can still be the pre-GC figure).
 *   Epsilon: generation.1 with one space, refreshed every
 *       EpsilonUpdateCountersStep (1 MiB) of allocation and on System.gc().
 * So a reading is "current" in the jvmstat sense: as fresh as the
 * collector's last update, which a GarbageCollectionFinish callback of a
 * stop-the-world collector follows (the counters are set before the event).
 */
#include "heapusage/perfdata.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmstructs/errmsg.h"

#include "heapusage/probe.h"
#include "vmstructs/safemem.h"

_Static_assert(sizeof(struct hp_pd_prologue) == 32, "PerfDataPrologue is 32 bytes");
_Static_assert(offsetof(struct hp_pd_prologue, used) == 8, "PerfDataPrologue.used");
_Static_assert(offsetof(struct hp_pd_prologue, mod_time_stamp) == 16, "PerfDataPrologue.mod_time_stamp");
_Static_assert(offsetof(struct hp_pd_prologue, entry_offset) == 24, "PerfDataPrologue.entry_offset");
_Static_assert(sizeof(struct hp_pd_entry) == 20, "PerfDataEntry is 20 bytes");
_Static_assert(offsetof(struct hp_pd_entry, data_type) == 12, "PerfDataEntry.data_type");
_Static_assert(offsetof(struct hp_pd_entry, data_offset) == 16, "PerfDataEntry.data_offset");

/* "123" at *s -> value, advances *s; -1 if no digits or absurd. */
static long parse_index(const char **s)
{
	long v = 0;
	const char *c = *s;
	if (*c < '0' || *c > '9')
		return -1;
	while (*c >= '0' && *c <= '9') {
		v = v * 10 + (*c++ - '0');
		if (v > 1000)
			return -1;
	}
	*s = c;
	return v;
}

enum counter_field { F_NONE, F_CAPACITY, F_MAX_CAPACITY, F_SPACES, F_USED, F_INVOCATIONS, F_DESIRED_SURVIVOR };

/* Recognises sun.gc.generation.<N>.{capacity,maxCapacity,spaces},
 * sun.gc.generation.<N>.space.<M>.{used,capacity,maxCapacity} (*space is -1
 * for generation counters), sun.gc.collector.<N>.invocations (*gen is the
 * collector) and sun.gc.policy.desiredSurvivorSize. F_NONE for any other
 * name, including generations and spaces beyond what we track (JDK 8's
 * permanent generation) and the metaspace / class space counters. */
static enum counter_field classify(const char *name, long *gen, long *space)
{
	static const char prefix[] = "sun.gc.generation.";
	static const char collector[] = "sun.gc.collector.";
	const char *s;
	*gen = *space = -1;
	if (strcmp(name, "sun.gc.policy.desiredSurvivorSize") == 0)
		return F_DESIRED_SURVIVOR;
	if (strncmp(name, collector, sizeof(collector) - 1) == 0) {
		/* sun.gc.collector.<N>.invocations: *gen is the collector */
		s = name + sizeof(collector) - 1;
		*gen = parse_index(&s);
		return *gen >= 0 && *gen < HP_PD_COLLECTORS && strcmp(s, ".invocations") == 0 ? F_INVOCATIONS : F_NONE;
	}
	if (strncmp(name, prefix, sizeof(prefix) - 1) != 0)
		return F_NONE;
	s = name + sizeof(prefix) - 1;
	*gen = parse_index(&s);
	*space = -1;
	if (*gen < 0 || *gen >= HP_PD_GENS || *s++ != '.')
		return F_NONE;
	if (strncmp(s, "space.", 6) == 0) {
		s += 6;
		*space = parse_index(&s);
		if (*space < 0 || *space >= HP_PD_MAX_SPACES || *s++ != '.')
			return F_NONE;
		if (strcmp(s, "used") == 0)
			return F_USED;
	} else if (strcmp(s, "spaces") == 0) {
		return F_SPACES;
	}
	if (strcmp(s, "capacity") == 0)
		return F_CAPACITY;
	if (strcmp(s, "maxCapacity") == 0)
		return F_MAX_CAPACITY;
	return F_NONE;
}

/* Where a counter's pointer goes, NULL for fields that do not exist there
 * (a space has no "spaces", a generation no "used"). */
static const volatile int64_t **slot(struct hp_pd_gen *g, long space, enum counter_field f)
{
	if (space >= 0) {
		struct hp_pd_space *sp = &g->space[space];
		return f == F_USED ? &sp->used : f == F_CAPACITY ? &sp->capacity :
		       f == F_MAX_CAPACITY ? &sp->max_capacity : NULL;
	}
	return f == F_CAPACITY ? &g->capacity : f == F_MAX_CAPACITY ? &g->max_capacity : NULL;
}

/* The heap counters among the entries (hp_perfdata_each), as pointers
 * into the live region. */
struct walk {
	const char *snap, *live;
	struct hp_perfdata_counters *out;
	const void **spaces_at;
	char *err;
	size_t errlen;
};

static int walk_one(const char *name, char type, int32_t veclen, size_t at, void *vctx)
{
	struct walk *w = vctx;
	struct hp_perfdata_counters *out = w->out;
	char *err = w->err;
	size_t errlen = w->errlen;
	if (strcmp(name, "sun.gc.lastCause") == 0 && type == 'B' && veclen >= 6 && !out->last_cause) {
		/* optional, and only ever compared with "No GC" */
		out->last_cause = w->live + at;
	}
	if (strcmp(name, "sun.gc.cause") == 0 && type == 'B' && veclen >= 6 && !out->cause) {
		out->cause = w->live + at;
		out->cause_len = veclen;
	}
	if (strcmp(name, "java.cls.unloadedClasses") == 0 && type == 'J' && veclen == 0 && at % 8 == 0 &&
	    !out->classes_unloaded)
		out->classes_unloaded = (const volatile int64_t *)(w->live + at);
	long gen, space;
	enum counter_field f = classify(name, &gen, &space);
	if (f == F_NONE)
		return 0;
	/* Ours to load from a GC callback: must be an aligned scalar jlong. */
	if (type != 'J' || veclen != 0 || at % 8 != 0)
		return hp_fail(err, errlen, -EBADMSG, "%s: type '%c', vector length %d, offset %zu: not an aligned jlong",
			       name, hp_pd_printable(type), veclen, at);
	const char *value = w->live + at;
	if (f == F_INVOCATIONS || f == F_DESIRED_SURVIVOR) {
		const volatile int64_t **p = f == F_INVOCATIONS ? &out->invocations[gen] : &out->desired_survivor;
		if (*p)
			return hp_fail(err, errlen, -EBADMSG, "%s appears twice", name);
		*p = (const volatile int64_t *)value;
		return 0;
	}
	struct hp_pd_gen *g = &out->gen[gen];
	if (f == F_SPACES) {
		if (w->spaces_at[gen])
			return hp_fail(err, errlen, -EBADMSG, "%s appears twice", name);
		/* A constant: read its value from the snapshot. */
		memcpy(&g->spaces, w->snap + at, sizeof(g->spaces));
		w->spaces_at[gen] = value;
		return 0;
	}
	const volatile int64_t **p = slot(g, space, f);
	if (p) {
		if (*p)
			return hp_fail(err, errlen, -EBADMSG, "%s appears twice", name);
		*p = (const volatile int64_t *)value;
	}
	return 0;
}

/* Checks the entries of `snap` (a copy of the region's first `used` bytes)
 * and records the heap counters as pointers into the live region. */
static int walk_entries(const char *snap, const char *live, const struct hp_pd_prologue *pro,
			struct hp_perfdata_counters *out, const void **spaces_at, char *err, size_t errlen)
{
	struct walk w = { snap, live, out, spaces_at, err, errlen };
	int n = hp_perfdata_each(snap, pro, walk_one, &w, err, errlen);
	if (n < 0)
		return n;
	out->num_entries = n;
	return 0;
}

/* Every generation that is there must be complete: capacity, maxCapacity,
 * spaces, and used/capacity/maxCapacity for each space it announces. */
static int check_generations(struct hp_perfdata_counters *out, const void *const *spaces_at, char *err,
			     size_t errlen)
{
	for (int n = 0; n < HP_PD_GENS; n++) {
		struct hp_pd_gen *g = &out->gen[n];
		bool any = g->capacity || g->max_capacity || spaces_at[n];
		for (int m = 0; m < HP_PD_MAX_SPACES; m++)
			any = any || g->space[m].used || g->space[m].capacity || g->space[m].max_capacity;
		if (!any) {
			if (n == 1)
				return hp_fail(err, errlen, -ENOENT,
					    "no sun.gc.generation.1 counters (every collector publishes them)");
			continue;
		}
		const char *missing = !g->capacity ? "capacity" : !g->max_capacity ? "maxCapacity" :
				      !spaces_at[n] ? "spaces" : NULL;
		if (missing)
			return hp_fail(err, errlen, -ENOENT, "sun.gc.generation.%d.%s missing", n, missing);
		if (g->spaces < 0 || g->spaces > HP_PD_MAX_SPACES)
			return hp_fail(err, errlen, -EBADMSG, "sun.gc.generation.%d.spaces is %lld (at most %d expected)",
				    n, (long long)g->spaces, HP_PD_MAX_SPACES);
		for (int m = 0; m < g->spaces; m++) {
			struct hp_pd_space *sp = &g->space[m];
			missing = !sp->used ? "used" : !sp->capacity ? "capacity" : !sp->max_capacity ? "maxCapacity" :
										      NULL;
			if (missing)
				return hp_fail(err, errlen, -ENOENT, "sun.gc.generation.%d.space.%d.%s missing", n, m,
					    missing);
		}
		g->present = true;
	}
	return 0;
}

int hp_perfdata_index(const void *start, size_t capacity, struct hp_perfdata_counters *out, char *err,
		      size_t errlen)
{
	struct hp_pd_prologue pro;
	memset(out, 0, sizeof(*out));
	if (!start)
		return hp_fail(err, errlen, -EFAULT, "no region (NULL start)");
	if ((uintptr_t)start % 8 != 0)
		return hp_fail(err, errlen, -EBADMSG, "region start %p is not 8-byte aligned", start);
	if (capacity < sizeof(pro) || capacity > HP_PD_MAX_CAPACITY)
		return hp_fail(err, errlen, -EBADMSG, "absurd region capacity %zu", capacity);
	if (hp_safe_read(&pro, start, sizeof(pro)))
		return hp_fail(err, errlen, -EFAULT, "prologue at %p unreadable", start);
	if (pro.magic[0] != HP_PD_MAGIC0 || pro.magic[1] != HP_PD_MAGIC1 || pro.magic[2] != HP_PD_MAGIC2 ||
	    pro.magic[3] != HP_PD_MAGIC3)
		return hp_fail(err, errlen, -EBADMSG, "bad magic %02x %02x %02x %02x (want ca fe c0 c0)", pro.magic[0],
			    pro.magic[1], pro.magic[2], pro.magic[3]);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const int native_order = HP_PD_LITTLE_ENDIAN;
#else
	const int native_order = HP_PD_BIG_ENDIAN;
#endif
	if (pro.byte_order != native_order)
		return hp_fail(err, errlen, -ENOTSUP, "byte order %d is not this machine's (%d)", pro.byte_order,
			    native_order);
	if (pro.major_version != HP_PD_MAJOR)
		return hp_fail(err, errlen, -ENOTSUP, "PerfData version %d.%d (only major version %d is known)",
			    pro.major_version, pro.minor_version, HP_PD_MAJOR);
	if (!pro.accessible) {
		/* HotSpot raises the flag at the end of its start-up, just before
		 * VMInit (JDK 11: when the management subsystem initialises). */
		return hp_fail(err, errlen, -EAGAIN, "region not marked accessible yet (VM starting)");
	}
	if (pro.used < (int32_t)sizeof(pro) || (size_t)pro.used > capacity)
		return hp_fail(err, errlen, -EBADMSG, "%d bytes in use in a %zu-byte region", pro.used, capacity);
	if (pro.entry_offset < (int32_t)sizeof(pro) || pro.entry_offset % 8 != 0 || pro.entry_offset > pro.used)
		return hp_fail(err, errlen, -EBADMSG, "first entry at offset %d (%d bytes in use)", pro.entry_offset,
			    pro.used);
	if (pro.num_entries < 0 || (size_t)pro.num_entries > (size_t)pro.used / sizeof(struct hp_pd_entry))
		return hp_fail(err, errlen, -EBADMSG, "%d entries cannot fit in %d bytes", pro.num_entries, pro.used);

	/* One copy of everything in use: consistent enough to walk (entries are
	 * only ever appended) and a single system call. */
	char *snap = malloc((size_t)pro.used);
	if (!snap)
		return hp_fail(err, errlen, -ENOMEM, "no memory for a %d-byte copy", pro.used);
	int rc;
	if (hp_safe_read(snap, start, (size_t)pro.used)) {
		rc = hp_fail(err, errlen, -EFAULT, "region %p + %d bytes unreadable", start, pro.used);
		goto out;
	}
	const void *spaces_at[HP_PD_GENS] = { NULL };
	rc = walk_entries(snap, start, &pro, out, spaces_at, err, errlen);
	if (rc == 0)
		rc = check_generations(out, spaces_at, err, errlen);
	if (rc == -ENOENT && pro.overflow > 0 && err && errlen) {
		/* Entries that did not fit were put on the C heap, out of reach. */
		size_t n = strlen(err);
		snprintf(err + n, errlen - n, "; %d bytes of counters overflowed the region (-XX:PerfDataMemorySize)",
			 pro.overflow);
	}
out:
	free(snap);
	if (rc) {
		memset(out, 0, sizeof(*out));
		return rc;
	}
	out->start = start;
	out->capacity = capacity;
	out->used_bytes = pro.used;
	return 0;
}

static int need_spaces(const struct hp_perfdata_counters *c, int gen, int64_t min, int64_t max, const char *gc,
		       char *err, size_t errlen)
{
	const struct hp_pd_gen *g = &c->gen[gen];
	if (!g->present)
		return hp_fail(err, errlen, -ENOENT, "%s should publish sun.gc.generation.%d: missing", gc, gen);
	if (g->spaces < min || g->spaces > max)
		return hp_fail(err, errlen, -ENOENT, "%s: sun.gc.generation.%d has %lld spaces, expected %lld..%lld", gc,
			    gen, (long long)g->spaces, (long long)min, (long long)max);
	return 0;
}

int hp_perfdata_plan(const struct hp_perfdata_counters *c, enum hp_gc_kind kind, struct hp_perfdata_plan *out,
		     char *err, size_t errlen)
{
	int rc;
	memset(out, 0, sizeof(*out));
	const char *gc = hp_gc_kind_name(kind);
	switch (kind) {
	case HP_GC_SERIAL:
	case HP_GC_PARALLEL:
	case HP_GC_CMS:
		/* eden, s0, s1 | old */
		if ((rc = need_spaces(c, 0, 3, 3, gc, err, errlen)) || (rc = need_spaces(c, 1, 1, 1, gc, err, errlen)))
			return rc;
		break;
	case HP_GC_G1: {
		if ((rc = need_spaces(c, 0, 3, 3, gc, err, errlen)) || (rc = need_spaces(c, 1, 1, 1, gc, err, errlen)))
			return rc;
		/* s0 is never used by G1 and its capacity stays pad_capacity(0):
		 * MinObjAlignmentInBytes up to JDK 17, 0 from JDK 21 on. */
		int64_t pad = *c->gen[0].space[1].capacity;
		if (pad < 0 || pad > 256 || (pad & (pad - 1)) != 0)
			return hp_fail(err, errlen, -EBADMSG,
				    "g1: s0 capacity %lld is not a capacity padding (0 or an object alignment)",
				    (long long)pad);
		out->g1_pad = pad;
		break;
	}
	case HP_GC_Z:
		/* single-generation: old only; generational: young and old */
		if ((rc = need_spaces(c, 1, 1, 1, gc, err, errlen)))
			return rc;
		if (c->gen[0].present && (rc = need_spaces(c, 0, 1, 1, gc, err, errlen)))
			return rc;
		break;
	case HP_GC_SHENANDOAH:
	case HP_GC_EPSILON:
		/* generation.1 "Heap" with one space; Shenandoah's generation.0 is an
		 * empty placeholder (0 spaces, capacity 0) */
		if ((rc = need_spaces(c, 1, 1, 1, gc, err, errlen)))
			return rc;
		if (c->gen[0].present && (rc = need_spaces(c, 0, 0, 1, gc, err, errlen)))
			return rc;
		break;
	default:
		return hp_fail(err, errlen, -ENOTSUP, "collector %s: unknown how its jvmstat counters add up", gc);
	}
	out->kind = kind;
	out->c = *c;
	return 0;
}

static inline int64_t ld(const volatile int64_t *p)
{
	return *p;
}

int hp_perfdata_compute(const struct hp_perfdata_plan *plan, struct hp_mode_reading *r)
{
	const struct hp_perfdata_counters *c = &plan->c;
	/* Each counter is loaded once; the arithmetic below works on these. */
	int64_t gcap[HP_PD_GENS] = { 0 }, gmax[HP_PD_GENS] = { 0 };
	int64_t sused[HP_PD_GENS][HP_PD_MAX_SPACES] = { { 0 } }, scap[HP_PD_GENS][HP_PD_MAX_SPACES] = { { 0 } };
	int64_t s0max = 0;
	/* OR of every counter: a negative or absurd one (beyond 2^50 bytes,
	 * 1 PiB) shows in the high bits, and the sums below cannot overflow. */
	uint64_t bits = 0;
	for (int n = 0; n < HP_PD_GENS; n++) {
		const struct hp_pd_gen *g = &c->gen[n];
		if (!g->present)
			continue;
		gcap[n] = ld(g->capacity);
		gmax[n] = ld(g->max_capacity);
		bits |= (uint64_t)gcap[n] | (uint64_t)gmax[n];
		for (int m = 0; m < g->spaces; m++) {
			sused[n][m] = ld(g->space[m].used);
			scap[n][m] = ld(g->space[m].capacity);
			bits |= (uint64_t)sused[n][m] | (uint64_t)scap[n][m];
		}
	}
	if (c->gen[0].present && c->gen[0].spaces >= 2) {
		s0max = ld(c->gen[0].space[1].max_capacity);
		bits |= (uint64_t)s0max;
	}
	if (bits >> 50)
		return -EBADMSG;
	if (plan->kind == HP_GC_Z) {
		/* ZGC writes its sizes only at the end of its pauses; until the first
		 * one the counters hold what they were created with (capacity = the
		 * minimum heap size, used 0), not the heap. Its pause counters tell
		 * (JDK 17+); JDK 11's ZGC has none, but sun.gc.lastCause stays
		 * "No GC" until its first collection has ended. */
		bool known = false, paused = false;
		for (int i = 0; i < HP_PD_COLLECTORS; i++)
			if (c->invocations[i]) {
				known = true;
				paused = paused || ld(c->invocations[i]) != 0;
			}
		if (!known && c->last_cause) {
			static const char no_gc[6] = "No GC";
			known = true;
			for (int i = 0; i < 6 && !paused; i++)
				paused = c->last_cause[i] != no_gc[i];
		}
		if (known && !paused)
			return -ENODATA;
	}

	int64_t used = 0, space_cap = 0, gen_cap = 0, largest_max = 0;
	for (int n = 0; n < HP_PD_GENS; n++) {
		gen_cap += gcap[n];
		if (gmax[n] > largest_max)
			largest_max = gmax[n];
		for (int m = 0; m < HP_PD_MAX_SPACES; m++) {
			used += sused[n][m];
			space_cap += scap[n][m];
		}
	}

	int64_t committed, max;
	switch (plan->kind) {
	case HP_GC_SERIAL:
	case HP_GC_PARALLEL:
	case HP_GC_CMS: {
		/* The heap's capacity (what MemoryMXBean and CollectedHeap::
		 * capacity() say) counts eden, the "from" survivor and old, not the
		 * empty "to" survivor. s0 and s1 swap roles at each young
		 * collection and the counters follow the spaces, so "to" is the one
		 * that is empty while the other is not. Both are empty after a full
		 * collection: Serial's (and CMS's) survivors always have the same
		 * size, so either will do; Parallel's adaptive policy resizes "to"
		 * to sun.gc.policy.desiredSurvivorSize after each young collection
		 * while "from" keeps its size (PSYoungGen::resize_spaces), and full
		 * collections resize neither: the one of that size is "to". If
		 * that does not decide, take the larger: committed then errs low
		 * by the difference of the two. */
		int64_t u0 = sused[0][1], u1 = sused[0][2], c0 = scap[0][1], c1 = scap[0][2];
		int64_t to;
		if (u0 > 0 && u1 == 0) {
			to = c1;
		} else if (u1 > 0 && u0 == 0) {
			to = c0;
		} else {
			int64_t desired = c->desired_survivor ? ld(c->desired_survivor) : -1;
			to = c0 == desired && c1 != desired ? c0 : c1 == desired && c0 != desired ? c1 :
			     c0 > c1 ? c0 : c1;
		}
		committed = space_cap - to;
		/* max = both generations' reservations less one survivor, as
		 * DefNewGeneration::max_capacity() and ParallelScavengeHeap::
		 * max_capacity() compute it (s0's maxCapacity is that survivor
		 * size); never below what is committed (Parallel does the same). */
		max = gmax[0] + gmax[1] - s0max;
		break;
	}
	case HP_GC_G1:
		/* G1 refreshes these at the end of each pause and when a mutator
		 * allocation region retires, not as objects are allocated: "used"
		 * lags by the regions in use for allocation (exactly as G1's
		 * MemoryMXBean, which reads the same figures). Generation
		 * capacities are padded thrice (young) and once (old) up to
		 * JDK 17; the max of generation.1 once. */
		committed = gen_cap - 4 * plan->g1_pad;
		max = gmax[1] - plan->g1_pad;
		break;
	case HP_GC_Z:
	case HP_GC_SHENANDOAH:
	case HP_GC_EPSILON:
		/* Generation capacities are the committed size (Shenandoah's space
		 * capacity is the maximum instead); every generation's maxCapacity
		 * is the whole heap's maximum. */
		committed = gen_cap;
		max = largest_max;
		break;
	default:
		return -ENOTSUP;
	}
	/* The counters are written one by one, not as a set: a read racing an
	 * update can mix old and new values. Clamp as each collector's own
	 * MemoryUsage does with its independently updated figures: Shenandoah
	 * raises committed to used (ShenandoahMemoryPool::get_memory_usage),
	 * the others cap used at committed (ZGC, G1's eden). */
	if (committed < 0)
		committed = 0;
	if (used > committed) {
		if (plan->kind == HP_GC_SHENANDOAH)
			committed = used;
		else
			used = committed;
	}
	if (max < committed)
		max = committed;
	r->used = (uint64_t)used;
	r->committed = (uint64_t)committed;
	r->max = (uint64_t)max;
	r->kind = HP_USAGE_CURRENT;
	return 0;
}

/* ---- the mode ------------------------------------------------------------ */

/* Our declarations of the prologue and entry must agree with what VMStructs
 * says of HotSpot's (where it says anything: the entries are optional). */
static int check_layout(const struct hp_vms *vms, char *reason, size_t len)
{
	static const struct { const char *type, *field; int64_t offset; } fields[] = {
		{ "PerfDataPrologue", "magic", offsetof(struct hp_pd_prologue, magic) },
		{ "PerfDataPrologue", "byte_order", offsetof(struct hp_pd_prologue, byte_order) },
		{ "PerfDataPrologue", "major_version", offsetof(struct hp_pd_prologue, major_version) },
		{ "PerfDataPrologue", "accessible", offsetof(struct hp_pd_prologue, accessible) },
		{ "PerfDataPrologue", "used", offsetof(struct hp_pd_prologue, used) },
		{ "PerfDataPrologue", "entry_offset", offsetof(struct hp_pd_prologue, entry_offset) },
		{ "PerfDataPrologue", "num_entries", offsetof(struct hp_pd_prologue, num_entries) },
		{ "PerfDataEntry", "entry_length", offsetof(struct hp_pd_entry, entry_length) },
		{ "PerfDataEntry", "name_offset", offsetof(struct hp_pd_entry, name_offset) },
		{ "PerfDataEntry", "vector_length", offsetof(struct hp_pd_entry, vector_length) },
		{ "PerfDataEntry", "data_type", offsetof(struct hp_pd_entry, data_type) },
		{ "PerfDataEntry", "data_offset", offsetof(struct hp_pd_entry, data_offset) },
	};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		int64_t off = hp_vms_offset(vms, fields[i].type, fields[i].field);
		if (off >= 0 && off != fields[i].offset) {
			snprintf(reason, len, "VMStructs puts %s::%s at %lld, the jvmstat format at %lld",
				 fields[i].type, fields[i].field, (long long)off, (long long)fields[i].offset);
			return -EPROTO;
		}
	}
	const struct hp_vms_type *t = hp_vms_type(vms, "PerfDataPrologue");
	if (t && t->size != sizeof(struct hp_pd_prologue)) {
		snprintf(reason, len, "VMStructs says PerfDataPrologue is %llu bytes, not %zu",
			 (unsigned long long)t->size, sizeof(struct hp_pd_prologue));
		return -EPROTO;
	}
	return 0;
}

/* The jvmstat memory's statics (perfMemory.hpp). */
struct perf_memory {
	const void *start_at, *cap_at, *end_at, *init_at, *prologue_at;
};
#define PM(field, member, need) \
	{ "PerfMemory", field, HP_VMS_ADDRESS, offsetof(struct perf_memory, member), need, 0, 0 }
static const struct hp_vms_entry perf_memory_table[] = {
	PM("_start", start_at, HP_VMS_REQUIRED),
	PM("_capacity", cap_at, HP_VMS_REQUIRED),
	PM("_end", end_at, HP_VMS_OPTIONAL),
	PM("_initialized", init_at, HP_VMS_OPTIONAL),
	PM("_prologue", prologue_at, HP_VMS_OPTIONAL),
};

static int perfdata_init(struct hp_probe *p, char *reason, size_t len)
{
	free(p->mode_state[HP_MODE_PERFDATA]);
	p->mode_state[HP_MODE_PERFDATA] = NULL;
	if (!p->vms) {
		snprintf(reason, len, "needs VMStructs: %s", p->reason[HP_PART_VMSTRUCTS]);
		return -ENOENT;
	}
	struct perf_memory pm;
	int rc = hp_vms_bind(p->vms, perf_memory_table, HP_VMS_N(perf_memory_table), &pm, "jvmstat counters", reason,
			     len);
	if (rc)
		return rc;
	const void *start_at = pm.start_at, *cap_at = pm.cap_at, *end_at = pm.end_at, *init_at = pm.init_at;
	const void *prologue_at = pm.prologue_at;
	rc = check_layout(p->vms, reason, len);
	if (rc)
		return rc;

	bool use_perf_data = true;
	if (p->status[HP_PART_FLAGS] == 0 && hp_vmflags_bool(&p->flags, "UsePerfData", &use_perf_data) == 0 &&
	    !use_perf_data) {
		snprintf(reason, len, "-XX:-UsePerfData: the VM keeps no jvmstat counters");
		return -ENOTSUP;
	}

	const void *start = NULL, *end = NULL, *prologue = NULL;
	uint64_t capacity = 0;
	int initialized = 0;
	if (hp_safe_read_ptr(&start, start_at) || hp_safe_read_u64(&capacity, cap_at) ||
	    (end_at && hp_safe_read_ptr(&end, end_at)) || (prologue_at && hp_safe_read_ptr(&prologue, prologue_at)) ||
	    (init_at && hp_safe_read(&initialized, init_at, sizeof(initialized)))) {
		snprintf(reason, len, "PerfMemory statics unreadable");
		return -EFAULT;
	}
	/* PerfMemory is set up in vm_init_globals(), after Agent_OnLoad and
	 * before the heap; the heap's counters are created with the heap. */
	const struct hp_heap_info *heap = hp_probe_heap(p);
	if (!start) {
		if (initialized) {
			snprintf(reason, len, "no PerfMemory region: it could not be created (counters on the C heap)");
			return -ENOTSUP;
		}
		if (heap) {
			/* The region would exist by now: the flag table was not
			 * readable, but this is what -XX:-UsePerfData looks like. */
			snprintf(reason, len, "no PerfMemory region although the heap exists (-XX:-UsePerfData?)");
			return -ENOTSUP;
		}
		snprintf(reason, len, "PerfMemory not initialized yet");
		return -EAGAIN;
	}
	if (!heap) {
		snprintf(reason, len, "waiting for the heap: %s", p->reason[HP_PART_HEAP]);
		return p->status[HP_PART_HEAP] == -EAGAIN ? -EAGAIN : -ENOENT;
	}
	if (prologue_at && prologue != start) {
		/* The prologue heads the region; elsewhere means a C-heap
		 * fallback or a misread. */
		snprintf(reason, len, "PerfMemory: _prologue %p is not _start %p", prologue, start);
		return -EBADMSG;
	}
	if (end && (uintptr_t)end != (uintptr_t)start + capacity) {
		snprintf(reason, len, "PerfMemory: _start %p + _capacity %llu != _end %p", start,
			 (unsigned long long)capacity, end);
		return -EBADMSG;
	}

	struct hp_perfdata_counters c;
	char err[HP_REASON_LEN] = "";
	rc = hp_perfdata_index(start, (size_t)capacity, &c, err, sizeof(err));
	if (rc) {
		snprintf(reason, len, "PerfData region %p: %s", start, err);
		return rc;
	}
	struct hp_perfdata_plan *plan = malloc(sizeof(*plan));
	if (!plan) {
		snprintf(reason, len, "out of memory");
		return -ENOMEM;
	}
	rc = hp_perfdata_plan(&c, heap->kind, plan, err, sizeof(err));
	if (rc) {
		snprintf(reason, len, "%s", err);
		free(plan);
		return rc;
	}
	struct hp_mode_reading r = { 0 };
	rc = hp_perfdata_compute(plan, &r);
	if (rc == -ENODATA) {
		/* ZGC before its first pause: usable later, nothing to check now */
	} else if (rc || !hp_reading_sane(&r)) {
		snprintf(reason, len, "implausible counters: used=%llu committed=%llu max=%llu",
			 (unsigned long long)r.used, (unsigned long long)r.committed, (unsigned long long)r.max);
		free(plan);
		return -EBADMSG;
	}
	p->mode_state[HP_MODE_PERFDATA] = plan;
	return 0;
}

const volatile int64_t *hp_perfdata_classes_unloaded(struct hp_probe *p)
{
	const struct hp_perfdata_plan *plan = p->mode_state[HP_MODE_PERFDATA];
	return plan ? plan->c.classes_unloaded : NULL;
}

const volatile int64_t *hp_perfdata_invocations(struct hp_probe *p, int n)
{
	const struct hp_perfdata_plan *plan = p->mode_state[HP_MODE_PERFDATA];
	return plan && n >= 0 && n < HP_PD_COLLECTORS ? plan->c.invocations[n] : NULL;
}

int hp_perfdata_gc_cause(struct hp_probe *p, char *buf, size_t len)
{
	const struct hp_perfdata_plan *plan = p->mode_state[HP_MODE_PERFDATA];
	if (!plan || !plan->c.cause || !len)
		return -ENOTSUP;
	size_t n = 0;
	for (; n + 1 < len && n < (size_t)plan->c.cause_len; n++) {
		buf[n] = plan->c.cause[n];
		if (!buf[n])
			break;
	}
	buf[n] = '\0';
	return 0;
}

static int perfdata_read(struct hp_probe *p, JNIEnv *env, struct hp_mode_reading *r)
{
	const struct hp_perfdata_plan *plan = p->mode_state[HP_MODE_PERFDATA];
	if (!plan)
		return -ENOTSUP;
	/* The region is never unmapped while the process lives (perfMemory_exit
	 * removes the backing file only), so the pointers stay loadable even
	 * after VMDeath. */
	return hp_perfdata_compute(plan, r);
}

static void perfdata_fini(struct hp_probe *p)
{
	free(p->mode_state[HP_MODE_PERFDATA]);
	p->mode_state[HP_MODE_PERFDATA] = NULL;
}

const struct hp_mode_ops hp_mode_perfdata = {
	.mode = HP_MODE_PERFDATA,
	.needs_jni = false,
	.init = perfdata_init,
	.read = perfdata_read,
	.fini = perfdata_fini,
};
