/* The heapprobe command's answers: the top sites (top=N) and status. */
#include "agent/prof.h"
#include "agent/sampler.h"

static int by_view_desc(const void *a, const void *b)
{
	const struct hp_prof_sample *x = *(const struct hp_prof_sample *const *)a;
	const struct hp_prof_sample *y = *(const struct hp_prof_sample *const *)b;
	int64_t vx = x->inuse_bytes + x->recent_bytes, vy = y->inuse_bytes + y->recent_bytes;
	return vx < vy ? 1 : vx > vy ? -1 : 0;
}

/* Tab-separated lines, one record per line, the first field its kind, so
 * that the command (src/cli/top.c) lays them out for its terminal and a
 * script can read them:
 *   heap  <post-GC bytes> <what it is> <source> <collections>
 *   view  <inuse bytes> <95% lo> <95% hi> <recent bytes> <samples> <markings> <estimate>
 *   suspect <rank> <growth bytes/min> <z> <z second half> <live bytes> <class> <leaf frame> <"replacing" or "">
 *   site  <inuse bytes> <lo> <hi> <inuse objects> <recent bytes> <alloc bytes> <class> <frames leaf first, ';'>
 * Leak suspects (history.c) most growth first, then sites in order of
 * inuse + recent bytes, at most 16 frames each. Tabs and
 * newlines cannot occur in JVM names, so fields need no quoting. */
void write_top(FILE *out, unsigned n, const struct hp_profile *p, const struct snap_ctx *c, double scale,
		      const char *estimate)
{
	struct hp_heap_usage u = { .sz = sizeof(u) };
	struct hp_gc_info g = { .sz = sizeof(g) };
	bool zgen = hp_gc_info(prof.probe, &g) == 0 && g.kind == HP_GC_Z && g.generational == 1;
	if (hp_heap_usage(prof.probe, HP_USAGE_POST_GC, &u) == 0 && u.live)
		fprintf(out, "heap\t%llu\t%s\t%s\t%llu\n", (unsigned long long)u.live, hp_usage_kind_name(u.live_kind),
			u.live_kind != HP_USAGE_MARKED_LIVE ? hp_mode_name(u.live_mode) :
			zgen ? "the old generation's last marking and the young one's" : "marking",
			(unsigned long long)u.live_gc_count);
	else
		fprintf(out, "heap\t0\tnone\tno collection yet\t0\n");
	double half = hp_ht_half95(c->var) * scale, bytes = c->bytes * scale;
	/* The estimate text without tabs (it has none; newlines neither).
	 * Markings: those the agent counted since sampling began (the ones
	 * that judge its samples), not the collector's counters' reading. */
	fprintf(out, "view\t%.0f\t%.0f\t%.0f\t%.0f\t%llu\t%llu\t%s\n", bytes, fmax(0.0, bytes - half), bytes + half,
		c->recent_bytes, (unsigned long long)hp_striped_sum(&prof.samples, memory_order_relaxed),
		(unsigned long long)markings_counted(), estimate);
	for (size_t i = 0; p->history && i < p->history->nsuspects; i++) {
		const struct hp_prof_suspect *x = &p->history->suspects[i];
		const struct hp_prof_sample *smp = &p->samples[x->sample];
		const char *leaf = smp->nframes ? p->frames[hp_prof_frame(p, smp, 0)].function : NULL;
		if (!leaf)
			leaf = "?";
		fprintf(out, "suspect\t%zu\t%.0f\t%.1f\t%.1f\t%.0f\t%s\t%s\t%s\n", i + 1, x->per_min, x->z, x->z_recent,
			x->live, smp->class_name ? smp->class_name : "", leaf, x->may_be_replacement ? "replacing" : "");
	}
	const struct hp_prof_sample **order = malloc(sizeof(*order) * (p->nsamples + 1));
	if (!order) {
		fprintf(out, "error\tout of memory\n");
		return;
	}
	for (size_t i = 0; i < p->nsamples; i++)
		order[i] = &p->samples[i];
	qsort(order, p->nsamples, sizeof(*order), by_view_desc);
	for (size_t i = 0; i < p->nsamples && i < n; i++) {
		const struct hp_prof_sample *smp = order[i];
		if (smp->inuse_bytes + smp->recent_bytes <= 0)
			break;
		fprintf(out, "site\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%s\t", (long long)smp->inuse_bytes,
			(long long)smp->inuse_bytes_lo, (long long)smp->inuse_bytes_hi, (long long)smp->inuse_objects,
			(long long)smp->recent_bytes, (long long)smp->alloc_bytes, (smp->class_name ? smp->class_name : ""));
		for (size_t k = 0; k < smp->nframes && k < 16; k++) {
			const char *fn = p->frames[hp_prof_frame(p, smp, k)].function;
			fprintf(out, "%s%s", k ? ";" : "", fn ? fn : "?");
		}
		fputc('\n', out);
	}
	free(order);
}

static void fmt_time(int64_t ns, char *buf, size_t cap)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm);
}

void hp_profiler_status(FILE *out)
{
	int64_t now_ns = hp_real_ns();
	fprintf(out, "pid: %d\n", (int)getpid());
	if (!atomic_load(&prof.running)) {
		fprintf(out, "profiler: not running\n");
		return;
	}
	char when[64];
	fmt_time(prof.start_realtime_ns, when, sizeof(when));
	fprintf(out, "profiler: running since %s (%.0f s)\n", when, (now_ns - prof.start_realtime_ns) / 1e9);
	static const char *const marks[] = { "concurrent", "full", "off", "auto" };
	static const char *const stacks[] = { "cache", "verify", "jvmti" };
	fprintf(out, "interval: %llu bytes\n", (unsigned long long)prof.o.interval);
	char rate[720];
	describe_rate(rate, sizeof(rate));
	fprintf(out, "%s\n", rate);
	/* What mark=auto asks this collector for (options.h). */
	bool no_concurrent = prof.o.mark == HP_MARK_AUTO && hp_marks_no_concurrent(prof.probe);
	uint64_t over = atomic_load_explicit(&prof.pause_over_ns, memory_order_relaxed);
	const char *asks = prof.o.mark != HP_MARK_AUTO ? ""
			   : !no_concurrent             ? ": a concurrent marking before each profile"
			   : prof.marks.full_disabled   ? ": no full collection (-XX:+DisableExplicitGC)"
			   : over                       ? ": a full collection before asked-for profiles only"
							: ": a full collection before each profile";
	char cap[160] = "";
	if (over)
		snprintf(cap, sizeof(cap), "; periodic full collections stopped: one took %.0f ms, over mark_pause=%u ms",
			 (double)over / 1e6, prof.o.mark_pause);
	else if (prof.o.mark_pause)
		snprintf(cap, sizeof(cap), "; mark_pause=%u ms", prof.o.mark_pause);
	fprintf(out, "live: %s (mark=%s%s%s, min_age=%u, max_live=%u)\n", prof.o.live ? "on" : "off", marks[prof.o.mark],
		asks, cap, prof.o.min_age, prof.o.max_live);
	fprintf(out, "stacks: %s, depth %u\n", stacks[prof.o.stacks], prof.o.depth);
	fprintf(out, "samples: %llu\n", (unsigned long long)hp_striped_sum(&prof.samples, memory_order_relaxed));
	fprintf(out, "sites: %u\n", atomic_load(&prof.sites.count));
	fprintf(out, "live samples tracked: %llu\n", prof.o.live ? (unsigned long long)hp_live_count(&prof.live) : 0ull);
	if (prof.o.live)
		fprintf(out, "samples found dead awaiting a marking: %u; thinned out of full rings: %llu awaiting, "
			"%llu verified then found dead\n", prof.surv.pending_n,
			(unsigned long long)prof.surv.pending_thinned, (unsigned long long)prof.surv.gone_thinned);
	if (prof.cohort_on)
		fprintf(out, "sites whose young samples died together (a drop, counted dead until a marking): %llu found "
			"(%llu of them by a marking's judgments), %u standing; sites whose samples born since their "
			"last drop count alive (the markings agree): %u\n", (unsigned long long)prof.cohort.drops,
			(unsigned long long)prof.cohort.drops_marked, prof.cohort.nstanding,
			hp_cohort_growing_sites(&prof.cohort));
	else if (prof.o.live)
		fprintf(out, "sites whose young samples died together: not looked for (young collections that are not "
			"pauses, or no collection yet)\n");
	struct hp_marking mk = { .sz = sizeof(mk) };
	if (hp_marking(prof.probe, &mk) == 0)
		fprintf(out, "markings: %llu counted (the collector's counters read %llu; source: %s); requested by us: "
			"%llu (%llu timed out: no marking within mark_timeout=%u s)\n", (unsigned long long)markings_counted(),
			(unsigned long long)mk.count, mk.source ? mk.source : "?", (unsigned long long)prof.marks.requests,
			(unsigned long long)prof.marks.requests_timed_out, prof.o.mark_timeout);
	fprintf(out, "markings asked for by: profiles asked for %llu, periodic profiles %llu, heapprobe top %llu, "
		"the history %llu, the exit %llu\n", (unsigned long long)prof.asked_by[MARK_ASKED],
		(unsigned long long)prof.asked_by[MARK_PERIODIC], (unsigned long long)prof.asked_by[MARK_TOP],
		(unsigned long long)prof.asked_by[MARK_HISTORY], (unsigned long long)prof.asked_by[MARK_EXIT]);
	char guard[300];
	hp_marks_counters_text(&prof.marks, guard, sizeof(guard));
	fprintf(out, "marking counters: %s\n", guard);
	fprintf(out, "collector's own cycles: %s (%llu seen)\n",
		prof.marks.canary_state[0] ? prof.marks.canary_state : "not looked at yet (after the first collection)",
		(unsigned long long)prof.marks.canary_markings);
	if (__atomic_load_n(&prof.marks.z_own, __ATOMIC_ACQUIRE)) {
		char z[400];
		hp_marks_z_end_text(&prof.marks, z, sizeof(z));
		fprintf(out, "generational ZGC's own majors: %s\n", z);
	}
	if (__atomic_load_n(&prof.marks.sh_on, __ATOMIC_ACQUIRE)) {
		char sh[300];
		hp_marks_sh_text(&prof.marks, sh, sizeof(sh));
		fprintf(out, "generational Shenandoah's cycles: %s\n", sh);
	}
	if (prof.marks.own_waits)
		fprintf(out, "periodic profiles that waited for the collector's own cycle instead of asking: %llu of %llu "
			"(%.0f ms waited in all)\n", (unsigned long long)prof.marks.own_waits_ok,
			(unsigned long long)prof.marks.own_waits, (double)prof.marks.own_wait_ns_total / 1e6);
	fprintf(out, "collections seen: %llu\n", (unsigned long long)atomic_load(&prof.gc_events));
	char path[600], cwd[PATH_MAX];
	hp_options_output_path(&prof.o, path, sizeof(path));
	bool rel = path[0] != '/' && getcwd(cwd, sizeof(cwd));
	char fmts[64] = "";
	for (int f = 0; f <= HP_FORMAT_LAST; f++)
		if (prof.o.formats & (1u << f)) {
			size_t l = strlen(fmts);
			snprintf(fmts + l, sizeof(fmts) - l, "%s%s", l ? "+" : "", hp_formats[f].name);
		}
	fprintf(out, "output: %s%s%s (format %s; %s)\n", rel ? cwd : "", rel ? "/" : "", path, fmts,
		prof.upload ? "periodic profiles to the server" : prof.o.period ? "also every period" : "at dump, stop and exit");
	if (prof.o.period)
		fprintf(out, "period: %u s\n", prof.o.period);
	pthread_mutex_lock(&prof.dump_lock);
	if (prof.profiles_written) {
		fmt_time(prof.last_write_ns, when, sizeof(when));
		fprintf(out, "profiles written: %llu; last: %s at %s (%s)\n", (unsigned long long)prof.profiles_written,
			prof.last_written, when, prof.last_why);
	} else {
		fprintf(out, "profiles written: 0\n");
	}
	if (prof.last_error[0])
		fprintf(out, "last write failed: %s\n", prof.last_error);
	pthread_mutex_unlock(&prof.dump_lock);
	if (prof.upload) {
		struct hp_upload_stats st;
		hp_upload_stats(prof.upload, &st);
		fprintf(out, "upload: %s (app %s): %llu delivered, %llu dropped, %llu attempts failed, %u queued%s%s\n",
			prof.o.upload, prof.o.app[0] ? prof.o.app : "heapprobe", (unsigned long long)st.delivered,
			(unsigned long long)st.dropped, (unsigned long long)st.attempts_failed, st.queued,
			st.last_error[0] ? "; last error: " : "", st.last_error);
	}
}
