/* heapprobe.jar (scripts/jar.sh, the linux-x64 natives of this build):
 * -javaagent profiles as -agentpath does, java -jar is the heapprobe
 * command, the Java API (examples/HeapProbeApi.java, compiled against the
 * jar), and the faults: a platform without natives, nowhere to extract. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jvmrun.h"

static char workdir[512];

static void make_workdir(void)
{
	snprintf(workdir, sizeof(workdir), "%s/jar-XXXXXX", HP_BUILD_DIR);
	cr_assert(mkdtemp(workdir));
}

static double truth(const struct jvm_result *r, const char *key)
{
	char buf[64];
	return jvm_field(r, key, buf, sizeof(buf)) ? atof(buf) : -1;
}

/* RetainedSet profiled by `how` ("agentpath" or "javaagent"): its two
 * kept sites' live bytes, and the truth. */
static void retained(const char *how, const char *gc, double site[2], double want[2])
{
	char opt[1024], path[700];
	snprintf(path, sizeof(path), "%s/%s.collapsed", workdir, how);
	if (strcmp(how, "agentpath") == 0)
		snprintf(opt, sizeof(opt), "-agentpath:%s=interval=64k,format=collapsed,file=%s", HP_AGENT_PATH, path);
	else
		snprintf(opt, sizeof(opt), "-javaagent:%s=interval=64k,format=collapsed,file=%s", HP_JAR, path);
	const char *argv[] = { HP_JAVA, "-Xmx512m", gc, opt, "-Djava.io.tmpdir=/tmp", "-cp", HP_TEST_CLASSES,
			       "RetainedSet", NULL };
	struct jvm_result r = jvm_run(argv, NULL, 180);
	cr_assert_eq(r.exit_code, 0, "%s: java exited %d\n%s", how, r.exit_code, r.output);
	site[0] = collapsed_sum(path, "RetainedSet.keepBytes", NULL);
	site[1] = collapsed_sum(path, "RetainedSet.keepLongs", NULL);
	want[0] = truth(&r, "truth.keepBytes");
	want[1] = truth(&r, "truth.keepLongs");
	jvm_result_free(&r);
}

/* The same program by -agentpath and by -javaagent: the same sites, each
 * within its sampling error of the truth (keepBytes ~640 samples at 64k:
 * 95% within ~8%; keepLongs ~390: ~10%; the bounds are test_profiler's),
 * and of each other. */
static void same_as_agentpath(const char *gc)
{
	make_workdir();
	double a[2], j[2], ta[2], tj[2];
	retained("agentpath", gc, a, ta);
	retained("javaagent", gc, j, tj);
	for (int i = 0; i < 2; i++) {
		double lo = i ? 0.7 : 0.8, hi = i ? 1.3 : 1.2;
		cr_expect(a[i] > lo * ta[i] && a[i] < hi * ta[i], "%s -agentpath site %d: %.0f vs truth %.0f", gc, i, a[i],
			  ta[i]);
		cr_expect(j[i] > lo * tj[i] && j[i] < hi * tj[i], "%s -javaagent site %d: %.0f vs truth %.0f", gc, i, j[i],
			  tj[i]);
		cr_expect(j[i] > (lo - 0.1) * a[i] && j[i] < (hi + 0.1) * a[i], "%s site %d: -javaagent %.0f vs "
			  "-agentpath %.0f", gc, i, j[i], a[i]);
	}
}

Test(jar, javaagent_profiles_as_agentpath_g1, .timeout = 300) { same_as_agentpath("-XX:+UseG1GC"); }
Test(jar, javaagent_profiles_as_agentpath_z, .timeout = 300) { same_as_agentpath("-XX:+UseZGC"); }

Test(jar, java_jar_is_the_heapprobe_command, .timeout = 300)
{
	make_workdir();
	char stop[600], log[600], out[700];
	snprintf(stop, sizeof(stop), "%s/stop", workdir);
	snprintf(log, sizeof(log), "%s/jvm.log", workdir);
	snprintf(out, sizeof(out), "%s/attached.collapsed", workdir);
	pid_t child = fork();
	if (child == 0) {
		FILE *f = freopen(log, "w", stdout);
		(void)f;
		dup2(1, 2);
		execl(HP_JAVA, HP_JAVA, "-Xmx256m", "-cp", HP_TEST_CLASSES, "CliTarget", stop, "4096", "120", (char *)NULL);
		_exit(127);
	}
	bool ready = jvm_wait_output(log, "ready", child, 30);
	cr_assert(ready, "CliTarget never ready");
	struct jvm_result s = jvm_sh("%s -jar %s %d status 2>&1", HP_JAVA, HP_JAR, (int)child);
	cr_expect_eq(s.exit_code, 0, "%s", s.output);
	cr_expect(strstr(s.output, "profiler: not running"), "%s", s.output);
	jvm_result_free(&s);
	s = jvm_sh("%s -jar %s %d -d 2 -f %s interval=64k 2>&1", HP_JAVA, HP_JAR, (int)child, out);
	cr_expect_eq(s.exit_code, 0, "%s", s.output);
	cr_expect_gt(collapsed_sum(out, "CliTarget.keep", NULL), 0, "%s", s.output);
	jvm_result_free(&s);
	s = jvm_sh("%s -jar %s 999999 status 2>&1", HP_JAVA, HP_JAR);
	cr_expect_eq(s.exit_code, 3, "no such process: exit 3\n%s", s.output);
	jvm_result_free(&s);
	FILE *f = fopen(stop, "w");
	if (f)
		fclose(f);
	jvm_wait(child, 60);
}

Test(jar, the_java_api_example, .timeout = 300)
{
	make_workdir();
	struct jvm_result c = jvm_sh("javac -cp %s -d %s %s/examples/HeapProbeApi.java 2>&1", HP_JAR, workdir,
				     HP_SOURCE_DIR);
	cr_assert_eq(c.exit_code, 0, "the example does not compile against the jar\n%s", c.output);
	jvm_result_free(&c);
	char cp[1200], out[700];
	snprintf(cp, sizeof(cp), "%s:%s", HP_JAR, workdir);
	snprintf(out, sizeof(out), "%s/api.collapsed", workdir);
	const char *argv[] = { HP_JAVA, "-Xmx256m", "-cp", cp, "HeapProbeApi", out, NULL };
	struct jvm_result r = jvm_run(argv, NULL, 180);
	cr_assert_eq(r.exit_code, 0, "%s", r.output);
	/* 20 000 byte[1024] kept: ~20.8 MB live after System.gc(). */
	double live = truth(&r, "live.bytes");
	cr_expect(live > 20e6 && live < 64e6, "live after GC %.0f\n%s", live, r.output);
	char src[64];
	cr_expect(jvm_field(&r, "live.source", src, sizeof(src)) && src[0], "%s", r.output);
	cr_expect(strstr(r.output, "bad option refused: heapprobe: bad value in option 'interval=-1'"), "%s", r.output);
	double kept = collapsed_sum(out, NULL, "HeapProbeApi.main");
	cr_expect(kept > 14e6 && kept < 28e6, "dumped profile: %.0f bytes under HeapProbeApi.main\n%s", kept, r.output);
	jvm_result_free(&r);
}

Test(jar, an_unsupported_platform_leaves_the_jvm_running, .timeout = 120)
{
	const char *argv[] = { HP_JAVA, "-Dos.arch=sparcv9", "-javaagent:" HP_JAR, "-version", NULL };
	struct jvm_result r = jvm_run(argv, NULL, 60);
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	cr_expect(strstr(r.output, "heapprobe: Linux on sparcv9 is not supported") &&
		  strstr(r.output, "the application runs without heapprobe"), "%s", r.output);
	jvm_result_free(&r);
}

Test(jar, nowhere_to_extract_says_why_for_each_place, .timeout = 120)
{
	make_workdir();
	/* A place that cannot be written is passed over for the next... */
	char opt[700];
	snprintf(opt, sizeof(opt), "-Djava.io.tmpdir=%s", workdir);
	const char *ok[] = { HP_JAVA, "-Dheapprobe.dir=/proc/no", opt, "-javaagent:" HP_JAR "=info", "-version", NULL };
	struct jvm_result r = jvm_run(ok, NULL, 60);
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	cr_expect(strstr(r.output, "status.vmstructs: ok"), "fell back to java.io.tmpdir\n%s", r.output);
	jvm_result_free(&r);
	/* ...and when none can, each refusal is named. */
	const char *none[] = { HP_JAVA, "-Dheapprobe.dir=/proc/no", "-Djava.io.tmpdir=/proc/no", "-Duser.home=/proc/no",
			       "-javaagent:" HP_JAR, "-version", NULL };
	r = jvm_run(none, NULL, 60);
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	cr_expect(strstr(r.output, "heapprobe: nowhere to extract the natives") &&
		  strstr(r.output, "/proc/no/heapprobe-uid") && strstr(r.output, "/proc/no/.cache/heapprobe-uid") &&
		  strstr(r.output, "the application runs without heapprobe"), "%s", r.output);
	jvm_result_free(&r);
}
