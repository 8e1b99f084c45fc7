#!/usr/bin/env bash
# The JVM's own allocation sampler (JEP 331) against bytes known by
# construction: bench/sampler/HeldSet.java allocates a mix like
# LoadService's (byte[] of 64..1983 bytes held, 4 of 64..4159 bytes of
# garbage per replacement), single-threaded, and holds the set; heapprobe's
# exit profile (after its marking) gives the held set's live bytes and the
# samples taken. Compared: the live bytes with the held bytes, and the
# samples with their expectation, the sum of 1 - e^{-size/interval} over
# the objects allocated (HeldSet counts it). A sampler that takes samples
# at the rate it was asked shows ~0% on both, within sqrt(interval / held)
# and 1 / sqrt(samples).
#
#   bash bench/sampler/run.sh            # ~4 min on 2 cores
#
# Knobs: JDKS [11 17 21 25], INTERVALS [64k 512k], REPS [5], GC [G1GC],
# N [190000], ROUNDS [1000000], OUT [docs/sampler-rate.md].
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
JDKS=${JDKS:-"11 17 21 25"}; INTERVALS=${INTERVALS:-"64k 512k"}; REPS=${REPS:-5}; GC=${GC:-G1GC}
N=${N:-190000}; ROUNDS=${ROUNDS:-1000000}; OUT=${OUT:-$ROOT/docs/sampler-rate.md}
JDK17=/usr/lib/jvm/java-17-openjdk-amd64
jdk_home() { case $1 in 17) echo $JDK17 ;; *) echo "$ROOT/build/jdks/$1" ;; esac; }
[ -f "$ROOT/build/libheapprobe.so" ] || { echo "sampler bench: build/libheapprobe.so missing: run bash scripts/demo.sh first" >&2; exit 1; }
RUN=$(mktemp -d /tmp/hp-sampler-XXXXXX)
"$JDK17/bin/javac" --release 11 -d "$RUN/classes" "$HERE/HeldSet.java"
echo "jdk,interval,rep,held,allocated,expected,view,samples" > "$RUN/raw.csv"
for rep in $(seq 1 "$REPS"); do
	for jdk in $JDKS; do
		for iv in $INTERVALS; do
			d="$RUN/$jdk-$iv-$rep"; mkdir -p "$d"
			"$(jdk_home "$jdk")/bin/java" -Xmx3g "-XX:+Use$GC" \
				-agentpath:"$ROOT/build/libheapprobe.so=format=text,file=$d/p.txt,interval=$iv" \
				-cp "$RUN/classes" HeldSet "$N" "$ROUNDS" "$(python3 "$HERE/report.py" ivbytes "$iv")" > "$d/out" 2>&1 || { echo "sampler bench: JDK $jdk $iv rep $rep exited $?" >&2; continue; }
			python3 "$HERE/report.py" row "$d" "$jdk" "$iv" "$rep" >> "$RUN/raw.csv"
		done
	done
done
cp "$RUN/raw.csv" "${OUT%.md}.csv"
python3 "$HERE/report.py" table "$RUN/raw.csv" "$(git -C "$ROOT" rev-parse --short HEAD)" \
	"bash bench/sampler/run.sh (JDKS=\"$JDKS\" INTERVALS=\"$INTERVALS\" REPS=$REPS GC=$GC N=$N ROUNDS=$ROUNDS)" > "$OUT"
echo "sampler bench: wrote $OUT" >&2
