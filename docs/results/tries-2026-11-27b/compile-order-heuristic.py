# Could the first wave of compiles be ordered longest-first before any compile time is known,
# from the configs' parameter values alone? Spearman's rank correlation of two static orders with
# the compile times Kernel Tuner recorded per config (`compile_time`): the sum of each
# parameter's value rank (0..1 over its listed values) and the product of the numeric values.
# python3 compile-order-heuristic.py ../shared/spaces/gpus
import gzip, json, sys
d = sys.argv[1] if len(sys.argv) > 1 else '../shared/spaces/gpus'

def spearman(a, b):
    n = len(a)
    def ranks(x):
        o = sorted(range(n), key=lambda i: x[i]); r = [0] * n
        for j, i in enumerate(o): r[i] = j
        return r
    ra, rb = ranks(a), ranks(b); m = (n - 1) / 2
    return sum((x - m) * (y - m) for x, y in zip(ra, rb)) / (sum((x - m) ** 2 for x in ra) ** .5 * sum((y - m) ** 2 for y in rb) ** .5)

for k in ['convolution_A100', 'convolution_W6600', 'dedispersion_A100', 'dedispersion_W6600']:
    space = json.load(gzip.open(f'{d}/{k}.json.gz'))
    tp, keys = space['tune_params'], space['tune_params_keys']
    rank_sum, product, compile_s = [], [], []
    for v in space['cache'].values():
        if not isinstance(v.get('compile_time'), (int, float)):
            continue
        s, p = 0.0, 1.0
        for key in keys:
            vals = tp[key]
            if len(vals) > 1:
                s += vals.index(v[key]) / (len(vals) - 1)
            if isinstance(v[key], (int, float)) and v[key] > 0:
                p *= v[key]
        rank_sum.append(s); product.append(p); compile_s.append(v['compile_time'])
    print(k, len(compile_s), 'configs; rank sum', round(spearman(rank_sum, compile_s), 3), '; product', round(spearman(product, compile_s), 3))
