"""table-fixed.txt from the fourth call's archives (no yardstick: winner times):
python3 table-fixed.py > table-fixed.txt"""
import json, statistics, tarfile

cfg = lambda r: ",".join(str(v) for _, v in r["winner"]["params"])
for f, suf in (("runs-fixed-j4.tgz", "-j4"), ("runs-fixed.tgz", "")):
    a = tarfile.open(f)
    print(f"{f} ({'-j 4' if suf else '16 threads'}), seeds 1-4: winner time (ms), config, wall, compiled")
    rows = {k: [] for k in ("surprise", "off", "hybrid")}
    for s in range(1, 5):
        line = f"  seed {s}:"
        for k in rows:
            r = json.load(a.extractfile(f"./{k}-{s}{suf}.json"))[0]
            ms = r["winner_stats"]["mean"] * 1e3
            rows[k].append((ms, r["wall_seconds"], r["compiled"]))
            line += f" {k} {ms:.4f} ({cfg(r)}, {r['wall_seconds']:.1f} s, {r['compiled']}) |"
        print(line.rstrip(" |"))
        n = next(n for n in json.load(a.extractfile(f"./surprise-{s}{suf}.json"))[0]["notes"] if n.startswith("transfer:") and " proposals from " in n)
        print("    surprise:", n)
    for k, v in rows.items():
        print(f"  {k}: winner mean {statistics.mean(x[0] for x in v):.4f} ms, wall mean {statistics.mean(x[1] for x in v):.1f} s, compiled mean {statistics.mean(x[2] for x in v):.1f}")
    for x, y in (("surprise", "hybrid"), ("off", "hybrid"), ("surprise", "off")):
        d = [b[0] - a_[0] for a_, b in zip(rows[x], rows[y])]
        print(f"  {x} against {y}: faster winner in {sum(v > 0.005 * b[0] for v, b in zip(d, rows[y]))}, slower in {sum(v < -0.005 * b[0] for v, b in zip(d, rows[y]))} of 4")
