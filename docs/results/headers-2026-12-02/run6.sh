#!/usr/bin/env bash
# Sixth call, on an H200: the memcheck verdict kept with the run — the over-reading kernel of
# run4.sh/run5.sh tuned with --memcheck into a database, then `kerntune report` and `db show` of
# it; then the memcheck GPU test once more at this build.
set -u
. scripts/device-env.sh
W=/tmp/headers6; rm -rf $W; mkdir -p $W/hand
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
H=$W/hand
{
  printf 'extern "C" __global__ void shift(float* y, const float* x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n) return;\n#if OVERREAD\n    float next = x[i + 1];\n    y[i] = x[i] + (i + 1 < n ? next : 0.0f);\n#else\n    y[i] = x[i] + (i + 1 < n ? x[i + 1] : 0.0f);\n#endif\n}\n' > $H/shift.cu
  printf '[kernel]\nname = "shift"\nsource = { cuda = "shift.cu" }\n[params]\nWG = [128, 256]\nOVERREAD = [1]\n[[problems]]\nn = 1000000\n[[args]]\nname = "y"\ntype = "f32"\nlen = "n"\naccess = "write"\n[[args]]\nname = "x"\ntype = "f32"\nlen = "n"\ninit = "random"\n[[args]]\nname = "n"\ntype = "i32"\nvalue = "n"\n[launch]\ngrid = ["div_ceil(n, WG)"]\nblock = ["WG"]\n' > $H/shift1.toml
  echo "== tune --memcheck"
  KERNTUNE_CACHE_DIR=$H/cache $NEW tune $H/shift1.toml --backend cuda --memcheck --top 1 --db $W/shift.sqlite > $W/tune.txt 2>&1; echo "exit $?"
  grep -E "^warning|^winner|^memcheck|^error" $W/tune.txt | cut -c1-300
  echo "== report"
  $NEW report --db $W/shift.sqlite -o $W/shift.html > $W/report.txt 2>&1; echo "exit $?"
  grep -o "<strong>the winner reads or writes past its buffers</strong> (memcheck): [^<]*" $W/shift.html | cut -c1-300
  echo "== db show"
  $NEW db show --db $W/shift.sqlite 2>&1 | cut -c1-600
  KERNTUNE_CACHE_DIR=$W/suites KERNTUNE_BIN=$NEW KERNTUNE_REQUIRE_DEVICE=cuda .device/tests/gpu --test-threads=1 the_winner 2>&1 | grep -E "^test |^test result|panicked" | cut -c1-2000
} > $W/out.txt 2>&1
cat $W/out.txt
cd $W && tar czf $OUT/headers6.tgz *.txt *.html hand/*.toml hand/*.cu
