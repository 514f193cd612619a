# Fractions of the optimum for calls 4 and 5 (run4.sh, run5.sh): unpack warm4.tgz or warm5.tgz
# and run `python3 fraction5.py 4` or `python3 fraction5.py 5` there.
import json, glob, statistics as st, sys
def rep(f):
    d = json.load(open(f)); return d[0] if isinstance(d, list) else d
def table(ex, files):
    t = {tuple(map(tuple, x['config']['params'])): x['stats']['mean'] for x in ex['results'] if x.get('outcome') == 'measured' and x.get('stats')}
    opt = min(t.values()); fs = []; ws = []
    for f in files:
        r = rep(f); w = tuple(map(tuple, r['winner']['params'])); fs.append(opt / t.get(w, r['winner_stats']['mean'])); ws.append(r['wall_seconds'])
    return ' '.join(f'{x:.3f}' for x in fs) + f'  mean {st.mean(fs):.3f}  tune wall {st.mean(ws):.2f} s'
if sys.argv[1] == '4':
    ex = rep('wgpu/exh.json')
    for j in [16, 2]:
        print(f'matmul -j {j}:', table(ex, [f'wgpu/j{j}-{s}.json' for s in range(1, 9)]))
else:
    for k in ['matmul', 'hgemm']:
        ex = rep(f'wgpu/{k}-exh.json')
        for b in ['old', 'new']:
            print(f'{k} {b}:', table(ex, [f'wgpu/{k}-{b}-{s}.json' for s in range(1, 9)]))
