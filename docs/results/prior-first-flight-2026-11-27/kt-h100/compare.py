"""Each config's seconds as Kernel Tuner (kt_sgemm_bf.json.gz) and kerntune (kerntune-seconds.json.gz)
recorded them on the same H100. python3 compare.py > compare.txt"""
import gzip, json, os, statistics

here = os.path.dirname(os.path.abspath(__file__))
kt = json.load(gzip.open(os.path.join(here, "kt_sgemm_bf.json.gz")))
keys = kt["tune_params_keys"]
ktc = {}
for v in kt["cache"].values():
    if isinstance(v.get("time"), (int, float)):
        ktc[tuple(int(v[p]) for p in keys)] = (v.get("compile_time", 0) / 1e3, v.get("benchmark_time", 0) / 1e3, v.get("verification_time", 0) / 1e3)
pairs = []
for r in json.load(gzip.open(os.path.join(here, "kerntune-seconds.json.gz"))):
    d = dict(kv.split("=") for kv in r["config"].split(","))
    cfg = tuple(int(d[p]) for p in keys)
    if cfg in ktc and r["eval_s"] and r["compile_s"] and r["time_s"]:
        pairs.append((ktc[cfg], r["compile_s"], r["eval_s"]))
mean = lambda xs: sum(xs) / len(xs)
print(f"{len(pairs)} configs measured by both")
print(f"Kernel Tuner: compile {mean([p[0][0] for p in pairs]):.3f} s, benchmark {mean([p[0][1] for p in pairs]):.3f} s, verification {mean([p[0][2] for p in pairs]):.3f} s a config")
print(f"kerntune: compile {mean([p[1] for p in pairs]):.3f} s, evaluation {mean([p[2] for p in pairs]):.3f} s a config")
r = sorted((p[0][1] + p[0][2]) / p[2] for p in pairs)
print(f"Kernel Tuner's evaluation ÷ kerntune's, per config: 10th percentile {r[len(r) // 10]:.1f}, median {statistics.median(r):.1f}, 90th percentile {r[9 * len(r) // 10]:.1f}")
