#!/usr/bin/env python3
"""The four parts of the H100 brute force (kerntune --json outputs, part-K.json) as one Kernel
Tuner cache (the format of ../shared/spaces/gpus/convolution_*.json.gz): every config of the
hub space keyed as Kernel Tuner keys it, `time` in ms (kerntune's mean), `compile_time` in ms.
A config measured by several parts (the default config, every shard's reference) keeps the
better-sampled measurement. Configs kerntune pruned after compiling (their compile report
showed register spills) are written as "InvalidConfig", as Kernel Tuner writes configs it did
not run; a config that failed, as "RuntimeFailedConfig".

    python3 to_kt.py part-0.json part-1.json part-2.json part-3.json > convolution_H100.json
"""
import json, sys

KEYS = ['block_size_x', 'block_size_y', 'tile_size_x', 'tile_size_y', 'read_only', 'use_padding', 'use_shmem', 'use_cmem', 'filter_height', 'filter_width']
TUNE = {'block_size_x': list(range(16, 257, 16)), 'block_size_y': [1, 2, 4, 8, 16], 'tile_size_x': [1, 2, 3, 4], 'tile_size_y': [1, 2, 3, 4],
        'read_only': [0, 1], 'use_padding': [0, 1], 'use_shmem': [0, 1], 'use_cmem': [1], 'filter_height': [15], 'filter_width': [15]}

cache, device = {}, None
for path in sys.argv[1:]:
    run = json.load(open(path))[0]
    device = run['target']['name']
    for r in run['results']:
        p = dict(r['config']['params'])
        p.update(filter_height=15, filter_width=15)
        key = ','.join(str(p[k]) for k in KEYS)
        e = {k: p[k] for k in KEYS}
        if r['outcome'] == 'measured':
            e['time'] = r['stats']['mean'] * 1e3
            e['samples'] = r['stats']['samples']
        elif r['outcome'] == 'pruned':
            e['time'] = 'InvalidConfig'
        else:
            e['time'] = 'RuntimeFailedConfig'
        if r.get('compile_seconds') is not None:
            e['compile_time'] = r['compile_seconds'] * 1e3
        old = cache.get(key)
        if old is None or e.get('samples', 0) > old.get('samples', 0):
            cache[key] = e
json.dump({'device_name': device, 'kernel_name': 'convolution_kernel', 'problem_size': [4096, 4096], 'tune_params_keys': KEYS,
           'tune_params': TUNE, 'objective': 'time', 'cache': cache}, sys.stdout)
