/* Asking the collector for a marking (marks.h: hp_marks_request,
 * hp_marks_may_request): within the budget, on a helper thread the asker
 * can give up on, and what the request verified recorded with its cover
 * (hp_marks_requested_at, marks.c). */
#include "agent/marks.h"
#include "agent/options.h"
#include "vmstructs/clock.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A marking asked for on a helper thread (request_on_helper says why). */
struct hp_marks_helper {
	struct hp_probe *probe;
	JavaVM *vm;
	unsigned flags;
	char why[200];
	int rc;
	bool attached;
	_Atomic bool done;
	_Atomic int refs;       /* the helper's and the requester's: the last to let go frees it */
	_Atomic bool abandoned; /* the requester gave up before the helper made the call: it makes none */
	int64_t end_ns;         /* when the call returned (before done) */
};

static void helper_release(struct hp_marks_helper *w)
{
	if (atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) == 1)
		free(w);
}

static void *helper_main(void *arg)
{
	struct hp_marks_helper *w = arg;
	JNIEnv *env = NULL;
	JavaVMAttachArgs args = { .version = JNI_VERSION_1_6, .name = (char *)"heapprobe marking request" };
	if ((*w->vm)->AttachCurrentThreadAsDaemon(w->vm, (void **)&env, &args) == JNI_OK && env) {
		w->attached = true;
		w->rc = atomic_load(&w->abandoned) ? -ECANCELED
						   : hp_request_marking(w->probe, w->flags, w->why, sizeof(w->why));
		(*w->vm)->DetachCurrentThread(w->vm);
	}
	w->end_ns = hp_mono_ns();
	atomic_store_explicit(&w->done, true, memory_order_release);
	helper_release(w);
	return NULL;
}

/* A request that timed out: whether its helper is still in the call (it
 * is let go once it returned, and the time it took is charged to
 * mark_budget= as a completed request's is). Dump lock held. */
static bool still_stuck(struct hp_marks *m)
{
	if (!m->stuck)
		return false;
	if (!atomic_load_explicit(&m->stuck->done, memory_order_acquire))
		return true;
	if (m->stuck->end_ns - m->stuck_ns > (int64_t)m->last_ns) {
		m->last_ns = (uint64_t)(m->stuck->end_ns - m->stuck_ns);
		m->last_end_ns = (uint64_t)m->stuck->end_ns;
	}
	helper_release(m->stuck);
	m->stuck = NULL;
	atomic_store(&m->z_requesting, false);
	return false;
}

int64_t hp_marks_time_limit_ns(const struct hp_marks *m)
{
	return m->timeout_ns > 0 ? m->timeout_ns : HP_MARK_TIMEOUT_DEFAULT * 1000000000LL;
}

bool hp_marks_no_concurrent(struct hp_probe *probe)
{
	struct hp_gc_info g = { .sz = sizeof(g) };
	return hp_gc_info(probe, &g) == 0 && (g.kind == HP_GC_SERIAL || g.kind == HP_GC_PARALLEL);
}

static void stuck_text(struct hp_marks *m)
{
	snprintf(m->last_request, sizeof(m->last_request),
		 "not requested: the request made %.0f s ago has not returned (it timed out, mark_timeout=)",
		 (double)(hp_mono_ns() - m->stuck_ns) / 1e9);
}

bool hp_marks_may_request(struct hp_marks *m)
{
	/* A request that timed out and has not returned: none now; one that
	 * returned since is charged in full first (still_stuck). */
	if (still_stuck(m)) {
		stuck_text(m);
		return false;
	}
	if (!m->requests_ok && !m->last_end_ns)
		return true;    /* none made, none charged (a request that timed out is) */
	uint64_t since = (uint64_t)hp_mono_ns() - m->last_end_ns;
	double budget = m->budget > 0 ? m->budget : HP_MARK_BUDGET_DEFAULT;
	if ((double)since * budget >= (double)m->last_ns)
		return true;
	snprintf(m->last_request, sizeof(m->last_request),
		 "skipped for this periodic profile: the last marking took %.0f ms, %.1f s ago (at most %.3g%% of "
		 "the time in requested markings, mark_budget=)", (double)m->last_ns / 1e6, (double)since / 1e9,
		 100 * budget);
	return false;
}

/* Why a request is made by a helper thread: the requester can give up on
 * it (a collector that takes minutes, or never answers, must not hold the
 * profile, the dump lock, or the JVM's exit: the shutdown hook asks too),
 * and on G1 it sweeps while the marking runs.
 *
 * The sweeps: a G1 sample the marking covers and a young pause clears
 * after Remark (it died after the cycle began) is judged dead at the start
 * unless a sweep saw it still referenced after Remark (judge.c). The
 * requester holds the dump lock while System.gc() runs, so no other sweep
 * can look during the cycle; where a young pause came between Remark and
 * the sweep after the request, the cache's young samples that died then
 * were judged dead at the start: 169 of 257 at ages below 2,500 samples in
 * one run, where ~13% were dead, and the view between markings read 30%
 * low until the next one (G1 on 25 under load, `heapprobe top`). The
 * requester, still holding the lock, sweeps at each pause meanwhile. */
static int request_on_helper(struct hp_marks *m, struct hp_probe *probe, unsigned flags, char *why, size_t len,
			     const struct hp_marks_watch *watch, bool tick)
{
	struct hp_marks_helper *w = calloc(1, sizeof(*w));
	pthread_t t;
	if (!w)
		return hp_request_marking(probe, flags, why, len);
	*w = (struct hp_marks_helper){ .probe = probe, .vm = watch->vm, .flags = flags };
	atomic_init(&w->refs, 2);
	if (pthread_create(&t, NULL, helper_main, w) != 0) {
		free(w);
		return hp_request_marking(probe, flags, why, len);
	}
	pthread_detach(t);
	int64_t t0 = hp_mono_ns(), limit = hp_marks_time_limit_ns(m);
	if (m->deadline_ns > 0)         /* one time limit for all of a profile's requests */
		limit = m->deadline_ns - t0 < limit ? (m->deadline_ns - t0 > 0 ? m->deadline_ns - t0 : 0) : limit;
	while (!atomic_load_explicit(&w->done, memory_order_acquire)) {
		struct timespec ts = { 0, 2 * 1000000 };
		nanosleep(&ts, NULL);
		if (atomic_load_explicit(&w->done, memory_order_acquire))
			break;
		if (tick && watch->tick)
			watch->tick(watch->ctx);
		int64_t now = hp_mono_ns();
		/* (Done during the tick, a sweep of a large table: not given up.) */
		if (now - t0 >= limit && !atomic_load_explicit(&w->done, memory_order_acquire)) {
			atomic_store(&w->abandoned, true);
			m->stuck = w;   /* the requester's reference, let go once it returns */
			m->stuck_ns = t0;
			m->requests_timed_out++;
			/* Charged to mark_budget= as far as it went (still_stuck
			 * charges all of it once it returns): the next request
			 * after it waits as after a completed one. */
			m->last_ns = (uint64_t)(now - t0);
			m->last_end_ns = (uint64_t)now;
			snprintf(why, len, "timed out: no marking within %.1f s (mark_timeout=); the request still "
				 "runs, nothing is asked for until it returns", (double)limit / 1e9);
			return -ETIME;
		}
	}
	bool attached = w->attached;
	int rc = w->rc;
	if (attached)
		snprintf(why, len, "%s", w->why);
	helper_release(w);
	return attached ? rc : hp_request_marking(probe, flags, why, len);
}

int hp_marks_request(struct hp_marks *m, struct hp_probe *probe, unsigned flags, const _Atomic uint64_t *pauses,
		     const struct hp_marks_watch *watch)
{
	/* Always a new marking, even when the last one began after every
	 * sample: objects may have died since it began, and a profile asked
	 * for now must not count them (a marking counts for a profile only if
	 * it began after the profile was asked for). */
	if (still_stuck(m)) {
		stuck_text(m);
		return -EBUSY;
	}
	uint32_t at_request = (uint32_t)atomic_load(pauses);
	uint64_t seen_before = atomic_load(&m->seen.n);
	char why[200] = "";
	hp_marks_arm_explicit(m);
	int64_t request_ns = hp_mono_ns();
	uint64_t t0 = (uint64_t)request_ns;
	atomic_store(&m->z_requesting, true);
	/* Serial and Parallel with no full collection allowed: refused at
	 * once (no concurrent marking to ask for), no helper needed; as is
	 * one allowed unless -XX:+DisableExplicitGC once that was refused. */
	bool no_concurrent = hp_marks_no_concurrent(probe);
	bool refused = no_concurrent && !(flags & HP_MARK_ALLOW_FULL) &&
		       (!(flags & HP_MARK_FULL_UNLESS_DISABLED) || m->full_disabled);
	int rc = watch && watch->vm && !refused ? request_on_helper(m, probe, flags, why, sizeof(why), watch, m->g1_mode)
						: hp_request_marking(probe, flags, why, sizeof(why));
	uint64_t dt = (uint64_t)hp_mono_ns() - t0;
	m->requests++;
	if (rc) {
		/* (-EPERM on Serial and Parallel: -XX:+DisableExplicitGC, marking.c) */
		if (rc == -EPERM && no_concurrent && (flags & HP_MARK_FULL_UNLESS_DISABLED) && strstr(why, "DisableExplicitGC"))
			m->full_disabled = true;
		/* Timed out, the request still runs: its major is still ours
		 * (promote-all, nothing to learn a cover from: marks.h z_back)
		 * until still_stuck sees it return. */
		if (rc != -ETIME)
			atomic_store(&m->z_requesting, false);
		atomic_store(&m->explicit_armed, false);
		snprintf(m->last_request, sizeof(m->last_request), "%s%.180s", rc == -ETIME ? "" : "not requested: ",
			 why);
		return rc;
	}
	m->requests_ok++;
	m->last_ns = dt;
	m->last_end_ns = (uint64_t)hp_mono_ns();
	m->request_ns_total += dt;
	if (dt > m->request_ns_max)
		m->request_ns_max = dt;
	hp_marks_requested_at(m, at_request, seen_before, (uint32_t)atomic_load(pauses), request_ns);
	atomic_store(&m->z_requesting, false);
	/* Its live figure, read now: the heap's is rewritten by the next
	 * cycle's mark end, and a cycle of the collector's own may come
	 * before the profile is written (estimate.c, marking_figure). */
	struct hp_marking mk = { .sz = sizeof(mk) };
	bool have = hp_marking(probe, &mk) == 0 && mk.live;
	m->request_live = have ? mk.live : 0;
	m->request_live_source = have ? mk.live_source : NULL;
	snprintf(m->last_request, sizeof(m->last_request), "%.120s requested before this profile (%.0f ms)", why,
		 (double)dt / 1e6);
	return 0;
}
