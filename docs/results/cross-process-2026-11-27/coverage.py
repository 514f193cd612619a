"""Cross-process coverage of the tunes run.sh wrote (python3 coverage.py DIR, DIR an unpacked *-runs.tgz).

For every ordered pair of separate tunes of one kind (a, b): of the configs tune a measured with
an interval that tune b measured too, how many of b's means fall inside a's reported 95 %
interval (the samples' Student-t interval widened by the 1 % run-to-run floor). Also each tune's
own recheck (`--recheck 20`: the same configs measured again at its end), and the configs that
moved most between tunes, with their sample counts and the order they ran in."""
import glob, json, os, statistics, sys

d = sys.argv[1] if len(sys.argv) > 1 else "."


def load(f):
    r = json.load(open(f))[0]
    m = {}
    for x in r["results"]:
        if x["outcome"] == "measured":
            m[tuple(v for _, v in x["config"]["params"])] = x
    return r, m


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


kinds = sorted({os.path.basename(f).rsplit("-", 1)[0] for f in glob.glob(os.path.join(d, "*-[0-9].json"))})
for kind in kinds:
    files = sorted(glob.glob(os.path.join(d, kind + "-[0-9].json")))
    runs = {os.path.basename(f): load(f) for f in files}
    names = list(runs)
    tot_in = tot = raw_in = 0
    full_in = full = 0
    shifts = []
    movers = []
    for a in names:
        for b in names:
            if a == b:
                continue
            ra, ma = runs[a]
            rb, mb = runs[b]
            for k, xa in ma.items():
                sa = xa["stats"]
                if k not in mb or sa.get("ci_half") is None:
                    continue
                sb = mb[k]["stats"]
                shift = (sb["mean"] - sa["mean"]) / sa["mean"]
                inside = abs(sb["mean"] - sa["mean"]) <= sa["ci_half"]
                tot += 1
                tot_in += inside
                # The samples' own interval: the reported one less the 1 % floor (in quadrature).
                raw = max(sa["ci_half"] ** 2 - (0.01 * sa["mean"]) ** 2, 0.0) ** 0.5
                raw_in += abs(sb["mean"] - sa["mean"]) <= raw
                if not sa["raced"] and not sb["raced"]:
                    full += 1
                    full_in += inside
                shifts.append(abs(shift))
                if not inside and sa["samples"] >= 2 and sb["samples"] >= 2:
                    movers.append((abs(shift), a, b, k, sa["samples"], sb["samples"], round(sa["mean"] * 1e3, 4), round(sb["mean"] * 1e3, 4), round(100 * sa["ci_half"] / sa["mean"], 2)))
    rc_in = rc_n = 0
    for f, (r, _) in runs.items():
        rc = r.get("recheck") or {}
        rc_n += len(rc.get("rows", []))
        rc_in += rc.get("inside", 0)
    winners = sorted({json.dumps(r["winner"]["params"]) for r, _ in runs.values()})
    walls = []
    for f in files:
        e = open(f[:-5] + ".err").read() if os.path.exists(f[:-5] + ".err") else ""
        walls += [l.split("_")[1] for l in e.splitlines() if l.startswith("wall_")]
    print(f"{kind}: {len(files)} tunes, walls {', '.join(walls)} s; winners {winners}")
    if tot:
        print(f"  across tunes ({len(names) * (len(names) - 1)} ordered pairs): {tot_in} of {tot} inside ({100 * tot_in / tot:.1f} %); "
              f"both fully measured {full_in} of {full} ({100 * full_in / max(full, 1):.1f} %); "
              f"without the 1 % floor {raw_in} ({100 * raw_in / tot:.1f} %); "
              f"shift median {100 * statistics.median(shifts):.2f} %, 95th percentile {100 * pct(shifts, 0.95):.2f} %, largest {100 * max(shifts):.2f} %")
    print(f"  within each tune (--recheck): {rc_in} of {rc_n} inside")
    movers.sort(reverse=True)
    for m in movers[:8]:
        print(f"    moved {100 * m[0]:.1f} %: {m[1]} -> {m[2]} {m[3]} samples {m[4]}/{m[5]} means {m[6]}/{m[7]} ms, interval ±{m[8]} %")
