#!/usr/bin/env bash
# Fourth call, on an H200, at the final build (the third call's Python read the --json output as
# one report, not the list it is, and its archive left the JSON out): the macro-expanded kernel
# with --compile-timeout 5s, each config's outcome from --json.
. scripts/device-env.sh; W=/tmp/hc4; rm -rf $W; mkdir -p $W; tar xzf docs/results/overread-2026-12-02/call3.tgz -C $W hand/rep.cu hand/rep.toml; export KERNTUNE_CACHE_DIR=$W/cache CUDA_CACHE_PATH=$W/nvcache; t0=$(date +%s.%N); .device/kerntune tune $W/hand/rep.toml --backend cuda --no-db --compile-timeout 5s --top 8 --json > $W/rep-timeout-json.txt 2> $W/rep-timeout-err.txt; echo "exit $?"; t1=$(date +%s.%N); python3 -c "print(f'{$t1-$t0:.2f} s')"; python3 -c "
import json
for r in json.load(open('$W/rep-timeout-json.txt')):
    for x in r['results']:
        print(x.get('config'), x.get('outcome'), (x.get('message') or '')[:240], x.get('compile_seconds'))
    print('wall', r.get('wall_seconds'), 'compiled', r.get('compiled'), 'compile_seconds', r.get('compile_seconds'))
" | tee $W/rep-summary.txt; cp $W/*.txt $OUT/
