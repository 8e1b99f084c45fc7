/* format=text: the live heap report for terminals and CI logs.
 *
 * Layout (a contract for scripts, checked by the tests):
 *   heapprobe live heap report
 *   <key>: <value> lines (time, live view, heap figure, sampled view, history)
 *   (blank) "top live sites ..." then one block per site: a numbered line
 *     with its bytes and class, then its frames, leaf first, indented
 *   (blank) "last records ..." what the last collections freed (with history)
 *   (blank) "notes:" and the profile's comments, one per line
 *   (blank) "leak suspects:" and one line per suspect, most growth per
 *     minute first: "<rank>. <leaf frame pkg.Class.method> ..."; the file
 *     ends there, so with no suspect the section is the header alone. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/profile.h"
#include "agent/units.h"
#include "agent/writer.h"

#define TOP_SITES 20
#define FRAMES_SHOWN 8

static const char *duration_str(double s, char *buf, size_t cap)
{
	if (s < 120)
		snprintf(buf, cap, "%.0fs", s);
	else if (s < 7200)
		snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
	else
		snprintf(buf, cap, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
	return buf;
}

static int by_view_desc(const void *x, const void *y)
{
	const struct hp_prof_sample *a = *(const struct hp_prof_sample *const *)x;
	const struct hp_prof_sample *b = *(const struct hp_prof_sample *const *)y;
	int64_t va = a->inuse_bytes + a->recent_bytes, vb = b->inuse_bytes + b->recent_bytes;
	return va < vb ? 1 : va > vb ? -1 : 0;
}

static const char *leaf(const struct hp_profile *p, const struct hp_prof_sample *s)
{
	return s->nframes ? hp_str(p->frames[hp_prof_frame(p, s, 0)].function) : "(no Java frame)";
}

static void write_frame(struct hp_out *o, const struct hp_frame *f)
{
	hp_out_printf(o, "       %s", hp_str(f->function));
	if (f->file && f->file[0])
		hp_out_printf(o, " (%s:%d)", f->file, f->line);
	hp_out_str(o, "\n");
}

int hp_write_text(const struct hp_profile *p, const char *path, char *err, size_t errlen)
{
	p = hp_profile_or_empty(p);
	int rc = hp_profile_check(p, path, err, errlen);
	if (rc)
		return rc;
	struct hp_out o;
	if ((rc = hp_out_open(&o, path, err, errlen)))
		return rc;
	char a[32], b[32], c[32], d[32];
	hp_out_str(&o, "heapprobe live heap report\n");
	int64_t at = p->time_nanos + p->duration_nanos;
	time_t t = (time_t)(at / 1000000000);
	struct tm tm;
	localtime_r(&t, &tm);
	/* To the millisecond: a live set that changes by tens of MiB a second
	 * (a list filled, then dropped) is compared with the program's own
	 * account at that moment, which a whole second cannot place. */
	char day[32], zone[8];
	strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm);
	strftime(zone, sizeof(zone), "%z", &tm);
	hp_out_printf(&o, "time: %s.%03d %s (sampling for %s)\n", day, (int)(at / 1000000 % 1000), zone,
		      duration_str(p->duration_nanos / 1e9, a, sizeof(a)));
	if (p->summary)
		hp_out_printf(&o, "live view: %s\n", p->summary);
	if (p->heap)
		hp_out_printf(&o, "live heap after the last collection: %s (%s, from %s, collection #%u)\n",
			      hp_bytes_str((double)p->heap->used, a, sizeof(a)), hp_str(p->heap->kind),
			      hp_str(p->heap->source), p->heap->gc_id);
	double inuse = 0, recent = 0, alloc = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		inuse += (double)p->samples[i].inuse_bytes;
		recent += (double)p->samples[i].recent_bytes;
		alloc += (double)p->samples[i].alloc_bytes;
	}
	hp_out_printf(&o, "sampled view: %s verified alive by a marking, %s recent (not yet seen by a marking), "
		      "%s allocated; interval %lld bytes\n", hp_bytes_str(inuse, a, sizeof(a)), hp_bytes_str(recent, b, sizeof(b)),
		      hp_bytes_str(alloc, c, sizeof(c)), (long long)p->period);
	const struct hp_prof_history *h = p->history;
	if (h && h->npoints) {
		size_t young = 0;
		for (size_t i = 0; i < h->npoints; i++)
			young += h->points[i].kind == HP_POINT_YOUNG;
		double span = (double)(h->points[h->npoints - 1].time_nanos - h->points[0].time_nanos) / 1e9;
		hp_out_printf(&o, "history: %zu marking records and %zu young-collection records over %s (%s held)\n",
			      h->npoints - young, young, duration_str(span, a, sizeof(a)),
			      hp_bytes_str((double)h->bytes, b, sizeof(b)));
	} else {
		hp_out_str(&o, "history: none (live tracking off, or no collection yet)\n");
	}

	/* top live sites */
	const struct hp_prof_sample **order = malloc(sizeof(*order) * (p->nsamples + 1));
	if (!order) {
		hp_out_fail(&o, -ENOMEM);
		return hp_out_commit(&o, err, errlen);
	}
	for (size_t i = 0; i < p->nsamples; i++)
		order[i] = &p->samples[i];
	qsort(order, p->nsamples, sizeof(*order), by_view_desc);
	hp_out_str(&o, "\ntop live sites (verified bytes +- 95% sampling error; recent; allocated; class; stack, leaf first):\n");
	size_t shown = 0;
	for (size_t i = 0; i < p->nsamples && shown < TOP_SITES; i++) {
		const struct hp_prof_sample *s = order[i];
		if (s->inuse_bytes + s->recent_bytes <= 0)
			break;
		hp_out_printf(&o, "%3zu. %s +- %s  recent %s  alloc %s  %s\n", ++shown,
			      hp_bytes_str((double)s->inuse_bytes, a, sizeof(a)),
			      hp_bytes_str((double)(s->inuse_bytes_hi - s->inuse_bytes_lo) / 2, b, sizeof(b)),
			      hp_bytes_str((double)s->recent_bytes, c, sizeof(c)), hp_bytes_str((double)s->alloc_bytes, d, sizeof(d)),
			      s->class_name && s->class_name[0] ? s->class_name : "-");
		for (size_t k = 0; k < s->nframes && k < FRAMES_SHOWN; k++)
			write_frame(&o, &p->frames[hp_prof_frame(p, s, k)]);
		if (s->nframes > FRAMES_SHOWN)
			hp_out_printf(&o, "       ... %zu more\n", s->nframes - FRAMES_SHOWN);
	}
	if (!shown)
		hp_out_str(&o, "  none yet\n");
	free(order);

	/* What the last collections freed (history records, newest last). */
	if (h && h->npoints) {
		size_t from = h->npoints > 12 ? h->npoints - 12 : 0;
		hp_out_str(&o, "\nlast records (what the collections freed: sampled objects found dead since the record "
			      "before, for a marking since the marking before):\n");
		hp_out_str(&o, "     time  record    collections  heap after GC   verified live      recent          freed\n");
		for (size_t i = from; i < h->npoints; i++) {
			const struct hp_prof_point *pt = &h->points[i];
			char e[32];
			hp_out_printf(&o, "  %6.1fs  %-8s  %11u  %13s  %14s  %10s  %13s\n",
				      (double)(pt->time_nanos - h->points[0].time_nanos) / 1e9,
				      pt->kind == HP_POINT_MARKING ? "marking" : "young", pt->collections,
				      pt->heap_used ? hp_bytes_str((double)pt->heap_used, a, sizeof(a)) : "-",
				      hp_bytes_str(pt->live, b, sizeof(b)), hp_bytes_str(pt->recent, c, sizeof(c)),
				      hp_bytes_str(pt->freed, e, sizeof(e)));
		}
	}

	if (p->ncomments) {
		hp_out_str(&o, "\nnotes:\n");
		for (size_t i = 0; i < p->ncomments; i++)
			hp_out_printf(&o, "  %s\n", hp_str(p->comments[i]));
	}

	/* Last: nothing may follow the suspects. */
	hp_out_str(&o, "\nleak suspects:\n");
	for (size_t i = 0; h && i < h->nsuspects; i++) {
		const struct hp_prof_suspect *x = &h->suspects[i];
		const struct hp_prof_sample *s = &p->samples[x->sample];
		double ages = x->age_bytes[0] + x->age_bytes[1] + x->age_bytes[2] + x->age_bytes[3];
		char note[200] = "", base[32];
		if (x->may_be_replacement)
			snprintf(note, sizeof(note), "; late attach: may be objects older than the sampling being replaced, "
				 "until its live bytes pass the %s in use when sampling began",
				 hp_bytes_str((double)x->baseline_bytes, base, sizeof(base)));
		hp_out_printf(&o, "%zu. %s  +%s/min over %u markings (%s), z=%.1f (second half z=%.1f), live %s, %s; "
			      "age in markings survived: 1: %.0f%%, 2-3: %.0f%%, 4-7: %.0f%%, 8+: %.0f%%%s\n",
			      i + 1, leaf(p, s), hp_bytes_str(x->per_min, a, sizeof(a)), x->window,
			      duration_str(x->span_s, b, sizeof(b)), x->z, x->z_recent, hp_bytes_str(x->live, c, sizeof(c)),
			      s->class_name && s->class_name[0] ? s->class_name : "-",
			      ages > 0 ? 100 * x->age_bytes[0] / ages : 0, ages > 0 ? 100 * x->age_bytes[1] / ages : 0,
			      ages > 0 ? 100 * x->age_bytes[2] / ages : 0, ages > 0 ? 100 * x->age_bytes[3] / ages : 0, note);
	}
	return hp_out_commit(&o, err, errlen);
}
