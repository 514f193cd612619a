"""Spearman's rho between every two recorded spaces of a kernel (over the configs both measured),
as quoted for ALIKE in docs/benchmarks.md ("Sources that rank alike count as one"). Ranks ties in
order, as the transfer search's `spearman` does. Run from the repository root:
python3 docs/results/one-source-2026-11-27/spearman_pairs.py"""
import glob, gzip, json, os

def times(path):
    cache = json.load(gzip.open(path))["cache"]
    return {k: v["time"] for k, v in cache.items() if isinstance(v.get("time"), (int, float)) and v["time"] > 0}

def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    rank = [0] * len(values)
    for r, i in enumerate(order):
        rank[i] = r
    return rank

def spearman(a, b):
    ra, rb, n = ranks(a), ranks(b), len(a)
    return 1 - 6 * sum((x - y) ** 2 for x, y in zip(ra, rb)) / (n * (n * n - 1))

paths = sorted(glob.glob("../shared/spaces/gpus/*.json.gz")) + ["core/tests/data/convolution_H100.json.gz", "core/tests/data/convolution_H200.json.gz"]
spaces = {os.path.basename(p).removesuffix(".json.gz"): times(p) for p in paths}
for kernel in ("convolution", "dedispersion"):
    names = sorted(n for n in spaces if n.startswith(kernel))
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            both = [k for k in spaces[a] if k in spaces[b]]
            pairs.append((spearman([spaces[a][k] for k in both], [spaces[b][k] for k in both]), a, b))
    for rho, a, b in sorted(pairs, reverse=True):
        print(f"{rho:.3f}  {a} {b}")
