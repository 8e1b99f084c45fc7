#!/usr/bin/env python3
"""Counts what the suite really tested, from the Criterion reports.

    scripts/test-summary.py BUILD_DIR[:LABEL]...

(LABEL: only the ctest tests with that label were run there.)

Every Criterion test binary that ctest runs writes BUILD_DIR/test-reports/
NAME.json (test/CMakeLists.txt). ctest alone cannot tell a test that passed
from one that skipped: Criterion's cr_skip_test exits 0. So this reads the
reports and prints one line:

    suite: P passed, F failed, S skipped as inapplicable (...), U skipped
    for a reason that can be fixed, M reports missing

A skip is a failure unless its reason cannot hold on a supported set-up
(Debian 12 as root, after scripts/setup.sh and scripts/setup-jdks.sh): a
feature the JDK of that matrix run does not have. Those reasons are listed
in INAPPLICABLE below and named in the line. Anything else skipped (a tool
or JDK missing, not root) counts against the suite. Tests a --filter left
out are not counted. A report that is missing (the binary crashed, or ctest
killed it at its timeout) counts as a failure too.

Exit status 0 only if nothing failed, nothing was skipped for a fixable
reason and no report is missing.
"""
import json
import os
import re
import subprocess
import sys

# Skips whose reason cannot hold on a supported set-up: the feature is not
# in the JDK this matrix run uses.
INAPPLICABLE = [
    r"needs JDK \d+",                       # generational ZGC (21), generational Shenandoah (25)
    r"this JDK has no virtual threads",     # JDK 11 and 17
    r"is not in this JDK",                  # a collector flag the JDK lacks
    r"^generational ZGC: no ",              # a single-generation ZGC figure on a JDK without it
]
# Criterion's own words for tests a --filter did not select, or disabled.
NOT_SELECTED = {"The test was skipped.", "Test is disabled"}
# ctest tests that are not Criterion binaries.
NOT_CRITERION = {"abi_exports", "release_self_contained", "readme_figures", "bounds_cites", "layering"}   # counted by ctest's own result


def ctest_names(build, label):
    out = subprocess.run(["ctest", "-N"] + (["-L", label] if label else []), cwd=build, capture_output=True,
                         text=True).stdout
    return re.findall(r"Test\s+#\d+: (\S+)", out)


def main(builds):
    passed = failed = 0
    inapplicable, fixable, missing, failures = {}, [], [], []
    for arg in builds:
        build, _, label = arg.partition(":")
        for name in ctest_names(build, label):
            if name in NOT_CRITERION:
                continue
            path = os.path.join(build, "test-reports", name + ".json")
            try:
                with open(path) as f:
                    report = json.load(f)
            except (OSError, ValueError) as e:
                missing.append(f"{build}:{name} ({e.__class__.__name__})")
                continue
            for suite in report.get("test_suites", []):
                for t in suite.get("tests", []):
                    full = f"{name}:{suite['name']}::{t['name']}"
                    status, msgs = t.get("status"), t.get("messages") or []
                    if status == "PASSED" and not t.get("assertions"):
                        failed += 1         # checked nothing: cannot fail
                        failures.append(full + " (passed without a single assertion)")
                    elif status == "PASSED":
                        passed += 1
                    elif status == "SKIPPED":
                        why = msgs[0] if msgs else ""
                        if why in NOT_SELECTED:
                            continue
                        if any(re.search(p, why) for p in INAPPLICABLE):
                            inapplicable[why] = inapplicable.get(why, 0) + 1
                        else:
                            fixable.append(f"{full}: {why or 'no reason given'}")
                    else:
                        failed += 1
                        failures.append(full)
    for f in failures:
        print(f"failed: {f}")
    for f in fixable:
        print(f"skipped for a reason that can be fixed (a failure): {f}")
    for m in missing:
        print(f"no report (crashed or timed out): {m}")
    why = "; ".join(f"{k} x{v}" for k, v in sorted(inapplicable.items()))
    print(f"suite: {passed} passed, {failed} failed, {sum(inapplicable.values())} skipped as inapplicable"
          f"{' (' + why + ')' if why else ''}, {len(fixable)} skipped for a reason that can be fixed, "
          f"{len(missing)} reports missing")
    return 0 if not failed and not fixable and not missing and passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["build"]))
