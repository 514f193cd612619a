"""The table in docs/benchmarks.md ("A GPU outside the fleet, on a GPU"), from an archive of
run.sh's output: python3 table.py j16.tgz   (or j4.tgz). Each winner's time is from its own run;
the fraction is the yardstick's winner time (300 evaluations without priors, same call) over it."""
import json, statistics, sys, tarfile

arc = tarfile.open(sys.argv[1])
names = arc.getnames()
load = lambda n: json.load(arc.extractfile(n))[0]
y = load("yardstick.json")
best = y["winner_stats"]["mean"]
print(f"yardstick: {y['evaluated']} evaluations, {best * 1e3:.4f} ms at {','.join(str(v) for _, v in y['winner']['params'])}")
rows = []
for s in range(1, 9):
    t, h = [load(next(n for n in names if n.startswith(f"{k}-20-{s}") and n.endswith(".json"))) for k in ("transfer", "hybrid")]
    ft, fh = best / t["winner_stats"]["mean"], best / h["winner_stats"]["mean"]
    rows.append((ft, fh))
    cfg = lambda r: ",".join(str(v) for _, v in r["winner"]["params"])
    print(f"seed {s}: transfer {ft:.3f} ({cfg(t)}, {t['wall_seconds']:.1f} s) | hybrid {fh:.3f} ({cfg(h)}, {h['wall_seconds']:.1f} s)")
    print("   ", next(n for n in t["notes"] if n.startswith("transfer:")))
print(f"mean: transfer {statistics.mean(r[0] for r in rows):.3f}, hybrid {statistics.mean(r[1] for r in rows):.3f}; "
      f"lowest: {min(r[0] for r in rows):.3f}, {min(r[1] for r in rows):.3f}; transfer ahead in {sum(r[0] > r[1] + 0.005 for r in rows)}, "
      f"behind in {sum(r[0] < r[1] - 0.005 for r in rows)} of 8")
print(load(next(n for n in names if n.startswith("transfer-20-1"))).get("prior", {}).get("line"))
