import re,sys
for f in sys.argv[1:]:
    txt=open(f).read()
    if 'mis' in f:
        d=[float(x) for x in re.findall(r'Δ ([+-]\d\.\d+)\)', txt)]
    else:
        d=[]
        for line in txt.splitlines():
            m=re.match(r'(\S+)\s+no prior (\d\.\d+) \|(.*)', line)
            if m:
                none=float(m.group(2))
                d+= [float(v)-none for v in re.findall(r' (\d\.\d+)', m.group(3))]
    print(f, 'cases', len(d), 'negative', sum(x< -0.0005 for x in d), 'below -0.02', sum(x< -0.02 for x in d), 'sum neg %.3f'%sum(x for x in d if x<0), 'mean %.4f'%(sum(d)/len(d)))
