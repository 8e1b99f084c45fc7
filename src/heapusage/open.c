/* hp_open and hp_close (heapprobe.h): the probe's own parts (probe.c),
 * then the heap-usage modes and the GC events on top of them, and the
 * reverse at close. Apart from probe.c so that the modules, which all
 * read the probe (probe.h), are called from above and never call back
 * into the file that calls them. */
#include "heapusage/probe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapusage/events.h"
#include "heapusage/marking.h"
#include "heapusage/modes.h"

int hp_open(JavaVM *vm, const struct hp_open_opts *opts, struct hp_probe **out)
{
	if (!out || (opts && opts->sz < sizeof(size_t)))
		return -EINVAL;
	*out = NULL;
	uint64_t t0 = hp_now_ns();
	struct hp_probe *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (opts) {
		/* Take what the caller's (possibly older, smaller) struct has. */
		size_t n = opts->sz < sizeof(p->opts) ? opts->sz : sizeof(p->opts);
		memcpy(&p->opts, opts, n);
	}
	p->opts.sz = sizeof(p->opts);
	hp_parse_faults(p, getenv("HEAPPROBE_FAULTS"));
	p->vm = vm;
	if (vm && (*vm)->GetEnv(vm, (void **)&p->jvmti, JVMTI_VERSION_1_2) != JNI_OK)
		p->jvmti = NULL;

	hp_probe_load(p);

	hp_modes_init(p, false);
	for (int i = 0; i < HP_MAX_FAULT_NAMES && p->disabled_modes[i][0]; i++)
		for (int m = 0; m < HP_MODE_COUNT; m++)
			if (strcmp(p->disabled_modes[i], hp_mode_name(m)) == 0)
				hp_mode_disable(p, m, -EPERM, "disabled by HEAPPROBE_FAULTS");
	if (p->jvmti) {
		/* Live phase: hp_open called after VM start (attach, or later). */
		jvmtiPhase phase = JVMTI_PHASE_ONLOAD;
		(*p->jvmti)->GetPhase(p->jvmti, &phase);
		hp_events_start(p, phase == JVMTI_PHASE_LIVE, p->events_reason, sizeof(p->events_reason));
	} else {
		snprintf(p->events_reason, sizeof(p->events_reason), "no JavaVM given: no post-GC capture");
	}
	p->open_ns = hp_now_ns() - t0;
	*out = p;
	return 0;
}

void hp_close(struct hp_probe *p)
{
	if (!p)
		return;
	hp_events_stop(p);
	hp_set_gc_callback(p, NULL, NULL);
	hp_modes_fini(p);
	if (p->jvmti)
		(*p->jvmti)->DisposeEnvironment(p->jvmti);
	hp_events_free(p);
	hp_marking_free(p);
	hp_probe_release(p);
}
