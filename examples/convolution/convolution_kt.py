#!/usr/bin/env python3
"""The 2-D convolution (convolution.cu) tuned with Kernel Tuner's Python API: the kind of
script docs/kernel-tuner.md moves to a kerntune spec (convolution.toml, beside this file).

usage: convolution_kt.py [MAX_FEVALS]          random_sample of MAX_FEVALS configs (brute force
                                               over the whole space without an argument)
       convolution_kt.py --configs RUN.json    exactly the configs a `kerntune tune --json` run
                                               evaluated (brute force restricted to them), so both
                                               tools compile and time the same set
       convolution_kt.py --configs RUN.json --part K/N
                                               every Nth of those (sorted), from the Kth: a long
                                               set split over several runs whose walls add up
       ... --cache FILE.json                   also keep Kernel Tuner's cache of the run there
                                               (a prior for `kerntune tune --prior FILE.json`)
"""
import builtins
import json
import os
import sys
import time

import uuid

import numpy as np
import kernel_tuner as kt
import kernel_tuner.backends.cupy as kt_cupy

# Kernel Tuner 1.5's CuPy backend records the device's UUID as `uuid.UUID(bytes=props["uuid"])`,
# which raises on drivers whose CuPy reports it in another length (seen on the H100 machine,
# driver 580): the UUID only labels the run's metadata, so an unreadable one is padded.
def _tolerant_uuid(bytes=b"", **_):
    raw = bytes if isinstance(bytes, (builtins.bytes, bytearray)) else str(bytes).encode()
    return uuid.UUID(bytes=builtins.bytes(raw[:16]).ljust(16, b"\0"))


kt_cupy.uuid = type("uuid", (), {"UUID": staticmethod(_tolerant_uuid)})

here = os.path.dirname(os.path.abspath(__file__))
w = h = 4096
fw = fh = 15
problem_size = (w, h)
output = np.zeros(w * h, dtype=np.float32)
inp = np.random.uniform(-1, 1, (w + fw - 1) * (h + fh - 1)).astype(np.float32)
filt = np.random.uniform(-1, 1, fw * fh).astype(np.float32)
args = [output, inp, filt]
cmem_args = {"d_filter": filt}

tune_params = dict()
tune_params["block_size_x"] = [16 * i for i in range(1, 9)]
tune_params["block_size_y"] = [2**i for i in range(5)]
tune_params["tile_size_x"] = [1, 2, 3, 4]
tune_params["tile_size_y"] = [1, 2, 3, 4]
tune_params["read_only"] = [0, 1]
tune_params["use_padding"] = [0, 1]
tune_params["filter_width"] = [fw]
tune_params["filter_height"] = [fh]

restrictions = [
    "use_padding==0 or block_size_x % 32 != 0",
    "block_size_x*block_size_y<=1024",
    "(block_size_x*tile_size_x+(filter_width-1))*(block_size_y*tile_size_y+(filter_height-1)) < 12*1024",
]
grid_div_x = ["block_size_x", "tile_size_x"]
grid_div_y = ["block_size_y", "tile_size_y"]

cache = None
if "--cache" in sys.argv:
    at = sys.argv.index("--cache")
    cache = sys.argv[at + 1]
    del sys.argv[at:at + 2]

strategy, options = "brute_force", {}
label = strategy
if len(sys.argv) > 2 and sys.argv[1] == "--configs":
    run = json.load(open(sys.argv[2]))
    run = run[0] if isinstance(run, list) else run
    names = [n for n in tune_params if len(tune_params[n]) > 1]
    chosen = {tuple(dict(r["config"]["params"])[n] for n in names) for r in run["results"] if not r.get("from_db")}
    part = ""
    if len(sys.argv) > 4 and sys.argv[3] == "--part":
        k, n = (int(x) for x in sys.argv[4].split("/"))
        chosen = set(sorted(chosen)[k - 1::n])
        part = ", part %d of %d" % (k, n)

    def chosen_only(p):
        # Kernel Tuner's monolithic restriction; every chosen config satisfies the string ones.
        return tuple(p[n] for n in names) in chosen

    restrictions = [chosen_only]
    label = "brute_force (the %d configs of %s%s)" % (len(chosen), os.path.basename(sys.argv[2]), part)
elif len(sys.argv) > 1:
    strategy, options = "random_sample", {"max_fevals": int(sys.argv[1])}
    label = strategy

t0 = time.time()
results, env = kt.tune_kernel("convolution_kernel", os.path.join(here, "convolution.cu"), problem_size, args, tune_params,
                              grid_div_x=grid_div_x, grid_div_y=grid_div_y, restrictions=restrictions, cmem_args=cmem_args,
                              compiler_options=["-std=c++11"], lang="cupy", strategy=strategy, strategy_options=options,
                              iterations=7, verbose=False, quiet=True, cache=cache)
wall = time.time() - t0
ok = [r for r in results if isinstance(r.get("time"), float)]
best = min(ok, key=lambda r: r["time"])
print(json.dumps({"kernel": "convolution", "tool": "kernel_tuner", "strategy": label, "evaluated": len(results), "ok": len(ok),
                  "wall_s": round(wall, 2), "compile_s_total": round(sum(r.get("compile_time", 0) for r in results) / 1e3, 2),
                  "best_ms": round(best["time"], 4), "best": {k: best[k] for k in tune_params},
                  "compile_s_per_config": sorted((round(r.get("compile_time", 0) / 1e3, 2) for r in results), reverse=True)}))
