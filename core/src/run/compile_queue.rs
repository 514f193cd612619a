//! The compile pipeline's work queue: candidates waiting for a compile thread, shared by the
//! threads, in [`CompileOrder`] (the longest predicted compile first, so that a tail of slow
//! compiles does not decide the wall time; the predictions come from
//! [`CompileTimes`](crate::search::pipeline::CompileTimes)).
//!
//! A candidate the tune cannot go on without (the one tried for the reference outputs, which
//! alone is sent to a device until it has run) is queued **first**
//! ([`CompileQueue::push_first`]): before the rest, whatever their predicted times, and a
//! compile thread takes it even while compiled configs fill the allowance of those waiting for
//! a device ([`CompileQueue::pop_urgent`]: that candidate only, not the rest), which those
//! configs do until it has run. So is one queued
//! with **fewer beside it** (below): it may be that candidate, compiled again.
//!
//! A candidate can also be queued to compile with at most `room` compiles at once, itself
//! included ([`CompileQueue::push_spared`]; `room` 1 is alone): a compile whose compiler process
//! was killed from outside (the out-of-memory killer, most likely) is compiled again with more
//! of the machine's memory to itself. Such a candidate goes before the rest; no thread starts
//! another compile once it is next, it starts as soon as fewer than `room` compiles run (not
//! when all have ended: a long compile then idles the other threads; on an H200, 13 s of a 23 s
//! convolution tune), and while it runs others start only up to `room` at once.
//!
//! And the whole queue can be held to fewer compiles at once ([`CompileQueue::hold_to`]): after
//! the out-of-memory killer ended a device's worker, the compiles beside it are what the tune
//! can give up to leave the worker its memory. The hold rises again by one each time as many
//! compiles as it allows, started under it, have compiled (as a network's congestion window
//! does), until the threads are no longer held: a memory shortage that passed (a large compile,
//! another job's process) does not leave the rest of the tune compiling one at a time. The next
//! kill halves it again.

use crate::search::pipeline::CompileOrder;
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

#[derive(Default)]
struct State {
    order: CompileOrder,
    /// Candidates to compile with at most so many compiles at once, first in first out.
    spared: VecDeque<(usize, usize)>,
    /// Candidates to compile before the rest, first in first out.
    first: VecDeque<usize>,
    /// Compiles taken and not yet [`CompileQueue::done`].
    active: usize,
    /// The candidate compiling spared now, and how many compiles may run at once meanwhile.
    solo: Option<(usize, usize)>,
    /// At most so many compiles at once, whatever the threads (see [`CompileQueue::hold_to`]).
    cap: Option<usize>,
    /// The threads, the hold's ceiling: reached, the hold ends.
    ceiling: usize,
    /// Changes of the hold so far, and the change each compile running started under.
    epoch: u64,
    started: std::collections::HashMap<usize, u64>,
    /// Compiles that started under the hold now and compiled.
    calm: usize,
    closed: bool,
}

impl State {
    /// Candidates queued and not started.
    fn len(&self) -> usize {
        self.order.len() + self.spared.len() + self.first.len()
    }
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

    /// Queues candidate `index` before the rest (see the module docs).
    pub(crate) fn push_first(&self, index: usize) {
        self.lock().first.push_back(index);
        self.ready.notify_all();
    }

    /// Moves candidate `index`, if it waits in the queue's order, to the front as
    /// [`CompileQueue::push_first`] would queue it.
    pub(crate) fn promote(&self, index: usize) {
        let mut s = self.lock();
        if s.order.remove(index) {
            s.first.push_back(index);
            drop(s);
            self.ready.notify_all();
        }
    }

    /// A candidate queued by [`CompileQueue::push_first`] or [`CompileQueue::push_spared`]
    /// that may start now (the one the tune waits on may be either), without waiting; `None`
    /// when there is none. For a compile thread held back while many compiled configs wait for
    /// a device: it takes that candidate and no other. The caller says [`CompileQueue::done`].
    pub(crate) fn pop_urgent(&self) -> Option<(usize, usize)> {
        take(&mut self.lock(), true)
    }

    /// Queues candidate `index` to compile with at most `room` compiles at once, itself
    /// included (1: alone), before everything else (see the module docs).
    pub(crate) fn push_spared(&self, index: usize, room: usize) {
        self.lock().spared.push_back((index, room.max(1)));
        self.ready.notify_all();
    }

    /// The next candidate to compile (one queued spared once fewer compiles than its room run,
    /// else one queued first, else the longest predicted), waiting for one, with how many stay
    /// queued behind it; `None` once the queue is closed. The caller says
    /// [`CompileQueue::done`] when its compile has ended.
    pub(crate) fn pop(&self) -> Option<(usize, usize)> {
        let mut s = self.lock();
        loop {
            if s.closed {
                return None;
            }
            if let Some(next) = take(&mut s, false) {
                return Some(next);
            }
            // Woken when work comes or a compile ends; and now and then to see whether memory
            // was freed for a compile held back (see `room_in_memory`).
            s = self.ready.wait_timeout(s, Duration::from_millis(50)).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    /// Says that the compile of `index`, taken by [`CompileQueue::pop`], has ended.
    /// `compiled`: it gave a kernel (not a failure, a kill or a cancelled start), which counts
    /// toward raising a hold it started under (see the module docs).
    pub(crate) fn done(&self, index: usize, compiled: bool) {
        let mut s = self.lock();
        s.active = s.active.saturating_sub(1);
        if s.solo.is_some_and(|(i, _)| i == index) {
            s.solo = None;
        }
        let epoch = s.started.remove(&index);
        if let (Some(cap), true) = (s.cap, compiled && epoch == Some(s.epoch)) {
            s.calm += 1;
            if s.calm >= cap {
                s.cap = (cap + 1 < s.ceiling).then_some(cap + 1);
                s.epoch += 1;
                s.calm = 0;
            }
        }
        drop(s);
        self.ready.notify_all();
    }

    /// From now on at most `most` compiles start at once (at least one; never more than the
    /// hold now allows), rising again toward `threads` (see the module docs); those running go
    /// on. Returns the hold now.
    pub(crate) fn hold_to(&self, most: usize, threads: usize) -> usize {
        let mut s = self.lock();
        let cap = s.cap.map_or(most, |c| c.min(most)).max(1);
        s.cap = Some(cap);
        s.ceiling = threads;
        s.epoch += 1;
        s.calm = 0;
        cap
    }

    /// Compiles taken from the queue that have not ended.
    pub(crate) fn active(&self) -> usize {
        self.lock().active
    }

    /// The hold set by [`CompileQueue::hold_to`], if any.
    pub(crate) fn held_to(&self) -> Option<usize> {
        self.lock().cap
    }

    /// Drops what is queued and releases every waiting thread.
    pub(crate) fn close(&self) {
        let mut s = self.lock();
        s.closed = true;
        s.order.clear();
        s.spared.clear();
        s.first.clear();
        drop(s);
        self.ready.notify_all();
    }

    /// Re-keys every queued candidate by `predict`.
    pub(crate) fn reprioritize(&self, predict: impl Fn(usize) -> f64) {
        self.lock().order.reprioritize(predict);
    }

    /// Candidates queued and not started.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

/// The candidate that may start now (see [`CompileQueue::pop`]), with how many stay queued; with
/// `urgent` one queued first or spared only.
fn take(s: &mut State, urgent: bool) -> Option<(usize, usize)> {
    if s.closed {
        return None;
    }
    let cap = s.cap.unwrap_or(usize::MAX);
    match (s.solo, s.spared.front().copied()) {
        (None, Some((i, room))) if s.active < room.min(cap) => {
            if !room_in_memory(s) {
                return None;
            }
            s.spared.pop_front();
            s.solo = Some((i, room));
            start(s, i);
            Some((i, s.len()))
        }
        // It waits for room: nothing else starts meanwhile.
        (None, Some(_)) => None,
        (solo, _) if s.active < solo.map_or(cap, |(_, room)| room.min(cap)) => {
            if (s.first.is_empty() && (urgent || s.order.is_empty())) || !room_in_memory(s) {
                return None;
            }
            let i = s.first.pop_front().or_else(|| if urgent { None } else { s.order.pop() })?;
            start(s, i);
            Some((i, s.len()))
        }
        _ => None,
    }
}

/// Candidate `i` starts, under the hold now.
fn start(s: &mut State, i: usize) {
    s.active += 1;
    let epoch = s.epoch;
    s.started.insert(i, epoch);
}

/// Whether memory is left for another compile beside the ones running (see
/// [`crate::compiler::memory`]): always for the first (asked all the same, so that a hold ends
/// when the compiles running have all ended).
fn room_in_memory(s: &State) -> bool {
    crate::compiler::memory::fits(s.active)
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
    fn a_hold_limits_the_compiles_at_once_and_only_tightens() {
        let q = CompileQueue::default();
        for i in 0..6 {
            q.push(i, 0.0);
        }
        assert!(q.pop().is_some() && q.pop().is_some());
        assert_eq!(q.hold_to(2, 16), 2);
        assert_eq!(q.pop_urgent(), None);
        // Two run: a third waits, spared ones too, until one ends.
        q.push_spared(9, 4);
        assert_eq!(take(&mut q.lock(), false), None);
        q.done(0, false);
        assert_eq!(take(&mut q.lock(), false), Some((9, 4)));
        assert_eq!(q.hold_to(8, 16), 2, "a later, looser hold does not loosen it");
        assert_eq!((q.hold_to(0, 16), q.held_to()), (1, Some(1)), "at least one at a time");
        q.done(9, false);
        q.done(1, false);
        assert!(q.pop().is_some());
        assert_eq!(take(&mut q.lock(), false), None);
    }

    #[test]
    fn a_hold_rises_by_one_each_time_as_many_compiles_as_it_allows_have_compiled() {
        let q = CompileQueue::default();
        for i in 0..20 {
            q.push(i, 0.0);
        }
        let pop = || q.pop().unwrap().0;
        // Four run when a worker is killed: held to two. They started before the hold: their
        // ends count for nothing.
        let before: Vec<usize> = (0..4).map(|_| pop()).collect();
        assert_eq!(q.hold_to(2, 4), 2);
        for &i in &before {
            q.done(i, true);
        }
        assert_eq!(q.held_to(), Some(2));
        let (a, b) = (pop(), pop());
        assert_eq!(take(&mut q.lock(), false), None, "two at once");
        q.done(a, true);
        q.done(b, false);
        assert_eq!(q.held_to(), Some(2), "one compiled, one failed: not yet");
        let (c, d) = (pop(), pop());
        q.done(c, true);
        assert_eq!(q.held_to(), Some(3), "two compiled under a hold of two");
        // `d` started under the hold of two: its end does not count toward three.
        let e = pop();
        q.done(d, true);
        let (f, g) = (pop(), pop());
        assert_eq!(take(&mut q.lock(), false), None, "three at once");
        q.done(e, true);
        q.done(f, true);
        assert_eq!(q.held_to(), Some(3));
        q.done(g, true);
        assert_eq!(q.held_to(), None, "four is every thread: no hold");
        // The next kill holds again, from the threads.
        assert_eq!(q.hold_to(1, 4), 1);
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

    #[test]
    fn a_candidate_queued_first_goes_before_the_longest_predicted_and_stays_first() {
        let q = CompileQueue::default();
        q.push(0, 5.0);
        q.push_first(1);
        q.push(2, 9.0);
        q.push(3, 0.0);
        q.reprioritize(|i| 10.0 + i as f64);
        // A thread held back takes it, and only it.
        assert_eq!(q.pop_urgent(), Some((1, 3)));
        assert_eq!(q.pop_urgent(), None);
        // One queued in order, moved to the front; one not queued, left alone.
        q.promote(0);
        q.promote(7);
        assert_eq!((q.pop(), q.pop(), q.pop(), q.len()), (Some((0, 2)), Some((3, 1)), Some((2, 0)), 0));
        // One queued spared waits for room, even for a thread held back.
        q.push_spared(4, 2);
        q.push(5, 0.0);
        assert_eq!(q.pop_urgent(), None, "4 compiles run");
        for i in [1, 0, 3] {
            q.done(i, false);
        }
        assert_eq!((q.pop_urgent(), q.pop_urgent()), (Some((4, 1)), None));
    }

    #[test]
    fn a_candidate_queued_spared_waits_for_room_and_keeps_it() {
        let q = CompileQueue::default();
        for i in 0..6 {
            q.push(i, 0.0);
        }
        assert_eq!((q.pop(), q.pop(), q.pop()), (Some((0, 5)), Some((1, 4)), Some((2, 3))));
        q.push_spared(9, 2);
        std::thread::scope(|s| {
            // Three compiles run: it waits until fewer than two do, and nothing else starts.
            let t = s.spawn(|| q.pop());
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!t.is_finished(), "started beside three running compiles");
            q.done(0, false);
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!t.is_finished(), "started beside two running compiles");
            q.done(1, false);
            assert_eq!(t.join().unwrap(), Some((9, 3)));
            // It and compile 2 run: no other starts until one has ended.
            let u = s.spawn(|| q.pop());
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!u.is_finished(), "a third compile beside it");
            q.done(2, false);
            assert_eq!(u.join().unwrap(), Some((3, 2)));
            q.done(9, false);
        });
        // Once it has ended, the room is the threads' again.
        assert_eq!((q.pop(), q.pop()), (Some((4, 1)), Some((5, 0))));
    }

    #[test]
    fn a_candidate_queued_alone_waits_for_the_running_compiles_and_runs_alone() {
        let q = CompileQueue::default();
        for i in 0..3 {
            q.push(i, 0.0);
        }
        assert_eq!(q.pop(), Some((0, 2)));
        q.push_spared(9, 1);
        std::thread::scope(|s| {
            // Compile 0 is running: the one queued alone waits for it, and nothing else starts.
            let t = s.spawn(|| q.pop());
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!t.is_finished(), "started beside a running compile");
            q.done(0, false);
            assert_eq!(t.join().unwrap(), Some((9, 2)));
            // While it compiles, no other compile starts.
            let u = s.spawn(|| q.pop());
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!u.is_finished(), "started beside the compile running alone");
            q.done(9, false);
            assert_eq!(u.join().unwrap(), Some((1, 1)));
        });
        q.push_spared(8, 1);
        q.close();
        assert_eq!((q.pop(), q.len()), (None, 0));
    }
}
