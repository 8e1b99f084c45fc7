/* Agent option string: comma-separated name[=value]. */
#ifndef HP_OPTIONS_H
#define HP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

struct hp_agent_options {
	bool info;                  /* print the info report at VM start */
	bool info_at_exit;          /* info=exit: print it at VM death instead */
	bool verify;                /* check the layout data against DWARF */
	char log[256];              /* where messages and info go; "" = stderr */
};

/* Parses `spec` (NULL or "" = defaults). On error returns -EINVAL with a
 * one-line message naming the bad option and listing the valid ones. */
int hp_options_parse(const char *spec, struct hp_agent_options *out, char *err, size_t errlen);

#endif
