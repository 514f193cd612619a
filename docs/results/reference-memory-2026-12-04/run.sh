#!/usr/bin/env bash
# The tuner's and its wgpu worker's own memory (RssAnon + RssShmem, every 0.5 s) while tuning the
# shipped triad at 16 Mi elements (two 64 MiB buffers, x read and y read-write, verified against
# the CPU reference `cpu:triad`) on this machine's software Vulkan (llvmpipe), 4 evaluations.
# Prints each distinct line of samples. BIN defaults to ./target/debug/kerntune.
set -u
BIN=${BIN:-./target/debug/kerntune}
T=$(mktemp -d)
cp -r examples/triad/. "$T"/
sed -i 's/^N = 1048576/N = 16777216/' "$T/triad.toml"
own() { awk '/RssAnon|RssShmem/{s+=$2} END{print int(s/1024)}' "/proc/$1/status" 2>/dev/null; }
"$BIN" tune "$T/triad.toml" --no-db --budget 4 > "$T/out.txt" 2>&1 &
P=$!
while [ -d /proc/$P ] && [ "$(cat /proc/$P/stat 2>/dev/null | cut -d' ' -f3)" != Z ]; do
  line="tuner $(own $P) MiB"
  for k in $(cat /proc/$P/task/*/children 2>/dev/null); do line="$line, worker $(own $k) MiB"; done
  echo "$line"
  sleep 0.5
done | awk '!seen[$0]++'
wait $P
grep -E "^winner|wall time" "$T/out.txt"
rm -rf "$T"
