#!/usr/bin/env bash
# Short-lived threads (test/java/ShortThreads.java): each thread allocates
# a few intervals' worth of byte[1000] at one site and ends; one thread in
# KEEP_EVERY hands its arrays to a list kept to the end. The exit profile's
# allocated bytes at the site against every array's bytes, and its live
# bytes against the kept ones (the threads' own allocated-bytes counts).
# A ratio estimator of the sampler's interval (src/agent/samplerate.h)
# leaves out what a thread allocates after its last sample; this shows
# what crediting it at ThreadEnd does, beside an OLD build in the same run.
#
#   OLD=/path/to/old/libheapprobe.so bash bench/threads/run.sh   # ~6 min on 2 cores
#
# Knobs: JDKS [11 17 21 25 26], REPS [3], OLD [none], OUT
# [docs/short-threads.md], CONFIGS (lines "interval threads KiB concurrent
# keep_every").
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
JDKS=${JDKS:-"11 17 21 25 26"}; REPS=${REPS:-3}; OLD=${OLD:-}; OUT=${OUT:-$ROOT/docs/short-threads.md}
CONFIGS=${CONFIGS:-"4k 16000 20 2 1
64k 4000 320 2 4
64k 8000 64 2 2
512k 1000 2560 2 8"}
JDK17=/usr/lib/jvm/java-17-openjdk-amd64
jdk_home() { case $1 in 17) echo $JDK17 ;; *) echo "$ROOT/build/jdks/$1" ;; esac; }
NEW=$ROOT/build/libheapprobe.so
[ -f "$NEW" ] || { echo "threads bench: build/libheapprobe.so missing: run bash scripts/demo.sh first" >&2; exit 1; }
[ -z "$OLD" ] || [ -f "$OLD" ] || { echo "threads bench: OLD=$OLD missing" >&2; exit 1; }
RUN=$(mktemp -d /tmp/hp-threads-XXXXXX)
"$JDK17/bin/javac" --release 11 -d "$RUN/classes" "$ROOT/test/java/ShortThreads.java"
echo "jdk,interval,threads,kib,keep_every,build,rep,alloc_truth,keep_truth,alloc,live" > "$RUN/raw.csv"
builds="new"; [ -z "$OLD" ] || builds="new old"
for rep in $(seq 1 "$REPS"); do
	for jdk in $JDKS; do
		while read -r iv threads kib conc every; do
			[ -n "$iv" ] || continue
			for b in $builds; do
				lib=$NEW; [ "$b" = new ] || lib=$OLD
				d="$RUN/$jdk-$iv-$threads-$b-$rep"; mkdir -p "$d"
				"$(jdk_home "$jdk")/bin/java" -Xmx2g \
					-agentpath:"$lib=interval=$iv,format=collapsed,file=$d/p.collapsed" \
					-cp "$RUN/classes" ShortThreads "$threads" "$kib" "$conc" "$every" > "$d/out" 2>&1 ||
					{ echo "threads bench: JDK $jdk $iv $b rep $rep exited $?" >&2; continue; }
				python3 "$HERE/report.py" row "$d" "$jdk,$iv,$threads,$kib,$every,$b,$rep" >> "$RUN/raw.csv"
			done
		done <<< "$CONFIGS"
	done
done
cp "$RUN/raw.csv" "${OUT%.md}.csv"
python3 "$HERE/report.py" table "$RUN/raw.csv" "$(git -C "$ROOT" rev-parse --short HEAD)" \
	"OLD=<old .so> bash bench/threads/run.sh (JDKS=\"$JDKS\" REPS=$REPS)" > "$OUT"
echo "threads bench: wrote $OUT (runs in $RUN)" >&2
