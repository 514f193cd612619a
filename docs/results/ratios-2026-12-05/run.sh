#!/usr/bin/env bash
# The sixtieth session's ratio calls (issue 22's headline ratios at this build, each in one call of
# the device tool; carry .pack, .gl and .whl from ../shared/bench/fetch-wheels.sh):
#  PART=conv:  kerntune random 50 on the convolution (seed 1, -j 16, no prior), cold (fresh
#              kerntune, NVRTC and CuPy caches), twice; then Kernel Tuner, cold, on exactly the
#              first run's 50 configs (examples/convolution/convolution_kt.py --configs).
#  PART=sgemm: Kernel Tuner's SGEMM 410 cold (gpu-check.sh kt), then kerntune's cold and one warm
#              (gpu-check.sh sgemm).
# Output: $OUT/PART.tgz and the summary on standard output.
set -u
O=$OUT
. scripts/device-env.sh
W=/tmp/ratios-${PART:-conv}; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt; lscpu | grep -E 'Model name|^CPU\(s\)|Thread' > $W/cpu.txt
cat $W/gpu.txt $W/cpu.txt
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
cold() { rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d) CUPY_CACHE_DIR=$(mktemp -d); }
case ${PART:-conv} in
conv)
  K=.device/kerntune; S=examples/convolution/convolution.toml
  run() { local name=$1; shift; cold; /usr/bin/time -f "wall %e s" $K tune $S --backend cuda --strategy random --budget 50 --seed 1 --top 1000 --no-db --json "$@" > $W/$name.json 2> $W/$name.log; echo "$name: exit $? $(grep -h '^wall' $W/$name.log)"; }
  run kt-1 -j 16
  run kt-2 -j 16
  for f in $W/kt-*.json; do
    python3 -c 'import json,sys,os; r=json.load(open(sys.argv[1])); r=r[0] if isinstance(r,list) else r; cs=sorted(((x["compile_seconds"] or 0) for x in r["results"]), reverse=True); print(os.path.basename(sys.argv[1]), "wall", round(r["wall_seconds"],2), "compile summed", round(r["compile_seconds"],1), "eff", round(r["compile_efficiency"],3), "slowest", round(cs[0],1), "winner", [v for _, v in r["winner"]["params"]], "%.4f ms" % (r["winner_stats"]["mean"]*1e3))' $f
  done
  cold; timeout 450 /usr/bin/time -f "wall %e s" python3 examples/convolution/convolution_kt.py --configs $W/kt-1.json > $W/kerneltuner.txt 2>&1
  echo "Kernel Tuner: exit $? $(grep -h '^wall' $W/kerneltuner.txt)"
  grep -iE "best|compile|time" $W/kerneltuner.txt | tail -6
  ;;
sgemm)
  mkdir -p $W/kt $W/sgemm
  OUT=$W/kt bash scripts/gpu-check.sh kt
  SGEMM_WARM=1 OUT=$W/sgemm bash scripts/gpu-check.sh sgemm
  rm -f $W/kt/kt_triad.json
  grep -h "wall\|^---" $W/sgemm/sgemm.txt | grep -v compiled; grep -h "^winner" $W/sgemm/sgemm.txt | head -2 | cut -c1-120
  cat $W/kt/kernel-tuner.txt | tail -20
  ;;
esac
cd /tmp && tar czf $O/${PART:-conv}.tgz $(basename $W)
