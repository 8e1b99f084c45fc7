"""bench/threads/run.sh's rows and table: the site ShortThreads.keep in a
collapsed exit profile (and its .alloc) against the program's truth."""
import collections
import statistics
import sys


def site(path):
    total = 0.0
    with open(path) as f:
        for line in f:
            stack, value = line.rsplit(' ', 1)
            if 'ShortThreads.keep' in stack:
                total += float(value)
    return total


def truth(out, key):
    with open(out) as f:
        for line in f:
            if line.startswith(key + ': '):
                return float(line.split(': ', 1)[1])
    raise SystemExit('threads bench: no %s in %s' % (key, out))


def row(d, prefix):
    print('%s,%d,%d,%.0f,%.0f' % (prefix, truth(d + '/out', 'truth.alloc'), truth(d + '/out', 'truth.keep'),
                                 site(d + '/p.collapsed.alloc'), site(d + '/p.collapsed')))


def cell(xs):
    if not xs:
        return '-'
    return '%+.1f%% [%+.1f..%+.1f]' % (statistics.median(xs), min(xs), max(xs))


def table(csv, rev, command):
    rows = collections.defaultdict(lambda: collections.defaultdict(lambda: ([], [])))
    order = []
    with open(csv) as f:
        next(f)
        for line in f:
            jdk, iv, threads, kib, every, build, rep, at, kt, a, l = line.strip().split(',')
            key = (jdk, iv, threads, kib, every)
            if key not in order:
                order.append(key)
            al, li = rows[key][build]
            al.append(100 * (float(a) / float(at) - 1))
            li.append(100 * (float(l) / float(kt) - 1))
    builds = sorted({b for k in rows for b in rows[k]})
    print('# Short-lived threads: each thread\'s bytes after its last sample\n')
    print('At %s. Command: `%s`. Median [min..max] over the runs, %% off the truth (the threads\' own '
          'allocated-bytes counts).\n' % (rev, command))
    head = '| JDK | interval | threads x KiB (kept 1 in) |'
    for b in builds:
        head += ' %s allocated | %s live |' % (b, b)
    print(head)
    print('|' + '---|' * (3 + 2 * len(builds)))
    for key in order:
        jdk, iv, threads, kib, every = key
        line = '| %s | %s | %s x %s (%s) |' % (jdk, iv, threads, kib, every)
        for b in builds:
            al, li = rows[key][b]
            line += ' %s | %s |' % (cell(al), cell(li))
        print(line)


if __name__ == '__main__':
    if sys.argv[1] == 'row':
        row(sys.argv[2], sys.argv[3])
    else:
        table(sys.argv[2], sys.argv[3], sys.argv[4])
