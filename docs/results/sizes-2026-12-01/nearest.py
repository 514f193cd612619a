# Each size held out with only its k nearest sizes as sources (k = 2, 3, 4, 6), through
# `kerntune simulate --leave-one-out`; run in the folder call1.tgz unpacks to:
# `python3 nearest.py hgemm,matmul 1` (then 16 for what `--jobs 16` keeps in flight).
import json,glob,math,subprocess,sys,re
import os
K=os.environ.get('KERNTUNE', 'kerntune')
def key(f):
    m=re.search(r'M-(\d+)_N-(\d+)_K-(\d+)',f); return [int(x) for x in m.groups()]
def dist(a,b): return sum(abs(math.log(x/y)) for x,y in zip(a,b))
jobs=sys.argv[2] if len(sys.argv)>2 else '1'
for kern in sys.argv[1].split(','):
    fs=sorted(glob.glob(f't4/{kern}_*.json'))
    for n in [2,3,4,6]:
        row=[]
        for x in fs:
            others=sorted([f for f in fs if f!=x], key=lambda f:(dist(key(f),key(x)),f))[:n]
            out=subprocess.run([K,'simulate','--leave-one-out',x,*others,'--repeats','50','--at','20','--jobs',jobs,'--json'],capture_output=True,text=True).stdout
            recs=json.loads(out)
            recs=recs if isinstance(recs,list) else recs.get('records',recs)
            name=x.split('/')[-1].replace('.json','')
            for r in recs:
                if r.get('space','')==name and r.get('prior')=='adaptive':
                    row.append(r['at']['20']['mean'])
        print(kern,'nearest',n,' '.join(f'{v:.3f}' for v in row), 'mean %.3f'%(sum(row)/len(row)))
