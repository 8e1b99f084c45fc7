#!/usr/bin/env bash
# What recording the history costs (issue: GC liveness over time): CPU per
# record (the agent thread's sweep with the per-site sums, marking and
# young records alike) and memory held, from the profile's "history:"
# comment, on LeakTarget (a 32 MiB steady set turning over, garbage, a
# 1 MiB/s leak) with G1 at three sampling intervals (more live samples
# tracked, more work per record). REPS runs each; medians with min..max.
# Writes docs/history.md. Usage: bash bench/history/run.sh [REPS=3] [SECONDS=30]
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${REPS:-3}
SECONDS_RUN=${SECONDS:-30}
HP=${HP:-$PWD/build/libheapprobe.so}
JAVA=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
CLASSES=build/test/classes
out=$(mktemp -d)
rows=()
for interval in 512k 64k 8k; do
	us=() bytes=() records=() tracked=() markings=()
	for rep in $(seq "$REPS"); do
		f="$out/$interval-$rep.txt"
		"$JAVA" -Xmx1g -XX:+UseG1GC "-agentpath:$HP=period=5,interval=$interval,format=text,file=$f" \
			-cp "$CLASSES" LeakTarget leak "$SECONDS_RUN" 1024 >/dev/null 2>&1
		line=$(grep '^  history:' "$f")
		us+=("$(echo "$line" | sed -E 's/.*\(([0-9.]+) us per record\).*/\1/')")
		bytes+=("$(echo "$line" | sed -E 's/.* ([0-9]+) bytes held.*/\1/')")
		records+=("$(echo "$line" | sed -E 's/.*kept of ([0-9]+) made.*/\1/')")
		tracked+=("$(grep -o '[0-9]* live samples tracked' "$f" | head -1 | cut -d' ' -f1)")
		markings+=("$(grep '^history:' "$f" | grep -o '^history: [0-9]*' | cut -d' ' -f2)")
	done
	med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%s (%s..%s)", m, a[1], a[NR]}'; }
	rows+=("| $interval | $(med "${tracked[@]}") | $(med "${records[@]}") | $(med "${markings[@]}") | $(med "${us[@]}") | $(med "${bytes[@]}") |")
	echo "interval $interval: us/record ${us[*]}; bytes ${bytes[*]}; records ${records[*]}; tracked ${tracked[*]}" >&2
done
{
	echo "# What recording the history costs"
	echo
	echo "Command: \`REPS=$REPS SECONDS=$SECONDS_RUN bash bench/history/run.sh\` ($(date -u +%Y-%m-%d), $(nproc) CPUs, $("$JAVA" -version 2>&1 | head -1))."
	echo "Workload: \`LeakTarget leak $SECONDS_RUN 1024\` on G1, -Xmx1g: a 32 MiB steady set turning over, garbage, a 1 MiB/s leak; \`period=5\` (a marking asked for every 5 s, G1's own cycles besides)."
	echo "Each cell: median (min..max) of $REPS runs, read from the exit profile's \`history:\` comment."
	echo
	echo "| interval | live samples tracked at exit | records made | marking records | CPU per record, us | bytes held |"
	echo "|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "A record is made by the agent thread, never on the allocation path: after a collection it sweeps the"
	echo "live table to free dead samples' weak references (it did so before the history existed) and, when a"
	echo "marking has completed since the last record or a second has passed, adds each live sample's bytes to"
	echo "its site's sums; the CPU above is that whole sweep plus building the record. Memory: the site-slot"
	echo "index (4 bytes x 131072 slots = 512 KiB, allocated at start), the per-site accumulators, and per record"
	echo "28 bytes per site with bytes in it (at most 2048 sites per marking record, 256 per young record; 256"
	echo "records of each kind: 16.4 MiB at the very worst, with 2304 sites every record). The CPU grows with the
live samples tracked (about 150 ns each in the 8k row: a JNI IsSameObject and two additions); at the
default cap of 100000 tracked samples that is about 15 ms per record, and records come at most once a
second plus once per marking."
} >docs/history.md
rm -rf "$out"
cat docs/history.md
