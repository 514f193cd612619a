"""The W6600's convolution space against the H100's favourites, as quoted in docs/benchmarks.md
("One source: the fallback keeps every other turn"). Run from the repository root:
python3 docs/results/one-source-2026-11-27/w6600_space.py"""
import gzip, json

def times(path):
    cache = json.load(gzip.open(path))["cache"]
    return {k: v["time"] for k, v in cache.items() if isinstance(v.get("time"), (int, float)) and v["time"] > 0}

w6600 = times("../shared/spaces/gpus/convolution_W6600.json.gz")
h100 = times("core/tests/data/convolution_H100.json.gz")
best = min(w6600.values())
fractions = sorted(best / t for t in w6600.values())
n = len(fractions)
print(f"W6600: {n} configs measured; median config at {fractions[n // 2]:.3f} of the optimum; "
      f"{sum(f >= 0.3 for f in fractions) / n:.1%} at 0.3 or more")
for k in sorted(h100, key=h100.get)[:5]:
    print(f"H100 favourite {k}: {best / w6600[k]:.3f} of the W6600's optimum")
