/* Generational ZGC's live bytes at mark end, per generation: what
 * ZStatHeap::live_at_mark_end() returns for ZGeneration::young() and
 * ZGeneration::old() (zGeneration.hpp, zStat.hpp; JDK 21+). */
#ifndef HP_ZSTAT_H
#define HP_ZSTAT_H

#include <stddef.h>
#include <stdint.h>

struct hp_probe;

/* Where each generation keeps the live bytes its last marking found:
 * ZGeneration::_young / _old (symbols/ symbol.z_generation_young, _old),
 * each object's vptr checked to be its class's vtable, plus
 * ZGeneration::_stat_heap and ZStatHeap's live-at-mark-end member (symbols/
 * field.ZGeneration._stat_heap.<arch>, field.ZStatHeap.live_at_mark_end.<arch>:
 * the layouts differ between x86_64 and aarch64), each offset checked
 * against the machine code that uses it (ZGeneration::at_collection_start
 * passing &_stat_heap to ZStatHeap::at_collection_start; the getter
 * ZStatHeap::live_at_mark_end() loading it). 0 with both addresses set,
 * else a negative errno and why. Not from a GC callback. */
int hp_zgen_live_locate(struct hp_probe *p, const volatile uint64_t **young, const volatile uint64_t **old,
			char *why, size_t len);

#endif
