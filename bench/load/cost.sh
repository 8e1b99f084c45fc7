#!/usr/bin/env bash
# What the live view costs a service at full load (issue 26, item 6):
# test/java/LoadService.java paced at a fixed work rate (its workers sleep
# when ahead), so the process CPU it takes is the work plus what the agent
# adds. Per collector, interleaved in one run: no agent; the agent at its
# defaults (the exit profile only); the agent with period=10 (a periodic
# profile every 10 s, a marking asked for before each while requested
# markings stay under 1/50 of the wall clock); with PYROSCOPE=<server
# binary> also period=10 with upload= to that server (test/pyroscope/
# run.sh, started once for the whole run). Process CPU (user + sys, the
# JVM's own, by wait4), where it went by thread (bench/load/threads.py: our own
# threads exactly, the GC's threads against no agent's), and the time at
# safepoints the JVM's log reports, medians of REPS.
#
#   bash bench/load/cost.sh                 # ~25 min on 2 cores
#   REPS=5 GCS="z g1" bash bench/load/cost.sh
#   PYROSCOPE=build/pyroscope/pyroscope bash bench/load/cost.sh
#   OLD=/tmp/old/libheapprobe.so GCS=shenandoah REPS=5 bash bench/load/cost.sh
#
# Knobs: REPS [3], GCS [g1 parallel serial z shenandoah], CACHE_MIB [190],
# SECONDS_LOAD [20], TURNOVER [2], PYROSCOPE [none], OLD [none: another
# build's library, run with period=10 beside this one's, "period10-old"; OLD_REV names it
# in the report],
# OUT [docs/load-cost.md].
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
REPS=${REPS:-3}; CACHE_MIB=${CACHE_MIB:-190}; SECONDS_LOAD=${SECONDS_LOAD:-20}; TURNOVER=${TURNOVER:-2}
GCS=${GCS:-"g1 parallel serial z shenandoah"}
OUT=${OUT:-$ROOT/docs/load-cost.md}
JAVA=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
[ -f "$ROOT/build/libheapprobe.so" ] || { echo "load cost: build/libheapprobe.so missing: run bash scripts/demo.sh first" >&2; exit 1; }
RUN=$(mktemp -d /tmp/hp-load-cost-XXXXXX)
cp "$(readlink -f "$ROOT/build/libheapprobe.so")" "$RUN/hp.so"
"$(dirname "$JAVA")/javac" --release 11 -d "$RUN/classes" "$ROOT/test/java/LoadService.java"
flag() { case $1 in g1) echo -XX:+UseG1GC ;; parallel) echo -XX:+UseParallelGC ;; serial) echo -XX:+UseSerialGC ;;
	z) echo -XX:+UseZGC ;; shenandoah) echo -XX:+UseShenandoahGC ;; esac; }
AGENTS="none default period10"
if [ -n "${OLD:-}" ]; then
	[ -f "$OLD" ] || { echo "load cost: OLD=$OLD is not a file" >&2; exit 1; }
	cp "$(readlink -f "$OLD")" "$RUN/old.so"
	AGENTS="$AGENTS period10-old"
fi
if [ -n "${PYROSCOPE:-}" ]; then
	[ -x "$PYROSCOPE" ] || { echo "load cost: PYROSCOPE=$PYROSCOPE is not an executable" >&2; exit 1; }
	PORT=${PORT:-4140}
	bash "$ROOT/test/pyroscope/run.sh" "$(readlink -f "$PYROSCOPE")" "$RUN/pyroscope" "$PORT" > "$RUN/pyroscope.log" 2>&1 &
	SERVER=$!
	trap 'kill $SERVER 2>/dev/null || true' EXIT
	for _ in $(seq 1 120); do
		[ "$(curl -s "http://127.0.0.1:$PORT/ready" 2>/dev/null)" = ready ] && break
		sleep 1
	done
	[ "$(curl -s "http://127.0.0.1:$PORT/ready" 2>/dev/null)" = ready ] ||
		{ echo "load cost: the Pyroscope server did not get ready (see $RUN/pyroscope.log)" >&2; exit 1; }
	AGENTS="$AGENTS upload"
fi
echo "gc,agent,rep,cpu_s,pause_ms,agent_s,gc_s,threads_s" > "$RUN/raw.csv"
for rep in $(seq 1 "$REPS"); do
	for gc in $GCS; do
		for agent in $AGENTS; do
			d="$RUN/$gc-$agent-$rep"; mkdir -p "$d"
			case $agent in
			none) a=() ;;
			default) a=(-agentpath:"$RUN/hp.so=file=$d/p.pb.gz,log=$d/log") ;;
			period10) a=(-agentpath:"$RUN/hp.so=period=10,file=$d/p-%t.pb.gz,log=$d/log") ;;
			period10-old) a=(-agentpath:"$RUN/old.so=period=10,file=$d/p-%t.pb.gz,log=$d/log") ;;
			upload) a=(-agentpath:"$RUN/hp.so=period=10,upload=http://127.0.0.1:$PORT,app=cost-$gc,file=$d/p.pb.gz,log=$d/log") ;;
			esac
			# shellcheck disable=SC2046
			python3 "$HERE/threads.py" "$d/threads.json" -- "$JAVA" -Xmx3g $(flag "$gc") -Dturnover="$TURNOVER" \
				-Xlog:safepoint:file="$d/sp.log" "${a[@]}" -cp "$RUN/classes" LoadService "$CACHE_MIB" "$SECONDS_LOAD" \
				>"$d/out" 2>&1 || echo "load cost: $gc $agent rep $rep exited $?" >&2
			# Time at safepoints (every GC pause is one; so are ours).
			pause=$(grep -o 'Total: [0-9]* ns' "$d/sp.log" | awk '{s += $2} END {printf "%.1f", s / 1e6}')
			read -r cpu thr < <(python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); g = j["groups"]
print("%.2f %.2f,%.2f,%.2f" % (j["process"], g.get("agent", 0), g.get("gc", 0), sum(g.values())))' "$d/threads.json")
			echo "$gc,$agent,$rep,$cpu,${pause:-0},$thr" >> "$RUN/raw.csv"
			echo "load cost: $gc $agent rep $rep: cpu ${cpu}s pauses ${pause}ms (agent,gc,threads s: $thr)" >&2
		done
	done
done
python3 - "$RUN/raw.csv" "$(git -C "$ROOT" rev-parse --short HEAD)" "$REPS" "$CACHE_MIB" "$SECONDS_LOAD" "$TURNOVER" > "$OUT" <<'PY'
import csv, statistics, sys, datetime, os
rows = list(csv.DictReader(open(sys.argv[1])))
commit, reps, cache, secs, turnover = sys.argv[2:7]
print("# What the live view costs under load\n")
print("Commit %s, %s, %d CPUs. Command: `%sREPS=%s CACHE_MIB=%s SECONDS_LOAD=%s TURNOVER=%s bash bench/load/cost.sh`.\n"
      % (commit, datetime.date.today().isoformat(), os.cpu_count(),
         ("PYROSCOPE=<the server's binary> " if os.environ.get("PYROSCOPE") else "")
         + ("OLD=<%s's library> " % os.environ.get("OLD_REV", "another build") if os.environ.get("OLD") else "")
         + ("GCS=\"%s\" " % os.environ["GCS"] if os.environ.get("GCS") else ""), reps, cache, secs, turnover))
print("LoadService paced at a fixed rate (a %s MiB cache turned over %s times a second, garbage between), JDK 17, "
      "-Xmx3g; over the whole run (%s s of load plus start and exit), medians of %s interleaved runs [min, max]: the JVM's "
      "process CPU (user+sys), our own threads' CPU (the agent thread and what it starts: marking requests' helper, upload "
      "sender; bench/load/threads.py) and its share of the process's, the GC's threads' CPU (workers, concurrent markers, "
      "the VM thread) and the time at safepoints, each against no agent's median. Our threads' share is exact per run; "
      "the rest moves by several %% from run to run on this machine (the no-agent rows' spread).\n" % (cache, turnover, secs, reps))
print("| collector | agent | CPU s | vs no agent | our threads: CPU s | share of process | GC threads: CPU s | vs no agent | safepoint ms | vs no agent |")
print("|---|---|---|---|---|---|---|---|---|---|")
gcs = []
for r in rows:
    if r["gc"] not in gcs:
        gcs.append(r["gc"])
def med(gc, agent, key):
    v = [float(r[key]) for r in rows if r["gc"] == gc and r["agent"] == agent]
    return (statistics.median(v), min(v), max(v)) if v else None
agents = []
for r in rows:
    if r["agent"] not in agents:
        agents.append(r["agent"])
for gc in gcs:
    base = {k: med(gc, "none", k) for k in ("cpu_s", "gc_s", "pause_ms")}
    for agent in agents:
        m = {k: med(gc, agent, k) for k in ("cpu_s", "gc_s", "pause_ms", "agent_s")}
        if not m["cpu_s"]:
            continue
        share = [float(r["agent_s"]) / float(r["cpu_s"]) for r in rows if r["gc"] == gc and r["agent"] == agent and float(r["cpu_s"]) > 0]
        rel = lambda k: "-" if agent == "none" or not base[k] or not base[k][0] else "%+.1f%%" % (100 * (m[k][0] / base[k][0] - 1))
        f = lambda t, fmt: (fmt + " [" + fmt + ", " + fmt + "]") % t
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            gc, agent, f(m["cpu_s"], "%.1f"), rel("cpu_s"),
            "-" if agent == "none" else f(m["agent_s"], "%.2f"),
            "-" if agent == "none" else "%.2f%% [%.2f, %.2f]" % (100 * statistics.median(share), 100 * min(share), 100 * max(share)),
            f(m["gc_s"], "%.1f"), rel("gc_s"), f(m["pause_ms"], "%.0f"), rel("pause_ms")))
PY
echo "load cost: wrote $OUT" >&2
