#!/usr/bin/env bash
# The sixty-fifth session's GPU call: a scheduler's warning (SIGUSR1, SIGUSR2) ending a CUDA tune
# early, and every GPU suite at the session's build.
#  A. The convolution through CUDA, random 50, cold compile cache, 16 compile threads: SIGUSR1 to
#     its whole process group (the tuner, its compiler processes and its kernel worker, as Slurm's
#     `--signal=USR1@T` without `B:` signals every process of a job step) 6 s in, twice, 20 ms
#     apart. Its exit status, summary lines, and database; then the same command with --force
#     and the full budget goes on from what was kept.
#  B. The same with SIGUSR2 to the tuner alone, with two problems (the second not started).
#  C. Every GPU test suite (scripts/device-suites.sh).
# Build at the session's HEAD: `cargo build --release --features cuda -p kerntune`, `bash
# scripts/gpu-check.sh --prepare`, `tar cJf .pack/device.tar.xz .device`; carry .pack and .gl.
# Output: $OUT/run.txt and $OUT/suites/.
set -u
. scripts/device-env.sh
BIN=$PWD/.device/kerntune
W=/tmp/usr1; rm -rf $W; mkdir -p $W
C="examples/convolution/convolution.toml --backend cuda --strategy random --budget 50 --seed 1"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "== A. SIGUSR1 to the process group 6 s in"
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_DISABLE=1
  setsid $BIN tune $C --db $W/a.sqlite > $W/a.txt 2>&1 &
  pg=$!
  sleep 6
  echo "processes in the group: $(ps -o pid= -g $pg | wc -l)"
  kill -USR1 -- -$pg; sleep 0.02; kill -USR1 -- -$pg
  t=$(date +%s.%N)
  wait $pg; rc=$?
  echo "exit $rc, $(python3 -c "import time; print(f'{time.time()-$t:.1f}')") s after the signal"
  grep -vE '^(│|┌|└|╞|├)' $W/a.txt | cut -c1-500
  $BIN db show --db $W/a.sqlite | tail -1 | cut -c1-300
  echo "-- the same command with --force goes on"
  $BIN tune $C --db $W/a.sqlite --force 2>&1 | grep -E '^winner|evaluated|failures|^note: (the worker|ended)' | cut -c1-300
  echo "== B. SIGUSR2 to the tuner alone, two problems"
  python3 - examples/convolution/convolution.toml $W/two.toml <<'PY'
import sys, re
s = open(sys.argv[1]).read()
i = s.index('[[problems]]')
j = s.index('\n\n', i)
block = s[i:j]
open(sys.argv[2], 'w').write(s[:j] + '\n\n' + block.replace('image_width = 4096', 'image_width = 2048') + s[j:])
PY
  cp examples/convolution/*.cu $W/ 2>/dev/null
  grep -c '^\[\[problems\]\]' $W/two.toml
  $BIN tune $W/two.toml --backend cuda --strategy random --budget 50 --seed 1 --db $W/b.sqlite > $W/b.txt 2>&1 &
  p=$!
  sleep 6; kill -USR2 $p
  wait $p; echo "exit $?"
  grep -E '^winner|evaluated|failures|^note: (the worker|ended)|ended early|^error' $W/b.txt | cut -c1-300
} > $OUT/run.txt 2>&1
echo "== C. suites" >> $OUT/run.txt
bash scripts/device-suites.sh $OUT/suites >> $OUT/run.txt 2>&1
cat $OUT/run.txt
