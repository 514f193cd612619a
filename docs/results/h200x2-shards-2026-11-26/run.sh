#!/usr/bin/env bash
# A node of two GPUs: the shards of a split, one per GPU, tuned into ONE database at once (each
# shard locks its own part of the entry; their winners add up), against one GPU and against
# `--devices all`. SGEMM 410 at 8192³, the compile cache warm (a cold tune on both devices fills
# it first), the database cleared before each. Then: db show (whole?), a plain tune (a hit?),
# confirm.
set -u
O=$OUT
tar xJf .pack/x2.tar.xz
. scripts/device-env.sh
W=/tmp/x2; rm -rf $W; mkdir -p $W
{ nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; nproc; lscpu | grep -E 'Model name'; } > $W/host.txt 2>&1
K=$PWD/.device/kerntune; S=benches/sgemm/sgemm.toml; KEY="--key M=8192,N=8192,K=8192"
cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
rm -rf "$KERNTUNE_CACHE_DIR"
now() { date +%s%N; }
since() { echo "$(( ($(now) - $1) / 1000000 )) ms"; }
{
  t=$(now); $K tune $S --backend cuda $KEY --devices all --no-db --top 1 > $W/fill.log 2>&1; echo "cold fill (both devices): exit $? $(since $t)"
  for i in 1 2; do
    rm -f $W/one.sqlite*; t=$(now); $K tune $S --backend cuda $KEY --device 0 --db $W/one.sqlite --top 3 --json > $W/one-$i.json 2> $W/one-$i.log; echo "one GPU $i: exit $? $(since $t)"
    rm -f $W/all.sqlite*; t=$(now); $K tune $S --backend cuda $KEY --devices all --db $W/all.sqlite --top 3 --json > $W/all-$i.json 2> $W/all-$i.log; echo "--devices all $i: exit $? $(since $t)"
    rm -rf $W/shared-$i.sqlite*; t=$(now)
    for k in 0 1; do
      CUDA_VISIBLE_DEVICES=$k $K tune $S --backend cuda $KEY --shard $k/2 --db $W/shared-$i.sqlite --top 3 --json > $W/shard$k-$i.json 2> $W/shard$k-$i.log &
    done
    wait; echo "two shards, one database $i: $(since $t)"
    grep -h "waiting" $W/shard*-$i.log && echo "a shard waited for the other"
  done
  $K db show --db $W/shared-1.sqlite
  $K tune $S --backend cuda $KEY --device 0 --db $W/shared-1.sqlite 2>&1 | grep -E "^winner|^database|^space"
  $K confirm $S --backend cuda $KEY --device 0 --db $W/shared-1.sqlite 2>&1 | grep -E "^winner|^confirmed|warning"
  $K db show --db $W/shared-1.sqlite
} > $W/summary.txt 2>&1
python3 - $W > $W/table.txt 2>&1 <<'PY'
import json, sys, glob, os
w = sys.argv[1]
for f in sorted(glob.glob(f"{w}/*.json")):
    try:
        r = json.load(open(f)); r = r[0] if isinstance(r, list) else r
    except Exception as e:
        print(os.path.basename(f), "unreadable", e); continue
    devs = [(d.get("name"), d.get("measured")) for d in (r.get("devices") or [])]
    print(os.path.basename(f), "wall", round(r["wall_seconds"], 2), "evaluated", r["evaluated"], "from db", r["from_db"], "hit", r["db_hit"],
          "winner", [v for _, v in r["winner"]["params"]], "%.4f ms" % (r["winner_stats"]["mean"] * 1e3), "devices", devs, "shard", r.get("shard"))
PY
cat $W/host.txt $W/summary.txt $W/table.txt
cd /tmp && tar czf $O/x2.tgz x2
