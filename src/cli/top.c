#include "cli/top.h"
#include "agent/units.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

/* The terminal as we found it, restored on every way out. */
static struct termios saved;
static bool raw_on;

static void term_raw(void)
{
	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved) != 0)
		return;
	struct termios t = saved;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0)
		raw_on = true;
	/* the alternate screen, cursor hidden */
	fputs("\033[?1049h\033[?25l", stdout);
	fflush(stdout);
}

static void term_restore(void)
{
	if (raw_on)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	raw_on = false;
	if (isatty(STDOUT_FILENO)) {
		fputs("\033[?25h\033[?1049l", stdout);
		fflush(stdout);
	}
}

/* One screen from the agent's tab-separated answer (sampler.c, write_top). */
static void render(const struct hp_session *s, char *answer, long long collections, int cols, int rows)
{
	char line[4096];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	char hms[16], when[32];
	strftime(hms, sizeof(hms), "%H:%M:%S", localtime(&ts.tv_sec));
	snprintf(when, sizeof(when), "%s.%03d", hms, (int)(ts.tv_nsec / 1000000));
	fputs("\033[H\033[2J", stdout);
	int used = 0;
#define OUT(...)                                                                  \
	do {                                                                      \
		snprintf(line, sizeof(line), __VA_ARGS__);                        \
		if ((int)strlen(line) > cols)                                     \
			line[cols] = '\0';                                        \
		fputs(line, stdout);                                              \
		fputs("\r\n", stdout);                                            \
		used++;                                                           \
	} while (0)
	char jv[16] = "";
	if (s->java_feature)
		snprintf(jv, sizeof(jv), ", Java %d", s->java_feature);
	/* Refreshed after each collection (the caller polls jvmstat's
	 * collector counters; `collections` is their sum, -1 without them). */
	OUT("\033[1mheapprobe top\033[0m  JVM %d%s  refreshed %s%s   q: quit", (int)s->t.pid, jv, when,
	    collections >= 0 ? " after a collection" : " (every 2 s: no jvmstat counters)");
	int shown = 0, suspects = 0;
	bool header = false;
	for (char *save, *l = strtok_r(answer, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *f[10] = { 0 };
		int nf = 0;
		for (char *save2, *x = strtok_r(l, "\t", &save2); x && nf < 10; x = strtok_r(NULL, "\t", &save2))
			f[nf++] = x;
		if (nf >= 5 && !strcmp(f[0], "heap")) {
			char a[32];
			hp_bytes_str(atof(f[1]), a, sizeof(a));
			/* Only a full collection's or a marking's figure is the
			 * live heap; the others count garbage too, and say so. */
			if (!(atof(f[1]) > 0))
				OUT("live heap: no collection yet");
			else if (!strcmp(f[2], "after-full-gc") || !strcmp(f[2], "marked-live"))
				OUT("live heap %s (%s, from %s, collection #%s)", a, f[2], f[3], f[4]);
			else if (!strcmp(f[2], "after-concurrent-cycle"))
				OUT("heap when the last cycle ended %s (what was allocated during it counted, live or not; "
				    "from %s, collection #%s)", a, f[3], f[4]);
			else
				OUT("heap after the last collection %s (%s: dead old objects counted; from %s, collection #%s)",
				    a, f[2], f[3], f[4]);
		} else if (nf >= 7 && !strcmp(f[0], "view")) {
			char a[32], lo[32], hi[32], r[32];
			hp_bytes_str(atof(f[1]), a, sizeof(a));
			hp_bytes_str(atof(f[2]), lo, sizeof(lo));
			hp_bytes_str(atof(f[3]), hi, sizeof(hi));
			hp_bytes_str(atof(f[4]), r, sizeof(r));
			OUT("sampled: %s live now [95%% %s..%s] (verified by markings, estimated since); %s recent "
			    "(sampled since, not yet seen by a marking); "
			    "%s samples, %s markings", a, lo, hi, r, f[5], f[6]);
		} else if (nf >= 9 && !strcmp(f[0], "site")) {
			if (!header) {
				OUT("%s", "");
				OUT("\033[7m%10s %10s %10s %10s  %-22s %s\033[0m", "LIVE", "+-95%", "RECENT",
				    "ALLOCATED", "CLASS", "SITE (leaf first)");
				header = true;
			}
			if (used >= rows - 1)
				break;
			char v[32], pm[32], r[32], al[32];
			double in = atof(f[1]);
			hp_bytes_str(in, v, sizeof(v));
			hp_bytes_str((atof(f[3]) - atof(f[2])) / 2, pm, sizeof(pm));
			hp_bytes_str(atof(f[5]), r, sizeof(r));
			hp_bytes_str(atof(f[6]), al, sizeof(al));
			/* frames leaf first, shown as leaf < caller < ... */
			char frames[2048];
			size_t n = 0;
			frames[0] = '\0';
			for (char *save3, *fr = strtok_r(f[8], ";", &save3); fr && n + 4 < sizeof(frames);
			     fr = strtok_r(NULL, ";", &save3))
				n += (size_t)snprintf(frames + n, sizeof(frames) - n, "%s%s", n ? " < " : "", fr);
			OUT("%10s %10s %10s %10s  %-22.22s %s", v, pm, r, al, f[7][0] ? f[7] : "-", frames);
			shown++;
		} else if (nf >= 8 && !strcmp(f[0], "suspect")) {
			if (!suspects) {
				OUT("%s", "");
				OUT("\033[1;31mleak suspects\033[0m (verified live bytes still rising beyond sampling error)");
			}
			char g[32], lv[32];
			hp_bytes_str(atof(f[2]), g, sizeof(g));
			hp_bytes_str(atof(f[5]), lv, sizeof(lv));
			OUT("%3s. %-40s +%s/min  z=%s  live %s  %s%s", f[1], f[7], g, f[3], lv, f[6],
			    nf >= 9 && !strcmp(f[8], "replacing") ? "  (late attach: may be older objects being replaced)"
								    : "");
			suspects++;
		} else if (nf >= 2 && !strcmp(f[0], "error")) {
			OUT("error: %s", f[1]);
		}
	}
	if (!shown)
		OUT("no live sites sampled yet");
#undef OUT
	fflush(stdout);
}

int hp_top_run(struct hp_session *s, const char *extra, volatile sig_atomic_t *stop)
{
	char err[1024];
	int running = hp_session_running(s, err, sizeof(err));
	if (running < 0) {
		fprintf(stderr, "heapprobe: %s\n", err);
		return HP_EXIT_REFUSED;
	}
	bool started = false;
	if (!running) {
		/* Our profiler for as long as we look: its file= is our private
		 * directory, so a JVM ending meanwhile leaves nothing behind in
		 * its working directory. */
		char opts[2048], exitfile[300];
		hp_session_jvm_file(s, "exit", exitfile, sizeof(exitfile));
		snprintf(opts, sizeof(opts), "file=%s%s%s", exitfile, *extra ? "," : "", extra);
		char *answer = NULL;
		int rc = hp_session_agent(s, opts, &answer, err, sizeof(err));
		if (rc) {
			if (answer && *answer)
				fputs(answer, stderr);
			fprintf(stderr, "heapprobe: %s\n", err);
			free(answer);
			return rc;
		}
		free(answer);
		started = true;
	} else if (*extra) {
		fprintf(stderr, "heapprobe: a profiler already runs in JVM %d; showing it (options '%s' not applied)\n",
			(int)s->t.pid, extra);
	}
	term_raw();
	int rc = 0;
	long long last_gc = -2;
	while (!*stop) {
		struct winsize ws = { 0 };
		int cols = 120, rows = 40;
		if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20 && ws.ws_row > 5)
			cols = ws.ws_col, rows = ws.ws_row;
		long long gc = s->js.map ? hp_jvmstat_collections(&s->js) : -1;
		char opts[32];
		snprintf(opts, sizeof(opts), "top=%d", rows > 8 ? rows - 6 : 2);
		char *answer = NULL;
		rc = hp_session_agent(s, opts, &answer, err, sizeof(err));
		if (rc) {
			free(answer);
			break;
		}
		render(s, answer, gc, cols, rows);
		free(answer);
		last_gc = gc;
		/* Until the next collection (jvmstat's counters, polled), at
		 * most 10 s; every 2 s without collector counters (no
		 * perfdata, or none for this collector: ZGC on JDK 11, where
		 * the screen said "every 2 s" and came every 10). A key or a
		 * signal ends the wait. */
		bool quit = false;
		for (int waited = 0; !*stop && !quit; waited += 200) {
			struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
			int pr = poll(&p, raw_on ? 1 : 0, 200);
			if (pr > 0) {
				char c;
				if (read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q' || c == 3))
					quit = true;
			}
			if (kill(s->t.pid, 0) != 0 && errno == ESRCH) {
				quit = true;
				rc = HP_EXIT_NO_PROCESS;
				snprintf(err, sizeof(err), "JVM %d ended", (int)s->t.pid);
			}
			long long g = s->js.map ? hp_jvmstat_collections(&s->js) : -1;
			if ((g >= 0 && g != last_gc) || waited >= (last_gc >= 0 ? 10000 : 2000))
				break;
		}
		if (quit)
			break;
	}
	term_restore();
	if (started && rc != HP_EXIT_NO_PROCESS) {
		char *answer = NULL;
		int src = hp_session_agent(s, "stop,discard", &answer, err, sizeof(err));
		free(answer);
		if (src) {
			fprintf(stderr, "heapprobe: could not stop the profiler top started: %s\n", err);
			return src;
		}
	}
	if (rc)
		fprintf(stderr, "heapprobe: %s\n", err);
	return rc;
}
