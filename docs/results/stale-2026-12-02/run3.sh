#!/usr/bin/env bash
# Third call, on an H200 (CUDA), at the session's last build: a kernel with a config slower than
# its launch limit (ITER = 100,000,000: a few hundred ms), tuned with [bench] timeout = 0.05, then
# with --timeout 30 as the diagnosis says (NEW measures the config that timed out; OLD, the build
# before this session, has no --timeout and reads the timeout back with the limit raised in the
# spec); the stencil fixed with max(R) after its faulty tune; the GPU suites at this build.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/stale3; rm -rf $W; mkdir -p $W/slow
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
cat > $W/slow/slow.cu <<'CU'
extern "C" __global__ void slow(float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = y[i];
        for (long k = 0; k < ITER; k++) acc = acc * 0.999f + 0.001f;
        y[i] = acc;
    }
}
CU
spec() { # timeout
  printf '[kernel]\nname = "slow"\nsource = { cuda = "slow.cu" }\n[params]\nBS = [128, 256]\nITER = [1, 2, 100000000]\n[[problems]]\nN = 65536\n[[args]]\nname = "y"\ntype = "f32"\nlen = "N"\ninit = "constant"\nfill = 1.0\naccess = "readwrite"\n[[args]]\nname = "n"\ntype = "i32"\nvalue = "N"\n[launch]\ngrid = ["div_ceil(N, BS)"]\nblock = ["BS"]\n[verify]\nreference = "none"\n[bench]\ntimeout = %s\n' "$1" > $W/slow/slow.toml
}
run() { # label binary args...
  local label=$1 K=$2; shift 2
  echo "== $label"
  t0=$(date +%s.%N)
  $K tune "$@" > $W/$label.txt 2>&1; rc=$?
  t1=$(date +%s.%N)
  grep -E "^winner|^space|^note: database|^error|^database|^failures|timed out" $W/$label.txt | cut -c1-300
  echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
}
NEW=$PWD/.device/kerntune OLD=$PWD/.device/kerntune-old
{
  export KERNTUNE_CACHE_DIR=$W/cache
  spec 0.05
  run new-1-limit $NEW $W/slow/slow.toml --db $W/new.sqlite
  run new-2-flag $NEW $W/slow/slow.toml --db $W/new.sqlite --timeout 30
  spec 30
  run new-3-spec $NEW $W/slow/slow.toml --db $W/new.sqlite
  spec 0.05
  run old-1-limit $OLD $W/slow/slow.toml --db $W/old.sqlite
  spec 30
  run old-2-spec $OLD $W/slow/slow.toml --db $W/old.sqlite
  python3 - <<'PY'
s = open('examples/faults/read_past.toml').read()
old = 'name = "in"\ntype = "f32"\nlen = "nx * ny"'
open('examples/faults/read_past_max.toml', 'w').write(s.replace(old, 'name = "in"\ntype = "f32"\nlen = "(nx + 2*max(R)) * (ny + 2*max(R))"'))
PY
  run new-4-faulty $NEW examples/faults/read_past.toml --db $W/stencil.sqlite
  run new-5-fixed $NEW examples/faults/read_past_max.toml --db $W/stencil.sqlite
  echo "== suites"
  export KERNTUNE_CACHE_DIR=$W/suites
  for t in conformance gpu wgpu-lib open launch; do
    KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/$t --test-threads=1 2>&1 | grep -E "^test result|FAILED|panicked" | sed "s/^/$t: /"
  done
  KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda,wgpu .device/tests/wgpu-devices > $W/wgpu-devices.txt 2>&1; echo "wgpu-devices: exit $?"
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/stale3.tgz out.txt gpu.txt new-*.txt old-*.txt wgpu-devices.txt slow
