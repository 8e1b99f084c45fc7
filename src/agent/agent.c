/* The JVMTI agent: java -agentpath:libheapprobe.so=OPTIONS, or
 * jcmd PID JVMTI.agent_load /path/libheapprobe.so "OPTIONS". */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <malloc.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jvmti.h>

#include "agent/options.h"
#include "agent/sampler.h"
#include "heapprobe.h"

static struct hp_agent_options options;
/* Whether an earlier Agent_OnLoad/OnAttach of this library succeeded. If
 * not, HotSpot unloads the library when we return an error: nothing of ours
 * (JVMTI callbacks above all) may outlive that. */
static int loaded_ok;
/* The options of the first Agent_OnLoad, for the warning when a second
 * one comes (the same library named twice: HotSpot calls each
 * -agentpath's Agent_OnLoad, and one copy of our globals serves both). */
static char first_spec[256];
static struct hp_probe *probe;
static jvmtiEnv *agent_jvmti;
/* info=exit: the options the report at VMDeath is written with (those of
 * the load that asked for it, which may be an attach). */
static struct hp_agent_options exit_report;
static int exit_report_armed;

/* glibc's count of bytes handed out by malloc in the whole process (ours
 * and the JVM's), mmap'd blocks included: a leak of the agent's tables
 * shows here whole, touched or not. mallinfo2 is glibc 2.33's: a build for
 * an older glibc (HP_SELF_CONTAINED: 2.17) finds it at run time, and on a
 * glibc without it falls back on mallinfo, whose int counts wrap at 4 GiB. */
static size_t malloc_in_use(void)
{
#if __GLIBC_PREREQ(2, 33)
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
#else
	struct hp_mallinfo2 {  /* glibc 2.33's struct mallinfo2 */
		size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
	};
	struct hp_mallinfo2 (*mallinfo2_fn)(void);
	*(void **)&mallinfo2_fn = dlsym(RTLD_DEFAULT, "mallinfo2");
	if (mallinfo2_fn) {
		struct hp_mallinfo2 mi = mallinfo2_fn();
		return mi.uordblks + mi.hblkhd;
	}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  /* by 2.33's headers */
	struct mallinfo mi = mallinfo();
#pragma GCC diagnostic pop
	return (size_t)(unsigned)mi.uordblks + (unsigned)mi.hblkhd;
#endif
}

static void write_info(const struct hp_agent_options *o)
{
	FILE *out = hp_log_open(o);
	if (o->verify)
		hp_verify_layout(probe, out);
	hp_write_info(probe, out);
	fprintf(out, "process.malloc_in_use: %zu\n", malloc_in_use());
	hp_log_close(out);
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	if (options.info || options.verify)
		write_info(&options);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	if (exit_report_armed)
		write_info(&exit_report);
}

/* The agent's own env: VMInit for info, VMDeath for info=exit. */
static int agent_env(JavaVM *vm)
{
	if (agent_jvmti)
		return 0;
	if ((*vm)->GetEnv(vm, (void **)&agent_jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
		fprintf(stderr, "heapprobe: JVMTI 1.2 is not available\n");
		agent_jvmti = NULL;
		return -ENOTSUP;
	}
	jvmtiEventCallbacks callbacks;
	memset(&callbacks, 0, sizeof(callbacks));
	callbacks.VMInit = on_vm_init;
	callbacks.VMDeath = on_vm_death;
	(*agent_jvmti)->SetEventCallbacks(agent_jvmti, &callbacks, sizeof(callbacks));
	return 0;
}

static void arm_exit_report(const struct hp_agent_options *o)
{
	exit_report = *o;
	exit_report_armed = 1;
	(*agent_jvmti)->SetEventNotificationMode(agent_jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
}

static int open_probe(JavaVM *vm, const struct hp_agent_options *o)
{
	if (probe)
		return 0;
	/* The profiler needs the post-GC size, which the HotSpot modes give;
	 * the JNI modes' set-up (java.management class loading, ~50 ms) waits
	 * until something needs them. The info report wants them all now. */
	struct hp_open_opts opts = { .sz = sizeof(opts) };
	if (!(o->info || o->info_at_exit || o->verify))
		opts.flags |= HP_OPEN_LAZY_JNI_MODES;
	int rc = hp_open(vm, &opts, &probe);
	if (rc)
		fprintf(stderr, "heapprobe: cannot open probe: %s\n", strerror(-rc));
	return rc;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *spec, void *reserved)
{
	char err[1024];
	if (loaded_ok) {
		/* Say JAVA_TOOL_OPTIONS and the command line both name us. Two
		 * profilers cannot share one sampling interval; failing would
		 * stop the JVM from starting over a duplicate. */
		fprintf(stderr, "heapprobe: loaded a second time (-agentpath given twice, say in JAVA_TOOL_OPTIONS and "
			"on the command line); keeping the first profiler (options '%s'), ignoring '%s'\n",
			first_spec, spec ? spec : "");
		return JNI_OK;
	}
	if (hp_options_parse(spec, &options, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return JNI_ERR;         /* fails the JVM start, like a bad -XX flag */
	}
	if (options.dump || options.stop || options.status || options.top || options.reply[0]) {
		fprintf(stderr, "heapprobe: 'dump', 'stop', 'status', 'top' and 'reply' are commands for an agent loaded "
			"into a running JVM (the heapprobe command or jcmd JVMTI.agent_load)\n");
		return JNI_ERR;
	}
	if (open_probe(vm, &options) || agent_env(vm))
		return JNI_ERR;
	(*agent_jvmti)->SetEventNotificationMode(agent_jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
	if (options.info_at_exit)
		arm_exit_report(&options);
	int rc = options.profile ? hp_profiler_start(vm, probe, &options, NULL, 0, err, sizeof(err)) : 0;
	if (rc == -EBUSY) {
		/* Another agent samples: the JVM starts, without our profile;
		 * the heap-usage part (info) keeps working. */
		fprintf(stderr, "%s\n", err);
	} else if (rc) {
		fprintf(stderr, "%s\n", err);
		return JNI_ERR;         /* the JVM will not start: nothing outlives us */
	}
	snprintf(first_spec, sizeof(first_spec), "%s", spec ? spec : "");
	loaded_ok = 1;
	return JNI_OK;
}


static jint attach_failed(void)
{
	if (!loaded_ok) {
		if (agent_jvmti)
			(*agent_jvmti)->DisposeEnvironment(agent_jvmti);
		agent_jvmti = NULL;
		hp_profiler_release_env();
		hp_close(probe);        /* disposes the probe's jvmtiEnv and callbacks */
		probe = NULL;
	}
	return JNI_ERR;
}

/* A command's messages: to its reply= file while it runs, else the log. */
static void say(const struct hp_agent_options *o, const char *msg)
{
	FILE *out = hp_log_open(o);
	fprintf(out, "%s\n", msg);
	hp_log_close(out);
}

static jint on_attach(JavaVM *vm, const struct hp_agent_options *o)
{
	char err[1024];
	JNIEnv *jni = NULL;
	bool running = hp_profiler_running();
	if (o->status) {
		/* Answers without opening anything: a JVM asked for its status
		 * keeps no env of ours. */
		hp_profiler_status(hp_log_open(o));
		return JNI_OK;
	}
	if ((o->dump || o->stop || o->top) && !running) {
		snprintf(err, sizeof(err), "heapprobe: no profiler is running in this JVM: nothing to %s",
			 o->dump ? "dump" : o->stop ? "stop" : "show");
		say(o, err);
		return JNI_ERR;
	}
	if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK || open_probe(vm, o))
		return attach_failed();
	if (o->info || o->verify)
		write_info(o);
	if (o->info_at_exit) {
		/* Over jcmd as at start-up: the report waits for the JVM's end. */
		if (agent_env(vm))
			return loaded_ok ? JNI_ERR : attach_failed();
		arm_exit_report(o);
		say(o, "heapprobe: the info report will be written when the JVM exits");
	}
	if (o->top) {
		if (hp_profiler_top(jni, hp_log_open(o), o->top))
			return JNI_ERR;
	} else if (o->dump) {
		if (hp_profiler_dump(jni, "profile on request", o))
			return JNI_ERR;
	} else if (o->stop) {
		if (hp_profiler_stop(jni, o, o->discard))
			return JNI_ERR;
		if (o->discard)
			say(o, "heapprobe: stopped; no last profile written (discard)");
	} else if (o->profile) {
		if (running) {
			say(o, "heapprobe: a profiler is already running in this JVM; 'stop' it first, or 'dump'");
			return JNI_ERR;
		}
		if (hp_profiler_start(vm, probe, o, jni, 1, err, sizeof(err))) {
			say(o, err);
			return attach_failed();
		}
		options = *o;
		char path[600];
		hp_options_output_path(o, path, sizeof(path));
		snprintf(err, sizeof(err), "heapprobe: profiling, interval %llu bytes, live %s; profiles to %s",
			 (unsigned long long)o->interval, o->live ? "on" : "off", path);
		say(o, err);
	}
	loaded_ok = 1;
	return JNI_OK;
}

/* Loaded into a running JVM, or a command to the agent already there. A bad
 * option returns an error to the caller and changes nothing in the JVM.
 * With reply=PATH (the heapprobe command) the command's messages and
 * answers are appended to PATH, which the caller reads once the JVM has
 * answered; else they go to the log (stderr). jcmd's own parser splits
 * name=value, so options go in quotes there:
 *   jcmd PID JVMTI.agent_load /path/libheapprobe.so '"interval=64k,file=/tmp/p.pb.gz"' */
JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *spec, void *reserved)
{
	char err[1024];
	struct hp_agent_options o;
	int prc = hp_options_parse(spec, &o, err, sizeof(err));
	/* The reply file, even for a bad option: the caller reads the error
	 * there. Appended, never truncated or replaced (O_NOFOLLOW: the
	 * caller made it; a link planted there is refused). */
	FILE *reply = NULL;
	if (o.reply[0]) {
		int fd = open(o.reply, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		reply = fd >= 0 ? fdopen(fd, "a") : NULL;
		if (!reply) {
			fprintf(stderr, "heapprobe: cannot open reply file %s: %s\n", o.reply, strerror(errno));
			if (fd >= 0)
				close(fd);
		}
		hp_log_set_reply(reply);
	}
	jint rc;
	if (prc) {
		say(&o, err);
		rc = JNI_ERR;
	} else {
		rc = on_attach(vm, &o);
	}
	if (reply) {
		hp_log_set_reply(NULL);
		fclose(reply);
	}
	return rc;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	/* The JVM is going away: the profiler wrote its profile at VMDeath.
	 * The probe is left to the process's exit, not closed: the attach
	 * listener is a daemon thread still running native code, and a
	 * command it began before VMDeath (`heapprobe top` asks after every
	 * collection) may still read heap usage through the probe. Closing it
	 * here crashed the JVM at exit twice in ~60 runs with top attached
	 * (SIGSEGV in lastgc_read: its state freed under it). */
	(void)vm;
	hp_profiler_quiesce();
}

/* ---- The jar's entry points (java/io/heapprobe/HeapProbe.java) -----------
 * -javaagent:heapprobe.jar=OPTIONS and the Java API load this library with
 * System.load and call these natives: a command is what Agent_OnAttach
 * runs for the same options (the profiler starts in the live phase, as
 * when the heapprobe command attaches), its messages returned instead of
 * written to a reply file. Called from Java, never from a GC callback. */

/* "rc=N\n" and the messages a command wrote while it ran. */
static jstring messages_string(JNIEnv *jni, int rc, char *buf, size_t len)
{
	size_t cap = len + 32;
	char *s = malloc(cap);
	if (!s)
		return NULL;
	snprintf(s, cap, "rc=%d\n%.*s", rc, (int)len, buf ? buf : "");
	jstring out = (*jni)->NewStringUTF(jni, s);
	free(s);
	return out;
}

JNIEXPORT jstring JNICALL Java_io_heapprobe_HeapProbe_command0(JNIEnv *jni, jclass cls, jstring spec)
{
	JavaVM *vm = NULL;
	if ((*jni)->GetJavaVM(jni, &vm) != JNI_OK)
		return NULL;
	const char *s = spec ? (*jni)->GetStringUTFChars(jni, spec, NULL) : NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	if (!mem) {
		if (s)
			(*jni)->ReleaseStringUTFChars(jni, spec, s);
		return NULL;
	}
	hp_log_set_reply(mem);
	char err[1024];
	struct hp_agent_options o;
	jint rc = hp_options_parse(s ? s : "", &o, err, sizeof(err));
	if (rc) {
		say(&o, err);
		rc = JNI_ERR;
	} else if (o.reply[0]) {
		say(&o, "heapprobe: reply= is the heapprobe command's; the Java API returns the messages");
		rc = JNI_ERR;
	} else {
		rc = on_attach(vm, &o);
	}
	hp_log_set_reply(NULL);
	fclose(mem);
	if (s)
		(*jni)->ReleaseStringUTFChars(jni, spec, s);
	jstring out = messages_string(jni, rc, buf, len);
	free(buf);
	return out;
}

/* The info report (hp_write_info), the probe opened for it if no command
 * has yet. */
JNIEXPORT jstring JNICALL Java_io_heapprobe_HeapProbe_info0(JNIEnv *jni, jclass cls)
{
	JavaVM *vm = NULL;
	if ((*jni)->GetJavaVM(jni, &vm) != JNI_OK)
		return NULL;
	struct hp_agent_options o;
	char err[256];
	hp_options_parse("info", &o, err, sizeof(err));
	char *buf = NULL;
	size_t len = 0;
	int rc = open_probe(vm, &o);
	FILE *mem = open_memstream(&buf, &len);
	if (!mem)
		return NULL;
	if (rc == 0)
		hp_write_info(probe, mem);
	else
		fprintf(mem, "heapprobe: cannot open the probe: %s\n", strerror(-rc));
	fclose(mem);
	jstring out = messages_string(jni, rc, buf, len);
	free(buf);
	return out;
}
