#!/usr/bin/env bash
# A split tune on a real single-node Slurm cluster (Debian's slurm-wlm and munge, daemons
# started here without systemd), on software Vulkan: deploy/slurm/submit.sh submits a 4-task
# job array of scripts/fleet/shard.sh and a dependent merge-and-confirm job, exactly as on a GPU
# cluster. Then it checks that every candidate was measured by exactly one shard (the triad
# verifies against a CPU function, so no config is every shard's reference; the default too is
# measured by the one shard whose part holds it), that the merged database holds them all, and
# that confirm stored a winner.
#
#   bash tests/slurm/run.sh [KERNTUNE_BINARY]
#
# Needs root (the daemons) and the packages (installed when missing). The cluster uses its own
# configuration and state under a temporary folder and is stopped at the end; /etc/slurm is not
# touched. Set KERNTUNE_SLURM_KEEP=1 to keep the folder for a look.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
kt=$(realpath "${1:-target/debug/kerntune}")
spec=examples/triad/triad.toml
shards=4

. "$root/tests/slurm/cluster.sh"

# The same commands as on a GPU cluster; the shards tune on software Vulkan.
export KERNTUNE=$kt KERNTUNE_CACHE_DIR=$work/cache XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$work/xdg}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
cd "$root"
# The spec in a folder of its own, its kernel named by its path in examples/ (outside that
# folder), so that the shards and the confirm job each need --allow-outside-sources: the
# confirm job gets the tune options it shares (submit.sh).
mkdir -p "$work/spec"
sed "s|source = { wgsl = \"triad.wgsl\", cuda = \"triad.cu\", hip = \"triad.cu\" }|source = { wgsl = \"$root/examples/triad/triad.wgsl\" }|" "$spec" >"$work/spec/triad.toml"
grep -q "$root/examples/triad/triad.wgsl" "$work/spec/triad.toml"
spec=$work/spec/triad.toml
read -r array confirm < <(SBATCH_ARGS="--chdir=$root --output=$work/%x-%A_%a.out" deploy/slurm/submit.sh "$shards" "$spec" "$work/out" --backend wgpu --allow-outside-sources)
echo "slurm test: array job $array, confirm job $confirm" >&2
state() { scontrol show job "$confirm" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1; }
for _ in $(seq 900); do
  s=$(state)
  case "$s" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
  # A failed array task leaves the confirm job waiting for good.
  if scontrol show job "$confirm" 2>/dev/null | grep -q DependencyNeverSatisfied; then
    s="never started (a shard failed)"
    break
  fi
  sleep 1
done
[ "$s" = COMPLETED ] || s=${s:-$(state)}
if [ "$s" != COMPLETED ]; then
  echo "slurm test: the confirm job ended $s" >&2
  tail -n 20 "$work"/*.out "$work"/slurmctld.log >&2 || true
  exit 1
fi

# Every candidate measured by exactly one shard, the default config too (the reference is a CPU
# function: no config is every shard's); the merged database holds them all; a winner.
default=$("$kt" check "$spec" --allow-outside-sources | sed -n 's/^default: //p')
for k in $(seq 0 $((shards - 1))); do
  "$kt" db show --json --db "$work/out/shard-$k.sqlite" >"$work/shard-$k.json"
done
"$kt" db show --json --db "$work/out/merged.sqlite" >"$work/merged.json"
python3 - "$work" "$shards" "$default" <<'PY'
import json, sys, collections
work, shards, default = sys.argv[1], int(sys.argv[2]), sys.argv[3]
seen = collections.Counter()
for k in range(shards):
    db = json.load(open(f"{work}/shard-{k}.json"))
    entries = list(db["entries"].values())
    assert len(entries) == 1, f"shard {k}: {len(entries)} entries"
    keys = entries[0]["measurements"].keys()
    assert keys, f"shard {k} measured nothing"
    origin = entries[0].get("origin", {})
    assert origin.get("shard") == {"index": k, "count": shards}, f"shard {k}: origin {origin}"
    seen.update(keys)
assert default and seen[default] == 1, f"the default config {default!r} measured by {seen[default]} of {shards} shards (the reference is a CPU function)"
twice = [c for c, n in seen.items() if n > 1]
assert not twice, f"measured by more than one shard: {twice}"
merged = list(json.load(open(f"{work}/merged.json"))["entries"].values())
assert len(merged) == 1, f"merged: {len(merged)} entries"
m = merged[0]
assert set(m["measurements"]) == set(seen), f"merged holds {len(m['measurements'])}, shards measured {len(seen)}"
assert len(seen) == 23, f"the triad space has 23 valid configs; the shards measured {len(seen)}"
w = m.get("winner")
assert w and w["config"] in m["measurements"], f"no winner stored: {w}"
# Each shard's run is kept apart (an array's tasks start in the same second), and confirm's.
runs = m.get("runs", [])
noted = sorted(r["shard"]["index"] for r in runs if r.get("shard"))
assert noted == list(range(shards)), f"the merged entry notes the runs of shards {noted}"
assert [r["strategy"] for r in runs if not r.get("shard")] == ["listed"], f"runs: {[(r['strategy'], r.get('shard')) for r in runs]}"
print("test result: ok. 1 passed; 0 failed (slurm)")
print(f"slurm test: {shards} shards measured {len(seen)} configs, each once; merged; confirm stored the winner {w['config']} ({w['stats']['mean']*1e3:.4f} ms)")
PY
