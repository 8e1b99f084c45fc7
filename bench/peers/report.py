#!/usr/bin/env python3
"""Turns one bench/peers/run.sh run into docs/BENCHMARKS.md and docs/bench-raw/.

usage: report.py RUN_DIR RAW_DIR OUT_MD ROOT

Statistics (plain Python, no numpy): medians with min-max; for overhead, the
ratio median(agent)/median(none) - 1 with a 95% percentile-bootstrap interval
(2000 resamples of each group, fixed seed); order-statistic 95% interval
for single medians where n allows it.
"""
import csv
import os
import random
import re
import shutil
import statistics as st
import sys
from collections import defaultdict

RUN, RAW, OUT, ROOT = sys.argv[1:5]
os.makedirs(RAW, exist_ok=True)

LABEL = {
    "none": "no agent",
    "empty": "empty SampledObjectAlloc callback",
    "heapprobe": "**heapprobe** (live on)",
    "async-alloc": "async-profiler alloc",
    "async-live": "async-profiler alloc,live",
    "heapprobe-full": "heapprobe mark=full",
    "ddprof-live": "Datadog ddprof memory (alloc+live)",
    "jfr-profile": "JFR settings=profile",
}
WORKLOAD = {
    "allocbench": "AllocBench (4 threads x 3M mixed allocations, ~11.6 GB allocated)",
    "javac": "javac: {javac_module} module sources from openjdk-17-source",
    "h2": "H2 2.2.224 in-memory SQL (30k orders, 1.5k customers, 40 query rounds)",
}


def label(c):
    base, _, iv = c.partition("@")
    return LABEL.get(base, base) + (f" @{iv}" if iv else "")


def interval(c):
    iv = c.partition("@")[2]
    if not iv:
        return None
    m = {"k": 1024, "m": 1 << 20, "g": 1 << 30}
    return int(iv[:-1]) * m[iv[-1]] if iv[-1] in m else int(iv)


def peers_behind(table, c, worse):
    """What heapprobe config c (NAME@iv) is behind on against each live-heap
    peer at the same interval and JFR, from table (config -> measures):
    worse(h, p, peer) gives the items for one peer (a config name)."""
    h, iv = table[c], c.partition("@")[2]
    out = []
    for peer in (f"async-live@{iv}", f"ddprof-live@{iv}", "jfr-profile"):
        if table.get(peer):
            out += worse(h, table[peer], peer)
    return out

def med(xs):
    return st.median(xs) if xs else float("nan")


def spread(xs, fmt="{:.2f}"):
    if not xs:
        return "—"
    return (fmt + " [" + fmt + "–" + fmt + "]").format(med(xs), min(xs), max(xs))


def boot_ratio(a, b, n=2000, seed=1):
    """95% bootstrap CI of median(a)/median(b) - 1 (in %)."""
    rnd = random.Random(seed)
    if len(a) < 2 or len(b) < 2:
        return None
    rs = []
    for _ in range(n):
        ra = [rnd.choice(a) for _ in a]
        rb = [rnd.choice(b) for _ in b]
        rs.append((med(ra) / med(rb) - 1) * 100)
    rs.sort()
    return rs[int(0.025 * n)], rs[int(0.975 * n) - 1]


def pct(x):
    return f"{x:+.1f}%"


# ---------------------------------------------------------------- inputs
machine = {}
for line in open(os.path.join(RUN, "machine.txt")):
    k, _, v = line.rstrip("\n").partition(": ")
    machine[k] = v
SECTIONS = machine.get("sections", "overhead startup accuracy usage").split()
rows = list(csv.DictReader(open(os.path.join(RUN, "overhead.csv"))))
commands = open(os.path.join(RUN, "commands.txt")).read().splitlines()
usage = open(os.path.join(RUN, "usagebench.md")).read().strip() if "usage" in SECTIONS and os.path.exists(
    os.path.join(RUN, "usagebench.md")) else ""
configs = machine["configs"].split()
ACC_TXT = os.path.join(RUN, "accuracy.txt")

data = defaultdict(lambda: defaultdict(list))   # (measure, workload, config) -> field -> values
failures = defaultdict(int)
for r in rows:
    key = (r["measure"], r["workload"], r["config"])
    if r["rc"] != "0":
        failures[key] += 1
        continue
    d = data[key]
    d["wall"].append(float(r["wall_s"]))
    d["cpu"].append(float(r["user_s"]) + float(r["sys_s"]))
    d["rss"].append(int(r["maxrss_kb"]) / 1024.0)
    if r["samples"]:
        d["samples"].append(int(r["samples"]))
    if r["alloc_bytes"]:
        d["alloc"].append(int(r["alloc_bytes"]))

# ---------------------------------------------------------------- accuracy
SITES = ["keepBytes", "keepLongs", "makeGarbage", "other"]


def site_of(stack):
    if "RetainedSet.main" not in stack:
        return None
    for s in SITES[:3]:
        if "RetainedSet." + s in stack:
            return s
    return "other"


def steady_site(frames):
    """keep / midlife / garbage / other for a root-first frame list of SteadyState (the leaf code frame)."""
    frames = [f.replace("/", ".") for f in frames if f]
    if frames and re.search(r"_\[[ik]\]$", frames[-1]):
        frames = frames[:-1]
    leaf = frames[-1] if frames else ""
    for s in ("keep", "midlife", "garbage"):
        if leaf == "SteadyState." + s:
            return s
    return "other"


# ClassMix (bench/peers/ClassMix.java): only stacks through ClassMix.build (its two worker threads) are
# scored; the site is the ClassMix method build() called, the class the leaf "Class_[i]" frame.
CM_SITES = ["build", "keepBytes", "keepLongs", "keepStrings", "keepMaps", "keepPoints", "makeGarbage"]
CM_THRESHOLD = 64 * 1024     # classes whose heap-walk delta is at most this are left out of the truth
UNKNOWN = "[class unknown]"


def cm_key(frames):
    """(site, class) of a root-first frame list, or None when the stack is not under ClassMix.build."""
    frames = [f.replace("/", ".") for f in frames]
    if "ClassMix.build" not in frames:
        return None
    i = frames.index("ClassMix.build")
    nxt = frames[i + 1] if i + 1 < len(frames) else ""
    site = nxt[len("ClassMix."):] if nxt.startswith("ClassMix.") and nxt[len("ClassMix."):] in CM_SITES else "build"
    leaf = frames[-1]
    cls = re.sub(r"_\[[ik]\]$", "", leaf) if re.search(r"_\[[ik]\]$", leaf) else UNKNOWN
    return site, cls


def dist_scores(est, truth, counts_only):
    """(total error %, TVD %) of an estimate against a truth (dicts key -> bytes). Keys the estimate has
    and the truth has not count in full; total error is None for sample counts (no bytes)."""
    T, E = sum(truth.values()), sum(est.values())
    keys = set(truth) | set(est)
    tvd = 0.5 * sum(abs(est.get(k, 0) / E - truth.get(k, 0) / T) for k in keys) * 100 if E > 0 else None
    err = None if counts_only else sum(abs(est.get(k, 0) - truth.get(k, 0)) for k in keys) / T * 100
    return err, tvd


def jfr_event(rest):
    """(event type, {field: value}, root-first stack) of a `jfr` line (bench/peers/JfrDump.java)."""
    typ, fields, stack = (rest.split("\t") + ["", ""])[:3]
    return typ, dict(kv.split("=", 1) for kv in fields.split("|") if "=" in kv), stack


acc_runs = []   # dicts: config, rep, truth{}, live{site: bytes}, alloc (bytes in main), live_kind
steady_runs = []  # SteadyState on one collector: config, rep, workload, truth{}, live{site: bytes}, counts_only
cm_runs = []    # ClassMix: config, rep, truth per class / site, live per class / site, counts_only
cur = None
acc_lines = open(ACC_TXT) if "accuracy" in SECTIONS and os.path.exists(ACC_TXT) else []
for line in acc_lines:
    line = line.rstrip("\n")
    if line.startswith("== "):
        f = line[3:].split()
        c, rep, wl = f[0], int(f[1]), (f[2] if len(f) > 2 else "retained")
        if wl.startswith("steady-"):
            cur = {"config": c, "rep": rep, "workload": wl, "truth": {}, "live": defaultdict(float),
                   "has_live": False, "counts_only": False}
            steady_runs.append(cur)
        elif wl == "classmix":
            cur = {"config": c, "rep": rep, "workload": wl, "truthclass": {}, "truthcount": {}, "truthsite": {},
                   "construct": {}, "cls": defaultdict(float), "site": defaultdict(float), "has_live": False}
            cm_runs.append(cur)
        else:
            cur = {"config": c, "rep": rep, "workload": wl, "truth": {}, "live": defaultdict(float), "alloc": 0.0,
                   "has_live": False, "has_alloc": False}
            acc_runs.append(cur)
        continue
    if cur is None:
        continue
    if cur["workload"].startswith("steady-"):
        if line.startswith("truth."):
            k, v = line[6:].split(": ")
            cur["truth"][k] = int(v)
            continue
        kind, _, rest = line.partition("\t")
        if kind in ("inuse", "livecount"):
            stack, _, val = rest.rpartition(" ")
            if val.isdigit():
                cur["live"][steady_site(stack.split(";"))] += float(val) * (
                    interval(cur["config"]) if kind == "livecount" else 1)
                cur["has_live"] = True
        elif kind == "jfr":
            typ, f, stack = jfr_event(rest)
            if typ == "datadog.HeapLiveObject":
                cur["live"][steady_site(stack.split(";"))] += float(f["size"]) * float(f["weight"])
                cur["has_live"] = True
            elif typ == "jdk.OldObjectSample":
                cur["live"][steady_site(stack.split(";"))] += 1.0
                cur["has_live"] = True
                cur["counts_only"] = True
        continue
    if cur["workload"] == "classmix":
        m = re.match(r"(truthclass|truthcount|truthsite|construct)\.(.*): (-?\d+)$", line)
        if m:
            cur[m.group(1)][m.group(2)] = int(m.group(3))
            continue
        kind, _, rest = line.partition("\t")
        w = None
        if kind in ("inuse", "livecount"):
            stack, _, val = rest.rpartition(" ")
            key = cm_key(stack.split(";"))
            if key and val.isdigit():
                w = float(val) * (interval(cur["config"]) if kind == "livecount" else 1)
        elif kind == "jfr":
            typ, f, stack = jfr_event(rest)
            key = cm_key(stack.split(";") + ["?"])   # JFR stacks have no class frame: the class is a field
            if key and typ == "datadog.HeapLiveObject":
                key, w = (key[0], f.get("objectClass", UNKNOWN)), float(f["size"]) * float(f["weight"])
            elif key and typ == "jdk.OldObjectSample":
                key, w = (key[0], f.get("object", UNKNOWN).split(" @ ")[0]), 1.0
                cur["counts_only"] = True
        if w is not None:
            cur["cls"][key[1]] += w
            cur["site"][key[0]] += w
            cur["has_live"] = True
        continue
    if line.startswith("truth."):
        k, v = line[6:].split(": ")
        cur["truth"][k] = int(v)
        continue
    kind, _, rest = line.partition("\t")
    if kind in ("inuse", "alloc", "livecount"):
        stack, _, val = rest.rpartition(" ")
        site = site_of(stack)
        if site is None or not val.isdigit():
            continue
        v = float(val)
        if kind == "inuse":
            cur["live"][site] += v; cur["has_live"] = True
        elif kind == "livecount":
            cur["live"][site] += v * interval(cur["config"]); cur["has_live"] = True
        else:
            cur["alloc"] += v; cur["has_alloc"] = True
    elif kind == "jfr":
        typ, f, stack = jfr_event(rest)
        site = site_of(stack)
        if site is None:
            continue
        if typ == "datadog.HeapLiveObject":
            cur["live"][site] += float(f["size"]) * float(f["weight"]); cur["has_live"] = True
        elif typ == "datadog.ObjectSample":
            cur["alloc"] += float(f["size"]) * float(f["weight"]); cur["has_alloc"] = True
        elif typ == "jdk.OldObjectSample":
            cur["live"][site] += 1; cur["has_live"] = True; cur["counts_only"] = True
        elif typ == "jdk.ObjectAllocationSample":
            cur["alloc"] += float(f["weight"]); cur["has_alloc"] = True

acc = defaultdict(lambda: defaultdict(list))
with (open(os.path.join(RAW, "accuracy.csv"), "w", newline="") if acc_runs else open(os.devnull, "w")) as fh:
    w = csv.writer(fh)
    w.writerow(["config", "rep", "site", "truth_live_bytes", "estimate_live", "estimate_unit"])
    for a in acc_runs:
        t = a["truth"]
        if "keepBytes" not in t:
            continue
        truth = {"keepBytes": t["keepBytes"], "keepLongs": t["keepLongs"], "makeGarbage": 0, "other": 0}
        T = sum(truth.values())
        unit = "samples" if a.get("counts_only") else "bytes"
        for s in SITES:
            w.writerow([a["config"], a["rep"], s, truth[s], round(a["live"].get(s, 0.0)), unit])
        d = acc[a["config"]]
        if a["has_live"]:
            err, tvd = dist_scores(a["live"], truth, a.get("counts_only"))
            if tvd is not None:
                d["tvd"].append(tvd)
            if err is not None:
                d["toterr"].append(err)
                d["liveratio"].append(sum(a["live"].values()) / T * 100)
                for s in ("keepBytes", "keepLongs"):
                    d[s].append(a["live"].get(s, 0) / truth[s] * 100)
                d["garbage"].append(a["live"].get("makeGarbage", 0) / 1048576)
        if a["has_alloc"]:
            d["allocratio"].append(a["alloc"] / t["allocated"] * 100)
        d["n"].append(1)



cm = defaultdict(lambda: defaultdict(list))      # config -> measure -> values over reps
cm_cls = defaultdict(lambda: defaultdict(list))  # config -> class -> est/truth % over reps
cm_truth_classes = {}                            # class -> truth bytes of the runs (median)
cm_check = []                                    # (class, construct, heap-walk instances) of every run
cm_site_vs_class = []                            # per run: sum of site truths / sum of class truths, %
with (open(os.path.join(RAW, "accuracy_class.csv"), "w", newline="") if cm_runs else open(os.devnull, "w")) as fh:
    w = csv.writer(fh)
    w.writerow(["config", "rep", "level", "key", "in_truth", "truth_live_bytes", "estimate_live", "estimate_unit"])
    for a in cm_runs:
        truth = {k: v for k, v in a["truthclass"].items() if v > CM_THRESHOLD}
        tsite = dict(a["truthsite"])
        if not truth or not tsite:
            continue
        for k, v in truth.items():
            cm_truth_classes.setdefault(k, []).append(v)
        for k, n in a["construct"].items():
            cm_check.append((k, n, a["truthcount"].get(k, 0)))
        cm_site_vs_class.append(sum(tsite.values()) / sum(truth.values()) * 100)
        co = bool(a.get("counts_only"))
        unit = "samples" if co else "bytes"
        for level, t, e in (("class", truth, a["cls"]), ("site", tsite, a["site"])):
            for k in sorted(set(t) | set(e)):
                w.writerow([a["config"], a["rep"], level, k, int(k in t), t.get(k, 0), round(e.get(k, 0.0)), unit])
        d = cm[a["config"]]
        d["n"].append(1)
        if not a["has_live"]:
            continue
        for level, t, e in (("class", truth, a["cls"]), ("site", tsite, a["site"])):
            err, tvd = dist_scores(e, t, co)
            if tvd is not None:
                d[level + "_tvd"].append(tvd)
            if err is not None:
                d[level + "_err"].append(err)
        if not co:
            d["liveratio"].append(sum(a["cls"].values()) / sum(truth.values()) * 100)
            d["outside"].append(sum(v for k, v in a["cls"].items() if k not in truth) / 1048576)
            for k in truth:
                cm_cls[a["config"]][k].append(a["cls"].get(k, 0) / truth[k] * 100)

# ---------------------------------------------------------------- raw copies
if rows:
    shutil.copy(os.path.join(RUN, "overhead.csv"), os.path.join(RAW, "runs.csv"))
for f in ("machine.txt", "commands.txt", "usagebench.md"):
    if os.path.exists(os.path.join(RUN, f)) and (f != "usagebench.md" or usage):
        shutil.copy(os.path.join(RUN, f), os.path.join(RAW, f))

# ---------------------------------------------------------------- markdown
L = []
P = L.append
quick = machine.get("quick", "").startswith("1")
P("# Benchmarks: heapprobe beside its peers")
P("")
partial = SECTIONS != "overhead startup accuracy usage".split()
P("Generated by `" + ("QUICK=1 " if quick else "") + (f'SECTIONS="{" ".join(SECTIONS)}" ' if partial else "")
  + "bash bench/peers/run.sh` on " + machine["date"]
  + " from the numbers of that one run (raw: [`docs/bench-raw/`](bench-raw/)). Every agent ran the same "
  "workloads in the same run; within each repetition the order of the agents was shuffled, so slow "
  "phases of this shared machine hit all agents alike. Re-run the command to regenerate this file.")
if quick:
    P("")
    P("**This is a QUICK=1 smoke run: few repetitions and a subset of the agents; the spreads are wide.**")
if partial:
    P("")
    P(f"**Partial run: only these sections ran: {', '.join(SECTIONS)}.**")
P("")
P("## Machine")
P("")
for k in ("nproc", "cpu", "memory", "kernel", "os", "jdk", "load_before", "load_after", "heapprobe",
          "async-profiler", "ddprof", "h2", "quick"):
    if k in machine:
        P(f"- {k}: `{machine[k]}`")
P("")
P("The machine is a shared 2-core VM; other jobs ran during the measurement (see the load averages). "
  "Absolute times are therefore noisy; compare rows of one table, which were measured interleaved.")
P("")
P("## Agents")
P("")
P("| name | JVM option (output path shortened) |")
P("|---|---|")
FLAG = {
    "none": "—",
    "empty": "`-agentpath:libempty_sampler.so=SIZE` (bench/peers/empty_sampler.c: SampledObjectAlloc on, empty callback)",
    "heapprobe": "`-agentpath:libheapprobe.so=interval=SIZE,file=out.pb.gz` (live tracking on by default)",
    "async-alloc": "`-agentpath:libasyncProfiler.so=start,event=alloc,alloc=SIZE,total,collapsed,file=out.collapsed`",
    "async-live": "`-agentpath:libasyncProfiler.so=start,event=alloc,alloc=SIZE,live,collapsed,file=out.collapsed`",
    "ddprof-live": "`-agentpath:libjavaProfiler.so=start,memory=SIZE:al:1.0,file=out.jfr` (allocation samples + liveness of 100% of them)",
    "jfr-profile": "`-XX:StartFlightRecording=settings=profile,filename=out.jfr` (ObjectAllocationSample throttled to 300/s, OldObjectSample)",
}
for b in ("none", "empty", "heapprobe", "async-alloc", "async-live", "ddprof-live", "jfr-profile"):
    P(f"| {LABEL[b]} | {FLAG[b]} |")
P("")
P("SIZE is 512k (524288 bytes, the default of heapprobe and of async-profiler's JVMTI sampler) or 32k. "
  "ddprof treats SIZE as a *suggestion*: its PID controller adapts the real rate (at 32k it sampled "
  "roughly every 256 KiB in the accuracy runs), so its @32k rows sample much less than the others.")
P("")

def peers_at(iv):
    return [f"async-live@{iv}", f"async-alloc@{iv}", f"ddprof-live@{iv}", "jfr-profile"]


def verdict(wl, c):
    """'**behind** X (+a% vs +b%)' for every peer at the same interval with a lower median CPU overhead."""
    hp = summary.get((wl, c, "cpu"))
    if not hp:
        return ""
    out = []
    for peer in peers_at(c.partition("@")[2]):
        pv = summary.get((wl, peer, "cpu"))
        if pv and pv[0] < hp[0]:
            noise = hp[1] and pv[1] and hp[1][0] <= pv[1][1]
            out.append(f"{label(peer).replace(' @', '@')} {pct(pv[0])}" + (" (within noise)" if noise else ""))
    return ("**behind** " + "; ".join(out)) if out else "no: lowest median of the agents at this interval"


# ---- overhead
summary = {}
if any(r["measure"] == "overhead" for r in rows):
    P("## 1. Overhead")
    P("")
    P(f"Wall and CPU (user+sys) time of the whole JVM from `/usr/bin/time -f '%e %U %S %M'`. "
      f"n = repetitions per cell. Values are median [min–max]; overhead = median(agent)/median(no agent) − 1 "
      "with a 95% bootstrap interval in brackets. Max RSS is the median of the runs' peak RSS.")
    for wl in machine.get("workloads", "allocbench javac h2").split():
        base = data.get(("overhead", wl, "none"))
        if not base:
            continue
        P("")
        P(f"### {WORKLOAD.get(wl, wl).format(javac_module=machine.get('javac_module', 'jdk.httpserver (42 files)'))}")
        P("")
        P("| agent | n | wall s | wall overhead [95% CI] | CPU s | CPU overhead [95% CI] | max RSS MiB | RSS added MiB | heapprobe behind? (CPU) |")
        P("|---|---|---|---|---|---|---|---|---|")
        for c in configs:
            d = data.get(("overhead", wl, c))
            if d and c != "none":
                summary[(wl, c, "cpu")] = ((med(d["cpu"]) / med(base["cpu"]) - 1) * 100, boot_ratio(d["cpu"], base["cpu"]))
        for c in configs:
            d = data.get(("overhead", wl, c))
            fails = failures.get(("overhead", wl, c), 0)
            if not d:
                P(f"| {label(c)} | 0 | failed ({fails} runs) | | | | | |")
                continue
            cells = [label(c), str(len(d["wall"])) + (f" ({fails} failed)" if fails else ""), spread(d["wall"])]
            for k in ("wall", "cpu"):
                if c == "none":
                    o = "—"
                else:
                    ov = (med(d[k]) / med(base[k]) - 1) * 100
                    ci = boot_ratio(d[k], base[k])
                    o = pct(ov) + (f" [{ci[0]:+.1f}, {ci[1]:+.1f}]" if ci else "")
                    summary[(wl, c, k)] = (ov, ci)
                if k == "wall":
                    cells.append(o)
                else:
                    cells += [spread(d["cpu"]), o]
            cells.append(f"{med(d['rss']):.0f}")
            cells.append("—" if c == "none" else f"{med(d['rss']) - med(base['rss']):+.0f}")
            cells.append(verdict(wl, c) if c.startswith("heapprobe") else "")
            P("| " + " | ".join(cells) + " |")

    # ---- per-sample cost
    P("")
    P("### Cost per sample (AllocBench)")
    P("")
    P("Extra CPU = median CPU(agent) − median CPU(no agent). Samples = SampledObjectAlloc events the JVM "
      "delivered at that interval, counted by heapprobe (the `N samples at interval` comment of its profile, "
      "median over its runs); the JVM delivers the same events to any agent at the same interval, so this "
      "count is the denominator for every row. (It is below allocated bytes / interval because an object "
      "larger than the interval yields one event: AllocBench's 64–320 KiB arrays.) Above the empty callback = "
      "minus the empty-callback row at the same interval: what the JVM's own sampling costs is not the agent's "
      "doing. ddprof adapts its rate and JFR throttles by time, so no per-sample figure is given for them.")
    P("")
    P("| agent | samples (median) | extra CPU s | ns per sample | ns per sample above the empty callback |")
    P("|---|---|---|---|---|")
    base = data.get(("overhead", "allocbench", "none"))
    floor = {}
    events = {}
    for c in configs:
        d = data.get(("overhead", "allocbench", c))
        if d and d["samples"] and c.startswith("heapprobe"):
            events[interval(c)] = med(d["samples"])
    if base:
        for c in sorted(configs, key=lambda c: (interval(c) or 0, not c.startswith("empty"))):
            d = data.get(("overhead", "allocbench", c))
            iv = interval(c)
            if not d or c == "none" or iv is None or c.startswith("ddprof"):
                continue
            if iv in events:
                ns = events[iv]
            elif d["alloc"]:
                ns = med(d["alloc"]) / iv
            else:
                continue
            extra = med(d["cpu"]) - med(base["cpu"])
            per = extra * 1e9 / ns
            if c.startswith("empty"):
                floor[iv] = per
            above = f"{per - floor[iv]:.0f}" if iv in floor and not c.startswith("empty") else "—"
            P(f"| {label(c)} | {ns:,.0f} | {extra:.2f} | {per:.0f} | {above} |")
    P("")
    P("With CPU-time noise of a few hundred ms on this machine, per-sample figures at 512k (~22k samples) "
      "are rough; the 32k rows (~350k samples) are the better estimate.")

# ---- accuracy
if acc_runs or cm_runs or steady_runs:
    P("")
    P("## 2. Accuracy")
if steady_runs:
    P("")
    P("### Steady-state live accuracy (SteadyState, 512k, no System.gc(), profile at exit)")
    P("")
    P("`test/java/SteadyState.java 512 8 - 32` with -Xmx2g on each collector: ~512 MiB of `long[]` kept at "
      "`SteadyState.keep` and turned over all the time, `byte[]` that survive a few young collections and die "
      "(`midlife`), short-lived `byte[]` (`garbage`), no `System.gc()`; after 8 s it empties the midlife ring "
      "and exits, and each agent writes its profile at exit. Truth: `truth.keep` by construction (equal to a "
      "heap walk's `long[]` bytes to within the JDK's own few KiB: test/integration/test_steady.c checks it); "
      "`midlife` and `garbage` hold nothing live at exit. Columns, median [min..max]: **keep** = the agent's "
      "live estimate for that site vs the truth; **garbage sites** = live bytes it shows at midlife + garbage, "
      "% of its own live total. heapprobe: `inuse` of its collapsed output (its exit profile is verified by the "
      "concurrent marking its shutdown hook asks for; `mark=full`: a full GC on Serial/Parallel); "
      "async-profiler `live`: sample count x interval; ddprof: `datadog.HeapLiveObject` size x weight; JFR "
      "`jdk.OldObjectSample`: counts only, so no byte figure, only the share its samples put on the garbage "
      "sites.")
    P("")
    P("| collector | agent | n | keep est/truth | garbage sites, % of live total |")
    P("|---|---|---|---|---|")
    sd = defaultdict(lambda: defaultdict(list))
    with open(os.path.join(RAW, "steady-peers.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["workload", "config", "rep", "truth_keep", "est_keep", "est_midlife", "est_garbage",
                    "est_other", "unit"])
        for a in steady_runs:
            lv, tk = a["live"], a["truth"].get("keep", 0)
            w.writerow([a["workload"], a["config"], a["rep"], tk, round(lv.get("keep", 0)),
                        round(lv.get("midlife", 0)), round(lv.get("garbage", 0)), round(lv.get("other", 0)),
                        "samples" if a["counts_only"] else "bytes"])
            d = sd[(a["workload"], a["config"])]
            d["n"].append(1)
            tot = sum(lv.values())
            if a["has_live"] and tot > 0:
                d["garbage"].append((lv.get("midlife", 0) + lv.get("garbage", 0)) / tot * 100)
                if not a["counts_only"] and tk:
                    d["keep"].append((lv.get("keep", 0) / tk - 1) * 100)

    def mm(v, fmt):
        return f"{fmt.format(med(v))} [{fmt.format(min(v))}..{fmt.format(max(v))}]" if v else "n/a"
    best = {}
    for (wl, c), d in sorted(sd.items()):
        P(f"| {wl[len('steady-'):]} | {label(c)} | {len(d['n'])} | {mm(d['keep'], '{:+.1f}%')} | "
          f"{mm(d['garbage'], '{:.1f}%')} |")
        if d["keep"]:
            e = abs(med(d["keep"]))
            if wl not in best or e < best[wl][0]:
                best[wl] = (e, c)
    P("")
    for wl, (e, c) in sorted(best.items()):
        P(f"- {wl[len('steady-'):]}: closest on the kept set: {label(c)} (median error {e:.1f}%).")
if acc_runs:
    P("")
    P("### Per site on a known retained set (RetainedSet)")
    P("")
    P("`test/java/RetainedSet.java`: keeps 40 MiB of `byte[1024]` (keepBytes) and 24 MiB (10 MiB before 2026-11-27) of `long[126]` "
      "(keepLongs), allocates 1 GiB of garbage (makeGarbage), collects, exits; it prints the exact retained "
      "bytes per site and the bytes its thread allocated. Only stacks under `RetainedSet.main` are scored; "
      "sites: keepBytes, keepLongs, makeGarbage (truth 0 live), other-in-main (truth ~0: the two ArrayList "
      "backing arrays, ~0.2 MiB). Total error = Σ|estimate − truth| / Σtruth over the sites; TVD = total "
      "variation distance between the estimated and the true per-site shares (0 = same distribution). "
      "Alloc = estimated bytes allocated under main / truth.allocated. median [min–max] over n runs.")
    P("")
    P("How each estimate is read: heapprobe `format=collapsed` inuse bytes (FILE) and alloc bytes (FILE.alloc); "
      "async-profiler `live` collapsed output counts samples, × interval (its `live,total` output sums the "
      "sampled objects' *own* sizes, unscaled, so is not an estimate of bytes); async-profiler without `live`, "
      "`total`: its scaled bytes; ddprof: `datadog.HeapLiveObject` size × weight and `datadog.ObjectSample` "
      "size × weight; JFR: `jdk.OldObjectSample` counts (no size or weight: shares only, so only TVD) and "
      "`jdk.ObjectAllocationSample` weight. JFR files are read with JDK Mission Control's parser "
      "(bench/peers/JfrDump.java) because the JDK's `jfr` tool rejects ddprof's recordings.")
    P("")
    P("| agent | n | keepBytes est/truth | keepLongs est/truth | garbage reported live MiB | live total est/truth | total error | TVD | alloc est/truth | heapprobe behind? |")
    P("|---|---|---|---|---|---|---|---|---|---|")


    def acc_verdict(c):
        h = acc.get(c)
        if not h or not h["toterr"]:
            return ""
        def worse(h, p, peer):
            name = label(peer).replace(" @", "@")
            return ([f"total error: {name} {med(p['toterr']):.1f}%"]
                    if p["toterr"] and med(p["toterr"]) < med(h["toterr"]) else []) + \
                   ([f"TVD: {name} {med(p['tvd']):.1f}%"] if p["tvd"] and med(p["tvd"]) < med(h["tvd"]) else [])
        out = peers_behind(acc, c, worse)
        return ("**behind** on " + "; ".join(out)) if out else "no"


    for c in ["heapprobe@512k", "async-live@512k", "ddprof-live@512k", "heapprobe@32k", "async-live@32k",
              "ddprof-live@32k", "async-alloc@512k", "async-alloc@32k", "jfr-profile"]:
        d = acc.get(c)
        if not d:
            continue
        f = lambda k, fmt="{:.1f}%": spread(d[k], fmt) if d[k] else "n/a"
        P(f"| {label(c)} | {len(d['n'])} | {f('keepBytes', '{:.0f}%')} | {f('keepLongs', '{:.0f}%')} | "
          f"{f('garbage', '{:.1f}')} | {f('liveratio', '{:.0f}%')} | {f('toterr')} | {f('tvd')} | {f('allocratio', '{:.0f}%')} | "
          f"{acc_verdict(c) if c.startswith('heapprobe') else ''} |")

# ---- accuracy per class: ClassMix

def classmix_worse(h, p, names):
    """ClassMix measures where heapprobe's median is worse than the peer's:
    "NAME heapprobe X% vs peer Y%", marked when heapprobe's best run is at
    least as good as the peer's worst."""
    keys = ("class_err", "class_tvd", "site_err", "site_tvd")
    return [f"{name} {med(h[k]):.1f}% vs {med(p[k]):.1f}%" + (" (ranges overlap)" if min(h[k]) <= max(p[k]) else "")
            for k, name in zip(keys, names) if p[k] and h[k] and med(p[k]) < med(h[k])]

def cm_verdict(c):
    """Where heapprobe@iv is behind a peer at the same interval on the ClassMix measures."""
    if not cm.get(c):
        return ""
    def worse(h, p, peer):
        w = classmix_worse(h, p, ("class error", "class TVD", "site error", "site TVD"))
        return [f"{label(peer).replace(' @', '@')} on " + ", ".join(w)] if w else []
    out = peers_behind(cm, c, worse)
    return ("**behind** " + "; ".join(out)) if out else "no"


CM_ORDER = ["heapprobe@512k", "async-live@512k", "ddprof-live@512k", "heapprobe@32k", "async-live@32k",
            "ddprof-live@32k", "jfr-profile"]
if cm:
    truth_cls = sorted(cm_truth_classes, key=lambda k: -med(cm_truth_classes[k]))
    tot = sum(med(v) for v in cm_truth_classes.values())
    P("")
    P("### Live heap per class and per site (ClassMix, heap walk as ground truth)")
    P("")
    P("`bench/peers/ClassMix.java`: two threads each build, in 8 rounds, a retained set of many classes and "
      "sizes (byte[] of 16–4095 bytes, long[] of 2–511 elements, latin-1 Strings with their byte[] values, "
      "6-entry HashMaps with their tables, nodes, Integer keys and point values, a small class "
      "`ClassMix$Point`, Object[] groups and chunks) and between the slices allocate ~1.25 GiB of garbage of "
      "the same classes and of others (int[], ArrayList, StringBuilder output), parked in a ring of 8192 "
      "slots so part of it is promoted before it dies. Same seeds every run, so every run builds the same set.")
    P("")
    P("**Ground truth per class** is a heap walk: in-process, the `gcClassHistogram` operation of the "
      "`com.sun.management:type=DiagnosticCommand` MBean, which is what `jcmd PID GC.class_histogram` runs: "
      "it forces a full GC and counts the live objects per class. One walk at start (after `System.gc()`), "
      "one at the end (retained set built, garbage dropped, `System.gc()`); the truth is the per-class "
      "difference in bytes. Histogram names are normalised to Java names (`[B` → `byte[]`, "
      "`[Ljava.lang.Object;` → `java.lang.Object[]`, module suffix dropped), as the agents print them. "
      f"Only classes whose difference exceeds {CM_THRESHOLD // 1024} KiB are in the truth "
      f"({len(truth_cls)} classes, {tot / 1048576:.1f} MiB): "
      + ", ".join(f"`{k}` {med(cm_truth_classes[k]) / 1048576:.2f} MiB" for k in truth_cls) + ".")
    if cm_check:
        gaps = defaultdict(list)
        for k, built, walked in cm_check:
            gaps[k].append(walked - built)
        P("")
        P("Check of the walk against the construction: instances in the walk's difference minus instances "
          "`build()` made, per class, median [min–max] over the runs: "
          + ", ".join(f"`{k}` {med(v):+.0f} [{min(v):+d}–{max(v):+d}] of {dict((a, b) for a, b, _ in cm_check)[k]:,}"
                      for k, v in gaps.items())
          + ". The few extra objects are the JVM's and the harness's own, made outside `build()` and live "
          "at the end (thread names, the start walk's text, which ClassMix subtracts, and the like).")
    P("")
    P("**Ground truth per site** is by construction (like RetainedSet): ClassMix adds up, per method that "
      "`build()` calls (keepBytes, keepLongs, keepStrings, keepMaps, keepPoints; `build` itself for the "
      "holder arrays; makeGarbage with truth 0), the retained arrays as HotSpot lays them out (16-byte header, "
      "8-byte aligned, the Object[1024] chunks included under the site that filled them) and the plain "
      "objects at the size the end walk gives their class. Summed over sites it is "
      f"{spread(cm_site_vs_class, '{:.3f}%')} of the per-class truth.")
    P("")
    P("**Scoring.** Only an agent's stacks through `ClassMix.build` are scored (the worker threads; the "
      "JVM's start-up, the MBean server and the histogram parsing stay out, as they stay out of the "
      "difference). The class is the leaf frame `Class_[i]`/`Class_[k]` of the collapsed output "
      "(heapprobe: live bytes; async-profiler `live`: sample count × interval, as in the table above), "
      "ddprof's `datadog.HeapLiveObject` `objectClass` with size × weight, JFR's `jdk.OldObjectSample` "
      "object class, counted. Classes an agent reports that are not in the truth (garbage classes, "
      "classes under the threshold, samples without a class) count in full as error. Total error = "
      "Σ|estimate − truth| / Σtruth over the union of classes (or sites); TVD = total variation distance "
      "between the estimated and the true shares. JFR has no live-bytes estimate on JDK 17 "
      "(`OldObjectSample` carries neither size nor weight; at most 256 samples per recording): only its "
      "TVD of sample-count shares is given. median [min–max] over n runs; raw per run, class and site: "
      "`docs/bench-raw/accuracy_class.csv`.")
    P("")
    P("| agent | n | live total est/truth | per class: total error | per class: TVD | "
      "outside the truth MiB | per site: total error | per site: TVD | heapprobe behind? |")
    P("|---|---|---|---|---|---|---|---|---|")
    for c in CM_ORDER:
        d = cm.get(c)
        if not d:
            continue
        f = lambda k, fmt="{:.1f}%": spread(d[k], fmt) if d[k] else "n/a"
        P(f"| {label(c)} | {len(d['n'])} | {f('liveratio', '{:.0f}%')} | {f('class_err')} | {f('class_tvd')} | "
          f"{f('outside', '{:.2f}')} | {f('site_err')} | {f('site_tvd')} | "
          f"{cm_verdict(c) if c.startswith('heapprobe') else ''} |")
    P("")
    P("Per class, estimate / truth (median over the runs; 100% = exact):")
    P("")
    P("| agent | " + " | ".join(f"`{k}`" for k in truth_cls) + " |")
    P("|---|" + "---|" * len(truth_cls))
    for c in CM_ORDER:
        if c in cm_cls:
            P(f"| {label(c)} | " + " | ".join(f"{med(cm_cls[c][k]):.0f}%" for k in truth_cls) + " |")

# ---- start-up
if data.get(("startup", "hello", "none")):
    P("")
    P("## 3. Start-up time and memory")
    P("")
    P("`java <agent> -cp … Hello` (prints one line), interleaved, shuffled per repetition. The agents write their "
      "profile at exit, which is part of the time. Added = median(agent) − median(no agent). The RSS added "
      "under load is in the overhead tables above (max RSS column).")
    P("")
    P("| agent | n | wall ms | added ms | CPU ms | max RSS MiB | RSS added MiB | heapprobe behind? |")
    P("|---|---|---|---|---|---|---|---|")
    sb = data.get(("startup", "hello", "none"))
    for c in configs:
        d = data.get(("startup", "hello", c))
        if not d or not sb:
            continue
        wall = [x * 1000 for x in d["wall"]]
        cpu = [x * 1000 for x in d["cpu"]]
        added = "—" if c == "none" else f"{(med(d['wall']) - med(sb['wall'])) * 1000:+.0f}"
        radd = "—" if c == "none" else f"{med(d['rss']) - med(sb['rss']):+.1f}"
        summary[("startup", c)] = (med(d["wall"]) - med(sb["wall"])) * 1000
        v = ""
        if c.startswith("heapprobe"):
            better = [label(p) for p in configs if not p.startswith(("heapprobe", "none", "empty"))
                      and data.get(("startup", "hello", p)) and med(data[("startup", "hello", p)]["wall"]) < med(d["wall"])]
            v = ("**behind** " + "; ".join(better)) if better else "no (the empty callback is the floor, not a peer)"
        P(f"| {label(c)} | {len(d['wall'])} | {spread(wall, '{:.0f}')} | {added} | {spread(cpu, '{:.0f}')} | "
          f"{med(d['rss']):.1f} | {radd} | {v} |")

# ---- usage bench
if "usage" in SECTIONS:
    P("")
    P("## 4. Heap-usage read latency")
    P("")
    P("heapprobe's `bench/UsageBench.java` with `bench/bench_agent.c` (`build/bench/libbench_agent.so`) in the "
      "same run: ns per call, median [min–max] over the repetitions, of each mode through `hp_heap_usage()` and "
      "of its raw read, against `MemoryMXBean.getHeapMemoryUsage()` called from Java. The peers have no "
      "equivalent API (they do not expose the heap size to native code), so this table is heapprobe only.")
    P("")
    if usage:
        P("| reading | API ns/call | raw ns/call | vs MemoryMXBean |")
        P("|---|---|---|---|")
        P(usage)
    else:
        P("UsageBench did not run (see the run's usagebench.err).")

# ---- where heapprobe is behind
P("")
P("## Where heapprobe is behind")
P("")
P("Generated from the tables above: every row where heapprobe's median is worse than a peer's at the same "
  "interval. \"(within noise)\" means the two 95% intervals overlap; \"(ranges overlap)\" (ClassMix accuracy) "
  "that heapprobe's best run is at least as good as the peer's worst.")
P("")
lines = []
for wl in ("allocbench", "javac", "h2"):
    for iv in ("512k", "32k"):
        hp = summary.get((wl, f"heapprobe@{iv}", "cpu"))
        if not hp:
            continue
        for peer in (f"async-live@{iv}", f"async-alloc@{iv}", f"ddprof-live@{iv}", "jfr-profile"):
            pv = summary.get((wl, peer, "cpu"))
            if not pv or hp[0] <= pv[0]:
                continue
            noise = ""
            if hp[1] and pv[1] and hp[1][0] <= pv[1][1]:
                noise = " (within noise)"
            lines.append(f"- **{wl}, CPU, @{iv}**: heapprobe {pct(hp[0])} vs {label(peer)} {pct(pv[0])}{noise}.")
for wl in ("allocbench", "javac", "h2"):
    for iv in ("512k", "32k"):
        h = data.get(("overhead", wl, f"heapprobe@{iv}"))
        if not h:
            continue
        for peer in peers_at(iv):
            pd = data.get(("overhead", wl, peer))
            if pd and med(pd["rss"]) < med(h["rss"]):
                lines.append(f"- **{wl}, max RSS, @{iv}**: heapprobe {med(h['rss']):.0f} MiB vs {label(peer)} "
                             f"{med(pd['rss']):.0f} MiB (for scale: the no-agent runs alone span "
                             f"{min(data[('overhead', wl, 'none')]['rss']):.0f}–"
                             f"{max(data[('overhead', wl, 'none')]['rss']):.0f} MiB).")
for iv in ("512k", "32k"):
    h = acc.get(f"heapprobe@{iv}")
    if not h or not h["toterr"]:
        continue
    for peer in (f"async-live@{iv}", f"ddprof-live@{iv}"):
        p = acc.get(peer)
        if p and p["toterr"] and med(p["toterr"]) < med(h["toterr"]):
            lines.append(f"- **accuracy @{iv}**: heapprobe total error {med(h['toterr']):.1f}% vs "
                         f"{label(peer)} {med(p['toterr']):.1f}%.")
        if p and p["tvd"] and h["tvd"] and med(p["tvd"]) < med(h["tvd"]):
            lines.append(f"- **accuracy @{iv} (TVD)**: heapprobe {med(h['tvd']):.2f}% vs {label(peer)} "
                         f"{med(p['tvd']):.2f}%.")
for iv in ("512k", "32k"):
    def cm_lines(h, p, peer):
        w = classmix_worse(h, p, ("total error per class", "TVD per class", "total error per site", "TVD per site"))
        return [f"- **ClassMix accuracy @{iv}**, heapprobe vs {label(peer)}: " + "; ".join(w) + "."] if w else []
    if cm.get(f"heapprobe@{iv}"):
        lines += peers_behind(cm, f"heapprobe@{iv}", cm_lines)
hps = summary.get(("startup", "heapprobe@512k"))
if hps is not None:
    for peer in configs:
        if peer.startswith(("heapprobe", "none", "empty")):   # the empty callback is the floor, not a peer
            continue
        ps = summary.get(("startup", peer))
        if ps is not None and ps < hps:
            lines.append(f"- **start-up**: heapprobe@512k adds {hps:+.0f} ms vs {label(peer)} {ps:+.0f} ms.")
P("\n".join(lines) if lines else "- Nowhere in this run.")
P("")
P("<!-- reasons -->")

# ---- commands
P("")
P("## Exact commands")
P("")
P("Paths: `.cache` = `bench/peers/.cache`. The first repetition's command of every cell; the other "
  "repetitions differ only in the output file names.")
P("")
P("```")
for c in commands:
    if c.startswith("warmup"):
        continue
    c = c.replace(ROOT + "/", "").replace("bench/peers/.cache", ".cache")
    files = re.findall(r" \.cache/jdksrc/([\w.]+)/\S+\.java", c)
    if files:
        mod = files[0]
        paths = re.findall(r" \.cache/jdksrc/[\w.]+/\S+\.java", c)
        c = c.replace("".join(paths), f" <the {len(paths)} files: .cache/jdksrc/{mod}/**/*.java except module-info.java, sorted>")
    P(c)
P("```")
P("")
P(f"Raw data: `docs/bench-raw/runs.csv` (one row per JVM run: measure, workload, agent, repetition, "
  "position in the shuffled order, wall/user/sys seconds, max RSS KiB, exit code, heapprobe sample count, "
  "AllocBench allocated bytes), `docs/bench-raw/accuracy.csv` (RetainedSet, per run and site), "
  "`docs/bench-raw/accuracy_class.csv` (ClassMix, per run, class and site), `machine.txt`, "
  "`commands.txt`, `usagebench.md`.")
text = "\n".join(L) + "\n"

# Hand-written reasons (kept across regenerations) live in bench/peers/reasons.md.
reasons = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reasons.md")
if os.path.exists(reasons):
    text = text.replace("<!-- reasons -->", open(reasons).read().strip())
else:
    text = text.replace("<!-- reasons -->\n", "")
open(OUT, "w").write(text)
