/* Mode "jmx-native": MemoryMXBean.getHeapMemoryUsage() without the Java
 * frames around it.
 *
 * sun.management.MemoryImpl.getMemoryUsage0(boolean) is the native behind
 * getHeapMemoryUsage(). Its address is taken from the JVMTI NativeMethodBind
 * event when the JVM binds it (the probe's events.c forwards every bind to
 * hp_jmx_native_method_bind), and then called like the JVM would call it:
 * fn(env, memoryImpl, JNI_TRUE). Only JNI and JVMTI are used, no HotSpot
 * internals, so any VM whose class library has this native works.
 *
 * The native is bound lazily, on the first getHeapMemoryUsage(); when the VM
 * goes live the probe makes that first call itself (hp_jmx_vm_live), which
 * also yields the MemoryImpl instance to pass as `this`. If the bind was not
 * seen (the probe opened after it, or JVMTI refused the capability), the
 * address is looked up as an export of the libmanagement.so already loaded.
 */
#include "heapusage/jmx.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jvmti.h>

#include "heapusage/jnimode.h"
#include "heapusage/probe.h"

#define NATIVE_CLASS_SIG "Lsun/management/MemoryImpl;"
#define NATIVE_NAME      "getMemoryUsage0"
#define NATIVE_SIG       "(Z)Ljava/lang/management/MemoryUsage;"
#define NATIVE_SYMBOL    "Java_sun_management_MemoryImpl_getMemoryUsage0"
#define NATIVE_LIB       "libmanagement.so"

typedef jobject (JNICALL *get_memory_usage0_fn)(JNIEnv *env, jobject self, jboolean heap);

struct jmx_state {
	struct hp_jni_once once;        /* once.ready: bean and ids set, read() may run */

	/* The capture: `claimed` picks one writer, which fills `note` and
	 * then publishes `addr` (release); readers load `addr` (acquire). */
	int claimed;
	void *addr;
	char note[200];

	bool forced;                    /* the probe's own first call was made */
	jobject bean;                   /* global ref to the MemoryImpl */
	struct hp_musage mu;
};

static void jmx_state_setup(void *st)
{
	pthread_mutex_init(&((struct jmx_state *)st)->once.lock, NULL);
}

static struct jmx_state *jmx_state(struct hp_probe *p)
{
	return hp_mode_state_get(p, HP_MODE_JMX_NATIVE, sizeof(struct jmx_state), jmx_state_setup);
}

/* The loaded object whose executable segment holds an address. */
struct exec_query {
	uintptr_t addr;
	char path[256];
	bool found;
};

static int exec_segment_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct exec_query *q = data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (q->addr >= start && q->addr < start + ph->p_memsz) {
			snprintf(q->path, sizeof(q->path), "%s", info->dlpi_name ? info->dlpi_name : "");
			q->found = true;
			return 1;
		}
	}
	return 0;
}

/* true if addr is code of some loaded object; *name gets its file name. A
 * native's address is called, so it must at least be that. */
static bool in_loaded_code(const void *addr, char *name, size_t len)
{
	struct exec_query q = { .addr = (uintptr_t)addr };
	dl_iterate_phdr(exec_segment_cb, &q);
	if (q.found) {
		const char *base = strrchr(q.path, '/');
		const char *src = base ? base + 1 : q.path[0] ? q.path : "the executable";
		size_t n = strnlen(src, len - 1);       /* a long name is cut, not an error */
		memcpy(name, src, n);
		name[n] = '\0';
	}
	return q.found;
}

static void publish(struct jmx_state *st, void *addr, const char *how)
{
	char lib[128];
	int expected = 0;
	if (!__atomic_compare_exchange_n(&st->claimed, &expected, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;         /* someone else captured it first */
	if (!in_loaded_code(addr, lib, sizeof(lib)))
		snprintf(lib, sizeof(lib), "no loaded object's code!");
	snprintf(st->note, sizeof(st->note), "%s (%p in %s)", how, addr, lib);
	__atomic_store_n(&st->addr, addr, __ATOMIC_RELEASE);
}

void hp_jmx_native_method_bind(struct hp_probe *p, JNIEnv *jni, jthread thread, jmethodID method,
			       void *address, void **new_address_ptr)
{
	/* Called for every native the VM binds: bail out cheaply. The
	 * binding itself (*new_address_ptr) is left alone. */
	jvmtiEnv *jvmti = p ? p->jvmti : NULL;
	if (!jvmti || !method || !address)
		return;
	struct jmx_state *st = jmx_state(p);
	if (!st || __atomic_load_n(&st->claimed, __ATOMIC_ACQUIRE))
		return;
	char *name = NULL, *sig = NULL, *csig = NULL;
	jclass cls = NULL;
	/* Fails (WRONG_PHASE) in the primordial phase, long before
	 * java.management can be loaded. */
	if ((*jvmti)->GetMethodName(jvmti, method, &name, &sig, NULL) != JVMTI_ERROR_NONE)
		return;
	bool match = name && sig && strcmp(name, NATIVE_NAME) == 0 && strcmp(sig, NATIVE_SIG) == 0;
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	if (!match)
		return;
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, method, &cls) != JVMTI_ERROR_NONE || !cls)
		return;
	if ((*jvmti)->GetClassSignature(jvmti, cls, &csig, NULL) == JVMTI_ERROR_NONE && csig) {
		if (strcmp(csig, NATIVE_CLASS_SIG) == 0)
			publish(st, address, "NativeMethodBind");
		(*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
	}
	if (jni)
		(*jni)->DeleteLocalRef(jni, cls);
}

static int jmx_fail(struct jmx_state *st, int rc, char *reason, size_t len, const char *what, const char *detail)
{
	snprintf(st->once.fail, sizeof(st->once.fail), "%s%s%s", what, detail && *detail ? ": " : "",
		 detail ? detail : "");
	__atomic_store_n(&st->once.fail_rc, rc, __ATOMIC_RELEASE);     /* after the text */
	snprintf(reason, len, "%s", st->once.fail);
	return rc;
}

static int find_lib_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	char *path = data;
	const char *name = info->dlpi_name;
	const char *base = name ? strrchr(name, '/') : NULL;
	if (base && strcmp(base + 1, NATIVE_LIB) == 0) {
		snprintf(path, PATH_MAX, "%s", name);
		return 1;
	}
	return 0;
}

/* Fallback: the export of the libmanagement.so this VM loaded. Only after
 * a getHeapMemoryUsage() call went through, so the library's JNI_OnLoad
 * (which fetches its JmmInterface) is known to have run. The VM loads it by
 * full path: find that path among the loaded objects, and take a reference
 * with RTLD_NOLOAD so that no second copy is ever loaded. */
static void *lookup_export(char *why, size_t len)
{
	char path[PATH_MAX] = "";
	dl_iterate_phdr(find_lib_cb, path);
	if (!path[0]) {
		snprintf(why, len, "no %s is loaded", NATIVE_LIB);
		return NULL;
	}
	void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (!h) {
		snprintf(why, len, "dlopen(%s, RTLD_NOLOAD): %s", path, dlerror());
		return NULL;
	}
	void *fn = dlsym(h, NATIVE_SYMBOL);
	if (!fn)
		snprintf(why, len, "%s does not export %s", path, NATIVE_SYMBOL);
	/* The VM keeps the library loaded; our reference may go. */
	dlclose(h);
	return fn;
}

/* Makes the first getHeapMemoryUsage() call (which binds the native, so the
 * bind event captures it) and keeps the MemoryImpl for `this`. */
static int force_binding(struct hp_probe *p, struct jmx_state *st, JNIEnv *env, char *reason, size_t len)
{
	jclass factory = (*env)->FindClass(env, "java/lang/management/ManagementFactory");
	if (hp_jni_threw(env) || !factory)
		return jmx_fail(st, -ENOENT, reason, len,
				"java.lang.management.ManagementFactory cannot be loaded", "no java.management module?");
	jmethodID get_bean = (*env)->GetStaticMethodID(env, factory, "getMemoryMXBean",
						       "()Ljava/lang/management/MemoryMXBean;");
	if (hp_jni_threw(env) || !get_bean)
		return jmx_fail(st, -ENOENT, reason, len, "ManagementFactory.getMemoryMXBean() not found", NULL);
	jobject bean = (*env)->CallStaticObjectMethod(env, factory, get_bean);
	if (hp_jni_threw(env) || !bean)
		return jmx_fail(st, -EIO, reason, len, "ManagementFactory.getMemoryMXBean() failed", NULL);

	/* The native is an instance method of MemoryImpl: only an instance of
	 * it is a fit `this` (another VM's class library may differ). */
	jclass impl = (*env)->FindClass(env, "sun/management/MemoryImpl");
	if (hp_jni_threw(env) || !impl || !(*env)->IsInstanceOf(env, bean, impl))
		return jmx_fail(st, -ENOTSUP, reason, len,
				"the MemoryMXBean is not a sun.management.MemoryImpl", NULL);
	st->bean = (*env)->NewGlobalRef(env, bean);
	if (!st->bean)
		return -ENOMEM;

	if (!__atomic_load_n(&st->addr, __ATOMIC_ACQUIRE)) {
		jclass mxbean = (*env)->FindClass(env, "java/lang/management/MemoryMXBean");
		jmethodID get_heap = hp_jni_threw(env) || !mxbean ? NULL :
			(*env)->GetMethodID(env, mxbean, "getHeapMemoryUsage", "()Ljava/lang/management/MemoryUsage;");
		if (hp_jni_threw(env) || !get_heap)
			return jmx_fail(st, -ENOENT, reason, len, "MemoryMXBean.getHeapMemoryUsage() not found", NULL);
		jobject usage = (*env)->CallObjectMethod(env, bean, get_heap);
		if (hp_jni_threw(env) || !usage)
			return jmx_fail(st, -EIO, reason, len, "the probe's first getHeapMemoryUsage() call failed",
					NULL);
	}
	st->forced = true;
	return 0;
}

static int jmx_setup(struct hp_probe *p, struct jmx_state *st, JNIEnv *env, char *reason, size_t len)
{
	char why[128];          /* a detail appended to a sentence: keep it short */
	int rc;
	if (!st->mu.cls && (rc = hp_musage_init(env, &st->mu, why, sizeof(why))))
		return jmx_fail(st, rc, reason, len, why, NULL);
	if (!st->forced && (rc = force_binding(p, st, env, reason, len)))
		return rc;
	if (!__atomic_load_n(&st->addr, __ATOMIC_ACQUIRE)) {
		/* The call above went through without the bind event: it was
		 * bound before the probe looked, or the event is off. */
		void *fn = lookup_export(why, sizeof(why));
		if (!fn)
			return jmx_fail(st, -ENOENT, reason, len,
					"MemoryImpl.getMemoryUsage0 was bound without a NativeMethodBind event the "
					"probe saw, and its export is not found", why);
		publish(st, fn, "dlsym " NATIVE_SYMBOL ", NativeMethodBind not seen");
	}
	void *addr = __atomic_load_n(&st->addr, __ATOMIC_ACQUIRE);
	if (!in_loaded_code(addr, why, sizeof(why))) {
		snprintf(why, sizeof(why), "%p", addr);
		return jmx_fail(st, -EFAULT, reason, len,
				"the captured MemoryImpl.getMemoryUsage0 is not code of any loaded object", why);
	}
	__atomic_store_n(&st->once.ready, true, __ATOMIC_RELEASE);
	return 0;
}

static int jmx_setup_cb(struct hp_probe *p, void *state, JNIEnv *env, char *reason, size_t len)
{
	return jmx_setup(p, state, env, reason, len);
}

/* Set-up on demand; 0 when ready, -EAGAIN if it cannot run here/now. */
static int jmx_ensure(struct hp_probe *p, JNIEnv *env, char *reason, size_t len)
{
	struct jmx_state *st = jmx_state(p);
	if (!st) {
		snprintf(reason, len, "out of memory");
		return -ENOMEM;
	}
	char waiting[160];
	snprintf(waiting, sizeof(waiting), "MemoryImpl.getMemoryUsage0 %s; waiting for an attached Java thread in the "
		 "live phase", __atomic_load_n(&st->addr, __ATOMIC_ACQUIRE) ? "captured" : "not captured yet");
	return hp_jni_once_run(&st->once, p, env, waiting, jmx_setup_cb, st, reason, len);
}

void hp_jmx_vm_live(struct hp_probe *p, JNIEnv *jni)
{
	char reason[HP_REASON_LEN];
	if (!p || !jni || (*jni)->ExceptionCheck(jni))
		return;
	/* The outcome is what init reports when the dispatcher retries it. */
	jmx_ensure(p, jni, reason, sizeof(reason));
}

static int jmx_init(struct hp_probe *p, char *reason, size_t len)
{
	if (!p->vm) {
		snprintf(reason, len, "no JavaVM given to hp_open");
		return -ENOTSUP;
	}
	JNIEnv *env = hp_jni_live_env(p);
	if (env && (*env)->ExceptionCheck(env))
		env = NULL;
	return jmx_ensure(p, env, reason, len);
}

static jobject jmx_get(JNIEnv *env, void *ctx)
{
	const struct jmx_state *st = ctx;
	get_memory_usage0_fn fn = (get_memory_usage0_fn)__atomic_load_n(&st->addr, __ATOMIC_ACQUIRE);
	return fn(env, st->bean, JNI_TRUE);
}

static int jmx_read(struct hp_probe *p, JNIEnv *env, struct hp_mode_reading *r)
{
	struct jmx_state *st = __atomic_load_n(&p->mode_state[HP_MODE_JMX_NATIVE], __ATOMIC_ACQUIRE);
	if (!st || !__atomic_load_n(&st->once.ready, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	return hp_musage_call(env, &st->mu, jmx_get, st, r);
}

static void jmx_fini(struct hp_probe *p)
{
	struct jmx_state *st = __atomic_exchange_n(&p->mode_state[HP_MODE_JMX_NATIVE], NULL, __ATOMIC_ACQ_REL);
	if (!st)
		return;
	JNIEnv *env = hp_jni_live_env(p);       /* see jmm_fini */
	if (env && st->bean)
		(*env)->DeleteGlobalRef(env, st->bean);
	hp_musage_release(env, &st->mu);
	pthread_mutex_destroy(&st->once.lock);
	free(st);
}

const char *hp_jmx_capture_note(struct hp_probe *p)
{
	struct jmx_state *st = p ? __atomic_load_n(&p->mode_state[HP_MODE_JMX_NATIVE], __ATOMIC_ACQUIRE) : NULL;
	if (!st)
		return "not captured (the mode has not started)";
	if (__atomic_load_n(&st->addr, __ATOMIC_ACQUIRE))
		return st->note;
	if (__atomic_load_n(&st->once.fail_rc, __ATOMIC_ACQUIRE))
		return st->once.fail;
	return "not captured yet";
}

const struct hp_mode_ops hp_mode_jmx_native = {
	.mode = HP_MODE_JMX_NATIVE,
	.needs_jni = true,
	.init = jmx_init,
	.read = jmx_read,
	.fini = jmx_fini,
};
