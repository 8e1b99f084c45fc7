#!/usr/bin/env bash
# Builds the self-contained build's dependencies once, from pinned sources,
# into a cache: build/deps/<arch>-linux-gnu.2.17/{bin,include,lib}.
#
#   scripts/deps.sh [x86_64|aarch64]      (default: this machine's)
#
# Then: cmake -S . -B build-sc -G Ninja -DHP_SELF_CONTAINED=ON [-DHP_ARCH=aarch64]
# (docs/self-contained.md). A second run with nothing changed only checks
# the stamps (well under a second).
#
# Compiler: zig cc (PyPI's ziglang, hash-pinned, in a venv under the
# cache) targeting glibc 2.17, so what is built here runs on any glibc
# >= 2.17, on x86_64 and aarch64 alike, from this one x86_64 machine.
# Sources: Debian bookworm's source packages, fetched by apt-get from the
# archives this machine's apt uses, through a private sources list (deb-src
# lines made from its bookworm deb entries; the system's apt configuration
# is not touched);
# apt checks every file's hash against the signed Release and Sources
# indices, and the .dsc files are also checked here against the sha256
# pinned below, so a pin fetches the same bytes or fails.
# Every library is built static, -fPIC, -fvisibility=hidden: linked into
# libheapprobe.so none is exported (src/heapprobe.map), merged into
# libheapprobe.a all are localized (CMakeLists.txt).
#
# Environment: HP_DEPS_CACHE (default build/deps), HP_DEPS_JOBS (2).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
arch=${1:-$(uname -m)}
case $arch in
x86_64 | amd64) arch=x86_64 ;;
aarch64 | arm64) arch=aarch64 ;;
*) echo "deps: unknown architecture '$arch' (x86_64 or aarch64)" >&2; exit 2 ;;
esac
GLIBC=2.17
triple=$arch-linux-gnu.$GLIBC
cache=${HP_DEPS_CACHE:-$root/build/deps}
prefix=$cache/$triple
jobs=${HP_DEPS_JOBS:-2}
started=$SECONDS

# --- Pins -------------------------------------------------------------------
# zig: the ziglang wheels of one release, for x86_64 and aarch64 hosts.
ZIG_VERSION=0.14.1
ZIG_WHEEL_SHA256=(
	6eb9d4d759b292c83810dbee2e9e8e3fbfbf01d864e6e9811bae711fd74e1c2f # manylinux_2_12_x86_64
	7994b27f3cbfcedea43f9b7552e38b45857bdf0e9a45065474092dd74e7048cf # manylinux_2_17_aarch64
)
# Debian bookworm source packages: name, version, sha256 of the .dsc (which
# holds the sha256 of the upstream tarball and of Debian's changes; dpkg-source
# checks them). Built in this order. When Debian replaces a version (a
# security or point-release update), Debian's archive drops the old one and the
# fetch fails here: take the new one from `apt-cache showsrc NAME` (with a
# bookworm deb-src line) and its .dsc's sha256.
PKGS=(zlib bzip2 xz-utils xxhash libffi protobuf-c elfutils curl)
declare -A VER=(
	[zlib]=1:1.2.13.dfsg-1
	[bzip2]=1.0.8-5
	[xz-utils]=5.4.1-1+deb12u2
	[xxhash]=0.8.1-1
	[libffi]=3.4.4-1
	[protobuf-c]=1.4.1-1
	[elfutils]=0.188-2.1
	[curl]=7.88.1-10+deb12u15 # headers only: upload.c dlopens libcurl
)
declare -A DSC_SHA256=(
	[zlib]=3fa1e6b2fc525062aa88207dda52fed8e045373c809d362fe8a2bfbf7cf515a8
	[bzip2]=ed9c40f4de3f9e064535e15eac1c61a0f606763db98f4579dbc04067b94a8944
	[xz-utils]=bffc9917562b5787661379621bb1f7510bf7271b03d8ce4181cebc84b90d3c35
	[xxhash]=4a961627c06efc8fa3bc4b06ee9dba6cfaf092f2550b88d63e9218a2728721b4
	[libffi]=21c9ef156b6766535cb014e0765142c8104ffbcd73f003ecfa80cfb314baa4f0
	[protobuf-c]=480082f3a320b6d718a8a218191168be9ab19e8115994739ee11e954498848e4
	[elfutils]=2e73c5bfe9d0ddbf837742d638c43b049590ae1de8f6e3d9c2740c28e2550760
	[curl]=2744f12e3aef161c0361743fa1b318296b122e566e47f381e4a63320fbcc23f4
)
CFLAGS_DEPS="-O2 -fPIC -fvisibility=hidden -ffunction-sections -fdata-sections -fno-sanitize=all"

log() { echo "deps[$triple]: $*"; }
die() { echo "deps[$triple]: $*" >&2; exit 1; }

# --- Host tools (Debian packages; installed when missing and root) -----------
need=()
command -v dpkg-source >/dev/null || need+=(dpkg-dev)
command -v m4 >/dev/null || need+=(m4) # elfutils' libcpu tables
command -v make >/dev/null || need+=(make)
command -v gpgv >/dev/null || need+=(gpgv)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
if ((${#need[@]})); then
	[ "$(id -u)" = 0 ] || die "needs ${need[*]} (apt-get install ${need[*]})"
	log "installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
fi

# --- zig ---------------------------------------------------------------------
zigdir=$cache/zig-$ZIG_VERSION
zig=$(ls -d "$zigdir"/venv/lib/python3*/site-packages/ziglang/zig 2>/dev/null | head -1 || true)
if [ -z "$zig" ] || ! [ -x "$zig" ] || [ "$("$zig" version)" != "$ZIG_VERSION" ]; then
	log "installing ziglang $ZIG_VERSION (PyPI, hash-pinned) in $zigdir/venv"
	rm -rf "$zigdir/venv"
	mkdir -p "$zigdir"
	python3 -m venv "$zigdir/venv"
	{
		echo "ziglang==$ZIG_VERSION \\"
		for h in "${ZIG_WHEEL_SHA256[@]}"; do echo "  --hash=sha256:$h \\"; done
		echo
	} >"$zigdir/requirements.txt"
	"$zigdir/venv/bin/pip" install -q --disable-pip-version-check --require-hashes --no-deps \
		--only-binary=:all: -r "$zigdir/requirements.txt"
	zig=$(ls -d "$zigdir"/venv/lib/python3*/site-packages/ziglang/zig | head -1)
	[ "$("$zig" version)" = "$ZIG_VERSION" ] || die "zig $ZIG_VERSION does not run"
fi

# Wrappers the dependencies' builds and CMake's toolchain (cmake/self-contained.cmake) call.
mkdir -p "$prefix/bin" "$prefix/include" "$prefix/lib"
zenv="export ZIG_GLOBAL_CACHE_DIR='$cache/zig-cache' ZIG_LOCAL_CACHE_DIR='$cache/zig-cache'"
wrap() { # name, command line
	local f=$prefix/bin/$1 body
	body=$(printf '#!/bin/sh\n# generated by scripts/deps.sh\n%s\nexec %s "$@"\n' "$zenv" "$2")
	[ -f "$f" ] && [ "$(cat "$f")" = "$body" ] || { echo "$body" >"$f"; chmod +x "$f"; }
}
wrap cc "'$zig' cc -target $triple"
wrap ar "'$zig' ar"
wrap ranlib "'$zig' ranlib"
wrap ld "'$zig' ld.lld" # partial link of libheapprobe.a

# --- Sources -----------------------------------------------------------------
srcdir=$cache/src
mkdir -p "$srcdir"
dsc() { local v=${VER[$1]#*:}; echo "$srcdir/${1}_$v.dsc"; }
dsc_ok() { # the .dsc matches its pin and every file it lists is here with its hash
	local f; f=$(dsc "$1")
	[ -f "$f" ] && echo "${DSC_SHA256[$1]}  $f" | sha256sum -c --quiet - >/dev/null 2>&1 || return 1
	awk '/^Checksums-Sha256:/{on=1;next} /^[^ ]/{on=0} on && NF==3 {print $1"  "$3}' "$f" |
		(cd "$srcdir" && sha256sum -c --quiet - >/dev/null 2>&1)
}
missing=()
for p in "${PKGS[@]}"; do dsc_ok "$p" || missing+=("$p"); done
if ((${#missing[@]})); then
	log "fetching ${missing[*]} (Debian bookworm sources)"
	apt=$cache/apt
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
	# The machine's own bookworm archives (its deb entries, as deb-src, with
	# their keyrings), in a private sources list.
	if [ -f /etc/apt/sources.list ]; then
		awk '$1 == "deb" {
			i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++
			if ($(i + 1) ~ /^bookworm/) { sub(/^deb/, "deb-src"); print } }' /etc/apt/sources.list
	fi >"$apt/sources.list"
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk 'BEGIN { RS = ""; ORS = "\n\n" }
			/(^|\n)Types:[^\n]*deb/ && /(^|\n)Suites:[ \t]*bookworm/ && !/(^|\n)Enabled:[ \t]*no/ {
				sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f"
	done >"$apt/debian.sources"
	grep -qs bookworm "$apt/sources.list" "$apt/debian.sources" ||
		die "no Debian bookworm archive in /etc/apt/sources.list{,.d/*.sources}"
	# The pins follow security and point-release updates, which a minimal
	# install's list may not name (debootstrap writes bookworm main only):
	# those archives added at Debian's own addresses, with Debian's keyring.
	for suite in bookworm-security bookworm-updates; do
		grep -qs "$suite" "$apt/sources.list" "$apt/debian.sources" && continue
		url=http://deb.debian.org/debian
		[ "$suite" = bookworm-security ] && url=http://deb.debian.org/debian-security
		echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $url $suite main" >>"$apt/sources.list"
	done
	mkdir -p "$apt/parts"
	mv "$apt/debian.sources" "$apt/parts/debian.sources"
	aptopts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/parts"
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o Debug::NoLocking=1
		-o APT::Sandbox::User="$(id -un)")
	apt-get "${aptopts[@]}" -qq update
	args=()
	for p in "${missing[@]}"; do args+=("$p=${VER[$p]}"); done
	(cd "$srcdir" && apt-get "${aptopts[@]}" -qq source --download-only "${args[@]}") ||
		die "apt-get source failed: a pinned version may have left bookworm (see the pins in $0)"
	for p in "${missing[@]}"; do dsc_ok "$p" || die "$p ${VER[$p]}: .dsc or its files do not match the pinned sha256"; done
fi

# --- Builds --------------------------------------------------------------------
export PATH="$prefix/bin:$PATH"
export CC=cc AR=ar RANLIB=ranlib
export CFLAGS="$CFLAGS_DEPS" CPPFLAGS="-I$prefix/include" LDFLAGS="-L$prefix/lib"
unset CPATH C_INCLUDE_PATH LIBRARY_PATH PKG_CONFIG_PATH
export PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig
host=$arch-linux-gnu
work=$prefix/work

unpack() { # fresh source tree of $1 in $work/$1, Debian's patches applied
	rm -rf "${work:?}/$1"
	mkdir -p "$work"
	dpkg-source -x "$(dsc "$1")" "$work/$1" >"$work/$1.unpack.log" 2>&1 ||
		{ cat "$work/$1.unpack.log"; die "dpkg-source -x $1 failed"; }
}
archive() { # lib name, objects...
	local a=$prefix/lib/lib$1.a
	shift
	rm -f "$a"
	ar rcs "$a" "$@"
}

build_zlib() {
	./configure --static --prefix="$prefix"
	make -j"$jobs" libz.a
	install -m644 zlib.h zconf.h "$prefix/include/"
	install -m644 libz.a "$prefix/lib/"
}
build_bzip2() {
	local o=(blocksort huffman crctable randtable compress decompress bzlib)
	for f in "${o[@]}"; do $CC $CFLAGS -D_FILE_OFFSET_BITS=64 -c $f.c -o $f.o; done
	archive bz2 "${o[@]/%/.o}"
	install -m644 bzlib.h "$prefix/include/"
}
build_xz-utils() {
	# gl_cv_cc_visibility=no: liblzma then marks nothing visibility("default")
	# and CFLAGS' -fvisibility=hidden covers its API too.
	./configure --host=$host --prefix="$prefix" --disable-shared --enable-static \
		--disable-xz --disable-xzdec --disable-lzmadec --disable-lzmainfo --disable-lzma-links \
		--disable-scripts --disable-doc --disable-nls gl_cv_cc_visibility=no
	make -j"$jobs" -C src/liblzma
	make -C src/liblzma install
}
build_xxhash() {
	$CC $CFLAGS -c xxhash.c -o xxhash.o
	archive xxhash xxhash.o
	install -m644 xxhash.h xxh3.h "$prefix/include/"
}
build_libffi() {
	# tramp.c calls open_temp_exec_file (closures.c, returns int) with no
	# prototype: gcc 12 warns, clang 19 errs by default. The implicit
	# declaration's int is the right type, so it stays a warning.
	CFLAGS="$CFLAGS -Wno-error=implicit-function-declaration" ./configure --host=$host --prefix="$prefix" --disable-shared --enable-static \
		--disable-docs --disable-multi-os-directory
	make -j"$jobs"
	make install-exec install-data # libffi.a, ffi.h, ffitarget.h, libffi.pc
}
build_protobuf-c() { # the runtime only: protoc-c (C++) comes from the host
	$CC $CFLAGS -I. -c protobuf-c/protobuf-c.c -o protobuf-c.o
	archive protobuf-c protobuf-c.o
	install -d "$prefix/include/protobuf-c"
	install -m644 protobuf-c/protobuf-c.h "$prefix/include/protobuf-c/"
}
build_elfutils() {
	# Only the libraries: elfutils' tools are not needed. libdw.a holds
	# libdw, libdwfl, libdwelf, libebl, the backends and libcpu, as
	# elfutils makes it. Every library's .so is skipped (elfutils builds
	# them even with --disable-shared; lld rejects libelf.map's symbols
	# that a configuration leaves out). No C++ demangler (libstdc++).
	./configure --host=$host --prefix="$prefix" --disable-shared --disable-nls \
		--disable-debuginfod --disable-libdebuginfod --disable-symbol-versioning \
		--with-zlib --with-bzlib --with-lzma --without-zstd \
		ac_cv_lib_stdcpp___cxa_demangle=no
	make -j"$jobs" -C lib
	make -j"$jobs" -C libelf libelf.a
	local d
	for d in libcpu:libcpu.a backends:libebl_backends.a libebl:libebl.a libdwelf:libdwelf.a libdwfl:libdwfl.a libdw:libdw.a; do
		make -j"$jobs" -C "${d%%:*}" "${d#*:}"
	done
	install -m644 libelf/libelf.a libdw/libdw.a "$prefix/lib/"
	install -m644 libelf/libelf.h libelf/gelf.h libelf/nlist.h "$prefix/include/"
	install -d "$prefix/include/elfutils"
	install -m644 libelf/elf-knowledge.h libdw/libdw.h libdw/known-dwarf.h libdwfl/libdwfl.h \
		libdwelf/libdwelf.h version.h "$prefix/include/elfutils/"
	install -m644 libdw/dwarf.h "$prefix/include/"
}
build_curl() {
	rm -rf "$prefix/include/curl"
	install -d "$prefix/include/curl"
	install -m644 include/curl/*.h "$prefix/include/curl/"
}

# A package is rebuilt when its pin, its recipe above, the flags or zig
# change, and then every package after it too (they build against it).
stamp_of() {
	printf '%s\n' "${VER[$1]}" "$ZIG_VERSION" "$CFLAGS_DEPS" "$(declare -f "build_$1")" |
		sha256sum | cut -c1-16
}
rebuild=0
for p in "${PKGS[@]}"; do
	stamp=$prefix/.stamp-$p
	want=$(stamp_of "$p")
	if [ $rebuild = 0 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then continue; fi
	rebuild=1
	rm -f "$stamp"
	t0=$SECONDS
	unpack "$p"
	log "building $p ${VER[$p]}"
	# Not in an || list: errexit holds inside the recipe.
	set +e
	(set -e; cd "$work/$p"; "build_$p") >"$work/$p.log" 2>&1
	rc=$?
	set -e
	[ $rc = 0 ] || { tail -40 "$work/$p.log"; die "$p failed (log: $work/$p.log)"; }
	rm -rf "${work:?}/$p" # the source tree; the log stays
	echo "$want" >"$stamp"
	log "$p done in $((SECONDS - t0)) s"
done
# aarch64: clang compiles atomics as calls to __aarch64_* helpers (outline
# atomics; zig cc forces them on, -mno-outline-atomics is overridden). zig
# links its compiler_rt's into the .so and the command; libheapprobe.a
# takes this archive of them, from the same zig, so that its users need no
# libgcc of gcc >= 10 (glibc 2.17's systems have gcc 4.8). Its helpers use
# the ARMv8.0 instructions (nothing sets their LSE flag), as zig's do.
if [ "$arch" = aarch64 ]; then
	a=$prefix/lib/libhp_outline_atomics.a
	if ! [ -f "$a" ] || [ "$(cat "$prefix/.stamp-outline-atomics" 2>/dev/null)" != "$ZIG_VERSION" ]; then
		(
			export ZIG_GLOBAL_CACHE_DIR="$cache/zig-cache" ZIG_LOCAL_CACHE_DIR="$cache/zig-cache"
			"$zig" build-obj -target aarch64-linux-gnu -O ReleaseFast -fPIC \
				"$(dirname "$zig")/lib/compiler_rt/aarch64_outline_atomics.zig" -femit-bin="$work/outline_atomics.o"
		)
		rm -f "$a"
		ar rcs "$a" "$work/outline_atomics.o"
		echo "$ZIG_VERSION" >"$prefix/.stamp-outline-atomics"
	fi
fi
log "ready in $((SECONDS - started)) s: $prefix"
