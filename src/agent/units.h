/* Byte sizes for people: one formatter for the text profile, the HTML
 * page and `heapprobe top` (header-only: the command links no agent code
 * for it). Binary units; one decimal unless the value is whole ("512 KiB",
 * "190.3 MiB", "1023 B"). */
#ifndef HP_UNITS_H
#define HP_UNITS_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>

static inline const char *hp_bytes_str(double b, char *buf, size_t cap)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	unsigned i = 0;
	while (fabs(b) >= 1024 && i + 1 < sizeof(unit) / sizeof(unit[0])) {
		b /= 1024;
		i++;
	}
	snprintf(buf, cap, i == 0 || b == trunc(b) ? "%.0f %s" : "%.1f %s", b, unit[i]);
	return buf;
}

#endif
