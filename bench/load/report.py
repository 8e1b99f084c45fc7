"""bench/load/run.sh's rows and table.

row DIR NAME JDK LIB REP [SITE INTERVAL]: one CSV row per profile in DIR
  (heapprobe's format=text, `heapprobe top`'s screens, async-profiler's
  collapsed files, ddprof's HeapLiveObject events as JfrDump prints them):
  its time, periodic or exit, the site's live bytes (SITE cache or grow),
  and the truth (LoadService's bytes in force at that moment, truth_at;
  0 for the cache in the exit profile, written after the workers ended).
phase INTERVAL DIR...: periodic profiles of the new and old builds split
  by the markings counted before each (phase's docstring).
since INTERVAL DIR...: the same split by the time since the marking the
  view rests on (since's docstring).
table RAW COMMIT COMMAND [SITE]: the markdown report: per configuration
  and library, every periodic profile's error against the truth, the
  median with its min-max, how many within 10%, and the exit profile's
  bytes at the cache's site."""
import csv, datetime, glob, math, os, platform, re, statistics, sys

UNITS = {'B': 1, 'KiB': 1 << 10, 'MiB': 1 << 20, 'GiB': 1 << 30, 'TiB': 1 << 40}


def size(s):
    m = re.match(r'(-?[\d.]+) (B|KiB|MiB|GiB|TiB)', s)
    return float(m.group(1)) * UNITS[m.group(2)]


SITES = {'cache': ('LoadService.cacheEntry', 1), 'grow': ('LoadService.grow', 2)}


class Second(float):
    """An epoch second known only to the second (file names, older
    profiles): its moment is taken at the second's middle."""


def truth_at(truth, t):
    """The program's account at moment t. LoadService changes the grow
    site only in the loop that writes the truth line, so between lines it
    holds the last line's value: the last line at or before t, exact to the
    millisecond. A time known only to its second takes the line nearest the
    second's middle (up to 0.5 s off: 10 MiB on a site growing 20 MiB/s, and
    on either side of a drop)."""
    if isinstance(t, Second):
        return min(truth, key=lambda x: abs(x[0] - t - 0.5))[1]
    before = [x for x in truth if x[0] <= t]
    return (before[-1] if before else truth[0])[1]


def stamp(name):
    """Epoch seconds of a p-yyyymmdd-HHMMSS file name (UTC: heapprobe's and
    DdprofDriver's %t; async-profiler's is local time, UTC on these machines)."""
    m = re.search(r'p-(\d{8}-\d{6})', name)
    return Second(datetime.datetime.strptime(m.group(1), '%Y%m%d-%H%M%S').replace(
        tzinfo=datetime.timezone.utc).timestamp()) if m else None


def views(d, lib, frame, interval):
    """(epoch second, bytes shown at the site, its stated 95% margin or None,
    the whole view's live bytes or None) of every profile or screen in DIR.
    The whole view is heapprobe's alone (the text profile's "live view:
    live", top's "sampled: ... live now"): what it shows outside the site
    should be the JVM's own few MiB, and a site the estimate gets wrong
    (short-lived garbage counted alive) shows there, not at the cache."""
    if lib in ('top', 'top-old'):
        # heapprobe top's screens (non-tty: one after another, each begun by
        # the clear-screen sequence): "refreshed HH:MM:SS", then site rows
        # LIVE +-95% RECENT ALLOCATED CLASS SITE (leaf first, ' < ').
        p = os.path.join(d, 'top.txt')
        if not os.path.exists(p):
            return
        day = datetime.datetime.fromtimestamp(os.stat(p).st_mtime, datetime.timezone.utc).date()
        for scr in open(p, errors='replace').read().split('\033[H\033[2J')[1:]:
            m = re.search(r'refreshed (\d\d):(\d\d):(\d\d)(\.\d+)?', scr)
            if not m:
                continue
            t = datetime.datetime(day.year, day.month, day.day, int(m.group(1)), int(m.group(2)), int(m.group(3)),
                                  tzinfo=datetime.timezone.utc).timestamp()
            t = t + float(m.group(4)) if m.group(4) else Second(t)
            v, margin = 0.0, None
            has_margin = '+-95%' in scr     # the column is there (every top.c since 44a6e80)
            for line in scr.splitlines():
                # LIVE and its +-95% (the site's stated 95% margin: sampling and the survival curve's error)
                f = re.match(r'\s*(-?[\d.]+ (?:B|KiB|MiB|GiB|TiB))\s+([\d.]+ (?:B|KiB|MiB|GiB|TiB))?', line)
                if f and re.search(r'\s' + re.escape(frame) + r'(\s|$| <)', line):
                    v += size(f.group(1))
                    if has_margin and f.group(2):
                        margin = (margin or 0.0) + size(f.group(2))
            w = re.search(r'^sampled: (\S+ \S+) live now', scr, re.M)
            yield t, v, margin, size(w.group(1)) if w else None
    elif lib == 'async':
        for p in sorted(glob.glob(os.path.join(d, 'p-*.collapsed'))):
            v = sum(int(l.rsplit(' ', 1)[1]) for l in open(p) if frame in l and l.rstrip().rsplit(' ', 1)[-1].isdigit())
            yield stamp(p), v * interval, None, None
    elif lib == 'ddprof':
        for p in sorted(glob.glob(os.path.join(d, 'p-*.events'))):
            v = 0.0
            for l in open(p):
                typ, fields, stack = (l.rstrip('\n').split('\t') + ['', ''])[:3]
                f = dict(kv.split('=', 1) for kv in fields.split('|') if '=' in kv)
                if frame in stack and 'size' in f and 'weight' in f:
                    v += float(f['size']) * float(f['weight'])
            yield stamp(p), v, None, None
    else:
        for p in sorted(glob.glob(os.path.join(d, 'p-*.txt'))):
            txt = open(p).read()
            m = re.search(r'^time: (\S+ \d\d:\d\d:\d\d)(\.\d+)? \+0000', txt, re.M)
            if not m:
                continue
            t = datetime.datetime.strptime(m.group(1), '%Y-%m-%d %H:%M:%S').replace(
                tzinfo=datetime.timezone.utc).timestamp()
            t = t + float(m.group(2)) if m.group(2) else Second(t)
            v, margin = 0.0, 0.0
            for blk in re.finditer(r'^\s+\d+\. (.+?) \+- (\S+ \S+) .*?\n((?:       .*\n)+)', txt, re.M):
                if frame in blk.group(3).split('\n')[0]:
                    v += size(blk.group(1))
                    margin += size(blk.group(2))
            w = re.search(r'^live view: live (\S+ \S+)', txt, re.M)
            yield t, v, margin, size(w.group(1)) if w else None


def spread(errs):
    """A list of errors (%) as its median and range: "+1.2% [-3.4, +5.6]"."""
    return '%+.1f%% [%+.1f, %+.1f]' % (statistics.median(errs), min(errs), max(errs))


def header(*cols):
    """A markdown table's header row and rule."""
    print('| %s |' % ' | '.join(cols))
    print('|' + '---|' * len(cols))


def row(d, name, jdk, lib, rep, site='cache', interval='524288'):
    out = csv.writer(sys.stdout)
    for r in rows(d, name, jdk, lib, rep, site, interval):
        out.writerow(r)


def rows(d, name, jdk, lib, rep, site='cache', interval='524288'):
    """row's rows, as lists: name, jdk, lib, rep, index of the view in
    time order, periodic or exit, view, truth, margin, interval, rest."""
    frame, col = SITES[site]
    truth = []
    end = None
    if not os.path.exists(os.path.join(d, 'truth')):
        return      # the JVM did not start: run.sh said so
    for line in open(os.path.join(d, 'truth')):
        f = line.split()
        if len(f) < 3:
            continue
        t = int(f[0]) / 1000.0
        if 'end' in f:
            end = t
        else:
            truth.append((t, int(f[col])))
    # In the order written (a second profile in one second is p-..._1.txt).
    vs = sorted((x for x in views(d, lib, frame, float(interval)) if x[0] is not None), key=lambda x: float(x[0]))
    for i, (t, view, margin, whole) in enumerate(vs):
        if not truth:
            break
        if isinstance(t, Second):
            exiting = end is not None and t >= int(end)
        else:
            exiting = end is not None and t >= end
            if not exiting and t > truth[-1][0] + 0.2:
                continue        # while the workers were ending: the truth file cannot say
        if exiting and (site != 'cache' or lib in ('top', 'top-old') or i != len(vs) - 1):
            # Written in the second the load ended (alive or dead by
            # then, the truth file cannot say), or not the exit profile.
            continue
        tr = 0 if exiting else truth_at(truth, t)
        yield [name, jdk, lib, rep, i, 'exit' if exiting else 'periodic', int(view), tr,
               '' if margin is None else int(margin), interval, '' if whole is None else int(whole - view)]


def table(raw, commit, command, site='cache'):
    rows = list(csv.DictReader(open(raw)))
    keys = []
    for r in rows:
        k = (r['config'], r['jdk'], r['lib'])
        if k not in keys:
            keys.append(k)
    print('# The live view under load\n')
    print('Commit %s, %s, %s (%d CPUs). Command: `%s`.\n' % (
        commit, datetime.date.today().isoformat(), platform.node() or 'this machine', os.cpu_count(), command))
    what = 'the cache' if site == 'cache' else 'the grow site (a list growing at a known rate, dropped every few seconds)'
    print('test/java/LoadService.java: two threads, each turning a cache of ~1 KiB byte[] over ~%s times a second, ' % os.environ.get('TURNOVER', '4') +
          'a few GB/s of garbage, no System.gc(); default options plus period=%s. Truth: %s by '
          'construction at the moment of each profile (to the millisecond where the profile or screen '
          'states it: heapprobe\'s; the peers\' file names give the second, taken at its middle). '
          '"periodic": every profile written while it ran, '
          'inuse at that site against the truth (the first, before any marking, included); "exit": '
          'the profile at exit, written after the workers ended and their caches died (truth 0), as '
          'MiB at the cache site. Builds: "new" this build, "old" the one named OLD in the command, '
          '"top" this build\'s `heapprobe top` screens (LIVE column, one per refresh), "top-old" the OLD '
          'build\'s, "also" this build '
          'with the agent options named ALSO in the command added, "async" '
          'async-profiler 4.6 live (loop=4s; counts x interval), "ddprof" ddprof 1.22 live-heap '
          '(HeapLiveObject size x weight); all at the same sampling interval.\n' % (os.environ.get('PERIOD', '4'), what))
    print('"within 10%": periodic profiles within 10% of the truth, and beside it how many an exact '
          'estimator would have in expectation: one that knew every object\'s liveness still counts only the '
          'sampled ones, a Horvitz-Thompson sum whose relative sd is sqrt(R / L) for a live set of L bytes '
          'sampled at mean interval R (object sizes well below R): 5.2% for the 190 MiB cache at 512 KiB, so '
          'P(within 10%) = 2 Phi(0.10 / 0.052) - 1 = 0.945 per profile, not 1. "inside its interval": profiles '
          'whose 95% interval (the site\'s "+-" in the text profile) holds the truth, of those that state one: '
          'about 95% for honest intervals. "rest of the view": what the periodic profile\'s (or screen\'s) '
          'whole live view counts outside the site, MiB, median [max] (heapprobe only): the JVM\'s own objects, '
          'a few MiB, when the estimate is right everywhere; the garbage site counted alive shows here.\n')
    print('| collector | JDK | build | periodic profiles (error each) | median [min, max] | within 10% (exact: expected) | inside its 95% interval | rest of the view (MiB) | exit (MiB at the dead caches) |')
    print('|---|---|---|---|---|---|---|---|---|')
    for k in keys:
        rs = [r for r in rows if (r['config'], r['jdk'], r['lib']) == k]
        per = [r for r in rs if r['kind'] == 'periodic' and int(r['truth']) > 0]
        errs = [100.0 * (int(r['view']) / int(r['truth']) - 1) for r in per]
        ex = ['%.1f' % (int(r['view']) / 2**20) for r in rs if r['kind'] == 'exit']
        med = spread(errs) if errs else '-'
        each = ' '.join('%+.0f%%' % e for e in errs) if len(errs) <= 16 else '%d screens' % len(errs)
        # An exact estimator's chance of being within 10%: sd sqrt(R / L).
        exact = sum(math.erf(0.10 / math.sqrt(float(r.get('interval') or 524288) / int(r['truth'])) / math.sqrt(2))
                    for r in per)
        within = '%d/%d (%.1f)' % (sum(abs(e) <= 10 for e in errs), len(errs), exact) if errs else '-'
        stated = [r for r in per if r.get('margin')]
        inside = '%d/%d' % (sum(abs(int(r['view']) - int(r['truth'])) <= int(r['margin']) for r in stated),
                            len(stated)) if stated else '-'
        rest = [int(r['rest']) / 2**20 for r in per if r.get('rest')]
        rest = '%.0f [%.0f]' % (statistics.median(rest), max(rest)) if rest else '-'
        print('| %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (k[0], k[1], k[2], each, med, within, inside,
                                                                rest, ', '.join(ex) or '-'))

def split(interval, dirs, part_of):
    """heapprobe's periodic profiles in run directories (CONFIG-JDK-LIB-REP,
    LIB new or old), each error (%) filed under (build, part_of(its text))."""
    parts = {}
    for d in dirs:
        for r in sorted(glob.glob(os.path.join(d, '*-*-*-*'))):
            m = re.match(r'(.+)-(\d+)-(new|old)-(\d+)$', os.path.basename(r))
            if not m:
                continue
            files = sorted(glob.glob(os.path.join(r, 'p-*.txt')), key=os.path.getmtime)
            for c in rows(r, m.group(1), m.group(2), m.group(3), m.group(4), 'cache', interval):
                if c[5] != 'periodic' or c[7] <= 0 or c[4] >= len(files):
                    continue
                part = part_of(open(files[c[4]]).read())
                parts.setdefault((m.group(3), part), []).append(100.0 * (c[6] / c[7] - 1))
    return parts


def phase(interval, *dirs):
    """heapprobe's periodic profiles in run directories (split), split by
    how many markings each profile had counted (its "markings: N"): at most
    2 (the first requested marking and maybe one more: on G1 under this
    load, before the collector's own cycles begin) or more (the collector's
    own cycles counted too). Per build and part: profiles, within 10%,
    median error, sd, mean |error|."""
    def part_of(text):
        mk = re.search(r'markings: (\d+) \(source', text)
        return 'after at most 2 markings' if not mk or int(mk.group(1)) <= 2 else 'after 3 or more'
    parts = split(interval, dirs, part_of)
    print('| build | profiles | n | within 10% | median | sd | mean abs error |')
    print('|---|---|---|---|---|---|---|')
    for k in sorted(parts):
        e = parts[k]
        print('| %s | %s | %d | %d | %+.1f%% | %.1f%% | %.1f%% |' % (k[0], k[1], len(e), sum(abs(x) <= 10 for x in e),
              statistics.median(e), statistics.pstdev(e), statistics.mean(abs(x) for x in e)))


def since(interval, *dirs):
    """heapprobe's periodic profiles in run directories (split), split by
    the time since the last marking began that each states ("verified
    alive by a marking S s before", "survival since a marking S s before"
    where none of the view is counted as verified, or "none alive at the
    last marking, S s before"): under 1 s, or 1 s and more (the view
    then rests on the survival curves carried far from the last marking:
    a collector whose own cycles paused, or requests held to the budget).
    Per build and part: profiles, within 10%, beyond 15% and 25%, median
    error, the largest |error|."""
    def part_of(text):
        mk = re.search(r'(?:verified alive by a marking|survival since a marking|none alive at the last marking,) '
                       r'([\d.]+) s before', text)
        return 'no marking yet' if not mk else 'marking 1 s or more before' if float(mk.group(1)) >= 1 \
            else 'marking under 1 s before'
    parts = split(interval, dirs, part_of)
    print('| build | profiles | n | within 10% | beyond 15% | beyond 25% | median | largest abs error |')
    print('|---|---|---|---|---|---|---|---|')
    for k in sorted(parts):
        e = parts[k]
        print('| %s | %s | %d | %d | %d | %d | %+.1f%% | %.1f%% |' % (
            k[0], k[1], len(e), sum(abs(x) <= 10 for x in e), sum(abs(x) > 15 for x in e),
            sum(abs(x) > 25 for x in e), statistics.median(e), max(abs(x) for x in e)))


def cache_sites(txt):
    """The two cacheEntry sites of a heapprobe text profile, by the line
    of work() that calls them: (fill, replacements), each a dict of its
    live bytes, stated 95% margin and allocated bytes; None where the
    profile has not both."""
    found = []
    for blk in re.finditer(r'^\s+\d+\. (.+?) \+- (\S+ \S+) .*? alloc (\S+ \S+) .*?\n((?:       .*\n)+)', txt, re.M):
        frames = blk.group(4).split('\n')
        w = re.search(r'LoadService\.work \(LoadService\.java:(\d+)\)', frames[1] if len(frames) > 1 else '')
        if 'LoadService.cacheEntry' in frames[0] and w:
            found.append((int(w.group(1)), {'live': size(blk.group(1)), 'margin': size(blk.group(2)),
                                              'alloc': size(blk.group(3))}))
    if len(found) != 2:
        return None
    found.sort(key=lambda x: x[0])
    return found[0][1], found[1][1]


def cache_profiles(dirs):
    """Per run directory (CONFIG-JDK-LIB-REP, or a directory of one run)
    whose truth file has LoadService's fifth column: its name, its
    configuration and build, the truth lines (epoch s, cache bytes, bytes
    the replacements allocated) and its heapprobe periodic text profiles
    written while the load ran, as (epoch s, the two cache sites)."""
    for d in dirs:
        for r in sorted(glob.glob(os.path.join(d, '*-*-*-*'))) or [d]:
            tp = os.path.join(r, 'truth')
            if not os.path.exists(tp):
                continue
            lines = [(int(f[0]) / 1000.0, int(f[1]), int(f[4])) for f in (l.split() for l in open(tp))
                     if len(f) >= 5 and 'end' not in f]
            if not lines:
                continue
            profiles = []
            for p in sorted(glob.glob(os.path.join(r, 'p-*.txt'))):
                txt = open(p).read()
                m = re.search(r'^time: (\S+ \d\d:\d\d:\d\d)(\.\d+)? \+0000', txt, re.M)
                cs = cache_sites(txt)
                if not m:
                    continue
                if not cs:
                    # Not both sites among its top ones (the exit
                    # profile's dead caches; a fill long gone): said.
                    print('(%s: %s without both cache sites, left out)' % (os.path.basename(r), os.path.basename(p)),
                          file=sys.stderr)
                    continue
                t = datetime.datetime.strptime(m.group(1), '%Y-%m-%d %H:%M:%S').replace(
                    tzinfo=datetime.timezone.utc).timestamp() + float(m.group(2) or 0)
                if t <= lines[-1][0] + 0.2:     # not written as the workers ended
                    profiles.append((t, cs))
            yield os.path.basename(r), re.sub(r'-\d+$', '', os.path.basename(r)), lines, profiles


def alloc(*dirs):
    """The cache's replacements' allocated bytes as heapprobe's periodic
    text profiles estimate them (the "alloc" of the cacheEntry site called
    from work()'s replacement loop, the later of its two call lines; the
    other is the start-up fill) against the bytes LoadService's workers
    counted them allocating (its truth file's fifth column) at each
    profile's moment: the sampler's own error at one site, apart from any
    marking. Per run directory and all told per configuration and build."""
    per = {}
    header('run', 'profiles: estimate vs counted (error)')
    for name, key, lines, profiles in cache_profiles(dirs):
        truth = [(t, replaced) for t, _, replaced in lines]
        cells = []
        for t, cs in profiles:
            est, counted = cs[1]['alloc'], truth_at(truth, t)
            if counted <= 0:
                continue
            err = 100.0 * (est / counted - 1)
            cells.append('%.0f vs %.0f MiB (%+.1f%%)' % (est / 2**20, counted / 2**20, err))
            per.setdefault(key, []).append(err)
        if cells:
            print('| %s | %s |' % (name, ', '.join(cells)))
    print()
    header('configuration and build', 'profiles', 'median error [min, max]')
    for k in sorted(per):
        print('| %s | %d | %s |' % (k, len(per[k]), spread(per[k])))


def sites(*dirs):
    """The cache's two sites apart (the bench's tables sum them): the
    start-up fill, whose entries are replaced at random, so that of its
    C0 bytes C0 exp(-replaced / C0) are left once the replacements have
    allocated `replaced` bytes (each entry's chance of never being drawn,
    exact to ~0.2% at ~95,000 entries a worker), and the replacements,
    the rest of the cache. From LoadService's truth file with its fifth
    column. Each heapprobe periodic text profile's live bytes at each site
    against that, per run directory, and all told per configuration and
    build: profiles within 10% of the site's truth, and inside their
    stated 95% interval."""
    per = {}
    header('run', 'profiles: fill, replacements (error each)')
    for name, key, lines, profiles in cache_profiles(dirs):
        # The fill is each worker's cache as first made: the cache bytes,
        # steady as entries are replaced (the first lines may have one
        # worker's only).
        c0 = statistics.median([c for _, c, _ in lines if c > 0] or [0])
        if c0 <= 0:
            continue
        truth = [(t, (c, replaced)) for t, c, replaced in lines]
        cells = []
        for t, cs in profiles:
            cache, replaced = truth_at(truth, t)
            fill = c0 * math.exp(-replaced / c0)
            errs = []
            for site, tr, which in ((cs[0], fill, 'fill'), (cs[1], cache - fill, 'replacements')):
                if tr <= 0:
                    continue
                e = 100.0 * (site['live'] / tr - 1)
                errs.append('%+.0f%%' % e)
                per.setdefault((key, which), []).append((e, abs(site['live'] - tr) <= site['margin']))
            cells.append(' '.join(errs))
        if cells:
            print('| %s | %s |' % (name, ', '.join(cells)))
    print()
    header('configuration and build', 'site', 'profiles', 'within 10%', 'inside its 95% interval',
           'median error [min, max]')
    for k in sorted(per):
        e = [x[0] for x in per[k]]
        print('| %s | %s | %d | %d | %d | %s |' % (k[0], k[1], len(e), sum(abs(x) <= 10 for x in e),
              sum(x[1] for x in per[k]), spread(e)))

if __name__ == '__main__':
    if sys.argv[1] == 'row':
        row(*sys.argv[2:9])
    elif sys.argv[1] == 'phase':
        phase(*sys.argv[2:])
    elif sys.argv[1] == 'since':
        since(*sys.argv[2:])
    elif sys.argv[1] == 'alloc':
        alloc(*sys.argv[2:])
    elif sys.argv[1] == 'sites':
        sites(*sys.argv[2:])
    else:
        table(*sys.argv[2:6])
