#!/usr/bin/env bash
# Another job runs out of memory while a compiler of the tune is killed by hand: the tune
# (core/examples/oom_kill.rs) in one cgroup, a process that fills a 200 MiB memory cgroup of
# its own beside it (the same program, `fill`), then SIGKILL by hand to the tune's oldest
# compiler at once. The verdict must read the tune's own cgroup's count, which did not move
# (`/proc/vmstat`'s did). As root; cgroup v1 (memory controller) or v2.
set -eu
BIN=${BIN:-target/release/examples/oom_kill}
LIMIT_MB=${LIMIT_MB:-200}
cg() { # cg NAME [LIMIT_MB]: makes a memory cgroup, prints its folder
  if [ -d /sys/fs/cgroup/memory ]; then
    d=/sys/fs/cgroup/memory/$1; mkdir $d
    if [ -n "${2:-}" ]; then echo $(( $2 * 1024 * 1024 )) > $d/memory.limit_in_bytes; fi
  else
    d=/sys/fs/cgroup/$1; mkdir $d
    if [ -n "${2:-}" ]; then echo $(( $2 * 1024 * 1024 )) > $d/memory.max; fi
  fi
  echo $d
}
TUNE=$(cg kerntune-tune-$$)
OTHER=$(cg kerntune-other-$$ $LIMIT_MB)
trap 'rmdir $TUNE $OTHER 2>/dev/null || true' EXIT
bash -c "echo \$\$ > $TUNE/cgroup.procs; exec $BIN" &
tune=$!
sleep 3
bash -c "echo \$\$ > $OTHER/cgroup.procs; exec $BIN fill" || echo "filler: ended ($?)"
victim=$(pgrep -o -P $tune)
kill -KILL $victim && echo "killed compiler $victim by hand"
wait $tune
echo "oom_kill in /proc/vmstat now: $(grep '^oom_kill ' /proc/vmstat)"
dmesg 2>/dev/null | grep -E "Killed process" | tail -1 || true
