cd /work/main
S="../shared/spaces/convolution_A100.json.gz ../shared/spaces/convolution_MI250X.json.gz ../shared/spaces/dedispersion_MI250X.json.gz ../shared/spaces/gpus/convolution_W7800.json.gz ../shared/spaces/gpus/convolution_A6000.json.gz"
name=$1; bin=$2; shift 2
env "$@" /usr/bin/time -f "%e s wall %U s user" $bin simulate $S --strategy hybrid --budget 200 --repeats 200 --seed 1 --at 50,100,200 > /tmp/p5/r5-$name.txt 2>&1
