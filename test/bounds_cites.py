#!/usr/bin/env python3
"""docs/test-bounds.md cites each statistical assertion by file and line
("test_load.c:1036, :1046"), and says the line is the assertion itself or
the one-line comment above it that points back to the file. Line numbers
move whenever a test file is edited; this keeps the cites true: each cited
line holds a cr_expect/cr_assert, or the docs/test-bounds.md comment is on
it or the line above. Exit 1 with each cite that is not."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def source(name):
    for d in ('test/integration', 'test/unit'):
        p = os.path.join(ROOT, d, name)
        if os.path.exists(p):
            return p
    return None


def main():
    doc = open(os.path.join(ROOT, 'docs/test-bounds.md'), encoding='utf-8').read()
    bad, seen = [], 0
    for m in re.finditer(r'(test_[a-z0-9_]+\.c):(\d+)((?:, :\d+)*)', doc):
        name = m.group(1)
        nums = [int(m.group(2))] + [int(x) for x in re.findall(r':(\d+)', m.group(3))]
        path = source(name)
        docline = doc.count('\n', 0, m.start()) + 1
        if not path:
            bad.append(f'docs/test-bounds.md:{docline}: {name}: no such test file')
            continue
        lines = open(path, encoding='utf-8').read().split('\n')
        for n in nums:
            seen += 1
            line = lines[n - 1] if 0 < n <= len(lines) else ''
            prev = lines[n - 2] if 1 < n <= len(lines) + 1 else ''
            if not ('cr_expect' in line or 'cr_assert' in line or 'test-bounds' in line or 'test-bounds' in prev):
                bad.append(f'docs/test-bounds.md:{docline}: {name}:{n} is "{line.strip()[:60]}", '
                           'not an assertion or its docs/test-bounds.md comment')
    for b in bad:
        print(b)
    print(f'bounds_cites: {seen} cites, {len(bad)} stale')
    return 1 if bad or not seen else 0


if __name__ == '__main__':
    sys.exit(main())
