# Sourced (`. scripts/device-env.sh`) at the top of a script run on the GPU machine through the
# device tool (see ../shared/device/README.md): unpacks what was built here, and sets up what
# the machine lacks. gpu-check.sh sources it; so do the run scripts under docs/results (those
# that tune the hub convolution through scripts/device-runs.sh).
#
# - .pack/device.tar.xz (binaries built here: `bash scripts/gpu-check.sh --prepare`, then
#   `tar cJf .pack/device.tar.xz .device/...`), unpacked when .device/kerntune is missing;
# - the Vulkan loader and GL dispatch libraries (wgpu; NVIDIA's Vulkan driver needs libGLX) from
#   the .deb files in .gl/, when the machine lacks one of them;
# - an unversioned libnvrtc.so name (cudarc looks for libnvrtc.so[.12]; CUDA 13 ships .so.13);
# - KERNTUNE_CACHE_DIR (default /tmp/kerntune-cache) and OUT (default /tmp/kerntune-gpu).
if [ ! -x .device/kerntune ] && [ -f .pack/device.tar.xz ]; then
  tar xJf .pack/device.tar.xz
fi
if ! { ldconfig -p | grep -q libvulkan.so.1 && ldconfig -p | grep -q libGLX.so.0; } && ls .gl/*.deb >/dev/null 2>&1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
if ! ldconfig -p | grep -q 'libnvrtc.so '; then
  lib=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.* /usr/local/cuda/lib64/libnvrtc.so.* 2>/dev/null | grep -v alt | head -1)
  if [ -n "$lib" ]; then
    mkdir -p /tmp/kt-lib && ln -sf "$lib" /tmp/kt-lib/libnvrtc.so
    export LD_LIBRARY_PATH=/tmp/kt-lib:$(dirname "$lib"):${LD_LIBRARY_PATH:-}
  fi
fi
export KERNTUNE_CACHE_DIR=${KERNTUNE_CACHE_DIR:-/tmp/kerntune-cache}
export OUT=${OUT:-/tmp/kerntune-gpu}
mkdir -p "$OUT"
