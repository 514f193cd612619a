#!/usr/bin/env bash
# The kernel's out-of-memory killer ends a compiler process mid-tune (core/examples/oom_kill.rs):
# the tune and a process that fills memory run in one memory cgroup (limit
# LIMIT_MB in all); the filler (the same program, `fill`) stops once /proc/vmstat's oom_kill
# has moved. As root; cgroup v1
# (memory controller) or v2.
set -eu
# 500 MiB: 128,000 pages, a multiple of 1,000 (the kernel weighs oom_score_adj as adj × (pages / 1000),
# so a limit that is not loses up to 999 pages of the compilers' weight, and the filler, as big
# as the limit, may be taken first).
LIMIT_MB=${LIMIT_MB:-500}
BIN=${BIN:-target/release/examples/oom_kill}
if [ -d /sys/fs/cgroup/memory ]; then
  CG=/sys/fs/cgroup/memory/kerntune-oom-$$; mkdir $CG
  echo $(( LIMIT_MB * 1024 * 1024 )) > $CG/memory.limit_in_bytes
else
  CG=/sys/fs/cgroup/kerntune-oom-$$; mkdir $CG
  echo $(( LIMIT_MB * 1024 * 1024 )) > $CG/memory.max
fi
trap 'rmdir $CG 2>/dev/null || true' EXIT
bash -c "echo \$\$ > $CG/cgroup.procs; exec $BIN" &
tune=$!
sleep 3
bash -c "echo \$\$ > $CG/cgroup.procs; exec $BIN fill" || true
wait $tune
# The kernel's word on whom it killed (the compilers have oom_score_adj 1000).
dmesg 2>/dev/null | grep -E "Killed process" | tail -3 || true
