"""The adaptive search at 20 evaluations, per held-out space, from the leave-one-out outputs in
this folder (python3 summarise.py > table.txt)."""
import glob, os, re

runs = {}
for f in sorted(glob.glob(os.path.join(os.path.dirname(__file__) or ".", "loo1*.txt"))):
    name = os.path.basename(f)[:-4]
    rows = {}
    for line in open(f):
        cells = [c.strip() for c in line.replace("│", "┆").split("┆")]
        if len(cells) >= 6 and cells[2] == "adaptive":
            rows[cells[1]] = cells[5].split()[0]
        m = re.match(r"adaptive at 20: ≥ 0.98 of the optimum in (\d+) of (\d+)", line)
        if m:
            rows["≥ 0.98"] = f"{m.group(1)} of {m.group(2)}"
    runs[name] = rows
for suite in ("loo12", "loo14"):
    names = [n for n in runs if n.startswith(suite)]
    order = ["parallel-2", "jobs-1", "parallel-3", "jobs-2", "expect-jobs-2", "parallel-6", "jobs-4", "expect-jobs-4", "parallel-24", "jobs-16", "expect-jobs-16"]
    cols = [f"{suite}-{o}" for o in order if f"{suite}-{o}" in names]
    spaces = [s for s in runs[cols[0]] if s != "≥ 0.98"] + ["≥ 0.98"]
    print(f"| {suite}, adaptive @20 | " + " | ".join(c[len(suite) + 1:] for c in cols) + " |")
    print("| --- " * (len(cols) + 1) + "|")
    for s in spaces:
        print(f"| {s} | " + " | ".join(runs[c].get(s, "") for c in cols) + " |")
    print()
