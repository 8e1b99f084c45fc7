#!/usr/bin/env bash
# The whole test suite: sanitizer build of the unit tests, fuzzers for a
# bounded time, then every unit and integration test on the real JDK.
# The last line printed counts the tests that passed, failed and skipped in
# both builds (scripts/test-summary.py): a skip is a failure unless its
# reason cannot hold on a supported set-up.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
FUZZ_SECONDS=${HP_FUZZ_SECONDS:-60}
failed=0

echo "== AddressSanitizer + UBSan build: unit tests"
# HP_SAMPLE_TIMING here too, so the timing build keeps compiling warning-free.
cmake -S . -B build-asan -G Ninja -DHP_SANITIZE=ON -DHP_WERROR=ON -DHP_SAMPLE_TIMING=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null &&
	cmake --build build-asan >/dev/null &&
	rm -rf build-asan/test-reports && mkdir -p build-asan/test-reports &&
	(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest -L unit --output-on-failure) || failed=1

echo "== libFuzzer (clang), ${FUZZ_SECONDS}s per target"
CC=clang cmake -S . -B build-fuzz -G Ninja -DHP_FUZZ=ON -DHP_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null &&
	cmake --build build-fuzz >/dev/null || failed=1
for f in build-fuzz/test/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	name=$(basename "$f")
	mkdir -p "build-fuzz/corpus/$name"
	seeds="build-fuzz/test/fuzz/corpus_${name#fuzz_}"     # generated at build time
	[ -d "$seeds" ] || seeds=
	if "$f" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -print_final_stats=0 \
		"build-fuzz/corpus/$name" $seeds >"build-fuzz/$name.log" 2>&1; then
		echo "$name: no finding in ${FUZZ_SECONDS}s ($(grep -o 'cov: [0-9]*' "build-fuzz/$name.log" | tail -1))"
	else
		echo "$name: FINDING"; tail -40 "build-fuzz/$name.log"; failed=1
	fi
done

echo "== Main build: unit and integration tests (linux-arm64 under qemu: label arm64)"
bash scripts/setup-jdks.sh build/jdks || failed=1
bash scripts/setup-arm64.sh || failed=1
# The release (self-contained libraries and command for both platforms, the
# jar): test_foreign_root and release_self_contained use it.
bash scripts/package.sh || failed=1
cmake -S . -B build -G Ninja -DHP_WERROR=ON >/dev/null && cmake --build build >/dev/null || {
	echo "build failed"; cmake --build build; exit 1; }
rm -rf build/test-reports && mkdir -p build/test-reports
(cd build && ctest --output-on-failure) || failed=1

echo "== What was tested"
python3 scripts/test-summary.py build-asan:unit build || failed=1
exit $failed
