//! A worker's standard output is its pipe to the tuner, and kernels print to it: CUDA's device
//! `printf` (and HIP's, and HIP's failed device-side assertions) writes to the process's
//! standard output. A debug line left in a published kernel would corrupt the protocol and
//! fail every config, so the worker moves its standard output onto a pipe of its own that a
//! thread reads, and speaks to the tuner on a copy of the original. What was printed is
//! counted and its first and last lines kept ([`Printed`]); each reply carries what was printed
//! while its request ran.

use crate::backend::Printed;
use std::fs::File;

/// This process's standard output, read on a thread.
pub(crate) struct Capture(#[cfg(unix)] std::sync::Arc<unix::Inner>);

impl Capture {
    /// Moves this process's standard output onto a pipe that a thread reads, and returns the
    /// original (the tuner's end) for the protocol. `None` where that cannot be done (then a
    /// kernel that prints corrupts the protocol, and the tuner says the worker ended without a
    /// reply).
    pub(crate) fn start() -> Option<(Capture, File)> {
        #[cfg(unix)]
        return unix::start().map(|(inner, proto)| (Capture(inner), proto));
        #[cfg(not(unix))]
        None
    }

    /// What was printed since the last call: the C library's and Rust's buffers flushed and
    /// the pipe read to its end first, so that it holds everything written before the call.
    pub(crate) fn take(&self) -> Option<Printed> {
        #[cfg(unix)]
        return self.0.take();
        #[cfg(not(unix))]
        None
    }
}

#[cfg(unix)]
mod unix {
    use super::Printed;
    use std::fs::File;
    use std::io::{self, Write};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::sync::{Arc, Mutex};

    /// A partial line is kept up to this many bytes (the rest of it is counted only).
    const PARTIAL: usize = 4096;

    pub(super) struct Inner {
        /// The pipe's read end (non-blocking).
        read: OwnedFd,
        state: Mutex<State>,
    }

    #[derive(Default)]
    struct State {
        printed: Printed,
        /// The line being read.
        partial: Vec<u8>,
        /// The last whole line past the first ones (turned into text when taken).
        last: Vec<u8>,
        /// What each read reads into, made once (reads follow every request).
        buf: Vec<u8>,
    }

    impl State {
        fn bytes(&mut self, b: &[u8]) {
            self.printed.bytes += b.len() as u64;
            for (i, part) in b.split(|&c| c == b'\n').enumerate() {
                if i > 0 {
                    self.end_line();
                }
                let room = PARTIAL.saturating_sub(self.partial.len());
                self.partial.extend_from_slice(&part[..part.len().min(room)]);
            }
        }

        fn end_line(&mut self) {
            if self.printed.first.len() < Printed::FIRST {
                let line = String::from_utf8_lossy(&self.partial).into_owned();
                self.printed.line(&line);
            } else {
                // Counted here, kept as bytes: a flood of lines costs no text each.
                self.printed.lines += 1;
                std::mem::swap(&mut self.last, &mut self.partial);
            }
            self.partial.clear();
        }

        fn take(&mut self) -> Printed {
            if !self.last.is_empty() {
                let line = String::from_utf8_lossy(&self.last);
                self.printed.last = Some(Printed::cut(&line));
                self.last.clear();
            }
            std::mem::take(&mut self.printed)
        }
    }

    fn check(r: libc::c_int) -> io::Result<libc::c_int> {
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r)
        }
    }

    pub(super) fn start() -> Option<(Arc<Inner>, File)> {
        let made = (|| -> io::Result<(Arc<Inner>, File)> {
            // SAFETY: descriptor calls on descriptors this function opens and owns; descriptor 1
            // is replaced only once its original has a copy.
            unsafe {
                let proto = File::from_raw_fd(check(libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3))?);
                let mut fds = [0; 2];
                check(libc::pipe(fds.as_mut_ptr()))?;
                let (read, write) = (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]));
                for fd in [read.as_raw_fd(), write.as_raw_fd()] {
                    check(libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC))?;
                }
                check(libc::fcntl(read.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK))?;
                check(libc::dup2(write.as_raw_fd(), 1))?;
                Ok((Arc::new(Inner { read, state: Mutex::default() }), proto))
            }
        })();
        let (inner, proto) = match made {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(error = %e, "worker: standard output not moved off the tuner's pipe; a kernel that prints will break it");
                return None;
            }
        };
        let reader = inner.clone();
        let read = move || loop {
            let mut p = libc::pollfd { fd: reader.read.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd.
            if unsafe { libc::poll(&mut p, 1, -1) } < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return;
            }
            if !reader.drain() {
                return;
            }
        };
        if std::thread::Builder::new().name("kerntune-worker-stdout".into()).spawn(read).is_err() {
            // Read after each request only: a kernel printing more than the pipe holds between
            // two would wait for it.
            tracing::warn!("worker: no thread to read standard output");
        }
        Some((inner, proto))
    }

    impl Inner {
        /// Reads what the pipe holds; `false` once it has ended or failed.
        fn drain(&self) -> bool {
            let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let mut buf = std::mem::take(&mut st.buf);
            buf.resize(1 << 16, 0);
            let open = loop {
                // SAFETY: reads into a buffer of that length.
                let n = unsafe { libc::read(self.read.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
                match n {
                    n if n > 0 => st.bytes(&buf[..n as usize]),
                    0 => break false,
                    _ => match io::Error::last_os_error().kind() {
                        io::ErrorKind::Interrupted => {}
                        k => break k == io::ErrorKind::WouldBlock,
                    },
                }
            };
            st.buf = buf;
            open
        }

        pub(super) fn take(&self) -> Option<Printed> {
            let _ = io::stdout().flush();
            // SAFETY: flushes every C stream (the drivers print through C's `stdout`).
            unsafe { libc::fflush(std::ptr::null_mut()) };
            self.drain();
            let p = self.state.lock().unwrap_or_else(|p| p.into_inner()).take();
            (!p.is_empty()).then_some(p)
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn lines_are_counted_and_the_first_and_last_kept_across_reads() {
            let mut s = State::default();
            s.bytes(b"one\ntw");
            s.bytes(b"o\nthree\nfour\nfi");
            s.bytes(b"ve\nsix");
            let p = s.take();
            assert_eq!((p.bytes, p.lines), (27, 5));
            assert_eq!(p.first, ["one", "two", "three"]);
            assert_eq!(p.last.as_deref(), Some("five"));
            // The partial line stays for the next take.
            s.bytes(b"\n");
            let p = s.take();
            assert_eq!((p.bytes, p.lines, p.first.as_slice()), (1, 1, &["six".to_string()][..]));
        }

        #[test]
        fn a_long_line_is_kept_in_part_and_counted_whole() {
            let mut s = State::default();
            s.bytes(&vec![b'x'; 3 * PARTIAL]);
            s.bytes(b"\n");
            let p = s.take();
            assert_eq!((p.bytes, p.lines), (3 * PARTIAL as u64 + 1, 1));
            assert_eq!(p.first[0].len(), Printed::WIDTH);
        }
    }
}
