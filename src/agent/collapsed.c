/* hp_write_collapsed: "root;caller;...;leaf <bytes>\n", the folded-stack
 * format of Brendan Gregg's stackcollapse scripts, read by flamegraph.pl,
 * speedscope and most flame graph tools.
 *
 * Like async-profiler's collapsed output, a frame is its function name
 * only ("java.util.ArrayList.grow"): no file, no line. Lines would split
 * one method into as many towers as it has allocation sites, which is what
 * the pprof output is for. Stacks that become identical that way are
 * merged into one line, in order of first appearance; lines whose value is
 * zero (or negative) are left out, since folded-stack tools cannot draw
 * them. A sample without frames, and a frame without a name, appear as
 * "[unknown]". The format has no escape mechanism, so ';' and control
 * characters inside a name become '_' (spaces are fine: readers take the
 * value after the last space).
 *
 * The allocated class is the leaf frame, "byte[]_[i]", as async-profiler
 * writes it: flamegraph.pl colours "_[i]" frames apart from code, and a
 * reader can total the live heap per class by the last frame.
 */
#include "agent/profile.h"
#include "agent/writer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct linebuf {
	char *s;
	size_t len, cap;
};

static int lb_reserve(struct linebuf *b, size_t more)
{
	if (b->len + more + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + more + 1)
		cap *= 2;
	char *s = realloc(b->s, cap);
	if (!s)
		return -ENOMEM;
	b->s = s;
	b->cap = cap;
	return 0;
}

/* Appends ";name" (sanitised) and then `suffix` verbatim ("" for code
 * frames, "_[i]" for the class frame). */
static int lb_frame(struct linebuf *b, const char *name, const char *suffix)
{
	if (!name || !*name)
		name = "[unknown]";
	size_t n = strlen(name), m = strlen(suffix);
	if (lb_reserve(b, n + m + 1) < 0)
		return -ENOMEM;
	if (b->len)
		b->s[b->len++] = ';';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		b->s[b->len++] = (c == ';' || c < 0x20 || c == 0x7f) ? '_' : (char)c;
	}
	memcpy(b->s + b->len, suffix, m + 1);
	b->len += m;
	return 0;
}

int hp_write_collapsed(const struct hp_profile *p, enum hp_profile_view view, const char *path, char *err,
		       size_t errlen)
{
	int rc = hp_profile_check(p, path, err, errlen);
	if (rc < 0)
		return rc;
	if (view != HP_VIEW_ALLOC && view != HP_VIEW_INUSE) {
		if (err && errlen)
			snprintf(err, errlen, "cannot write %s: unknown view %d", path, (int)view);
		return -EINVAL;
	}
	p = hp_profile_or_empty(p);

	struct hp_intern stacks;
	struct linebuf line = { 0 };
	int64_t *sums = NULL;
	size_t nsums = 0;
	if (hp_intern_init(&stacks, (uint32_t)p->nsamples, true) < 0) {
		hp_out_reason(err, errlen, path, -ENOMEM);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nsamples && rc == 0; i++) {
		const struct hp_prof_sample *s = &p->samples[i];
		int64_t v = view == HP_VIEW_ALLOC ? s->alloc_bytes : s->inuse_bytes;
		if (v == 0)
			continue;
		line.len = 0;
		if (!s->nframes)
			rc = lb_frame(&line, NULL, "");
		/* Samples list the leaf first; folded stacks start at the root. */
		for (size_t j = s->nframes; j-- > 0 && rc == 0;)
			rc = lb_frame(&line, p->frames[hp_prof_frame(p, s, j)].function, "");
		if (rc == 0 && s->class_name && *s->class_name)
			rc = lb_frame(&line, s->class_name, "_[i]");
		uint32_t id;
		if (rc == 0)
			rc = hp_intern(&stacks, line.s, &id);
		if (rc == 0 && id >= nsums) {
			size_t n = nsums ? nsums * 2 : 64;
			int64_t *grown = realloc(sums, n * sizeof(*sums));
			if (!grown) {
				rc = -ENOMEM;
				break;
			}
			memset(grown + nsums, 0, (n - nsums) * sizeof(*sums));
			sums = grown;
			nsums = n;
		}
		if (rc == 0)
			sums[id] += v;
	}
	free(line.s);

	if (rc == 0) {
		struct hp_out out;
		rc = hp_out_open(&out, path, err, errlen);
		if (rc == 0) {
			for (uint32_t id = 0; id < stacks.count; id++)
				if (sums[id] > 0) {
					/* Stacks outgrow printf's stack buffer: no copy. */
					hp_out_str(&out, stacks.keys[id]);
					hp_out_printf(&out, " %" PRId64 "\n", sums[id]);
				}
			rc = hp_out_commit(&out, err, errlen);
		}
	} else {
		hp_out_reason(err, errlen, path, rc);
	}
	free(sums);
	hp_intern_free(&stacks);
	return rc;
}
