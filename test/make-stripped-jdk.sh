#!/usr/bin/env bash
# Makes a JDK whose libjvm has no .symtab (as many vendors ship it), the rest
# symlinked to the original: usage: make-stripped-jdk.sh JAVA_HOME DEST
set -euo pipefail
src=$(readlink -f "$1")
dest=$2
rm -rf "$dest"
mkdir -p "$dest"
# Symlink everything, then replace what must be real files: the launcher
# (it finds libjvm relative to its own real path) and libjvm itself.
cp -rs "$src"/. "$dest"/
rm "$dest/bin/java" "$dest/lib/server/libjvm.so"
cp "$src/bin/java" "$dest/bin/java"
strip --strip-all -o "$dest/lib/server/libjvm.so" "$src/lib/server/libjvm.so"
if readelf -S "$dest/lib/server/libjvm.so" | grep -q '\.symtab'; then
	echo "make-stripped-jdk: strip left a .symtab" >&2
	exit 1
fi
