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
