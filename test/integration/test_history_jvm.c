/* Live bytes over time and leak suspects, on real JVMs (test/java/
 * LeakTarget.java, no System.gc()): a slow leak amid a steady live set is
 * ranked first within a few markings; nothing leaking, no suspect at any
 * time; a leak that stops and a cache that levels off drop out; on G1,
 * ZGC and Parallel (mark=full: it has no concurrent marking). The text
 * report's contract, the HTML timeline in headless Chromium, and pprof
 * profiles that go tool pprof -diff_base compares. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jvmrun.h"

#define SECONDS "24"
#define LEAK_KIB_S "1024"

struct run {
	char dir[256];
	char *files[64];            /* periodic reports, oldest first */
	int nfiles;
	char last[512];             /* the profile at exit */
};

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* LeakTarget MODE with the agent writing `format` every 2 s to dir/p-%t.EXT
 * and at exit to dir/exit.EXT. */
static void run_target(struct run *r, const char *mode, const char *gc, const char *format, const char *ext,
		       const char *extra)
{
	snprintf(r->dir, sizeof(r->dir), "%s/hist-%s-%s-XXXXXX", HP_BUILD_DIR, mode, gc);
	cr_assert(mkdtemp(r->dir));
	/* The periodic profiles, then the one at exit under its own name: a
	 * second agent option set is not possible, so the exit profile is the
	 * last periodic file (written at VM death to the same pattern). */
	char agent[1024], gcopt[64];
	snprintf(agent, sizeof(agent), "-agentpath:%s=period=2,interval=64k,format=%s,file=%s/p-%%t.%s%s",
		 HP_AGENT_PATH, format, r->dir, ext, extra ? extra : "");
	snprintf(gcopt, sizeof(gcopt), "-XX:+Use%sGC", gc);
	const char *argv[] = { HP_JAVA, "-Xmx512m", gcopt, agent, "-cp", HP_TEST_CLASSES, "LeakTarget", mode, SECONDS,
			       LEAK_KIB_S, NULL };
	struct jvm_result j = jvm_run(argv, NULL, 180);
	cr_assert_eq(j.exit_code, 0, "LeakTarget %s on %s: %s", mode, gc, j.output);
	jvm_result_free(&j);
	DIR *d = opendir(r->dir);
	struct dirent *e;
	r->nfiles = 0;
	while ((e = readdir(d)) && r->nfiles < 64) {
		size_t l = strlen(e->d_name), el = strlen(ext);
		if (!strncmp(e->d_name, "p-", 2) && l > el && !strcmp(e->d_name + l - el, ext) && !strstr(e->d_name, ".tmp"))
			r->files[r->nfiles++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(r->files, (size_t)r->nfiles, sizeof(char *), by_name);
	cr_assert_geq(r->nfiles, 5, "only %d periodic profiles in %s", r->nfiles, r->dir);
	snprintf(r->last, sizeof(r->last), "%s/%s", r->dir, r->files[r->nfiles - 1]);
}

static void free_run(struct run *r)
{
	for (int i = 0; i < r->nfiles; i++)
		free(r->files[i]);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r->dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", r->dir);
}

/* The text report's suspects: the lines after "leak suspects:", which must
 * end the file. Returns the section (malloc'd) or NULL if the header is
 * missing. */
static char *suspects_of(const char *path)
{
	char *t = jvm_slurp(path);
	cr_assert(t, "no report %s", path);
	char *h = strstr(t, "\nleak suspects:\n");
	char *out = h ? strdup(h + strlen("\nleak suspects:\n")) : NULL;
	free(t);
	return out;
}

static int markings_of(const char *path)
{
	char *t = jvm_slurp(path);
	const char *h = t ? strstr(t, "\nhistory: ") : NULL;
	int n = h ? atoi(h + strlen("\nhistory: ")) : -1;
	free(t);
	return n;
}

/* Every suspect line is "<rank>. <pkg.Class.method> ..." */
static void check_lines(const char *sect, const char *path)
{
	int rank = 0;
	for (const char *l = sect; *l;) {
		const char *nl = strchr(l, '\n');
		cr_assert(nl, "suspect line without newline in %s", path);
		char want[16];
		snprintf(want, sizeof(want), "%d. ", ++rank);
		cr_expect(!strncmp(l, want, strlen(want)), "line '%.*s' of %s does not start with '%s'", (int)(nl - l), l,
			  path, want);
		l = nl + 1;
	}
}

static void leak_ranked_first(const char *gc, const char *extra)
{
	struct run r;
	run_target(&r, "leak", gc, "text", "txt", extra);
	int first_found = -1, markings_then = -1;
	for (int i = 0; i < r.nfiles; i++) {
		char path[600];
		snprintf(path, sizeof(path), "%s/%s", r.dir, r.files[i]);
		char *s = suspects_of(path);
		cr_assert(s, "%s has no 'leak suspects:' section", path);
		check_lines(s, path);
		if (first_found < 0 && !strncmp(s, "1. LeakTarget.leak ", 19)) {
			first_found = i;
			markings_then = markings_of(path);
		}
		/* once found, it stays first: the leak never stops */
		if (first_found >= 0)
			/* false failure ~0 per run: z ~ 8 at 3 markings, ~15 at 8 (1 MiB/s at 64k); docs/test-bounds.md */
			cr_expect(!strncmp(s, "1. LeakTarget.leak ", 19), "%s: the leak is not first:\n%s", path, s);
		free(s);
	}
	cr_expect_geq(first_found, 0, "LeakTarget.leak never ranked first on %s", gc);
	/* The test needs 3 markings; the leak (1 MiB/s at 64 KiB sampling)
	 * is measurable from the first one. */
	/* statistically ~0 (P(z < 4 at marking 3) ~ 2e-13); the marking cadence is timing, not derived; docs/test-bounds.md */
	cr_expect(markings_then >= 3 && markings_then <= 5, "found only at %d markings on %s", markings_then, gc);
	free_run(&r);
}

/* A steady live set turning over, garbage, nothing growing. A report's
 * suspects come from the last HP_HIST_WINDOW (8) marking records, so
 * reports a few markings apart judge nearly the same records and their
 * false alarms come together: the reports checked are the exit one and,
 * going back, the latest one whose window ends before the last checked
 * one's begins, three at most: windows that do not overlap, so two or
 * three independent judgments of the last 16-24 markings (a run has
 * 20-40; a site that rises for a reason, not by chance, rises in each). */
#define WINDOW 8
static void no_suspect(const char *gc, const char *extra)
{
	struct run r;
	run_target(&r, "none", gc, "text", "txt", extra);
	int checked = 0, next_at_most = -1;
	for (int i = r.nfiles - 1; i >= 0; i--) {
		char path[600];
		snprintf(path, sizeof(path), "%s/%s", r.dir, r.files[i]);
		int m = markings_of(path);
		char *s = suspects_of(path);
		cr_assert(s, "%s has no 'leak suspects:' section", path);
		check_lines(s, path);
		if (checked < 3 && (next_at_most < 0 || m <= next_at_most)) {
			/* false failure 9e-5 per run: at most 3 windows that do not overlap, 3.0e-5 each under N(0,1) z (P(z >= 4, z_recent >= 2)); docs/test-bounds.md */
			cr_expect_str_empty(s, "%s: a suspect where nothing leaks (%d markings):\n%s", path, m, s);
			checked++;
			next_at_most = m - WINDOW;
		}
		free(s);
	}
	cr_expect_geq(markings_of(r.last), 5, "too few markings to mean anything");
	/* How many markings a run has depends on the machine (ZGC's own
	 * cycles): a slower one had 2 windows, not 3 (a debootstrap'd root). */
	cr_expect_geq(checked, 2, "%d windows of %d markings checked: too few markings to judge", checked, WINDOW);
	free_run(&r);
}

/* Grew, then stopped growing: reported while growing, not at the end. */
static void stops_growing(const char *mode, const char *site, const char *gc, const char *extra)
{
	struct run r;
	run_target(&r, mode, gc, "text", "txt", extra);
	bool seen = false;
	char want[64];
	snprintf(want, sizeof(want), "1. %s ", site);
	for (int i = 0; i < r.nfiles; i++) {
		char path[600];
		snprintf(path, sizeof(path), "%s/%s", r.dir, r.files[i]);
		char *s = suspects_of(path);
		cr_assert(s, "%s has no 'leak suspects:' section", path);
		seen |= !strncmp(s, want, strlen(want));
		free(s);
	}
	/* false failure ~0 per run: a 1 MiB/s rise at 64k has z ~ 8 within 3 markings; docs/test-bounds.md */
	cr_expect(seen, "%s was never reported while it grew (%s)", site, gc);
	char *s = suspects_of(r.last);
	/* false failure ~3e-5 (stops) / ~6e-5 (plateau) per run: one window per turnover site under N(0,1) z; docs/test-bounds.md */
	cr_expect_str_empty(s, "%s still reported after it stopped growing (%s):\n%s", site, gc, s);
	free(s);
	free_run(&r);
}

TestSuite(history, .timeout = 240);

Test(history, leak_g1) { leak_ranked_first("G1", NULL); }
Test(history, leak_z) { leak_ranked_first("Z", NULL); }
Test(history, leak_parallel) { leak_ranked_first("Parallel", ",mark=full"); }
Test(history, none_g1) { no_suspect("G1", NULL); }
Test(history, none_z) { no_suspect("Z", NULL); }
Test(history, none_parallel) { no_suspect("Parallel", ",mark=full"); }
Test(history, leak_that_stops_g1) { stops_growing("stops", "LeakTarget.leak", "G1", NULL); }
Test(history, leak_that_stops_z) { stops_growing("stops", "LeakTarget.leak", "Z", NULL); }
Test(history, leak_that_stops_parallel) { stops_growing("stops", "LeakTarget.leak", "Parallel", ",mark=full"); }
Test(history, plateau_g1) { stops_growing("plateau", "LeakTarget.cacheFill", "G1", NULL); }
Test(history, plateau_z) { stops_growing("plateau", "LeakTarget.cacheFill", "Z", NULL); }
Test(history, plateau_parallel) { stops_growing("plateau", "LeakTarget.cacheFill", "Parallel", ",mark=full"); }

static bool have(const char *prog)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return system(cmd) == 0;
}

/* The HTML page's timeline and suspects table, drawn by headless Chromium:
 * the SVG and its areas in the DOM, the names as text, no script error;
 * a screenshot is left beside for a person to look at. */
Test(history, html_timeline_in_chromium)
{
	const char *chromium = have("chromium") ? "chromium" : have("chromium-browser") ? "chromium-browser" : NULL;
	if (!chromium)
		cr_skip_test("no chromium (scripts/setup.sh installs it)");
	struct run r;
	run_target(&r, "leak", "G1", "html", "html", NULL);
	char *page = jvm_slurp(r.last);
	cr_assert(page && strstr(page, "<svg id=\"timeline\""), "no timeline in %s", r.last);
	free(page);
	struct jvm_result j = jvm_sh("%s --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 "
				 "--virtual-time-budget=3000 --dump-dom 'file://%s' 2>%s/chromium.log", chromium, r.last, r.dir);
	cr_assert_eq(j.exit_code, 0, "chromium failed");
	cr_expect(strstr(j.output, "<svg id=\"timeline\""), "timeline not in the DOM");
	cr_expect(strstr(j.output, "<polygon class=\"site\""), "no site area drawn");
	cr_expect(strstr(j.output, "<polyline id=\"heap\""), "no heap line drawn");
	cr_expect(strstr(j.output, "class=\"marking\""), "no marking drawn");
	cr_expect(strstr(j.output, "<table id=\"suspects\""), "no suspects table");
	const char *t = strstr(j.output, "<table id=\"suspects\"");
	cr_expect(t && strstr(t, "LeakTarget.leak"), "the suspect is not named in the table");
	const char *legend = strstr(j.output, "<ul class=\"legend\">");
	cr_expect(legend && strstr(legend, "LeakTarget.leak") && strstr(legend, "LeakTarget.steady"),
		  "the legend does not name the sites as text");
	/* the flame graph script ran (it fills #fg) */
	cr_expect(strstr(j.output, "class=\"f"), "the page's script did not draw the flame graph");
	jvm_result_free(&j);
	char logp[400];
	snprintf(logp, sizeof(logp), "%s/chromium.log", r.dir);
	char *log = jvm_slurp(logp);
	cr_expect(!log || (!strstr(log, "Uncaught") && !strstr(log, "CONSOLE")), "script errors:\n%s", log);
	free(log);
	j = jvm_sh("%s --headless --no-sandbox --disable-gpu --window-size=1100,1900 --screenshot=%s/timeline.png "
	       "'file://%s' 2>/dev/null", chromium, HP_BUILD_DIR, r.last);
	struct stat st;
	char png[400];
	snprintf(png, sizeof(png), "%s/timeline.png", HP_BUILD_DIR);
	cr_expect(stat(png, &st) == 0 && st.st_size > 10000, "no screenshot");
	jvm_result_free(&j);
	free_run(&r);
}

/* Periodic pprof profiles carry their time; -diff_base between the first
 * and the last shows the leak's growth and not the steady set's. The time
 * read with -raw (to the nanosecond): -top prints it to the minute in Go
 * 1.23's pprof (setup.sh's), and two profiles 20 s apart then read the same
 * two times in three (a fresh root's run). */
Test(history, pprof_diff_base)
{
	struct run r;
	run_target(&r, "leak", "G1", "pprof", "pb.gz", NULL);
	char first[600];
	snprintf(first, sizeof(first), "%s/%s", r.dir, r.files[1]);  /* the second: a marking has verified it */
	struct jvm_result a = jvm_sh("%s tool pprof -raw %s 2>&1 | grep '^Time:'", jvm_go(), first);
	struct jvm_result b = jvm_sh("%s tool pprof -raw %s 2>&1 | grep '^Time:'", jvm_go(), r.last);
	cr_expect(a.exit_code == 0 && b.exit_code == 0 && strcmp(a.output, b.output) != 0,
		  "profiles do not carry distinct times: '%s' vs '%s'", a.output, b.output);
	jvm_result_free(&a);
	jvm_result_free(&b);
	struct jvm_result d = jvm_sh("%s tool pprof -sample_index=inuse_space -top -diff_base=%s %s 2>&1", jvm_go(), first,
				     r.last);
	cr_assert_eq(d.exit_code, 0, "%s", d.output);
	/* the top line of the diff is the leak, growing */
	const char *hdr = strstr(d.output, "flat  flat%");
	cr_assert(hdr, "%s", d.output);
	const char *line = strchr(hdr, '\n');
	cr_assert(line, "%s", d.output);
	line++;
	const char *nl = strchr(line, '\n');
	char top[512];
	snprintf(top, sizeof(top), "%.*s", nl ? (int)(nl - line) : (int)strlen(line), line);
	/* false failure ~0 per run: the leak grows ~20 MiB, the steady site's diff has sd ~2 MiB; docs/test-bounds.md */
	cr_expect(strstr(top, "LeakTarget.leak") && top[strspn(top, " ")] != '-', "diff's top line: '%s'\n%s", top,
		  d.output);
	jvm_result_free(&d);
	free_run(&r);
}
