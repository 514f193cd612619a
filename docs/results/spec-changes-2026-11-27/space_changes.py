"""Changes a recorded space (Kernel Tuner cache) one field at a time (dropped, or a wrong value:
strings, negatives, NaN, infinities, wrong types) and runs `kerntune simulate` on it, alone and
as a source of a leave-one-out run: a panic, a crash or a hang is flagged.
Usage: python3 space_changes.py KERNTUNE SPACE.json"""
import os, json, subprocess, sys, random, copy, tempfile
BIN = sys.argv[1]; space = sys.argv[2]
random.seed(5)
TMP = tempfile.mkdtemp()
doc = json.load(open(space))
def run(args):
    try:
        p = subprocess.run([BIN] + args, capture_output=True, text=True, timeout=60, env=dict(os.environ, KERNTUNE_LOG="error"))
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return 124, "TIMEOUT"
vals = ["abc", -1, 0, 1e308, None, [], {}, True, [1, "a"], 3.5, "NaN", float('nan'), float('inf')]
def paths(o, pre=(), depth=0):
    yield pre
    if depth > 3: return
    if isinstance(o, dict):
        items = list(o.items())
        if len(items) > 6: items = random.sample(items, 6)
        for k, v in items: yield from paths(v, pre + (k,), depth+1)
    elif isinstance(o, list):
        for i, v in enumerate(o[:4]): yield from paths(v, pre + (i,), depth+1)
def setp(o, p, v, delete=False):
    for k in p[:-1]: o = o[k]
    if delete: del o[p[-1]]
    else: o[p[-1]] = v
n = 0; bad = []
ps = [p for p in paths(doc) if p]
for p in ps:
    for mode in ['del'] + random.sample(vals, 3):
        o = copy.deepcopy(doc)
        setp(o, p, mode, delete=(mode == 'del'))
        f = os.path.join(TMP, '_fuzz_space.json'); open(f, 'w').write(json.dumps(o, allow_nan=True))
        for args in (['simulate', f, '--repeats', '2', '--budget', '5', '--strategy', 'random,hybrid'],
                     ['simulate', '--leave-one-out', f, space, '--repeats', '2', '--at', '5']):
            rc, out = run(args); n += 1
            if rc == 101 or 'panicked' in out or rc == 124 or rc < 0:
                bad.append((p, mode, args[1], rc, out[-500:]))
print('runs', n, 'flagged', len(bad))
for b in bad[:30]: print('----', b[:4]); print(b[4])
