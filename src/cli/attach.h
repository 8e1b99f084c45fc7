/* HotSpot's attach protocol, spoken by the heapprobe command itself: no JDK
 * tools, so it works on JRE-only images (jlink'd runtimes without
 * jdk.attach, distroless) and across container namespaces.
 *
 * The protocol (attachListener_linux.cpp in every release 11..25):
 *  1. The JVM listens on the UNIX socket /tmp/.java_pid<PID> once its
 *     attach listener runs. /tmp is fixed (os::get_temp_directory()), PID
 *     is the JVM's own (its innermost PID namespace).
 *  2. Until then, a client creates .attach_pid<PID> in the JVM's working
 *     directory or /tmp and sends SIGQUIT: the JVM's signal thread sees the
 *     file (owned by its euid or root) and starts the listener instead of
 *     printing a thread dump.
 *  3. The client writes "1\0<command>\0<arg0>\0<arg1>\0<arg2>\0" (protocol
 *     version 1, three arguments, empty ones included) and reads until EOF:
 *     a decimal status line, then the command's output. The JVM checks the
 *     peer's credentials (SO_PEERCRED): its own euid/egid, or root.
 *
 * A JVM in other PID and mount namespaces (a container seen from the host)
 * is reached through /proc/PID/root, with the PID it knows itself by
 * (NSpid in /proc/PID/status); the client takes the JVM's uid/gid so the
 * JVM accepts it and the files it creates there belong to the JVM's user. */
#ifndef HP_CLI_ATTACH_H
#define HP_CLI_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Exit codes of the heapprobe command, one per kind of failure. */
enum hp_cli_exit {
	HP_EXIT_OK = 0,
	HP_EXIT_REFUSED = 1,        /* the JVM (the agent) refused or failed the command */
	HP_EXIT_USAGE = 2,
	HP_EXIT_NO_PROCESS = 3,
	HP_EXIT_NOT_JVM = 4,
	HP_EXIT_PERMISSION = 5,     /* a JVM of another user */
	HP_EXIT_ATTACH_DISABLED = 6,        /* -XX:+DisableAttachMechanism */
	HP_EXIT_TOO_OLD = 7,        /* no JEP 331 (JDK 10 and older) */
	HP_EXIT_TIMEOUT = 8,        /* the JVM did not answer in time */
	HP_EXIT_LOCAL = 9,          /* our side: copying the library, writing FILE */
};

struct hp_target {
	pid_t pid;                  /* as we see it */
	pid_t nspid;                /* as the JVM sees itself */
	uid_t uid;                  /* the JVM's effective ids */
	gid_t gid;
	char comm[32];
	bool other_mnt;             /* another mount namespace: paths go through root */
	bool other_pidns;
	char root[64];              /* "" or "/proc/PID/root": prefix for the JVM's paths */
	/* our own ids, to come back to */
	uid_t my_euid;
	gid_t my_egid;
	bool switched;              /* we act as the JVM's uid/gid */
};

/* Finds PID and checks, without touching it, that it is a running JVM we
 * may attach to. 0, or an hp_cli_exit code with a one-line reason in err. */
int hp_target_open(pid_t pid, struct hp_target *t, char *err, size_t errlen);

/* Takes the JVM's uid/gid (when we are root and they differ), so the JVM
 * accepts us and files we create there are its user's; hp_target_unbecome
 * comes back (to write the user's own files). 0 or an hp_cli_exit code. */
int hp_target_become(struct hp_target *t, char *err, size_t errlen);
void hp_target_unbecome(struct hp_target *t);

/* The JVM's path `p` as we can open it (through /proc/PID/root when in
 * another mount namespace). */
void hp_target_path(const struct hp_target *t, const char *p, char *out, size_t cap);

/* Runs one attach command: connects (starting the attach listener first if
 * it is not up, waiting at most timeout_ms), sends cmd and up to three
 * args, and reads the JVM's answer (at most timeout_ms once sent; 0 = no
 * limit). On success *status is the JVM's status line and out (malloc'd,
 * NUL-terminated) the rest. 0 or an hp_cli_exit code with err. */
int hp_attach_command(struct hp_target *t, const char *cmd, const char *const args[3], int connect_timeout_ms,
		      int answer_timeout_ms, int *status, char **out, char *err, size_t errlen);

#endif
