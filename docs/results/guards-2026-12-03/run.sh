#!/usr/bin/env bash
# The H200 call of the forty-eighth session: wgpu's guard words through Vulkan. OLD (d38194f,
# wgpu only) against NEW (this session's build), interleaved: (1) the stencil that reads past
# its input (examples/faults/read_past.toml, WGSL twin): OLD tunes it as if nothing were wrong,
# NEW stops with the buffer named; (2) planted.toml: a write past `y` and a read past `x` in
# some configs, --memcheck on the winner; (3) what the guards cost a tune that reads and writes
# nothing past its buffers: the triad at 16 Mi elements (24 configs) and the matmul's random 40
# (seed 1); (4) every GPU suite.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
D=docs/results/guards-2026-12-03
W=/tmp/guards; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
save() { (cd $W && tar czf $OUT/call.tgz *.txt); }
secs() { python3 -c "print(f'{$2-$1:.2f}')"; }
tune() { # NAME BINARY ARGS...: runs, keeps the output (tables cut), prints exit and wall
  local name=$1 bin=$2; shift 2
  local t0=$(date +%s.%N)
  $bin tune "$@" > $W/$name.txt 2>&1; local rc=$?
  local t1=$(date +%s.%N)
  echo "== $name: $(basename $bin) tune $*"
  grep -vE "^(┌|├|╞|└|│)" $W/$name.txt | grep -vE "^(note: racing|note: clock)" | cut -c1-700
  echo "exit $rc, $(secs $t0 $t1) s"
}
{
  .device/kerntune devices --backend wgpu | head -3
  for round in 1 2; do
    for b in old new; do
      bin=$PWD/.device/kerntune; [ $b = old ] && bin=$PWD/.device/kerntune-old
      export KERNTUNE_CACHE_DIR=$W/cache-$b
      tune $b-$round-read-past $bin examples/faults/read_past.toml --backend wgpu --no-db
      tune $b-$round-planted $bin $D/planted.toml --backend wgpu --no-db --memcheck
      tune $b-$round-triad $bin examples/triad/triad.toml --backend wgpu --no-db --key N=16777216 --top 3
      tune $b-$round-matmul $bin examples/matmul/matmul.toml --backend wgpu --no-db --strategy random --budget 40 --seed 1 --top 3
      save
    done
  done
  bash scripts/device-suites.sh $W
} 2>&1 | tee $W/log.txt
save
