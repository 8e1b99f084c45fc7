#include "jvmrun.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int jvm_wait(pid_t pid, int timeout_s)
{
	int st = 0;
	for (int i = 0; i < timeout_s * 10; i++) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return st;
		if (w < 0)
			return -1;      /* not our child, or already reaped */
		usleep(100000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

struct jvm_result jvm_run(const char *const *argv, const char *const *env, int timeout_s)
{
	struct jvm_result r = { .exit_code = -1 };
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC))
		return r;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		for (const char *const *e = env; e && *e; e++)
			putenv((char *)*e);
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	size_t cap = 65536;
	r.output = malloc(cap);
	time_t deadline = time(NULL) + timeout_s;
	for (;;) {
		struct pollfd pfd = { pipefd[0], POLLIN, 0 };
		int left = (int)(deadline - time(NULL));
		if (left <= 0) {
			kill(pid, SIGKILL);
			r.timed_out = 1;
			break;
		}
		if (poll(&pfd, 1, left * 1000) <= 0)
			continue;
		if (r.len + 4096 + 1 > cap)
			r.output = realloc(r.output, cap *= 2);
		ssize_t n = read(pipefd[0], r.output + r.len, 4096);
		if (n <= 0)
			break;
		r.len += (size_t)n;
	}
	r.output[r.len] = '\0';
	close(pipefd[0]);
	int status;
	waitpid(pid, &status, 0);
	r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	return r;
}

void jvm_result_free(struct jvm_result *r)
{
	free(r->output);
	r->output = NULL;
}

const char *jvm_field(const struct jvm_result *r, const char *key, char *buf, size_t cap)
{
	size_t klen = strlen(key);
	for (const char *line = r->output; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (len > klen + 1 && strncmp(line, key, klen) == 0 && line[klen] == ':' && line[klen + 1] == ' ') {
			size_t vlen = len - klen - 2;
			if (vlen >= cap)
				vlen = cap - 1;
			memcpy(buf, line + klen + 2, vlen);
			buf[vlen] = '\0';
			return buf;
		}
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

double collapsed_sum(const char *path, const char *leaf, const char *frame)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[16384];
	double sum = 0;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strrchr(line, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		double v = atof(sp + 1);
		/* The allocated class is the leaf ("byte[]_[i]"): match the
		 * code frame above it. */
		char *cls = strrchr(line, ';');
		if (cls && strlen(cls) > 4 && strcmp(cls + strlen(cls) - 4, "_[i]") == 0)
			*cls = '\0';
		const char *last = strrchr(line, ';');
		last = last ? last + 1 : line;
		if ((leaf && strcmp(last, leaf) == 0) || (!leaf && frame && strstr(line, frame)))
			sum += v;
	}
	fclose(f);
	return sum;
}

const char *jvm_go(void)
{
	return access("/usr/local/go/bin/go", X_OK) == 0 ? "/usr/local/go/bin/go" : "go";
}

struct jvm_result jvm_sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	return jvm_run(argv, NULL, 120);
}

char *jvm_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0, r;
	char *b = malloc(cap + 1);
	while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			char *nb = realloc(b, (cap *= 2) + 1);
			if (!nb) {
				free(b);
				b = NULL;
			}
			b = nb;
		}
	}
	fclose(f);
	if (b)
		b[n] = '\0';
	return b;
}

bool jvm_wait_output(const char *log, const char *text, pid_t child, int timeout_s)
{
	for (int i = 0; i < timeout_s * 10; i++) {
		char *l = jvm_slurp(log);
		bool seen = l && strstr(l, text);
		free(l);
		if (seen)
			return true;
		int st;
		if (child > 0 && waitpid(child, &st, WNOHANG) == child)
			return false;
		usleep(100000);
	}
	return false;
}
