/* The live view while the service works (test/java/LoadService.java): two
 * threads each turning a cache of byte[] over ~4 times a second, a few
 * GB/s of garbage between, no System.gc(). Every periodic profile written
 * during the load is compared with the cache's bytes by construction
 * (constant within a fraction of a % while it runs); the profile at exit,
 * written after the worker threads ended and their caches died, must show
 * next to nothing at the cache's site.
 *
 * Bounds. 96 MiB of ~1 KiB entries at interval=256k is ~380 samples'
 * worth: the Horvitz-Thompson sd alone is sqrt(256k/96M) = 5%, and the
 * estimate between markings adds the binomial noise of not knowing which
 * recent samples are alive: single profiles at 512k and 190 MiB ranged
 * -33%..+25% on ZGC (sd ~18%, docs/RESULTS.md, under load). The test takes the median of
 * the periodic profiles (period=2 over 16 s: ~7; generational ZGC's runs
 * are 24 s, its profiles waiting for majors: ~8), whose sd is ~7% at
 * most here, so +-25% is ~3.5 sigma, while the view before the estimate
 * read -100% on ZGC and Shenandoah (issue 26) and a model off by a factor
 * in its exponent reads 20-50% off. At exit the caches are dead and a marking is
 * asked for: <= 2% of the cache's size remains at its site (one sample is
 * ~0.5%). Serial and Parallel have no concurrent marking: the default,
 * mark=auto, asks them for a full collection before each profile (the
 * shutdown hook's too; mark=concurrent only that one), so theirs is
 * checked the same. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jvmrun.h"

#define MiB (1024.0 * 1024.0)

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median of v[0..n) (n > 0), v sorted in place. */
static double median_sorted(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The cache bytes by construction, on average over the truth lines before
 * the "end" line; the time of the last of them (`last_s`) and of the "end"
 * line (`end_s`), in epoch seconds. The workers stopped, and their caches
 * died, between the two: a profile written then is neither a periodic
 * view of the cache nor the exit's (Serial under load: one read 0 MiB,
 * rightly, and was counted as a periodic view -100% off). */
static double read_truth(const char *path, double *end_s, double *last_s)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "no truth file %s", path);
	char line[256];
	double cache_sum = 0;
	int n = 0;
	*end_s = *last_s = 0;
	while (fgets(line, sizeof(line), f)) {
		long long ms, cache;
		if (sscanf(line, "%lld %lld", &ms, &cache) != 2)
			continue;
		if (strstr(line, "end")) {
			*end_s = (double)ms / 1000;
			break;
		}
		if (cache > 0) {
			cache_sum += (double)cache;
			n++;
		}
		*last_s = (double)ms / 1000;
	}
	fclose(f);
	cr_assert(n > 10 && *end_s > 0, "truth file %s incomplete", path);
	return cache_sum / n;
}

/* each_bound > 0: also every periodic profile but the first (written
 * before any marking may have judged samples) within that share of the
 * truth. The median within med_bound. */
/* want_request: also a text profile beside each, and at least one
 * periodic one must say this in its `request:` (what preceded it). */
/* How long LoadService runs (its SECONDS): 16, longer where periodic
 * profiles wait for the collector's own majors (generational ZGC: 1-4 s
 * each, so 16 s left 3 profiles where check_load_java_req asks for 3). */
static const char *load_seconds = "16";

static void check_load_java_req(const char *java, const char *gc_flag, const char *gc_flag2, bool periodic_checked,
				bool exit_checked, double each_bound, double med_bound, const char *xmx,
				const char *cache_mib, const char *want_request)
{
	char dir[] = "/tmp/hp-load-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char agent[1024], truth_path[256], cp[512];
	if (want_request)
		snprintf(agent, sizeof(agent), "-agentpath:%s=period=2,interval=256k,format=collapsed+text,file=%s/p-%%t,log=%s/log",
			 HP_AGENT_PATH, dir, dir);
	else
		snprintf(agent, sizeof(agent), "-agentpath:%s=period=2,interval=256k,format=collapsed,file=%s/p-%%t.collapsed,log=%s/log",
			 HP_AGENT_PATH, dir, dir);
	snprintf(truth_path, sizeof(truth_path), "%s/truth", dir);
	snprintf(cp, sizeof(cp), "%s", HP_TEST_CLASSES);
	const char *argv[16];
	int na = 0;
	argv[na++] = java;
	argv[na++] = xmx;
	argv[na++] = gc_flag;
	if (gc_flag2)
		argv[na++] = gc_flag2;
	const char *rest[] = { agent, "-cp", cp, "LoadService", cache_mib, load_seconds, truth_path, NULL };
	for (int i = 0; i < 8; i++)
		argv[na++] = rest[i];
	struct jvm_result r = jvm_run(argv, NULL, 240);
	char *log = NULL;
	{
		char lp[256];
		snprintf(lp, sizeof(lp), "%s/log", dir);
		log = jvm_slurp(lp);
	}
	cr_assert_eq(r.exit_code, 0, "%s: exit %d\n%s\n%s", gc_flag, r.exit_code, r.output, log ? log : "");
	double end_s, last_s, truth = read_truth(truth_path, &end_s, &last_s);
	/* not the agent: the construction is +3.4% of nominal (1,075 B mean entries), sd 0.17%: 9.6 sd inside; docs/test-bounds.md */
	cr_expect(fabs(truth - atof(cache_mib) * MiB) < 0.05 * atof(cache_mib) * MiB, "cache by construction %.0f", truth);
	DIR *d = opendir(dir);
	cr_assert_not_null(d);
	double periodic[32], mtimes[32], outside[32];
	int np = 0, said = 0, texts = 0;
	double exit_view = -1, exit_mtime = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t nl = strlen(e->d_name);
		if (want_request && strncmp(e->d_name, "p-", 2) == 0 && nl > 4 && strcmp(e->d_name + nl - 4, ".txt") == 0) {
			char p[512];
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			struct stat st;
			cr_assert_eq(stat(p, &st), 0);
			char *t = jvm_slurp(p);
			if (t && (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9 <= last_s) {
				texts++;
				said += strstr(t, want_request) != NULL;
			}
			free(t);
			continue;
		}
		if (strncmp(e->d_name, "p-", 2) != 0 || !strstr(e->d_name, ".collapsed") || strstr(e->d_name, ".alloc"))
			continue;
		char p[512];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		struct stat st;
		cr_assert_eq(stat(p, &st), 0);
		double mt = (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
		double v = collapsed_sum(p, "LoadService.cacheEntry", NULL);
		if (mt >= end_s) {
			if (mt > exit_mtime) {
				exit_mtime = mt;
				exit_view = v;
			}
		} else if (mt <= last_s && np < 32) {
			mtimes[np] = mt;
			outside[np] = collapsed_sum(p, NULL, "") - v;      /* the whole view outside the cache */
			periodic[np++] = v;
		}
	}
	closedir(d);
	cr_assert_geq(np, 3, "%s: %d periodic profiles while running\n%s", gc_flag, np, log ? log : "");
	/* false failure ~0: Shenandoah's own cycles come every ~0.5 s under this load (43 in 20 s in bench/load/cost.sh's logs), a profile waits up to 3 s for one, and only one of ~7 must have found it; generational ZGC's majors 2.3-2.8 s apart, one of ~8; docs/test-bounds.md */
	cr_expect(!want_request || said >= 1, "%s: none of %d periodic text profiles says \"%s\"\n%s", gc_flag, texts,
		  want_request, log ? log : "");
	if (each_bound > 0) {
		int first = 0;
		for (int i = 1; i < np; i++)
			if (mtimes[i] < mtimes[first])
				first = i;
		for (int i = 0; i < np; i++)
			/* z 15% each (sd 1.4%, mean -0.8%, n=56, JDK 11/17/21), generational Shenandoah 25% (sd 4.7%): false failure ~0 and 6e-6 per run; docs/test-bounds.md */
			cr_expect(i == first || fabs(periodic[i] / truth - 1) < each_bound,
				  "%s: a periodic view of the cache %.1f MiB vs truth %.1f MiB (%+.1f%%, bound %.0f%%)\n%s",
				  gc_flag, periodic[i] / MiB, truth / MiB, 100 * (periodic[i] / truth - 1), 100 * each_bound,
				  log ? log : "");
	}
	/* What the view counts outside the cache: the JVM's own objects and
	 * LoadService's cache array, 0-4 MiB on every collector in
	 * bench/load (docs/load-whole-view.md), where generational ZGC's
	 * garbage counted alive made it 45-130 MiB (33 MiB in this test's
	 * configuration on the build before): 12 MiB on the median. */
	double rest_med = median_sorted(outside, np);
	cr_expect(rest_med < 12 * MiB, "%s: the view outside the cache %.1f MiB on the median (the JVM's own: a few)\n%s",
		  gc_flag, rest_med / MiB, log ? log : "");
	double med = median_sorted(periodic, np);       /* sorted: the message lists them in order */
	char all[512] = "";
	for (int i = 0; i < np; i++)
		snprintf(all + strlen(all), sizeof(all) - strlen(all), " %+.1f%%", 100 * (periodic[i] / truth - 1));
	cr_log_info("%s%s%s: periodic views of the cache vs truth:%s", gc_flag, gc_flag2 ? " " : "", gc_flag2 ? gc_flag2 : "",
		    all);
	/* median of ~8, sd = measured per-profile sd / 2 (JDK 17, n=16-24): z 7e-7, shenandoah 4e-6, parallel 2e-6, serial ~2e-4 (misses 1e-4); docs/test-bounds.md */
	cr_expect(!periodic_checked || fabs(med / truth - 1) < med_bound, "%s: median periodic view of the cache %.1f MiB vs truth %.1f MiB (%+.1f%%; each:%s)\n%s",
		  gc_flag, med / MiB, truth / MiB, 100 * (med / truth - 1), all, log ? log : "");
	if (exit_checked) {
		cr_expect(exit_view >= 0, "%s: no profile at exit", gc_flag);
		/* false failure 0 for a correct agent: no sample of a dead cache can be verified alive (0.0 MiB in 64 bench runs); docs/test-bounds.md */
		cr_expect(exit_view <= 0.02 * truth, "%s: exit profile shows %.1f MiB at the dead caches' site\n%s", gc_flag,
			  exit_view / MiB, log ? log : "");
	}
	free(log);
	jvm_result_free(&r);
	jvm_sh("rm -rf %s", dir);
}

static void check_load_java(const char *java, const char *gc_flag, const char *gc_flag2, bool periodic_checked,
			    bool exit_checked, double each_bound, double med_bound, const char *xmx, const char *cache_mib)
{
	check_load_java_req(java, gc_flag, gc_flag2, periodic_checked, exit_checked, each_bound, med_bound, xmx,
			    cache_mib, NULL);
}

static const char *test_java(void)
{
	return getenv("HP_TEST_JAVA") && *getenv("HP_TEST_JAVA") ? getenv("HP_TEST_JAVA") : HP_JAVA;
}

/* setup-jdks' JDK `feature` beside the agent's build directory (build/jdks/N). */
static void jdk_java(char *java, size_t cap, int feature)
{
	snprintf(java, cap, "%s", HP_AGENT_PATH);
	char *slash = strrchr(java, '/');
	cr_assert_not_null(slash);
	snprintf(slash, cap - (size_t)(slash - java), "/jdks/%d/bin/java", feature);
	cr_assert_eq(access(java, X_OK), 0, "no JDK %d at %s (scripts/setup-jdks.sh)", feature, java);
}

static void check_load_bounded(const char *gc_flag, bool periodic_checked, bool exit_checked, double each_bound)
{
	check_load_java(test_java(), gc_flag, NULL, periodic_checked, exit_checked, each_bound,
			each_bound > 0 ? each_bound / 3 : 0.25, "-Xmx2g", "96");
}

static void check_load(const char *gc_flag, bool periodic_checked, bool exit_checked)
{
	check_load_bounded(gc_flag, periodic_checked, exit_checked, 0);
}

TestSuite(load, .timeout = 300);

/* Single-generation ZGC (the default up to JDK 22): the recent part of the
 * view anchored to the cycle's own live bytes (estimate.c anchor_estimate)
 * holds every profile: -3% to +1% in bench/load/run.sh on 11, 17, 21 (was
 * -17% to +25%); 15% each, 5% the median, with the sampling error at
 * 256k on 96 MiB (~5% a profile) outside the anchored total. */
Test(load, z)
{
	check_load_bounded("-XX:+UseZGC", true, true, 0.15);
}

/* Single-generation Shenandoah: under load its own cycles come often, so
 * a periodic profile waits for the next one instead of asking for one on
 * top of them (marks.h, hp_marks_await_own; the requests cost the process
 * +10..+19% CPU with period=10, docs/load-cost.md). */
Test(load, shenandoah)
{
	check_load_java_req(test_java(), "-XX:+UseShenandoahGC", NULL, true, true, 0, 0.25, "-Xmx2g", "96",
			    "request: none: the collector's own cycle began after this profile was asked for");
}

/* The JVM exits while periodic profiles come every second and wait for
 * Shenandoah's own cycles: a marking asked for after the exit hook (a
 * periodic profile whose wait for an own cycle outlasted the program) was
 * still in System.gc() when the JVM stopped the collector's threads, and
 * the JVM hung at exit, VMDeath waiting for the dump lock: 1 of 3 such
 * runs with the build before the guard (sampler.c, prof.exiting), so 6
 * runs miss it with probability (2/3)^6 = 9%. */
Test(load, shenandoah_exits_while_profiles_wait, .timeout = 420)
{
	for (int run = 1; run <= 6; run++) {
		char dir[] = "/tmp/hp-load-exit-XXXXXX";
		cr_assert_not_null(mkdtemp(dir));
		char agent[1024], secs[8];
		snprintf(agent, sizeof(agent), "-agentpath:%s=period=1,file=%s/p-%%t.pb.gz,log=%s/log", HP_AGENT_PATH,
			 dir, dir);
		snprintf(secs, sizeof(secs), "%d", 3 + run % 3);
		const char *argv[] = { test_java(), "-Xmx2g", "-XX:+UseShenandoahGC", agent, "-cp", HP_TEST_CLASSES,
				       "LoadService", "96", secs, NULL };
		struct jvm_result r = jvm_run(argv, NULL, 60);
		char lp[256];
		snprintf(lp, sizeof(lp), "%s/log", dir);
		char *log = jvm_slurp(lp);
		/* not statistical: a correct agent never hangs the JVM; docs/test-bounds.md */
		cr_assert(!r.timed_out && r.exit_code == 0, "run %d: java exited %d%s\n%s\n%s", run, r.exit_code,
			  r.timed_out ? " (hung at exit: killed after 60 s)" : "", r.output, log ? log : "");
		cr_expect(log && strstr(log, "wrote"), "run %d: no profile written\n%s", run, log ? log : "");
		free(log);
		jvm_result_free(&r);
		jvm_sh("rm -rf %s", dir);
	}
}

Test(load, serial)
{
	check_load("-XX:+UseSerialGC", true, true);
}

Test(load, parallel)
{
	check_load("-XX:+UseParallelGC", true, true);
}

/* "12.3 MiB" and the like: bytes; -1 if not a size. */
static double top_size(const char *s)
{
	double v;
	char unit[8];
	if (sscanf(s, "%lf %7s", &v, unit) != 2)
		return -1;
	const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	for (int i = 0; i < 5; i++, v *= 1024)
		if (strcmp(unit, units[i]) == 0)
			return v;
	return -1;
}

/* Three runs of `heapprobe top` for 10 s on LoadService under `gc`, every
 * screen's view of the cache within `bound` of the truth; *requests (if
 * not NULL) gets the most markings top's screens asked for in a run,
 * from `heapprobe status` right after top; every run's screens show
 * `heap_line` (the heap figure, named for what it is: top.c). */
static void check_top(const char *gc, double bound, long *requests, const char *heap_line)
{
	int screens = 0, runs_with_screens = 0;
	if (requests)
		*requests = -1;
	for (int run = 0; run < 3; run++) {
		char dir[] = "/tmp/hp-load-top-XXXXXX";
		cr_assert_not_null(mkdtemp(dir));
		struct jvm_result r = jvm_sh(
			"cd %s && (%s -Xmx3g %s -agentpath:%s=period=4,interval=64k,format=collapsed,file=%s/p-%%t.collapsed,log=%s/log "
			"-cp %s LoadService 190 %d %s/truth > %s/out 2>&1 & jp=$!; sleep %d; "
			"timeout 10 %s --lib %s top $jp > %s/top.txt 2> %s/top.err < /dev/null; "
			"%s --lib %s $jp status > %s/status.txt 2>&1; wait $jp; echo java=$?)",
			dir, test_java(), gc, HP_AGENT_PATH, dir, dir, HP_TEST_CLASSES, requests ? 20 : 14, dir, dir,
			requests ? 5 : 2, HP_CLI,
			HP_AGENT_PATH, dir, dir,
			HP_CLI, HP_AGENT_PATH, dir);
		cr_assert(strstr(r.output, "java=0"), "run %d: %s", run, r.output);
		if (requests) {
			char sp[256];
			snprintf(sp, sizeof(sp), "%s/status.txt", dir);
			char *st = jvm_slurp(sp);
			const char *q = st ? strstr(st, ", heapprobe top ") : NULL;
			cr_assert_not_null(q, "run %d: no request count in heapprobe status:\n%s", run, st ? st : "");
			long n = strtol(q + 16, NULL, 10);
			if (n > *requests)
				*requests = n;
			free(st);
		}
		jvm_result_free(&r);
		/* the truth: "ms cache ..." lines, then "ms ... end" */
		char tp[256];
		snprintf(tp, sizeof(tp), "%s/truth", dir);
		FILE *f = fopen(tp, "r");
		cr_assert_not_null(f, "no truth file in %s", dir);
		static long long tms[8192];
		static double tcache[8192];
		int nt = 0;
		long long end_ms = 0;
		char line[256];
		while (fgets(line, sizeof(line), f)) {
			long long ms, cache;
			if (sscanf(line, "%lld %lld", &ms, &cache) != 2)
				continue;
			if (strstr(line, "end")) {
				end_ms = ms;
				break;
			}
			if (nt < 8192) {
				tms[nt] = ms;
				tcache[nt++] = (double)cache;
			}
		}
		fclose(f);
		cr_assert(nt > 10 && end_ms > 0, "truth file %s incomplete", tp);
		char pp[256];
		snprintf(pp, sizeof(pp), "%s/top.txt", dir);
		char *top = jvm_slurp(pp);
		cr_assert_not_null(top, "no top output in %s", dir);
		char *top_all = strdup(top);    /* the loop below cuts top into screens */
		cr_assert_not_null(top_all);
		long long day_ms = tms[0] / 86400000 * 86400000;       /* top states UTC time of day */
		int k = 0;
		char errs[2048] = "";
		int bad = 0;
		for (char *scr = strstr(top, "\033[H\033[2J"); scr; k++) {
			scr += 7;
			char *next = strstr(scr, "\033[H\033[2J");
			if (next)
				*next = 0;
			const char *rf = strstr(scr, "refreshed ");
			int h, mi, se, frac;
			if (rf && sscanf(rf, "refreshed %d:%d:%d.%d", &h, &mi, &se, &frac) == 4) {
				long long t = day_ms + ((h * 60LL + mi) * 60 + se) * 1000 + frac;
				if (t < tms[0] - 43200000LL)
					t += 86400000;
				double view = 0;
				for (char *l = scr; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
					char *nl = strchr(l, '\n');
					size_t len = nl ? (size_t)(nl - l) : strlen(l);
					if (memmem(l, len, " LoadService.cacheEntry ", 24)) {
						double b = top_size(l);
						if (b >= 0)
							view += b;
					}
				}
				/* the first screens come before the first full collection */
				if (k >= 3 && t > tms[0] && t < end_ms) {
					int i = 0;
					while (i + 1 < nt && tms[i + 1] <= t)
						i++;
					double err = view / tcache[i] - 1;
					screens++;
					if (fabs(err) > bound) {
						bad++;
						snprintf(errs + strlen(errs), sizeof(errs) - strlen(errs), " screen %d at %02d:%02d:%02d.%03d %+.1f%%;",
							 k, h, mi, se, frac, 100 * err);
					}
				}
			}
			scr = next;
		}
		/* not statistical: the label follows the collector (top.c) */
		cr_expect(strstr(top_all, heap_line), "run %d: no screen says \"%s\"", run, heap_line);
		free(top_all);
		free(top);
		if (k > 3)
			runs_with_screens++;
		/* each screen: Serial 20% (sd 2.2%), Shenandoah 25% (sd 2.7%): 8.5 sd and more; docs/test-bounds.md */
		cr_expect_eq(bad, 0, "run %d: top's view of the cache off by more than %.0f%%:%s", run, 100 * bound, errs);
		jvm_sh("rm -rf %s", dir);
	}
	cr_assert_eq(runs_with_screens, 3, "top showed no screens");
	cr_assert_geq(screens, 60, "only %d screens checked", screens);
}

/* heapprobe top on Serial under load (one screen per collection; the
 * bench's configuration: 190 MiB cache, 3 GiB heap, 64k): every screen's
 * view of the cache against the truth at its millisecond. A full
 * collection counted while a screen's walk of the live table ran left the
 * survivors verified at the survival since the marking before: single
 * screens 23-61% low in about half the runs (write_snapshot now walks
 * again). 20% each: the build with the walk made again had 338 of 338
 * screens within -3.9..+8.8% (6 runs), the one before 6 screens at
 * -23..-61% (4 of 6 runs); docs/test-bounds.md. Three runs. */
Test(load, top_serial_every_screen, .timeout = 400)
{
	check_top("-XX:+UseSerialGC", 0.20, NULL, "heap after the last collection");
}

/* heapprobe top on Shenandoah under load: its own cycles come every
 * ~0.5 s, and a screen asks for none while they do (sampler.c, MARK_TOP;
 * marks.h, hp_marks_own_lately); the build before asked within the
 * budget (its first screen at once: 1 in each 10 s run by hand). Top
 * starts 5 s into a 20 s load, when the canaries have seen own cycles (a
 * screen before the second one asks, as it should: started 1 s in, 3 of
 * 4 runs asked once; 3 s in, 2 of ~27). The
 * count is top's own (`status`: markings asked for by ...): a periodic
 * profile (period=4) whose wait for an own cycle found none asks, as it
 * should (once in ~20 runs by hand). Every screen within 25% (the bench
 * at 512k: 134-142 of 142-146 screens within 10% on JDK 11-25,
 * docs/load-top-own-cycles.md; 64k here, sd 2.7% by hand). */
Test(load, top_shenandoah_asks_for_nothing, .timeout = 400)
{
	long requests;
	/* its heap figure: ~1 GB when a cycle ends under this load, for
	 * ~0.2 GB live; labelled "live heap ... after-full-gc" before, and
	 * top showed "no collection yet" */
	check_top("-XX:+UseShenandoahGC", 0.25, &requests, "heap when the last cycle ended");
	/* not statistical: 0 in 14 runs (5 by hand, 9 of the test), 1 in each of 3 for the build before; docs/test-bounds.md */
	cr_expect_eq(requests, 0, "heapprobe top's screens on Shenandoah under load asked for %ld markings in a run",
		     requests);
}

/* G1: the caches dead at exit after the two concurrent cycles asked for
 * before an asked-for profile (one left 110-127 MiB of 190). Its periodic
 * view is not held here: in this configuration (2 GiB heap, 96 MiB cache)
 * G1 runs few cycles of its own, requests are held to 1/50 of the wall
 * clock, and between such sparse markings the estimate once drifted high
 * (+1% rising to +130% over 16 s, before the curves carried on past the
 * oldest judged age). Measured again in the fiftieth session, 46 of 54
 * profiles within 10% against an exact estimator's 51.3, the worst +18%
 * (docs/load-g1-sparse-markings.md): not held to 10% here. With its own
 * cycles: g1_own_cycles below. */
Test(load, g1_exit)
{
	check_load("-XX:+UseG1GC", false, true);
}

/* G1's own cycles, each from its concurrent start pause (marks.h,
 * g1_count_starts: G1CollectedHeap::_old_marking_cycles_started, its
 * offset read from libjvm's code): with the initiating occupancy at 5%
 * they come every second or two under this load, and every profile says
 * how many cycles the count named. The periodic profiles written once 3
 * or more markings were counted are held: each within 25%, their median
 * within 15% (by hand, 6 runs of 3 builds in this configuration: every
 * profile within -11%..+12%, sd ~5%; at 512k in bench/load 19 of 19 within
 * 10%, sd 3.7%: docs/load-g1-cycle-starts.md). */
Test(load, g1_own_cycles)
{
	char dir[] = "/tmp/hp-load-g1-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char agent[1024], truth_path[256];
	snprintf(agent, sizeof(agent), "-agentpath:%s=period=2,interval=256k,format=collapsed+text,file=%s/p-%%t,log=%s/log",
		 HP_AGENT_PATH, dir, dir);
	snprintf(truth_path, sizeof(truth_path), "%s/truth", dir);
	const char *argv[] = { test_java(), "-Xmx2g", "-XX:+UseG1GC", "-XX:InitiatingHeapOccupancyPercent=5", agent,
			       "-cp", HP_TEST_CLASSES, "LoadService", "96", "16", truth_path, NULL };
	struct jvm_result r = jvm_run(argv, NULL, 240);
	char lp[256];
	snprintf(lp, sizeof(lp), "%s/log", dir);
	char *log = jvm_slurp(lp);
	cr_assert_eq(r.exit_code, 0, "exit %d\n%s\n%s", r.exit_code, r.output, log ? log : "");
	double end_s, last_s, truth = read_truth(truth_path, &end_s, &last_s);
	DIR *d = opendir(dir);
	cr_assert_not_null(d);
	double errs[32];
	int n = 0;
	long named = 0;
	char all[512] = "";
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t nl = strlen(e->d_name);
		if (strncmp(e->d_name, "p-", 2) != 0 || nl < 5 || strcmp(e->d_name + nl - 4, ".txt") != 0)
			continue;
		char p[512], c[512];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		snprintf(c, sizeof(c), "%s/%.*s.collapsed", dir, (int)(nl - 4), e->d_name);
		struct stat st;
		cr_assert_eq(stat(p, &st), 0);
		char *t = jvm_slurp(p);
		if (!t)
			continue;
		const char *k = strstr(t, "cycles whose concurrent start pause it named): ");
		long kn = k ? atol(k + strlen("cycles whose concurrent start pause it named): ")) : 0;
		if (kn > named)
			named = kn;
		const char *m = strstr(t, "markings: ");
		long markings = m ? atol(m + strlen("markings: ")) : 0;
		if ((double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9 <= last_s && markings >= 3 && n < 32 &&
		    access(c, R_OK) == 0) {
			errs[n] = collapsed_sum(c, "LoadService.cacheEntry", NULL) / truth - 1;
			snprintf(all + strlen(all), sizeof(all) - strlen(all), " %+.1f%%", 100 * errs[n]);
			n++;
		}
		free(t);
	}
	closedir(d);
	/* not statistical: IHOP 5% starts cycles within the first seconds (5 by 2 s by hand) */
	cr_expect_geq(named, 1, "no own cycle's start named by G1's count of cycles begun\n%s", log ? log : "");
	cr_assert_geq(n, 3, "%d periodic profiles after 3 markings\n%s", n, log ? log : "");
	cr_log_info("G1, own cycles: periodic views of the cache vs truth:%s", all);
	for (int i = 0; i < n; i++)
		/* 25% each: 5 sd of the ~5% seen by hand; docs/test-bounds.md */
		cr_expect(fabs(errs[i]) < 0.25, "a periodic view %+.1f%% (each:%s)\n%s", 100 * errs[i], all, log ? log : "");
	double med = median_sorted(errs, n);
	/* median of ~7 within 15%: ~4 sd of its ~3.5% (correlated profiles); docs/test-bounds.md */
	cr_expect(fabs(med) < 0.15, "median periodic view %+.1f%% (each:%s)\n%s", 100 * med, all, log ? log : "");
	free(log);
	jvm_result_free(&r);
	jvm_sh("rm -rf %s", dir);
}

/* The interval the JVM's sampler keeps, measured from each thread's
 * allocated bytes (samplerate.h), on LoadService at 64k for 6 s: JDK 11's
 * sampler takes ~3.5-4% more samples than asked with this mix (measured
 * 0.9612-0.9652 by hand, sd 0.15-0.35%; bench/sampler: +3.8%); 17 and 25
 * keep the interval (1.0014, 1.0007). The weights take each thread's own
 * ratio either way (samplerate.h). Bounds: 0.93-0.985 and "off it" on 11;
 * within HP_RATE_SDS sd of 1 on the others, which the agent itself
 * decides (a correct sampler is called off it with P ~ 6e-7 per check). */
static double sampler_interval(const char *java, char *note, size_t cap)
{
	char dir[] = "/tmp/hp-rate-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char agent[1024], truth_path[256];
	snprintf(agent, sizeof(agent), "-agentpath:%s=interval=64k,format=text,file=%s/p.txt", HP_AGENT_PATH, dir);
	snprintf(truth_path, sizeof(truth_path), "%s/truth", dir);
	const char *argv[] = { java, "-Xmx2g", "-XX:+UseG1GC", agent, "-cp", HP_TEST_CLASSES, "LoadService", "96", "6",
			       truth_path, NULL };
	struct jvm_result r = jvm_run(argv, NULL, 120);
	cr_assert_eq(r.exit_code, 0, "%s: exit %d\n%s", java, r.exit_code, r.output);
	char path[300];
	snprintf(path, sizeof(path), "%s/p.txt", dir);
	char *text = jvm_slurp(path);
	cr_assert_not_null(text, "%s: no profile", java);
	const char *at = strstr(text, "sampler's interval: the bytes allocated between a thread's samples ");
	cr_assert_not_null(at, "%s: the profile does not state the sampler's interval:\n%s", java, text);
	const char *end = strchr(at, '\n');
	snprintf(note, cap, "%.*s", (int)(end ? end - at : (long)strlen(at)), at);
	double m = atof(at + strlen("sampler's interval: the bytes allocated between a thread's samples "));
	free(text);
	jvm_result_free(&r);
	return m;
}

Test(load, sampler_interval_measured_on_11_and_17)
{
	char java11[1024], note[512];
	jdk_java(java11, sizeof(java11), 11);
	double m11 = sampler_interval(java11, note, sizeof(note));
	cr_log_info("JDK 11: %s", note);
	/* not statistical: 0.93-0.985 around 0.961-0.965 measured, sd 0.15-0.35%; docs/test-bounds.md */
	cr_expect(m11 > 0.93 && m11 < 0.985 && strstr(note, "off it; each thread's samples weighed at its own ratio"),
		  "JDK 11's sampler keeps ~0.96 of the interval asked, and the weights take each thread's: %s", note);
	double m17 = sampler_interval(test_java(), note, sizeof(note));
	cr_log_info("JDK under test: %s", note);
	/* the agent's own rule (5 sd); docs/test-bounds.md */
	cr_expect(m17 > 0.99 && m17 < 1.01 && strstr(note, "within its sd; each thread's samples weighed"),
		  "a sampler that keeps its interval reads so: %s", note);
}

/* Generational ZGC (JDK 25's ZGC), on the bench's 3 GiB heap and 190 MiB
 * cache: no marking judges ages younger than its promote-all collection
 * (~0.5 s under this load), so the view of recent samples rests on the
 * survival curve carried back below that age (youngfit.c). Held: the
 * periodic view's median, the view outside the cache (the garbage site
 * read 45-130 MiB alive before 5417882; 32.6 MiB in this configuration)
 * and the caches dead at exit. The periodic view jumped to +30..+143%
 * from the collector's first own major on in 1 of 4 runs on 2 of 7
 * (the fresh clone at fbdacc0: median +33.3%): the straight line from
 * the requested major's oldest bucket to the all-dead ones of its own
 * majors (survival.c toward_dead). */
Test(load, z_generational)
{
	char java[1024];
	jdk_java(java, sizeof(java), 25);
	load_seconds = "24";
	/* median 25%: run medians sd 4.3% about +3.7% (toward_dead's build: 24 runs, 18 by hand and
	 * 6 of this test, -2.2..+13%); the one marking a run that judges the young ages sets the
	 * run's level; docs/test-bounds.md: 5.0 sd */
	/* and its periodic profiles wait for an own major begun after them (marks.h,
	 * hp_marks_await_z_major): majors 2.3-2.8 s apart in this configuration, the
	 * wait taken where they come at most 5 s apart; one of ~8 must say so */
	check_load_java_req(java, "-XX:+UseZGC", NULL, true, true, 0, 0.25, "-Xmx3g", "190",
			    "request: none: a major of the collector's own began after this profile was asked for");
}

/* A cache whose entries live ~10 s (LoadService -Dturnover=0.1, garbage
 * scaled to keep the allocation rate), generational ZGC on 25: an own
 * major pushed when the requested one began (0.2-0.9 s apart, no sweep
 * between) once left the start-up fill's verified samples read at the
 * first judgments' share over that short gap, 0.58 alive right after the
 * marking and 0 four seconds on (bench/load/run.sh TURNOVER=0.1 at 512k:
 * -14% to -47% in 6 of 24 profiles on 21 and 25; with the curve by age,
 * -12% to +8%; docs/load-slow-turnover.md). test_survival holds that
 * case (no_span_yet_...); in this test's configuration (period=2, 256k)
 * it did not come up, and the build before passed 4 runs of 4 too
 * (-19.0% its worst profile, this build's -11.6% in 3). What this holds:
 * long-lived entries under load on generational ZGC, each profile but
 * the first within 25%, the median within 20% (per-profile sd 5.1% in 7
 * runs of both builds, run medians sd 3.7%); docs/test-bounds.md. */
Test(load, z_generational_slow_turnover)
{
	char java[1024];
	jdk_java(java, sizeof(java), 25);
	load_seconds = "24";
	check_load_java(java, "-XX:+UseZGC", "-Dturnover=0.1", true, true, 0.25, 0.20, "-Xmx3g", "190");
}

/* Generational ZGC's live figure under load (`info`'s usage.live, what
 * hp_live_bytes returns): the old generation's marked bytes at the last
 * major plus the young's at the last young marking (marking.c
 * hp_marking_heap_live). The old generation's alone read 13-66 MiB for
 * ~195 MiB live (docs/heap-under-load.md, before d6a95d9); the sum
 * 183-260 MiB there. Read three times from 6 s into the bench's load
 * (190 MiB cache, 3 GiB heap), each against the cache's bytes by
 * construction then. */
static void check_zgen_live(int feature, const char *flags, double *lo, double *hi)
{
	char java[1024], dir[] = "/tmp/hp-zlive-XXXXXX";
	jdk_java(java, sizeof(java), feature);
	cr_assert_not_null(mkdtemp(dir));
	struct jvm_result r = jvm_sh("cd %s && (%s -Xmx3g %s -agentpath:%s=file=%s/p.pb.gz,log=%s/log -cp %s LoadService 190 16 "
				     "%s/truth > out 2>&1 & jp=$!; sleep 6; for i in 1 2 3; do %s --lib %s $jp info > info-$i "
				     "2>&1; grep -v end truth | tail -1 > truth-$i; sleep 2; done; wait $jp; echo java=$?)",
				     dir, java, flags, HP_AGENT_PATH, dir, dir, HP_TEST_CLASSES, dir, HP_CLI, HP_AGENT_PATH);
	cr_assert(strstr(r.output, "java=0"), "JDK %d: %s", feature, r.output);
	jvm_result_free(&r);
	for (int i = 1; i <= 3; i++) {
		char p[300];
		snprintf(p, sizeof(p), "%s/info-%d", dir, i);
		char *info = jvm_slurp(p);
		snprintf(p, sizeof(p), "%s/truth-%d", dir, i);
		char *truth = jvm_slurp(p);
		long long ms = 0, cache = 0;
		cr_assert(info && truth && sscanf(truth, "%lld %lld", &ms, &cache) == 2 && cache > 0,
			  "JDK %d reading %d: no info or truth\n%s", feature, i, info ? info : "");
		const char *l = strstr(info, "usage.live: ");
		double live = l ? atof(l + 12) : 0;
		double ratio = live / (double)cache;
		*lo = fmin(*lo, ratio), *hi = fmax(*hi, ratio);
		cr_log_info("JDK %d reading %d: usage.live %.0f MiB, cache %.0f MiB (%.2f)", feature, i, live / MiB,
			    cache / MiB, ratio);
		/* 0.5..1.8 x the cache: 18 readings 0.78..1.33 (mean 1.09); the old generation's alone
		 * 0.07..0.35; docs/test-bounds.md */
		cr_expect(l && strstr(l, "kind=marked-live") && ratio > 0.5 && ratio < 1.8,
			  "JDK %d reading %d: the live figure %.0f MiB against the cache's %.0f MiB\n%s", feature, i,
			  live / MiB, cache / MiB, info);
		free(info);
		free(truth);
	}
	jvm_sh("rm -rf %s", dir);
}

Test(load, z_generational_live_figure, .timeout = 200)
{
	double lo = 1e9, hi = 0;
	check_zgen_live(21, "-XX:+UseZGC -XX:+ZGenerational", &lo, &hi);
	check_zgen_live(25, "-XX:+UseZGC", &lo, &hi);
	cr_log_info("generational ZGC's live figure / cache: %.2f..%.2f", lo, hi);
}

/* Generational Shenandoah (JDK 25, setup-jdks' build), on the bench's
 * 3 GiB heap and 190 MiB cache: the periodic view's median, and the caches
 * dead before exit leave nothing in the exit profile. System.gc() there
 * may return at the start of the global cycle it asked for (marking.c
 * wait_explicit_cycle waits for its end); before that wait, 184-275 MiB of
 * the 190 were left in one exit profile in two or three. The periodic
 * view read +11% [-1, +71] on the median before the requested cycle's
 * start was its Init Mark and the verified samples took the curve by
 * age (curve.c verified_by_age); -1.2% [-8.5, +8.1] after
 * (bench/load/run.sh, 3 runs of 40 s, docs/test-bounds.md). */
Test(load, shenandoah_generational)
{
	char java[1024];
	jdk_java(java, sizeof(java), 25);
	/* each 40%, median 25%: sd 4.7% per profile, centre +2% (bench, 28 profiles at 512k; this test's
	 * 21 at 256k: sd 3.5%), but a run whose one marking's curve reads high drifts while no
	 * other comes (~10 s: requests within 1/50 of the wall clock): +15.5, +24.7, +25.9, +27.2%
	 * 4-10 s after it in one fresh-clone run of 1799a8f, the stated intervals +-60%, where 25%
	 * each failed; docs/test-bounds.md */
	check_load_java(java, "-XX:+UseShenandoahGC", "-XX:ShenandoahGCMode=generational", true, true, 0.40, 0.25,
			"-Xmx3g", "190");
}

/* Leak suspects without period= (issue 26): the exit report of a service
 * at full load that leaks 25 MB over 20 s at one site ranks that site
 * first; the same service without the leak lists no suspect. The
 * collectors whose own cycles only the canaries show. */
static void check_suspects_java(const char *java, const char *gc_flag, const char *gc_flag2, const char *seconds,
				bool leaking)
{
	char dir[] = "/tmp/hp-load-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char agent[1024], truth_path[256], report[256];
	snprintf(report, sizeof(report), "%s/report.txt", dir);
	snprintf(agent, sizeof(agent), "-agentpath:%s=interval=128k,format=text,file=%s,log=%s/log", HP_AGENT_PATH, report,
		 dir);
	snprintf(truth_path, sizeof(truth_path), "%s/truth", dir);
	const char *argv[] = { java, "-Xmx2g", gc_flag, leaking ? "-Dleak=25" : "-Dleak=0", agent, "-cp",
			       HP_TEST_CLASSES, "LoadService", "96", seconds, truth_path, NULL, NULL };
	if (gc_flag2) {         /* before the agent, as the other flags */
		memmove(&argv[4], &argv[3], 9 * sizeof(argv[0]));
		argv[3] = gc_flag2;
	}
	struct jvm_result r = jvm_run(argv, NULL, 240);
	cr_assert_eq(r.exit_code, 0, "%s: exit %d\n%s", gc_flag, r.exit_code, r.output);
	char *t = jvm_slurp(report);
	cr_assert_not_null(t, "%s: no report", gc_flag);
	const char *h = strstr(t, "\nleak suspects:\n");
	cr_assert_not_null(h, "%s: no suspects section\n%s", gc_flag, t);
	h += strlen("\nleak suspects:\n");
	if (leaking)
		/* false failure ~0 per run: z ~ sqrt(~150 samples) = 12 at 128k against 4 (docs: 7.4-8.2 at 512k); docs/test-bounds.md */
		cr_expect(!strncmp(h, "1. LoadService.leak ", 20), "%s: the leak is not ranked first:\n%s\nthe report:\n%s",
			  gc_flag, h, t);
	else
		/* false failure ~3e-5 per run: one window, P(z >= 4, z_recent >= 2) under N(0,1) z; docs/test-bounds.md */
		cr_expect_str_empty(h, "%s: a suspect where nothing leaks:\n%s", gc_flag, h);
	free(t);
	jvm_result_free(&r);
	jvm_sh("rm -rf %s", dir);
}

static void check_suspects(const char *gc_flag, bool leaking)
{
	const char *java = getenv("HP_TEST_JAVA") && *getenv("HP_TEST_JAVA") ? getenv("HP_TEST_JAVA") : HP_JAVA;
	check_suspects_java(java, gc_flag, NULL, "20", leaking);
}

Test(load, leak_ranked_first_z)
{
	check_suspects("-XX:+UseZGC", true);
}

Test(load, no_suspect_z)
{
	check_suspects("-XX:+UseZGC", false);
}

Test(load, leak_ranked_first_shenandoah)
{
	check_suspects("-XX:+UseShenandoahGC", true);
}

Test(load, no_suspect_shenandoah)
{
	check_suspects("-XX:+UseShenandoahGC", false);
}

/* Generational Shenandoah (JDK 25): its own cycles are not counted (a
 * young collection would clear a canary), so without period= the agent
 * asks for a marking every 4 s while samples come, at most 1/50 of the
 * wall clock in requested markings (sampler.c, history_marking). Under
 * this load a requested cycle takes ~0.3 s, so they come ~15 s apart:
 * the leak runs 60 s here (4 marking records; at 20 s the history had 2
 * and named nothing). */
static void check_suspects_gen_shenandoah(bool leaking)
{
	char java[1024];
	jdk_java(java, sizeof(java), 25);
	check_suspects_java(java, "-XX:+UseShenandoahGC", "-XX:ShenandoahGCMode=generational", "60", leaking);
}

Test(load, leak_ranked_first_shenandoah_generational)
{
	check_suspects_gen_shenandoah(true);
}

Test(load, no_suspect_shenandoah_generational)
{
	check_suspects_gen_shenandoah(false);
}

/* `heapprobe status`'s count of drops found (cohort.c) one second before
 * the end of `secs` s of LoadService (a `cache_mib` MiB cache, heap
 * `xmx`) under `gc`, a 20 MiB/s list dropped every 4 s beside the cache
 * when `grow`; -1 when status did not say. */
static char *drops_status;      /* the last drops_found_in's status text */

static long drops_found_in(const char *java, const char *gc, bool grow, const char *xmx, int cache_mib, int secs)
{
	char dir[] = "/tmp/hp-load-drops-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	struct jvm_result r = jvm_sh(
		"cd %s && (%s %s %s %s -agentpath:%s=period=4,file=%s/p-%%t.txt -cp %s LoadService %d %d %s/truth "
		"> %s/out 2>&1 & jp=$!; sleep %d; %s --lib %s $jp status > %s/status.txt 2>&1; wait $jp; echo java=$?)",
		dir, java, xmx, gc, grow ? "-Dgrow=20 -Dshrink=4" : "", HP_AGENT_PATH, dir, HP_TEST_CLASSES, cache_mib,
		secs, dir, dir, secs - 1, HP_CLI, HP_AGENT_PATH, dir);
	cr_assert(strstr(r.output, "java=0"), "%s: %s", gc, r.output);
	jvm_result_free(&r);
	char sp[256];
	snprintf(sp, sizeof(sp), "%s/status.txt", dir);
	char *st = jvm_slurp(sp);
	const char *q = st ? strstr(st, "counted dead until a marking): ") : NULL;
	long n = q ? strtol(q + strlen("counted dead until a marking): "), NULL, 10) : -1;
	cr_assert(n >= 0, "%s: no drop count in heapprobe status:\n%s", gc, st ? st : "");
	free(drops_status);
	drops_status = st;      /* kept for the caller's other checks */
	return n;
}

static long drops_found(const char *java, const char *gc, bool grow)
{
	return drops_found_in(java, gc, grow, "-Xmx2g", 96, 14);
}

/* A list dropped at once is found by the young collection that clears
 * its young part, or by the marking that judges it first (cohort.c), on
 * G1, Parallel and Serial; none is found in the same service without the
 * list (its cache turns over at random, its garbage dies young). By hand:
 * 3 and 2 found with the list, 0 and 0 without (G1, Parallel); Serial,
 * whose full collections come ~0.5 s apart under this load, finds them
 * only from the markings (since the thirty-ninth session). On a busy
 * machine the caches' first fill, replaced at random, was found dropped
 * at times by the marking that saw the last of it dead (CI: Parallel and
 * Serial 1 each without the list): a first drop now needs the markings
 * before to have found the site alive (cohort.c agreed_before). */
Test(load, drops_found_not_invented, .timeout = 400)
{
	const char *gcs[] = { "-XX:+UseG1GC", "-XX:+UseParallelGC", "-XX:+UseSerialGC" };
	for (int i = 0; i < 3; i++) {
		long with = drops_found(test_java(), gcs[i], true), without = drops_found(test_java(), gcs[i], false);
		cr_log_info("%s: %ld drops found with the list, %ld without", gcs[i], with, without);
		cr_expect(with >= 1, "%s: no drop found of a list dropped every 4 s", gcs[i]);
		cr_expect(without == 0, "%s: %ld drops found in a service that drops nothing", gcs[i], without);
	}
}

/* A text profile's moment ("time: 2026-12-05 11:47:43.314 +0000"), in
 * seconds since the epoch; < 0 if absent. */
static double profile_time(const char *t)
{
	const char *at = strstr(t, "\ntime: ");
	struct tm tm = { 0 };
	int ms = 0;
	if (!at || sscanf(at + 7, "%d-%d-%d %d:%d:%d.%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
			  &tm.tm_sec, &ms) != 7)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (double)timegm(&tm) + ms / 1000.0;
}

/* The inuse bytes of the site whose leaf frame is `frame` in a text
 * profile (its line "  N. 83.3 MiB +- ..." before the frame); 0 if not
 * listed. */
static double text_site_bytes(const char *t, const char *frame)
{
	const char *f = strstr(t, frame);
	if (!f)
		return 0;
	const char *line = f;
	int newlines = 0;
	while (line > t && newlines < 2)
		if (*--line == '\n')
			newlines++;
	int rank;
	double v;
	char unit[8];
	if (sscanf(line, " %d. %lf %7s", &rank, &v, unit) != 3)
		return -1;
	double u = !strcmp(unit, "GiB") ? MiB * 1024 : !strcmp(unit, "MiB") ? MiB : !strcmp(unit, "KiB") ? 1024 : 1;
	return v * u;
}

/* Whether the truth file's line at `l` is its "end" line. */
static bool truth_line_ends(const char *l)
{
	const char *nl = strchr(l, '\n'), *e = strstr(l, " end");
	return e && (!nl || e < nl);
}

/* The grow site's bytes by construction at `when` (LoadService's truth
 * file: "epoch_ms cache grow leak" every 100 ms): the last line at or
 * before it; -1 if none. `drop` (if not NULL): its latest drop by then,
 * the first line showing the list smaller than the line before (< 0 if
 * none). */
static double grow_truth_at(const char *truth, double when, double *drop)
{
	double v = -1, prev = 0;
	if (drop)
		*drop = -1;
	for (const char *l = truth; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		long long ms, cache, grow;
		if (sscanf(l, "%lld %lld %lld", &ms, &cache, &grow) != 3 || truth_line_ends(l))
			continue;
		if ((double)ms / 1000 > when)
			break;
		if (drop && (double)grow < prev)
			*drop = (double)ms / 1000;
		v = prev = (double)grow;
	}
	return v;
}

/* The start of the latest marking a text profile's "live view:" line
 * names ("... a marking 1.8 s before"), in seconds since the epoch given
 * the profile's moment `when`; < 0 if it names none. */
static double last_marking_start(const char *t, double when)
{
	const char *l = strstr(t, "\nlive view:");
	const char *eol = l ? strchr(l + 1, '\n') : NULL;
	const char *b = l ? strstr(l, " s before") : NULL;
	if (!b || (eol && b > eol))
		return -1;
	const char *n = b;
	while (n > l && ((n[-1] >= '0' && n[-1] <= '9') || n[-1] == '.'))
		n--;
	return n < b ? when - atof(n) : -1;
}

/* How long before the latest marking began the first pause its cover
 * leaves out ended, as the profile's comment says ("(the next pause ended
 * 1.23 s before the marking began)"); < 0 if it does not say. */
static double cover_gap(const char *t)
{
	const char *g = strstr(t, "(the next pause ended ");
	return g ? atof(g + strlen("(the next pause ended ")) : -1;
}

/* Generational ZGC's own majors' cover as the profile gives it: "a major
 * judges the samples born N young collections before it began"; -1 if
 * it does not say. */
static long z_cover_back(const char *t)
{
	const char *g = strstr(t, "a major judges the samples born ");
	return g ? strtol(g + strlen("a major judges the samples born "), NULL, 10) : -1;
}

/* The list's bytes born after `from` and by `to` (s since the epoch) by
 * construction: its growth over the truth lines in that span (a line
 * says what grew in the 0.1 s before it), drops not subtracted. */
static double grow_born_between(const char *truth, double from, double to)
{
	double born = 0, prev = -1;
	for (const char *l = truth; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		long long ms, cache, grow;
		if (sscanf(l, "%lld %lld %lld", &ms, &cache, &grow) != 3 || truth_line_ends(l))
			continue;
		double at = (double)ms / 1000;
		if (prev >= 0 && at > from && at <= to)
			born += (double)grow > prev ? (double)grow - prev : (double)grow;     /* dropped, then grown to this */
		prev = (double)grow;
	}
	return born;
}

/* A list growing at 20 MiB/s on LoadService's main thread, dropped every
 * 6 s, beside the cache, G1 at 64k (cohort.c): what it grew since its
 * latest drop counts alive once the markings agree, so a profile late in
 * a growth phase reads the list whole, not by its average survival (the
 * build before read -45..-57% there at 64k: docs/load-grow-sampler.md).
 * Every periodic profile after the first drop with the list at 20 MiB or
 * more: within 30% of the list by construction at the profile's moment;
 * at least one names a site counted so. The bench's 190 MiB cache and
 * 3 GiB heap: with 96 MiB and 2 GiB G1's own cycles come often enough
 * that the build before read the list right as well (by hand, 2 runs);
 * here it read 40.6 of 96, 25.2 of 58, 57.6 of 110 MiB (2 runs). */
/* LoadService's 190 MiB cache and a list growing at 20 MiB/s dropped
 * every 6 s, on the collector `gc` at 64k: each periodic profile after
 * the first drop with the list at 20 MiB or more within 30% of the list
 * at its moment, and one names a site counted alive since its drop.
 * `seen`: only the profiles whose latest marking began after the list's
 * latest drop (where drops are found by markings alone). `bound`: each
 * profile's relative error at most (docs/test-bounds.md). */
static void grown_list_read_whole(const char *java, const char *gc, bool seen, double bound)
{
	char dir[] = "/tmp/hp-load-grow-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	struct jvm_result r = jvm_sh(
		"cd %s && %s -Xmx3g %s -Dgrow=20 -Dshrink=6 "
		"-agentpath:%s=period=4,interval=64k,format=text,file=%s/p-%%t.txt,log=%s/log -cp %s LoadService 190 18 "
		"%s/truth > %s/out 2>&1; echo java=$?",
		dir, java, gc, HP_AGENT_PATH, dir, dir, HP_TEST_CLASSES, dir, dir);
	cr_assert(strstr(r.output, "java=0"), "%s", r.output);
	jvm_result_free(&r);
	char tp[256];
	snprintf(tp, sizeof(tp), "%s/truth", dir);
	char *truth = jvm_slurp(tp);
	cr_assert_not_null(truth);
	/* The first drop: the first line whose list is smaller than the line before. */
	double first_drop = -1, end_s = -1, prev = 0;
	for (const char *l = truth; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		long long ms, cache, grow;
		if (sscanf(l, "%lld %lld %lld", &ms, &cache, &grow) != 3)
			continue;
		if (truth_line_ends(l)) {
			end_s = (double)ms / 1000;
			break;
		}
		if (first_drop < 0 && (double)grow < prev)
			first_drop = (double)ms / 1000;
		prev = (double)grow;
	}
	cr_assert(first_drop > 0 && end_s > first_drop, "no drop in the truth file");
	DIR *d = opendir(dir);
	cr_assert_not_null(d);
	struct dirent *e;
	int checked = 0, named = 0;
	char all[1024] = "";
	while ((e = readdir(d))) {
		size_t nl = strlen(e->d_name);
		if (strncmp(e->d_name, "p-", 2) != 0 || nl < 5 || strcmp(e->d_name + nl - 4, ".txt") != 0)
			continue;
		char p[512];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		char *t = jvm_slurp(p);
		double when = t ? profile_time(t) : -1;
		if (!t || when < 0 || when >= end_s) {
			free(t);
			continue;
		}
		named += strstr(t, "sites whose samples born since their last drop count alive") != NULL;
		double drop, want = grow_truth_at(truth, when, &drop), view = text_site_bytes(t, "LoadService.grow (");
		/* The profile names the marking's start to 0.1 s: one named
		 * 0.05 s after the drop may have begun before it (and found the
		 * list whole: +571% once in CI, where the test took it for after);
		 * 0.1 s leaves room for the truth line's own delay. */
		double start = seen ? last_marking_start(t, when) : -1;
		if (seen && !(start > drop + 0.1)) {
			snprintf(all + strlen(all), sizeof(all) - strlen(all), " (%.1f/%.1f before a marking saw the drop)",
				 view / MiB, want / MiB);
		} else if (when > first_drop && want >= 20 * MiB) {
			checked++;
			/* Where markings judge only what was promoted (`seen`: generational
			 * ZGC), the list born between the cover's pause and the marking's
			 * start was judged by none and is read by the site's curve: where
			 * the drop came inside that window, what the list grew in it
			 * before the drop is dead and may read alive (a major that began
			 * 0.1 s after a drop, 22 MiB since: +59% at 512k). That part may
			 * add to the view, nothing else, and only where the profile says
			 * its majors judge what was born 8 young collections before them
			 * or earlier (learnt, marks.h z_back): a cover of 16 (~4 s under
			 * load) is the build before's, whose over-reads this would excuse. */
			double gap = seen ? cover_gap(t) : -1, unjudged = 0, dead = 0;
			long back = seen ? z_cover_back(t) : -1;
			if (seen) {
				cr_expect(gap >= 0 && back > 0, "%s: the profile does not say when its marking's cover ended "
					  "or how far back a major judges", e->d_name);
				double from = gap >= 0 ? start - gap - 0.05 : start;
				unjudged = grow_born_between(truth, from - 0.1, start + 0.05);
				/* the lines before the drop's: the drop's line shows growth since it */
				dead = back > 0 && back <= 8 && drop > from ? grow_born_between(truth, from - 0.1, drop - 0.001)
									   : 0;
			}
			snprintf(all + strlen(all), sizeof(all) - strlen(all),
				 seen ? " %.1f/%.1f (unjudged %.1f, %.1f of it dead)" : " %.1f/%.1f", view / MiB, want / MiB,
				 unjudged / MiB, dead / MiB);
			/* empirical: G1 17, 24 periodic profiles at 64k and 512k within -16..+9% (30%); generational ZGC -15.2..+1.5%
			 * at 64k with its cover learnt (45%); generational Shenandoah 9 by hand -2.4..+2.7% (30%); docs/test-bounds.md */
			cr_expect(view - want > -bound * want && view - want < bound * want + dead,
				  "%s: the list read %.1f MiB, %.1f MiB by construction (%+.0f%%, bound %.0f%%, and above it the "
				  "%.1f MiB dead before its marking began that no marking judged)", e->d_name, view / MiB,
				  want / MiB, 100 * (view / want - 1), 100 * bound, dead / MiB);
		}
		free(t);
	}
	closedir(d);
	cr_log_info("the grown list, view/truth MiB after the first drop:%s", all);
	cr_expect(checked >= (seen ? 1 : 2), "%d periodic profiles after the first drop with the list at 20 MiB or more",
		  checked);
	/* the markings agree by the second marking after the first drop (every run of the bench on G1); docs/test-bounds.md */
	cr_expect(named >= 1, "no periodic profile names a site counted alive since its drop");
	free(truth);
	jvm_sh("rm -rf %s", dir);
}

Test(load, a_list_grown_since_its_drop_is_read_whole, .timeout = 240)
{
	grown_list_read_whole(test_java(), "-XX:+UseG1GC", false, 0.30);
}

/* Parallel's full collections, a second apart under this load, judge a
 * dropped list before a young collection finds it: the drop is found from
 * the marking's judgments (cohort.c). */
Test(load, a_list_grown_since_a_drop_a_full_collection_found_is_read_whole, .timeout = 240)
{
	grown_list_read_whole(test_java(), "-XX:+UseParallelGC", false, 0.30);
}

/* Generational ZGC (JDK 25): its young collections leave weak
 * references to its majors, and a major judges the list, those born
 * before the drop dead, those since alive, and finds the drop (cohort.c,
 * judge.c markings_tick). Before, with no drop looked for, the list late
 * in its growth read by the curve between majors: -19..-53% at 512k
 * (docs/load-grow-zgen-drops.md). Only the profiles whose latest major
 * began after the latest drop: before one does, nothing tells a dropped
 * list from a growing one, and it reads as the list before the drop
 * (+263..+454% here in 3 of 4 runs, the build before too). */
Test(load, a_list_grown_since_a_drop_a_generational_zgc_major_found_is_read_whole, .timeout = 240)
{
	char java[1024];
	jdk_java(java, sizeof(java), 25);
	/* 45%: what grew between the drop and the major that found it is read
	 * by the curve, -35% and -33% late in a growth phase, +30% early in
	 * one (docs/test-bounds.md); the average-survival reading this test
	 * was made against read -45..-72% there. */
	grown_list_read_whole(java, "-XX:+UseZGC", true, 0.45);
}

/* Generational Shenandoah (JDK 25): its young cycles are seen from its
 * phase at each pause (agent/shcycles.c), and a sweep looks at the young
 * samples those cycles first judged; a list dropped every 4 s beside the
 * bench's cache is found, none in the same service without the list.
 * Before (a window of pauses, not cycles) the cache alone showed drops in
 * 5 profiles of 2 runs, and with the window of cycles completed rather
 * than past their Final Mark, no young death was ever looked at (by hand).
 * By hand: 3, 3, 3 found with the list, 0, 0, 0 without. */
Test(load, drops_found_not_invented_generational_shenandoah, .timeout = 200)
{
	char java[1024];
	jdk_java(java, sizeof(java), 25);
	const char *gc = "-XX:+UseShenandoahGC -XX:ShenandoahGCMode=generational";
	long with = drops_found_in(java, gc, true, "-Xmx3g", 190, 16);
	cr_assert(strstr(drops_status, "generational Shenandoah's cycles: young cycles "),
		  "status does not say what its cycles showed:\n%s", drops_status);
	long without = drops_found_in(java, gc, false, "-Xmx3g", 190, 16);
	cr_log_info("%s: %ld drops found with the list, %ld without", gc, with, without);
	/* 3, 3, 3 by hand; docs/test-bounds.md */
	cr_expect(with >= 1, "%s: no drop found of a list dropped every 4 s", gc);
	/* 0, 0, 0 by hand, and in the load bench's cache runs; docs/test-bounds.md */
	cr_expect(without == 0, "%s: %ld drops found in a service that drops nothing", gc, without);
}

/* One run: what the exit profile counted, and the JVM's log. */
struct sh_cycles_run {
	unsigned long young, begun, counted, other, abandoned, unexplained;
	unsigned long log_young, log_whole, log_degenerated, log_full;
};

static void shenandoah_cycles_run(const char *java, const char *load, struct sh_cycles_run *c)
{
	memset(c, 0, sizeof(*c));
	char dir[] = "/tmp/hp-load-shcycles-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	struct jvm_result r = jvm_sh(
		"cd %s && %s -Xmx1g -XX:+UseShenandoahGC -XX:ShenandoahGCMode=generational -Xlog:gc:file=%s/gc.log "
		"%s -Dshrink=6 -agentpath:%s=mark=off,format=text,file=%s/exit.txt -cp %s LoadService 100 16 "
		"%s/truth > %s/out 2>&1; echo java=$?",
		dir, java, dir, load, HP_AGENT_PATH, dir, HP_TEST_CLASSES, dir, dir);
	cr_assert(strstr(r.output, "java=0"), "%s", r.output);
	jvm_result_free(&r);
	char p[256];
	snprintf(p, sizeof(p), "%s/exit.txt", dir);
	char *t = jvm_slurp(p);
	snprintf(p, sizeof(p), "%s/gc.log", dir);
	char *log = jvm_slurp(p);
	cr_assert(t && log, "no exit profile or no GC log in %s", dir);
	/* Each pause's line ends with its duration ("GC(3) Pause Final Mark
	 * (Young) 0.911ms", "... (Young) (unload classes) 1.2ms"); a global
	 * cycle's is "(Global)", no young cycle. */
	for (const char *l = log; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *nl = strchr(l, '\n'), *end = nl ? nl : l + strlen(l);
		const char *f = strstr(l, "Pause Final Mark (");
		if (!f || f > end || end - l < 3 || strncmp(end - 2, "ms", 2) != 0)
			continue;
		if (!strncmp(f, "Pause Final Mark (Young)", 24))
			c->log_young++;
		else if (!strncmp(f, "Pause Final Mark (Old)", 22) || !strncmp(f, "Pause Final Mark (Global)", 25))
			c->log_whole++;
	}
	for (const char *l = log; (l = strstr(l, "Pause Degenerated")); l++)
		c->log_degenerated++;
	for (const char *l = log; (l = strstr(l, "Pause Full")); l++)
		c->log_full++;
	/* Said whether or not a whole-heap marking was counted (estimate.c). */
	const char *q = strstr(t, "young cycles ");
	cr_assert(q && sscanf(q, "young cycles %lu; whole-heap markings begun %lu, counted %lu (and %lu asked for or "
			      "under way when counting began), abandoned %lu (a degenerated or full collection); pauses "
			      "no cycle explains %lu",
			      &c->young, &c->begun, &c->counted, &c->other, &c->abandoned, &c->unexplained) == 6,
		  "the exit profile does not say what generational Shenandoah's cycles showed (the log: %lu young, %lu "
		  "whole-heap markings):\n%s", c->log_young, c->log_whole, t);
	free(t);
	free(log);
	jvm_sh("rm -rf %s", dir);
}

/* Generational Shenandoah's cycles as the agent counts them from its
 * phase at each pause (agent/shcycles.c), against the JVM's own log: the
 * young cycles past their Final Mark, and the whole-heap markings (old
 * markings, global cycles) whose weak roots are done, by the exit
 * profile; no pause left unexplained. LoadService with a 100 MiB cache
 * and a list grown and dropped in a 1 GiB heap runs old markings (1-4 in
 * 12-16 s by hand), mark=off so that every cycle is the collector's own.
 * By hand (16 s): 152 of 152 young and 4 of 4, 147 of 147 and 4 of 4.
 * A run starved of CPU (the suite beside other work on 2 cores) may
 * complete none: every old marking cancelled, degenerated or full (once
 * in ~13 fresh-clone runs: 0 of them, 73 cancels, 113 degenerated, 26
 * full). Such a run has nothing to check the whole-heap count against:
 * it is run again, at most twice, and the test fails if none completed
 * one. */
static void shenandoah_cycles_as_logged(int feature)
{
	char java[1024];
	jdk_java(java, sizeof(java), feature);
	/* Debian's 27.0.1 degenerates under this load in a 1 GiB heap (by
	 * hand, alone: 0 old markings, 71 and 103 degenerated, 17 and 23
	 * full, in 2 runs of 2; the fresh clone of d728752: 3 of 3): half the
	 * garbage and the list grown twice as fast completed old markings in
	 * 4 runs of 4 (2, 2, 1, 1; 1 degenerated in all), as 25 and 26 do
	 * with the load below (12 each in one run of this one). */
	const char *load = feature >= 27 ? "-Dgarbage=2 -Dgrow=40" : "-Dgrow=20";
	struct sh_cycles_run c;
	for (int attempt = 1;; attempt++) {
		shenandoah_cycles_run(java, load, &c);
		if (c.log_whole >= 1 || attempt == 3)
			break;
		/* info, not warn: Criterion 2.4.1 exits 1 after any warning, a
		 * passed run counted failed (the fresh clone of 3cc6c56). */
		cr_log_info("run %d: the JVM completed no old marking or global cycle (its log: %lu degenerated, %lu "
			    "full; the agent counted %lu young cycles of %lu, %lu whole-heap markings): run again",
			    attempt, c.log_degenerated, c.log_full, c.young, c.log_young, c.counted);
	}
	cr_log_info("young cycles %lu (the log %lu), whole-heap markings counted %lu of %lu begun (the log %lu), "
		    "abandoned %lu, unexplained pauses %lu", c.young, c.log_young, c.counted, c.begun, c.log_whole,
		    c.abandoned, c.unexplained);
	/* 2-6 old markings in runs by hand (25, 26, 27); none in 1 of ~13 fresh-clone runs: 3 runs; docs/test-bounds.md */
	cr_assert_geq(c.log_whole, 1, "3 runs completed no old marking or global cycle (the last: %lu degenerated, "
		      "%lu full): nothing to check them against", c.log_degenerated, c.log_full);
	/* The exit profile is written before the JVM's last pauses: one cycle of each at most still to come.
	 * Not statistical; docs/test-bounds.md */
	cr_expect(c.young <= c.log_young && c.young + 1 >= c.log_young, "%lu young cycles counted, the log has %lu",
		  c.young, c.log_young);
	/* not statistical; docs/test-bounds.md */
	cr_expect(c.counted <= c.log_whole && c.counted + 1 >= c.log_whole,
		  "%lu whole-heap markings counted, the log has %lu", c.counted, c.log_whole);
	cr_expect(c.other == 0, "mark=off asks for nothing: %lu whole-heap markings not the collector's own", c.other);
	cr_expect(c.unexplained == 0 || c.log_degenerated + c.log_full > 0,
		  "%lu pauses no cycle explains, none degenerated or full in the log", c.unexplained);
}

/* On each release with the mode as a product (25) and Debian sid's 26
 * and 27 (27 with 26's symbols/ data): the offset and the bits hold where
 * the phase is followed, not only read at rest. */
Test(load, generational_shenandoah_cycles_counted_as_its_log_shows, .timeout = 240)
{
	shenandoah_cycles_as_logged(25);
}

Test(load, generational_shenandoah_cycles_counted_as_its_log_shows_26, .timeout = 240)
{
	shenandoah_cycles_as_logged(26);
}

Test(load, generational_shenandoah_cycles_counted_as_its_log_shows_27, .timeout = 240)
{
	shenandoah_cycles_as_logged(27);
}

/* Generational Shenandoah (JDK 25): a drop its young cycles show
 * (agent/shcycles.c) counts the list's older samples dead, and what the
 * list grew since counts alive once the markings agree. Before, with no
 * drop looked for there, the profiles written after a drop read the list
 * before it: +240..+303% (docs/load-shenandoah-generational-drops.md). */
Test(load, a_list_grown_since_a_drop_a_generational_shenandoah_young_cycle_found_is_read_whole, .timeout = 240)
{
	char java[1024];
	jdk_java(java, sizeof(java), 25);
	grown_list_read_whole(java, "-XX:+UseShenandoahGC -XX:ShenandoahGCMode=generational", false, 0.30);
}

/* No drop found in the service that drops nothing on generational ZGC
 * (JDK 21's, -XX:+ZGenerational), where its majors alone find them, on
 * the bench's 190 MiB cache and 3 GiB heap for 16 s (0 in 12 runs by
 * hand). That drops are found with the list there is
 * a_list_grown_since_a_drop_a_generational_zgc_major_found_is_read_whole's
 * (a site counted alive since its drop); a list dropped every 4 s, as
 * here, is found at times only (by hand 3, 3, 2, 0, 1, 0 drops: a major
 * judges the samples promoted, born ~2 s before it, and one finding a
 * drop needs the major before to have found the list alive). */
Test(load, no_drop_invented_generational_zgc, .timeout = 120)
{
	char java[1024];
	jdk_java(java, sizeof(java), 21);
	const char *gc = "-XX:+UseZGC -XX:+ZGenerational";
	long without = drops_found_in(java, gc, false, "-Xmx3g", 190, 16);
	cr_log_info("%s: %ld drops found in a service that drops nothing", gc, without);
	/* 0 in 12 runs by hand and in the tests; docs/test-bounds.md */
	cr_expect(without == 0, "%s: %ld drops found in a service that drops nothing", gc, without);
	/* Its majors counted at their end (marks.h, z_end): each has two old
	 * pauses among the young collections' three. By hand 3, 5, 5, 5, 7
	 * and 9 so counted in this run (9-12 majors in a row with two old
	 * pauses; the others before the promotion horizon was known, or asked
	 * for). */
	const char *z = drops_status ? strstr(drops_status, "generational ZGC's own majors: ") : NULL;
	const char *so = z ? strstr(z, "majors counted at their end: ") : NULL;
	long ended = so ? strtol(so + strlen("majors counted at their end: "), NULL, 10) : -1;
	cr_log_info("%s: %ld majors counted at their end (%.200s)", gc, ended, z ? z : "");
	/* not statistical; docs/test-bounds.md */
	cr_expect(ended >= 1, "%s: no major counted at its end:\n%s", gc, drops_status ? drops_status : "");
	free(drops_status);
	drops_status = NULL;
}

/* LoadService's truth file ("epoch_ms cache grow leak replaced" every
 * 100 ms) at `when`: column `col` (1 the cache's bytes by construction,
 * 4 the bytes its replacements allocated) of the last line at or before
 * it; -1 if none. */
#define TRUTH_CACHE 1
#define TRUTH_REPLACED 4
static double truth_at(const char *truth, double when, int col)
{
	double v = -1;
	for (const char *l = truth; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		long long f[5];
		int n = sscanf(l, "%lld %lld %lld %lld %lld", &f[0], &f[1], &f[2], &f[3], &f[4]);
		if (n <= col || truth_line_ends(l))
			continue;
		if ((double)f[0] / 1000 > when)
			break;
		v = (double)f[col];
	}
	return v;
}

/* A size in a text profile ("83.3 MiB", "6 B"): bytes. */
static double text_size(double v, const char *unit)
{
	return v * (!strcmp(unit, "GiB") ? MiB * 1024 : !strcmp(unit, "MiB") ? MiB : !strcmp(unit, "KiB") ? 1024 : 1);
}

/* The cache's two sites in a text profile, the sites whose leaf is
 * LoadService.cacheEntry, by the line of work() that calls them: [0] the
 * start-up fill (the earlier line), [1] the replacements; their inuse
 * ("  N. 83.3 MiB +- ...") and allocated bytes, -1 where absent. */
static void cache_sites(const char *t, double live[2], double alloc[2])
{
	int lines[2] = { -1, -1 };
	live[0] = live[1] = alloc[0] = alloc[1] = -1;
	for (const char *f = strstr(t, "LoadService.cacheEntry ("); f; f = strstr(f + 1, "LoadService.cacheEntry (")) {
		const char *w = strchr(f, '\n');
		int line = 0;
		if (!w || sscanf(w + 1, " LoadService.work (LoadService.java:%d)", &line) != 1)
			continue;
		const char *h = f;
		while (h > t && h[-1] != '\n')
			h--;
		if (h == t)
			continue;
		for (h--; h > t && h[-1] != '\n'; h--)
			;
		const char *al = strstr(h, " alloc ");
		double v, a;
		char unit[8], aunit[8];
		if (!al || al > f || sscanf(h, " %*d. %lf %7s", &v, unit) != 2 || sscanf(al, " alloc %lf %7s", &a, aunit) != 2)
			continue;
		/* Each site's first listing (the live sites' table); the
		 * earlier line is the fill. */
		if (line == lines[0] || line == lines[1] || lines[1] >= 0)
			continue;
		int k = lines[0] >= 0 && line > lines[0];
		if (!k && lines[0] >= 0)
			lines[1] = lines[0], live[1] = live[0], alloc[1] = alloc[0];
		lines[k] = line, live[k] = text_size(v, unit), alloc[k] = text_size(a, aunit);
	}
	if (lines[1] < 0) {     /* one site only: the later-line one's role unknown, taken as replacements */
		lines[1] = lines[0], live[1] = live[0], alloc[1] = alloc[0];
		live[0] = alloc[0] = -1;
	}
}

/* The allocated bytes of the cache's replacements in a text profile; -1
 * if absent. */
static double replacement_alloc(const char *t)
{
	double live[2], alloc[2];
	cache_sites(t, live, alloc);
	return alloc[1];
}

/* Serial and Parallel judge the old generation only in a full
 * collection. With a cache whose entries live ~10 s (LoadService
 * -Dturnover=0.1) their own come rarely: Parallel had one in its first
 * second and no other, or none at all. With mark=concurrent (the default
 * until mark=auto) no periodic profile asked for one, and Parallel on 21
 * read -100% at both of the cache's sites in every periodic profile (no
 * marking), on 17 the start-up fill +152% (alive as at that one marking)
 * and the replacements -100% (docs/load-parallel-serial-full.md,
 * docs/load-slow-turnover.md). At the default, mark=auto, each periodic
 * profile asks for a full collection within mark_budget=. Held: every
 * periodic profile that says it asked reads each site within
 * SITES_FULL_BOUND of the truth (the fill: C0 exp(-replaced / C0) of the
 * first cache C0, each entry's chance of never being replaced; the
 * replacements, the rest), and at least one said so (the budget may skip
 * every other one on Serial, whose full collections took 80-113 ms). */
#define SITES_FULL_BOUND 0.35

/* Whether the profile `t` says it asked for a full collection (its
 * "request:" line). */
static bool requested_full(const char *t)
{
	const char *req = strstr(t, "request: ");
	return req && strncmp(req + 9, "full collection requested", 25) == 0;
}

static void check_sites_after_full(const char *java, const char *gc_flag)
{
	char dir[] = "/tmp/hp-sites-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	struct jvm_result r = jvm_sh("cd %s && %s -Xmx3g %s -Dturnover=0.1 -agentpath:%s=interval=256k,period=4,format=text,"
				     "file=%s/p-%%t.txt,log=%s/log -cp %s LoadService 190 14 %s/truth > out 2>&1; echo java=$?; "
				     "ls %s/p-*.txt",
				     dir, java, gc_flag, HP_AGENT_PATH, dir, dir, HP_TEST_CLASSES, dir, dir);
	cr_assert(strstr(r.output, "java=0"), "%s %s: %s", java, gc_flag, r.output);
	char path[300];
	snprintf(path, sizeof(path), "%s/truth", dir);
	double end_s, last_s, c0 = read_truth(path, &end_s, &last_s);
	char *truth = jvm_slurp(path);
	cr_assert_not_null(truth);
	int asked = 0, periodic = 0;
	char all[512] = "";
	for (char *save, *f = strtok_r(r.output, "\n", &save); f; f = strtok_r(NULL, "\n", &save)) {
		if (!strstr(f, "/p-"))
			continue;
		char *t = jvm_slurp(f);
		double at = t ? profile_time(t) : -1;
		if (!t || at <= 0 || at > last_s) {
			free(t);
			continue;
		}
		periodic++;
		if (!requested_full(t)) {
			free(t);
			continue;
		}
		asked++;
		double live[2], alloc[2], cache = truth_at(truth, at, TRUTH_CACHE),
		       replaced = truth_at(truth, at, TRUTH_REPLACED);
		cache_sites(t, live, alloc);
		double fill = c0 * exp(-replaced / c0), want[2] = { fill, cache - fill };
		const char *name[2] = { "fill", "replacements" };
		for (int k = 0; k < 2; k++) {
			double err = live[k] / want[k] - 1;
			snprintf(all + strlen(all), sizeof(all) - strlen(all), " %s %+.1f%%", name[k], 100 * err);
			/* docs/test-bounds.md */
			cr_expect(live[k] >= 0 && fabs(err) < SITES_FULL_BOUND,
				  "%s %s: the %s read %.1f MiB against %.1f MiB by construction (%+.1f%%) at %.1f s\n%s", java,
				  gc_flag, name[k], live[k] / MiB, want[k] / MiB, 100 * err, at - (last_s - 14), t);
		}
		free(t);
	}
	cr_log_info("%s %s: %d periodic profiles, %d asked for a full collection:%s", java, gc_flag, periodic, asked, all);
	/* not statistical: the first periodic profile's request is always within the budget (none made before it); docs/test-bounds.md */
	cr_expect(asked >= 1, "%s %s: %d of %d periodic profiles asked for a full collection", java, gc_flag, asked,
		  periodic);
	free(truth);
	jvm_result_free(&r);
	jvm_sh("rm -rf %s", dir);
}

Test(load, parallel_slow_turnover_sites_right_at_default_options, .timeout = 200)
{
	char java[1024];
	jdk_java(java, sizeof(java), 21);
	check_sites_after_full(java, "-XX:+UseParallelGC");
}

Test(load, serial_slow_turnover_sites_right_at_default_options, .timeout = 200)
{
	check_sites_after_full(test_java(), "-XX:+UseSerialGC");
}

/* mark_pause=: once a requested full collection took longer than the
 * cap, periodic profiles ask for none again (the budget bounds only the
 * pauses' share of the time: Serial 25 under this load took 66-509 ms,
 * docs/load-acceptance-53.md), and say why; an asked-for profile (the
 * exit's) still gets its full collection. One run of Serial 17 with
 * LoadService at `period=2,mark_budget=50%,mark_pause=CAP` (a budget
 * that lets nearly every periodic profile ask): its periodic profiles, those
 * after the first that asked for a full collection and that named the
 * cap, whether the exit profile asked, whether the log named the cap. */
struct pause_run {
	int periodic, asked_later, capped, exit_asked;
	bool logged;
};

static struct pause_run run_with_pause_cap(unsigned cap)
{
	struct pause_run c = { 0 };
	char dir[] = "/tmp/hp-pause-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	struct jvm_result r = jvm_sh("cd %s && %s -Xmx3g -XX:+UseSerialGC -agentpath:%s=period=2,mark_budget=50%%,mark_pause=%u,format=text,"
				     "file=%s/p-%%t.txt,log=%s/log -cp %s LoadService 190 10 %s/truth > out 2>&1; echo java=$?; "
				     "ls %s/p-*.txt; cat %s/log",
				     dir, test_java(), HP_AGENT_PATH, cap, dir, dir, HP_TEST_CLASSES, dir, dir, dir);
	cr_assert(strstr(r.output, "java=0"), "%s", r.output);
	cr_log_info("mark_pause=%u:\n%s", cap, r.output);
	char path[300], said[64];
	snprintf(path, sizeof(path), "%s/truth", dir);
	snprintf(said, sizeof(said), "over mark_pause=%u ms", cap);
	double end_s, last_s;
	read_truth(path, &end_s, &last_s);
	c.logged = strstr(r.output, "periodic profiles ask for none from now on") != NULL;
	bool first = true;
	for (char *save, *f = strtok_r(r.output, "\n", &save); f; f = strtok_r(NULL, "\n", &save)) {
		if (!strstr(f, "/p-") || strstr(f, "heapprobe:"))
			continue;
		char *t = jvm_slurp(f);
		double at = t ? profile_time(t) : -1;
		const char *req = t ? strstr(t, "request: ") : NULL;
		bool full = t && requested_full(t);
		if (t && at > 0 && at <= last_s) {
			c.periodic++;
			/* not statistical; docs/test-bounds.md */
			cr_expect(!first || full, "mark_pause=%u: the first periodic profile asked for no full collection\n%s",
				  cap, t);
			c.asked_later += !first && full;
			c.capped += req && strstr(req, said) != NULL;
			first = false;
		} else if (t && at > last_s) {
			c.exit_asked += full;
		}
		free(t);
	}
	cr_log_info("mark_pause=%u: %d periodic profiles, %d over the cap, %d asked after the first, exit asked %d", cap,
		    c.periodic, c.capped, c.asked_later, c.exit_asked);
	jvm_result_free(&r);
	jvm_sh("rm -rf %s", dir);
	return c;
}

/* With mark_pause=1 every full collection of a 190 MiB cache is over
 * it: the first periodic profile asks, every later one says it was over
 * the cap (tested before the budget, whose skip does not last), none
 * asks, where the budget would let them. The control, mark_pause=600000
 * (10 min), is never reached: later periodic profiles ask again (Serial
 * 17's full collections ~30-130 ms, 2 s apart within a 50% budget),
 * none names the cap. Fails where the cap is ignored, always applied, or applied to
 * the exit profile. */
Test(load, serial_mark_pause_stops_periodic_full_collections, .timeout = 200)
{
	struct pause_run c = run_with_pause_cap(1), u = run_with_pause_cap(600000);
	/* not statistical; docs/test-bounds.md */
	cr_expect(c.periodic >= 3 && u.periodic >= 3, "%d and %d periodic profiles", c.periodic, u.periodic);
	cr_expect_eq(c.asked_later, 0, "%d periodic profiles asked for a full collection after one over mark_pause=1",
		     c.asked_later);
	cr_expect_eq(c.capped, c.periodic - 1, "%d of the %d periodic profiles after the first say they were over mark_pause=1",
		     c.capped, c.periodic - 1);
	cr_expect(c.logged, "the log does not say the cap was reached");
	cr_expect_eq(c.exit_asked, 1, "the exit profile did not get its full collection under the cap");
	cr_expect(u.asked_later >= 1 && u.capped == 0 && !u.logged,
		  "under the cap (mark_pause=600000): %d later periodic profiles asked, %d named the cap, logged %d",
		  u.asked_later, u.capped, u.logged);
	cr_expect_eq(u.exit_asked, 1, "the exit profile did not get its full collection");
}

/* HotSpot 11-24's sampler takes the first object of a thread's first
 * TLAB after a collection ahead of its turn (samplerate.h): on Serial
 * with LoadService's cache turning over slowly, the object a worker
 * allocates first after each young pause is the cache's entry, and the
 * replacements' allocated bytes read +32.8% and +37.1% on the median on 11
 * and 21 at 512k (docs/sampler-after-gc.md, 12 profiles each); with those
 * samples set aside, +0.7% and -1.0%. At INTERVAL the extra samples are
 * as many (one a collection and thread) and the site's own fewer, so
 * the bias it holds is larger beside the sampling error. Held: the last
 * periodic profile's figure within BOUND of what LoadService counted,
 * the set-aside count stated and above 0 on 11 and 21; on 25
 * (JDK-8356372's accounting: none taken early, none set aside) within
 * BOUND too, and no set-aside stated. */
#define AFTER_GC_INTERVAL "1m"
#define AFTER_GC_BOUND 0.28
static void check_replacements_alloc(const char *java, const char *gc_flag, bool set_aside)
{
	char dir[] = "/tmp/hp-afgc-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	struct jvm_result r = jvm_sh("cd %s && %s -Xmx3g %s -Dturnover=0.1 -agentpath:%s=interval=%s,period=4,format=text,"
				     "file=%s/p-%%t.txt,log=%s/log -cp %s LoadService 190 13 %s/truth > out 2>&1; echo java=$?; "
				     "ls %s/p-*.txt",
				     dir, java, gc_flag, HP_AGENT_PATH, AFTER_GC_INTERVAL, dir, dir, HP_TEST_CLASSES, dir, dir);
	cr_assert(strstr(r.output, "java=0"), "%s %s: %s", java, gc_flag, r.output);
	char path[300];
	snprintf(path, sizeof(path), "%s/truth", dir);
	char *truth = jvm_slurp(path);
	cr_assert_not_null(truth);
	double end = 0;
	const char *e = strstr(truth, " end");
	for (const char *l = truth; l && *l && (!e || l < e); l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		long long ms;
		if (sscanf(l, "%lld", &ms) == 1)
			end = (double)ms / 1000;
	}
	/* the last periodic profile written while the workers ran */
	double est = -1, counted = -1, when = -1;
	char *last_text = NULL;
	for (char *save, *f = strtok_r(r.output, "\n", &save); f; f = strtok_r(NULL, "\n", &save)) {
		if (!strstr(f, "/p-"))
			continue;
		char *t = jvm_slurp(f);
		double at = t ? profile_time(t) : -1;
		if (t && at > 0 && at <= end && at > when) {
			double a = replacement_alloc(t), c = truth_at(truth, at, TRUTH_REPLACED);
			if (a > 0 && c > 0) {
				est = a, counted = c, when = at;
				free(last_text);
				last_text = t;
				continue;
			}
		}
		free(t);
	}
	cr_assert(est > 0 && counted > 0, "%s %s: no periodic profile with the replacements' site", java, gc_flag);
	const char *aside = strstr(last_text, " samples set aside");
	long n = 0;
	if (aside) {
		const char *d = aside;
		while (d > last_text && d[-1] >= '0' && d[-1] <= '9')
			d--;
		n = atol(d);
	}
	double err = est / counted - 1;
	cr_log_info("%s %s: the replacements' allocated bytes %.1f MiB against %.1f MiB counted (%+.1f%%); %ld samples set "
		    "aside", java, gc_flag, est / MiB, counted / MiB, 100 * err, n);
	/* docs/test-bounds.md */
	cr_expect(fabs(err) < AFTER_GC_BOUND, "%s %s: the replacements' allocated bytes %+.1f%% off what LoadService counted", java,
		  gc_flag, 100 * err);
	if (set_aside)
		cr_expect(aside && n > 0, "%s %s: the samples set aside are stated: %s", java, gc_flag,
			  aside ? "0" : "no such line");
	else
		cr_expect_null(aside, "%s %s: the sampler of JDK-8356372 takes no such samples, none set aside", java,
			       gc_flag);
	free(last_text);
	free(truth);
	jvm_result_free(&r);
	jvm_sh("rm -rf %s", dir);
}

Test(load, sampler_first_object_after_a_collection_set_aside, .timeout = 200)
{
	char java[1024];
	jdk_java(java, sizeof(java), 11);
	check_replacements_alloc(java, "-XX:+UseSerialGC", true);
	jdk_java(java, sizeof(java), 21);
	check_replacements_alloc(java, "-XX:+UseSerialGC", true);
	jdk_java(java, sizeof(java), 25);
	check_replacements_alloc(java, "-XX:+UseParallelGC", false);
}
