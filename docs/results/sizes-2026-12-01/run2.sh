#!/usr/bin/env bash
# Second call, on an H200, at the build that makes a budget without a strategy the hybrid
# search: a size never tuned (f16 GEMM 3072³, f32 matmul 1536³), budget 20, learning from the
# databases the first call wrote (six sizes each, carried in .split/), against the same tune
# with --no-prior (now the hybrid search), five seeds each; then a spec with several
# [[problems]] tables tuned in one run with a budget (each shape after the first learns from
# those before it), and without one (exhaustive, the note).
set -u
. scripts/device-env.sh
W=/tmp/sizes2; rm -rf $W; mkdir -p $W/new $W/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
export KERNTUNE_CACHE_DIR=$W/cache
K=$PWD/.device/kerntune
fresh() { # spec kernel key seeds...
  local spec=$1 k=$2 key=$3; shift 3
  n=$(echo "$key" | tr ',=' '_-')
  for s in "$@"; do
    cp .split/$k-all.sqlite $W/new/${k}_$n-prior-$s.sqlite
    /usr/bin/time -f "$k $key seed $s prior: process wall %e s" $K tune $spec --backend cuda --key $key --budget 20 --seed $s --db $W/new/${k}_$n-prior-$s.sqlite --json > $W/new/${k}_$n-prior-$s.json
    /usr/bin/time -f "$k $key seed $s none: process wall %e s" $K tune $spec --backend cuda --key $key --budget 20 --seed $s --db $W/new/${k}_$n-none-$s.sqlite --no-prior --json > $W/new/${k}_$n-none-$s.json
  done
}
{
  # Compile cache warm for both kernels first (one exhaustive tune each, not recorded).
  $K tune examples/hgemm/hgemm.toml --backend cuda --key M=1024,N=1024,K=1024 --no-db 2>&1 | tail -1
  $K tune examples/matmul/matmul.toml --backend cuda --key M=512,N=512,K=512 --no-db 2>&1 | tail -1
  fresh examples/hgemm/hgemm.toml hgemm M=3072,N=3072,K=3072 1 2 3 4 5
  fresh examples/matmul/matmul.toml matmul M=1536,N=1536,K=1536 1 2 3 4 5
  # A library of shapes in one spec: the shipped hgemm spec with four more [[problems]].
  rm -rf /tmp/hl && cp -r examples/hgemm /tmp/hl
  printf '\n[[problems]]\nM = 4096\nN = 4096\nK = 4096\n\n[[problems]]\nM = 2048\nN = 2048\nK = 2048\n\n[[problems]]\nM = 3072\nN = 3072\nK = 3072\n\n[[problems]]\nM = 8192\nN = 8192\nK = 1024\n' >> /tmp/hl/hgemm.toml
  echo "== library, budget 20"
  /usr/bin/time -f "library budget 20: process wall %e s" $K tune /tmp/hl/hgemm.toml --backend cuda --budget 20 --db $W/lib/budget.sqlite 2>&1 | grep -E "^== problem|^prior:|^winner|^note: (with no budget|transfer: [0-9]+ of)|strategy:|process wall"
  echo "== library, no budget"
  /usr/bin/time -f "library exhaustive: process wall %e s" $K tune /tmp/hl/hgemm.toml --backend cuda --db $W/lib/full.sqlite 2>&1 | grep -E "^== problem|^prior:|^winner|^note: (with no budget|transfer: [0-9]+ of)|strategy:|process wall"
  $K db show --db $W/lib/budget.sqlite 2>&1 | head -20
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/sizes2.tgz out.txt gpu.txt new lib/*.sqlite
