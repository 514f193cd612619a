#!/usr/bin/env python3
"""Samples, every 0.2 s until the cgroup is empty, the memory of each process in a cgroup:
RssAnon+RssShmem (its own) and RssFile, by kind (the tuner, the CUDA worker, the compiler
processes: KERNTUNE_CUDA_COMPILER=1 in its environment), and the cgroup's memory.current, anon
and file. Prints one summary at the end: for each kind the most of its own one process held,
and for compilers the least and median of each's own memory over its samples (an idle one's)."""
import os, sys, time, statistics
cg, out = sys.argv[1], sys.argv[2]
def kb(text, key):
    for l in text.splitlines():
        if l.startswith(key):
            return int(l.split()[1]) * 1024
    return 0
def kind(pid):
    try:
        env = open(f"/proc/{pid}/environ", "rb").read()
    except OSError:
        return None
    if b"KERNTUNE_CUDA_COMPILER=1" in env: return "compiler"
    if b"KERNTUNE_CUDA_WORKER=1" in env: return "worker"
    return "tuner"
seen, kinds, top = {}, {}, {"current": 0}
time.sleep(0.2)
t0 = time.time()
lines = []
while True:
    try:
        pids = [int(p) for p in open(f"{cg}/cgroup.procs").read().split()]
    except OSError:
        break
    if not pids: break
    sums = {}
    for p in pids:
        try:
            st = open(f"/proc/{p}/status").read()
        except OSError:
            continue
        k = kinds.get(p) or kind(p)
        if k is None: continue
        kinds[p] = k
        own, f = kb(st, "RssAnon:") + kb(st, "RssShmem:"), kb(st, "RssFile:")
        seen.setdefault(p, []).append(own)
        s = sums.setdefault(k, [0, 0, 0]); s[0] += 1; s[1] += own; s[2] += f
    try:
        cur = int(open(f"{cg}/memory.current").read())
        stat = open(f"{cg}/memory.stat").read()
    except OSError:
        break
    anon = next((int(l.split()[1]) for l in stat.splitlines() if l.startswith("anon ")), 0)
    fil = next((int(l.split()[1]) for l in stat.splitlines() if l.startswith("file ")), 0)
    lines.append(f"{time.time()-t0:6.1f} current {cur>>20} anon {anon>>20} file {fil>>20} | " + " ".join(f"{k} n{v[0]} own {v[1]>>20} file {v[2]>>20}" for k, v in sorted(sums.items())))
    time.sleep(0.2)
M = lambda b: f"{b/2**20:.0f}"
with open(out, "w") as o:
    for k in ("tuner", "worker", "compiler"):
        ps = [p for p in seen if kinds[p] == k]
        if not ps: continue
        most = max(max(seen[p]) for p in ps)
        least = [min(seen[p]) for p in ps if len(seen[p]) > 5]
        med = [statistics.median(seen[p]) for p in ps if len(seen[p]) > 5]
        o.write(f"{k}: {len(ps)} processes, most own {M(most)} MiB" + (f"; each one's least own: median {M(statistics.median(least))} MiB (range {M(min(least))}-{M(max(least))}); each one's median own: median {M(statistics.median(med))} MiB" if least else "") + "\n")
    o.write("\n".join(lines[::5]) + "\n")
