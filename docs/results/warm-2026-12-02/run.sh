#!/usr/bin/env bash
# First call, on an H200: an adaptive search on a warm compile cache, the build before (OLD:
# every budget of 20 asked for at once by 16 compile threads, blind) against this session's
# (NEW: the compile cache says the first proposals were compiled before, so few are kept in
# flight). (1) A size never tuned (f16 GEMM 3072³, f32 matmul 1536³), budget 20, from the
# databases of six other sizes (.split/, last session's) and with --no-prior, eight seeds, the
# compile cache warm; (2) a library of five f16 GEMM shapes in one spec, budget 20, each
# shape learning from those before, cold caches, three seeds; each case's optimum from an
# exhaustive tune on this machine.
set -u
. scripts/device-env.sh
W=/tmp/warm; rm -rf $W; mkdir -p $W/sizes $W/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune OLD=$PWD/.device/kerntune-old
export KERNTUNE_CACHE_DIR=$W/cache
size() { # spec kernel key seeds...
  local spec=$1 k=$2 key=$3; shift 3
  local n=$(echo "$key" | tr ',=' '_-')
  /usr/bin/time -f "$k $key exhaustive: process wall %e s" $NEW tune $spec --backend cuda --key $key --no-db --json > $W/sizes/${k}_$n-exh.json
  for s in "$@"; do
    for b in old new; do
      bin=$OLD; [ $b = new ] && bin=$NEW
      cp .split/$k-all.sqlite $W/sizes/db.sqlite
      /usr/bin/time -f "$k $key $b prior seed $s: process wall %e s" $bin tune $spec --backend cuda --key $key --budget 20 --seed $s --db $W/sizes/db.sqlite --json > $W/sizes/${k}_$n-$b-prior-$s.json
      /usr/bin/time -f "$k $key $b none seed $s: process wall %e s" $bin tune $spec --backend cuda --key $key --budget 20 --seed $s --no-db --json > $W/sizes/${k}_$n-$b-none-$s.json
    done
  done
}
{
  size examples/hgemm/hgemm.toml hgemm M=3072,N=3072,K=3072 1 2 3 4 5 6 7 8
  size examples/matmul/matmul.toml matmul M=1536,N=1536,K=1536 1 2 3 4 5 6 7 8
  rm -rf /tmp/hl && cp -r examples/hgemm /tmp/hl
  printf '\n[[problems]]\nM = 4096\nN = 4096\nK = 4096\n\n[[problems]]\nM = 2048\nN = 2048\nK = 2048\n\n[[problems]]\nM = 3072\nN = 3072\nK = 3072\n\n[[problems]]\nM = 8192\nN = 8192\nK = 1024\n' >> /tmp/hl/hgemm.toml
  /usr/bin/time -f "library exhaustive: process wall %e s" $NEW tune /tmp/hl/hgemm.toml --backend cuda --no-db --json > $W/lib/exh.json
  for s in 1 2 3; do
    for b in old new; do
      bin=$OLD; [ $b = new ] && bin=$NEW
      # Cold: each chain starts from an empty compile cache and database, as a library's first run.
      KERNTUNE_CACHE_DIR=$W/cache-$b-$s /usr/bin/time -f "library $b seed $s: process wall %e s" $bin tune /tmp/hl/hgemm.toml --backend cuda --budget 20 --seed $s --db $W/lib/$b-$s.sqlite --json > $W/lib/$b-$s.json
    done
  done
  # What the new build says, once, in text.
  cp .split/matmul-all.sqlite $W/sizes/db.sqlite
  $NEW tune examples/matmul/matmul.toml --backend cuda --key M=1536,N=1536,K=1536 --budget 20 --seed 1 --db $W/sizes/db.sqlite 2>&1 | tail -25
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/warm1.tgz out.txt gpu.txt sizes/*.json lib/*.json
