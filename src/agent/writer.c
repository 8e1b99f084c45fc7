#include "agent/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUT_BUFSIZE (64 * 1024)

int (*hp_out_test_hook)(int fd);

void hp_out_reason(char *err, size_t errlen, const char *path, int neg_errno)
{
	if (err && errlen)
		snprintf(err, errlen, "cannot write %s: %s", path ? path : "(null)", strerror(-neg_errno));
}

/* The process umask, read without umask(2): setting it to read it would
 * race with other threads of the JVM creating files. */
static mode_t current_umask(void)
{
	mode_t mask = 022;
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return mask;
	char line[128];
	while (fgets(line, sizeof(line), f)) {
		unsigned int m;
		if (sscanf(line, "Umask: %o", &m) == 1) {
			mask = (mode_t)m & 0777;
			break;
		}
	}
	fclose(f);
	return mask;
}

/* "cannot write <path>: <why or strerror>". */
static void out_error(const struct hp_out *o, char *err, size_t errlen, int neg_errno)
{
	if (o->why[0] && err && errlen)
		snprintf(err, errlen, "cannot write %s: %s", o->path ? o->path : "(null)", o->why);
	else
		hp_out_reason(err, errlen, o->path, neg_errno);
}

static int out_init_buf(struct hp_out *o)
{
	o->buf = malloc(OUT_BUFSIZE);
	if (!o->buf)
		return -ENOMEM;
	o->cap = OUT_BUFSIZE;
	return 0;
}

/* ---- where a profile goes --------------------------------------------------
 *
 * A path we are given is written through, not replaced, unless it is a
 * regular file we own. What `path` names is looked at once per write,
 * following symbolic links one hop at a time:
 *  - nothing yet, or a regular file owned by us with no other hard link:
 *    a temporary file next to it, renamed over it once complete (a reader
 *    never sees half a profile; a crash or a full disk leaves the old one);
 *  - a symbolic link: the same decision for what it points to; the link
 *    stays a link (a dangling one gets its target created);
 *  - a FIFO or a character device (a terminal, /dev/null), or a link in
 *    /proc/PID/fd (what /dev/stdout and /dev/fd/N resolve to, whatever the
 *    descriptor is: a pipe, a terminal, the log file a shell redirected):
 *    opened and written in place, never truncated, never replaced;
 *  - a regular file someone else owns, or one with other hard links:
 *    truncated and written in place, so its owner, modes and links stay
 *    (not atomic: that is the price of not replacing another's file);
 *  - a directory, a block device or a socket: refused with the reason. */
enum out_kind { OUT_REPLACE, OUT_THROUGH };

/* A link in /proc/<pid>/fd or /proc/<pid>/task/<tid>/fd, however reached
 * (/dev/stdout -> /proc/self/fd/1, /dev/fd/1 through the /dev/fd link): a
 * magic link that opens the descriptor's own file, pipe or terminal, and
 * whose readlink text ("pipe:[123]") is no path. */
static bool proc_fd_link(const char *p)
{
	const char *slash = strrchr(p, '/');
	if (!slash)
		return false;
	char *dir = strndup(p, slash == p ? 1 : (size_t)(slash - p));
	char real[PATH_MAX];
	bool fd = dir && realpath(dir, real) && strncmp(real, "/proc/", 6) == 0 &&
		  strlen(real) > 9 && strcmp(real + strlen(real) - 3, "/fd") == 0;
	free(dir);
	return fd;
}

/* Joins a relative link target to the directory of the link. */
static char *link_target(const char *link, const char *target)
{
	if (target[0] == '/')
		return strdup(target);
	const char *slash = strrchr(link, '/');
	size_t dlen = slash ? (size_t)(slash - link) + 1 : 0;
	char *r = malloc(dlen + strlen(target) + 1);
	if (r) {
		memcpy(r, link, dlen);
		strcpy(r + dlen, target);
	}
	return r;
}

/* Decides how `path` is written (see above): *dest (malloc'd) is the file
 * to replace or open, *flags the open(2) flags for OUT_THROUGH. A negative
 * errno, with a reason in why when strerror would not say it. */
static int out_target(const char *path, char **dest, int *flags, char *why, size_t whylen)
{
	char *cur = strdup(path);
	for (int hops = 0; cur; hops++) {
		struct stat st;
		if (hops > 40) {
			free(cur);
			return -ELOOP;
		}
		if (lstat(cur, &st) != 0) {
			int e = errno;
			if (e != ENOENT) {
				free(cur);
				return -e;
			}
			*dest = cur;   /* nothing there yet: created by the rename */
			return OUT_REPLACE;
		}
		if (S_ISLNK(st.st_mode)) {
			if (proc_fd_link(cur)) {
				*dest = cur;
				*flags = O_WRONLY | O_APPEND | O_NOCTTY | O_NONBLOCK;
				return OUT_THROUGH;
			}
			char target[PATH_MAX];
			ssize_t n = readlink(cur, target, sizeof(target) - 1);
			if (n < 0) {
				int e = errno;
				free(cur);
				return -e;
			}
			target[n] = 0;
			char *next = link_target(cur, target);
			free(cur);
			cur = next;
			continue;
		}
		if (S_ISREG(st.st_mode)) {
			*dest = cur;
			if (st.st_uid == geteuid() && st.st_nlink == 1)
				return OUT_REPLACE;
			*flags = O_WRONLY | O_TRUNC | O_NOCTTY;
			return OUT_THROUGH;
		}
		if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
			*dest = cur;
			*flags = O_WRONLY | O_NOCTTY | O_NONBLOCK;
			return OUT_THROUGH;
		}
		snprintf(why, whylen, "%s is %s; a profile is written only to a regular file, a FIFO or a character device",
			 cur, S_ISDIR(st.st_mode) ? "a directory" : S_ISBLK(st.st_mode) ? "a block device" :
			 S_ISSOCK(st.st_mode) ? "a socket" : "not a file");
		free(cur);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	return -ENOMEM;
}

/* Opens a FIFO, terminal or foreign file in place. A FIFO without a reader
 * (ENXIO with O_NONBLOCK) gets two seconds for one to come: open(2)
 * without O_NONBLOCK would wait for ever and hang the JVM's exit. */
static int open_through(struct hp_out *o, int flags)
{
	for (int tries = 0;; tries++) {
		o->fd = open(o->dest, flags | O_CLOEXEC);
		if (o->fd >= 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != ENXIO || tries >= 20)
			return -errno;
		usleep(100 * 1000);
	}
	struct stat st;
	o->regular = fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode);
	o->nonblock = (flags & O_NONBLOCK) != 0;
	return 0;
}

static void out_free(struct hp_out *o)
{
	free(o->tmp);
	free(o->dest);
	free(o->buf);
	o->tmp = o->dest = NULL;
	o->buf = NULL;
}

int hp_out_open(struct hp_out *o, const char *path, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->path = path;
	if (!path || !*path) {
		hp_out_reason(err, errlen, path, -EINVAL);
		return -EINVAL;
	}
	if (out_init_buf(o) < 0) {
		hp_out_reason(err, errlen, path, -ENOMEM);
		return -ENOMEM;
	}
	int flags = 0;
	int rc = out_target(path, &o->dest, &flags, o->why, sizeof(o->why));
	if (rc == OUT_THROUGH) {
		rc = open_through(o, flags);
		if (rc == -ENXIO)
			snprintf(o->why, sizeof(o->why), "no process has the FIFO %s open for reading (waited 2 s)", o->dest);
		goto done;
	}
	if (rc < 0)
		goto done;
	size_t n = strlen(o->dest);
	o->tmp = malloc(n + sizeof(".tmpXXXXXX"));
	if (!o->tmp) {
		rc = -ENOMEM;
		goto done;
	}
	memcpy(o->tmp, o->dest, n);
	memcpy(o->tmp + n, ".tmpXXXXXX", sizeof(".tmpXXXXXX"));
	/* O_CLOEXEC: the JVM forks (ProcessBuilder) and a child must not
	 * inherit a half-written profile. */
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	rc = o->fd < 0 ? -errno : 0;
	/* mkstemp creates 0600; a profile is an ordinary file that whoever
	 * reads it (another user, a CI artifact upload) expects to see with
	 * the modes open(2) would have given it. Best effort. */
	if (!rc)
		(void)fchmod(o->fd, 0666 & ~current_umask());
	if (!rc && hp_out_test_hook)
		rc = hp_out_test_hook(o->fd);
	if (rc < 0 && o->fd >= 0)
		unlink(o->tmp);
	o->regular = true;
done:
	if (rc < 0) {
		if (o->fd >= 0)
			close(o->fd);
		o->fd = -1;
		out_free(o);
		out_error(o, err, errlen, rc);
		return rc;
	}
	return 0;
}

int hp_out_open_fd(struct hp_out *o, int fd, const char *name, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->path = name;
	if (out_init_buf(o) < 0) {
		hp_out_reason(err, errlen, name, -ENOMEM);
		return -ENOMEM;
	}
	return 0;
}

int hp_out_open_mem(struct hp_out *o, const char *name)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->path = name;
	o->mem = true;
	return out_init_buf(o);
}

unsigned char *hp_out_take(struct hp_out *o, size_t *len, int *rc)
{
	unsigned char *b = o->buf;
	*rc = o->err ? -o->err : 0;
	*len = o->len;
	o->buf = NULL;
	o->len = o->cap = 0;
	if (*rc) {
		free(b);
		return NULL;
	}
	return b;
}

void hp_out_fail(struct hp_out *o, int neg_errno)
{
	if (!o->err)
		o->err = -neg_errno;
}

/* A FIFO or terminal opened O_NONBLOCK: wait for room, but not for ever.
 * A reader that stops reading for 30 s must not hold the JVM's exit. */
static bool out_wait_room(struct hp_out *o)
{
	struct pollfd pfd = { .fd = o->fd, .events = POLLOUT };
	int r;
	do
		r = poll(&pfd, 1, 30000);
	while (r < 0 && errno == EINTR);
	if (r > 0)
		return true;
	if (r == 0)
		snprintf(o->why, sizeof(o->why), "the reader of %s took nothing for 30 s", o->dest ? o->dest : o->path);
	o->err = r == 0 ? ETIMEDOUT : errno;
	return false;
}

static void out_write_fd(struct hp_out *o, const unsigned char *p, size_t n)
{
	while (n && !o->err) {
		ssize_t w = write(o->fd, p, n);
		if (w < 0) {
			if (errno == EAGAIN && o->nonblock)
				out_wait_room(o);
			else if (errno != EINTR)
				o->err = errno;
			continue;
		}
		if (w == 0) {
			/* A regular file never takes 0 bytes of a non-empty
			 * write but at the end of the space it may have. */
			o->err = ENOSPC;
			break;
		}
		p += w;
		n -= (size_t)w;
		o->flushed += (uint64_t)w;
	}
}

static void out_flush(struct hp_out *o)
{
	if (o->len && !o->err)
		out_write_fd(o, o->buf, o->len);
	o->len = 0;
}

void hp_out_write(struct hp_out *o, const void *data, size_t n)
{
	if (o->err || !n)
		return;
	if (o->mem) {
		if (n > o->cap - o->len) {
			size_t cap = o->cap ? o->cap : OUT_BUFSIZE;
			while (cap - o->len < n)
				cap *= 2;
			unsigned char *b = realloc(o->buf, cap);
			if (!b) {
				o->err = ENOMEM;
				return;
			}
			o->buf = b;
			o->cap = cap;
		}
		memcpy(o->buf + o->len, data, n);
		o->len += n;
		return;
	}
	if (n > o->cap - o->len) {
		out_flush(o);
		if (n >= o->cap) {
			/* Larger than the buffer: no point copying it. */
			out_write_fd(o, data, n);
			return;
		}
	}
	memcpy(o->buf + o->len, data, n);
	o->len += n;
}

bool hp_out_can_patch(const struct hp_out *o)
{
	/* In place, a file may be open to append (pwrite then appends) or
	 * hold something before what we write: only our own file is ours
	 * to seek in. */
	return o->mem || (o->fd >= 0 && o->tmp);
}

bool hp_out_replaces(const char *path)
{
	char *dest = NULL, why[200];
	int flags = 0;
	int rc = path && *path ? out_target(path, &dest, &flags, why, sizeof(why)) : -EINVAL;
	free(dest);
	return rc == OUT_REPLACE;
}

int hp_out_patch(struct hp_out *o, uint64_t at, const void *data, size_t n)
{
	if (o->err)
		return -o->err;
	if (!hp_out_can_patch(o)) {
		hp_out_fail(o, -ESPIPE);
		return -ESPIPE;
	}
	if (at + n < at || at + n > o->flushed + o->len) {
		hp_out_fail(o, -EINVAL);
		return -EINVAL;
	}
	if (o->mem) {
		memcpy(o->buf + at, data, n);
		return 0;
	}
	out_flush(o);
	const unsigned char *p = data;
	while (n && !o->err) {
		ssize_t w = pwrite(o->fd, p, n, (off_t)at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->err = w < 0 ? errno : ENOSPC;
			break;
		}
		p += w;
		n -= (size_t)w;
		at += (uint64_t)w;
	}
	return o->err ? -o->err : 0;
}

void hp_out_str(struct hp_out *o, const char *s)
{
	hp_out_write(o, s, strlen(s));
}

void hp_out_printf(struct hp_out *o, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		hp_out_fail(o, -EINVAL);
		return;
	}
	if ((size_t)n < sizeof(small)) {
		hp_out_write(o, small, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		hp_out_fail(o, -ENOMEM);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	hp_out_write(o, big, (size_t)n);
	free(big);
}

/* After the rename, the directory entry itself must reach the disk or a
 * crash can bring back the old profile (or none). Best effort: the data is
 * already safe and some file systems refuse fsync on directories. */
static void fsync_parent(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	if (!dir)
		return;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

int hp_out_commit(struct hp_out *o, char *err, size_t errlen)
{
	out_flush(o);
	free(o->buf);
	o->buf = NULL;
	o->cap = 0;
	if (o->tmp || o->dest) {
		/* fsync before rename: otherwise a crash right after the
		 * rename can leave an empty file where the old profile was.
		 * Pipes and devices have nothing to sync (EINVAL). */
		if (!o->err && o->regular && fsync(o->fd) != 0)
			o->err = errno;
		/* Some file systems (NFS) report write errors only here. On
		 * Linux the fd is gone even when close fails with EINTR. */
		if (close(o->fd) != 0 && errno != EINTR && !o->err)
			o->err = errno;
		o->fd = -1;
		if (o->tmp) {
			if (!o->err && rename(o->tmp, o->dest) != 0)
				o->err = errno;
			if (o->err)
				unlink(o->tmp);
			else
				fsync_parent(o->dest);
		}
		free(o->tmp);
		free(o->dest);
		o->tmp = o->dest = NULL;
	}
	if (o->err) {
		out_error(o, err, errlen, -o->err);
		return -o->err;
	}
	return 0;
}

static const char *intern_key(const void *ctx, uint32_t id)
{
	const struct hp_intern *in = ctx;
	return in->keys[id];
}

int hp_intern_init(struct hp_intern *in, uint32_t expected, bool own)
{
	memset(in, 0, sizeof(*in));
	in->own = own;
	in->cap = expected > 16 ? expected : 16;
	in->keys = malloc(sizeof(*in->keys) * in->cap);
	if (!in->keys)
		return -ENOMEM;
	/* The map reads keys through `in`, not through a copy of the keys
	 * pointer, so the array may be reallocated as it grows. */
	if (hp_strmap_init(&in->map, in->cap, intern_key, in) < 0) {
		free(in->keys);
		in->keys = NULL;
		return -ENOMEM;
	}
	return 0;
}

void hp_intern_free(struct hp_intern *in)
{
	if (in->own)
		for (uint32_t i = 0; i < in->count; i++)
			free((char *)in->keys[i]);
	free(in->keys);
	in->keys = NULL;
	in->count = in->cap = 0;
	hp_strmap_free(&in->map);
}

/* The strmap does not grow by itself: rebuild it twice as large. */
static int intern_rehash(struct hp_intern *in)
{
	struct hp_strmap bigger;
	if ((uint64_t)in->count * 2 >= (1u << 29) ||
	    hp_strmap_init(&bigger, in->count * 2, intern_key, in) < 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < in->count; i++)
		hp_strmap_insert(&bigger, i);
	hp_strmap_free(&in->map);
	in->map = bigger;
	return 0;
}

int hp_intern(struct hp_intern *in, const char *s, uint32_t *id)
{
	s = hp_str(s);
	uint32_t found = hp_strmap_find(&in->map, s);
	if (found != HP_STRMAP_NONE) {
		*id = found;
		return 0;
	}
	if (in->count == in->cap) {
		if (in->cap >= (1u << 29))
			return -ENOMEM;
		const char **k = realloc(in->keys, sizeof(*k) * in->cap * 2);
		if (!k)
			return -ENOMEM;
		in->keys = k;
		in->cap *= 2;
	}
	const char *key = s;
	if (in->own && !(key = strdup(s)))
		return -ENOMEM;
	in->keys[in->count] = key;
	int rc = hp_strmap_insert(&in->map, in->count);
	if (rc == -ENOSPC) {
		/* The new key is in keys[] already, so the rehash takes it. */
		in->count++;
		if (intern_rehash(in) < 0) {
			in->count--;
			if (in->own)
				free((char *)key);
			return -ENOMEM;
		}
	} else {
		in->count++;
	}
	*id = in->count - 1;
	return 0;
}

int hp_profile_check(const struct hp_profile *p, const char *path, char *err, size_t errlen)
{
	char why[160] = "";
	if (!path || !*path)
		snprintf(why, sizeof(why), "no path");
	else if (!p)
		return 0;
	else if (p->nframes && !p->frames)
		snprintf(why, sizeof(why), "%zu frames but no frame array", p->nframes);
	else if (p->nframe_map && !p->frame_map)
		snprintf(why, sizeof(why), "a frame map of %zu but no array", p->nframe_map);
	else if (p->nsamples && !p->samples)
		snprintf(why, sizeof(why), "%zu samples but no sample array", p->nsamples);
	else if (p->ncomments && !p->comments)
		snprintf(why, sizeof(why), "%zu comments but no comment array", p->ncomments);
	else if (p->nframes >= UINT32_MAX / 4 || p->nsamples >= UINT32_MAX / 4)
		snprintf(why, sizeof(why), "too many frames or samples");
	for (size_t i = 0; !why[0] && p && i < p->nsamples; i++) {
		const struct hp_prof_sample *s = &p->samples[i];
		if (s->nframes && !s->frames) {
			snprintf(why, sizeof(why), "sample %zu has %zu frames but no frame array", i, s->nframes);
			break;
		}
		for (size_t j = 0; j < s->nframes; j++) {
			if (p->frame_map && s->frames[j] >= p->nframe_map) {
				snprintf(why, sizeof(why), "sample %zu frame %zu is #%u of a frame map of only %zu", i, j,
					 s->frames[j], p->nframe_map);
				break;
			}
			uint32_t f = hp_prof_frame(p, s, j);
			if (f >= p->nframes) {
				snprintf(why, sizeof(why), "sample %zu frame %zu is #%u of only %zu frames", i, j, f,
					 p->nframes);
				break;
			}
		}
	}
	if (!why[0])
		return 0;
	if (err && errlen)
		snprintf(err, errlen, "cannot write %s: invalid profile: %s", path ? path : "(null)", why);
	return -EINVAL;
}

const struct hp_profile *hp_profile_or_empty(const struct hp_profile *p)
{
	static const struct hp_profile empty;
	return p ? p : &empty;
}
