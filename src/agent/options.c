#include "agent/options.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Every option, for the error naming an unknown one (the formats from
 * formats.c). */
static const char *valid_options(char *buf, size_t cap)
{
	char names[96];
	snprintf(buf, cap,
		 "interval=<size>, live[=true|false], min_age=<n>, depth=<n>, file=<path>, "
		 "format=%s[+...], period=<seconds>, max_live=<n>, stacks=cache|verify|jvmti, mark=auto|concurrent|full|off, mark_budget=<percent>, mark_pause=<ms>, "
		 "mark_timeout=<seconds>, "
		 "dump, stop, stop,discard, status, top=<n>, reply=<path>, info, info=exit, "
		 "verify, log=<path>, verbose, upload=<url>, app=<name>, labels=<k=v;k=v>, upload_queue=<n>",
		 hp_format_names("|", names, sizeof(names)));
	return buf;
}

/* "512k", "1m", "100" -> bytes. false on junk, overflow or empty. */
static bool parse_size(const char *s, size_t len, uint64_t *out)
{
	if (len == 0 || len > 24 || !isdigit((unsigned char)s[0]))
		return false;
	char buf[32];
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *end;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 10);
	if (errno)
		return false;
	unsigned shift = 0;
	switch (tolower((unsigned char)*end)) {
	case 'k': shift = 10; end++; break;
	case 'm': shift = 20; end++; break;
	case 'g': shift = 30; end++; break;
	case '\0': break;
	default: return false;
	}
	if (tolower((unsigned char)*end) == 'b')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

/* "2", "2%", "0.5%" -> 0.02, 0.02, 0.005: a percentage from lo to hi. */
static bool parse_percent(const char *s, size_t len, double lo, double hi, double *out)
{
	char buf[16];
	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (buf[len - 1] == '%')
		buf[--len] = '\0';
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)buf[i]) && buf[i] != '.')
			return false;
	char *end;
	double v = strtod(buf, &end);
	if (len == 0 || *end || !(v >= lo && v <= hi))
		return false;
	*out = v / 100;
	return true;
}

static bool parse_uint(const char *s, size_t len, unsigned lo, unsigned hi, unsigned *out)
{
	uint64_t v;
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	if (!parse_size(s, len, &v) || v < lo || v > hi)
		return false;
	*out = (unsigned)v;
	return true;
}

/* One of `names` (NULL-terminated): its index into *out. */
static bool parse_choice(const char *s, size_t len, const char *const *names, int *out)
{
	for (int i = 0; s && names[i]; i++)
		if (strlen(names[i]) == len && !strncmp(s, names[i], len)) {
			*out = i;
			return true;
		}
	return false;
}

static bool parse_bool(const char *s, size_t len, bool *out)
{
	if (!s) {
		*out = true;
		return true;
	}
	if ((len == 4 && !strncmp(s, "true", 4)) || (len == 2 && !strncmp(s, "on", 2)) ||
	    (len == 1 && s[0] == '1') || (len == 3 && !strncmp(s, "yes", 3)))
		*out = true;
	else if ((len == 5 && !strncmp(s, "false", 5)) || (len == 3 && !strncmp(s, "off", 3)) ||
		 (len == 1 && s[0] == '0') || (len == 2 && !strncmp(s, "no", 2)))
		*out = false;
	else
		return false;
	return true;
}

static bool copy_path(char *dst, size_t cap, const char *v, size_t len)
{
	if (!v || len == 0 || len >= cap)
		return false;
	memcpy(dst, v, len);
	dst[len] = '\0';
	return true;
}

int hp_options_parse(const char *spec, struct hp_agent_options *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->interval = 512 * 1024;
	out->live = true;
	out->depth = 64;
	out->max_live = 100000;
	out->min_age = 1;
	out->mark = HP_MARK_AUTO;
	out->mark_budget = HP_MARK_BUDGET_DEFAULT;
	out->mark_timeout = HP_MARK_TIMEOUT_DEFAULT;
	out->format = HP_FORMAT_PPROF;
	out->formats = 1u << HP_FORMAT_PPROF;
	bool any_profiler_option = false, only_reports = false;
	const char *p = spec ? spec : "";
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		size_t nlen = eq ? (size_t)(eq - p) : len;
		const char *v = eq ? eq + 1 : NULL;
		size_t vlen = eq ? len - nlen - 1 : 0;
#define IS(name) (nlen == sizeof(name) - 1 && strncmp(p, name, nlen) == 0)
		bool ok = true, profiler = true;
		const char *range = "";   /* what a good value looks like, for the error */
		if (len == 0) {
			profiler = false;
		} else if (IS("interval")) {
			ok = v && parse_size(v, vlen, &out->interval) && out->interval < (1ull << 31);   /* a jint */
			range = "interval is a size in bytes from 0 (every allocation) to 2147483647, with k, m or g for KiB, MiB, GiB (default 512k)";
		} else if (IS("live")) {
			ok = parse_bool(v, vlen, &out->live);
			range = "live is true or false (also on/off, yes/no, 1/0)";
		} else if (IS("min_age")) {
			ok = v && parse_uint(v, vlen, 0, 1000000, &out->min_age);
			range = "min_age is a number of markings from 0 to 1000000 (default 1)";
		} else if (IS("depth")) {
			ok = v && parse_uint(v, vlen, 1, 1024, &out->depth);  /* 16 KiB of frames on the thread's stack */
			range = "depth is a number of frames from 1 to 1024 (default 64)";
		} else if (IS("file")) {
			ok = copy_path(out->file, sizeof(out->file), v, vlen);
			range = "file is a path of 1 to 511 bytes (%p: the PID, %t: the time)";
		} else if (IS("format")) {
			/* in enum hp_format's order */
			const char *formats[HP_FORMAT_LAST + 2];
			for (int f = 0; f <= HP_FORMAT_LAST; f++)
				formats[f] = hp_formats[f].name;
			formats[HP_FORMAT_LAST + 1] = NULL;
			/* One, or several joined by '+' (each to FILE.<ext>). */
			out->formats = 0;
			ok = v != NULL;
			for (size_t at = 0; ok && at <= vlen;) {
				const char *plus = memchr(v + at, '+', vlen - at);
				size_t flen = plus ? (size_t)(plus - (v + at)) : vlen - at;
				int f;
				if ((ok = parse_choice(v + at, flen, formats, &f))) {
					if (!out->formats)
						out->format = (enum hp_format)f;
					out->formats |= 1u << f;
				}
				at += flen + 1;
			}
			out->format_given = ok;
			static char fr[160];
			char names[96];
			snprintf(fr, sizeof(fr), "format is one of %s, or several joined by + (format=jfr+pprof)",
				 hp_format_names(", ", names, sizeof(names)));
			range = fr;
		} else if (IS("period")) {
			ok = v && parse_uint(v, vlen, 0, 86400 * 365, &out->period);
			range = "period is seconds from 0 (no periodic profile) to 31536000 (a year)";
		} else if (IS("max_live")) {
			ok = v && parse_uint(v, vlen, 16, 100000000, &out->max_live);
			range = "max_live is a number of live samples tracked from 16 to 100000000 (default 100000)";
		} else if (IS("stacks")) {
			/* in enum hp_stacks_mode's order */
			static const char *const modes[] = { "cache", "verify", "jvmti", NULL };
			int m;
			if ((ok = parse_choice(v, vlen, modes, &m)))
				out->stacks = (enum hp_stacks_mode)m;
			range = "stacks is cache, verify or jvmti";
		} else if (IS("mark")) {
			/* in enum hp_mark_policy's order */
			static const char *const policies[] = { "concurrent", "full", "off", "auto", NULL };
			int m;
			if ((ok = parse_choice(v, vlen, policies, &m)))
				out->mark = (enum hp_mark_policy)m;
			range = "mark is auto, concurrent, full or off";
		} else if (IS("mark_budget")) {
			ok = v && parse_percent(v, vlen, 0.1, 50, &out->mark_budget);
			range = "mark_budget is the share of the wall clock periodic profiles may spend in requested markings, "
				"a percentage from 0.1% to 50% (default 2%)";
		} else if (IS("mark_pause")) {
			ok = v && parse_uint(v, vlen, 0, 600000, &out->mark_pause);
			range = "mark_pause is the milliseconds a requested stop-the-world collection may take before "
				"periodic profiles ask for none again, from 0 to 600000 (default 0: no cap)";
		} else if (IS("mark_timeout")) {
			ok = v && parse_uint(v, vlen, 1, 3600, &out->mark_timeout);
			range = "mark_timeout is the seconds a requested marking may take before the profile is written "
				"without it, from 1 to 3600 (default 60)";
		} else if (IS("dump") && !v) {
			out->dump = true;
			profiler = false;
		} else if (IS("stop") && !v) {
			out->stop = true;
			profiler = false;
		} else if (IS("discard") && !v) {
			out->discard = true;
			profiler = false;
		} else if (IS("status") && !v) {
			out->status = true;
			profiler = false;
		} else if (IS("top")) {
			ok = v && parse_uint(v, vlen, 1, 10000, &out->top);
			range = "top is a number of sites from 1 to 10000";
			profiler = false;
		} else if (IS("reply")) {
			ok = copy_path(out->reply, sizeof(out->reply), v, vlen);
			range = "reply is a path of 1 to 511 bytes";
			profiler = false;
		} else if (IS("info") && (!v || (vlen == 4 && !strncmp(v, "exit", 4)))) {
			if (v)
				out->info_at_exit = true;
			else
				out->info = true;
			profiler = false;
			only_reports = true;
		} else if (IS("verify") && !v) {
			out->verify = true;
			profiler = false;
			only_reports = true;
		} else if (IS("upload")) {
			ok = copy_path(out->upload, sizeof(out->upload), v, vlen);
			range = "upload is the server's URL, http:// or https://, at most 511 bytes";
		} else if (IS("upload_queue")) {
			ok = v && parse_uint(v, vlen, 1, 1024, &out->upload_queue);
			range = "upload_queue is a number of periods from 1 to 1024 (default 32)";
		} else if (IS("app")) {
			ok = copy_path(out->app, sizeof(out->app), v, vlen);
			range = "app is a name of 1 to 127 bytes";
		} else if (IS("labels")) {
			ok = copy_path(out->labels, sizeof(out->labels), v, vlen);
			range = "labels is k=v;k=v, at most 255 bytes";
		} else if (IS("verbose") && !v) {
			out->verbose = true;
			profiler = false;
		} else if (IS("log")) {
			ok = copy_path(out->log, sizeof(out->log), v, vlen);
			range = "log is a path of 1 to 255 bytes";
			profiler = false;
		} else {
			char vo[640];
			snprintf(err, errlen, "heapprobe: unknown or malformed option '%.*s'; valid options: %s",
				 (int)len, p, valid_options(vo, sizeof(vo)));
			return -EINVAL;
		}
#undef IS
		if (!ok) {
			if (range[0])
				snprintf(err, errlen, "heapprobe: bad value in option '%.*s': %s", (int)len, p, range);
			else {
				char vo[640];
				snprintf(err, errlen, "heapprobe: bad value in option '%.*s'; valid options: %s", (int)len, p,
					 valid_options(vo, sizeof(vo)));
			}
			return -EINVAL;
		}
		any_profiler_option |= profiler;
		if (!end)
			break;
		p = end + 1;
	}
	/* `info` or `verify` alone only report; a command only commands;
	 * anything else profiles. dump and stop take file= and format= for
	 * their one write, which does not make them a start. */
	bool command = out->dump || out->stop || out->status || out->top;
	if (command && (out->dump || out->stop))
		any_profiler_option = false;
	out->profile = any_profiler_option || (!only_reports && !command);
	if ((out->dump + out->stop + out->status + (out->top > 0)) > 1) {
		snprintf(err, errlen, "heapprobe: 'dump', 'stop', 'status' and 'top' go in separate commands ('stop' also dumps)");
		return -EINVAL;
	}
	if (out->discard && !out->stop) {
		snprintf(err, errlen, "heapprobe: 'discard' goes with 'stop' (stop without a last profile)");
		return -EINVAL;
	}
	if (out->profile && command) {
		snprintf(err, errlen, "heapprobe: 'status' and 'top' take no profiler options (only reply= and log=)");
		return -EINVAL;
	}
	return 0;
}

const char *hp_format_extension(enum hp_format f)
{
	return f >= 0 && f <= HP_FORMAT_LAST ? hp_formats[f].ext : hp_formats[HP_FORMAT_PPROF].ext;
}

void hp_options_output_path(const struct hp_agent_options *o, char *out, size_t cap)
{
	hp_options_output_path_seq(o, 0, out, cap);
}

void hp_options_output_path_seq(const struct hp_agent_options *o, unsigned seq, char *out, size_t cap)
{
	char def[64];
	const char *pattern = o->file;
	if (!pattern[0]) {
		if (o->formats & (o->formats - 1))     /* several: each adds its extension */
			snprintf(def, sizeof(def), "heapprobe-%%p");
		else
			snprintf(def, sizeof(def), "heapprobe-%%p.%s", hp_format_extension(o->format));
		pattern = def;
	}
	size_t n = 0;
	for (const char *s = pattern; *s && n + 1 < cap; s++) {
		if (s[0] == '%' && (s[1] == 'p' || s[1] == 't')) {
			char tmp[32];
			if (s[1] == 'p') {
				snprintf(tmp, sizeof(tmp), "%d", (int)getpid());
			} else {
				time_t t = time(NULL);
				struct tm tm;
				localtime_r(&t, &tm);
				size_t l = strftime(tmp, sizeof(tmp), "%Y%m%d-%H%M%S", &tm);
				if (seq)
					snprintf(tmp + l, sizeof(tmp) - l, "_%u", seq);
			}
			int w = snprintf(out + n, cap - n, "%s", tmp);
			n += w > 0 ? (size_t)w : 0;
			if (n >= cap)
				n = cap - 1;
			s++;
		} else {
			out[n++] = *s;
		}
	}
	out[n] = '\0';
}

static __thread FILE *reply_out;

void hp_log_set_reply(FILE *f)
{
	reply_out = f;
}

FILE *hp_log_open(const struct hp_agent_options *o)
{
	if (reply_out)
		return reply_out;
	if (!o->log[0])
		return stderr;
	FILE *f = fopen(o->log, "a");
	if (!f) {
		fprintf(stderr, "heapprobe: cannot open log %s: %s; writing to stderr\n", o->log, strerror(errno));
		return stderr;
	}
	return f;
}

void hp_log_close(FILE *f)
{
	if (f == reply_out) {
		fflush(f);
		return;
	}
	if (f && f != stderr)
		fclose(f);
}
