//! The database's journal: SQLite's write-ahead log where one host writes it, its rollback
//! journal on a file system other hosts may share (a write-ahead log's index is memory the
//! processes share, which processes on two nodes do not: committed writes of one are lost), or
//! as `KERNTUNE_DB_JOURNAL` says. One test: the variable is the process's.

use kerntune_core::store::db::{shared_file_system, Database};
use std::path::Path;
use std::process::Command;

/// Whether the SQLite file at `path` is in write-ahead-log mode (its header's read and write
/// versions, bytes 18 and 19, are 2; 1 in rollback-journal mode).
fn wal(path: &Path) -> bool {
    let b = std::fs::read(path).unwrap();
    assert!(b.starts_with(b"SQLite format 3\0"), "{}", path.display());
    match (b[18], b[19]) {
        (2, 2) => true,
        (1, 1) => false,
        other => panic!("{}: header versions {other:?}", path.display()),
    }
}

fn write(db: &Database) {
    db.update(|f| f.entries.clear()).unwrap();
}

#[test]
fn the_journal_follows_the_file_system_or_the_environment() {
    std::env::remove_var("KERNTUNE_DB_JOURNAL");
    let d = tempfile::tempdir().unwrap();
    // A local folder: the write-ahead log.
    assert_eq!(shared_file_system(d.path()), None, "the test's temporary folder reads as shared");
    let local = Database::at(d.path().join("local.sqlite"));
    write(&local);
    assert!(wal(local.path()));
    // Told so: the rollback journal, for a new database and one in the write-ahead log alike.
    std::env::set_var("KERNTUNE_DB_JOURNAL", "delete");
    let told = Database::at(d.path().join("told.sqlite"));
    write(&told);
    assert!(!wal(told.path()));
    write(&local);
    assert!(!wal(local.path()), "a write-ahead-log database opened for writing is converted");
    std::env::set_var("KERNTUNE_DB_JOURNAL", "WAL");
    write(&local);
    assert!(wal(local.path()));
    // A value that is neither: one message naming the variable and both values, nothing written.
    std::env::set_var("KERNTUNE_DB_JOURNAL", "truncate");
    let bad = Database::at(d.path().join("bad.sqlite"));
    let e = bad.update(|f| f.entries.clear()).unwrap_err().to_string();
    assert!(e.contains("KERNTUNE_DB_JOURNAL=\"truncate\" is neither `wal`") && e.contains("`delete`") && e.contains("bad.sqlite"), "{e}");
    assert!(!bad.path().exists());
    std::env::remove_var("KERNTUNE_DB_JOURNAL");
    // On a real FUSE file system (sshfs over a local SFTP server), where one is at hand: read as
    // shared, and the database there keeps the rollback journal.
    let mnt = d.path().join("mnt");
    let back = d.path().join("back");
    std::fs::create_dir_all(&mnt).unwrap();
    std::fs::create_dir_all(&back).unwrap();
    let sftp = ["/usr/lib/openssh/sftp-server", "/usr/lib/sftp-server"].into_iter().find(|p| Path::new(p).exists());
    let Some(sftp) = sftp else {
        kerntune_core::testing::skipped("db_journal: a database on a FUSE file system (no sftp-server for sshfs)");
        return;
    };
    let ssh = d.path().join("ssh.sh");
    std::fs::write(&ssh, format!("#!/bin/sh\nexec {sftp}\n")).unwrap();
    assert!(Command::new("chmod").arg("+x").arg(&ssh).status().unwrap().success());
    let mounted = Command::new("sshfs").arg("-o").arg(format!("ssh_command={}", ssh.display())).arg(format!("localhost:{}", back.display())).arg(&mnt).output();
    match mounted {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            kerntune_core::testing::skipped(&format!("db_journal: a database on a FUSE file system (sshfs: {})", String::from_utf8_lossy(&o.stderr)));
            return;
        }
        Err(e) => {
            kerntune_core::testing::skipped(&format!("db_journal: a database on a FUSE file system (sshfs: {e})"));
            return;
        }
    }
    let shared = shared_file_system(&mnt);
    let db = Database::at(mnt.join("shared.sqlite"));
    let written = db.update(|f| f.entries.clear());
    let header = std::fs::read(back.join("shared.sqlite"));
    let _ = Command::new("fusermount3").arg("-u").arg(&mnt).status().or_else(|_| Command::new("umount").arg(&mnt).status());
    assert_eq!(shared, Some("FUSE"));
    written.unwrap();
    let header = header.unwrap();
    assert_eq!((header[18], header[19]), (1, 1), "the database on sshfs is not in rollback-journal mode");
}
