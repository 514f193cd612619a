# Fractions of the optimum for call 1 (run.sh): unpack warm1.tgz and run `python3 fraction.py`
# there. Each tune's winner is looked up in the same case's exhaustive tune on the same machine.
import json, glob, statistics as st
def reports(f):
    d = json.load(open(f)); return d if isinstance(d, list) else [d]
def times(r):
    return {tuple(map(tuple, x['config']['params'])): x['stats']['mean'] for x in r['results'] if x.get('outcome') == 'measured' and x.get('stats')}
def frac(r, ex):
    t = times(ex); opt = min(t.values()); w = tuple(map(tuple, r['winner']['params']))
    return opt / t[w] if w in t else opt / r['winner_stats']['mean']
for k, key in [('hgemm', 'M-3072_N-3072_K-3072'), ('matmul', 'M-1536_N-1536_K-1536')]:
    ex = reports(f'sizes/{k}_{key}-exh.json')[0]
    for mode in ['prior', 'none']:
        for b in ['old', 'new']:
            fs = [frac(reports(f)[0], ex) for f in sorted(glob.glob(f'sizes/{k}_{key}-{b}-{mode}-*.json'))]
            w = [reports(f)[0]['wall_seconds'] for f in sorted(glob.glob(f'sizes/{k}_{key}-{b}-{mode}-*.json'))]
            print(f"{k} {mode:5s} {b}: " + ' '.join(f'{x:.3f}' for x in fs) + f"  mean {st.mean(fs):.3f}  tune wall {st.mean(w):.2f} s")
ex = reports('lib/exh.json')
for b in ['old', 'new']:
    rows = []
    for f in sorted(glob.glob(f'lib/{b}-*.json')):
        rs = reports(f); rows.append([frac(r, e) for r, e in zip(rs, ex)])
        print(f"library {b} {f}: " + ' '.join(f'{x:.3f}' for x in rows[-1]) + f"  wall {sum(r['wall_seconds'] for r in rs):.2f} s")
        # Per shape: tune wall / configs compiled / of them from the compile cache.
        print('    per shape (wall s/compiled/cache hits): ' + '  '.join(f"{r['wall_seconds']:.2f}/{r['compiled']}/{r['compile_cache_hits']}" for r in rs))
    print(f"library {b} mean per shape: " + ' '.join(f'{st.mean(c):.3f}' for c in zip(*rows)) + f"  mean of shapes 2-5 {st.mean(x for r in rows for x in r[1:]):.3f}")
