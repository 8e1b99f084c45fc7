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

/* `name` (sanitised) followed by `suffix` verbatim ("" for code frames,
 * "_[i]" for the class frame), as the line will show it. */
static int lb_name(struct linebuf *b, const char *name, const char *suffix)
{
	if (!name || !*name)
		name = "[unknown]";
	size_t n = strlen(name), m = strlen(suffix);
	b->len = 0;
	if (lb_reserve(b, n + m) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		b->s[b->len++] = (c == ';' || c < 0x20 || c == 0x7f) ? '_' : (char)c;
	}
	memcpy(b->s + b->len, suffix, m + 1);
	b->len += m;
	return 0;
}

/* Stacks are merged by the names they show, but not kept as lines (javac
 * at 32k: ~9k stacks of ~45 frames, 20 MB of text): each shown name gets
 * an id, and a stack's key is its ids, root first, each as `width` bytes
 * of base-255 digits + 1 (never a NUL), so that the string interner can
 * hold and merge them. The lines are spelled out only as they are
 * written. */
static void key_put(struct linebuf *k, uint32_t id, int width)
{
	for (int d = width - 1; d >= 0; d--) {
		k->s[k->len + (size_t)d] = (char)(id % 255 + 1);
		id /= 255;
	}
	k->len += (size_t)width;
}

static uint32_t key_get(const unsigned char *k, int width)
{
	uint32_t id = 0;
	for (int d = 0; d < width; d++)
		id = id * 255 + (uint32_t)(k[d] - 1);
	return id;
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

	struct hp_intern names, stacks;
	struct linebuf line = { 0 }, key = { 0 };
	int64_t *sums = NULL;
	uint32_t *frame_name = NULL, *class_name = NULL, unknown = 0;
	size_t nsums = 0;
	bool names_ok = hp_intern_init(&names, (uint32_t)p->nframes + 64, true) == 0;
	if (!names_ok || hp_intern_init(&stacks, (uint32_t)p->nsamples, true) < 0) {
		if (names_ok)
			hp_intern_free(&names);
		hp_out_reason(err, errlen, path, -ENOMEM);
		return -ENOMEM;
	}
	/* Each frame's and each sample's class name, as shown, once. */
	frame_name = malloc(sizeof(*frame_name) * (p->nframes + 1));
	class_name = malloc(sizeof(*class_name) * (p->nsamples + 1));
	if (!frame_name || !class_name)
		rc = -ENOMEM;
	if (rc == 0 && (rc = lb_name(&line, NULL, "")) == 0)
		rc = hp_intern(&names, line.s, &unknown);
	for (size_t f = 0; f < p->nframes && rc == 0; f++)
		if ((rc = lb_name(&line, p->frames[f].function, "")) == 0)
			rc = hp_intern(&names, line.s, &frame_name[f]);
	for (size_t i = 0; i < p->nsamples && rc == 0; i++) {
		const char *c = p->samples[i].class_name;
		class_name[i] = UINT32_MAX;
		if (c && *c && (rc = lb_name(&line, c, "_[i]")) == 0)
			rc = hp_intern(&names, line.s, &class_name[i]);
	}
	int width = 1;
	for (uint32_t n = names.count; n >= 255; n /= 255)
		width++;
	for (size_t i = 0; i < p->nsamples && rc == 0; i++) {
		const struct hp_prof_sample *s = &p->samples[i];
		int64_t v = view == HP_VIEW_ALLOC ? s->alloc_bytes : s->inuse_bytes;
		if (v == 0)
			continue;
		key.len = 0;
		if ((rc = lb_reserve(&key, (s->nframes + 2) * (size_t)width)) < 0)
			break;
		if (!s->nframes)
			key_put(&key, unknown, width);
		/* Samples list the leaf first; folded stacks start at the root. */
		for (size_t j = s->nframes; j-- > 0;)
			key_put(&key, frame_name[hp_prof_frame(p, s, j)], width);
		if (class_name[i] != UINT32_MAX)
			key_put(&key, class_name[i], width);
		key.s[key.len] = '\0';
		uint32_t id;
		rc = hp_intern(&stacks, key.s, &id);
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
	free(key.s);
	free(frame_name);
	free(class_name);

	if (rc == 0) {
		struct hp_out out;
		rc = hp_out_open(&out, path, err, errlen);
		if (rc == 0) {
			for (uint32_t id = 0; id < stacks.count; id++) {
				if (sums[id] <= 0)
					continue;
				const unsigned char *k = (const unsigned char *)stacks.keys[id];
				for (size_t at = 0; k[at]; at += (size_t)width) {
					if (at)
						hp_out_write(&out, ";", 1);
					hp_out_str(&out, names.keys[key_get(k + at, width)]);
				}
				hp_out_printf(&out, " %" PRId64 "\n", sums[id]);
			}
			rc = hp_out_commit(&out, err, errlen);
		}
	} else {
		hp_out_reason(err, errlen, path, rc);
	}
	free(sums);
	hp_intern_free(&stacks);
	hp_intern_free(&names);
	return rc;
}
