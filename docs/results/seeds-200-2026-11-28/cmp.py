import re,sys
def rows(f):
    d={}
    for l in open(f):
        m=re.match(r'│ (\S+)\s+┆ (none \(hybrid\)|adaptive)\s+┆.*┆ ([\d.]+) \(([\d.]+)\)\s+│',l)
        if m: d[(m.group(1),m.group(2)[:4])]=float(m.group(3))
    return d
a=rows(sys.argv[1]); b=rows(sys.argv[2])
print('space | none@20 50s / 200s | adaptive@20 50s / 200s')
for sp in sorted({k[0] for k in a}):
    print(sp,'|',a.get((sp,'none')),'/',b.get((sp,'none')),'|',a.get((sp,'adap')),'/',b.get((sp,'adap')))
