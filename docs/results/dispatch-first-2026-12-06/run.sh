#!/usr/bin/env bash
# A free device gets its next compiled config before the strategy is asked for more: the build
# before (7ccbdd9, .pack/kerntune-7ccbdd9.xz) against the build after (.pack/kerntune-new.xz),
# alternating, on SGEMM 410 cold (fresh cache directory, CUDA_CACHE_DISABLE=1, 16 compile
# threads): hybrid and random with --budget 6s, and hybrid with --budget 200 (the same
# evaluations: its wall), each run's JSON report kept (runs.tgz) and summarised (run.txt).
# Carry .pack holding the two binaries (xz) and ../shared/bench/sgemm.cu (the device tool's
# 64 MiB leaves no room for the usual .pack/device.tar.xz beside them).
set -u
. scripts/device-env.sh
cp .pack/sgemm.cu benches/sgemm/sgemm.cu
xz -dc .pack/kerntune-7ccbdd9.xz > /tmp/kt-before && xz -dc .pack/kerntune-new.xz > /tmp/kt-after && chmod +x /tmp/kt-before /tmp/kt-after
W=/tmp/df; rm -rf $W; mkdir -p $W $OUT/runs
summary() {
  python3 - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j = j[0] if isinstance(j, list) else j
d = j['time']['devices'][0]
print(f"evaluated {j['evaluated']:4d}  wall {j['wall_seconds']:.2f} s  device busy {d['busy_s']:.2f} s  before first job {d['before_first_s']:.2f} s  winner {j['winner']['params']}")
PY
}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for round in 1 2; do
    for run in "hybrid 6s 1" "hybrid 6s 2" "hybrid 6s 3" "random 6s 1" "hybrid 200 1" "hybrid 200 2"; do
      set -- $run
      for b in before after; do
        t=$b-$1-$2-$3-r$round
        KERNTUNE_CACHE_DIR=$W/$t CUDA_CACHE_DISABLE=1 /tmp/kt-$b tune benches/sgemm/sgemm.toml --backend cuda \
          --strategy $1 --budget $2 --seed $3 --no-db --json > $OUT/runs/$t.json 2> $OUT/runs/$t.err
        echo "$t: exit $?  $(summary $OUT/runs/$t.json 2>&1 | tail -1)"
      done
    done
  done
} > $OUT/run.txt 2>&1
(cd $OUT && tar czf runs.tgz runs && rm -rf runs)
cat $OUT/run.txt
