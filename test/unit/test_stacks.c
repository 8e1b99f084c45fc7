/* The site table's classes and method names (src/agent/stacks.c) against a
 * JVMTI environment of our own: classes and methods are small structs,
 * tags live in them as in HotSpot's tag map, and a JVMTI environment can
 * outlive a site table (hp_profiler_stop keeps it when the agent thread
 * is slow to exit), so one table meets the tags another one set. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/stacks.h"

struct fake_class {
	const char *sig, *file;
	jlong tag;
	bool refuse_tag;                /* SetTag fails */
};
struct fake_method {
	const char *name, *sig;
	struct fake_class *holder;
};

static char *dup_or_null(const char *s, jvmtiError *rc)
{
	char *d = s ? strdup(s) : NULL;
	*rc = s && !d ? JVMTI_ERROR_OUT_OF_MEMORY : JVMTI_ERROR_NONE;
	return d;
}

static jvmtiError JNICALL get_tag(jvmtiEnv *env, jobject o, jlong *tag)
{
	(void)env;
	*tag = ((struct fake_class *)o)->tag;
	return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL set_tag(jvmtiEnv *env, jobject o, jlong tag)
{
	(void)env;
	struct fake_class *c = (struct fake_class *)o;
	if (c->refuse_tag)
		return JVMTI_ERROR_INTERNAL;
	c->tag = tag;
	return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL class_signature(jvmtiEnv *env, jclass k, char **sig, char **generic)
{
	(void)env;
	jvmtiError rc;
	*sig = dup_or_null(((struct fake_class *)k)->sig, &rc);
	if (generic)
		*generic = NULL;
	return rc;
}

static jvmtiError JNICALL source_file(jvmtiEnv *env, jclass k, char **name)
{
	(void)env;
	struct fake_class *c = (struct fake_class *)k;
	if (!c->file)
		return JVMTI_ERROR_ABSENT_INFORMATION;
	jvmtiError rc;
	*name = dup_or_null(c->file, &rc);
	return rc;
}

static jvmtiError JNICALL method_name(jvmtiEnv *env, jmethodID m, char **name, char **sig, char **generic)
{
	(void)env;
	struct fake_method *fm = (struct fake_method *)m;
	jvmtiError rc = JVMTI_ERROR_NONE, rc2 = JVMTI_ERROR_NONE;
	if (name)
		*name = dup_or_null(fm->name, &rc);
	if (sig)
		*sig = dup_or_null(fm->sig, &rc2);
	if (generic)
		*generic = NULL;
	return rc ? rc : rc2;
}

static jvmtiError JNICALL declaring_class(jvmtiEnv *env, jmethodID m, jclass *k)
{
	(void)env;
	*k = (jclass)((struct fake_method *)m)->holder;
	return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL line_table(jvmtiEnv *env, jmethodID m, jint *n, jvmtiLineNumberEntry **t)
{
	(void)env, (void)m;
	*t = malloc(2 * sizeof(**t));
	if (!*t)
		return JVMTI_ERROR_OUT_OF_MEMORY;
	(*t)[0] = (jvmtiLineNumberEntry){ 0, 10 };
	(*t)[1] = (jvmtiLineNumberEntry){ 5, 11 };
	*n = 2;
	return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL deallocate(jvmtiEnv *env, unsigned char *p)
{
	(void)env;
	free(p);
	return JVMTI_ERROR_NONE;
}

static struct jvmtiInterface_1_ fns;
static const struct jvmtiInterface_1_ *env_fns = &fns;
static jvmtiEnv *jvmti = (jvmtiEnv *)&env_fns;

static void setup(void)
{
	memset(&fns, 0, sizeof(fns));
	fns.GetTag = get_tag;
	fns.SetTag = set_tag;
	fns.GetClassSignature = class_signature;
	fns.GetSourceFileName = source_file;
	fns.GetMethodName = method_name;
	fns.GetMethodDeclaringClass = declaring_class;
	fns.GetLineNumberTable = line_table;
	fns.Deallocate = deallocate;
}

TestSuite(sites, .init = setup);

/* The site of one frame in m at location 5, and its frame's record. */
static const struct hp_frame_rec *frame_of(struct hp_sites *t, struct fake_method *m, uint32_t class_id)
{
	jvmtiFrameInfo f = { (jmethodID)m, 5 };
	struct hp_site *s = hp_sites_intern(t, jvmti, NULL, &f, 1, class_id);
	cr_assert_not_null(s);
	cr_assert_eq(s->nframes, 1);
	return hp_sites_frame(t, s->ids[0]);
}

Test(sites, methods_named_by_their_class_record)
{
	struct fake_class list = { "Ljava/util/ArrayList;", "ArrayList.java", 0, false };
	struct fake_method grow = { "grow", "(I)V", &list }, add = { "add", "(Ljava/lang/Object;)Z", &list };
	struct hp_sites t;
	cr_assert_eq(hp_sites_init(&t, 64), 0);
	const struct hp_frame_rec *a = frame_of(&t, &grow, 0), *b = frame_of(&t, &add, 0);
	cr_expect_str_eq(a->named.function, "java.util.ArrayList.grow");
	cr_expect_str_eq(b->named.function, "java.util.ArrayList.add");
	cr_expect_str_eq(a->named.file, "ArrayList.java");
	cr_expect_eq(a->named.file, b->named.file, "one source-file string a class");
	cr_expect_eq(a->named.line, 11);
	cr_expect_str_eq(a->named.descriptor, "(I)V");
	/* the class of an allocation and of a named method are one record */
	cr_expect_eq(hp_sites_class_id(&t, jvmti, (jclass)&list), 1);
	cr_expect_str_eq(hp_sites_class_name(&t, 1), "java.util.ArrayList");
	cr_expect_eq(atomic_load(&t.nclasses), 1);
	hp_sites_free(&t);
}

Test(sites, another_tables_tags_are_not_trusted)
{
	struct fake_class c[3] = {
		{ "Lp/A;", "A.java", 0, false }, { "Lp/B;", "B.java", 0, false }, { "[[I", NULL, 0, false },
	};
	struct fake_method mb = { "run", "()V", &c[1] };
	struct hp_sites first, second;
	cr_assert_eq(hp_sites_init(&first, 64), 0);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(hp_sites_class_id(&first, jvmti, (jclass)&c[i]), (uint32_t)i + 1);
	hp_sites_free(&first);
	/* The JVMTI environment (and so the tags) outlives the first table:
	 * the second has no classes yet, and B's tag still says 2. */
	cr_assert_eq(hp_sites_init(&second, 64), 0);
	const struct hp_frame_rec *r = frame_of(&second, &mb, 0);
	cr_expect_str_eq(r->named.function, "p.B.run");
	cr_expect_str_eq(r->named.file, "B.java");
	cr_expect_eq(hp_sites_class_id(&second, jvmti, (jclass)&c[1]), 1, "B made anew, id 1 of this table");
	cr_expect_eq(hp_sites_class_id(&second, jvmti, (jclass)&c[2]), 2);
	cr_expect_str_eq(hp_sites_class_name(&second, 2), "int[][]");
	/* c[0]'s tag is the first table's id 1, which this table gave to B */
	cr_expect_eq(hp_sites_class_id(&second, jvmti, (jclass)&c[0]), 3);
	cr_expect_str_eq(hp_sites_class_name(&second, 3), "p.A");
	cr_expect_str_eq(hp_sites_class_name(&second, 4), "", "past the classes: no name");
	cr_expect_str_eq(hp_sites_class_name(&second, 0), "");
	hp_sites_free(&second);
}

Test(sites, class_records_across_chunks)
{
	enum { N = 2 * HP_CLASS_CHUNK + 5 };
	struct fake_class *c = calloc(N, sizeof(*c));
	char (*sig)[32] = calloc(N, sizeof(*sig));
	cr_assert(c && sig);
	struct hp_sites t;
	cr_assert_eq(hp_sites_init(&t, 64), 0);
	for (int i = 0; i < N; i++) {
		snprintf(sig[i], sizeof(sig[i]), "Lx/C%d;", i);
		c[i] = (struct fake_class){ sig[i], NULL, 0, false };
		cr_assert_eq(hp_sites_class_id(&t, jvmti, (jclass)&c[i]), (uint32_t)i + 1);
	}
	char want[32];
	for (int i = 0; i < N; i++) {
		cr_assert_eq(hp_sites_class_id(&t, jvmti, (jclass)&c[i]), (uint32_t)i + 1, "class %d: its tag", i);
		snprintf(want, sizeof(want), "x.C%d", i);
		cr_assert_str_eq(hp_sites_class_name(&t, (uint32_t)i + 1), want);
	}
	hp_sites_free(&t);
	free(c);
	free(sig);
}

Test(sites, a_class_that_cannot_be_tagged_is_named_all_the_same)
{
	struct fake_class k = { "Lq/Untaggable;", "U.java", 0, true };
	struct fake_method m1 = { "one", "()V", &k }, m2 = { "two", "()V", &k };
	struct hp_sites t;
	cr_assert_eq(hp_sites_init(&t, 64), 0);
	const struct hp_frame_rec *a = frame_of(&t, &m1, 0), *b = frame_of(&t, &m2, 0);
	cr_expect_str_eq(a->named.function, "q.Untaggable.one");
	cr_expect_str_eq(b->named.function, "q.Untaggable.two");
	cr_expect_str_eq(a->named.file, "U.java");
	cr_expect_eq(hp_sites_class_id(&t, jvmti, (jclass)&k), 0, "no id without a tag");
	cr_expect_eq(atomic_load(&t.nclasses), 0, "no record made at each sight");
	hp_sites_free(&t);
}
