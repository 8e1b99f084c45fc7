# Sourced by bench/peers/run.sh and bench/load/run.sh: a jar from Maven
# Central (MAVEN_REPO overrides) into $CACHE/dl, downloaded once.
#   fetch groupPath artifact version [classifier]   -> prints the jar's path
MVN=${MAVEN_REPO:-https://repo1.maven.org/maven2}
fetch() {
	local f="$CACHE/dl/$2-$3${4:+-$4}.jar"
	mkdir -p "$CACHE/dl"
	if [ ! -s "$f" ]; then
		echo "downloading $MVN/$1/$2/$3/$(basename "$f")" >&2
		curl -fsSL --retry 3 -o "$f.tmp" "$MVN/$1/$2/$3/$(basename "$f")" && mv "$f.tmp" "$f"
	fi
	echo "$f"
}

# The peers' native libraries, extracted once into $CACHE/lib (their
# version beside each, so a cache filled by an older pin is replaced):
#   peer_libs   -> sets AP (async-profiler's .so), DD (ddprof's), DD_JAR
# Pins: the newest each serves (AP_VER, DD_VER override).
AP_VER=${AP_VER:-4.6}      # tools.profiler:async-profiler (its main jar carries linux-x64/)
DD_VER=${DD_VER:-1.22.0}   # com.datadoghq:ddprof (the native library inside the jar)
peer_libs() {
	mkdir -p "$CACHE/lib"
	AP=$CACHE/lib/libasyncProfiler.so
	DD=$CACHE/lib/libjavaProfiler.so
	DD_JAR=$(fetch com/datadoghq ddprof "$DD_VER")
	if [ ! -s "$AP" ] || [ "$(cat "$AP.version" 2>/dev/null)" != "$AP_VER" ]; then
		local apjar
		apjar=$(fetch tools/profiler async-profiler "$AP_VER")
		unzip -p "$apjar" "$(unzip -l "$apjar" | awk '/linux-x64\/libasyncProfiler.so/ {print $4}')" >"$AP"
		[ -s "$AP" ] || { echo "no linux-x64/libasyncProfiler.so in $apjar" >&2; return 1; }
		echo "$AP_VER" >"$AP.version"
	fi
	if [ ! -s "$DD" ] || [ "$(cat "$DD.version" 2>/dev/null)" != "$DD_VER" ]; then
		unzip -p "$DD_JAR" META-INF/native-libs/linux-x64/libjavaProfiler.so >"$DD"
		[ -s "$DD" ] || { echo "no linux-x64 libjavaProfiler.so in $DD_JAR" >&2; return 1; }
		echo "$DD_VER" >"$DD.version"
	fi
}
