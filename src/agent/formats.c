/* The output formats' names and extensions (formats.h). */
#include "agent/formats.h"

#include <stdio.h>
#include <string.h>

const struct hp_format_info hp_formats[HP_FORMAT_LAST + 1] = {
	[HP_FORMAT_PPROF] = { "pprof", "pb.gz", { "pprof", "pb", NULL } },
	[HP_FORMAT_COLLAPSED] = { "collapsed", "collapsed", { NULL } },
	[HP_FORMAT_HTML] = { "html", "html", { "htm", NULL } },
	[HP_FORMAT_JFR] = { "jfr", "jfr", { NULL } },
	[HP_FORMAT_TEXT] = { "text", "txt", { NULL } },
};

static int ends_with_ext(const char *file, const char *ext)
{
	size_t fl = strlen(file), el = strlen(ext);
	return fl > el + 1 && file[fl - el - 1] == '.' && !strcmp(file + fl - el, ext);
}

int hp_format_of_path(const char *file)
{
	for (int f = 0; f <= HP_FORMAT_LAST; f++) {
		if (ends_with_ext(file, hp_formats[f].ext))
			return f;
		for (int i = 0; hp_formats[f].also[i]; i++)
			if (ends_with_ext(file, hp_formats[f].also[i]))
				return f;
	}
	return -1;
}

const char *hp_format_names(const char *sep, char *buf, unsigned cap)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int f = 0; f <= HP_FORMAT_LAST && n < cap; f++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", f ? sep : "", hp_formats[f].name);
	return buf;
}
