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

if [ "$(id -u)" != 0 ]; then
  echo "slurm test: needs root to start munged, slurmctld and slurmd; skipped" >&2
  [ -n "${KERNTUNE_SKIP_LOG:-}" ] && echo "slurm: tests/slurm/run.sh (not root)" >>"$KERNTUNE_SKIP_LOG"
  exit 0
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  echo "slurm test: installing slurm-wlm and munge" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi
[ -x "$kt" ] || { echo "slurm test: no kerntune binary at $kt (build first)" >&2; exit 1; }

work=$(mktemp -d /tmp/kerntune-slurm.XXXXXX)
conf=$work/slurm.conf
pids=()
cleanup() {
  set +e
  for p in "$work"/slurmctld.pid "$work"/slurmd.pid; do
    [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null
  done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  if [ -n "${started_munge:-}" ] && [ -f /run/munge/munged.pid ]; then kill "$(cat /run/munge/munged.pid)" 2>/dev/null; fi
  sleep 1
  [ -z "${KERNTUNE_SLURM_KEEP:-}" ] && rm -rf "$work"
}
trap cleanup EXIT

# munge: Slurm's authentication.
mkdir -p /etc/munge /var/log/munge /run/munge /var/lib/munge
[ -f /etc/munge/munge.key ] || dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
chown -R munge:munge /etc/munge /var/log/munge /run/munge /var/lib/munge
chmod 400 /etc/munge/munge.key
chmod 0755 /run/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  su -s /bin/sh munge -c /usr/sbin/munged
  started_munge=1
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi

host=$(hostname -s)
mkdir -p "$work/ctld" "$work/d" "$work/out"
cat >"$conf" <<CONF
ClusterName=kerntune-test
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$work/ctld
SlurmdSpoolDir=$work/d
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$conf
slurmctld -f "$conf"
slurmd -f "$conf"
for _ in $(seq 100); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.2; done
sinfo -h -o "%P %a %t %D" >&2

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
