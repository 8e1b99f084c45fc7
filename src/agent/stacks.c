#include "agent/stacks.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hp_method_cache {
	uint32_t mask, count;
	struct method_entry {
		jmethodID id;
		uint64_t version;       /* the method's version when named (hp_sites.version) */
		char *function;         /* "java.util.ArrayList.grow" */
		const char *file;       /* "ArrayList.java": its class's (hp_class_rec.file), own_file or "" */
		char *own_file;         /* when its class has no record (the class table full) */
		char *descriptor;       /* "(I)V" (JVM method descriptor) */
		jvmtiLineNumberEntry *lines;
		jint nlines;
		bool invalid;           /* the check said no: not a method's jmethodID */
	} *slots;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static uint64_t hash_site(const jvmtiFrameInfo *frames, const uint64_t *version, int n, uint32_t class_id)
{
	uint64_t h = 0xcbf29ce484222325ull ^ class_id;
	for (int i = 0; i < n; i++) {
		h = mix(h, (uint64_t)(uintptr_t)frames[i].method ^ version[i]);
		h = mix(h, (uint64_t)frames[i].location);
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h ? h : 1;
}

int hp_sites_init(struct hp_sites *t, uint32_t max_sites)
{
	memset(t, 0, sizeof(*t));
	uint32_t cap = 1024;
	while (cap < max_sites * 2u && cap < (1u << 24))
		cap <<= 1;
	t->slots = calloc(cap, sizeof(*t->slots));
	t->index = calloc(cap, sizeof(*t->index));
	t->methods = calloc(1, sizeof(*t->methods));
	if (!t->slots || !t->index || !t->methods)
		return -ENOMEM;
	t->methods->mask = 4095;
	t->methods->slots = calloc(4096, sizeof(*t->methods->slots));
	if (!t->methods->slots)
		return -ENOMEM;
	t->mask = cap - 1;
	t->limit = cap / 2;
	static _Atomic uint32_t generations;
	t->generation = atomic_fetch_add(&generations, 1) + 1;
	pthread_mutex_init(&t->lock, NULL);
	return 0;
}

void hp_sites_free(struct hp_sites *t)
{
	if (t->slots)
		for (uint32_t i = 0; i < atomic_load(&t->count); i++)
			free(t->slots[i].ids);
	for (uint32_t c = 0; c < HP_FRAME_CHUNKS; c++)
		free(atomic_load(&t->frame_chunks[c]));
	free(t->frame_index);
	if (t->methods) {
		for (uint32_t i = 0; t->methods->slots && i <= t->methods->mask; i++) {
			free(t->methods->slots[i].function);
			free(t->methods->slots[i].descriptor);
			free(t->methods->slots[i].own_file);
			free(t->methods->slots[i].lines);
		}
		free(t->methods->slots);
		free(t->methods);
	}
	for (uint32_t c = 0; c < HP_CLASS_CHUNKS; c++) {
		struct hp_class_rec *chunk = atomic_load(&t->class_chunks[c]);
		for (uint32_t i = 0; chunk && i < HP_CLASS_CHUNK && c * HP_CLASS_CHUNK + i < t->nclasses; i++) {
			free(chunk[i].name);
			free(chunk[i].file);
		}
		free(chunk);
	}
	free(t->slots);
	free(t->index);
	memset(t, 0, sizeof(*t));
}

/* "Ljava/util/ArrayList;" -> "java.util.ArrayList", "[[I" -> "int[][]". */
static char *java_name(const char *sig)
{
	int dims = 0;
	while (sig[dims] == '[')
		dims++;
	const char *base = sig + dims;
	static const struct { char c; const char *name; } prims[] = {
		{ 'Z', "boolean" }, { 'B', "byte" }, { 'C', "char" }, { 'S', "short" },
		{ 'I', "int" },     { 'J', "long" }, { 'F', "float" }, { 'D', "double" },
	};
	char buf[1024];
	size_t n = 0;
	if (*base == 'L') {
		for (base++; *base && *base != ';' && n + 1 < sizeof(buf); base++)
			buf[n++] = *base == '/' ? '.' : *base;
	} else {
		for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
			if (prims[i].c == *base)
				n = (size_t)snprintf(buf, sizeof(buf), "%s", prims[i].name);
		if (n == 0)
			n = (size_t)snprintf(buf, sizeof(buf), "%s", base);
	}
	for (int d = 0; d < dims && n + 3 < sizeof(buf); d++) {
		buf[n++] = '[';
		buf[n++] = ']';
	}
	buf[n] = '\0';
	return strdup(buf);
}

static struct hp_class_rec *class_rec(const struct hp_sites *t, uint32_t class_id)
{
	struct hp_class_rec *c =
		atomic_load_explicit(&t->class_chunks[(class_id - 1) / HP_CLASS_CHUNK], memory_order_acquire);
	return &c[(class_id - 1) % HP_CLASS_CHUNK];
}

/* A class's tag holds its id in the low 32 bits and the table's
 * generation in the high ones: a JVMTI environment can outlive a profiling
 * session (hp_profiler_stop keeps it when the agent thread is slow to
 * exit) and its tags name the classes of another table. The id of a tag
 * of this table, or 0. */
static uint32_t tag_id(const struct hp_sites *t, jlong tag)
{
	uint32_t id = (uint32_t)((uint64_t)tag & 0xffffffffu);
	if ((uint32_t)((uint64_t)tag >> 32) != t->generation || !id ||
	    id > atomic_load_explicit(&t->nclasses, memory_order_acquire))
		return 0;
	return id;
}

/* A class's id (>= 1), from its JVMTI tag, or made, recorded and tagged
 * when it has none; 0 if it cannot be named. Under t->lock. */
static uint32_t class_id_locked(struct hp_sites *t, jvmtiEnv *jvmti, jclass klass)
{
	jlong tag = 0;
	if ((*jvmti)->GetTag(jvmti, klass, &tag) != JVMTI_ERROR_NONE)
		return 0;
	uint32_t id = tag_id(t, tag);
	if (id)
		return id;
	uint32_t n = atomic_load_explicit(&t->nclasses, memory_order_relaxed);
	if (n == HP_CLASS_CHUNK * HP_CLASS_CHUNKS)
		return 0;
	struct hp_class_rec *chunk = atomic_load_explicit(&t->class_chunks[n / HP_CLASS_CHUNK], memory_order_relaxed);
	if (!chunk) {
		chunk = calloc(HP_CLASS_CHUNK, sizeof(*chunk));
		if (!chunk)
			return 0;
		atomic_store_explicit(&t->class_chunks[n / HP_CLASS_CHUNK], chunk, memory_order_release);
	}
	char *sig = NULL;
	if ((*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE || !sig)
		return 0;
	char *name = java_name(sig);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	/* Tagged first: a class whose tag could not be set would make a
	 * record at each sight. */
	if (!name || (*jvmti)->SetTag(jvmti, klass, (jlong)((uint64_t)t->generation << 32 | (n + 1))) !=
			     JVMTI_ERROR_NONE) {
		free(name);
		return 0;
	}
	chunk[n % HP_CLASS_CHUNK] = (struct hp_class_rec){ name, NULL };
	atomic_store_explicit(&t->nclasses, n + 1, memory_order_release);
	return n + 1;
}

static inline uint32_t method_slot(jmethodID id, uint64_t version, uint32_t mask)
{
	return (uint32_t)mix(version, (uint64_t)(uintptr_t)id) & mask;
}

static struct method_entry *method_named(struct hp_sites *t, jvmtiEnv *jvmti, JNIEnv *jni, jmethodID id,
					 uint64_t version)
{
	struct hp_method_cache *c = t->methods;
	if (c->count * 2 >= c->mask) {
		/* Grow: rehash into twice the slots. */
		uint32_t ncap = (c->mask + 1) * 2;
		struct method_entry *ns = calloc(ncap, sizeof(*ns));
		if (!ns)
			return NULL;
		for (uint32_t i = 0; i <= c->mask; i++) {
			if (!c->slots[i].id)
				continue;
			uint32_t j = method_slot(c->slots[i].id, c->slots[i].version, ncap - 1);
			while (ns[j].id)
				j = (j + 1) & (ncap - 1);
			ns[j] = c->slots[i];
		}
		free(c->slots);
		c->slots = ns;
		c->mask = ncap - 1;
	}
	uint32_t j = method_slot(id, version, c->mask);
	while (c->slots[j].id && (c->slots[j].id != id || c->slots[j].version != version))
		j = (j + 1) & c->mask;
	struct method_entry *e = &c->slots[j];
	if (e->id)
		return e;

	char *name = NULL, *sig = NULL;
	jclass cls = NULL;
	char buf[1024];
	bool valid = !t->check_id || t->check_id(t->check_ctx, id) == 0;
	if (!valid)
		atomic_fetch_add_explicit(&t->invalid_ids, 1, memory_order_relaxed);
	if (!valid || (*jvmti)->GetMethodName(jvmti, id, &name, &sig, NULL) != JVMTI_ERROR_NONE)
		name = NULL;
	/* The class's name and source file are its record's, made with its
	 * first method named (or its first allocation) and shared by all its
	 * methods: one copy of each string a class, not a method. (By perf on
	 * javac this costs what asking for them per method did: a GetTag a
	 * method in place of GetClassSignature.) A redefinition that changed
	 * the SourceFile attribute keeps the first one. */
	struct hp_class_rec *cr = NULL;
	char *cname = NULL;             /* the class's name when it has no record */
	if (valid && (*jvmti)->GetMethodDeclaringClass(jvmti, id, &cls) == JVMTI_ERROR_NONE && cls) {
		uint32_t cid = class_id_locked(t, jvmti, cls);
		cr = cid ? class_rec(t, cid) : NULL;
		char *source = NULL, *class_sig = NULL;
		if ((!cr || !cr->file) && (*jvmti)->GetSourceFileName(jvmti, cls, &source) != JVMTI_ERROR_NONE)
			source = NULL;
		if (cr && !cr->file)
			cr->file = strdup(source ? source : "");
		if (!cr) {
			e->own_file = strdup(source ? source : "");
			if ((*jvmti)->GetClassSignature(jvmti, cls, &class_sig, NULL) == JVMTI_ERROR_NONE && class_sig)
				cname = java_name(class_sig);
		}
		(*jvmti)->Deallocate(jvmti, (unsigned char *)source);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)class_sig);
	}
	/* A site may name up to `depth` methods in one callback: no local
	 * references pile up in the allocating thread's frame. */
	if (cls && jni)
		(*jni)->DeleteLocalRef(jni, cls);
	snprintf(buf, sizeof(buf), "%s.%s",
		 cr ? cr->name : cname ? cname : valid ? "[unknown]" : "[invalid jmethodID]", name ? name : "[unknown]");
	free(cname);
	e->function = strdup(buf);
	e->file = cr && cr->file ? cr->file : e->own_file ? e->own_file : "";
	e->descriptor = strdup(sig ? sig : "()V");
	if (valid && (*jvmti)->GetLineNumberTable(jvmti, id, &e->nlines, &e->lines) == JVMTI_ERROR_NONE &&
	    e->nlines > 0) {
		/* Keep our own copy: JVMTI memory must go back through Deallocate. */
		jvmtiLineNumberEntry *copy = malloc(sizeof(*copy) * (size_t)e->nlines);
		if (copy)
			memcpy(copy, e->lines, sizeof(*copy) * (size_t)e->nlines);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)e->lines);
		e->lines = copy;
		if (!copy)
			e->nlines = 0;
	} else {
		e->lines = NULL;
		e->nlines = 0;
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	if (!e->function || !e->descriptor) {
		free(e->function);
		free(e->descriptor);
		free(e->own_file);
		free(e->lines);
		memset(e, 0, sizeof(*e));
		return NULL;
	}
	e->id = id;
	e->version = version;
	e->invalid = !valid;
	c->count++;
	return e;
}

static int line_of(const struct method_entry *m, jlocation loc)
{
	/* The entry with the greatest start_location <= loc. */
	int line = 0;
	jlocation best = -1;
	for (jint i = 0; i < m->nlines; i++)
		if (m->lines[i].start_location <= loc && m->lines[i].start_location > best) {
			best = m->lines[i].start_location;
			line = m->lines[i].line_number;
		}
	return line;
}

static int same_frames(const struct hp_sites *t, const struct hp_site *s, const jvmtiFrameInfo *frames, int n,
		       const uint64_t *version, uint32_t class_id)
{
	if (s->nframes != (uint32_t)n || s->class_id != class_id)
		return 0;
	for (int i = 0; i < n; i++) {
		const struct hp_frame_rec *r = hp_sites_frame(t, s->ids[i]);
		if (r->raw.method != frames[i].method || r->raw.location != frames[i].location ||
		    r->version != version[i])
			return 0;
	}
	return 1;
}

static uint32_t hash_frame(const jvmtiFrameInfo *f, uint64_t version)
{
	uint64_t h = mix(mix(mix(0x9e3779b97f4a7c15ull, version), (uint64_t)(uintptr_t)f->method), (uint64_t)f->location);
	return (uint32_t)(h ^ (h >> 32));
}

/* The id of a frame (hf: its hash_frame), added and named when new. Under
 * t->lock. UINT32_MAX when out of memory or ids. */
static uint32_t frame_id(struct hp_sites *t, jvmtiEnv *jvmti, JNIEnv *jni, const jvmtiFrameInfo *f, uint64_t version,
			 uint32_t hf, bool *invalid)
{
	uint32_t n = atomic_load_explicit(&t->nframes, memory_order_relaxed);
	if (!t->frame_index || n * 2 >= t->frame_mask) {
		uint32_t ncap = t->frame_index ? (t->frame_mask + 1) * 2 : 4096;
		uint64_t *ni = calloc(ncap, sizeof(*ni));
		if (!ni)
			return UINT32_MAX;
		for (uint32_t k = 0; t->frame_index && k <= t->frame_mask; k++) {
			uint64_t e = t->frame_index[k];
			if (!e)
				continue;
			uint32_t j = (uint32_t)(e >> 32) & (ncap - 1);
			while (ni[j])
				j = (j + 1) & (ncap - 1);
			ni[j] = e;
		}
		free(t->frame_index);
		t->frame_index = ni;
		t->frame_mask = ncap - 1;
	}
	/* Slots hold (hash << 32 | id + 1): a record is read only for a slot
	 * whose hash is the frame's (each record read is a cache miss on a
	 * large program, and a new frame read one per slot probed). */
	uint32_t j = hf & t->frame_mask;
	for (; t->frame_index[j]; j = (j + 1) & t->frame_mask) {
		uint64_t e = t->frame_index[j];
		if ((uint32_t)(e >> 32) != hf)
			continue;
		const struct hp_frame_rec *r = hp_sites_frame(t, (uint32_t)e - 1);
		if (r->raw.method == f->method && r->raw.location == f->location && r->version == version) {
			*invalid |= r->invalid;
			return (uint32_t)e - 1;
		}
	}
	if (n == HP_FRAME_CHUNK * HP_FRAME_CHUNKS)
		return UINT32_MAX;
	struct hp_frame_rec *chunk = atomic_load_explicit(&t->frame_chunks[n / HP_FRAME_CHUNK], memory_order_relaxed);
	if (!chunk) {
		/* Aligned to a cache line, so that a record is one line (at
		 * malloc's 16 its last 16 bytes, `invalid` among them, were on
		 * the next; javac's callback by perf did not move either way). */
		chunk = aligned_alloc(HP_CACHE_LINE, sizeof(*chunk) * HP_FRAME_CHUNK);
		if (!chunk)
			return UINT32_MAX;
		atomic_store_explicit(&t->frame_chunks[n / HP_FRAME_CHUNK], chunk, memory_order_release);
	}
	struct method_entry *m = method_named(t, jvmti, jni, f->method, version);
	struct hp_frame_rec *r = &chunk[n % HP_FRAME_CHUNK];
	r->version = version;
	r->invalid = m && m->invalid;
	*invalid |= r->invalid;
	r->raw = *f;
	r->named.function = m ? m->function : "[unknown]";
	r->named.file = m ? m->file : "";
	r->named.line = m ? line_of(m, f->location) : 0;
	r->named.descriptor = m ? m->descriptor : NULL;
	t->frame_index[j] = (uint64_t)hf << 32 | (n + 1);
	atomic_store_explicit(&t->nframes, n + 1, memory_order_release);
	return n;
}

/* A new site's frames are mostly known ones, each a cache miss in the
 * index and another in its record on a large program (javac: ~40 frames
 * a site): asked for all at once, they arrive together. Under t->lock. */
static void prefetch_frames(const struct hp_sites *t, const uint32_t *hf, int n)
{
	if (!t->frame_index)
		return;
	for (int k = 0; k < n; k++)
		__builtin_prefetch(&t->frame_index[hf[k] & t->frame_mask]);
	for (int k = 0; k < n; k++) {
		uint64_t e = t->frame_index[hf[k] & t->frame_mask];
		if (e && (uint32_t)(e >> 32) == hf[k])
			__builtin_prefetch(hp_sites_frame(t, (uint32_t)e - 1));
	}
}

size_t hp_sites_frame_bytes(const struct hp_sites *t)
{
	uint32_t n = atomic_load(&t->nframes);
	size_t chunks = (n + HP_FRAME_CHUNK - 1) / HP_FRAME_CHUNK, ids = 0;
	/* Sites are dense: the slots past the count were never touched. */
	uint32_t nsites = atomic_load(&t->count);
	for (uint32_t i = 0; i < nsites; i++)
		if (atomic_load_explicit(&t->slots[i].hash, memory_order_acquire))
			ids += t->slots[i].nframes;
	return chunks * HP_FRAME_CHUNK * sizeof(struct hp_frame_rec) +
	       (t->frame_index ? (t->frame_mask + 1) * sizeof(*t->frame_index) : 0) + ids * sizeof(uint32_t);
}

struct hp_site *hp_sites_intern(struct hp_sites *t, jvmtiEnv *jvmti, JNIEnv *jni, const jvmtiFrameInfo *frames,
				int n, uint32_t class_id)
{
	/* Each frame's method version: 0 until a class was redefined, then
	 * the Method its jmethodID names (a redefined method keeps its
	 * jmethodID; its line table is the new version's). */
	uint64_t version[n ? n : 1];
	for (int k = 0; k < n; k++)
		version[k] = t->version ? t->version(t->version_ctx, frames[k].method) : 0;
	uint64_t h = hash_site(frames, version, n, class_id);
	uint32_t i = (uint32_t)h & t->mask;
	for (;;) {
		uint32_t ix = atomic_load_explicit(&t->index[i], memory_order_acquire);
		if (ix == 0)
			break;
		struct hp_site *s = &t->slots[ix - 1];
		if (atomic_load_explicit(&s->hash, memory_order_relaxed) == h &&
		    same_frames(t, s, frames, n, version, class_id))
			return s;
		i = (i + 1) & t->mask;
	}
	/* New site: insert under the lock, re-probing from the start since
	 * another thread may have inserted meanwhile. */
	pthread_mutex_lock(&t->lock);
	struct hp_site *found = NULL;
	for (i = (uint32_t)h & t->mask;; i = (i + 1) & t->mask) {
		uint32_t ix = atomic_load_explicit(&t->index[i], memory_order_relaxed);
		if (ix == 0)
			break;
		struct hp_site *s = &t->slots[ix - 1];
		if (atomic_load_explicit(&s->hash, memory_order_relaxed) == h &&
		    same_frames(t, s, frames, n, version, class_id)) {
			found = s;
			break;
		}
	}
	uint32_t next = atomic_load(&t->count);
	if (!found && next < t->limit) {
		/* Sites are stored densely, in the order they are made: the
		 * pages holding them (and every per-site array, indexed alike)
		 * are touched as sites come, not scattered by the hash. */
		struct hp_site *s = &t->slots[next];
		s->ids = malloc(sizeof(*s->ids) * (size_t)(n ? n : 1));
		bool ok = s->ids != NULL, invalid = false;
		uint32_t hf[n ? n : 1];         /* each frame's hash_frame, once */
		for (int k = 0; k < n; k++)
			hf[k] = hash_frame(&frames[k], version[k]);
		prefetch_frames(t, hf, n);
		for (int k = 0; ok && k < n; k++)
			ok = (s->ids[k] = frame_id(t, jvmti, jni, &frames[k], version[k], hf[k], &invalid)) !=
			     UINT32_MAX;
		if (ok) {
			s->invalid = invalid;
			s->nframes = (uint32_t)n;
			s->class_id = class_id;
			atomic_store_explicit(&s->hash, h, memory_order_release);
			atomic_fetch_add(&t->count, 1);
			atomic_store_explicit(&t->index[i], next + 1, memory_order_release);
			found = s;
		} else {
			free(s->ids);
			s->ids = NULL;
		}
	}
	pthread_mutex_unlock(&t->lock);
	if (!found)
		atomic_fetch_add(&t->overflow, 1);
	return found;
}

uint32_t hp_sites_class_id(struct hp_sites *t, jvmtiEnv *jvmti, jclass klass)
{
	jlong tag = 0;
	if (!klass || (*jvmti)->GetTag(jvmti, klass, &tag) != JVMTI_ERROR_NONE)
		return 0;
	uint32_t id = tag_id(t, tag);
	if (id)
		return id;
	/* Asked again under the lock (class_id_locked reads the tag first):
	 * another thread may have tagged it meanwhile. */
	pthread_mutex_lock(&t->lock);
	id = class_id_locked(t, jvmti, klass);
	pthread_mutex_unlock(&t->lock);
	return id;
}

const char *hp_sites_class_name(const struct hp_sites *t, uint32_t class_id)
{
	if (!class_id || class_id > atomic_load_explicit(&t->nclasses, memory_order_acquire))
		return "";
	return class_rec(t, class_id)->name;
}
