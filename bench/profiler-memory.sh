#!/usr/bin/env bash
# RSS the profiler adds with ~100k tracked live samples: the same program
# with and without the agent, interleaved, repeated; medians and spread.
# usage: bench/profiler-memory.sh [reps]   (writes nothing; paste into docs/)
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
JAVA=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
out=$(mktemp -d)
javac -d "$out" bench/LiveRetain.java
run() { "$JAVA" -Xms1g -Xmx1g -XX:+UseG1GC "$@" -cp "$out" LiveRetain 160 2>"$out/err" | awk '/VmRSS/ {print $2}'; }
for i in $(seq "$reps"); do
	base=$(run)
	agent=$(run -agentpath:"$PWD/build/libheapprobe.so=interval=1k,max_live=100000,file=$out/p.pb.gz")
	tracked=$(grep -o '[0-9]* samples that survived' "$out/err" | awk '{print $1}')
	echo "$base $agent $tracked"
done | python3 -c '
import sys, statistics as st
rows = [list(map(int, l.split())) for l in sys.stdin if l.strip()]
d = [(a - b) / 1024 for b, a, _ in rows]
print("repetitions:", len(rows))
print("RSS without agent (MiB): median %.1f" % (st.median([b for b, _, _ in rows]) / 1024))
print("RSS with agent    (MiB): median %.1f" % (st.median([a for _, a, _ in rows]) / 1024))
print("added (MiB): median %.1f [min %.1f, max %.1f]" % (st.median(d), min(d), max(d)))
print("tracked live samples at exit: median %d" % st.median([t for _, _, t in rows]))
'
