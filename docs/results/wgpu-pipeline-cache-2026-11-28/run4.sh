#!/usr/bin/env bash
# Fourth call (one H200): issue 5's generated matmul set against the full listed space again,
# at 2048³, CUDA and wgpu (Vulkan), now that the wgpu kernel runs unchecked: the generated spec
# with the same `options = { wgsl = ["unchecked"] }` as matmul.toml, and (wgpu only) without it
# as it was (matmul_generated_checked.toml, made before the call and removed after it:
# `git show 4b26cdc:examples/matmul/matmul_generated.toml > examples/matmul/matmul_generated_checked.toml`).
set -u
. scripts/device-env.sh
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/wp4
mkdir -p "$W"
T="/usr/bin/time -f wall_%e_s"
run() { # name, spec, backend
  $T timeout -s KILL 150 "$PWD/.device/kerntune" tune "$2" --backend "$3" --key M=2048,N=2048,K=2048 --no-db --json > "$W/$1.json" 2> "$W/$1.err"
}
run warm examples/matmul/matmul.toml wgpu
for i in 1 2; do
  run wgpu-full-$i examples/matmul/matmul.toml wgpu
  run wgpu-gen-$i examples/matmul/matmul_generated.toml wgpu
  run cuda-full-$i examples/matmul/matmul.toml cuda
  run cuda-gen-$i examples/matmul/matmul_generated.toml cuda
done
run wgpu-gen-checked examples/matmul/matmul_generated_checked.toml wgpu
tar czf "$OUT/wp4.tgz" -C "$W" .
