#!/usr/bin/env bash
# Paired in-process overhead of the profiler at its default interval (see
# Toggle.java for why phases in one JVM and not separate runs).
#
#   bash bench/overhead/run.sh            # ~10 min; writes docs/overhead-paired.md
#
# Knobs: ROUNDS (phases per config, default 30), THREADS (4), ITERS (per thread
# per phase, 1500000: ~1.3 s of CPU), INTERVAL (512k = 524288), CONFIGS
# (extra heapprobe option sets, see below), OUT.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
ROUNDS=${ROUNDS:-30}; THREADS=${THREADS:-4}; ITERS=${ITERS:-1500000}; INTERVAL=${INTERVAL:-524288}
OUT=${OUT:-$ROOT/docs/overhead-paired.md}
HP=$ROOT/build/libheapprobe.so
TOGGLE=$ROOT/build/bench/libtoggle_sampler.so
if [ ! -f "$HP" ] || [ ! -f "$TOGGLE" ]; then
	[ -f "$ROOT/build/build.ninja" ] || cmake -S "$ROOT" -B "$ROOT/build" -G Ninja >/dev/null
	cmake --build "$ROOT/build" >/dev/null
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$JAVA_HOME/bin/javac" -nowarn -d "$WORK" "$HERE/Toggle.java" "$ROOT/bench/peers/AllocBench.java"
# A config is NAME=LIB:ON:OFF (attach LIB with ON before the phase, OFF after).
CFG=(none
	"empty=$TOGGLE:$INTERVAL:off"
	"heapprobe=$HP:interval=$INTERVAL,file=$WORK/p.pb.gz:stop")
for extra in ${CONFIGS:-}; do CFG+=("heapprobe-${extra//[=,]/_}=$HP:interval=$INTERVAL,$extra,file=$WORK/q.pb.gz:stop"); done
CMD=("$JAVA_HOME/bin/java" -Djdk.attach.allowAttachSelf=true -Xlog:disable -cp "$WORK" Toggle "$ROUNDS" "$THREADS" "$ITERS" "${CFG[@]}")
echo "[$(date +%T)] ${CMD[*]}" >&2
load0=$(cut -d' ' -f1-3 /proc/loadavg)
"${CMD[@]}" >"$WORK/phases.txt" 2>"$WORK/stderr.txt" || { tail -20 "$WORK/stderr.txt"; exit 1; }

python3 "$HERE/report.py" "$WORK/phases.txt" "$OUT" "${CMD[*]}" "$load0" "$(cut -d' ' -f1-3 /proc/loadavg)" "$INTERVAL"
echo "wrote $OUT" >&2
