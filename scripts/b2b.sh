#!/usr/bin/env bash
# Back-to-back rounds of the statistical tests (issue 28: "20 back-to-back
# runs of the statistical tests without a failure"): each round runs the
# ctest tests named by TESTS (a ctest -R regex) on an existing build, one
# line per round, the failing test's output kept in full.
#
#   ROUNDS=20 bash scripts/b2b.sh [BUILD_DIR] > b2b.log
#
# The default set is the tests whose bounds are sampling statistics and
# that have failed falsely before (docs/test-bounds.md): test_steady (JDK
# 17) and test_steady_jdk25 (generational ZGC and Shenandoah), the leak
# history (test_history_jvm), the embedding example (test_embedding).
# Exits 1 if any round failed.
set -uo pipefail
B=${1:-build}
ROUNDS=${ROUNDS:-20}
TESTS=${TESTS:-'^(test_steady|test_steady_jdk25|test_history_jvm|test_embedding)$'}
[ -f "$B/CTestTestfile.cmake" ] || { echo "b2b: no build in $B (bash scripts/demo.sh first)" >&2; exit 2; }
echo "b2b: $(git log --oneline -1 | cut -c1-60); tests $TESTS; $ROUNDS rounds; $(nproc) CPUs; $(date -u +%FT%TZ)"
fails=0
for i in $(seq 1 "$ROUNDS"); do
	t0=$(date +%s)
	out=$(ctest --test-dir "$B" -R "$TESTS" --output-on-failure 2>&1)
	rc=$?
	summary=$(printf '%s\n' "$out" | grep -E 'tests passed|tests failed' | tail -1)
	echo "round $i: exit $rc, $(( $(date +%s) - t0 )) s, $summary"
	if [ "$rc" != 0 ]; then
		fails=$((fails + 1))
		printf '%s\n' "$out" | sed 's/^/    /'
	fi
done
echo "b2b: $ROUNDS rounds, $fails failed ($(date -u +%FT%TZ))"
[ "$fails" = 0 ]
