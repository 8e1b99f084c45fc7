/* The table of heap-usage modes (modes.h): each source behind one
 * interface, set up once with a one-line reason when it fails, read with
 * the checks every reading must pass, disabled for good when a reading is
 * nonsense. The dispatcher that chooses among them is usage.c; the GC
 * events that refresh the post-GC figures are events.c. Data flows one way:
 * the sources -> this table -> events, usage. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "heapusage/gcthread.h"
#include "heapusage/modes.h"
#include "vmstructs/clock.h"
#include "heapusage/probe.h"

const char *hp_mode_name(enum hp_mode mode)
{
	switch (mode) {
	case HP_MODE_MEMORY_USAGE_CALL: return "memory-usage-call";
	case HP_MODE_HEAP_SUMMARY_CALL: return "heap-summary-call";
	case HP_MODE_LAST_GC_FIELDS: return "last-gc-fields";
	case HP_MODE_JMM: return "jmm";
	case HP_MODE_JMX_NATIVE: return "jmx-native";
	case HP_MODE_EXPORTED_TOTALS: return "exported-totals";
	case HP_MODE_PERFDATA: return "perfdata";
	case HP_MODE_COUNT: break;
	}
	return "unknown";
}

const char *hp_usage_kind_name(enum hp_usage_kind kind)
{
	switch (kind) {
	case HP_USAGE_CURRENT: return "current";
	case HP_USAGE_AFTER_YOUNG_GC: return "after-young-gc";
	case HP_USAGE_AFTER_FULL_GC: return "after-full-gc";
	case HP_USAGE_MARKED_LIVE: return "marked-live";
	case HP_USAGE_AFTER_CONCURRENT_CYCLE: return "after-concurrent-cycle";
	}
	return "unknown";
}

bool hp_reading_sane(const struct hp_mode_reading *r)
{
	if (r->committed == 0 || r->used > r->committed)
		return false;
	if (r->max && r->committed > r->max)
		return false;
	return true;
}

void hp_mode_disable(struct hp_probe *p, enum hp_mode mode, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->mode_reason[mode], HP_REASON_LEN, fmt, ap);
	va_end(ap);
	__atomic_store_n(&p->mode_status[mode], rc, __ATOMIC_RELEASE);
}

static const struct hp_mode_ops *const all_modes[HP_MODE_COUNT] = {
	[HP_MODE_MEMORY_USAGE_CALL] = &hp_mode_memory_usage_call,
	[HP_MODE_HEAP_SUMMARY_CALL] = &hp_mode_heap_summary_call,
	[HP_MODE_LAST_GC_FIELDS] = &hp_mode_last_gc_fields,
	[HP_MODE_JMM] = &hp_mode_jmm,
	[HP_MODE_JMX_NATIVE] = &hp_mode_jmx_native,
	[HP_MODE_EXPORTED_TOTALS] = &hp_mode_exported_totals,
	[HP_MODE_PERFDATA] = &hp_mode_perfdata,
};

/* Runs each mode's init; modes that said -EAGAIN (the heap or the VM was not
 * ready) are tried again on later calls. Not for GC callbacks: init may
 * allocate and make system calls. */
void hp_modes_init(struct hp_probe *p, bool retry_only)
{
	/* Set-up may run on any thread that calls in before the heap exists;
	 * one at a time. Never reached from a GC callback. A retry never
	 * waits: if another thread is setting up, this call goes without. */
	static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
	if (retry_only) {
		if (pthread_mutex_trylock(&init_lock))
			return;
	} else {
		pthread_mutex_lock(&init_lock);
	}
	for (int m = 0; m < HP_MODE_COUNT; m++) {
		if (retry_only && p->mode_status[m] != -EAGAIN)
			continue;
		if ((p->opts.flags & HP_OPEN_LAZY_JNI_MODES) && all_modes[m]->needs_jni && !p->jni_modes_wanted) {
			p->mode_ops[m] = all_modes[m];
			hp_mode_disable(p, m, -EAGAIN, "set up on first use (HP_OPEN_LAZY_JNI_MODES)");
			continue;
		}
		p->mode_ops[m] = all_modes[m];
		char reason[HP_REASON_LEN] = "";
		int rc = all_modes[m]->init(p, reason, sizeof(reason));
		if (rc)
			hp_mode_disable(p, m, rc, "%s", reason[0] ? reason : strerror(-rc));
		else
			hp_mode_disable(p, m, 0, "%s", "");
	}
	bool pending = false;
	for (int m = 0; m < HP_MODE_COUNT; m++)
		pending |= p->mode_status[m] == -EAGAIN &&
			   !((p->opts.flags & HP_OPEN_LAZY_JNI_MODES) && all_modes[m]->needs_jni && !p->jni_modes_wanted);
	__atomic_store_n(&p->modes_pending, pending, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&init_lock);
}

void hp_modes_fini(struct hp_probe *p)
{
	for (int m = 0; m < HP_MODE_COUNT; m++)
		if (p->mode_ops[m] && p->mode_ops[m]->fini)
			p->mode_ops[m]->fini(p);
}

int hp_mode_status(struct hp_probe *p, enum hp_mode mode, const char **reason)
{
	if (!p || mode < 0 || mode >= HP_MODE_COUNT)
		return -EINVAL;
	if (p->mode_status[mode] == -EAGAIN && !hp_in_gc_callback() && hp_jni_env(p->vm)) {
		if (all_modes[mode]->needs_jni)
			p->jni_modes_wanted = true;
		hp_modes_init(p, true);
	}
	if (reason)
		*reason = p->mode_reason[mode];
	return __atomic_load_n(&p->mode_status[mode], __ATOMIC_ACQUIRE);
}

uint64_t hp_now_coarse_ns(void)
{
	/* Same clock, tick resolution (1-4 ms), 9 ns instead of 57 ns on a
	 * kvm guest: the price of a current reading's timestamp should not
	 * dwarf the reading. */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t hp_now_ns(void)
{
	return (uint64_t)hp_mono_ns();
}

/* Reads one mode if it is enabled and legal here. */
int hp_mode_read(struct hp_probe *p, enum hp_mode m, JNIEnv *env, struct hp_mode_reading *r)
{
	const struct hp_mode_ops *ops = p->mode_ops[m];
	if (!ops || __atomic_load_n(&p->mode_status[m], __ATOMIC_ACQUIRE) != 0)
		return -ENOTSUP;
	if (ops->needs_jni && !env)
		return -EPERM;
	/* A source that returns nonsense is not trusted again; but one whose
	 * figures are separate loads or calls can be torn by a collection or a
	 * resize between them (Parallel's max_capacity() follows a shrinking
	 * capacity, a pre-GC used meets a post-shrink capacity). Read again:
	 * only nonsense three times running is the source's own. */
	int rc;
	for (int tries = 0;; tries++) {
		memset(r, 0, sizeof(*r));
		rc = ops->read(p, env, r);
		if (rc != 0 || hp_reading_sane(r) || tries == 2)
			break;
	}
	if (rc == 0 && !hp_reading_sane(r)) {
		hp_mode_disable(p, m, -EBADMSG,
				"insane reading used=%llu committed=%llu max=%llu: disabled",
				(unsigned long long)r->used, (unsigned long long)r->committed,
				(unsigned long long)r->max);
		return -EBADMSG;
	}
	return rc;
}

