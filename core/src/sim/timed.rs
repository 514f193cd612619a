//! Strategies scored against time: a tune with a time budget, simulated in virtual time on a
//! recorded space's compile and evaluation seconds ([`crate::sim::schedule::timed`]).
//!
//! Where [`crate::sim::simulate`] scores the fraction of optimum after each evaluation, this
//! scores it after each simulated second, as the tuner's `--budget 5m` spends its time: a
//! strategy whose proposals compile slowly, or that keeps the compile threads idle, finds less
//! in the same minutes than its count of evaluations says. The pick at a time is the fastest
//! config measured by then (its recorded time); before the first evaluation ends it scores 0.

use crate::search::prior::Prior;
use crate::search::strategy::{by_name, Strategy};
use crate::sim::recorded::RecordedSpace;
use crate::sim::schedule::timed;
use crate::sim::simulate::{over_seeds, prior_for, run_finished, PriorKind};
use rayon::prelude::*;
use serde::Serialize;
use std::sync::Arc;

/// Points of the curve between the start and the limit (the times asked for are added).
const GRID: usize = 200;

/// Mean and spread of the fraction of optimum over seeds, against simulated seconds.
#[derive(Clone, Debug, Serialize)]
pub struct TimedScore {
    /// Strategy name.
    pub strategy: String,
    /// Space name.
    pub space: String,
    /// The simulated seconds the curve is read at, ascending (the last is the limit).
    pub seconds: Vec<f64>,
    /// Mean fraction of optimum at each of `seconds`.
    pub mean: Vec<f64>,
    /// Standard deviation over seeds at each of `seconds`.
    pub std: Vec<f64>,
    /// The 5th percentile over seeds at each of `seconds`.
    pub p5: Vec<f64>,
    /// Seeds run.
    pub repeats: usize,
    /// Evaluations that ended by each of `seconds`, on the mean over seeds.
    pub done: Vec<f64>,
}

impl TimedScore {
    /// The index of the grid point at `secs` (the last at or before it).
    fn index(&self, secs: f64) -> usize {
        self.seconds.iter().rposition(|&s| s <= secs + 1e-9).unwrap_or(0)
    }

    /// Mean and std at `secs` simulated seconds.
    pub fn at(&self, secs: f64) -> (f64, f64) {
        let i = self.index(secs);
        (self.mean[i], self.std[i])
    }

    /// The 5th percentile at `secs` simulated seconds.
    pub fn p5_at(&self, secs: f64) -> f64 {
        self.p5[self.index(secs)]
    }

    /// Evaluations ended by `secs` simulated seconds, on the mean over seeds.
    pub fn done_at(&self, secs: f64) -> f64 {
        self.done[self.index(secs)]
    }

    /// Evaluations that ended within the limit (the grid's last point), on the mean over seeds.
    pub fn evaluations(&self) -> f64 {
        self.done.last().copied().unwrap_or(0.0)
    }
}

/// The grid a curve is read at: 200 even steps to `limit`, with the times in `at`.
pub fn grid(limit: f64, at: &[f64]) -> Vec<f64> {
    let mut g: Vec<f64> = (1..=GRID).map(|k| limit * k as f64 / GRID as f64).chain(at.iter().copied().filter(|&s| s > 0.0 && s <= limit)).collect();
    g.sort_by(f64::total_cmp);
    g.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    g
}

/// Checks that `space` recorded what a time limit is simulated on: every config's compile
/// seconds, and the evaluation seconds of those that ran.
fn check_seconds(space: &RecordedSpace) -> Result<(), String> {
    if let Some(i) = (0..space.len()).find(|&i| space.compile_s[i].is_none_or(|s| s <= 0.0)) {
        return Err(format!(
            "config {} has no recorded compile time; simulating a time budget needs every config's compile time (Kernel Tuner's `compile_time`, a T4 file's `times.compilation`, a kerntune report's `compile_seconds`, which a config read from the compile cache or the database lacks: tune with KERNTUNE_NO_COMPILE_CACHE=1 and --no-db to record them): give a budget of evaluations instead (--budget 200)",
            space.config_text(i)
        ));
    }
    if let Some(i) = (0..space.len()).find(|&i| space.times[i].is_some() && space.eval_s[i].is_none()) {
        return Err(format!(
            "config {} has no recorded evaluation time; simulating a time budget needs the seconds each config's measurement took (Kernel Tuner's `benchmark_time` and `verification_time`, a T4 file's `times.benchmark` and `times.validation`, a kerntune report's `eval_seconds`): give a budget of evaluations instead (--budget 200)",
            space.config_text(i)
        ));
    }
    Ok(())
}

/// One run read at each point of `grid`: the fraction of optimum of the fastest config whose
/// evaluation ended by then, and how many evaluations had ended.
fn curve(space: &RecordedSpace, ends: &[(f64, usize)], grid: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let opt = space.optimum();
    let mut best = f64::INFINITY;
    let mut k = 0;
    grid.iter()
        .map(|&g| {
            while k < ends.len() && ends[k].0 <= g + 1e-9 {
                if let Some(t) = space.times[ends[k].1] {
                    best = best.min(t);
                }
                k += 1;
            }
            (if best.is_finite() { opt / best } else { 0.0 }, k as f64)
        })
        .unzip()
}

/// Runs `repeats` seeds (in parallel) of the strategies `make` builds, each a tune with `threads`
/// compile threads that ends at `limit` simulated seconds, and reads their curves at `grid`
/// ([`grid`]); reported as `label`.
#[allow(clippy::too_many_arguments)]
pub fn score_in_time(
    space: &RecordedSpace,
    label: &str,
    make: impl Fn(u64) -> Box<dyn Strategy> + Sync,
    limit: f64,
    repeats: usize,
    seed: u64,
    threads: usize,
    grid: &[f64],
) -> Result<TimedScore, String> {
    check_seconds(space)?;
    let runs: Vec<(Vec<f64>, Vec<f64>)> = (0..repeats as u64)
        .into_par_iter()
        .map(|r| {
            let s = seed.wrapping_add(r * 7919);
            let run = timed(space, make(s), s, threads.max(1), limit).map(|t| curve(space, &t.ends, grid));
            run_finished();
            run
        })
        .collect::<Result<_, _>>()?;
    let (curves, done): (Vec<Vec<f64>>, Vec<Vec<f64>>) = runs.into_iter().unzip();
    let (mean, std, p5) = over_seeds(&curves, grid.len());
    Ok(TimedScore {
        strategy: label.into(),
        space: space.name.clone(),
        seconds: grid.to_vec(),
        mean,
        std,
        p5,
        repeats: curves.len(),
        done: over_seeds(&done, grid.len()).0,
    })
}

/// [`score_in_time`] of the strategy named `strategy`.
pub fn score_named_in_time(
    space: &RecordedSpace,
    strategy: &str,
    limit: f64,
    repeats: usize,
    seed: u64,
    threads: usize,
    grid: &[f64],
) -> Result<TimedScore, String> {
    by_name(strategy, seed)?;
    score_in_time(space, strategy, |s| by_name(strategy, s).expect("checked above"), limit, repeats, seed, threads, grid)
}

/// [`crate::sim::simulate::leave_one_out`] under a time limit: each space in turn as the device
/// never seen, with the others as its priors, scored against simulated seconds for the search
/// without priors (`base`), plain transfer and the adaptive transfer search (which, told no
/// count of evaluations, goes by what the time left allows at its pace, as in a tune with a time
/// budget). Spaces no other one can be a prior of are returned second, with the reason.
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub fn leave_one_out_in_time(
    spaces: &[RecordedSpace],
    base: &str,
    limit: f64,
    repeats: usize,
    seed: u64,
    threads: usize,
    grid: &[f64],
) -> Result<(Vec<(PriorKind, TimedScore)>, Vec<(String, String)>), String> {
    by_name(base, seed)?;
    let mut out = Vec::new();
    let mut alone = Vec::new();
    for (h, held) in spaces.iter().enumerate() {
        let others: Vec<&RecordedSpace> = spaces.iter().enumerate().filter(|(o, _)| *o != h).map(|(_, s)| s).collect();
        let prior: Arc<Prior> = Arc::new(prior_for(held, &others));
        if prior.is_empty() {
            alone.push((held.name.clone(), prior.refused.first().cloned().unwrap_or_else(|| "no other space".into())));
            continue;
        }
        out.push((PriorKind::None, score_named_in_time(held, base, limit, repeats, seed, threads, grid)?));
        let p = prior.clone();
        out.push((
            PriorKind::Plain,
            score_in_time(held, "plain transfer", move |_| Box::new(crate::search::PlainTransfer::new(p.clone())), limit, repeats, seed, threads, grid)?,
        ));
        let adaptive =
            |s: u64| -> Box<dyn Strategy> { Box::new(crate::search::Transfer::adaptive(prior.clone(), || by_name(base, s), None).expect("checked above")) };
        out.push((PriorKind::Adaptive, score_in_time(held, "transfer", adaptive, limit, repeats, seed, threads, grid)?));
    }
    Ok((out, alone))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::job::Param;

    /// 64 configs: `tile` sets the compile seconds (1, 4, 16, 64 s), `block` the time, and the
    /// fastest config (block 4, tile 8) compiles slowest.
    fn space() -> RecordedSpace {
        let params = vec![Param::new("tile", [1, 2, 4, 8]), Param::new("block", (1..=16).collect::<Vec<i64>>())];
        let coords: Vec<Vec<u32>> = (0..16).flat_map(|b| (0..4).map(move |t| vec![t, b])).collect();
        let n = coords.len();
        let compile_s = coords.iter().map(|c| Some(f64::from(1u32 << (2 * c[0])))).collect();
        let times = coords.iter().map(|c| Some(1.0 + (f64::from(c[1]) - 3.0).abs() + if c[0] == 3 { 0.0 } else { 0.5 })).collect();
        RecordedSpace { compile_s, eval_s: vec![Some(0.1); n], ..RecordedSpace::from_times("synthetic", params, coords, times) }
    }

    #[test]
    fn a_curve_in_time_rises_to_what_the_limit_allows() {
        let sp = space();
        let g = grid(60.0, &[10.0, 30.0]);
        assert_eq!((g.len(), g[0], *g.last().unwrap()), (201, 0.3, 60.0), "30 s is on the even grid already, 10 s is added");
        assert!(g.contains(&10.0) && g.contains(&30.0));
        let s = score_named_in_time(&sp, "random", 60.0, 8, 1, 1, &g).unwrap();
        // Scores never fall, and nothing is found before the first compile (at least 1 s) ends.
        for w in s.mean.windows(2) {
            assert!(w[1] >= w[0] - 1e-12, "{:?}", s.mean);
        }
        assert_eq!(s.at(0.5).0, 0.0);
        assert!(s.at(60.0).0 > 0.0 && s.at(60.0).0 <= 1.0);
        // One compile thread in 60 s: at most 60 one-second compiles end, fewer with slow ones.
        assert!(s.evaluations() > 1.0 && s.evaluations() <= 60.0, "{}", s.evaluations());
        assert!(s.done_at(30.0) <= s.done_at(60.0) && s.done_at(60.0) == s.evaluations() && s.done_at(0.5) == 0.0, "{:?}", s.done);
        // More compile threads in the same time: more evaluations, and no worse a pick.
        let wide = score_named_in_time(&sp, "random", 60.0, 8, 1, 8, &g).unwrap();
        assert!(wide.evaluations() > 2.0 * s.evaluations(), "{} against {}", wide.evaluations(), s.evaluations());
        assert!(wide.at(60.0).0 >= s.at(60.0).0 - 1e-12);
        // Exhaustive with the time to evaluate everything finds the optimum; the run ends once
        // the space is exhausted, before the limit.
        let all = score_named_in_time(&sp, "exhaustive", 10_000.0, 1, 1, 4, &grid(10_000.0, &[])).unwrap();
        assert_eq!((all.at(10_000.0).0, all.evaluations()), (1.0, 64.0));
    }

    #[test]
    fn a_run_ends_at_its_limit_and_tells_the_strategy_the_time_left() {
        let sp = space();
        let run = timed(&sp, by_name("hybrid", 3).unwrap(), 3, 2, 25.0).unwrap();
        assert!(run.ends.iter().all(|e| e.0 <= 25.0), "{:?}", run.ends);
        assert!(run.ends.windows(2).all(|w| w[0].0 <= w[1].0));
        assert_eq!(run.schedule.wall_s, 25.0);
        // The same tune without a limit goes on past it with the same first evaluations.
        let longer = timed(&sp, by_name("hybrid", 3).unwrap(), 3, 2, 1e6).unwrap();
        assert!(longer.ends.len() > run.ends.len());
        assert_eq!(longer.ends[..run.ends.len()], run.ends[..]);

        /// Records what it was told of the time left.
        struct Told(Box<dyn Strategy>, std::sync::Arc<std::sync::Mutex<Vec<usize>>>);
        impl Strategy for Told {
            fn name(&self) -> String {
                "told".into()
            }
            fn ask(&mut self, c: &crate::search::strategy::Candidates<'_>, max: usize) -> Vec<usize> {
                self.0.ask(c, max)
            }
            fn tell(&mut self, i: usize, o: &crate::search::strategy::Outcome) {
                self.0.tell(i, o)
            }
            fn evaluations_left_in_time(&mut self, left: usize) {
                self.1.lock().unwrap().push(left);
            }
        }
        let told = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let run = timed(&sp, Box::new(Told(by_name("hybrid", 3).unwrap(), told.clone())), 3, 4, 100.0).unwrap();
        let told = told.lock().unwrap();
        assert!(told.len() >= 2, "told before asks once two evaluations ended: {told:?} {:?}", run.ends);
        assert!(told.windows(2).any(|w| w[1] < w[0]), "fewer left as the time goes: {told:?}");
    }

    #[test]
    fn a_space_without_seconds_is_one_clear_error() {
        let mut sp = space();
        sp.eval_s[5] = None;
        let e = score_named_in_time(&sp, "random", 10.0, 2, 1, 1, &grid(10.0, &[])).unwrap_err();
        assert!(e.contains("tile=2, block=2") && e.contains("benchmark_time") && e.contains("--budget 200"), "{e}");
        let mut sp = space();
        sp.compile_s[0] = None;
        let e = score_named_in_time(&sp, "random", 10.0, 2, 1, 1, &grid(10.0, &[])).unwrap_err();
        assert!(e.contains("tile=1, block=1") && e.contains("compile_time"), "{e}");
    }
}
