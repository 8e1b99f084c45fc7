/* The live view of a profile, and the statistics that turn samples into
 * bytes.
 *
 * Sampling. HotSpot samples allocations as a Poisson process over bytes
 * with mean interval R (SetHeapSamplingInterval): an object of S bytes is
 * sampled with probability p(S) = 1 - exp(-S/R).
 *
 * Allocation estimate. Each sample stands for 1/p(S) objects and S/p(S)
 * bytes (Horvitz-Thompson); a site's estimate is the sum over its samples.
 * Unbias each sample, then sum, never the reverse: a site's samples have
 * different sizes, and 1/p is not linear in S (Go's runtime/pprof
 * scaleHeapSample, jemalloc's prof). At S = R one sample is 1.58 objects,
 * not 1 (async-profiler's max(S, R) is 37% low there).
 *
 * Live estimate. Each tracked sample has a weak reference. A reference
 * still set proves the object alive only once a marking that began after
 * the allocation has ended (marks.h): a young collection never clears the
 * reference of an object that died in the old generation, and a concurrent
 * cycle treats what is allocated during it as live. So the live view
 * ("inuse") sums, Horvitz-Thompson as above, only the samples a marking has
 * verified; the others are reported apart as "recent" (alive or not, no
 * marking has looked yet). Before a profile is written the agent asks for a
 * concurrent marking when the cost allows (option mark=, marks.c), and
 * counts the collector's own markings too. Between markings, the view is
 * an estimate of what is alive now: each verified or recent sample counts
 * for its probability of being alive now, from its site's survival by age
 * learnt from the markings (survival.c); the profile says how much of the
 * view is verified and how much estimated.
 *
 * Scaling, and only to live bytes. The sum over verified samples is an
 * unbiased estimate of the live bytes of everything allocated since
 * sampling began; scaling it to the heap's `used` adds the bias of every
 * way `used` is not live object bytes: old garbage after a young pause
 * (G1, +88% measured), garbage in pages a ZGC cycle did not relocate
 * (+28..42%), whole humongous regions (G1 small regions, +10..21%), and
 * the start-up heap that was never sampled. Only a figure the marking
 * itself found (ZGC's mark-end live) is live object bytes, and the view is
 * scaled to it only where that is the better estimate (choose_scale); a full
 * GC's used is not (dead objects left as fillers, marking_figure). Objects from before sampling began (CDS
 * archive, start-up, or the whole heap before a late attach) are left out,
 * and the profile says how much heap was in use then.
 *
 * Error. The Horvitz-Thompson variance estimate for a site's live bytes is
 * sum S^2 (1 - pi) / pi^2 over its verified samples, pi being the sample's
 * overall inclusion probability; the 95% interval is the estimate +-1.96
 * sqrt(variance). For small objects (S << R) the total's relative standard
 * error is about sqrt(R / live bytes): 5% at 200 MiB live and R = 512 KiB,
 * 2.2% at 1 GiB. Objects far larger than R are sampled with pi ~ 1: a
 * census, weight ~1, no variance; the formula needs no special case. The
 * interval covers sampling error, not deaths since the marking (which the
 * request before each profile keeps to a moment).
 */
#include "agent/prof.h"
#include "agent/units.h"

/* ---- snapshot ------------------------------------------------------------ */

/* A recent sample's expected bytes `b` rest on the survival curve's blocks
 * as u says (survival.h): its share of each block's error. */
static void curve_share(struct live_acc *a, const struct hp_surv_unc *u, double b)
{
	for (unsigned j = 0; j < u->n; j++) {
		a->unc_bytes[u->block[j]] += (float)(b * u->coef[j]);
		a->unc_var_log[u->block[j]] = (float)u->var_log[j];
	}
}

/* The variance the curve's own error adds to a site's recent bytes: per
 * block, (the bytes it stands behind)^2 x the variance of its log share.
 * A bucket of 300 judgments at 0.5 alive has sd 5.8% in its log, and that
 * error moves every sample it serves together: over a cache's thousands
 * of recent samples it outweighs their sampling error, which shrinks as
 * 1/sqrt(samples) (the intervals without it held the truth in 13 of 16 G1
 * profiles under load, not ~15). */
static double curve_var(const struct live_acc *a)
{
	double v = 0;
	for (int k = 0; k < HP_SURV_AGES; k++)
		v += (double)a->unc_bytes[k] * a->unc_bytes[k] * a->unc_var_log[k];
	return v;
}

/* The variance of the log of the survival a verified sample was read at
 * (the span curve, or the curve by age: hp_survival_verified): its
 * blocks' (independent) errors, weighted by their log coefficients. Its
 * square root times the sample's expected alive bytes, summed over a
 * site's verified samples (live_acc.span_sd_bytes), is the curves' share
 * of the site's error, the verified part's counterpart of curve_var. */
static double span_var_log(const struct hp_surv_unc *u)
{
	double v = 0;
	for (unsigned j = 0; j < u->n; j++)
		v += u->coef[j] * u->coef[j] * u->var_log[j];
	return v;
}

void add_live(struct hp_live_entry *e, void *vctx)
{
	struct snap_ctx *c = vctx;
	unsigned age = hp_marks_age_at(&prof.marks, &c->marks_at, e->pause_at_alloc);
	double pi = sample_probability(e->size) / e->thin;
	double w = 1.0 / pi, s = (double)e->size;
	struct live_acc *a = &c->acc[e->site];
	sweep_saw(e, false);
	/* Its site's objects died together after it was born (cohort.h). */
	bool dropped = c->estimating && hp_cohort_dropped(&prof.cohort, e->site, e->time_ns);
	/* Or it was born after the latest drop, no drop found since. */
	bool grows = c->estimating && !dropped && hp_cohort_growing(&prof.cohort, e->site, e->time_ns);
	if (prof.keep_samples && (age == 0 || age >= c->min_age) && !c->recs_oom) {
		struct live_rec *grown = grow_for(c->recs, &c->caprecs, c->nrecs, sizeof(*grown), 1024);
		if (grown) {
			c->recs = grown;
			c->recs[c->nrecs++] = (struct live_rec){ e->site, e->thread, age, age > 0, e->time_ns, e->size,
								  s * w };
		} else {
			c->recs_oom = true;
		}
	}
	if (age == 0) {
		a->recent_objects += w;
		a->recent_bytes += s * w;
		c->recent_bytes += s * w;
		c->recent++;
		if (!c->estimating)
			return;
		/* Not judged yet: alive now with its site's survival at its age. */
		double f = hp_survival_first(&prof.surv, e->site, NULL);
		if (f < 0)
			return;
		double age_now = (double)c->now.samples - clock_at(e->time_ns, &c->now);
		struct hp_surv_unc u;
		double p = hp_survival_by_age_unc(&prof.surv, e->site, age_now, &u);
		if (p < 0)
			p = hp_survival_at_age(f, c->gap, age_now);
		if (dropped)
			p = 0;
		if (grows) {
			p = 1;
			u.n = 0;        /* not the curve's: none of its error */
		}
		struct hp_ht_term t = hp_ht_alive(e->size, e->thin, sampling_interval(), p);
		curve_share(a, &u, t.bytes);
		a->rec_est += t.bytes;
		a->rec_obj += t.objects;
		a->rec_var += t.var;
		c->recent_estimated++;
		return;
	}
	if (age < c->min_age) {
		c->younger++;
		return;
	}
	/* Verified alive by the last marking: alive now with the site's
	 * survival over the time since that marking began. The variance adds
	 * the Bernoulli term of not knowing which survived. */
	double p = 1, sd_log = 0;
	if (c->estimating) {
		struct hp_surv_unc u;
		/* its age when the last marking began (survival.h,
		 * hp_survival_verified) */
		double then = (double)c->now.samples - c->since - clock_at(e->time_ns, &c->now);
		double n, g, q = hp_survival_verified(&prof.surv, e->site, age == 1, then >= 0 ? then : 0, c->since, &u);
		if (q >= 0) {
			p = q;
			if (!grows && !dropped)
				sd_log = sqrt(span_var_log(&u));
		} else if ((g = hp_survival_next(&prof.surv, e->site, &n)) >= 0 && n >= 8) {
			p = hp_survival_since(g, c->gap, c->since);
		} else {
			/* Too few re-judgments yet: the exponential model of the
			 * first ones (memoryless: alive at the marking, alive
			 * now with e^{-lambda since}). */
			double f = hp_survival_first(&prof.surv, e->site, NULL);
			if (f >= 0)
				p = hp_survival_at_age(f, c->gap, c->since);
		}
		if (dropped)
			p = 0;
		if (grows)
			p = 1;
	}
	double b = s * w;
	struct hp_ht_term t = hp_ht_alive(e->size, e->thin, sampling_interval(), p);
	a->age_bytes[age >= 8 ? 3 : age >= 4 ? 2 : age >= 2 ? 1 : 0] += t.bytes;
	a->ver_raw += b;
	a->ver_est += t.bytes;
	a->span_sd_bytes += t.bytes * sd_log;
	a->ver_obj += t.objects;
	a->ver_var += t.var;
	c->verified_raw += b;
	c->counted++;
}

/* A recent sample found dead before a marking covered it: what the model
 * expected of it alive now (finish_estimate). */
static void add_pending(uint32_t site, int64_t born_ns, double bytes, void *vctx)
{
	struct snap_ctx *c = vctx;
	if (site >= c->nslots || hp_cohort_dropped(&prof.cohort, site, born_ns) ||
	    hp_cohort_growing(&prof.cohort, site, born_ns))
		return;         /* died in a drop, or young where the site's young do not die */
	struct hp_surv_unc u;
	double p = hp_survival_by_age_unc(&prof.surv, site, (double)c->now.samples - clock_at(born_ns, &c->now), &u);
	if (p > 0) {
		c->acc[site].rec_cleared += bytes * p;
		curve_share(&c->acc[site], &u, bytes * p);
	}
}

/* Per site, the parts into the view, then the totals. Recent samples: the
 * model's expectation over every sample allocated since the last marking,
 * those found dead meanwhile included (the pending ones, whose ages are
 * known), all of it among the samples still referenced, never above their
 * bytes. (Those found dead carry what the model expected alive: leaving
 * them out read generational collectors 25-40% low, where young
 * collections clear the young dead; giving them the mean survival of the
 * referenced ones, which are younger, read them 10-100% high.) Verified
 * samples: the same with the dead since the marking at the referenced
 * ones' mean (hp_survival_with_cleared). */
void finish_estimate(struct snap_ctx *c, uint32_t nslots)
{
	c->nslots = nslots;
	if (c->estimating)
		hp_survival_each_pending(&prof.surv, add_pending, c);
	for (uint32_t i = 0; i < nslots; i++) {
		struct live_acc *a = &c->acc[i];
		if (!(a->ver_raw > 0) && !(a->rec_est > 0))
			continue;
		double cv = c->estimating ? hp_survival_cleared_since(&prof.surv, i) : 0;
		double kr = 0, kv = 0;
		if (a->rec_est > 0)
			kr = fmin(a->recent_bytes, a->rec_est + a->rec_cleared) / a->rec_est;
		if (a->ver_est > 0)
			kv = hp_survival_with_cleared(a->ver_raw, a->ver_est, cv) / a->ver_est;
		for (int k = 0; k < 4; k++)
			a->age_bytes[k] *= kv;
		a->rec_objects = a->rec_obj * kr;
		a->rec_bytes = a->rec_est * kr;
		/* kr scales what the curve gave; its error with it (the
		 * blocks' bytes count the pending samples' share too, so
		 * scaled by the referenced fraction). */
		double kc = a->rec_est + a->rec_cleared > 0 ? a->rec_bytes / (a->rec_est + a->rec_cleared) : 0;
		a->rec_var2 = a->rec_var * kr * kr + curve_var(a) * kc * kc;
		a->objects = a->ver_obj * kv + a->rec_objects;
		a->bytes = a->ver_est * kv + a->rec_bytes;
		a->var = (a->ver_var + a->span_sd_bytes * a->span_sd_bytes) * kv * kv + a->rec_var2;
		c->bytes += a->bytes;
		c->var += a->var;
		c->verified_est += a->ver_est * kv;
		c->recent_est += a->rec_est * kr;
	}
}

/* What the estimate between markings needs (survival.h): the time between
 * markings and since the last began. Off (the verified samples as found,
 * the recent ones apart) until a marking has judged samples. */
void setup_estimate(struct snap_ctx *c)
{
	int64_t last;
	double n;
	c->estimating = false;
	hp_marks_at_now(&prof.marks, &c->marks_at);
	if (!prof.have_surv || !hp_marks_last_start_at(&prof.marks, &c->marks_at, &last) ||
	    hp_survival_first(&prof.surv, 0, &n) < 0)
		return;
	int64_t mono_now = hp_mono_ns();
	c->now = clock_now();
	int64_t gap = hp_marks_gap_ns_at(&prof.marks, &c->marks_at);
	if (gap <= 0) {
		/* One marking so far: it judged what was allocated since sampling began. */
		int64_t start_mono = mono_now - (c->now.ns - prof.start_realtime_ns);
		gap = last - start_mono;
	}
	if (gap <= 0)
		return;
	c->gap_s = (double)gap / 1e9;
	c->since_s = mono_now > last ? (double)(mono_now - last) / 1e9 : 0;
	/* On the allocation clock: objects die as the program allocates. */
	int64_t last_real = c->now.ns - (mono_now - last);
	double at_last = clock_at(last_real, &c->now);
	c->since = (double)c->now.samples - at_last;
	c->gap = at_last - clock_at(last_real - gap, &c->now);
	if (!(c->gap > 0))
		return;
	c->estimating = true;
}

/* The live bytes the marking that verified the view found, heap-wide
 * (sampled objects or not), when it describes the same moment as the view:
 * a ZGC cycle we requested, the last marking counted (its mark-end live
 * bytes, heapusage/marking.c, read when the request returned: a cycle of
 * the collector's own that began after it and is not counted yet rewrites
 * the heap's figure; with a pause since the request required, such a
 * cycle left a dump's profile unscaled, +1.7% on the total against the
 * heap walk, in a fresh clone's test_steady). Not a full GC's used after compaction: Serial and
 * Parallel leave dead objects in place as fillers (MarkSweepDeadRatio,
 * Parallel's dense prefix), so it is not live object bytes; measured on
 * JDK 25 Parallel, 40-75 MiB of fillers in a 600 MiB heap, and scaling to
 * it put the kept set 10% high (docs/steady-state.md). G1's and
 * Shenandoah's concurrent markings keep theirs per region: none. */
static bool marking_figure(uint64_t *live, char *what, size_t len)
{
	uint32_t horizon;
	if (!hp_marks_horizon(&prof.marks, &horizon))
		return false;
	if (prof.marks.request_live && prof.marks.requests_ok && prof.marks.request_cover == horizon) {
		*live = prof.marks.request_live;
		snprintf(what, len, "%s", prof.marks.request_live_source ? prof.marks.request_live_source : "?");
		return true;
	}
	return false;
}

/* Which estimate the live view gives, and why (for the profile).
 *
 * The Horvitz-Thompson sum over verified samples (HT) is unbiased for
 * what was allocated since sampling began; its relative standard error
 * is sd/HT (about sqrt(R / live bytes) for small objects). When the
 * marking found the live bytes M itself, M less what was never sampled
 * has no sampling error in total, and only the per-site shares keep
 * theirs. What was never sampled, U, lies between 0 and the heap in use
 * when sampling began (B): taking U = B/2 errs by at most B/2. So scale
 * to M - B/2 when that worst case is below half the sampling error
 * (B/2 / (M - B/2) < sd / (2 HT)); otherwise (small live sets, a late
 * attach into a big heap) the unbiased sum is the better estimate. Not
 * when recent samples are more than 1% of the view (the figure and the
 * view would describe different moments). */
double choose_scale(const struct snap_ctx *c, char *out, size_t cap)
{
	uint64_t m;
	char what[240];
	double ht = c->bytes, err = ht > 0 ? sqrt(c->var) / ht : 0;
	if (!prof.o.live)
		return 1.0;
	if (!marking_figure(&m, what, sizeof(what))) {
		snprintf(out, cap, "unscaled (no live-bytes figure from that marking)");
		return 1.0;
	}
	double half_base = (double)prof.baseline_bytes / 2, target = (double)m - half_base;
	if (ht <= 0 || target <= 0) {
		snprintf(out, cap, "unscaled (%s: %llu bytes, not above what was never sampled)", what,
			 (unsigned long long)m);
		return 1.0;
	}
	double bias = half_base / target;
	if (c->recent_bytes > 0.01 * ht) {
		snprintf(out, cap, "unscaled (recent samples are %.1f%% of the view: %s does not cover them)",
			 100 * c->recent_bytes / ht, what);
		return 1.0;
	}
	if (bias >= err / 2) {
		snprintf(out, cap, "unscaled: %s found %llu bytes, but scaling to it could be off by %.1f%% (half the "
			 "%llu bytes in use before sampling, never sampled), not below half the sum's %.1f%% "
			 "sampling error", what, (unsigned long long)m, 100 * bias,
			 (unsigned long long)prof.baseline_bytes, 100 * err);
		return 1.0;
	}
	double scale = target / ht;
	snprintf(out, cap, "scaled x%.4f to %s: %llu bytes live heap-wide, less half the %llu bytes in use "
		 "before sampling began (worst-case bias %.2f%%, vs the unscaled sum's %.1f%% sampling error)",
		 scale, what, (unsigned long long)m, (unsigned long long)prof.baseline_bytes, 100 * bias, 100 * err);
	return scale;
}

/* The recent part anchored to the collector's live figure.
 *
 * Between markings the recent samples are counted by their sites'
 * survival at their age, learnt from past judgments (add_live). Where the
 * samples still referenced outnumber what is alive many times over (under
 * load, every sample since the last marking that no collection has cleared
 * yet), a small survival error at any age is a large error in the view:
 * single-generation ZGC's periodic profiles read -17% to +25% under load.
 *
 * Single-generation ZGC's marking counts the bytes it found alive
 * (marking.c, the heap's last cycle). That total, less what was never
 * sampled (B/2, as choose_scale), less the verified part (what the last
 * marking found of the samples, by survival since), is what the recent
 * samples stand for: their estimate is scaled to it, each site keeping its
 * share, the verified part untouched (it was judged, not modelled). The
 * figure is a cycle behind, and it counts objects the sampler never saw
 * allocated beyond B/2: the anchor trades the model's variance for those.
 * Off, the profile saying why, where no figure is read, on generational
 * ZGC (below), where choose_scale scaled the view, or where the factor
 * would leave 1/16..16 (a figure that far from the model is not trusted). */
void anchor_estimate(struct snap_ctx *c, char *out, size_t cap)
{
	uint64_t f;
	if (!prof.o.live || !c->estimating || !(c->recent_est > 0))
		return;
	if (hp_marking_young_live(prof.probe, &f) == 0) {
		/* Generational ZGC's young figure would do for the recent
		 * samples but for our own: a young marking takes every weak
		 * reference as strong, so each sampled object stays in it, dead
		 * or not, until promoted (+25..35 MiB measured on a ~185 MiB young
		 * live set at 512k under load) and how many are still young is
		 * not known here. */
		snprintf(out, cap, "; recent part not anchored (generational ZGC: its young live figure, %llu bytes, "
			 "counts the sampled objects our weak references hold)", (unsigned long long)f);
		return;
	}
	if (hp_marking_live(prof.probe, &f) != 0) {
		snprintf(out, cap, "; recent part not anchored (no live figure from the collector)");
		return;
	}
	double target = (double)f - (double)prof.baseline_bytes / 2 - c->verified_est;
	double k = target / c->recent_est;
	if (!(k >= 1.0 / 16 && k <= 16)) {
		snprintf(out, cap, "; recent part not anchored: the collector's live figure %llu bytes, less half the "
			 "bytes in use before sampling and the verified part, would scale it x%.3f", (unsigned long long)f, k);
		return;
	}
	c->bytes = 0;
	c->var = 0;
	for (uint32_t i = 0; i < c->nslots; i++) {
		struct live_acc *a = &c->acc[i];
		/* Only the sites with a recent part are written: the table is
		 * ~20 MiB of fresh zero pages, and a write to each cost a
		 * copy-on-write fault and a TLB shootdown across the CPUs
		 * (~0.1 CPU-s a profile on ZGC under load, docs/load-cost.md). */
		if (a->rec_bytes != 0 || a->rec_objects != 0 || a->rec_var2 != 0) {
			a->bytes += a->rec_bytes * (k - 1);
			a->objects += a->rec_objects * (k - 1);
			a->var += a->rec_var2 * (k * k - 1);
		}
		c->bytes += a->bytes;
		c->var += a->var;
	}
	c->recent_est *= k;
	snprintf(out, cap, "; recent part anchored x%.3f to the collector's live figure: %llu bytes at the last "
			 "marking's end, less half the %llu bytes in use before sampling (never sampled) and the verified "
			 "part", k, (unsigned long long)f, (unsigned long long)prof.baseline_bytes);
}

/* The live view in one clause, for the log line and the profile's summary. */
void describe_live_short(char *out, size_t cap, const struct snap_ctx *c, double scale)
{
	if (!prof.o.live) {
		snprintf(out, cap, "live tracking off");
		return;
	}
	char b[32], lo[32], hi[32];
	double half = hp_ht_half95(c->var) * scale, bytes = c->bytes * scale;
	double ver = c->verified_est * scale, share = bytes > 0 ? 100.0 * ver / bytes : 0;
	int len = snprintf(out, cap, "live %s [95%% %s..%s]", hp_bytes_str(bytes, b, sizeof(b)),
			   hp_bytes_str(fmax(0.0, bytes - half), lo, sizeof(lo)), hp_bytes_str(bytes + half, hi, sizeof(hi)));
	if (len < 0 || (size_t)len >= cap)
		return;
	bool marked = markings_counted() > 0;
	if (marked && !(bytes > 0))
		snprintf(out + len, cap - (size_t)len, ", none alive at the last marking, %.1f s before", c->since_s);
	else if (!marked)
		snprintf(out + len, cap - (size_t)len, ", %s", c->estimating ? "estimated: no marking has verified a "
			 "sample yet" : "not verified: no marking yet");
	else if (c->counted && share >= 99.5)
		snprintf(out + len, cap - (size_t)len, ", verified alive by a marking %.1f s before", c->since_s);
	else if (c->counted && share >= 0.5)
		snprintf(out + len, cap - (size_t)len, ", %.0f%% verified alive by a marking %.1f s before, %.0f%% "
			 "estimated from the sites' survival since", share, c->since_s, 100 - share);
	else
		snprintf(out + len, cap - (size_t)len, ", estimated from the sites' survival since a marking %.1f s before",
			 c->since_s);
}

/* What the live view covers, for the profile's comment. */
void describe_live(char *out, size_t cap, const struct snap_ctx *c, double scale, const char *estimate)
{
	if (!prof.o.live) {
		snprintf(out, cap, "live tracking off: inuse values are 0");
		return;
	}
	uint32_t horizon;
	bool have = hp_marks_horizon(&prof.marks, &horizon);
	struct hp_marking mk = { .sz = sizeof(mk) };
	hp_marking(prof.probe, &mk);
	double half = hp_ht_half95(c->var) * scale, bytes = c->bytes * scale;
	double all = c->verified_raw + c->recent_bytes;
	int len = snprintf(out, cap,
			   "inuse: %.0f bytes [95%% %.0f..%.0f] estimated alive now (Horvitz-Thompson sum, %s): %.0f of the %.0f bytes in %llu "
			   "samples verified alive by a marking (the last began %.2f s ago on the allocation clock; "
			   "min_age %u markings, %llu verified samples seen by fewer left out), and %.0f of the recent "
			   "ones, by each site's survival learnt from the markings (markings %.2f s apart; none before "
			   "a marking has judged samples); recent, not yet verified: %.0f bytes (%.1f%%) in %llu samples "
			   "(recent_space, unscaled); ",
			   bytes, fmax(0.0, bytes - half), bytes + half, estimate, c->verified_est * scale, c->verified_raw,
			   (unsigned long long)c->counted, c->since_s, c->min_age, (unsigned long long)c->younger,
			   c->recent_est * scale, c->estimating ? c->gap_s : 0.0, c->recent_bytes,
			   all > 0 ? 100.0 * c->recent_bytes / all : 0.0, (unsigned long long)c->recent);
	if (len < 0 || (size_t)len >= cap)
		return;
	char z_end[400] = "", guard[300] = "";
	if (__atomic_load_n(&prof.marks.z_own, __ATOMIC_ACQUIRE)) {
		z_end[0] = ',';
		z_end[1] = ' ';
		hp_marks_z_end_text(&prof.marks, z_end + 2, sizeof(z_end) - 2);
	} else if (__atomic_load_n(&prof.marks.sh_on, __ATOMIC_ACQUIRE)) {
		z_end[0] = ',';
		z_end[1] = ' ';
		hp_marks_sh_text(&prof.marks, z_end + 2, sizeof(z_end) - 2);
	}
	if (hp_marks_counters_off(&prof.marks)) {
		char why[280];
		hp_marks_counters_text(&prof.marks, why, sizeof(why));
		snprintf(guard, sizeof(guard), "; counters %s", why);
	}
	/* How long before the last marking began the first pause its cover
	 * leaves out ended (a sample taken after pause #cover + 1 ended is not
	 * covered; a marking begins at that pause's end at the earliest):
	 * what was born in between it did not judge (generational ZGC's own
	 * majors: what was not yet promoted, marks.h z_back; 0.00 where the
	 * cover is exact, as G1's and a requested cycle's). */
	char gap[80] = "";
	int64_t last_start, cover_end;
	uint32_t pauses = (uint32_t)atomic_load(&prof.gc_events);
	if (have && hp_marks_last_start(&prof.marks, &last_start) &&
	    hp_marks_pause_end(&prof.marks, horizon + 1, pauses, &cover_end) && last_start >= cover_end)
		snprintf(gap, sizeof(gap), " (the next pause ended %.2f s before the marking began)",
			 (double)(last_start - cover_end) / 1e9);
	if (have)
		len += snprintf(out + len, cap - (size_t)len,
				"markings: %llu (source: %s%s; %s%s: %llu), last covers samples before GC pause #%u of %llu%s; ",
				(unsigned long long)markings_counted(), mk.source ? mk.source : "?", guard,
				prof.marks.canary_state[0] ? prof.marks.canary_state : "canaries not set up yet", z_end,
				(unsigned long long)prof.marks.canary_markings, horizon, (unsigned long long)pauses, gap);
	else
		/* What the cycles showed, here too: a generational
		 * Shenandoah starved of CPU may complete no whole-heap
		 * marking in a run, and its young cycles still count. */
		len += snprintf(out + len, cap - (size_t)len, "no marking since sampling began (source: %s%s; %s%s); ",
				mk.source ? mk.source : "?", guard,
				prof.marks.canary_state[0] ? prof.marks.canary_state : "canaries not set up yet", z_end);
	if (len < 0 || (size_t)len >= cap)
		return;
	if (prof.cohort.nstanding)
		len += snprintf(out + len, cap - (size_t)len,
				"sites whose young samples died together since the last marking (a drop: their "
				"older samples counted dead until a marking judges them): %u; ", prof.cohort.nstanding);
	if (len < 0 || (size_t)len >= cap)
		return;
	uint32_t grows = prof.cohort_on ? hp_cohort_growing_sites(&prof.cohort) : 0;
	if (grows)
		len += snprintf(out + len, cap - (size_t)len,
				"sites whose samples born since their last drop count alive (no drop found since, "
				"the markings agree): %u; ", grows);
	if (len < 0 || (size_t)len >= cap)
		return;
	snprintf(out + len, cap - (size_t)len,
		 "request: %s; not covered: the %llu bytes in use when sampling began (never sampled)",
		 prof.marks.last_request, (unsigned long long)prof.baseline_bytes);
}
