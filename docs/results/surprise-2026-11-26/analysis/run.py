import json,gzip,glob,math,sys
spaces={}
for f in sorted(glob.glob('/work/shared/spaces/gpus/convolution_*.json.gz')):
    d=json.load(gzip.open(f))
    t={k:v['time'] for k,v in d['cache'].items() if isinstance(v.get('time'),(int,float)) and v['time']>0}
    spaces[f.split('_')[-1][:-8]]=t
def key(p): return ','.join(str(p[n]) for n in ['block_size_x','block_size_y','tile_size_x','tile_size_y','read_only','use_padding','use_shmem','use_cmem'])+',15,15'
def score(k):
    v=[math.log(s[k]/min(s.values())) for s in spaces.values() if k in s]
    return sum(v)/len(v) if v else float('nan')
for f in sys.argv[1:]:
    d=json.load(open(f))[0]
    rows=[]
    for r in d['results']:
        if r.get('outcome')!='measured': continue
        k=key(dict(r['config']['params'])); rows.append((score(k),r['stats']['median']*1e3,k))
    best=min(x[1] for x in rows)
    print(f, 'best', round(best,4))
    for s,t,k in sorted(rows): print(f'   pred {s:6.3f}  act {math.log(t/best):6.3f}  {t:.4f} {k}')
