import json,gzip,glob,math,sys
def load(f):
    d=json.load(gzip.open(f))
    t={}
    for k,v in d['cache'].items():
        x=v.get('time')
        if isinstance(x,(int,float)) and x>0 and math.isfinite(x): t[k]=x
    return t
kern=sys.argv[1]
sp={f.split('_')[-1][:-8]:load(f) for f in sorted(glob.glob(f'/tmp/s7/{kern}_*.json.gz'))}
# results adaptive-none from fs1 file
import re
res={}
for line in open('/work/main/docs/results/h100-space-2026-11-27/sim/before/fs1-1.txt'):
    m=re.match(r'(\w+)_(\w+)\s+no prior ([\d.]+) \|(.*)',line)
    if m and m.group(1)==kern:
        for g,v in re.findall(r'(\w+) ([\d.]+)',m.group(4)): res[(g,m.group(2))]=float(v)-float(m.group(3))
for s in sp:
  ts=sp[s]; bs=min(ts.values()); top=sorted(ts,key=ts.get)[:3]
  for t in sp:
    if t==s: continue
    tt=sp[t]; common=[k for k in ts if k in tt]
    er_s=sum(math.log(ts[k]/bs) for k in common)/len(common)
    er_t=sum(math.log(tt[k]) for k in common)/len(common)
    ft=[math.log(tt[k]) for k in top if k in tt]
    fs=[math.log(ts[k]/bs) for k in top if k in tt]
    dp=er_s-sum(fs)/len(fs); do=er_t-sum(ft)/len(ft)
    # median-based too
    print(f'{s:7}->{t:7} pred {dp:5.2f} obs {do:5.2f} ratio {do/dp:5.2f}  delta {res.get((s,t),float("nan")):+.3f}')
