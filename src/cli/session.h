/* One use of the heapprobe command on one JVM: the target, the library as
 * the JVM sees it (copied into its file system when our path is not
 * visible there), a private directory in the JVM's /tmp for the agent's
 * answers and profiles, and the agent commands sent over the attach
 * protocol. Everything it creates in the JVM's file system is removed by
 * hp_session_close, on success and on every error. */
#ifndef HP_CLI_SESSION_H
#define HP_CLI_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/attach.h"
#include "cli/jvmstat.h"

struct hp_session {
	struct hp_target t;
	struct hp_jvmstat js;       /* js.map NULL without perfdata */
	int timeout_ms;
	char lib_local[4096];       /* our libheapprobe.so */
	char lib_jvm[4096];         /* the path the JVM loads */
	char lib_copy[512];         /* our path of the copy we made, "" if none */
	char lib_dir[128];          /* ... and of its private directory */
	char dir_jvm[128];          /* the private directory, as the JVM sees it */
	char dir_local[256];        /* ... as we reach it */
	bool quiet;                 /* no agent messages on stderr */
	int java_feature;           /* 11, 17, ...; 0 if unknown */
};

/* Resolves and checks the target, finds our library (lib_path, else
 * HEAPPROBE_LIB, else libheapprobe.so beside the executable or in ../lib),
 * makes the private directory. 0 or an hp_cli_exit code with err. */
int hp_session_open(struct hp_session *s, int pid, const char *lib_path, int timeout_ms, char *err, size_t errlen);
void hp_session_close(struct hp_session *s);

/* Sends the agent `options` (reply= is added): loads the library if it is
 * not loaded yet. The agent's answer (its reply file) is returned in
 * *answer (malloc'd; may be empty). 0 when the agent accepted, else an
 * hp_cli_exit code with err (HP_EXIT_REFUSED: the agent said no; its
 * reason is in *answer). */
int hp_session_agent(struct hp_session *s, const char *options, char **answer, char *err, size_t errlen);

/* The private directory's path for a file named `name`, as the JVM sees it. */
void hp_session_jvm_file(const struct hp_session *s, const char *name, char *out, size_t cap);

/* Copies every file the agent wrote as `name` or `name`.<ext> in the
 * private directory to dest or dest.<ext>, written as the user who runs
 * the command, with the agent's own write rules (never clobbering: a FIFO
 * or another user's file is written in place, a file of ours replaced
 * atomically). Names what it wrote in `wrote`. 0 or an hp_cli_exit code. */
int hp_session_fetch(struct hp_session *s, const char *name, const char *dest, char *wrote, size_t wrotelen,
		     char *err, size_t errlen);

/* Whether the agent's profiler runs in the JVM (asks `status`); -1 with
 * err on failure. */
int hp_session_running(struct hp_session *s, char *err, size_t errlen);

#endif
