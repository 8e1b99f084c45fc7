#!/usr/bin/env python3
"""The house's rules (issue 29), read from the sources:

1. Data flows one way through the floors: src/vmstructs includes nothing
   from src/heapusage or src/agent, src/heapusage nothing from src/agent;
   src/cli, the command beside them, anything but the agent's internals
   (its writers and formats only).
2. The agent reaches the heapusage floor only through heapprobe.h and its
   interface headers (INTERFACE below): never heapusage/probe.h, the
   probe's struct.
3. No cycle between modules (x.c with x.h): a module that includes
   another's header may not be included back, directly or around a loop.
4. No file in src/ over 800 lines without its reason at its top (a
   comment within the first 8 lines that says why: "Why one file",
   "Why ... long", or "is the constraint that shapes this file").
Exit 1 with each breach."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, 'src')
FLOOR = {'vmstructs': 0, 'heapusage': 1, 'agent': 2}
INTERFACE = {'heapusage/probe_access.h', 'heapusage/marking.h', 'heapusage/gckind.h'}
CLI_MAY = {'agent/writer.h', 'agent/units.h', 'agent/formats.h'}
LONG = 800
REASON = re.compile(r'Why one file|Why .* long|constraint that shapes this file', re.I)

files = []
for d, _, names in os.walk(SRC):
    for n in names:
        if n.endswith(('.c', '.h')):
            files.append(os.path.relpath(os.path.join(d, n), SRC))
errors = []
includes = {}
for f in sorted(files):
    text = open(os.path.join(SRC, f), encoding='utf-8', errors='replace').read()
    incs = re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M)
    includes[f] = incs
    room = f.split('/')[0]
    for inc in incs:
        top = inc.split('/')[0]
        if room in FLOOR and top in FLOOR and FLOOR[top] > FLOOR[room]:
            errors.append('%s includes %s: from %s up to %s' % (f, inc, room, top))
        if room == 'agent' and top == 'heapusage' and inc not in INTERFACE:
            errors.append('%s includes %s: the agent goes through %s' % (f, inc, ', '.join(sorted(INTERFACE))))
        if room == 'cli' and top == 'agent' and inc not in CLI_MAY:
            errors.append('%s includes %s: the command takes only %s of the agent' % (f, inc, ', '.join(sorted(CLI_MAY))))
    lines = text.count('\n')
    if lines > LONG and not REASON.search('\n'.join(text.splitlines()[:8])):
        errors.append('%s: %d lines and no reason at its top' % (f, lines))

# Modules: x.c and x.h as one node; an edge to the module of each header included.
def module(path):
    return os.path.splitext(path)[0]

edges = {}
for f, incs in includes.items():
    m = module(f)
    for inc in incs:
        t = module(inc)
        if t != m and inc in includes:
            edges.setdefault(m, set()).add(t)

state = {}
stack = []

def visit(m):
    state[m] = 1
    stack.append(m)
    for t in sorted(edges.get(m, ())):
        if state.get(t) == 1:
            errors.append('cycle: ' + ' -> '.join(stack[stack.index(t):] + [t]))
        elif t not in state:
            visit(t)
    stack.pop()
    state[m] = 2

for m in sorted({module(f) for f in files}):
    if m not in state:
        visit(m)

for e in errors:
    print('layering: ' + e)
if errors:
    sys.exit(1)
print('layering: %d files, floors one way, the agent through %d interface headers, no module cycle, '
      'none over %d lines without its reason' % (len(files), len(INTERFACE), LONG))
