/* Plumbing shared by the profile writers (pprof.c, collapsed.c, html.c):
 * an output file that only replaces its destination once it is complete,
 * a string interner, and the checks every writer makes on its input.
 * Internal to the agent: nothing here is part of the public API. */
#ifndef HP_WRITER_H
#define HP_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/profile.h"
#include "vmstructs/strmap.h"

/* A buffered output whose errors are sticky: the generators write without
 * checking each call, and hp_out_commit() reports the first failure. That
 * keeps the format code readable and still catches ENOSPC wherever the disk
 * fills up (a buffered write, the final flush, fsync or close). */
struct hp_out {
	int fd;
	int err;                /* first errno seen, 0 while all is well */
	const char *path;       /* destination, for messages */
	char *tmp;              /* temporary file renamed over dest; NULL when written in place */
	char *dest;             /* the file written: path, its links followed; NULL for a caller's fd */
	bool regular;           /* dest is a regular file (fsync it) */
	bool nonblock;          /* a FIFO or terminal opened O_NONBLOCK: poll when full */
	char why[200];          /* a reason strerror cannot give, for the error message */
	bool mem;               /* hp_out_open_mem: everything stays in buf */
	unsigned char *buf;
	size_t len, cap;
	uint64_t flushed;       /* bytes gone from buf to fd */
};

/* Opens `path` for a profile. A regular file we own (or nothing yet) is
 * written to `path`.tmpXXXXXX next to it (links followed; same file
 * system, so the final rename is atomic). A FIFO, a character device,
 * /dev/stdout and the like, or a regular file another user owns or with
 * other hard links, is written in place, never replaced (writer.c says
 * why each). 0, or a negative errno with the reason in err. */
int hp_out_open(struct hp_out *o, const char *path, char *err, size_t errlen);
/* Writes into an fd the caller owns (tests: /dev/full); commit flushes but
 * neither closes nor renames. */
int hp_out_open_fd(struct hp_out *o, int fd, const char *name, char *err, size_t errlen);

/* Into memory: the generators write as to a file; hp_out_take hands the
 * bytes over. */
int hp_out_open_mem(struct hp_out *o, const char *name);
/* The bytes written (malloc'd, the caller frees) and their length, or NULL
 * with the first error as a negative errno in *rc. */
unsigned char *hp_out_take(struct hp_out *o, size_t *len, int *rc);

void hp_out_write(struct hp_out *o, const void *data, size_t n);
void hp_out_str(struct hp_out *o, const char *s);
void hp_out_printf(struct hp_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether bytes already written can be overwritten (hp_out_patch): in
 * memory, or this output's own temporary file. Never an output written in
 * place (a pipe, a device, /dev/stdout or /proc/PID/fd/N opened to append,
 * another user's file), nor a caller's fd. */
bool hp_out_can_patch(const struct hp_out *o);
/* Whether hp_out_open(path) would write a temporary file and rename it
 * into place (so that the output can be patched and a failure leaves
 * nothing behind). Opens nothing. */
bool hp_out_replaces(const char *path);
/* Overwrites n bytes at offset `at` of what was written so far: a header
 * whose fields are known only at the end. 0, or a negative errno (also
 * recorded, as every failure): -ESPIPE where hp_out_can_patch says no,
 * -EINVAL for bytes not yet written. */
int hp_out_patch(struct hp_out *o, uint64_t at, const void *data, size_t n);

/* Records a failure of the generator itself (e.g. -ENOMEM); the first one
 * wins and commit reports it. */
void hp_out_fail(struct hp_out *o, int neg_errno);

/* Flushes, fsyncs and renames the temporary file over `path` (written in
 * place: flushes and closes). On any failure, recorded earlier or met now,
 * the temporary file is removed, the old `path` stays as it was and the
 * result is a negative errno with "cannot write <path>: <reason>" in err.
 * Frees the buffer either way. */
int hp_out_commit(struct hp_out *o, char *err, size_t errlen);

/* Tests only: when set, called with the temporary file's fd right after it
 * is created; the test may dup2() another file over it (/dev/full to
 * simulate a full disk). A negative return fails the open. */
extern int (*hp_out_test_hook)(int fd);

/* Dense ids for distinct strings, in order of first appearance. Keys are
 * borrowed (they must outlive the interner) unless `own` is set, in which
 * case each new key is copied. */
struct hp_intern {
	const char **keys;
	uint32_t count, cap;
	bool own;
	struct hp_strmap map;
};

int hp_intern_init(struct hp_intern *in, uint32_t expected, bool own);
void hp_intern_free(struct hp_intern *in);
/* Stores the id of s (NULL counts as "") in *id, adding s if new.
 * 0, or -ENOMEM. */
int hp_intern(struct hp_intern *in, const char *s, uint32_t *id);

/* Checks what the writers rely on: frame indices in range, arrays present
 * when their counts are non-zero. 0, or -EINVAL with "cannot write <path>:
 * invalid profile: <why>" in err. */
int hp_profile_check(const struct hp_profile *p, const char *path, char *err, size_t errlen);

/* A NULL profile is written as an empty one. */
const struct hp_profile *hp_profile_or_empty(const struct hp_profile *p);

/* NULL-safe view of a profile string. */
static inline const char *hp_str(const char *s)
{
	return s ? s : "";
}

/* Formats "cannot write <path>: <strerror(-neg_errno)>" into err. */
void hp_out_reason(char *err, size_t errlen, const char *path, int neg_errno);

#endif
