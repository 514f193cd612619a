"""Copies a kerntune SQLite database as another GPU's: every entry's target gets `-other`
appended (key and header), so that a tune on this GPU takes it as a prior from another device.
With `bare`, each record's `trace.eval_s` is removed (a database written before it was kept).
python3 retarget.py SRC DST [timed|bare]"""
import json, sqlite3, sys

src, dst, mode = sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "timed"
a, b = sqlite3.connect(src), sqlite3.connect(dst)
a.backup(b)
a.close()
for key, header in b.execute("SELECT key, header FROM entries").fetchall():
    h = json.loads(header)
    h["target"] += "-other"
    h["target_name"] = "Other " + h["target_name"]
    new = "|".join([h["kernel"], h["kernel_hash"], h["target"], h["toolchain"], h["problem"]])
    b.execute("UPDATE entries SET key = ?, header = ? WHERE key = ?", (new, json.dumps(h), key))
    b.execute("UPDATE measurements SET entry = ? WHERE entry = ?", (new, key))
    if mode == "bare":
        b.execute("UPDATE measurements SET record = json_remove(record, '$.trace.eval_s') WHERE entry = ?", (new,))
b.commit()
n, timed = b.execute("SELECT count(*), count(json_extract(record, '$.trace.eval_s')) FROM measurements").fetchone()
c, e = b.execute("SELECT avg(json_extract(record, '$.trace.compile_s')), avg(json_extract(record, '$.trace.eval_s')) FROM measurements WHERE time IS NOT NULL").fetchone()
print(f"{dst}: {n} measurements, {timed} with eval_s; mean compile_s {c}, mean eval_s {e}")
