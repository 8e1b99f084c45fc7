/* Modes "jmm" and "exported-totals": the heap figures HotSpot hands to the
 * JDK's own management code, asked for directly.
 *
 * jmm: libjvm exports JVM_GetManagement(version), which returns the
 * JmmInterface, the table of functions libmanagement.so calls to implement
 * java.lang.management. Its GetMemoryUsage(env, JNI_TRUE) builds the very
 * MemoryUsage object MemoryMXBean.getHeapMemoryUsage() returns, so this mode
 * agrees with JMX to the byte. GetMemoryPools + GetPoolCollectionUsage give
 * the per-pool usage after the last collection (hp_jmm_collection_usage).
 *
 * exported-totals: JVM_TotalMemory/JVM_FreeMemory/JVM_MaxMemory, the
 * natives behind Runtime.totalMemory()/freeMemory()/maxMemory().
 *
 * Both enter the VM through JVM_ENTRY wrappers, which take the calling
 * thread as a JavaThread in native state: calling them from a thread the VM
 * does not know, or from a GC callback, would crash it. So read() runs only
 * with the JNIEnv of an attached thread (needs_jni), and set-up that calls
 * into the VM waits until such a thread in the live phase comes by (init
 * says -EAGAIN until then; the dispatcher retries).
 */
#include "heapusage/jmm.h"
#include "heapusage/jnimode.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jvmti.h>

#include "heapusage/probe.h"
#include "vmstructs/safemem.h"

/* ---- The JmmInterface layouts --------------------------------------------
 *
 * JmmInterface is a struct of function pointers whose order changed twice
 * since JDK 10: functions for thread-allocated bytes were inserted ahead of
 * GetMemoryUsage, shifting it and everything after it, and JMM_VERSION was
 * bumped each time. 11u backported the first insertion differently, into
 * the reserved slot 1, without reordering. As an update release might yet
 * bump the version constant without the upstream reordering, the version is
 * read together with the feature release (or, when that is unknown, with
 * whether slot 1 is filled, which only the 11u order does).
 *
 * Slot order read from jmm.h (src/hotspot/share/include/jmm.h) as stored
 * in these repositories:
 *   v2  dragonwell-project/dragonwell11 (a jdk-11.0.x fork): JMM_VERSION_2
 *       = 0x20020000 "JDK 10"; 11u keeps that version and puts
 *       GetOneThreadAllocatedMemory into reserved slot 1 (Temurin 11.0.13
 *       reports 0x20020000 with slot 1 filled). A version 3 on an 11 is
 *       read as this layout too.
 *   v3  openjdk/jdk at 0bbbd149 and corretto/corretto-17 (jdk-17.0.x):
 *       JMM_VERSION_3 = 0x20030000 "JDK 14"; GetOneThreadAllocatedMemory
 *       inserted before GetThreadAllocatedMemory. 17u later filled the
 *       reserved6 slot (after SetVMGlobal) with
 *       GetTotalThreadAllocatedMemory, which moves nothing we use.
 *   v4  JDK 21 and later: JMM_VERSION_4 = 0x20040000, with
 *       GetTotalThreadAllocatedMemory inserted before
 *       GetOneThreadAllocatedMemory instead (read from jdk-21's jmm.h as
 *       copied into oracle/graal espresso/.../include/jmm4.h).
 *   v5  JDK 26 and later: JMM_VERSION_5 = 0x20050000 (jmm.h of
 *       jdk-26.0.2.1+1): the slots up to GetPoolCollectionUsage are v4's;
 *       the four this file calls are confirmed by name on Debian's 26.0.2.1
 *       and 27.0.1 (their libjvm keeps .symtab).
 * Each was checked slot by slot against the jmm_interface initialiser in
 * the libjvm of Temurin 11.0.13, Debian 17.0.21, Temurin 21.0.8 and 25.0.2
 * (its R_X86_64_RELATIVE relocations resolved to jmm_* symbols). Only the
 * slots this file calls are typed; the rest are placeholders.
 */
#define JMM_V2 0x20020000
#define JMM_V3 0x20030000
#define JMM_V4 0x20040000
#define JMM_V5 0x20050000

typedef void *jmm_slot;

/* Slots 0..8, the same in every layout. */
struct jmm_head {
	jmm_slot reserved1;                     /* 0: always NULL */
	jmm_slot reserved2;                     /* 1: NULL, or 11u's GetOneThreadAllocatedMemory */
	jint (JNICALL *GetVersion)(JNIEnv *env);                        /* 2 */
	jmm_slot GetOptionalSupport;            /* 3 */
	jmm_slot GetThreadInfo;                 /* 4 */
	jobjectArray (JNICALL *GetMemoryPools)(JNIEnv *env, jobject mgr);  /* 5 */
	jmm_slot GetMemoryManagers;             /* 6 */
	jmm_slot GetMemoryPoolUsage;            /* 7 */
	jmm_slot GetPeakMemoryPoolUsage;        /* 8 */
};

/* From GetMemoryUsage to GetPoolCollectionUsage, the same in every layout
 * once shifted. */
struct jmm_tail {
	jobject (JNICALL *GetMemoryUsage)(JNIEnv *env, jboolean heap);
	jmm_slot GetLongAttribute, GetBoolAttribute, SetBoolAttribute, GetLongAttributes,
		 FindCircularBlockedThreads, GetThreadCpuTime, GetVMGlobalNames, GetVMGlobals,
		 GetInternalThreadTimes, ResetStatistic, SetPoolSensor, SetPoolThreshold;
	jobject (JNICALL *GetPoolCollectionUsage)(JNIEnv *env, jobject pool);
};

struct jmm_v2 {
	struct jmm_head h;
	jmm_slot GetThreadAllocatedMemory;
	struct jmm_tail t;
};

struct jmm_v3 {
	struct jmm_head h;
	jmm_slot GetOneThreadAllocatedMemory, GetThreadAllocatedMemory;
	struct jmm_tail t;
};

struct jmm_v4 {
	struct jmm_head h;
	jmm_slot GetTotalThreadAllocatedMemory, GetOneThreadAllocatedMemory, GetThreadAllocatedMemory;
	struct jmm_tail t;
};

#define SLOT(type, member) (offsetof(type, member) / sizeof(jmm_slot))
_Static_assert(SLOT(struct jmm_v2, h.GetVersion) == 2, "GetVersion is slot 2");
_Static_assert(SLOT(struct jmm_v2, h.GetMemoryPools) == 5, "GetMemoryPools is slot 5");
_Static_assert(SLOT(struct jmm_v2, t.GetMemoryUsage) == 10, "v2 GetMemoryUsage");
_Static_assert(SLOT(struct jmm_v2, t.GetPoolCollectionUsage) == 23, "v2 GetPoolCollectionUsage");
_Static_assert(SLOT(struct jmm_v3, t.GetMemoryUsage) == 11, "v3 GetMemoryUsage");
_Static_assert(SLOT(struct jmm_v3, t.GetPoolCollectionUsage) == 24, "v3 GetPoolCollectionUsage");
_Static_assert(SLOT(struct jmm_v4, t.GetMemoryUsage) == 12, "v4 GetMemoryUsage");
_Static_assert(SLOT(struct jmm_v4, t.GetPoolCollectionUsage) == 25, "v4 GetPoolCollectionUsage");

enum jmm_layout { LAYOUT_V2, LAYOUT_V3, LAYOUT_V4 };
static const char *const layout_names[] = { "v2 (JDK 10-13, 11u)", "v3 (JDK 14-20)", "v4 (JDK 21+; v5's from 26)" };

/* ---- Mode "jmm" ------------------------------------------------------------ */

_Static_assert(sizeof(((struct hp_jni_once *)0)->fail) == HP_REASON_LEN, "reason buffer sizes agree");

struct jmm_state {
	struct hp_jni_once once;        /* once.ready: the fields below are fixed */

	int version;
	enum jmm_layout layout;
	char note[160];                 /* for the info report */
	jint (JNICALL *get_version)(JNIEnv *);
	jobject (JNICALL *get_memory_usage)(JNIEnv *, jboolean);
	jobjectArray (JNICALL *get_memory_pools)(JNIEnv *, jobject);
	jobject (JNICALL *get_pool_collection_usage)(JNIEnv *, jobject);
	struct hp_musage mu;

	/* Heap pools for hp_jmm_collection_usage, found on its first call. */
	bool pools_ready;
	int pools_rc;
	jobject *heap_pools;            /* global refs */
	int nheap_pools;
};

static void jmm_state_setup(void *st)
{
	pthread_mutex_init(&((struct jmm_state *)st)->once.lock, NULL);
}

static int jmm_fail(struct jmm_state *st, int rc, char *reason, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Records a permanent failure: later inits repeat it without retrying. */
static int jmm_fail(struct jmm_state *st, int rc, char *reason, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->once.fail, sizeof(st->once.fail), fmt, ap);
	va_end(ap);
	__atomic_store_n(&st->once.fail_rc, rc, __ATOMIC_RELEASE);     /* after the text */
	snprintf(reason, len, "%s", st->once.fail);
	return rc;
}

/* Which layout the table has; -ENOTSUP for a combination nobody shipped. */
static int choose_layout(int version, int feature, bool slot1_filled, enum jmm_layout *out)
{
	switch (version) {
	case JMM_V5:
		if (feature && feature < 26)
			return -ENOTSUP;
		*out = LAYOUT_V4;
		return 0;
	case JMM_V4:
		if (feature && feature < 21)
			return -ENOTSUP;
		*out = LAYOUT_V4;
		return 0;
	case JMM_V3:
		/* 14+ leave slot 1 empty; a 3 from an 11u, should one ever
		 * say so, means the 11u order with slot 1 filled. */
		if (feature >= 14 || (!feature && !slot1_filled)) {
			if (slot1_filled)
				return -ENOTSUP;
			*out = LAYOUT_V3;
		} else {
			*out = LAYOUT_V2;
		}
		return 0;
	case JMM_V2:
		if (feature >= 14)
			return -ENOTSUP;
		*out = LAYOUT_V2;
		return 0;
	}
	return -ENOTSUP;
}

/* When libjvm's .symtab is at hand, the function in a slot must be the
 * jmm_* function the layout says: the strongest check there is. */
static bool slot_named(struct hp_probe *p, const void *fn, const char *want, char *got, size_t len)
{
	got[0] = '\0';
	if (!p->syms)
		return true;
	const struct hp_sym *s = hp_symtab_containing(p->syms, (uint64_t)(uintptr_t)fn);
	if (!s || !s->name)
		return true;    /* unnamed: nothing to contradict the layout */
	snprintf(got, len, "%s", s->name);
	return strcmp(s->name, want) == 0;
}

static int jmm_setup(struct hp_probe *p, struct jmm_state *st, JNIEnv *env, char *reason, size_t len)
{
	if (p->status[HP_PART_LIBJVM])
		return jmm_fail(st, -ENOENT, reason, len, "no libjvm: %s", p->reason[HP_PART_LIBJVM]);
	void *(JNICALL *get_mgmt)(jint) = (void *(JNICALL *)(jint))hp_libjvm_export(&p->jvm, "JVM_GetManagement");
	if (!get_mgmt)
		return jmm_fail(st, -ENOENT, reason, len, "libjvm does not export JVM_GetManagement");
	if (!hp_libjvm_in_text(&p->jvm, (uintptr_t)get_mgmt))
		return jmm_fail(st, -EFAULT, reason, len, "JVM_GetManagement %p is outside libjvm's text",
				(void *)get_mgmt);

	/* HotSpot hands out the table only for the exact JMM_VERSION it was
	 * built with: ask for the newest first. */
	static const int versions[] = { JMM_V5, JMM_V4, JMM_V3, JMM_V2 };
	const void *iface = NULL;
	int version = 0;
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]) && !iface; i++) {
		iface = get_mgmt(versions[i]);
		version = versions[i];
	}
	if (!iface)
		return jmm_fail(st, -ENOTSUP, reason, len,
				"JVM_GetManagement accepts none of JMM versions 0x%x, 0x%x, 0x%x, 0x%x", JMM_V5, JMM_V4,
				JMM_V3, JMM_V2);

	/* Copy the table out without trusting the pointer; the union reads it
	 * as whichever layout it turns out to be. */
	union {
		struct jmm_head h;      /* the initial sequence all three share */
		struct jmm_v2 v2;
		struct jmm_v3 v3;
		struct jmm_v4 v4;
	} raw;
	if (hp_safe_read(&raw, iface, sizeof(raw)))
		return jmm_fail(st, -EFAULT, reason, len, "JmmInterface at %p is unreadable", iface);
	if (raw.h.reserved1)
		return jmm_fail(st, -EBADMSG, reason, len, "JmmInterface at %p: reserved slot 0 is not NULL",
				iface);
	if (!raw.h.GetVersion || !hp_libjvm_in_text(&p->jvm, (uintptr_t)raw.h.GetVersion))
		return jmm_fail(st, -EFAULT, reason, len, "JmmInterface.GetVersion %p is outside libjvm's text",
				(void *)raw.h.GetVersion);
	jint reported = raw.h.GetVersion(env);
	if (hp_jni_threw(env) || reported != version)
		return jmm_fail(st, -EBADMSG, reason, len,
				"JmmInterface asked for version 0x%x says it is 0x%x", version, (int)reported);

	enum jmm_layout layout;
	if (choose_layout(version, p->feature, raw.h.reserved2 != NULL, &layout))
		return jmm_fail(st, -ENOTSUP, reason, len,
				"JMM version 0x%x on JDK %d (slot 1 %s): layout unknown", version, p->feature,
				raw.h.reserved2 ? "filled" : "empty");
	const struct jmm_tail *tail;
	switch (layout) {
	case LAYOUT_V2: tail = &raw.v2.t; break;
	case LAYOUT_V3: tail = &raw.v3.t; break;
	default: tail = &raw.v4.t; break;
	}

	const struct {
		const void *fn;
		const char *name;
	} used[] = {
		{ (const void *)raw.h.GetVersion, "jmm_GetVersion" },
		{ (const void *)raw.h.GetMemoryPools, "jmm_GetMemoryPools" },
		{ (const void *)tail->GetMemoryUsage, "jmm_GetMemoryUsage" },
		{ (const void *)tail->GetPoolCollectionUsage, "jmm_GetPoolCollectionUsage" },
	};
	int named = 0;
	for (size_t i = 0; i < sizeof(used) / sizeof(used[0]); i++) {
		char got[128];
		if (!used[i].fn || !hp_libjvm_in_text(&p->jvm, (uintptr_t)used[i].fn))
			return jmm_fail(st, -EFAULT, reason, len,
					"JmmInterface %s: %s slot holds %p, outside libjvm's text",
					layout_names[layout], used[i].name + 4, used[i].fn);
		for (size_t j = 0; j < i; j++)
			if (used[j].fn == used[i].fn)
				return jmm_fail(st, -EBADMSG, reason, len,
						"JmmInterface %s: %s and %s share %p: layout wrong",
						layout_names[layout], used[j].name + 4, used[i].name + 4,
						used[i].fn);
		if (!slot_named(p, used[i].fn, used[i].name, got, sizeof(got)))
			return jmm_fail(st, -EBADMSG, reason, len,
					"JmmInterface %s: the %s slot holds %s: layout wrong",
					layout_names[layout], used[i].name + 4, got);
		named += got[0] != '\0';
	}

	char why[HP_REASON_LEN];
	int rc = hp_musage_init(env, &st->mu, why, sizeof(why));
	if (rc)
		return jmm_fail(st, rc, reason, len, "%s", why);

	st->version = version;
	st->layout = layout;
	snprintf(st->note, sizeof(st->note), "JMM version 0x%x, layout %s, %d of %zu slots confirmed by symbol name",
		 version, layout_names[layout], named, sizeof(used) / sizeof(used[0]));
	st->get_version = raw.h.GetVersion;
	st->get_memory_pools = raw.h.GetMemoryPools;
	st->get_memory_usage = tail->GetMemoryUsage;
	st->get_pool_collection_usage = tail->GetPoolCollectionUsage;
	__atomic_store_n(&st->once.ready, true, __ATOMIC_RELEASE);
	return 0;
}

static int jmm_setup_cb(struct hp_probe *p, void *state, JNIEnv *env, char *reason, size_t len)
{
	return jmm_setup(p, state, env, reason, len);
}

/* Set-up on demand: 0 when ready, -EAGAIN if it cannot run here/now. */
static int jmm_ensure(struct hp_probe *p, JNIEnv *env, struct jmm_state **out, char *reason, size_t len)
{
	struct jmm_state *st = hp_mode_state_get(p, HP_MODE_JMM, sizeof(*st), jmm_state_setup);
	if (!st) {
		snprintf(reason, len, "out of memory");
		return -ENOMEM;
	}
	*out = st;
	return hp_jni_once_run(&st->once, p, env,
			       "waiting for an attached Java thread in the live phase to ask JVM_GetManagement",
			       jmm_setup_cb, st, reason, len);
}


static int jmm_init(struct hp_probe *p, char *reason, size_t len)
{
	if (!p->vm) {
		snprintf(reason, len, "no JavaVM given to hp_open");
		return -ENOTSUP;
	}
	if (p->status[HP_PART_LIBJVM]) {
		snprintf(reason, len, "no libjvm: %s", p->reason[HP_PART_LIBJVM]);
		return -ENOENT;
	}
	/* The export alone can be checked at any time. */
	void *fn = hp_libjvm_export(&p->jvm, "JVM_GetManagement");
	if (!fn) {
		snprintf(reason, len, "libjvm does not export JVM_GetManagement");
		return -ENOENT;
	}
	if (!hp_libjvm_in_text(&p->jvm, (uintptr_t)fn)) {
		snprintf(reason, len, "JVM_GetManagement %p is outside libjvm's text", fn);
		return -EFAULT;
	}
	struct jmm_state *st;
	JNIEnv *env = hp_jni_live_env(p);
	if (env && (*env)->ExceptionCheck(env))
		env = NULL;     /* not ours to clear */
	return jmm_ensure(p, env, &st, reason, len);
}

static jobject jmm_get(JNIEnv *env, void *ctx)
{
	const struct jmm_state *st = ctx;
	return st->get_memory_usage(env, JNI_TRUE);
}

static int jmm_read(struct hp_probe *p, JNIEnv *env, struct hp_mode_reading *r)
{
	struct jmm_state *st = __atomic_load_n(&p->mode_state[HP_MODE_JMM], __ATOMIC_ACQUIRE);
	if (!st || !__atomic_load_n(&st->once.ready, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	return hp_musage_call(env, &st->mu, jmm_get, st, r);
}

const char *hp_jmm_note(struct hp_probe *p)
{
	struct jmm_state *st = p ? __atomic_load_n(&p->mode_state[HP_MODE_JMM], __ATOMIC_ACQUIRE) : NULL;
	if (!st)
		return "not set up";
	if (__atomic_load_n(&st->once.ready, __ATOMIC_ACQUIRE))
		return st->note;
	return __atomic_load_n(&st->once.fail_rc, __ATOMIC_ACQUIRE) ? st->once.fail : "not set up yet";
}

static void release_pools(JNIEnv *env, struct jmm_state *st)
{
	for (int i = 0; i < st->nheap_pools; i++)
		if (env && st->heap_pools[i])
			(*env)->DeleteGlobalRef(env, st->heap_pools[i]);
	free(st->heap_pools);
	st->heap_pools = NULL;
	st->nheap_pools = 0;
}

static void jmm_fini(struct hp_probe *p)
{
	struct jmm_state *st = __atomic_exchange_n(&p->mode_state[HP_MODE_JMM], NULL, __ATOMIC_ACQ_REL);
	if (!st)
		return;
	/* Global refs need a JNIEnv of a live VM; without one (closing from
	 * a detached thread, or at VM death) they are left to the VM. */
	JNIEnv *env = hp_jni_live_env(p);
	release_pools(env, st);
	hp_musage_release(env, &st->mu);
	pthread_mutex_destroy(&st->once.lock);
	free(st);
}

const struct hp_mode_ops hp_mode_jmm = {
	.mode = HP_MODE_JMM,
	.needs_jni = true,
	.init = jmm_init,
	.read = jmm_read,
	.fini = jmm_fini,
};

/* ---- Collection usage over the heap pools ---------------------------------- */

/* Keeps the pools whose MemoryPoolMXBean.getType() is MemoryType.HEAP. The
 * VM creates its pools with the heap and never adds any, and
 * GetMemoryPools returns the same objects every time, so they are looked
 * up once. */
static int find_heap_pools(struct jmm_state *st, JNIEnv *env)
{
	int rc = -ENOENT;
	jclass pool_cls = (*env)->FindClass(env, "java/lang/management/MemoryPoolMXBean");
	jclass type_cls = hp_jni_threw(env) ? NULL : (*env)->FindClass(env, "java/lang/management/MemoryType");
	if (hp_jni_threw(env) || !pool_cls || !type_cls)
		return -ENOENT;
	jmethodID get_type = (*env)->GetMethodID(env, pool_cls, "getType", "()Ljava/lang/management/MemoryType;");
	if (hp_jni_threw(env) || !get_type)
		return -ENOENT;
	jfieldID heap_id = (*env)->GetStaticFieldID(env, type_cls, "HEAP", "Ljava/lang/management/MemoryType;");
	if (hp_jni_threw(env) || !heap_id)
		return -ENOENT;
	jobject heap_type = (*env)->GetStaticObjectField(env, type_cls, heap_id);
	if (hp_jni_threw(env) || !heap_type)
		return -ENOENT;

	jobjectArray pools = st->get_memory_pools(env, NULL);
	if (hp_jni_threw(env) || !pools)
		return -EIO;
	jsize n = (*env)->GetArrayLength(env, pools);
	if (n <= 0 || n > 1024)
		return -ENODATA;
	st->heap_pools = calloc((size_t)n, sizeof(jobject));
	if (!st->heap_pools)
		return -ENOMEM;
	rc = 0;
	for (jsize i = 0; i < n && !rc; i++) {
		jobject pool = (*env)->GetObjectArrayElement(env, pools, i);
		if (hp_jni_threw(env)) {
			rc = -EIO;
			break;
		}
		if (!pool || !(*env)->IsInstanceOf(env, pool, pool_cls))
			continue;
		jobject type = (*env)->CallObjectMethod(env, pool, get_type);
		if (hp_jni_threw(env)) {
			rc = -EIO;
		} else if (type && (*env)->IsSameObject(env, type, heap_type)) {
			jobject g = (*env)->NewGlobalRef(env, pool);
			if (!g)
				rc = -ENOMEM;
			else
				st->heap_pools[st->nheap_pools++] = g;
		}
		if (type)
			(*env)->DeleteLocalRef(env, type);
		(*env)->DeleteLocalRef(env, pool);
	}
	if (!rc && !st->nheap_pools)
		rc = -ENODATA;
	if (rc)
		release_pools(env, st);
	return rc;
}

int hp_jmm_collection_usage(struct hp_probe *p, JNIEnv *env, uint64_t *used, uint64_t *committed)
{
	char reason[HP_REASON_LEN];
	struct jmm_state *st;
	if (!p || !env || !used || !committed)
		return -EINVAL;
	if ((*env)->ExceptionCheck(env))
		return -EAGAIN;
	/* The same table as the jmm mode: if that was disabled (by a fault
	 * spec, or for an insane reading), this is not trusted either. */
	int status = __atomic_load_n(&p->mode_status[HP_MODE_JMM], __ATOMIC_ACQUIRE);
	if (status && status != -EAGAIN)
		return -ENOTSUP;
	int rc = jmm_ensure(p, hp_jni_live_env(p) ? env : NULL, &st, reason, sizeof(reason));
	if (rc)
		return rc == -EAGAIN || rc == -ENOMEM ? rc : -ENOTSUP;

	if (!__atomic_load_n(&st->pools_ready, __ATOMIC_ACQUIRE)) {
		int failed = __atomic_load_n(&st->pools_rc, __ATOMIC_ACQUIRE);
		if (failed)
			return failed;
		if (pthread_mutex_trylock(&st->once.lock))
			return -EAGAIN;
		if (!st->pools_ready && !st->pools_rc) {
			if ((*env)->PushLocalFrame(env, 32) < 0) {
				hp_jni_threw(env);
				rc = -ENOMEM;
			} else {
				rc = find_heap_pools(st, env);
				(*env)->PopLocalFrame(env, NULL);
				if (rc && rc != -ENOMEM)
					__atomic_store_n(&st->pools_rc, rc, __ATOMIC_RELEASE);  /* will not get better */
				else if (!rc)
					__atomic_store_n(&st->pools_ready, true, __ATOMIC_RELEASE);
			}
		}
		rc = st->pools_ready ? 0 : (st->pools_rc ? st->pools_rc : rc);
		pthread_mutex_unlock(&st->once.lock);
		if (rc)
			return rc;
	}

	if ((*env)->PushLocalFrame(env, 8) < 0) {
		hp_jni_threw(env);
		return -ENOMEM;
	}
	uint64_t sum_used = 0, sum_committed = 0;
	for (int i = 0; i < st->nheap_pools && !rc; i++) {
		jobject usage = st->get_pool_collection_usage(env, st->heap_pools[i]);
		if (hp_jni_threw_named(env)) {
			rc = -EIO;
			break;
		}
		if (!usage)
			continue;       /* a pool without collection usage */
		struct hp_mode_reading r;
		rc = hp_musage_read(env, &st->mu, usage, &r);
		(*env)->DeleteLocalRef(env, usage);
		if (!rc) {
			sum_used += r.used;
			sum_committed += r.committed;
		}
	}
	(*env)->PopLocalFrame(env, NULL);
	if (rc)
		return rc;
	if (!sum_committed)
		return -ENODATA;        /* no collection yet: every pool says 0 */
	*used = sum_used;
	*committed = sum_committed;
	return 0;
}

/* ---- Mode "exported-totals" ------------------------------------------------ */

struct totals_state {
	jlong (JNICALL *total)(void);
	jlong (JNICALL *free_mem)(void);
	jlong (JNICALL *max)(void);
};

static int totals_init(struct hp_probe *p, char *reason, size_t len)
{
	static const char *const names[] = { "JVM_TotalMemory", "JVM_FreeMemory", "JVM_MaxMemory" };
	void *fn[3];
	if (!p->vm) {
		snprintf(reason, len, "no JavaVM given to hp_open: no thread can call into the VM");
		return -ENOTSUP;
	}
	if (p->status[HP_PART_LIBJVM]) {
		snprintf(reason, len, "no libjvm: %s", p->reason[HP_PART_LIBJVM]);
		return -ENOENT;
	}
	for (int i = 0; i < 3; i++) {
		fn[i] = hp_libjvm_export(&p->jvm, names[i]);
		if (!fn[i]) {
			snprintf(reason, len, "libjvm does not export %s", names[i]);
			return -ENOENT;
		}
		if (!hp_libjvm_in_text(&p->jvm, (uintptr_t)fn[i])) {
			snprintf(reason, len, "%s %p is outside libjvm's text", names[i], fn[i]);
			return -EFAULT;
		}
	}
	/* They dereference the heap: not before it exists (VM start). */
	jvmtiPhase phase;
	if (p->jvmti && (*p->jvmti)->GetPhase(p->jvmti, &phase) == JVMTI_ERROR_NONE &&
	    (phase == JVMTI_PHASE_ONLOAD || phase == JVMTI_PHASE_PRIMORDIAL)) {
		snprintf(reason, len, "the heap does not exist before the VM starts");
		return -EAGAIN;
	}
	if (__atomic_load_n(&p->mode_state[HP_MODE_EXPORTED_TOTALS], __ATOMIC_ACQUIRE))
		return 0;
	/* Filled before it is published: a reader never sees half of it. */
	struct totals_state *st = calloc(1, sizeof(*st));
	if (!st) {
		snprintf(reason, len, "out of memory");
		return -ENOMEM;
	}
	st->total = (jlong (JNICALL *)(void))fn[0];
	st->free_mem = (jlong (JNICALL *)(void))fn[1];
	st->max = (jlong (JNICALL *)(void))fn[2];
	void *expected = NULL;
	if (!__atomic_compare_exchange_n(&p->mode_state[HP_MODE_EXPORTED_TOTALS], &expected, st, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		free(st);
	return 0;
}

static int totals_read(struct hp_probe *p, JNIEnv *env, struct hp_mode_reading *r)
{
	const struct totals_state *st = __atomic_load_n(&p->mode_state[HP_MODE_EXPORTED_TOTALS], __ATOMIC_ACQUIRE);
	/* Not JNI, but an exception pending means the caller is mid-failure:
	 * decline like the JNI modes do. */
	if (!st || !env || (*env)->ExceptionCheck(env))
		return -EAGAIN;
	/* Separate VM entries: a collection or a resize between them would
	 * pair a total with another moment's free or max. Keep a reading whose
	 * total did not move while free and max were read. The max must be
	 * inside the bracket too: Parallel's max_capacity() is
	 * MAX2(reserved - a survivor space, capacity()), so it follows the
	 * capacity down when the heap shrinks, and a max read after the bracket
	 * can be below the total read in it (seen in jni_modes::stress_parallel:
	 * the insane reading disabled the mode for good). */
	for (int tries = 0; tries < 4; tries++) {
		jlong total = st->total();
		jlong free_bytes = st->free_mem();
		jlong max = st->max();
		jlong again = st->total();
		if (total != again || total <= 0 || free_bytes < 0 || free_bytes > total)
			continue;
		if (max > 0 && max != INT64_MAX && total > max)
			continue;       /* a resize crossed the bracket and came back */
		r->used = (uint64_t)(total - free_bytes);
		r->committed = (uint64_t)total;
		/* Long.MAX_VALUE means "no limit" to Runtime.maxMemory(). */
		r->max = max <= 0 || max == INT64_MAX ? 0 : (uint64_t)max;
		r->kind = HP_USAGE_CURRENT;
		return 0;
	}
	return -EAGAIN;
}

static void totals_fini(struct hp_probe *p)
{
	free(__atomic_exchange_n(&p->mode_state[HP_MODE_EXPORTED_TOTALS], NULL, __ATOMIC_ACQ_REL));
}

const struct hp_mode_ops hp_mode_exported_totals = {
	.mode = HP_MODE_EXPORTED_TOTALS,
	.needs_jni = true,
	.init = totals_init,
	.read = totals_read,
	.fini = totals_fini,
};
