#!/usr/bin/env bash
# Shards stopped by their job's time limit on a real single-node Slurm cluster (the cluster set up
# as tests/slurm/run.sh does; software Vulkan), sixty-third session: deploy/slurm/submit.sh with
# `--time=1` on a spec slowed down to take longer (slow16.toml: the triad at 16 Mi elements, at
# least 400 launches per config, no racing), two shards; what each task printed, its state and
# exit code, what its shard database holds, and the merge-and-confirm job's state; then each
# stopped shard submitted again with KERNTUNE_SHARD=K/2 (docs/fleet.md), and confirm.
#
#   bash docs/results/slurm-timelimit-2026-12-06/run.sh [KERNTUNE_BINARY]   # as root, > run.log
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$(pwd)
kt=$(realpath "${1:-target/release/kerntune}")
spec=$(pwd)/docs/results/slurm-timelimit-2026-12-06/slow16.toml
shards=2

. "$root/tests/slurm/cluster.sh"

# The experiment: a 2-task array with a 1-minute limit, on a spec that takes longer.
export KERNTUNE=$kt KERNTUNE_CACHE_DIR=$work/cache XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$work/xdg}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
cd "$root"
read -r array confirm < <(SBATCH_ARGS="--chdir=$root --time=1 --output=$work/%x-%A_%a.out" deploy/slurm/submit.sh "$shards" "$spec" "$work/out" --backend wgpu)
echo "array $array confirm $confirm"
t0=$(date +%s)
for _ in $(seq 300); do
  st=$(sacct -n -j "$array" -o JobID,State 2>/dev/null | head; squeue -h -j "$array" -o "%i %T" 2>/dev/null)
  squeue -h -j "$array" 2>/dev/null | grep -q . || break
  sleep 2
done
echo "array ended after $(( $(date +%s)-t0 )) s"
scontrol show job "$array" 2>/dev/null | grep -E "JobId|JobState|ExitCode" | head -8
scontrol show job "$confirm" | grep -E "JobState|Reason" | head -3
for f in $work/*.out; do echo "== $f"; sed 's/\x1b\[[0-9;]*m//g' $f | grep -v "^│\|^├\|^┌\|^└\|^╞" | tail -4 | cut -c1-300; done
for k in 0 1; do "$kt" db show --db "$work/out/shard-$k.sqlite" | tail -1 | cut -c1-200; done
# Resubmit shard 1 with its shard named and room to finish; then confirm.
scancel "$confirm"
j=$(KERNTUNE_SHARD=1/2 sbatch --parsable --chdir=$root --output=$work/again-%j.out deploy/slurm/tune.sbatch "$spec" "$work/out" --backend wgpu)
j0=$(KERNTUNE_SHARD=0/2 sbatch --parsable --chdir=$root --output=$work/again-%j.out deploy/slurm/tune.sbatch "$spec" "$work/out" --backend wgpu)
c=$(sbatch --parsable --dependency=afterok:$j:$j0 --chdir=$root --output=$work/confirm2-%j.out deploy/slurm/confirm.sbatch "$spec" "$work/out" --backend wgpu)
for _ in $(seq 300); do squeue -h -j "$c" 2>/dev/null | grep -q . || break; sleep 2; done
for f in $work/again-*.out $work/confirm2-*.out; do echo "== $f"; sed 's/\x1b\[[0-9;]*m//g' $f | grep -v "^│\|^├\|^┌\|^└\|^╞" | grep -E "shard|^winner|^space|^database|^error|confirm" | cut -c1-300; done
for k in 0 1; do "$kt" db show --db "$work/out/shard-$k.sqlite" | tail -1 | cut -c1-200; done
"$kt" db show --db "$work/out/merged.sqlite" | tail -1 | cut -c1-250
