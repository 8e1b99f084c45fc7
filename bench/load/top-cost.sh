#!/usr/bin/env bash
# What `heapprobe top` costs the JVM it watches: its commands are answered
# on the JVM's Attach Listener thread, one screen after each collection.
# test/java/LoadService.java (190 MiB cache turned over twice a second,
# JDK 17, -Xmx3g) with the agent at its defaults, `heapprobe top PID` for
# 16 s beside it, bench/load/threads.py around the JVM: the Attach
# Listener's CPU seconds, per screen, the GC's threads' CPU seconds and
# the markings the agent asked for (`heapprobe PID status` right after
# top), medians of REPS runs [min, max], this build and OLD (another
# build's library) interleaved.
#
#   OLD=/tmp/old/libheapprobe.so OLD_REV=6dc2d4e bash bench/load/top-cost.sh   # ~6 min
#
# Knobs: REPS [3], GCS [g1 z shenandoah], OLD [none], OLD_REV, OUT [docs/load-top-cost.md].
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
REPS=${REPS:-3}
GCS=${GCS:-"g1 z shenandoah"}
OUT=${OUT:-$ROOT/docs/load-top-cost.md}
JAVA=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
CLI=$ROOT/build/heapprobe
[ -f "$ROOT/build/libheapprobe.so" ] && [ -x "$CLI" ] || { echo "top cost: build/ missing: run bash scripts/demo.sh first" >&2; exit 1; }
RUN=$(mktemp -d /tmp/hp-top-cost-XXXXXX)
cp "$(readlink -f "$ROOT/build/libheapprobe.so")" "$RUN/new.so"
BUILDS=new
if [ -n "${OLD:-}" ]; then
	[ -f "$OLD" ] || { echo "top cost: OLD=$OLD is not a file" >&2; exit 1; }
	cp "$(readlink -f "$OLD")" "$RUN/old.so"
	BUILDS="new old"
fi
"$(dirname "$JAVA")/javac" --release 11 -d "$RUN/classes" "$ROOT/test/java/LoadService.java"
flag() { case $1 in g1) echo -XX:+UseG1GC ;; parallel) echo -XX:+UseParallelGC ;; serial) echo -XX:+UseSerialGC ;;
	z) echo -XX:+UseZGC ;; shenandoah) echo -XX:+UseShenandoahGC ;; esac; }
echo "gc,build,rep,attach_s,screens,process_s,gc_s,requests" > "$RUN/raw.csv"
for rep in $(seq 1 "$REPS"); do
	for gc in $GCS; do
		for b in $BUILDS; do
			d="$RUN/$gc-$b-$rep"; mkdir -p "$d"
			# shellcheck disable=SC2046
			python3 "$HERE/threads.py" "$d/threads.json" -- "$JAVA" -Xmx3g $(flag "$gc") -Dturnover=2 \
				-agentpath:"$RUN/$b.so=file=$d/p.pb.gz,log=$d/log" -cp "$RUN/classes" LoadService 190 20 \
				>"$d/out" 2>&1 &
			poller=$!
			pid=
			for _ in $(seq 1 50); do
				pid=$(pgrep -P "$poller" | head -1 || true)      # the JVM: threads.py's child
				[ -n "$pid" ] && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = java ] && break
				pid=
				sleep 0.1
			done
			sleep 3
			[ -n "$pid" ] && timeout 16 "$CLI" --lib "$RUN/$b.so" top "$pid" >"$d/top.txt" 2>"$d/top.err" </dev/null || true
			[ -n "$pid" ] && "$CLI" --lib "$RUN/$b.so" "$pid" status >"$d/status.txt" 2>&1 || true
			wait "$poller" || echo "top cost: $gc $b rep $rep: the JVM exited $?" >&2
			read -r att scr cpu gcs req < <(python3 -c 'import json, re, sys
j = json.load(open(sys.argv[1] + "/threads.json"))
n = len(re.findall("refreshed", open(sys.argv[1] + "/top.txt", errors="replace").read()))
q = re.search(r"requested by us: (\d+)", open(sys.argv[1] + "/status.txt", errors="replace").read())
print("%.2f %d %.2f %.2f %s" % (j["threads"].get("Attach Listener", 0), n, j["process"], j["groups"].get("gc", 0),
                                q.group(1) if q else "-1"))' "$d")
			if [ "$scr" = 0 ]; then     # top never attached: not a measurement
				echo "top cost: $gc $b rep $rep: no screen (see $d/top.err), left out" >&2
				continue
			fi
			echo "$gc,$b,$rep,$att,$scr,$cpu,$gcs,$req" >> "$RUN/raw.csv"
			echo "top cost: $gc $b rep $rep: Attach Listener ${att}s for $scr screens" >&2
		done
	done
done
python3 - "$RUN/raw.csv" "$(git -C "$ROOT" rev-parse --short HEAD)" "$REPS" > "$OUT" <<'PY'
import csv, datetime, os, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
commit, reps = sys.argv[2], sys.argv[3]
old = os.environ.get("OLD_REV", "another build") if os.environ.get("OLD") else None
print("# What `heapprobe top` costs the JVM it watches\n")
print("Commit %s, %s, %d CPUs. Command: `%sREPS=%s bash bench/load/top-cost.sh`.\n" % (
    commit, datetime.date.today().isoformat(), os.cpu_count(), ("OLD=<%s's library> " % old) if old else "", reps))
print("LoadService (190 MiB cache turned over twice a second, JDK 17, -Xmx3g) with the agent at its defaults and "
      "`heapprobe top PID` for 16 s beside it; the JVM's Attach Listener thread answers its commands (one screen after "
      "each collection). Its CPU seconds (bench/load/threads.py) and per screen, the GC's threads' CPU seconds, and the "
      "markings the agent asked for while top ran (`heapprobe PID status` right after it: the run's count, periodic "
      "profiles none here), medians of %s interleaved runs [min, max]; \"old\" is %s.\n" % (reps, old or "not run"))
print("| collector | build | screens | Attach Listener CPU s | ms a screen | process CPU s | GC threads CPU s | markings asked for |")
print("|---|---|---|---|---|---|---|---|")
def f(v, fmt):
    return (fmt + " [" + fmt + ", " + fmt + "]") % (statistics.median(v), min(v), max(v))
for gc in dict.fromkeys(r["gc"] for r in rows):
    for b in dict.fromkeys(r["build"] for r in rows):
        rs = [r for r in rows if r["gc"] == gc and r["build"] == b]
        if not rs:
            continue
        att = [float(r["attach_s"]) for r in rs]
        scr = [float(r["screens"]) for r in rs]
        per = [1000 * float(r["attach_s"]) / max(float(r["screens"]), 1) for r in rs]
        cpu = [float(r["process_s"]) for r in rs]
        gcs = [float(r["gc_s"]) for r in rs]
        req = [float(r["requests"]) for r in rs if float(r["requests"]) >= 0]
        print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (gc, b, f(scr, "%.0f"), f(att, "%.2f"), f(per, "%.1f"),
              f(cpu, "%.1f"), f(gcs, "%.1f"), f(req, "%.0f") if req else "-"))
PY
echo "top cost: wrote $OUT" >&2
