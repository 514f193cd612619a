#!/usr/bin/env bash
# Compiler processes at a lower priority (KERNTUNE_COMPILE_NICE, default 10) against the same
# binary with KERNTUNE_COMPILE_NICE=0 (compiles at the tuner's priority, as before), alternating,
# cold each (fresh cache directory, CUDA_CACHE_DISABLE=1, 16 compile threads): SGEMM 410 with
# hybrid and random under --budget 6s, hybrid with --budget 200 (its wall), and the convolution's
# random 50 (compile-bound: its wall and compile efficiency). ROUNDS="1" runs one round; LONG=1
# adds hybrid --budget 200; RUNS="sgemm-hybrid-6s-1 conv-random-50-1" picks runs. Carry .kt (small.tar.xz: the
# binary and ../shared/bench's files as .device/).
set -u
rm -rf .device; tar xJf .kt/small.tar.xz
. scripts/device-env.sh
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
K=$PWD/.device/kerntune
W=/tmp/nice; rm -rf $W; mkdir -p $W $OUT/runs
summary() {
  python3 - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j = j[0] if isinstance(j, list) else j
d = j['time']['devices'][0]
print(f"evaluated {j['evaluated']:4d}  wall {j['wall_seconds']:.2f} s  device busy {d['busy_s']:.2f} s  compile eff {j['compile_efficiency']:.2f}  winner {[v for _, v in j['winner']['params']]} {j['winner_stats']['mean']*1e3:.4f} ms")
PY
}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  lscpu | grep -E 'Model name|^CPU\(s\)'
  # The priorities the processes of a tune run at, read while it compiles.
  KERNTUNE_CACHE_DIR=$W/ps CUDA_CACHE_DISABLE=1 $K tune examples/convolution/convolution.toml --backend cuda -j 16 --strategy random --budget 10 --seed 3 --no-db > /dev/null 2>&1 &
  sleep 4; echo "niceness of a tune's processes (ni, args):"; ps -eo ni,args | grep -E '[k]erntune' | cut -c1-60 | sort | uniq -c; wait
  for round in ${ROUNDS:-1 2}; do
    for run in ${RUNS:-"sgemm-hybrid-6s-1" "sgemm-hybrid-6s-2" "sgemm-hybrid-6s-3" "sgemm-random-6s-1" ${LONG:+"sgemm-hybrid-200-1"} "conv-random-50-1"}; do
      run=${run//-/ }
      set -- $run
      spec=benches/sgemm/sgemm.toml; [ $1 = conv ] && spec=examples/convolution/convolution.toml
      for nice in 0 10; do
        t=$1-$2-$3-$4-nice$nice-r$round
        KERNTUNE_COMPILE_NICE=$nice KERNTUNE_CACHE_DIR=$W/$t CUDA_CACHE_DISABLE=1 $K tune $spec --backend cuda -j 16 \
          --strategy $2 --budget $3 --seed $4 --no-db --json > $OUT/runs/$t.json 2> $OUT/runs/$t.err
        echo "$t: exit $?  $(summary $OUT/runs/$t.json 2>&1 | tail -1)"
      done
    done
  done
} > $OUT/run.txt 2>&1
(cd $OUT && tar czf runs.tgz runs && rm -rf runs)
cat $OUT/run.txt
