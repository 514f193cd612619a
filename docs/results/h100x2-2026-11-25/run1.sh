#!/usr/bin/env bash
# Call 1 on two H100s (device kind nvidia-h100-x2): several GPUs in one tune (issue 24), then the
# CUBIN-vs-driver resource check and cold --recheck both ways, then the GPU tests.
set -u
tar xJf .pack/device.tar.xz
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
nproc; free -g | head -2
timeout 590 bash scripts/gpu-check.sh devices usage tests
ls -la $OUT
