#!/usr/bin/env python3
"""Asks a Pyroscope server what it holds, through its query API (Connect
JSON), for the upload tests.

  query.py BASE SERVICE TYPE series FROM_MS TO_MS
      one line per point: "<timestamp ms> <value>" (step 0.1 s: one
      upload a point, as long as uploads are 100 ms apart)
  query.py BASE SERVICE TYPE frame FROM_MS TO_MS FRAME
      the bytes (or objects) whose leaf frame is FRAME, merged over the range

TYPE is a sample type of the memory profile: inuse_space, alloc_space, ...
"""
import json
import sys
import urllib.request


def call(base, method, body):
    req = urllib.request.Request(base.rstrip("/") + "/querier.v1.QuerierService/" + method,
                                 data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def main():
    base, service, typ, what, start, end = sys.argv[1:7]
    unit = "count" if typ.endswith("_objects") else "bytes"
    q = {"profileTypeID": "memory:%s:%s:space:bytes" % (typ, unit),
         "labelSelector": '{service_name="%s"}' % service, "start": int(start), "end": int(end)}
    if what == "series":
        q["step"] = 0.1
        for s in call(base, "SelectSeries", q).get("series", []):
            for p in s.get("points", []):
                print(p["timestamp"], p["value"])
    elif what == "frame":
        frame = sys.argv[7]
        fg = call(base, "SelectMergeStacktraces", q).get("flamegraph", {})
        names = fg.get("names", [])
        total = 0
        for level in fg.get("levels", []):
            v = [int(x) for x in level.get("values", [])]
            for i in range(0, len(v), 4):   # (offset, total, self, name index)
                if names[v[i + 3]] == frame:
                    total += v[i + 2]
        print(total)
    else:
        sys.exit("unknown query " + what)


if __name__ == "__main__":
    main()
