/tmp/p5/run200.sh base /tmp/p5/kt-base X=1 &
/tmp/p5/run200.sh ei02 /tmp/p5/kt-try KT_EXPLORE_EI=0.02 &
wait
/tmp/p5/run200.sh spread /tmp/p5/kt-try KT_SPREAD=1
echo done > /tmp/p5/batch1.done
