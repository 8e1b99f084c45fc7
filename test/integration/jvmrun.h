/* Runs a real JVM for a test and captures what it prints. */
#ifndef HP_JVMRUN_H
#define HP_JVMRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct jvm_result {
	int exit_code;              /* -1 if killed or not run */
	int timed_out;
	char *output;               /* stdout + stderr, NUL-terminated, malloc'd */
	size_t len;
};

/* argv[0] is the launcher to run (a path). `env` entries
 * ("K=V") are added to the environment; NULL-terminated; may be NULL. */
struct jvm_result jvm_run(const char *const *argv, const char *const *env, int timeout_s);
void jvm_result_free(struct jvm_result *r);

/* The value after "key: " on its own line in the output, copied to buf;
 * NULL if the line is absent. */
const char *jvm_field(const struct jvm_result *r, const char *key, char *buf, size_t cap);

/* Sum of the values of collapsed-stack lines ("a;b;leaf;Class_[i] 123")
 * whose leaf code frame is `leaf` (the class frame skipped), or whose
 * stack contains `frame` when leaf is NULL; -1 if the file is missing. */
double collapsed_sum(const char *path, const char *leaf, const char *frame);

/* The Go toolchain for `go tool pprof`: scripts/setup.sh's /usr/local/go
 * (not on a fresh root's PATH), else whatever `go` the PATH finds. */
const char *jvm_go(void);

/* /bin/sh -c the formatted command, its output and exit code (120 s at most). */
struct jvm_result jvm_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Waits up to timeout_s for child `pid` to end: its wait status, or -1
 * if it did not end in time, in which case it is killed (SIGKILL) and
 * reaped, so that a hung JVM fails its test instead of passing it and
 * running on into the next ones. */
int jvm_wait(pid_t pid, int timeout_s);

/* Waits up to timeout_s for `text` in the file `log` (a program's output,
 * e.g. "ready"): true once there; false if it never comes, or if `child`
 * (when > 0) ends first. */
bool jvm_wait_output(const char *log, const char *text, pid_t child, int timeout_s);

/* The whole file, NUL-terminated and malloc'd; NULL if it cannot be read. */
char *jvm_slurp(const char *path);

#endif
