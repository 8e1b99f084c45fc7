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
 *   code.<fact> <value>                compiled code and method facts for
 *                                      decoding frames (vmstructs/framedecode.h):
 *                                      unsigned5_excluded 0|1, jmethodid
 *                                      pointer|table
 *   frame.<constant> <words>           x86_64 frame slots VMStructs does not
 *                                      publish (the stack walker's)
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
 * dir is not NULL, else from the copy compiled in. -ENOENT "no data for JDK
 * N (have: 11 17 21 25)" for an unknown release. */
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

/* The releases compiled in, as "11 17 21 25". */
const char *hp_symdata_builtin_releases(void);

#endif
