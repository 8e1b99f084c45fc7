/* Profile writers: pprof (decoded back with the generated protobuf-c code,
 * then read by the real `go tool pprof`), collapsed stacks, HTML; and the
 * failure paths, which must leave an existing profile untouched. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "agent/profile.h"
#include "agent/writer.h"
#include "profile.pb-c.h"

/* ---- the synthetic profile ------------------------------------------- */

#define WEIRD "com.example.Ünïcödé.\"quoted\"</script><!--x"

static const struct hp_frame frames[] = {
	{ "java.util.ArrayList.grow", "ArrayList.java", 237, "(I)V" },  /* 0 */
	{ "java.util.ArrayList.add", "ArrayList.java", 467, "(Ljava/lang/Object;)Z" },   /* 1 */
	{ "com.example.Cache.put", "Cache.java", 42, "(Ljava/lang/String;[B)V" },          /* 2 */
	{ "com.example.Main.main", "Main.java", 10, "([Ljava/lang/String;)V" },           /* 3 */
	{ WEIRD, "Weird.java", 7, "()V" },                             /* 4 */
	{ "com.example.Cache.put", "Cache.java", 42, "(Ljava/lang/String;[B)V" },          /* 5: same as 2 */
	{ "com.example.Cache.put", "Cache.java", 50, "(Ljava/lang/String;[B)V" },          /* 6: other line */
	{ "[native]", "", 0, NULL },                                  /* 7: not Java */
	{ "java.lang.Thread.run", "", 0, "()V" },                      /* 8: no file */
	{ "com.example.Unused.never", "Unused.java", 1, "()V" },       /* 9: no sample */
};
static const uint32_t st_a[] = { 0, 1, 2, 3 };
static const uint32_t st_b[] = { 2, 3 };
static const uint32_t st_c[] = { 4, 5, 3 };
static const uint32_t st_d[] = { 6, 3 };
static const uint32_t st_e[] = { 7, 6, 8 };
static const uint32_t st_g[] = { 3 };
/* alloc objects/bytes, inuse objects/bytes, inuse lo/hi, class */
static const struct hp_prof_sample samples[] = {
	{ st_a, 4, 10, 1000, 6, 600, 500, 700, "java.lang.Object[]", 2, 200 },
	{ st_b, 2, 20, 2000, 1, 40, 40, 40, "byte[]", 0, 0 },
	{ st_c, 3, 3, 300, 3, 300, 200, 400, "", 0, 0 },
	{ st_d, 2, 0, 0, 1, 100, 50, 150, "java.lang.String", 0, 0 },
	{ st_e, 3, 5, 500, 5, 520, 420, 620, "java.lang.String", 1, 64 },
	{ st_g, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
};
/* How pprof displays WEIRD: it drops "<...>" as C++ template arguments
 * (graph.ShortenFunctionName); -raw shows the name as stored. */
#define WEIRD_SHOWN "com.example.Ünïcödé.\"quoted\"<!--x"
#define ALLOC_OBJECTS 38
#define ALLOC_SPACE 3800
#define INUSE_OBJECTS 16
#define INUSE_SPACE 1560

static const char *const comments[] = {
	"live heap scaled to 1.5 KiB from last-gc-fields after GC #12",
	"escapes <b>&amp;</b> \"q\"",
};

static const struct hp_profile profile = {
	.frames = frames, .nframes = sizeof(frames) / sizeof(frames[0]),
	.samples = samples, .nsamples = sizeof(samples) / sizeof(samples[0]),
	.period = 524288, .time_nanos = 1700000000123456789LL, .duration_nanos = 2500000000LL,
	.comments = comments, .ncomments = 2,
};

/* ---- helpers ---------------------------------------------------------- */

static char dir[64];
static char *paths[64];
static size_t npaths;


static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(p);
}

static void setup_dir(void)
{
	umask(022);
	strcpy(dir, "/tmp/hp-writers-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown_dir(void)
{
	hp_out_test_hook = NULL;
	if (!getenv("HP_KEEP_TEST_FILES"))
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	while (npaths)
		free(paths[--npaths]);
}

TestSuite(writers, .init = setup_dir, .fini = teardown_dir);

/* Valid until the end of the test (freed by the suite's fini). */
static char *path_in(const char *name)
{
	char *p;
	cr_assert_lt(npaths, sizeof(paths) / sizeof(paths[0]));
	cr_assert_neq(asprintf(&p, "%s/%s", dir, name), -1);
	return paths[npaths++] = p;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s: %s", path, strerror(errno));
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	size_t r;
	while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap)
			buf = realloc(buf, (cap *= 2) + 1);
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static void spit(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

/* Runs a shell command, returns its exit status and stdout+stderr. */
static int run(const char *cmd, char **out)
{
	char *full;
	cr_assert_neq(asprintf(&full, "(%s) 2>&1", cmd), -1);
	FILE *f = popen(full, "r");
	cr_assert_not_null(f);
	size_t cap = 4096, n = 0, r;
	char *buf = malloc(cap + 1);
	while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap)
			buf = realloc(buf, (cap *= 2) + 1);
	}
	buf[n] = '\0';
	int st = pclose(f);
	free(full);
	*out = buf;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static size_t entries_in_dir(void)
{
	DIR *d = opendir(dir);
	cr_assert_not_null(d);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static Perftools__Profiles__Profile *decode_pprof(const char *path)
{
	size_t zlen;
	char *z = slurp(path, &zlen);
	cr_assert(zlen > 18 && (unsigned char)z[0] == 0x1f && (unsigned char)z[1] == 0x8b, "%s is not gzip", path);
	z_stream s = { 0 };
	cr_assert_eq(inflateInit2(&s, 15 + 16), Z_OK);
	size_t cap = 1 << 16, n = 0;
	unsigned char *raw = malloc(cap);
	s.next_in = (unsigned char *)z;
	s.avail_in = (uInt)zlen;
	int rc;
	do {
		if (n == cap)
			raw = realloc(raw, cap *= 2);
		s.next_out = raw + n;
		s.avail_out = (uInt)(cap - n);
		rc = inflate(&s, Z_NO_FLUSH);
		n = cap - s.avail_out;
	} while (rc == Z_OK);
	cr_assert_eq(rc, Z_STREAM_END, "gzip stream of %s does not end cleanly (%d)", path, rc);
	cr_assert_eq(s.avail_in, 0, "trailing bytes after the gzip stream");
	inflateEnd(&s);
	free(z);
	Perftools__Profiles__Profile *m = perftools__profiles__profile__unpack(NULL, n, raw);
	free(raw);
	cr_assert_not_null(m, "protobuf-c cannot unpack %s", path);
	return m;
}

static const char *str_at(const Perftools__Profiles__Profile *m, int64_t i)
{
	cr_assert(i >= 0 && (size_t)i < m->n_string_table, "string index %lld out of range", (long long)i);
	return m->string_table[i];
}

static const Perftools__Profiles__Location *loc_by_id(const Perftools__Profiles__Profile *m, uint64_t id)
{
	for (size_t i = 0; i < m->n_location; i++)
		if (m->location[i]->id == id)
			return m->location[i];
	cr_assert_fail("no location %llu", (unsigned long long)id);
	return NULL;
}

static const Perftools__Profiles__Function *func_by_id(const Perftools__Profiles__Profile *m, uint64_t id)
{
	for (size_t i = 0; i < m->n_function; i++)
		if (m->function[i]->id == id)
			return m->function[i];
	cr_assert_fail("no function %llu", (unsigned long long)id);
	return NULL;
}

/* The location as "function:line", to compare stacks by content. */
static void loc_name(const Perftools__Profiles__Profile *m, uint64_t id, char *buf, size_t n)
{
	const Perftools__Profiles__Location *l = loc_by_id(m, id);
	cr_assert_eq(l->n_line, 1);
	const Perftools__Profiles__Function *f = func_by_id(m, l->line[0]->function_id);
	snprintf(buf, n, "%s:%lld", str_at(m, f->name), (long long)l->line[0]->line);
}

/* Go: HP_GO, then the usual install path, then PATH. No Go is a failure:
 * the pprof check is the point of this test. */
static const char *find_go(void)
{
	static char found[4096];
	const char *env = getenv("HP_GO");
	if (env && access(env, X_OK) == 0)
		return env;
	if (access("/usr/local/go/bin/go", X_OK) == 0)
		return "/usr/local/go/bin/go";
	const char *path = getenv("PATH");
	while (path && *path) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);
		snprintf(found, sizeof(found), "%.*s/go", (int)len, path);
		if (len && access(found, X_OK) == 0)
			return found;
		path = end ? end + 1 : NULL;
	}
	cr_assert_fail("Go not found (HP_GO, /usr/local/go/bin/go, PATH): the pprof output is checked with "
		       "`go tool pprof`; install Go to run this test");
	return NULL;
}

/* `go tool pprof ARGS FILE`, from the test directory (no go.mod around,
 * no toolchain download), with a build cache even without HOME. */
static char *pprof_tool(const char *args, const char *file)
{
	const char *go = find_go();
	char *cmd, *out;
	const char *cache = getenv("HOME") || getenv("GOCACHE") || getenv("XDG_CACHE_HOME") ? "" :
											       "GOCACHE=/tmp/hp-gocache ";
	cr_assert_neq(asprintf(&cmd, "cd %s && %sGOTOOLCHAIN=local GOFLAGS= %s tool pprof %s %s", dir, cache, go, args,
			       file),
		      -1);
	int rc = run(cmd, &out);
	cr_assert_eq(rc, 0, "%s failed (%d):\n%s", cmd, rc, out);
	free(cmd);
	return out;
}

/* The -top line of `name`, which pprof ends with the function name. */
static const char *top_line(const char *top, const char *name, char *line, size_t n)
{
	for (const char *p = top; *p;) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		size_t nl = strlen(name);
		if (len >= nl && memcmp(p + len - nl, name, nl) == 0 && (len == nl || p[len - nl - 1] == ' ')) {
			snprintf(line, n, "%.*s", (int)len, p);
			return line;
		}
		p = end ? end + 1 : p + len;
	}
	cr_assert_fail("no line for %s in pprof -top:\n%s", name, top);
	return NULL;
}

/* ---- pprof ------------------------------------------------------------ */

Test(writers, pprof_decodes_with_the_conventions)
{
	char err[256] = "";
	const char *path = path_in("heap.pb.gz");
	cr_assert_eq(hp_write_pprof(&profile, path, err, sizeof(err)), 0, "%s", err);
	struct stat sb;
	cr_assert_eq(stat(path, &sb), 0);
	cr_assert_eq(sb.st_mode & 0777, 0644, "mode %o: mkstemp's 0600 should follow the umask", sb.st_mode & 0777);
	cr_assert_eq(entries_in_dir(), 1, "temporary file left behind");

	Perftools__Profiles__Profile *m = decode_pprof(path);
	cr_assert(m->n_string_table > 0);
	cr_assert_str_eq(m->string_table[0], "");
	for (size_t i = 0; i < m->n_string_table; i++)
		for (size_t j = i + 1; j < m->n_string_table; j++)
			cr_assert_str_neq(m->string_table[i], m->string_table[j], "string %zu repeated", i);

	static const char *const types[HP_PPROF_TYPES][2] = {
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
		{ "recent_objects", "count" }, { "recent_space", "bytes" },
	};
	cr_assert_eq(m->n_sample_type, HP_PPROF_TYPES);
	cr_assert_str_eq(str_at(m, m->default_sample_type), "inuse_space");
	for (int i = 0; i < HP_PPROF_TYPES; i++) {
		cr_assert_str_eq(str_at(m, m->sample_type[i]->type), types[i][0]);
		cr_assert_str_eq(str_at(m, m->sample_type[i]->unit), types[i][1]);
	}
	cr_assert_not_null(m->period_type);
	cr_assert_str_eq(str_at(m, m->period_type->type), "space");
	cr_assert_str_eq(str_at(m, m->period_type->unit), "bytes");
	cr_assert_eq(m->period, 524288);
	cr_assert_eq(m->time_nanos, 1700000000123456789LL + 2500000000LL);   /* the end: the moment it describes */
	cr_assert_eq(m->duration_nanos, 2500000000LL);
	cr_assert_eq(m->n_comment, 2);
	cr_assert_str_eq(str_at(m, m->comment[0]), comments[0]);
	cr_assert_str_eq(str_at(m, m->comment[1]), comments[1]);
	cr_assert_eq(m->n_mapping, 0);

	/* Distinct (function, file, line): frames 2 and 5 are one; frame 9
	 * has no sample. Functions: Cache.put once for both lines. */
	cr_assert_eq(m->n_location, 8);
	cr_assert_eq(m->n_function, 7);
	for (size_t i = 0; i < m->n_location; i++) {
		const Perftools__Profiles__Location *l = m->location[i];
		cr_assert_neq(l->id, 0);
		cr_assert_eq(l->mapping_id, 0);
		cr_assert_eq(l->n_line, 1);
		func_by_id(m, l->line[0]->function_id);
		for (size_t j = i + 1; j < m->n_location; j++)
			cr_assert_neq(l->id, m->location[j]->id);
	}
	for (size_t i = 0; i < m->n_function; i++) {
		const Perftools__Profiles__Function *f = m->function[i];
		cr_assert_neq(f->id, 0);
		cr_assert_eq(f->name, f->system_name);
		for (size_t j = 0; j < sizeof(frames) / sizeof(frames[0]); j++)
			if (!strcmp(frames[j].function, str_at(m, f->name)))
				cr_assert_str_eq(str_at(m, f->filename), frames[j].file);
		for (size_t j = i + 1; j < m->n_function; j++)
			cr_assert_neq(f->id, m->function[j]->id);
	}

	cr_assert_eq(m->n_sample, sizeof(samples) / sizeof(samples[0]));
	for (size_t i = 0; i < m->n_sample; i++) {
		const Perftools__Profiles__Sample *s = m->sample[i];
		const struct hp_prof_sample *want = &samples[i];
		cr_assert_eq(s->n_value, HP_PPROF_TYPES);
		cr_assert_eq(s->value[0], want->alloc_objects);
		cr_assert_eq(s->value[1], want->alloc_bytes);
		cr_assert_eq(s->value[2], want->inuse_objects);
		cr_assert_eq(s->value[3], want->inuse_bytes);
		cr_assert_eq(s->value[4], want->recent_objects);
		cr_assert_eq(s->value[5], want->recent_bytes);
		cr_assert_eq(s->n_location_id, want->nframes);
		/* Leaf first, as in the hp_profile. */
		for (size_t j = 0; j < s->n_location_id; j++) {
			char got[512], exp[512];
			loc_name(m, s->location_id[j], got, sizeof(got));
			const struct hp_frame *f = &frames[want->frames[j]];
			snprintf(exp, sizeof(exp), "%s:%d", f->function, f->line);
			cr_assert_str_eq(got, exp, "sample %zu frame %zu", i, j);
		}
		if (want->class_name && want->class_name[0]) {
			cr_assert_eq(s->n_label, 1, "sample %zu", i);
			cr_assert_str_eq(str_at(m, s->label[0]->key), "class");
			cr_assert_str_eq(str_at(m, s->label[0]->str), want->class_name);
			cr_assert_eq(s->label[0]->num, 0);
		} else {
			cr_assert_eq(s->n_label, 0, "sample %zu has no class but a label", i);
		}
	}
	/* Frames 2 and 5 share their location. */
	cr_assert_eq(m->sample[0]->location_id[2], m->sample[2]->location_id[1]);
	perftools__profiles__profile__free_unpacked(m, NULL);
}

Test(writers, pprof_reads_in_go_tool_pprof, .timeout = 600)
{
	char err[256] = "", line[1024];
	const char *path = path_in("heap.pb.gz");
	cr_assert_eq(hp_write_pprof(&profile, path, err, sizeof(err)), 0, "%s", err);

	char *top = pprof_tool("-top -sample_index=inuse_space", path);
	cr_assert(strstr(top, "Type: inuse_space"), "%s", top);
	cr_assert(strstr(top, "accounting for 1560B, 100% of 1560B total"), "%s", top);
	/* flat = the leaf's own bytes; cum includes callees. */
	static const struct { const char *name, *flat, *cum; } rows[] = {
		{ "java.util.ArrayList.grow", "600B", "600B" },
		{ "[native]", "520B", "520B" },
		{ WEIRD_SHOWN, "300B", "300B" },
		{ "com.example.Cache.put", "140B", "1560B" },
		{ "com.example.Main.main", "0", "1040B" },
		{ "java.lang.Thread.run", "0", "520B" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		top_line(top, rows[i].name, line, sizeof(line));
		char flat[32], cum[32];
		cr_assert_eq(sscanf(line, "%31s %*s %*s %31s", flat, cum), 2, "%s", line);
		cr_assert_str_eq(flat, rows[i].flat, "%s", line);
		cr_assert_str_eq(cum, rows[i].cum, "%s", line);
	}
	cr_assert_null(strstr(top, "Unused.never"), "a frame no sample uses is in the profile");
	free(top);

	char *alloc = pprof_tool("-top -sample_index=alloc_space", path);
	cr_assert(strstr(alloc, "of 3800B total"), "%s", alloc);
	free(alloc);
	char *objs = pprof_tool("-top -sample_index=alloc_objects", path);
	cr_assert(strstr(objs, "of 38 total"), "%s", objs);
	free(objs);

	char *traces = pprof_tool("-traces", path);
	/* The default sample type is the last one: live bytes. */
	cr_assert(strstr(traces, "Type: inuse_space"), "%s", traces);
	cr_assert(strstr(traces, "live heap scaled to 1.5 KiB from last-gc-fields after GC #12"), "%s", traces);
	cr_assert(strstr(traces, "java.lang.Object[]"), "class label missing:\n%s", traces);
	cr_assert(strstr(traces, "java.lang.String"), "%s", traces);
	/* One trace per sample, leaf first within each. */
	cr_assert_eq(count_of(traces, "-----------+"), sizeof(samples) / sizeof(samples[0]) + 1, "%s", traces);
	const char *grow = strstr(traces, "java.util.ArrayList.grow");
	cr_assert_not_null(grow, "%s", traces);
	const char *add = strstr(grow, "java.util.ArrayList.add");
	const char *put = add ? strstr(add, "com.example.Cache.put") : NULL;
	const char *main_ = put ? strstr(put, "com.example.Main.main") : NULL;
	cr_assert(add && put && main_, "stack not leaf first:\n%s", traces);
	cr_assert(strstr(traces, WEIRD_SHOWN), "%s", traces);
	free(traces);

	char *raw = pprof_tool("-raw", path);
	cr_assert(strstr(raw, "(" WEIRD ")"), "full name lost:\n%s", raw);
	cr_assert(strstr(raw, "PeriodType: space bytes"), "%s", raw);
	cr_assert(strstr(raw, "Period: 524288"), "%s", raw);
	/* the moment the profile describes: its start plus its duration */
	cr_assert(strstr(raw, "Time: 2023-11-14 22:13:22.623456789 +0000 UTC"), "%s", raw);
	cr_assert(strstr(raw, "Duration: 2.5s"), "%s", raw);
	cr_assert(strstr(raw, "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes"), "%s",
		  raw);
	cr_assert(strstr(raw, "com.example.Cache.put Cache.java:50:0"), "%s", raw);
	free(raw);
}

Test(writers, empty_and_null_profiles_are_valid)
{
	static const struct hp_profile empty = { 0 };
	char err[256] = "";
	const char *pb = path_in("empty.pb.gz"), *pb_null = path_in("null.pb.gz");
	cr_assert_eq(hp_write_pprof(&empty, pb, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hp_write_pprof(NULL, pb_null, err, sizeof(err)), 0, "%s", err);
	Perftools__Profiles__Profile *m = decode_pprof(pb);
	cr_assert_eq(m->n_sample, 0);
	cr_assert_eq(m->n_location, 0);
	cr_assert_eq(m->n_sample_type, HP_PPROF_TYPES);
	cr_assert_str_eq(m->string_table[0], "");
	perftools__profiles__profile__free_unpacked(m, NULL);
	char *top = pprof_tool("-top", pb_null);
	cr_assert(strstr(top, "Type: inuse_space"), "%s", top);
	free(top);

	const char *col = path_in("empty.collapsed");
	cr_assert_eq(hp_write_collapsed(NULL, HP_VIEW_INUSE, col, err, sizeof(err)), 0, "%s", err);
	size_t len;
	free(slurp(col, &len));
	cr_assert_eq(len, 0);

	const char *html = path_in("empty.html");
	cr_assert_eq(hp_write_html(&empty, html, err, sizeof(err)), 0, "%s", err);
	char *page = slurp(html, NULL);
	cr_assert(strstr(page, "No live bytes in this profile."));
	cr_assert(strstr(page, "\"stacks\":[]"), "%s", page);
	free(page);
}

/* A large profile: many distinct strings (the interners grow past their
 * initial size) and more than one buffer of output. */
Test(writers, large_profile_round_trips)
{
	enum { N = 20000 };
	struct hp_frame *fr = calloc(N + 1, sizeof(*fr));
	struct hp_prof_sample *sa = calloc(N, sizeof(*sa));
	uint32_t *stacks = calloc(N * 2, sizeof(*stacks));
	char(*names)[48] = calloc(N, sizeof(*names));
	for (uint32_t i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "p%u.C.m", i);
		fr[i] = (struct hp_frame){ names[i], "F.java", (int)i, NULL };
		stacks[2 * i] = i;
		stacks[2 * i + 1] = N;
		sa[i] = (struct hp_prof_sample){ &stacks[2 * i], 2, 1, 100, 1, 50, 40, 60, names[i], 0, 0 };
	}
	fr[N] = (struct hp_frame){ "root.R.run", "R.java", 1, NULL };
	struct hp_profile big = { .frames = fr, .nframes = N + 1, .samples = sa, .nsamples = N, .period = 1 };
	char err[256] = "";
	const char *pb = path_in("big.pb.gz");
	cr_assert_eq(hp_write_pprof(&big, pb, err, sizeof(err)), 0, "%s", err);
	Perftools__Profiles__Profile *m = decode_pprof(pb);
	cr_assert_eq(m->n_sample, N);
	cr_assert_eq(m->n_location, N + 1);
	cr_assert_eq(m->n_function, N + 1);
	char got[128];
	loc_name(m, m->sample[12345]->location_id[0], got, sizeof(got));
	cr_assert_str_eq(got, "p12345.C.m:12345");
	perftools__profiles__profile__free_unpacked(m, NULL);

	const char *col = path_in("big.collapsed");
	cr_assert_eq(hp_write_collapsed(&big, HP_VIEW_INUSE, col, err, sizeof(err)), 0, "%s", err);
	char *text = slurp(col, NULL);
	cr_assert_eq(count_of(text, "\n"), N);
	cr_assert(strstr(text, "\nroot.R.run;p19999.C.m;p19999.C.m_[i] 50\n"), "%.200s", text);
	free(text);
	const char *html = path_in("big.html");
	cr_assert_eq(hp_write_html(&big, html, err, sizeof(err)), 0, "%s", err);
	char *page = slurp(html, NULL);
	cr_assert(strstr(page, "and 19900 more sites"), "top-100 cut missing");
	free(page);
	free(fr);
	free(sa);
	free(stacks);
	free(names);
}

/* ---- collapsed -------------------------------------------------------- */

static void check_lines(const char *path, const char *const *want, size_t n)
{
	char *text = slurp(path, NULL);
	const char *p = text;
	for (size_t i = 0; i < n; i++) {
		const char *end = strchr(p, '\n');
		cr_assert_not_null(end, "%s: line %zu missing (want \"%s\"):\n%s", path, i + 1, want[i], text);
		cr_assert_eq((size_t)(end - p), strlen(want[i]), "%s line %zu: \"%.*s\", want \"%s\"", path, i + 1,
			     (int)(end - p), p, want[i]);
		cr_assert(memcmp(p, want[i], strlen(want[i])) == 0, "%s line %zu: \"%.*s\", want \"%s\"", path, i + 1,
			  (int)(end - p), p, want[i]);
		p = end + 1;
	}
	cr_assert_eq(*p, '\0', "%s: extra lines: %s", path, p);
	free(text);
}

Test(writers, collapsed_alloc_and_inuse)
{
	char err[256] = "";
	const char *a = path_in("alloc.collapsed"), *l = path_in("live.collapsed");
	cr_assert_eq(hp_write_collapsed(&profile, HP_VIEW_ALLOC, a, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hp_write_collapsed(&profile, HP_VIEW_INUSE, l, err, sizeof(err)), 0, "%s", err);
	/* Root first, function names only, the allocated class as the leaf
	 * ("_[i]", none when mixed), zero values left out, equal stacks
	 * (Cache.put lines 42 and 50, same class) merged. */
	static const char *const alloc[] = {
		"com.example.Main.main;com.example.Cache.put;java.util.ArrayList.add;java.util.ArrayList.grow;"
		"java.lang.Object[]_[i] 1000",
		"com.example.Main.main;com.example.Cache.put;byte[]_[i] 2000",
		"com.example.Main.main;com.example.Cache.put;" WEIRD " 300",
		"java.lang.Thread.run;com.example.Cache.put;[native];java.lang.String_[i] 500",
	};
	static const char *const live[] = {
		"com.example.Main.main;com.example.Cache.put;java.util.ArrayList.add;java.util.ArrayList.grow;"
		"java.lang.Object[]_[i] 600",
		"com.example.Main.main;com.example.Cache.put;byte[]_[i] 40",
		"com.example.Main.main;com.example.Cache.put;" WEIRD " 300",
		"com.example.Main.main;com.example.Cache.put;java.lang.String_[i] 100",
		"java.lang.Thread.run;com.example.Cache.put;[native];java.lang.String_[i] 520",
	};
	check_lines(a, alloc, 4);
	check_lines(l, live, 5);
	cr_assert_eq(hp_write_collapsed(&profile, (enum hp_profile_view)7, a, err, sizeof(err)), -EINVAL);
}

/* Stacks are merged by the names they show, kept as ids of 1, 2 or 3
 * bytes (by how many names there are): past 255 and 65,025 names, every
 * line must still be spelled out as the names themselves, and stacks that
 * show the same names merged. */
Test(writers, collapsed_many_names_spelled_and_merged, .timeout = 120)
{
	static const size_t counts[] = { 200, 300, 66000 };
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		size_t n = counts[c];
		struct hp_frame *fr = calloc(n + 1, sizeof(*fr));
		char (*nm)[24] = calloc(n, sizeof(*nm));
		uint32_t *ids = calloc(2 * n, sizeof(*ids));
		struct hp_prof_sample *sa = calloc(n + 1, sizeof(*sa));
		cr_assert(fr && nm && ids && sa);
		for (size_t i = 0; i < n; i++) {
			snprintf(nm[i], sizeof(nm[i]), "m%zu", i % (n - 1));   /* the last name = the first */
			fr[i].function = nm[i];
			fr[i].file = "";
			/* sample i: frame (i + 1) % n called from frame i, root first */
			ids[2 * i] = (uint32_t)((i + 1) % n);
			ids[2 * i + 1] = (uint32_t)i;
			sa[i].frames = &ids[2 * i];
			sa[i].nframes = 2;
			sa[i].alloc_objects = 1;
			sa[i].alloc_bytes = (int64_t)i + 1;
			sa[i].class_name = "";
		}
		struct hp_profile p = { .frames = fr, .nframes = n, .samples = sa, .nsamples = n, .period = 1 };
		char err[256] = "", name[32];
		snprintf(name, sizeof(name), "many%zu.collapsed", n);
		const char *path = path_in(name);
		cr_assert_eq(hp_write_collapsed(&p, HP_VIEW_ALLOC, path, err, sizeof(err)), 0, "%s", err);
		char *text = slurp(path, NULL), *at = text;
		/* Frame k is named m<k mod (n - 1)>: sample i shows
		 * "m<i mod (n-1)>;m<(i + 1) mod n mod (n-1)>", no two alike. */
		for (size_t i = 0; i < n; i++) {
			char want[96];
			snprintf(want, sizeof(want), "m%zu;m%zu %zu\n", i % (n - 1), ((i + 1) % n) % (n - 1), i + 1);
			cr_assert(strncmp(at, want, strlen(want)) == 0, "%zu names, line %zu: \"%.40s\", want \"%s\"", n,
				  i + 1, at, want);
			at += strlen(want);
		}
		cr_assert_eq(*at, '\0', "%zu names: extra lines", n);
		free(text);

		/* Two stacks whose frames differ but show the same names merge. */
		sa[1].frames = &ids[0];     /* sample 1 now shows sample 0's names */
		cr_assert_eq(hp_write_collapsed(&p, HP_VIEW_ALLOC, path, err, sizeof(err)), 0, "%s", err);
		text = slurp(path, NULL);
		cr_assert(strncmp(text, "m0;m1 3\nm2;m3 3\n", 16) == 0, "%zu names: %.40s", n, text);
		free(text);
		free(fr);
		free(nm);
		free(ids);
		free(sa);
	}
}

Test(writers, collapsed_sanitizes_separators)
{
	static const struct hp_frame fr[] = { { "a;b\nc", "", 0, NULL }, { "", "", 0, NULL }, { "with space", "", 0, NULL } };
	static const uint32_t s0[] = { 0, 1, 2 };
	static const struct hp_prof_sample sa[] = {
		{ s0, 3, 1, 8, 1, 8, 8, 8, "", 0, 0 },
		{ NULL, 0, 1, 16, 1, 16, 16, 16, "", 0, 0 },
	};
	static const struct hp_profile p = { .frames = fr, .nframes = 3, .samples = sa, .nsamples = 2, .period = 1 };
	char err[256] = "";
	const char *path = path_in("odd.collapsed");
	cr_assert_eq(hp_write_collapsed(&p, HP_VIEW_ALLOC, path, err, sizeof(err)), 0, "%s", err);
	static const char *const want[] = { "with space;[unknown];a_b_c 8", "[unknown] 16" };
	check_lines(path, want, 2);
}

/* ---- HTML ------------------------------------------------------------- */

static const char py_check[] =
	"import sys, json\n"
	"from html.parser import HTMLParser\n"
	"VOID = {'meta','br','hr','img','input','link','area','base','col','embed','source','track','wbr'}\n"
	"class P(HTMLParser):\n"
	"    def __init__(s):\n"
	"        super().__init__(convert_charrefs=True); s.stack=[]; s.data=None; s.cur=None; s.text=[]\n"
	"    def handle_starttag(s, tag, attrs):\n"
	"        if tag not in VOID: s.stack.append(tag)\n"
	"        s.cur = dict(attrs).get('id')\n"
	"    def handle_endtag(s, tag):\n"
	"        assert s.stack and s.stack[-1] == tag, 'unbalanced </%s> with %r open at %r' % (tag, s.stack, "
	"s.getpos())\n"
	"        s.stack.pop()\n"
	"    def handle_data(s, d):\n"
	"        if s.stack and s.stack[-1] == 'script' and s.cur == 'hp-data': s.data = (s.data or '') + d\n"
	"        elif not (s.stack and s.stack[-1] in ('script','style')): s.text.append(d)\n"
	"p = P(); p.feed(open(sys.argv[1], encoding='utf-8').read()); p.close()\n"
	"assert not p.stack, 'unclosed %r' % p.stack\n"
	"d = json.loads(p.data)\n"
	"names = d['names']; stacks = d['stacks']\n"
	"assert sys.argv[2] in names, 'weird name lost: %r' % names\n"
	"assert len(stacks) == int(sys.argv[3]), len(stacks)\n"
	"assert sum(s[2] for s in stacks) == int(sys.argv[4])\n"
	"assert sum(s[1] for s in stacks) == int(sys.argv[5])\n"
	"text = ''.join(p.text)\n"
	"assert sys.argv[6] in text, 'comment not shown as text'\n"
	"print('html ok', len(names), 'names')\n";

/* Runs the page's own script against a stub DOM: it must parse the data,
 * draw boxes for both views and zoom without throwing. */
static const char node_check[] =
	"const fs=require('fs');const html=fs.readFileSync(process.argv[2],'utf8');\n"
	"const data=html.match(/<script type=\"application\\/json\" id=\"hp-data\">([\\s\\S]*?)<\\/script>/)[1];\n"
	"const code=html.match(/<script>([\\s\\S]*?)<\\/script>/)[1];\n"
	"const els={};function el(id){return els[id]||(els[id]={id,children:[],style:{},attrs:{},listeners:{},"
	"clientWidth:1000,className:'',\n"
	" set textContent(v){this._t=v;this.children=[];},get textContent(){return id==='hp-data'?data:this._t;},\n"
	" appendChild(c){this.children.push(c);},addEventListener(t,f){this.listeners[t]=f;},\n"
	" setAttribute(k,v){this.attrs[k]=String(v);},getAttribute(k){return k in this.attrs?this.attrs[k]:null;}});}\n"
	"let n=0;global.document={getElementById:el,createElement:()=>{const e=el('e'+(n++));return e;}};\n"
	"global.window={addEventListener(){}};\n"
	"new Function(code)();\n"
	"const fg=els.fg,info=els.info;\n"
	"if(fg.children.length<5)throw new Error('live view drew '+fg.children.length+' boxes');\n"
	"if(!/live/.test(info._t))throw new Error('info: '+info._t);\n"
	"const put=fg.children.find(c=>c._t==='com.example.Cache.put');\n"
	"fg.listeners.mouseover({target:put});\n"
	"if(!/com.example.Cache.put  1.0 KiB \\(66.67% of live\\)/.test(info._t))throw new Error('hover: '+info._t);\n"
	"fg.listeners.click({target:fg.children.find(c=>c._t==='java.lang.Thread.run')});\n"
	"if(fg.children.some(c=>c._t==='com.example.Main.main'))throw new Error('zoom kept a sibling');\n"
	"els.v0.listeners.click();\n"
	"if(!fg.children.some(c=>c._t==='java.util.ArrayList.grow'))throw new Error('alloc view');\n"
	"if(!/3.7 KiB/.test(info._t))throw new Error('alloc total: '+info._t);\n"
	"if(!fg.children.some(c=>c._t.indexOf('</script>')>0))throw new Error('weird name not drawn verbatim');\n"
	"console.log('js ok',fg.children.length,'boxes');\n";

static int have(const char *prog)
{
	char *cmd, *out;
	cr_assert_neq(asprintf(&cmd, "command -v %s", prog), -1);
	int rc = run(cmd, &out);
	free(cmd);
	free(out);
	return rc == 0;
}

Test(writers, html_page)
{
	char err[256] = "";
	const char *path = path_in("heap.html");
	cr_assert_eq(hp_write_html(&profile, path, err, sizeof(err)), 0, "%s", err);
	char *page = slurp(path, NULL);

	cr_assert_eq(strncmp(page, "<!DOCTYPE html>", 15), 0);
	cr_assert(strstr(page, "<meta charset=\"utf-8\">"));
	cr_assert_null(strstr(page, "http://"), "the page must not load anything");
	cr_assert_null(strstr(page, "https://"), "the page must not load anything");
	/* The data: one JSON element, nothing inside that could end it. */
	const char *open = "<script type=\"application/json\" id=\"hp-data\">";
	char *data = strstr(page, open);
	cr_assert_not_null(data);
	data += strlen(open);
	char *end = strstr(data, "</script>");
	cr_assert_not_null(end);
	cr_assert_null(memchr(data, '<', (size_t)(end - data)), "'<' inside the JSON data");
	cr_assert_eq(count_of(page, "</script>"), 2, "only the two script elements may contain </script>");
	cr_assert_eq(count_of(page, "<script"), 2);
	cr_assert(strstr(data, "\"com.example.Ünïcödé.\\\"quoted\\\"\\u003c/script\\u003e"
			       "\\u003c!--x\""),
		  "weird name not escaped as expected:\n%.*s", (int)(end - data), data);
	cr_assert(strstr(data, "\"java.util.ArrayList.grow\""));
	cr_assert_null(strstr(data, "Unused.never"), "a name no sample uses is in the data");
	/* Comments folded under the header, as text; no summary given, none shown. */
	cr_assert(strstr(page, "<details><summary>How this profile was made</summary>"));
	cr_assert_null(strstr(page, "<p class=\"summary\">"));
	cr_assert(strstr(page, "<li>live heap scaled to 1.5 KiB from last-gc-fields after GC #12</li>"));
	cr_assert(strstr(page, "<li>escapes &lt;b&gt;&amp;amp;&lt;/b&gt; &quot;q&quot;</li>"));
	cr_assert(strstr(page, "sampling interval 512 KiB"));
	cr_assert(strstr(page, "Collected 2023-11-14 22:13:20 UTC"), "time_nanos not shown");
	/* Sites: Cache.put:50 for String merges D and E (the [native] leaf
	 * is skipped): 620 B, [620 - sqrt(50^2+100^2), 620 + same]. */
	static const char want_row1[] =
		"<tr><td class=\"n\">1</td><td class=\"fn\">com.example.Cache.put <span class=\"muted\">"
		"(Cache.java:50)</span></td><td class=\"fn\">java.lang.String</td><td class=\"n\">620 B "
		"<span class=\"muted\">(620)</span></td><td class=\"n\">[508 B, 732 B]</td><td class=\"n\">"
		"39.7%</td></tr>\n";
	const char *row1 = strstr(page, "<tr><td class=\"n\">1</td>");
	cr_assert_not_null(row1);
	cr_assert(strncmp(row1, want_row1, strlen(want_row1)) == 0, "first site row:\n%.400s\nwant:\n%s", row1,
		  want_row1);
	const char *row2 = strstr(page, "<tr><td class=\"n\">2</td>");
	cr_assert(row2 && strstr(row2, "java.util.ArrayList.grow") < strstr(row2, "</tr>"), "%.300s", row2);
	cr_assert(strstr(row2, "[500 B, 700 B]"));
	cr_assert(strstr(page, "com.example.Ünïcödé.&quot;quoted&quot;&lt;/script&gt;"
			       "&lt;!--x"),
		  "weird name not HTML-escaped in the table");
	cr_assert(strstr(page, "<td class=\"fn\">(mixed)</td>"));
	/* A, B, C and D+E; G has no live bytes. */
	cr_assert(strstr(page, "<tr><td class=\"n\">4</td>"));
	cr_assert_null(strstr(page, "<tr><td class=\"n\">5</td>"), "a site too many");

	char *cmd, *out;
	/* The tools below are installed by scripts/setup.sh: missing, the
	 * test fails rather than pass with less checked. */
	cr_assert(have("python3") && have("node"), "python3 and node are needed to check the page (scripts/setup.sh)");
	{
		spit(path_in("check.py"), py_check);
		cr_assert_neq(asprintf(&cmd, "python3 %s %s '%s' %zu %d %d '%s'", path_in("check.py"), path,
				       "com.example.Ünïcödé.\"quoted\"</script><!--x",
				       sizeof(samples) / sizeof(samples[0]), INUSE_SPACE, ALLOC_SPACE,
				       "escapes <b>&amp;</b> \"q\""),
			      -1);
		int rc = run(cmd, &out);
		cr_assert_eq(rc, 0, "python3 html.parser check failed:\n%s", out);
		free(out);
		free(cmd);
	}
	{
		spit(path_in("check.js"), node_check);
		cr_assert_neq(asprintf(&cmd, "node %s %s", path_in("check.js"), path), -1);
		int rc = run(cmd, &out);
		cr_assert_eq(rc, 0, "the page's script failed under node:\n%s", out);
		free(out);
		free(cmd);
	}
	/* A real browser: headless Chromium runs the page and dumps the DOM
	 * its script built. The live view is drawn first: boxes for the live
	 * stacks, the weird name as text (escaped in the dump), no uncaught
	 * error on the console. */
	const char *chromium = have("chromium") ? "chromium" : have("chromium-browser") ? "chromium-browser" : NULL;
	cr_assert(chromium, "no chromium to render the page (scripts/setup.sh installs it)");
	{
		cr_assert_neq(asprintf(&cmd, "timeout 120 %s --headless --no-sandbox --disable-gpu --enable-logging=stderr "
					     "--virtual-time-budget=2000 --dump-dom 'file://%s' 2>%s", chromium, path,
				       path_in("chromium.log")),
			      -1);
		int rc = run(cmd, &out);
		char *log = slurp(path_in("chromium.log"), NULL);
		cr_assert_eq(rc, 0, "%s failed:\n%s", cmd, log);
		cr_assert(count_of(out, "<div class=\"f") >= 5, "the browser drew %zu boxes:\n%.2000s",
			  count_of(out, "<div class=\"f"), out);
		cr_assert(strstr(out, ">com.example.Cache.put</div>"), "no Cache.put box:\n%.2000s", out);
		cr_assert(strstr(out, "com.example.Ünïcödé.\"quoted\"&lt;/script&gt;&lt;!--x</div>"),
			  "weird name not drawn as text:\n%.3000s", out);
		cr_assert(strstr(out, "of live)"), "info line not filled in:\n%.2000s", out);
		cr_assert_null(strstr(log, "Uncaught"), "script error in the browser:\n%s", log);
		free(log);
		free(out);
		free(cmd);
	}
	free(page);
}

Test(writers, html_escapes_bad_utf8_and_controls)
{
	/* \xff: not UTF-8; \xc0\xaf: overlong '/'; \x01: control; U+2028. */
	static const struct hp_frame fr[] = { { "bad\xff\xc0\xaf\x01" "e\xe2\x80\xa8" "nd\\", "F.java", 3, NULL } };
	static const uint32_t s0[] = { 0 };
	static const struct hp_prof_sample sa[] = { { s0, 1, 1, 8, 1, 8, 8, 8, "C\x7f", 0, 0 } };
	static const struct hp_profile p = { .frames = fr, .nframes = 1, .samples = sa, .nsamples = 1, .period = 1 };
	char err[256] = "";
	const char *path = path_in("bad.html");
	cr_assert_eq(hp_write_html(&p, path, err, sizeof(err)), 0, "%s", err);
	char *page = slurp(path, NULL);
	cr_assert(strstr(page, "\"bad\\ufffd\\ufffd\\ufffd\\u0001e\\u2028nd\\\\\""), "JSON escaping:\n%s", page);
	cr_assert(strstr(page, "<td class=\"fn\">bad\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "e\xe2\x80\xa8" "nd\\ "),
		  "HTML escaping:\n%s", page);
	cr_assert(strstr(page, "<td class=\"fn\">C\xef\xbf\xbd</td>"), "%s", page);
	free(page);
}

/* ---- failures --------------------------------------------------------- */

typedef int (*writer_fn)(const struct hp_profile *, const char *, char *, size_t);
static int write_alloc_collapsed(const struct hp_profile *p, const char *path, char *err, size_t errlen)
{
	return hp_write_collapsed(p, HP_VIEW_ALLOC, path, err, errlen);
}
static const struct {
	const char *name;
	writer_fn fn;
} writers[] = {
	{ "pprof", hp_write_pprof },
	{ "collapsed", write_alloc_collapsed },
	{ "html", hp_write_html },
	{ "jfr", hp_write_jfr },
};
#define NWRITERS (sizeof(writers) / sizeof(writers[0]))

Test(writers, parent_is_a_file_or_missing)
{
	spit(path_in("plain"), "x");
	for (size_t i = 0; i < NWRITERS; i++) {
		char err[512] = "", want[512];
		const char *path = path_in("plain/out");
		cr_assert_eq(writers[i].fn(&profile, path, err, sizeof(err)), -ENOTDIR, "%s: %s", writers[i].name, err);
		snprintf(want, sizeof(want), "cannot write %s: Not a directory", path);
		cr_assert_str_eq(err, want);
		path = path_in("missing/out");
		cr_assert_eq(writers[i].fn(&profile, path, err, sizeof(err)), -ENOENT, "%s: %s", writers[i].name, err);
		snprintf(want, sizeof(want), "cannot write %s: No such file or directory", path);
		cr_assert_str_eq(err, want);
		cr_assert_eq(writers[i].fn(&profile, "/proc/self/heap.pb.gz", err, sizeof(err)) < 0, 1);
		cr_assert(strncmp(err, "cannot write /proc/self/heap.pb.gz: ", 36) == 0, "%s", err);
	}
	cr_assert_eq(entries_in_dir(), 1);
}

static int full_disk(int fd)
{
	int full = open("/dev/full", O_WRONLY | O_CLOEXEC);
	if (full < 0)
		return -errno;
	int rc = dup2(full, fd) < 0 ? -errno : 0;
	close(full);
	return rc;
}

/* The temporary file's fd replaced by /dev/full: every write fails with
 * ENOSPC as on a full disk; the old profile must survive. */
Test(writers, full_disk_keeps_the_old_file)
{
	/* A profile large enough to fail in the middle of the output too,
	 * not only at the final flush. */
	enum { N = 5000 };
	static struct hp_frame fr[N];
	static struct hp_prof_sample sa[N];
	static uint32_t idx[N];
	static char names[N][32];
	for (uint32_t i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "q%u.K.m", i * 7919u);
		fr[i] = (struct hp_frame){ names[i], names[i], (int)i, NULL };
		idx[i] = i;
		sa[i] = (struct hp_prof_sample){ &idx[i], 1, 1, 64, 1, 64, 64, 64, names[i], 0, 0 };
	}
	struct hp_profile big = { .frames = fr, .nframes = N, .samples = sa, .nsamples = N, .period = 1 };
	const char *path = path_in("keep");
	spit(path, "OLD PROFILE");
	hp_out_test_hook = full_disk;
	for (size_t i = 0; i < NWRITERS; i++) {
		const struct hp_profile *ps[] = { &profile, &big };
		for (size_t k = 0; k < 2; k++) {
			char err[512] = "", want[512];
			cr_assert_eq(writers[i].fn(ps[k], path, err, sizeof(err)), -ENOSPC, "%s: %s", writers[i].name,
				     err);
			snprintf(want, sizeof(want), "cannot write %s: No space left on device", path);
			cr_assert_str_eq(err, want);
			char *old = slurp(path, NULL);
			cr_assert_str_eq(old, "OLD PROFILE", "%s replaced the old profile", writers[i].name);
			free(old);
			cr_assert_eq(entries_in_dir(), 1, "%s left its temporary file", writers[i].name);
		}
	}
	hp_out_test_hook = NULL;
	char err[256] = "";
	cr_assert_eq(hp_write_pprof(&profile, path, err, sizeof(err)), 0, "%s", err);
	char *now = slurp(path, NULL);
	cr_assert_neq(strcmp(now, "OLD PROFILE"), 0, "a good write must replace the file");
	free(now);
}

Test(writers, out_on_dev_full)
{
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	struct hp_out o;
	char err[256] = "";
	cr_assert_eq(hp_out_open_fd(&o, fd, "/dev/full", err, sizeof(err)), 0);
	hp_out_str(&o, "small");
	cr_assert_eq(o.err, 0, "buffered: nothing written yet");
	cr_assert_eq(hp_out_commit(&o, err, sizeof(err)), -ENOSPC);
	cr_assert_str_eq(err, "cannot write /dev/full: No space left on device");
	/* A write larger than the buffer goes straight to the fd. */
	static char big[200000];
	cr_assert_eq(hp_out_open_fd(&o, fd, "/dev/full", err, sizeof(err)), 0);
	hp_out_write(&o, big, sizeof(big));
	cr_assert_eq(o.err, ENOSPC);
	hp_out_printf(&o, "%d", 1);
	cr_assert_eq(hp_out_commit(&o, err, sizeof(err)), -ENOSPC);
	close(fd);
}

Test(writers, rename_onto_a_directory_fails_cleanly)
{
	const char *path = path_in("adir");
	cr_assert_eq(mkdir(path, 0755), 0);
	for (size_t i = 0; i < NWRITERS; i++) {
		char err[512] = "";
		int rc = writers[i].fn(&profile, path, err, sizeof(err));
		cr_assert_eq(rc, -EISDIR, "%s: %d %s", writers[i].name, rc, err);
		cr_assert(strstr(err, "is a directory"), "%s", err);
	}
	cr_assert_eq(entries_in_dir(), 1, "temporary file left behind");
}

/* ---- write through, never replace --------------------------------------- */

/* The bytes a plain file gets for `profile` from writer i: what every
 * write-through destination must receive too. */
static char *reference_bytes(size_t i, size_t *len)
{
	const char *ref = path_in("reference");
	char err[512] = "";
	cr_assert_eq(writers[i].fn(&profile, ref, err, sizeof(err)), 0, "%s", err);
	char *b = slurp(ref, len);
	unlink(ref);
	return b;
}

/* A reader of the FIFO in another process: cat fifo > got. */
static pid_t fifo_reader(const char *fifo, const char *got)
{
	pid_t child = fork();
	if (child == 0) {
		int in = open(fifo, O_RDONLY), out = open(got, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		char buf[65536];
		ssize_t n;
		while (in >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n)
				_exit(2);
		_exit(in >= 0 ? 0 : 1);
	}
	cr_assert_gt(child, 0);
	return child;
}

/* A FIFO with a reader in another process: the reader gets the whole
 * profile and the FIFO stays a FIFO (the temp-file-and-rename write used
 * to replace it with a regular file and the reader got nothing). */
Test(writers, fifo_is_written_through_to_its_reader, .timeout = 60)
{
	const char *fifo = path_in("pipe"), *got = path_in("got");
	for (size_t i = 0; i < NWRITERS; i++) {
		size_t want_len;
		char *want = reference_bytes(i, &want_len);
		cr_assert_eq(mkfifo(fifo, 0644), 0);
		pid_t child = fifo_reader(fifo, got);
		char err[512] = "";
		cr_assert_eq(writers[i].fn(&profile, fifo, err, sizeof(err)), 0, "%s: %s", writers[i].name, err);
		int st;
		cr_assert_eq(waitpid(child, &st, 0), child);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		struct stat sb;
		cr_assert_eq(lstat(fifo, &sb), 0);
		cr_assert(S_ISFIFO(sb.st_mode), "%s replaced the FIFO", writers[i].name);
		size_t n;
		char *b = slurp(got, &n);
		cr_assert_eq(n, want_len, "%s: reader got %zu bytes, a file gets %zu", writers[i].name, n, want_len);
		cr_assert_eq(memcmp(b, want, n), 0, "%s: the reader got other bytes than a file", writers[i].name);
		free(b);
		free(want);
		unlink(fifo);
		unlink(got);
	}
	cr_assert_eq(entries_in_dir(), 0, "temporary file left behind");
}

/* The synthetic profile with nev events over its samples (every kind,
 * sizes varying), for chunks of several MiB; *ev is the caller's to free. */
static struct hp_profile with_events(size_t nev, struct hp_prof_event **ev)
{
	struct hp_prof_event *e = calloc(nev, sizeof(*e));
	cr_assert_not_null(e);
	for (size_t i = 0; i < nev; i++) {
		e[i].sample = (uint32_t)(i % (sizeof(samples) / sizeof(samples[0])));
		e[i].thread = HP_PROF_NO_THREAD;
		e[i].time_nanos = profile.time_nanos + (int64_t)i * 1000;
		e[i].size = 24 + (int64_t)(i % 1000);
		e[i].weight = 32768;
		e[i].kind = (uint8_t)(i % 3);
		e[i].markings = e[i].kind == HP_EVENT_LIVE ? 1 : 0;
	}
	struct hp_profile p = profile;
	p.events = e;
	p.nevents = nev;
	*ev = e;
	return p;
}

/* Writes `p` as JFR to a FIFO (whole chunk, one write) and returns what
 * its reader got. */
static char *jfr_through_fifo(const struct hp_profile *p, size_t *len)
{
	const char *fifo = path_in("jfr-pipe"), *got = path_in("jfr-got");
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	pid_t child = fifo_reader(fifo, got);
	char err[512] = "";
	cr_assert_eq(hp_write_jfr(p, fifo, err, sizeof(err)), 0, "%s", err);
	int st;
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	char *b = slurp(got, len);
	unlink(fifo);
	unlink(got);
	return b;
}

/* A chunk of several MiB goes to a file a MiB at a time, its header
 * written last in place; to a FIFO it goes whole. Both must be the same
 * bytes, and the JDK's own reader must take the streamed file. */
Test(writers, jfr_streamed_to_a_file_is_the_chunk_a_fifo_gets, .timeout = 120)
{
	size_t nev = 150000;
	struct hp_prof_event *ev;
	struct hp_profile p = with_events(nev, &ev);
	char err[512] = "";
	const char *path = path_in("big.jfr");
	cr_assert_eq(hp_write_jfr(&p, path, err, sizeof(err)), 0, "%s", err);
	size_t n1, n2;
	char *file = slurp(path, &n1), *piped = jfr_through_fifo(&p, &n2);
	cr_assert_gt(n1, 3u << 20, "%zu bytes: too small to be written in several pieces", n1);
	cr_assert(n1 == n2 && memcmp(file, piped, n1) == 0, "file %zu bytes, FIFO %zu, differing", n1, n2);
	free(file);
	free(piped);
	const char *jfr = "/usr/lib/jvm/java-17-openjdk-amd64/bin/jfr";
	cr_assert(access(jfr, X_OK) == 0, "no %s to read the recording (scripts/setup.sh installs openjdk-17)", jfr);
	{
		char *cmd, *out;
		cr_assert_neq(asprintf(&cmd, "%s summary %s", jfr, path), -1);
		int rc = run(cmd, &out);
		cr_assert_eq(rc, 0, "%s: %s", cmd, out);
		char want[64];
		snprintf(want, sizeof(want), "jdk.ObjectAllocationSample");
		cr_assert(strstr(out, want), "%s", out);
		free(cmd);
		free(out);
	}
	free(ev);
}

/* /dev/stdout, /proc/PID/fd/N: written in place, to append, maybe after
 * what the file held. The chunk must arrive whole and right there (a
 * header patched by offset would land past the end of an O_APPEND file). */
Test(writers, jfr_appended_through_a_proc_fd_link_is_whole, .timeout = 60)
{
	size_t nev = 60000;
	struct hp_prof_event *ev;
	struct hp_profile p = with_events(nev, &ev);
	char err[512] = "";
	const char *ref = path_in("ref.jfr"), *log = path_in("appended.log");
	cr_assert_eq(hp_write_jfr(&p, ref, err, sizeof(err)), 0, "%s", err);
	spit(log, "earlier output\n");
	int fd = open(log, O_WRONLY | O_APPEND);
	cr_assert_geq(fd, 0);
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	cr_assert(!hp_out_replaces(link), "an fd link must be written in place");
	cr_assert_eq(hp_write_jfr(&p, link, err, sizeof(err)), 0, "%s", err);
	close(fd);
	size_t n1, n2;
	char *want = slurp(ref, &n1), *got = slurp(log, &n2);
	cr_assert_eq(n2, 15 + n1, "%zu bytes appended, a file gets %zu", n2 - 15, n1);
	cr_assert(memcmp(got, "earlier output\n", 15) == 0 && memcmp(got + 15, want, n1) == 0,
		  "the appended chunk differs from the file's");
	free(want);
	free(got);
	free(ev);
}

/* hp_out_patch: in memory and in a regular file; refused for a pipe and
 * for bytes not yet written. */
Test(writers, out_patch_where_it_can_and_not_elsewhere)
{
	struct hp_out m;
	cr_assert_eq(hp_out_open_mem(&m, "(memory)"), 0);
	hp_out_str(&m, "header:0000;body");
	cr_assert(hp_out_can_patch(&m));
	cr_assert_eq(hp_out_patch(&m, 7, "1234", 4), 0);
	cr_assert_eq(hp_out_patch(&m, 14, "xyz", 3), -EINVAL);
	size_t len;
	int rc;
	m.err = 0;
	unsigned char *b = hp_out_take(&m, &len, &rc);
	cr_assert_eq(rc, 0);
	cr_assert(len == 16 && memcmp(b, "header:1234;body", 16) == 0);
	free(b);

	const char *path = path_in("patched");
	char err[512] = "";
	struct hp_out o;
	cr_assert_eq(hp_out_open(&o, path, err, sizeof(err)), 0, "%s", err);
	cr_assert(hp_out_can_patch(&o));
	hp_out_str(&o, "HDR=....;");
	for (int i = 0; i < 20000; i++)     /* past the buffer: some of it flushed */
		hp_out_str(&o, "0123456789");
	cr_assert_eq(hp_out_patch(&o, 4, "done", 4), 0);
	hp_out_str(&o, "end");
	cr_assert_eq(hp_out_commit(&o, err, sizeof(err)), 0, "%s", err);
	char *t = slurp(path, &len);
	cr_assert_eq(len, 9 + 200000 + 3);
	cr_assert(strncmp(t, "HDR=done;0123", 13) == 0 && strcmp(t + len - 3, "end") == 0, "%.20s", t);
	free(t);

	const char *fifo = path_in("patch-pipe");
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	pid_t child = fork();
	if (child == 0) {
		int in = open(fifo, O_RDONLY);
		char buf[256];
		while (in >= 0 && read(in, buf, sizeof(buf)) > 0)
			;
		_exit(0);
	}
	cr_assert_eq(hp_out_open(&o, fifo, err, sizeof(err)), 0, "%s", err);
	cr_assert(!hp_out_can_patch(&o));
	hp_out_str(&o, "abc");
	cr_assert_eq(hp_out_patch(&o, 0, "x", 1), -ESPIPE);
	cr_assert_eq(hp_out_commit(&o, err, sizeof(err)), -ESPIPE);
	int st;
	cr_assert_eq(waitpid(child, &st, 0), child);
	unlink(fifo);
}

/* No reader: a clear error after a bounded wait, never a hang, the FIFO
 * left as it was. */
Test(writers, fifo_without_reader_fails_with_the_reason, .timeout = 30)
{
	const char *fifo = path_in("lonely");
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	char err[512] = "";
	cr_assert_eq(hp_write_pprof(&profile, fifo, err, sizeof(err)), -ENXIO);
	cr_assert(strstr(err, "no process has the FIFO") && strstr(err, "open for reading"), "%s", err);
	struct stat sb;
	cr_assert_eq(lstat(fifo, &sb), 0);
	cr_assert(S_ISFIFO(sb.st_mode));
	cr_assert_eq(entries_in_dir(), 1);
}

/* A symlink to a file in another directory: the target gets the profile
 * (replaced atomically in its own directory), the link stays a link. A
 * dangling link gets its target created. */
Test(writers, symlink_is_followed_and_kept)
{
	char elsewhere[64];
	strcpy(elsewhere, "/tmp/hp-writers-target-XXXXXX");
	cr_assert_not_null(mkdtemp(elsewhere));
	char target[128], dangling[128];
	snprintf(target, sizeof(target), "%s/profile.out", elsewhere);
	snprintf(dangling, sizeof(dangling), "%s/not-yet", elsewhere);
	const char *link = path_in("link"), *link2 = path_in("link2"), *rel = path_in("rel");
	for (size_t i = 0; i < NWRITERS; i++) {
		size_t want_len;
		char *want = reference_bytes(i, &want_len);
		spit(target, "OLD");
		cr_assert_eq(symlink(target, link), 0);
		cr_assert_eq(symlink(dangling, link2), 0);
		cr_assert_eq(symlink("link", rel), 0);   /* relative, and a chain: rel -> link -> target */
		const char *via[] = { link, link2, rel };
		const char *lands[] = { target, dangling, target };
		for (size_t k = 0; k < 3; k++) {
			char err[512] = "";
			cr_assert_eq(writers[i].fn(&profile, via[k], err, sizeof(err)), 0, "%s: %s", writers[i].name, err);
			struct stat sb;
			cr_assert_eq(lstat(via[k], &sb), 0);
			cr_assert(S_ISLNK(sb.st_mode), "%s replaced the link %s", writers[i].name, via[k]);
			size_t n;
			char *b = slurp(lands[k], &n);
			cr_assert(n == want_len && memcmp(b, want, n) == 0, "%s via %s: target not written",
				  writers[i].name, via[k]);
			free(b);
		}
		free(want);
		unlink(link);
		unlink(link2);
		unlink(rel);
		unlink(dangling);
	}
	cr_assert_eq(entries_in_dir(), 0, "temporary file left behind");
	DIR *d = opendir(elsewhere);
	size_t left = 0;
	for (struct dirent *e; (e = readdir(d));)
		left += e->d_name[0] != '.';
	closedir(d);
	cr_assert_eq(left, 1, "temporary file left beside the target");
	unlink(target);
	rmdir(elsewhere);
}

/* /dev/stdout is a link to /proc/self/fd/1, whatever fd 1 is: here a
 * regular file already holding the program's output. The profile is
 * appended through the descriptor; the output before it stays and the file
 * is not replaced (same inode). Tried through a link of our own made like
 * /dev/stdout (a regression then replaces a file of the test's, not the
 * machine's /dev/stdout, as the old writer did) and through /dev/fd/1 (the
 * /dev/fd directory link; nothing can be created in /proc). */
Test(writers, stdout_link_appends_through_the_descriptor)
{
	const char *log = path_in("stdout.log"), *mine = path_in("my-stdout");
	cr_assert_eq(symlink("/proc/self/fd/1", mine), 0);
	const char *via[] = { mine, "/dev/fd/1" };
	size_t want_len;
	char *want = reference_bytes(1, &want_len);   /* collapsed: text */
	for (size_t k = 0; k < 2; k++) {
		spit(log, "program output before\n");
		struct stat before, after;
		cr_assert_eq(stat(log, &before), 0);
		fflush(stdout);
		pid_t child = fork();
		if (child == 0) {
			int fd = open(log, O_WRONLY | O_APPEND);
			if (fd < 0 || dup2(fd, 1) < 0)
				_exit(3);
			char err[512] = "";
			int rc = writers[1].fn(&profile, via[k], err, sizeof(err));
			if (rc)
				fprintf(stderr, "%s\n", err);
			_exit(rc == 0 ? 0 : 4);
		}
		int st;
		cr_assert_eq(waitpid(child, &st, 0), child);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: child status %d", via[k], st);
		cr_assert_eq(stat(log, &after), 0);
		cr_assert_eq(after.st_ino, before.st_ino, "%s: the file behind stdout was replaced", via[k]);
		struct stat sb;
		cr_assert_eq(lstat(mine, &sb), 0);
		cr_assert(S_ISLNK(sb.st_mode), "the stdout link was replaced");
		size_t n;
		char *b = slurp(log, &n);
		const char *pre = "program output before\n";
		cr_assert_eq(n, strlen(pre) + want_len, "%s: got %zu bytes", via[k], n);
		cr_assert_eq(strncmp(b, pre, strlen(pre)), 0, "the output before the profile was lost");
		cr_assert_eq(memcmp(b + strlen(pre), want, want_len), 0);
		free(b);
	}
	free(want);
	cr_assert_eq(entries_in_dir(), 2, "temporary file left behind");
}

/* A character device is written in place. A node of our own (the null
 * device's numbers), so that a regression replaces a file in the test's
 * directory and not /dev/null. Needs root (mknod). */
Test(writers, character_device_is_written_in_place)
{
	if (geteuid() != 0)
		cr_skip_test("mknod needs root");
	const char *dev = path_in("null");
	cr_assert_eq(mknod(dev, S_IFCHR | 0666, makedev(1, 3)), 0, "mknod: %s", strerror(errno));
	for (size_t i = 0; i < NWRITERS; i++) {
		char err[512] = "";
		cr_assert_eq(writers[i].fn(&profile, dev, err, sizeof(err)), 0, "%s: %s", writers[i].name, err);
		struct stat sb;
		cr_assert_eq(lstat(dev, &sb), 0);
		cr_assert(S_ISCHR(sb.st_mode), "%s replaced the device node", writers[i].name);
	}
	cr_assert_eq(entries_in_dir(), 1);
}

/* A regular file that is not ours alone (another owner; another hard
 * link) is written in place: owner, inode and the other link stay. */
Test(writers, foreign_or_linked_file_is_written_in_place)
{
	const char *file = path_in("shared"), *other = path_in("other-name");
	size_t want_len;
	char *want = reference_bytes(0, &want_len);
	spit(file, "OLD, AND LONGER THAN NOTHING");
	cr_assert_eq(link(file, other), 0);
	struct stat before, after;
	cr_assert_eq(stat(file, &before), 0);
	char err[512] = "";
	cr_assert_eq(hp_write_pprof(&profile, file, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(stat(other, &after), 0);
	cr_assert_eq(after.st_ino, before.st_ino, "the hard link was broken");
	cr_assert_eq(after.st_nlink, 2);
	size_t n;
	char *b = slurp(other, &n);
	cr_assert(n == want_len && memcmp(b, want, n) == 0, "the other name does not see the profile");
	free(b);
	unlink(other);
	if (geteuid() == 0) {
		struct passwd *nobody = getpwnam("nobody");
		cr_assert_not_null(nobody);
		cr_assert_eq(chown(file, nobody->pw_uid, nobody->pw_gid), 0);
		cr_assert_eq(chmod(file, 0640), 0);
		cr_assert_eq(stat(file, &before), 0);
		cr_assert_eq(hp_write_pprof(&profile, file, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(stat(file, &after), 0);
		cr_assert_eq(after.st_ino, before.st_ino, "another user's file was replaced");
		cr_assert_eq(after.st_uid, nobody->pw_uid, "owner changed");
		cr_assert_eq(after.st_mode & 07777, 0640, "modes changed");
		b = slurp(file, &n);
		cr_assert(n == want_len && memcmp(b, want, n) == 0);
		free(b);
	}
	free(want);
	cr_assert_eq(entries_in_dir(), 1, "temporary file left behind");
}

/* A socket cannot take a profile: refused with the reason, left alone. */
Test(writers, socket_is_refused)
{
	const char *sock = path_in("sock");
	cr_assert_eq(mknod(sock, S_IFSOCK | 0644, 0), 0, "%s", strerror(errno));
	char err[512] = "";
	cr_assert_eq(hp_write_pprof(&profile, sock, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "is a socket"), "%s", err);
	struct stat sb;
	cr_assert_eq(lstat(sock, &sb), 0);
	cr_assert(S_ISSOCK(sb.st_mode));
}

Test(writers, invalid_profile_is_refused_before_any_file)
{
	static const uint32_t bad[] = { 0, 99 };
	static const struct hp_prof_sample sa[] = { { bad, 2, 1, 1, 1, 1, 1, 1, "", 0, 0 } };
	static const struct hp_profile p = { .frames = frames, .nframes = 10, .samples = sa, .nsamples = 1, .period = 1 };
	for (size_t i = 0; i < NWRITERS; i++) {
		char err[512] = "";
		const char *path = path_in("bad");
		cr_assert_eq(writers[i].fn(&p, path, err, sizeof(err)), -EINVAL);
		cr_assert(strstr(err, "invalid profile: sample 0 frame 1 is #99 of only 10 frames"), "%s", err);
		cr_assert_eq(writers[i].fn(&profile, NULL, err, sizeof(err)), -EINVAL);
		cr_assert_eq(writers[i].fn(&profile, "", NULL, 0), -EINVAL);
	}
	cr_assert_eq(entries_in_dir(), 0);
}

/* The agent's samples hold frame ids that a frame map turns into indices
 * of the named frames (several ids may name one frame). Written through a
 * map, every format must give the very bytes of the same profile written
 * with the indices themselves; a map index out of range is refused. */
Test(writers, frame_map_writes_what_the_indices_it_stands_for_write)
{
	/* map id k -> frame; ids 10..12 stand for frames 3, 2 and 6 again. */
	static const uint32_t map[] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 3, 2, 6 };
	static const uint32_t m_a[] = { 9, 8, 11, 6 };  /* 0 1 2 3 */
	static const uint32_t m_b[] = { 7, 10 };        /* 2 3 */
	static const uint32_t m_c[] = { 5, 4, 6 };      /* 4 5 3 */
	static const uint32_t m_d[] = { 12, 10 };       /* 6 3 */
	static const uint32_t m_e[] = { 2, 3, 1 };      /* 7 6 8 */
	static const uint32_t m_g[] = { 10 };           /* 3 */
	static const uint32_t *const m_st[] = { m_a, m_b, m_c, m_d, m_e, m_g };
	struct hp_prof_sample ms[sizeof(samples) / sizeof(samples[0])];
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		ms[i] = samples[i];
		ms[i].frames = m_st[i];
		for (size_t j = 0; j < ms[i].nframes; j++)
			cr_assert_eq(map[m_st[i][j]], samples[i].frames[j], "the test's own map, sample %zu", i);
	}
	struct hp_profile mp = profile;
	mp.samples = ms;
	mp.frame_map = map;
	mp.nframe_map = sizeof(map) / sizeof(map[0]);
	for (size_t i = 0; i < NWRITERS; i++) {
		char err[512] = "", name[64];
		snprintf(name, sizeof(name), "plain.%s", writers[i].name);
		const char *plain = path_in(name);
		snprintf(name, sizeof(name), "mapped.%s", writers[i].name);
		const char *mapped = path_in(name);
		cr_assert_eq(writers[i].fn(&profile, plain, err, sizeof(err)), 0, "%s: %s", writers[i].name, err);
		cr_assert_eq(writers[i].fn(&mp, mapped, err, sizeof(err)), 0, "%s: %s", writers[i].name, err);
		size_t n1, n2;
		char *b1 = slurp(plain, &n1), *b2 = slurp(mapped, &n2);
		cr_assert(n1 > 0 && n1 == n2 && memcmp(b1, b2, n1) == 0, "%s: %zu bytes plain, %zu mapped, differing",
			  writers[i].name, n1, n2);
		free(b1);
		free(b2);
	}
	char err[512] = "";
	cr_assert_eq(hp_write_text(&profile, path_in("plain.txt"), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hp_write_text(&mp, path_in("mapped.txt"), err, sizeof(err)), 0, "%s", err);
	char *t1 = slurp(path_in("plain.txt"), NULL), *t2 = slurp(path_in("mapped.txt"), NULL);
	cr_assert_str_eq(t1, t2);
	free(t1);
	free(t2);

	static const uint32_t past[] = { 10, 13 };
	struct hp_prof_sample bad = samples[0];
	bad.frames = past;
	bad.nframes = 2;
	mp.samples = &bad;
	mp.nsamples = 1;
	cr_assert_eq(hp_write_pprof(&mp, path_in("bad.pb.gz"), err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "sample 0 frame 1 is #13 of a frame map of only 13"), "%s", err);
	static const uint32_t wild[] = { 0, 99 };
	mp.frame_map = wild;
	mp.nframe_map = 2;
	bad.frames = (const uint32_t[]){ 1 };
	bad.nframes = 1;
	cr_assert_eq(hp_write_pprof(&mp, path_in("bad.pb.gz"), err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "sample 0 frame 0 is #99 of only 10 frames"), "%s", err);
}

Test(writers, intern_grows_and_keeps_ids)
{
	struct hp_intern in;
	cr_assert_eq(hp_intern_init(&in, 1, true), 0);
	char key[32];
	for (uint32_t i = 0; i < 3000; i++) {
		uint32_t id;
		snprintf(key, sizeof(key), "k%u", i);
		cr_assert_eq(hp_intern(&in, key, &id), 0);
		cr_assert_eq(id, i);
	}
	for (uint32_t i = 0; i < 3000; i += 7) {
		uint32_t id;
		snprintf(key, sizeof(key), "k%u", i);
		cr_assert_eq(hp_intern(&in, key, &id), 0);
		cr_assert_eq(id, i);
	}
	uint32_t a, b;
	cr_assert_eq(hp_intern(&in, NULL, &a), 0);
	cr_assert_eq(hp_intern(&in, "", &b), 0);
	cr_assert_eq(a, b, "NULL and \"\" are one string");
	cr_assert_eq(in.count, 3001);
	hp_intern_free(&in);
}

/* The live view's one clause opens the HTML page and the text profile,
 * escaped, before the folded comments. */
Test(writers, summary_opens_the_page_and_the_text)
{
	char err[256] = "";
	struct hp_profile p = profile;
	p.summary = "live 1.5 KiB [95% 1 KiB..2 KiB], verified alive by a marking 0.2 s before <now>";
	const char *path = path_in("summary.html");
	cr_assert_eq(hp_write_html(&p, path, err, sizeof(err)), 0, "%s", err);
	char *page = slurp(path, NULL);
	const char *sum = strstr(page, "<p class=\"summary\">live 1.5 KiB [95% 1 KiB..2 KiB], verified alive by a "
				      "marking 0.2 s before &lt;now&gt;</p>");
	const char *det = strstr(page, "<details>");
	cr_expect(sum && det && sum < det, "summary first, then the folded comments");
	free(page);
	path = path_in("summary.txt");
	cr_assert_eq(hp_write_text(&p, path, err, sizeof(err)), 0, "%s", err);
	char *text = slurp(path, NULL);
	cr_expect(strstr(text, "\nlive view: live 1.5 KiB [95% 1 KiB..2 KiB], verified alive by a marking 0.2 s "
			       "before <now>\n"), "%s", text);
	free(text);
}

/* The text profile's moment to the millisecond (the end of sampling:
 * time_nanos + duration_nanos), so a live set that moves by tens of MiB a
 * second can be set beside the program's own account at that moment. */
Test(writers, text_time_to_the_millisecond)
{
	char err[256] = "";
	struct hp_profile p = profile;
	p.time_nanos = 1700000000LL * 1000000000LL + 250000000LL;      /* 22:13:20.250 UTC */
	p.duration_nanos = 30LL * 1000000000LL + 797000000LL;          /* + 30.797 s */
	setenv("TZ", "UTC", 1);
	tzset();
	const char *path = path_in("time.txt");
	cr_assert_eq(hp_write_text(&p, path, err, sizeof(err)), 0, "%s", err);
	char *text = slurp(path, NULL);
	cr_expect(strstr(text, "\ntime: 2023-11-14 22:13:51.047 +0000 (sampling for "), "%.300s", text);
	free(text);
}
