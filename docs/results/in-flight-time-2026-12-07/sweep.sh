cd /work/main
for m in 1 1.5 2; do
  echo "=== mult $m"
  KT_CAP_MULT=$m ./target/release/kerntune simulate docs/results/time-budget-2026-12-06/sgemm_H100.t4.json.gz --budget 6s --jobs 16 --strategy hybrid --repeats 50 --at 1s,2s,3s,6s 2>&1 | grep "│ hybrid"
  for s in convolution_A100 convolution_W7800 convolution_MI250X dedispersion_A100; do
    printf "%s " $s; KT_CAP_MULT=$m ./target/release/kerntune simulate ../shared/spaces/gpus/$s.json.gz --budget 1m --jobs 16 --strategy hybrid --repeats 20 --at 15s,30s,1m 2>&1 | grep "│ hybrid"
  done
done
echo DONE
