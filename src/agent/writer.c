#include "agent/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int out_init_buf(struct hp_out *o)
{
	o->buf = malloc(OUT_BUFSIZE);
	if (!o->buf)
		return -ENOMEM;
	o->cap = OUT_BUFSIZE;
	return 0;
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
	size_t n = strlen(path);
	o->tmp = malloc(n + sizeof(".tmpXXXXXX"));
	if (!o->tmp || out_init_buf(o) < 0) {
		free(o->tmp);
		free(o->buf);
		o->tmp = NULL;
		o->buf = NULL;
		hp_out_reason(err, errlen, path, -ENOMEM);
		return -ENOMEM;
	}
	memcpy(o->tmp, path, n);
	memcpy(o->tmp + n, ".tmpXXXXXX", sizeof(".tmpXXXXXX"));
	/* O_CLOEXEC: the JVM forks (ProcessBuilder) and a child must not
	 * inherit a half-written profile. */
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	int rc = o->fd < 0 ? -errno : 0;
	/* mkstemp creates 0600; a profile is an ordinary file that whoever
	 * reads it (another user, a CI artifact upload) expects to see with
	 * the modes open(2) would have given it. Best effort. */
	if (!rc)
		(void)fchmod(o->fd, 0666 & ~current_umask());
	if (!rc && hp_out_test_hook)
		rc = hp_out_test_hook(o->fd);
	if (rc < 0) {
		if (o->fd >= 0) {
			close(o->fd);
			unlink(o->tmp);
		}
		free(o->tmp);
		free(o->buf);
		o->tmp = NULL;
		o->buf = NULL;
		o->fd = -1;
		hp_out_reason(err, errlen, path, rc);
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

void hp_out_fail(struct hp_out *o, int neg_errno)
{
	if (!o->err)
		o->err = -neg_errno;
}

static void out_write_fd(struct hp_out *o, const unsigned char *p, size_t n)
{
	while (n && !o->err) {
		ssize_t w = write(o->fd, p, n);
		if (w < 0) {
			if (errno != EINTR)
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
	if (o->tmp) {
		/* fsync before rename: otherwise a crash right after the
		 * rename can leave an empty file where the old profile was. */
		if (!o->err && fsync(o->fd) != 0)
			o->err = errno;
		/* Some file systems (NFS) report write errors only here. On
		 * Linux the fd is gone even when close fails with EINTR. */
		if (close(o->fd) != 0 && errno != EINTR && !o->err)
			o->err = errno;
		o->fd = -1;
		if (!o->err && rename(o->tmp, o->path) != 0)
			o->err = errno;
		if (o->err)
			unlink(o->tmp);
		else
			fsync_parent(o->path);
		free(o->tmp);
		o->tmp = NULL;
	}
	if (o->err) {
		hp_out_reason(err, errlen, o->path, -o->err);
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
			if (s->frames[j] >= p->nframes) {
				snprintf(why, sizeof(why), "sample %zu frame %zu is #%u of only %zu frames", i, j,
					 s->frames[j], p->nframes);
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
