"""One line per tune of gpu/SIZE/{timed,bare}-N.json: wall seconds, configs compiled (beyond
the 20 measured: withdrawn picks), the first ask's capacity (from the .err debug log), the
winner's time as a fraction of the source's exhaustive optimum (same GPU, same problem), and
the note on the first flight. python3 gpu/summarise.py > gpu/table.txt"""
import glob, gzip, json, os, re

here = os.path.dirname(os.path.abspath(__file__))
for size in sorted(os.listdir(here)):
    d = os.path.join(here, size)
    if not os.path.isdir(d):
        continue
    src = json.load(gzip.open(os.path.join(d, "source.json.gz")))[0]
    best = src["winner_stats"]["mean"]
    print(f"SGEMM {size}³, source: exhaustive, {src['evaluated']} measured, {src['wall_seconds']:.2f} s, optimum {best * 1e3:.3f} ms")
    print("| tune | wall s | compiled | measured | first capacity | winner ms | fraction of optimum | first-flight note |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for mode in ("timed", "bare"):
        for f in sorted(glob.glob(os.path.join(d, f"{mode}-*.json"))):
            r = json.load(open(f))[0]
            log = open(f[:-5] + ".err").read()
            caps = re.findall(r"capacity=(\d+)", re.sub(r"\x1b\[[0-9;]*m", "", log))
            note = next((n for n in r["notes"] if "kept in flight until" in n), "")
            note = re.sub(r".*?(the sources spent [0-9.]+ s compiling and [0-9.]+ s evaluating).*?(\d+) proposals.*", r"\1: \2", note)
            w = r["winner_stats"]["mean"]
            print(f"| {os.path.basename(f)[:-5]} | {r['wall_seconds']:.2f} | {r['compiled']} | {r['evaluated']} | {caps[0] if caps else ''} | {w * 1e3:.3f} | {best / w:.3f} | {note} |")
    print()
