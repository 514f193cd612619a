#!/usr/bin/env python3
"""Kernel Tuner's view of kerntune's T1 examples: for each file, the valid-config count and the
default config's grid and block as Kernel Tuner computes them, next to `kerntune check --json`.

Kernel Tuner reads the file itself (`tune_kernel_T1`); its `tune_kernel` is replaced by a stub
that records what it was handed (parameters, restrictions, problem size, grid divisors), and
Kernel Tuner's own `Searchspace` and `setup_block_and_grid` count and place the launch. Fills
Kernel Tuner's T1 loader lacks (Generator) are swapped for Constant in a temporary copy: they
change no count and no grid.

usage: kt_compare.py KERNTUNE_BIN FILE.json [...]   (prints one JSON line per file, then a verdict)
"""
import copy, json, os, subprocess, sys, tempfile
from pathlib import Path

import kernel_tuner.interface as kti
from kernel_tuner import util
from kernel_tuner.searchspace import Searchspace


def kernel_tuner_view(path):
    captured = {}

    def stub(kernel_name, kernel_source, problem_size, arguments, tune_params, **kw):
        captured.update(name=kernel_name, problem_size=problem_size, tune_params=tune_params, **kw)
        return [], {}

    spec = json.load(open(path))
    patched = copy.deepcopy(spec)
    patched.pop("Budget", None)  # Kernel Tuner reads only some budget types; none changes a count
    for a in patched["KernelSpecification"].get("Arguments", []):
        if a.get("FillType") == "Generator":
            a["FillType"], a["FillValue"] = "Constant", 1.0
        if a.get("MemoryType") == "Vector" and a.get("Type") != "float":
            a["Type"] = "float"  # Kernel Tuner's T1 loader makes float vectors only
    d = os.path.dirname(os.path.abspath(path))
    with tempfile.NamedTemporaryFile("w", suffix=".json", dir=d, delete=False) as f:
        json.dump(patched, f)
    real = kti.tune_kernel
    kti.tune_kernel = stub
    try:
        kti.tune_kernel_T1(Path(f.name), device=0, strategy="brute_force", output_T4=False)
    finally:
        kti.tune_kernel = real
        os.unlink(f.name)
    tp = captured["tune_params"]
    space = Searchspace(tp, captured["restrictions"], 1024)
    default = {p["Name"]: p.get("Default") for p in spec["ConfigurationSpace"]["TuningParameters"]}
    default = {k: (v[0] if isinstance(v, list) else v) for k, v in default.items()}
    default = {k: (v if v in tp[k] else tp[k][0]) for k, v in default.items()}
    grid_div = (captured.get("grid_div_x"), captured.get("grid_div_y"), captured.get("grid_div_z"))
    names = ["block_size_x", "block_size_y", "block_size_z"]

    def launch(params):
        threads, grid = util.setup_block_and_grid(captured["problem_size"], grid_div, params, names)
        return [int(g) for g in grid], [int(t) for t in threads]

    grid, block = launch(default)
    keys = list(tp)
    configs = {",".join(str(v) for v in c): launch(dict(zip(keys, c))) for c in space.list}
    return {"valid": space.size, "default": default, "grid": grid, "block": block}, configs


def kerntune_view(binary, path, launches):
    out = subprocess.run([binary, "check", path, "--json", "--launches", str(launches)], capture_output=True, text=True, check=True).stdout
    p = json.loads(out)["problems"][0]
    launch = p["default_launch"] or {}
    configs = {",".join(str(v) for _, v in c["config"]["params"]): (c["launch"]["grid"], c["launch"]["block"]) for c in p["launches"]}
    return {"valid": p["valid"], "grid": launch.get("grid"), "block": launch.get("block")}, configs


if __name__ == "__main__":
    binary, files = sys.argv[1], sys.argv[2:]
    agree = True
    for path in files:
        if "ProblemSize" not in json.load(open(path))["KernelSpecification"]:
            print(json.dumps({"file": path, "skipped": "no ProblemSize: Kernel Tuner's T1 loader needs one"}), flush=True)
            continue
        (kt, kt_configs), (ours, our_configs) = kernel_tuner_view(path), kerntune_view(binary, path, 10**6)
        # Every valid config, in both tools: the same set, and the same grid and block for each.
        same_configs = set(kt_configs) == set(our_configs)
        differ = [k for k in kt_configs if k in our_configs and list(map(list, kt_configs[k])) != list(map(list, our_configs[k]))]
        same = kt["valid"] == ours["valid"] and kt["grid"] == ours["grid"] and kt["block"] == ours["block"] and same_configs and not differ
        agree &= same
        print(json.dumps({"file": path, "same": same, "configs_compared": len(kt_configs), "same_config_set": same_configs,
                          "launches_differ": differ[:5], "kernel_tuner": kt, "kerntune": ours}), flush=True)
    print("kernel tuner and kerntune agree on every file" if agree else "DISAGREEMENT (see above)")
    sys.exit(0 if agree else 1)
