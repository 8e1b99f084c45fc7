# Sourced by run.sh and perf-callback.sh: compiles Toggle and the workloads
# into $WORK and sets WFLAGS (the JVM flags that pick WORKLOAD: alloc,
# javac or vthreads; javac's sources come from $JAVA_HOME/lib/src.zip).
"$JAVA_HOME/bin/javac" -nowarn -d "$WORK" "$HERE/Toggle.java" "$HERE/VThreadServer.java" "$ROOT/bench/peers/AllocBench.java"
WFLAGS=(-Dworkload="$WORKLOAD")
if [ "$WORKLOAD" = javac ]; then
	# one module's sources, compiled as a patch of that module
	JAVAC_MODULE=${JAVAC_MODULE:-java.net.http}
	SRCZIP=$(readlink -f "$JAVA_HOME/lib/src.zip")
	[ -f "$SRCZIP" ] || { echo "no $JAVA_HOME/lib/src.zip (Debian: apt-get install openjdk-17-source)" >&2; exit 1; }
	unzip -q -o "$SRCZIP" "$JAVAC_MODULE/*" -d "$WORK/src"
	{ echo "--patch-module"; echo "$JAVAC_MODULE=$WORK/src/$JAVAC_MODULE"
	  find "$WORK/src/$JAVAC_MODULE" -name '*.java' ! -name module-info.java | sort; } >"$WORK/sources.txt"
	WFLAGS+=(-Dsources="$WORK/sources.txt")
fi
