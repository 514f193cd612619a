import json,gzip,glob,math,sys,random,re
def load(f):
    d=json.load(gzip.open(f)); t={}
    for k,v in d['cache'].items():
        x=v.get('time')
        if isinstance(x,(int,float)) and x>0 and math.isfinite(x): t[k]=x
    return t
res={}
for line in open('/work/main/docs/results/h100-space-2026-11-27/sim/before/fs1-1.txt'):
    m=re.match(r'(\w+)_(\w+)\s+no prior ([\d.]+) \|(.*)',line)
    if m:
        for g,v in re.findall(r'(\w+) ([\d.]+)',m.group(4)): res[(m.group(1),g,m.group(2))]=float(v)-float(m.group(3))
for kern in ['convolution','dedispersion']:
  sp={f.split('_')[-1][:-8]:load(f) for f in sorted(glob.glob(f'/tmp/s7/{kern}_*.json.gz'))}
  for s in sp:
    ts=sp[s]; top=sorted(ts,key=ts.get)[:3]
    for t in sp:
      if t==s: continue
      tt=sp[t]; keys=list(tt)
      fav=min(math.log(tt[k]) for k in top if k in tt)
      leads=[]
      for _ in range(2000):
        r=min(math.log(tt[k]) for k in random.sample(keys,2))
        leads.append(r-fav)
      leads.sort()
      p=lambda th: sum(1 for x in leads if x<th)/len(leads)
      print(f'{kern[:4]} {s:7}->{t:7} median lead {leads[1000]:5.2f}  P(<0.4) {p(0.4):.2f} P(<0.7) {p(0.7):.2f}  delta {res.get((kern,s,t),float("nan")):+.3f}')
