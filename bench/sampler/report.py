#!/usr/bin/env python3
"""bench/sampler/run.sh's rows and table (see run.sh)."""
import csv
import datetime
import importlib.util
import math
import os
import re
import statistics
import sys

# bench/load/report.py's size ("193.1 MiB" -> bytes), loaded by path: this file has the same name.
_spec = importlib.util.spec_from_file_location(
    'load_report', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'load', 'report.py'))
_load_report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_load_report)
size = _load_report.size


def ivbytes(s):
    return int(s[:-1]) * 1024 if s.endswith('k') else int(s[:-1]) << 20 if s.endswith('m') else int(s)


def row(d, jdk, iv, rep):
    out = open(d + '/out').read()
    m = re.search(r'held (\d+) entries (\d+) garbage (\d+) expected (\d+)', out)
    if not m:
        sys.exit('sampler bench: no "held" line in %s/out' % d)
    held, allocated, expected = int(m.group(1)), int(m.group(2)) + int(m.group(3)), int(m.group(4))
    lines = open(d + '/p.txt').read().split('\n')
    view = 0.0
    for i, l in enumerate(lines[:-1]):
        s = re.match(r'\s+\d+\.\s+([\d.]+ \w+)\s', l)
        if s and 'HeldSet.cacheEntry' in lines[i + 1]:
            view += size(s.group(1))
    n = re.search(r'profile at exit: (\d+) samples at interval', '\n'.join(lines))
    if not n:
        sys.exit('sampler bench: no sample count in %s/p.txt' % d)
    print('%s,%s,%s,%d,%d,%d,%.0f,%s' % (jdk, iv, rep, held, allocated, expected, view, n.group(1)))


def table(raw, commit, command):
    rows = list(csv.DictReader(open(raw)))
    print('# The JVM\'s allocation sampler against known bytes\n')
    print('Commit %s, %s, 2 CPUs. Command: `%s`.\n' % (commit, datetime.date.today(), command))
    print('bench/sampler/HeldSet.java: a set of byte[] of 64..1983 bytes held (a static field) after 1M random '
          'replacements, each with 4 byte[] of 64..4159 bytes of garbage; single-threaded; no System.gc(). '
          '"live": heapprobe\'s exit profile (verified by its marking) at the held set\'s site against the held bytes. '
          '"samples": the samples the JVM took (the profile\'s count, JVM start-up\'s few included) against their '
          'expectation, the sum of 1 - e^{-size/interval} over the objects HeldSet allocated; the sd of either, from sampling alone, is about sqrt(interval / bytes) '
          '(live) and 1 / sqrt(samples). Median [min, max] over the runs.\n')
    print('| JDK | interval | runs | live (error each) | live median [min, max] | samples against expected: median [min, max] | sampling sd (live, samples) |')
    print('|---|---|---|---|---|---|---|')
    keys = []
    for r in rows:
        k = (r['jdk'], r['interval'])
        if k not in keys:
            keys.append(k)
    for k in keys:
        rs = [r for r in rows if (r['jdk'], r['interval']) == k]
        live = [(float(r['view']) / int(r['held']) - 1) * 100 for r in rs]
        iv = ivbytes(k[1])
        smp = [(int(r['samples']) / int(r['expected']) - 1) * 100 for r in rs]
        sd_live = math.sqrt(iv / statistics.mean(int(r['held']) for r in rs)) * 100
        sd_s = 100 / math.sqrt(statistics.mean(int(r['samples']) for r in rs))
        print('| %s | %s | %d | %s | %+.1f%% [%+.1f, %+.1f] | %+.1f%% [%+.1f, %+.1f] | %.1f%%, %.1f%% |' % (
            k[0], k[1], len(rs), ' '.join('%+.0f%%' % x for x in live), statistics.median(live), min(live), max(live),
            statistics.median(smp), min(smp), max(smp), sd_live, sd_s))


if __name__ == '__main__':
    if sys.argv[1] == 'ivbytes':
        print(ivbytes(sys.argv[2]))
    elif sys.argv[1] == 'row':
        row(*sys.argv[2:6])
    else:
        table(*sys.argv[2:5])
