/* Tests of the ELF symbol index against fixture libraries built by
 * test/symtab.cmake: a library with .symtab, stripped copies whose symbols
 * come from debug files (by build-id, by .gnu_debuglink, refused for a
 * wrong build-id or CRC), a MiniDebugInfo copy, and broken files.
 *
 * Expected addresses come from two independent sources: the dynamic
 * loader (dlopen the fixture; getters in it return the runtime addresses of
 * its static symbols) and nm output captured at build time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* dlinfo, mkdtemp */
#endif
#include "vmstructs/symtab.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BASE 0x10000000ull

/* ---- helpers ---------------------------------------------------------- */

static struct hp_symtab *open_ok(const char *path, uint64_t base, const char *root, int no_search)
{
	struct hp_symtab_opts o = {
		.sz = sizeof(o), .load_base = base, .debug_root = root, .no_debug_search = no_search,
	};
	struct hp_symtab *t = NULL;
	char err[512] = "";
	int rc = hp_symtab_open(path, &o, &t, err, sizeof(err));

	cr_assert_eq(rc, 0, "hp_symtab_open(%s) = %d: %s", path, rc, err);
	cr_assert_not_null(t);
	return t;
}

static int open_rc(const char *path, char *err, size_t errlen)
{
	struct hp_symtab_opts o = { .sz = sizeof(o), .no_debug_search = 1 };
	struct hp_symtab *t = (struct hp_symtab *)1;
	int rc = hp_symtab_open(path, &o, &t, err, errlen);

	if (rc == 0)
		hp_symtab_close(t);
	else
		cr_assert_null(t, "out must be NULL on error");
	return rc;
}

static void *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	cr_assert_not_null(f, "cannot create %s", path);
	cr_assert_eq(fwrite(buf, 1, len, f), len);
	fclose(f);
}

static void copy_file(const char *from, const char *to)
{
	size_t len;
	void *buf = read_file(from, &len);

	write_file(to, buf, len);
	free(buf);
}

static void mkdir_p(const char *path)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	}
	mkdir(tmp, 0755);
}

static char tmpdir[PATH_MAX];

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hp_symtab_XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	remove(path);
	return 0;
}

static void remove_tmpdir(void)
{
	if (tmpdir[0])
		nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	tmpdir[0] = '\0';
}

static const char *tmp_path(char *buf, const char *rel)
{
	int n = snprintf(buf, PATH_MAX, "%s/%s", tmpdir, rel);

	cr_assert(n > 0 && n < PATH_MAX);
	return buf;
}

static bool contains(const char *hay, const char *needle)
{
	return strstr(hay, needle) != NULL;
}

static const struct hp_sym *must_find(const struct hp_symtab *t, const char *name)
{
	const struct hp_sym *s = hp_symtab_find(t, name);

	cr_assert_not_null(s, "%s not found", name);
	cr_assert_str_eq(s->name, name);
	return s;
}

/* Symbol values from the build-time nm output ("value size type name" or,
 * for unsized symbols, "value type name"). */
struct nm_sym {
	char name[128];
	uint64_t value, size;
	char type;
	bool sized;
};

static size_t load_nm(struct nm_sym *out, size_t cap)
{
	FILE *f = fopen(HP_FX_NM, "r");
	char line[512];
	size_t n = 0;

	cr_assert_not_null(f, "cannot open %s", HP_FX_NM);
	while (n < cap && fgets(line, sizeof(line), f)) {
		char *tok[4], *save = NULL;
		int k = 0;

		for (char *w = strtok_r(line, " \n", &save); w && k < 4; w = strtok_r(NULL, " \n", &save))
			tok[k++] = w;
		if (k == 4)
			out[n] = (struct nm_sym){ .value = strtoull(tok[0], NULL, 16),
				.size = strtoull(tok[1], NULL, 16), .type = tok[2][0], .sized = true };
		else if (k == 3)
			out[n] = (struct nm_sym){ .value = strtoull(tok[0], NULL, 16), .type = tok[1][0] };
		else
			continue;
		snprintf(out[n].name, sizeof(out[n].name), "%s", tok[k - 1]);
		n++;
	}
	fclose(f);
	return n;
}

static const struct nm_sym *nm_lookup(const struct nm_sym *syms, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(syms[i].name, name) == 0)
			return &syms[i];
	return NULL;
}

/* The fixture loaded by the dynamic loader, for runtime addresses. */
struct loaded {
	void *handle;
	uint64_t bias;
	void *(*helper_addr)(void);
	void *(*table_addr)(void);
	void *(*dup_addr)(void);
	void *(*dup2_addr)(void);
};

static struct loaded load_fixture(void)
{
	struct loaded l = { 0 };
	struct link_map *lm;

	l.handle = dlopen(HP_FX_LIB, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(l.handle, "dlopen: %s", dlerror());
	cr_assert_eq(dlinfo(l.handle, RTLD_DI_LINKMAP, &lm), 0);
	l.bias = lm->l_addr;
	*(void **)&l.helper_addr = dlsym(l.handle, "hp_fx_local_helper_addr");
	*(void **)&l.table_addr = dlsym(l.handle, "hp_fx_local_table_addr");
	*(void **)&l.dup_addr = dlsym(l.handle, "hp_fx_dup_local_addr");
	*(void **)&l.dup2_addr = dlsym(l.handle, "hp_fx_dup_local2_addr");
	cr_assert(l.helper_addr && l.table_addr && l.dup_addr && l.dup2_addr);
	return l;
}

static void expected_build_id(char *buf, size_t len)
{
	size_t n;
	char *id = read_file(HP_FX_BUILDID, &n);

	snprintf(buf, len, "%s", id);
	free(id);
}

/* The symbols every full .symtab source must give, at runtime addresses
 * of the dlopen'ed fixture. */
static void check_full_symbols(const struct hp_symtab *t, const struct loaded *l)
{
	const struct hp_sym *s;

	s = must_find(t, "hp_fx_exported_func");
	cr_assert_eq(s->addr, (uint64_t)(uintptr_t)dlsym(l->handle, "hp_fx_exported_func"));
	cr_assert_eq(s->type, STT_FUNC);
	cr_assert_eq(s->bind, STB_GLOBAL);
	cr_assert_eq(s->from_dynsym, 0, ".symtab must win over .dynsym");

	s = must_find(t, "hp_fx_exported_value");
	cr_assert_eq(s->addr, (uint64_t)(uintptr_t)dlsym(l->handle, "hp_fx_exported_value"));
	cr_assert_eq(s->size, sizeof(int));
	cr_assert_eq(s->type, STT_OBJECT);

	s = must_find(t, "local_helper");
	cr_assert_eq(s->addr, (uint64_t)(uintptr_t)l->helper_addr());
	cr_assert_eq(s->type, STT_FUNC);
	cr_assert_eq(s->bind, STB_LOCAL);
	cr_assert_gt(s->size, 0);

	s = must_find(t, "local_table");
	cr_assert_eq(s->addr, (uint64_t)(uintptr_t)l->table_addr());
	cr_assert_eq(s->size, 100);
	cr_assert_eq(s->type, STT_OBJECT);
	cr_assert_eq(s->bind, STB_LOCAL);

	s = must_find(t, "local_counter");
	cr_assert_eq(s->size, 64);
	cr_assert_eq(s->bind, STB_LOCAL);
}

/* ---- the object's own .symtab ----------------------------------------- */

Test(symtab, file_symtab_runtime_addresses)
{
	struct loaded l = load_fixture();
	struct hp_symtab *t = open_ok(HP_FX_LIB, l.bias, NULL, 0);
	char id[256];

	cr_assert_eq(hp_symtab_origin(t), HP_SYMS_FILE_SYMTAB);
	cr_assert_str_eq(hp_symtab_symbols_path(t), HP_FX_LIB);
	cr_assert_str_eq(hp_symtab_debug_note(t), "");
	expected_build_id(id, sizeof(id));
	cr_assert_str_eq(hp_symtab_build_id(t), id);
	cr_assert_eq(strlen(id), 40);
	check_full_symbols(t, &l);
	cr_assert_gt(hp_symtab_count_symtab(t), 10);
	/* .dynsym is read, but its names are all in .symtab already. */
	cr_assert_gt(hp_symtab_count_dynsym(t), 0);
	cr_assert_eq(hp_symtab_count(t), hp_symtab_count_symtab(t));
	cr_assert_null(hp_symtab_find(t, "no_such_symbol"));
	cr_assert_null(hp_symtab_find(t, ""));
	hp_symtab_close(t);
	dlclose(l.handle);
}

Test(symtab, matches_nm)
{
	static struct nm_sym nm[512];
	size_t n = load_nm(nm, 512), checked = 0;
	struct hp_symtab *t = open_ok(HP_FX_LIB, BASE, NULL, 1);

	cr_assert_gt(n, 10);
	for (size_t i = 0; i < n; i++) {
		const struct nm_sym *e = &nm[i];
		const struct hp_sym *s;
		bool dup = false;

		/* Absolute symbols are not addresses in the image; duplicate
		 * names resolve to one of them (tested separately). */
		if (e->type == 'A' || e->type == 'a')
			continue;
		for (size_t j = 0; j < n; j++)
			dup |= j != i && strcmp(nm[j].name, e->name) == 0;
		if (dup)
			continue;
		s = hp_symtab_find(t, e->name);
		cr_assert_not_null(s, "nm symbol %s not indexed", e->name);
		cr_assert_eq(s->addr, e->value + BASE, "%s: %#llx != nm %#llx + base", e->name,
			     (unsigned long long)s->addr, (unsigned long long)e->value);
		if (e->sized)
			cr_assert_eq(s->size, e->size, "%s: size %llu != nm %llu", e->name,
				     (unsigned long long)s->size, (unsigned long long)e->size);
		if (e->type >= 'a' && e->type <= 'z' && e->type != 'w' && e->type != 'v')
			cr_assert_eq(s->bind, STB_LOCAL, "%s: nm says local", e->name);
		checked++;
	}
	cr_assert_gt(checked, 10);
	hp_symtab_close(t);
}

Test(symtab, duplicate_local_names)
{
	struct loaded l = load_fixture();
	struct hp_symtab *t = open_ok(HP_FX_LIB, l.bias, NULL, 1);
	uint64_t a = (uintptr_t)l.dup_addr(), b = (uintptr_t)l.dup2_addr();
	const struct hp_sym *s = must_find(t, "dup_local"), *c;

	cr_assert(s->addr == a || s->addr == b);
	cr_assert_neq(a, b);
	/* Both statics stay reachable by address. */
	c = hp_symtab_containing(t, a + 4);
	cr_assert_not_null(c);
	cr_assert_str_eq(c->name, "dup_local");
	cr_assert_eq(c->addr, a);
	cr_assert_eq(c->size, 16);
	c = hp_symtab_containing(t, b);
	cr_assert_not_null(c);
	cr_assert_str_eq(c->name, "dup_local");
	cr_assert_eq(c->addr, b);
	cr_assert_eq(c->size, 8);
	hp_symtab_close(t);
	dlclose(l.handle);
}

Test(symtab, containing)
{
	struct hp_symtab *t = open_ok(HP_FX_LIB, BASE, NULL, 1);
	const struct hp_sym *tab = must_find(t, "local_table");
	const struct hp_sym *outer = must_find(t, "hp_fx_outer");
	const struct hp_sym *inner = must_find(t, "hp_fx_inner");
	const struct hp_sym *fn = must_find(t, "local_helper");
	const struct hp_sym *c;

	cr_assert_eq(hp_symtab_containing(t, tab->addr), tab);
	cr_assert_eq(hp_symtab_containing(t, tab->addr + 50), tab);
	cr_assert_eq(hp_symtab_containing(t, tab->addr + 99), tab);
	c = hp_symtab_containing(t, tab->addr + 100);
	cr_assert(c != tab);
	cr_assert_eq(hp_symtab_containing(t, fn->addr + fn->size - 1), fn);

	/* Nested: the innermost symbol that covers the address wins; past
	 * the inner one, the outer one covers it again. */
	cr_assert_eq(inner->addr, outer->addr + 16);
	cr_assert_eq(outer->size, 64);
	cr_assert_eq(inner->size, 8);
	cr_assert_eq(hp_symtab_containing(t, outer->addr), outer);
	cr_assert_eq(hp_symtab_containing(t, outer->addr + 15), outer);
	cr_assert_eq(hp_symtab_containing(t, outer->addr + 16), inner);
	cr_assert_eq(hp_symtab_containing(t, outer->addr + 23), inner);
	cr_assert_eq(hp_symtab_containing(t, outer->addr + 24), outer);
	cr_assert_eq(hp_symtab_containing(t, outer->addr + 63), outer);

	cr_assert_null(hp_symtab_containing(t, 0));
	cr_assert_null(hp_symtab_containing(t, BASE - 1));
	cr_assert_null(hp_symtab_containing(t, UINT64_MAX));
	hp_symtab_close(t);
}

/* ---- separate debug files ---------------------------------------------- */

Test(symtab, debug_file_by_build_id)
{
	struct loaded l = load_fixture();
	struct hp_symtab *t = open_ok(HP_FX_STRIPPED, l.bias, HP_FX_DEBUGROOT, 0);
	char id[256], want[PATH_MAX];

	expected_build_id(id, sizeof(id));
	cr_assert_eq(hp_symtab_origin(t), HP_SYMS_DEBUG_BUILDID, "origin %s, note: %s",
		     hp_symtab_origin_name(hp_symtab_origin(t)), hp_symtab_debug_note(t));
	cr_assert_str_eq(hp_symtab_build_id(t), id);
	snprintf(want, sizeof(want), "%s/.build-id/%.2s/%s.debug", HP_FX_DEBUGROOT, id, id + 2);
	cr_assert_str_eq(hp_symtab_symbols_path(t), want);
	check_full_symbols(t, &l);
	hp_symtab_close(t);
	dlclose(l.handle);
}

Test(symtab, stripped_without_search_is_dynsym_only)
{
	struct hp_symtab *t = open_ok(HP_FX_STRIPPED, BASE, HP_FX_DEBUGROOT, 1);
	const struct hp_sym *s;

	cr_assert_eq(hp_symtab_origin(t), HP_SYMS_DYNSYM_ONLY);
	cr_assert_eq(hp_symtab_count_symtab(t), 0);
	cr_assert_gt(hp_symtab_count_dynsym(t), 0);
	cr_assert_null(hp_symtab_find(t, "local_helper"));
	s = must_find(t, "hp_fx_exported_func");
	cr_assert_eq(s->from_dynsym, 1);
	cr_assert_str_eq(hp_symtab_symbols_path(t), HP_FX_STRIPPED);
	hp_symtab_close(t);
}

Test(symtab, wrong_build_id_refused)
{
	struct hp_symtab *t = open_ok(HP_FX_STRIPPED, BASE, HP_FX_BADROOT, 0);
	const char *note = hp_symtab_debug_note(t);

	cr_assert_eq(hp_symtab_origin(t), HP_SYMS_DYNSYM_ONLY);
	cr_assert(contains(note, "refused") && contains(note, "build-id"), "note: %s", note);
	cr_assert(contains(note, hp_symtab_build_id(t)), "note names the wanted id: %s", note);
	cr_assert_null(strchr(note, '\n'));
	cr_assert_null(hp_symtab_find(t, "local_helper"));
	cr_assert_not_null(hp_symtab_find(t, "hp_fx_exported_func"));
	hp_symtab_close(t);
}

/* Lays out `lib` as <tmp>/<dir>/libhpfx_link.so and `debug` at
 * <tmp>/<debug_rel>, and opens it with debug root <tmp>/root. */
static struct hp_symtab *open_link_layout(const char *lib, const char *libname, const char *dir,
					  const char *debug, const char *debug_rel, char *dbgpath)
{
	char p[PATH_MAX], root[PATH_MAX], libpath[PATH_MAX], rel[PATH_MAX], *slash;

	snprintf(rel, sizeof(rel), "%s/%s", dir, libname);
	tmp_path(libpath, rel);
	mkdir_p(tmp_path(p, dir));
	copy_file(lib, libpath);
	tmp_path(dbgpath, debug_rel);
	snprintf(p, sizeof(p), "%s", dbgpath);
	slash = strrchr(p, '/');
	*slash = '\0';
	mkdir_p(p);
	copy_file(debug, dbgpath);
	mkdir_p(tmp_path(root, "root"));
	return open_ok(libpath, BASE, root, 0);
}

static void check_link_found(struct hp_symtab *t, const char *dbgpath)
{
	char real[PATH_MAX];

	cr_assert_eq(hp_symtab_origin(t), HP_SYMS_DEBUG_LINK, "origin %s, note: %s",
		     hp_symtab_origin_name(hp_symtab_origin(t)), hp_symtab_debug_note(t));
	cr_assert_not_null(realpath(hp_symtab_symbols_path(t), real));
	cr_assert_str_eq(real, dbgpath);
	must_find(t, "local_helper");
	must_find(t, "local_table");
	cr_assert_eq(must_find(t, "hp_fx_exported_func")->from_dynsym, 0);
}

Test(symtab, debuglink_beside, .init = make_tmpdir, .fini = remove_tmpdir)
{
	char dbg[PATH_MAX], real[PATH_MAX];
	struct hp_symtab *t = open_link_layout(HP_FX_LINK, "libhpfx_link.so", "a",
					       HP_FX_LINK_DEBUG, "a/libhpfx_link.debug", dbg);

	cr_assert_not_null(realpath(dbg, real));
	check_link_found(t, real);
	hp_symtab_close(t);
}

Test(symtab, debuglink_dot_debug, .init = make_tmpdir, .fini = remove_tmpdir)
{
	char dbg[PATH_MAX], real[PATH_MAX];
	struct hp_symtab *t = open_link_layout(HP_FX_LINK, "libhpfx_link.so", "b",
					       HP_FX_LINK_DEBUG, "b/.debug/libhpfx_link.debug", dbg);

	cr_assert_not_null(realpath(dbg, real));
	check_link_found(t, real);
	hp_symtab_close(t);
}

Test(symtab, debuglink_under_debug_root, .init = make_tmpdir, .fini = remove_tmpdir)
{
	char dir[PATH_MAX], real[PATH_MAX], rel[PATH_MAX], dbg[PATH_MAX];
	struct hp_symtab *t;
	int n;

	/* <root><real directory of the object>/<debuglink> */
	mkdir_p(tmp_path(dir, "c"));
	cr_assert_not_null(realpath(dir, real));
	n = snprintf(rel, sizeof(rel), "root%s/libhpfx_link.debug", real);
	cr_assert(n > 0 && n < (int)sizeof(rel));
	t = open_link_layout(HP_FX_LINK, "libhpfx_link.so", "c", HP_FX_LINK_DEBUG, rel, dbg);
	cr_assert_not_null(realpath(dbg, real));
	check_link_found(t, real);
	hp_symtab_close(t);
}

Test(symtab, debuglink_wrong_build_id_refused, .init = make_tmpdir, .fini = remove_tmpdir)
{
	char dbg[PATH_MAX];
	struct hp_symtab *t = open_link_layout(HP_FX_LINK, "libhpfx_link.so", "d",
					       HP_FX_V2_DEBUG, "d/libhpfx_link.debug", dbg);
	const char *note = hp_symtab_debug_note(t);

	cr_assert_eq(hp_symtab_origin(t), HP_SYMS_DYNSYM_ONLY);
	cr_assert(contains(note, "refused") && contains(note, "build-id"), "note: %s", note);
	cr_assert(contains(note, "libhpfx_link.debug"), "note: %s", note);
	cr_assert_null(hp_symtab_find(t, "local_helper"));
	hp_symtab_close(t);
}

Test(symtab, debuglink_crc_without_build_id, .init = make_tmpdir, .fini = remove_tmpdir)
{
	char dbg[PATH_MAX], real[PATH_MAX];
	struct hp_symtab *t = open_link_layout(HP_FX_NOBID_LINK, "libhpfx_nobid_link.so", "e",
					       HP_FX_NOBID_DEBUG, "e/libhpfx_nobid.debug", dbg);

	cr_assert_str_eq(hp_symtab_build_id(t), "");
	cr_assert_not_null(realpath(dbg, real));
	check_link_found(t, real);
	hp_symtab_close(t);
}

Test(symtab, debuglink_crc_mismatch_refused, .init = make_tmpdir, .fini = remove_tmpdir)
{
	char dbg[PATH_MAX];
	/* The other variant's debug file under the linked name. */
	struct hp_symtab *t = open_link_layout(HP_FX_NOBID_LINK, "libhpfx_nobid_link.so", "f",
					       HP_FX_NOBID_V2_DEBUG, "f/libhpfx_nobid.debug", dbg);
	const char *note = hp_symtab_debug_note(t);

	cr_assert_eq(hp_symtab_origin(t), HP_SYMS_DYNSYM_ONLY);
	cr_assert(contains(note, "refused") && contains(note, "CRC32"), "note: %s", note);
	cr_assert_null(hp_symtab_find(t, "local_helper"));
	hp_symtab_close(t);
}

Test(symtab, minidebuginfo)
{
	static struct nm_sym nm[512];
	size_t n;
	struct hp_symtab *t;
	const struct hp_sym *s;
	const struct nm_sym *e;

	if (!HP_FX_MINI[0])
		cr_skip_test("xz was not available to build the MiniDebugInfo fixture");
	n = load_nm(nm, 512);
	t = open_ok(HP_FX_MINI, BASE, HP_FX_EMPTYROOT, 0);
	cr_assert_eq(hp_symtab_origin(t), HP_SYMS_MINIDEBUGINFO, "origin %s, note: %s",
		     hp_symtab_origin_name(hp_symtab_origin(t)), hp_symtab_debug_note(t));
	cr_assert_str_eq(hp_symtab_symbols_path(t), HP_FX_MINI);
	cr_assert_gt(hp_symtab_count_symtab(t), 0);
	/* Fedora keeps local functions, not local data. */
	s = must_find(t, "local_helper");
	e = nm_lookup(nm, n, "local_helper");
	cr_assert_not_null(e);
	cr_assert_eq(s->addr, e->value + BASE);
	cr_assert_eq(s->size, e->size);
	cr_assert_eq(s->bind, STB_LOCAL);
	cr_assert_eq(hp_symtab_containing(t, s->addr + 1), s);
	/* Exported symbols come from .dynsym, absent from the mini .symtab. */
	s = must_find(t, "hp_fx_exported_func");
	cr_assert_eq(s->from_dynsym, 1);
	cr_assert_eq(s->addr, nm_lookup(nm, n, "hp_fx_exported_func")->value + BASE);
	hp_symtab_close(t);
}

Test(symtab, elf32_relocatable)
{
	struct hp_symtab *t;
	const struct hp_sym *s;

	if (!HP_FX_ELF32[0])
		cr_skip_test("the compiler cannot build -m32 objects");
	t = open_ok(HP_FX_ELF32, 0, NULL, 1);
	cr_assert_eq(hp_symtab_origin(t), HP_SYMS_FILE_SYMTAB);
	s = must_find(t, "local_table");
	cr_assert_eq(s->size, 100);
	cr_assert_eq(s->bind, STB_LOCAL);
	s = must_find(t, "local_helper");
	cr_assert_eq(s->type, STT_FUNC);
	cr_assert_gt(s->size, 0);
	must_find(t, "hp_fx_exported_func");
	hp_symtab_close(t);
}

/* ---- errors ------------------------------------------------------------ */

Test(symtab, error_missing_file)
{
	char err[256] = "";

	cr_assert_eq(open_rc(HP_FX_DIR "/no-such-file.so", err, sizeof(err)), -ENOENT);
	cr_assert(contains(err, "cannot open") && contains(err, "no-such-file.so"), "err: %s", err);
}

Test(symtab, error_not_elf)
{
	char err[256] = "";

	cr_assert_eq(open_rc(HP_FX_NOTELF, err, sizeof(err)), -ENOEXEC);
	cr_assert(contains(err, "not an ELF file"), "err: %s", err);
	cr_assert_eq(open_rc(HP_FX_DIR, err, sizeof(err)), -ENOEXEC, "a directory: %s", err);
}

Test(symtab, error_empty_file, .init = make_tmpdir, .fini = remove_tmpdir)
{
	char p[PATH_MAX], err[256] = "";

	write_file(tmp_path(p, "empty"), "", 0);
	cr_assert_eq(open_rc(p, err, sizeof(err)), -ENOEXEC, "err: %s", err);
	write_file(p, "\177EL", 3);
	cr_assert_eq(open_rc(p, err, sizeof(err)), -ENOEXEC, "err: %s", err);
	write_file(p, "\177ELF", 4);
	cr_assert_eq(open_rc(p, err, sizeof(err)), -EINVAL, "err: %s", err);
}

Test(symtab, error_truncated)
{
	char err[256] = "";

	cr_assert_eq(open_rc(HP_FX_TRUNCATED, err, sizeof(err)), -EINVAL);
	cr_assert(contains(err, "corrupt ELF"), "err: %s", err);
	cr_assert_null(strchr(err, '\n'));
}

Test(symtab, error_arguments)
{
	struct hp_symtab_opts o = { 0 };
	struct hp_symtab *t;
	char err[256];

	cr_assert_eq(hp_symtab_open(HP_FX_LIB, &o, &t, err, sizeof(err)), -EINVAL);
	cr_assert(contains(err, "sz"), "err: %s", err);
	cr_assert_eq(hp_symtab_open(NULL, NULL, &t, err, sizeof(err)), -EINVAL);
	cr_assert_eq(hp_symtab_open(HP_FX_LIB, NULL, NULL, NULL, 0), -EINVAL);
	/* err may be NULL; opts may be NULL (defaults). */
	cr_assert_eq(hp_symtab_open(HP_FX_DIR "/nothing", NULL, &t, NULL, 0), -ENOENT);
	cr_assert_eq(hp_symtab_open(HP_FX_LIB, NULL, &t, NULL, 0), 0);
	cr_assert_eq(hp_symtab_origin(t), HP_SYMS_FILE_SYMTAB);
	hp_symtab_close(t);
	hp_symtab_close(NULL);
	cr_assert_null(hp_symtab_find(NULL, "x"));
	cr_assert_null(hp_symtab_containing(NULL, 1));
	cr_assert_eq(hp_symtab_count(NULL), 0);
}

Test(symtab, origin_names)
{
	for (int i = HP_SYMS_FILE_SYMTAB; i <= HP_SYMS_DYNSYM_ONLY; i++) {
		const char *a = hp_symtab_origin_name(i);

		cr_assert(a && *a);
		for (int j = HP_SYMS_FILE_SYMTAB; j < i; j++)
			cr_assert_str_neq(a, hp_symtab_origin_name(j));
	}
}

/* ---- corrupted copies, patched at run time ------------------------------ */

struct image {
	unsigned char *buf;
	size_t len;
	Elf64_Ehdr *eh;
};

static struct image load_image(void)
{
	struct image im;

	im.buf = read_file(HP_FX_LIB, &im.len);
	im.eh = (Elf64_Ehdr *)im.buf;
	cr_assert_eq(im.eh->e_ident[EI_CLASS], ELFCLASS64);
	return im;
}

static Elf64_Shdr *find_shdr(struct image *im, Elf64_Word type)
{
	for (unsigned i = 0; i < im->eh->e_shnum; i++) {
		Elf64_Shdr *sh = (Elf64_Shdr *)(im->buf + im->eh->e_shoff + (size_t)i * im->eh->e_shentsize);

		if (sh->sh_type == type)
			return sh;
	}
	cr_assert_fail("section type %u not found", type);
	return NULL;
}

/* Writes the patched image and opens it; returns hp_symtab_open's rc. */
static int open_patched(const struct image *im, size_t len, char *err, size_t errlen)
{
	char p[PATH_MAX];

	write_file(tmp_path(p, "patched.so"), im->buf, len);
	return open_rc(p, err, errlen);
}

Test(symtab, corrupt_section_links, .init = make_tmpdir, .fini = remove_tmpdir)
{
	struct image im = load_image();
	Elf64_Shdr *sh = find_shdr(&im, SHT_SYMTAB), saved = *sh;
	char err[256];

	sh->sh_link = 9999;
	cr_assert_eq(open_patched(&im, im.len, err, sizeof(err)), -EINVAL);
	cr_assert(contains(err, "sh_link"), "err: %s", err);

	*sh = saved;
	sh->sh_link = (Elf64_Word)(((unsigned char *)sh - im.buf - im.eh->e_shoff) / im.eh->e_shentsize);
	cr_assert_eq(open_patched(&im, im.len, err, sizeof(err)), -EINVAL, "self link: %s", err);

	*sh = saved;
	sh->sh_link = im.eh->e_shstrndx ? 1 : 0;  /* section 1 is not a string table here */
	cr_assert_eq(open_patched(&im, im.len, err, sizeof(err)), -EINVAL, "err: %s", err);

	*sh = saved;
	sh->sh_entsize = 7;
	cr_assert_eq(open_patched(&im, im.len, err, sizeof(err)), -EINVAL);
	cr_assert(contains(err, "sh_entsize"), "err: %s", err);

	*sh = saved;
	sh->sh_offset = im.len - 8;
	cr_assert_eq(open_patched(&im, im.len, err, sizeof(err)), -EINVAL, "err: %s", err);

	*sh = saved;
	sh->sh_size = (Elf64_Xword)1 << 40;
	cr_assert_eq(open_patched(&im, im.len, err, sizeof(err)), -EINVAL, "err: %s", err);

	*sh = saved;
	im.eh->e_shoff = im.len + 4096;
	cr_assert_eq(open_patched(&im, im.len, err, sizeof(err)), -EINVAL, "err: %s", err);
	free(im.buf);
}

Test(symtab, corrupt_name_offsets_skipped, .init = make_tmpdir, .fini = remove_tmpdir)
{
	struct image im = load_image();
	Elf64_Shdr *sh = find_shdr(&im, SHT_SYMTAB);
	Elf64_Shdr *str = (Elf64_Shdr *)(im.buf + im.eh->e_shoff + (size_t)sh->sh_link * im.eh->e_shentsize);
	Elf64_Sym *syms = (Elf64_Sym *)(im.buf + sh->sh_offset);
	size_t n = sh->sh_size / sizeof(Elf64_Sym);
	char p[PATH_MAX];
	struct hp_symtab *t;

	/* Every other name points past the string table, and the table
	 * loses its final NUL: no name may be read out of bounds. */
	for (size_t i = 1; i < n; i += 2)
		syms[i].st_name = 0xffffff00u;
	im.buf[str->sh_offset + str->sh_size - 1] = 'x';
	write_file(tmp_path(p, "names.so"), im.buf, im.len);
	t = open_ok(p, BASE, NULL, 1);
	cr_assert_lt(hp_symtab_count_symtab(t), n / 2 + 1);
	for (size_t i = 0; i < hp_symtab_count(t); i++)
		(void)hp_symtab_containing(t, BASE + i * 16);
	hp_symtab_close(t);
	free(im.buf);
}

Test(symtab, truncated_anywhere, .init = make_tmpdir, .fini = remove_tmpdir)
{
	struct image im = load_image();
	char err[256];

	for (size_t len = 0; len < im.len; len += len < 256 ? 7 : 211) {
		int rc;

		err[0] = '\0';
		rc = open_patched(&im, len, err, sizeof(err));
		cr_assert(rc == 0 || (rc < 0 && err[0]), "len %zu: rc %d without a reason", len, rc);
	}
	free(im.buf);
}

Test(symtab, random_corruption, .init = make_tmpdir, .fini = remove_tmpdir)
{
	struct image im = load_image();
	unsigned char *orig = malloc(im.len);
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	char err[256];

	cr_assert_not_null(orig);
	memcpy(orig, im.buf, im.len);
	/* Flip bytes in the headers and the tables libelf and we parse; the
	 * index must fail cleanly or succeed, never crash. */
	for (int round = 0; round < 300; round++) {
		memcpy(im.buf, orig, im.len);
		for (int k = 0; k < 8; k++) {
			size_t off;

			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			off = (rng >> 8) % (round % 2 ? im.len : 64 + 64 * (size_t)im.eh->e_shnum);
			if (round % 2 == 0 && off >= 64)
				off = im.eh->e_shoff + (off - 64);
			if (off < im.len)
				im.buf[off] ^= (unsigned char)(rng | 1);
		}
		(void)open_patched(&im, im.len, err, sizeof(err));
	}
	free(orig);
	free(im.buf);
}

/* ---- the real libjvm ----------------------------------------------------- */

Test(symtab, real_libjvm)
{
	char path[PATH_MAX];
	const char *home = getenv("JAVA_HOME");
	struct hp_symtab *t;
	const struct hp_sym *s;

	snprintf(path, sizeof(path), "%s/lib/server/libjvm.so", home ? home : "");
	if (!home || access(path, R_OK) != 0)
		snprintf(path, sizeof(path), "%s", HP_LIBJVM);
	if (access(path, R_OK) != 0)
		cr_skip_test("no libjvm at %s", path);
	t = open_ok(path, BASE, NULL, 0);
	cr_assert_gt(hp_symtab_count(t), 50000, "only %zu symbols (origin %s)", hp_symtab_count(t),
		     hp_symtab_origin_name(hp_symtab_origin(t)));
	s = must_find(t, "_ZN13CollectedHeap12memory_usageEv");
	cr_assert_eq(s->type, STT_FUNC);
	cr_assert_eq(hp_symtab_containing(t, s->addr + 1), s);
	s = must_find(t, "_ZTV15G1CollectedHeap");
	cr_assert_eq(s->type, STT_OBJECT);
	/* A vtable pointer points 16 bytes into the vtable symbol. */
	cr_assert_eq(hp_symtab_containing(t, s->addr + 16), s);
	cr_assert_eq(strlen(hp_symtab_build_id(t)) % 2, 0);
	hp_symtab_close(t);
}
