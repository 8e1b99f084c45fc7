#!/usr/bin/env bash
# The live view in a service in steady state, at the default interval, on
# every collector and JDK: test/java/SteadyState.java (512 MiB live set
# turning over, old garbage building up, no System.gc()), a profile asked
# for with jcmd while the program is idle, then a heap walk
# (GC.class_histogram). Truth: the program's construction for its site,
# the walk for the total. Optionally beside an older build of heapprobe
# (OLD=path/to/libheapprobe.so), in the same run, interleaved.
#
#   bash bench/steady/run.sh                  # ~45 min on 2 cores (27 configurations)
#   OLD=/tmp/hp-old/build/libheapprobe.so REPS=5 bash bench/steady/run.sh
#
# Knobs: REPS [5], OLD_REPS [2], LIVE_MIB [512], SECONDS_CHURN [8],
# CONFIGS (see configs below), HP [build/libheapprobe.so, copied first so a
# rebuild cannot pull it from under the run], OUT [docs/steady-state.md],
# RAW [docs/bench-raw/steady-heapprobe.csv].
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
REPS=${REPS:-5}; OLD_REPS=${OLD_REPS:-2}; LIVE_MIB=${LIVE_MIB:-512}; SECONDS_CHURN=${SECONDS_CHURN:-8}
OUT=${OUT:-$ROOT/docs/steady-state.md}; RAW=${RAW:-$ROOT/docs/bench-raw/steady-heapprobe.csv}
RUN=$(mktemp -d /tmp/hp-steady-bench-XXXXXX)
cp "$(readlink -f "${HP:-$ROOT/build/libheapprobe.so}")" "$RUN/new.so"
[ -n "${OLD:-}" ] && cp "$(readlink -f "$OLD")" "$RUN/old.so"
JDK17=/usr/lib/jvm/java-17-openjdk-amd64
jdk_home() { case $1 in 17) echo $JDK17 ;; *) echo "$ROOT/build/jdks/$1" ;; esac; }
"$JDK17/bin/javac" --release 11 -d "$RUN/classes" "$ROOT/test/java/SteadyState.java"
# name|jdk|jvm flags|agent options|attach (1: agent loaded late, into the built live set)
CONFIGS=${CONFIGS:-"
g1|17|-XX:+UseG1GC||0
g1-young-only-6g|17|-XX:+UseG1GC -Xmx6g||0
g1-2m-humongous|17|-XX:+UseG1GC -XX:G1HeapRegionSize=2m -Dhuge=48||0
g1-attach|17|-XX:+UseG1GC||1
parallel|17|-XX:+UseParallelGC|mark=concurrent|0
parallel-markfull|17|-XX:+UseParallelGC|mark=full|0
serial|17|-XX:+UseSerialGC|mark=concurrent|0
serial-markfull|17|-XX:+UseSerialGC|mark=full|0
z|17|-XX:+UseZGC||0
shenandoah|17|-XX:+UseShenandoahGC||0
g1|11|-XX:+UseG1GC||0
parallel-markfull|11|-XX:+UseParallelGC|mark=full|0
serial-markfull|11|-XX:+UseSerialGC|mark=full|0
z|11|-XX:+UseZGC||0
shenandoah|11|-XX:+UseShenandoahGC||0
g1|21|-XX:+UseG1GC||0
parallel-markfull|21|-XX:+UseParallelGC|mark=full|0
serial-markfull|21|-XX:+UseSerialGC|mark=full|0
z|21|-XX:+UseZGC||0
z-generational|21|-XX:+UseZGC -XX:+ZGenerational||0
shenandoah|21|-XX:+UseShenandoahGC||0
g1|25|-XX:+UseG1GC||0
parallel-markfull|25|-XX:+UseParallelGC|mark=full|0
serial-markfull|25|-XX:+UseSerialGC|mark=full|0
z-generational|25|-XX:+UseZGC||0
shenandoah|25|-XX:+UseShenandoahGC||0
shenandoah-generational|25|-XX:+UseShenandoahGC -XX:ShenandoahGCMode=generational||0
"}
mkdir -p "$(dirname "$RAW")"
echo "config,jdk,lib,rep,truth_keep,walk_total,walk_longs,est_keep,est_total,est_midlife,est_garbage,recent,baseline,dump_ms,huge_truth,est_huge,keep_since_attach" > "$RAW"

one() {   # name jdk flags opts attach lib rep
	local name=$1 jdk=$2 flags=$3 opts=$4 attach=$5 lib=$6 rep=$7
	local home; home=$(jdk_home "$jdk")
	local w="$RUN/$name-$jdk-$lib-$rep"; mkdir -p "$w"
	local aopts="format=collapsed,file=$w/p.collapsed${opts:+,$opts}"
	[ "$lib" = new ] && aopts="$aopts,verbose"     # the estimator's account in the log (older builds: always)
	local agent=() extra=()
	if [ "$attach" = 1 ]; then extra=("$w/attach"); else agent=("-agentpath:$RUN/$lib.so=$aopts"); fi
	# shellcheck disable=SC2086
	"$home/bin/java" -Xmx2g -XX:+UnlockExperimentalVMOptions $flags "${agent[@]}" -cp "$RUN/classes" SteadyState \
		"$LIVE_MIB" "$SECONDS_CHURN" "$w/stop" 32 "${extra[@]}" >"$w/out.txt" 2>&1 &
	local pid=$!
	if [ "$attach" = 1 ]; then
		until grep -q '^attach$' "$w/out.txt"; do sleep 0.2; kill -0 $pid 2>/dev/null || return 1; done
		"$home/bin/jcmd" $pid JVMTI.agent_load "$RUN/$lib.so" "\"$aopts\"" >"$w/attach.txt" 2>&1
		touch "$w/attach"
	fi
	until grep -q '^ready$' "$w/out.txt"; do sleep 0.2; kill -0 $pid 2>/dev/null || { tail "$w/out.txt" >&2; return 1; }; done
	local t0 t1; t0=$(date +%s%N)
	"$home/bin/jcmd" $pid JVMTI.agent_load "$RUN/$lib.so" dump >"$w/dump.txt" 2>&1
	t1=$(date +%s%N)
	# The dump's profile, kept before the exit profile replaces it (same
	# file; until the twenty-second session the exit one was read here).
	for _ in $(seq 600); do grep -q '^heapprobe: wrote ' "$w/out.txt" && break; sleep 0.1; done
	cp "$w/p.collapsed" "$w/dump.collapsed" 2>/dev/null
	"$home/bin/jcmd" $pid GC.class_histogram >"$w/histo.txt" 2>&1
	touch "$w/stop"; wait $pid || true
	python3 - "$w" "$name" "$jdk" "$lib" "$rep" $(( (t1 - t0) / 1000000 )) >>"$RAW" <<'PY'
import re, sys
w, name, jdk, lib, rep, dump_ms = sys.argv[1:]
out = open(f"{w}/out.txt").read()
def truth(k):
    m = re.search(rf"^{k}: (\d+)", out, re.M); return int(m.group(1)) if m else 0
def site(leaf):
    s = 0.0
    for line in open(f"{w}/dump.collapsed"):
        stack, _, v = line.rstrip("\n").rpartition(" ")
        fr = stack.split(";")
        if fr and fr[-1].endswith("_[i]"): fr = fr[:-1]
        if leaf is None or (fr and fr[-1] == leaf): s += float(v)
    return s
histo = open(f"{w}/histo.txt").read()
walk_total = int(re.search(r"^Total\s+\d+\s+(\d+)", histo, re.M).group(1))
# dead space the collector filled (JDK 19+: jdk.internal.vm.Filler*) is no object of the program
walk_total -= sum(int(b) for b in re.findall(r"^\s*\d+:\s+\d+\s+(\d+)\s+\S*jdk\.internal\.vm\.Filler", histo, re.M))
walk_longs = int(re.search(r"^\s*\d+:\s+\d+\s+(\d+)\s+\[J\b", histo, re.M).group(1))
# the comment of the profile written on request (new builds)
m = re.search(r"recent, not yet verified: (\d+) bytes", out); recent = int(m.group(1)) if m else -1
m = re.search(r"not covered: the (\d+) bytes", out); base = int(m.group(1)) if m else -1
print(",".join(map(str, [name, jdk, lib, rep, truth("truth.keep"), walk_total, walk_longs,
      round(site("SteadyState.keep")), round(site(None)), round(site("SteadyState.midlife")),
      round(site("SteadyState.garbage")), recent, base, dump_ms, truth("truth.huge"),
      round(site("SteadyState.keepHuge")), truth("truth.keep_since_attach")])))
PY
	rm -rf "$w"
}

start=$(date -u +"%Y-%m-%d %H:%M UTC")
for rep in $(seq 1 "$REPS"); do
	while IFS='|' read -r name jdk flags opts attach; do
		[ -n "$name" ] || continue
		[ -x "$(jdk_home "$jdk")/bin/java" ] || { echo "skip $name: no JDK $jdk" >&2; continue; }
		libs="new"; [ -e "$RUN/old.so" ] && [ "$rep" -le "$OLD_REPS" ] && [ -z "$opts" ] && libs="new old"
		for lib in $(python3 -c 'import random,sys; a=sys.argv[2:]; random.Random(sys.argv[1]).shuffle(a); print(" ".join(a))' "$rep-$name-$jdk" $libs); do
			echo "[$(date +%T)] $name jdk$jdk $lib rep $rep" >&2
			one "$name" "$jdk" "$flags" "$opts" "$attach" "$lib" "$rep" || echo "FAILED $name $jdk $lib $rep" >&2
		done
	done <<<"$CONFIGS"
done
python3 "$HERE/report.py" "$RAW" "$start" "REPS=$REPS OLD_REPS=$OLD_REPS LIVE_MIB=$LIVE_MIB SECONDS_CHURN=$SECONDS_CHURN${OLD:+ OLD=$OLD} bash bench/steady/run.sh" >"$OUT"
rm -rf "$RUN"
echo "wrote $OUT and $RAW" >&2
