# Calls 2 and 3 (run2.sh, run3.sh), the cold tunes: unpack call2.tgz or call3.tgz and run
# `python3 cold.py` there. Per tune: wall, configs compiled, compile seconds summed, winner;
# then whether both builds measured the same configs for each seed.
import json, glob
def rep(f):
    d = json.load(open(f)); return d[0] if isinstance(d, list) else d
for f in sorted(glob.glob('cold/*.json')):
    r = rep(f)
    print(f"{f:28s} wall {r['wall_seconds']:.2f} s  compiled {r['compiled']}  compile seconds {r['compile_seconds']:.1f}  winner {r['winner_stats']['mean'] * 1e3:.4f} ms")
for k in ['hgemm', 'matmul']:
    for s in [1, 2, 3]:
        c = [{str(x['config']['params']) for x in rep(f'cold/{k}-{b}-{s}.json')['results']} for b in ['old', 'new']]
        print(f"{k} seed {s}: the same configs in both builds: {c[0] == c[1]}")
# The hgemm's seed 1, compile seconds config by config (OLD, NEW), the slowest in OLD first.
o, n = ({str(x['config']['params']): x.get('compile_seconds') or 0 for x in rep(f'cold/hgemm-{b}-1.json')['results']} for b in ['old', 'new'])
for c in sorted(set(o) & set(n), key=lambda c: -o[c]):
    print(f"  {o[c]:.2f} {n[c]:.2f}  {c}")
