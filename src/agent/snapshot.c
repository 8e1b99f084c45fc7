/* A profile: built from the sites, the live table and the estimate
 * (estimate.c), then emitted to each format with the fallback path when
 * the given one fails, to upload=, and to the command's top view. */
#include "agent/prof.h"

/* A frame's hash, for the profile's table of distinct frames. */
static uint64_t frame_hash(const struct hp_frame *f)
{
	uint64_t h = (uint64_t)(uintptr_t)f->function * 0x9e3779b97f4a7c15ull;
	h ^= (uint64_t)(uintptr_t)f->file + (h << 7);
	h ^= (uint64_t)(unsigned)f->line * 0xff51afd7ed558ccdull;
	return h ^ (h >> 29);
}

/* ---- upload= ------------------------------------------------------------------
 *
 * Each profile also goes to the server as a Go heap profile: inuse as it is
 * now (a gauge), allocations since the previous upload (the server adds up
 * what it receives over a time range, so cumulative totals would count
 * every period again). */
static void push_upload(const struct hp_profile *p, const struct hp_prof_sample *samples, const uint32_t *slot_sample,
			uint32_t nslots, int64_t now_ns)
{
	if (prof.up_nslots != nslots) {
		double *o = calloc(nslots, sizeof(double)), *b = calloc(nslots, sizeof(double));
		if (!o || !b) {
			free(o);
			free(b);
			return;
		}
		free(prof.up_objects);
		free(prof.up_bytes);
		prof.up_objects = o;
		prof.up_bytes = b;
		prof.up_nslots = nslots;
	}
	struct hp_prof_sample *d = malloc(sizeof(*d) * (p->nsamples + 1));
	if (!d)
		return;
	memcpy(d, samples, sizeof(*d) * p->nsamples);
	for (uint32_t slot = 0; slot < nslots; slot++) {
		if (!slot_sample[slot])
			continue;
		struct hp_prof_sample *x = &d[slot_sample[slot] - 1];
		double ao = (double)x->alloc_objects, ab = (double)x->alloc_bytes;
		x->alloc_objects = llround(fmax(0.0, ao - prof.up_objects[slot]));
		x->alloc_bytes = llround(fmax(0.0, ab - prof.up_bytes[slot]));
		prof.up_objects[slot] = ao;
		prof.up_bytes[slot] = ab;
	}
	struct hp_profile q = *p;
	q.samples = d;
	/* Stamped with the moment it describes (the server files a profile
	 * under its own time, to the millisecond); the period in the URL. */
	q.time_nanos = now_ns;
	q.duration_nanos = now_ns - prof.up_from_s * 1000000000;
	q.events = NULL;
	q.nevents = 0;
	unsigned char *gz = NULL;
	size_t len = 0;
	if (hp_encode_pprof_go_heap(&q, &gz, &len) == 0)
		hp_upload_push(prof.upload, gz, len, prof.up_from_s, now_ns / 1000000000);
	prof.up_from_s = now_ns / 1000000000;
	free(d);
}

/* Sends what is queued (5 s at most), then stops the sender. Under the
 * dump lock: a late periodic profile of the agent thread cannot push to a
 * freed sender. */
void stop_upload(void)
{
	pthread_mutex_lock(&prof.dump_lock);
	if (!prof.upload) {
		pthread_mutex_unlock(&prof.dump_lock);
		return;
	}
	struct hp_upload_stats st;
	hp_upload_stop(prof.upload, 5000, &st);
	prof.upload = NULL;
	pthread_mutex_unlock(&prof.dump_lock);
	logf_("upload: %llu profiles delivered, %llu dropped, %llu failed attempts%s%s",
	      (unsigned long long)st.delivered, (unsigned long long)st.dropped, (unsigned long long)st.attempts_failed,
	      st.last_error[0] ? "; last error: " : "", st.last_error);
	free(prof.up_objects);
	free(prof.up_bytes);
	prof.up_objects = prof.up_bytes = NULL;
	prof.up_nslots = 0;
}

/* The profile in one format; collapsed with live also writes PATH.alloc.
 * 0, or a negative errno with the reason in err. */
static int write_format(enum hp_format f, const struct hp_profile *p, const char *path, char *err, size_t errlen)
{
	switch (f) {
	case HP_FORMAT_PPROF: return hp_write_pprof(p, path, err, errlen);
	case HP_FORMAT_HTML: return hp_write_html(p, path, err, errlen);
	case HP_FORMAT_JFR: return hp_write_jfr(p, path, err, errlen);
	case HP_FORMAT_TEXT: return hp_write_text(p, path, err, errlen);
	case HP_FORMAT_COLLAPSED: break;
	}
	int rc = hp_write_collapsed(p, prof.o.live ? HP_VIEW_INUSE : HP_VIEW_ALLOC, path, err, errlen);
	if (rc == 0 && prof.o.live) {
		char alloc_path[PATH_MAX + 8];
		snprintf(alloc_path, sizeof(alloc_path), "%s.alloc", path);
		rc = hp_write_collapsed(p, HP_VIEW_ALLOC, alloc_path, err, errlen);
	}
	return rc;
}

/* With several formats, format f's file: PATH.<extension>. */
static void format_file(char *one, size_t cap, const char *path, int f)
{
	snprintf(one, cap, "%s.%s", path, hp_format_extension((enum hp_format)f));
}

/* Whether a file is at any name write_formats would write `path` to. */
static bool name_taken(const struct hp_agent_options *d, const char *path)
{
	unsigned fs = d->formats;
	if (!(fs & (fs - 1)))
		return access(path, F_OK) == 0;
	for (int f = 0; f <= HP_FORMAT_LAST; f++) {
		char one[PATH_MAX + 16];
		format_file(one, sizeof(one), path, f);
		if ((fs & (1u << f)) && access(one, F_OK) == 0)
			return true;
	}
	return false;
}

/* Every configured format: one to PATH itself, several each to
 * PATH.<extension> (format=jfr+pprof: p.jfr, p.pb.gz from file=p), named
 * in `shown` for the log (PATH, or PATH.{pb.gz,jfr}). All are tried; the
 * first failure is returned. */
static int write_formats(const struct hp_profile *p, const struct hp_agent_options *d, const char *path, char *err,
			 size_t errlen, char *shown, size_t shownlen)
{
	unsigned fs = d->formats;
	if (!(fs & (fs - 1))) {
		snprintf(shown, shownlen, "%s", path);
		return write_format(d->format, p, path, err, errlen);
	}
	int first = 0;
	size_t n = (size_t)snprintf(shown, shownlen, "%s.{", path);
	for (int f = 0; f <= HP_FORMAT_LAST; f++) {
		if (!(fs & (1u << f)))
			continue;
		const char *ext = hp_format_extension((enum hp_format)f);
		char one[PATH_MAX + 16], e[512] = "";
		format_file(one, sizeof(one), path, f);
		int rc = write_format((enum hp_format)f, p, one, e, sizeof(e));
		if (rc && !first) {
			first = rc;
			snprintf(err, errlen, "%s", e);
		}
		if (n < shownlen)
			n += (size_t)snprintf(shown + n, shownlen - n, "%s%s", shown[n - 1] == '{' ? "" : ",", ext);
	}
	if (n < shownlen)
		snprintf(shown + n, shownlen - n, "}");
	return first;
}

/* Where the last profile goes when its own path fails (disk full, the
 * directory removed, a FIFO nobody reads): $TMPDIR, else the working
 * directory, whichever is not the failed path's own directory, under a name
 * nothing has yet (heapprobe-fallback-PID-N-<file name>), so that the
 * fallback cannot replace anything either. 0, or -ENOENT. */
static int fallback_path(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char pdir[PATH_MAX], here[PATH_MAX];
	char *d = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	bool have_pdir = d && realpath(d, pdir);
	free(d);
	const char *tmpdir = getenv("TMPDIR");
	const char *dirs[] = { tmpdir && *tmpdir ? tmpdir : NULL, getcwd(here, sizeof(here)) };
	for (size_t i = 0; i < 2; i++) {
		char real[PATH_MAX];
		if (!dirs[i] || !realpath(dirs[i], real) || (have_pdir && strcmp(real, pdir) == 0))
			continue;
		for (int n = 0; n < 100; n++) {
			struct stat st;
			int w = snprintf(out, cap, "%s/heapprobe-fallback-%d-%d-%s", real, (int)getpid(), n, base);
			if (w < 0 || (size_t)w >= cap)
				break;
			if (lstat(out, &st) != 0 && errno == ENOENT)
				return 0;
		}
	}
	return -ENOENT;
}

/* The history as the writers see it (profile.h): the records by time, the
 * largest sites' series, the leak suspects. Dump lock held. */
#define HIST_SERIES 8
#define HIST_SUSPECTS 32

struct hist_view {
	struct hp_prof_history h;
	struct hp_prof_point *points;
	uint32_t *series_samples;
	double *series;
	struct hp_prof_suspect *suspects;
};

static int by_live_desc(const void *x, const void *y)
{
	const struct hp_hist_site *a = x, *b = y;
	return a->live < b->live ? 1 : a->live > b->live ? -1 : 0;
}

static void build_history(struct hist_view *v, const struct snap_ctx *ctx, const uint32_t *slot_sample,
			  uint32_t nslots)
{
	memset(v, 0, sizeof(*v));
	size_t n = hp_history_count(&prof.history);
	if (!prof.have_history || n == 0)
		return;
	v->points = calloc(n, sizeof(*v->points));
	v->series_samples = calloc(HIST_SERIES + HIST_SUSPECTS, sizeof(*v->series_samples));
	v->suspects = calloc(HIST_SUSPECTS, sizeof(*v->suspects));
	struct hp_hist_suspect found[HIST_SUSPECTS];
	if (!v->points || !v->series_samples || !v->suspects)
		return;
	const struct hp_hist_rec *last = NULL;
	for (size_t i = 0; i < n; i++) {
		enum hp_hist_kind kind;
		const struct hp_hist_rec *r = hp_history_at(&prof.history, i, &kind);
		v->points[i] = (struct hp_prof_point){ r->time_ns, (uint8_t)kind, r->collections, r->heap_used,
						       r->live, r->recent, r->freed };
		last = r;
	}
	/* Suspects, and the series: suspects first, then the largest sites at
	 * the last record. After a late attach the objects in use before
	 * sampling began are invisible: a site that replaces them with sampled
	 * ones shows its sampled bytes rise as a leak would, until it has
	 * replaced them all. It cannot gain more than those bytes that way, so
	 * a suspect below them is marked, and ranked after the others, when
	 * they were a significant part of the heap (over a quarter of what is
	 * verified now; an agent loaded at start-up has a few MiB). */
	size_t ns = hp_history_suspects(&prof.history, found, HIST_SUSPECTS), nser = 0;
	bool late = (double)prof.baseline_bytes > 0.25 * last->live;
	uint32_t sites[HIST_SERIES + HIST_SUSPECTS];
	for (size_t i = 0; i < ns; i++) {
		uint32_t slot = found[i].site;
		if (slot >= nslots || !slot_sample[slot])
			continue;
		struct hp_prof_suspect *o = &v->suspects[v->h.nsuspects++];
		*o = (struct hp_prof_suspect){ slot_sample[slot] - 1, found[i].live, found[i].per_min, found[i].z,
					       found[i].z_recent, found[i].window, found[i].span_s, { 0 },
					       late && found[i].live <= (double)prof.baseline_bytes, prof.baseline_bytes };
		memcpy(o->age_bytes, ctx->acc[slot].age_bytes, sizeof(o->age_bytes));
		sites[nser++] = slot;
	}
	/* the unambiguous first, each group by growth (stable: found is sorted) */
	for (size_t i = 1; i < v->h.nsuspects; i++)
		for (size_t k = i; k > 0 && !v->suspects[k].may_be_replacement && v->suspects[k - 1].may_be_replacement; k--) {
			struct hp_prof_suspect t = v->suspects[k];
			v->suspects[k] = v->suspects[k - 1];
			v->suspects[k - 1] = t;
		}
	struct hp_hist_site *top = last->nsites ? malloc(sizeof(*top) * last->nsites) : NULL;
	if (top) {
		memcpy(top, last->sites, sizeof(*top) * last->nsites);
		qsort(top, last->nsites, sizeof(*top), by_live_desc);
		for (uint32_t i = 0, taken = 0; i < last->nsites && taken < HIST_SERIES; i++) {
			bool dup = false;
			for (size_t k = 0; k < nser; k++)
				dup |= sites[k] == top[i].site;
			if (dup || top[i].live <= 0 || top[i].site >= nslots || !slot_sample[top[i].site])
				continue;
			sites[nser++] = top[i].site;
			taken++;
		}
		free(top);
	}
	v->series = calloc(nser * n + 1, sizeof(*v->series));
	if (!v->series)
		nser = 0;
	for (size_t k = 0; k < nser; k++) {
		v->series_samples[k] = slot_sample[sites[k]] - 1;
		for (size_t i = 0; i < n; i++) {
			enum hp_hist_kind kind;
			const struct hp_hist_site *e = hp_history_site(hp_history_at(&prof.history, i, &kind), sites[k]);
			v->series[k * n + i] = e ? e->live : 0.0;
		}
	}
	v->h = (struct hp_prof_history){ v->points, n, v->series_samples, nser, v->series, v->suspects,
					 v->h.nsuspects, (uint32_t)prof.history.marking.n, prof.history.bytes };
}

/* What the history holds and what recording it cost, for the comment. */
static void describe_history(char *out, size_t cap)
{
	if (!prof.have_history) {
		snprintf(out, cap, "history: none (live tracking off)");
		return;
	}
	const struct hp_history *h = &prof.history;
	snprintf(out, cap, "history: %llu marking and %llu young-collection records kept of %llu made, %llu bytes "
		 "held, %.3f ms CPU in records (%.1f us per record)",
		 (unsigned long long)(h->marking.n < HP_HIST_RECORDS ? h->marking.n : HP_HIST_RECORDS),
		 (unsigned long long)(h->young.n < HP_HIST_RECORDS ? h->young.n : HP_HIST_RECORDS),
		 (unsigned long long)h->records, (unsigned long long)h->bytes, (double)h->record_ns / 1e6,
		 h->records ? (double)h->record_ns / 1e3 / (double)h->records : 0.0);
}

static void free_history_view(struct hist_view *v)
{
	free(v->points);
	free(v->series_samples);
	free(v->series);
	free(v->suspects);
}



/* The sums of a walk of the live table, cleared for another (the arrays
 * kept). */
static void snap_ctx_clear(struct snap_ctx *c, uint32_t nslots)
{
	memset(c->acc, 0, sizeof(*c->acc) * nslots);
	*c = (struct snap_ctx){ .acc = c->acc, .recs = c->recs, .caprecs = c->caprecs, .min_age = c->min_age };
}

/* The sites made so far (ids are dense, stacks.h): the slots of the
 * per-site tables a walk of the live table can have touched. The tables
 * are sized for every slot (~20 MiB for the sums), fresh zero pages each
 * profile; clearing or reading all of them faulted every page in:
 * `heapprobe top` spent most of its ~10 ms a screen in page faults and
 * memset once the curves were read from the memo (perf on the Attach
 * Listener, LoadService on G1). */
static uint32_t sites_made(struct hp_sites *t, uint32_t nslots)
{
	uint32_t n = atomic_load(&t->count);
	return n < nslots ? n : nslots;
}

/* Builds the profile and writes it. Runs on a thread with a JNIEnv. */
int write_snapshot(JNIEnv *jni, const char *why, bool periodic, bool final, const struct snap_req *req)
{
	struct hp_sites *t = &prof.sites;
	uint32_t nslots = t->mask + 1;
	struct snap_ctx ctx = { .acc = calloc(nslots, sizeof(struct live_acc)) };
	struct hp_prof_sample *samples = calloc(nslots, sizeof(*samples));
	uint32_t *slot_sample = calloc(nslots, sizeof(*slot_sample));   /* site slot -> sample index + 1 */
	struct events ev = { 0 };
	struct hist_view hv = { 0 };
	struct hp_frame *frames = NULL;
	uint32_t *ftab = NULL, *remap = NULL;
	int rc = -ENOMEM;
	if (!ctx.acc || !samples || !slot_sample)
		goto out;

	ctx.min_age = prof.o.min_age > 1 ? prof.o.min_age : 1;
	if (prof.o.live) {
		/* A marking counted while the table is walked (the walk's JNI
		 * calls wait out any pause that begins meanwhile) has cleared
		 * the references of what it found dead, so that the walk finds
		 * the survivors only, and the estimate, taken as of the marking
		 * before, counts them at their survival since then. Serial's
		 * full collections right after the young pause that asked for
		 * a `heapprobe top` screen read 6 of 340 screens 23-61% low
		 * (6 runs at 64k). The walk is made again, that marking
		 * counted (at most twice): 338 of 338 within 10%. */
		/* Likewise one counted before the walk but after the survival
		 * sums were last moved on (survival_catch_up): G1's own cycles
		 * are counted by the GC callback at Cleanup, which can fall
		 * inside the sweep of the dump's own history_tick, after its
		 * catch-up. The walk would take the new cover with the sums
		 * still the previous marking's: its verified samples found
		 * dead since (all of them by now) scaling the new verified
		 * part up to its raw bytes, and the pending dead the new one
		 * covers counted as recent. One G1 `heapprobe top` screen at
		 * 64k, right after a Cleanup, read +58.5%
		 * (docs/load-g1-cycle-starts.md). So such a marking is settled
		 * first (history_tick), and a walk that began unsettled is
		 * made again, as below. */
		for (int walks = 1;; walks++) {
			if (prof.have_surv && prof.surv_markings < markings_counted())
				history_tick(jni, false);
			setup_estimate(&ctx);
			sweep_begin();
			hp_live_each(&prof.live, jni, add_live, hist_dead, &ctx);
			sweep_end();
			struct hp_marks_at after;
			hp_marks_at_now(&prof.marks, &after);
			bool settled = !prof.have_surv || prof.surv_markings >= ctx.marks_at.seen + ctx.marks_at.requested;
			if (walks == 3 || (settled && after.seen == ctx.marks_at.seen &&
					   after.requested == ctx.marks_at.requested))
				break;
			history_tick(jni, false);
			snap_ctx_clear(&ctx, sites_made(t, nslots));
		}
		finish_estimate(&ctx, sites_made(t, nslots));
	}
	char estimate[1000];
	double scale = choose_scale(&ctx, estimate, sizeof(estimate));
	if (scale == 1.0)
		anchor_estimate(&ctx, estimate + strlen(estimate), sizeof(estimate) - strlen(estimate));

	/* Frames shared across stacks are written once. The lock keeps new
	 * sites and frames out while they are read (and class names still).
	 * Sites are dense, in the order they were made (stacks.h): the slots
	 * past the count were never touched and are not read. Named frames
	 * are deduplicated by frame id first (a frame id is named once, so
	 * the tables are sized by the distinct frames, not by every frame of
	 * every site: javac at 32k, ~5k ids against ~400k frame references),
	 * then by what they name (two locations on one line name one frame).
	 * Samples point at their sites' own ids, through remap. */
	pthread_mutex_lock(&t->lock);
	uint32_t nsites = atomic_load(&t->count), nfr = atomic_load(&t->nframes);
	size_t nsamples = 0;
	size_t fcap = 16;
	while (fcap < (size_t)nfr * 2 + 2)
		fcap <<= 1;
	ftab = malloc(sizeof(*ftab) * fcap);
	remap = malloc(sizeof(*remap) * ((size_t)nfr + 1));
	frames = malloc(sizeof(*frames) * ((size_t)nfr + 1));
	if (!ftab || !remap || !frames) {
		pthread_mutex_unlock(&t->lock);
		goto out;
	}
	memset(ftab, 0xff, sizeof(*ftab) * fcap);
	memset(remap, 0xff, sizeof(*remap) * ((size_t)nfr + 1));
	size_t nframes = 0;
	for (uint32_t i = 0; i < nsites; i++) {
		struct hp_site *s = hp_sites_at(t, i);
		if (!s)
			continue;
		struct hp_prof_sample *out = &samples[nsamples];
		slot_sample[i] = (uint32_t)nsamples + 1;
		out->frames = s->ids;   /* allocated once, never moved or freed before the sites */
		for (uint32_t k = 0; k < s->nframes; k++) {
			uint32_t id = s->ids[k];
			if (remap[id] == UINT32_MAX) {
				const struct hp_frame *f = &hp_sites_frame(t, id)->named;
				size_t j = frame_hash(f) & (fcap - 1);
				while (ftab[j] != UINT32_MAX) {
					const struct hp_frame *g = &frames[ftab[j]];
					if (g->function == f->function && g->file == f->file && g->line == f->line &&
					    g->descriptor == f->descriptor)
						break;
					j = (j + 1) & (fcap - 1);
				}
				if (ftab[j] == UINT32_MAX) {
					frames[nframes] = *f;
					ftab[j] = (uint32_t)nframes++;
				}
				remap[id] = ftab[j];
			}
		}
		out->nframes = s->nframes;
		out->alloc_objects = llround(hp_atomic_load_double(&s->alloc_objects_bits));
		out->alloc_bytes = llround(hp_atomic_load_double(&s->alloc_bytes_bits));
		const struct live_acc *a = &ctx.acc[i];
		out->inuse_objects = llround(a->objects * scale);
		out->inuse_bytes = llround(a->bytes * scale);
		double half = hp_ht_half95(a->var) * scale;
		out->inuse_bytes_lo = llround(fmax(0.0, a->bytes * scale - half));
		out->inuse_bytes_hi = llround(a->bytes * scale + half);
		out->recent_objects = llround(a->recent_objects);
		out->recent_bytes = llround(a->recent_bytes);
		out->class_name = hp_sites_class_name(t, s->class_id);
		nsamples++;
	}

	char c1[256], c2[2200], c3[900], c4[1536], c5[320], c6[1024];
	snprintf(c1, sizeof(c1), "heapprobe %s: %llu samples at interval %llu bytes, %llu sites, %llu live samples "
		 "tracked, %llu dropped by thinning, %llu samples beyond the site table",
		 why, (unsigned long long)hp_striped_sum(&prof.samples, memory_order_relaxed), (unsigned long long)prof.o.interval,
		 (unsigned long long)nsamples, (unsigned long long)hp_live_count(&prof.live),
		 (unsigned long long)atomic_load(&prof.live.dropped), (unsigned long long)atomic_load(&t->overflow));
	describe_live(c2, sizeof(c2), &ctx, scale, estimate);
	char brief[256];
	describe_live_short(brief, sizeof(brief), &ctx, scale);
	char rate[720];
	describe_rate(rate, sizeof(rate));
	snprintf(c3, sizeof(c3), "inuse intervals: 95%% Horvitz-Thompson sampling error per site; %s", rate);
	describe_stacks(c4, sizeof(c4));
	describe_history(c5, sizeof(c5));
	/* Which release's HotSpot facts this run uses, and what they lack. */
	snprintf(c6, sizeof(c6), "data: ");
	hp_probe_describe_symdata(prof.probe, c6 + 6, sizeof(c6) - 6);
	/* Site names and class names stay valid without the lock: only the
	 * arrays that hold them may move, and we have taken the pointers. */
	pthread_mutex_unlock(&t->lock);
	const char *comments[] = { c1, c2, c3, c4, c5, c6 };
	int64_t now_ns = hp_real_ns();
	struct hp_profile p = {
		.frames = frames, .nframes = nframes, .frame_map = remap, .nframe_map = nfr,
		.samples = samples, .nsamples = nsamples,
		.period = (int64_t)prof.o.interval, .time_nanos = prof.start_realtime_ns,
		.duration_nanos = now_ns - prof.start_realtime_ns, .comments = comments, .ncomments = 6,
		.summary = brief,
	};
	struct hp_prof_heap heap;
	if (heap_figure(&heap, now_ns))
		p.heap = &heap;
	if (prof.o.live) {
		build_history(&hv, &ctx, slot_sample, nslots);
		if (hv.h.npoints)
			p.history = &hv.h;
	}
	if (prof.keep_samples && build_events(&ev, &ctx, samples, slot_sample, nslots, scale, now_ns) == 0) {
		p.events = ev.events;
		p.nevents = ev.n;
		p.threads = ev.threads;
		p.nthreads = ev.nthreads;
		if (ev.have_heap)
			p.heap = &ev.heap;
	}
	if (req && req->top) {
		write_top(req->top, req->top_n, &p, &ctx, scale, c2);
		rc = 0;
		goto out;
	}
	if (prof.upload)
		push_upload(&p, samples, slot_sample, nslots, now_ns);
	/* With upload=, periodic profiles go to the server only. */
	if (periodic && prof.upload) {
		rc = 0;
		goto out;
	}
	const struct hp_agent_options *d = &prof.o;
	if (req && req->dest && req->dest->file[0])
		d = req->dest;
	struct hp_agent_options dd;
	if (req && req->dest && req->dest->format_given) {
		dd = *d;
		dd.format = req->dest->format;
		dd.formats = req->dest->formats;
		d = &dd;
	}
	char path[600], err[512] = "";
	hp_options_output_path(d, path, sizeof(path));
	/* %t names a second: a profile whose name is taken (a second one in
	 * the same second, a periodic one then the exit's, or another JVM's
	 * writing to the same pattern) gets _1, _2, ... after its time rather
	 * than replace it (seen under load: the periodic one lost). */
	if (strstr(d->file, "%t"))
		for (unsigned seq = 1; seq < 1000 && name_taken(d, path); seq++)
			hp_options_output_path_seq(d, seq, path, sizeof(path));
	char shown[PATH_MAX + 64];
	rc = write_formats(&p, d, path, err, sizeof(err), shown, sizeof(shown));
	if (rc == 0) {
		snprintf(prof.last_written, sizeof(prof.last_written), "%s", shown);
		snprintf(prof.last_why, sizeof(prof.last_why), "%s", why);
		prof.last_write_ns = now_ns;
		prof.last_error[0] = '\0';
		prof.profiles_written++;
		logf_("wrote %s (%zu sites, %s%s%s)", shown, nsamples, prof.o.verbose ? c2 : brief, prof.o.verbose ? "; " : "",
		      prof.o.verbose ? c4 : "");
	}
	if (rc != 0)
		snprintf(prof.last_error, sizeof(prof.last_error), "%s", err[0] ? err : strerror(-rc));
	if (rc == 0) {
	} else if (!final) {
		logf_("%s; profile data kept, the next write (period, dump, stop or exit) retries", err[0] ? err : strerror(-rc));
	} else {
		/* No next write: one more try, somewhere else. */
		char alt[PATH_MAX], err2[512] = "";
		if (fallback_path(path, alt, sizeof(alt)) < 0)
			logf_("%s; no fallback directory ($TMPDIR, the working directory) differs from it: this profile is lost",
			      err[0] ? err : strerror(-rc));
		else if (write_formats(&p, d, alt, err2, sizeof(err2), shown, sizeof(shown)) == 0)
			logf_("%s; wrote %s instead (%zu sites, %s%s%s)", err[0] ? err : strerror(-rc), shown, nsamples,
			      prof.o.verbose ? c2 : brief, prof.o.verbose ? "; " : "", prof.o.verbose ? c4 : "");
		else
			logf_("%s; the fallback failed too (%s): this profile is lost", err[0] ? err : strerror(-rc), err2);
	}
out:
	free(ctx.acc);
	free(ctx.recs);
	free(slot_sample);
	free_events(&ev);
	free_history_view(&hv);
	free(samples);
	free(frames);
	free(ftab);
	free(remap);
	return rc;
}
