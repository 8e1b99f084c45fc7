#!/usr/bin/env bash
# What the live view costs a service at full load (issue 26, item 6):
# test/java/LoadService.java paced at a fixed work rate (its workers sleep
# when ahead), so the process CPU it takes is the work plus what the agent
# adds. Per collector, interleaved in one run: no agent; the agent at its
# defaults (the exit profile only); the agent with period=10 (a periodic
# profile every 10 s, a marking asked for before each while requested
# markings stay under 1/50 of the wall clock). Process CPU (user + sys, from
# /usr/bin/time) and the pause time the GC log reports, medians of REPS.
#
#   bash bench/load/cost.sh                 # ~12 min on 2 cores
#   REPS=5 GCS="z g1" bash bench/load/cost.sh
#
# Knobs: REPS [3], GCS [g1 parallel serial z shenandoah], CACHE_MIB [190],
# SECONDS_LOAD [30], TURNOVER [2], OUT [docs/load-cost.md].
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
REPS=${REPS:-3}; CACHE_MIB=${CACHE_MIB:-190}; SECONDS_LOAD=${SECONDS_LOAD:-30}; TURNOVER=${TURNOVER:-2}
GCS=${GCS:-"g1 parallel serial z shenandoah"}
OUT=${OUT:-$ROOT/docs/load-cost.md}
JAVA=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
[ -x /usr/bin/time ] || { echo "load cost: /usr/bin/time missing: apt-get install time" >&2; exit 1; }
[ -f "$ROOT/build/libheapprobe.so" ] || { echo "load cost: build/libheapprobe.so missing: run bash scripts/demo.sh first" >&2; exit 1; }
RUN=$(mktemp -d /tmp/hp-load-cost-XXXXXX)
cp "$(readlink -f "$ROOT/build/libheapprobe.so")" "$RUN/hp.so"
"$(dirname "$JAVA")/javac" --release 11 -d "$RUN/classes" "$ROOT/test/java/LoadService.java"
flag() { case $1 in g1) echo -XX:+UseG1GC ;; parallel) echo -XX:+UseParallelGC ;; serial) echo -XX:+UseSerialGC ;;
	z) echo -XX:+UseZGC ;; shenandoah) echo -XX:+UseShenandoahGC ;; esac; }
echo "gc,agent,rep,cpu_s,pause_ms" > "$RUN/raw.csv"
for rep in $(seq 1 "$REPS"); do
	for gc in $GCS; do
		for agent in none default period10; do
			d="$RUN/$gc-$agent-$rep"; mkdir -p "$d"
			case $agent in
			none) a=() ;;
			default) a=(-agentpath:"$RUN/hp.so=file=$d/p.pb.gz,log=$d/log") ;;
			period10) a=(-agentpath:"$RUN/hp.so=period=10,file=$d/p-%t.pb.gz,log=$d/log") ;;
			esac
			# shellcheck disable=SC2046
			/usr/bin/time -f "%U %S" -o "$d/time" "$JAVA" -Xmx3g $(flag "$gc") -Dturnover="$TURNOVER" \
				-Xlog:safepoint:file="$d/sp.log" "${a[@]}" -cp "$RUN/classes" LoadService "$CACHE_MIB" "$SECONDS_LOAD" \
				>"$d/out" 2>&1 || echo "load cost: $gc $agent rep $rep exited $?" >&2
			cpu=$(awk '{print $1 + $2}' "$d/time" | tail -1)
			# Time at safepoints (every GC pause is one; so are ours).
			pause=$(grep -o 'Total: [0-9]* ns' "$d/sp.log" | awk '{s += $2} END {printf "%.1f", s / 1e6}')
			echo "$gc,$agent,$rep,$cpu,${pause:-0}" >> "$RUN/raw.csv"
			echo "load cost: $gc $agent rep $rep: cpu ${cpu}s pauses ${pause}ms" >&2
		done
	done
done
python3 - "$RUN/raw.csv" "$(git -C "$ROOT" rev-parse --short HEAD)" "$REPS" "$CACHE_MIB" "$SECONDS_LOAD" "$TURNOVER" > "$OUT" <<'PY'
import csv, statistics, sys, datetime, os
rows = list(csv.DictReader(open(sys.argv[1])))
commit, reps, cache, secs, turnover = sys.argv[2:7]
print("# What the live view costs under load\n")
print("Commit %s, %s, %d CPUs. Command: `REPS=%s CACHE_MIB=%s SECONDS_LOAD=%s TURNOVER=%s bash bench/load/cost.sh`.\n"
      % (commit, datetime.date.today().isoformat(), os.cpu_count(), reps, cache, secs, turnover))
print("LoadService paced at a fixed rate (a %s MiB cache turned over %s times a second, garbage between), JDK 17, "
      "-Xmx3g; process CPU (user+sys) and time at safepoints over the whole run (%s s of load plus start and exit), "
      "medians of %s interleaved runs [min, max]; the agent's share is its median over no agent's.\n" % (cache, turnover, secs, reps))
print("| collector | agent | CPU s | vs no agent | safepoint ms | vs no agent |")
print("|---|---|---|---|---|---|")
gcs = []
for r in rows:
    if r["gc"] not in gcs:
        gcs.append(r["gc"])
for gc in gcs:
    base = None
    for agent in ("none", "default", "period10"):
        cpu = [float(r["cpu_s"]) for r in rows if r["gc"] == gc and r["agent"] == agent]
        sp = [float(r["pause_ms"]) for r in rows if r["gc"] == gc and r["agent"] == agent]
        if not cpu:
            continue
        mc, ms = statistics.median(cpu), statistics.median(sp)
        if agent == "none":
            base = (mc, ms)
        rel = lambda m, b: "-" if agent == "none" or not b else "%+.1f%%" % (100 * (m / b - 1))
        print("| %s | %s | %.1f [%.1f, %.1f] | %s | %.0f [%.0f, %.0f] | %s |" % (
            gc, agent, mc, min(cpu), max(cpu), rel(mc, base[0]), ms, min(sp), max(sp), rel(ms, base[1])))
PY
echo "load cost: wrote $OUT" >&2
