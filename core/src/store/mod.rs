//! # Stage 5: what persists
//!
//! The winner database ([`db`]: every measurement with its reason, the winner per kernel ×
//! target × toolchain × problem key, atomic locked writes, merge) and the compile cache of
//! binaries the backends share ([`cache`]), and other tools' result files read as recorded
//! spaces ([`recorded`]: Kernel Tuner caches, T4 files), which simulation scores strategies on
//! and tunes learn from as priors, and which the report draws as entries ([`foreign`]).
//!
//! **May import:** `spec`, `space`, `plan`, `measure`, `search` and the vocabulary.

pub mod cache;
pub mod db;
pub mod export;
pub mod foreign;
pub mod recorded;

pub use db::{Database, DbError};

/// Writes `bytes` to `path` whole or not at all: to a temporary file beside it, then renamed
/// over it. A write that fails (a full disk) leaves neither a cut-off file nor a damaged earlier
/// one at `path` (a report, an export, a plot the user had), and removes its temporary file.
///
/// What the user named is written as they named it: a symbolic link keeps pointing where it did
/// (the file it names is replaced, with that file's permissions), and what is not a regular file
/// (a pipe, `>(gzip > out.gz)`) or is named under `/dev` or `/proc` (`/dev/stdout`, which may be
/// a file the shell opened to append to) is written in place: renaming over it would replace the
/// device, the pipe or the shell's file itself. So is a file this process may write in a folder
/// it may not add to. One of this process's own open files named by its descriptor
/// (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`) is written through that
/// descriptor: opened again, a file the shell opened to append to (`>> log`) was truncated and
/// written from its start.
pub fn write_whole(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    #[cfg(unix)]
    if let Some(fd) = own_descriptor(path) {
        use std::io::Write;
        use std::os::fd::{AsFd, BorrowedFd};
        // SAFETY: `fd` is checked open (fcntl F_GETFD) and is only borrowed here: duplicated,
        // written through the duplicate, which is then closed; the process's own descriptor stays.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1 {
            let own = unsafe { BorrowedFd::borrow_raw(fd) };
            let mut file = std::fs::File::from(own.as_fd().try_clone_to_owned()?);
            return file.write_all(bytes).and_then(|()| file.flush());
        }
    }
    let in_place = path.starts_with("/dev") || path.starts_with("/proc");
    let (path, mode) = match std::fs::metadata(path) {
        Ok(m) if in_place || (!m.is_file() && !m.is_dir()) => return std::fs::write(path, bytes),
        // The file a link names (a dangling link is written through, creating its target).
        Ok(m) if m.is_file() => (std::fs::canonicalize(path)?, Some(m.permissions())),
        _ if path.is_symlink() => return std::fs::write(path, bytes),
        _ => (path.to_path_buf(), None),
    };
    let name = path.file_name().map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    // Named by process and thread: several may write the same file at once (compile threads
    // storing one binary), each renaming a whole file of its own.
    let tmp = path.with_file_name(format!(".{name}.partial-{}-{:?}", std::process::id(), std::thread::current().id()));
    let written = match std::fs::write(&tmp, bytes) {
        // A folder this process may not add to, holding a file it may write (a shared report
        // page): the file is written in place, as asked, since no whole file can go beside it.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied && mode.is_some() => return std::fs::write(&path, bytes),
        r => r.and_then(|()| mode.map_or(Ok(()), |mode| std::fs::set_permissions(&tmp, mode))).and_then(|()| std::fs::rename(&tmp, &path)),
    };
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// The descriptor of this process that `path` names, if it names one: `/dev/stdout` (1),
/// `/dev/stderr` (2), `/dev/stdin` (0), `/dev/fd/N`, `/proc/self/fd/N`.
#[cfg(unix)]
fn own_descriptor(path: &std::path::Path) -> Option<i32> {
    let p = path.to_str()?;
    match p {
        "/dev/stdin" => Some(0),
        "/dev/stdout" => Some(1),
        "/dev/stderr" => Some(2),
        _ => p.strip_prefix("/dev/fd/").or_else(|| p.strip_prefix("/proc/self/fd/")).and_then(|n| n.parse().ok()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_write_is_whole_or_leaves_what_was_there() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("report.html");
        super::write_whole(&p, b"first").unwrap();
        super::write_whole(&p, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        // A write that cannot finish (here: its target is a folder, so the rename fails) keeps
        // what was there and leaves no temporary file.
        let folder = d.path().join("plots");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("kept"), b"x").unwrap();
        assert!(super::write_whole(&folder, b"third").is_err());
        assert_eq!(std::fs::read(folder.join("kept")).unwrap(), b"x");
        let names: Vec<String> = std::fs::read_dir(d.path()).unwrap().map(|f| f.unwrap().file_name().into_string().unwrap()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    /// A link, a file's permissions and a pipe are kept as the user made them.
    #[cfg(unix)]
    #[test]
    fn a_write_keeps_links_permissions_and_pipes() {
        use std::os::unix::fs::{FileTypeExt, PermissionsExt};
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("report.html");
        std::fs::write(&p, b"first").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = d.path().join("latest.html");
        std::os::unix::fs::symlink("report.html", &link).unwrap();
        super::write_whole(&link, b"second").unwrap();
        assert!(link.is_symlink(), "the link was replaced by a file");
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        // A dangling link is written through: its target is made.
        let dangling = d.path().join("plot.svg");
        std::os::unix::fs::symlink("plots.svg", &dangling).unwrap();
        super::write_whole(&dangling, b"<svg/>").unwrap();
        assert!(dangling.is_symlink());
        assert_eq!(std::fs::read(d.path().join("plots.svg")).unwrap(), b"<svg/>");

        // A pipe (as `/dev/stdout` in a pipeline is) gets the bytes and stays a pipe.
        let fifo = d.path().join("out.fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let reading = fifo.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(std::fs::read(&reading)));
        super::write_whole(&fifo, b"through the pipe").unwrap();
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "the pipe was replaced: {kind:?}");
        let read = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap().unwrap();
        assert_eq!(read, b"through the pipe");
        let names: Vec<String> = std::fs::read_dir(d.path()).unwrap().map(|f| f.unwrap().file_name().into_string().unwrap()).collect();
        assert_eq!(names.len(), 5, "a temporary file was left: {names:?}");
    }
}
