#!/usr/bin/env bash
# The compile tail on the convolution, cold: with the tail watch (default 3) against off, twice
# each, alternating.
set -u
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/out}
CONV_RUNS="${RUNS:-random:50 random:50:off hybrid:100 hybrid:100:off random:50:off random:50 hybrid:100:off hybrid:100}" KT_SAME= bash scripts/gpu-check.sh conv
