#include "cli/attach.h"
#include "cli/growbuf.h"
#include "vmstructs/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *user_name(uid_t uid, char *buf, size_t cap)
{
	struct passwd *pw = getpwuid(uid);
	if (pw)
		snprintf(buf, cap, "%s", pw->pw_name);
	else
		snprintf(buf, cap, "uid %u", (unsigned)uid);
	return buf;
}

/* "Uid:\t1000\t1000\t1000\t1000": the second number is the effective id;
 * "NSpid:\t4711\t1": the last is the PID in the innermost namespace. */
static int read_status(pid_t pid, struct hp_target *t)
{
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	int have = 0;
	t->nspid = pid;
	while (fgets(line, sizeof(line), f)) {
		unsigned a, b;
		if (sscanf(line, "Uid: %u %u", &a, &b) == 2) {
			t->uid = b;
			have |= 1;
		} else if (sscanf(line, "Gid: %u %u", &a, &b) == 2) {
			t->gid = b;
			have |= 2;
		} else if (!strncmp(line, "NSpid:", 6)) {
			char *last = NULL, *save, *tok = strtok_r(line + 6, " \t\n", &save);
			for (; tok; tok = strtok_r(NULL, " \t\n", &save))
				last = tok;
			if (last)
				t->nspid = (pid_t)atoi(last);
		} else if (sscanf(line, "Name: %31s", t->comm) == 1) {
			have |= 4;
		}
	}
	fclose(f);
	return have == 7 ? 0 : -EBADMSG;
}

/* Whether PID has libjvm.so mapped: the one sign every HotSpot has,
 * whatever launched it (java, a custom launcher, JNI_CreateJavaVM). */
static int maps_libjvm(pid_t pid)
{
	char path[64], line[1024];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	int found = 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libjvm.so") != NULL;
	fclose(f);
	return found;
}

static int same_ns(pid_t pid, const char *ns)
{
	char a[64], b[64];
	struct stat sa, sb;
	snprintf(a, sizeof(a), "/proc/self/ns/%s", ns);
	snprintf(b, sizeof(b), "/proc/%d/ns/%s", (int)pid, ns);
	if (stat(a, &sa) || stat(b, &sb))
		return -1;
	return sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

/* Whether the process has our root directory (false: chroot'ed). */
static bool same_root(pid_t pid)
{
	char b[64];
	struct stat sa, sb;
	snprintf(b, sizeof(b), "/proc/%d/root/", (int)pid);
	if (stat("/", &sa) || stat(b, &sb))
		return true;
	return sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

int hp_target_open(pid_t pid, struct hp_target *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->my_euid = geteuid();
	t->my_egid = getegid();
	if (pid <= 0) {
		snprintf(err, errlen, "%d is not a process id", (int)pid);
		return HP_EXIT_USAGE;
	}
	if (kill(pid, 0) != 0 && errno == ESRCH) {
		snprintf(err, errlen, "no process %d", (int)pid);
		return HP_EXIT_NO_PROCESS;
	}
	int rc = read_status(pid, t);
	if (rc == -ENOENT || rc == -ESRCH) {
		snprintf(err, errlen, "no process %d", (int)pid);
		return HP_EXIT_NO_PROCESS;
	}
	if (rc) {
		snprintf(err, errlen, "cannot read /proc/%d/status: %s", (int)pid, strerror(-rc));
		return HP_EXIT_PERMISSION;
	}
	char who[64];
	if (t->my_euid != 0 && t->my_euid != t->uid) {
		/* Only the JVM's user or root may attach (the JVM checks the
		 * peer's credentials): say so before sending it anything. */
		snprintf(err, errlen, "process %d (%s) belongs to %s: run heapprobe as that user or as root", (int)pid,
			 t->comm, user_name(t->uid, who, sizeof(who)));
		return HP_EXIT_PERMISSION;
	}
	rc = maps_libjvm(pid);
	if (rc < 0) {
		snprintf(err, errlen, "cannot read /proc/%d/maps: %s", (int)pid, strerror(-rc));
		return rc == -ENOENT ? HP_EXIT_NO_PROCESS : HP_EXIT_PERMISSION;
	}
	if (rc == 0) {
		/* Never SIGQUIT a process that is not a JVM: most die of it. */
		snprintf(err, errlen, "process %d (%s) is not a Java VM: it has no libjvm.so mapped", (int)pid, t->comm);
		return HP_EXIT_NOT_JVM;
	}
	t->other_mnt = same_ns(pid, "mnt") == 0;
	t->other_pidns = t->nspid != pid;
	/* Another mount namespace (a container), or the same one seen from
	 * another root (chroot): the JVM's paths are under /proc/PID/root. */
	if (t->other_mnt || !same_root(pid))
		snprintf(t->root, sizeof(t->root), "/proc/%d/root", (int)pid);
	return 0;
}

int hp_target_become(struct hp_target *t, char *err, size_t errlen)
{
	if (t->switched || t->my_euid != 0 || (t->uid == 0 && t->gid == 0))
		return 0;
	/* gid first: after giving up uid 0 we could not change it. Saved ids
	 * stay 0, so hp_target_unbecome can come back. */
	if (setegid(t->gid) != 0 || seteuid(t->uid) != 0) {
		snprintf(err, errlen, "cannot take the JVM's uid %u / gid %u: %s", (unsigned)t->uid, (unsigned)t->gid,
			 strerror(errno));
		setegid(t->my_egid);
		return HP_EXIT_PERMISSION;
	}
	t->switched = true;
	return 0;
}

void hp_target_unbecome(struct hp_target *t)
{
	if (!t->switched)
		return;
	if (seteuid(t->my_euid) == 0)
		setegid(t->my_egid);
	t->switched = false;
}

void hp_target_path(const struct hp_target *t, const char *p, char *out, size_t cap)
{
	snprintf(out, cap, "%s%s", t->root, p);
}

static int socket_path(const struct hp_target *t, char *out, size_t cap)
{
	char p[64];
	snprintf(p, sizeof(p), "/tmp/.java_pid%d", (int)t->nspid);
	hp_target_path(t, p, out, cap);
	return strlen(out) < sizeof(((struct sockaddr_un *)0)->sun_path) ? 0 : -ENAMETOOLONG;
}

static int try_connect(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISSOCK(st.st_mode))
		return -ENOENT;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* Creates the trigger file where the JVM looks first (its working
 * directory), else in its /tmp; the name of the one made in `made`. */
static int create_trigger(const struct hp_target *t, char *made, size_t cap)
{
	char name[64];
	snprintf(name, sizeof(name), ".attach_pid%d", (int)t->nspid);
	char cwd_path[128], tmp_path[160], tmpname[96];
	snprintf(cwd_path, sizeof(cwd_path), "/proc/%d/cwd/%s", (int)t->pid, name);
	snprintf(tmpname, sizeof(tmpname), "/tmp/%s", name);
	hp_target_path(t, tmpname, tmp_path, sizeof(tmp_path));
	const char *where[] = { cwd_path, tmp_path };
	for (int i = 0; i < 2; i++) {
		int fd = open(where[i], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			close(fd);
			snprintf(made, cap, "%s", where[i]);
			return 0;
		}
		if (errno == EEXIST) {
			/* Another client's attach under way: share its file, leave
			 * it to that client to remove. */
			made[0] = '\0';
			return 0;
		}
	}
	return -errno;
}

static int start_listener(struct hp_target *t, const char *sock, int timeout_ms, char *err, size_t errlen)
{
	char trigger[192];
	int rc = create_trigger(t, trigger, sizeof(trigger));
	if (rc) {
		snprintf(err, errlen, "cannot create .attach_pid%d in the JVM's working directory or /tmp: %s",
			 (int)t->nspid, strerror(-rc));
		return HP_EXIT_PERMISSION;
	}
	int result = HP_EXIT_TIMEOUT;
	if (kill(t->pid, SIGQUIT) != 0) {
		snprintf(err, errlen, "cannot signal process %d: %s", (int)t->pid, strerror(errno));
		result = errno == ESRCH ? HP_EXIT_NO_PROCESS : HP_EXIT_PERMISSION;
		goto out;
	}
	long long deadline = hp_mono_ms() + timeout_ms;
	for (int delay = 20; hp_mono_ms() < deadline; delay = delay < 200 ? delay * 2 : 200) {
		usleep((useconds_t)delay * 1000);
		struct stat st;
		if (stat(sock, &st) == 0 && S_ISSOCK(st.st_mode)) {
			result = 0;
			goto out;
		}
		if (kill(t->pid, 0) != 0 && errno == ESRCH) {
			snprintf(err, errlen, "process %d ended while attaching", (int)t->pid);
			result = HP_EXIT_NO_PROCESS;
			goto out;
		}
	}
	snprintf(err, errlen, "JVM %d did not answer within %d ms (its attach listener did not start: stopped, hung, "
		 "or started with -XX:+DisableAttachMechanism or -Xrs)", (int)t->pid, timeout_ms);
out:
	if (trigger[0])
		unlink(trigger);
	return result;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int hp_attach_command(struct hp_target *t, const char *cmd, const char *const args[3], int connect_timeout_ms,
		      int answer_timeout_ms, int *status, char **out, char *err, size_t errlen)
{
	*out = NULL;
	char sock[128];
	if (socket_path(t, sock, sizeof(sock))) {
		snprintf(err, errlen, "the JVM's socket path is too long");
		return HP_EXIT_LOCAL;
	}
	int fd = try_connect(sock);
	if (fd < 0) {
		/* Not up yet, or a stale socket from an earlier JVM with the
		 * same PID: start the listener (it replaces a stale socket). */
		int rc = start_listener(t, sock, connect_timeout_ms, err, errlen);
		if (rc)
			return rc;
		long long deadline = hp_mono_ms() + 2000;
		while ((fd = try_connect(sock)) < 0 && hp_mono_ms() < deadline)
			usleep(20000);
		if (fd < 0) {
			snprintf(err, errlen, "cannot connect to %s: %s", sock, strerror(-fd));
			return fd == -EACCES || fd == -EPERM ? HP_EXIT_PERMISSION : HP_EXIT_TIMEOUT;
		}
	}
	/* "1" cmd arg0 arg1 arg2, each NUL-terminated. */
	size_t len = 2 + strlen(cmd) + 1;
	for (int i = 0; i < 3; i++)
		len += strlen(args && args[i] ? args[i] : "") + 1;
	char *req = malloc(len);
	if (!req) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return HP_EXIT_LOCAL;
	}
	size_t n = 0;
	memcpy(req, "1", 2);
	n = 2;
	memcpy(req + n, cmd, strlen(cmd) + 1);
	n += strlen(cmd) + 1;
	for (int i = 0; i < 3; i++) {
		const char *a = args && args[i] ? args[i] : "";
		memcpy(req + n, a, strlen(a) + 1);
		n += strlen(a) + 1;
	}
	int rc = write_all(fd, req, n);
	free(req);
	if (rc) {
		close(fd);
		snprintf(err, errlen, "cannot send the command to JVM %d: %s", (int)t->pid, strerror(-rc));
		return HP_EXIT_REFUSED;
	}
	/* The answer, until the JVM closes the connection. */
	size_t cap = 4096, got = 0;
	char *buf = malloc(cap);
	long long deadline = answer_timeout_ms > 0 ? hp_mono_ms() + answer_timeout_ms : 0;
	int result = 0;
	while (buf) {
		int wait = deadline ? (int)(deadline - hp_mono_ms()) : 1000;
		if (deadline && wait <= 0) {
			snprintf(err, errlen, "JVM %d did not finish answering within %d ms", (int)t->pid,
				 answer_timeout_ms);
			result = HP_EXIT_TIMEOUT;
			break;
		}
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int pr = poll(&p, 1, wait);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr == 0)
			continue;
		if (!(buf = hp_growbuf(buf, &cap, got + 1024)))
			break;
		ssize_t r = read(fd, buf + got, cap - got - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return HP_EXIT_LOCAL;
	}
	buf[got] = '\0';
	if (result) {
		free(buf);
		return result;
	}
	char *end;
	long code = strtol(buf, &end, 10);
	if (end == buf) {
		snprintf(err, errlen, "JVM %d gave no status (%zu bytes of answer)", (int)t->pid, got);
		free(buf);
		return HP_EXIT_REFUSED;
	}
	if (*end == '\n')
		end++;
	*status = (int)code;
	memmove(buf, end, strlen(end) + 1);
	*out = buf;
	return 0;
}
