#!/usr/bin/env python3
"""A stand-in for a JDK 8 JVM, for the heapprobe command's "no JEP 331" test
(no JDK 8 is reachable from this machine's registries): it maps a file named
libjvm.so, as every HotSpot does, and publishes jvmstat counters in
/tmp/hsperfdata_<user>/<pid> in HotSpot's format (perfMemory.hpp) saying
java.vm.specification.version=1.8 with attach enabled. heapprobe must refuse
it from those counters alone, without signalling it: this process keeps
SIGQUIT's default action (it dies of it), so the test sees a signal sent.

usage: fake_jdk8.py WORKDIR STOPFILE"""
import mmap, os, pwd, struct, sys, time

work, stop = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
lib = os.path.join(work, "libjvm.so")
with open(lib, "wb") as f:
    f.write(b"\0" * 4096)
fd = os.open(lib, os.O_RDONLY)
m = mmap.mmap(fd, 4096, prot=mmap.PROT_READ)   # in /proc/PID/maps as .../libjvm.so


def entry(name, value):
    """A string (byte vector) entry: header, name, padding, data."""
    name_b = name.encode() + b"\0"
    data = value.encode() + b"\0"
    name_off = 20
    data_off = (name_off + len(name_b) + 7) // 8 * 8
    length = (data_off + len(data) + 7) // 8 * 8
    head = struct.pack("<iiibbbbi", length, name_off, len(data), ord("B"), 0, 1, 1, data_off)
    body = head + name_b
    body += b"\0" * (data_off - len(body)) + data
    return body + b"\0" * (length - len(body))


entries = entry("sun.rt.jvmCapabilities", "1" + "0" * 63) + \
    entry("java.property.java.vm.specification.version", "1.8")
used = 32 + len(entries)
prologue = bytes([0xCA, 0xFE, 0xC0, 0xC0, 1, 2, 0, 1]) + struct.pack("<iiqii", used, 0, 0, 32, 2)
d = "/tmp/hsperfdata_" + pwd.getpwuid(os.geteuid()).pw_name
os.makedirs(d, exist_ok=True)
perf = os.path.join(d, str(os.getpid()))
with open(perf, "wb") as f:
    f.write(prologue + entries + b"\0" * (32768 - used))
print("ready", flush=True)
try:
    deadline = time.time() + 300
    while not os.path.exists(stop) and time.time() < deadline:
        time.sleep(0.05)
finally:
    os.unlink(perf)
