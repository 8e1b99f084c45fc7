#!/usr/bin/env bash
# Builds heapprobe and runs the bundled example under the profiler agent:
# prints the info report, the top live allocation sites, and writes
# build/heapdemo.html (open it in a browser) and build/heapdemo.pb.gz
# (go tool pprof -top build/heapdemo.pb.gz).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
JAVA_HOME=${HP_JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build
mkdir -p build/examples
"$JAVA_HOME/bin/javac" -d build/examples examples/HeapDemo.java
agent="$PWD/build/libheapprobe.so"
"$JAVA_HOME/bin/java" -agentpath:"$agent=info,interval=128k,format=collapsed,file=build/heapdemo.collapsed" \
	-cp build/examples HeapDemo
echo "== top live allocation sites (bytes alive at the marking asked for before the profile)"
sort -t' ' -k2 -n -r build/heapdemo.collapsed | head -5 |
	awk '{n = split($1, f, ";"); cls = ""
		if (n > 1 && f[n] ~ /_\[i\]$/) { cls = " (" substr(f[n], 1, length(f[n]) - 4) ")"; n-- }
		printf "%12d  %s%s\n", $2, f[n], cls}'
"$JAVA_HOME/bin/java" -agentpath:"$agent=interval=128k,format=html,file=build/heapdemo.html" -cp build/examples HeapDemo >/dev/null
"$JAVA_HOME/bin/java" -agentpath:"$agent=interval=128k,file=build/heapdemo.pb.gz" -cp build/examples HeapDemo >/dev/null
echo "== wrote build/heapdemo.html and build/heapdemo.pb.gz"
