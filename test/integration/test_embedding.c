/* Embedding heapprobe in another profiler (examples/vendor_agent.c), in
 * real JVMs: the example linked against libheapprobe.so and, with a second
 * copy of the pprof protobuf code, against libheapprobe.a; its counters
 * fed by heapprobe's callbacks; its own JEP 331 sampler verified by
 * heapprobe's marking signal against the program's construction; two
 * samplers in one JVM; the sz-prefixed structs across sizes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jvmrun.h"

/* CliTarget's kept set: chunks of byte[4096] (16-byte header). */
#define KEPT_CHUNKS 16384
#define KEPT_BYTES (KEPT_CHUNKS * (4096.0 + 16))

static char *report_path(const char *name)
{
	static char p[512];
	snprintf(p, sizeof(p), "%s/embed-%s-%d.txt", HP_BUILD_DIR, name, (int)getpid());
	unlink(p);
	return p;
}

static double field(const char *text, const char *key)
{
	char k[128];
	snprintf(k, sizeof(k), "%s: ", key);
	const char *at = text ? strstr(text, k) : NULL;
	cr_assert(at, "no '%s' in report:\n%s", key, text ? text : "(none)");
	return atof(at + strlen(k));
}

/* Runs CliTarget for `seconds` with the given agents and JVM options, then
 * lets it linger `linger` seconds with its kept set untouched. */
static struct jvm_result run(const char *const *agents, const char *gc, int seconds, int linger)
{
	const char *argv[16];
	int n = 0;
	argv[n++] = HP_JAVA;
	for (const char *const *a = agents; *a; a++)
		argv[n++] = *a;
	argv[n++] = gc;
	argv[n++] = "-Xmx512m";
	argv[n++] = "-cp";
	argv[n++] = HP_TEST_CLASSES;
	argv[n++] = "CliTarget";
	argv[n++] = "/nonexistent/stop";
	static char chunks[16], secs[16], stay[16];
	snprintf(chunks, sizeof(chunks), "%d", KEPT_CHUNKS);
	snprintf(secs, sizeof(secs), "%d", seconds);
	snprintf(stay, sizeof(stay), "%d", linger);
	argv[n++] = chunks;
	argv[n++] = secs;
	argv[n++] = stay;
	argv[n] = NULL;
	return jvm_run(argv, NULL, 120);
}

/* Seconds CliTarget lingers after its load with the kept set untouched:
 * with a marking asked for every second (each blocking for its cycle),
 * room for the two that verify the last chunks replaced. */
#define LINGER_S 5

TestSuite(embed, .timeout = 180);

/* Variant 1, shared library: our GC events and heapprobe's callbacks both
 * count, hp_live_bytes answers inside our GarbageCollectionFinish. */
Test(embed, counters_shared)
{
	char *out = report_path("counters");
	char agent[700];
	snprintf(agent, sizeof(agent), "-agentpath:%s=out=%s", HP_VENDOR_SHARED, out);
	const char *agents[] = { agent, NULL };
	struct jvm_result r = run(agents, "-XX:+UseG1GC", 3, 0);
	cr_assert_eq(r.exit_code, 0, "%s", r.output);
	char *rep = jvm_slurp(out);
	cr_assert(rep, "no report; JVM said: %s", r.output);
	double events = field(rep, "vendor.gc_finish_events"), calls = field(rep, "vendor.hp_post_gc_calls");
	cr_expect_gt(events, 0, "%s", rep);
	cr_expect_gt(calls, 0, "%s", rep);
	cr_expect_leq(calls, events, "heapprobe's post-GC callbacks come from the same pauses:\n%s", rep);
	/* the live heap holds the kept set at least */
	cr_expect_gt(field(rep, "vendor.live_at_gc_finish"), 0.9 * KEPT_BYTES, "%s", rep);
	cr_expect_gt(field(rep, "vendor.hp_post_gc_live"), 0.9 * KEPT_BYTES, "%s", rep);
	cr_expect(strstr(rep, "vendor.sampler: off"), "%s", rep);
	free(rep);
	jvm_result_free(&r);
	unlink(out);
}

/* Variant 2 on G1, static library: our sampler's samples verified by
 * heapprobe's marking signal (markings we request every second), the
 * estimate, once the program has stopped changing its kept set, against
 * the set it built. */
static void sampler_case(const char *lib, const char *gc, const char *kind, const char *name)
{
	char *out = report_path(name);
	char agent[700];
	snprintf(agent, sizeof(agent), "-agentpath:%s=sampler,interval=32768,mark_every=1,out=%s", lib, out);
	const char *agents[] = { agent, NULL };
	struct jvm_result r = run(agents, gc, 6, LINGER_S);
	cr_assert_eq(r.exit_code, 0, "%s", r.output);
	char *rep = jvm_slurp(out);
	cr_assert(rep, "no report; JVM said: %s", r.output);
	cr_expect(strstr(rep, "vendor.sampler: on"), "%s", rep);
	cr_expect_gt(field(rep, "vendor.samples"), 1000, "%s", rep);
	cr_expect_geq(field(rep, "vendor.marking_requests_ok"), 3, "%s", rep);
	cr_expect_geq(field(rep, "vendor.marking_calls"), 3, "the marking callback did not follow the markings:\n%s", rep);
	char want[64];
	snprintf(want, sizeof(want), "vendor.marking_last_kind: %s", kind);
	cr_expect(strstr(rep, want), "expected %s:\n%s", want, rep);
	/* Horvitz-Thompson at 32 KiB over the 64.25 MiB kept set: p = 1 -
	 * exp(-4112/32768) = 0.118, ~1,930 samples, sd sqrt((1-p)/n) = 2.1%.
	 * CliTarget lingers LINGER_S with the set untouched, so the markings
	 * asked for every second verify every kept sample (the report's
	 * recent part is empty; asserted below) and there is no load bias
	 * (before the linger, chunks replaced since the last-but-one marking
	 * were unverified: 0.91-0.92 x in 3 of ~20 runs). What is left above
	 * the set is what the JVM itself keeps from start-up, also sampled:
	 * measured +0.8% on G1 and +1.9% on ZGC (JDK 17, n = 12 and 10, sd
	 * 1.6% and 2.2%; docs/test-bounds.md). 0.92..1.12 is 4.8 sd from a
	 * centre of 1.02 either way (2e-6), and at least 3.8 sd (7e-5) for
	 * any centre in 1.00..1.04. */
	double est = field(rep, "vendor.verified_live_bytes");
	double recent = field(rep, "vendor.recent_bytes");
	cr_log_info("embed %s: verified/kept %.4f, recent %.0f bytes", name, est / KEPT_BYTES, recent);
	cr_expect(recent < 0.01 * KEPT_BYTES, "the linger did not let the markings verify the set:\n%s", rep);
	/* 2e-6 per run at the measured centre; docs/test-bounds.md */
	cr_expect(est > 0.92 * KEPT_BYTES && est < 1.12 * KEPT_BYTES,
		  "verified live %.0f bytes vs %.0f kept by construction:\n%s", est, KEPT_BYTES, rep);
	free(rep);
	jvm_result_free(&r);
	unlink(out);
}

Test(embed, sampler_static_g1)
{
	sampler_case(HP_VENDOR_STATIC, "-XX:+UseG1GC", "concurrent", "g1");
}

Test(embed, sampler_shared_z)
{
	sampler_case(HP_VENDOR_SHARED, "-XX:+UseZGC", "requested", "z");
}

/* Two samplers in one JVM: ours first holds the sampling capability;
 * heapprobe's agent says why it cannot sample, its library part (the info
 * report at exit) keeps working, and ours samples. Our static copy of
 * heapprobe and libheapprobe.so live side by side in the process. */
Test(embed, two_samplers_vendor_first)
{
	char *out = report_path("two");
	char vendor[700], hp[700];
	snprintf(vendor, sizeof(vendor), "-agentpath:%s=sampler,interval=32768,mark_every=1,out=%s", HP_VENDOR_STATIC,
		 out);
	snprintf(hp, sizeof(hp), "-agentpath:%s=interval=64k,info=exit,file=/nonexistent/never.pb.gz", HP_AGENT_PATH);
	const char *agents[] = { vendor, hp, NULL };
	struct jvm_result r = run(agents, "-XX:+UseG1GC", 4, LINGER_S);
	cr_assert_eq(r.exit_code, 0, "%s", r.output);
	cr_expect(strstr(r.output, "holds can_generate_sampled_object_alloc_events"),
		  "heapprobe's agent did not say why it cannot sample:\n%s", r.output);
	cr_expect(strstr(r.output, "jdk.feature:"), "heapprobe's info report missing:\n%s", r.output);
	char *rep = jvm_slurp(out);
	cr_assert(rep, "no report: %s", r.output);
	cr_expect(strstr(rep, "vendor.sampler: on"), "%s", rep);
	cr_expect_gt(field(rep, "vendor.samples"), 1000, "%s", rep);
	/* as sampler_case (the same linger), one-sided: 0.92 is 4.8 sd below a centre of 1.02 (1e-6), 3.8 sd below 1.00 (7e-5); docs/test-bounds.md */
	cr_expect_gt(field(rep, "vendor.verified_live_bytes"), 0.92 * KEPT_BYTES, "%s", rep);
	free(rep);
	jvm_result_free(&r);
	unlink(out);
}

/* The other order: heapprobe's agent samples, ours says it cannot. */
Test(embed, two_samplers_heapprobe_first)
{
	char *out = report_path("two-hp");
	char vendor[700], hp[700], prof[600];
	snprintf(prof, sizeof(prof), "%s/embed-hp-%d.collapsed", HP_BUILD_DIR, (int)getpid());
	snprintf(vendor, sizeof(vendor), "-agentpath:%s=sampler,out=%s", HP_VENDOR_STATIC, out);
	snprintf(hp, sizeof(hp), "-agentpath:%s=interval=64k,format=collapsed,file=%s", HP_AGENT_PATH, prof);
	const char *agents[] = { hp, vendor, NULL };
	struct jvm_result r = run(agents, "-XX:+UseG1GC", 3, 0);
	cr_assert_eq(r.exit_code, 0, "%s", r.output);
	char *rep = jvm_slurp(out);
	cr_assert(rep, "no report: %s", r.output);
	cr_expect(strstr(rep, "vendor.sampler: off: cannot get can_generate_sampled_object_alloc_events"), "%s", rep);
	cr_expect_gt(collapsed_sum(prof, NULL, "CliTarget.keep"), 0, "heapprobe's profile lacks CliTarget.keep");
	free(rep);
	jvm_result_free(&r);
	unlink(out);
	unlink(prof);
	char alloc[700];
	snprintf(alloc, sizeof(alloc), "%s.alloc", prof);
	unlink(alloc);
}

/* Old- and new-size structs (test/integration/abi_agent.c). */
Test(embed, struct_sizes)
{
	char agent[600];
	snprintf(agent, sizeof(agent), "-agentpath:%s", HP_ABI_AGENT);
	const char *argv[] = { HP_JAVA, agent, "-version", NULL };
	struct jvm_result r = jvm_run(argv, NULL, 60);
	cr_assert_eq(r.exit_code, 0, "%s", r.output);
	const char *checks[] = { "open_opts_old_size", "heap_usage_old_size", "heap_usage_new_size",
				 "marking_oldest_size", "marking_0_1_size", "marking_0_5_size", "marking_0_6_size",
				 "marking_size", "marking_new_size", "marking_too_small_refused" };
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		char want[128];
		snprintf(want, sizeof(want), "abi.%s: ok", checks[i]);
		cr_expect(strstr(r.output, want), "%s not ok:\n%s", checks[i], r.output);
	}
	cr_expect(!strstr(r.output, "FAIL"), "%s", r.output);
	jvm_result_free(&r);
}
