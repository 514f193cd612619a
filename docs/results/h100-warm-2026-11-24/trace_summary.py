# Summarises a trace log (KERNTUNE_LOG=kerntune_core=trace): start-up lines, each worker request kind (count, busy s, waited s), and the ratio of each verification launch to the fastest later launch of the same config. zcat X.log.gz | python3 trace_summary.py
import sys,re
from collections import defaultdict
busy=defaultdict(float);cnt=defaultdict(int);wait=defaultdict(float)
jobs=[];cur=None
ansi=re.compile(r'\x1b\[[0-9;]*m')
t0=None
for l in sys.stdin:
    l=ansi.sub('',l)
    ts=l[11:26]
    if 'job received' in l: cur=[];jobs.append(cur)
    m=re.search(r'request served request="(\w+)" waited=([\d.e-]+) seconds=([\d.e-]+) times=\[([^\]]*)\]',l)
    if m:
        k=m.group(1);busy[k]+=float(m.group(3));cnt[k]+=1;wait[k]+=float(m.group(2))
        if cur is not None: cur.append((k,[float(x) for x in m.group(4).split(',') if x.strip()]))
    elif 'TRACE' not in l and 'INFO' not in l: print(ts, l[27:].strip()[:150])
for k in busy: print(k,cnt[k],round(busy[k],3),'waited',round(wait[k],3))
r=[]
for j in jobs:
    v=[t for k,t in j if k=='verify']; tm=[x for k,t in j if k=='time' for x in t]
    if v and tm: r.append(v[0][0]/min(tm))
r.sort()
if r: print('ratios n',len(r),'min',round(r[0],4),'p50',round(r[len(r)//2],4),'p90',round(r[int(len(r)*.9)],4),'max',round(r[-1],4), [round(x,3) for x in r[-5:]])
