# One line of run.sh's table from a tune's --json report on stdin.
import json
import sys

which, budget, seed = sys.argv[1:4]
r = json.load(sys.stdin)
r = r[0] if isinstance(r, list) else r
fin = [n for n in r["notes"] if n.startswith("final round")]
w = r["winner_stats"]
note = fin[0][:40] if fin else "no final round"
print(f"{which:6} budget {budget} seed {seed}: wall {r['wall_seconds']:.2f} s, evaluated {r['evaluated']}, "
      f"winner {w['mean'] * 1e3:.2f} ms ({w['samples']} samples), {note}")
