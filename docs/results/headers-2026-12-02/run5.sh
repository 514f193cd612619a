#!/usr/bin/env bash
# Fifth call, on an H200: the memcheck GPU test and its steps by hand (as run4.sh), with the
# buffers under the checker now of their exact size (the fourth call saw its over-read as
# clean: a guarded buffer is mapped in 2 MiB steps), then every GPU suite at this build.
set -u
. scripts/device-env.sh
W=/tmp/headers5; rm -rf $W; mkdir -p $W/hand
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
H=$W/hand
{
  KERNTUNE_CACHE_DIR=$W/suites KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda .device/tests/gpu --test-threads=1 the_winner 2>&1 | grep -E "^test |^test result|panicked|^error|^warning" | cut -c1-3000
  printf 'extern "C" __global__ void shift(float* y, const float* x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n) return;\n#if OVERREAD\n    float next = x[i + 1];\n    y[i] = x[i] + (i + 1 < n ? next : 0.0f);\n#else\n    y[i] = x[i] + (i + 1 < n ? x[i + 1] : 0.0f);\n#endif\n}\n' > $H/shift.cu
  for o in 1 0; do
    printf '[kernel]\nname = "shift"\nsource = { cuda = "shift.cu" }\n[params]\nWG = [128, 256]\nOVERREAD = [%s]\n[[problems]]\nn = 1000000\n[[args]]\nname = "y"\ntype = "f32"\nlen = "n"\naccess = "write"\n[[args]]\nname = "x"\ntype = "f32"\nlen = "n"\ninit = "random"\n[[args]]\nname = "n"\ntype = "i32"\nvalue = "n"\n[launch]\ngrid = ["div_ceil(n, WG)"]\nblock = ["WG"]\n' $o > $H/shift$o.toml
    for run in tune again; do
      echo "== OVERREAD=$o ($run)"
      t0=$(date +%s.%N)
      KERNTUNE_CACHE_DIR=$H/cache $NEW tune $H/shift$o.toml --backend cuda --memcheck --top 1 > $W/shift$o-$run.txt 2>&1; rc=$?
      t1=$(date +%s.%N)
      grep -E "^warning|^winner|^database hit|^memcheck|^error|^failures" $W/shift$o-$run.txt | cut -c1-900
      echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
    done
  done
  # Kernel Tuner's ExpDist at the study's winner, as in run3.sh, its buffers now of their exact
  # size under the checker.
  S=$W/spec; mkdir -p $S
  cp docs/results/published-2026-12-02/expdist.toml .kt/expdist.cu $S/
  sed 's|#include <cub/cub.cuh>|#include <cub/block/block_reduce.cuh>|' $S/expdist.cu > $S/expdist_block.cu
  python3 - "$S" <<'PY'
import sys, re
d = sys.argv[1]
s = open(d + '/expdist.toml').read().replace('source = { cuda = "expdist.cu" }', 'source = { cuda = "expdist_block.cu" }')
for k, v in [("block_size_x", 32), ("block_size_y", 1), ("tile_size_x", 4), ("tile_size_y", 4), ("use_shared_mem", 1)]:
    s = re.sub(r'^%s = \[.*\]$' % k, '%s = [%d]' % (k, v), s, flags=re.M)
open(d + '/expdist_winner.toml', 'w').write(s)
PY
  echo "== expdist winner, --memcheck"
  KERNTUNE_CACHE_DIR=$W/cache $NEW tune $S/expdist_winner.toml --backend cuda --compare cost=sum --memcheck --top 1 > $W/expdist.txt 2>&1; echo "exit $?"
  grep -E "^warning|^winner|^memcheck|^error" $W/expdist.txt | cut -c1-700
  export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
  for t in conformance gpu wgpu-lib open launch; do
    KERNTUNE_CACHE_DIR=$W/suites KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test result|FAILED|panicked" | sed "s/^/$t: /"
  done
  KERNTUNE_CACHE_DIR=$W/suites KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/headers5.tgz *.txt hand/*.toml hand/*.cu spec/*.toml
