# Per-case differences between two few_sources outputs (base, variant).
import re, sys
def parse(f):
    d = {}
    for line in open(f):
        m = re.match(r'(\S+)\s+no prior ([\d.]+) \| (.*)', line)
        if not m: continue
        held, none = m.group(1), float(m.group(2))
        for src, v in re.findall(r'(\S+) ([\d.]+)', m.group(3)):
            d[(held, src)] = (none, float(v))
    return d
a, b = parse(sys.argv[1]), parse(sys.argv[2])
ch = sorted(((b[k][1] - a[k][1], k, a[k], b[k][1]) for k in a), key=lambda x: x[0])
moved = [c for c in ch if abs(c[0]) >= 0.005]
print(f"{len(moved)} of {len(ch)} cases moved by 0.005 or more; sum of changes {sum(c[0] for c in ch):+.3f}")
for d, k, (none, x), y in moved:
    print(f"{d:+.3f} {k[0]} from {k[1]}: {x:.3f} -> {y:.3f} (no prior {none:.3f})")
