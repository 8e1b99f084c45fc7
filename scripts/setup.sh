#!/usr/bin/env bash
# Installs what heapprobe needs to build and test on Debian 12 (run as root).
# Idempotent: only calls apt-get when a package is missing.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config binutils elfutils xz-utils
	libelf-dev libdw-dev libffi-dev libcriterion-dev zlib1g-dev liblzma-dev libxxhash-dev protobuf-c-compiler libprotobuf-c-dev libcurl4-openssl-dev
	openjdk-17-jdk-headless clang libclang-rt-14-dev curl python3 ca-certificates tmux util-linux
	openjdk-17-dbg chromium nodejs)
# openjdk-17-dbg: Debian's DWARF for its JDK 17 (it must match the JDK's
# exact version: installing both together upgrades the JDK to match).
# chromium renders the HTML profile, node runs its script, python3 parses
# it: the suite needs them all and fails, never skips, without them
# (scripts/test-summary.py counts a skip as a failure unless its reason
# cannot hold on a supported set-up).
# -m32 objects for the ELF32 fixtures (x86_64 only).
if [ "$(dpkg --print-architecture)" = amd64 ]; then packages+=(gcc-multilib); fi
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi
