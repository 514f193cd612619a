#!/usr/bin/env bash
# The fifth call (two H200s): with `--devices all` the tuner builds each pipeline on every GPU's
# device in its own process too (kerntune: 7252834 with tried-sibling-builds.diff, not kept),
# against 7252834 (kerntune-old), the example matmul at 4096³ (each launch about 8× longer than
# at 2048³), one GPU and two, alternating.
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/wd5
mkdir -p "$W"
pack() { tar czf "$OUT/wd5.tgz" -C "$W" .; }
T="/usr/bin/time -f wall_%e_s"
S=examples/matmul/matmul.toml
run() { # name, binary, then tune arguments
  local n=$1 b=$2; shift 2
  $T timeout -s KILL 100 "$PWD/.device/$b" tune $S --backend wgpu --key M=4096,N=4096,K=4096 --no-db --json "$@" > "$W/$n.json" 2> "$W/$n.err"
}
run warm-new kerntune --device 0
run warm-old kerntune-old --devices all
for i in 1 2; do
  run new-all-$i kerntune --devices all
  run old-all-$i kerntune-old --devices all
done
run new-one kerntune --device 0
pack
