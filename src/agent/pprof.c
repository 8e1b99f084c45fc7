/* hp_write_pprof: the profile as a gzip-compressed perftools.profiles.Profile
 * (proto/profile.proto), the format of `go tool pprof` and the tools built
 * on it.
 *
 * Conventions, which the tests and docs/formats.md hold us to:
 * - sample_type: alloc_objects/count, alloc_space/bytes, inuse_objects/count,
 *   inuse_space/bytes, in that order (the order of Go heap profiles, so that
 *   pprof's -sample_index names work as Go users expect), then
 *   recent_objects/count, recent_space/bytes (samples no marking has seen
 *   yet); default_sample_type inuse_space; period_type space/bytes.
 * - One Location per distinct (function, file, line), with one Line; one
 *   Function per distinct (function, file), name = system_name. Only frames
 *   a sample references get a Location. No Mapping: Java frames have no
 *   address, and locations that carry functions need no symbolization.
 * - ids count from 1 (0 means "none" in the format); string_table[0] = "".
 * - Samples whose class_name is non-empty carry a string label "class".
 * - Samples come first in the file, each packed and compressed as it is
 *   made, then the rest of the message (field order is free in protobuf;
 *   a repeated field's elements may be anywhere): the profile of a program
 *   with many distinct stacks is never held whole in memory (javac at 32k:
 *   ~400k frame references, 3 MB of location ids, were built at exit).
 */
#include "agent/profile.h"
#include "agent/writer.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZLIB_CONST
#include <zlib.h>

#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;

/* Everything the message points to, freed in one place. The protobuf-c
 * structs only borrow: strings stay in the hp_profile (or the interner). */
struct pb_build {
	PbProfile msg;
	PbValueType types[HP_PPROF_TYPES], period_type;
	PbValueType *type_ptrs[HP_PPROF_TYPES];
	int ntypes;                     /* HP_PPROF_TYPES, or the 4 of a Go heap profile */
	struct hp_intern strings;       /* string table, borrowed keys */
	struct hp_intern func_keys;     /* "name_sid:file_sid" -> function index */
	struct hp_intern loc_keys;      /* "function_id:line" -> location index */
	uint64_t *frame_loc;            /* frame index -> location id, 0 = not yet */
	PbFunction *funcs;
	PbFunction **func_ptrs;
	PbLocation *locs;
	PbLocation **loc_ptrs;
	PbLine *lines;
	PbLine **line_ptrs;
	int64_t class_key;              /* string id of "class" */
	int64_t *comments;
};

static void build_free(struct pb_build *b)
{
	hp_intern_free(&b->strings);
	hp_intern_free(&b->func_keys);
	hp_intern_free(&b->loc_keys);
	free(b->frame_loc);
	free(b->funcs);
	free(b->func_ptrs);
	free(b->locs);
	free(b->loc_ptrs);
	free(b->lines);
	free(b->line_ptrs);
	free(b->comments);
}

/* calloc that takes 0 elements as success: an empty profile is valid. */
static void *alloc_n(size_t n, size_t size, int *rc)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		*rc = -ENOMEM;
	return p;
}

static int sid(struct pb_build *b, const char *s, int64_t *out)
{
	uint32_t id;
	int rc = hp_intern(&b->strings, s, &id);
	*out = id;
	return rc;
}

/* Index of the composite key "a:b" in `keys`; *is_new when just added. */
static int key_pair(struct hp_intern *keys, uint64_t a, int64_t bv, uint32_t *id, int *is_new)
{
	char key[48];
	snprintf(key, sizeof(key), "%llu:%lld", (unsigned long long)a, (long long)bv);
	uint32_t before = keys->count;
	int rc = hp_intern(keys, key, id);
	*is_new = keys->count != before;
	return rc;
}

/* The Location id of frame fi, creating its Function and Location the
 * first time a sample references it. */
static int frame_location(struct pb_build *b, const struct hp_profile *p, uint32_t fi, uint64_t *loc_id)
{
	if (b->frame_loc[fi]) {
		*loc_id = b->frame_loc[fi];
		return 0;
	}
	const struct hp_frame *f = &p->frames[fi];
	int64_t name, file;
	uint32_t fidx, lidx;
	int is_new, rc;
	if ((rc = sid(b, f->function, &name)) < 0 || (rc = sid(b, f->file, &file)) < 0)
		return rc;
	if ((rc = key_pair(&b->func_keys, (uint64_t)name, file, &fidx, &is_new)) < 0)
		return rc;
	if (is_new) {
		PbFunction *fn = &b->funcs[fidx];
		perftools__profiles__function__init(fn);
		fn->id = fidx + 1;
		fn->name = name;
		/* Java names are already what the system calls them. */
		fn->system_name = name;
		fn->filename = file;
		b->func_ptrs[fidx] = fn;
	}
	if ((rc = key_pair(&b->loc_keys, fidx + 1, f->line, &lidx, &is_new)) < 0)
		return rc;
	if (is_new) {
		PbLine *ln = &b->lines[lidx];
		perftools__profiles__line__init(ln);
		ln->function_id = fidx + 1;
		ln->line = f->line;
		b->line_ptrs[lidx] = ln;
		PbLocation *loc = &b->locs[lidx];
		perftools__profiles__location__init(loc);
		loc->id = lidx + 1;
		loc->n_line = 1;
		loc->line = &b->line_ptrs[lidx];
		b->loc_ptrs[lidx] = loc;
	}
	*loc_id = b->frame_loc[fi] = lidx + 1;
	return 0;
}

/* Everything but the samples: value types, period, times. Functions,
 * locations and strings grow as samples are written (write_samples) and
 * are attached by finish(). */
static int build(struct pb_build *b, const struct hp_profile *p)
{
	int rc = 0;
	PbProfile *m = &b->msg;
	perftools__profiles__profile__init(m);
	/* Distinct frames bound the functions and locations, and the
	 * strings with the comments, labels and fixed names. */
	uint32_t expect = (uint32_t)(p->nframes * 2 + p->ncomments + 16);
	if (hp_intern_init(&b->strings, expect, false) < 0 ||
	    hp_intern_init(&b->func_keys, (uint32_t)p->nframes, true) < 0 ||
	    hp_intern_init(&b->loc_keys, (uint32_t)p->nframes, true) < 0)
		return -ENOMEM;
	b->frame_loc = alloc_n(p->nframes, sizeof(*b->frame_loc), &rc);
	b->funcs = alloc_n(p->nframes, sizeof(*b->funcs), &rc);
	b->func_ptrs = alloc_n(p->nframes, sizeof(*b->func_ptrs), &rc);
	b->locs = alloc_n(p->nframes, sizeof(*b->locs), &rc);
	b->loc_ptrs = alloc_n(p->nframes, sizeof(*b->loc_ptrs), &rc);
	b->lines = alloc_n(p->nframes, sizeof(*b->lines), &rc);
	b->line_ptrs = alloc_n(p->nframes, sizeof(*b->line_ptrs), &rc);
	b->comments = alloc_n(p->ncomments, sizeof(*b->comments), &rc);
	if (rc < 0)
		return rc;

	/* "" first: index 0 is the format's "no string". */
	int64_t empty, count, bytes, space;
	static const char *const type_names[HP_PPROF_TYPES] = { "alloc_objects", "alloc_space", "inuse_objects",
								 "inuse_space", "recent_objects", "recent_space" };
	if ((rc = sid(b, "", &empty)) < 0 || (rc = sid(b, "count", &count)) < 0 ||
	    (rc = sid(b, "bytes", &bytes)) < 0 || (rc = sid(b, "space", &space)) < 0)
		return rc;
	for (int i = 0; i < b->ntypes; i++) {
		perftools__profiles__value_type__init(&b->types[i]);
		if ((rc = sid(b, type_names[i], &b->types[i].type)) < 0)
			return rc;
		b->types[i].unit = (i % 2) ? bytes : count;
		b->type_ptrs[i] = &b->types[i];
	}
	m->n_sample_type = (size_t)b->ntypes;
	m->default_sample_type = b->types[3].type;     /* inuse_space, as Go heap profiles default to */
	m->sample_type = b->type_ptrs;
	perftools__profiles__value_type__init(&b->period_type);
	b->period_type.type = space;
	b->period_type.unit = bytes;
	m->period_type = &b->period_type;
	m->period = p->period;
	/* The moment the profile describes (its end), as Go stamps its heap
	 * profiles: two periodic profiles compared with -diff_base show the
	 * growth between their times. The duration is the sampling before. */
	m->time_nanos = p->time_nanos + p->duration_nanos;
	m->duration_nanos = p->duration_nanos;
	return sid(b, "class", &b->class_key);
}

/* Profile.sample is field 2, length-delimited. */
#define SAMPLE_TAG ((2u << 3) | 2u)

/* Each sample packed into `sink` as a Profile.sample field as soon as it
 * is made; one location-id buffer of the deepest stack's size. */
static int write_samples(struct pb_build *b, const struct hp_profile *p, ProtobufCBuffer *sink)
{
	size_t depth = 1;
	for (size_t i = 0; i < p->nsamples; i++)
		if (p->samples[i].nframes > depth)
			depth = p->samples[i].nframes;
	uint64_t *ids = malloc(sizeof(*ids) * depth);
	if (!ids)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < p->nsamples && rc == 0; i++) {
		const struct hp_prof_sample *s = &p->samples[i];
		PbSample ps;
		perftools__profiles__sample__init(&ps);
		ps.n_location_id = s->nframes;
		ps.location_id = ids;
		/* hp_prof_sample lists frames leaf first, as the format does. */
		for (size_t j = 0; j < s->nframes && rc == 0; j++)
			rc = frame_location(b, p, hp_prof_frame(p, s, j), &ids[j]);
		int64_t v[HP_PPROF_TYPES] = { s->alloc_objects, s->alloc_bytes, s->inuse_objects,
					      s->inuse_bytes, s->recent_objects, s->recent_bytes };
		ps.n_value = (size_t)b->ntypes;
		ps.value = v;
		PbLabel label, *label_ptr = &label;
		if (rc == 0 && s->class_name && s->class_name[0]) {
			perftools__profiles__label__init(&label);
			label.key = b->class_key;
			rc = sid(b, s->class_name, &label.str);
			ps.n_label = 1;
			ps.label = &label_ptr;
		}
		if (rc < 0)
			break;
		uint8_t head[1 + 10];
		size_t n = perftools__profiles__sample__get_packed_size(&ps), h = 0;
		head[h++] = SAMPLE_TAG;
		do {
			head[h++] = (uint8_t)((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
			n >>= 7;
		} while (n);
		sink->append(sink, h, head);
		perftools__profiles__sample__pack_to_buffer(&ps, sink);
	}
	free(ids);
	return rc;
}

/* The rest of the message, after the samples: functions, locations,
 * comments and the string table as write_samples left them. */
static int finish(struct pb_build *b, const struct hp_profile *p)
{
	PbProfile *m = &b->msg;
	int rc;
	m->n_sample = 0;
	m->n_location = b->loc_keys.count;
	m->location = b->loc_ptrs;
	m->n_function = b->func_keys.count;
	m->function = b->func_ptrs;
	for (size_t i = 0; i < p->ncomments; i++)
		if ((rc = sid(b, p->comments[i], &b->comments[i])) < 0)
			return rc;
	m->n_comment = p->ncomments;
	m->comment = b->comments;
	/* protobuf-c declares the table char ** but only reads it. */
	m->n_string_table = b->strings.count;
	m->string_table = (char **)b->strings.keys;
	return 0;
}

/* protobuf-c serializes through many small appends; batch them before
 * deflate, which works best on large inputs, and stream the compressed
 * bytes to the file instead of holding the whole profile in memory. */
struct gz_sink {
	ProtobufCBuffer base;           /* first: protobuf-c calls us with &base */
	struct hp_out *out;
	z_stream z;
	size_t len;
	uint8_t in[64 * 1024];
	uint8_t zout[64 * 1024];
};

static void gz_deflate(struct gz_sink *s, const uint8_t *data, size_t n, int flush)
{
	if (!n && flush == Z_NO_FLUSH)
		return;
	do {
		/* avail_in is 32 bits wide. */
		uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
		int last = chunk == n;
		s->z.next_in = data;
		s->z.avail_in = chunk;
		do {
			s->z.next_out = s->zout;
			s->z.avail_out = sizeof(s->zout);
			if (deflate(&s->z, last ? flush : Z_NO_FLUSH) == Z_STREAM_ERROR) {
				hp_out_fail(s->out, -EIO);
				return;
			}
			hp_out_write(s->out, s->zout, sizeof(s->zout) - s->z.avail_out);
		} while (s->z.avail_out == 0);
		data += chunk;
		n -= chunk;
	} while (n);
}

static void gz_append(ProtobufCBuffer *buf, size_t n, const uint8_t *data)
{
	struct gz_sink *s = (struct gz_sink *)buf;
	if (s->out->err)
		return;                 /* the disk is full: stop compressing */
	if (n > sizeof(s->in) - s->len) {
		gz_deflate(s, s->in, s->len, Z_NO_FLUSH);
		s->len = 0;
		if (n >= sizeof(s->in)) {
			gz_deflate(s, data, n, Z_NO_FLUSH);
			return;
		}
	}
	memcpy(s->in + s->len, data, n);
	s->len += n;
}

/* Serializes, compresses and writes the profile: its samples as they are
 * made, then the message; errors end up in `out`. */
static void pack_gzip(struct pb_build *b, const struct hp_profile *p, struct hp_out *out)
{
	struct gz_sink *s = calloc(1, sizeof(*s));
	if (!s) {
		hp_out_fail(out, -ENOMEM);
		return;
	}
	s->base.append = gz_append;
	s->out = out;
	/* windowBits 15 + 16: a gzip wrapper, as pprof expects on disk. */
	if (deflateInit2(&s->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		hp_out_fail(out, -ENOMEM);
		free(s);
		return;
	}
	int rc = write_samples(b, p, &s->base);
	if (rc == 0)
		rc = finish(b, p);
	if (rc < 0)
		hp_out_fail(out, rc);
	else
		perftools__profiles__profile__pack_to_buffer(&b->msg, &s->base);
	if (!out->err)
		gz_deflate(s, s->in, s->len, Z_FINISH);
	deflateEnd(&s->z);
	free(s);
}

int hp_write_pprof(const struct hp_profile *p, const char *path, char *err, size_t errlen)
{
	int rc = hp_profile_check(p, path, err, errlen);
	if (rc < 0)
		return rc;
	p = hp_profile_or_empty(p);

	struct pb_build *b = calloc(1, sizeof(*b));
	if (!b) {
		hp_out_reason(err, errlen, path, -ENOMEM);
		return -ENOMEM;
	}
	b->ntypes = HP_PPROF_TYPES;
	rc = build(b, p);
	if (rc < 0) {
		build_free(b);
		free(b);
		hp_out_reason(err, errlen, path, rc);
		return rc;
	}
	struct hp_out out;
	rc = hp_out_open(&out, path, err, errlen);
	if (rc == 0) {
		pack_gzip(b, p, &out);
		rc = hp_out_commit(&out, err, errlen);
	}
	build_free(b);
	free(b);
	return rc;
}

int hp_encode_pprof_go_heap(const struct hp_profile *p, unsigned char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	int rc = hp_profile_check(p, "(memory)", NULL, 0);
	if (rc < 0)
		return rc;
	p = hp_profile_or_empty(p);
	struct pb_build *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->ntypes = 4;      /* alloc_objects, alloc_space, inuse_objects, inuse_space */
	rc = build(b, p);
	if (rc == 0) {
		struct hp_out o;
		rc = hp_out_open_mem(&o, "(memory)");
		if (rc == 0) {
			pack_gzip(b, p, &o);
			*out = hp_out_take(&o, len, &rc);
		}
	}
	build_free(b);
	free(b);
	return rc;
}
