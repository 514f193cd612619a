//! The compile pipeline's work queue: candidates waiting for a compile thread, the one with the
//! longest predicted compile first, so that a tail of slow compiles does not decide the wall
//! time ([`CompileQueue`]); and the model that predicts compile times from the compiles seen so
//! far ([`CompileTimes`]).

use crate::search::features::encode;
use crate::search::{Candidates, Forest};
use rand::SeedableRng;
use std::collections::BinaryHeap;
use std::sync::{Condvar, Mutex, MutexGuard};

#[derive(Debug, PartialEq)]
struct Job {
    /// Predicted compile seconds (0 before there is a model: then first in, first out).
    priority: f64,
    seq: u64,
    index: usize,
}

impl Eq for Job {}

impl Ord for Job {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.priority.total_cmp(&o.priority).then(o.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Job {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

#[derive(Default)]
struct State {
    heap: BinaryHeap<Job>,
    seq: u64,
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
        let mut s = self.lock();
        s.seq += 1;
        let seq = s.seq;
        s.heap.push(Job { priority, seq, index });
        drop(s);
        self.ready.notify_one();
    }

    /// The next candidate to compile (the longest predicted), waiting for one; `None` once the
    /// queue is closed.
    pub(crate) fn pop(&self) -> Option<usize> {
        let mut s = self.lock();
        loop {
            if s.closed {
                return None;
            }
            if let Some(j) = s.heap.pop() {
                return Some(j.index);
            }
            s = self.ready.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Drops what is queued and releases every waiting thread.
    pub(crate) fn close(&self) {
        let mut s = self.lock();
        s.closed = true;
        s.heap.clear();
        drop(s);
        self.ready.notify_all();
    }

    /// Re-keys every queued candidate by `predict`.
    pub(crate) fn reprioritize(&self, predict: impl Fn(usize) -> f64) {
        let mut s = self.lock();
        let jobs = std::mem::take(&mut s.heap).into_vec();
        s.heap = jobs.into_iter().map(|j| Job { priority: predict(j.index), ..j }).collect();
    }

    /// Candidates queued and not started.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().heap.len()
    }
}

/// Compile seconds predicted from parameter values: a random forest on log(seconds) of the
/// compiles seen (persistent-cache hits left out), refitted each time their number doubles
/// from 8 (so a long tune refits a handful of times).
pub(crate) struct CompileTimes {
    obs: Vec<(usize, f64)>,
    forest: Option<Forest>,
    next_fit: usize,
    rng: rand_chacha::ChaCha8Rng,
}

const FIRST_FIT: usize = 8;
const TREES: usize = 16;

impl CompileTimes {
    pub(crate) fn new(seed: u64) -> CompileTimes {
        CompileTimes { obs: Vec::new(), forest: None, next_fit: FIRST_FIT, rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0xc0de) }
    }

    /// Records a compile of candidate `index` that took `seconds`; true when the model was
    /// refitted (queued work should then be re-keyed).
    pub(crate) fn observe(&mut self, cands: &Candidates<'_>, index: usize, seconds: f64, cached: bool) -> bool {
        if cached || !seconds.is_finite() || seconds <= 0.0 || index >= cands.len() {
            return false;
        }
        self.obs.push((index, seconds));
        if self.obs.len() < self.next_fit {
            return false;
        }
        self.next_fit = self.obs.len() * 2;
        let xs: Vec<Vec<f64>> = self.obs.iter().map(|o| encode(cands.params, &cands.coords[o.0])).collect();
        if xs.first().is_none_or(|x| x.is_empty()) {
            return false; // nothing varies: no order to learn
        }
        let ys: Vec<f64> = self.obs.iter().map(|o| o.1.ln()).collect();
        self.forest = Some(Forest::fit(&xs, &ys, TREES, &mut self.rng));
        true
    }

    /// Predicted compile seconds of candidate `index` (0 before the first fit).
    pub(crate) fn predict(&self, cands: &Candidates<'_>, index: usize) -> f64 {
        match (&self.forest, cands.coords.get(index)) {
            (Some(f), Some(c)) => f.predict(&encode(cands.params, c)).0.exp(),
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::job::Param;

    #[test]
    fn longest_predicted_first_then_first_in_first_out() {
        let q = CompileQueue::default();
        for (i, p) in [(0, 0.0), (1, 0.0), (2, 3.0), (3, 1.0)] {
            q.push(i, p);
        }
        assert_eq!((q.pop(), q.pop(), q.pop(), q.pop()), (Some(2), Some(3), Some(0), Some(1)));
        q.push(5, 0.0);
        q.push(6, 0.0);
        q.reprioritize(|i| i as f64);
        assert_eq!(q.pop(), Some(6));
        q.close();
        assert_eq!((q.pop(), q.len()), (None, 0));
    }

    #[test]
    fn waiting_threads_are_released_by_work_or_by_closing() {
        let q = CompileQueue::default();
        std::thread::scope(|s| {
            let a = s.spawn(|| q.pop());
            let b = s.spawn(|| q.pop());
            std::thread::sleep(std::time::Duration::from_millis(20));
            q.push(7, 0.0);
            std::thread::sleep(std::time::Duration::from_millis(20));
            q.close();
            let mut got = [a.join().unwrap(), b.join().unwrap()];
            got.sort();
            assert_eq!(got, [None, Some(7)]);
        });
    }

    #[test]
    fn learns_that_bigger_tiles_compile_longer() {
        let params = [Param::new("tile", [1, 2, 4, 8]), Param::new("unroll", [1, 2, 4, 8])];
        let coords: Vec<Vec<u32>> = (0..4).flat_map(|a| (0..4).map(move |b| vec![a, b])).collect();
        let cands = Candidates { params: &params, coords: &coords };
        let secs = |c: &[u32]| 0.5 * f64::from(1u32 << c[0]) * f64::from(1u32 << c[1]);
        let mut t = CompileTimes::new(1);
        assert_eq!(t.predict(&cands, 15), 0.0);
        let mut refits = 0;
        for (i, c) in coords.iter().enumerate().filter(|(i, _)| i % 2 == 0) {
            refits += t.observe(&cands, i, secs(c), false) as usize;
        }
        assert!(!t.observe(&cands, 1, 99.0, true), "cache hits teach nothing");
        assert_eq!(refits, 1, "fitted once 8 compiles were seen");
        // Unseen candidates: (8, 8) is predicted slower than (1, 2).
        let (slow, fast) = (t.predict(&cands, 15), t.predict(&cands, 1));
        assert!(slow > 4.0 * fast, "{slow} {fast}");
    }
}
