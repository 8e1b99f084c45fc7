#!/usr/bin/env bash
# Builds heapprobe.jar: the Java entry points (src/java: -javaagent, the
# Java API, java -jar's command) compiled for release 11, and the natives
# of each platform given, under native/linux-<platform>/ (libheapprobe.so
# and the heapprobe command), with a Maven pom (io.heapprobe:heapprobe).
# Usage: jar.sh OUT.jar VERSION PLATFORM=DIR [PLATFORM=DIR...]
#   e.g. jar.sh dist/heapprobe-0.1.0.jar 0.1.0 linux-x64=build linux-arm64=build/arm64
set -euo pipefail
out=$1 version=$2
shift 2
src=$(cd "$(dirname "$0")/../src/java" && pwd)
jdk_bin=$(dirname "$(readlink -f "$(command -v javac)")")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/classes/META-INF/maven/io.heapprobe/heapprobe"
"$jdk_bin/javac" --release 11 -Xlint:all -Werror -d "$tmp/classes" "$src"/io/heapprobe/*.java
for pd in "$@"; do
	plat=${pd%%=*} dir=${pd#*=}
	case $plat in linux-x64|linux-arm64) ;; *) echo "jar.sh: unknown platform $plat" >&2; exit 2 ;; esac
	mkdir -p "$tmp/classes/native/$plat"
	for f in libheapprobe.so heapprobe; do
		[ -f "$dir/$f" ] || { echo "jar.sh: $dir/$f missing" >&2; exit 1; }
		cp -L "$dir/$f" "$tmp/classes/native/$plat/$f"
	done
	# What the files hash to and their sizes, read at start-up instead of
	# the files (Natives.java checks them when it extracts).
	(cd "$tmp/classes/native/$plat" && for f in libheapprobe.so heapprobe; do
		echo "$(sha256sum "$f" | cut -d' ' -f1) $(stat -c %s "$f") $f"; done) >"$tmp/classes/native/$plat/SHA256SUMS"
done
pom=$tmp/classes/META-INF/maven/io.heapprobe/heapprobe/pom.xml
cat >"$pom" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.heapprobe</groupId>
  <artifactId>heapprobe</artifactId>
  <version>$version</version>
  <packaging>jar</packaging>
  <name>heapprobe</name>
  <description>Live-heap allocation profiler for HotSpot: -javaagent, a Java API and the heapprobe command, with natives for linux-x64 and linux-arm64</description>
</project>
POM
printf 'groupId=io.heapprobe\nartifactId=heapprobe\nversion=%s\n' "$version" \
	>"$tmp/classes/META-INF/maven/io.heapprobe/heapprobe/pom.properties"
cat >"$tmp/manifest" <<MF
Premain-Class: io.heapprobe.Agent
Agent-Class: io.heapprobe.Agent
Main-Class: io.heapprobe.Main
Implementation-Title: heapprobe
Implementation-Version: $version
MF
mkdir -p "$(dirname "$out")"
"$jdk_bin/jar" --create --file "$out" --manifest "$tmp/manifest" -C "$tmp/classes" .
cp "$pom" "${out%.jar}.pom"
echo "jar.sh: $out ($(du -k "$out" | cut -f1) KiB: $*) and ${out%.jar}.pom"
