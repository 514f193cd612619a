import sys
def parse(f):
    d={}
    for line in open(f):
        if '|' not in line: continue
        h,rest=line.split('|')
        name=h.split()[0]; none=float(h.split()[-1])
        toks=rest.split()
        for i in range(0,len(toks),2): d[(name,toks[i])]=(none,float(toks[i+1]))
    return d
a=parse(sys.argv[1]);b=parse(sys.argv[2])
ch=[(k,a[k][0],a[k][1],b[k][1]) for k in a if abs(a[k][1]-b[k][1])>0.02]
print('changed >0.02:',len(ch))
for c in sorted(ch,key=lambda c:c[3]-c[2]): print('  %-20s %-7s none %.3f  %.3f -> %.3f (%+.3f)'%(c[0][0],c[0][1],c[1],c[2],c[3],c[3]-c[2]))
