#!/usr/bin/env bash
# A tune whose Slurm job is suspended and resumed (`scontrol suspend`/`resume`: SIGSTOP, then
# SIGCONT, to every process of the job), on a real single-node Slurm cluster set up as
# tests/slurm/run.sh does (software Vulkan), sixty-fourth session. The job tunes the example
# matmul (8 evaluations, seed 3) with three launches a config, each allowed 2 s, and is
# suspended for 10 s once it has run 3 s; what each binary's job printed, its state and exit
# code. Each binary named is run in turn (the previous build, then this one). Then whether
# Slurm's own time limit counts a suspension.
#
#   bash docs/results/slurm-suspend-2026-12-06/run.sh OLD_KERNTUNE NEW_KERNTUNE   # as root, > run.log
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$(pwd)
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(target/release/kerntune)
kt=$(realpath "${bins[0]}")

. "$root/tests/slurm/cluster.sh"

# The spec: the shipped matmul, three launches a config, each allowed 2 s.
export KERNTUNE_CACHE_DIR=$work/cache XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$work/xdg}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
cp "$root/examples/matmul/matmul.wgsl" "$work/"
sed 's/^max_reps = 30$/warmup_max = 2\nmin_reps = 3\nmax_reps = 3\nracing = false\ntimeout = 2/; /^max_seconds = 0.5$/d' "$root/examples/matmul/matmul.toml" > "$work/matmul.toml"
grep -A6 '^\[bench\]' "$work/matmul.toml"
for b in "${bins[@]}"; do
  b=$(realpath "$b")
  echo "=== $b"
  j=$(sbatch --parsable --chdir="$work" --output="$work/job-%j.out" --wrap "$b tune $work/matmul.toml --backend wgpu --no-db --budget 8 --seed 3")
  for _ in $(seq 100); do [ "$(squeue -h -j "$j" -o %T)" = RUNNING ] && break; sleep 0.2; done
  sleep 3
  scontrol suspend "$j"
  sleep 1; echo "job $j: $(squeue -h -j "$j" -o %T); processes: $(ps -eo stat,comm | awk '$2 ~ /^kerntune/ {print $1}' | sort | uniq -c | tr '\n' ' ')"
  sleep 9
  scontrol resume "$j"
  for _ in $(seq 300); do squeue -h -j "$j" 2>/dev/null | grep -q . || break; sleep 1; done
  scontrol show job "$j" 2>/dev/null | grep -oE "JobState=[A-Z]+|ExitCode=[0-9:]+" | tr '\n' ' ' || true; echo
  sed 's/\x1b\[[0-9;]*m//g' "$work/job-$j.out" | grep -E "^winner|evaluated|failures|timed out|stopped for|wall time" | cut -c1-300 || true
done
# Whether Slurm's time limit counts a suspension: a `sleep` job with --time=1, suspended for 50 s
# once it has run 5 s.
echo "=== sleep 150 with --time=1, suspended 50 s"
j=$(sbatch --parsable --time=1 --chdir="$work" --output="$work/sleep-%j.out" --wrap "sleep 150")
t0=$(date +%s)
for _ in $(seq 100); do [ "$(squeue -h -j "$j" -o %T)" = RUNNING ] && break; sleep 0.2; done
sleep 5; scontrol suspend "$j"; sleep 50; scontrol resume "$j"
for _ in $(seq 300); do squeue -h -j "$j" 2>/dev/null | grep -q . || break; sleep 1; done
echo "ended $(( $(date +%s) - t0 )) s after it was submitted"
scontrol show job "$j" | grep -oE "JobState=[A-Z]+|RunTime=[0-9:]+|TimeLimit=[0-9:]+" | tr '\n' ' ' || true; echo
