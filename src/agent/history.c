/* Live bytes per site over time, and the leak test.
 *
 * What a record holds. Each tracked sample i stands for B_i = size_i / p_i
 * bytes (p_i its probability of being sampled and kept: estimate.c), with
 * the Horvitz-Thompson variance term v_i = B_i (B_i - size_i), which is
 * size^2 (1 - p) / p^2. At a record, a site's verified live bytes are
 * L = sum of B_i over its samples still referenced that a marking has seen
 * (markings that began after the allocation and ended: marks.h), with
 * variance V = sum of v_i. Recent bytes are the same sum over samples no
 * marking has seen yet (maybe garbage: never in L). Freed bytes are the
 * sum of B_i over samples found dead since the previous record.
 *
 * The change of L between two marking records is what a leak shows. Most
 * samples counted at both records cancel exactly: the change is made of
 * the samples verified in between (added) minus the verified samples that
 * died in between (removed), so its sampling variance is the sum of v_i
 * over those two groups only, not V1 + V2. Each marking record keeps that
 * sum since the previous marking record (change_var); over a window of
 * records the variances of the steps add up (a sample added and removed
 * inside the window is counted twice: the test errs on the cautious side).
 *
 * A sample's weight can also move while it stays counted: a full live
 * table's thinning keeps each entry with probability 1/r at r times its
 * weight (r = 2: live.c) and drops the rest unseen, and a thread's end
 * credits its last sample with what it allocated after it (sample.c).
 * The site's L then moves with no sample added or removed. A thinning's
 * change over N counted entries of B bytes has variance N B^2 (r - 1);
 * the ~N/r kept ones, each moved by m = (r - 1) B, carry it as m^2 r /
 * (r - 1) each (the dropped are never seen again). A credit's move
 * counts m^2, its own scale. Without it, a site of
 * one long-lived sample stepping up at the last record reads as a rise
 * with no sampling error, z = 99: once in CI (generational Shenandoah,
 * a java.lang.Class site whose single ~131 KiB sample gained ~166 KiB,
 * as the main thread's only sample credited at its end would).
 *
 * Whether a sample counted at the previous record: it was alive then (it
 * is found dead only now), so it was counted iff a marking that covers it
 * had completed by then: age_now - (markings_now - markings_then) >= 1,
 * age_now being the markings that cover it now (hp_marks_age).
 *
 * The leak test, per site, over the last HP_HIST_WINDOW marking records
 * (at least 3): z = (L_last - L_first) / sqrt(sum of change_var over the
 * steps), and z_recent the same over the window's second half. A site is a
 * suspect when z >= HP_HIST_SUSPECT_Z = 4 (its live bytes rose by more than
 * sampling error can explain: one-sided p < 3.2e-5 under a normal
 * approximation) and
 * z_recent >= 2 (it is still rising: a cache that grew and levelled off
 * drops out once half the window lies after the plateau), with a positive
 * least-squares slope, which ranks the suspects (bytes per minute).
 *
 * Why 4 and not a textbook 3.5 or 3: the test is made again at every
 * profile, for every site, over overlapping windows. A service writing a
 * profile every 10 s tests each site ~8,600 times a day; at 3.5 (p =
 * 2.3e-4) a site that only turns over would be named a suspect about
 * twice a day, at 4 about once in 4 days. The variance itself is right:
 * 44 windows of `LeakTarget none` on G1 (JDK 17, 8 runs) had an RMS z of
 * 1.02, the largest 2.2; a suite run once saw 3.6 (test_history_jvm none_g1).
 * A leak pays little for it: 1 MiB/s sampled at 64 KiB has z ~ 8 after 3
 * markings 2 s apart.
 *
 * A site whose live set turns over at a constant size has L constant in
 * expectation and z of order 1. What the test cannot tell from a leak: a
 * live set that really grows for a while by design (a warming cache) is
 * reported while it grows. */
#include "agent/history.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int hp_history_init(struct hp_history *h, uint32_t nslots)
{
	memset(h, 0, sizeof(*h));
	h->slot_ix = calloc(nslots, sizeof(*h->slot_ix));
	if (!h->slot_ix)
		return -ENOMEM;
	h->nslots = nslots;
	h->bytes = nslots * sizeof(*h->slot_ix);
	return 0;
}

static void free_ring(struct hp_hist_ring *r)
{
	for (size_t i = 0; i < HP_HIST_RECORDS; i++)
		free(r->rec[i].sites);
}

void hp_history_free(struct hp_history *h)
{
	free_ring(&h->marking);
	free_ring(&h->young);
	free(h->slot_ix);
	free(h->acc);
	memset(h, 0, sizeof(*h));
}

static struct hp_hist_acc *acc_of(struct hp_history *h, uint32_t site)
{
	if (site >= h->nslots)
		return NULL;
	uint32_t ix = h->slot_ix[site];
	if (ix)
		return &h->acc[ix - 1];
	if (h->nacc == h->capacc) {
		uint32_t cap = h->capacc ? h->capacc * 2 : 256;
		struct hp_hist_acc *n = realloc(h->acc, cap * sizeof(*n));
		if (!n)
			return NULL;
		h->bytes += (cap - h->capacc) * sizeof(*n);
		h->acc = n;
		h->capacc = cap;
	}
	struct hp_hist_acc *a = &h->acc[h->nacc++];
	memset(a, 0, sizeof(*a));
	a->site = site;
	h->slot_ix[site] = h->nacc;
	return a;
}

void hp_history_dead(struct hp_history *h, uint32_t site, double bytes, double var, unsigned age_now,
		     uint64_t markings_now)
{
	struct hp_hist_acc *a = acc_of(h, site);
	if (!a)
		return;
	a->freed_young += bytes;
	a->freed_marking += bytes;
	/* Counted in L at the last marking record: its death is part of the
	 * change since. */
	if ((int64_t)age_now - (int64_t)(markings_now - h->last_marking_rec_markings) >= 1)
		a->removed_var += var;
}

void hp_history_alive(struct hp_history *h, uint32_t site, double bytes, double var, unsigned age_now,
		      uint64_t markings_now)
{
	struct hp_hist_acc *a = acc_of(h, site);
	if (!a)
		return;
	if (age_now == 0) {
		a->recent += bytes;
		return;
	}
	a->live += bytes;
	a->var += var;
	/* Verified since the last marking record: part of the change. */
	if ((int64_t)age_now - (int64_t)(markings_now - h->last_marking_rec_markings) < 1)
		a->added_var += var;
}

double hp_history_moved_var(double bytes, double thin_then, double thin)
{
	if (!(thin_then > 0) || !(thin > 0) || thin == thin_then)
		return 0;
	double r = thin / thin_then, m = bytes * (1.0 - 1.0 / r);
	/* A thinning by r = 2^k: the kept carry the dropped ones' share. */
	double k = log2(r);
	if (r >= 2 && fabs(k - round(k)) < 1e-9)
		return m * m * r / (r - 1);
	return m * m;
}

void hp_history_reweighed(struct hp_history *h, uint32_t site, double var)
{
	struct hp_hist_acc *a = acc_of(h, site);
	if (a && var > 0)
		a->added_var += var;
}

bool hp_history_marking_record(const struct hp_history *h, uint64_t markings_now)
{
	return markings_now != h->last_markings;
}

/* Markings closer together than this share a record: the collector's
 * own cycles come several a second under load (ZGC, Shenandoah), and the
 * suspects' test over the last 8 marking records must span long enough
 * for a leak to rise above its sampling error. */
#define MARKING_RECORD_GAP_NS 2000000000

bool hp_history_due(const struct hp_history *h, uint64_t markings_now, int64_t now_ns, uint64_t pauses_now,
		    bool profile)
{
	if (markings_now != h->last_markings)
		return profile || !h->last_marking_ns || now_ns - h->last_marking_ns >= MARKING_RECORD_GAP_NS;
	return pauses_now != h->pauses_seen && now_ns - h->last_young_ns >= 1000000000;
}

static int by_weight_desc(const void *x, const void *y)
{
	const struct hp_hist_site *a = x, *b = y;
	float wa = a->live + a->recent + a->freed, wb = b->live + b->recent + b->freed;
	return wa < wb ? 1 : wa > wb ? -1 : 0;
}

static int by_site(const void *x, const void *y)
{
	const struct hp_hist_site *a = x, *b = y;
	return a->site < b->site ? -1 : a->site > b->site;
}

void hp_history_record(struct hp_history *h, uint64_t markings_now, int64_t now_ns, uint64_t pauses_now,
		       uint64_t heap_used, uint64_t spent_ns)
{
	bool marking = markings_now != h->last_markings;
	struct hp_hist_ring *ring = marking ? &h->marking : &h->young;
	uint32_t cap = marking ? HP_HIST_MARKING_SITES : HP_HIST_YOUNG_SITES;
	struct hp_hist_rec *r = &ring->rec[ring->n % HP_HIST_RECORDS];
	if (r->sites)
		h->bytes -= r->nsites * sizeof(*r->sites);
	free(r->sites);
	memset(r, 0, sizeof(*r));
	r->time_ns = now_ns;
	r->markings = markings_now;
	r->heap_used = heap_used;
	r->collections = (uint32_t)(pauses_now - h->pauses_seen);
	r->sites = malloc(sizeof(*r->sites) * (h->nacc ? h->nacc : 1));
	uint32_t n = 0;
	for (uint32_t i = 0; i < h->nacc; i++) {
		struct hp_hist_acc *a = &h->acc[i];
		double freed = marking ? a->freed_marking : a->freed_young;
		r->live += a->live;
		r->recent += a->recent;
		r->freed += freed;
		if (r->sites && (a->live > 0 || a->recent > 0 || freed > 0 || (marking && a->removed_var > 0)))
			r->sites[n++] = (struct hp_hist_site){ a->site, (float)a->live, (float)a->var, (float)a->recent,
							       (float)freed, (float)(a->added_var + a->removed_var) };
	}
	if (r->sites) {
		if (n > cap) {
			qsort(r->sites, n, sizeof(*r->sites), by_weight_desc);
			n = cap;
		}
		qsort(r->sites, n, sizeof(*r->sites), by_site);
		struct hp_hist_site *shrunk = realloc(r->sites, sizeof(*r->sites) * (n ? n : 1));
		if (shrunk)
			r->sites = shrunk;
		r->nsites = n;
		h->bytes += n * sizeof(*r->sites);
	}
	ring->n++;
	/* Reset what this record consumed; a site with nothing pending leaves
	 * the accumulators. */
	uint32_t keep = 0;
	for (uint32_t i = 0; i < h->nacc; i++) {
		struct hp_hist_acc a = h->acc[i];
		a.live = a.var = a.recent = a.added_var = 0;
		a.freed_young = 0;
		if (marking)
			a.freed_marking = a.removed_var = 0;
		h->slot_ix[a.site] = 0;
		if (a.freed_marking > 0 || a.removed_var > 0) {
			h->acc[keep] = a;
			h->slot_ix[a.site] = ++keep;
		}
	}
	h->nacc = keep;
	h->last_markings = markings_now;
	if (marking) {
		h->last_marking_rec_markings = markings_now;
		h->last_marking_ns = now_ns;
	}
	h->last_young_ns = now_ns;      /* a marking record stands for the young one too */
	h->pauses_seen = pauses_now;
	h->records++;
	h->record_ns += spent_ns;
}

const struct hp_hist_site *hp_history_site(const struct hp_hist_rec *r, uint32_t site)
{
	size_t lo = 0, hi = r->nsites;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->sites[mid].site < site)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nsites && r->sites[lo].site == site ? &r->sites[lo] : NULL;
}

static const struct hp_hist_rec *ring_at(const struct hp_hist_ring *r, uint64_t i)
{
	uint64_t have = r->n < HP_HIST_RECORDS ? r->n : HP_HIST_RECORDS;
	return i < have ? &r->rec[(r->n - have + i) % HP_HIST_RECORDS] : NULL;
}

static uint64_t ring_len(const struct hp_hist_ring *r)
{
	return r->n < HP_HIST_RECORDS ? r->n : HP_HIST_RECORDS;
}

size_t hp_history_count(const struct hp_history *h)
{
	return (size_t)(ring_len(&h->marking) + ring_len(&h->young));
}

const struct hp_hist_rec *hp_history_at(const struct hp_history *h, size_t i, enum hp_hist_kind *kind)
{
	/* Merge by time: walk both rings (small: 2 x 256). */
	uint64_t a = 0, b = 0, na = ring_len(&h->marking), nb = ring_len(&h->young);
	for (size_t k = 0;; k++) {
		const struct hp_hist_rec *ra = a < na ? ring_at(&h->marking, a) : NULL;
		const struct hp_hist_rec *rb = b < nb ? ring_at(&h->young, b) : NULL;
		if (!ra && !rb)
			return NULL;
		bool take_a = ra && (!rb || ra->time_ns <= rb->time_ns);
		if (k == i) {
			*kind = take_a ? HP_HIST_MARKING : HP_HIST_YOUNG;
			return take_a ? ra : rb;
		}
		if (take_a)
			a++;
		else
			b++;
	}
}

/* z of the change between marking records `from` and `to` (indices into
 * the ring, from < to) for a site. */
static double change_z(const struct hp_hist_ring *ring, uint64_t from, uint64_t to, uint32_t site)
{
	const struct hp_hist_site *s0 = hp_history_site(ring_at(ring, from), site);
	const struct hp_hist_site *s1 = hp_history_site(ring_at(ring, to), site);
	double d = (s1 ? s1->live : 0.0) - (s0 ? s0->live : 0.0);
	double var = 0;
	for (uint64_t k = from + 1; k <= to; k++) {
		const struct hp_hist_site *s = hp_history_site(ring_at(ring, k), site);
		if (s)
			var += s->change_var;
	}
	if (var <= 0)
		return d > 0 ? 99.0 : d < 0 ? -99.0 : 0.0;      /* sampled with certainty (p = 1) */
	double z = d / sqrt(var);
	return z > 99 ? 99 : z < -99 ? -99 : z;
}

static int by_growth_desc(const void *x, const void *y)
{
	const struct hp_hist_suspect *a = x, *b = y;
	return a->per_min < b->per_min ? 1 : a->per_min > b->per_min ? -1 : 0;
}

size_t hp_history_suspects(const struct hp_history *h, struct hp_hist_suspect *out, size_t cap)
{
	const struct hp_hist_ring *ring = &h->marking;
	uint64_t len = ring_len(ring);
	if (len < 3 || cap == 0)
		return 0;
	uint64_t w = len < HP_HIST_WINDOW ? len : HP_HIST_WINDOW;
	uint64_t first = len - w, last = len - 1, mid = first + (w - 1) / 2;
	const struct hp_hist_rec *rl = ring_at(ring, last);
	size_t n = 0;
	/* Candidates: sites in the last record (a leak is alive there). */
	for (uint32_t i = 0; i < rl->nsites && n < cap; i++) {
		uint32_t site = rl->sites[i].site;
		if (rl->sites[i].live <= 0)
			continue;
		double z = change_z(ring, first, last, site);
		if (z < HP_HIST_SUSPECT_Z)
			continue;
		double zr = change_z(ring, mid, last, site);
		if (zr < 2.0)
			continue;
		/* least-squares slope of live over time */
		double st = 0, sl = 0, stt = 0, stl = 0;
		double t0 = (double)ring_at(ring, first)->time_ns;
		for (uint64_t k = first; k <= last; k++) {
			const struct hp_hist_rec *r = ring_at(ring, k);
			const struct hp_hist_site *s = hp_history_site(r, site);
			double t = ((double)r->time_ns - t0) / 60e9, l = s ? s->live : 0.0;
			st += t, sl += l, stt += t * t, stl += t * l;
		}
		double m = (double)w, den = m * stt - st * st;
		double slope = den > 0 ? (m * stl - st * sl) / den : 0;
		if (slope <= 0)
			continue;
		out[n++] = (struct hp_hist_suspect){ site, rl->sites[i].live, slope, z, zr, (uint32_t)w,
						     ((double)rl->time_ns - t0) / 1e9 };
	}
	qsort(out, n, sizeof(*out), by_growth_desc);
	return n;
}
