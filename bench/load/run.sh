#!/usr/bin/env bash
# The live view while a service works (issue 26): test/java/LoadService.java
# (THREADS=2 workers, each turning a cache of ~1 KiB byte[] over ~4 times a
# second, ~4 byte[] of garbage per replacement, no System.gc(), -Xmx3g),
# profiled with the default options plus period=4, format=text. Each
# periodic profile written while it runs is compared with the cache's bytes
# by construction at that second (LoadService's truth file, every 100 ms);
# the exit profile, written after the workers ended and their caches died,
# with 0. Optionally beside another build (OLD=path/to/libheapprobe.so) in
# the same run, interleaved.
#
#   bash bench/load/run.sh                          # ~25 min on 2 cores
#   CONFIGS="z|17|-XX:+UseZGC" REPS=1 bash bench/load/run.sh
#
# Knobs: REPS [2], CACHE_MIB [190], SECONDS_LOAD [18], INTERVAL [default],
# OLD, OUT [docs/load.md].
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
REPS=${REPS:-2}; CACHE_MIB=${CACHE_MIB:-190}; SECONDS_LOAD=${SECONDS_LOAD:-18}
OUT=${OUT:-$ROOT/docs/load.md}
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
libs="new"; [ -n "${OLD:-}" ] && libs="new old"
RAW="$RUN/raw.csv"
echo "config,jdk,lib,rep,profile,kind,view,truth" > "$RAW"
for rep in $(seq 1 "$REPS"); do
	while IFS='|' read -r name jdk flags; do
		[ -n "$name" ] || continue
		for lib in $libs; do
			d="$RUN/$name-$jdk-$lib-$rep"; mkdir -p "$d"
			opts="period=4,format=text,file=$d/p-%t.txt,log=$d/log${INTERVAL:+,interval=$INTERVAL}"
			# shellcheck disable=SC2086
			timeout $((SECONDS_LOAD + 180)) "$(jdk_home "$jdk")/bin/java" -Xmx3g $flags \
				-agentpath:"$RUN/$lib.so=$opts" -cp "$RUN/classes" LoadService "$CACHE_MIB" "$SECONDS_LOAD" "$d/truth" \
				>"$d/out" 2>&1 || echo "load bench: $name JDK $jdk $lib rep $rep exited $?" >&2
			python3 "$HERE/report.py" row "$d" "$name" "$jdk" "$lib" "$rep" >> "$RAW"
			echo "load bench: $name JDK $jdk $lib rep $rep done" >&2
		done
	done <<< "$CONFIGS"
done
mkdir -p "$(dirname "$OUT")"
cp "$RAW" "${OUT%.md}.csv"
python3 "$HERE/report.py" table "$RAW" "$(git -C "$ROOT" rev-parse --short HEAD)" "bash bench/load/run.sh (REPS=$REPS CACHE_MIB=$CACHE_MIB SECONDS_LOAD=$SECONDS_LOAD${INTERVAL:+ INTERVAL=$INTERVAL}${OLD:+ OLD=$OLD})" > "$OUT"
echo "load bench: wrote $OUT" >&2
