#!/usr/bin/env python3
"""The H200's and the H100's recorded hub convolution spaces compared: configs measured on
both, Spearman's rank correlation of their times, and each one's optimum.

    python3 docs/results/h200-space-2026-11-27/spearman.py > docs/results/h200-space-2026-11-27/spearman.txt
"""
import gzip, json
load = lambda g: json.load(gzip.open(f'core/tests/data/convolution_{g}.json.gz'))['cache']
a, b = load('H200'), load('H100')
ok = lambda e: not isinstance(e['time'], str)
common = [k for k in a if ok(a[k]) and k in b and ok(b[k])]
def ranks(xs):
    r = [0] * len(xs)
    for j, i in enumerate(sorted(range(len(xs)), key=lambda i: xs[i])):
        r[i] = j
    return r
ra, rb, n = ranks([a[k]['time'] for k in common]), ranks([b[k]['time'] for k in common]), len(common)
print('configs measured on both:', n)
print('Spearman H200 against H100: %.4f' % (1 - 6 * sum((x - y) ** 2 for x, y in zip(ra, rb)) / (n * (n * n - 1))))
for name, c in (('H200', a), ('H100', b)):
    k = min(common, key=lambda k: c[k]['time'])
    print(f'{name} optimum: {k} at {c[k]["time"]:.4f} ms')
