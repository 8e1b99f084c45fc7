#!/usr/bin/env bash
# Builds heapprobe and runs the bundled example with the agent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
JAVA_HOME=${HP_JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build
mkdir -p build/examples
"$JAVA_HOME/bin/javac" -d build/examples examples/HeapDemo.java
"$JAVA_HOME/bin/java" -agentpath:"$PWD/build/libheapprobe.so=info" -cp build/examples HeapDemo
