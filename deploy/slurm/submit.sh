#!/usr/bin/env bash
# Submits a split tune to Slurm: an array of SHARDS tasks and a merge-and-confirm job that runs
# once every task succeeded. Prints the two job ids.
#
#   deploy/slurm/submit.sh SHARDS SPEC OUT_DIR [kerntune tune options...]
#
# The tune options confirm shares (--backend, --reference, --atol, --rtol, --compare,
# --mismatches, --timeout, --allow-outside-sources) are given to the confirm job as well.
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
# The options confirm shares with tune go to it too: it must open the backend the shards tuned on
# and verify as they did (confirmed without them, a wgpu tune on a CUDA node looked for CUDA
# shards, and other tolerances judged the outputs). Tune's own (budget, strategy, seed, the
# devices of the array's nodes) stay with the array.
confirm_opts=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --backend | --reference | --atol | --rtol | --compare | --mismatches | --timeout)
      confirm_opts+=("${args[i]}" "${args[i + 1]:-}")
      i=$((i + 1))
      ;;
    --backend=* | --reference=* | --atol=* | --rtol=* | --compare=* | --mismatches=* | --timeout=* | --allow-outside-sources)
      confirm_opts+=("${args[i]}")
      ;;
  esac
done
# shellcheck disable=SC2086
array=$(sbatch --parsable ${SBATCH_ARGS:-} --array=0-$((shards - 1)) "$here/tune.sbatch" "$spec" "$out" "$@")
# shellcheck disable=SC2086
confirm=$(sbatch --parsable ${SBATCH_ARGS:-} --dependency=afterok:"$array" "$here/confirm.sbatch" "$spec" "$out" ${confirm_opts[@]+"${confirm_opts[@]}"})
echo "$array $confirm"
