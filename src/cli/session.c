#include "cli/session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "agent/writer.h"
#include "cli/growbuf.h"

/* The whole of a file, malloc'd. */
static unsigned char *slurp(const char *path, size_t *len, int *rc)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		*rc = -errno;
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = malloc(cap);
	while (buf) {
		if (n + 1 == cap && !(buf = hp_growbuf(buf, &cap, cap + 1)))
			break;
		ssize_t r = read(fd, buf + n, cap - n - 1);     /* room for a NUL */
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*rc = -errno;
			free(buf);
			close(fd);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (!buf) {
		*rc = -ENOMEM;
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	*rc = 0;
	return buf;
}

static int find_library(const char *given, char *out, size_t cap, char *err, size_t errlen)
{
	const char *env = getenv("HEAPPROBE_LIB");
	char exe[PATH_MAX], cand[PATH_MAX + 64];
	const char *tries[4];
	int n = 0;
	if (given && *given) {
		tries[n++] = given;
	} else if (env && *env) {
		tries[n++] = env;
	} else {
		ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (l > 0) {
			exe[l] = '\0';
			char *dir = dirname(exe);
			static char a[PATH_MAX + 64], b[PATH_MAX + 64], c[PATH_MAX + 64];
			snprintf(a, sizeof(a), "%s/libheapprobe.so", dir);
			snprintf(b, sizeof(b), "%s/../lib/libheapprobe.so", dir);
#if defined(__aarch64__)
			snprintf(c, sizeof(c), "%s/../lib/aarch64-linux-gnu/libheapprobe.so", dir);
#else
			snprintf(c, sizeof(c), "%s/../lib/x86_64-linux-gnu/libheapprobe.so", dir);
#endif
			tries[n++] = a;
			tries[n++] = b;
			tries[n++] = c;
		}
	}
	for (int i = 0; i < n; i++) {
		if (realpath(tries[i], cand) && strlen(cand) < cap) {
			struct stat st;
			if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
				snprintf(out, cap, "%s", cand);
				return 0;
			}
		}
	}
	snprintf(err, errlen, "cannot find libheapprobe.so (%s%s): give --lib PATH or set HEAPPROBE_LIB",
		 n ? "looked at " : "", n ? tries[0] : "");
	return HP_EXIT_LOCAL;
}

/* Whether the JVM's user can read our library at its path in the JVM's
 * file system: the same file (device and inode), readable as that user. */
static bool library_visible(struct hp_session *s)
{
	char there[4200];
	hp_target_path(&s->t, s->lib_local, there, sizeof(there));
	struct stat a, b;
	if (stat(s->lib_local, &a) != 0 || stat(there, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return false;
	int fd = open(there, O_RDONLY | O_CLOEXEC);   /* as the JVM's user (become first) */
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Puts a copy of the library into the JVM's /tmp under a name fixed by its
 * content (/tmp/heapprobe-lib-<uid>/libheapprobe-<xxh64>.so): the dynamic
 * linker knows a loaded library by its path, so every later command must
 * name the same path to reach the same agent, and a different build must
 * not. The directory is the JVM user's own (0700, checked: never one
 * another user planted), so nobody else can swap the file between our
 * write and the JVM's dlopen. The copy and the directory are removed
 * after each load (the JVM keeps its mapping) and made again for the
 * next. */
static int make_copy(struct hp_session *s, char *err, size_t errlen)
{
	size_t len;
	int rc;
	hp_target_unbecome(&s->t);      /* our library, read as us */
	unsigned char *bytes = slurp(s->lib_local, &len, &rc);
	int brc = hp_target_become(&s->t, err, errlen);
	if (!bytes) {
		snprintf(err, errlen, "cannot read %s: %s", s->lib_local, strerror(-rc));
		return HP_EXIT_LOCAL;
	}
	if (brc) {
		free(bytes);
		return brc;
	}
	unsigned long long h = (unsigned long long)XXH3_64bits(bytes, len);
	char dir_jvm[64];
	snprintf(dir_jvm, sizeof(dir_jvm), "/tmp/heapprobe-lib-%u", (unsigned)s->t.uid);
	hp_target_path(&s->t, dir_jvm, s->lib_dir, sizeof(s->lib_dir));
	struct stat st;
	if (mkdir(s->lib_dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot make %s: %s", s->lib_dir, strerror(errno));
		free(bytes);
		s->lib_dir[0] = '\0';
		return HP_EXIT_LOCAL;
	}
	if (lstat(s->lib_dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != s->t.uid || (st.st_mode & 0077)) {
		snprintf(err, errlen, "%s is not a private directory of uid %u: not copying the library there", s->lib_dir,
			 (unsigned)s->t.uid);
		free(bytes);
		s->lib_dir[0] = '\0';
		return HP_EXIT_LOCAL;
	}
	snprintf(s->lib_jvm, sizeof(s->lib_jvm), "%s/libheapprobe-%016llx.so", dir_jvm, h);
	char tmp[600];
	hp_target_path(&s->t, s->lib_jvm, s->lib_copy, sizeof(s->lib_copy));
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", s->lib_copy);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		snprintf(err, errlen, "cannot copy the library into the JVM's /tmp (%s): %s", s->lib_copy, strerror(errno));
		free(bytes);
		s->lib_copy[0] = '\0';
		return HP_EXIT_LOCAL;
	}
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, bytes + off, len - off);
		if (w <= 0 && errno != EINTR)
			break;
		if (w > 0)
			off += (size_t)w;
	}
	free(bytes);
	if (off != len || fchmod(fd, 0644) != 0 || close(fd) != 0 || rename(tmp, s->lib_copy) != 0) {
		snprintf(err, errlen, "cannot copy the library into the JVM's /tmp (%s): %s", s->lib_copy, strerror(errno));
		unlink(tmp);
		s->lib_copy[0] = '\0';
		return HP_EXIT_LOCAL;
	}
	return 0;
}

int hp_session_open(struct hp_session *s, int pid, const char *lib_path, int timeout_ms, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->timeout_ms = timeout_ms;
	int rc = hp_target_open(pid, &s->t, err, errlen);
	if (rc)
		return rc;
	if ((rc = find_library(lib_path, s->lib_local, sizeof(s->lib_local), err, errlen)))
		return rc;
	if (hp_jvmstat_open(&s->t, &s->js) == 0) {
		char caps[80], ver[32];
		/* sun.rt.jvmCapabilities: '1' first when the attach mechanism
		 * is on (HotSpot's runtimeService.cpp); the JDK's own attach
		 * provider asks the same. */
		if (hp_jvmstat_string(&s->js, "sun.rt.jvmCapabilities", caps, sizeof(caps)) == 0 && caps[0] == '0') {
			snprintf(err, errlen, "JVM %d does not accept attach (started with -XX:+DisableAttachMechanism)",
				 pid);
			return HP_EXIT_ATTACH_DISABLED;
		}
		if (hp_jvmstat_string(&s->js, "java.property.java.vm.specification.version", ver, sizeof(ver)) == 0)
			s->java_feature = !strncmp(ver, "1.", 2) ? atoi(ver + 2) : atoi(ver);
	}
	if ((rc = hp_target_become(&s->t, err, errlen)))
		return rc;
	if (!s->java_feature) {
		/* No perfdata (-XX:-UsePerfData): ask the JVM. */
		int st;
		char *props = NULL;
		rc = hp_attach_command(&s->t, "properties", NULL, timeout_ms, timeout_ms, &st, &props, err, errlen);
		if (rc)
			return rc;
		const char *v = strstr(props, "java.vm.specification.version=");
		if (v) {
			v += strlen("java.vm.specification.version=");
			s->java_feature = !strncmp(v, "1.", 2) ? atoi(v + 2) : atoi(v);
		}
		free(props);
	}
	if (s->java_feature && s->java_feature < 11) {
		snprintf(err, errlen, "JVM %d is Java %d: heapprobe needs JDK 11 or later (JEP 331 allocation sampling)", pid,
			 s->java_feature);
		return HP_EXIT_TOO_OLD;
	}
	if (library_visible(s))
		snprintf(s->lib_jvm, sizeof(s->lib_jvm), "%s", s->lib_local);
	else
		s->lib_jvm[0] = '\0';       /* copied at each load */
	char pattern[160];
	char tmpl[64];
	snprintf(tmpl, sizeof(tmpl), "/tmp/heapprobe-%d-XXXXXX", (int)s->t.nspid);
	hp_target_path(&s->t, tmpl, pattern, sizeof(pattern));
	if (!mkdtemp(pattern)) {
		snprintf(err, errlen, "cannot make a directory in the JVM's /tmp (%s): %s", pattern, strerror(errno));
		return HP_EXIT_LOCAL;
	}
	snprintf(s->dir_local, sizeof(s->dir_local), "%s", pattern);
	snprintf(s->dir_jvm, sizeof(s->dir_jvm), "%s", pattern + strlen(s->t.root));
	return 0;
}

void hp_session_close(struct hp_session *s)
{
	if (s->dir_local[0]) {
		/* Only what is ours: the directory is private (0700, made by
		 * mkdtemp) and holds the reply and the profiles we asked for. */
		DIR *d = opendir(s->dir_local);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char p[600];
			snprintf(p, sizeof(p), "%s/%s", s->dir_local, e->d_name);
			unlink(p);
		}
		if (d)
			closedir(d);
		rmdir(s->dir_local);
		s->dir_local[0] = '\0';
	}
	if (s->lib_copy[0]) {
		unlink(s->lib_copy);
		s->lib_copy[0] = '\0';
	}
	if (s->lib_dir[0]) {
		rmdir(s->lib_dir);
		s->lib_dir[0] = '\0';
	}
	hp_jvmstat_close(&s->js);
	hp_target_unbecome(&s->t);
}

void hp_session_jvm_file(const struct hp_session *s, const char *name, char *out, size_t cap)
{
	snprintf(out, cap, "%s/%s", s->dir_jvm, name);
}

/* "return code: N" (JDK 17+) or "N" (JDK 11) after the status line. */
static int agent_return_code(const char *out, int *code)
{
	const char *rc = strstr(out, "return code: ");
	char *end;
	long v = strtol(rc ? rc + strlen("return code: ") : out, &end, 10);
	if (end == (rc ? rc + strlen("return code: ") : out))
		return -1;
	*code = (int)v;
	return 0;
}

int hp_session_agent(struct hp_session *s, const char *options, char **answer, char *err, size_t errlen)
{
	*answer = NULL;
	char reply_jvm[200], reply_local[300];
	hp_session_jvm_file(s, "reply", reply_jvm, sizeof(reply_jvm));
	snprintf(reply_local, sizeof(reply_local), "%s/reply", s->dir_local);
	unlink(reply_local);
	int fd = open(reply_local, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s", reply_local, strerror(errno));
		return HP_EXIT_LOCAL;
	}
	close(fd);
	bool copied = false;
	if (!s->lib_jvm[0] || s->lib_copy[0]) {
		int rc = make_copy(s, err, errlen);
		if (rc)
			return rc;
		copied = true;
	}
	size_t splen = strlen(reply_jvm) + strlen(options) + 16;
	char *spec = malloc(splen);
	if (!spec) {
		snprintf(err, errlen, "out of memory");
		return HP_EXIT_LOCAL;
	}
	/* reply= first: an option the agent rejects further on still has its
	 * error sent back. */
	snprintf(spec, splen, "reply=%s%s%s", reply_jvm, options[0] ? "," : "", options);
	const char *args[3] = { s->lib_jvm, "true", spec };
	int status = 0;
	char *out = NULL;
	int rc = hp_attach_command(&s->t, "load", args, s->timeout_ms, s->timeout_ms, &status, &out, err, errlen);
	free(spec);
	if (copied) {
		/* Mapped by now; the path only matters as a name (make_copy). */
		unlink(s->lib_copy);
		rmdir(s->lib_dir);      /* unless another session's copy is there */
	}
	if (rc)
		return rc;
	size_t rlen;
	int rrc;
	*answer = (char *)slurp(reply_local, &rlen, &rrc);
	if (!*answer)
		*answer = strdup("");
	int code = 0;
	if (status != 0 || agent_return_code(out, &code) != 0) {
		/* The JVM could not load the library (its message is the answer). */
		size_t l = strlen(out);
		while (l && (out[l - 1] == '\n' || out[l - 1] == ' '))
			out[--l] = '\0';
		snprintf(err, errlen, "JVM %d could not load %s (status %d): %s", (int)s->t.pid, s->lib_jvm, status,
			 out[0] ? out : "no message");
		free(out);
		return HP_EXIT_REFUSED;
	}
	free(out);
	if (code != 0) {
		snprintf(err, errlen, "the agent in JVM %d refused '%s' (return code %d)", (int)s->t.pid, options, code);
		return HP_EXIT_REFUSED;
	}
	return 0;
}

int hp_session_fetch(struct hp_session *s, const char *name, const char *dest, char *wrote, size_t wrotelen,
		     char *err, size_t errlen)
{
	DIR *d = opendir(s->dir_local);
	if (!d) {
		snprintf(err, errlen, "cannot read %s: %s", s->dir_local, strerror(errno));
		return HP_EXIT_LOCAL;
	}
	size_t nlen = strlen(name);
	int files = 0, rc = 0;
	wrote[0] = '\0';
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		if (strncmp(e->d_name, name, nlen) || (e->d_name[nlen] != '\0' && e->d_name[nlen] != '.'))
			continue;
		if (strstr(e->d_name + nlen, ".tmp"))  /* a writer's temporary, not a profile */
			continue;
		char src[600], dst[PATH_MAX + 64];
		snprintf(src, sizeof(src), "%s/%s", s->dir_local, e->d_name);
		snprintf(dst, sizeof(dst), "%s%s", dest, e->d_name + nlen);
		size_t len;
		int r;
		unsigned char *bytes = slurp(src, &len, &r);   /* as the JVM's user */
		if (!bytes) {
			snprintf(err, errlen, "cannot read the profile %s: %s", src, strerror(-r));
			rc = HP_EXIT_LOCAL;
			break;
		}
		hp_target_unbecome(&s->t);  /* the user's file, written as the user */
		struct hp_out o;
		r = hp_out_open(&o, dst, err, errlen);
		if (r == 0) {
			hp_out_write(&o, bytes, len);
			r = hp_out_commit(&o, err, errlen);
		}
		free(bytes);
		int brc = hp_target_become(&s->t, err, errlen);
		if (r) {
			rc = HP_EXIT_LOCAL;
			break;
		}
		if (brc) {
			rc = brc;
			break;
		}
		size_t wl = strlen(wrote);
		snprintf(wrote + wl, wrotelen - wl, "%s%s", wl ? ", " : "", dst);
		files++;
	}
	closedir(d);
	if (!rc && !files) {
		snprintf(err, errlen, "the agent wrote no profile");
		rc = HP_EXIT_REFUSED;
	}
	return rc;
}

int hp_session_running(struct hp_session *s, char *err, size_t errlen)
{
	char *answer = NULL;
	int rc = hp_session_agent(s, "status", &answer, err, errlen);
	int running = rc ? -1 : strstr(answer, "profiler: running") != NULL;
	free(answer);
	return running;
}
