import json,sys,itertools
def load(f):
    d=json.load(open(f))[0]
    out={}
    for r in d["results"]:
        if r["outcome"]!="measured": continue
        k=json.dumps(r["config"]["params"])
        out[k]=r["stats"]
    return d, out
def cov(fa, fb, label):
    da,a=load(fa); db,b=load(fb)
    keys=[k for k in a if k in b and a[k]["ci_half"] is not None]
    inside=[k for k in keys if abs(b[k]["mean"]-a[k]["mean"])<=a[k]["ci_half"]]
    raced=[k for k in keys if a[k]["raced"]]
    full=[k for k in keys if not a[k]["raced"]]
    ins=lambda ks: sum(1 for k in ks if abs(b[k]["mean"]-a[k]["mean"])<=a[k]["ci_half"])
    tie=[json.dumps(t["params"]) for t in da["tie_band"]]
    # relative ci width and relative shift
    import statistics
    rel=[a[k]["ci_half"]/a[k]["mean"] for k in keys]
    shift=[abs(b[k]["mean"]-a[k]["mean"])/a[k]["mean"] for k in keys]
    print(f"{label}: {len(keys)} configs; second run inside the first's interval: {len(inside)} ({100*len(inside)/len(keys):.0f} %); full-sample {ins(full)}/{len(full)}, raced {ins(raced)}/{len(raced)}; tie band {ins([t for t in tie if t in b])}/{len([t for t in tie if t in b])}; median CI half {100*statistics.median(rel):.2f} % of mean, median shift {100*statistics.median(shift):.2f} %; winner {da['winner']} vs {db['winner']}")
for x,y in [(1,2),(2,3),(1,3),(2,1),(3,2)]:
    cov(f"sgemm-{x}.json", f"sgemm-{y}.json", f"sgemm run {x} -> {y}")
for x,y in [(1,2),(2,3),(1,3)]:
    cov(f"triad-{x}.json", f"triad-{y}.json", f"triad run {x} -> {y}")
