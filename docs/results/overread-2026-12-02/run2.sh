#!/usr/bin/env bash
# Second call, on an H200, at the build with the compile timeout and the unused-parameter warning:
# - a kernel whose fully unrolled loop (ITERS iterations) makes ptxas slow, tuned exhaustively
#   with --compile-timeout 10s into a database, then again with --force and a 90 s timeout
#   (what the first gave up on is compiled and measured; the rest is read from the database);
# - the triad (CUDA) with a misspelt parameter: check and tune say it at once;
# - then every GPU suite at this build.
set -u
. scripts/device-env.sh
W=/tmp/overread2; rm -rf $W; mkdir -p $W/hand
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
H=$W/hand
save() { (cd $W && tar czf $OUT/overread2.tgz *.txt hand/*.toml hand/*.cu 2>/dev/null); }
run() { # label args...
  local label=$1; shift
  echo "== $label"
  t0=$(date +%s.%N)
  $NEW tune "$@" > $W/$label.txt 2>&1; rc=$?
  t1=$(date +%s.%N)
  grep -E "^warning|^winner|^space|^compiled|^error|^failures|^    [0-9]+ ×|^        |^note: param|^ *│ [0-9]" $W/$label.txt | cut -c1-700
  echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
}
{
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache
  printf 'extern "C" __global__ void slow(float* y, const float* x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n) return;\n    float a = x[i];\n#pragma unroll\n    for (int k = 0; k < ITERS; ++k) a = a * 0.9999f + __sinf(a + k);\n    y[i] = a;\n}\n' > $H/slow.cu
  printf '[kernel]\nname = "slow"\nsource = { cuda = "slow.cu" }\n[params]\nWG = [128, 256]\nITERS = [1, 2000, 20000, 80000]\n[[problems]]\nn = 1048576\n[[args]]\nname = "y"\ntype = "f32"\nlen = "n"\naccess = "write"\n[[args]]\nname = "x"\ntype = "f32"\nlen = "n"\ninit = "random"\n[[args]]\nname = "n"\ntype = "i32"\nvalue = "n"\n[launch]\ngrid = ["div_ceil(n, WG)"]\nblock = ["WG"]\n[bench]\ntimeout = 5.0\n' > $H/slow.toml
  run slow-timeout $H/slow.toml --backend cuda --db $W/slow.sqlite --compile-timeout 10s --top 8
  run slow-force $H/slow.toml --backend cuda --db $W/slow.sqlite --force --compile-timeout 90s --top 8
  save
  cp examples/triad/triad.cu $H/
  sed 's/PER_THREAD = \[1, 2, 4, 8\]/PER_THREAD = [1, 2, 4, 8]\nUNROL = [1, 2]/; s/source = { wgsl = "triad.wgsl", cuda = "triad.cu", hip = "triad.cu" }/source = { cuda = "triad.cu" }/' examples/triad/triad.toml > $H/triad.toml
  $NEW check $H/triad.toml > $W/triad-check.txt 2>&1; echo "check: exit $?"; grep "^warning" $W/triad-check.txt | cut -c1-500
  run triad-typo $H/triad.toml --backend cuda --no-db --top 3
  save
  export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
  for t in gpu conformance wgpu-lib open launch; do
    KERNTUNE_CACHE_DIR=$W/suites KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu timeout 200 .device/tests/$t --test-threads=1 > $W/suite-$t.txt 2>&1; echo "$t: exit $?"
    grep -E "^test result|FAILED|panicked" $W/suite-$t.txt | sed "s/^/$t: /" | cut -c1-1500
    save
  done
  KERNTUNE_CACHE_DIR=$W/suites KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu timeout 100 .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
save
cat $W/out.txt
