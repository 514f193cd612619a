import re,sys,collections
# usage: tab.py label=file ...
res=collections.OrderedDict()
labels=[]
for arg in sys.argv[1:]:
    lab,f=arg.split('=')
    labels.append(lab)
    space=None
    for line in open(f):
        m=re.match(r'^(\S+) \(',line)
        if m: space=m.group(1)
        if line.startswith('│ hybrid') or re.match(r'│ \w',line) and 'strategy' not in line:
            cells=re.findall(r'([\d.]+) ± [\d.]+ \(([\d.]+)\)',line)
            res.setdefault(space,{})[lab]=cells
print('space', *labels, sep=' | ')
for sp,d in res.items():
    row=[sp]
    for lab in labels:
        c=d.get(lab)
        row.append(' / '.join(f'{m} ({p})' for m,p in c[1:]) if c else '-')
    print(' | '.join(row))
