#!/usr/bin/env bash
# Installs what kerntune needs on a fresh Debian/Ubuntu machine with Rust: a Vulkan loader and,
# when no Vulkan driver is present, Mesa's software Vulkan (llvmpipe) so that the wgpu backend
# has a device everywhere, the HIP headers and library the HIP backend builds against, and
# ROCm's offline HIP compiler for the tests.
# With --test, also what only the tests need: a headless Chromium for the HTML report's browser
# test, and Slurm and munge for the split-tune test are installed by tests/slurm/run.sh itself.
# Idempotent: does nothing when everything is there.
set -euo pipefail
for_tests=0
[ "${1:-}" = "--test" ] && for_tests=1

need=()
command -v cargo >/dev/null || { echo "setup: cargo not found; install Rust from rustup.rs first" >&2; exit 1; }
# A full `make test` build takes about 3 GB (`make demo` about 1 GB). A full disk shows up later
# as a compiler error far from its cause, so say it here (a warning: the build may still fit).
target_dir="${CARGO_TARGET_DIR:-target}"
[ -d "$target_dir" ] || target_dir=.
free_kb=$(df -Pk "$target_dir" 2>/dev/null | awk 'NR == 2 {print $4}')
if [ -n "${free_kb:-}" ] && [ "$free_kb" -lt $((3 * 1024 * 1024)) ]; then
  echo "setup: warning: only $((free_kb / 1024)) MB free where cargo builds ($target_dir); building and testing kerntune needs about 3 GB (free some space, or set CARGO_TARGET_DIR to a larger disk)" >&2
fi
ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1' || need+=(libvulkan1)
icds=$(ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json 2>/dev/null | wc -l || true)
[ "${icds:-0}" -gt 0 ] || need+=(mesa-vulkan-drivers)
# The HIP backend builds against the HIP headers and links libamdhip64 (Debian: ROCm 5.2).
if [ ! -f "${HIP_PATH:-/usr}/include/hip/hip_runtime_api.h" ]; then
  need+=(libamdhip64-dev)
fi
# ROCm's offline HIP compiler: the tests compile the shipped examples as HIP with it, since
# ROCm 5.2's hipRTC needs an AMD GPU to compile.
[ -x "${HIP_PATH:-/usr}/bin/hipcc" ] || command -v hipcc >/dev/null || need+=(hipcc)
# The report's browser test loads the page in a real headless Chromium.
if [ "$for_tests" = 1 ]; then
  command -v chromium >/dev/null || command -v chromium-browser >/dev/null || need+=(chromium)
fi

if [ ${#need[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "setup: missing ${need[*]} and no apt-get here; install a Vulkan loader and driver for your system" >&2
    exit 1
  fi
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "setup: installing ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
if [ "$for_tests" = 1 ]; then
  echo "setup: ok (Vulkan loader and driver, HIP headers, library and compiler, headless Chromium present)"
else
  echo "setup: ok (Vulkan loader and driver, HIP headers, library and compiler present)"
fi
