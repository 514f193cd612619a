# Spearman rank correlation between the per-config compile seconds of the --Ofast-compile runs
# and the default runs (fc.tgz unpacked: tar xzf fc.tgz; python3 probe-rank.py fc).
import json, sys
d = sys.argv[1] if len(sys.argv) > 1 else 'fc'
def cs(f):
    r = json.load(open(f'{d}/{f}'))[0]['results']
    return {tuple(v for _, v in x['config']['params']): x['compile_seconds'] for x in r if x.get('compile_seconds')}
def spear(a, b):
    ks = [k for k in a if k in b]
    def rank(x):
        o = sorted(range(len(x)), key=lambda i: x[i]); r = [0] * len(x)
        for j, i in enumerate(o): r[i] = j
        return r
    ra, rb = rank([a[k] for k in ks]), rank([b[k] for k in ks]); m = (len(ks) - 1) / 2
    return len(ks), sum((x - m) * (y - m) for x, y in zip(ra, rb)) / sum((x - m) ** 2 for x in ra)
d1, d2 = cs('default-1.json'), cs('default-2.json')
print('default-1 vs default-2', spear(d1, d2))
for o in ['max', 'mid', 'min']:
    c = cs(o + '.json'); print(o, 'vs default-1', spear(c, d1), 'vs default-2', spear(c, d2))
