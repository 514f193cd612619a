#!/usr/bin/env bash
# The sixty-third session's GPU call: a CUDA tune stopped by a signal, and a compile cache that
# cannot be written.
#  A. The convolution (random 50, seed 1, a cold compile cache each time: its compiles run in
#     compiler processes, its kernels in a worker process) stopped 6 s in by
#     `timeout -s TERM` (which signals the command, then its process group: the tuner twice,
#     its compiler and worker processes once), three times with the previous build
#     (.pack/kerntune-old.xz) and three with this one; then twice by a terminal that hangs up
#     (SIGHUP, through a pseudo-terminal); what each printed, its exit status, what its database
#     holds, and whether any kerntune process outlived it. Then one stopped run resumed to the end.
#  B. The example reduction with its compile cache's folder unwritable (a file stands where the
#     `cuda` folder goes), old build and new; then on a 100 KiB tmpfs that fills during the tune,
#     new build, twice (the second serves what the first could keep).
#  C. Every GPU test suite (scripts/device-suites.sh).
# Build at the session's HEAD: `cargo build --release --features cuda -p kerntune`, `bash
# scripts/gpu-check.sh --prepare`, `tar cJf .pack/device.tar.xz .device/kerntune .device/tests`;
# the previous build's binary as .pack/kerntune-old.xz; carry .pack and .gl.
# Output: $OUT/signals.txt, $OUT/cache.txt, $OUT/all.tgz.
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
OLD=/tmp/kerntune-old; xz -dc .pack/kerntune-old.xz > $OLD; chmod +x $OLD
W=/tmp/sig; rm -rf $W; mkdir -p $W
CONV="examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 1"
cat > $W/hup.py <<'PY'
import os, pty, select, sys, time
delay = float(sys.argv[1]); cmd = sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(cmd[0], cmd)
out, t0 = b"", time.time()
while time.time() - t0 < delay:
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        try:
            out += os.read(fd, 65536)
        except OSError:
            break
os.close(fd)  # the terminal hangs up: the kernel sends SIGHUP to its session
_, status = os.waitpid(pid, 0)
print(f"exit status {os.waitstatus_to_exitcode(status)} (negative: killed by that signal)")
PY
state() {  # $1: database
  $BIN db show --db "$1" 2>&1 | grep -o "[0-9]* measured ([0-9]* failed); [a-z ]*" | head -1
  sleep 2; local left=$(pgrep -c -f "\.device/kerntune|kerntune-old" || true); echo "kerntune processes left 2 s later: $left"
}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for build in old new; do
    bin=$BIN; [ $build = old ] && bin=$OLD
    for i in 1 2 3; do
      export KERNTUNE_CACHE_DIR=$W/cache-$build-$i CUDA_CACHE_DISABLE=1
      timeout -s TERM 6 $bin tune $CONV --db $W/$build-$i.sqlite > $W/term-$build-$i.txt 2>&1
      echo "== timeout -s TERM 6, $build build, run $i: exit $?"
      sed 's/\x1b\[[0-9;]*m//g' $W/term-$build-$i.txt | grep -E "^interrupted|^error|panick" | cut -c1-300
      echo "printed $(wc -l < $W/term-$build-$i.txt) line(s)"; state $W/$build-$i.sqlite
    done
    for i in 1 2; do
      export KERNTUNE_CACHE_DIR=$W/cache-hup-$build-$i CUDA_CACHE_DISABLE=1
      echo "== SIGHUP (terminal hung up 6 s in), $build build, run $i: $(python3 $W/hup.py 6 $bin tune $CONV --db $W/hup-$build-$i.sqlite)"
      state $W/hup-$build-$i.sqlite
    done
  done
  export KERNTUNE_CACHE_DIR=$W/cache-new-1
  timeout 200 $BIN tune $CONV --db $W/new-1.sqlite > $W/resume.txt 2>&1
  echo "== resumed (new build, run 1's database): exit $?"
  grep -E "^winner|^space|^compiled|^database" $W/resume.txt | cut -c1-300
  $BIN db show --db $W/new-1.sqlite | tail -1 | cut -c1-300
} 2>&1 | tee $OUT/signals.txt
{
  R="examples/reduction/reduction.toml --backend cuda --no-db"
  mkdir -p $W/filecache && echo "not a folder" > $W/filecache/cuda
  for build in old new; do
    bin=$BIN; [ $build = old ] && bin=$OLD
    KERNTUNE_CACHE_DIR=$W/filecache timeout 150 $bin tune $R > $W/ro-$build.txt 2>&1
    echo "== cache folder unwritable, $build build: exit $?"
    sed 's/\x1b\[[0-9;]*m//g' $W/ro-$build.txt | grep -E "^winner|^compiled|WARN|warning|error" | cut -c1-400
  done
  S=/tmp/small-cache; mkdir -p $S
  if mount -t tmpfs -o size=100k tmpfs $S 2>/dev/null; then
    for i in 1 2; do
      KERNTUNE_CACHE_DIR=$S timeout 150 $BIN tune $R > $W/full-$i.txt 2>&1
      echo "== cache on a 100 KiB tmpfs, new build, tune $i: exit $?"
      sed 's/\x1b\[[0-9;]*m//g' $W/full-$i.txt | grep -E "^winner|^compiled|WARN|warning|error" | cut -c1-400
      echo "cache holds: $(ls $S/cuda | sed 's/.*\.//' | sort | uniq -c | tr '\n' ' '); $(df -k $S | tail -1 | awk '{print $4}') KiB free"
    done
    umount $S
  else
    echo "no tmpfs (not root): full-cache part skipped"
  fi
  bash scripts/device-suites.sh $W/suites
} 2>&1 | tee $OUT/cache.txt
(cd $W && tar czf $OUT/all.tgz *.txt suites/*.txt 2>/dev/null)
