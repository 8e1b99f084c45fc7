/* Builds the symbol index of a real libjvm N times and reports the wall
 * time of each build (median/min/max) and the memory the first index adds.
 *
 * Build and run: see docs/symtab-benchmark.md.
 *
 * RSS is read from /proc/self/status around the first build only: later
 * builds reuse freed heap and page-cache-backed mappings and would
 * understate the cost. The index is kept open while RSS is read, because
 * the cost that matters is that of an index the agent holds.
 */
#include "vmstructs/symtab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_LIBJVM "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double clock_ms(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Sorts v and prints its median, min and max. */
static void summary(const char *label, double *v, int n, const char *what)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	printf("%-11s median %.2f  min %.2f  max %.2f  (%s)\n", label,
	       n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1], what);
}

/* Field of /proc/self/status in kB, or -1. */
static long status_kb(const char *field)
{
	char line[256];
	size_t flen = strlen(field);
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
			kb = strtol(line + flen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : DEFAULT_LIBJVM;
	int runs = argc > 2 ? atoi(argv[2]) : 30;
	struct hp_symtab_opts opts = { .sz = sizeof(opts), .load_base = 0x7f0000000000ull };
	struct hp_symtab *t;
	char err[512];
	double *ms, *cpu;
	long rss0, anon0, file0, hwm0, rss1 = 0, anon1 = 0, file1 = 0, hwm1 = 0;

	if (runs < 1)
		runs = 1;
	ms = calloc((size_t)runs, sizeof(*ms));
	cpu = calloc((size_t)runs, sizeof(*cpu));
	if (!ms || !cpu)
		return 1;

	rss0 = status_kb("VmRSS");
	anon0 = status_kb("RssAnon");
	file0 = status_kb("RssFile");
	hwm0 = status_kb("VmHWM");
	for (int i = 0; i < runs; i++) {
		/* Wall time is what the agent's start-up pays; CPU time of
		 * the thread is the same work without the noise of other
		 * processes competing for the CPU. */
		double t0 = clock_ms(CLOCK_MONOTONIC), c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
		int rc = hp_symtab_open(path, &opts, &t, err, sizeof(err));

		ms[i] = clock_ms(CLOCK_MONOTONIC) - t0;
		cpu[i] = clock_ms(CLOCK_THREAD_CPUTIME_ID) - c0;
		if (rc) {
			fprintf(stderr, "hp_symtab_open: %s\n", err);
			return 1;
		}
		if (i == 0) {
			rss1 = status_kb("VmRSS");
			anon1 = status_kb("RssAnon");
			file1 = status_kb("RssFile");
			hwm1 = status_kb("VmHWM");
			printf("file        %s\n", path);
			printf("origin      %s (%s)\n", hp_symtab_origin_name(hp_symtab_origin(t)),
			       hp_symtab_symbols_path(t));
			printf("build-id    %s\n", hp_symtab_build_id(t));
			printf("symbols     %zu (.symtab %zu, .dynsym %zu)\n", hp_symtab_count(t),
			       hp_symtab_count_symtab(t), hp_symtab_count_dynsym(t));
			if (!hp_symtab_find(t, "_ZN13CollectedHeap12memory_usageEv"))
				fprintf(stderr, "warning: CollectedHeap::memory_usage not found\n");
		}
		hp_symtab_close(t);
	}
	printf("runs        %d\n", runs);
	summary("wall ms", ms, runs, "all runs, first included");
	summary("cpu ms", cpu, runs, "thread CPU time");
	printf("RSS added   %.2f MB (anon %.2f MB, file-backed %.2f MB) with the index open\n",
	       (rss1 - rss0) / 1024.0, (anon1 - anon0) / 1024.0, (file1 - file0) / 1024.0);
	printf("peak added  %.2f MB (VmHWM; includes the sort's temporary arrays)\n",
	       (hwm1 - hwm0) / 1024.0);
	free(ms);
	free(cpu);
	return 0;
}
