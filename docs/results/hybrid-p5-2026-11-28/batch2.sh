/tmp/p5/run5.sh every2 /tmp/p5/kt-try2 KT_MODEL_EVERY=2 &
/tmp/p5/run5.sh wide16 /tmp/p5/kt-try2 KT_WIDE=16 &
wait
/tmp/p5/run5.sh restart50 /tmp/p5/kt-try2 KT_RANDOM_RESTART=0.5 &
/tmp/p5/run5.sh explore20 /tmp/p5/kt-try2 KT_EXPLORE_P=0.2 &
wait
echo done > /tmp/p5/batch2.done
