#!/usr/bin/env bash
# Leak suspects without period= under load (issue 26): LoadService at full
# load with a leak of LEAK_MIB over SECONDS_LOAD at one site (-Dleak), and
# the same without, on each collector; the exit text report's first
# suspect lines. A real leak must be ranked first; without it, no suspect.
#
#   bash bench/load/suspects.sh            # ~4 min on 2 cores
#
# Knobs: GCS [G1GC ParallelGC SerialGC ZGC ShenandoahGC] (JDK 17, -XX:+Use<GC>),
# or CONFIGS: lines "name|jdk|flags" as bench/load/run.sh's (JDK 11, 21, 25
# from build/jdks); LEAK_MIB [25], SECONDS_LOAD [20], CACHE_MIB [190], OUT
# [docs/load-suspects.md].
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
GCS=${GCS:-"G1GC ParallelGC SerialGC ZGC ShenandoahGC"}
LEAK_MIB=${LEAK_MIB:-25}; SECONDS_LOAD=${SECONDS_LOAD:-20}; CACHE_MIB=${CACHE_MIB:-190}
OUT=${OUT:-$ROOT/docs/load-suspects.md}
JDK17=/usr/lib/jvm/java-17-openjdk-amd64
jdk_home() { case $1 in 17) echo $JDK17 ;; *) echo "$ROOT/build/jdks/$1" ;; esac; }
if [ -z "${CONFIGS:-}" ]; then
	CONFIGS=""
	for gc in $GCS; do CONFIGS+="$gc|17|-XX:+Use$gc"$'\n'; done
fi
[ -f "$ROOT/build/libheapprobe.so" ] || { echo "suspects: build/libheapprobe.so missing: run bash scripts/demo.sh first" >&2; exit 1; }
RUN=$(mktemp -d /tmp/hp-suspects-XXXXXX)
cp "$(readlink -f "$ROOT/build/libheapprobe.so")" "$RUN/hp.so"
"$JDK17/bin/javac" --release 11 -d "$RUN/classes" "$ROOT/test/java/LoadService.java"
{
	echo "# Leak suspects without period= under load"
	echo
	echo "Commit $(git -C "$ROOT" rev-parse --short HEAD), $(date -u +%F), $(nproc) CPUs. Command: \`CONFIGS=\"$(echo "$CONFIGS" | sed '/^$/d' | tr '\n' ';')\" LEAK_MIB=$LEAK_MIB SECONDS_LOAD=$SECONDS_LOAD CACHE_MIB=$CACHE_MIB bash bench/load/suspects.sh\`."
	echo
	echo "LoadService ($CACHE_MIB MiB cache turning over, garbage, no System.gc()), -Xmx3g, default options (no period=), format=text; one run each. The exit report's first suspect line, with the leak and without."
	echo
	echo "| collector | JDK | leak | first suspect (none: empty) |"
	echo "|---|---|---|---|"
} > "$OUT"
while IFS='|' read -r gc jdk flags; do
	[ -n "$gc" ] || continue
	for leak in "$LEAK_MIB" 0; do
		d="$RUN/$gc-$jdk-$leak"; mkdir -p "$d"
		# shellcheck disable=SC2086
		timeout $((SECONDS_LOAD + 120)) "$(jdk_home "$jdk")/bin/java" -Xmx3g $flags -Dleak="$leak" \
			-agentpath:"$RUN/hp.so=format=text,file=$d/p.txt,log=$d/log" -cp "$RUN/classes" \
			LoadService "$CACHE_MIB" "$SECONDS_LOAD" "$d/truth" >"$d/out" 2>&1 || echo "suspects: $gc $jdk leak=$leak exited $?" >&2
		first=$(sed -n '/^leak suspects:/,$p' "$d/p.txt" 2>/dev/null | sed -n 2p | cut -c1-160 | tr '|' '/')
		echo "| $gc | $jdk | ${leak} MiB | ${first:-none} |" >> "$OUT"
		echo "suspects: $gc $jdk leak=$leak: ${first:-none}" >&2
	done
done <<< "$CONFIGS"
echo "suspects: wrote $OUT" >&2
