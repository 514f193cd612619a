#!/usr/bin/env bash
# Third call, on an H200: the compile timeout, on a kernel NVRTC is slow on. The second call's
# unrolled loop compiled in under a second at 80,000 iterations, so here the body is written out
# by macros: 10^L copies of a dependent `a = a * 0.9999f + __sinf(a + k)` (L = 2 … 5). Tuned
# exhaustively with --compile-timeout 5s into a database, then with --force and a 150 s timeout
# (what the first gave up on is compiled and measured, the rest read from the database), with
# each config's compile seconds from --json. Outputs differ by L by design: no reference.
set -u
. scripts/device-env.sh
W=/tmp/overread3; rm -rf $W; mkdir -p $W/hand
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
NEW=$PWD/.device/kerntune
H=$W/hand
save() { (cd $W && tar czf $OUT/overread3.tgz *.txt *.json hand/*.toml hand/*.cu 2>/dev/null); }
{
  export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache
  cat > $H/rep.cu <<'CU'
#define S a = a * 0.9999f + __sinf(a + (float)k); ++k;
#define R10(s) s s s s s s s s s s
extern "C" __global__ void rep(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i];
    int k = 0;
#if L == 2
    R10(R10(S))
#elif L == 3
    R10(R10(R10(S)))
#elif L == 4
    R10(R10(R10(R10(S))))
#else
    R10(R10(R10(R10(R10(S)))))
#endif
    y[i] = a;
}
CU
  printf '[kernel]\nname = "rep"\nsource = { cuda = "rep.cu" }\n[params]\nWG = [128, 256]\nL = [2, 3, 4, 5]\n[[problems]]\nn = 1048576\n[[args]]\nname = "y"\ntype = "f32"\nlen = "n"\naccess = "write"\n[[args]]\nname = "x"\ntype = "f32"\nlen = "n"\ninit = "random"\n[[args]]\nname = "n"\ntype = "i32"\nvalue = "n"\n[launch]\ngrid = ["div_ceil(n, WG)"]\nblock = ["WG"]\n[verify]\nreference = "none"\n[bench]\ntimeout = 5.0\n' > $H/rep.toml
  for step in "timeout --compile-timeout 5s" "force --force --compile-timeout 150s"; do
    set -- $step; label=$1; shift
    echo "== $label ($*)"
    t0=$(date +%s.%N)
    timeout 250 $NEW tune $H/rep.toml --backend cuda --db $W/rep.sqlite "$@" --top 8 > $W/rep-$label.txt 2>&1; rc=$?
    t1=$(date +%s.%N)
    grep -vE "^(┌|├|╞|└)" $W/rep-$label.txt | cut -c1-900
    echo "exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
    save
  done
  # Each config's compile seconds, as the database's measurements keep them.
  timeout 60 $NEW tune $H/rep.toml --backend cuda --db $W/rep.sqlite --json > $W/rep.json 2>$W/rep-json.txt
  python3 - $W/rep.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))[0]
for x in sorted(r["results"], key=lambda x: str(x["config"]["params"])):
    print(x["config"]["params"], "compile_seconds:", x.get("compile_seconds"), "measured:", "stats" in json.dumps(x["outcome"]))
PY
} > $W/out.txt 2>&1
save
cat $W/out.txt
