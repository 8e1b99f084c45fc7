# Sourced by rss-fixed-heap.sh and rss-exit.sh, so that both measure the
# same javac run: java.net.http's sources (from $JAVA_HOME/lib/src.zip,
# unpacked into $WORK) compiled as a patch of that module, on a fixed,
# pre-touched Java heap of $HEAP. An agent's -J-agentpath goes between
# JAVAC_HEAP and JAVAC_ARGS. Needs WORK, JAVA_HOME and HEAP.
SRCZIP=$(readlink -f "$JAVA_HOME/lib/src.zip")
unzip -q -o "$SRCZIP" "java.net.http/*" -d "$WORK/src"
find "$WORK/src/java.net.http" -name '*.java' ! -name module-info.java | sort >"$WORK/files.txt"
JAVAC_HEAP=("-J-Xms$HEAP" "-J-Xmx$HEAP" -J-XX:+AlwaysPreTouch)
JAVAC_ARGS=(-nowarn -Xlint:none -XDsuppressNotes -d "$WORK/out" --patch-module "java.net.http=$WORK/src/java.net.http"
	    @"$WORK/files.txt")
