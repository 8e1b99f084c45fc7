/* Why one file of ~840 lines: the metadata declares every type and field
 * the events and constant pools below write, by id and in order; kept in
 * one place they are read and changed together, and a mismatch between
 * them is a file the JDK's parser rejects.
 *
 * hp_write_jfr: the profile as a JDK Flight Recorder file, one chunk of
 * format 2.1, the layout the JDK writes and its `jfr` tool and JDK Mission
 * Control's parser read (jdk.jfr.internal.consumer.ChunkHeader, ChunkParser,
 * MetadataReader name the pieces):
 *
 *   chunk header, 68 bytes, big-endian: "FLR\0", major 2, minor 1, chunk
 *     size, offset of the constant pools, offset of the metadata, start
 *     (ns since the epoch), duration (ns), start ticks, ticks per second
 *     (here 1e9: a tick is a nanosecond of CLOCK_REALTIME), then a state
 *     byte (0 = complete), two unused bytes and the flags byte (1 =
 *     integers compressed, 2 = final chunk);
 *   the metadata event (type 0): a string table, then the tree
 *     root{metadata{class{field{annotation}}...}, region} declaring every
 *     type below with its fields, each by name and type id;
 *   the events, each: size, type id, fields in declared order;
 *   one checkpoint event (type 1): the constant pools (threads, stack
 *     traces, methods, classes, symbols, GC phases) events refer to by id.
 *
 * Integers are LEB128 ("compressed": 7 bits a byte, the ninth byte whole);
 * an event's size is written padded to 4 bytes so it can be filled in once
 * the event is built. Strings in events are UTF-8 (encoding 3); in the
 * metadata, the string table entries are too.
 *
 * Types: jdk.ObjectAllocationSample as the JDK declares it (startTime,
 * eventThread, stackTrace, objectClass, weight), so JMC's allocation pages
 * read it; jdk.GCHeapSummary with the fields we have; heapprobe's own
 * heapprobe.LiveObject (one per live sample: its allocation time, size,
 * the bytes it stands for in the live view, markings survived, verified or
 * recent), heapprobe.HeapUsage (the heap figure with its source) and
 * heapprobe.ProfileNote (the profile's comments). A pool is written only
 * when it has entries: the JDK's parser refuses an empty one. */
#include "agent/profile.h"
#include "agent/writer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Type ids: ours, any numbering the metadata declares will do. 0 and 1 are
 * the metadata and checkpoint events. */
enum {
	T_METADATA = 0,
	T_CHECKPOINT = 1,
	T_BOOLEAN = 10, T_INT, T_LONG, T_STRING,
	T_THREAD = 20, T_CLASS, T_CLASS_LOADER, T_PACKAGE, T_SYMBOL, T_METHOD, T_STACK_FRAME, T_STACK_TRACE, T_GC_WHEN,
	T_FRAME_TYPE,
	/* events */
	T_ALLOC_SAMPLE = 40, T_HEAP_SUMMARY, T_LIVE_OBJECT, T_HEAP_USAGE, T_PROFILE_NOTE,
	/* annotations */
	T_LABEL = 60, T_DESCRIPTION, T_CATEGORY, T_CONTENT_TYPE, T_TIMESTAMP, T_DATA_AMOUNT, T_UNSIGNED,
};

/* ---- JFR's encodings, into an in-memory hp_out (writer.h) --------------
 *
 * Events are built in memory, their sizes filled in once known; where the
 * output is our own temporary file they move on to it a MiB at a time and
 * the header's offsets are written last (hp_write_jfr). */

static void b_u8(struct hp_out *b, uint8_t v)
{
	hp_out_write(b, &v, 1);
}

static void b_be(struct hp_out *b, uint64_t v, int n)
{
	unsigned char t[8];
	for (int i = 0; i < n; i++)
		t[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
	hp_out_write(b, t, (size_t)n);
}

/* JFR's compressed integer: seven bits a byte, low first, the high bit
 * saying more follows; after eight such bytes the ninth carries 8 bits. */
static void b_varint(struct hp_out *b, uint64_t v)
{
	unsigned char t[9];
	int n = 0;
	while (n < 8 && (v & ~0x7full)) {
		t[n++] = (unsigned char)((v & 0x7f) | 0x80);
		v >>= 7;
	}
	t[n++] = (unsigned char)v;
	hp_out_write(b, t, (size_t)n);
}

/* NULL: encoding 0; "": 1; else 3 (UTF-8, byte length). */
static void b_string(struct hp_out *b, const char *s)
{
	if (!s) {
		b_u8(b, 0);
		return;
	}
	size_t n = strlen(s);
	if (!n) {
		b_u8(b, 1);
		return;
	}
	b_u8(b, 3);
	b_varint(b, n);
	hp_out_write(b, s, n);
}

/* An event starts with its size, which counts itself: 4 bytes reserved,
 * filled by b_end as a padded varint (each byte but the last with its
 * continuation bit set). Events over 256 MiB cannot be written. */
static size_t b_begin(struct hp_out *b, uint64_t type)
{
	size_t at = b->len;
	b_be(b, 0, 4);
	b_varint(b, type);
	return at;
}

static bool b_end(struct hp_out *b, size_t at)
{
	if (b->err)
		return false;
	size_t n = b->len - at;
	if (n >= (1u << 28))
		return false;
	b->buf[at] = (unsigned char)((n & 0x7f) | 0x80);
	b->buf[at + 1] = (unsigned char)(((n >> 7) & 0x7f) | 0x80);
	b->buf[at + 2] = (unsigned char)(((n >> 14) & 0x7f) | 0x80);
	b->buf[at + 3] = (unsigned char)((n >> 21) & 0x7f);
	return true;
}

/* Moves what `b` holds (whole events only: called between them) on to the
 * file once it reaches `at` bytes; `base` counts the bytes moved. With no
 * file, everything stays in b. */
#define SPILL_AT (1u << 20)
static void spill(struct hp_out *b, struct hp_out *file, uint64_t *base, size_t at)
{
	if (!file || b->err || b->len < at || !b->len)
		return;
	hp_out_write(file, b->buf, b->len);
	*base += b->len;
	b->len = 0;
}

/* ---- metadata --------------------------------------------------------- */

/* The element tree, written depth first: name, attributes, children. A
 * small static description keeps it readable; strings are interned into
 * the metadata's string table as the tree is written (two passes: the
 * table goes first, so the first pass only collects). */
struct md {
	struct hp_intern strings;
	struct hp_out tree;     /* in memory (hp_out_open_mem) */
	bool collect;   /* first pass: intern only */
	int err;
};

static void md_str(struct md *m, const char *s)
{
	uint32_t id = 0;
	if (hp_intern(&m->strings, s, &id) < 0)
		m->err = -ENOMEM;
	if (!m->collect)
		b_varint(&m->tree, id);
}

/* Elements are written as: name, nattrs, attrs..., nchildren, children...
 * Callers give the counts up front. */
static void md_el(struct md *m, const char *name, int nattrs)
{
	md_str(m, name);
	if (!m->collect)
		b_varint(&m->tree, (uint64_t)nattrs);
}

static void md_attr(struct md *m, const char *k, const char *v)
{
	md_str(m, k);
	md_str(m, v);
}

static void md_kids(struct md *m, int n)
{
	if (!m->collect)
		b_varint(&m->tree, (uint64_t)n);
}

static const char *num(char *t, long v)
{
	snprintf(t, 24, "%ld", v);
	return t;
}

/* <annotation class=ID [value=V]/> */
static void md_annotation(struct md *m, int type, const char *value)
{
	char t[24];
	md_el(m, "annotation", value ? 2 : 1);
	md_attr(m, "class", num(t, type));
	if (value)
		md_attr(m, "value", value);
	md_kids(m, 0);
}

/* Field flags. */
enum { F_CPOOL = 1, F_ARRAY = 2, F_TICKS = 4, F_BYTES = 8, F_UNSIGNED = 16 };

struct md_field {
	const char *name;
	int type;
	const char *label;
	int flags;
};

static void md_field(struct md *m, const struct md_field *f)
{
	char t[24];
	int nattrs = 2 + !!(f->flags & F_CPOOL) + !!(f->flags & F_ARRAY);
	md_el(m, "field", nattrs);
	md_attr(m, "name", f->name);
	md_attr(m, "class", num(t, f->type));
	if (f->flags & F_CPOOL)
		md_attr(m, "constantPool", "true");
	if (f->flags & F_ARRAY)
		md_attr(m, "dimension", "1");
	int nanno = !!f->label + !!(f->flags & F_TICKS) + 2 * !!(f->flags & F_BYTES) + !!(f->flags & F_UNSIGNED);
	md_kids(m, nanno);
	if (f->label)
		md_annotation(m, T_LABEL, f->label);
	if (f->flags & F_TICKS)
		md_annotation(m, T_TIMESTAMP, "TICKS");
	if (f->flags & F_BYTES) {
		md_annotation(m, T_UNSIGNED, NULL);
		md_annotation(m, T_DATA_AMOUNT, "BYTES");
	}
	if (f->flags & F_UNSIGNED)
		md_annotation(m, T_UNSIGNED, NULL);
}

enum { K_PLAIN, K_SIMPLE, K_EVENT, K_ANNOTATION };

struct md_type {
	const char *name;
	int id, kind;
	const char *label, *description, *category;
	bool content_type;          /* an annotation that is itself a content type (Timestamp, DataAmount) */
	struct md_field fields[10];
};

#define STD_EVENT_FIELDS(thread_label) \
	{ "startTime", T_LONG, "Start Time", F_TICKS }, { "eventThread", T_THREAD, thread_label, F_CPOOL }, \
	{ "stackTrace", T_STACK_TRACE, "Stack Trace", F_CPOOL }

static const struct md_type types[] = {
	{ "boolean", T_BOOLEAN, K_PLAIN, NULL, NULL, NULL, false, { { 0 } } },
	{ "int", T_INT, K_PLAIN, NULL, NULL, NULL, false, { { 0 } } },
	{ "long", T_LONG, K_PLAIN, NULL, NULL, NULL, false, { { 0 } } },
	{ "java.lang.String", T_STRING, K_PLAIN, NULL, NULL, NULL, false, { { 0 } } },
	{ "java.lang.Thread", T_THREAD, K_PLAIN, "Thread", NULL, NULL, false,
	  { { "osName", T_STRING, "OS Thread Name", 0 }, { "osThreadId", T_LONG, "OS Thread Id", 0 },
	    { "javaName", T_STRING, "Java Thread Name", 0 }, { "javaThreadId", T_LONG, "Java Thread Id", 0 } } },
	{ "java.lang.Class", T_CLASS, K_PLAIN, "Java Class", NULL, NULL, false,
	  { { "classLoader", T_CLASS_LOADER, "Class Loader", F_CPOOL }, { "name", T_SYMBOL, "Name", F_CPOOL },
	    { "package", T_PACKAGE, "Package", F_CPOOL }, { "modifiers", T_INT, "Access Modifiers", 0 } } },
	{ "jdk.types.ClassLoader", T_CLASS_LOADER, K_PLAIN, "Java Class Loader", NULL, NULL, false,
	  { { "type", T_CLASS, "Type", F_CPOOL }, { "name", T_SYMBOL, "Name", F_CPOOL } } },
	{ "jdk.types.Package", T_PACKAGE, K_PLAIN, "Package", NULL, NULL, false,
	  { { "name", T_SYMBOL, "Name", F_CPOOL } } },
	{ "jdk.types.Symbol", T_SYMBOL, K_SIMPLE, "Symbol", NULL, NULL, false,
	  { { "string", T_STRING, "String", 0 } } },
	{ "jdk.types.Method", T_METHOD, K_PLAIN, "Java Method", NULL, NULL, false,
	  { { "type", T_CLASS, "Type", F_CPOOL }, { "name", T_SYMBOL, "Name", F_CPOOL },
	    { "descriptor", T_SYMBOL, "Descriptor", F_CPOOL }, { "modifiers", T_INT, "Access Modifiers", 0 },
	    { "hidden", T_BOOLEAN, "Hidden", 0 } } },
	/* The JDK's four fields, in its order: JMC reads frames by position. */
	{ "jdk.types.StackFrame", T_STACK_FRAME, K_PLAIN, NULL, NULL, NULL, false,
	  { { "method", T_METHOD, "Java Method", F_CPOOL }, { "lineNumber", T_INT, "Line Number", 0 },
	    { "bytecodeIndex", T_INT, "Bytecode Index", 0 }, { "type", T_FRAME_TYPE, "Frame Type", F_CPOOL } } },
	{ "jdk.types.FrameType", T_FRAME_TYPE, K_SIMPLE, "Frame type", NULL, NULL, false,
	  { { "description", T_STRING, "Description", 0 } } },
	{ "jdk.types.StackTrace", T_STACK_TRACE, K_PLAIN, "Stacktrace", NULL, NULL, false,
	  { { "truncated", T_BOOLEAN, "Truncated", 0 }, { "frames", T_STACK_FRAME, "Stack Frames", F_ARRAY } } },
	{ "jdk.types.GCWhen", T_GC_WHEN, K_SIMPLE, "GC When", NULL, NULL, false,
	  { { "when", T_STRING, "When", 0 } } },
	{ "jdk.ObjectAllocationSample", T_ALLOC_SAMPLE, K_EVENT, "Object Allocation Sample",
	  "Allocation sample taken by heapprobe (JEP 331); weight is the bytes the sample stands for", "Java Application",
	  false,
	  { STD_EVENT_FIELDS("Event Thread"), { "objectClass", T_CLASS, "Object Class", F_CPOOL },
	    { "weight", T_LONG, "Sample Weight", F_BYTES } } },
	{ "jdk.GCHeapSummary", T_HEAP_SUMMARY, K_EVENT, "Heap Summary",
	  "The heap in use after the last collection as heapprobe read it (heapprobe.HeapUsage names the source)",
	  "Java Virtual Machine", false,
	  { { "startTime", T_LONG, "Start Time", F_TICKS }, { "gcId", T_INT, "GC Identifier", F_UNSIGNED },
	    { "when", T_GC_WHEN, "When", F_CPOOL }, { "heapUsed", T_LONG, "Heap Used", F_BYTES } } },
	{ "heapprobe.LiveObject", T_LIVE_OBJECT, K_EVENT, "Live Object Sample",
	  "A sampled object still referenced when the profile was written; startTime is its allocation; weight is "
	  "the bytes it stands for in the live view (verified) or in the recent, not yet verified bytes",
	  "heapprobe", false,
	  { STD_EVENT_FIELDS("Allocating Thread"), { "objectClass", T_CLASS, "Object Class", F_CPOOL },
	    { "allocationSize", T_LONG, "Object Size", F_BYTES }, { "weight", T_LONG, "Live Bytes Estimate", F_BYTES },
	    { "markings", T_INT, "Markings Survived", F_UNSIGNED }, { "verified", T_BOOLEAN, "Verified By A Marking", 0 } } },
	{ "heapprobe.HeapUsage", T_HEAP_USAGE, K_EVENT, "Heap Usage",
	  "The heap figure heapprobe read, with its source", "heapprobe", false,
	  { { "startTime", T_LONG, "Start Time", F_TICKS }, { "used", T_LONG, "Used After Last GC", F_BYTES },
	    { "committed", T_LONG, "Committed", F_BYTES }, { "kind", T_STRING, "Kind", 0 },
	    { "source", T_STRING, "Source", 0 }, { "markedLive", T_LONG, "Live Bytes Found By Marking", F_BYTES },
	    { "markedLiveSource", T_STRING, "Marking Figure Source", 0 } } },
	{ "heapprobe.ProfileNote", T_PROFILE_NOTE, K_EVENT, "Profile Note",
	  "What the profile covers and how it was estimated", "heapprobe", false,
	  { { "startTime", T_LONG, "Start Time", F_TICKS }, { "text", T_STRING, "Text", 0 } } },
	{ "jdk.jfr.Label", T_LABEL, K_ANNOTATION, NULL, NULL, NULL, false, { { "value", T_STRING, NULL, 0 } } },
	{ "jdk.jfr.Description", T_DESCRIPTION, K_ANNOTATION, NULL, NULL, NULL, false,
	  { { "value", T_STRING, NULL, 0 } } },
	{ "jdk.jfr.Category", T_CATEGORY, K_ANNOTATION, NULL, NULL, NULL, false,
	  { { "value", T_STRING, NULL, F_ARRAY } } },
	{ "jdk.jfr.ContentType", T_CONTENT_TYPE, K_ANNOTATION, NULL, NULL, NULL, false, { { 0 } } },
	{ "jdk.jfr.Timestamp", T_TIMESTAMP, K_ANNOTATION, "Timestamp", NULL, NULL, true,
	  { { "value", T_STRING, NULL, 0 } } },
	{ "jdk.jfr.DataAmount", T_DATA_AMOUNT, K_ANNOTATION, "Data Amount", NULL, NULL, true,
	  { { "value", T_STRING, NULL, 0 } } },
	{ "jdk.jfr.Unsigned", T_UNSIGNED, K_ANNOTATION, "Unsigned Value", NULL, NULL, true, { { 0 } } },
};

static void md_type(struct md *m, const struct md_type *t)
{
	char id[24];
	size_t nfields = 0;
	while (nfields < sizeof(t->fields) / sizeof(t->fields[0]) && t->fields[nfields].name)
		nfields++;
	const char *super = t->kind == K_EVENT ? "jdk.jfr.Event" :
			    t->kind == K_ANNOTATION ? "java.lang.annotation.Annotation" : NULL;
	md_el(m, "class", 2 + !!super + (t->kind == K_SIMPLE));
	md_attr(m, "name", t->name);
	md_attr(m, "id", num(id, t->id));
	if (super)
		md_attr(m, "superType", super);
	if (t->kind == K_SIMPLE)
		md_attr(m, "simpleType", "true");
	int nanno = !!t->label + !!t->description + !!t->category + t->content_type;
	md_kids(m, (int)nfields + nanno);
	if (t->label)
		md_annotation(m, T_LABEL, t->label);
	if (t->description)
		md_annotation(m, T_DESCRIPTION, t->description);
	if (t->category) {
		md_el(m, "annotation", 2);
		md_attr(m, "class", num(id, T_CATEGORY));
		md_attr(m, "value-0", t->category);
		md_kids(m, 0);
	}
	if (t->content_type)
		md_annotation(m, T_CONTENT_TYPE, NULL);
	for (size_t i = 0; i < nfields; i++)
		md_field(m, &t->fields[i]);
}

static void md_tree(struct md *m)
{
	size_t ntypes = sizeof(types) / sizeof(types[0]);
	md_el(m, "root", 0);
	md_kids(m, 2);
	md_el(m, "metadata", 0);
	md_kids(m, (int)ntypes);
	for (size_t i = 0; i < ntypes; i++)
		md_type(m, &types[i]);
	md_el(m, "region", 2);
	md_attr(m, "locale", "en_US");
	md_attr(m, "gmtOffset", "0");
	md_kids(m, 0);
}

/* The metadata event: size, 0, start, duration, metadata id, string
 * table, tree. */
static int write_metadata(struct hp_out *out, int64_t start_ticks)
{
	struct md m = { .collect = true };
	if (hp_out_open_mem(&m.tree, "(metadata)") < 0)
		return -ENOMEM;
	if (hp_intern_init(&m.strings, 256, true) < 0) {
		free(m.tree.buf);
		return -ENOMEM;
	}
	md_tree(&m);        /* pass 1: the strings */
	m.collect = false;
	md_tree(&m);        /* pass 2: the tree, by string index */
	int rc = m.err ? m.err : m.tree.err ? -m.tree.err : 0;
	if (!rc) {
		size_t at = b_begin(out, T_METADATA);
		b_varint(out, (uint64_t)start_ticks);
		b_varint(out, 0);   /* duration */
		b_varint(out, 1);   /* metadata id */
		b_varint(out, m.strings.count);
		for (uint32_t i = 0; i < m.strings.count; i++)
			b_string(out, m.strings.keys[i]);
		hp_out_write(out, m.tree.buf, m.tree.len);
		if (!b_end(out, at))
			rc = out->err ? -out->err : -EFBIG;
	}
	free(m.tree.buf);
	hp_intern_free(&m.strings);
	return rc;
}

/* ---- constant pools ------------------------------------------------------ */

/* Ids count from 1 in every pool: 0 is a null reference. */
struct pools {
	struct hp_intern symbols;       /* jdk.types.Symbol: id = index + 1 */
	struct hp_intern classes;       /* java.lang.Class by name: id = index + 1 */
	uint32_t *class_symbol;         /* class index -> symbol id */
	struct hp_intern methods;       /* "class\nmethod" -> jdk.types.Method */
	struct jfr_method { uint32_t class_id, name, descriptor; } *method; /* method index -> class, symbols */
	uint32_t *frame_method;         /* frame index -> method id */
	uint32_t *sample_class;         /* sample index -> class id, 0 = none */
	char **owned;                   /* method keys and split names, freed at the end */
	size_t nowned, capowned;
	size_t cap_methods, cap_classes;
	int err;
};

static char *own(struct pools *P, char *s)
{
	if (!s) {
		P->err = -ENOMEM;
		return NULL;
	}
	if (P->nowned == P->capowned) {
		size_t cap = P->capowned ? P->capowned * 2 : 256;
		char **o = realloc(P->owned, cap * sizeof(*o));
		if (!o) {
			free(s);
			P->err = -ENOMEM;
			return NULL;
		}
		P->owned = o;
		P->capowned = cap;
	}
	return P->owned[P->nowned++] = s;
}

static uint32_t symbol(struct pools *P, const char *s)
{
	uint32_t id;
	if (hp_intern(&P->symbols, s, &id) < 0) {
		P->err = -ENOMEM;
		return 0;
	}
	return id + 1;
}

static bool grow_u32(uint32_t **a, size_t *cap, size_t need)
{
	if (need <= *cap)
		return true;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	uint32_t *n = realloc(*a, c * sizeof(**a));
	if (!n)
		return false;
	*a = n;
	*cap = c;
	return true;
}

/* "" is a class only where one is needed (a method's). */
static uint32_t class_id(struct pools *P, const char *name, bool even_empty)
{
	if (!name || (!*name && !even_empty))
		return 0;
	uint32_t id, before = P->classes.count;
	if (hp_intern(&P->classes, name, &id) < 0) {
		P->err = -ENOMEM;
		return 0;
	}
	if (P->classes.count != before) {
		if (!grow_u32(&P->class_symbol, &P->cap_classes, P->classes.count)) {
			P->err = -ENOMEM;
			return 0;
		}
		P->class_symbol[id] = symbol(P, name);
	}
	return id + 1;
}

/* "pkg.Class.method" + descriptor -> class "pkg.Class", method "method";
 * a name without a dot ("[native]") is a method of a class named "" (the
 * JDK's printer needs a class and a descriptor: "()V" stands in where the
 * frame has none). */
static uint32_t method_id(struct pools *P, const struct hp_frame *fr)
{
	const char *f = hp_str(fr->function), *d = fr->descriptor ? fr->descriptor : "()V";
	char *key = malloc(strlen(f) + strlen(d) + 2);
	if (!key) {
		P->err = -ENOMEM;
		return 0;
	}
	sprintf(key, "%s\n%s", f, d);
	uint32_t id, before = P->methods.count;
	if (hp_intern(&P->methods, key, &id) < 0) {
		free(key);
		P->err = -ENOMEM;
		return 0;
	}
	if (P->methods.count == before) {
		free(key);
		return id + 1;
	}
	own(P, key);
	if (P->methods.count > P->cap_methods) {
		size_t cap = P->cap_methods ? P->cap_methods * 2 : 256;
		struct jfr_method *m = realloc(P->method, cap * sizeof(*m));
		if (!m) {
			P->err = -ENOMEM;
			return 0;
		}
		P->method = m;
		P->cap_methods = cap;
	}
	const char *dot = strrchr(f, '.');
	char *cls = own(P, dot ? strndup(f, (size_t)(dot - f)) : strdup(""));
	P->method[id].class_id = cls ? class_id(P, cls, true) : 0;
	P->method[id].name = symbol(P, dot ? dot + 1 : f);
	P->method[id].descriptor = symbol(P, d);
	return id + 1;
}

static int build_pools(struct pools *P, const struct hp_profile *p)
{
	memset(P, 0, sizeof(*P));
	if (hp_intern_init(&P->symbols, 256, false) < 0 || hp_intern_init(&P->classes, 64, false) < 0 ||
	    hp_intern_init(&P->methods, 256, false) < 0)
		return -ENOMEM;
	P->frame_method = calloc(p->nframes + 1, sizeof(uint32_t));
	P->sample_class = calloc(p->nsamples + 1, sizeof(uint32_t));
	if (!P->frame_method || !P->sample_class)
		return -ENOMEM;
	/* Only frames some sample uses get a method. */
	for (size_t i = 0; i < p->nsamples && !P->err; i++) {
		const struct hp_prof_sample *s = &p->samples[i];
		P->sample_class[i] = class_id(P, s->class_name, false);
		for (size_t j = 0; j < s->nframes && !P->err; j++) {
			uint32_t f = hp_prof_frame(p, s, j);
			if (!P->frame_method[f])
				P->frame_method[f] = method_id(P, &p->frames[f]);
		}
	}
	return P->err;
}

static void free_pools(struct pools *P)
{
	hp_intern_free(&P->symbols);
	hp_intern_free(&P->classes);
	hp_intern_free(&P->methods);
	free(P->class_symbol);
	free(P->method);
	free(P->frame_method);
	free(P->sample_class);
	for (size_t i = 0; i < P->nowned; i++)
		free(P->owned[i]);
	free(P->owned);
}

/* The checkpoint: every pool that has entries. Stack trace id = sample
 * index + 1, thread id = thread index + 1, GC phase 1 = "After GC". */
static int write_checkpoint(struct hp_out *out, const struct hp_profile *p, const struct pools *P, int64_t ticks)
{
	size_t at = b_begin(out, T_CHECKPOINT);
	b_varint(out, (uint64_t)ticks);
	b_varint(out, 0);   /* duration */
	b_varint(out, 0);   /* delta to the previous checkpoint: none */
	b_u8(out, 1);       /* flush */
	uint32_t npools = 0;
	npools += p->nthreads > 0;
	npools += p->nsamples > 0;          /* stack traces */
	npools += P->methods.count > 0;
	npools += P->classes.count > 0;
	npools += P->symbols.count > 0;
	npools += p->heap != NULL;          /* GC phases */
	npools += p->nsamples > 0;          /* frame types */
	b_varint(out, npools);
	if (p->nthreads) {
		b_varint(out, T_THREAD);
		b_varint(out, p->nthreads);
		for (size_t i = 0; i < p->nthreads; i++) {
			const struct hp_prof_thread *t = &p->threads[i];
			b_varint(out, i + 1);
			b_string(out, t->name);
			b_varint(out, (uint64_t)t->os_tid);
			b_string(out, t->name);
			b_varint(out, 0);   /* Java thread id: not known */
		}
	}
	if (p->nsamples) {
		b_varint(out, T_STACK_TRACE);
		b_varint(out, p->nsamples);
		for (size_t i = 0; i < p->nsamples; i++) {
			const struct hp_prof_sample *s = &p->samples[i];
			b_varint(out, i + 1);
			b_u8(out, 0);   /* truncated: not known */
			b_varint(out, s->nframes);
			for (size_t j = 0; j < s->nframes; j++) {
				uint32_t fi = hp_prof_frame(p, s, j);
				const struct hp_frame *f = &p->frames[fi];
				b_varint(out, P->frame_method[fi]);
				b_varint(out, (uint64_t)(int64_t)(f->line > 0 ? f->line : 0));
				b_varint(out, 0);   /* bytecode index: not kept */
				b_varint(out, 1);   /* frame type: "Unknown" (interpreted or compiled is not kept) */
			}
		}
	}
	if (P->methods.count) {
		b_varint(out, T_METHOD);
		b_varint(out, P->methods.count);
		for (uint32_t i = 0; i < P->methods.count; i++) {
			b_varint(out, i + 1);
			b_varint(out, P->method[i].class_id);
			b_varint(out, P->method[i].name);
			b_varint(out, P->method[i].descriptor);
			b_varint(out, 0);   /* modifiers */
			b_u8(out, 0);       /* hidden */
		}
	}
	if (P->classes.count) {
		b_varint(out, T_CLASS);
		b_varint(out, P->classes.count);
		for (uint32_t i = 0; i < P->classes.count; i++) {
			b_varint(out, i + 1);
			b_varint(out, 0);   /* class loader: not kept */
			b_varint(out, P->class_symbol[i]);
			b_varint(out, 0);   /* package */
			b_varint(out, 0);   /* modifiers */
		}
	}
	if (P->symbols.count) {
		b_varint(out, T_SYMBOL);
		b_varint(out, P->symbols.count);
		for (uint32_t i = 0; i < P->symbols.count; i++) {
			b_varint(out, i + 1);
			b_string(out, P->symbols.keys[i]);
		}
	}
	if (p->nsamples) {
		b_varint(out, T_FRAME_TYPE);
		b_varint(out, 1);
		b_varint(out, 1);
		b_string(out, "Unknown");
	}
	if (p->heap) {
		b_varint(out, T_GC_WHEN);
		b_varint(out, 1);
		b_varint(out, 1);
		b_string(out, "After GC");
	}
	if (!b_end(out, at))
		return out->err ? -out->err : -EFBIG;
	return 0;
}

/* ---- events ---------------------------------------------------------------- */

static int64_t ticks_of(const struct hp_profile *p, int64_t t)
{
	return t > 0 ? t : p->time_nanos + p->duration_nanos;
}

static void write_event(struct hp_out *out, const struct hp_profile *p, const struct pools *P,
			const struct hp_prof_event *e)
{
	uint32_t thread = e->thread == HP_PROF_NO_THREAD || e->thread >= p->nthreads ? 0 : e->thread + 1;
	size_t at = b_begin(out, e->kind == HP_EVENT_ALLOC ? T_ALLOC_SAMPLE : T_LIVE_OBJECT);
	b_varint(out, (uint64_t)ticks_of(p, e->time_nanos));
	b_varint(out, thread);
	b_varint(out, e->sample + 1);
	b_varint(out, P->sample_class[e->sample]);
	if (e->kind == HP_EVENT_ALLOC) {
		b_varint(out, (uint64_t)e->weight);
	} else {
		b_varint(out, (uint64_t)e->size);
		b_varint(out, (uint64_t)e->weight);
		b_varint(out, (uint64_t)(e->markings > 0 ? e->markings : 0));
		b_u8(out, e->kind == HP_EVENT_LIVE);
	}
	b_end(out, at);
}

/* Without sample events: one per stack and kind, from the totals. */
static void write_totals_as_events(struct hp_out *out, const struct hp_profile *p, const struct pools *P)
{
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct hp_prof_sample *s = &p->samples[i];
		struct hp_prof_event e = { .sample = (uint32_t)i, .thread = HP_PROF_NO_THREAD };
		if (s->alloc_bytes) {
			e.kind = HP_EVENT_ALLOC;
			e.weight = s->alloc_bytes;
			write_event(out, p, P, &e);
		}
		if (s->inuse_bytes) {
			e.kind = HP_EVENT_LIVE;
			e.weight = s->inuse_bytes;
			write_event(out, p, P, &e);
		}
		if (s->recent_bytes) {
			e.kind = HP_EVENT_RECENT;
			e.weight = s->recent_bytes;
			write_event(out, p, P, &e);
		}
	}
}

static void write_heap(struct hp_out *out, const struct hp_profile *p)
{
	const struct hp_prof_heap *h = p->heap;
	int64_t t = ticks_of(p, h->time_nanos);
	size_t at = b_begin(out, T_HEAP_SUMMARY);
	b_varint(out, (uint64_t)t);
	b_varint(out, h->gc_id);
	b_varint(out, 1);   /* After GC */
	b_varint(out, h->used);
	b_end(out, at);
	at = b_begin(out, T_HEAP_USAGE);
	b_varint(out, (uint64_t)t);
	b_varint(out, h->used);
	b_varint(out, h->committed);
	b_string(out, hp_str(h->kind));
	b_string(out, hp_str(h->source));
	b_varint(out, h->marked_live);
	b_string(out, hp_str(h->marked_source));
	b_end(out, at);
}

int hp_write_jfr(const struct hp_profile *p, const char *path, char *err, size_t errlen)
{
	int rc = hp_profile_check(p, path, err, errlen);
	if (rc)
		return rc;
	p = hp_profile_or_empty(p);
	for (size_t i = 0; i < p->nevents; i++)
		if (p->events[i].sample >= p->nsamples || p->events[i].kind > HP_EVENT_RECENT) {
			if (err && errlen)
				snprintf(err, errlen, "cannot write %s: invalid profile: event %zu names sample %u of %zu",
					 path, i, p->events[i].sample, p->nsamples);
			return -EINVAL;
		}
	int64_t start = p->time_nanos, end = p->time_nanos + p->duration_nanos;
	/* Events are built in memory (each one's size is filled in when it
	 * ends). Where the output is our own temporary file they move on to
	 * it every MiB, and the header, whose offsets are known only at the
	 * end, is written last in place. Anything written in place (a pipe,
	 * a device, /dev/stdout, another user's file) is opened only once
	 * the chunk is whole, and gets it in one write. */
	struct hp_out o, b, *dst = NULL;   /* dst: &o while streaming */
	bool opened = false;
	uint64_t base = 0;              /* bytes of the chunk already in o */
	if (hp_out_open_mem(&b, path) < 0) {
		hp_out_reason(err, errlen, path, -ENOMEM);
		return -ENOMEM;
	}
	struct pools P;
	rc = build_pools(&P, p);
	/* Header, filled in at the end: sizes and offsets are known then. */
	hp_out_write(&b, "FLR", 4);
	b_be(&b, 2, 2);
	b_be(&b, 1, 2);
	for (int i = 0; i < 7; i++)
		b_be(&b, 0, 8);
	b_be(&b, 0, 4);
	uint64_t metadata_at = base + b.len;
	if (!rc)
		rc = write_metadata(&b, start);
	if (!rc && hp_out_replaces(path)) {
		rc = hp_out_open(&o, path, err, errlen);
		if (rc) {
			free_pools(&P);
			free(b.buf);
			return rc;
		}
		opened = true;
		if (hp_out_can_patch(&o))
			dst = &o;
	}
	if (!rc) {
		if (p->nevents)
			for (size_t i = 0; i < p->nevents; i++) {
				write_event(&b, p, &P, &p->events[i]);
				spill(&b, dst, &base, SPILL_AT);
			}
		else
			write_totals_as_events(&b, p, &P);
		if (p->heap)
			write_heap(&b, p);
		for (size_t i = 0; i < p->ncomments; i++) {
			size_t at = b_begin(&b, T_PROFILE_NOTE);
			b_varint(&b, (uint64_t)end);
			b_string(&b, hp_str(p->comments[i]));
			b_end(&b, at);
		}
	}
	spill(&b, dst, &base, SPILL_AT);
	uint64_t checkpoint_at = base + b.len;
	if (!rc)
		rc = write_checkpoint(&b, p, &P, end);
	if (!rc && b.err)
		rc = -b.err;
	free_pools(&P);
	if (!rc) {
		unsigned char hdr[7 * 8 + 4], *h = hdr;
		uint64_t fields[7] = { base + b.len, checkpoint_at, metadata_at, (uint64_t)start,
				       (uint64_t)(end - start), (uint64_t)start, 1000000000ull };
		for (int i = 0; i < 7; i++)
			for (int k = 0; k < 8; k++)
				*h++ = (unsigned char)(fields[i] >> (8 * (7 - k)));
		h[0] = 0;   /* state: complete */
		h[1] = 0;
		h[2] = 0;
		h[3] = 1 | 2;   /* compressed integers, final chunk */
		if (dst) {
			spill(&b, dst, &base, 0);
			hp_out_patch(dst, 8, hdr, sizeof(hdr));
		} else {
			memcpy(b.buf + 8, hdr, sizeof(hdr));
			if (!opened && (rc = hp_out_open(&o, path, err, errlen)) != 0) {
				free(b.buf);
				return rc;
			}
			opened = true;
			hp_out_write(&o, b.buf, b.len);
		}
	} else if (!opened) {
		hp_out_reason(err, errlen, path, rc);
		free(b.buf);
		return rc;
	} else {
		hp_out_fail(&o, rc);
	}
	free(b.buf);
	return hp_out_commit(&o, err, errlen);
}
