# The seventh size's fraction of its optimum per tune: unpack call1.tgz (or call2.tgz beside
# call1.tgz's t4/) into one folder and run `python3 fraction.py` there. The optimum and the
# winner's time both come from the seventh size's exhaustive tune (t4/*-new.json); "winner own
# run" is the optimum over the winner's time in its own tune.
import json,glob,sys
def t4(f):
    d=json.load(open(f)); out={}
    for r in d['results']:
        c=','.join(f"{k}={v}" for k,v in sorted(r['configuration'].items()))
        t=[m['value'] for m in r['measurements'] if m['name']=='time']
        if r.get('invalidity')=='correct' and t: out[c]=t[0]
    return out
for f in sorted(glob.glob('t4/*.json')):
    s=t4(f); b=min(s,key=s.get); print(f"{f:45s} {len(s):4d} ok  best {s[b]:.4f} ms  {b}")
for k,key in [('hgemm','M-3072_N-3072_K-3072'),('matmul','M-1536_N-1536_K-1536')]:
    ex=t4(f't4/{k}_{key}-new.json'); opt=min(ex.values())
    for mode in ['prior','none']:
        fr=[];fr2=[]
        for s in range(1,6):
            d=json.load(open(f'new/{k}_{key}-{mode}-{s}.json')); r=d[0] if isinstance(d,list) else d
            w=r['winner']['params']; wk=','.join(f"{a}={b}" for a,b in sorted(w))
            # best time in this run
            ts=[x for x in r['results'] if x.get('stats')]
            fr.append(opt/ex.get(wk,float('nan'))); fr2.append(opt/r['winner_stats']['mean']/1e3 if 'winner_stats' in r else 0)
            if s==1 and mode=='prior': print(r.get('strategy'), r['prior']['line'] if r.get('prior') else None); print([n for n in r['notes'] if n.startswith('transfer')][:1])
        print(k, mode, 'winner own run: ', ' '.join(f'{x:.3f}' for x in fr2)); print(k, mode, 'fraction of optimum (winner config, timed in the exhaustive run):', ' '.join(f'{x:.3f}' for x in fr), 'mean %.3f'%(sum(fr)/len(fr)))
