/* The release's self-contained artifacts (dist/, scripts/package.sh) in a
 * root file system that holds a JRE and its C library and nothing else of
 * ours: Debian sid's (glibc 2.4x, libstdc++, zlib, JDK 26:
 * scripts/setup-jdks.sh), entered with unshare -m and chroot, /proc and
 * /dev mounted in the private namespace only. No libelf, libdw, libffi,
 * liblzma, libbz2, libxxhash, protobuf-c there: the library must load and
 * work by -agentpath and by -javaagent, and the command attach from
 * outside. The dynamic build, beside it, cannot load there (the control). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jvmrun.h"

#define JAVA26 "/usr/lib/jvm/java-26-openjdk-amd64/bin/java"
#define DIST_NAME "heapprobe-" HP_VERSION "-linux-x64"
#define LIB "/opt/" DIST_NAME "/lib/libheapprobe.so"
#define JAR "/opt/heapprobe.jar"

static char root[512];

static void make_root(void)
{
	cr_assert(getuid() == 0, "chroot needs root");
	char sid[600];
	snprintf(sid, sizeof(sid), "%s/jdks/debian-sid", HP_BUILD_ROOT);
	cr_assert(access(sid, F_OK) == 0, "%s missing: scripts/setup-jdks.sh makes it", sid);
	char tar[700];
	snprintf(tar, sizeof(tar), "%s/" DIST_NAME ".tar.gz", HP_DIST_DIR);
	cr_assert(access(tar, R_OK) == 0, "%s missing: scripts/package.sh makes it", tar);
	snprintf(root, sizeof(root), "%s/foreign-XXXXXX", HP_BUILD_DIR);
	cr_assert(mkdtemp(root));
	/* Hard links: the same files, another tree of directories. */
	struct jvm_result r = jvm_sh("set -e; cp -al %s/. %s/ && cd %s && mkdir -p proc dev tmp opt/classes && "
				     "chmod 1777 tmp && ln -sfn usr/lib lib && ln -sfn usr/lib64 lib64 && "
				     "ln -sfn usr/bin bin && tar -C opt -xzf %s && cp %s/heapprobe-%s.jar opt/heapprobe.jar && "
				     "cp %s/*.class opt/classes/ && "
				     "! ls usr/lib/x86_64-linux-gnu | grep -E '^lib(elf|dw|ffi|lzma|bz2|xxhash|protobuf-c)\\.so'",
				     sid, root, root, tar, HP_DIST_DIR, HP_VERSION, HP_TEST_CLASSES);
	cr_assert_eq(r.exit_code, 0, "making the root: %s", r.output);
	jvm_result_free(&r);
}

static void remove_root(void)
{
	struct jvm_result r = jvm_sh("rm -rf %s", root);
	jvm_result_free(&r);
}

/* A command inside the root (argv-style words after the java path). */
static struct jvm_result in_root(const char *java_args)
{
	return jvm_sh("unshare -m sh -c 'mount --rbind /dev %s/dev && mount -t proc proc %s/proc && "
		      "exec chroot %s " JAVA26 " %s' 2>&1",
		      root, root, root, java_args);
}

static double truth(const struct jvm_result *r, const char *key)
{
	char buf[64];
	return jvm_field(r, key, buf, sizeof(buf)) ? atof(buf) : -1;
}

static void expect_retained(const struct jvm_result *r, const char *file)
{
	char path[700];
	snprintf(path, sizeof(path), "%s%s", root, file);
	double kb = collapsed_sum(path, "RetainedSet.keepBytes", NULL), tb = truth(r, "truth.keepBytes");
	/* false failure 3.8e-7 per call: sd 3.9% (R 64 KiB, 40 MiB), bound 5.1 sd; docs/test-bounds.md */
	cr_expect(kb > 0.8 * tb && kb < 1.2 * tb, "keepBytes live %.0f vs truth %.0f\n%s", kb, tb, r->output);
}

Test(foreign_root, agentpath_info_is_clean, .timeout = 300)
{
	make_root();
	struct jvm_result r = in_root("-agentpath:" LIB "=info -version");
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	static const char *const want[] = {
		"status.libjvm: ok", "status.vmstructs: ok", "status.symbols: ok", "status.flags: ok", "status.heap: ok",
		"mode.memory-usage-call: ok", "mode.heap-summary-call: ok", "mode.last-gc-fields: ok", "mode.jmm: ok",
		"mode.jmx-native: ok", "mode.exported-totals: ok", "mode.perfdata: ok", "not in libjvm, 0 off",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect(strstr(r.output, want[i]), "no '%s'\n%s", want[i], r.output);
	jvm_result_free(&r);
	remove_root();
}

Test(foreign_root, agentpath_and_javaagent_profile, .timeout = 300)
{
	make_root();
	struct jvm_result r = in_root("-Xmx512m -agentpath:" LIB "=interval=64k,format=collapsed,file=/tmp/a.collapsed "
				      "-cp /opt/classes RetainedSet");
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	expect_retained(&r, "/tmp/a.collapsed");
	jvm_result_free(&r);
	r = in_root("-Xmx512m -javaagent:" JAR "=interval=64k,format=collapsed,file=/tmp/j.collapsed "
		    "-cp /opt/classes RetainedSet");
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	expect_retained(&r, "/tmp/j.collapsed");
	jvm_result_free(&r);
	remove_root();
}

Test(foreign_root, the_dynamic_build_cannot_load_there, .timeout = 300)
{
	make_root();
	struct jvm_result c = jvm_sh("mkdir -p %s/opt/dyn && cp -L %s %s/opt/dyn/libheapprobe.so", root, HP_AGENT_PATH,
				     root);
	cr_assert_eq(c.exit_code, 0, "%s", c.output);
	jvm_result_free(&c);
	struct jvm_result r = in_root("-agentpath:/opt/dyn/libheapprobe.so=info -version");
	cr_expect_neq(r.exit_code, 0, "%s", r.output);
	cr_expect(strstr(r.output, "cannot open shared object file"), "%s", r.output);
	jvm_result_free(&r);
	remove_root();
}

/* CliTarget started in the root by `java` (a path there, maybe behind
 * qemu), then `command` (a heapprobe command line of ours, up to the pid)
 * attaching from outside: the profile it writes holds CliTarget.keep, and
 * the JVM stops cleanly. */
static void attach_from_outside(const char *java, const char *command, int timeout_s)
{
	char log[700], out[700], cmd[4096];
	snprintf(log, sizeof(log), "%s/tmp/jvm.log", root);
	snprintf(out, sizeof(out), "%s/attached.collapsed", root);
	snprintf(cmd, sizeof(cmd),
		 "mount --rbind /dev %s/dev && mount -t proc proc %s/proc && exec chroot %s %s"
		 " -Xmx256m -cp /opt/classes CliTarget /tmp/stop 4096 120 >%s 2>&1",
		 root, root, root, java, log);
	pid_t child = fork();
	if (child == 0) {
		execlp("unshare", "unshare", "-m", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	cr_assert(jvm_wait_output(log, "ready", child, timeout_s), "CliTarget never ready in the root");
	/* unshare -m without a fork: sh, then chroot, then java, all exec'd in
	 * the child, so the JVM's pid is the child's. */
	struct jvm_result s = jvm_sh("%s --timeout %d %d -d 2 -f %s interval=64k 2>&1", command, timeout_s, (int)child,
				     out);
	cr_expect_eq(s.exit_code, 0, "%s", s.output);
	cr_expect_gt(collapsed_sum(out, "CliTarget.keep", NULL), 0, "%s", s.output);
	jvm_result_free(&s);
	char stop[700];
	snprintf(stop, sizeof(stop), "%s/tmp/stop", root);
	FILE *f = fopen(stop, "w");
	if (f)
		fclose(f);
	int st = jvm_wait(child, timeout_s);
	cr_expect(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "CliTarget did not stop cleanly (%d)", st);
}

Test(foreign_root, the_command_attaches_from_outside, .timeout = 300)
{
	make_root();
	attach_from_outside(JAVA26, HP_STAGE_DIR "/" DIST_NAME "/bin/heapprobe", 60);
	remove_root();
}

/* The same for linux-arm64, under qemu-user run inside the root: arm64's C
 * library and libgcc, Temurin 21 for aarch64, the release's arm64 tarball
 * and the jar's arm64 natives (scripts/setup-arm64.sh, package.sh); the
 * aarch64 command attaching from outside. */
Test(foreign_root, arm64_agentpath_javaagent_and_the_command, .timeout = 600)
{
	cr_assert(getuid() == 0, "chroot needs root");
	snprintf(root, sizeof(root), "%s/foreign-arm64-XXXXXX", HP_BUILD_DIR);
	cr_assert(mkdtemp(root));
	struct jvm_result m = jvm_sh("set -e; cp -al %s/jdks-arm64/root-base/. %s/ && cd %s && mkdir -p proc dev tmp opt/classes && "
				     "chmod 1777 tmp && cp -al %s/jdks-arm64/21 opt/jdk21 && "
				     "tar -C opt -xzf %s/heapprobe-%s-linux-arm64.tar.gz && cp %s/heapprobe-%s.jar opt/heapprobe.jar && "
				     "cp %s/*.class opt/classes/ && cp /usr/bin/qemu-aarch64-static . && "
				     "! find . -name 'lib*.so*' | grep -E '/lib(elf|dw|ffi|lzma|bz2|xxhash|protobuf-c)\\.so'",
				     HP_BUILD_ROOT, root, root, HP_BUILD_ROOT, HP_DIST_DIR, HP_VERSION, HP_DIST_DIR, HP_VERSION,
				     HP_TEST_CLASSES);
	cr_assert_eq(m.exit_code, 0, "making the root: %s", m.output);
	jvm_result_free(&m);
	const char *run = "unshare -m sh -c 'mount --rbind /dev %s/dev && mount -t proc proc %s/proc && "
			  "exec chroot %s /qemu-aarch64-static /opt/jdk21/bin/java %s' 2>&1";
	struct jvm_result r = jvm_sh(run, root, root, root,
				     "-agentpath:/opt/heapprobe-" HP_VERSION "-linux-arm64/lib/libheapprobe.so=info -version");
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	cr_expect(strstr(r.output, "status.vmstructs: ok") && strstr(r.output, "mode.last-gc-fields: ok") &&
		  strstr(r.output, "mode.heap-summary-call: ok") && strstr(r.output, "0 off"), "%s", r.output);
	jvm_result_free(&r);
	r = jvm_sh(run, root, root, root,
		   "-Xmx512m -javaagent:" JAR "=interval=64k,format=collapsed,file=/tmp/j.collapsed -cp /opt/classes RetainedSet");
	cr_expect_eq(r.exit_code, 0, "%s", r.output);
	expect_retained(&r, "/tmp/j.collapsed");
	jvm_result_free(&r);
	/* The aarch64 command, from outside (under qemu too), attaching. */
	attach_from_outside("/qemu-aarch64-static /opt/jdk21/bin/java",
			    "qemu-aarch64-static -L / " HP_STAGE_DIR "/heapprobe-" HP_VERSION "-linux-arm64/bin/heapprobe", 120);
	remove_root();
}
