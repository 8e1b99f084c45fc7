#!/usr/bin/env bash
# JDK Mission Control's JFR parser and what it needs, from Maven Central,
# into DIR (cached): the tests read our JFR files with it.
#   bash test/jmc/fetch.sh DIR    -> prints the classpath
set -euo pipefail
dir=${1:?usage: fetch.sh DIR}
mvn=${MAVEN_CENTRAL:-https://repo1.maven.org/maven2}
mkdir -p "$dir"
cp=
for a in org/openjdk/jmc:flightrecorder:9.1.2 org/openjdk/jmc:common:9.1.2 org/owasp/encoder:encoder:1.2.3 \
	at/yawk/lz4:lz4-java:1.10.2; do
	IFS=: read -r group artifact version <<<"$a"
	f="$dir/$artifact-$version.jar"
	if [ ! -s "$f" ]; then
		curl -fsSL --retry 3 -o "$f.tmp" "$mvn/$group/$artifact/$version/$artifact-$version.jar" >&2
		mv "$f.tmp" "$f"
	fi
	cp=${cp:+$cp:}$f
done
echo "$cp"
