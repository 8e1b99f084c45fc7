/* symbols/ data: parsing, the nearest lower release's file for a release
 * without one, and the checks that turn off what this JVM contradicts
 * (VMStructs as synthetic tables laid out like HotSpot's, libjvm's symbols
 * as a name list). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmstructs/symdata.h"
#include "vmstructs/symtab.h"
#include "vmstructs/vmstructs.h"
#include "fake_vms.h"


/* JDK 21's CollectedHeap: 96 bytes, _reserved at 32. */
static struct fake_field fields[] = {
	{ "CollectedHeap", "_reserved", "MemRegion", 0, 32, NULL },
	{ "CollectedHeap", "_total_collections", "unsigned int", 0, 64, NULL },
	{ NULL, NULL, NULL, 0, 0, NULL },
};
static struct fake_type types[] = {
	{ "CollectedHeap", NULL, 0, 0, 0, 96 },
	{ NULL, NULL, 0, 0, 0, 0 },
};
static struct fake_int ints[] = { { "frame::interpreter_frame_last_sp_offset", -2 }, { NULL, 0 } };
static struct fake_long longs[] = { { NULL, 0 } };

static struct hp_vms *fake_vms(void)
{
	struct hp_vms_tables t = fake_vms_tables(fields, types, ints, longs);
	struct hp_vms *v;
	char err[256] = "";
	cr_assert_eq(hp_vms_load(&t, &v, err, sizeof(err)), 0, "%s", err);
	return v;
}

/* libjvm's symbols: the names in a NULL-terminated list. */
static const struct hp_sym *find_in(void *ctx, const char *name)
{
	static struct hp_sym found;
	for (const char *const *n = ctx; *n; n++)
		if (strcmp(*n, name) == 0)
			return &found;
	return NULL;
}

static struct hp_symdata *parse(const char *text)
{
	struct hp_symdata *d;
	char err[256] = "";
	cr_assert_eq(hp_symdata_parse(text, strlen(text), "t.txt", 0, &d, err, sizeof(err)), 0, "%s", err);
	return d;
}

static const char data_112[] =
	"release 25\n"
	"layout.CollectedHeap.size 112\n"
	"layout.CollectedHeap._reserved 48\n"
	"layout.const.frame::interpreter_frame_last_sp_offset -2\n"
	"field.CollectedHeap._used_at_last_gc _reserved-16\n"
	"field.GCHeapSummary._used 32\n"
	"frame.x86_64.interpreter_frame_bcp_offset -8\n"
	"code.jmethodid pointer\n"
	"witness.code.jmethodid _ZN14JNIMethodBlock12_free_methodE\n"
	"code.unsigned5_excluded 1\n"
	"witness.code.unsigned5_excluded !_ZN9UNSIGNED5x\n"
	"static.JvmtiExport._redefinition_count _ZN11JvmtiExport19_redefinition_countE\n"
	"refresh.g1 young\n";

Test(symdata, a_layout_vmstructs_contradicts_turns_off_that_types_fields_only)
{
	struct hp_vms *v = fake_vms();
	struct hp_symdata *d = parse(data_112);
	const char *syms[] = { "_ZN14JNIMethodBlock12_free_methodE", NULL };
	cr_assert_eq(hp_symdata_check(d, v, find_in, syms), 0);
	const struct hp_symdata_checks *c = hp_symdata_checks(d);
	/* VMStructs says 96 bytes and _reserved at 32: both checks fail. */
	cr_expect_null(hp_symdata_get(d, "field.CollectedHeap._used_at_last_gc"));
	int64_t off;
	char how[256];
	cr_expect_eq(hp_symdata_member(v, d, NULL, "CollectedHeap", "_used_at_last_gc", &off, how, sizeof(how)), -ENOENT);
	cr_expect(strstr(how, "layout.CollectedHeap") && strstr(how, "96"), "%s", how);
	/* The rest stands: other types, the frame slot (its constant holds),
	 * the witnessed jmethodID kind, UNSIGNED5 (its reader is absent, as
	 * the '!' asks). */
	cr_expect_str_eq(hp_symdata_get(d, "field.GCHeapSummary._used"), "32");
	cr_expect_str_eq(hp_symdata_get(d, "frame.x86_64.interpreter_frame_bcp_offset"), "-8");
	cr_expect_str_eq(hp_symdata_get(d, "code.jmethodid"), "pointer");
	cr_expect_str_eq(hp_symdata_get(d, "code.unsigned5_excluded"), "1");
	cr_expect_eq(c->off, 1u);
	cr_expect_eq(c->absent, 1u, "the redefinition count's symbol is not in this libjvm");
	cr_expect_eq(c->unchecked, 1u, "refresh.g1");
	cr_expect_eq(c->facts, 7u);
	const char *why;
	cr_expect_str_eq(hp_symdata_off(d, 0, &why), "field.CollectedHeap._used_at_last_gc");
	cr_expect_null(hp_symdata_off(d, 1, NULL));
	char line[1024];
	hp_symdata_describe(d, line, sizeof(line));
	cr_expect(strstr(line, "1 off: field.CollectedHeap._used_at_last_gc (layout.CollectedHeap."), "%s", line);
	hp_symdata_free(d);
	hp_vms_free(v);
}

Test(symdata, a_layout_that_holds_keeps_the_fields_and_counts_them_checked)
{
	struct hp_vms *v = fake_vms();
	struct hp_symdata *d = parse("release 21\nlayout.CollectedHeap.size 96\nlayout.CollectedHeap._reserved 32\n"
				     "field.CollectedHeap._used_at_last_gc _reserved-8\n");
	cr_assert_eq(hp_symdata_check(d, v, NULL, NULL), 0);
	int64_t off;
	char how[256];
	cr_expect_eq(hp_symdata_member(v, d, NULL, "CollectedHeap", "_used_at_last_gc", &off, how, sizeof(how)), 0, "%s", how);
	cr_expect_eq(off, 24);
	cr_expect_eq(hp_symdata_checks(d)->vmstructs, 1u);
	cr_expect_eq(hp_symdata_checks(d)->off, 0u);
	cr_expect_eq(hp_symdata_checks(d)->symbols_checked, 0);
	hp_symdata_free(d);
	hp_vms_free(v);
}

Test(symdata, witnesses_turn_off_what_libjvm_contradicts)
{
	struct hp_symdata *d = parse(data_112);
	/* A JDK 26 libjvm: no JNIMethodBlock; UNSIGNED5's reader there. */
	const char *syms[] = { "_ZN9UNSIGNED5x", "_ZN11JvmtiExport19_redefinition_countE", NULL };
	cr_assert_eq(hp_symdata_check(d, NULL, find_in, syms), 0);
	cr_expect_null(hp_symdata_get(d, "code.jmethodid"));
	cr_expect_null(hp_symdata_get(d, "code.unsigned5_excluded"));
	const char *why = NULL;
	cr_expect_str_eq(hp_symdata_off(d, 0, &why), "code.jmethodid");
	cr_expect(strstr(why, "_ZN14JNIMethodBlock12_free_methodE is not in libjvm"), "%s", why);
	cr_expect_str_eq(hp_symdata_off(d, 1, &why), "code.unsigned5_excluded");
	cr_expect(strstr(why, "_ZN9UNSIGNED5x is in libjvm"), "%s", why);
	/* Without VMStructs no layout check is made: the fields stand (their
	 * users need VMStructs anyway). */
	cr_expect_str_eq(hp_symdata_get(d, "field.CollectedHeap._used_at_last_gc"), "_reserved-16");
	cr_expect_eq(hp_symdata_checks(d)->symbols, 1u, "the redefinition count's symbol");
	hp_symdata_free(d);
}

/* The sampler's behaviour (samplerate.h): 11-24's files say the first
 * object after a collection is sampled ahead of its turn, witnessed by the
 * old accounting's entry point; 25's and 26's do not. A libjvm without
 * that entry point (JDK-8356372 backported) turns the fact off. */
Test(symdata, the_sampler_fact_follows_the_release_and_its_witness)
{
	int has[] = { 11, 17, 21, 22, 23, 24 }, hasnt[] = { 25, 26 };
	for (size_t i = 0; i < sizeof(has) / sizeof(has[0]) + sizeof(hasnt) / sizeof(hasnt[0]); i++) {
		bool extra = i < sizeof(has) / sizeof(has[0]);
		int release = extra ? has[i] : hasnt[i - sizeof(has) / sizeof(has[0])];
		struct hp_symdata *d;
		char err[512] = "";
		cr_assert_eq(hp_symdata_load(release, NULL, &d, err, sizeof(err)), 0, "%s", err);
		const char *v = hp_symdata_get(d, "sampler.after_gc_tlab");
		if (extra) {
			cr_expect(v && !strcmp(v, "extra"), "JDK %d: sampler.after_gc_tlab %s", release, v ? v : "absent");
			const char *old[] = { "_ZN17ThreadHeapSampler18check_for_samplingEP7oopDescmm", NULL };
			cr_assert_eq(hp_symdata_check(d, NULL, find_in, old), 0);
			cr_expect_not_null(hp_symdata_get(d, "sampler.after_gc_tlab"), "JDK %d: witnessed", release);
		} else {
			cr_expect_null(v, "JDK %d: sampler.after_gc_tlab %s", release, v);
		}
		hp_symdata_free(d);
	}
	struct hp_symdata *d;
	char err[512] = "";
	cr_assert_eq(hp_symdata_load(17, NULL, &d, err, sizeof(err)), 0, "%s", err);
	const char *fixed[] = { "_ZN17ThreadHeapSampler6sampleEP7oopDescPP12HeapWordImpl", NULL };
	cr_assert_eq(hp_symdata_check(d, NULL, find_in, fixed), 0);
	cr_expect_null(hp_symdata_get(d, "sampler.after_gc_tlab"), "a 17 whose libjvm has the new accounting");
	hp_symdata_free(d);
}

Test(symdata, bad_layout_value_is_a_failed_check)
{
	struct hp_vms *v = fake_vms();
	struct hp_symdata *d = parse("release 21\nlayout.CollectedHeap.size big\nfield.CollectedHeap.x 8\n");
	hp_symdata_check(d, v, NULL, NULL);
	cr_expect_null(hp_symdata_get(d, "field.CollectedHeap.x"));
	hp_symdata_free(d);
	hp_vms_free(v);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

Test(symdata, a_release_without_a_file_takes_the_nearest_lower_ones)
{
	char dir[] = "/tmp/hp-symdata-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	write_file(dir, "jdk-17.txt", "release 17\ncode.jmethodid pointer\n");
	write_file(dir, "jdk-21.txt", "release 21\ncode.jmethodid pointer\n");
	write_file(dir, "jdk-30.txt", "release 30\ncode.jmethodid table\n");
	write_file(dir, "jdk-22.txt.orig", "release 22\n");
	struct hp_symdata *d;
	char err[512] = "";
	cr_assert_eq(hp_symdata_load(21, dir, &d, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(hp_symdata_release(d), 21);
	cr_expect_null(strstr(hp_symdata_source(d), "for JDK"), "%s", hp_symdata_source(d));
	hp_symdata_free(d);
	cr_assert_eq(hp_symdata_load(29, dir, &d, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(hp_symdata_release(d), 21, "21 is below 29; 30 is not; jdk-22.txt.orig is no data file");
	cr_expect(strstr(hp_symdata_source(d), "jdk-21.txt for JDK 29"), "%s", hp_symdata_source(d));
	hp_symdata_check(d, NULL, NULL, NULL);
	cr_expect_eq(hp_symdata_checks(d)->borrowed_from, 21);
	hp_symdata_free(d);
	cr_expect_eq(hp_symdata_load(11, dir, &d, err, sizeof(err)), -ENOENT);
	cr_expect(strstr(err, "no data for JDK 11"), "%s", err);
	/* A lower file that is broken is an error, not a silent skip. */
	write_file(dir, "jdk-25.txt", "release 24\n");
	cr_expect_eq(hp_symdata_load(27, dir, &d, err, sizeof(err)), -EBADMSG);
	cr_expect(strstr(err, "says release 24, expected 25"), "%s", err);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

Test(symdata, the_built_in_files_stand_in_for_newer_releases_not_older_ones)
{
	struct hp_symdata *d;
	char err[512] = "";
	cr_assert_eq(hp_symdata_load(1000, NULL, &d, err, sizeof(err)), 0, "%s", err);
	const char *have = hp_symdata_builtin_releases();
	int newest = atoi(strrchr(have, ' ') ? strrchr(have, ' ') + 1 : have);
	cr_expect_eq(hp_symdata_release(d), newest, "have: %s", have);
	cr_expect(strstr(hp_symdata_source(d), "for JDK 1000"), "%s", hp_symdata_source(d));
	hp_symdata_free(d);
	cr_expect_eq(hp_symdata_load(10, NULL, &d, err, sizeof(err)), -ENOENT);
	cr_expect(strstr(err, "no data for JDK 10"), "%s", err);
}

Test(symdata, every_built_in_release_parses_and_states_its_checks)
{
	/* Each file guards the members VMStructs does not publish by the
	 * layout around them, and its decoding facts by witnesses. */
	char list[64];
	snprintf(list, sizeof(list), "%s", hp_symdata_builtin_releases());
	char *save;
	for (char *r = strtok_r(list, " ", &save); r; r = strtok_r(NULL, " ", &save)) {
		struct hp_symdata *d;
		char err[512] = "";
		cr_assert_eq(hp_symdata_load(atoi(r), NULL, &d, err, sizeof(err)), 0, "%s", err);
		cr_expect_not_null(hp_symdata_get(d, "layout.CollectedHeap.size"), "JDK %s", r);
		cr_expect_not_null(hp_symdata_get(d, "layout.const.frame::interpreter_frame_last_sp_offset"), "JDK %s", r);
		cr_expect_not_null(hp_symdata_get(d, "witness.code.jmethodid"), "JDK %s", r);
		cr_expect_not_null(hp_symdata_get(d, "witness.code.unsigned5_excluded"), "JDK %s", r);
		hp_symdata_free(d);
	}
}
