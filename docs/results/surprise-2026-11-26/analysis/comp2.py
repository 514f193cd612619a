import json,gzip,glob,math,random,statistics as st
spaces={}
for f in sorted(glob.glob('/work/shared/spaces/gpus/convolution_*.json.gz')):
    d=json.load(gzip.open(f))
    t={}
    for k,v in d['cache'].items():
        x=v.get('time')
        if isinstance(x,(int,float)) and x>0 and x==x: t[k]=x
    spaces[f.split('_')[-1][:-8]]=t
spaces['H100']=json.load(open('/tmp/ana/h100.json'))
def held_out(held):
    """The held-out space's times, and each of its configs' mean score (log time over their
    best) on the sources that measured it: the other recorded GPUs (never the H100)."""
    src=[s for s in spaces if s not in (held,'H100')]
    H=spaces[held]
    score={}
    for k in H:
        v=[math.log(spaces[s][k]/min(spaces[s].values())) for s in src if k in spaces[s]]
        if v: score[k]=sum(v)/len(v)
    return H,score
for held in spaces:
    H,score=held_out(held)
    order=sorted(score,key=score.get)
    top=order[:5]
    hb=min(H[k] for k in top)
    rs=[];beat=0
    rng=random.Random(1)
    ks=list(score)
    for c in rng.sample(ks,min(200,len(ks))):
        pred=score[c]-min(score[k] for k in top)
        act=math.log(H[c]/hb)
        if pred>0.05: rs.append(act/pred)
        beat+= H[c]<hb
    print(f'{held:7s} n={len(H)} top5 frac {min(H.values())/hb:.3f}  ratio actual/predicted slowdown: median {st.median(rs):.2f} q25 {sorted(rs)[len(rs)//4]:.2f}; random beating top5 {beat}/{min(200,len(ks))}')
print('--- surprise rate: configs the five others rank more than GAP (log) below their top 5, within thr (log) of the top 5 here')
for held in spaces:
    H,score=held_out(held)
    order=sorted(score,key=score.get)
    top=order[:5]; hb=min(H[k] for k in top); sb=min(score[k] for k in top)
    big=[k for k in score if score[k]-sb>GAP]
    out=[]
    for thr in (0.02,0.05,0.1,0.2):
        n=sum(1 for k in big if math.log(H[k]/hb)<thr)
        out.append(f'<{thr}: {n/len(big):.3f}')
    print(held, len(big)/len(score), ' '.join(out))
