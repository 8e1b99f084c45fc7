#include "vmstructs/vmstructs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmstructs/errmsg.h"

#include "vmstructs/safemem.h"
#include "vmstructs/strmap.h"

/* Strings are copied out of the JVM into chunks that never move, so that
 * pointers handed out stay valid until hp_vms_free. */
struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	char data[];
};

struct hp_vms_const {
	const char *name;
	uint64_t value;
};

struct hp_vms {
	struct arena_chunk *arena;
	struct hp_vms_field *fields;
	const char **field_keys;    /* "Type::field" */
	size_t nfields;
	struct hp_vms_type *types;
	size_t ntypes;
	struct hp_vms_const *ints, *longs;
	size_t nints, nlongs;
	struct hp_strmap field_map, type_map, int_map, long_map;
};

static char *arena_alloc(struct hp_vms *v, size_t n)
{
	struct arena_chunk *c = v->arena;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = v->arena;
		c->used = 0;
		c->cap = cap;
		v->arena = c;
	}
	char *p = c->data + c->used;
	c->used += n;
	return p;
}

static char *arena_strdup(struct hp_vms *v, const char *s, size_t len)
{
	char *p = arena_alloc(v, len + 1);
	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

/* A reader of one table: fetches entry i into buf and decodes members. */
struct table_cursor {
	const struct hp_vms_tables *t;
	const char *what;           /* "gHotSpotVMStructs", for messages */
	const char *array;
	uint64_t stride;
	unsigned char buf[HP_VMS_MAX_STRIDE];
};

static int check_member(const char *what, const char *member, uint64_t off, size_t size,
			uint64_t stride, char *err, size_t errlen)
{
	if (off > stride || size > stride - off) {
		hp_set_err(err, errlen, "%s: member %s at offset %llu (size %zu) lies outside the %llu-byte entry",
			what, member, (unsigned long long)off, size, (unsigned long long)stride);
		return -EINVAL;
	}
	return 0;
}

/* The readable range holding [p, p+n), or NULL. */
static const void *known_readable(const struct hp_vms_tables *t, const void *p, size_t n, size_t *avail)
{
	uintptr_t a = (uintptr_t)p;
	for (unsigned i = 0; t && i < t->nreadable; i++)
		if (a >= t->readable[i].start && a < t->readable[i].end && n <= t->readable[i].end - a) {
			*avail = t->readable[i].end - a;
			return p;
		}
	return NULL;
}

static int read_mem(const struct hp_vms_tables *t, void *dst, const void *src, size_t n)
{
	size_t avail;
	if (known_readable(t, src, n, &avail)) {
		memcpy(dst, src, n);
		return 0;
	}
	return hp_safe_read(dst, src, n);
}

static long read_string(const struct hp_vms_tables *t, char *dst, size_t cap, const void *src)
{
	size_t avail;
	if (known_readable(t, src, 1, &avail)) {
		size_t n = avail < cap - 1 ? avail : cap - 1;
		const char *nul = memchr(src, '\0', n);
		if (nul) {
			memcpy(dst, src, (size_t)(nul - (const char *)src) + 1);
			return nul - (const char *)src;
		}
	}
	return hp_safe_read_string(dst, cap, src);
}

static int cursor_init(struct table_cursor *c, const struct hp_vms_tables *t, const char *what, const void *array,
		       uint64_t stride, char *err, size_t errlen)
{
	c->t = t;
	c->what = what;
	c->array = array;
	c->stride = stride;
	if (!array) {
		hp_set_err(err, errlen, "%s is NULL", what);
		return -EFAULT;
	}
	if (stride == 0 || stride > HP_VMS_MAX_STRIDE) {
		hp_set_err(err, errlen, "%s: absurd entry stride %llu (expected 1..%d)", what,
			(unsigned long long)stride, HP_VMS_MAX_STRIDE);
		return -EINVAL;
	}
	return 0;
}

static int cursor_fetch(struct table_cursor *c, size_t i, char *err, size_t errlen)
{
	if (read_mem(c->t, c->buf, c->array + i * c->stride, c->stride) != 0) {
		hp_set_err(err, errlen, "%s: entry %zu at %p is not readable", c->what, i,
			(const void *)(c->array + i * c->stride));
		return -EFAULT;
	}
	return 0;
}

static const void *member_ptr(const struct table_cursor *c, uint64_t off)
{
	const void *p;
	memcpy(&p, c->buf + off, sizeof(p));
	return p;
}

static uint64_t member_u64(const struct table_cursor *c, uint64_t off)
{
	uint64_t x;
	memcpy(&x, c->buf + off, sizeof(x));
	return x;
}

static int32_t member_i32(const struct table_cursor *c, uint64_t off)
{
	int32_t x;
	memcpy(&x, c->buf + off, sizeof(x));
	return x;
}

/* Copies the string the entry's member points to. NULL stays NULL when
 * `nullable`; otherwise it is an error. */
static int member_string(struct hp_vms *v, const struct table_cursor *c, size_t i, const char *member,
			 uint64_t off, bool nullable, const char **out, char *err, size_t errlen)
{
	const void *p = member_ptr(c, off);
	if (!p) {
		if (nullable) {
			*out = NULL;
			return 0;
		}
		hp_set_err(err, errlen, "%s: entry %zu has a NULL %s", c->what, i, member);
		return -EBADMSG;
	}
	char buf[HP_VMS_MAX_NAME];
	long len = read_string(c->t, buf, sizeof(buf), p);
	if (len == -EFAULT) {
		hp_set_err(err, errlen, "%s: entry %zu: %s points to unreadable memory %p", c->what, i, member, p);
		return -EFAULT;
	}
	if (len < 0) {
		hp_set_err(err, errlen, "%s: entry %zu: %s is not NUL-terminated within %d bytes", c->what, i,
			member, HP_VMS_MAX_NAME);
		return -ENAMETOOLONG;
	}
	*out = arena_strdup(v, buf, (size_t)len);
	if (!*out) {
		hp_set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* Counts entries up to the terminator (first member NULL). */
static int count_entries(struct table_cursor *c, uint64_t name_off, size_t *count, char *err, size_t errlen)
{
	for (size_t i = 0; i < HP_VMS_MAX_ENTRIES; i++) {
		int rc = cursor_fetch(c, i, err, errlen);
		if (rc)
			return rc;
		if (member_ptr(c, name_off) == NULL) {
			*count = i;
			return 0;
		}
	}
	hp_set_err(err, errlen, "%s: no terminating entry within %d entries", c->what, HP_VMS_MAX_ENTRIES);
	return -E2BIG;
}

static const char *field_key(const void *ctx, uint32_t id)
{
	return ((const struct hp_vms *)ctx)->field_keys[id];
}
static const char *type_key(const void *ctx, uint32_t id)
{
	return ((const struct hp_vms *)ctx)->types[id].name;
}
static const char *int_key(const void *ctx, uint32_t id)
{
	return ((const struct hp_vms *)ctx)->ints[id].name;
}
static const char *long_key(const void *ctx, uint32_t id)
{
	return ((const struct hp_vms *)ctx)->longs[id].name;
}

static int load_structs(struct hp_vms *v, const struct hp_vms_tables *t, char *err, size_t errlen)
{
	const struct hp_vms_struct_layout *l = &t->structs;
	struct table_cursor c;
	const char *what = "gHotSpotVMStructs";
	int rc = cursor_init(&c, t, what, l->array, l->stride, err, errlen);
	if (!rc)
		rc = check_member(what, "typeName", l->type_name, 8, l->stride, err, errlen);
	if (!rc)
		rc = check_member(what, "fieldName", l->field_name, 8, l->stride, err, errlen);
	if (!rc)
		rc = check_member(what, "typeString", l->type_string, 8, l->stride, err, errlen);
	if (!rc)
		rc = check_member(what, "isStatic", l->is_static, 4, l->stride, err, errlen);
	if (!rc)
		rc = check_member(what, "offset", l->offset, 8, l->stride, err, errlen);
	if (!rc)
		rc = check_member(what, "address", l->address, 8, l->stride, err, errlen);
	if (!rc)
		rc = count_entries(&c, l->type_name, &v->nfields, err, errlen);
	if (rc)
		return rc;

	v->fields = calloc(v->nfields + 1, sizeof(*v->fields));
	v->field_keys = calloc(v->nfields + 1, sizeof(*v->field_keys));
	if (!v->fields || !v->field_keys)
		return -ENOMEM;
	for (size_t i = 0; i < v->nfields; i++) {
		struct hp_vms_field *f = &v->fields[i];
		if ((rc = cursor_fetch(&c, i, err, errlen)) ||
		    (rc = member_string(v, &c, i, "typeName", l->type_name, false, &f->type_name, err, errlen)) ||
		    (rc = member_string(v, &c, i, "fieldName", l->field_name, false, &f->field_name, err, errlen)) ||
		    (rc = member_string(v, &c, i, "typeString", l->type_string, true, &f->type_string, err, errlen)))
			return rc;
		if (!f->type_string)
			f->type_string = "";
		f->is_static = member_i32(&c, l->is_static) != 0;
		f->offset = member_u64(&c, l->offset);
		f->address = member_ptr(&c, l->address);
		size_t tl = strlen(f->type_name), fl = strlen(f->field_name);
		char *key = arena_alloc(v, tl + 2 + fl + 1);
		if (!key)
			return -ENOMEM;
		memcpy(key, f->type_name, tl);
		memcpy(key + tl, "::", 2);
		memcpy(key + tl + 2, f->field_name, fl + 1);
		v->field_keys[i] = key;
	}
	if (hp_strmap_init(&v->field_map, (uint32_t)v->nfields, field_key, v))
		return -ENOMEM;
	for (size_t i = 0; i < v->nfields; i++)
		hp_strmap_insert(&v->field_map, (uint32_t)i);
	return 0;
}

static int load_types(struct hp_vms *v, const struct hp_vms_tables *t, char *err, size_t errlen)
{
	const struct hp_vms_type_layout *l = &t->types;
	struct table_cursor c;
	const char *what = "gHotSpotVMTypes";
	int rc = cursor_init(&c, t, what, l->array, l->stride, err, errlen);
	if (!rc)
		rc = check_member(what, "typeName", l->type_name, 8, l->stride, err, errlen);
	if (!rc)
		rc = check_member(what, "superclassName", l->superclass_name, 8, l->stride, err, errlen);
	if (!rc)
		rc = check_member(what, "isOopType", l->is_oop, 4, l->stride, err, errlen);
	if (!rc)
		rc = check_member(what, "isIntegerType", l->is_integer, 4, l->stride, err, errlen);
	if (!rc)
		rc = check_member(what, "isUnsigned", l->is_unsigned, 4, l->stride, err, errlen);
	if (!rc)
		rc = check_member(what, "size", l->size, 8, l->stride, err, errlen);
	if (!rc)
		rc = count_entries(&c, l->type_name, &v->ntypes, err, errlen);
	if (rc)
		return rc;

	v->types = calloc(v->ntypes + 1, sizeof(*v->types));
	if (!v->types)
		return -ENOMEM;
	for (size_t i = 0; i < v->ntypes; i++) {
		struct hp_vms_type *ty = &v->types[i];
		if ((rc = cursor_fetch(&c, i, err, errlen)) ||
		    (rc = member_string(v, &c, i, "typeName", l->type_name, false, &ty->name, err, errlen)) ||
		    (rc = member_string(v, &c, i, "superclassName", l->superclass_name, true, &ty->superclass,
					err, errlen)))
			return rc;
		ty->is_oop = member_i32(&c, l->is_oop) != 0;
		ty->is_integer = member_i32(&c, l->is_integer) != 0;
		ty->is_unsigned = member_i32(&c, l->is_unsigned) != 0;
		ty->size = member_u64(&c, l->size);
	}
	if (hp_strmap_init(&v->type_map, (uint32_t)v->ntypes, type_key, v))
		return -ENOMEM;
	for (size_t i = 0; i < v->ntypes; i++)
		hp_strmap_insert(&v->type_map, (uint32_t)i);
	return 0;
}

static int load_constants(struct hp_vms *v, const struct hp_vms_tables *t, const char *what,
			  const struct hp_vms_const_layout *l, size_t value_size, struct hp_vms_const **out,
			  size_t *count, struct hp_strmap *map, hp_strmap_key_fn key_of, char *err, size_t errlen)
{
	struct table_cursor c;
	int rc = cursor_init(&c, t, what, l->array, l->stride, err, errlen);
	if (!rc)
		rc = check_member(what, "name", l->name, 8, l->stride, err, errlen);
	if (!rc)
		rc = check_member(what, "value", l->value, value_size, l->stride, err, errlen);
	if (!rc)
		rc = count_entries(&c, l->name, count, err, errlen);
	if (rc)
		return rc;

	*out = calloc(*count + 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < *count; i++) {
		struct hp_vms_const *k = &(*out)[i];
		if ((rc = cursor_fetch(&c, i, err, errlen)) ||
		    (rc = member_string(v, &c, i, "name", l->name, false, &k->name, err, errlen)))
			return rc;
		/* Int constants are int32 (sign-extended into the u64). */
		k->value = value_size == 4 ? (uint64_t)(int64_t)member_i32(&c, l->value) : member_u64(&c, l->value);
	}
	if (hp_strmap_init(map, (uint32_t)*count, key_of, v))
		return -ENOMEM;
	for (size_t i = 0; i < *count; i++)
		hp_strmap_insert(map, (uint32_t)i);
	return 0;
}

int hp_vms_load(const struct hp_vms_tables *t, struct hp_vms **out, char *err, size_t errlen)
{
	*out = NULL;
	struct hp_vms *v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	int rc = load_structs(v, t, err, errlen);
	if (!rc)
		rc = load_types(v, t, err, errlen);
	if (!rc)
		rc = load_constants(v, t, "gHotSpotVMIntConstants", &t->int_constants, 4, &v->ints, &v->nints,
				    &v->int_map, int_key, err, errlen);
	if (!rc)
		rc = load_constants(v, t, "gHotSpotVMLongConstants", &t->long_constants, 8, &v->longs, &v->nlongs,
				    &v->long_map, long_key, err, errlen);
	if (rc) {
		if (rc == -ENOMEM)
			hp_set_err(err, errlen, "out of memory reading VMStructs");
		hp_vms_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

void hp_vms_free(struct hp_vms *v)
{
	if (!v)
		return;
	hp_strmap_free(&v->field_map);
	hp_strmap_free(&v->type_map);
	hp_strmap_free(&v->int_map);
	hp_strmap_free(&v->long_map);
	free(v->fields);
	free(v->field_keys);
	free(v->types);
	free(v->ints);
	free(v->longs);
	for (struct arena_chunk *c = v->arena, *n; c; c = n) {
		n = c->next;
		free(c);
	}
	free(v);
}

const struct hp_vms_field *hp_vms_field(const struct hp_vms *v, const char *type, const char *field)
{
	char key[HP_VMS_MAX_NAME * 2 + 3];
	int n = snprintf(key, sizeof(key), "%s::%s", type, field);
	if (n < 0 || (size_t)n >= sizeof(key))
		return NULL;
	uint32_t id = hp_strmap_find_n(&v->field_map, key, (size_t)n);
	return id == HP_STRMAP_NONE ? NULL : &v->fields[id];
}

const struct hp_vms_type *hp_vms_type(const struct hp_vms *v, const char *type)
{
	uint32_t id = hp_strmap_find(&v->type_map, type);
	return id == HP_STRMAP_NONE ? NULL : &v->types[id];
}

int hp_vms_int_constant(const struct hp_vms *v, const char *name, int32_t *out)
{
	uint32_t id = hp_strmap_find(&v->int_map, name);
	if (id == HP_STRMAP_NONE)
		return -ENOENT;
	*out = (int32_t)v->ints[id].value;
	return 0;
}

int hp_vms_long_constant(const struct hp_vms *v, const char *name, uint64_t *out)
{
	uint32_t id = hp_strmap_find(&v->long_map, name);
	if (id == HP_STRMAP_NONE)
		return -ENOENT;
	*out = v->longs[id].value;
	return 0;
}

int64_t hp_vms_offset(const struct hp_vms *v, const char *type, const char *field)
{
	const struct hp_vms_field *f = hp_vms_field(v, type, field);
	if (!f || f->is_static || f->offset > INT64_MAX)
		return -1;
	return (int64_t)f->offset;
}

const void *hp_vms_address(const struct hp_vms *v, const char *type, const char *field)
{
	const struct hp_vms_field *f = hp_vms_field(v, type, field);
	return f && f->is_static ? f->address : NULL;
}

bool hp_vms_is_subtype(const struct hp_vms *v, const char *type, const char *ancestor)
{
	/* Bounded walk: a malformed table could contain a superclass cycle. */
	for (int depth = 0; type && depth < 64; depth++) {
		if (strcmp(type, ancestor) == 0)
			return true;
		const struct hp_vms_type *t = hp_vms_type(v, type);
		type = t ? t->superclass : NULL;
	}
	return false;
}

/* ---- declarative lookups (hp_vms_bind) ---------------------------------- */

/* The entry looked up under each of its "A|B" types in turn. */
static bool bind_one(const struct hp_vms *v, const struct hp_vms_entry *e, char *base)
{
	const char *t = e->type;
	while (t && *t) {
		const char *bar = strchr(t, '|');
		size_t len = bar ? (size_t)(bar - t) : strlen(t);
		char name[HP_VMS_MAX_NAME];
		if (len >= sizeof(name))
			return false;
		memcpy(name, t, len);
		name[len] = 0;
		if (e->what == HP_VMS_ADDRESS) {
			const void *a = hp_vms_address(v, name, e->field);
			if (a) {
				memcpy(base + e->dest, &a, sizeof(a));
				return true;
			}
		} else {
			const struct hp_vms_type *ty = e->what == HP_VMS_SIZE ? hp_vms_type(v, name) : NULL;
			int64_t o = e->what == HP_VMS_SIZE ? (ty && ty->size > 0 && ty->size <= INT64_MAX ? (int64_t)ty->size : -1)
							   : hp_vms_offset(v, name, e->field);
			if (o >= 0) {
				memcpy(base + e->dest, &o, sizeof(o));
				return true;
			}
		}
		t = bar ? bar + 1 : NULL;
	}
	return false;
}

/* "A::x (JDK 25+)" or "sizeof(A)" into out. */
static int entry_name(const struct hp_vms_entry *e, char *out, size_t len)
{
	char range[32] = "";
	if (e->since && e->until)
		snprintf(range, sizeof(range), " (JDK %d-%d)", e->since, e->until);
	else if (e->since)
		snprintf(range, sizeof(range), " (JDK %d+)", e->since);
	else if (e->until)
		snprintf(range, sizeof(range), " (JDK 11-%d)", e->until);
	return e->what == HP_VMS_SIZE ? snprintf(out, len, "sizeof(%s)%s", e->type, range)
				      : snprintf(out, len, "%s::%s%s", e->type, e->field, range);
}

int hp_vms_bind(const struct hp_vms *v, const struct hp_vms_entry *t, size_t n, void *base, const char *who,
		char *err, size_t errlen)
{
	char msg[1024];
	size_t used = 0;
	int missing = 0;
	for (size_t i = 0; i < n; i++) {
		const struct hp_vms_entry *e = &t[i];
		if (e->what == HP_VMS_ADDRESS)
			memset((char *)base + e->dest, 0, sizeof(void *));
		else
			memcpy((char *)base + e->dest, &(int64_t){ -1 }, sizeof(int64_t));
	}
	bool found[n ? n : 1];
	for (size_t i = 0; i < n; i++)
		found[i] = v && bind_one(v, &t[i], base);
	for (size_t i = 0; i < n; i++) {
		const struct hp_vms_entry *e = &t[i];
		if (found[i] || e->need == HP_VMS_OPTIONAL)
			continue;
		bool group_ok = false, first = true;
		if (e->need > 0) {
			/* A group is named once, at its first member; it is met
			 * by any member found. */
			for (size_t j = 0; j < n; j++) {
				if (t[j].need != e->need)
					continue;
				if (j < i)
					first = false;
				if (found[j])
					group_ok = true;
			}
			if (group_ok || !first)
				continue;
		}
		char one[300];
		if (e->need > 0) {
			size_t k = (size_t)snprintf(one, sizeof(one), "neither");
			int members = 0;
			for (size_t j = i; j < n && k < sizeof(one); j++)
				if (t[j].need == e->need) {
					k += (size_t)snprintf(one + k, sizeof(one) - k, "%s", members++ ? " nor " : " ");
					if (k < sizeof(one))
						k += (size_t)entry_name(&t[j], one + k, sizeof(one) - k);
				}
		} else {
			entry_name(e, one, sizeof(one));
		}
		if (used < sizeof(msg))
			used += (size_t)snprintf(msg + used, sizeof(msg) - used, "%s%s", missing ? ", " : "", one);
		missing++;
	}
	if (!v)
		return hp_fail(err, errlen, -ENOENT, "%s: no VMStructs", who);
	if (missing)
		return hp_fail(err, errlen, -ENOENT, "%s: VMStructs lacks %s", who, msg);
	return 0;
}

size_t hp_vms_field_count(const struct hp_vms *v) { return v->nfields; }
size_t hp_vms_type_count(const struct hp_vms *v) { return v->ntypes; }
size_t hp_vms_int_constant_count(const struct hp_vms *v) { return v->nints; }
size_t hp_vms_long_constant_count(const struct hp_vms *v) { return v->nlongs; }

const struct hp_vms_field *hp_vms_field_at(const struct hp_vms *v, size_t i)
{
	return i < v->nfields ? &v->fields[i] : NULL;
}

const struct hp_vms_type *hp_vms_type_at(const struct hp_vms *v, size_t i)
{
	return i < v->ntypes ? &v->types[i] : NULL;
}
