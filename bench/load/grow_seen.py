#!/usr/bin/env python3
"""The grow site's periodic profiles split by what the markings had seen.

Usage: python3 bench/load/grow_seen.py RUN_DIR... (run dirs of
`GROW=20 SHRINK=6 SITE=grow bash bench/load/run.sh`, text profiles).

For each build ("new", "old") over the runs' directories: the periodic
profiles after the list's first drop with the list at 20 MiB or more by
construction, as test_load's grown-list test takes them. "seen": the
latest marking the profile names began more than 0.05 s after the list's
latest drop (the profile gives its start to 0.1 s), so a marking could
have found the drop; their error at the grow site, and how many are
within 10%. "before": the rest, where no marking began after the drop
and the dropped list reads as it was (generational ZGC's young
collections clear no weak reference: marks.h)."""
import datetime
import glob
import re
import statistics
import sys

MiB = 1 << 20
UNIT = {'B': 1, 'KiB': 1024, 'MiB': MiB, 'GiB': MiB * 1024}


def truth_rows(d):
    rows, end = [], None
    for line in open(d + '/truth'):
        f = line.split()
        if f[-1] == 'end':
            end = int(f[0]) / 1000
            break
        rows.append((int(f[0]) / 1000, int(f[2])))
    return rows, end


def at(rows, when):
    """The list by construction at `when`, and its latest drop by then."""
    v, prev, drop = -1, 0, -1
    for t, g in rows:
        if t > when:
            break
        if g < prev:
            drop = t
        v = prev = g
    return v, drop


def profiles(d):
    rows, end = truth_rows(d)
    first = next((t for (t, g), (_, p) in zip(rows[1:], rows) if g < p), None)
    out = []
    for path in sorted(glob.glob(d + '/p-*.txt')):
        t = open(path).read()
        m = re.search(r'time: (\S+ \S+)', t)
        when = datetime.datetime.strptime(m.group(1), '%Y-%m-%d %H:%M:%S.%f').replace(
            tzinfo=datetime.timezone.utc).timestamp()
        if end and when >= end:
            continue
        live = re.search(r'\nlive view:([^\n]*)', t)
        b = re.search(r'([\d.]+) s before', live.group(1)) if live else None
        start = when - float(b.group(1)) if b else -1
        g = re.search(r'\n\s*\d+\. ([\d.]+) (\w+) \+- [^\n]*\n\s*LoadService\.grow \(', t)
        view = float(g.group(1)) * UNIT[g.group(2)] if g else 0
        want, drop = at(rows, when)
        if first is None or when <= first or want < 20 * MiB:
            continue
        out.append(('seen' if start > drop + 0.05 else 'before', 100 * (view / want - 1)))
    return out


def main():
    for build in ('new', 'old'):
        res = [p for d in sys.argv[1:] for r in glob.glob(d + '/*-' + build + '-*') for p in profiles(r)]
        if not res:
            continue
        seen = [e for k, e in res if k == 'seen']
        before = [e for k, e in res if k == 'before']
        line = f'{build}: after a marking began after the drop {len(seen)}'
        if seen:
            line += (f', {sum(abs(e) < 10 for e in seen)} within 10%, median {statistics.median(seen):+.1f}% '
                     f'[{min(seen):+.1f}, {max(seen):+.1f}]')
        line += f'; before one did {len(before)}: ' + ' '.join(f'{e:+.0f}%' for e in before)
        print(line)


if __name__ == '__main__':
    main()
