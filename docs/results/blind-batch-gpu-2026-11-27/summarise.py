"""Each run's winner against the GPU's recorded optimum (core/tests/data: H200 0.2797 ms, H100
0.2816 ms), its wall time, configs compiled and measured, and the transfer note; then the means
per build. Usage: python3 summarise.py [runs2.tgz] (from this folder)."""
import json, statistics, sys, tarfile

tar = tarfile.open(sys.argv[1] if len(sys.argv) > 1 else "runs2.tgz")
files = {m.name.lstrip("./"): m for m in tar.getmembers() if m.isfile()}
read = lambda name: tar.extractfile(files[name]).read().decode()
gpu = read("gpu.txt")
optimum = 0.2797 if "H200" in gpu else 0.2816
print(gpu.strip().splitlines()[0], f"(recorded optimum {optimum} ms)")
rows = {}
for name in sorted(n for n in files if n.endswith(".json")):
    r = json.loads(read(name))[0]
    median = r["winner_stats"]["median"] * 1e3
    config = ",".join(str(v) for _, v in r["winner"]["params"])
    wall = float(read(name.replace(".json", ".err")).split()[-1].split("_")[1])
    kind = name.split("-")[0]
    rows.setdefault(kind, []).append((optimum / median, wall, r["compiled"], r["evaluated"]))
    print(f"{name:14} {median:.4f} ms  {optimum / median:.3f}  {config:22} {wall:.2f} s  {r['compiled']} compiled, {r['evaluated']} measured")
    for note in r["notes"]:
        if note.startswith("transfer: ") and "proposals" in note:
            print("    " + note)
for kind, v in rows.items():
    print(f"{kind}: {len(v)} runs, fraction mean {statistics.mean(x[0] for x in v):.3f} (lowest {min(x[0] for x in v):.3f}), "
          f"wall mean {statistics.mean(x[1] for x in v):.2f} s, compiled mean {statistics.mean(x[2] for x in v):.1f}")
