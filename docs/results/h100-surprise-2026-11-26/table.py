"""The table in docs/benchmarks.md ("Withdrawing picks in flight, on a GPU"), from run.sh's
archive: python3 table.py runs.tgz (and python3 table.py runs-j4.tgz -j4 4: the files with
that suffix, seeds 1-4). Fractions are the yardstick's winner time (300 evaluations
without priors, same call) over each run's winner; walls are each run's own, cold."""
import json, statistics, sys, tarfile

arc = tarfile.open(sys.argv[1])
suffix = sys.argv[2] if len(sys.argv) > 2 else ""
seeds = int(sys.argv[3]) if len(sys.argv) > 3 else 8
load = lambda n: json.load(arc.extractfile("./" + n))[0]
y = load("yardstick.json")
best = y["winner_stats"]["mean"]
cfg = lambda r: ",".join(str(v) for _, v in r["winner"]["params"])
print(f"yardstick: {y['evaluated']} evaluations, {best * 1e3:.4f} ms at {cfg(y)}")
kinds = ("surprise", "off", "hybrid")
rows = {k: [] for k in kinds}
for s in range(1, seeds + 1):
    line = f"seed {s}:"
    for k in kinds:
        r = load(f"{k}-{s}{suffix}.json")
        f = best / r["winner_stats"]["mean"]
        rows[k].append((f, r["wall_seconds"], r["compiled"], r["evaluated"]))
        line += f" {k} {f:.3f} ({cfg(r)}, {r['wall_seconds']:.1f} s, {r['compiled']} compiled, {r['evaluated']} measured) |"
    print(line.rstrip(" |"))
    for k in ("surprise", "off"):
        print(f"    {k}:", next(n for n in load(f"{k}-{s}{suffix}.json")["notes"] if n.startswith("transfer:") and " proposals from " in n))
for k in kinds:
    v = rows[k]
    print(f"{k}: mean {statistics.mean(x[0] for x in v):.3f}, lowest {min(x[0] for x in v):.3f}, "
          f"wall mean {statistics.mean(x[1] for x in v):.1f} s, compiled mean {statistics.mean(x[2] for x in v):.1f}")
for a, b in (("surprise", "hybrid"), ("off", "hybrid"), ("surprise", "off")):
    d = [x[0] - z[0] for x, z in zip(rows[a], rows[b])]
    print(f"{a} against {b}: ahead in {sum(x > 0.005 for x in d)}, behind in {sum(x < -0.005 for x in d)} of {seeds}")
print(load(f"surprise-1{suffix}.json").get("prior", {}).get("line"))
