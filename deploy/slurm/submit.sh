#!/usr/bin/env bash
# Submits a split tune to Slurm: an array of SHARDS tasks and a merge-and-confirm job that runs
# once every task succeeded. Prints the two job ids.
#
#   deploy/slurm/submit.sh SHARDS SPEC OUT_DIR [kerntune tune options...]
#
# Extra sbatch options (a partition, GPUs per task) go in SBATCH_ARGS, e.g.
# SBATCH_ARGS="--partition=gpu --gpus-per-task=1".
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 SHARDS SPEC OUT_DIR [kerntune tune options...]" >&2
  exit 2
fi
shards=$1
spec=$2
out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2086
array=$(sbatch --parsable ${SBATCH_ARGS:-} --array=0-$((shards - 1)) "$here/tune.sbatch" "$spec" "$out" "$@")
# shellcheck disable=SC2086
confirm=$(sbatch --parsable ${SBATCH_ARGS:-} --dependency=afterok:"$array" "$here/confirm.sbatch" "$spec" "$out")
echo "$array $confirm"
