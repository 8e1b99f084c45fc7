#!/usr/bin/env bash
# heapprobe beside its peers, same workloads, same run, interleaved.
#
#   bash bench/peers/run.sh            # full run (~30 min on 2 cores), writes docs/BENCHMARKS.md
#   QUICK=1 bash bench/peers/run.sh    # smoke run (~6 min): fewer agents, fewer repetitions
#
# Knobs (environment; defaults in brackets, QUICK=1 ones second):
#   SECTIONS      which parts run ["overhead startup accuracy usage"]; e.g.
#                 SECTIONS=accuracy runs the accuracy section alone (the report
#                 then has only its tables)
#   REPS          overhead repetitions per workload and agent [7 | 2]
#   WORKLOADS     overhead workloads ["allocbench javac h2"]
#   CONFIGS       agents of the overhead and start-up sections, space-separated,
#                 see agent_flags below [all 12 | 7]
#   START_REPS    start-up runs per agent [10 | 5]
#   ACC_REPS      accuracy runs per agent and accuracy workload [5 | 2]
#   ACC_CONFIGS   agents of the accuracy section [heapprobe, async-profiler
#                 live and alloc, ddprof, each @512k and @32k; JFR]
#   ACC_WORKLOADS accuracy workloads ["retained classmix"]; also steady-g1,
#                 steady-parallel, steady-serial, steady-z, steady-shenandoah =
#                 test/java/SteadyState.java on that collector (a service in
#                 steady state, no System.gc(), profiles at exit; 512k agents,
#                 heapprobe also with mark=full on parallel and serial); retained =
#                 test/java/RetainedSet.java (per site, truth by construction),
#                 classmix = bench/peers/ClassMix.java (per class, truth from a
#                 heap walk, and per site); async-profiler without live has no
#                 live estimate and is not run on classmix
#   USAGE_REPS    UsageBench repetitions [9 | 5]
#   OUT           markdown path [docs/BENCHMARKS.md]
#   RAW           raw-data directory [docs/bench-raw]
#   RUN_DIR       scratch directory of the run, wiped at start [bench/peers/.cache/run]
# A trial that must not touch docs/:
#   SECTIONS=accuracy ACC_REPS=1 OUT=/tmp/b.md RAW=/tmp/b-raw RUN_DIR=/tmp/b-run bash bench/peers/run.sh
#
# Peers come from Maven Central into bench/peers/.cache/ (gitignored):
# async-profiler (tools.profiler:async-profiler:linux-x64), Datadog's
# java-profiler (com.datadoghq:ddprof), H2 (com.h2database:h2) and JDK Mission
# Control's JFR parser (org.openjdk.jmc:flightrecorder). Raw numbers go to
# docs/bench-raw/*.csv; the markdown is generated from them by report.py.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
JAVA=$JAVA_HOME/bin/java
JAVAC=$JAVA_HOME/bin/javac
QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
	REPS=${REPS:-2}; ACC_REPS=${ACC_REPS:-2}; START_REPS=${START_REPS:-5}; USAGE_REPS=${USAGE_REPS:-5}
	CONFIGS=${CONFIGS:-"none empty@512k heapprobe@512k heapprobe@32k async-live@512k ddprof-live@512k jfr-profile"}
else
	REPS=${REPS:-7}; ACC_REPS=${ACC_REPS:-5}; START_REPS=${START_REPS:-10}; USAGE_REPS=${USAGE_REPS:-9}
	CONFIGS=${CONFIGS:-"none empty@512k empty@32k heapprobe@512k heapprobe@32k async-alloc@512k async-alloc@32k async-live@512k async-live@32k ddprof-live@512k ddprof-live@32k jfr-profile"}
fi
WORKLOADS=${WORKLOADS:-"allocbench javac h2"}
SECTIONS=${SECTIONS:-"overhead startup accuracy usage"}
ACC_WORKLOADS=${ACC_WORKLOADS:-"retained classmix"}
ACC_CONFIGS=${ACC_CONFIGS:-"heapprobe@512k heapprobe@32k async-live@512k async-live@32k async-alloc@512k async-alloc@32k ddprof-live@512k ddprof-live@32k jfr-profile"}

H2_VER=2.2.224
JMC_VER=9.1.2

CACHE=$HERE/.cache
RUN=${RUN_DIR:-$CACHE/run}
RAW=${RAW:-$ROOT/docs/bench-raw}
OUT=${OUT:-$ROOT/docs/BENCHMARKS.md}
HP=$ROOT/build/libheapprobe.so
log() { echo "[$(date +%T)] $*" >&2; }
section() { [[ " $SECTIONS " == *" $1 "* ]]; }

# --- prerequisites -----------------------------------------------------------
missing=()
[ -x /usr/bin/time ] || missing+=(time)
command -v unzip >/dev/null || missing+=(unzip)
command -v curl >/dev/null || missing+=(curl)
command -v gcc >/dev/null || missing+=(gcc)
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
[ -x "$JAVAC" ] || missing+=(openjdk-17-jdk-headless)
SRCZIP=$JAVA_HOME/lib/src.zip
[ -e "$SRCZIP" ] || missing+=(openjdk-17-source)
if [ ${#missing[@]} -gt 0 ]; then
	log "installing ${missing[*]}"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ! -f "$HP" ] || [ ! -f "$ROOT/build/bench/libbench_agent.so" ]; then
	log "building heapprobe"
	[ -f "$ROOT/build/build.ninja" ] || cmake -S "$ROOT" -B "$ROOT/build" -G Ninja >/dev/null
	cmake --build "$ROOT/build" >/dev/null
fi

# --- peers and helpers ---------------------------------------------------------
mkdir -p "$CACHE/dl" "$CACHE/lib" "$CACHE/classes"
. "$HERE/fetch.sh"   # fetch, peer_libs (the peers' pins: AP_VER, DD_VER)
peer_libs
H2_JAR=$(fetch com/h2database h2 $H2_VER)
JMC_CP=$(fetch org/openjdk/jmc flightrecorder $JMC_VER):$(fetch org/openjdk/jmc common $JMC_VER)
JMC_CP=$JMC_CP:$(fetch org/owasp/encoder encoder 1.2.3):$(fetch at/yawk/lz4 lz4-java 1.10.2)
EMPTY=$CACHE/lib/libempty_sampler.so
gcc -O2 -Wall -Wextra -shared -fPIC -I"$JAVA_HOME/include" -I"$JAVA_HOME/include/linux" \
	-o "$EMPTY" "$HERE/empty_sampler.c"
CLS=$CACHE/classes
"$JAVAC" -nowarn -d "$CLS" -cp "$H2_JAR:$JMC_CP" "$HERE"/AllocBench.java "$HERE"/Hello.java "$HERE"/H2Load.java \
	"$HERE"/JfrDump.java "$HERE"/ClassMix.java "$ROOT"/test/java/RetainedSet.java "$ROOT"/test/java/SteadyState.java "$ROOT"/bench/UsageBench.java
# javac workload: one module's sources from the JDK's src.zip, compiled
# against the running JDK as a patch of that module. JAVAC_MODULE picks it:
# java.net.http (145 files, ~10 s a run here) by default; jdk.httpserver
# (42 files, ~3 s) was the earlier, shorter choice.
JAVAC_MODULE=${JAVAC_MODULE:-java.net.http}
JSRC=$CACHE/jdksrc
if [ ! -d "$JSRC/$JAVAC_MODULE" ]; then
	mkdir -p "$JSRC" && unzip -q -o "$(readlink -f "$SRCZIP")" "$JAVAC_MODULE/*" -d "$JSRC"
fi
JAVAC_FILES=$(cd "$JSRC" && find "$JAVAC_MODULE" -name '*.java' ! -name module-info.java | sort | tr '\n' ' ')
JAVAC_COUNT=$(echo "$JAVAC_FILES" | wc -w)

# --- what one run is -----------------------------------------------------------
# agent_flags CONFIG OUTBASE: JVM options for that agent, output under OUTBASE
agent_flags() {
	local c=$1 o=$2 iv=${1#*@}
	case $c in
	none) ;;
	empty@*) echo "-agentpath:$EMPTY=$iv" ;;
	heapprobe@*) echo "-agentpath:$HP=interval=$iv,file=$o.pb.gz" ;;
	heapprobe-collapsed@*) echo "-agentpath:$HP=interval=$iv,format=collapsed,file=$o.collapsed" ;;
	heapprobe-full@*) echo "-agentpath:$HP=interval=$iv,mark=full,format=collapsed,file=$o.collapsed" ;;
	async-alloc@*) echo "-agentpath:$AP=start,event=alloc,alloc=$iv,total,collapsed,file=$o.collapsed" ;;
	async-live@*) echo "-agentpath:$AP=start,event=alloc,alloc=$iv,live,collapsed,file=$o.collapsed" ;;
	ddprof-live@*) echo "-agentpath:$DD=start,memory=$iv:al:1.0,file=$o.jfr" ;;
	jfr-profile) echo "-XX:StartFlightRecording=settings=profile,filename=$o.jfr" ;;
	*) echo "unknown config $c" >&2; return 1 ;;
	esac
}
# run_java OUTBASE WORKLOAD FLAGS...: the command line of a workload under given JVM flags
workload_cmd() {
	local o=$1 w=$2; shift 2
	case $w in
	allocbench) echo "$JAVA" "$@" -cp "$CLS" AllocBench 4 3000000 ;;
	h2) echo "$JAVA" "$@" -cp "$CLS:$H2_JAR" H2Load 30000 40 ;;
	javac)
		local j=() f; for f in "$@"; do j+=("-J$f"); done
		echo "$JAVAC" "${j[@]}" -nowarn -Xlint:none -XDsuppressNotes -d "$o.out" \
			--patch-module "$JAVAC_MODULE=$JSRC/$JAVAC_MODULE" $(for f in $JAVAC_FILES; do echo "$JSRC/$f"; done) ;;
	hello) echo "$JAVA" "$@" -cp "$CLS" Hello ;;
	retained) echo "$JAVA" "$@" -cp "$CLS" RetainedSet ;;
	classmix) echo "$JAVA" "$@" -cp "$CLS" ClassMix ;;
	steady-*)
		local gc
		case $w in
		steady-g1) gc=-XX:+UseG1GC ;; steady-parallel) gc=-XX:+UseParallelGC ;;
		steady-serial) gc=-XX:+UseSerialGC ;; steady-z) gc=-XX:+UseZGC ;;
		steady-shenandoah) gc=-XX:+UseShenandoahGC ;;
		esac
		echo "$JAVA" -Xmx2g "$gc" "$@" -cp "$CLS" SteadyState 512 8 - 32 ;;
	esac
}

rm -rf "$RUN" && mkdir -p "$RUN" "$RAW"
CMDS=$RUN/commands.txt
: >"$CMDS"
OVH=$RUN/overhead.csv
echo "measure,workload,config,rep,order,wall_s,user_s,sys_s,maxrss_kb,rc,samples,alloc_bytes,app_ms" >"$OVH"

# run_one MEASURE WORKLOAD CONFIG REP ORDER: one timed JVM, one CSV row
run_one() {
	local m=$1 w=$2 c=$3 r=$4 ord=$5
	local o="$RUN/$m-$w-${c//@/_}-$r"
	# shellcheck disable=SC2046
	local cmd; cmd=$(workload_cmd "$o" "$w" $(agent_flags "$c" "$o"))
	grep -q "^$m $w $c:" "$CMDS" || echo "$m $w $c: $cmd" >>"$CMDS"
	local rc=0
	# shellcheck disable=SC2086
	/usr/bin/time -f '%e %U %S %M' -o "$o.time" $cmd >"$o.stdout" 2>"$o.stderr" || rc=$?
	local t; t=$(tail -1 "$o.time")
	local samples="" alloc app
	if [ -f "$o.pb.gz" ]; then
		samples=$( (zcat "$o.pb.gz" | grep -aoE '[0-9]+ samples at interval' | head -1 | cut -d' ' -f1) || true)
	fi
	alloc=$( (grep -oE '^allocated_bytes: [0-9]+' "$o.stdout" | cut -d' ' -f2) || true)
	app=$( (grep -oE '^elapsed_ms: [0-9]+' "$o.stdout" | cut -d' ' -f2) || true)
	[ "$rc" = 0 ] || log "  $m $w $c rep $r exited $rc (see $o.stderr)"
	echo "$m,$w,$c,$r,$ord,${t// /,},$rc,$samples,$alloc,$app" >>"$OVH"
	rm -rf "$o.out" "$o.pb.gz" "$o.collapsed" "$o.collapsed.alloc"
	[ "$m" = accuracy ] || rm -f "$o.jfr"
}
shuffled() { python3 -c 'import random,sys; a=sys.argv[2:]; random.Random(int(sys.argv[1])).shuffle(a); print(" ".join(a))' "$@"; }

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "nproc: $(nproc)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
	echo "kernel: $(uname -srm)"
	echo "os: $(. /etc/os-release && echo "$PRETTY_NAME")"
	echo "jdk: $("$JAVA" -version 2>&1 | sed -n 2p)"
	echo "load_before: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "heapprobe: $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "async-profiler: $AP_VER (tools.profiler:async-profiler:$AP_VER)"
	echo "ddprof: $DD_VER (com.datadoghq:ddprof:$DD_VER)"
	echo "h2: $H2_VER"
	echo "quick: $QUICK reps: $REPS acc_reps: $ACC_REPS start_reps: $START_REPS usage_reps: $USAGE_REPS"
	echo "configs: $CONFIGS"
	echo "sections: $SECTIONS"
	echo "acc_configs: $ACC_CONFIGS"
	echo "acc_workloads: $ACC_WORKLOADS"
	echo "workloads: $WORKLOADS"
	echo "javac_module: $JAVAC_MODULE ($JAVAC_COUNT files)"
} >"$RUN/machine.txt"

# --- 1. overhead: every workload x agent, order shuffled in each repetition ---
if section overhead; then
	log "overhead: $REPS reps x {$WORKLOADS} x {$CONFIGS}"
	for w in $WORKLOADS; do run_one warmup "$w" none 0 0; done     # page cache, JIT-free disk warm-up
	for r in $(seq 1 "$REPS"); do
		for w in $WORKLOADS; do
			i=0
			for c in $(shuffled "$r$i" $CONFIGS); do i=$((i + 1)); run_one overhead "$w" "$c" "$r" "$i"; done
		done
		log "  rep $r/$REPS done"
	done
fi

# --- 2. start-up and RSS at start ----------------------------------------------
if section startup; then
	log "start-up: $START_REPS reps"
	for r in $(seq 1 "$START_REPS"); do
		i=0
		for c in $(shuffled "9$r" $CONFIGS); do i=$((i + 1)); run_one startup hello "$c" "$r" "$i"; done
	done
fi

# --- 3. accuracy: a retained set known by construction (RetainedSet, per site)
# and one of many classes with a heap walk as ground truth (ClassMix, per class
# and per site) -----------------------------------------------------------------
# Each run appends "== CONFIG REP WORKLOAD", the workload's truth lines, then the
# agent's live (and for RetainedSet alloc) estimate, one tab-prefixed line each.
acc_one() {   # WORKLOAD CONFIG REP
	local w=$1 c=$2 r=$3 cc=$2 o cmd
	[[ $c == heapprobe@* ]] && cc=heapprobe-collapsed@${c#*@}
	o="$RUN/accuracy-$w-${cc//@/_}-$r"
	# shellcheck disable=SC2046
	cmd=$(workload_cmd "$o" "$w" $(agent_flags "$cc" "$o"))
	grep -q "^accuracy $w $c:" "$CMDS" || echo "accuracy $w $c: $cmd" >>"$CMDS"
	# shellcheck disable=SC2086
	$cmd >"$o.stdout" 2>"$o.stderr" || log "  accuracy $w $c rep $r failed (see $o.stderr)"
	local types=datadog.HeapLiveObject,datadog.ObjectSample,jdk.OldObjectSample,jdk.ObjectAllocationSample
	[ "$w" = classmix ] && types=datadog.HeapLiveObject,jdk.OldObjectSample   # live only: no alloc scoring
	{
		echo "== $c $r $w"
		grep -E '^(truth|truthclass|truthcount|truthsite|construct)\.' "$o.stdout" || true
		case $c in
		heapprobe@*|heapprobe-full@*)
			sed 's/^/inuse\t/' "$o.collapsed" 2>/dev/null || true
			[ "$w" = classmix ] || sed 's/^/alloc\t/' "$o.collapsed.alloc" 2>/dev/null || true ;;
		async-live@*) sed 's/^/livecount\t/' "$o.collapsed" 2>/dev/null || true ;;
		async-alloc@*) sed 's/^/alloc\t/' "$o.collapsed" 2>/dev/null || true ;;
		ddprof-live@*|jfr-profile)
			{ "$JAVA" -cp "$CLS:$JMC_CP" JfrDump "$o.jfr" "$types" 2>/dev/null || true; } | sed 's/^/jfr\t/' ;;
		esac
	} >>"$ACC"
	rm -f "$o.collapsed" "$o.collapsed.alloc" "$o.jfr"
}
ACC=$RUN/accuracy.txt
if section accuracy; then
	log "accuracy: $ACC_REPS reps x {$ACC_WORKLOADS} x {$ACC_CONFIGS}"
	: >"$ACC"
	for r in $(seq 1 "$ACC_REPS"); do
		for w in $ACC_WORKLOADS; do
			seed=7; [ "$w" = retained ] || seed=8
			for c in $(shuffled "$seed$r" $ACC_CONFIGS); do
				[ "$w" = classmix ] && [[ $c == async-alloc@* ]] && continue   # no live estimate
				# steady state: the default interval, live views only; mark=full where there is no
				# concurrent marking
				if [[ $w == steady-* ]]; then
					[[ $c == *@32k || $c == async-alloc@* ]] && continue
				elif [[ $c == heapprobe-full@* ]]; then
					continue
				fi
				[[ $c == heapprobe-full@* && $w != steady-parallel && $w != steady-serial ]] && continue
				acc_one "$w" "$c" "$r"
			done
		done
		log "  rep $r/$ACC_REPS done"
	done
fi

# --- 4. heap-usage read latency (heapprobe's own bench) -------------------------
if section usage; then
	log "UsageBench: $USAGE_REPS reps"
	"$JAVA" -agentpath:"$ROOT/build/bench/libbench_agent.so" -cp "$CLS" UsageBench "$USAGE_REPS" >"$RUN/usagebench.md" 2>"$RUN/usagebench.err" ||
		log "UsageBench failed: $(tail -3 "$RUN/usagebench.err")"
	echo "usage JVM: $JAVA -agentpath:$ROOT/build/bench/libbench_agent.so -cp $CLS UsageBench $USAGE_REPS" >>"$CMDS"
fi
echo "load_after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$RUN/machine.txt"

# --- 5. report -----------------------------------------------------------------
python3 "$HERE/report.py" "$RUN" "$RAW" "$OUT" "$ROOT"
log "wrote $OUT and $RAW/"
