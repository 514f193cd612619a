"""Changes each shipped TOML spec one line at a time (dropped; `key = value` lines set to a wrong
value, four of a fixed list per line; five truncations) and runs `kerntune check` on it: flags a
panic, a crash, a hang, or a refusal that is not exactly one `error:` line naming the file.
The changed copy sits beside the spec (`_fuzz_NAME`) and is removed after each run.
Usage: python3 toml_changes.py KERNTUNE SPEC.toml..."""
import os, re, subprocess, sys, random, shutil, glob
BIN = sys.argv[1]
specs = sys.argv[2:]
random.seed(7)
out = []
def run(path, args):
    try:
        p = subprocess.run([BIN] + args, capture_output=True, text=True, timeout=30,
                           env=dict(os.environ, KERNTUNE_LOG="error"))
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return 124, "TIMEOUT"
subs = ['"abc"', '-1', '0', '1e30', '99999999999999999999', '[]', '{}', '"((("', '"N / 0"', '"div_ceil(N, 0)"', 'true', '"x" ', '[1, "a"]', '3.5']
n = 0
bad = []
refused = 0
for spec in specs:
    d = os.path.dirname(os.path.abspath(spec))
    lines = open(spec).read().split('\n')
    muts = []
    for i, l in enumerate(lines):
        if l.strip() and not l.strip().startswith('#'):
            muts.append(('del %d' % (i+1), lines[:i] + lines[i+1:]))
            if '=' in l:
                k = l.split('=')[0]
                for s in random.sample(subs, 4):
                    muts.append(('line %d := %s' % (i+1, s), lines[:i] + [k + '= ' + s] + lines[i+1:]))
    for t in random.sample(range(len('\n'.join(lines))), 5):
        muts.append(('trunc %d' % t, ['\n'.join(lines)[:t]]))
    for name, ls in muts:
        p = os.path.join(d, '_fuzz_' + os.path.basename(spec))
        open(p, 'w').write('\n'.join(ls))
        rc, o = run(p, ['check', p])
        n += 1
        if rc == 101 or 'panicked' in o or rc == 124 or rc < 0:
            bad.append((spec, name, rc, o[-600:]))
        elif rc != 0:
            refused += 1
            errs = [l for l in o.splitlines() if l.startswith('error:')]
            if len(errs) != 1 or '_fuzz_' not in errs[0]:
                bad.append((spec, name + ' [error lines %d]' % len(errs), rc, o[-400:]))
        os.remove(p)
print('runs', n, 'refused', refused, 'flagged', len(bad))
for b in bad:
    print('----', b[0], '|', b[1], '| rc', b[2]); print(b[3])
