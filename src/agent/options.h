/* Agent options: comma-separated name[=value], sizes with k/m/g. */
#ifndef HP_OPTIONS_H
#define HP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/formats.h"

/* How a sample's stack is found (sample.c): GetStackTrace answers cached
 * by the frame walker's key, checked every 1024th hit (default); every
 * hit checked; or GetStackTrace for every sample. */
enum hp_stacks_mode { HP_STACKS_CACHE = 0, HP_STACKS_VERIFY, HP_STACKS_JVMTI };

/* Whether a profile about to be written may ask the collector for a
 * marking first, so that its live view is verified as of now (marks.c):
 * a concurrent cycle where the collector has one (G1, ZGC, Shenandoah),
 * and on Serial and Parallel, which have none, a full collection at exit
 * only (CONCURRENT); also a stop-the-world full collection on Serial and
 * Parallel before any profile, and no waiting for the collector's own
 * cycles (FULL); never (OFF); or (AUTO, the default) CONCURRENT where
 * the collector has a concurrent marking and, on Serial and Parallel, a
 * full collection before any profile unless -XX:+DisableExplicitGC, the
 * periodic ones within mark_budget= as every request: without it their
 * view of the old generation is as old as their last full collection,
 * which under load may be the only one, in the first second
 * (docs/load-parallel-serial-full.md). */
enum hp_mark_policy { HP_MARK_CONCURRENT = 0, HP_MARK_FULL, HP_MARK_OFF, HP_MARK_AUTO };

/* mark_budget's default: 1/50 of the wall clock in requested markings. */
#define HP_MARK_BUDGET_DEFAULT 0.02

/* mark_timeout's default: seconds a requested marking may take before the
 * profile goes on without it. */
#define HP_MARK_TIMEOUT_DEFAULT 60

struct hp_agent_options {
	/* profiler */
	bool profile;               /* sample allocations (on unless only info/verify given) */
	uint64_t interval;          /* mean bytes between samples (SetHeapSamplingInterval) */
	bool live;                  /* track which samples are still alive */
	unsigned min_age;           /* report live samples that survived >= N markings */
	unsigned depth;             /* max stack frames */
	char file[512];             /* output path; %p = pid, %t = timestamp */
	enum hp_format format;      /* the first of `formats` */
	unsigned formats;           /* bit (1 << hp_format) per format to write; format=jfr+pprof: both */
	unsigned period;            /* also write every N seconds (0 = only at exit) */
	unsigned max_live;          /* cap on tracked live samples */
	enum hp_stacks_mode stacks;
	enum hp_mark_policy mark;
	double mark_budget;         /* periodic requests keep requested markings under this share of the wall clock */
	unsigned mark_timeout;      /* seconds a request may take before the profile goes on without it */
	unsigned mark_pause;        /* ms: no periodic stop-the-world request after one took longer (0 = no cap) */
	bool format_given;          /* format= named (dump/stop: this write's format) */
	/* commands to an agent already running (dynamic attach; the heapprobe
	 * command sends them): dump and stop write to this command's file= and
	 * format= when given; stop,discard writes nothing; status and top=N
	 * answer in text (to reply= when given). */
	bool dump, stop, discard, status;
	unsigned top;               /* top=N: the N largest live sites as tab-separated lines; 0 = not asked */
	char reply[512];            /* this command's messages and answers go here instead of the log */
	/* reports */
	bool info;                  /* print the info report at VM start */
	bool info_at_exit;          /* info=exit: print it at VM death instead */
	bool verify;                /* check the layout data against DWARF */
	char log[256];              /* where messages and info go; "" = stderr */
	bool verbose;               /* each profile's log line with the estimator's full account (else one short line) */
	char upload[512];           /* continuous profiling: server base URL ("" = none) */
	char app[128];              /* application name for the server */
	char labels[256];           /* "k=v;k=v" */
	unsigned upload_queue;      /* periods kept while the server is down (0: HP_UPLOAD_QUEUE) */
};

/* Parses `spec` (NULL or "" = defaults: profile with pprof output). On error
 * returns -EINVAL with a one-line message naming the bad option and listing
 * the valid ones. */
int hp_options_parse(const char *spec, struct hp_agent_options *out, char *err, size_t errlen);

/* Expands %p and %t in opts->file (or the default name) into out. */
void hp_options_output_path(const struct hp_agent_options *o, char *out, size_t cap);

/* The same with "_seq" after each %t's time when seq > 0: %t has a
 * second's resolution, and a profile whose name is taken (a second one
 * written in the same second: a periodic one, then the exit's) takes _1,
 * _2, ... rather than replace the first (snapshot.c). '_' sorts after
 * the '.', '-' and digits that follow a time in a name, so sorted by name
 * the profiles stay in the order they were written (the last is the
 * latest). */
void hp_options_output_path_seq(const struct hp_agent_options *o, unsigned seq, char *out, size_t cap);

const char *hp_format_extension(enum hp_format f);

/* Where messages go: the calling thread's reply file while a command
 * with reply= runs (hp_log_set_reply), else the log= file (appended), else
 * stderr; a log that cannot be opened is said once on stderr. Close with
 * hp_log_close. */
FILE *hp_log_open(const struct hp_agent_options *o);
void hp_log_close(FILE *f);
/* While set (non-NULL), hp_log_open on this thread returns `f`: a command's
 * messages go back to whoever sent it (the heapprobe command reads the
 * file after the JVM answers). Thread-local: the agent thread's periodic
 * messages keep going to the log. */
void hp_log_set_reply(FILE *f);

#endif
