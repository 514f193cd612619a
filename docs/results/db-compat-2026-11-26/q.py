import sqlite3,sys
c=sqlite3.connect(sys.argv[1])
cols=[r[1] for r in c.execute("PRAGMA table_info(measurements)")]
idx=[r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='index' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
n=c.execute("SELECT count(*) FROM measurements").fetchone()[0]
extra=""
if 'compile_s' in cols:
    nul=c.execute("SELECT count(*) FROM measurements WHERE compile_s IS NULL").fetchone()[0]
    mis=c.execute("SELECT count(*) FROM measurements WHERE compile_s IS NOT NULL AND compile_s IS NOT coalesce(json_extract(record,'$.trace.compile_s'),-1)").fetchone()[0]
    withcs=c.execute("SELECT count(*) FROM measurements WHERE compile_s >= 0").fetchone()[0]
    extra=f" compile_s NULL {nul}, mismatched {mis}, with seconds {withcs}"
print(f"  columns {cols}; indexes {idx}; {n} measurements;{extra}")
