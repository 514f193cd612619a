#!/usr/bin/env python3
"""The real tunes of call2/tunes.tgz scored against the space call 1 recorded
(sgemm_H100.t4.json.gz): each tune's evaluations, its winner's fraction of the recorded optimum
(the winner's recorded time), the seconds before the device's first job, and the device's busy
seconds against the recorded evaluation seconds of the same configs.

    python3 compare.py    # in this folder
"""
import glob, gzip, io, json, os, tarfile

here = os.path.dirname(os.path.abspath(__file__))
t4 = json.load(gzip.open(os.path.join(here, 'sgemm_H100.t4.json.gz')))
t4 = t4[0] if isinstance(t4, list) else t4
key = lambda pairs: tuple(sorted((k, str(v)) for k, v in pairs))
times, ev = {}, {}
for r in t4['results']:
    k = key(r['configuration'].items())
    ev[k] = r['times'].get('benchmark', 0) / 1e3
    m = [x for x in r.get('measurements', []) if x['name'] == 'time']
    if r.get('invalidity') == 'correct' and m:
        times[k] = m[0]['value']
opt = min(times.values())
print(f"recorded space: {len(t4['results'])} configs, optimum {opt:.4f} ms")
tar = tarfile.open(os.path.join(here, 'call2', 'tunes.tgz'))
rows = {}
for m in sorted(tar.getmembers(), key=lambda m: m.name):
    if not m.name.endswith('.json'):
        continue
    j = json.load(tar.extractfile(m))
    j = j[0] if isinstance(j, list) else j
    name = os.path.basename(m.name)[:-5]
    measured = [r for r in j['results'] if r.get('outcome') == 'measured']
    dev = j['time']['devices'][0]
    rec = sum(ev.get(key(r['config']['params']), 0) for r in measured)
    frac = opt / times[key(j['winner']['params'])]
    print(f"{name:14s} evaluated {j['evaluated']:4d}  winner {frac:.3f} of the optimum  before the first job {dev['before_first_s']:.2f} s"
          f"  device busy {dev['busy_s']:.2f} s ({1e3 * dev['busy_s'] / len(measured):.1f} ms each; recorded {1e3 * rec / len(measured):.1f} ms)")
    s, b, _ = name.split('-')
    rows.setdefault((s, b), []).append((j['evaluated'], frac))
for (s, b), v in sorted(rows.items()):
    print(f"{s} {b}: mean of {len(v)} seeds: {sum(x[0] for x in v) / len(v):.1f} evaluations, {sum(x[1] for x in v) / len(v):.3f} of the optimum")
