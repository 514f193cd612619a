//! Stage 4: the search loop. The strategy proposes candidates within the budget; configs
//! already in the database are answered from it; the rest compile in parallel on a thread
//! pool, streaming into a bounded channel, while this thread verifies and benchmarks each as
//! soon as it is ready ([`Run::evaluate`]).

use crate::backend::{Backend, Compiled};
use crate::error::BackendError;
use crate::run::candidates::{Cand, Plan};
use crate::run::error::Error;
use crate::run::evaluate::{CompileInputs, DefaultKernel, Run};
use crate::run::report::{to_result, Event};
use crate::search::strategy::{self, Candidates, Strategy};
use crate::spec::error::SpecError;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Bookkeeping of the loop: which candidates were evaluated, and the budget.
struct Progress {
    evaluated: Vec<bool>,
    count: usize,
    max_evals: usize,
    deadline: Option<Instant>,
}

impl Progress {
    fn out_of_time(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }
    fn done(&self) -> bool {
        self.count >= self.max_evals || self.out_of_time()
    }
}

/// Runs the strategy until the budget or the candidates run out; returns the strategy's name.
/// `default_kernel` is the default config, already compiled to make the reference.
pub(crate) fn run<B: Backend>(run: &mut Run<'_, B>, plan: &Plan, default_kernel: DefaultKernel<B::Kernel>, t0: Instant) -> Result<String, Error> {
    let opts = run.opts;
    let mut strat = strategy::for_budget(&opts.strategy, opts.seed, &opts.budget)
        .map_err(|m| Error::Spec(SpecError { file: run.ctx.job.origin.clone(), field: "strategy".into(), message: m }))?;
    let params = run.ctx.prep.space.params().to_vec();
    let coords: Vec<Vec<u32>> = plan.cands.iter().map(|c| c.coords.clone()).collect();
    let view = Candidates { params: &params, coords: &coords };
    let threads = opts.compile_threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("kerntune-compile-{i}"))
        .build()
        .map_err(|e| Error::Backend(BackendError::other(e)))?;
    let mut progress = Progress {
        evaluated: vec![false; plan.cands.len()],
        count: 0,
        max_evals: opts.budget.max_evals_for(plan.valid).unwrap_or(usize::MAX),
        deadline: opts.budget.max_seconds.map(|s| t0 + Duration::from_secs_f64(s)),
    };
    // The default config first when it is compiled already.
    if let Some((di, compiled)) = default_kernel {
        if !run.known.contains_key(&plan.cands[di].config.key()) {
            run.evaluate(&plan.cands[di], Ok(compiled))?;
            told(run, strat.as_mut(), &mut progress, plan, di);
        }
    }
    let batch_size = if opts.strategy == "exhaustive" || opts.strategy == "random" { usize::MAX } else { threads * 2 };
    let mut idle_rounds = 0;
    while !progress.done() {
        let asked = strat.ask(&view, batch_size.min(progress.max_evals - progress.count).max(1));
        if asked.is_empty() {
            break;
        }
        let fresh = triage(run, strat.as_mut(), &mut progress, plan, asked);
        if fresh.is_empty() {
            idle_rounds += 1;
            if idle_rounds > 1000 {
                break;
            }
            continue;
        }
        idle_rounds = 0;
        run.ensure_workspace()?;
        compile_and_measure(run, strat.as_mut(), &mut progress, plan, &fresh, &pool, threads)?;
    }
    Ok(strat.name())
}

/// Marks candidate `i` evaluated and tells the strategy its outcome.
fn told<B: Backend>(run: &Run<'_, B>, strat: &mut dyn Strategy, progress: &mut Progress, plan: &Plan, i: usize) {
    progress.evaluated[i] = true;
    progress.count += 1;
    strat.tell(i, &run.outcome_of(&plan.cands[i].config.key()));
}

/// Answers what is known (evaluated before, or in the database) and returns the candidates
/// that must be compiled and measured, within the budget.
fn triage<B: Backend>(run: &mut Run<'_, B>, strat: &mut dyn Strategy, progress: &mut Progress, plan: &Plan, asked: Vec<usize>) -> Vec<usize> {
    let mut fresh = Vec::new();
    for i in asked.into_iter().filter(|&i| i < plan.cands.len()) {
        let key = plan.cands[i].config.key();
        if progress.evaluated[i] {
            strat.tell(i, &run.outcome_of(&key));
        } else if let Some(m) = run.known.get(&key) {
            let r = to_result(m, true, run.ctx.prep.metrics(&plan.cands[i].config));
            run.record_result(r, false);
            told(run, strat, progress, plan, i);
        } else if progress.count + fresh.len() < progress.max_evals {
            fresh.push(i);
        }
    }
    fresh
}

/// Compiles `fresh` on the pool and evaluates each config on this thread as it arrives; stops
/// compiling once the time budget is spent or the tune must end.
fn compile_and_measure<B: Backend>(
    run: &mut Run<'_, B>,
    strat: &mut dyn Strategy,
    progress: &mut Progress,
    plan: &Plan,
    fresh: &[usize],
    pool: &rayon::ThreadPool,
    threads: usize,
) -> Result<(), Error> {
    let cancel = AtomicBool::new(false);
    let prep = &run.ctx.prep;
    let mut failure: Option<Error> = None;
    let backend = run.backend();
    let source = &run.ctx.job.source;
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Result<Compiled<B::Kernel>, BackendError>, f64)>(threads * 2);
        let cancel = &cancel;
        s.spawn(move || {
            pool.install(|| {
                fresh.par_iter().for_each_with(tx, |tx, &i| {
                    if cancel.load(Ordering::Relaxed) {
                        return;
                    }
                    let c: &Cand = &plan.cands[i];
                    let t = Instant::now();
                    let build = CompileInputs::new(prep, source, &c.config, &c.launch);
                    let r = backend.compile(&build.request(source, &c.config, &c.launch));
                    let _ = tx.send((i, r, t.elapsed().as_secs_f64()));
                })
            })
        });
        for (i, r, secs) in rx {
            if failure.is_some() || progress.out_of_time() {
                cancel.store(true, Ordering::Relaxed);
                continue;
            }
            run.compile_seconds += secs;
            if let Ok(c) = &r {
                run.compiled += 1;
                run.cache_hits += c.cached as usize;
                crate::run::tuner::emit(run.opts.observer.as_ref(), Event::Compiled { config: &plan.cands[i].config, seconds: secs });
            }
            if let Err(e) = run.evaluate(&plan.cands[i], r) {
                failure = Some(e);
                cancel.store(true, Ordering::Relaxed);
                continue;
            }
            told(run, strat, progress, plan, i);
        }
    });
    match failure {
        Some(e) => {
            let _ = run.flush();
            Err(e)
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::{Behavior, FakeBackend};
    use crate::limits::Limits;
    use crate::run::candidates::plan;
    use crate::run::fixture::{is, job, opts, time, tuner};
    use crate::run::tuner::{TuneOptions, Tuner};
    use crate::spec::settings::Budget;

    fn loop_once(t: &Tuner<FakeBackend>, o: &TuneOptions, stored: Option<crate::store::db::Entry>) -> (usize, usize, String) {
        let ctx = t.prepare(&job()).unwrap();
        let p = plan(&ctx, t.backend().limits(), o).unwrap();
        let mut run = Run::new(t, &ctx, o, stored);
        let dk = run.prepare_reference(&p.cands).unwrap();
        let name = super::run(&mut run, &p, dk, Instant::now()).unwrap();
        (run.results.len(), run.compiled, name)
    }

    #[test]
    fn respects_the_evaluation_budget() {
        let o = TuneOptions { strategy: "random".into(), budget: Budget { max_evals: Some(5), ..Default::default() }, ..opts() };
        let (results, compiled, name) = loop_once(&tuner(), &o, None);
        assert_eq!((results, compiled, name.as_str()), (5, 5, "random"));
        let o = TuneOptions { strategy: "hybrid".into(), budget: Budget { fraction: Some(0.25), ..Default::default() }, ..opts() };
        // A quarter of the 21 valid configs, rounded up.
        assert_eq!(loop_once(&tuner(), &o, None).0, 6);
    }

    #[test]
    fn known_measurements_are_answered_without_compiling() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::store::db::Database::at(dir.path().join("db.json"));
        let o = TuneOptions { db: Some(db.clone()), ..opts() };
        let t = tuner();
        t.tune(&job(), &o).unwrap();
        let id = t.prepare(&job()).unwrap().id;
        let stored = db.entry(&id).unwrap();
        let (results, compiled, _) = loop_once(&t, &o, stored);
        assert_eq!((results, compiled), (18, 0));
    }

    #[test]
    fn a_failing_compile_is_recorded_and_the_loop_goes_on() {
        let fake = FakeBackend::new(Limits::preset("h100").unwrap().1, time).with_behavior(|c| {
            if is(c, 64, 2) {
                Behavior::CompileError("boom".into())
            } else {
                Behavior::Ok
            }
        });
        let (results, compiled, _) = loop_once(&Tuner::new(fake), &opts(), None);
        // The default compiled once (for the reference), 16 more; the failed compile is recorded
        // as a result but not counted as a compilation.
        assert_eq!((results, compiled), (18, 17));
    }
}
