#!/usr/bin/env bash
# Few-shot tuning on a GPU never seen (issue 26), on a real GPU, again after the contrast pick and with the yardstick counted in proposals
# (2026-11-26; the script of 2026-11-25's run1.sh, its binary this session's): the SGEMM 410 space at 4096³ on
# this H100, with the H200's Kernel Tuner cache of the same space as the only prior
# (../shared/spaces/h200_sgemm_410.json), against the same search without priors, at 10 and 20
# evaluations, 8 seeds each. The exhaustive tune (first, which also warms the compile cache)
# gives this GPU's optimum; each few-shot winner is scored by its time in that exhaustive table.
set -u
O=$OUT; W=/tmp/p6; rm -rf $W; mkdir -p $W
. scripts/device-env.sh
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
nvidia-smi -L > $W/gpus.txt
K=.device/kerntune; S=benches/sgemm/sgemm.toml; P=.device/bench/h200_sgemm_410.json
{
/usr/bin/time -f "wall %e s" $K tune $S --backend cuda --no-db --json > $W/exhaustive.json 2> $W/exhaustive.log; echo "exhaustive: exit $? $(grep -h '^wall' $W/exhaustive.log)"
for b in 10 20; do for s in 1 2 3 4 5 6 7 8; do
  rm -rf $KERNTUNE_CACHE_DIR/db.sqlite*
  /usr/bin/time -f "wall %e s" $K tune $S --backend cuda --budget $b --seed $s --prior $P --json > $W/prior-$b-$s.json 2> $W/prior-$b-$s.log; echo "prior $b $s: exit $? $(grep -h '^wall' $W/prior-$b-$s.log)"
  rm -rf $KERNTUNE_CACHE_DIR/db.sqlite*
  /usr/bin/time -f "wall %e s" $K tune $S --backend cuda --budget $b --seed $s --strategy hybrid --json > $W/none-$b-$s.json 2> $W/none-$b-$s.log; echo "none $b $s: exit $? $(grep -h '^wall' $W/none-$b-$s.log)"
done; done
rm -rf $KERNTUNE_CACHE_DIR/db.sqlite*
$K tune $S --backend cuda --budget 20 --seed 1 --prior $P > $W/prior-text.txt 2>&1; echo "text: exit $?"
} > $W/summary.txt 2>&1
python3 - $W > $W/table.txt 2>&1 <<'PY'
import json, sys, glob, os, statistics as st
w = sys.argv[1]
def load(p):
    d = json.load(open(p)); return d[0] if isinstance(d, list) else d
def key(c): return ",".join(f"{k}={v}" for k, v in c["params"])
ex = load(f"{w}/exhaustive.json")
times = {key(r["config"]): r["stats"]["mean"] for r in ex["results"] if r.get("outcome") == "measured" and r.get("stats")}
best = min(times.values())
print(f"exhaustive: {len(times)} measured, winner {key(ex['winner'])} {best*1e3:.4f} ms, wall {ex.get('wall_seconds')}")
for b in (10, 20):
    for kind in ("prior", "none"):
        fr, strat, walls, line = [], set(), [], ""
        for s in range(1, 9):
            p = f"{w}/{kind}-{b}-{s}.json"
            if not os.path.exists(p): continue
            try: r = load(p)
            except Exception as e: print(p, e); continue
            k = key(r["winner"]); fr.append(best / times[k] if k in times else float("nan"))
            strat.add(r["strategy"]); walls.append(r.get("wall_seconds") or 0)
            if r.get("prior"): line = r["prior"]["line"]
        if fr:
            print(f"{kind:5} @{b}: mean {st.mean(fr):.3f} min {min(fr):.3f} over {len(fr)} seeds {sorted(round(x,3) for x in fr)} strategy {strat} wall {st.mean(walls):.2f} s {line}")
PY
python3 - $W >> $W/table.txt 2>&1 <<'PY'
import json, sys
w = sys.argv[1]
for b in (10, 20):
    for s in range(1, 9):
        d = json.load(open(f"{w}/prior-{b}-{s}.json")); d = d[0] if isinstance(d, list) else d
        ms = sorted(x["stats"]["mean"] * 1e3 for x in d["results"] if x.get("stats"))
        print(f"prior @{b} seed {s}: {d['evaluated']} evaluated, slowest measured {ms[-1]:.2f} ms, failures {d['failures']}, pruned {d['pruned_after']}")
PY
cat $W/summary.txt $W/table.txt; head -3 $W/prior-text.txt
cd /tmp && tar czf $O/p6.tgz p6
