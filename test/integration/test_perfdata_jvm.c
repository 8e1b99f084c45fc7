/* The "perfdata" mode in real JVMs: every collector on JDK 17 (Debian's) and
 * on 11/21/25 (scripts/setup-jdks.sh), compared with MemoryMXBean by
 * test/java/PerfDataCheck.java through test/integration/perfdata_agent.c;
 * and -XX:-UsePerfData, where the mode must be disabled with a reason while
 * the JVM runs on unharmed.
 *
 * Tolerances, and why:
 *  - committed and max: equal to MemoryMXBean's, to the byte, wherever the
 *    collector has refreshed its counters since the heap last resized (after
 *    a stop-the-world collection; for Shenandoah once its 100 ms counter task
 *    ran). The arithmetic (G1's padding, the "to" survivor, Shenandoah's
 *    generation vs space capacity) must be exactly HotSpot's.
 *  - used: the counters lag, they never lead. Serial and Parallel count
 *    whole TLABs in eden's "used" but publish it only at the end of a
 *    collection (and, until JDK 24, every 50 ms): MemoryMXBean, read after
 *    the counters, has the TLABs handed out since, each at most ~1/50 of eden
 *    for a lone allocating thread (< 2 MiB at -Xmx256m). USED_LAG = 6 MiB
 *    allows three such TLABs. G1 shares its figures with MemoryMXBean and
 *    agrees to the byte, Epsilon publishes every 1 MiB of allocation.
 *  - ZGC publishes at the end of each pause; the last one of a cycle
 *    (Relocate Start) still counts the pages being evacuated, freed only
 *    afterwards, so its "used" leads MemoryMXBean's by those pages: up to
 *    Z_LEAD = 16 MiB (eight 2 MiB small pages; 1-4 seen). It lags by the
 *    pages handed out since that pause: ZGC counts whole pages, and
 *    mutators fill a shared 2 MiB small page per CPU
 *    (ZObjectAllocator::_shared_small_page is ZPerCPU), so JMX's own
 *    objects alone can open one on each CPU: z_lag() = 2 MiB per online CPU
 *    and one more for a page filled meanwhile (seen: 4 MiB on 2 CPUs,
 *    25.0.x generational, in CI).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jvmrun.h"

#define MiB (1024.0 * 1024.0)
#define USED_LAG (6 * MiB)
#define USED_LEAD (64 * 1024.0)    /* reads are not atomic with the JMX call: a few objects */
#define Z_LEAD (16 * MiB)

enum family { STW, ZGC, SHENANDOAH, EPSILON };

static double z_lag(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return 2 * MiB * ((cpus > 0 ? cpus : 1) + 1);
}

struct reading {
	int present;
	long rc;
	double used, committed, max, jused, jcommitted, jmax;
};

/* "name=<number>" at the start of buf or after a space. */
static double num(const char *buf, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = buf; (p = strstr(p, name)); p += n)
		if ((p == buf || p[-1] == ' ') && p[n] == '=')
			return atof(p + n + 1);
	return -1;
}

static struct reading parse(const struct jvm_result *r, const char *key)
{
	struct reading x = { 0 };
	char buf[512];
	if (!jvm_field(r, key, buf, sizeof(buf)))
		return x;
	x.present = 1;
	x.rc = (long)num(buf, "rc");
	x.used = num(buf, "used");
	x.committed = num(buf, "committed");
	x.max = num(buf, "max");
	x.jused = num(buf, "jmx.used");
	x.jcommitted = num(buf, "jmx.committed");
	x.jmax = num(buf, "jmx.max");
	return x;
}

static long status_of(const struct jvm_result *r, const char *key)
{
	char buf[512];
	if (!jvm_field(r, key, buf, sizeof(buf)))
		return -9999;
	return atol(buf);
}

static const char *java_for(int feature, char *buf, size_t cap)
{
	if (feature == 17)
		return HP_JAVA;
	snprintf(buf, cap, "%s/%d/bin/java", HP_JDKS_DIR, feature);
	return access(buf, X_OK) == 0 ? buf : NULL;
}

static struct jvm_result run(int feature, const char *gc, const char *extra, const char *const *env)
{
	char path[512];
	const char *java = java_for(feature, path, sizeof(path));
	if (!java)
		cr_skip_test("JDK %d not installed in %s (run scripts/setup-jdks.sh)", feature, HP_JDKS_DIR);
	const char *argv[12];
	int n = 0;
	argv[n++] = java;
	argv[n++] = "-Xms64m";       /* below -Xmx: committed moves, and differs from max */
	argv[n++] = "-Xmx256m";
	argv[n++] = "-XX:+UnlockExperimentalVMOptions";
	argv[n++] = gc;
	if (extra)
		argv[n++] = extra;
	argv[n++] = "-agentpath:" HP_PERFDATA_AGENT;
	argv[n++] = "-cp";
	argv[n++] = HP_TEST_CLASSES;
	argv[n++] = "PerfDataCheck";
	argv[n] = NULL;
	struct jvm_result r = jvm_run(argv, env, 120);
	cr_assert_eq(r.exit_code, 0, "JDK %d %s: java exited %d\n%s", feature, gc, r.exit_code, r.output);
	char buf[64];
	cr_assert_not_null(jvm_field(&r, "retained", buf, sizeof(buf)), "program did not finish\n%s", r.output);
	return r;
}

static void expect_equal(const char *what, double pd, double jmx, const char *out)
{
	cr_expect(pd == jmx, "%s: perfdata %.0f, MemoryMXBean %.0f (diff %.0f)\n%s", what, pd, jmx, pd - jmx, out);
}

/* jmx - lag <= pd <= jmx + lead */
static void expect_used(const char *what, double pd, double jmx, double lag, double lead, const char *out)
{
	cr_expect(pd >= jmx - lag && pd <= jmx + lead,
		  "%s: perfdata used %.0f vs MemoryMXBean %.0f: diff %.0f outside [-%.0f, +%.0f]\n%s", what, pd, jmx,
		  pd - jmx, lag, lead, out);
}

static void expect_max(const char *what, const struct reading *x, const char *out)
{
	if (x->jmax >= 0)       /* -1: MemoryMXBean has no max */
		expect_equal(what, x->max, x->jmax, out);
}

static void check(int feature, const char *gc, const char *extra, enum family fam)
{
	struct jvm_result r = run(feature, gc, extra, NULL);
	const char *out = r.output;

	/* PerfMemory is created after Agent_OnLoad: not yet. At VMInit the
	 * region is accessible from JDK 17 on; JDK 11 raises the flag a little
	 * later (Management::initialize), and the mode then waits. */
	cr_expect_eq(status_of(&r, "perfdata.onload.status"), -EAGAIN, "%s", out);
	long vminit = status_of(&r, "perfdata.vminit.status");
	cr_expect(vminit == 0 || (feature == 11 && vminit == -EAGAIN), "VMInit status %ld\n%s", vminit, out);
	cr_assert_eq(status_of(&r, "perfdata.status"), 0, "mode disabled on JDK %d %s\n%s", feature, gc, out);

	/* Before any collection. ZGC says "no data" until its first pause has
	 * ended (one may have happened already), and Shenandoah may have
	 * committed more since it last refreshed: only sanity there. */
	struct reading start = parse(&r, "perfdata.start");
	cr_assert(start.present, "%s", out);
	if (fam == ZGC) {
		cr_expect(start.rc == 0 || start.rc == -ENODATA, "%s", out);
	} else {
		cr_expect_eq(start.rc, 0, "%s", out);
		if (fam == STW || fam == EPSILON) {
			expect_equal("start committed", start.committed, start.jcommitted, out);
			expect_max("start max", &start, out);
			expect_used("start used", start.used, start.jused, USED_LAG, USED_LEAD, out);
		}
	}

	/* Every reading while allocating passed the probe's sanity check. */
	char buf[256];
	cr_assert_not_null(jvm_field(&r, "perfdata.churn", buf, sizeof(buf)), "%s", out);
	cr_expect_eq(num(buf, "failures"), 0, "%s", out);
	if (fam != ZGC)
		cr_expect_eq(num(buf, "nodata"), 0, "%s", out);

	/* Right after System.gc(). Shenandoah refreshes its counters up to
	 * 100 ms after the cycle: checked only once settled. */
	struct reading after = parse(&r, "perfdata.aftergc");
	cr_assert(after.present, "%s", out);
	cr_expect_eq(after.rc, 0, "%s", out);
	if (fam != SHENANDOAH) {
		expect_equal("after-GC committed", after.committed, after.jcommitted, out);
		expect_max("after-GC max", &after, out);
		if (fam == ZGC)
			expect_used("after-GC used (ZGC)", after.used, after.jused, z_lag(), Z_LEAD, out);
		else
			expect_used("after-GC used", after.used, after.jused, USED_LAG, USED_LEAD, out);
	}

	/* Read inside GarbageCollectionFinish (stop-the-world collections only:
	 * the probe calls back at their end), compared with MemoryMXBean right
	 * after System.gc(). */
	cr_assert_not_null(jvm_field(&r, "perfdata.gccallback", buf, sizeof(buf)), "%s", out);
	cr_expect_eq(num(buf, "failures"), 0, "%s", out);
	if (fam == STW) {
		cr_expect_geq(num(buf, "reads"), 1, "no perfdata read in a GC callback\n%s", out);
		expect_equal("GC-callback committed", num(buf, "committed"), num(buf, "jmx.committed"), out);
		expect_used("GC-callback used", num(buf, "used"), num(buf, "jmx.used"), USED_LAG, USED_LEAD, out);
	}

	/* 300 ms later, nothing allocated meanwhile but JMX's own objects. */
	struct reading settled = parse(&r, "perfdata.settled");
	cr_assert(settled.present, "%s", out);
	cr_expect_eq(settled.rc, 0, "%s", out);
	if (fam == SHENANDOAH)
		/* Its counters are refreshed by a 100 ms task: a region committed
		 * since the last refresh (JMX's own objects) shows in
		 * MemoryMXBean first (seen once: 256 KiB, one region, generational
		 * mode on 25.0.2). Within 1 MiB; exact for the others. */
		cr_expect(fabs(settled.committed - settled.jcommitted) <= 1.0 * MiB,
			  "settled committed: perfdata %.0f, MemoryMXBean %.0f (more than 1 MiB apart)\n%s",
			  settled.committed, settled.jcommitted, out);
	else
		expect_equal("settled committed", settled.committed, settled.jcommitted, out);
	expect_max("settled max", &settled, out);
	if (fam == ZGC)
		expect_used("settled used (ZGC)", settled.used, settled.jused, z_lag(), Z_LEAD, out);
	else
		expect_used("settled used", settled.used, settled.jused, USED_LAG, USED_LEAD, out);

	/* No reading was ever insane (the probe would have disabled the mode). */
	cr_expect_eq(status_of(&r, "perfdata.final.status"), 0, "%s", out);
	jvm_result_free(&r);
}

#define GC_TESTS(F)                                                                              \
	Test(jdk##F, g1) { check(F, "-XX:+UseG1GC", NULL, STW); }                                \
	Test(jdk##F, parallel) { check(F, "-XX:+UseParallelGC", NULL, STW); }                    \
	Test(jdk##F, serial) { check(F, "-XX:+UseSerialGC", NULL, STW); }                        \
	Test(jdk##F, z) { check(F, "-XX:+UseZGC", NULL, ZGC); }                                  \
	Test(jdk##F, shenandoah) { check(F, "-XX:+UseShenandoahGC", NULL, SHENANDOAH); }         \
	Test(jdk##F, epsilon) { check(F, "-XX:+UseEpsilonGC", NULL, EPSILON); }

TestSuite(jdk11, .timeout = 180);
TestSuite(jdk17, .timeout = 180);
TestSuite(jdk21, .timeout = 180);
TestSuite(jdk25, .timeout = 180);
GC_TESTS(11)
GC_TESTS(17)
GC_TESTS(21)
GC_TESTS(25)
Test(jdk21, z_generational) { check(21, "-XX:+UseZGC", "-XX:+ZGenerational", ZGC); }
Test(jdk25, shenandoah_generational)
{
	check(25, "-XX:+UseShenandoahGC", "-XX:ShenandoahGCMode=generational", SHENANDOAH);
}
/* JDK 11's CMS: young like Serial's (ParNew), System.gc() stop-the-world. */
Test(jdk11, cms) { check(11, "-XX:+UseConcMarkSweepGC", NULL, STW); }

/* -XX:-UsePerfData: no region. The mode says so from Agent_OnLoad on (the
 * flag table tells), or, without the flag table, once the heap exists and
 * the region still does not; the JVM runs the whole program regardless. */
TestSuite(no_perfdata, .timeout = 180);

static void check_disabled(int feature, const char *gc, const char *const *env, const char *why)
{
	struct jvm_result r = run(feature, gc, "-XX:-UsePerfData", env);
	const char *out = r.output;
	char buf[512];
	cr_expect_eq(status_of(&r, "perfdata.status"), -ENOTSUP, "%s", out);
	cr_expect_eq(status_of(&r, "perfdata.final.status"), -ENOTSUP, "%s", out);
	cr_assert_not_null(jvm_field(&r, "perfdata.reason", buf, sizeof(buf)), "%s", out);
	cr_expect(strstr(buf, why), "reason '%s' lacks '%s'\n%s", buf, why, out);
	struct reading v = parse(&r, "perfdata.vminit");
	cr_expect(v.present && v.rc != 0, "a disabled mode gave a reading\n%s", out);
	cr_expect_null(strstr(out, "perfdata.start"), "%s", out);
	jvm_result_free(&r);
}

Test(no_perfdata, jdk17_g1) { check_disabled(17, "-XX:+UseG1GC", NULL, "-XX:-UsePerfData"); }
Test(no_perfdata, jdk17_serial_at_onload)
{
	struct jvm_result r = run(17, "-XX:+UseSerialGC", "-XX:-UsePerfData", NULL);
	cr_expect_eq(status_of(&r, "perfdata.onload.status"), -ENOTSUP, "%s", r.output);
	jvm_result_free(&r);
}
Test(no_perfdata, jdk17_without_flag_table)
{
	const char *env[] = { "HEAPPROBE_FAULTS=hide-flags", NULL };
	check_disabled(17, "-XX:+UseG1GC", env, "no PerfMemory region although the heap exists");
}
Test(no_perfdata, jdk11_parallel) { check_disabled(11, "-XX:+UseParallelGC", NULL, "-XX:-UsePerfData"); }
Test(no_perfdata, jdk25_z) { check_disabled(25, "-XX:+UseZGC", NULL, "-XX:-UsePerfData"); }
