/* The real agent in a real JDK 17: `info` for every collector, bad options,
 * and each part failing alone (HEAPPROBE_FAULTS) without hurting the JVM. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jvmrun.h"

#define AGENT_INFO "-agentpath:" HP_AGENT_PATH "=info"

static struct jvm_result run_info(const char *gc_flag, const char *const *env)
{
	const char *argv[] = { HP_JAVA, "-Xmx96m", "-XX:+UnlockExperimentalVMOptions", gc_flag, AGENT_INFO,
			       "-version", NULL };
	return jvm_run(argv, env, 120);
}

static void expect_field(const struct jvm_result *r, const char *key, const char *expected)
{
	char buf[512];
	const char *v = jvm_field(r, key, buf, sizeof(buf));
	cr_assert_not_null(v, "no '%s:' line in output:\n%s", key, r->output);
	cr_assert_str_eq(v, expected, "%s: got '%s', want '%s'\n%s", key, v, expected, r->output);
}

static void expect_field_contains(const struct jvm_result *r, const char *key, const char *needle)
{
	char buf[512];
	const char *v = jvm_field(r, key, buf, sizeof(buf));
	cr_assert_not_null(v, "no '%s:' line in output:\n%s", key, r->output);
	cr_assert(strstr(v, needle), "%s: '%s' lacks '%s'\n%s", key, v, needle, r->output);
}

static void check_gc(const char *gc_flag, const char *kind, const char *heap_class, const char *vtable,
		     int reserved_is_xmx)
{
	struct jvm_result r = run_info(gc_flag, NULL);
	cr_assert_eq(r.exit_code, 0, "java exited %d:\n%s", r.exit_code, r.output);
	cr_assert(strstr(r.output, "openjdk version") || strstr(r.output, "java version"), "%s", r.output);
	expect_field(&r, "status.libjvm", "ok");
	expect_field(&r, "status.vmstructs", "ok");
	expect_field(&r, "status.symbols", "ok");
	expect_field(&r, "status.flags", "ok");
	expect_field(&r, "status.heap", "ok");
	expect_field(&r, "gc.kind", kind);
	expect_field(&r, "heap.class", heap_class);
	char agree[160];
	snprintf(agree, sizeof(agree), "vtable %s and flag %s agree", vtable, gc_flag + 5);
	expect_field(&r, "gc.determined_by", agree);
	expect_field_contains(&r, "jdk.release", "17.");
	expect_field(&r, "jdk.feature", "17");

	/* Universe::_collectedHeap resolved to a readable object, and
	 * CollectedHeap::_reserved to the heap's reservation. */
	char buf[256];
	cr_assert_not_null(jvm_field(&r, "heap.address", buf, sizeof(buf)));
	cr_assert_str_neq(buf, "(nil)");
	unsigned long long start = 0, bytes = 0;
	cr_assert_not_null(jvm_field(&r, "heap.reserved", buf, sizeof(buf)));
	cr_assert_eq(sscanf(buf, "start=%llx bytes=%llu", &start, &bytes), 2, "%s", buf);
	if (reserved_is_xmx) {
		cr_assert_neq(start, 0);
		cr_assert_eq(bytes, 96ull << 20, "reserved %llu bytes, -Xmx96m", bytes);
	} else {
		/* ZGC manages its own address space and leaves _reserved empty. */
		cr_assert_eq(bytes, 0, "%llu", bytes);
	}
	cr_assert_null(strstr(r.output, "unavailable"), "%s", r.output);
	jvm_result_free(&r);
}

TestSuite(gc, .timeout = 180);
Test(gc, g1) { check_gc("-XX:+UseG1GC", "g1", "G1CollectedHeap", "_ZTV15G1CollectedHeap", 1); }
Test(gc, parallel) { check_gc("-XX:+UseParallelGC", "parallel", "ParallelScavengeHeap", "_ZTV20ParallelScavengeHeap", 1); }
Test(gc, serial) { check_gc("-XX:+UseSerialGC", "serial", "SerialHeap", "_ZTV10SerialHeap", 1); }
Test(gc, z) { check_gc("-XX:+UseZGC", "z", "ZCollectedHeap", "_ZTV14ZCollectedHeap", 0); }
Test(gc, shenandoah) { check_gc("-XX:+UseShenandoahGC", "shenandoah", "ShenandoahHeap", "_ZTV14ShenandoahHeap", 1); }
Test(gc, epsilon) { check_gc("-XX:+UseEpsilonGC", "epsilon", "EpsilonHeap", "_ZTV11EpsilonHeap", 1); }

Test(gc, z_is_single_generation_on_17)
{
	struct jvm_result r = run_info("-XX:+UseZGC", NULL);
	expect_field(&r, "gc.generational", "no");
	jvm_result_free(&r);
}

TestSuite(agent, .timeout = 180);

Test(agent, unknown_option_fails_start_with_the_valid_list)
{
	const char *argv[] = { HP_JAVA, "-agentpath:" HP_AGENT_PATH "=info,bogus=1", "-version", NULL };
	struct jvm_result r = jvm_run(argv, NULL, 60);
	cr_assert_neq(r.exit_code, 0, "a bad option must fail the JVM start:\n%s", r.output);
	cr_assert(strstr(r.output, "unknown or malformed option 'bogus=1'"), "%s", r.output);
	cr_assert(strstr(r.output, "valid options: interval=<size>"), "%s", r.output);
	cr_assert(strstr(r.output, "info=exit"), "%s", r.output);
	jvm_result_free(&r);
}

/* Each fault disables one part with a reason; the JVM runs on and the
 * other parts still work. */
static struct jvm_result run_fault(const char *fault)
{
	static char env[128];
	snprintf(env, sizeof(env), "HEAPPROBE_FAULTS=%s", fault);
	const char *envs[] = { env, NULL };
	struct jvm_result r = run_info("-XX:+UseParallelGC", envs);
	cr_assert_eq(r.exit_code, 0, "java must survive fault %s:\n%s", fault, r.output);
	cr_assert(strstr(r.output, "openjdk version"), "%s", r.output);
	return r;
}

Test(agent, no_libjvm_is_reported_not_fatal)
{
	struct jvm_result r = run_fault("hide-libjvm");
	expect_field_contains(&r, "status.libjvm", "unavailable");
	expect_field_contains(&r, "status.libjvm", "is loaded in this process");
	expect_field_contains(&r, "status.vmstructs", "no libjvm");
	expect_field(&r, "gc.kind", "unknown");
	/* The release still comes from JVMTI. */
	expect_field_contains(&r, "jdk.release", "17.");
	jvm_result_free(&r);
}

Test(agent, no_vmstructs_is_reported)
{
	struct jvm_result r = run_fault("hide-vmstructs");
	expect_field_contains(&r, "status.vmstructs", "gHotSpotVMStructs");
	expect_field(&r, "status.symbols", "ok");
	expect_field(&r, "gc.kind", "unknown");
	jvm_result_free(&r);
}

Test(agent, malformed_vmstructs_is_reported)
{
	struct jvm_result r = run_fault("corrupt-vmstructs");
	expect_field_contains(&r, "status.vmstructs", "absurd entry stride");
	jvm_result_free(&r);
}

Test(agent, stripped_libjvm_falls_back_to_flags)
{
	struct jvm_result r = run_fault("strip-symtab");
	expect_field_contains(&r, "status.symbols", "unavailable");
	expect_field(&r, "gc.kind", "parallel");
	expect_field_contains(&r, "gc.determined_by", "flag UseParallelGC");
	jvm_result_free(&r);
}

Test(agent, unreadable_libjvm_file_is_reported)
{
	struct jvm_result r = run_fault("unreadable-libjvm");
	expect_field_contains(&r, "status.symbols", "unavailable");
	expect_field(&r, "gc.kind", "parallel");
	jvm_result_free(&r);
}

Test(agent, no_flags_falls_back_to_vtable)
{
	struct jvm_result r = run_fault("hide-flags");
	expect_field_contains(&r, "status.flags", "hidden");
	expect_field(&r, "gc.kind", "parallel");
	expect_field_contains(&r, "gc.determined_by", "vtable _ZTV20ParallelScavengeHeap");
	jvm_result_free(&r);
}

Test(agent, everything_broken_still_runs_java)
{
	struct jvm_result r = run_fault("hide-vmstructs,strip-symtab,hide-flags");
	expect_field(&r, "gc.kind", "unknown");
	jvm_result_free(&r);
}

/* A libjvm without .symtab, as many vendors ship it. Debian's
 * openjdk-17-dbg has the matching debug file under /usr/lib/debug by
 * build-id; without it only .dynsym is left. */
TestSuite(stripped, .timeout = 180);

static struct jvm_result run_stripped(const char *const *env)
{
	const char *argv[] = { HP_STRIPPED_JAVA, "-XX:+UseSerialGC", AGENT_INFO, "-version", NULL };
	struct jvm_result r = jvm_run(argv, env, 120);
	cr_assert_eq(r.exit_code, 0, "java exited %d:\n%s", r.exit_code, r.output);
	return r;
}

Test(stripped, symbols_come_from_the_debug_file_by_build_id)
{
	struct jvm_result r = run_stripped(NULL);
	char id[128], path[512];
	cr_assert_not_null(jvm_field(&r, "libjvm.build_id", id, sizeof(id)), "%s", r.output);
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	if (access(path, R_OK) != 0) {
		/* No openjdk-17-dbg for this exact build: .dynsym is all. */
		expect_field(&r, "symbols.origin", ".dynsym only");
		expect_field(&r, "gc.kind", "serial");
		jvm_result_free(&r);
		cr_skip_test("%s not installed: checked the .dynsym fallback only", path);
	}
	expect_field(&r, "symbols.origin", "debug file by build-id");
	expect_field(&r, "symbols.file", path);
	expect_field(&r, "gc.determined_by", "vtable _ZTV10SerialHeap and flag UseSerialGC agree");
	expect_field_contains(&r, "mode.memory-usage-call", "ok used=");
	jvm_result_free(&r);
}

Test(stripped, without_debug_file_falls_back_to_dynsym_and_flags)
{
	const char *env[] = { "HEAPPROBE_DEBUG_ROOT=/nonexistent-debug-root", NULL };
	struct jvm_result r = run_stripped(env);
	expect_field(&r, "symbols.origin", ".dynsym only");
	expect_field(&r, "gc.kind", "serial");
	expect_field_contains(&r, "gc.determined_by", "flag UseSerialGC");
	/* The calls need LOCAL symbols; the last-GC fields need only VMStructs. */
	expect_field_contains(&r, "mode.memory-usage-call", "disabled");
	expect_field_contains(&r, "mode.last-gc-fields", "ok used=");
	jvm_result_free(&r);
}

/* G1's Remark and Cleanup pauses post GarbageCollectionFinish too; they are
 * not collections and must neither be published as post-GC figures nor make
 * the cross-check disable the last-GC fields. */
Test(gc, g1_concurrent_cycles_keep_last_gc_fields_trusted)
{
	const char *argv[] = { HP_JAVA, "-Xmx256m", "-XX:+UseG1GC", "-XX:InitiatingHeapOccupancyPercent=1",
			       "-agentpath:" HP_AGENT_PATH "=info=exit", "-Xlog:gc", "-cp", HP_TEST_CLASSES,
			       "RetainedSet", NULL };
	struct jvm_result r = jvm_run(argv, NULL, 180);
	cr_assert_eq(r.exit_code, 0, "%s", r.output);
	cr_assert(strstr(r.output, "Pause Remark"), "the run had no concurrent cycle:\n%.2000s", r.output);
	expect_field_contains(&r, "mode.last-gc-fields", "ok used=");
	expect_field_contains(&r, "usage.post_gc", "kind=after-full-gc");
	jvm_result_free(&r);
}
