/* libFuzzer target for the jvmstat (hsperfdata) region parser.
 *
 * The input is the region itself, as HotSpot lays it out in memory and in
 * /tmp/hsperfdata_<user>/<pid> (a copy of a live JVM's file is the best
 * seed; run with -max_len=65536, real regions are 32-64 KiB). Whatever the
 * bytes, the parser must fail cleanly or hand out only aligned pointers
 * inside the bytes in use, and the arithmetic must never fault.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "heapusage/perfdata.h"

static void check_ptr(const volatile int64_t *p, const char *mem, size_t used)
{
	if (!p)
		return;
	const char *c = (const char *)p;
	if (c < mem || c + 8 > mem + used || (uintptr_t)c % 8 != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* 8-byte aligned copy: the live region is page-aligned. */
	char *mem = aligned_alloc(8, (size + 7) & ~(size_t)7);
	if (!mem)
		return 0;
	memcpy(mem, data, size);
	struct hp_perfdata_counters c;
	char err[256];
	if (hp_perfdata_index(mem, size, &c, err, sizeof(err)) == 0) {
		size_t used = (size_t)c.used_bytes;
		if (used > size)
			abort();
		for (int n = 0; n < HP_PD_GENS; n++) {
			check_ptr(c.gen[n].capacity, mem, used);
			check_ptr(c.gen[n].max_capacity, mem, used);
			for (int m = 0; m < HP_PD_MAX_SPACES; m++) {
				check_ptr(c.gen[n].space[m].used, mem, used);
				check_ptr(c.gen[n].space[m].capacity, mem, used);
				check_ptr(c.gen[n].space[m].max_capacity, mem, used);
			}
			if (c.gen[n].present && (c.gen[n].spaces < 0 || c.gen[n].spaces > HP_PD_MAX_SPACES))
				abort();
		}
		for (int i = 0; i < HP_PD_COLLECTORS; i++)
			check_ptr(c.invocations[i], mem, used);
		check_ptr(c.desired_survivor, mem, used);
		if (c.last_cause && (c.last_cause < mem || c.last_cause + 6 > mem + used))
			abort();
		static const enum hp_gc_kind kinds[] = { HP_GC_SERIAL, HP_GC_PARALLEL, HP_GC_G1, HP_GC_Z,
							 HP_GC_SHENANDOAH, HP_GC_EPSILON, HP_GC_CMS, HP_GC_UNKNOWN };
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			struct hp_perfdata_plan plan;
			struct hp_mode_reading r;
			if (hp_perfdata_plan(&c, kinds[k], &plan, err, sizeof(err)) == 0 &&
			    hp_perfdata_compute(&plan, &r) == 0 && (r.used > r.committed || r.committed > r.max))
				abort();        /* compute() promises used <= committed <= max */
		}
	}
	free(mem);
	return 0;
}
