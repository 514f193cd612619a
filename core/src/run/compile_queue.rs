//! The compile pipeline's work queue: candidates waiting for a compile thread, shared by the
//! threads, in [`CompileOrder`] (the longest predicted compile first, so that a tail of slow
//! compiles does not decide the wall time; the predictions come from
//! [`CompileTimes`](crate::search::pipeline::CompileTimes)).

use crate::search::pipeline::CompileOrder;
use std::sync::{Condvar, Mutex, MutexGuard};

#[derive(Default)]
struct State {
    order: CompileOrder,
    closed: bool,
}

/// Candidates waiting to compile; compile threads block in [`CompileQueue::pop`].
#[derive(Default)]
pub(crate) struct CompileQueue {
    state: Mutex<State>,
    ready: Condvar,
}

impl CompileQueue {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues candidate `index` with its predicted compile seconds.
    pub(crate) fn push(&self, index: usize, priority: f64) {
        self.lock().order.push(index, priority);
        self.ready.notify_one();
    }

    /// The next candidate to compile (the longest predicted), waiting for one, with how many
    /// stay queued behind it; `None` once the queue is closed.
    pub(crate) fn pop(&self) -> Option<(usize, usize)> {
        let mut s = self.lock();
        loop {
            if s.closed {
                return None;
            }
            if let Some(i) = s.order.pop() {
                return Some((i, s.order.len()));
            }
            s = self.ready.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Drops what is queued and releases every waiting thread.
    pub(crate) fn close(&self) {
        let mut s = self.lock();
        s.closed = true;
        s.order.clear();
        drop(s);
        self.ready.notify_all();
    }

    /// Re-keys every queued candidate by `predict`.
    pub(crate) fn reprioritize(&self, predict: impl Fn(usize) -> f64) {
        self.lock().order.reprioritize(predict);
    }

    /// Candidates queued and not started.
    pub(crate) fn len(&self) -> usize {
        self.lock().order.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_predicted_first_then_first_in_first_out() {
        let q = CompileQueue::default();
        for (i, p) in [(0, 0.0), (1, 0.0), (2, 3.0), (3, 1.0)] {
            q.push(i, p);
        }
        assert_eq!((q.pop(), q.pop(), q.pop(), q.pop()), (Some((2, 3)), Some((3, 2)), Some((0, 1)), Some((1, 0))));
        q.push(5, 0.0);
        q.push(6, 0.0);
        q.reprioritize(|i| i as f64);
        assert_eq!(q.pop(), Some((6, 1)));
        q.close();
        assert_eq!((q.pop(), q.len()), (None, 0));
    }

    #[test]
    fn waiting_threads_are_released_by_work_or_by_closing() {
        let q = CompileQueue::default();
        std::thread::scope(|s| {
            let a = s.spawn(|| q.pop().map(|p| p.0));
            let b = s.spawn(|| q.pop().map(|p| p.0));
            std::thread::sleep(std::time::Duration::from_millis(20));
            q.push(7, 0.0);
            std::thread::sleep(std::time::Duration::from_millis(20));
            q.close();
            let mut got = [a.join().unwrap(), b.join().unwrap()];
            got.sort();
            assert_eq!(got, [None, Some(7)]);
        });
    }
}
