#!/usr/bin/env bash
# Third call, on an H200, at the session's last build (the sorted comparison without a sort where none is needed): the shipped reduction through CUDA by its
# sum and element by element (the messages as they now read); an output written backwards by
# REV = 1 configs, 16 Mi floats, through CUDA: element by element (NEW, with the sorted hint; OLD,
# the build before the previous session, for the time without it) and sorted; the GPU suites.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/partial3; rm -rf $W; mkdir -p $W/spec
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
cp examples/reduction/* $W/spec/
cat > $W/spec/rev.cu <<'CU'
extern "C" __global__ void scale(float *y, const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[REV ? n - 1 - i : i] = SCALE * x[i];
}
CU
printf '[kernel]\nname = "scale"\nsource = { cuda = "rev.cu" }\n[params]\nblock_size_x = [64, 128]\nREV = [0, 1]\nSCALE = [2, 3]\n[space]\ndefault = { block_size_x = 64, REV = 0, SCALE = 2 }\n[[problems]]\nn = 16777216\n[[args]]\nname = "y"\ntype = "f32"\nlen = "n"\naccess = "write"\n[[args]]\nname = "x"\ntype = "f32"\nlen = "n"\ninit = "random"\n[[args]]\nname = "n"\ntype = "i32"\nvalue = "n"\n[launch]\nproblem_size = ["n"]\n' > $W/spec/rev.toml
run() { # label binary args...
  local label=$1 K=$2; shift 2
  echo "== $label"
  t0=$(date +%s.%N)
  $K tune "$@" > $W/$label.txt 2>&1; rc=$?
  t1=$(date +%s.%N)
  grep -E "^warning|^winner|^space|^error|^failures|^    [0-9]+ ×|^        every|^note: reference|^timing" $W/$label.txt | cut -c1-400
  echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
}
NEW=$PWD/.device/kerntune OLD=$PWD/.device/kerntune-old
{
  export KERNTUNE_CACHE_DIR=$W/cache
  run new-cuda-sum $NEW $W/spec/reduction.toml --backend cuda --no-db
  run new-cuda-elements $NEW $W/spec/reduction.toml --backend cuda --no-db --compare partial=elements
  for k in 1 2 3; do
    run old-rev-elements-$k $OLD $W/spec/rev.toml --backend cuda --no-db
    run new-rev-elements-$k $NEW $W/spec/rev.toml --backend cuda --no-db
    run new-rev-sorted-$k $NEW $W/spec/rev.toml --backend cuda --no-db --compare y=sorted
  done
  echo "== suites"
  export KERNTUNE_CACHE_DIR=$W/suites
  for t in conformance gpu wgpu-lib open launch; do
    KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test result|FAILED|panicked" | sed "s/^/$t: /"
  done
  KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/partial3.tgz out.txt gpu.txt new-*.txt old-*.txt wgpu-devices.txt spec
