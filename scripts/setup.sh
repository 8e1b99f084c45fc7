#!/usr/bin/env bash
# Installs what heapprobe needs to build and test on Debian 12 (run as root).
# Idempotent: only calls apt-get when a package is missing.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config binutils elfutils xz-utils
	libelf-dev libdw-dev libffi-dev libcriterion-dev zlib1g-dev liblzma-dev libxxhash-dev protobuf-c-compiler libprotobuf-c-dev libcurl4-openssl-dev
	openjdk-17-jdk-headless clang libclang-rt-14-dev curl python3 ca-certificates tmux util-linux)
# Debian's DWARF for its JDK 17 (must match the JDK's exact version; installing
# it upgrades the JDK to match), and a headless browser to render the HTML
# profile. Optional: the tests say what they skip without them.
optional=(openjdk-17-dbg chromium)
missing=()
for p in "${packages[@]}" "${optional[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
	for p in "${optional[@]}"; do
		apt-get install -y -qq --no-install-recommends "$p" >/dev/null ||
			echo "setup: optional $p not installed; the tests that need it will say so"
	done
fi
