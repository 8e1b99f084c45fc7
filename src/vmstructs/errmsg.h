/* One-line error reasons: every reader in the project reports why it
 * failed through a caller-supplied buffer (which may be NULL). */
#ifndef HP_ERRMSG_H
#define HP_ERRMSG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static inline void hp_set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline void hp_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* hp_set_err, then return rc: `return hp_fail(err, len, -EINVAL, "...")`. */
static inline int hp_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static inline int hp_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

#endif
