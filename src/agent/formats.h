/* The output formats, described once: each one's name (format=), the
 * extension its files get (format=a+b writes FILE.<ext> for each), and
 * the other extensions the command takes it from (`heapprobe dump x.htm`).
 * The writers are bound to them in snapshot.c (write_format). Data only:
 * the command links it without the writers. Adding a format: the enum, a
 * row here, a writer in snapshot.c, docs/formats.md. */
#ifndef HP_AGENT_FORMATS_H
#define HP_AGENT_FORMATS_H

enum hp_format { HP_FORMAT_PPROF = 0, HP_FORMAT_COLLAPSED, HP_FORMAT_HTML, HP_FORMAT_JFR, HP_FORMAT_TEXT };
#define HP_FORMAT_LAST HP_FORMAT_TEXT

struct hp_format_info {
	const char *name;               /* format=NAME */
	const char *ext;                /* without the dot */
	const char *also[3];            /* other extensions that mean it, NULL-ended */
};

extern const struct hp_format_info hp_formats[HP_FORMAT_LAST + 1];

/* The format FILE's extension names, or -1. */
int hp_format_of_path(const char *file);

/* "pprof|collapsed|html|jfr|text" (sep "|"), for usage and error lines. */
const char *hp_format_names(const char *sep, char *buf, unsigned cap);

#endif
