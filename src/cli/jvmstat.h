/* A JVM's jvmstat counters, read from the file it shares them in
 * (/tmp/hsperfdata_<user>/<pid>, the same bytes jstat maps): whether it
 * accepts attach (sun.rt.jvmCapabilities), its Java version, and the
 * collectors' invocation counts the top view refreshes on. The file's
 * layout is heapusage/perfdata.h's (one format, one definition). Absent
 * when the JVM runs with -XX:-UsePerfData; everything here is optional. */
#ifndef HP_CLI_JVMSTAT_H
#define HP_CLI_JVMSTAT_H

#include <stddef.h>
#include <stdint.h>

#include "cli/attach.h"

struct hp_jvmstat {
	const unsigned char *map;   /* MAP_SHARED: counters change under us */
	size_t len;
	char path[400];
};

/* Maps the JVM's file (found in its /tmp, any hsperfdata_* directory owned
 * by its uid). 0, or -ENOENT (no file: -XX:-UsePerfData), -EBADMSG (not a
 * jvmstat file), another negative errno. */
int hp_jvmstat_open(const struct hp_target *t, struct hp_jvmstat *js);
void hp_jvmstat_close(struct hp_jvmstat *js);

/* A long counter's address, or NULL. */
const volatile int64_t *hp_jvmstat_long(const struct hp_jvmstat *js, const char *name);
/* A string counter copied to buf; -ENOENT if absent. */
int hp_jvmstat_string(const struct hp_jvmstat *js, const char *name, char *buf, size_t cap);

/* Collections so far: the sum of sun.gc.collector.N.invocations; -1 when
 * the JVM has none of them. */
int64_t hp_jvmstat_collections(const struct hp_jvmstat *js);

#endif
