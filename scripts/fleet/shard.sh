#!/usr/bin/env bash
# One shard of a split tune. The same command runs on Slurm (a job array), Kubernetes (an
# Indexed Job), GitHub Actions (a matrix) or by hand, so every farm tunes the same way.
#
#   scripts/fleet/shard.sh SPEC OUT_DIR [more `kerntune tune` options...]
#
# The shard comes from, in order: KERNTUNE_SHARD=K/N; Slurm's SLURM_ARRAY_TASK_ID and
# SLURM_ARRAY_TASK_COUNT (minus SLURM_ARRAY_TASK_MIN); Kubernetes' JOB_COMPLETION_INDEX with
# KERNTUNE_SHARDS (the Job's completions). Each shard writes OUT_DIR/shard-K.sqlite;
# scripts/fleet/merge-confirm.sh combines them. KERNTUNE (default: kerntune on the PATH) is the
# binary to run.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 SPEC OUT_DIR [kerntune tune options...]" >&2
  exit 2
fi
spec=$1
out=$2
shift 2
kt=${KERNTUNE:-kerntune}
if [ -n "${KERNTUNE_SHARD:-}" ]; then
  shard=$KERNTUNE_SHARD
elif [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
  k=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0}))
  shard="$k/${SLURM_ARRAY_TASK_COUNT:?SLURM_ARRAY_TASK_COUNT is not set: submit with sbatch --array}"
elif [ -n "${JOB_COMPLETION_INDEX:-}" ]; then
  shard="$JOB_COMPLETION_INDEX/${KERNTUNE_SHARDS:?set KERNTUNE_SHARDS to the number of completions of the Job}"
else
  echo "$0: no shard given: set KERNTUNE_SHARD=K/N, or run as a Slurm array task or a Kubernetes Indexed Job" >&2
  exit 2
fi
k=${shard%/*}
mkdir -p "$out"
echo "shard $shard of $spec on $(hostname) -> $out/shard-$k.sqlite" >&2
exec "$kt" tune "$spec" --shard "$shard" --db "$out/shard-$k.sqlite" "$@"
