#include "agent/options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char valid_options[] = "info, info=exit, verify, log=<path>";

int hp_options_parse(const char *spec, struct hp_agent_options *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (!spec)
		return 0;
	const char *p = spec;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		size_t name_len = eq ? (size_t)(eq - p) : len;
		const char *value = eq ? eq + 1 : NULL;
		size_t value_len = eq ? len - name_len - 1 : 0;

		if (len == 0) {
			/* tolerate "info," and ",," */
		} else if (name_len == 4 && strncmp(p, "info", 4) == 0 && !value) {
			out->info = true;
		} else if (name_len == 4 && strncmp(p, "info", 4) == 0 && value_len == 4 &&
			   strncmp(value, "exit", 4) == 0) {
			out->info_at_exit = true;
		} else if (name_len == 6 && strncmp(p, "verify", 6) == 0 && !value) {
			out->verify = true;
		} else if (name_len == 3 && strncmp(p, "log", 3) == 0 && value) {
			if (value_len == 0 || value_len >= sizeof(out->log)) {
				snprintf(err, errlen, "heapprobe: option log needs a path shorter than %zu bytes",
					 sizeof(out->log));
				return -EINVAL;
			}
			memcpy(out->log, value, value_len);
			out->log[value_len] = '\0';
		} else {
			snprintf(err, errlen, "heapprobe: unknown or malformed option '%.*s'; valid options: %s",
				 (int)len, p, valid_options);
			return -EINVAL;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}
