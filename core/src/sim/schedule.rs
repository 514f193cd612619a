//! Simulated wall time: the search loop's compile pipeline replayed in virtual time on a
//! recorded space's compile and evaluation seconds.
//!
//! `threads` compile threads drain a queue ordered by predicted compile time; one measuring
//! thread evaluates compiled configs in the order they finish, tells the strategy and asks it
//! for more, with the loop's own policy ([`pipeline`]): how many proposals are in flight, when
//! compiling is the bottleneck, and the compile-time model that re-keys the queue. Compiles
//! take their recorded seconds (recorded one at a time: contention between concurrent compiles
//! is not modelled, nor opening the device or making the reference). It answers what an order
//! buys on a given space: the same run with first-in-first-out order and with the true compile
//! times as the prediction, and the lower bound no order can beat.

use crate::search::pipeline::{self, CompileOrder, CompileTimes, Spent};
use crate::search::strategy::{by_name, Candidates, Outcome, Strategy};
use crate::sim::recorded::RecordedSpace;
use crate::FailureKind;
use serde::Serialize;
use std::collections::VecDeque;

/// How queued compiles are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// The tuner's: longest predicted first while compiling is the bottleneck.
    Model,
    /// First in, first out.
    Fifo,
    /// Longest first by the true (recorded) compile seconds: an oracle.
    Oracle,
}

/// One simulated tune.
#[derive(Clone, Debug, Serialize)]
pub struct Schedule {
    /// Configs evaluated.
    pub evaluated: usize,
    /// Virtual seconds until the last evaluation ended.
    pub wall_s: f64,
    /// Compile seconds summed.
    pub compile_s: f64,
    /// Compile seconds ÷ (wall × threads).
    pub efficiency: f64,
    /// What no order of these compiles can beat: the larger of their sum over the threads and
    /// the longest one.
    pub bound_s: f64,
    /// Compiles the tail watch stopped waiting for (their evaluations went to other configs).
    pub abandoned: f64,
}

/// A compile running on a thread: candidate, start and end.
struct Running {
    index: usize,
    start: f64,
    end: f64,
}

struct Sim<'s> {
    space: &'s RecordedSpace,
    /// The tuner's compile-tail watch ([`crate::search::tail`]), when on.
    tail: Option<crate::search::tail::Tail>,
    /// Since when (virtual seconds) nothing but compiles has been running, if so.
    idle_since: Option<f64>,
    cands: Candidates<'s>,
    strat: Box<dyn Strategy>,
    adaptive: bool,
    order: Order,
    threads: usize,
    budget: usize,
    times: CompileTimes,
    /// Queued, in the loop's order.
    queue: CompileOrder,
    running: Vec<Running>,
    arrived: VecDeque<usize>,
    evaluated: Vec<bool>,
    in_flight: Vec<bool>,
    count: usize,
    flying: usize,
    compile: Spent,
    eval: Spent,
    done: Vec<usize>,
    /// Virtual seconds since the tune began.
    now: f64,
    /// The time limit (virtual seconds), when the tune has one.
    limit: Option<f64>,
    /// When the first evaluation ended (the pace [`Sim::left_in_time`] goes by is taken from
    /// then, as in the search loop).
    first_timed: Option<f64>,
    /// When each evaluation ended, and its config.
    ends: Vec<(f64, usize)>,
}

impl Sim<'_> {
    fn compile_secs(&self, i: usize) -> Result<f64, String> {
        self.space.compile_s[i].filter(|s| *s > 0.0).ok_or_else(|| {
            format!(
                "config {} has no recorded compile time; simulating wall time needs every config's compile time (Kernel Tuner's `compile_time`, a T4 file's `times.compilation`)",
                self.space.config_text(i)
            )
        })
    }

    fn outcome(&self, i: usize) -> Outcome {
        match self.space.times[i] {
            Some(t) => Outcome::Time(t),
            None => Outcome::Failed(FailureKind::Other),
        }
    }

    fn priority(&self, i: usize) -> Result<f64, String> {
        Ok(match self.order {
            Order::Fifo => 0.0,
            Order::Oracle => self.compile_secs(i)?,
            Order::Model => self.predicted(i),
        })
    }

    /// The loop's key: the predicted compile seconds while compiling is the bottleneck.
    fn predicted(&self, i: usize) -> f64 {
        let (compile, eval) = pipeline::spent_or_expected(self.compile, self.eval, self.strat.expected_seconds());
        if pipeline::compile_bound(compile, eval, self.threads) {
            self.times.predict(&self.cands, i)
        } else {
            0.0
        }
    }

    /// Evaluations the time limit still allows beyond those in flight, at the pace since the
    /// first evaluation ended (the search loop's estimate, told to the strategy before it is
    /// asked); `None` without a limit or before two evaluations ended.
    fn left_in_time(&self) -> Option<usize> {
        pipeline::evaluations_left_in_time(self.now - self.first_timed?, self.eval.1, self.limit? - self.now, self.flying)
    }

    /// Whether the time limit has come.
    fn out_of_time(&self) -> bool {
        self.limit.is_some_and(|l| self.now >= l)
    }

    /// The loop's `feed`: asks for work until enough is in flight, queues the fresh.
    fn feed(&mut self) -> Result<(), String> {
        if self.out_of_time() {
            return Ok(());
        }
        let (compile, eval) = pipeline::spent_or_expected(self.compile, self.eval, self.strat.expected_seconds());
        let capacity = pipeline::capacity(compile, eval, self.threads, self.adaptive);
        let mut idle = 0;
        while self.flying < capacity && self.count + self.flying < self.budget && idle < 1000 {
            let room = self.budget - self.count - self.flying;
            if let Some(left) = self.left_in_time() {
                self.strat.evaluations_left_in_time(left);
            }
            let asked = self.strat.ask(&self.cands, (capacity - self.flying).min(room));
            if asked.is_empty() {
                return Ok(());
            }
            let mut fresh = 0;
            for i in asked {
                if i >= self.space.len() {
                    return Err(format!("the strategy proposed index {i} outside the space"));
                }
                if self.in_flight[i] {
                    continue;
                } else if self.evaluated[i] {
                    let o = self.outcome(i);
                    self.strat.tell(i, &o);
                } else if self.count + self.flying < self.budget {
                    self.in_flight[i] = true;
                    self.flying += 1;
                    let p = self.priority(i)?;
                    self.queue.push(i, p);
                    fresh += 1;
                }
            }
            idle = if fresh == 0 { idle + 1 } else { 0 };
        }
        Ok(())
    }

    /// A compiled config reaches the measuring thread at `now`: the model learns from it (and
    /// from the compiles still running), and the queue is re-keyed when it was refitted.
    fn arrive(&mut self, i: usize, now: f64) -> Result<f64, String> {
        let secs = self.compile_secs(i)?;
        self.compile = (self.compile.0 + secs, self.compile.1 + 1);
        if self.order == Order::Model && self.times.observe(i, secs, false) {
            let running: Vec<(usize, f64)> = self.running.iter().map(|r| (r.index, now - r.start)).collect();
            if self.times.refit(&self.cands, &running) {
                let mut queue = std::mem::take(&mut self.queue);
                queue.reprioritize(|j| self.predicted(j));
                self.queue = queue;
            }
        }
        Ok(self.space.eval_s[i].unwrap_or(0.0))
    }
}

/// Simulates one tune of `space` by `strategy` with `threads` compile threads, queued compiles
/// in `order`, up to `budget` evaluations; with `tail`, the tuner's compile-tail watch at that
/// factor (see [`crate::search::tail`]: with only compiles past the limit left, it waits a mean
/// compile's time, then gives their evaluations to other configs; a strategy that needs every
/// config waits).
pub fn schedule(space: &RecordedSpace, strategy: &str, budget: usize, seed: u64, threads: usize, order: Order, tail: Option<f64>) -> Result<Schedule, String> {
    schedule_with_prior(space, strategy, budget, seed, threads, order, tail, None)
}

/// [`schedule`], the compile-time model starting from other devices' recorded compile seconds
/// per config ([`crate::search::Prior::compile_s`]), as a tune with priors does.
#[allow(clippy::too_many_arguments)]
pub fn schedule_with_prior(
    space: &RecordedSpace,
    strategy: &str,
    budget: usize,
    seed: u64,
    threads: usize,
    order: Order,
    tail: Option<f64>,
    prior: Option<&[f32]>,
) -> Result<Schedule, String> {
    replay(space, by_name(strategy, seed)?, budget, seed, threads, order, tail, prior, None).map(|(s, _)| s)
}

/// One simulated tune under a time limit, in virtual time.
#[derive(Clone, Debug)]
pub struct TimedRun {
    /// When each evaluation ended (virtual seconds from the start), and its candidate, in order.
    pub ends: Vec<(f64, usize)>,
    /// The tune's account; its `wall_s` is when it ended (the limit, or sooner when the strategy
    /// had nothing more to propose).
    pub schedule: Schedule,
}

/// Simulates a tune of `space` by `strat` (made with `seed`) with `threads` compile threads that
/// ends at `limit` virtual seconds, as the tuner runs one with a time budget: its compile order,
/// its compile-tail watch at the default factor, and the strategy told before each ask how many
/// evaluations the time left allows at the pace so far ([`Strategy::evaluations_left_in_time`]).
/// Evaluations that end by the limit count; a tune whose strategy has nothing more to propose
/// ends sooner. Compiles and evaluations take their recorded seconds (one at a time; contention
/// between compiles, opening the device and making the reference are not modelled).
pub fn timed(space: &RecordedSpace, strat: Box<dyn Strategy>, seed: u64, threads: usize, limit: f64) -> Result<TimedRun, String> {
    let tail = strat.replaceable().then_some(crate::search::tail::DEFAULT_FACTOR);
    replay(space, strat, space.len(), seed, threads, Order::Model, tail, None, Some(limit)).map(|(schedule, ends)| TimedRun { ends, schedule })
}

/// The replay behind [`schedule_with_prior`] and [`timed`]: also when each evaluation ended.
#[allow(clippy::too_many_arguments)]
fn replay(
    space: &RecordedSpace,
    strat: Box<dyn Strategy>,
    budget: usize,
    seed: u64,
    threads: usize,
    order: Order,
    tail: Option<f64>,
    prior: Option<&[f32]>,
    limit: Option<f64>,
) -> Result<(Schedule, Vec<(f64, usize)>), String> {
    // As in the search loop: only a strategy that queues its proposals ahead is ordered by the
    // prior (an adaptive one keeps only as many in flight as keep the threads busy).
    let prior = prior.filter(|_| !strat.adaptive());
    let threads = threads.max(1);
    let tail = tail.filter(|_| strat.replaceable()).map(|k| crate::search::tail::Tail::new(Some(k)));
    let mut s = Sim {
        space,
        tail,
        idle_since: None,
        cands: Candidates { params: &space.params, coords: &space.coords },
        adaptive: strat.adaptive(),
        strat,
        order,
        threads,
        budget,
        times: CompileTimes::new(seed).with_prior(prior.unwrap_or_default()),
        queue: CompileOrder::default(),
        running: Vec::new(),
        arrived: VecDeque::new(),
        evaluated: vec![false; space.len()],
        in_flight: vec![false; space.len()],
        count: 0,
        flying: 0,
        compile: (0.0, 0),
        eval: (0.0, 0),
        done: Vec::new(),
        now: 0.0,
        limit,
        first_timed: None,
        ends: Vec::new(),
    };
    // The config being measured, and when that ends.
    let mut measuring: Option<(usize, f64, f64)> = None;
    s.feed()?;
    loop {
        while s.running.len() < threads {
            let Some(i) = s.queue.pop() else { break };
            let secs = s.compile_secs(i)?;
            s.running.push(Running { index: i, start: s.now, end: s.now + secs });
        }
        if measuring.is_none() {
            if let Some(i) = s.arrived.pop_front() {
                let e = s.arrive(i, s.now)?;
                measuring = Some((i, e, s.now + e));
                continue;
            }
        }
        let next_compile = s.running.iter().map(|r| r.end).fold(f64::INFINITY, f64::min);
        // The tail watch: only compiles left, all past the limit; after a mean compile's wait
        // they are abandoned and their evaluations go to other configs.
        let idle = measuring.is_none() && s.arrived.is_empty() && s.queue.is_empty() && !s.running.is_empty();
        if !idle {
            s.idle_since = None;
        }
        let give_up = match (&mut s.tail, idle) {
            (Some(t), true) => {
                let since = *s.idle_since.get_or_insert(s.now);
                t.limit().map(|limit| {
                    let past = s.running.iter().map(|r| r.start + limit).fold(since, f64::max);
                    past + t.patience()
                })
            }
            _ => None,
        };
        // The next event: the tail watch giving up, a measurement ending, or a compile ending. A
        // tune with a time limit ends at the limit when that comes first.
        let next = give_up.filter(|&at| at < next_compile).or(measuring.map(|m| m.2).filter(|&end| end <= next_compile)).unwrap_or(next_compile);
        if let Some(l) = limit.filter(|&l| next.is_finite() && next > l) {
            s.now = s.now.max(l);
            break;
        }
        if let Some(at) = give_up.filter(|&at| at < next_compile) {
            s.now = at;
            for r in std::mem::take(&mut s.running) {
                let t = s.tail.as_mut().expect("watching");
                if !t.record(String::new(), s.now - r.start, "tail", true) {
                    s.count += 1;
                }
                s.in_flight[r.index] = false;
                s.flying -= 1;
                s.evaluated[r.index] = true;
                s.strat.tell(r.index, &Outcome::Failed(FailureKind::TimedOut));
            }
            s.idle_since = None;
            if s.count >= budget {
                break;
            }
            s.feed()?;
            continue;
        }
        match measuring {
            Some((i, e, end)) if end <= next_compile => {
                s.now = end;
                measuring = None;
                s.eval = (s.eval.0 + e, s.eval.1 + 1);
                s.in_flight[i] = false;
                s.flying -= 1;
                s.evaluated[i] = true;
                s.count += 1;
                s.done.push(i);
                s.ends.push((s.now, i));
                s.first_timed.get_or_insert(s.now);
                let o = s.outcome(i);
                s.strat.tell(i, &o);
                if s.count >= budget {
                    break;
                }
                s.feed()?;
            }
            _ if next_compile.is_finite() => {
                s.now = next_compile;
                let now = s.now;
                let (finished, still): (Vec<Running>, Vec<Running>) = s.running.drain(..).partition(|r| r.end <= now);
                s.running = still;
                for r in finished {
                    // The tail learns of a compile when it ends, as in the search loop.
                    let secs = s.compile_secs(r.index)?;
                    if let Some(t) = &mut s.tail {
                        t.finished(secs, false, 0);
                    }
                    s.arrived.push_back(r.index);
                }
            }
            _ => break,
        }
    }
    let secs: Vec<f64> = s.done.iter().map(|&i| s.compile_secs(i)).collect::<Result<_, _>>()?;
    let sum: f64 = secs.iter().sum();
    let bound = (sum / threads as f64).max(secs.iter().copied().fold(0.0, f64::max));
    let now = s.now;
    let schedule = Schedule {
        evaluated: s.count,
        wall_s: now,
        compile_s: sum,
        efficiency: if now > 0.0 { sum / (now * threads as f64) } else { 0.0 },
        bound_s: bound,
        abandoned: s.tail.as_ref().map_or(0, |t| t.replaced()) as f64,
    };
    Ok((schedule, s.ends))
}

/// The tuner's order against first-in-first-out and the oracle, mean over seeds.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Space name.
    pub space: String,
    /// Strategy name.
    pub strategy: String,
    /// Seeds run.
    pub repeats: usize,
    /// With the tuner's order ([`Order::Model`]), the compile-tail watch off.
    pub model: Schedule,
    /// The same with the tail watch at its default factor, as the tuner runs by default.
    pub tail: Schedule,
    /// First in, first out.
    pub fifo: Schedule,
    /// The true compile times as the order.
    pub oracle: Schedule,
    /// The tuner's order starting from the other spaces' recorded compile times (leave one
    /// out), where they were given and the strategy queues its proposals ahead (not adaptive).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet: Option<Schedule>,
}

/// Runs `repeats` seeds (in parallel) in each order and averages.
pub fn compare(
    space: &RecordedSpace,
    strategy: &str,
    budget: usize,
    repeats: usize,
    seed: u64,
    threads: usize,
    prior: Option<&[f32]>,
) -> Result<Comparison, String> {
    use rayon::prelude::*;
    let prior = prior.filter(|_| by_name(strategy, seed).is_ok_and(|s| !s.adaptive()));
    let runs: Vec<[Schedule; 5]> = (0..repeats.max(1) as u64)
        .into_par_iter()
        .map(|r| {
            let seed = seed.wrapping_add(r * 7919);
            let one = |o, tail| schedule(space, strategy, budget, seed, threads, o, tail);
            let model = one(Order::Model, None)?;
            // Without a prior the slot holds the model's run again (not reported), not a rerun.
            let fleet = match prior {
                Some(p) => schedule_with_prior(space, strategy, budget, seed, threads, Order::Model, None, Some(p))?,
                None => model.clone(),
            };
            let orders = [model, one(Order::Fifo, None)?, one(Order::Oracle, None)?, one(Order::Model, Some(crate::search::tail::DEFAULT_FACTOR))?, fleet];
            crate::sim::simulate::run_finished();
            Ok(orders)
        })
        .collect::<Result<_, String>>()?;
    let n = runs.len() as f64;
    let mean = |k: usize| {
        let m = |f: &dyn Fn(&Schedule) -> f64| runs.iter().map(|r| f(&r[k])).sum::<f64>() / n;
        Schedule {
            evaluated: m(&|s| s.evaluated as f64).round() as usize,
            wall_s: m(&|s| s.wall_s),
            compile_s: m(&|s| s.compile_s),
            efficiency: m(&|s| s.efficiency),
            bound_s: m(&|s| s.bound_s),
            abandoned: m(&|s| s.abandoned),
        }
    };
    Ok(Comparison {
        space: space.name.clone(),
        strategy: strategy.into(),
        repeats: runs.len(),
        model: mean(0),
        fifo: mean(1),
        oracle: mean(2),
        tail: mean(3),
        fleet: prior.map(|_| mean(4)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::job::Param;

    /// A space where compile seconds grow with `tile` (1, 2, 4, 8 → 1, 4, 16, 64 s) and
    /// `block` does not matter.
    fn space() -> RecordedSpace {
        let params = vec![Param::new("tile", [1, 2, 4, 8]), Param::new("block", [32, 64, 128, 256, 512, 1024])];
        let coords: Vec<Vec<u32>> = (0..6).flat_map(|b| (0..4).map(move |t| vec![t, b])).collect();
        let n = coords.len();
        let compile_s = coords.iter().map(|c| Some(f64::from(1u32 << (2 * c[0])))).collect();
        let times = coords.iter().map(|c| Some(1.0 + f64::from(c[1]))).collect();
        RecordedSpace { compile_s, eval_s: vec![Some(0.01); n], ..RecordedSpace::from_times("synthetic", params, coords, times) }
    }

    #[test]
    fn one_thread_takes_the_sum_and_the_bound_holds() {
        let sp = space();
        let s = schedule(&sp, "random", 24, 1, 1, Order::Fifo, None).unwrap();
        let sum: f64 = sp.compile_s.iter().flatten().sum();
        assert_eq!(s.evaluated, 24);
        assert!((s.compile_s - sum).abs() < 1e-9);
        // One thread: every compile back to back, then the last evaluation.
        assert!((s.wall_s - sum - 0.01).abs() < 1e-9, "{}", s.wall_s);
        for order in [Order::Model, Order::Fifo, Order::Oracle] {
            for strategy in ["random", "hybrid"] {
                let s = schedule(&sp, strategy, 20, 3, 4, order, None).unwrap();
                assert!(s.wall_s >= s.bound_s && s.efficiency <= 1.0, "{strategy} {order:?} {s:?}");
            }
        }
    }

    #[test]
    fn longest_first_beats_first_in_first_out_when_slow_compiles_come_last() {
        // Exhaustive proposes tile 1, 2, 4, 8 per block: each block's 64 s compile is queued
        // last, so in arrival order the final ones start late.
        let sp = space();
        let fifo = schedule(&sp, "exhaustive", 24, 1, 4, Order::Fifo, None).unwrap();
        let oracle = schedule(&sp, "exhaustive", 24, 1, 4, Order::Oracle, None).unwrap();
        let model = schedule(&sp, "exhaustive", 24, 1, 4, Order::Model, None).unwrap();
        assert!(oracle.wall_s < fifo.wall_s, "{oracle:?} {fifo:?}");
        assert!(model.wall_s < fifo.wall_s, "the model learns tile from the first compiles: {model:?} {fifo:?}");
        // Another machine's compile times, twice as long, order like the oracle from the start.
        let prior: Vec<f32> = sp.compile_s.iter().map(|c| 2.0 * c.unwrap() as f32).collect();
        let fleet = schedule_with_prior(&sp, "exhaustive", 24, 1, 4, Order::Model, None, Some(&prior)).unwrap();
        assert_eq!(fleet.wall_s, oracle.wall_s, "{fleet:?} {oracle:?}");
        assert!(fleet.wall_s < model.wall_s, "{fleet:?} {model:?}");
        // An adaptive strategy keeps too few proposals queued: the prior is not used.
        let hybrid = |p| schedule_with_prior(&sp, "hybrid", 20, 1, 4, Order::Model, None, p).unwrap().wall_s;
        assert_eq!(hybrid(Some(&prior)), hybrid(None));
    }

    #[test]
    fn the_tail_watch_replaces_a_pathological_compile_and_leaves_bounded_ones() {
        // Three configs compile for 1,000 s, the others for 1 s; 12 of 24 on 4 threads.
        let mut sp = space();
        for (i, c) in sp.compile_s.iter_mut().enumerate() {
            *c = Some(if i % 8 == 3 { 1000.0 } else { 1.0 });
        }
        let mut held = 0;
        for seed in 0..5 {
            let off = schedule(&sp, "random", 12, seed, 4, Order::Model, None).unwrap();
            let on = schedule(&sp, "random", 12, seed, 4, Order::Model, Some(3.0)).unwrap();
            assert_eq!(on.evaluated, 12, "{on:?}");
            if off.wall_s > 1000.0 {
                held += 1;
                assert!(on.abandoned >= 1.0 && on.wall_s < 20.0, "seed {seed}: {on:?} against {off:?}");
            } else {
                assert_eq!((on.abandoned, on.wall_s), (0.0, off.wall_s), "seed {seed}");
            }
        }
        assert!(held >= 2, "the seeds propose a slow config: {held} of 5");
        // Exhaustive needs every config: it waits.
        let ex = schedule(&sp, "exhaustive", 24, 0, 4, Order::Model, Some(3.0)).unwrap();
        assert!(ex.abandoned == 0.0 && ex.wall_s >= 1000.0, "{ex:?}");
        // Bounded compiles (1-64 s): waiting a mean compile, then replacing, costs no more
        // than twice the time without the watch on these seeds.
        let sp = space();
        for seed in 0..5 {
            let on = schedule(&sp, "random", 12, seed, 4, Order::Model, Some(3.0)).unwrap();
            let off = schedule(&sp, "random", 12, seed, 4, Order::Model, None).unwrap();
            assert!(on.wall_s <= off.wall_s * 2.0 + 1e-9, "ski rental: at most twice: {on:?} {off:?}");
        }
    }

    #[test]
    fn a_space_without_compile_times_is_one_clear_error() {
        let mut sp = space();
        sp.compile_s[3] = None;
        let e = schedule(&sp, "exhaustive", 24, 1, 4, Order::Model, None).unwrap_err();
        assert!(e.contains("tile=8, block=32") && e.contains("compile_time"), "{e}");
    }
}
