# The best of k uniformly random configs of a recorded space, as a fraction of its optimum, on the
# mean over 20,000 draws; and how many configs reach 0.9 of it.
# python3 random-best.py ../shared/spaces/gpus/convolution_MI250X.json.gz
import gzip, json, random, statistics, sys
cache = json.load(gzip.open(sys.argv[1]))['cache']
t = [v['time'] for v in cache.values() if isinstance(v['time'], (int, float)) and v['time'] > 0]
best = min(t)
f = [best / x for x in t]
print(len(f), 'configs;', sum(x >= 0.9 for x in f), 'within 0.9 of the optimum')
random.seed(1)
for k in (3, 13, 16, 20):
    print(k, round(statistics.mean(max(random.sample(f, k)) for _ in range(20000)), 3))
