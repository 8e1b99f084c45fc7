#!/usr/bin/env bash
# What the release costs a user, beside async-profiler 4.6: the size of
# each artifact, and the start-up time the agent adds to a JVM that prints
# one line and exits (java -cp Hello), in one interleaved run: for each
# repetition every configuration once, in turn, so that machine drift
# falls on all alike; medians with min-max. Writes docs/release.md.
#   REPS (default 15), JAVA (default Debian's JDK 17)
# Needs dist/ (scripts/package.sh) and reaches Maven Central for
# tools.profiler:async-profiler:4.6 (the jar carries linux-x64's library).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${REPS:-15}
JAVA=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
JAVAC=$(dirname "$JAVA")/javac
version=$(sed -n 's/^project(heapprobe VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
tar=dist/heapprobe-$version-linux-x64.tar.gz
jar=dist/heapprobe-$version.jar
for f in "$tar" "$jar"; do [ -f "$f" ] || { echo "release bench: $f missing: run scripts/package.sh" >&2; exit 1; }; done
cache=bench/release/.cache
mkdir -p "$cache"
AP_VER=4.6
apjar=$cache/async-profiler-$AP_VER.jar
[ -s "$apjar" ] || curl -fsSL --retry 3 -o "$apjar" \
	"https://repo1.maven.org/maven2/tools/profiler/async-profiler/$AP_VER/async-profiler-$AP_VER.jar"
aplib=$cache/libasyncProfiler.so
[ -s "$aplib" ] || unzip -p "$apjar" "$(unzip -l "$apjar" | awk '/linux-x64\/libasyncProfiler.so/ {print $4}')" >"$aplib"
[ -s "$aplib" ] || { echo "release bench: no linux-x64/libasyncProfiler.so in $apjar" >&2; exit 1; }
rm -rf "$cache/x" && mkdir -p "$cache/x" && tar -C "$cache/x" -xzf "$tar"
hp=$(ls "$cache"/x/*/lib/libheapprobe.so)
mkdir -p "$cache/classes"
"$JAVAC" -d "$cache/classes" bench/peers/Hello.java
out=$cache/out
mkdir -p "$out"
declare -A opt=(
	[none]=""
	[heapprobe]="-agentpath:$hp=file=$out/hp.pb.gz"
	[heapprobe-jar]="-javaagent:$jar=file=$out/hpj.pb.gz -Dheapprobe.dir=$cache/extract"
	[async-profiler]="-agentpath:$aplib=start,event=alloc,file=$out/ap.jfr"
)
configs=(none heapprobe heapprobe-jar async-profiler)
declare -A times
for ((i = 0; i < REPS; i++)); do
	for c in "${configs[@]}"; do
		s=$(date +%s%N)
		# shellcheck disable=SC2086
		"$JAVA" -Xshare:auto ${opt[$c]} -cp "$cache/classes" Hello >/dev/null 2>&1 || { echo "$c failed" >&2; exit 1; }
		e=$(date +%s%N)
		times[$c]+="$(( (e - s) / 1000000 )) "
	done
done
med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {printf "%d [%d, %d]", a[int((NR+1)/2)], a[1], a[NR]}'; }
size() { stat -c %s "$1"; }
{
	echo "# The release: sizes and start-up"
	echo
	echo "Command: \`REPS=$REPS bash bench/release/run.sh\` at $(git rev-parse --short HEAD), $(date -u +%F), $(nproc) CPUs, $("$JAVA" -version 2>&1 | head -1)."
	echo
	echo "| artifact | bytes |"
	echo "|---|---|"
	for f in "$tar" dist/heapprobe-$version-linux-arm64.tar.gz "$jar"; do echo "| $(basename "$f") | $(size "$f") |"; done
	for plat in linux-x64 linux-arm64; do
		st=build/stage/heapprobe-$version-$plat
		echo "| libheapprobe.so ($plat) | $(size "$(readlink -f "$st/lib/libheapprobe.so")") |"
		echo "| libheapprobe.a ($plat) | $(size "$st/lib/libheapprobe.a") |"
		echo "| heapprobe command ($plat) | $(size "$st/bin/heapprobe") |"
	done
	echo "| async-profiler $AP_VER jar | $(size "$apjar") |"
	echo "| libasyncProfiler.so (linux-x64) | $(size "$aplib") |"
	echo
	echo "Start-up: wall time of \`java -cp . Hello\` (prints one line, exits; the agent writes its profile at exit), ms, median [min, max] of $REPS, interleaved:"
	echo
	echo "| configuration | ms | added to none (medians) |"
	echo "|---|---|---|"
	base=$(echo "${times[none]}" | med | cut -d' ' -f1)
	for c in "${configs[@]}"; do
		m=$(echo "${times[$c]}" | med)
		echo "| $c | $m | $(( ${m%% *} - base )) |"
	done
	echo
	echo "heapprobe: default options (interval 512k, live view, profile at exit); heapprobe-jar: the same through -javaagent (the natives extracted once per content hash and reused after the first run: what remains is java.instrument, the jar and its classes); async-profiler: start,event=alloc, JFR at exit."
} >docs/release.md
cat docs/release.md
