"""bench/load/run.sh's rows and table.

row DIR NAME JDK LIB REP: one CSV row per profile in DIR (format=text):
  its time, periodic or exit, the cache site's inuse bytes, and the truth
  (LoadService's cache bytes in the truth file's line nearest that second;
  0 for the exit profile, written after the workers ended).
table RAW COMMIT COMMAND: the markdown report: per configuration and
  library, every periodic profile's error against the truth, the median
  with its min-max, and the exit profile's bytes at the cache's site."""
import csv, datetime, glob, os, platform, re, statistics, sys

UNITS = {'B': 1, 'KiB': 1 << 10, 'MiB': 1 << 20, 'GiB': 1 << 30, 'TiB': 1 << 40}


def size(s):
    m = re.match(r'(-?[\d.]+) (B|KiB|MiB|GiB|TiB)', s)
    return float(m.group(1)) * UNITS[m.group(2)]


def row(d, name, jdk, lib, rep):
    truth = []
    end = None
    if not os.path.exists(os.path.join(d, 'truth')):
        return      # the JVM did not start: run.sh said so
    for line in open(os.path.join(d, 'truth')):
        f = line.split()
        if len(f) < 2:
            continue
        t = int(f[0]) / 1000.0
        if 'end' in f:
            end = t
        else:
            truth.append((t, int(f[1])))
    out = csv.writer(sys.stdout)
    for p in sorted(glob.glob(os.path.join(d, 'p-*.txt'))):
        txt = open(p).read()
        m = re.search(r'^time: (\S+ \S+) \+0000', txt, re.M)
        if not m:
            continue
        t = datetime.datetime.strptime(m.group(1), '%Y-%m-%d %H:%M:%S').replace(
            tzinfo=datetime.timezone.utc).timestamp()
        view = 0.0
        for blk in re.finditer(r'^\s+\d+\. (.+?) \+- .*?\n((?:       .*\n)+)', txt, re.M):
            if 'LoadService.cacheEntry' in blk.group(2).split('\n')[0]:
                view += size(blk.group(1))
        exiting = end is not None and t >= int(end)
        tr = 0 if exiting else min(truth, key=lambda x: abs(x[0] - t - 0.5))[1]
        out.writerow([name, jdk, lib, rep, os.path.basename(p), 'exit' if exiting else 'periodic', int(view), tr])


def table(raw, commit, command):
    rows = list(csv.DictReader(open(raw)))
    keys = []
    for r in rows:
        k = (r['config'], r['jdk'], r['lib'])
        if k not in keys:
            keys.append(k)
    print('# The live view under load\n')
    print('Commit %s, %s, %s (%d CPUs). Command: `%s`.\n' % (
        commit, datetime.date.today().isoformat(), platform.node() or 'this machine', os.cpu_count(), command))
    print('test/java/LoadService.java: two threads, each turning a cache of ~1 KiB byte[] over ~4 times a second, '
          'a few GB/s of garbage, no System.gc(); default options plus period=4. Truth: the cache by '
          'construction at the second of each profile. "periodic": every profile written while it ran, '
          'inuse at the cache site against the truth (the first, before any marking, included); "exit": '
          'the profile at exit, written after the workers ended and their caches died (truth 0), as '
          'MiB at the cache site.\n')
    print('| collector | JDK | build | periodic profiles (error each) | median [min, max] | exit (MiB at the dead caches) |')
    print('|---|---|---|---|---|---|')
    for k in keys:
        rs = [r for r in rows if (r['config'], r['jdk'], r['lib']) == k]
        errs = [100.0 * (int(r['view']) / int(r['truth']) - 1) for r in rs if r['kind'] == 'periodic' and int(r['truth']) > 0]
        ex = ['%.1f' % (int(r['view']) / 2**20) for r in rs if r['kind'] == 'exit']
        med = '%+.1f%% [%+.1f, %+.1f]' % (statistics.median(errs), min(errs), max(errs)) if errs else '-'
        print('| %s | %s | %s | %s | %s | %s |' % (k[0], k[1], k[2], ' '.join('%+.0f%%' % e for e in errs), med,
                                                  ', '.join(ex) or '-'))


if __name__ == '__main__':
    if sys.argv[1] == 'row':
        row(*sys.argv[2:7])
    else:
        table(*sys.argv[2:5])
