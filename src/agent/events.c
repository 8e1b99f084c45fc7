/* Per-sample events for format=jfr.
 *
 * Each allocation sample and each live sample becomes an event whose weight
 * is the bytes it stands for. Weights are rounded so that per stack and
 * kind they add up to exactly the totals the other formats write: a running
 * sum is rounded, and each event gets the step of the rounded sum (the
 * steps of round(x_1 + ... + x_k) add up to the rounded total). Allocation
 * samples the reservoir let go (samplelog.h) are one more event per stack,
 * the rest of its total. */
#include "agent/prof.h"

static void ev_push(struct events *ev, const struct hp_prof_event *e)
{
	struct hp_prof_event *grown = grow_for(ev->events, &ev->cap, ev->n, sizeof(*grown), 4096);
	if (!grown) {
		ev->oom = true;
		return;
	}
	ev->events = grown;
	ev->events[ev->n++] = *e;
}

static void collect_alloc(const struct hp_alloc_rec *r, void *vctx)
{
	struct events *ev = vctx;
	struct hp_alloc_rec *grown = grow_for(ev->allocs, &ev->capallocs, ev->nallocs, sizeof(*grown), 4096);
	if (!grown) {
		ev->oom = true;
		return;
	}
	ev->allocs = grown;
	ev->allocs[ev->nallocs++] = *r;
}

static int by_slot_alloc(const void *a, const void *b)
{
	const struct hp_alloc_rec *x = a, *y = b;
	return x->site != y->site ? (x->site < y->site ? -1 : 1) : (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

static int by_slot_live(const void *a, const void *b)
{
	const struct live_rec *x = a, *y = b;
	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	if (x->verified != y->verified)
		return x->verified ? -1 : 1;
	return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

/* One stack's events of one kind, their weights rounded as they come:
 * each event gets the step of the rounded running sum, so the group adds
 * up to the rounded sum of its real weights; ev_group_end then gives the
 * last one whatever makes the group's sum exactly the total the other
 * formats write (a rounding step, from the order of the additions). */
struct ev_group {
	size_t first;           /* its first event in ev->events */
	double run;             /* sum of the real weights so far */
	int64_t given;          /* sum of the rounded weights so far */
};

static void ev_group_push(struct events *ev, struct ev_group *g, struct hp_prof_event e, double weight)
{
	g->run += weight;
	int64_t upto = llround(g->run);
	e.weight = upto - g->given;
	g->given = upto;
	ev_push(ev, &e);
}

static void ev_group_end(struct events *ev, const struct ev_group *g, int64_t target)
{
	if (ev->n > g->first)
		ev->events[ev->n - 1].weight += target - g->given;
}

int build_events(struct events *ev, struct snap_ctx *ctx, const struct hp_prof_sample *samples,
			const uint32_t *slot_sample, uint32_t nslots, double scale, int64_t now_ns)
{
	/* Allocation samples, by stack. */
	hp_samplelog_each(&prof.log, collect_alloc, ev);
	if (ev->oom)
		return -ENOMEM;
	qsort(ev->allocs, ev->nallocs, sizeof(*ev->allocs), by_slot_alloc);
	size_t k = 0;
	for (uint32_t slot = 0; slot < nslots && !ev->oom; slot++) {
		if (!slot_sample[slot]) {
			while (k < ev->nallocs && ev->allocs[k].site == slot)
				k++;
			continue;
		}
		uint32_t si = slot_sample[slot] - 1;
		struct ev_group g = { .first = ev->n };
		for (; k < ev->nallocs && ev->allocs[k].site == slot; k++) {
			const struct hp_alloc_rec *r = &ev->allocs[k];
			ev_group_push(ev, &g, (struct hp_prof_event){ si, r->thread, r->time_ns, (int64_t)r->size, 0, 0,
								      HP_EVENT_ALLOC }, r->weight);
		}
		int64_t rest = samples[si].alloc_bytes - g.given;
		if (rest > 0)   /* what the reservoir let go: one remainder event */
			ev_push(ev, &(struct hp_prof_event){ si, HP_PROF_NO_THREAD, now_ns, 0, rest, 0, HP_EVENT_ALLOC });
		else
			ev_group_end(ev, &g, samples[si].alloc_bytes);
	}
	/* Live samples, by stack: verified first, then recent. */
	qsort(ctx->recs, ctx->nrecs, sizeof(*ctx->recs), by_slot_live);
	for (size_t i = 0; i < ctx->nrecs && !ev->oom;) {
		uint32_t slot = ctx->recs[i].slot;
		bool verified = ctx->recs[i].verified;
		struct ev_group g = { .first = ev->n };
		uint32_t si = slot < nslots ? slot_sample[slot] : 0;
		for (; i < ctx->nrecs && ctx->recs[i].slot == slot && ctx->recs[i].verified == verified; i++) {
			const struct live_rec *r = &ctx->recs[i];
			if (si)
				ev_group_push(ev, &g,
					      (struct hp_prof_event){ si - 1, r->thread, r->time_ns, (int64_t)r->size, 0,
								      (int32_t)r->markings,
								      verified ? HP_EVENT_LIVE : HP_EVENT_RECENT },
					      verified ? r->weight * scale : r->weight);
		}
		if (si)
			ev_group_end(ev, &g, verified ? samples[si - 1].inuse_bytes : samples[si - 1].recent_bytes);
	}
	if (ev->oom || ctx->recs_oom)
		return -ENOMEM;
	/* Threads: the names are copied while the table is locked. */
	pthread_mutex_lock(&prof.log.lock);
	ev->nthreads = prof.log.nthreads;
	ev->threads = calloc(ev->nthreads + 1, sizeof(*ev->threads));
	for (size_t i = 0; ev->threads && i < ev->nthreads; i++) {
		ev->threads[i].os_tid = prof.log.threads[i].tid;
		ev->threads[i].name = strdup(prof.log.threads[i].name);
	}
	pthread_mutex_unlock(&prof.log.lock);
	if (!ev->threads)
		return -ENOMEM;
	ev->have_heap = heap_figure(&ev->heap, now_ns);
	return 0;
}

void free_events(struct events *ev)
{
	for (size_t i = 0; ev->threads && i < ev->nthreads; i++)
		free((char *)ev->threads[i].name);
	free(ev->threads);
	free(ev->events);
	free(ev->allocs);
}
