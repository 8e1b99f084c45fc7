/* Every heap usage mode on every JDK x collector, compared with what Java's
 * MemoryMXBean and MemoryPoolMXBean.getCollectionUsage() say at the same
 * quiet point (right after System.gc()). The JVM embeds heapprobe through
 * the static library in test/integration/usage_agent.c. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jvmrun.h"

#define MiB (1024.0 * 1024.0)
/* Retained by HeapUsageCheck: 16 Ki byte[1024] (~16.4 MiB with headers). */
#define RETAINED_MIN (16.0 * MiB)
#define RETAINED_SLACK (16.0 * MiB)    /* JDK's own objects, class data */

struct reading {
	int present, rc;
	char mode[32], kind[32];
	double used, committed, max, live;
};

static struct reading parse(const struct jvm_result *r, const char *key)
{
	struct reading x = { 0 };
	char buf[512];
	if (!jvm_field(r, key, buf, sizeof(buf)))
		return x;
	x.present = 1;
	x.rc = -1;
	sscanf(buf, "rc=%d", &x.rc);
	char *p;
	if ((p = strstr(buf, "mode=")))
		sscanf(p, "mode=%31s", x.mode);
	if ((p = strstr(buf, "kind=")))
		sscanf(p, "kind=%31s", x.kind);
	if ((p = strstr(buf, "used=")))
		x.used = atof(p + 5);
	if ((p = strstr(buf, "committed=")))
		x.committed = atof(p + 10);
	if ((p = strstr(buf, "max=")))
		x.max = atof(p + 4);
	if ((p = strstr(buf, "live=")))
		x.live = atof(p + 5);
	return x;
}

static const char *java_for(int feature, char *buf, size_t cap)
{
	if (feature == 17)
		return HP_JAVA;
	snprintf(buf, cap, "%s/%d/bin/java", HP_JDKS_DIR, feature);
	return access(buf, X_OK) == 0 ? buf : NULL;
}

/* The embedding agent; "=info" also prints hp_write_info's report. */
static const char *agent_arg = "-agentpath:" HP_USAGE_AGENT;

static struct jvm_result run_check(int feature, const char *gc, const char *extra_gc, const char *const *env)
{
	char path[512];
	const char *java = java_for(feature, path, sizeof(path));
	if (!java)
		cr_skip_test("JDK %d not installed in %s (run scripts/setup-jdks.sh)", feature, HP_JDKS_DIR);
	const char *argv[12];
	int n = 0;
	argv[n++] = java;
	argv[n++] = "-Xmx256m";
	argv[n++] = "-XX:+UnlockExperimentalVMOptions";
	argv[n++] = gc;
	if (extra_gc)
		argv[n++] = extra_gc;
	argv[n++] = agent_arg;
	argv[n++] = "-cp";
	argv[n++] = HP_TEST_CLASSES;
	argv[n++] = "HeapUsageCheck";
	argv[n] = NULL;
	struct jvm_result r = jvm_run(argv, env, 120);
	cr_assert_eq(r.exit_code, 0, "JDK %d %s: java exited %d\n%s", feature, gc, r.exit_code, r.output);
	return r;
}

/* |a - b| within an absolute slack plus a fraction of b. */
static void expect_close(const char *what, double a, double b, double abs_slack, double rel, const char *out)
{
	double diff = a > b ? a - b : b - a;
	cr_expect(diff <= abs_slack + rel * b, "%s: %.0f vs %.0f (diff %.0f > %.0f + %.1f%%)\n%s", what, a, b, diff,
		  abs_slack, rel * 100, out);
}

/* `used` only grows between two readings with no collection in between:
 * a mode read after MemoryMXBean (jmx) and before the second MemoryMXBean
 * read (jmx.after) must fall between them, give or take one TLAB/region. */
static void expect_between(const char *what, double v, double lo, double hi, const char *out)
{
	cr_expect(v >= lo - 1 * MiB && v <= hi + 1 * MiB, "%s: %.0f not within [%.0f, %.0f] +- 1 MiB\n%s", what, v,
		  lo, hi, out);
}

enum gc_family { COLLECTION, CONCURRENT, NEVER };

static void check(int feature, const char *gc, const char *extra_gc, enum gc_family family)
{
	struct jvm_result r = run_check(feature, gc, extra_gc, NULL);
	const char *out = r.output;
	struct reading jmx = parse(&r, "jmx");
	struct reading coll = parse(&r, "jmx.collection");
	struct reading after = parse(&r, "jmx.after");
	cr_assert(jmx.present && coll.present && after.present, "%s", out);

	/* The exact current-usage source: CollectedHeap::memory_usage() on
	 * 17+ (also what JMX itself calls there), create_heap_summary() on 11. */
	const char *exact = feature >= 17 ? "mode.memory-usage-call" : "mode.heap-summary-call";
	struct reading m = parse(&r, exact);
	cr_assert_eq(m.rc, 0, "%s must work on JDK %d %s\n%s", exact, feature, gc, out);
	expect_between("exact used vs MemoryMXBean", m.used, jmx.used, after.used, out);
	/* Committed: JMX's, exactly, unless the heap committed memory between
	 * the two JMX reads (Shenandoah from 26 commits regions as they are
	 * allocated in): then within them, exactly. */
	if (feature >= 17 && after.committed != jmx.committed)
		cr_expect(m.committed >= jmx.committed && m.committed <= after.committed,
			  "exact committed %.0f outside MemoryMXBean's %.0f..%.0f\n%s", m.committed, jmx.committed,
			  after.committed, out);
	else
		expect_close("exact committed vs MemoryMXBean", m.committed, jmx.committed, 0, feature >= 17 ? 0 : 0.05,
			     out);
	struct reading hs = parse(&r, "mode.heap-summary-call");
	cr_expect_eq(hs.rc, 0, "heap-summary-call on JDK %d %s\n%s", feature, gc, out);
	expect_between("heap-summary used vs MemoryMXBean", hs.used, jmx.used, after.used, out);

	struct reading best = parse(&r, "best");
	cr_expect_eq(best.rc, 0, "%s", out);
	expect_between("best used vs MemoryMXBean", best.used, jmx.used, after.used, out);

	struct reading fields = parse(&r, "mode.last-gc-fields");
	struct reading post = parse(&r, "post_gc");
	if (family == NEVER) {
		cr_expect_neq(fields.rc, 0, "Epsilon never refreshes the last-GC fields\n%s", out);
		cr_expect_neq(post.rc, 0, "Epsilon has no post-GC figure\n%s", out);
	} else {
		cr_expect_eq(fields.rc, 0, "last-gc-fields on JDK %d %s\n%s", feature, gc, out);
		/* G1 refreshes them at young pauses too, so they only ever
		 * promise "after a young collection"; Shenandoah and ZGC at
		 * each cycle's end, which counts what was allocated during it
		 * (under load several times the live heap). */
		const char *kind = family == CONCURRENT ? "after-concurrent-cycle" :
				   strcmp(gc, "-XX:+UseG1GC") ? "after-full-gc" : "after-young-gc";
		cr_expect_str_eq(fields.kind, kind, "%s", out);
		cr_assert_eq(post.rc, 0, "no post-GC figure on JDK %d %s\n%s", feature, gc, out);
		/* stop-the-world collectors: the capture at System.gc()'s end */
		cr_expect_str_eq(post.kind, family == CONCURRENT ? "after-concurrent-cycle" : "after-full-gc", "%s", out);
		/* The live heap after System.gc(): what JMX's collection usage
		 * says, and at least the retained set built by construction. */
		/* Stop-the-world collectors record both figures at the end of
		 * the same pause: they agree to a TLAB. Concurrent ones record
		 * them at two moments of the cycle's end while mutators keep
		 * allocating (ZGC in 2 MiB pages): allow 3 pages. */
		double slack = family == COLLECTION ? 1 * MiB : 6 * MiB;
		expect_close("post-GC used vs collection usage", post.used, coll.used, slack, 0.01, out);
		cr_expect(post.used >= RETAINED_MIN && post.used <= RETAINED_MIN + RETAINED_SLACK,
			  "post-GC used %.0f outside the retained set's [%.0f, %.0f]\n%s", post.used, RETAINED_MIN,
			  RETAINED_MIN + RETAINED_SLACK, out);
		/* `live` too: a full collection's used, single-generation ZGC's
		 * marked bytes, generational ZGC's old + young marked bytes (the
		 * young part must not count the promoted set twice), Shenandoah's
		 * cycle-end used (0 before d6a95d9: no capture, no marking figure) */
		cr_expect(post.live >= RETAINED_MIN && post.live <= RETAINED_MIN + RETAINED_SLACK,
			  "post-GC live %.0f outside the retained set's [%.0f, %.0f]\n%s", post.live, RETAINED_MIN,
			  RETAINED_MIN + RETAINED_SLACK, out);
		/* hp_live_bytes is that `live` (header), read just after it;
		 * idle, nothing moves between the two reads but a ZGC cycle's
		 * marking figure (a proactive cycle): a page. */
		char lb[64];
		double live_bytes = atof(jvm_field(&r, "live_bytes", lb, sizeof(lb)) ? lb : "-1");
		expect_close("hp_live_bytes vs hp_heap_usage's live", live_bytes, post.live,
			     family == CONCURRENT ? 2 * MiB : 0, 0, out);
		if (fields.rc == 0)
			expect_close("last-gc-fields used vs collection usage", fields.used, coll.used, slack, 0.01,
				     out);
	}
	char buf[64];
	long callbacks = atol(jvm_field(&r, "callbacks", buf, sizeof(buf)) ? buf : "-999");
	if (family == COLLECTION)
		cr_expect_geq(callbacks, 2, "host GC callback ran %ld times for 2 System.gc()\n%s", callbacks, out);
	else
		cr_expect_eq(callbacks, 0, "no post-GC callback at pauses of concurrent cycles\n%s", out);
	jvm_result_free(&r);
}

#define GC_TESTS(F)                                                                                     \
	Test(jdk##F, g1) { check(F, "-XX:+UseG1GC", NULL, COLLECTION); }                                \
	Test(jdk##F, parallel) { check(F, "-XX:+UseParallelGC", NULL, COLLECTION); }                    \
	Test(jdk##F, serial) { check(F, "-XX:+UseSerialGC", NULL, COLLECTION); }                        \
	Test(jdk##F, z) { check(F, "-XX:+UseZGC", NULL, CONCURRENT); }                                  \
	Test(jdk##F, shenandoah) { check(F, "-XX:+UseShenandoahGC", NULL, CONCURRENT); }                \
	Test(jdk##F, epsilon) { check(F, "-XX:+UseEpsilonGC", NULL, NEVER); }                          \
	Test(jdk##F, g1_cycle_starts) { check_g1_starts(F); }

/* G1's cycles begun (info's marking.started: G1CollectedHeap::
 * _old_marking_cycles_started, at the offset the code of the method that
 * increments it gives, on this release's libjvm) against the JVM's own
 * log: at exit, one per concurrent start pause and one per full
 * collection, no more, no less. RetainedSet with IHOP 1% runs several
 * cycles and two System.gc() full collections. */
static struct jvm_result run_g1_cycles(int feature, const char *const *env)
{
	char path[512];
	const char *java = java_for(feature, path, sizeof(path));
	if (!java)
		cr_skip_test("JDK %d not installed in %s (run scripts/setup-jdks.sh)", feature, HP_JDKS_DIR);
	const char *argv[] = { java, "-Xmx256m", "-XX:+UseG1GC", "-XX:InitiatingHeapOccupancyPercent=1",
			       "-agentpath:" HP_AGENT_PATH "=info=exit", "-Xlog:gc", "-cp", HP_TEST_CLASSES,
			       "RetainedSet", NULL };
	struct jvm_result r = jvm_run(argv, env, 120);
	cr_assert_eq(r.exit_code, 0, "JDK %d: java exited %d\n%s", feature, r.exit_code, r.output);
	return r;
}

static void check_g1_starts(int feature)
{
	struct jvm_result r = run_g1_cycles(feature, NULL);
	cr_assert(strstr(r.output, "marking.starts: G1CollectedHeap::_old_marking_cycles_started (+"),
		  "JDK %d: no count of G1's cycles begun\n%s", feature, r.output);
	unsigned logged = 0, full = 0;
	for (const char *q = r.output; (q = strstr(q, "Pause Young (Concurrent Start)")); q++)
		logged++;
	for (const char *q = r.output; (q = strstr(q, "Pause Full")); q++)
		full++;
	cr_assert_geq(logged, 1, "JDK %d: the run had no concurrent cycle\n%s", feature, r.output);
	const char *m = strstr(r.output, "marking.started: ");
	cr_assert(m, "%s", r.output);
	unsigned long started = strtoul(m + strlen("marking.started: "), NULL, 10);
	cr_expect_eq(started, logged + full, "JDK %d: %lu begun, the log has %u concurrent starts and %u full "
		     "collections\n%s", feature, started, logged, full, r.output);
	jvm_result_free(&r);
}

/* Generational Shenandoah's phase (info's marking.phase:
 * ShenandoahHeap::_gc_state, at the offset the code of its two setters
 * gives on this release's libjvm, the two agreeing; its bits from the
 * symbols/ data, 27 using 26's): read, and idle at VM start. Its cycles
 * counted from it against the JVM's own log: test_load's
 * generational_shenandoah_cycles_counted_as_its_log_shows (JDK 25). */
static void check_shenandoah_phase(int feature)
{
	char path[512];
	const char *java = java_for(feature, path, sizeof(path));
	if (!java)
		cr_skip_test("JDK %d not installed in %s (run scripts/setup-jdks.sh)", feature, HP_JDKS_DIR);
	const char *argv[] = { java, "-XX:+UseShenandoahGC", "-XX:ShenandoahGCMode=generational",
			       "-agentpath:" HP_AGENT_PATH "=info", "-version", NULL };
	struct jvm_result r = jvm_run(argv, NULL, 120);
	cr_assert_eq(r.exit_code, 0, "JDK %d: java exited %d\n%s", feature, r.exit_code, r.output);
	cr_expect(strstr(r.output, "marking.phase: idle from ShenandoahHeap::_gc_state (+"),
		  "JDK %d: generational Shenandoah's phase not read\n%s", feature, r.output);
	jvm_result_free(&r);
}

TestSuite(jdk11, .timeout = 180);
TestSuite(jdk17, .timeout = 180);
TestSuite(jdk21, .timeout = 180);
TestSuite(jdk25, .timeout = 180);
TestSuite(jdk26, .timeout = 180);
TestSuite(jdk27, .timeout = 180);
GC_TESTS(11)
GC_TESTS(17)
GC_TESTS(21)
GC_TESTS(25)
/* Debian sid's builds, run with sid's C library (scripts/setup-jdks.sh);
 * 27 has no data of its own: 26's serves, each fact checked. */
GC_TESTS(26)
GC_TESTS(27)
Test(jdk25, shenandoah_generational_phase) { check_shenandoah_phase(25); }
Test(jdk26, shenandoah_generational_phase) { check_shenandoah_phase(26); }
Test(jdk27, shenandoah_generational_phase) { check_shenandoah_phase(27); }
Test(jdk21, z_generational) { check(21, "-XX:+UseZGC", "-XX:+ZGenerational", CONCURRENT); }

/* Fault injection proves the fallback order: each source that goes away
 * hands over to the next, and the JVM never notices. */
TestSuite(fallback, .timeout = 180);

static struct jvm_result run_fault(const char *faults)
{
	static char env[256];
	snprintf(env, sizeof(env), "HEAPPROBE_FAULTS=%s", faults);
	const char *envs[] = { env, NULL };
	return run_check(17, "-XX:+UseG1GC", NULL, envs);
}

Test(fallback, hidden_memory_usage_symbols_fall_back_to_heap_summary)
{
	struct jvm_result r = run_fault("hide-symbol=_ZN15G1CollectedHeap12memory_usageEv,"
					"hide-symbol=_ZN13CollectedHeap12memory_usageEv");
	struct reading m = parse(&r, "mode.memory-usage-call");
	cr_expect_neq(m.rc, 0, "%s", r.output);
	struct reading best = parse(&r, "best");
	cr_expect_str_eq(best.mode, "heap-summary-call", "%s", r.output);
	struct reading post = parse(&r, "post_gc");
	cr_expect_str_eq(post.mode, "heap-summary-call", "post-GC capture falls back too\n%s", r.output);
	jvm_result_free(&r);
}

Test(fallback, stripped_libjvm_keeps_the_vmstructs_anchored_fields)
{
	struct jvm_result r = run_fault("strip-symtab");
	cr_expect_neq(parse(&r, "mode.memory-usage-call").rc, 0, "%s", r.output);
	cr_expect_neq(parse(&r, "mode.heap-summary-call").rc, 0, "%s", r.output);
	/* JDK 17's last-GC fields need no symbol: VMStructs + data. */
	struct reading fields = parse(&r, "mode.last-gc-fields");
	cr_expect_eq(fields.rc, 0, "%s", r.output);
	struct reading post = parse(&r, "post_gc");
	cr_expect_eq(post.rc, 0, "%s", r.output);
	struct reading coll = parse(&r, "jmx.collection");
	expect_close("stripped: post-GC used vs collection usage", post.used, coll.used, 1 * MiB, 0.01, r.output);
	jvm_result_free(&r);
}

Test(fallback, corrupt_data_disables_only_what_needs_it)
{
	struct jvm_result r = run_fault("corrupt-data");
	cr_expect_neq(parse(&r, "mode.last-gc-fields").rc, 0, "%s", r.output);
	/* Calls find their symbols by the Itanium mangling without data. */
	cr_expect_eq(parse(&r, "mode.memory-usage-call").rc, 0, "%s", r.output);
	cr_expect_eq(parse(&r, "best").rc, 0, "%s", r.output);
	jvm_result_free(&r);
}

/* The method whose code gives the count's offset hidden: no count, said
 * so with its reason, the JVM runs on (the agent bounds G1's cycle starts
 * with its canaries then). */
Test(fallback, hidden_g1_start_count_method_is_reported)
{
	const char *env[] = { "HEAPPROBE_FAULTS=hide-symbol=_ZN15G1CollectedHeap36increment_old_marking_cycles_startedEv",
			      NULL };
	struct jvm_result r = run_g1_cycles(17, env);
	cr_expect(strstr(r.output, "marking.starts: none: _ZN15G1CollectedHeap36increment_old_marking_cycles_startedEv "
				   "not in libjvm's text (no marking starts counted)"), "%s", r.output);
	cr_expect(!strstr(r.output, "marking.started: "), "%s", r.output);
	cr_expect(strstr(r.output, "Pause Young (Concurrent Start)"), "the run had no concurrent cycle\n%s", r.output);
	jvm_result_free(&r);
}

/* One of generational Shenandoah's two _gc_state setters hidden: no
 * phase, said so with its reason (the agent then looks for no drop there
 * and counts only the markings it asks for, as before); the JVM runs a
 * collection on. */
Test(fallback, hidden_shenandoah_gc_state_setter_is_reported)
{
	char path[512];
	const char *java = java_for(25, path, sizeof(path));
	if (!java)
		cr_skip_test("JDK 25 not installed in %s (run scripts/setup-jdks.sh)", HP_JDKS_DIR);
	const char *env[] = { "HEAPPROBE_FAULTS=hide-symbol=_ZN14ShenandoahHeap25set_gc_state_at_safepointEjb", NULL };
	const char *argv[] = { java, "-Xmx256m", "-XX:+UseShenandoahGC", "-XX:ShenandoahGCMode=generational",
			       "-agentpath:" HP_AGENT_PATH "=info=exit", "-cp", HP_TEST_CLASSES, "RetainedSet", NULL };
	struct jvm_result r = jvm_run(argv, env, 120);
	cr_assert_eq(r.exit_code, 0, "java exited %d\n%s", r.exit_code, r.output);
	cr_expect(strstr(r.output, "marking.phase: none: _ZN14ShenandoahHeap25set_gc_state_at_safepointEjb not in "
				   "libjvm's text\n"), "%s", r.output);
	jvm_result_free(&r);
}

Test(fallback, every_hotspot_source_disabled_still_runs)
{
	struct jvm_result r = run_fault("disable-mode=memory-usage-call,disable-mode=heap-summary-call,"
					"disable-mode=last-gc-fields,disable-mode=perfdata");
	struct reading best = parse(&r, "best");
	/* What is left is JNI-based (jmm, jmx-native, exported totals). */
	if (best.rc == 0)
		cr_expect(strstr("jmm jmx-native exported-totals", best.mode), "best=%s\n%s", best.mode, r.output);
	cr_expect(strstr(r.output, "retained: 16384"), "%s", r.output);
	jvm_result_free(&r);
}

Test(fallback, concurrent_collector_without_fields_uses_jmm_collection_usage)
{
	const char *env[] = { "HEAPPROBE_FAULTS=disable-mode=last-gc-fields", NULL };
	struct jvm_result r = run_check(17, "-XX:+UseZGC", NULL, env);
	struct reading post = parse(&r, "post_gc");
	struct reading coll = parse(&r, "jmx.collection");
	cr_assert_eq(post.rc, 0, "%s", r.output);
	cr_expect_str_eq(post.mode, "jmm", "%s", r.output);
	cr_expect_str_eq(post.kind, "after-young-gc", "%s", r.output);
	expect_close("jmm collection usage vs Java's", post.used, coll.used, 0, 0, r.output);
	jvm_result_free(&r);
}

/* A release newer than the data knows (HEAPPROBE_FAULTS=release=N takes a
 * known JVM for release N): the nearest lower release's data, each fact
 * checked against this JVM's VMStructs and libjvm symbols; what a check
 * contradicts is off with its reason, the rest serves. */
TestSuite(newer_release, .timeout = 180);

static struct jvm_result run_as(int feature, int as)
{
	static char env[64];
	snprintf(env, sizeof(env), "HEAPPROBE_FAULTS=release=%d", as);
	const char *envs[] = { env, NULL };
	agent_arg = "-agentpath:" HP_USAGE_AGENT "=info";
	return run_check(feature, "-XX:+UseG1GC", NULL, envs);
}

/* The check program's reading of a mode (after hp_write_info's report,
 * whose mode lines come first and say "ok" or "disabled"). */
static struct reading parse_reading(const struct jvm_result *r, const char *mode)
{
	char key[96];
	snprintf(key, sizeof(key), "\n%s: rc=", mode);
	struct reading x = { 0 };
	const char *at = strstr(r->output, key);
	x.rc = -1;
	if (at)
		x.present = 1, sscanf(at + strlen(key), "%d", &x.rc);
	const char *u = at ? strstr(at, "used=") : NULL;
	x.used = u ? atof(u + 5) : 0;
	return x;
}

Test(newer_release, the_lower_release_data_that_fits_serves_in_full)
{
	/* JDK 17 taken for 20: 17's layout is this JVM's, every fact holds. */
	struct jvm_result r = run_as(17, 20);
	cr_expect(strstr(r.output, "data: built-in jdk-17.txt for JDK 20 (no data of its own"), "%s", r.output);
	cr_expect(strstr(r.output, "not in libjvm, 0 off\n"), "%s", r.output);
	cr_expect(strstr(r.output, "jdk.feature: 20 taken for JDK 20"), "%s", r.output);
	struct reading fields = parse_reading(&r, "mode.last-gc-fields");
	struct reading coll = parse(&r, "jmx.collection");
	cr_expect_eq(fields.rc, 0, "%s", r.output);
	expect_close("borrowed data: last-GC fields vs collection usage", fields.used, coll.used, 1 * MiB, 0.01,
		     r.output);
	jvm_result_free(&r);
}

Test(newer_release, what_vmstructs_contradicts_is_off_and_the_rest_serves)
{
	/* JDK 21 taken for a release past every file: the newest file's
	 * CollectedHeap (112 bytes from 25 on) is not this one (96). */
	struct jvm_result r = run_as(21, 1000);
	cr_expect(strstr(r.output, "for JDK 1000 (no data of its own"), "%s", r.output);
	cr_expect(strstr(r.output, "data.off: field.CollectedHeap._used_at_last_gc: layout.CollectedHeap.size: "
				   "VMStructs has CollectedHeap 96 bytes"), "%s", r.output);
	cr_expect_neq(parse_reading(&r, "mode.last-gc-fields").rc, 0, "a wrong layout must not be read\n%s", r.output);
	/* Symbol-named calls still serve, and the post-GC capture with them. */
	cr_expect_eq(parse_reading(&r, "mode.memory-usage-call").rc, 0, "%s", r.output);
	struct reading post = parse_reading(&r, "post_gc");
	struct reading coll = parse(&r, "jmx.collection");
	cr_expect_eq(post.rc, 0, "%s", r.output);
	expect_close("borrowed data: post-GC used vs collection usage", post.used, coll.used, 1 * MiB, 0.01, r.output);
	cr_expect(strstr(r.output, "retained: 16384"), "%s", r.output);
	jvm_result_free(&r);
}

Test(newer_release, the_newest_data_on_an_older_jvm_loses_what_its_witnesses_deny)
{
	/* JDK 25 taken for 27: JDK 26's data serves; its jmethodIDs are a
	 * table (JmethodIDTable) this libjvm does not have, and its
	 * CollectedHeap lost 25's SoftRefPolicy. Both are caught, by symbol
	 * and by VMStructs; the JVM runs on with what holds. */
	struct jvm_result r = run_as(25, 27);
	cr_expect(strstr(r.output, "data: built-in jdk-26.txt for JDK 27 (no data of its own"), "%s", r.output);
	cr_expect(strstr(r.output, "data.off: code.jmethodid: witness.code.jmethodid: _ZN14JmethodIDTable"), "%s",
		  r.output);
	cr_expect(strstr(r.output, "data.off: field.CollectedHeap._used_at_last_gc: layout.CollectedHeap._reserved: "
				   "VMStructs has CollectedHeap::_reserved at 48"), "%s", r.output);
	cr_expect_neq(parse_reading(&r, "mode.last-gc-fields").rc, 0, "%s", r.output);
	cr_expect_eq(parse_reading(&r, "mode.memory-usage-call").rc, 0, "%s", r.output);
	cr_expect(strstr(r.output, "retained: 16384"), "%s", r.output);
	jvm_result_free(&r);
}
