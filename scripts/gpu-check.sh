#!/usr/bin/env bash
# Every GPU check in one go, on the GPU machine (see ../shared/device/README.md).
#
# Built here: `cargo build --release --features cuda`, then copied with the benchmark's kernel
# into .device/ (ignored by git): `bash scripts/gpu-check.sh --prepare`. On the GPU machine:
# `bash scripts/gpu-check.sh [tests] [wgpu] [cuda] [faults] [usage] [devices] [sgemm] [hybrid] [generated] [l2flush] [t1] [kt] [launch] [conv] [report] [worker-start]` (TESTS="files" picks the test binaries) (default: tests wgpu cuda sgemm generated). Results are
# written to $OUT as files; their names say what they hold.
set -u
if [ "${1:-}" = "--prepare" ]; then
  mkdir -p .device/bench .device/tests
  cp target/release/kerntune .device/kerntune
  # The executables of kind $1 ("test", "lib" or "bench") that cargo's JSON messages on stdin name.
  executables() {
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == [sys.argv[1]]:
        print(m["executable"])' "$1"
  }
  # The test binaries that need a GPU: cross-backend conformance (CUDA and wgpu), opening CUDA,
  # wgpu's tune over several devices (workers building pipelines the tuner compiled) and wgpu's
  # unit tests (the verification screens on a real GPU).
  rm -f .device/tests/*
  cargo test --release --features cuda --no-run --message-format=json -p kerntune --test conformance --test gpu -p kerntune-cuda --test open --test launch 2>/dev/null |
    executables test | while read -r t; do cp "$t" ".device/tests/$(basename "$t" | sed 's/-[0-9a-f]*$//')"; done
  cargo test --release --no-run --message-format=json -p kerntune-wgpu --test devices 2>/dev/null |
    executables test | while read -r t; do cp "$t" .device/tests/wgpu-devices; done
  # wgpu's unit tests, among them the verification screens against core's host comparison.
  cargo test --release --no-run --message-format=json -p kerntune-wgpu --lib 2>/dev/null |
    executables lib | while read -r t; do cp "$t" .device/tests/wgpu-lib; done
  # The launch-overhead bench (criterion) and the example application, with CUDA.
  cargo bench -p kerntune-cuda --bench launch --no-run --message-format=json 2>/dev/null |
    executables bench | while read -r t; do cp "$t" .device/launch-bench; done
  cargo build --release -p kerntune-example-app --features cuda && cp target/release/kerntune-app .device/kerntune-app
  cargo build --release -p kerntune-core --example worker_start && cp target/release/examples/worker_start .device/worker_start
  cp ../shared/bench/sgemm.cu ../shared/bench/kernel_tuner_side.py ../shared/bench/triad.cu .device/bench/
  ls -la .device .device/bench
  exit 0
fi
# The packed binaries, the Vulkan loader, libnvrtc.so, KERNTUNE_CACHE_DIR and OUT.
. "$(dirname "$0")/device-env.sh"
export KERNTUNE_CACHE_DIR=/tmp/kerntune-cache
BIN=${KERNTUNE_BIN:-$PWD/.device/kerntune}
steps=${*:-tests wgpu cuda sgemm generated}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader > "$OUT/gpu.txt" 2>&1

timed() { /usr/bin/time -f "wall %e s" "$@"; }
# Empty compile caches for a cold run: kerntune's, NVRTC's own (12.9 and later keep compiled
# programs in the driver's ComputeCache, so configs an earlier run compiled come back in a
# fraction of a second) and CuPy's (Kernel Tuner).
cold() { rm -rf "$KERNTUNE_CACHE_DIR"; export CUDA_CACHE_PATH=$(mktemp -d) CUPY_CACHE_DIR=$(mktemp -d); }

for step in $steps; do
case $step in
tests)
  # The test suites that skip without a GPU, run where there is one; a skip is a failure here.
  export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
  rm -rf "$KERNTUNE_CACHE_DIR"
  {
    for t in ${TESTS:-.device/tests/*}; do
      echo "--- $t"
      KERNTUNE_BIN=$BIN KERNTUNE_REQUIRE_DEVICE=cuda,wgpu timed "$t" --test-threads=1 2>&1; echo "exit $?"
    done
  } > "$OUT/tests.txt" 2>&1
  ;;
wgpu)
  if ! "$BIN" devices --backend wgpu > "$OUT/devices-wgpu.txt" 2>&1; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
    "$BIN" devices --backend wgpu > "$OUT/devices-wgpu.txt" 2>&1
  fi
  rm -rf "$KERNTUNE_CACHE_DIR"
  {
    timed "$BIN" tune examples/triad/triad.toml --backend wgpu --key N=16777216 --top 8
    timed "$BIN" tune examples/matmul/matmul.toml --backend wgpu --key M=2048,N=2048,K=2048 --top 8
  } > "$OUT/wgpu-tune.txt" 2>&1
  ;;
cuda)
  rm -rf "$KERNTUNE_CACHE_DIR"
  {
    "$BIN" devices --backend cuda --json
    echo "--- faults"
    timed "$BIN" tune examples/faults/faults.toml --backend cuda --top 14; echo "exit $?"
    echo "--- triad 2^28"
    timed "$BIN" tune examples/triad/triad.toml --backend cuda --key N=268435456 --top 8; echo "exit $?"
    echo "--- matmul 2048^3"
    timed "$BIN" tune examples/matmul/matmul.toml --backend cuda --key M=2048,N=2048,K=2048 --top 8; echo "exit $?"
    echo "--- templated triad (C++ template instances through NVRTC name expressions), 2^28"
    timed "$BIN" tune examples/templated/triad_t.toml --backend cuda --key N=268435456 --top 8; echo "exit $?"
    echo "--- T1 file (examples/t1/triad.json: its own budget of 60 and the hybrid strategy)"
    timed "$BIN" tune examples/t1/triad.json --backend cuda --top 3 --no-db; echo "exit $?"
    echo "--- triad again (database hit)"
    timed "$BIN" tune examples/triad/triad.toml --backend cuda --key N=268435456 --top 3; echo "exit $?"
  } > "$OUT/cuda-tune.txt" 2>&1
  ;;
faults)
  # Published-kernel cases (examples/faults), as a user sees them: the report of each.
  rm -rf "$KERNTUNE_CACHE_DIR"
  {
    for f in faults invalid_default reference_faults by_design read_past; do
      echo "--- examples/faults/$f.toml"
      timed "$BIN" tune examples/faults/$f.toml --backend cuda --no-db --top 6; echo "exit $?"
    done
    echo "--- by_design.toml, --reference none"
    timed "$BIN" tune examples/faults/by_design.toml --backend cuda --no-db --top 3 --reference none; echo "exit $?"
  } > "$OUT/faults.txt" 2>&1
  ;;
usage)
  # Compiled kernels' resources read from the CUBIN (the default) against the driver's
  # attributes (KERNTUNE_CUDA_USAGE=driver): every config of SGEMM 410, 60 random convolution
  # configs, the matmul and the triad; and SGEMM cold with --recheck 20 both ways.
  cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
  {
    for t in "benches/sgemm/sgemm.toml" "examples/convolution/convolution.toml --strategy random --budget 60 --seed 1" \
             "examples/matmul/matmul.toml --key M=2048,N=2048,K=2048" "examples/triad/triad.toml" "examples/templated/triad_t.toml"; do
      name=$(basename ${t%% *} .toml)
      for how in cubin driver; do
        [ $how = driver ] && export KERNTUNE_CUDA_USAGE=driver || unset KERNTUNE_CUDA_USAGE
        echo "--- $t, usage from the $how"
        timed "$BIN" tune $t --backend cuda --no-db --json > "$OUT/usage-$name-$how.json"; echo "exit $?"
      done
      python3 - "$OUT/usage-$name-cubin.json" "$OUT/usage-$name-driver.json" <<'P'
import json, sys
def load(f):
    d = json.load(open(f)); d = d[0] if isinstance(d, list) else d
    return {json.dumps(r["config"], sort_keys=True): r.get("usage") for r in d["results"] if r.get("usage")}
a, b = load(sys.argv[1]), load(sys.argv[2])
both = sorted(set(a) & set(b))
diff = [(k, a[k], b[k]) for k in both if a[k] != b[k]]
print(f"usage: {len(both)} configs in both, {len(diff)} differ")
for k, x, y in diff[:10]:
    print("  ", k, "cubin", x, "driver", y)
P
    done
    for how in cubin driver cubin driver; do
      [ $how = driver ] && export KERNTUNE_CUDA_USAGE=driver || unset KERNTUNE_CUDA_USAGE
      cold
      echo "--- sgemm cold --recheck 20, usage from the $how"
      timed "$BIN" tune benches/sgemm/sgemm.toml --backend cuda --no-db --recheck 20 | grep -E '^(recheck|winner|wall)'
    done
    unset KERNTUNE_CUDA_USAGE
  } > "$OUT/usage.txt" 2>&1
  ;;
devices)
  # Several GPUs (issue 24): a measurement-bound tune on one device and on all of them, the
  # compile cache warm (filled by a first, cold run) and the database cleared before each.
  cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
  cold
  {
    nvidia-smi -L
    echo "--- sgemm cold, one device (fills the compile cache)"
    timed "$BIN" tune benches/sgemm/sgemm.toml --backend cuda --top 3 --json > "$OUT/devices-sgemm-cold.json"; echo "exit $?"
    for i in 1 2; do
      for d in "--device 0" "--devices all"; do
        rm -rf "$KERNTUNE_CACHE_DIR"/db.sqlite*
        echo "--- sgemm warm, $d, run $i"
        # Stage timings and every result, time-stamped, for the timeline (stderr to a file).
        KERNTUNE_LOG=kerntune_core=debug,kerntune=debug,kerntune::autotuning=info timed "$BIN" tune benches/sgemm/sgemm.toml --backend cuda $d --top 5 \
          2> >(tee "$OUT/devices-sgemm-$i-${d//[^a-z0-9]/}.log" | grep -E '^(wall|Command)' >&2); echo "exit $?"
      done
    done
    # A more measurement-bound tune: the same space at 8192³ (each launch 8× longer).
    for d in "--device 0" "--devices all"; do
      rm -rf "$KERNTUNE_CACHE_DIR"/db.sqlite*
      echo "--- sgemm 8192 warm, $d"
      KERNTUNE_LOG=kerntune_core=debug,kerntune=debug timed "$BIN" tune benches/sgemm/sgemm.toml --backend cuda --key M=8192,N=8192,K=8192 $d --top 3 \
        2> >(tee "$OUT/devices-sgemm8192-${d//[^a-z0-9]/}.log" | grep -E '^(wall|Command)' >&2); echo "exit $?"
    done
    for d in "--device 0" "--devices all"; do
      echo "--- triad 2^28 exhaustive, $d"
      timed "$BIN" tune examples/triad/triad.toml --backend cuda --key N=268435456 --no-db $d --top 3; echo "exit $?"
    done
  } > "$OUT/devices.txt" 2>&1
  ;;
startup)
  # Where the first second of a warm tune goes (issue 24's fixed part): SGEMM with the compile
  # cache warm, 40 random configs (the same ones each run), at 4096³ and 8192³, with the worker
  # process (default) and in process; stage times from the debug log.
  cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
  cold
  {
    "$BIN" tune benches/sgemm/sgemm.toml --backend cuda --top 1 --no-db > /dev/null 2>&1; echo "cold fill: exit $?"
    # Modes: the worker process with its buffers through shared memory (the default), the
    # worker with every buffer through its pipe, and in process.
    for key in M=4096,N=4096,K=4096 M=8192,N=8192,K=8192; do
      for mode in shm pipe inproc; do
        iso=1; shm=1
        [ $mode = pipe ] && shm=0
        [ $mode = inproc ] && iso=0
        for run in 1 2; do
          echo "--- $key $mode run $run"
          KERNTUNE_CUDA_ISOLATION=$iso KERNTUNE_WORKER_SHARED_MEMORY=$shm KERNTUNE_LOG=kerntune_core=debug,kerntune=debug timed "$BIN" tune benches/sgemm/sgemm.toml --backend cuda --key $key \
            --strategy random --budget 40 --seed 1 --no-db --top 1 2> >(tee "$OUT/startup-$(echo ${key%%,*} | tr -d =M)-$mode-$run.log" | grep -E '^(wall|Command)' >&2); echo "exit $?"
        done
      done
    done
  } > "$OUT/startup.txt" 2>&1
  ;;
startup-why)
  # What the worker's start waits for at 8192³ (10 configs): as is, with the CPU reference on
  # fewer threads, and without a CPU reference.
  cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
  {
    for v in default rayon8 noref; do
      extra=""; env=""
      [ $v = rayon8 ] && env="RAYON_NUM_THREADS=8"
      [ $v = noref ] && extra="--reference none"
      echo "--- 8192 worker $v"
      env $env KERNTUNE_LOG=kerntune_core=debug /usr/bin/time -f "wall %e s" "$BIN" tune benches/sgemm/sgemm.toml --backend cuda --key M=8192,N=8192,K=8192 \
        --strategy random --budget 10 --seed 1 --no-db --top 1 $extra 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | grep -E "worker|problem data|planned|workspace made|CPU reference|search done|^wall" | sed -E "s/^[0-9-]+T//"
    done
  } > "$OUT/startup-why.txt" 2>&1
  ;;
triad-start)
  # The exhaustive triad at 2^28 (3 GB of problem, a 1 GB CPU reference): set-up dominates.
  {
    for run in 1 2; do
      echo "--- triad 2^28 exhaustive, run $run"
      KERNTUNE_LOG=kerntune_core=debug timed "$BIN" tune examples/triad/triad.toml --backend cuda --key N=268435456 --no-db --top 1 2>&1 |
        sed 's/\x1b\[[0-9;]*m//g' | grep -E "worker init|problem data|shared file|problem received|workspace made|CPU reference|search done|^wall|^winner"; echo "exit $?"
    done
  } > "$OUT/triad-start.txt" 2>&1
  ;;
worker-start)
  # One worker per device started at once, with a 3 GiB problem (the triad's at 2^28): the
  # processes' start and the problem's journey to them (core/examples/worker_start.rs; no GPU).
  {
    echo "--- shared memory (default)"; .device/worker_start 3 1,2,4,8
    echo "--- through the pipe"; KERNTUNE_WORKER_SHARED_MEMORY=0 .device/worker_start 3 1,2,4,8
  } > "$OUT/worker-start.txt" 2>&1
  ;;
sgemm)
  cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
  cold
  {
    echo "--- cold: empty compile caches (kerntune's and NVRTC's), empty database"
    timed "$BIN" tune benches/sgemm/sgemm.toml --backend cuda --top 10; echo "exit $?"
    for i in $(seq ${SGEMM_WARM:-3}); do
      echo "--- warm $i: compile cache kept, database cleared"
      rm -rf "$KERNTUNE_CACHE_DIR"/db.sqlite*
      timed "$BIN" tune benches/sgemm/sgemm.toml --backend cuda --top 5; echo "exit $?"
    done
  } > "$OUT/sgemm.txt" 2>&1
  "$BIN" db export --out "$OUT/sgemm-db.json" 2>/dev/null
  ;;
hybrid)
  # Issue 7's strategy on the GPU: the hybrid search with 100 evaluations against the exhaustive
  # winner of the same space (compile cache warm from the sgemm step when it ran first).
  cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
  {
    for seed in 1 2 3; do
      echo "--- hybrid, 100 evaluations, seed $seed"
      timed "$BIN" tune benches/sgemm/sgemm.toml --backend cuda --strategy hybrid --budget 100 --seed $seed --top 3 --no-db; echo "exit $?"
    done
  } > "$OUT/hybrid.txt" 2>&1
  ;;
generated)
  # Issue 5's comparison: the full listed matmul space against the generated, pruned set.
  export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
  rm -rf "$KERNTUNE_CACHE_DIR"
  {
    for b in cuda wgpu; do
      echo "--- $b full listed space"
      timed "$BIN" tune examples/matmul/matmul.toml --backend $b --key M=2048,N=2048,K=2048 --top 3 --no-db; echo "exit $?"
      echo "--- $b generated"
      timed "$BIN" tune examples/matmul/matmul_generated.toml --backend $b --key M=2048,N=2048,K=2048 --top 3 --no-db; echo "exit $?"
    done
  } > "$OUT/generated.txt" 2>&1
  ;;
l2flush)
  # How much each way of emptying L2 disturbs the timed launch (benches/l2flush/l2flush.cu).
  nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
  { "$nvcc" -O3 -arch=native -o /tmp/l2flush benches/l2flush/l2flush.cu && /tmp/l2flush && /tmp/l2flush; } > "$OUT/l2flush.txt" 2>&1
  # The triad tuned by kerntune at sizes below and above L2, with each way of emptying L2.
  sed 's/^\[bench\]/[bench]\nrotate_inputs = true/' examples/triad/triad.toml > examples/triad/triad-rotate.toml
  sed 's/^\[bench\]/[bench]\nflush_l2 = false/' examples/triad/triad.toml > examples/triad/triad-warm.toml
  for logn in 18 20 22 24 28; do
    for mode in "" -rotate -warm; do
      echo "--- triad$mode N=2^$logn"
      "$BIN" tune examples/triad/triad$mode.toml --backend cuda --key N=$((1 << logn)) --top 1 --no-db 2>&1 | grep -E '^winner|^error'
    done
  done > "$OUT/l2flush-triad.txt" 2>&1
  # SGEMM (compute-bound) with rotating inputs, against the sgemm step's memset runs.
  cp .device/bench/sgemm.cu benches/sgemm/sgemm.cu
  sed 's/^\[bench\]/[bench]\nrotate_inputs = true/' benches/sgemm/sgemm.toml > benches/sgemm/sgemm-rotate.toml
  grep -q '^rotate_inputs' benches/sgemm/sgemm-rotate.toml || printf '\n[bench]\nrotate_inputs = true\n' >> benches/sgemm/sgemm-rotate.toml
  { timed "$BIN" tune benches/sgemm/sgemm-rotate.toml --backend cuda --top 5 --no-db; echo "exit $?"; } > "$OUT/l2flush-sgemm.txt" 2>&1
  ;;
sanitizer)
  # The memory checker's run on a read past a buffer, with its log (why a report is missing).
  KERNTUNE_LOG=info "$BIN" tune examples/faults/read_past.toml --backend cuda --no-db --strategy random --budget 3 > "$OUT/sanitizer.txt" 2>&1
  ;;
report)
  # Issue 23 on a real GPU: tune the triad and the matmul with CUDA (the summary states the
  # winner's place on the roofline), then build the HTML report of each from the database.
  rm -rf "$KERNTUNE_CACHE_DIR"
  {
    timed "$BIN" tune examples/triad/triad.toml --backend cuda --key N=268435456 --top 3; echo "exit $?"
    timed "$BIN" tune examples/matmul/matmul.toml --backend cuda --key M=2048,N=2048,K=2048 --top 3; echo "exit $?"
    timed "$BIN" report examples/triad/triad.toml --out "$OUT/report-triad.html"; echo "exit $?"
    timed "$BIN" report examples/matmul/matmul.toml --out "$OUT/report-matmul.html"; echo "exit $?"
  } > "$OUT/report.txt" 2>&1
  ;;
t1)
  # The T1 examples (examples/t1), each with the budget and search its file asks for.
  rm -rf "$KERNTUNE_CACHE_DIR"
  {
    for f in convolution/convolution t1/dedispersion t1/gemm t1/stencil; do
      echo "--- examples/$f.json"
      "$BIN" check examples/$f.json | grep -E '^(space|default|launch)'
      timed "$BIN" tune examples/$f.json --backend cuda --top 5; echo "exit $?"
    done
  } > "$OUT/t1.txt" 2>&1
  ;;
launch)
  # Launch overhead: a tuned launch against a raw cudarc launch of the same function (criterion),
  # then the example application (CUDA picked at run time; wgpu when asked).
  rm -rf "$KERNTUNE_CACHE_DIR"
  { .device/launch-bench --bench --warm-up-time 1 --measurement-time 4 2>&1; echo "exit $?"; } > "$OUT/launch-bench.txt" 2>&1
  export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
  {
    for run in first second; do echo "--- app, $run run"; timed .device/kerntune-app --n 16777216 --iters 1000; echo "exit $?"; done
    echo "--- app, wgpu"; timed .device/kerntune-app --backend wgpu --n 4194304 --iters 200; echo "exit $?"
    echo "--- app, KERNTUNE_TUNE=0, unseen size"; KERNTUNE_TUNE=0 timed .device/kerntune-app --n 1000000 --iters 10; echo "exit $?"
  } > "$OUT/app.txt" 2>&1
  ;;
conv)
  # Issue 15's compile-heavy kernel: the 15x15 convolution (tiles up to 4x4). kerntune, cold,
  # for each of $CONV_RUNS (strategy:budget; default random:50 random:100 hybrid:100), then
  # Kernel Tuner, cold, on exactly the configs of each run in $KT_SAME (default random:50;
  # KT_SAME= for none; strategy:budget:K/N runs the Kth of N parts of the set, from the run
  # files in $KT_RUNS when set, for a set too long for one call; CONV_RUNS= then skips kerntune),
  # so both tools compile and time the same set. One after the other;
  # nothing else runs meanwhile. KT_EVALS=N adds Kernel Tuner's own random_sample.
  lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket)' > "$OUT/conv-cpu.txt"
  {
    # A run is strategy:budget, or strategy:budget:TAIL to pass --compile-tail TAIL (3, off).
    for run in ${CONV_RUNS-random:50 random:100 hybrid:100}; do
      IFS=: read -r strat n tail <<< "$run"
      cold
      echo "--- kerntune $strat $n ${tail:+compile-tail $tail}"
      # A repeated run keeps its own file; Kernel Tuner takes the first's (the same configs
      # for random sampling).
      f="$OUT/conv-$strat-$n${tail:+-tail$tail}.json"; k=2
      while [ -e "$f" ]; do f="$OUT/conv-$strat-$n${tail:+-tail$tail}-run$k.json"; k=$((k + 1)); done
      timed "$BIN" tune examples/convolution/convolution.toml --backend cuda --strategy $strat --budget $n --seed 1 --top 1000 --no-db --json ${tail:+--compile-tail $tail} > "$f"; echo "exit $?"
      python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r=r[0] if isinstance(r,list) else r; print({k: r.get(k) for k in ["evaluated","compiled","compile_seconds","compile_threads","compile_efficiency","wall_seconds","winner","strategy","compile_tail"]}, r["winner_stats"]["mean"]*1e3, "ms"); print("compile seconds per config, longest first:", sorted((round(x["compile_seconds"] or 0, 1) for x in r["results"]), reverse=True))' "$f"
    done
  } > "$OUT/conv.txt" 2>&1
  if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
    {
      for run in ${KT_SAME-random:50}; do
        # strategy:budget, or strategy:budget:K/N for the Kth of N parts of that set (a set
        # that takes Kernel Tuner longer than one call of the device tool may run).
        IFS=: read -r strat n part <<< "$run"
        cold
        echo "--- Kernel Tuner, the configs of kerntune $strat $n${part:+, part $part}"
        timed python3 examples/convolution/convolution_kt.py --configs "${KT_RUNS:-$OUT}/conv-$strat-$n.json" ${part:+--part $part}; echo "exit $?"
      done
      if [ -n "${KT_EVALS:-}" ]; then
        cold
        echo "--- Kernel Tuner, random_sample $KT_EVALS"
        timed python3 examples/convolution/convolution_kt.py "$KT_EVALS"; echo "exit $?"
      fi
    } > "$OUT/conv-kt.txt" 2>&1
  fi
  ;;
kt)
  # Cold, like kerntune's cold run: CuPy's cache from an earlier step or call would make
  # Kernel Tuner's compiles hits.
  cold
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
  (cd .device/bench && OUT=$OUT PYTHONUNBUFFERED=1 timed python3 kernel_tuner_side.py) > "$OUT/kernel-tuner.txt" 2>&1
  rm -f "$OUT"/kt_*.json.lock
  ;;
esac
done
ls -la "$OUT"
