#!/usr/bin/env python3
"""Where each tune's device stood idle, from the spans of its --json report: idle while a
config was compiled and waiting for it (the search loop late to send it) or while none was
(compiles behind). Usage: idle.py REPORT.json..."""
import json, sys

for f in sys.argv[1:]:
    r = json.load(open(f))
    r = r[0] if isinstance(r, list) else r
    dev, compiled, first = [], {}, {}
    for k, x in enumerate(r["results"]):
        for s in x.get("spans") or []:
            if s["what"] == "compile":
                compiled[k] = s["to_s"]
            elif "device" in s:
                dev.append((s["from_s"], s["to_s"]))
                first[k] = min(first.get(k, 1e9), s["from_s"])
    if not dev:
        continue
    dev.sort()
    ready = behind = 0.0
    t = dev[0][1]
    for a, b in dev[1:]:
        if a - t > 0.0005:
            # Only configs that reached the device later: one pruned after its compile, or whose
            # compile was abandoned, never waits for it.
            waiting = any(c <= t + 1e-4 and t + 1e-4 < first.get(j, -1.0) for j, c in compiled.items())
            if waiting:
                ready += a - t
            else:
                behind += a - t
        t = max(t, b)
    busy = sum(b - a for a, b in dev)
    print(f"{f.split('/')[-1]:36s} evaluated {r['evaluated']:4d}  device busy {busy:.2f} s  idle with a compiled config waiting {ready:.2f} s, with none {behind:.2f} s  ({busy / max(1, len(dev)) * 1e3:.1f} ms a job)")
