#!/usr/bin/env python3
"""The README quotes results only from docs/RESULTS.md (issue 28).

1. docs/RESULTS.md is what bench/results.py writes from the reports under
   docs/ (none edited by hand, none regenerated without it).
2. Every measured figure in README.md (a number with %, µs, ns or ms),
   outside code blocks, occurs in docs/RESULTS.md as written, signs and
   decimals included (a time may stand bare in a table cell whose column
   names its unit). Figures that are settings, not results, are listed
   below with why. This checks that each figure is in the results, not
   that it is the right one: a reviewer still reads which table a
   sentence quotes (each names its report).
Exit 1 with each figure that is not found."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Not results: confidence levels and option defaults the README explains.
SETTINGS = {
    '95%',          # the intervals' confidence level
    '1.0 µs',       # the per-sample target on javac (docs/stacks.md), not a result
}

# A number may carry thousands separators ("6,325 ns" is one figure, not "325 ns").
FIGURE = re.compile(r'(?<![\w.,])[+\-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s?(?:%|µs|ns|ms)(?!\w)')


def figures(text):
    fence = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith('```'):
            fence = not fence
            continue
        if fence:
            continue
        for m in FIGURE.finditer(line):
            yield n, m.group(0)


def main():
    rc = subprocess.run([sys.executable, os.path.join(ROOT, 'bench', 'results.py'), '--check']).returncode
    if rc:
        return 1
    readme = open(os.path.join(ROOT, 'README.md'), encoding='utf-8').read()
    results = open(os.path.join(ROOT, 'docs', 'RESULTS.md'), encoding='utf-8').read().replace('−', '-')
    missing = []
    count = 0
    for n, fig in figures(readme):
        if fig in SETTINGS:
            continue
        count += 1
        f = fig.replace('−', '-')
        # "+8.1%" may stand in a table as "+8.1%" or with a space before the unit.
        variants = {f, f.replace(' ', ''), re.sub(r'(\d)(%|µs|ns|ms)$', r'\1 \2', f)}
        found = any(v in results for v in variants)
        unit = re.search(r'(µs|ns|ms)$', f)
        if not found and unit:
            # A table whose column names the unit: "| 35 |", "| **35** |" or "| 76 [71, 99] |".
            num = re.escape(f[:unit.start()].strip())
            found = re.search(r'\|\s*(\*\*)?' + num + r'(\*\*)?\s*(\||\[|\()', results) is not None
        if not found:
            missing.append('README.md:%d: %s' % (n, fig))
    if missing:
        print('figures in README.md not in docs/RESULTS.md:\n  ' + '\n  '.join(missing))
        return 1
    print('readme_figures: %d figures in README.md, each in docs/RESULTS.md' % count)
    return 0


if __name__ == '__main__':
    sys.exit(main())
