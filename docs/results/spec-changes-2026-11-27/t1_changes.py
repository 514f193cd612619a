"""Changes each shipped T1 (JSON) spec one field at a time (dropped, or three wrong values of a
fixed list) and runs `kerntune check` on it: flags as toml_changes.py does.
Usage: python3 t1_changes.py KERNTUNE SPEC.json..."""
import os, json, subprocess, sys, random, copy
BIN = sys.argv[1]; specs = sys.argv[2:]
random.seed(3)
def run(args):
    try:
        p = subprocess.run([BIN] + args, capture_output=True, text=True, timeout=30, env=dict(os.environ, KERNTUNE_LOG="error"))
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return 124, "TIMEOUT"
vals = ["abc", -1, 0, 1e308, None, [], {}, "(((", True, [1, "a"], 3.5, "N/0"]
def paths(o, pre=()):
    yield pre
    if isinstance(o, dict):
        for k, v in o.items(): yield from paths(v, pre + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o): yield from paths(v, pre + (i,))
def setp(o, p, v, delete=False):
    for k in p[:-1]: o = o[k]
    if delete:
        del o[p[-1]]
    else: o[p[-1]] = v
n = 0; bad = []; refused = 0
for spec in specs:
    d = os.path.dirname(os.path.abspath(spec)); doc = json.load(open(spec))
    ps = [p for p in paths(doc) if p]
    for p in ps:
        for mode in ['del'] + random.sample(vals, 3):
            o = copy.deepcopy(doc)
            setp(o, p, mode, delete=(mode == 'del'))
            f = os.path.join(d, '_fuzz_' + os.path.basename(spec)); json.dump(o, open(f, 'w'))
            rc, out = run(['check', f]); n += 1
            if rc == 101 or 'panicked' in out or rc == 124 or rc < 0:
                bad.append((spec, p, mode, rc, out[-500:]))
            elif rc != 0:
                refused += 1
                errs = [l for l in out.splitlines() if l.startswith('error:')]
                if len(errs) != 1 or '_fuzz_' not in errs[0]:
                    bad.append((spec, p, str(mode) + ' [error lines %d]' % len(errs), rc, out[-400:]))
            os.remove(f)
print('runs', n, 'refused', refused, 'flagged', len(bad))
for b in bad[:40]: print('----', b[:4]); print(b[4])
