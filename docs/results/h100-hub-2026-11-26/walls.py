"""The wall-time table of docs/benchmarks.md ("What -j 4 costs"), from walls.sh's archive:
python3 walls.py walls-h200.tgz"""
import json, sys, tarfile

arc = tarfile.open(sys.argv[1])
load = lambda n: json.load(arc.extractfile(n))[0]
print(arc.extractfile("gpu.txt").read().decode().strip())
tot = {16: 0.0, 4: 0.0}
for s in range(1, 5):
    line = f"seed {s}:"
    for j in (16, 4):
        r = load(f"cold-{s}-j{j}.json")
        tot[j] += r["wall_seconds"]
        line += f" -j {j}: {r['wall_seconds']:.1f} s, winner {r['winner_stats']['mean'] * 1e3:.4f} ms, compile s {r['compile_seconds']:.1f};"
    print(line)
print(f"mean wall: -j 16 {tot[16] / 4:.1f} s, -j 4 {tot[4] / 4:.1f} s ({tot[4] / tot[16]:.1f}x)")
for n in load("cold-1-j16.json")["notes"]:
    if n.startswith("transfer:"):
        print(n)
