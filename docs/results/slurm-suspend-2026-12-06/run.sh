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
