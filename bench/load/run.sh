#!/usr/bin/env bash
# The live view while a service works (issue 26): test/java/LoadService.java
# (THREADS=2 workers, each turning a cache of ~1 KiB byte[] over ~4 times a
# second, ~4 byte[] of garbage per replacement, no System.gc(), -Xmx3g),
# profiled with the default options plus period=4, format=text. Each
# periodic profile written while it runs is compared with the cache's bytes
# by construction at that moment (LoadService's truth file, every 100 ms;
# heapprobe's profiles and top's screens state it to the millisecond);
# the exit profile, written after the workers ended and their caches died,
# with 0. Optionally beside another build (OLD=path/to/libheapprobe.so),
# the peers' live views and `heapprobe top`, in the same run, interleaved.
#
#   bash bench/load/run.sh                          # ~25 min on 2 cores
#   CONFIGS="z|17|-XX:+UseZGC; g1|25|-XX:+UseG1GC" REPS=1 bash bench/load/run.sh
#   PEERS="async ddprof" TOP=1 bash bench/load/run.sh
#
# Knobs: REPS [2], CACHE_MIB [190], SECONDS_LOAD [18], INTERVAL [default,
# 512k], PERIOD [4] (heapprobe's period=), OLD, OUT [docs/load-releases.md];
#   PEERS   "async ddprof" or either: async-profiler 4.6 (event=alloc, live,
#           loop=4s: a collapsed file every 4 s and at exit; its counts
#           times the interval, as bench/peers/report.py reads them) and
#           Datadog's ddprof 1.22 (memory=INTERVAL:al:1.0, its live-heap
#           mode; dumped every 4 s and at exit through its Java API by
#           bench/load/DdprofDriver.java; HeapLiveObject size x weight,
#           read with JMC's parser), from Maven Central into
#           bench/peers/.cache; same interval as heapprobe;
#   TOP=1   a run labelled "top": this build with `heapprobe top PID`
#           attached 3 s after start until the load ends, its output kept;
#           each screen's LIVE bytes at the site against the truth at
#           its "refreshed" second (its periodic profiles are not counted:
#           top's own requests change theirs); TOP=2 with OLD: also a
#           run "top-old", the OLD build's `heapprobe top`, side by side;
#   ALSO="OPTIONS"  a run labelled "also": this build with these agent
#           options added (ALSO="mark_budget=10%": fresher views at that
#           cost, beside the defaults in the same run);
#   GROW=MIB_PER_S, SHRINK=S   LoadService's third site (grow): a list
#           growing at that rate, dropped every S seconds; with SITE=grow
#           the rows are that site against its truth (else the cache's);
#   TURNOVER=T, GARBAGE=G   the cache turned over T times a second with G
#           garbage arrays per replacement (LoadService's -Dturnover=,
#           -Dgarbage=; 4, and 16 / T, which keeps the garbage's rate):
#           TURNOVER=0.1, entries that live ~10 s, a few GB/s still
#           (docs/load-slow-turnover.md).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
REPS=${REPS:-2}; CACHE_MIB=${CACHE_MIB:-190}; SECONDS_LOAD=${SECONDS_LOAD:-18}
OUT=${OUT:-$ROOT/docs/load-releases.md}
RUN=$(mktemp -d /tmp/hp-load-bench-XXXXXX)
[ -f "$ROOT/build/libheapprobe.so" ] || { echo "load bench: build/libheapprobe.so missing: run bash scripts/demo.sh first" >&2; exit 1; }
cp "$(readlink -f "$ROOT/build/libheapprobe.so")" "$RUN/new.so"
[ -n "${OLD:-}" ] && cp "$(readlink -f "$OLD")" "$RUN/old.so"
JDK17=/usr/lib/jvm/java-17-openjdk-amd64
jdk_home() { case $1 in 17) echo $JDK17 ;; *) echo "$ROOT/build/jdks/$1" ;; esac; }
for v in 11 21 25; do
	[ -x "$(jdk_home $v)/bin/java" ] || { echo "load bench: JDK $v missing: run bash scripts/setup-jdks.sh build/jdks" >&2; exit 1; }
done
"$JDK17/bin/javac" --release 11 -d "$RUN/classes" "$ROOT/test/java/LoadService.java"
CONFIGS_GIVEN=${CONFIGS:+1}
CONFIGS=${CONFIGS:-"
g1|17|-XX:+UseG1GC
parallel|17|-XX:+UseParallelGC
serial|17|-XX:+UseSerialGC
z|17|-XX:+UseZGC
shenandoah|17|-XX:+UseShenandoahGC
g1|11|-XX:+UseG1GC
z|11|-XX:+UnlockExperimentalVMOptions -XX:+UseZGC
shenandoah|11|-XX:+UnlockExperimentalVMOptions -XX:+UseShenandoahGC
g1|21|-XX:+UseG1GC
z|21|-XX:+UseZGC
z-generational|21|-XX:+UseZGC -XX:+ZGenerational
shenandoah|21|-XX:+UseShenandoahGC
g1|25|-XX:+UseG1GC
z-generational|25|-XX:+UseZGC
shenandoah|25|-XX:+UseShenandoahGC
shenandoah-generational|25|-XX:+UseShenandoahGC -XX:ShenandoahGCMode=generational
"}
CONFIGS=$(printf '%s\n' "$CONFIGS" | tr ';' '\n' | sed 's/^ *//')   # ';' separates configurations too
libs="new"; [ -n "${OLD:-}" ] && libs="new old"
[ "${TOP:-0}" = 1 ] || [ "${TOP:-0}" = 2 ] && libs="$libs top"
[ "${TOP:-0}" = 2 ] && [ -n "${OLD:-}" ] && libs="$libs top-old"
[ -n "${ALSO:-}" ] && libs="$libs also"
for p in ${PEERS:-}; do libs="$libs $p"; done
IV=${INTERVAL:-512k}
ivbytes() { case $1 in *k) echo $((${1%k} * 1024)) ;; *m) echo $((${1%m} * 1048576)) ;; *) echo "$1" ;; esac; }
SITE=${SITE:-cache}
GROWFLAGS=""; [ -n "${GROW:-}" ] && GROWFLAGS="-Dgrow=$GROW${SHRINK:+ -Dshrink=$SHRINK}"
GROWFLAGS="$GROWFLAGS${TURNOVER:+ -Dturnover=$TURNOVER}${GARBAGE:+ -Dgarbage=$GARBAGE}"
if [ -n "${PEERS:-}" ]; then
	CACHE=$ROOT/bench/peers/.cache
	. "$ROOT/bench/peers/fetch.sh"
	peer_libs
	JMC_CP=$(fetch org/openjdk/jmc flightrecorder 9.1.2):$(fetch org/openjdk/jmc common 9.1.2)
	JMC_CP=$JMC_CP:$(fetch org/owasp/encoder encoder 1.2.3):$(fetch at/yawk/lz4 lz4-java 1.10.2)
	"$JDK17/bin/javac" --release 11 -d "$RUN/classes" -cp "$RUN/classes" "$HERE/DdprofDriver.java"
	"$JDK17/bin/javac" -nowarn -d "$RUN/classes" -cp "$JMC_CP" "$ROOT/bench/peers/JfrDump.java"
fi
RAW="$RUN/raw.csv"
echo "config,jdk,lib,rep,profile,kind,view,truth,margin,interval,rest" > "$RAW"
# run_one NAME JDK FLAGS LIB DIR: one JVM
run_one() {
	local name=$1 jdk=$2 flags=$3 lib=$4 d=$5 java
	java=$(jdk_home "$jdk")/bin/java
	local opts="period=${PERIOD:-4},format=text,file=$d/p-%t.txt,log=$d/log${INTERVAL:+,interval=$INTERVAL}"
	local so=$RUN/$lib.so; [ "$lib" = top ] || [ "$lib" = also ] && so=$RUN/new.so
	[ "$lib" = top-old ] && so=$RUN/old.so
	[ "$lib" = also ] && opts="$opts,$ALSO"
	local args=("$CACHE_MIB" "$SECONDS_LOAD" "$d/truth")
	# shellcheck disable=SC2086
	case $lib in
	async) timeout $((SECONDS_LOAD + 180)) "$java" -Xmx3g $flags $GROWFLAGS \
			-agentpath:"$AP=start,event=alloc,alloc=$(ivbytes "$IV"),live,loop=4s,collapsed,file=$d/p-%t.collapsed" \
			-cp "$RUN/classes" LoadService "${args[@]}" >"$d/out" 2>&1 ;;
	ddprof) timeout $((SECONDS_LOAD + 180)) "$java" -Xmx3g $flags $GROWFLAGS -cp "$DD_JAR:$RUN/classes" \
			DdprofDriver "$DD" "memory=$(ivbytes "$IV"):al:1.0" "$d" 4 "${args[@]}" >"$d/out" 2>&1 &&
		for f in "$d"/p-*.jfr; do
			"$JDK17/bin/java" -cp "$RUN/classes:$JMC_CP" JfrDump "$f" datadog.HeapLiveObject >"${f%.jfr}.events" 2>/dev/null || true
		done ;;
	*)	timeout $((SECONDS_LOAD + 180)) "$java" -Xmx3g $flags $GROWFLAGS -agentpath:"$so=$opts" \
			-cp "$RUN/classes" LoadService "${args[@]}" >"$d/out" 2>&1 &
		local jpid=$! tpid=""
		if [ "$lib" = top ] || [ "$lib" = top-old ]; then
			sleep 3
			timeout "$SECONDS_LOAD" "$ROOT/build/heapprobe" --lib "$so" top "$(pgrep -P "$jpid" -f LoadService | head -1)" \
				>"$d/top.txt" 2>"$d/top.err" </dev/null & tpid=$!
		fi
		wait "$jpid"; local rc=$?
		[ -n "$tpid" ] && { wait "$tpid" || true; }
		return $rc ;;
	esac
}
for rep in $(seq 1 "$REPS"); do
	while IFS='|' read -r name jdk flags; do
		[ -n "$name" ] || continue
		for lib in $libs; do
			d="$RUN/$name-$jdk-$lib-$rep"; mkdir -p "$d"
			run_one "$name" "$jdk" "$flags" "$lib" "$d" || echo "load bench: $name JDK $jdk $lib rep $rep exited $?" >&2
			python3 "$HERE/report.py" row "$d" "$name" "$jdk" "$lib" "$rep" "$SITE" "$(ivbytes "$IV")" >> "$RAW"
			echo "load bench: $name JDK $jdk $lib rep $rep done" >&2
		done
	done <<< "$CONFIGS"
done
mkdir -p "$(dirname "$OUT")"
cp "$RAW" "${OUT%.md}.csv"
CFGS=""; [ -n "${CONFIGS_GIVEN:-}" ] && CFGS=" CONFIGS=\"$(echo "$CONFIGS" | awk -F'|' 'NF>2{printf "%s%s|%s|%s", n++ ? "; " : "", $1, $2, $3}')\""
python3 "$HERE/report.py" table "$RAW" "$(git -C "$ROOT" rev-parse --short HEAD)" "bash bench/load/run.sh (REPS=$REPS${CFGS} CACHE_MIB=$CACHE_MIB SECONDS_LOAD=$SECONDS_LOAD${INTERVAL:+ INTERVAL=$INTERVAL}${PERIOD:+ PERIOD=$PERIOD}${OLD:+ OLD=$OLD}${PEERS:+ PEERS=\"$PEERS\"}${TOP:+ TOP=$TOP}${ALSO:+ ALSO=\"$ALSO\"}${GROW:+ GROW=$GROW}${SHRINK:+ SHRINK=$SHRINK}${TURNOVER:+ TURNOVER=$TURNOVER}${GARBAGE:+ GARBAGE=$GARBAGE}${SITE:+ SITE=$SITE})" "$SITE" > "$OUT"
echo "load bench: wrote $OUT" >&2
