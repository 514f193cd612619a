"""The adaptive search at 20 evaluations per held-out space: before (../jobs-flight-2026-11-27,
one and a half proposals per compile thread until the first outcome) and with the first flight
sized from the sources' recorded seconds (this folder). python3 summarise.py > table.txt"""
import os, re

here = os.path.dirname(os.path.abspath(__file__))
before = os.path.join(here, "..", "jobs-flight-2026-11-27")


def adaptive(path):
    rows = {}
    for line in open(path):
        cells = [c.strip() for c in line.replace("│", "┆").split("┆")]
        if len(cells) >= 6 and cells[2] == "adaptive":
            rows[cells[1]] = (cells[5].split()[0], cells[5].split()[-1] if len(cells[5].split()) > 1 else "")
        m = re.match(r"adaptive at 20: ≥ 0.98 of the optimum in (\d+) of (\d+)", line)
        if m:
            rows["≥ 0.98"] = (f"{m.group(1)} of {m.group(2)}", "")
    return rows


for suite, jobs in (("loo12", (1, 2, 4, 16)), ("loo14", (4, 16))):
    cols = []
    for n in jobs:
        for label, folder in (("before", before), ("now", here)):
            f = os.path.join(folder, f"{suite}-jobs-{n}.txt")
            if os.path.exists(f):
                cols.append((f"-j {n} {label}", adaptive(f)))
    spaces = [s for s in cols[0][1] if s != "≥ 0.98"] + ["≥ 0.98"]
    print(f"| {suite}, adaptive mean @20 | " + " | ".join(c[0] for c in cols) + " |")
    print("| --- " * (len(cols) + 1) + "|")
    for s in spaces:
        print(f"| {s} | " + " | ".join(c[1].get(s, ("", ""))[0] for c in cols) + " |")
    print()
