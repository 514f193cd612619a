//! Stage 4: the search loop, a pipeline. The strategy proposes candidates within the budget;
//! configs already in the database are answered from it; the rest go to a queue that a compile
//! thread per core drains, the longest predicted compile first ([`CompileQueue`]). This thread
//! verifies and benchmarks each config as soon as it is compiled ([`Run::evaluate`]), tells the
//! strategy, and asks it for more, so that the next compiles run while earlier configs are
//! measured and every core keeps compiling. Adaptive strategies get as many proposals in flight
//! as keep the slower stage busy ([`Progress::capacity`]; they see outcomes as they arrive);
//! exhaustive and random sampling have their whole budget queued at once.

use crate::backend::{Backend, Compiled};
use crate::error::BackendError;
use crate::run::candidates::{Cand, Plan};
use crate::run::compile_queue::CompileQueue;
use crate::run::error::Error;
use crate::run::evaluate::{CompileInputs, ReferenceSource, Run};
use crate::run::report::{to_result, Event};
use crate::search::pipeline::{self, CompileTimes};
use crate::search::strategy::{self, Candidates, Strategy};
use crate::spec::error::SpecError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Bookkeeping of the loop: which candidates were evaluated or are in flight, and the budget.
struct Progress {
    evaluated: Vec<bool>,
    in_flight: Vec<bool>,
    count: usize,
    flying: usize,
    max_evals: usize,
    deadline: Option<Instant>,
    /// The tune was asked to stop.
    cancelled: bool,
    /// Compile and evaluation seconds so far, summed, with their counts.
    compile_s: (f64, usize),
    eval_s: (f64, usize),
}

impl Progress {
    /// How many candidates to keep in flight ([`pipeline::capacity`]).
    fn capacity(&self, threads: usize, adaptive: bool) -> usize {
        pipeline::capacity(self.compile_s, self.eval_s, threads, adaptive)
    }

    fn out_of_time(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }
    fn done(&self) -> bool {
        self.count >= self.max_evals || self.out_of_time() || self.cancelled
    }
    /// Whether compiling is the bottleneck ([`pipeline::compile_bound`]).
    fn compile_bound(&self, threads: usize) -> bool {
        pipeline::compile_bound(self.compile_s, self.eval_s, threads)
    }

    /// Evaluations the budget still allows beyond those done and in flight.
    fn room(&self) -> usize {
        self.max_evals.saturating_sub(self.count + self.flying)
    }
}

/// A compiled (or failed) candidate coming back from a compile thread, with its seconds.
type Arrival<K> = (usize, Result<Compiled<K>, BackendError>, f64);

/// Runs the strategy until the budget or the candidates run out; returns the strategy's name.
pub(crate) fn run<B: Backend>(run: &mut Run<'_, B>, plan: &Plan, t0: Instant) -> Result<String, Error> {
    let opts = run.opts;
    let mut strat = strategy::for_budget(&opts.strategy, opts.seed, &opts.budget)
        .map_err(|m| Error::Spec(SpecError { file: run.ctx.job.origin.clone(), field: "strategy".into(), message: m }))?;
    let threads = opts.compile_threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    run.compile_threads = threads;
    let mut progress = Progress {
        evaluated: vec![false; plan.cands.len()],
        in_flight: vec![false; plan.cands.len()],
        count: 0,
        flying: 0,
        max_evals: opts.budget.max_evals_for(plan.valid).unwrap_or(usize::MAX),
        deadline: opts.budget.max_seconds.map(|s| t0 + Duration::from_secs_f64(s)),
        cancelled: false,
        compile_s: (0.0, 0),
        eval_s: (0.0, 0),
    };
    let reference = run.reference_source(&plan.cands)?;
    let adaptive = strat.adaptive();
    let params = run.ctx.prep.space.params().to_vec();
    let coords: Vec<Vec<u32>> = plan.cands.iter().map(|c| c.coords.clone()).collect();
    let view = Candidates { params: &params, coords: &coords };
    pipeline(run, strat.as_mut(), &mut progress, (plan, &view), (threads, adaptive), reference)?;
    if progress.cancelled {
        run.flush()?;
        return Err(Error::Interrupted { kept: kept(run), saved: opts.db.is_some() });
    }
    Ok(strat.name())
}

/// Configs this run measured (or saw fail): what a stop keeps.
fn kept<B: Backend>(run: &Run<'_, B>) -> usize {
    run.results.values().filter(|r| !r.from_db && !matches!(r.outcome, crate::run::report::ResultOutcome::Pruned { .. })).count()
}

/// A stop was asked for: no new compiles, everything measured written now, and the observer
/// told (a command-line program exits there rather than wait for the compiles in progress).
fn stopping<B: Backend>(run: &mut Run<'_, B>, progress: &mut Progress, flow: &Flow) -> Result<(), Error> {
    progress.cancelled = true;
    flow.stop();
    run.flush()?;
    crate::run::tuner::emit(run.opts.observer.as_ref(), Event::Interrupted { kept: kept(run), compiling: progress.flying });
    Ok(())
}

/// Marks candidate `i` evaluated and tells the strategy its outcome.
fn told<B: Backend>(run: &Run<'_, B>, strat: &mut dyn Strategy, progress: &mut Progress, plan: &Plan, i: usize) {
    progress.evaluated[i] = true;
    progress.count += 1;
    strat.tell(i, &run.outcome_of(&plan.cands[i].config.key()));
}

/// Answers what is known (evaluated before, or in the database) and returns the candidates
/// that must be compiled and measured, within the budget; candidates in flight are skipped
/// (their outcome comes when they are measured).
fn triage<B: Backend>(run: &mut Run<'_, B>, strat: &mut dyn Strategy, progress: &mut Progress, plan: &Plan, asked: Vec<usize>) -> Vec<usize> {
    let mut fresh = Vec::new();
    for i in asked.into_iter().filter(|&i| i < plan.cands.len()) {
        let key = plan.cands[i].config.key();
        if progress.in_flight[i] || fresh.contains(&i) {
            continue;
        } else if progress.evaluated[i] {
            strat.tell(i, &run.outcome_of(&key));
        } else if let Some(m) = run.known.get(&key) {
            let r = to_result(m, true, run.ctx.prep.metrics(&plan.cands[i].config));
            run.record_result(r, false);
            told(run, strat, progress, plan, i);
        } else if fresh.len() < progress.room() {
            fresh.push(i);
        }
    }
    fresh
}

/// Asks the strategy for work until `capacity` candidates are in flight (or the budget is
/// spoken for) and queues the fresh ones by predicted compile time.
fn feed<B: Backend>(
    run: &mut Run<'_, B>,
    strat: &mut dyn Strategy,
    progress: &mut Progress,
    (plan, view): (&Plan, &Candidates<'_>),
    (flow, times): (&Flow, &CompileTimes),
    (threads, adaptive): (usize, bool),
) {
    let capacity = progress.capacity(threads, adaptive);
    let longest_first = progress.compile_bound(threads);
    let mut idle = 0;
    while progress.flying < capacity && progress.room() > 0 && !progress.done() && idle < 1000 {
        let asked = strat.ask(view, (capacity - progress.flying).min(progress.room()));
        if asked.is_empty() {
            return;
        }
        let fresh = triage(run, strat, progress, plan, asked);
        idle = if fresh.is_empty() { idle + 1 } else { 0 };
        for i in fresh {
            progress.in_flight[i] = true;
            progress.flying += 1;
            flow.queue.push(i, if longest_first { times.predict(view, i) } else { 0.0 });
        }
    }
}

/// What the compile threads share with this one: the queue, the compiles running (candidate
/// and start, for the compile-time model), and the order to stop.
#[derive(Default)]
struct Flow {
    queue: CompileQueue,
    running: std::sync::Mutex<Vec<(usize, Instant)>>,
    cancel: AtomicBool,
}

/// This thread's side: the compile-time model, and what waits for the reference.
struct Waiting<K> {
    times: CompileTimes,
    /// The default config, while its compile (which makes the reference) is awaited.
    default: Option<usize>,
    /// Configs compiled before the reference was ready.
    held: std::collections::VecDeque<Arrival<K>>,
}

impl Flow {
    fn running(&self) -> std::sync::MutexGuard<'_, Vec<(usize, Instant)>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The compiles running now, with their seconds so far.
    fn elapsed(&self) -> Vec<(usize, f64)> {
        self.running().iter().map(|&(i, t)| (i, t.elapsed().as_secs_f64())).collect()
    }

    fn stop(&self) {
        self.cancel.store(true, Ordering::Relaxed);
        self.queue.close();
    }
}

struct StopOnDrop<'a>(&'a Flow);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// The pipeline: `threads` compile threads drain the queue into a bounded channel; this thread
/// feeds the queue from the strategy, makes the reference while the first configs compile (the
/// CPU reference, or the default config, compiled first), and evaluates each compiled config
/// as it arrives. Stops compiling once the time budget is spent or the tune must end.
fn pipeline<B: Backend>(
    run: &mut Run<'_, B>,
    strat: &mut dyn Strategy,
    progress: &mut Progress,
    (plan, view): (&Plan, &Candidates<'_>),
    (threads, adaptive): (usize, bool),
    reference: Option<ReferenceSource>,
) -> Result<(), Error> {
    let flow = Flow::default();
    let mut wait = Waiting { times: CompileTimes::new(run.opts.seed), default: None, held: Default::default() };
    if let Some(ReferenceSource::Default(di)) = reference {
        progress.in_flight[di] = true;
        progress.flying += 1;
        flow.queue.push(di, f64::INFINITY);
        wait.default = Some(di);
    }
    let (prep, source, backend) = (&run.ctx.prep, &run.ctx.job.source, run.backend());
    let mut failure: Option<Error> = None;
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Arrival<B::Kernel>>(threads * 2);
        failure = spawn_compilers(s, threads, &flow, tx, (plan, prep, source, backend)).err();
        // Whatever ends this scope (a panic in an observer included), the compile threads stop.
        let _stop = StopOnDrop(&flow);
        if failure.is_none() {
            feed(run, strat, progress, (plan, view), (&flow, &wait.times), (threads, adaptive));
            if reference == Some(ReferenceSource::Host) {
                failure = run.ensure_workspace().and_then(|_| run.host_reference()).err();
            }
        }
        if failure.is_some() {
            flow.stop();
        }
        loop {
            if failure.is_none() {
                feed(run, strat, progress, (plan, view), (&flow, &wait.times), (threads, adaptive));
            }
            let next = match wait.default {
                None if !wait.held.is_empty() => wait.held.pop_front(),
                _ if progress.flying == 0 => break,
                _ => match rx.recv_timeout(Duration::from_millis(100)) {
                    Ok(a) => Some(a),
                    // Nothing arrived: look again (a stop request is noticed below).
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                },
            };
            if !progress.cancelled && run.opts.cancelled() {
                failure = stopping(run, progress, &flow).err();
            }
            let Some(a) = next else { continue };
            if failure.is_some() || progress.out_of_time() || progress.cancelled {
                progress.in_flight[a.0] = false;
                progress.flying -= 1;
                flow.stop();
                continue;
            }
            if wait.default.is_some_and(|d| d != a.0) {
                wait.held.push_back(a);
                continue;
            }
            progress.in_flight[a.0] = false;
            progress.flying -= 1;
            if let Err(e) = arrived(run, strat, progress, (plan, view), (&flow, &mut wait), threads, a) {
                failure = Some(e);
                flow.stop();
            }
        }
        flow.stop();
        drop(rx);
    });
    match failure {
        Some(e) => {
            let _ = run.flush();
            Err(e)
        }
        None => Ok(()),
    }
}

/// Starts the compile threads: each takes the next queued candidate, compiles it and sends it
/// back, until the queue closes or nobody listens.
fn spawn_compilers<'s, 'e: 's, B: Backend>(
    s: &'s std::thread::Scope<'s, 'e>,
    threads: usize,
    flow: &'e Flow,
    tx: std::sync::mpsc::SyncSender<Arrival<B::Kernel>>,
    (plan, prep, source, backend): (&'e Plan, &'e crate::plan::prepare::Prepared, &'e crate::spec::source::KernelSource, &'e B),
) -> Result<(), Error> {
    for w in 0..threads {
        let tx = tx.clone();
        let compile = move || {
            while let Some(i) = flow.queue.pop() {
                if flow.cancel.load(Ordering::Relaxed) {
                    continue;
                }
                let c: &Cand = &plan.cands[i];
                let t = Instant::now();
                flow.running().push((i, t));
                let inputs = CompileInputs::new(prep, source, &c.config, &c.launch);
                let r = backend.compile(&inputs.request(source, &c.config, &c.launch));
                flow.running().retain(|r| r.0 != i);
                if tx.send((i, r, t.elapsed().as_secs_f64())).is_err() {
                    return;
                }
            }
        };
        std::thread::Builder::new()
            .name(format!("kerntune-compile-{w}"))
            .spawn_scoped(s, compile)
            .map_err(|e| Error::Backend(BackendError::other(format!("starting a compile thread: {e}"))))?;
    }
    Ok(())
}

/// One compiled (or failed) candidate: accounted, verified and measured, told to the strategy.
/// The default config, when it makes the reference, runs first for that. A new compile-time
/// model re-keys the queue: longest predicted compile first while compiling is the bottleneck,
/// first in first out while measuring is (then an even stream of configs keeps it busy).
fn arrived<B: Backend>(
    run: &mut Run<'_, B>,
    strat: &mut dyn Strategy,
    progress: &mut Progress,
    (plan, view): (&Plan, &Candidates<'_>),
    (flow, wait): (&Flow, &mut Waiting<B::Kernel>),
    threads: usize,
    (i, r, secs): Arrival<B::Kernel>,
) -> Result<(), Error> {
    run.compile_seconds += secs;
    progress.compile_s = (progress.compile_s.0 + secs, progress.compile_s.1 + 1);
    if let Ok(c) = &r {
        run.compiled += 1;
        run.cache_hits += c.cached as usize;
        crate::run::tuner::emit(run.opts.observer.as_ref(), Event::Compiled { config: &plan.cands[i].config, seconds: secs });
        if wait.times.observe(i, secs, c.cached) && wait.times.refit(view, &flow.elapsed()) {
            let (times, longest_first) = (&wait.times, progress.compile_bound(threads));
            flow.queue.reprioritize(|j| if longest_first { times.predict(view, j) } else { 0.0 });
        }
        run.ensure_workspace()?;
    }
    if wait.default == Some(i) {
        run.default_reference(&plan.cands[i], &r)?;
        wait.default = None;
        if let Some(m) = run.known.get(&plan.cands[i].config.key()) {
            // Measured before: only its outputs were needed; its result is the stored one.
            let known = to_result(m, true, run.ctx.prep.metrics(&plan.cands[i].config));
            run.record_result(known, false);
            told(run, strat, progress, plan, i);
            return Ok(());
        }
    }
    let te = Instant::now();
    let ok = r.is_ok();
    run.evaluate(&plan.cands[i], r, Some(secs))?;
    if ok {
        progress.eval_s = (progress.eval_s.0 + te.elapsed().as_secs_f64(), progress.eval_s.1 + 1);
    }
    told(run, strat, progress, plan, i);
    Ok(())
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
        let name = super::run(&mut run, &p, Instant::now()).unwrap();
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
