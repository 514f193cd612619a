#!/usr/bin/env bash
# The sixty-eighth session's GPU call (H100): a tune's own --json report used as a user would,
# and every GPU suite at the session's build.
#  A. SGEMM 410 (benches/sgemm/sgemm.toml) brute forced cold with --no-db --json (fresh cache
#     directory, CUDA_CACHE_DISABLE=1): the report is the recorded space. Then, on that report:
#     `simulate` in evaluations and under a time budget (16 compile threads), `report --db` (the
#     HTML page), `db show --db` (refused, the file untouched), and a second tune, cold, with
#     the report as its prior (the same GPU: its ranking is right, so the transfer search
#     should find the winner in its first picks).
#  B. Every GPU suite (scripts/device-suites.sh).
# Build: `cargo build --release --features cuda -p kerntune`, `bash scripts/gpu-check.sh
# --prepare`, `tar cJf .pack/device.tar.xz .device`; carry .pack and .gl.
set -u
rm -rf .device; tar xJf .pack/device.tar.xz
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
BIN=$PWD/.device/kerntune
W=/tmp/rs; rm -rf $W; mkdir -p $W
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nproc
  echo "== A. the space, brute forced cold, --no-db --json"
  start=$(date +%s%N)
  KERNTUNE_CACHE_DIR=$W/a CUDA_CACHE_DISABLE=1 $BIN tune benches/sgemm/sgemm.toml --backend cuda --strategy exhaustive --no-db --json > $OUT/sgemm.json 2> $OUT/sgemm.err
  echo "exit $? in $(ms $start) ms"
  grep -E "time:|^winner" $OUT/sgemm.err | cut -c1-300
  echo "== simulate the report, 200 evaluations"
  $BIN simulate $OUT/sgemm.json --budget 200 --at 20,50,100,200 --repeats 50 --strategy random,hybrid 2>&1
  echo "== simulate the report, 6 s, 16 threads"
  $BIN simulate $OUT/sgemm.json --budget 6s --jobs 16 --repeats 50 --strategy random,hybrid 2>&1
  echo "== report --db"
  $BIN report --db $OUT/sgemm.json -o $OUT/sgemm.html 2>&1
  echo "== db show --db (refused, untouched)"
  sum0=$(sha256sum < $OUT/sgemm.json)
  $BIN db show --db $OUT/sgemm.json 2>&1; echo "exit $?"
  [ "$sum0" = "$(sha256sum < $OUT/sgemm.json)" ] && echo "unchanged"
  echo "== a cold tune with the report as its prior, budget 10"
  start=$(date +%s%N)
  KERNTUNE_CACHE_DIR=$W/b CUDA_CACHE_DISABLE=1 $BIN tune benches/sgemm/sgemm.toml --backend cuda --no-db --budget 10 --prior $OUT/sgemm.json > $OUT/prior.txt 2>&1
  echo "exit $? in $(ms $start) ms"
  grep -E "^prior|^winner|^note: transfer|time:" $OUT/prior.txt | cut -c1-400
  echo "== B. suites"
  bash scripts/device-suites.sh /tmp/suites 2>&1
} > $OUT/run.txt 2>&1
(cd /tmp && tar czf $OUT/suites.tgz suites/suite-*.txt suites/wgpu-devices.txt)
gzip -9 $OUT/sgemm.json
cat $OUT/run.txt
