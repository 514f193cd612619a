#!/usr/bin/env python3
"""A tune's --json report read as a recorded space, against the same tune's T4 export.

Both files are the sixty-seventh session's H100 brute force of SGEMM 410 (cold, 16 compile
threads): docs/results/time-budget-2026-12-06/call1/space.json.gz (what `kerntune tune --json`
printed) and docs/results/time-budget-2026-12-06/sgemm_H100.t4.json.gz (`kerntune db export
--format t4` of the same tune's database). Compares each config's compile seconds, evaluation
seconds and mean time as the two files carry them.
"""
import gzip, json, sys

D = "docs/results/time-budget-2026-12-06"
report = json.load(gzip.open(f"{D}/call1/space.json.gz"))[0]["results"]
t4 = json.load(gzip.open(f"{D}/sgemm_H100.t4.json.gz"))["results"]
key = lambda d: tuple(sorted(d.items()))
by = {key(x["configuration"]): x for x in t4}
same = differ = 0
for r in report:
    k = key(dict(r["config"]["params"]))
    x = by.get(k)
    if x is None:
        print(f"only in the report: {dict(k)} ({r['outcome']}, compile {r.get('compile_seconds')} s)")
        continue
    mean = [m["value"] for m in x["measurements"] if m["name"] == "time"]
    ok = (
        abs(r["compile_seconds"] * 1e3 - x["times"]["compilation"]) < 1e-6
        and abs(r["eval_seconds"] * 1e3 - x["times"]["benchmark"]) < 1e-6
        and abs(r["stats"]["mean"] * 1e3 - mean[0]) < 1e-9
    )
    same += ok
    differ += not ok
print(f"report: {len(report)} results; T4: {len(t4)}; the same config in both: {same} alike, {differ} differ")
sys.exit(1 if differ else 0)
