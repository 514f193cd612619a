#!/usr/bin/env bash
# The sixty-seventh session's GPU call (H100): real tunes under a time budget, to hold
# `kerntune simulate --budget T --jobs 16` to, and every GPU suite at the session's build.
#  A. SGEMM 410 (benches/sgemm/sgemm.toml) brute forced cold into a fresh database, exported as
#     T4 (each config's compile and evaluation seconds as this tune spent them): the recorded
#     space the simulation replays.
#  B. Real tunes of the same space, cold (fresh cache directory, CUDA_CACHE_DISABLE=1), the
#     default -j (16 here), --budget 3s and 6s: random and hybrid, seeds 1-3; the JSON reports
#     (evaluated, winner) are kept and scored offline against A.
#  C. The shared-GPU check's Vulkan case again (vk.sh of the sixty-sixth session) and every
#     GPU suite (scripts/device-suites.sh).
# The first call lost B's files (too many files under $OUT); `PART=B` reran B alone, packed.
# Build: `cargo build --release --features cuda -p kerntune`, `bash scripts/gpu-check.sh
# --prepare`, `tar cJf .pack/device.tar.xz .device`; carry .pack and .gl.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
BIN=$PWD/.device/kerntune
W=/tmp/tb; rm -rf $W; mkdir -p $W $OUT/tunes
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nproc
  if [ "${PART:-all}" != B ]; then
  echo "== A. the space, brute forced cold"
  start=$(date +%s%N)
  KERNTUNE_CACHE_DIR=$W/space CUDA_CACHE_DISABLE=1 $BIN tune benches/sgemm/sgemm.toml --backend cuda --strategy exhaustive --json > $OUT/space.json 2> $OUT/space.err
  echo "exit $? in $(ms $start) ms"
  grep -E "time:|^winner" $OUT/space.err | cut -c1-300
  KERNTUNE_CACHE_DIR=$W/space $BIN db export --format t4 --out $OUT/sgemm_H100.t4.json; echo "export: exit $?"
  fi
  echo "== B. tunes with a time budget"
  for b in 3s 6s; do
    for s in random hybrid; do
      for seed in 1 2 3; do
        t=$s-$b-$seed
        start=$(date +%s%N)
        KERNTUNE_CACHE_DIR=$W/$t CUDA_CACHE_DISABLE=1 $BIN tune benches/sgemm/sgemm.toml --backend cuda \
          --strategy $s --seed $seed --budget $b --no-db --json > $OUT/tunes/$t.json 2> $OUT/tunes/$t.err; rc=$?
        echo "$t: exit $rc in $(ms $start) ms"
        grep -E "time:" $OUT/tunes/$t.err | cut -c1-300
      done
    done
  done
} > $OUT/run.txt 2>&1
(cd $OUT && tar czf tunes.tgz tunes && rm -rf tunes)
[ "${PART:-all}" = B ] && { cat $OUT/run.txt; exit 0; }
bash docs/results/shared-gpu-vulkan-2026-12-06/vk.sh > /dev/null 2>&1
echo "== C. vk.sh" >> $OUT/run.txt
grep -E "C\+G|shared|exit" $OUT/vk.txt | cut -c1-300 >> $OUT/run.txt
echo "== C. suites" >> $OUT/run.txt
bash scripts/device-suites.sh $OUT/suites >> $OUT/run.txt 2>&1
cat $OUT/run.txt
