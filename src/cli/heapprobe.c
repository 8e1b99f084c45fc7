/* heapprobe: profile a running JVM without JDK tools.
 *
 *   heapprobe PID start [OPTIONS]      heapprobe PID dump [FILE] [OPTIONS]
 *   heapprobe PID stop [FILE]          heapprobe PID status | info
 *   heapprobe PID -d SECONDS -f FILE [OPTIONS]
 *   heapprobe top PID [OPTIONS]
 *
 * It speaks HotSpot's attach protocol itself (attach.c), loads
 * libheapprobe.so into the JVM by absolute path and sends the agent its
 * commands; the agent answers in a file of a private directory in the
 * JVM's /tmp (session.c), and profiles asked for with FILE are written
 * there by the JVM and copied to FILE by us, as the user who typed the
 * command. Exit codes: attach.h, enum hp_cli_exit. */
#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/formats.h"
#include "cli/session.h"
#include "cli/top.h"

static const char usage[] =
	"usage: heapprobe [--lib PATH] [--timeout SECONDS] PID COMMAND [ARGS]\n"
	"       heapprobe [--lib PATH] [--timeout SECONDS] top PID [OPTIONS]\n"
	"       heapprobe list             the JVMs you may attach to (jps without a JDK)\n"
	"commands:\n"
	"  start [OPTIONS]             start profiling (agent options, comma- or space-separated: interval=64k file=/p.pb.gz ...)\n"
	"  dump [FILE] [OPTIONS]       write a profile now: to FILE here (format from its extension or format=),\n"
	"                              else where the profiler writes in the JVM\n"
	"  stop [FILE]                 last profile (to FILE here, else the profiler's file) and stop\n"
	"  status                      whether a profiler runs, its options, samples, sites, where profiles went\n"
	"  info                        the JVM's heap-usage report (every source heapprobe reads, validated)\n"
	"  -d SECONDS -f FILE [OPTIONS]    start, wait SECONDS (Ctrl-C: earlier), write FILE, stop\n"
	"  top PID [interval=SIZE]     live view of the top live sites, refreshed after each collection; q or Ctrl-C quits\n"
	"FILE extensions: .pb.gz .pprof (pprof), .html, .jfr, .collapsed (collapsed stacks), .txt (text report); others: pprof\n"
	"exit codes: 0 ok, 1 the JVM refused or failed the command, 2 usage, 3 no such process, 4 not a Java VM,\n"
	"  5 permission (a JVM of another user), 6 attach disabled in the JVM, 7 JVM older than JDK 11 (no JEP 331),\n"
	"  8 the JVM did not answer in time, 9 local error (library, writing FILE)\n";

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

/* format= from FILE's name (agent/formats.c), "" when it says nothing. */
static const char *format_of(const char *file)
{
	int f = hp_format_of_path(file);
	return f < 0 ? "" : hp_formats[f].name;
}

/* argv[from..] joined with ',' (each may itself hold several options). */
static char *join_options(int argc, char **argv, int from)
{
	size_t len = 1;
	for (int i = from; i < argc; i++)
		len += strlen(argv[i]) + 1;
	char *s = calloc(1, len);
	for (int i = from; s && i < argc; i++) {
		if (i > from)
			strcat(s, ",");
		strcat(s, argv[i]);
	}
	return s;
}

static bool has_option(const char *opts, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = opts; p && *p;) {
		if (!strncmp(p, name, n) && (p[n] == '=' || p[n] == ',' || p[n] == '\0'))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

/* Prints the agent's answer: to stdout for answers asked for (status,
 * info), else to stderr as the agent's messages. */
static void show(const char *answer, FILE *to)
{
	if (answer && *answer) {
		fputs(answer, to);
		if (answer[strlen(answer) - 1] != '\n')
			fputc('\n', to);
	}
}

static int fail(struct hp_session *s, int rc, const char *err, const char *answer)
{
	if (answer && *answer)
		show(answer, stderr);
	fprintf(stderr, "heapprobe: %s\n", err);
	if (s)
		hp_session_close(s);
	return rc;
}

/* dump or stop with FILE: the agent writes into our private directory,
 * we copy to FILE. */
static int write_to(struct hp_session *s, const char *verb, const char *file, const char *extra)
{
	char err[1024], jvm_out[300], opts[2048];
	hp_session_jvm_file(s, "out", jvm_out, sizeof(jvm_out));
	const char *fmt = format_of(file);
	bool own_format = extra && has_option(extra, "format");
	snprintf(opts, sizeof(opts), "%s,file=%s%s%s%s%s", verb, jvm_out, !own_format && fmt[0] ? ",format=" : "",
		 !own_format ? fmt : "", extra && *extra ? "," : "", extra ? extra : "");
	char *answer = NULL;
	int rc = hp_session_agent(s, opts, &answer, err, sizeof(err));
	if (rc) {
		/* The agent may still have written something (a failed stop
		 * writes its fallback): whatever is there is fetched. */
		char wrote[2048], err2[512];
		if (hp_session_fetch(s, "out", file, wrote, sizeof(wrote), err2, sizeof(err2)) == 0)
			fprintf(stderr, "heapprobe: wrote %s\n", wrote);
		rc = fail(NULL, rc, err, answer);
		free(answer);
		return rc;
	}
	free(answer);
	char wrote[2048];
	rc = hp_session_fetch(s, "out", file, wrote, sizeof(wrote), err, sizeof(err));
	if (rc)
		return fail(NULL, rc, err, NULL);
	printf("heapprobe: wrote %s\n", wrote);
	return 0;
}

static int simple(struct hp_session *s, const char *opts, FILE *to)
{
	char err[1024];
	char *answer = NULL;
	int rc = hp_session_agent(s, opts, &answer, err, sizeof(err));
	if (rc) {
		rc = fail(NULL, rc, err, answer);
	} else {
		show(answer, to);
	}
	free(answer);
	return rc;
}

/* -d SECONDS -f FILE: the profiler's own file= is our private directory,
 * so that a JVM ending during the wait leaves its exit profile where we
 * fetch it from. */
static int timed(struct hp_session *s, int seconds, const char *file, const char *extra)
{
	char err[1024], opts[2048], jvm_out[300];
	int running = hp_session_running(s, err, sizeof(err));
	if (running < 0)
		return fail(NULL, HP_EXIT_REFUSED, err, NULL);
	if (running) {
		fprintf(stderr, "heapprobe: a profiler already runs in JVM %d: use 'dump FILE', or 'stop' it first\n",
			(int)s->t.pid);
		return HP_EXIT_REFUSED;
	}
	hp_session_jvm_file(s, "out", jvm_out, sizeof(jvm_out));
	const char *fmt = format_of(file);
	bool own_format = has_option(extra, "format");
	snprintf(opts, sizeof(opts), "file=%s%s%s%s%s", jvm_out, !own_format && fmt[0] ? ",format=" : "",
		 !own_format ? fmt : "", *extra ? "," : "", extra);
	char *answer = NULL;
	int rc = hp_session_agent(s, opts, &answer, err, sizeof(err));
	if (rc) {
		rc = fail(NULL, rc, err, answer);
		free(answer);
		return rc;
	}
	free(answer);
	fprintf(stderr, "heapprobe: profiling JVM %d for %d s (Ctrl-C writes the profile earlier)\n", (int)s->t.pid,
		seconds);
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += seconds;
	while (!interrupted) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > until.tv_sec || (now.tv_sec == until.tv_sec && now.tv_nsec >= until.tv_nsec))
			break;
		if (kill(s->t.pid, 0) != 0 && errno == ESRCH)
			break;
		usleep(100000);
	}
	if (kill(s->t.pid, 0) != 0 && errno == ESRCH) {
		/* The JVM ended: its exit profile is in our directory (when it
		 * shared our mount namespace; a container's /tmp went with it). */
		char wrote[2048];
		if (hp_session_fetch(s, "out", file, wrote, sizeof(wrote), err, sizeof(err)) == 0) {
			printf("heapprobe: JVM %d ended; wrote its exit profile to %s\n", (int)s->t.pid, wrote);
			return 0;
		}
		fprintf(stderr, "heapprobe: JVM %d ended before the profile was asked for, and its exit profile is not "
			"reachable: %s\n", (int)s->t.pid, err);
		return HP_EXIT_NO_PROCESS;
	}
	return write_to(s, "stop", file, NULL);
}

/* `heapprobe list`: the JVMs this user may attach to (jps for runtimes
 * without it), with what jvmstat says of them. */
static int list_jvms(void)
{
	DIR *d = opendir("/proc");
	if (!d) {
		perror("heapprobe: /proc");
		return HP_EXIT_LOCAL;
	}
	printf("%8s %8s %-10s %-6s %-10s %s\n", "PID", "NSPID", "USER", "JAVA", "HEAPPROBE", "COMMAND");
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == getpid())
			continue;
		struct hp_target t;
		char err[512];
		if (hp_target_open((pid_t)pid, &t, err, sizeof(err)))
			continue;
		char maps[64], line[1024];
		snprintf(maps, sizeof(maps), "/proc/%ld/maps", pid);
		FILE *f = fopen(maps, "r");
		bool ours = false;
		while (f && !ours && fgets(line, sizeof(line), f))
			ours = strstr(line, "/libheapprobe") != NULL;
		if (f)
			fclose(f);
		struct hp_jvmstat js;
		char ver[32] = "?", cmd[160] = "", caps[80] = "";
		if (hp_jvmstat_open(&t, &js) == 0) {
			hp_jvmstat_string(&js, "java.property.java.vm.specification.version", ver, sizeof(ver));
			hp_jvmstat_string(&js, "sun.rt.javaCommand", cmd, sizeof(cmd));
			hp_jvmstat_string(&js, "sun.rt.jvmCapabilities", caps, sizeof(caps));
			hp_jvmstat_close(&js);
		}
		struct passwd *pw = getpwuid(t.uid);
		char user[32];
		snprintf(user, sizeof(user), "%s", pw ? pw->pw_name : "?");
		printf("%8ld %8d %-10s %-6s %-10s %s%s\n", pid, (int)t.nspid, user, ver, ours ? "loaded" : "-",
		       cmd[0] ? cmd : t.comm, caps[0] == '0' ? "  (attach disabled)" : "");
	}
	closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	const char *lib = NULL;
	int timeout_s = 30;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (!strcmp(argv[i], "--help")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--lib") && i + 1 < argc) {
			lib = argv[++i];
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || v < 1 || v > 3600) {
				fprintf(stderr, "heapprobe: --timeout is seconds from 1 to 3600, not '%s'\n", argv[i]);
				return HP_EXIT_USAGE;
			}
			timeout_s = (int)v;
		} else {
			fprintf(stderr, "heapprobe: unknown option '%s'\n%s", argv[i], usage);
			return HP_EXIT_USAGE;
		}
	}
	if (i < argc && !strcmp(argv[i], "-h")) {
		fputs(usage, stdout);
		return 0;
	}
	if (i < argc && !strcmp(argv[i], "list"))
		return list_jvms();
	bool top = i < argc && !strcmp(argv[i], "top");
	if (top)
		i++;
	if (i >= argc || (!top && i + 1 >= argc)) {
		fputs(usage, stderr);
		return HP_EXIT_USAGE;
	}
	char *end;
	long pid = strtol(argv[i], &end, 10);
	if (*end || pid <= 0 || pid > 0x7fffffff) {
		fprintf(stderr, "heapprobe: '%s' is not a process id\n%s", argv[i], usage);
		return HP_EXIT_USAGE;
	}
	i++;
	const char *cmd = top ? "top" : argv[i++];
	/* Arguments are checked before anything touches the JVM. */
	int seconds = 0;
	const char *file = NULL;
	int opt_from = i;
	if (!strcmp(cmd, "-d")) {
		if (i >= argc || (seconds = atoi(argv[i])) <= 0 || seconds > 86400 * 30) {
			fprintf(stderr, "heapprobe: -d takes a number of seconds from 1 to 2592000\n");
			return HP_EXIT_USAGE;
		}
		i++;
		if (i + 1 >= argc || strcmp(argv[i], "-f")) {
			fprintf(stderr, "heapprobe: -d SECONDS needs -f FILE\n");
			return HP_EXIT_USAGE;
		}
		file = argv[i + 1];
		opt_from = i + 2;
	} else if (!strcmp(cmd, "dump") || !strcmp(cmd, "stop")) {
		if (i < argc && !strchr(argv[i], '=')) {
			file = argv[i];
			opt_from = i + 1;
		}
		if (!strcmp(cmd, "stop") && opt_from < argc) {
			fprintf(stderr, "heapprobe: stop takes only a FILE\n");
			return HP_EXIT_USAGE;
		}
	} else if (!strcmp(cmd, "status") || !strcmp(cmd, "info")) {
		if (i < argc) {
			fprintf(stderr, "heapprobe: %s takes no arguments\n", cmd);
			return HP_EXIT_USAGE;
		}
	} else if (strcmp(cmd, "start") && strcmp(cmd, "top")) {
		fprintf(stderr, "heapprobe: unknown command '%s'\n%s", cmd, usage);
		return HP_EXIT_USAGE;
	}
	char *extra = join_options(argc, argv, opt_from);
	if (!extra)
		return HP_EXIT_LOCAL;
	if (file && !*file) {
		fprintf(stderr, "heapprobe: FILE is empty\n");
		return HP_EXIT_USAGE;
	}

	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	char dump_opts[2100];
	snprintf(dump_opts, sizeof(dump_opts), "dump%s%s", *extra ? "," : "", extra);
	struct hp_session s;
	char err[1024];
	int rc = hp_session_open(&s, (int)pid, lib, timeout_s * 1000, err, sizeof(err));
	if (rc) {
		free(extra);
		return fail(&s, rc, err, NULL);
	}
	if (!strcmp(cmd, "start"))
		rc = simple(&s, extra, stderr);
	else if (!strcmp(cmd, "dump"))
		rc = file ? write_to(&s, "dump", file, extra) : simple(&s, dump_opts, stderr);
	else if (!strcmp(cmd, "stop"))
		rc = file ? write_to(&s, "stop", file, NULL) : simple(&s, "stop", stderr);
	else if (!strcmp(cmd, "status"))
		rc = simple(&s, "status", stdout);
	else if (!strcmp(cmd, "info"))
		rc = simple(&s, "info", stdout);
	else if (!strcmp(cmd, "-d"))
		rc = timed(&s, seconds, file, extra);
	else
		rc = hp_top_run(&s, extra, &interrupted);
	hp_session_close(&s);
	free(extra);
	return rc;
}
