#!/usr/bin/env bash
# A tune whose compiles need more memory together than its cgroup may use
# (core/examples/compile_memory.rs: -j 4, 150 MiB per compile, 1.5 s each) in a memory cgroup
# limited to LIMIT_MB (400), once per binary given (BINS: the build before the memory check and
# this one). As root; cgroup v1 (memory controller) or v2.
set -u
BINS=${BINS:-target/release/examples/compile_memory}
LIMIT_MB=${LIMIT_MB:-400}
ARGS=${ARGS:-4 150 1.5}
for bin in $BINS; do
  if [ -d /sys/fs/cgroup/memory ]; then
    d=/sys/fs/cgroup/memory/kerntune-mem-$$; mkdir $d
    echo $(( LIMIT_MB * 1024 * 1024 )) > $d/memory.limit_in_bytes
    echo 0 > $d/memory.swappiness 2>/dev/null || true
  else
    d=/sys/fs/cgroup/kerntune-mem-$$; mkdir $d
    echo $(( LIMIT_MB * 1024 * 1024 )) > $d/memory.max
    echo 0 > $d/memory.swap.max 2>/dev/null || true
  fi
  echo "== $bin $ARGS, in a cgroup of $LIMIT_MB MiB"
  bash -c "echo \$\$ > $d/cgroup.procs; exec $bin $ARGS" 2>&1 | grep -vE "^\s*$" | cut -c1-700
  sleep 1
  rmdir $d
done
