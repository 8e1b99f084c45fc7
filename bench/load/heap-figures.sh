#!/usr/bin/env bash
# What the heap-usage figures say while a service works: LoadService (190
# MiB cache turned over ~4 times a second, no System.gc(), -Xmx3g) under
# each collector, `heapprobe PID info` read READS times during the load;
# each reading's post-GC figure (usage.post_gc: used, what it is, where it
# came from) and the marking's own live bytes (marking.live) beside the
# cache's bytes by construction at that moment (LoadService's truth file,
# every 100 ms). The JVM's own objects add a few MiB to the truth. `info`
# opens a probe of its own in the JVM, apart from the agent's: it has seen
# no GC event, so G1's figure there comes from the heap's fields.
#
#   bash bench/load/heap-figures.sh          # ~2 min; prints a Markdown table
#
# Knobs: CONFIGS ("name|jdk|flags; ..."), READS [4], SECONDS_LOAD [16].
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
READS=${READS:-4}; SECONDS_LOAD=${SECONDS_LOAD:-16}
CONFIGS=${CONFIGS:-"g1|17|-XX:+UseG1GC; shenandoah|17|-XX:+UseShenandoahGC; z|17|-XX:+UseZGC; z-generational|21|-XX:+UseZGC -XX:+ZGenerational; shenandoah-generational|25|-XX:+UseShenandoahGC -XX:ShenandoahGCMode=generational"}
CLI=$ROOT/build/heapprobe
LIB=$(readlink -f "$ROOT/build/libheapprobe.so")
[ -x "$CLI" ] && [ -f "$LIB" ] || { echo "heap figures: build/ missing: run bash scripts/demo.sh first" >&2; exit 1; }
jdk_home() { case $1 in 17) echo /usr/lib/jvm/java-17-openjdk-amd64 ;; *) echo "$ROOT/build/jdks/$1" ;; esac; }
RUN=$(mktemp -d /tmp/hp-heap-figures-XXXXXX)
"$(jdk_home 17)/bin/javac" --release 11 -d "$RUN/classes" "$ROOT/test/java/LoadService.java"
dirty=$(git -C "$ROOT" status --porcelain --untracked-files=no | grep -q . && echo " with the working tree's changes" || true)
echo "Commit $(git -C "$ROOT" rev-parse --short HEAD)$dirty, $(date -u +%Y-%m-%d). Command: \`bash bench/load/heap-figures.sh\` (READS=$READS)."
echo
echo "| collector | JDK | cache by construction (MiB) | post-GC figure (MiB) | what it is, from | the markings' own live bytes (MiB) |"
echo "|---|---|---|---|---|---|"
IFS=';' read -ra cfgs <<< "$CONFIGS"
for cfg in "${cfgs[@]}"; do
	IFS='|' read -r name jdk flags <<< "$(echo "$cfg" | sed 's/^ *//')"
	d="$RUN/$name-$jdk"; mkdir -p "$d"
	# shellcheck disable=SC2086
	"$(jdk_home "$jdk")/bin/java" -Xmx3g -XX:+UnlockExperimentalVMOptions $flags -agentpath:"$LIB=file=$d/p.pb.gz,log=$d/log" \
		-cp "$RUN/classes" LoadService 190 "$SECONDS_LOAD" "$d/truth" > "$d/out" 2>&1 &
	jp=$!
	sleep 5
	for i in $(seq 1 "$READS"); do
		"$CLI" "$jp" info > "$d/info-$i" 2>&1 || true
		truth=$({ grep -v end "$d/truth" 2>/dev/null || true; } | tail -1 | awk '{printf "%.0f", $2 / 1048576}')
		python3 - "$d/info-$i" "$name" "$jdk" "$truth" <<'PY'
import re, sys
t = open(sys.argv[1], errors="replace").read()
m = re.search(r"usage.post_gc: used=(\d+) committed=\d+ kind=(\S+) mode=(\S+)", t)
l = re.search(r"marking.live: (\d+) bytes", t)
y = re.search(r"marking.young_live: (\d+) bytes", t)
mark = "%.0f" % (int(l.group(1)) / 1048576) if l else "none"
if l and y:
    mark = "%.0f + %.0f young = %.0f" % (int(l.group(1)) / 1048576, int(y.group(1)) / 1048576,
                                         (int(l.group(1)) + int(y.group(1))) / 1048576)
print("| %s | %s | %s | %s | %s | %s |" % (sys.argv[2], sys.argv[3], sys.argv[4],
      "%.0f" % (int(m.group(1)) / 1048576) if m else "-", "%s, %s" % (m.group(2), m.group(3)) if m else "none", mark))
PY
		sleep 2
	done
	wait "$jp" || echo "heap figures: $name $jdk: java exited $?" >&2
done
