#!/usr/bin/env bash
# Paired in-process overhead of the profiler at its default interval (see
# Toggle.java for why phases in one JVM and not separate runs).
#
#   bash bench/overhead/run.sh            # ~12 min; writes docs/overhead-paired.md
#
# Knobs: ROUNDS (phases per config, default 20), THREADS (4), ITERS (per thread
# per phase, 1500000: ~2.3 s of CPU), INTERVALS (bytes, default "524288 32768":
# the default and a small one where the per-sample cost stands out of the
# noise), CONFIGS (extra heapprobe option sets, e.g. "live=false"), OUT, HP
# (the library under test), WORKLOAD: alloc (AllocBench, default), javac
# (javac in-process compiling JAVAC_MODULE's sources from the JDK's src.zip,
# ITERS times a phase) or vthreads (VThreadServer.java: ITERS requests a
# phase, each on a virtual thread; JAVA_HOME must be JDK 21+).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
ROUNDS=${ROUNDS:-20}; THREADS=${THREADS:-4}; ITERS=${ITERS:-1500000}; INTERVALS=${INTERVALS:-524288 32768}
OUT=${OUT:-$ROOT/docs/overhead-paired.md}
HP=${HP:-$ROOT/build/libheapprobe.so}   # a copy keeps a rebuild from pulling the library from under the run
TOGGLE=$ROOT/build/bench/libtoggle_sampler.so
if [ ! -f "$HP" ] || [ ! -f "$TOGGLE" ]; then
	[ -f "$ROOT/build/build.ninja" ] || cmake -S "$ROOT" -B "$ROOT/build" -G Ninja >/dev/null
	cmake --build "$ROOT/build" >/dev/null
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
WORKLOAD=${WORKLOAD:-alloc}
source "$HERE/workload.sh"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
ARGS=()
for INTERVAL in $INTERVALS; do
	# A config is NAME=LIB:ON:OFF (attach LIB with ON before the phase, OFF after).
	CFG=(none
		"empty=$TOGGLE:$INTERVAL:off"
		"heapprobe=$HP:interval=$INTERVAL,file=$WORK/p.pb.gz:stop")
	for extra in ${CONFIGS:-}; do
		CFG+=("heapprobe-${extra//[=,]/_}=$HP:interval=$INTERVAL,$extra,file=$WORK/q.pb.gz:stop")
	done
	CMD=("$JAVA_HOME/bin/java" -Djdk.attach.allowAttachSelf=true -Xlog:disable "${WFLAGS[@]}" -cp "$WORK" Toggle "$ROUNDS" "$THREADS" "$ITERS" "${CFG[@]}")
	echo "[$(date +%T)] ${CMD[*]}" >&2
	"${CMD[@]}" >"$WORK/phases-$INTERVAL.txt" 2>"$WORK/stderr.txt" || { tail -20 "$WORK/stderr.txt"; exit 1; }
	ARGS+=("$INTERVAL" "$WORK/phases-$INTERVAL.txt" "${CMD[*]}")
done
python3 "$HERE/report.py" "$OUT" "$load0" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(nproc)" \
	"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')" \
	"$("$JAVA_HOME/bin/java" -version 2>&1 | sed -n 2p)" "$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)" "${ARGS[@]}"
echo "wrote $OUT" >&2
