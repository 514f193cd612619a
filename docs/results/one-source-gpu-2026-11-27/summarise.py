"""Each run's winner against the H200's recorded optimum (0.2797 ms, core/tests/data/convolution_H200.json.gz),
its wall time and the transfer note. Usage: python3 summarise.py (from this folder; reads runs.tgz)."""
import io, json, tarfile

OPTIMUM_MS = 0.2797
tar = tarfile.open("runs.tgz")
files = {m.name.lstrip("./"): m for m in tar.getmembers() if m.isfile()}
read = lambda name: tar.extractfile(files[name]).read().decode()
for name in sorted(n for n in files if n.endswith(".json")):
    r = json.loads(read(name))[0]
    median = r["winner_stats"]["median"] * 1e3
    config = ",".join(str(v) for _, v in r["winner"]["params"])
    wall = read(name.replace(".json", ".err")).split()[-1]
    print(f"{name:14} {median:.4f} ms  {OPTIMUM_MS / median:.3f} of the recorded optimum  {config:22} {wall}")
    for note in r["notes"]:
        if note.startswith("transfer: ") and "proposals" in note:
            print("    " + note)
