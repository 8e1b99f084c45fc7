/* The sampler's life: start and stop, the agent thread, profiles asked
 * for (dump, periodic, exit) and the marking asked for before them, and
 * at exit through a shutdown hook. The other rooms (prof.h lists them):
 * the sample path, the walker's set-up, the markings' judgments, the live
 * view's estimate and its statistics (estimate.c), the profile's writing,
 * the command's answers. */
#include "agent/prof.h"
#include "agent/sampler.h"

struct profiler prof = { .dump_lock = PTHREAD_MUTEX_INITIALIZER };

void logf_(const char *fmt, ...)
{
	FILE *out = hp_log_open(&prof.o);
	va_list ap;
	va_start(ap, fmt);
	fputs("heapprobe: ", out);
	vfprintf(out, fmt, ap);
	fputc('\n', out);
	va_end(ap);
	hp_log_close(out);
}

/* The pause count a sample records (marks.h). */
uint32_t pauses_now(void)
{
	return (uint32_t)atomic_load_explicit(&prof.gc_events, memory_order_acquire);
}

/* P(sample | object of `size` bytes) at the profiler's interval (weights.h). */
double sample_probability(uint64_t size)
{
	return hp_sample_probability(size, sampling_interval());
}

/* One line on the interval the sampler keeps (samplerate.h): the JVM's
 * ratio, and that each thread's own weighs its samples. */
void describe_rate(char *out, size_t cap)
{
	uint64_t bytes = atomic_load(&prof.rate.bytes), gaps = atomic_load(&prof.rate.gaps);
	uint64_t refused = atomic_load(&prof.rate.refused), est = atomic_load(&prof.rate.estimated);
	double m;
	double f = hp_sample_rate_factor(bytes, est, gaps, &m);
	if (!atomic_load(&prof.rate_ready))
		snprintf(out, cap, "sampler's interval: %s", prof.rate_reason[0] ? prof.rate_reason : "not measured yet");
	else if (gaps < HP_RATE_MIN_GAPS)
		snprintf(out, cap, "sampler's interval: not known yet for the whole JVM (%llu gaps between a thread's "
			 "samples of the %d needed); each thread's samples weighed at its own measured ratio",
			 (unsigned long long)gaps, HP_RATE_MIN_GAPS);
	else
		snprintf(out, cap, "sampler's interval: the bytes allocated between a thread's samples %.4f of what the "
			 "samples estimate, over %llu gaps (sd %.2f%%, %llu readings refused): %s; each thread's samples "
			 "weighed at its own ratio (its last %.0f gaps)", m, (unsigned long long)gaps,
			 100 / sqrt((double)gaps), (unsigned long long)refused,
			 f == 1 ? "within its sd" : "off it", HP_RATE_WINDOW);
	size_t at = strlen(out);
	if (prof.after_gc_aside && atomic_load(&prof.rate_ready) && at < cap)
		snprintf(out + at, cap - at, "; %llu samples set aside, the first object of a thread's first TLAB after "
			 "a collection, which this JVM's sampler takes ahead of its turn",
			 (unsigned long long)atomic_load(&prof.after_gc_set_aside));
	uint64_t ended = atomic_load(&prof.rate.ended);
	at = strlen(out);
	if (ended && atomic_load(&prof.rate_ready) && at < cap)
		snprintf(out + at, cap - at, "; %llu threads ended, the %.1f MiB they allocated after their last "
			 "sample (their own gaps' share) credited to it", (unsigned long long)ended,
			 (double)atomic_load(&prof.rate.credited) / 1048576.0);
}

/* The interval asked: each sample's weight takes its thread's factor on
 * it at the sample (samplerate.h; live entries in `thin`). */
double sampling_interval(void)
{
	return (double)prof.o.interval;
}

/* A tracked sample's Horvitz-Thompson bytes and variance term (weights.h). */
double entry_bytes(const struct hp_live_entry *e, double *var)
{
	return hp_ht_bytes(e->size, e->thin, sampling_interval(), var);
}

/* Markings the rings have counted (the count hp_marks_age is relative to). */
uint64_t markings_counted(void)
{
	return atomic_load(&prof.marks.seen.n) + atomic_load(&prof.marks.requested.n);
}

/* The heap figure beside the profile (JFR's jdk.GCHeapSummary, the text
 * report's and the HTML page's heading). */
bool heap_figure(struct hp_prof_heap *out, int64_t now_ns)
{
	struct hp_heap_usage u = { .sz = sizeof(u) };
	struct hp_marking m = { .sz = sizeof(m) };
	if (hp_heap_usage(prof.probe, HP_USAGE_POST_GC, &u) != 0)
		return false;
	*out = (struct hp_prof_heap){ now_ns, u.used, u.committed, (uint32_t)u.gc_count, hp_usage_kind_name(u.kind),
				      hp_mode_name(u.mode), 0, "" };
	if (hp_marking(prof.probe, &m) == 0) {
		out->marked_live = m.live;
		out->marked_source = m.live_source ? m.live_source : "";
	}
	return true;
}

/* Asks for a marking (mark= policy) so that the profile about to be
 * written is verified as of now. Dump lock held. Never from VMDeath: the
 * collector's threads have stopped by then and a request would not return
 * (the exit profile relies on the shutdown hook below instead).
 *
 * The flags per mark= (options.h): full allows a full collection always;
 * auto (the default), on Serial and Parallel, which have no concurrent
 * marking, unless -XX:+DisableExplicitGC; concurrent only at exit.
 *
 * At exit (the shutdown hook), Serial and Parallel get one full
 * collection even with mark=concurrent, unless -XX:+DisableExplicitGC:
 * they have no concurrent marking, and without it every object that died
 * in the old generation since the last full GC (a cache whose threads
 * ended: 190 MiB of LoadService's) counts in the exit profile. The
 * program is done; its exit waits for one full pause (docs/RESULTS.md, under load). */
static void mark_before_profile(JNIEnv *jni, enum mark_for why)
{
	if (!prof.o.live || prof.o.mark == HP_MARK_OFF)
		return;
	bool at_exit = why == MARK_EXIT, periodic = why == MARK_PERIODIC || why == MARK_TOP || why == MARK_HISTORY;
	/* After the exit hook began, only its own marking: a request made
	 * after it (a periodic profile, a `heapprobe top` screen) could still
	 * be running when the JVM stops the collector's threads (before
	 * VMDeath), and System.gc() would never return: the JVM hung at exit
	 * with VMDeath waiting for the dump lock (LoadService on Shenandoah
	 * with period=10, a periodic profile that waited for an own cycle
	 * past the hook). Set by the hook before it takes the dump lock, read
	 * under it: a request already made holds the hook until it returns. */
	static const char exiting[] = "none: the JVM is exiting (the exit hook's marking was the last)";
	if (!at_exit && atomic_load(&prof.exiting)) {
		snprintf(prof.marks.last_request, sizeof(prof.marks.last_request), "%s", exiting);
		return;
	}
	bool auto_full = prof.o.mark == HP_MARK_AUTO && hp_marks_no_concurrent(prof.probe);
	unsigned flags = prof.o.mark == HP_MARK_FULL ? HP_MARK_ALLOW_FULL
			 : auto_full || at_exit      ? HP_MARK_FULL_UNLESS_DISABLED
						     : 0;
	markings_tick(jni);     /* a cycle of the collector's own that ended first is counted as its own */
	/* A `heapprobe top` screen (one after each collection) asks for
	 * nothing while the collector's own cycles come often (marks.h,
	 * hp_marks_own_lately: markings at most 2 s apart, the latest begun
	 * at most 2 s ago): its view is at most about that old, and each
	 * request added a cycle to the collector's own (on Shenandoah under
	 * load, 1-2 per 16 s of top within the budget,
	 * docs/load-top-cost-own-cycles.md). A screen does not wait, as a
	 * periodic profile does: it would hold the refresh for up to a gap.
	 * Not with mark=full. */
	int64_t gap, ago;
	if (why == MARK_TOP && prof.o.mark != HP_MARK_FULL &&
	    hp_marks_own_lately(&prof.marks, HP_OWN_GAP_MAX_NS, &gap, &ago) > 0) {
		snprintf(prof.marks.last_request, sizeof(prof.marks.last_request),
			 "none: markings came every %.0f ms lately, the latest began %.0f ms ago (the collector's own "
			 "cycles, seen by canaries); a screen asks when they stop", (double)gap / 1e6, (double)ago / 1e6);
		return;
	}
	/* A periodic profile first waits for the collector's own next cycle
	 * where canaries see them and they come often (marks.h,
	 * hp_marks_await_own): it began after the profile was asked for, as a
	 * requested one would, and costs nothing more. Not with mark=full:
	 * that asks for a full collection. */
	if (why == MARK_PERIODIC && prof.o.mark != HP_MARK_FULL) {
		int came = hp_marks_await_own(&prof.marks, jni, &prof.gc_events, &prof.exiting);
		if (came == -ENOTSUP)   /* generational ZGC: its own majors (marks.h) */
			came = hp_marks_await_z_major(&prof.marks, &prof.exiting, &prof.stopping);
		if (came > 0 || atomic_load(&prof.exiting)) {
			if (came <= 0)  /* the exit hook came while it waited (above) */
				snprintf(prof.marks.last_request, sizeof(prof.marks.last_request), "%s", exiting);
			markings_tick(jni);
			return;
		}
		/* None came: ask. A cycle already under way when the wait
		 * began may have ended meanwhile: counted first, as its own. */
		markings_tick(jni);
	}
	/* Periodic profiles keep the cost bounded; asked-for ones (dump,
	 * stop, exit) always get their marking. mark_budget= bounds the share
	 * of the time requested markings take, not one pause. Where a request
	 * is a stop-the-world full collection (Serial and Parallel; mark=full)
	 * its pause grows with the old generation (Serial 25 under the load
	 * bench: 66-509 ms where 11-21 took 32-152, docs/load-acceptance-53.md):
	 * once one took longer than mark_pause=, periodic requests stop for
	 * the rest of the run (a later one would be no shorter while the old
	 * generation stays as full), and the profile says so. Tested first:
	 * its skip lasts, the budget's does not. Only Serial and Parallel:
	 * on G1, ZGC and Shenandoah even mark=full makes a concurrent
	 * System.gc() (marking.c), whose wall time is no pause. */
	bool stw = hp_marks_no_concurrent(prof.probe) && flags != 0;
	uint64_t over = atomic_load_explicit(&prof.pause_over_ns, memory_order_relaxed);
	if (periodic && stw && prof.o.mark_pause && over) {
		snprintf(prof.marks.last_request, sizeof(prof.marks.last_request),
			 "skipped for this periodic profile: a requested full collection took %.0f ms, over "
			 "mark_pause=%u ms (none asked for periodically since; mark_pause=0 lifts the cap)",
			 (double)over / 1e6, prof.o.mark_pause);
		return;
	}
	if (periodic && !hp_marks_may_request(&prof.marks))
		return;
	uint64_t before = markings_counted();
	/* One time limit for this profile's requests (G1's two included). */
	int64_t limit_ns = hp_marks_time_limit_ns(&prof.marks);
	prof.marks.deadline_ns = hp_mono_ns() + limit_ns;
	/* On G1, sweeps while the marking runs (judge.c, sweep_while_asking). */
	struct hp_marks_watch watch = { prof.vm, sweep_while_asking, jni };
	sweep_ask_begin();
	prof.asked_by[why]++;
	int rc = hp_marks_request(&prof.marks, prof.probe, flags, &prof.gc_events, &watch);
	/* G1, for an asked-for profile: a second cycle. The first one's
	 * concurrent-start pause copies young objects that dead old ones
	 * still point to (their cards are roots to a young collection) into
	 * survivor regions, which that marking takes as live: a cache held by
	 * a thread that ended showed 110-127 MiB of its 190 after one cycle,
	 * nothing after two (docs/RESULTS.md, under load). The second marking knows the old
	 * referrers dead. */
	struct hp_gc_info g = { .sz = sizeof(g) };
	bool g1 = rc == 0 && !periodic && hp_gc_info(prof.probe, &g) == 0 && g.kind == HP_GC_G1;
	/* (Generational Shenandoah needs no second one: its System.gc() may
	 * return at the start of the global cycle it asked for, after a young
	 * one under way, and hp_request_marking waits for that cycle's end.) */
	/* (Not with less than half of mark_timeout= left: the first one
	 * counts, and the profile is not held for a second that may not end.) */
	if (g1 && prof.marks.deadline_ns - hp_mono_ns() < limit_ns / 2)
		snprintf(prof.marks.last_request + strlen(prof.marks.last_request),
			 sizeof(prof.marks.last_request) - strlen(prof.marks.last_request),
			 "; no second (under half of mark_timeout= left)");
	else if (g1) {
		char first[sizeof(prof.marks.last_request)];
		snprintf(first, sizeof(first), "%s", prof.marks.last_request);
		/* The first one counted whatever the second does. */
		int rc2 = hp_marks_request(&prof.marks, prof.probe, flags, &prof.gc_events, &watch);
		char second[sizeof(prof.marks.last_request)];
		snprintf(second, sizeof(second), "%s", prof.marks.last_request);
		if (rc2 == 0)
			snprintf(prof.marks.last_request, sizeof(prof.marks.last_request), "%.90s, then another (%s)", first,
				 "G1: the first keeps young objects dead old ones point to");
		else
			snprintf(prof.marks.last_request, sizeof(prof.marks.last_request), "%.90s, then another: %.80s",
				 first, second);
		if (rc2 == -ETIME)
			logf_("second marking request %s", second);
	}
	prof.marks.deadline_ns = 0;
	/* (A request that timed out took at least mark_timeout=: its
	 * last_ns is how long it went, request.c.) */
	if ((rc == 0 || rc == -ETIME) && stw && prof.o.mark_pause && !over &&
	    prof.marks.last_ns > (uint64_t)prof.o.mark_pause * 1000000u) {
		atomic_store_explicit(&prof.pause_over_ns, prof.marks.last_ns, memory_order_relaxed);
		logf_("a requested full collection took %.0f ms, over mark_pause=%u ms: periodic profiles ask for none "
		      "from now on", (double)prof.marks.last_ns / 1e6, prof.o.mark_pause);
	}
	if (rc == 0) {
		hp_marks_canary_rearm(&prof.marks, jni, &prof.gc_events);      /* counted: not again */
		if (markings_counted() > before)
			survival_catch_up();
	}
	if (rc == -ETIME)
		logf_("marking request %s", prof.marks.last_request);
	else if (rc < 0 && prof.marks.requests == 1)
		logf_("no marking before profiles: %s", prof.marks.last_request);
}

/* final: the last profile of this profiler (stop, exit), retried to a
 * fallback when its path fails. */
static int dump(JNIEnv *jni, const char *why, bool may_mark, bool periodic, bool final, const struct snap_req *req)
{
	pthread_mutex_lock(&prof.dump_lock);
	/* Checked under the lock: a stop frees the tables under it too. */
	int rc = -ESRCH;
	if (prof.sites.slots && !atomic_load(&prof.unloading)) {
		if (may_mark) {
			mark_before_profile(jni, !periodic ? MARK_ASKED : req && req->top ? MARK_TOP : MARK_PERIODIC);
			history_tick(jni, true);        /* the marking just made, in the history */
		}
		rc = write_snapshot(jni, why, periodic, final, req);
	}
	pthread_mutex_unlock(&prof.dump_lock);
	return rc;
}

int hp_profiler_dump(JNIEnv *jni, const char *why, const struct hp_agent_options *dest)
{
	struct snap_req req = { .dest = dest };
	return dump(jni, why, true, false, false, &req);
}

/* top=N: a marking is asked for as for a periodic profile, only while
 * requested markings stay under 1/50 of the wall clock (marks.h), so that
 * a view refreshed after every collection cannot keep the collector
 * busy with the markings it then waits for. */
int hp_profiler_top(JNIEnv *jni, FILE *out, unsigned n)
{
	struct snap_req req = { .top = out, .top_n = n };
	return dump(jni, "top", true, true, false, &req);
}

/* ---- exit marking ---------------------------------------------------------
 *
 * The profile at exit is written at VMDeath, after the collector's threads
 * have stopped, when no marking can be asked for. A shutdown hook runs
 * before that: an unstarted java.lang.Thread registered with
 * Runtime.addShutdownHook, whose ThreadStart event (on the hook's own
 * thread, JNI legal) asks for the marking. Its run() does nothing. */
static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	jobject hook = prof.exit_hook;
	if (!hook || !(*jni)->IsSameObject(jni, thread, hook) || !atomic_load(&prof.running))
		return;
	atomic_store(&prof.exiting, 1);
	pthread_mutex_lock(&prof.dump_lock);
	if (prof.sites.slots)
		mark_before_profile(jni, MARK_EXIT);
	pthread_mutex_unlock(&prof.dump_lock);
}

/* Runtime.getRuntime(), or NULL with no exception pending. Every JNI call
 * that can throw is checked before the next (-Xcheck:jni holds us to it). */
static jobject runtime(JNIEnv *jni, jclass *cls)
{
	jmethodID get = NULL;
	jobject rt = NULL;
	if ((*cls = (*jni)->FindClass(jni, "java/lang/Runtime")) != NULL &&
	    (get = (*jni)->GetStaticMethodID(jni, *cls, "getRuntime", "()Ljava/lang/Runtime;")) != NULL)
		rt = (*jni)->CallStaticObjectMethod(jni, *cls, get);
	if ((*jni)->ExceptionCheck(jni)) {
		(*jni)->ExceptionClear(jni);
		rt = NULL;
	}
	return rt;
}

static void add_exit_hook(JNIEnv *jni)
{
	if (!prof.o.live || prof.o.mark == HP_MARK_OFF || prof.exit_hook)
		return;
	jclass tcls = NULL, rcls = NULL;
	jmethodID init = NULL, add = NULL;
	jstring name = NULL;
	jobject t = NULL, rt = NULL, ref = NULL;
	if ((tcls = (*jni)->FindClass(jni, "java/lang/Thread")) == NULL ||
	    (init = (*jni)->GetMethodID(jni, tcls, "<init>", "(Ljava/lang/String;)V")) == NULL ||
	    (name = (*jni)->NewStringUTF(jni, "heapprobe-exit-marking")) == NULL ||
	    (t = (*jni)->NewObject(jni, tcls, init, name)) == NULL)
		goto fail;
	if ((rt = runtime(jni, &rcls)) == NULL ||
	    (add = (*jni)->GetMethodID(jni, rcls, "addShutdownHook", "(Ljava/lang/Thread;)V")) == NULL ||
	    (ref = (*jni)->NewGlobalRef(jni, t)) == NULL)
		goto fail;
	prof.exit_hook = ref;
	(*prof.jvmti)->SetEventNotificationMode(prof.jvmti, JVMTI_ENABLE, JVMTI_EVENT_THREAD_START, NULL);
	(*jni)->CallVoidMethod(jni, rt, add, t);
	if (!(*jni)->ExceptionCheck(jni))
		return;
	prof.exit_hook = NULL;
	(*prof.jvmti)->SetEventNotificationMode(prof.jvmti, JVMTI_DISABLE, JVMTI_EVENT_THREAD_START, NULL);
fail:
	(*jni)->ExceptionClear(jni);
	if (ref)
		(*jni)->DeleteGlobalRef(jni, ref);
	logf_("no shutdown hook: the profile at exit is verified only by the markings before it");
}

static void remove_exit_hook(JNIEnv *jni)
{
	jobject hook = prof.exit_hook;
	if (!hook || !jni)
		return;
	(*prof.jvmti)->SetEventNotificationMode(prof.jvmti, JVMTI_DISABLE, JVMTI_EVENT_THREAD_START, NULL);
	jclass rcls;
	jobject rt = runtime(jni, &rcls);
	jmethodID rm = rt ? (*jni)->GetMethodID(jni, rcls, "removeShutdownHook", "(Ljava/lang/Thread;)Z") : NULL;
	if (rm)
		(*jni)->CallBooleanMethod(jni, rt, rm, hook);
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);    /* IllegalStateException once shutdown has begun */
	prof.exit_hook = NULL;
	(*jni)->DeleteGlobalRef(jni, hook);
}

/* ---- agent thread --------------------------------------------------------- */

/* Where the collector's own cycles are not counted (marks.h,
 * own_uncounted: generational Shenandoah, generational ZGC without its
 * count of majors, counters the guard turned off), only requested
 * markings judge the samples, and
 * without period= none came before exit: the leak history had no
 * records and a 25 MiB leak under load went unnamed. The agent thread
 * then asks for a marking every HP_HISTORY_MARK_S seconds while samples
 * are being taken, under the same budget as periodic profiles (at most
 * mark_budget= of the wall clock in requested markings, 2%), and records
 * the history; mark=off turns it off with the other requests. */
#define HP_HISTORY_MARK_S 4

static void history_marking(JNIEnv *jni, uint64_t *samples_then)
{
	uint64_t samples = (uint64_t)hp_striped_sum(&prof.samples, memory_order_relaxed);
	if (prof.o.period || !prof.o.live || !prof.have_history || prof.o.mark == HP_MARK_OFF ||
	    samples == *samples_then)
		return;
	*samples_then = samples;
	/* Serial and Parallel ask for nothing here with mark=concurrent (no
	 * concurrent marking: every request would be refused; the guard
	 * turning their counters off leaves them the exit's full collection).
	 * With auto or full their full collections count as markings
	 * (own_uncounted false, below) unless that guard turned them off. */
	if (prof.o.mark == HP_MARK_CONCURRENT && hp_marks_no_concurrent(prof.probe))
		return;
	pthread_mutex_lock(&prof.dump_lock);    /* markings_tick sets what own_uncounted reads */
	if (prof.sites.slots && hp_marks_own_uncounted(&prof.marks) && hp_marks_may_request(&prof.marks)) {
		mark_before_profile(jni, MARK_HISTORY);
		history_tick(jni, true);
	}
	pthread_mutex_unlock(&prof.dump_lock);
}

static void JNICALL agent_thread(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
	atomic_store(&prof.thread_alive, 1);
	struct timespec next;
	clock_gettime(CLOCK_REALTIME, &next);
	time_t next_history = next.tv_sec + HP_HISTORY_MARK_S;
	next.tv_sec += prof.o.period ? prof.o.period : 3600;
	uint64_t samples_then = 0;
	int tries_left = 600;
	bool counters_said = false;
	while (!atomic_load(&prof.stopping)) {
		/* Until the class-unload counter shows up (the perfdata region
		 * opens after VM init on JDK 11), look ten times a second. */
		bool want_counter = !atomic_load(&prof.classes_unloaded) && tries_left > 0;
		struct timespec wait;
		clock_gettime(CLOCK_REALTIME, &wait);
		if (want_counter) {
			wait.tv_nsec += 100000000;
			if (wait.tv_nsec >= 1000000000) {
				wait.tv_sec++;
				wait.tv_nsec -= 1000000000;
			}
		} else {
			wait.tv_sec += 1;
		}
		if (wait.tv_sec > next.tv_sec)
			wait = next;
		sem_timedwait(&prof.wake, &wait);
		if (atomic_load(&prof.stopping))
			break;
		if (want_counter) {
			struct hp_heap_usage u = { .sz = sizeof(u) };
			hp_heap_usage(prof.probe, 0, &u);       /* retries modes waiting for the VM */
			hp_marking_locate(prof.probe);          /* G1's cycle counter is in perfdata */
			atomic_store(&prof.classes_unloaded, hp_perfdata_classes_unloaded(prof.probe));
			tries_left--;
		}
		if (!counters_said && hp_marks_counters_off(&prof.marks)) {
			char why[300];
			hp_marks_counters_text(&prof.marks, why, sizeof(why));
			logf_("marking counters %s", why);
			counters_said = true;
		}
		if (atomic_exchange(&prof.gc_pending, 0) && prof.o.live) {
			/* free dead samples' references promptly; record the history */
			pthread_mutex_lock(&prof.dump_lock);
			history_tick(jni, false);
			pthread_mutex_unlock(&prof.dump_lock);
		}
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		if (prof.o.period && now.tv_sec >= next.tv_sec) {
			dump(jni, "periodic profile", true, true, false, NULL);
			next.tv_sec = now.tv_sec + prof.o.period;
		}
		if (now.tv_sec >= next_history) {
			history_marking(jni, &samples_then);
			next_history = now.tv_sec + HP_HISTORY_MARK_S;
		}
	}
	atomic_store(&prof.thread_alive, 0);
}

static int start_thread(JNIEnv *jni)
{
	jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
	jmethodID init = cls ? (*jni)->GetMethodID(jni, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
	jstring name = init ? (*jni)->NewStringUTF(jni, "heapprobe") : NULL;
	jobject thread = name ? (*jni)->NewObject(jni, cls, init, name) : NULL;
	if (!thread) {
		(*jni)->ExceptionClear(jni);    /* no JNI call runs with it pending */
		return -ENOMEM;
	}
	jvmtiError e = (*prof.jvmti)->RunAgentThread(prof.jvmti, thread, agent_thread, NULL,
						      JVMTI_THREAD_NORM_PRIORITY);
	return e == JVMTI_ERROR_NONE ? 0 : -EIO;
}

/* The heap in use as sampling begins: never sampled, so kept out of the
 * scaling. After a late attach the last post-GC figure is the better
 * estimate (the current usage holds garbage). */
static void record_baseline(void)
{
	struct hp_heap_usage u = { .sz = sizeof(u) };
	if (hp_heap_usage(prof.probe, HP_USAGE_POST_GC, &u) == 0 && u.gc_count > 0)
		prof.baseline_bytes = u.used;
	else if (hp_heap_usage(prof.probe, 0, &u) == 0)
		prof.baseline_bytes = u.used;
	else
		prof.baseline_bytes = 0;
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	record_baseline();
	setup_walker(jvmti, jni);
	hp_probe_trim_symbols(prof.probe);      /* set-up's symbol lookups are done */
	add_exit_hook(jni);
	if (start_thread(jni))
		logf_("cannot start the agent thread: liveness is checked only when a profile is written");
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	if (!atomic_load(&prof.running))
		return;
	atomic_store(&prof.stopping, 1);
	sem_post(&prof.wake);
	for (int i = 0; i < 200 && atomic_load(&prof.thread_alive); i++)
		usleep(10000);
	dump(jni, "profile at exit", false, false, true, NULL);
	stop_upload();
	atomic_store(&prof.running, 0);
	hp_profiler_quiesce();
}

/* After the profile at exit, no other: a command that came in through
 * the attach listener meanwhile (`heapprobe top` asks after every
 * collection) waited for the dump lock behind it; it gets it now and finds
 * no profiler. Returns with no dump in flight, or after 2 s (the flag set
 * all the same: the JVM's exit is not held up by a request that waits for
 * a marking). */
void hp_profiler_quiesce(void)
{
	atomic_store(&prof.unloading, 1);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	if (pthread_mutex_timedlock(&prof.dump_lock, &until) == 0)
		pthread_mutex_unlock(&prof.dump_lock);
}

void hp_profiler_release_env(void)
{
	if (prof.jvmti && !atomic_load(&prof.running)) {
		(*prof.jvmti)->DisposeEnvironment(prof.jvmti);
		prof.jvmti = NULL;
	}
}

int hp_profiler_running(void)
{
	return atomic_load(&prof.running);
}

/* The tables a start sets up (hp_profiler_start), given back. Each part
 * is safe to free when it was never set up. */
static void free_tables(JNIEnv *jni)
{
	hp_live_free(&prof.live, jni);
	if (prof.have_history)
		hp_history_free(&prof.history);
	prof.have_history = false;
	if (prof.have_surv)
		hp_survival_free(&prof.surv);
	prof.have_surv = false;
	if (prof.have_cohort)
		hp_cohort_free(&prof.cohort);
	prof.have_cohort = prof.cohort_on = false;
	hp_sites_free(&prof.sites);
	prof.keep_samples = false;
	hp_samplelog_free(&prof.log);
}

/* A start that fails gives back what it set up so far: the tables and the
 * upload sender. */
static void undo_start(JNIEnv *jni)
{
	if (prof.upload) {
		hp_upload_stop(prof.upload, 0, NULL);
		prof.upload = NULL;
	}
	free_tables(jni);
}

int hp_profiler_start(JavaVM *vm, struct hp_probe *probe, const struct hp_agent_options *o, JNIEnv *jni,
		      int live_phase, char *err, size_t errlen)
{
	if (atomic_load(&prof.running)) {
		snprintf(err, errlen, "heapprobe: the profiler is already running");
		return -EALREADY;
	}
	if (atomic_load(&prof.thread_alive)) {
		snprintf(err, errlen, "heapprobe: the previous session's agent thread is still finishing; try again");
		return -EBUSY;
	}
	prof.vm = vm;
	prof.probe = probe;
	prof.o = *o;
	if (o->upload[0] && !o->period)
		prof.o.period = 10;     /* upload=: a profile every 10 s unless period= says otherwise */
	atomic_store(&prof.stopping, 0);
	for (int i = 0; i < HP_STRIPES; i++) {
		atomic_store(&prof.samples.s[i].v, 0);
		atomic_store(&prof.cache_hits.s[i].v, 0);
	}
	atomic_store(&prof.after_gc_set_aside, 0);
	atomic_store(&prof.walk_ready, 0);
	atomic_store(&prof.classes_unloaded, NULL);
	prof.walk_reason[0] = '\0';
	for (int i = 0; i <= HP_FW_RESULTS; i++)
		atomic_store(&prof.walk_failed[i], 0);
	atomic_store(&prof.decode_ready, 0);
	prof.decode_reason[0] = '\0';
	atomic_store(&prof.decoded, 0);
	atomic_store(&prof.decode_checked, 0);
	atomic_store(&prof.asked, 0);
	atomic_store(&prof.asked_invalid, 0);
	atomic_store(&prof.checks_overtaken, 0);
	for (int i = 0; i < HP_FD_RESULTS; i++)
		atomic_store(&prof.decode_failed[i], 0);
	for (int i = 0; i < HP_METHOD_RESULTS; i++)
		atomic_store(&prof.method_failed[i], 0);
	prof.start_realtime_ns = hp_real_ns();
	if (!prof.jvmti && (*vm)->GetEnv(vm, (void **)&prof.jvmti, JVMTI_VERSION_11) != JNI_OK) {
		snprintf(err, errlen, "heapprobe: JVMTI 11 (SampledObjectAlloc) is not available in this JVM");
		prof.jvmti = NULL;
		return -ENOTSUP;
	}
	jvmtiEnv *j = prof.jvmti;
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_sampled_object_alloc_events = 1;
	caps.can_generate_garbage_collection_events = 1;
	caps.can_tag_objects = 1;
	if ((*j)->AddCapabilities(j, &caps) != JVMTI_ERROR_NONE) {
		/* can_generate_sampled_object_alloc_events is held by one
		 * environment at a time: if it is no longer potential, another
		 * agent has it (a second copy of heapprobe, another heap
		 * profiler). */
		jvmtiCapabilities pot;
		memset(&pot, 0, sizeof(pot));
		if ((*j)->GetPotentialCapabilities(j, &pot) == JVMTI_ERROR_NONE && !pot.can_generate_sampled_object_alloc_events) {
			snprintf(err, errlen, "heapprobe: another JVMTI agent in this JVM holds can_generate_sampled_object_alloc_events "
				 "(a second copy of heapprobe, or another heap profiler): only one may sample allocations; "
				 "this heapprobe does not profile");
			return -EBUSY;
		}
		snprintf(err, errlen, "heapprobe: JVMTI refused SampledObjectAlloc/GC/tagging capabilities");
		return -ENOTSUP;
	}
	memset(&caps, 0, sizeof(caps));
	caps.can_get_line_numbers = 1;
	caps.can_get_source_file_name = 1;
	prof.have_lines = (*j)->AddCapabilities(j, &caps) == JVMTI_ERROR_NONE;

	prof.keep_samples = (o->formats & (1u << HP_FORMAT_JFR)) != 0;
	hp_sample_rate_reset(&prof.rate, o->interval);
	int rc = hp_sites_init(&prof.sites, MAX_SITES);
	if (!rc && o->live)
		rc = hp_live_init(&prof.live, o->max_live);
	if (!rc && o->live) {
		rc = hp_history_init(&prof.history, prof.sites.mask + 1);
		prof.have_history = rc == 0;
	}
	if (!rc && o->live) {
		rc = hp_survival_init(&prof.surv, prof.sites.mask + 1);
		prof.have_surv = rc == 0;
		prof.surv.judged = cohort_ring_judged;  /* judge.c: the rings' judgments to the cohort */
		prof.surv.judged_ctx = NULL;
		prof.surv_markings = 0;
		memset(prof.mark_start_real, 0, sizeof(prof.mark_start_real));
		prof.canary_tried = false;
		hp_alloc_clock_reset(&prof.clock);
	}
	if (!rc && o->live) {
		rc = hp_cohort_init(&prof.cohort, prof.sites.mask + 1);
		prof.have_cohort = rc == 0;
		prof.cohort_on = false;         /* judge.c, markings_tick: by the collector */
		prof.cohort_markings = 0;
	}
	if (!rc)
		rc = hp_samplelog_init(&prof.log, prof.keep_samples);
	if (rc) {
		snprintf(err, errlen, "heapprobe: out of memory for the site and live tables");
		undo_start(jni);
		return rc;
	}
	if (o->upload[0]) {
		/* Before anything is enabled: a bad URL fails the start with
		 * nothing to undo but the tables. */
		rc = hp_upload_start(&prof.upload, o->upload, o->app, o->labels, o->upload_queue, err, errlen);
		if (rc) {
			undo_start(jni);
			return rc;
		}
		prof.up_from_s = prof.start_realtime_ns / 1000000000;
	}
	sem_init(&prof.wake, 0, 0);

	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.SampledObjectAlloc = on_sampled_alloc;
	cb.GarbageCollectionStart = on_gc_start;
	cb.GarbageCollectionFinish = on_gc_finish;
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.ThreadStart = on_thread_start;
	cb.ThreadEnd = on_thread_end;
	cb.ClassPrepare = on_class_prepare;
	(*j)->SetEventCallbacks(j, &cb, sizeof(cb));
	if ((*j)->SetHeapSamplingInterval(j, (jint)o->interval) != JVMTI_ERROR_NONE) {
		snprintf(err, errlen, "heapprobe: SetHeapSamplingInterval(%llu) refused",
			 (unsigned long long)o->interval);
		undo_start(jni);
		sem_destroy(&prof.wake);
		return -EINVAL;
	}
	atomic_store(&prof.running, 1);
	hp_marking_locate(probe);
	hp_marks_reset(&prof.marks, probe, pauses_now());
	memset(prof.asked_by, 0, sizeof(prof.asked_by));
	atomic_store_explicit(&prof.pause_over_ns, 0, memory_order_relaxed);
	prof.marks.budget = o->mark_budget;
	prof.marks.timeout_ns = (int64_t)o->mark_timeout * 1000000000LL;
	(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_START, NULL);
	(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
	(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
	if (live_phase) {
		record_baseline();
		setup_walker(j, jni);
		hp_probe_trim_symbols(prof.probe);
		add_exit_hook(jni);
		if (start_thread(jni))
			logf_("cannot start the agent thread");
	} else {
		(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
	}
	(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_THREAD_END, NULL);     /* samplerate.h: a thread's last stretch */
	(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	return 0;
}

int hp_profiler_stop(JNIEnv *jni, const struct hp_agent_options *dest, bool discard)
{
	if (!atomic_load(&prof.running))
		return -ESRCH;
	jvmtiEnv *j = prof.jvmti;
	(*j)->SetEventNotificationMode(j, JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	(*j)->SetEventNotificationMode(j, JVMTI_DISABLE, JVMTI_EVENT_THREAD_END, NULL);
	(*j)->SetEventNotificationMode(j, JVMTI_DISABLE, JVMTI_EVENT_CLASS_PREPARE, NULL);
	atomic_store(&prof.running, 0);
	/* Callbacks already inside must finish before the tables go. They
	 * always do (one may wait out a safepoint), so wait as long as it
	 * takes rather than free memory under a running thread. */
	while (hp_striped_sum(&prof.in_callbacks, memory_order_seq_cst))
		usleep(1000);
	atomic_store(&prof.stopping, 1);
	sem_post(&prof.wake);
	for (int i = 0; i < 500 && atomic_load(&prof.thread_alive); i++)
		usleep(10000);
	struct snap_req req = { .dest = dest };
	int rc = discard ? 0 : dump(jni, "profile at stop", true, false, true, &req);
	stop_upload();
	remove_exit_hook(jni);
	(*j)->SetEventNotificationMode(j, JVMTI_DISABLE, JVMTI_EVENT_GARBAGE_COLLECTION_START, NULL);
	(*j)->SetEventNotificationMode(j, JVMTI_DISABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
	pthread_mutex_lock(&prof.dump_lock);
	hp_marks_canary_free(&prof.marks, jni);
	prof.canary_tried = false;
	atomic_store(&prof.walk_ready, 0);
	hp_stackcache_free(&prof.stack_cache, jni);
	if (atomic_exchange(&prof.decode_ready, 0))
		hp_framedecode_free(&prof.decode);
	free_tables(jni);
	pthread_mutex_unlock(&prof.dump_lock);
	if (!atomic_load(&prof.thread_alive)) {
		sem_destroy(&prof.wake);
		/* Class ids live in this env's object tags: a new session gets a
		 * new env, so no stale tag can name a class of the old table. */
		(*j)->DisposeEnvironment(j);
		prof.jvmti = NULL;
	}
	return rc;
}

