#!/usr/bin/env bash
# SQLite's write-ahead log against its rollback journal when two "hosts" write one database: two
# sshfs mounts of one folder (a local SFTP server; each mount has its own page cache and its own
# locks, as two NFS clients have their own caches), sixty-fifth session. Then a kerntune tune with
# its database on one sshfs mount: the journal it keeps there.
#
#   bash docs/results/db-journal-2026-12-06/run.sh [KERNTUNE_BINARY] > run.log    # as root, with sshfs
set -u
cd "$(dirname "$0")/../../.."
kt=$(realpath "${1:-target/release/kerntune}")
w=$(mktemp -d /tmp/kerntune-journal.XXXXXX)
mkdir -p "$w/back" "$w/m1" "$w/m2"
printf '#!/bin/sh\nexec /usr/lib/openssh/sftp-server\n' > "$w/ssh.sh"; chmod +x "$w/ssh.sh"
for m in m1 m2; do sshfs -o ssh_command="$w/ssh.sh" "localhost:$w/back" "$w/$m"; done
trap 'fusermount3 -u "$w/m1"; fusermount3 -u "$w/m2"; rm -rf "$w"' EXIT
stat -f -c "file system of a mount: %T (magic %t)" "$w/m1"
cat > "$w/writer.py" <<'PY'
import sqlite3, sys
path, mode, tag, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = sqlite3.connect(path, timeout=60)
c.execute(f"PRAGMA journal_mode={mode}")
errors = 0
for i in range(n):
    try:
        c.execute("INSERT INTO t VALUES (?, ?)", (tag, i)); c.commit()
    except Exception as e:
        errors += 1
        if errors == 1: print(f"  writer {tag}: error at insert {i}: {e}")
print(f"  writer {tag}: {n - errors} inserts committed without an error")
PY
echo "== two writers, 300 inserts each (one transaction each), one through each mount, three runs per mode"
for mode in WAL DELETE; do
  for run in 1 2 3; do
    rm -f "$w/back/t.sqlite"*
    python3 -c "import sqlite3; c=sqlite3.connect('$w/back/t.sqlite'); c.execute('PRAGMA journal_mode=$mode'); c.execute('CREATE TABLE t(tag, i)'); c.commit()"
    echo "$mode, run $run:"
    python3 "$w/writer.py" "$w/m1/t.sqlite" $mode a 300 & python3 "$w/writer.py" "$w/m2/t.sqlite" $mode b 300; wait
    python3 -c "
import sqlite3; c=sqlite3.connect('$w/back/t.sqlite')
print('  in the file:', dict(c.execute('select tag, count(*) from t group by tag').fetchall()), 'integrity:', c.execute('PRAGMA integrity_check').fetchone()[0])"
  done
done
echo "== kerntune: the example triad tuned on llvmpipe with its database on one mount"
export KERNTUNE_CACHE_DIR=$w/cache XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$w/xdg}; mkdir -p -m 700 "$XDG_RUNTIME_DIR"
hdr() { python3 -c "b=open('$1','rb').read(20); print('journal in the file header:', {1:'rollback', 2:'write-ahead log'}[b[18]])"; }
"$kt" tune examples/triad/triad.toml --backend wgpu --db "$w/m1/tune.sqlite" 2>&1 | grep -E "^winner|^database|error|warning" | cut -c1-200
hdr "$w/back/tune.sqlite"
"$kt" db show --db "$w/m2/tune.sqlite" | tail -1 | cut -c1-200
echo "-- KERNTUNE_DB_JOURNAL=wal on the same mount"
KERNTUNE_DB_JOURNAL=wal "$kt" tune examples/triad/triad.toml --backend wgpu --db "$w/m1/wal.sqlite" 2>&1 | grep -E "^winner|^database|error" | cut -c1-200
hdr "$w/back/wal.sqlite"
