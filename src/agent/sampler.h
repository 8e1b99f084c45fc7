/* The allocation and live-heap profiler behind -agentpath:libheapprobe.so. */
#ifndef HP_SAMPLER_H
#define HP_SAMPLER_H

#include <jvmti.h>
#include <stdio.h>

#include "agent/options.h"
#include "heapprobe.h"

/* Starts profiling with `o`. `live_phase`: called from Agent_OnAttach (the
 * VM runs; `jni` is the attaching thread's), else from Agent_OnLoad (jni
 * NULL; the agent thread starts at VMInit). 0 or negative errno, reason in
 * err. */
int hp_profiler_start(JavaVM *vm, struct hp_probe *probe, const struct hp_agent_options *o, JNIEnv *jni,
		      int live_phase, char *err, size_t errlen);
/* Writes a profile now. */
int hp_profiler_dump(JNIEnv *jni, const char *why);
/* Stops sampling, writes a last profile, releases every reference, so that
 * a later attach can start afresh. */
int hp_profiler_stop(JNIEnv *jni);
int hp_profiler_running(void);
/* Disposes the profiler's jvmtiEnv if it is not running (a failed start
 * must not leave callbacks behind a library about to be unloaded). */
void hp_profiler_release_env(void);

#endif
