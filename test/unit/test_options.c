/* The agent's options (src/agent/options.c) without a JVM: defaults, each
 * option's values at and past its range, sizes, several formats, commands
 * and what may not go together, and the output path's %p and %t. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/options.h"

static struct hp_agent_options parse_ok(const char *spec)
{
	struct hp_agent_options o;
	char err[512] = "";
	cr_assert_eq(hp_options_parse(spec, &o, err, sizeof(err)), 0, "'%s': %s", spec ? spec : "(null)", err);
	return o;
}

/* A bad spec: -EINVAL and a message holding `want`. */
static void parse_bad(const char *spec, const char *want)
{
	struct hp_agent_options o;
	char err[512] = "";
	cr_expect_eq(hp_options_parse(spec, &o, err, sizeof(err)), -EINVAL, "'%s' accepted", spec);
	cr_expect(strstr(err, want), "'%s': message '%s' lacks '%s'", spec, err, want);
}

Test(options, defaults_profile_to_pprof)
{
	struct hp_agent_options o = parse_ok(NULL);
	cr_expect(o.profile);
	cr_expect_eq(o.interval, 512 * 1024);
	cr_expect(o.live);
	cr_expect_eq(o.min_age, 1);
	cr_expect_eq(o.depth, 64);
	cr_expect_eq(o.format, HP_FORMAT_PPROF);
	cr_expect_eq(o.formats, 1u << HP_FORMAT_PPROF);
	cr_expect_eq(o.max_live, 100000);
	cr_expect_eq(o.stacks, HP_STACKS_CACHE);
	cr_expect_eq(o.mark, HP_MARK_AUTO);
	cr_expect(!o.dump && !o.stop && !o.status && !o.info && o.top == 0);
	struct hp_agent_options e = parse_ok("");
	cr_expect(e.profile && e.interval == o.interval);
}

Test(options, sizes_take_k_m_g_and_stop_below_2_gib)
{
	cr_expect_eq(parse_ok("interval=0").interval, 0);
	cr_expect_eq(parse_ok("interval=4k").interval, 4096);
	cr_expect_eq(parse_ok("interval=3m").interval, 3u << 20);
	cr_expect_eq(parse_ok("interval=1g").interval, 1u << 30);
	cr_expect_eq(parse_ok("interval=2147483647").interval, 2147483647u);
	parse_bad("interval=2g", "interval is a size in bytes from 0");
	parse_bad("interval=2147483648", "interval=2147483648");
	parse_bad("interval=-1", "bad value in option 'interval=-1'");
	parse_bad("interval=12q", "interval=12q");
	parse_bad("interval", "interval");
}

Test(options, numbers_at_and_past_their_ranges)
{
	cr_expect_eq(parse_ok("depth=1").depth, 1);
	cr_expect_eq(parse_ok("depth=1024").depth, 1024);
	parse_bad("depth=0", "depth is a number of frames from 1 to 1024");
	parse_bad("depth=1025", "depth=1025");
	cr_expect_eq(parse_ok("max_live=16").max_live, 16);
	parse_bad("max_live=15", "max_live is a number of live samples tracked from 16 to");
	cr_expect_eq(parse_ok("min_age=0").min_age, 0);
	parse_bad("min_age=1000001", "min_age");
	cr_expect_eq(parse_ok("period=31536000").period, 31536000);
	parse_bad("period=31536001", "period is seconds");
	cr_expect_eq(parse_ok("top=1").top, 1);
	parse_bad("top=0", "top is a number of sites from 1 to 10000");
}

Test(options, choices_and_booleans)
{
	cr_expect(!parse_ok("live=false").live);
	cr_expect(!parse_ok("live=off").live);
	cr_expect(parse_ok("live=yes").live);
	parse_bad("live=maybe", "live is true or false");
	cr_expect_eq(parse_ok("stacks=verify").stacks, HP_STACKS_VERIFY);
	cr_expect_eq(parse_ok("stacks=jvmti").stacks, HP_STACKS_JVMTI);
	parse_bad("stacks=fast", "stacks is cache, verify or jvmti");
	cr_expect_eq(parse_ok("mark=auto").mark, HP_MARK_AUTO);
	cr_expect_eq(parse_ok("mark=concurrent").mark, HP_MARK_CONCURRENT);
	cr_expect_eq(parse_ok("mark=full").mark, HP_MARK_FULL);
	cr_expect_eq(parse_ok("mark=off").mark, HP_MARK_OFF);
	parse_bad("mark=sometimes", "mark is auto, concurrent, full or off");
	cr_expect_float_eq(parse_ok(NULL).mark_budget, 0.02, 1e-12);
	cr_expect_float_eq(parse_ok("mark_budget=10%").mark_budget, 0.10, 1e-12);
	cr_expect_float_eq(parse_ok("mark_budget=0.5").mark_budget, 0.005, 1e-12);
	cr_expect_float_eq(parse_ok("mark_budget=50%").mark_budget, 0.50, 1e-12);
	parse_bad("mark_budget=51%", "mark_budget is the share of the wall clock");
	parse_bad("mark_budget=0.05", "a percentage from 0.1% to 50%");
	parse_bad("mark_budget=-1", "mark_budget is");
	parse_bad("mark_budget=2%%", "mark_budget is");
	parse_bad("mark_budget=1e1", "mark_budget is");
	parse_bad("mark_budget=", "mark_budget is");
	cr_expect_eq(parse_ok(NULL).mark_pause, 0u);
	cr_expect_eq(parse_ok("mark_pause=250").mark_pause, 250u);
	cr_expect_eq(parse_ok("mark_pause=0").mark_pause, 0u);
	parse_bad("mark_pause=600001", "mark_pause is the milliseconds");
	parse_bad("mark_pause=-5", "from 0 to 600000 (default 0: no cap)");
	parse_bad("mark_pause=250ms", "mark_pause is");
	parse_bad("mark_pause", "mark_pause is");
	parse_bad("mark_budget", "mark_budget is");
	cr_expect_eq(parse_ok(NULL).mark_timeout, 60);
	cr_expect_eq(parse_ok("mark_timeout=1").mark_timeout, 1);
	cr_expect_eq(parse_ok("mark_timeout=3600").mark_timeout, 3600);
	parse_bad("mark_timeout=0", "mark_timeout is the seconds a requested marking may take");
	parse_bad("mark_timeout=3601", "from 1 to 3600 (default 60)");
	parse_bad("mark_timeout=2s", "mark_timeout is");
	parse_bad("mark_timeout=", "mark_timeout is");
	/* verbose: a flag, off by default; it does not start profiling alone
	 * any more than log= does, and takes no value. */
	cr_expect(!parse_ok(NULL).verbose);
	struct hp_agent_options v = parse_ok("verbose,interval=64k");
	cr_expect(v.verbose && v.profile);
	parse_bad("verbose=yes", "unknown or malformed option 'verbose=yes'");
}

Test(options, formats_one_or_several)
{
	struct hp_agent_options o = parse_ok("format=collapsed");
	cr_expect_eq(o.format, HP_FORMAT_COLLAPSED);
	cr_expect_eq(o.formats, 1u << HP_FORMAT_COLLAPSED);
	cr_expect(o.format_given);
	o = parse_ok("format=jfr+pprof+text");
	cr_expect_eq(o.format, HP_FORMAT_JFR, "the first named leads");
	cr_expect_eq(o.formats, (1u << HP_FORMAT_JFR) | (1u << HP_FORMAT_PPROF) | (1u << HP_FORMAT_TEXT));
	parse_bad("format=svg", "format is one of pprof, collapsed, html, jfr, text");
	parse_bad("format=jfr+", "format=jfr+");
	parse_bad("format=", "format=");
}

Test(options, unknown_options_name_themselves_and_list_the_valid)
{
	parse_bad("intervall=4k", "unknown or malformed option 'intervall=4k'; valid options: interval=<size>, ");
	parse_bad("interval=4k,bogus", "'bogus'");
}

Test(options, reports_alone_do_not_profile)
{
	struct hp_agent_options o = parse_ok("info");
	cr_expect(o.info && !o.profile);
	o = parse_ok("info=exit");
	cr_expect(o.info_at_exit && !o.info && !o.profile);
	o = parse_ok("verify");
	cr_expect(o.verify && !o.profile);
	o = parse_ok("info,interval=64k");
	cr_expect(o.info && o.profile && o.interval == 65536, "a profiler option with info profiles");
	parse_bad("info=later", "info=later");
}

Test(options, commands_and_what_may_not_go_with_them)
{
	struct hp_agent_options o = parse_ok("dump,file=/tmp/x.html,format=html");
	cr_expect(o.dump && !o.profile, "dump's file= and format= are its write's, not a start");
	cr_expect_str_eq(o.file, "/tmp/x.html");
	o = parse_ok("stop,discard");
	cr_expect(o.stop && o.discard && !o.profile);
	o = parse_ok("status,reply=/tmp/r");
	cr_expect(o.status && !o.profile);
	cr_expect_str_eq(o.reply, "/tmp/r");
	parse_bad("dump,stop", "'dump', 'stop', 'status' and 'top' go in separate commands");
	parse_bad("status,top=5", "separate commands");
	parse_bad("discard", "'discard' goes with 'stop'");
	parse_bad("status,interval=64k", "'status' and 'top' take no profiler options");
	parse_bad("top=3,depth=8", "take no profiler options");
}

Test(options, paths_have_a_length_limit)
{
	char spec[700];
	memset(spec, 'a', sizeof(spec));
	memcpy(spec, "file=/", 6);
	spec[5 + 512] = '\0';       /* "/" and 511 more bytes: 512 */
	parse_bad(spec, "bad value in option 'file=/aaaa");    /* the rest cut at the message's size */
	spec[5 + 511] = '\0';
	cr_expect_eq(strlen(parse_ok(spec).file), 511);
	parse_bad("file=", "file is a path");
}

Test(options, output_path_expands_pid_and_time_and_defaults_by_format)
{
	struct hp_agent_options o = parse_ok("file=/tmp/heap-%p.pb.gz");
	char path[600], want[600];
	hp_options_output_path(&o, path, sizeof(path));
	snprintf(want, sizeof(want), "/tmp/heap-%d.pb.gz", (int)getpid());
	cr_expect_str_eq(path, want);
	o = parse_ok("file=/tmp/h-%t.txt");
	hp_options_output_path(&o, path, sizeof(path));
	int y, mo, d, h, mi, s;
	cr_expect_eq(sscanf(path, "/tmp/h-%4d%2d%2d-%2d%2d%2d.txt", &y, &mo, &d, &h, &mi, &s), 6, "%s", path);
	/* A second profile in the same second: _N after the time, not the
	 * same name (snapshot.c), sorting after the first; %p is not numbered. */
	o = parse_ok("file=/tmp/h-%p-%t.txt");
	hp_options_output_path_seq(&o, 2, path, sizeof(path));
	int pid, n;
	cr_expect_eq(sscanf(path, "/tmp/h-%d-%4d%2d%2d-%2d%2d%2d_%d.txt", &pid, &y, &mo, &d, &h, &mi, &s, &n), 8, "%s",
		     path);
	cr_expect_eq(pid, (int)getpid(), "%s", path);
	cr_expect_eq(n, 2, "%s", path);
	char second[600];
	snprintf(second, sizeof(second), "%s", path);
	hp_options_output_path_seq(&o, 0, path, sizeof(path));
	cr_expect(strchr(path, '_') == NULL, "%s", path);
	if (strncmp(path, second, strlen(path) - 4) == 0)       /* the same second */
		cr_expect(strcmp(path, second) < 0, "sorted by name, %s after %s", second, path);
	o = parse_ok("format=html");
	hp_options_output_path(&o, path, sizeof(path));
	snprintf(want, sizeof(want), "heapprobe-%d.html", (int)getpid());
	cr_expect_str_eq(path, want);
	o = parse_ok("format=jfr+pprof");
	hp_options_output_path(&o, path, sizeof(path));
	snprintf(want, sizeof(want), "heapprobe-%d", (int)getpid());
	cr_expect_str_eq(path, want, "several formats: each adds its own extension");
	/* A small buffer is cut, never overrun. */
	o = parse_ok("file=/a/very/long/path/%p/%p/%p");
	char small[12];
	hp_options_output_path(&o, small, sizeof(small));
	cr_expect_eq(strlen(small), sizeof(small) - 1);
}

/* The command's format from a file name, from the same table the agent
 * parses format= with (formats.c). */
Test(options, format_of_a_file_name)
{
	cr_expect_eq(hp_format_of_path("p.pb.gz"), HP_FORMAT_PPROF);
	cr_expect_eq(hp_format_of_path("p.pprof"), HP_FORMAT_PPROF);
	cr_expect_eq(hp_format_of_path("dir.d/p.pb"), HP_FORMAT_PPROF);
	cr_expect_eq(hp_format_of_path("p.htm"), HP_FORMAT_HTML);
	cr_expect_eq(hp_format_of_path("p.html"), HP_FORMAT_HTML);
	cr_expect_eq(hp_format_of_path("p.jfr"), HP_FORMAT_JFR);
	cr_expect_eq(hp_format_of_path("p.collapsed"), HP_FORMAT_COLLAPSED);
	cr_expect_eq(hp_format_of_path("p.txt"), HP_FORMAT_TEXT);
	cr_expect_eq(hp_format_of_path("p.gz"), -1);
	cr_expect_eq(hp_format_of_path("ptxt"), -1);
	cr_expect_eq(hp_format_of_path(".txt"), -1);
	for (int f = 0; f <= HP_FORMAT_LAST; f++) {
		char name[64];
		snprintf(name, sizeof(name), "x.%s", hp_format_extension((enum hp_format)f));
		cr_expect_eq(hp_format_of_path(name), f, "%s", name);
	}
}
