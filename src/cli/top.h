/* heapprobe top PID: the top live sites of a running JVM in the terminal,
 * refreshed after each collection. */
#ifndef HP_CLI_TOP_H
#define HP_CLI_TOP_H

#include <signal.h>

#include "cli/session.h"

/* Runs until q, Ctrl-C (*stop set by the caller's handler) or the JVM's
 * end. Starts the profiler if none runs (options: `extra`) and then stops
 * it without a profile, so the JVM is left as it was found. */
int hp_top_run(struct hp_session *s, const char *extra, volatile sig_atomic_t *stop);

#endif
