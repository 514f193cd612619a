"""The table in docs/benchmarks.md ("A batch asked blind"), from the outputs in this folder:
python3 summarise.py > table.txt. For each build at 16 in flight: the leave-one-out counts
(≥ 0.98 of the optimum, picks withdrawn per run), misleading sources (within 0.05 of no prior,
worst Δ, mean Δ, the sum of the shortfalls below no prior) and two sources over the eight
convolution spaces (the same, and ≥ 0.98)."""
import re

def pairs(path):
    d = {}
    for line in open(path):
        if "|" not in line:
            continue
        head, rest = line.split("|")
        none = float(head.split()[-1])
        toks = rest.split()
        for i in range(0, len(toks), 2):
            d[(head.split()[0], toks[i])] = (none, float(toks[i + 1]))
    return d

def loo(path):
    text = open(path).read()
    hit = re.search(r"≥ 0.98 of the optimum in (\d+) of (\d+)", text)
    gone = re.search(r"adaptive: ([0-9.]+) of its picks", text)
    return f"{hit[1]} of {hit[2]}", gone[1] if gone else "-"

def misleading(path):
    # The example's own summary line, and the shortfall from the table.
    last = open(path).read().strip().splitlines()[-1]
    m = re.search(r"Δ mean ([+-][0-9.]+), worst ([+-]?[0-9.]+), within 0.05 in (\d+) of (\d+)", last)
    deltas = []
    for line in open(path):
        if "|" in line and "Δ" in line:
            deltas += [float(x) for x in re.findall(r"\(Δ ([+-][0-9.]+)\)", line)][1:]
    return f"{m[3]} of {m[4]}; {float(m[2]):+.3f}; {m[1]}; {sum(max(0, -d) for d in deltas):.3f}"

def two(path):
    # The example's own summary line (on unrounded means), and the shortfall from the pairs.
    last = open(path).read().strip().splitlines()[-1]
    m = re.search(r"(\d+) cases: ≥ 0.98 in (\d+); within 0.05 of no priors or better in (\d+); Δ \(adaptive − no prior\) mean ([+-][0-9.]+), worst ([+-]?[0-9.]+)", last)
    short = sum(max(0, none - a) for none, a in pairs(path).values())
    return f"{m[3]} of {m[1]}; {float(m[5]):+.3f}; {m[2]}; {m[4]}; {short:.3f}"

builds = [("before (5b52092)", "before/{}.txt"), ("after: every other turn", "after/{}.txt"),
          ("one turn in 3", "tried/{}-s3.txt"), ("one turn in 4", "tried/{}-s4.txt"),
          ("one in (sources + 1)", "tried/{}-sk.txt"), ("blind picks kept out of the stall count", "tried/{}-b.txt"),
          ("withdrawn only when ranked lower at 2 refits in a row", "tried/{}-persist2.txt")]
print("| 16 in flight, 20 evaluations | six-GPU leave one out: ≥ 0.98; withdrawn per run | fourteen spaces: ≥ 0.98; withdrawn | misleading (36): within 0.05; worst; mean Δ; shortfall | two sources (168): within 0.05; worst; ≥ 0.98; mean Δ; shortfall |")
print("| --- | --- | --- | --- | --- |")
for name, pat in builds:
    a = loo(pat.format("loo12-16"))
    b = loo(pat.format("loo14-16"))
    print(f"| {name} | {a[0]}; {a[1]} | {b[0]}; {b[1]} | {misleading(pat.format('mis-16'))} | {two(pat.format('fs2-16'))} |")
