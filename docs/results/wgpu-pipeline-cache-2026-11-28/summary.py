#!/usr/bin/env python3
"""One line per tune for summary.txt: `python3 summary.py NAME.json...` in an unpacked raw.tgz.
Process wall (from NAME.err), tuner wall, configs and mean evaluation seconds per device, and
from a trace (call 1 only) the workers' pipeline builds: how many, how many over 10 ms, their
sum, and the PCI bus of each device the process and its workers opened."""
import json,re,sys,statistics as st,glob,os
def evs(d):
    out=[]
    def walk(x):
        if isinstance(x,dict):
            if "eval_seconds" in x: out.append(x); return
            for v in x.values(): walk(v)
        elif isinstance(x,list):
            for v in x: walk(v)
    walk(d); return out
for f in sys.argv[1:]:
    n=f[:-5]
    err=open(n+".err").read()
    err=re.sub(r'\x1b\[[0-9;]*m','',err)
    wall=re.findall(r'wall_([\d.]+)_s',err)
    try: d=json.load(open(f))
    except Exception as e: print(n,"no json",e); continue
    d0=d[0] if isinstance(d,list) else d
    ev=evs(d)
    by={}
    for e in ev: by.setdefault(e.get("device"),[]).append(e["eval_seconds"] or 0)
    per=" ".join("dev%s:%d/%.1fms"%(k,len(v),1000*st.mean(v)) for k,v in sorted(by.items(),key=lambda x:str(x[0])))
    loads=[float(m) for m in re.findall(r'request="load" waited=\S+ seconds=([\d.e-]+)',err)]
    slow=sum(1 for x in loads if x>0.01)
    opened=re.findall(r'wgpu device opened adapter="[^"]*" pci_bus="([^"]*)" pid=(\d+)',err)
    w=d0.get("winner_stats",{}).get("median")
    tw=d0.get("wall_seconds")
    print("%-26s wall %s tuner %.2f %s loads %d slow(>10ms) %d sum %.2fs opened %s winner %.4f ms"%(os.path.basename(n),wall[-1] if wall else "?",tw or -1,per,len(loads),slow,sum(loads),[o[0][-6:] for o in opened],1000*w if w else -1))
