"""Prints table.txt from the unpacked runs.tgz: python3 score.py DIR (DIR: where runs.tgz was
unpacked). Fractions of the H200's recorded optimum of the hub convolution (0.2797 ms)."""
import json
import re
import sys

D = sys.argv[1] if len(sys.argv) > 1 else "."
OPT = 0.2797


def row(name):
    r = json.load(open(f"{D}/{name}.json"))[0]
    ms = r["winner_stats"]["mean"] * 1e3
    wall = re.search(r"wall_([0-9.]+)_s", open(f"{D}/{name}.err").read())[1]
    return ms, OPT / ms, r["evaluated"], r["compiled"], wall, r


for n in ["flight-j16", "flight-j4"]:
    ms, f, e, c, w, r = row(n)
    print(f"{n}: {ms:.4f} ms, {f:.3f} of the recorded optimum, evaluated {e}, compiled {c}, wall {w} s")
    print("   ", [x for x in r["notes"] if x.startswith("transfer")])
P, H = [], []
for s in (1, 2, 3):
    a, b = row(f"prior48-{s}"), row(f"hybrid48-{s}")
    P.append(a[1])
    H.append(b[1])
    print(f"seed {s}: from the six {a[0]:.4f} ms ({a[1]:.3f}; compiled {a[3]}, wall {a[4]} s) | hybrid no prior {b[0]:.4f} ms ({b[1]:.3f}; compiled {b[3]}, wall {b[4]} s)")
print(f"mean: from the six {sum(P) / 3:.3f}, no prior {sum(H) / 3:.3f}")
print([x for x in row("prior48-1")[5]["notes"] if x.startswith("transfer")])
