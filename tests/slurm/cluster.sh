# A real single-node Slurm cluster on this machine, for the Slurm test (tests/slurm/run.sh) and
# the Slurm runs under docs/results: sourced (`. tests/slurm/cluster.sh`) with `kt` set to the
# kerntune binary. Without root it says so (and logs the skip to $KERNTUNE_SKIP_LOG) and exits
# the caller with status 0; it installs slurm-wlm and munge when missing, starts munged,
# slurmctld and slurmd on ports 16817/16818 with their state in `$work` (a new temporary
# folder), exports SLURM_CONF, and stops them (removing `$work` unless KERNTUNE_SLURM_KEEP is
# set) when the caller exits; `pids` lists more processes for that to stop.
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
