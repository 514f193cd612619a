"""The table in docs/benchmarks.md ("How many configs a tune keeps in flight"), from the raw
outputs in this folder (P in flight; P = 1 and 16 from ../blind-batch-2026-11-27/after/, the
same search): python3 summarise.py > table.txt."""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
AFTER = os.path.join(HERE, "..", "blind-batch-2026-11-27", "after")


def path(kind, p):
    if p in (1, 16):
        return os.path.join(AFTER, f"{kind}-{p}.txt")
    return os.path.join(HERE, f"{kind}-{p}.txt")


def pairs(f):
    """few_sources: (held out, sources) -> (no prior, adaptive)."""
    d = {}
    for line in open(f):
        if "|" not in line:
            continue
        head, rest = line.split("|")
        toks = rest.split()
        for i in range(0, len(toks), 2):
            d[(head.split()[0], toks[i])] = (float(head.split()[-1]), float(toks[i + 1]))
    return d


def few(f):
    """The example's own counts (from unrounded scores), and the means of its printed table."""
    d = pairs(f)
    nones = {k[0]: v[0] for k, v in d.items()}
    last = open(f).read().strip().splitlines()[-1]
    m = re.search(r"(\d+) cases: ≥ 0.98 in (\d+); within 0.05 of no priors or better in (\d+); .* worst ([+-][0-9.]+)", last)
    return (
        f"{m[3]} of {m[1]}; {m[4]}; {m[2]}",
        f"{sum(a for _, a in d.values()) / len(d):.3f} / {sum(nones.values()) / len(nones):.3f}",
    )


def loo(f):
    t = open(f).read()
    hit = re.search(r"≥ 0.98 of the optimum in (\d+) of (\d+) spaces; at least as good as hybrid without priors in (\d+)", t)
    gone = re.search(r"adaptive: ([0-9.]+) of its picks", t)
    return f"{hit[1]}; {hit[3]}", gone[1] if gone else "0"


def misleading(f):
    last = open(f).read().strip().splitlines()[-1]
    m = re.search(r"Δ mean ([+-][0-9.]+), worst ([+-]?[0-9.]+), within 0.05 in (\d+) of (\d+)", last)
    return f"{m[3]} of {m[4]}; {m[2]}; {m[1]}"


ps = [1, 2, 3, 4, 6, 8, 16, 24]
rows = [
    ("six-GPU leave one out: ≥ 0.98 of 12; ≥ no prior", lambda p: loo(path("loo12", p))[0]),
    ("picks withdrawn per run (six GPUs)", lambda p: loo(path("loo12", p))[1]),
    ("fourteen spaces: ≥ 0.98 of 14; ≥ no prior", lambda p: loo(path("loo14", p))[0]),
    ("misleading sources: within 0.05; worst Δ; mean Δ", lambda p: misleading(path("mis", p))),
    ("two sources over C8: within 0.05; worst Δ; ≥ 0.98", lambda p: few(path("fs2", p))[0]),
    ("two sources: mean adaptive / mean no prior", lambda p: few(path("fs2", p))[1]),
    ("one source over S14: within 0.05; worst Δ; ≥ 0.98", lambda p: few(path("fs1", p))[0]),
    ("one source: mean adaptive / mean no prior", lambda p: few(path("fs1", p))[1]),
]
print("| at 20 evaluations, 50 seeds | " + " | ".join(f"{p}" for p in ps) + " |")
print("| --- " * (len(ps) + 1) + "|")
for name, f in rows:
    print(f"| {name} | " + " | ".join(f(p) for p in ps) + " |")
