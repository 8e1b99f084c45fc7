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

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : DEFAULT_LIBJVM;
	int runs = argc > 2 ? atoi(argv[2]) : 30;
	struct hp_symtab_opts opts = { .sz = sizeof(opts), .load_base = 0x7f0000000000ull };
	struct hp_symtab *t;
	char err[512];
	double *ms;
	long rss0, anon0, file0, rss1, anon1, file1;

	if (runs < 1)
		runs = 1;
	ms = calloc((size_t)runs, sizeof(*ms));
	if (!ms)
		return 1;

	rss0 = status_kb("VmRSS");
	anon0 = status_kb("RssAnon");
	file0 = status_kb("RssFile");
	for (int i = 0; i < runs; i++) {
		double t0 = now_ms();
		int rc = hp_symtab_open(path, &opts, &t, err, sizeof(err));

		ms[i] = now_ms() - t0;
		if (rc) {
			fprintf(stderr, "hp_symtab_open: %s\n", err);
			return 1;
		}
		if (i == 0) {
			rss1 = status_kb("VmRSS");
			anon1 = status_kb("RssAnon");
			file1 = status_kb("RssFile");
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
	qsort(ms, (size_t)runs, sizeof(*ms), cmp_double);
	printf("runs        %d\n", runs);
	printf("build ms    median %.2f  min %.2f  max %.2f  (first %s)\n",
	       runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2,
	       ms[0], ms[runs - 1], "included");
	printf("RSS added   %.2f MB (anon %.2f MB, file-backed %.2f MB)\n",
	       (rss1 - rss0) / 1024.0, (anon1 - anon0) / 1024.0, (file1 - file0) / 1024.0);
	free(ms);
	return 0;
}
