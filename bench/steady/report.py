#!/usr/bin/env python3
"""docs/steady-state.md from bench/steady/run.sh's CSV: medians [min..max]."""
import csv, statistics, sys
from collections import defaultdict

raw, start, command = sys.argv[1:4]
rows = list(csv.DictReader(open(raw)))
by = defaultdict(list)
order = []
for r in rows:
    k = (r["config"], r["jdk"])
    if k not in order:
        order.append(k)
    by[k + (r["lib"],)].append(r)

def f(r, k):
    return float(r[k])

def stat(vals, pct=True, digits=1):
    if not vals:
        return "n/a"
    m, lo, hi = statistics.median(vals), min(vals), max(vals)
    if pct:
        return f"{m*100:+.{digits}f}% [{lo*100:+.{digits}f}..{hi*100:+.{digits}f}]"
    return f"{m:.0f} [{lo:.0f}..{hi:.0f}]"

def keep_err(r):
    truth = f(r, "keep_since_attach") if r["config"].endswith("attach") else f(r, "truth_keep")
    return f(r, "est_keep") / truth - 1 if truth > 0 else float("nan")

def total_err(r):
    if r["config"].endswith("attach"):
        return None     # the walk holds the live set built before the attach, never sampled
    return f(r, "est_total") / f(r, "walk_total") - 1

def garbage_pct(r):
    t = f(r, "est_total")
    return (f(r, "est_midlife") + f(r, "est_garbage")) / t if t > 0 else float("nan")

def recent_pct(r):
    if f(r, "recent") < 0:
        return None
    t = f(r, "est_total") + f(r, "recent")
    return f(r, "recent") / t if t > 0 else None

out = []
p = out.append
p("# The live view in a service in steady state")
p("")
p(f"Run of {start}. Command: `{command}`.")
p("")
p("Workload: test/java/SteadyState.java — a live set of ~512 MiB of `long[]` (site `SteadyState.keep`) "
  "turning over all the time, `byte[]` that live through a few young collections and die "
  "(`SteadyState.midlife`), short-lived `byte[]` (`SteadyState.garbage`), no `System.gc()`; "
  "-Xmx2g, default agent options (interval 512k) unless the config says otherwise. After the churn the "
  "program goes idle; `jcmd JVMTI.agent_load libheapprobe.so dump` asks for the profile, then "
  "`jcmd GC.class_histogram` walks the heap. Truth: the program's own construction for its site "
  "(the walk's `long[]` bytes match it to within the JDK's own few KiB), the walk's total for the "
  "profile's total. `new` = this build, `old` = the build named in the command (before the live view "
  "was verified by marking), same run, interleaved.")
p("")
p("Columns, median [min..max] over the repetitions: **keep** = live estimate of `SteadyState.keep` vs "
  "construction; **total** = the profile's live total vs the heap walk's total (everything the walk "
  "found, the JDK's start-up objects included, which were never sampled); **garbage** = live bytes "
  "shown at the garbage-only sites as % of the profile's live total; **recent** = bytes the profile "
  "reports as not yet verified by a marking, % of verified + recent; **dump ms** = wall time of the "
  "`jcmd ... dump` (JVM attach, the marking asked for, the write; on a shared machine, not a cost "
  "measurement: see the marking-cost section).")
p("")
p("| config | JDK | n | keep (new) | total (new) | garbage (new) | recent (new) | dump ms (new) | n | keep (old) | total (old) | garbage (old) |")
p("|---|---|---|---|---|---|---|---|---|---|---|---|")
for (cfg, jdk) in order:
    new, old = by.get((cfg, jdk, "new"), []), by.get((cfg, jdk, "old"), [])
    def cols(rs, with_recent):
        if not rs:
            return ["0", "", "", ""] + (["", ""] if with_recent else [])
        tot = [x for x in (total_err(r) for r in rs) if x is not None]
        c = [str(len(rs)), stat([keep_err(r) for r in rs]), stat(tot) if tot else "n/a (attach)",
             stat([garbage_pct(r) for r in rs], digits=2)]
        if with_recent:
            rec = [x for x in (recent_pct(r) for r in rs) if x is not None]
            c += [stat(rec, digits=2), stat([f(r, "dump_ms") for r in rs], pct=False)]
        return c
    p("| " + " | ".join([cfg, jdk] + cols(new, True) + cols(old, False)) + " |")
p("")
hum = by.get(("g1-2m-humongous", "17", "new"), [])
if hum:
    p("Humongous objects (g1-2m-humongous, 48 arrays of 1.1-1.9 MiB in 2 MiB regions): estimate vs construction "
      + stat([f(r, "est_huge") / f(r, "huge_truth") - 1 for r in hum if f(r, "huge_truth") > 0])
      + (" (old: " + stat([f(r, "est_huge") / f(r, "huge_truth") - 1 for r in by.get(("g1-2m-humongous", "17", "old"), [])
                          if f(r, "huge_truth") > 0]) + ")" if by.get(("g1-2m-humongous", "17", "old")) else "") + ".")
    p("")
att = by.get(("g1-attach", "17", "new"), [])
if att:
    p("Dynamic attach (g1-attach): the agent is loaded after the program built its live set; the view covers "
      "what was allocated since (keep = vs the arrays allocated after the attach); the profile states the heap "
      f"in use at the attach: median {statistics.median(f(r, 'baseline') for r in att)/2**20:.0f} MiB.")
    p("")
p("How to read it. `new` reports, per site, the Horvitz-Thompson sum over the samples a marking has found "
  "alive (the agent asks for a concurrent marking before the profile; on Serial/Parallel, which have none, "
  "the default `mark=auto` and `mark=full` ask for a full GC), and the samples no marking has looked at yet at their site's "
  "survival by age, learnt from the markings (the estimate between markings; the recent column: the bytes "
  "no marking has looked at, of the view). Its sampling error on ~512 MiB of ~1 KiB objects at 512k is "
  "sqrt(512 KiB / 512 MiB) = 3.1% per run, so single runs spread by several %, medians by less; there is no "
  "bias to wait out. Where the marking found the live bytes itself (ZGC single-generation, JDK 11/17/21; "
  "not a full GC's used, which keeps dead objects as fillers) the view is scaled to them less half the never-sampled start-up heap "
  "(a worst-case bias of ~0.5% here), which takes the sampling error out of the total: those rows spread "
  "far less. `old` scaled the samples that had survived one collection to the heap's `used` after the "
  "last collection, less the heap in use when sampling began; where it is far off, that is what scaling to a "
  "figure that is not live object bytes costs (old garbage after young pauses, garbage in ZGC pages not "
  "relocated, whole humongous regions, and pauses of a concurrent cycle taken for collections on "
  "Shenandoah). `parallel` and `serial` with `mark=concurrent`: no marking can be asked for; what was "
  "promoted since the collector's last full GC counts at its site's survival by age, learnt from those "
  "full GCs (the recent column), so `keep` holds where it was 30-40% low before that estimate. What it "
  "cannot see is a death without allocation: the midlife ring, emptied when the program goes idle, is dead "
  "at the profile but young on the allocation clock (objects die as the program allocates, and it has "
  "stopped), so those rows count part of it alive (the garbage column) until a full GC looks; the profile "
  "states that part as estimated.")
p("")
p("## Under load")
p("")
p("The figures above are profiles written while the program is idle. Profiles written while a service works "
  "(test/java/LoadService.java at full load, no System.gc(), every periodic profile against the cache by "
  "construction, and the exit profile after the caches died), by `bash bench/load/run.sh`, all gathered in "
  "docs/RESULTS.md: every collector on JDK 11, 17, 21, 25 at the default 512k (docs/load-releases.md) and at "
  "64k (docs/load-64k.md); a live set growing and dropped at a known rate (docs/load-grow.md); heapprobe "
  "beside `heapprobe top`, async-profiler 4.6 `live` (loop=4s) and ddprof 1.22's live heap "
  "(memory=INTERVAL:al:1.0, dumped every 4 s), all at the same interval (docs/load-peers.md: "
  "`PEERS=\"async ddprof\" TOP=1 bash bench/load/run.sh`); leak suspects without period= "
  "(docs/load-suspects.md, docs/load-suspects-releases.md, `bash bench/load/suspects.sh`); and what the "
  "view costs there (docs/load-cost.md).")
p("")
print("\n".join(out))
