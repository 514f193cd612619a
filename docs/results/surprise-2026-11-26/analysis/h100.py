import json,glob,collections
t=collections.defaultdict(list)
for f in glob.glob('/tmp/h/*.json')+glob.glob('/tmp/h4/**/*.json',recursive=True)+glob.glob('/tmp/h5/**/*.json',recursive=True):
    try: d=json.load(open(f))
    except Exception: continue
    for e in d:
        for r in e.get('results',[]):
            if r.get('outcome')!='measured': continue
            p=dict(r['config']['params'])
            k=','.join(str(p[n]) for n in ['block_size_x','block_size_y','tile_size_x','tile_size_y','read_only','use_padding','use_shmem','use_cmem'])+',15,15'
            t[k].append(r['stats']['median'])
h={k:sorted(v)[len(v)//2]*1e3 for k,v in t.items()}
json.dump(h,open('/tmp/ana/h100.json','w'))
print(len(h), min(h.values()))
