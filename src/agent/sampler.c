/* The sampler's life: start and stop, the agent thread, profiles asked
 * for (dump, periodic, exit) and their writing to each format and to
 * upload=, the heapprobe command's answers (status, top), and the marking
 * asked for at exit. The sample path, the walker's set-up, the markings'
 * judgments and the live view's estimate are in the files prof.h lists;
 * the statistics are explained in estimate.c. */
#include "agent/prof.h"

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

/* P(sample | object of `size` bytes) at mean interval R. */
double sample_probability(uint64_t size)
{
	double r = (double)prof.o.interval;
	if (r <= 0)
		return 1.0;
	double p = -expm1(-(double)size / r);
	return p > 0 ? p : 1e-12;
}

/* A tracked sample's Horvitz-Thompson bytes B = size / pi and variance
 * term size^2 (1 - pi) / pi^2 = B (B - size); pi = P(sampled) / thinning. */
double entry_bytes(const struct hp_live_entry *e, double *var)
{
	double pi = sample_probability(e->size) / e->thin;
	double b = (double)e->size / pi;
	*var = b * (b - (double)e->size);
	return b;
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
static void stop_upload(void)
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
		snprintf(one, sizeof(one), "%s.%s", path, ext);
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

/* What a snapshot is for, when not the configured outputs: a command's
 * own file= and format= (dump, stop), or the top sites as text (top=N). */
struct snap_req {
	const struct hp_agent_options *dest;    /* file= and format(s) of this write; NULL: the profiler's */
	FILE *top;                              /* top=N: lines to here instead of any file */
	unsigned top_n;
};

static void write_top(FILE *out, unsigned n, const struct hp_profile *p, const struct snap_ctx *c, double scale,
		      const char *estimate);

/* Builds the profile and writes it. Runs on a thread with a JNIEnv. */
static int write_snapshot(JNIEnv *jni, const char *why, bool periodic, bool final, const struct snap_req *req)
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
		setup_estimate(&ctx);
		hp_live_each(&prof.live, jni, add_live, hist_dead, &ctx);
		finish_estimate(&ctx, nslots);
	}
	char estimate[600];
	double scale = choose_scale(&ctx, estimate, sizeof(estimate));

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
		double half = 1.96 * sqrt(a->var) * scale;
		out->inuse_bytes_lo = llround(fmax(0.0, a->bytes * scale - half));
		out->inuse_bytes_hi = llround(a->bytes * scale + half);
		out->recent_objects = llround(a->recent_objects);
		out->recent_bytes = llround(a->recent_bytes);
		out->class_name = hp_sites_class_name(t, s->class_id);
		nsamples++;
	}

	char c1[256], c2[2200], c3[256], c4[1536], c5[320];
	snprintf(c1, sizeof(c1), "heapprobe %s: %llu samples at interval %llu bytes, %llu sites, %llu live samples "
		 "tracked, %llu dropped by thinning, %llu samples beyond the site table",
		 why, (unsigned long long)hp_striped_sum(&prof.samples, memory_order_relaxed), (unsigned long long)prof.o.interval,
		 (unsigned long long)nsamples, (unsigned long long)hp_live_count(&prof.live),
		 (unsigned long long)atomic_load(&prof.live.dropped), (unsigned long long)atomic_load(&t->overflow));
	describe_live(c2, sizeof(c2), &ctx, scale, estimate);
	snprintf(c3, sizeof(c3), "inuse intervals: 95%% Horvitz-Thompson sampling error per site");
	describe_stacks(c4, sizeof(c4));
	describe_history(c5, sizeof(c5));
	/* Site names and class names stay valid without the lock: only the
	 * arrays that hold them may move, and we have taken the pointers. */
	pthread_mutex_unlock(&t->lock);
	const char *comments[] = { c1, c2, c3, c4, c5 };
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	struct hp_profile p = {
		.frames = frames, .nframes = nframes, .frame_map = remap, .nframe_map = nfr,
		.samples = samples, .nsamples = nsamples,
		.period = (int64_t)prof.o.interval, .time_nanos = prof.start_realtime_ns,
		.duration_nanos = now_ns - prof.start_realtime_ns, .comments = comments, .ncomments = 5,
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
	char shown[PATH_MAX + 64];
	rc = write_formats(&p, d, path, err, sizeof(err), shown, sizeof(shown));
	if (rc == 0) {
		snprintf(prof.last_written, sizeof(prof.last_written), "%s", shown);
		snprintf(prof.last_why, sizeof(prof.last_why), "%s", why);
		prof.last_write_ns = now_ns;
		prof.last_error[0] = '\0';
		prof.profiles_written++;
		logf_("wrote %s (%zu sites, %s; %s)", shown, nsamples, c2, c4);
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
			logf_("%s; wrote %s instead (%zu sites, %s; %s)", err[0] ? err : strerror(-rc), shown, nsamples, c2,
			      c4);
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

/* Asks for a marking (mark= policy) so that the profile about to be
 * written is verified as of now. Dump lock held. Never from VMDeath: the
 * collector's threads have stopped by then and a request would not return
 * (the exit profile relies on the shutdown hook below instead). */
static void mark_before_profile(JNIEnv *jni, bool periodic)
{
	if (!prof.o.live || prof.o.mark == HP_MARK_OFF)
		return;
	/* Periodic profiles keep the cost bounded; asked-for ones (dump,
	 * stop, exit) always get their marking. */
	if (periodic && !hp_marks_may_request(&prof.marks))
		return;
	markings_tick(jni);     /* a cycle of the collector's own that ended first is counted as its own */
	uint64_t before = markings_counted();
	int rc = hp_marks_request(&prof.marks, prof.probe, prof.o.mark == HP_MARK_FULL, &prof.gc_events);
	/* G1, for an asked-for profile: a second cycle. The first one's
	 * concurrent-start pause copies young objects that dead old ones
	 * still point to (their cards are roots to a young collection) into
	 * survivor regions, which that marking takes as live: a cache held by
	 * a thread that ended showed 110-127 MiB of its 190 after one cycle,
	 * nothing after two (docs/load.md). The second marking knows the old
	 * referrers dead. */
	struct hp_gc_info g = { .sz = sizeof(g) };
	if (rc == 0 && !periodic && hp_gc_info(prof.probe, &g) == 0 && g.kind == HP_GC_G1) {
		char first[sizeof(prof.marks.last_request)];
		snprintf(first, sizeof(first), "%s", prof.marks.last_request);
		rc = hp_marks_request(&prof.marks, prof.probe, prof.o.mark == HP_MARK_FULL, &prof.gc_events);
		if (rc == 0)
			snprintf(prof.marks.last_request, sizeof(prof.marks.last_request),
				 "%.90s, then another (G1: the first keeps young objects dead old ones point to)", first);
	}
	if (rc == 0) {
		hp_marks_canary_rearm(&prof.marks, jni, &prof.gc_events);      /* counted: not again */
		if (prof.have_surv && markings_counted() > before) {
			for (; prof.surv_markings < markings_counted(); prof.surv_markings++)
				hp_survival_next_epoch(&prof.surv);
			settle_pending();
		}
	}
	if (rc < 0 && prof.marks.requests == 1)
		logf_("no marking before profiles: %s", prof.marks.last_request);
}

/* final: the last profile of this profiler (stop, exit), retried to a
 * fallback when its path fails. */
static int dump(JNIEnv *jni, const char *why, bool may_mark, bool periodic, bool final, const struct snap_req *req)
{
	pthread_mutex_lock(&prof.dump_lock);
	/* Checked under the lock: a stop frees the tables under it too. */
	int rc = -ESRCH;
	if (prof.sites.slots) {
		if (may_mark) {
			mark_before_profile(jni, periodic);
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

/* ---- the heapprobe command's answers ----------------------------------- */

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
static void write_top(FILE *out, unsigned n, const struct hp_profile *p, const struct snap_ctx *c, double scale,
		      const char *estimate)
{
	struct hp_heap_usage u = { .sz = sizeof(u) };
	if (hp_heap_usage(prof.probe, HP_USAGE_POST_GC, &u) == 0 && u.live)
		fprintf(out, "heap\t%llu\t%s\t%s\t%llu\n", (unsigned long long)u.live, hp_usage_kind_name(u.live_kind),
			u.live_kind == HP_USAGE_MARKED_LIVE ? "marking" : hp_mode_name(u.live_mode),
			(unsigned long long)u.live_gc_count);
	else
		fprintf(out, "heap\t0\tnone\tno collection yet\t0\n");
	struct hp_marking mk = { .sz = sizeof(mk) };
	hp_marking(prof.probe, &mk);
	double half = 1.96 * sqrt(c->var) * scale, bytes = c->bytes * scale;
	/* The estimate text without tabs (it has none; newlines neither). */
	fprintf(out, "view\t%.0f\t%.0f\t%.0f\t%.0f\t%llu\t%llu\t%s\n", bytes, fmax(0.0, bytes - half), bytes + half,
		c->recent_bytes, (unsigned long long)hp_striped_sum(&prof.samples, memory_order_relaxed),
		(unsigned long long)mk.count, estimate);
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
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	fprintf(out, "pid: %d\n", (int)getpid());
	if (!atomic_load(&prof.running)) {
		fprintf(out, "profiler: not running\n");
		return;
	}
	char when[64];
	fmt_time(prof.start_realtime_ns, when, sizeof(when));
	fprintf(out, "profiler: running since %s (%.0f s)\n", when, (now_ns - prof.start_realtime_ns) / 1e9);
	static const char *const marks[] = { "concurrent", "full", "off" };
	static const char *const stacks[] = { "cache", "verify", "jvmti" };
	fprintf(out, "interval: %llu bytes\n", (unsigned long long)prof.o.interval);
	fprintf(out, "live: %s (mark=%s, min_age=%u, max_live=%u)\n", prof.o.live ? "on" : "off", marks[prof.o.mark],
		prof.o.min_age, prof.o.max_live);
	fprintf(out, "stacks: %s, depth %u\n", stacks[prof.o.stacks], prof.o.depth);
	fprintf(out, "samples: %llu\n", (unsigned long long)hp_striped_sum(&prof.samples, memory_order_relaxed));
	fprintf(out, "sites: %u\n", atomic_load(&prof.sites.count));
	fprintf(out, "live samples tracked: %llu\n", prof.o.live ? (unsigned long long)hp_live_count(&prof.live) : 0ull);
	struct hp_marking mk = { .sz = sizeof(mk) };
	if (hp_marking(prof.probe, &mk) == 0)
		fprintf(out, "markings: %llu (source: %s); requested by us: %llu\n", (unsigned long long)mk.count,
			mk.source ? mk.source : "?", (unsigned long long)prof.marks.requests);
	fprintf(out, "collector's own cycles: %s (%llu seen)\n",
		prof.marks.canary_state[0] ? prof.marks.canary_state : "not looked at yet (after the first collection)",
		(unsigned long long)prof.marks.canary_markings);
	fprintf(out, "collections seen: %llu\n", (unsigned long long)atomic_load(&prof.gc_events));
	char path[600], cwd[PATH_MAX];
	hp_options_output_path(&prof.o, path, sizeof(path));
	bool rel = path[0] != '/' && getcwd(cwd, sizeof(cwd));
	char fmts[64] = "";
	for (int f = 0; f <= HP_FORMAT_LAST; f++)
		if (prof.o.formats & (1u << f)) {
			static const char *const names[] = { "pprof", "collapsed", "html", "jfr", "text" };
			size_t l = strlen(fmts);
			snprintf(fmts + l, sizeof(fmts) - l, "%s%s", l ? "+" : "", names[f]);
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
	pthread_mutex_lock(&prof.dump_lock);
	if (prof.sites.slots)
		mark_before_profile(jni, false);
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

static void JNICALL agent_thread(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
	atomic_store(&prof.thread_alive, 1);
	struct timespec next;
	clock_gettime(CLOCK_REALTIME, &next);
	next.tv_sec += prof.o.period ? prof.o.period : 3600;
	int tries_left = 600;
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
	hp_symtab_trim(prof.probe->syms);       /* set-up's symbol lookups are done */
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

/* A start that fails gives back what it set up so far: the tables and the
 * upload sender. Each part is safe to free when it was never set up. */
static void undo_start(JNIEnv *jni)
{
	if (prof.upload) {
		hp_upload_stop(prof.upload, 0, NULL);
		prof.upload = NULL;
	}
	hp_live_free(&prof.live, jni);
	if (prof.have_history)
		hp_history_free(&prof.history);
	prof.have_history = false;
	if (prof.have_surv)
		hp_survival_free(&prof.surv);
	prof.have_surv = false;
	hp_sites_free(&prof.sites);
	prof.keep_samples = false;
	hp_samplelog_free(&prof.log);
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
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	prof.start_realtime_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
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
		prof.surv_markings = 0;
		prof.canary_tried = false;
		hp_alloc_clock_reset(&prof.clock);
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
		prof.up_from_s = now.tv_sec;
	}
	sem_init(&prof.wake, 0, 0);

	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.SampledObjectAlloc = on_sampled_alloc;
	cb.GarbageCollectionFinish = on_gc_finish;
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.ThreadStart = on_thread_start;
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
	(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
	(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
	if (live_phase) {
		record_baseline();
		setup_walker(j, jni);
		hp_symtab_trim(prof.probe->syms);
		add_exit_hook(jni);
		if (start_thread(jni))
			logf_("cannot start the agent thread");
	} else {
		(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
	}
	(*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	return 0;
}

int hp_profiler_stop(JNIEnv *jni, const struct hp_agent_options *dest, bool discard)
{
	if (!atomic_load(&prof.running))
		return -ESRCH;
	jvmtiEnv *j = prof.jvmti;
	(*j)->SetEventNotificationMode(j, JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
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
	(*j)->SetEventNotificationMode(j, JVMTI_DISABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
	pthread_mutex_lock(&prof.dump_lock);
	if (prof.o.live)
		hp_live_free(&prof.live, jni);
	if (prof.have_history)
		hp_history_free(&prof.history);
	prof.have_history = false;
	if (prof.have_surv)
		hp_survival_free(&prof.surv);
	prof.have_surv = false;
	hp_marks_canary_free(&prof.marks, jni);
	prof.canary_tried = false;
	atomic_store(&prof.walk_ready, 0);
	hp_stackcache_free(&prof.stack_cache, jni);
	if (atomic_exchange(&prof.decode_ready, 0))
		hp_framedecode_free(&prof.decode);
	hp_sites_free(&prof.sites);
	prof.keep_samples = false;
	hp_samplelog_free(&prof.log);
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

