import sys, re
def parse(path, at=-1):
    rows = {}
    for line in open(path):
        cells = [c.strip() for c in line.replace("│", "┆").split("┆")]
        if len(cells) >= 5 and cells[2] in ("none (hybrid)", "plain transfer", "adaptive"):
            vals = [c for c in cells[3:] if c]
            rows.setdefault(cells[1], {})[cells[2]] = float(vals[at].split()[0])
    return rows
a = parse(sys.argv[1]); b = parse(sys.argv[2]) if len(sys.argv) > 2 else None
n98 = sum(1 for s in a if a[s]["adaptive"] >= 0.98); nge = sum(1 for s in a if a[s]["adaptive"] >= a[s]["none (hybrid)"])
print(f"{sys.argv[1]}: >=0.98 {n98} of {len(a)}; >= none {nge}")
for s in a:
    line = f"{s:22} ad {a[s]['adaptive']:.3f} none {a[s]['none (hybrid)']:.3f} d {a[s]['adaptive']-a[s]['none (hybrid)']:+.3f}"
    if b: line += f" | other ad {b[s]['adaptive']:.3f} none {b[s]['none (hybrid)']:.3f}"
    print(line)
