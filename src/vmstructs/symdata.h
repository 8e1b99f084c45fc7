/* Per-release HotSpot facts, kept as data (symbols/jdk-NN.txt), not code.
 *
 * Format: one "key value" per line; '#' starts a comment (every entry cites
 * the OpenJDK tag and file it was read from). Keys are dotted; the first
 * component says what kind of fact it is:
 *   release N                          the feature release the file is for
 *   field.<Type>.<member> <anchor><+|-><bytes>
 *                                      instance member located relative to a
 *                                      VMStructs-published member of the same
 *                                      type, e.g. "_reserved-8"
 *   static.<Type>.<member> <mangled>   a static member's symbol
 *   symbol.<function>[.<HeapClass>] <mangled>
 *                                      a callable function; the heap-class
 *                                      variant wins for that heap
 *   refresh.<gc> full|young|cycle|never
 *                                      which collections refresh the last-GC
 *                                      fields for this collector
 *   events.<gc> collection|pause|none  what a JVMTI GarbageCollectionFinish
 *                                      ends: a whole collection (Serial,
 *                                      Parallel, G1), one pause of a
 *                                      concurrent cycle (ZGC, Shenandoah),
 *                                      or nothing (Epsilon never collects)
 *   jmm.<name> <value>                 JmmInterface facts
 *   sampler.<fact> <value>             what the JVMTI allocation sampler does
 *                                      (agent/samplerate.h): after_gc_tlab
 *                                      extra (the first object of a thread's
 *                                      first TLAB after a collection is
 *                                      sampled ahead of its turn)
 *   code.<fact> <value>                compiled code and method facts for
 *                                      decoding frames (vmstructs/framedecode.h):
 *                                      unsigned5_excluded 0|1, jmethodid
 *                                      pointer|table
 *   frame.<arch>.<constant> <words>    frame:: constants VMStructs does not
 *                                      publish on that architecture (x86_64,
 *                                      aarch64): the stack walker's
 *   layout.<Type>.size <bytes>         checks against VMStructs: the type's
 *   layout.<Type>.<member> <offset>    size, a published member's offset, an
 *   layout.const.<name> <value>        integer constant; one that fails turns
 *                                      off every field.<Type>.* (every frame.*
 *                                      for a constant)
 *   gcstate.<bit> <value>              generational Shenandoah's
 *                                      ShenandoahHeap::GCState bits
 *                                      (heapusage/marking.c: MARKING,
 *                                      YOUNG_MARKING, OLD_MARKING,
 *                                      WEAK_ROOTS, EVACUATION, UPDATE_REFS,
 *                                      HAS_FORWARDED)
 *   witness.<fact key> [!]<mangled>    a libjvm symbol that must be there
 *                                      (with '!': must not) for the fact to
 *                                      hold; else the fact is off
 * The files are compiled into the library; HEAPPROBE_SYMBOLS_DIR (or the
 * probe option) loads them from a directory instead.
 */
#ifndef HP_SYMDATA_H
#define HP_SYMDATA_H

#include <stddef.h>
#include <stdint.h>

struct hp_symdata;

/* Parses one file's text. -EBADMSG with "NAME:LINE: reason" in err for a
 * malformed line, an unknown key kind, a duplicate key or a missing or wrong
 * `release`. `expect_release` 0 skips that check. */
int hp_symdata_parse(const char *text, size_t len, const char *name, int expect_release,
		     struct hp_symdata **out, char *err, size_t errlen);

/* Loads the data for `feature` (e.g. 17): from `dir`/jdk-<feature>.txt when
 * dir is not NULL, else from the copy compiled in. A release without data
 * of its own gets the nearest lower release's (the source then says so):
 * hp_symdata_check must run on it before use. -ENOENT "no data for JDK N
 * (have: 11 17 21 25 ...)" for a release older than every file. */
int hp_symdata_load(int feature, const char *dir, struct hp_symdata **out, char *err, size_t errlen);
void hp_symdata_free(struct hp_symdata *d);

/* The value of `key`, or NULL. */
const char *hp_symdata_get(const struct hp_symdata *d, const char *key);
/* printf-style key. */
const char *hp_symdata_getf(const struct hp_symdata *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Where the data came from ("built-in jdk-17.txt" or a path). */
const char *hp_symdata_source(const struct hp_symdata *d);

/* Parses "<anchor><+|-><n>" into anchor name and signed delta, or a plain
 * "<n>" into an empty anchor and n. */
int hp_symdata_anchor(const char *value, char *anchor, size_t cap, int64_t *delta);

/* The integer value of `key` in [lo, hi]: 0 and *out set, or -ENOENT when
 * the key is missing or not such a number. `d` may be NULL. */
int hp_symdata_int(const struct hp_symdata *d, const char *key, long lo, long hi, int *out);

struct hp_vms;
/* The offset of type::member: VMStructs' when it has the field, else
 * symbols/ field.<type>.<member> (a number, or "<VMStructs field>+N").
 * 0, or -ENOENT / -EINVAL; `how` says where it came from or why not. `d`
 * may be NULL: `no_data` then says why (NULL: "no symbols/ data"). */
int hp_symdata_member(const struct hp_vms *vms, const struct hp_symdata *d, const char *no_data, const char *type,
		      const char *member, int64_t *offset, char *how, size_t len);

/* Checks every fact against this JVM: layout.* against VMStructs (NULL: not
 * made), witness.* and the static./symbol. names against libjvm's symbols
 * through `find` (NULL: not made). A fact a check contradicts is off: the
 * getters answer NULL for it and hp_symdata_off lists it with its reason.
 * Run once, before the data is shared. */
struct hp_sym;
typedef const struct hp_sym *(*hp_symdata_find_fn)(void *ctx, const char *mangled);
struct hp_symdata_checks {
	int borrowed_from;      /* 0, or the release whose data stands in */
	int symbols_checked;    /* 0: no symbol table, symbol checks not made */
	unsigned facts;         /* every fact (not release, layout., witness.) */
	unsigned vmstructs;     /* guarded by a layout check that held */
	unsigned symbols;       /* a symbol, or a witness, found as stated */
	unsigned at_use;        /* checked only where used: values' sanity,
				 * decoded stacks against GetStackTrace */
	unsigned unchecked;     /* behaviour (refresh., events., jmm., sampler.) */
	unsigned absent;        /* a symbol this libjvm does not have */
	unsigned off;           /* contradicted by a check */
};
int hp_symdata_check(struct hp_symdata *d, const struct hp_vms *vms, hp_symdata_find_fn find, void *ctx);
const struct hp_symdata_checks *hp_symdata_checks(const struct hp_symdata *d);
/* The n-th fact that is off: its key, and the reason in *reason; NULL past
 * the last. */
const char *hp_symdata_off(const struct hp_symdata *d, size_t n, const char **reason);
/* The release the data was written for (the JVM's, unless borrowed). */
int hp_symdata_release(const struct hp_symdata *d);
/* One line: source, the checks' counts and every fact that is off. */
int hp_symdata_describe(const struct hp_symdata *d, char *out, size_t cap);

/* A frame:: constant of `arch` ("x86_64", "aarch64"): VMStructs' when it
 * publishes it, else the data's frame.<arch>.<name>. 0, or -ENOENT with the
 * reason in err. `vms` and `d` may be NULL. */
int hp_symdata_frame(const struct hp_vms *vms, const struct hp_symdata *d, const char *arch, const char *name,
		     int32_t *out, char *err, size_t errlen);

/* The releases compiled in, as "11 17 21 25". */
const char *hp_symdata_builtin_releases(void);

#endif
