/* Mode "last-gc-fields" (lastgc.c): the heap's own record of its size
 * after the last collection. */
#ifndef HP_LASTGC_H
#define HP_LASTGC_H

#include <stdbool.h>

struct hp_probe;

/* Whether a collection (whole-heap or not) refreshes the last-GC fields on
 * this collector; false when the mode is not set up. */
bool hp_lastgc_refreshed_by(struct hp_probe *p, bool full_gc);

#endif
