#!/usr/bin/env bash
# Shards warned before their job's time limit on a real single-node Slurm cluster (the cluster set
# up as tests/slurm/run.sh does; software Vulkan), sixty-fifth session: deploy/slurm/submit.sh with
# `--time=3` on the spec of docs/results/slurm-timelimit-2026-12-06 (the triad at 16 Mi elements,
# at least 400 launches per config, no racing: several minutes a shard), two shards.
# deploy/slurm/tune.sbatch asks for SIGUSR1 120 s before the limit (`--signal=B:USR1@120`); what
# each task printed, its state and exit code, what its shard database holds, and whether the
# merge-and-confirm job ran and what it stored. Then the same array submitted again with room to
# finish (`--time=15`): each shard goes on from its measurements (its winner, partial, answers
# no tune), and confirm stores the winner of every config measured.
#
#   bash docs/results/slurm-warning-2026-12-06/run.sh [KERNTUNE_BINARY]   # as root, > run.log
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$(pwd)
kt=$(realpath "${1:-target/release/kerntune}")
spec=$(pwd)/docs/results/slurm-timelimit-2026-12-06/slow16.toml
shards=2

. "$root/tests/slurm/cluster.sh"

export KERNTUNE=$kt KERNTUNE_CACHE_DIR=$work/cache XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$work/xdg}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
cd "$root"
grep -n "^#SBATCH --signal" deploy/slurm/tune.sbatch
read -r array confirm < <(SBATCH_ARGS="--chdir=$root --time=3 --output=$work/%x-%A_%a.out" deploy/slurm/submit.sh "$shards" "$spec" "$work/out" --backend wgpu)
echo "array $array confirm $confirm"
t0=$(date +%s)
for _ in $(seq 300); do
  squeue -h -j "$array" 2>/dev/null | grep -q . || break
  sleep 2
done
echo "array ended after $(( $(date +%s)-t0 )) s"
scontrol show job "$array" 2>/dev/null | grep -E "JobId|JobState|ExitCode|RunTime" | head -8
for _ in $(seq 300); do
  squeue -h -j "$confirm" 2>/dev/null | grep -q . || break
  sleep 2
done
echo "confirm ended after $(( $(date +%s)-t0 )) s"
scontrol show job "$confirm" | grep -E "JobState|ExitCode|Reason" | head -3
for f in $work/*.out; do echo "== $f"; sed 's/\x1b\[[0-9;]*m//g' $f | grep -v "^│\|^├\|^┌\|^└\|^╞" | grep -E "shard|^winner|^space|^database|^error|^warning|confirm|ended early|interrupted|CANCELLED" | cut -c1-400; done
for k in 0 1; do "$kt" db show --db "$work/out/shard-$k.sqlite" | tail -1 | cut -c1-250; done
"$kt" db show --db "$work/out/merged.sqlite" | tail -1 | cut -c1-250
echo "== the same array submitted again, --time=15"
read -r array2 confirm2 < <(SBATCH_ARGS="--chdir=$root --time=15 --output=$work/again-%x-%A_%a.out" deploy/slurm/submit.sh "$shards" "$spec" "$work/out" --backend wgpu)
t0=$(date +%s)
for _ in $(seq 600); do
  squeue -h -j "$confirm2" 2>/dev/null | grep -q . || break
  sleep 2
done
echo "array and confirm ended after $(( $(date +%s)-t0 )) s"
scontrol show job "$array2" 2>/dev/null | grep -E "JobState|ExitCode" | head -4
scontrol show job "$confirm2" | grep -E "JobState|ExitCode" | head -2
for f in $work/again-*.out; do echo "== $f"; sed 's/\x1b\[[0-9;]*m//g' $f | grep -v "^│\|^├\|^┌\|^└\|^╞" | grep -E "shard|^winner|^space|^database|^error|^warning|confirm|ended early|interrupted|CANCELLED" | cut -c1-400; done
for k in 0 1; do "$kt" db show --db "$work/out/shard-$k.sqlite" | tail -1 | cut -c1-250; done
"$kt" db show --db "$work/out/merged.sqlite" | tail -1 | cut -c1-250
