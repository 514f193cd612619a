import json, glob, os, sys
d = sys.argv[1]
def load(f):
    r = json.load(open(f)); return r[0] if isinstance(r, list) else r
ref = load(f"{d}/noracing.json")
truth = {x["config"]["params"][0][1]*10000 + x["config"]["params"][1][1]: x["stats"]["mean"] for x in ref["results"]}
best = min(truth.values())
print("racing off (Mesa cache warm): best %.3f ms" % (best*1e3))
for f in sorted(glob.glob(f"{d}/*-*.json")):
    r = load(f); st = [x["stats"] for x in r["results"] if x.get("stats")]
    w = r["winner"]["params"]; k = w[0][1]*10000 + w[1][1]
    one = sum(1 for s in st if s["raced"] and s["samples"] == 1)
    wall = "%.2f" % r["wall_seconds"]
    print(os.path.basename(f)[:-5].ljust(14), "winner", [v for _, v in w], "%.3f ms" % (r["winner_stats"]["mean"]*1e3),
          "(racing off: %.3f ms, %.2fx the best)" % (truth[k]*1e3, truth[k]/best), "raced on one launch", one, "of", len(st), "tuner wall", wall, "s")
