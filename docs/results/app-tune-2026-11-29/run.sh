#!/usr/bin/env bash
# On an H200: an application's first launch tunes by the spec's [tune] table (TuneOptions::for_spec).
# The example app (CUDA) with the triad spec plus `[tune] strategy = "random", budget = 4`
# (appspec/, packed with the binaries), then with the shipped spec (no [tune]: exhaustive); a
# `%` budget with no strategy through the command line; the CUDA launch tests.
set -u
. scripts/device-env.sh
W=/tmp/apptune; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
{
  echo "--- app, spec with [tune] budget = 4"
  KERNTUNE_CACHE_DIR=$W/c1 .device/kerntune-app --backend cuda --spec appspec/triad.toml --iters 3 2>&1 | tail -3
  .device/kerntune db --db $W/c1/db.sqlite show
  echo "--- app, shipped spec (no [tune])"
  KERNTUNE_CACHE_DIR=$W/c2 .device/kerntune-app --backend cuda --spec examples/triad/triad.toml --iters 3 2>&1 | tail -3
  .device/kerntune db --db $W/c2/db.sqlite show
  echo "--- kerntune tune --budget 2% (no strategy, no priors)"
  .device/kerntune tune examples/triad/triad.toml --backend cuda --no-db --budget 2% 2>&1 | tail -4
  echo "--- launch tests"
  KERNTUNE_REQUIRE_DEVICE=cuda .device/tests/launch --test-threads=1 2>&1 | grep -E "^test |test result"
} > $W/out.txt 2>&1
cat $W/out.txt
cp $W/out.txt $OUT/
