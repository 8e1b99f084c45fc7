#!/usr/bin/env python3
"""Runs a command (a JVM) and says where its CPU went, by thread.

  python3 bench/load/threads.py OUT.json -- java ...

Polls /proc/PID/task/*/stat every 0.1 s while the command runs and keeps
each thread's last user+system time (a thread's time can only grow, and
the last reading before it ends is within 0.1 s of its total), then
writes, per group of threads named as HotSpot names them, the CPU seconds:
agent (our threads: "heapprobe", the agent thread, and the threads it
starts, which inherit its name: the marking request's helper, the upload
sender), gc (GC workers, concurrent markers, the VM thread that runs the
pauses), jit, the program's own, and the rest. A short-lived thread that
starts and ends between two polls is missed; "process" is the command's
own user+system time (wait4), which counts every thread and not this
poller. The command's exit status is passed on.
"""
import json
import os
import re
import subprocess
import sys
import time

GROUPS = [
    ('agent', re.compile(r'^heapprobe')),
    ('gc', re.compile(r'^(GC Thread|G1 |Z[A-Z]|Shenandoah|Conc|VM Thread|ParGC|GCTaskThread)')),
    ('jit', re.compile(r'^(C1 |C2 |Sweeper)')),
    ('program', re.compile(r'^(worker-|main$|java$)')),
]


def group(comm):
    for name, pat in GROUPS:
        if pat.search(comm):
            return name
    return 'other'


def main():
    out, cmd = sys.argv[1], sys.argv[sys.argv.index('--') + 1:]
    tick = os.sysconf('SC_CLK_TCK')
    p = subprocess.Popen(cmd)
    last = {}
    while True:
        pid, status, r = os.wait4(p.pid, os.WNOHANG)
        if pid:
            rc, ru = os.waitstatus_to_exitcode(status), r
            break
        try:
            tids = os.listdir('/proc/%d/task' % p.pid)
        except OSError:
            tids = []
        for t in tids:
            try:
                with open('/proc/%d/task/%s/stat' % (p.pid, t)) as f:
                    s = f.read()
            except OSError:
                continue
            comm = s[s.index('(') + 1:s.rindex(')')]
            fields = s[s.rindex(')') + 2:].split()
            last[t] = (comm, (int(fields[11]) + int(fields[12])) / tick)
        time.sleep(0.1)
    cpu, by_name = {}, {}
    for comm, sec in last.values():
        cpu[group(comm)] = cpu.get(group(comm), 0.0) + sec
        by_name[comm] = by_name.get(comm, 0.0) + sec
    with open(out, 'w') as f:
        json.dump({'groups': cpu, 'threads': by_name, 'rc': rc,
                   'process': ru.ru_utime + ru.ru_stime}, f, indent=1, sort_keys=True)
    sys.exit(rc)


if __name__ == '__main__':
    main()
