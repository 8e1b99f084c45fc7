#!/usr/bin/env bash
# Makes the release from this tree (Debian 12 amd64, as root):
#   dist/heapprobe-VERSION-linux-x64.tar.gz     bin/ lib/ include/ lib/pkgconfig/ README.md LICENSE
#   dist/heapprobe-VERSION-linux-arm64.tar.gz   the same for aarch64
#   dist/heapprobe-VERSION.jar (+ .pom)         -javaagent, java -jar, the Java API; both platforms' natives
# Each library and command is self-contained (scripts/deps.sh: every
# dependency built from pinned sources and linked in; glibc 2.17 or newer;
# docs/self-contained.md) and checked so (test/abi/check-self-contained.sh).
# The dependencies are built once into build/deps; later runs take ~1 min.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
# llvm-objcopy: the aarch64 archive's partial link (binutils here reads x86 only).
command -v llvm-objcopy >/dev/null || command -v llvm-objcopy-14 >/dev/null || {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends llvm-14 >/dev/null; }
objcopy_any=$(command -v llvm-objcopy || command -v llvm-objcopy-14)
version=$(sed -n 's/^project(heapprobe VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
[ -n "$version" ] || { echo "package: no version in CMakeLists.txt" >&2; exit 1; }
mkdir -p dist
jar_args=()
for arch in x86_64 aarch64; do
	plat=linux-x64
	[ "$arch" = aarch64 ] && plat=linux-arm64
	bash scripts/deps.sh "$arch"
	b=build/sc-$arch
	cmake -S . -B "$b" -G Ninja -DHP_SELF_CONTAINED=ON -DHP_ARCH="$arch" -DHP_WERROR=ON \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$b" >/dev/null
	bash test/abi/check-self-contained.sh "$b/libheapprobe.so" "$b/heapprobe" "$b/libheapprobe.a"
	name=heapprobe-$version-$plat
	stage=build/stage/$name
	rm -rf "$stage"
	cmake --install "$b" --prefix "$PWD/$stage" >/dev/null
	# Debug sections off (the symbol table stays, for stack traces).
	for f in "$stage"/bin/heapprobe "$stage"/lib/libheapprobe.so.*.*.* "$stage"/lib/libheapprobe.a; do
		[ -L "$f" ] || "$objcopy_any" --strip-debug "$f"
	done
	# pkg-config, relocatable: the prefix is wherever the tarball was unpacked.
	sed -i 's|^prefix=.*|prefix=${pcfiledir}/../..|' "$stage"/lib/pkgconfig/heapprobe.pc
	cp README.md "$stage/"
	cp LICENSE "$stage/"
	tar -C build/stage --owner=0 --group=0 --numeric-owner -czf "dist/$name.tar.gz" "$name"
	jar_args+=("$plat=$stage/bin=$stage/lib")
	echo "package: dist/$name.tar.gz ($(du -k "dist/$name.tar.gz" | cut -f1) KiB; libheapprobe.so $(stat -c %s "$stage"/lib/libheapprobe.so.*.*.*) bytes, heapprobe $(stat -c %s "$stage/bin/heapprobe") bytes)"
done
# The jar takes each platform's library and command from its stage.
jt=$(mktemp -d)
trap 'rm -rf "$jt"' EXIT
plats=()
for a in "${jar_args[@]}"; do
	plat=${a%%=*} rest=${a#*=}
	mkdir -p "$jt/$plat"
	cp "${rest%%=*}/heapprobe" "$jt/$plat/"
	cp -L "${rest#*=}/libheapprobe.so" "$jt/$plat/"
	plats+=("$plat=$jt/$plat")
done
bash scripts/jar.sh "dist/heapprobe-$version.jar" "$version" "${plats[@]}"
echo "package: install the jar to a local Maven repository with"
echo "  mvn install:install-file -Dfile=dist/heapprobe-$version.jar -DpomFile=dist/heapprobe-$version.pom"
