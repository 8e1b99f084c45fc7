#!/usr/bin/env bash
# What a requested marking costs: CPU seconds of the whole JVM process and
# wall time across `jcmd ... dump`, with mark=concurrent (on these collectors
# the same as the default, auto: the agent asks for a concurrent cycle first) and mark=off (it does not), on
# an idle SteadyState holding LIVE_MIB, interleaved pairs. The difference
# is the marking (attach and the profile write are in both).
#   bash bench/steady/marking-cost.sh      # ~8 min; appends to docs/steady-state.md when OUT is unset
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
REPS=${REPS:-5}; LIVE_MIB=${LIVE_MIB:-512}; OUT=${OUT:-$ROOT/docs/steady-state.md}
GCS=${GCS:-"-XX:+UseG1GC -XX:+UseZGC -XX:+UseShenandoahGC"}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
RUN=$(mktemp -d /tmp/hp-markcost-XXXXXX)
cp "$(readlink -f "${HP:-$ROOT/build/libheapprobe.so}")" "$RUN/hp.so"
"$JAVA_HOME/bin/javac" --release 11 -d "$RUN/classes" "$ROOT/test/java/SteadyState.java"
ticks=$(getconf CLK_TCK)
cpu() { awk -v t="$ticks" '{print ($14 + $15) / t}' "/proc/$1/stat"; }
echo "gc,mode,rep,cpu_s,wall_ms" > "$RUN/cost.csv"
for rep in $(seq 1 "$REPS"); do
	for gc in $GCS; do
		for mode in concurrent off; do
			w="$RUN/w"; rm -rf "$w"; mkdir -p "$w"
			"$JAVA_HOME/bin/java" -Xmx2g "$gc" "-agentpath:$RUN/hp.so=mark=$mode,format=collapsed,file=$w/p" \
				-cp "$RUN/classes" SteadyState "$LIVE_MIB" 6 "$w/stop" 32 >"$w/out" 2>&1 &
			pid=$!
			until grep -q '^ready$' "$w/out"; do sleep 0.2; done
			sleep 1
			c0=$(cpu $pid); t0=$(date +%s%N)
			"$JAVA_HOME/bin/jcmd" $pid JVMTI.agent_load "$RUN/hp.so" dump >/dev/null
			t1=$(date +%s%N); c1=$(cpu $pid)
			touch "$w/stop"; wait $pid || true
			echo "$gc,$mode,$rep,$(echo "$c1 - $c0" | bc -l),$(( (t1 - t0) / 1000000 ))" >> "$RUN/cost.csv"
			echo "[$(date +%T)] $gc $mode rep $rep" >&2
		done
	done
done
python3 - "$RUN/cost.csv" "$LIVE_MIB" "$REPS" >> "$OUT" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
live, reps = sys.argv[2], sys.argv[3]
print()
print("## What a requested marking costs")
print()
print(f"`REPS={reps} LIVE_MIB={live} bash bench/steady/marking-cost.sh` (JDK 17, -Xmx2g, an idle SteadyState "
      f"holding {live} MiB): process CPU seconds and wall ms across `jcmd ... dump`, the agent asking for a "
      "concurrent marking first (mark=concurrent, on these collectors the same as the default, auto) or not (mark=off); pairs interleaved; the "
      "difference is the marking. Median [min..max].")
print()
print("| collector | CPU s, mark=concurrent | CPU s, mark=off | wall ms, mark=concurrent | wall ms, mark=off |")
print("|---|---|---|---|---|")
def s(v, fmt):
    return f"{fmt.format(statistics.median(v))} [{fmt.format(min(v))}..{fmt.format(max(v))}]"
for gc in dict.fromkeys(r["gc"] for r in rows):
    c = {m: [float(r["cpu_s"]) for r in rows if r["gc"] == gc and r["mode"] == m] for m in ("concurrent", "off")}
    w = {m: [float(r["wall_ms"]) for r in rows if r["gc"] == gc and r["mode"] == m] for m in ("concurrent", "off")}
    print(f"| {gc} | {s(c['concurrent'], '{:.2f}')} | {s(c['off'], '{:.2f}')} | {s(w['concurrent'], '{:.0f}')} | {s(w['off'], '{:.0f}')} |")
PY
rm -rf "$RUN"
