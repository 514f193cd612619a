#!/usr/bin/env bash
# First call (two H200s): why two GPUs through wgpu were no faster than one. The example matmul
# at 2048³, traced (which adapter each process opens, each worker's pipeline builds), with
# the NVIDIA driver's shader disk cache in a folder of its own per binary, listed after each
# run: kerntune-old (920a2a6) against kerntune (pipeline cache data shipped to the workers,
# adapters ordered by PCI bus).
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/wp1
mkdir -p "$W"
pack() { tar czf "$OUT/wp1.tgz" -C "$W" .; }
T="/usr/bin/time -f wall_%e_s"
S=examples/matmul/matmul.toml
export KERNTUNE_LOG=warn,kerntune_wgpu=debug,kerntune_core::worker=trace,kerntune_core::run::device=trace
nvidia-smi -L > "$W/smi-L.txt" 2>&1
nvidia-smi topo -m > "$W/smi-topo.txt" 2>&1
for i in 1 2 3; do .device/kerntune devices --backend wgpu > "$W/devices-$i.txt" 2>&1; done
run() { # name, binary, then tune arguments
  local n=$1 b=$2; shift 2
  export __GL_SHADER_DISK_CACHE_PATH=/tmp/nvcache-$b __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1
  mkdir -p "$__GL_SHADER_DISK_CACHE_PATH"
  ( sleep 1.2; nvidia-smi > "$W/$n.smi" 2>&1 ) &
  $T timeout -s KILL 100 "$PWD/.device/$b" tune $S --backend wgpu --key M=2048,N=2048,K=2048 --no-db --json "$@" > "$W/$n.json" 2> "$W/$n.err"
  wait
  find "$__GL_SHADER_DISK_CACHE_PATH" -type f -printf '%TT %s %p\n' | sort > "$W/$n.cache.txt"
}
for b in kerntune-old kerntune; do
  run $b-cold-one $b --device 0
  run $b-one $b --device 0
  run $b-all-1 $b --devices all
  run $b-all-2 $b --devices all
  run $b-one1 $b --device 1
done
# No disk cache at all: every build the driver's compiler, unless shipped.
export __GL_SHADER_DISK_CACHE=0
for b in kerntune-old kerntune; do
  run $b-nocache-one $b --device 0
  run $b-nocache-all $b --devices all
done
pack
