/* The allocation and live-heap profiler behind -agentpath:libheapprobe.so. */
#ifndef HP_SAMPLER_H
#define HP_SAMPLER_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdio.h>

#include "agent/options.h"
#include "heapprobe.h"

/* Starts profiling with `o`. `live_phase`: called from Agent_OnAttach (the
 * VM runs; `jni` is the attaching thread's), else from Agent_OnLoad (jni
 * NULL; the agent thread starts at VMInit). 0 or negative errno, reason in
 * err. */
int hp_profiler_start(JavaVM *vm, struct hp_probe *probe, const struct hp_agent_options *o, JNIEnv *jni,
		      int live_phase, char *err, size_t errlen);
/* Writes a profile now: to dest's file= and format= when dest names a
 * file or a format (a command's own), else where the profiler writes. */
int hp_profiler_dump(JNIEnv *jni, const char *why, const struct hp_agent_options *dest);
/* Stops sampling, writes a last profile (to dest's file=/format= as for
 * dump; none when discard), releases every reference, so that a later
 * attach can start afresh. */
int hp_profiler_stop(JNIEnv *jni, const struct hp_agent_options *dest, bool discard);
/* The profiler's state as "key: value" lines (running or not, options,
 * samples, sites, markings, where profiles went). Any thread. */
void hp_profiler_status(FILE *out);
/* The n largest live sites as tab-separated lines for the heapprobe
 * command's top view (sampler.c: write_top has the layout). A marking is
 * asked for as for a periodic profile (mark= policy, under 1/50 of the
 * wall clock). 0 or -ESRCH when not running. */
int hp_profiler_top(JNIEnv *jni, FILE *out, unsigned n);
int hp_profiler_running(void);

/* No profile after this returns (none in flight either): VMDeath, after
 * the profile at exit, and Agent_OnUnload. */
void hp_profiler_quiesce(void);
/* Disposes the profiler's jvmtiEnv if it is not running (a failed start
 * must not leave callbacks behind a library about to be unloaded). */
void hp_profiler_release_env(void);

#endif
