//! Stage 4: the search loop, a pipeline over one compile pool and one session per device.
//!
//! The strategy proposes candidates within the budget; configs already in the database are
//! answered from it; the rest go to a queue that a compile thread per core drains, the longest
//! predicted compile first ([`CompileQueue`]). This thread (the coordinator) hands each compiled
//! config to a free device ([`Pool`]), records what comes back in the [`Ledger`], tells the
//! strategy, and asks it for more, so that every core keeps compiling while every device keeps
//! measuring. Adaptive strategies get as many proposals in flight as keep the slower stage busy
//! ([`pipeline::capacity`]); exhaustive and random sampling have their whole budget queued.
//! Before a compiled config is measured the strategy is asked whether it still wants it
//! ([`Strategy::still_wanted`]): one it withdraws, having learnt from the outcomes told since
//! it asked, leaves the flight unmeasured and uncounted, and the strategy is asked for another.
//!
//! **The reference**: a CPU reference is computed on a thread of its own while the first
//! configs compile and measure; configs measured before it is ready are held (neither recorded
//! nor told to the strategy) and verified once it is, with one more launch each, so that the
//! devices do not wait for the CPU. A config reference (the default, else the first valid
//! config) is tried candidate by candidate until one runs, each failure recorded like any
//! other, and configs compiled meanwhile wait; expected outputs given as data are ready at once.
//!
//! **The shortlist** (exhaustive and random search, racing on): racing compares a
//! config with the best so far, so in an enumeration's order every config better than all
//! before it is measured in full, though most of them lose to a config met later. A config
//! verified and not raced on its verification launch (against the best, or against the fastest
//! verification launch on the shortlist: like compared with like) waits unmeasured, in flight
//! and untold; once no compiled config waits for the device, the shortlist is measured in full,
//! fastest verification launch first, so that the rest race against the best at once. A tune
//! stopped early records what is still on it with its verification launch alone, and the final
//! round ([`crate::run::finals`]) measures the winner's contenders among them in full. With several
//! devices, launches are compared on the judging device's scale (the calibration below), and
//! each device takes the configs it verified first (a verification launch is a sample only on
//! the device that made it), then the others'. The shortlist also evens out the devices' ends:
//! what is left when the enumeration is done is many short jobs, so a slow config met late no
//! longer keeps one device busy while the others wait.
//!
//! **Devices** are calibrated once: the first config measured is timed on every other device
//! too, so that racing compares like with like. A device whose worker process dies without
//! a word is taken out of the tune and its config measured elsewhere; a config that ends the
//! workers of two devices is blamed (and the first device taken back).

use crate::backend::{Backend, CompileInputs, Memcheck};
use crate::error::BackendError;
use crate::plan::prune::prune_after;
use crate::run::candidates::{Cand, Plan};
use crate::run::compile_queue::CompileQueue;
use crate::run::device::{Answer, CompileDone, Done, Job, Kernel, LateRef, Msg, Pool, Purpose, Short};
use crate::run::error::Error;
use crate::run::ledger::Ledger;
use crate::run::report::{to_result, ConfigResult, Event, ResultOutcome};
use crate::run::{emit, Context, RefOutputs, TuneOptions};
use crate::search::pipeline::{self, CompileTimes, Spent};
use crate::search::strategy::{self, Candidates, Strategy};
use crate::search::tail::Tail;
use crate::spec::error::SpecError;
use crate::spec::job::Reference;
use crate::store::db::SpanKind;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The search a tune runs ([`Coordinator::strategy`]): the strategy, the compile seconds its
/// priors recorded per candidate (for one that queues its budget ahead), and the notes on what
/// its first flight is sized by (said once the tune knows whether the compile cache holds it).
struct Chosen {
    strat: Box<dyn Strategy>,
    compile: Vec<f32>,
    flight: Vec<String>,
}

/// Bookkeeping of the loop: which candidates were evaluated or are in flight, and the budget.
pub(crate) struct Progress {
    pub evaluated: Vec<bool>,
    pub in_flight: Vec<bool>,
    pub count: usize,
    pub flying: usize,
    max_evals: usize,
    /// The time limit's end, were the tune never stopped: it moves on by the time the process
    /// is stopped (Ctrl-Z, a suspended job, whose scheduler's time limit does not count the
    /// suspension either), see [`Progress::deadline`].
    deadline: Option<Instant>,
    /// [`crate::measure::awake::stopped`] when the limit was set.
    stopped_before: Duration,
    /// Ends the tune as its time limit would ([`TuneOptions::wrap_up`]).
    wrap_up: Option<Arc<AtomicBool>>,
    /// When the first config was timed (the pace [`Progress::evaluations_left_in_time`] goes
    /// by is taken from then: before it, the reference, the first compiles and the pipeline's
    /// filling make a config look several times slower than the tune then runs).
    first_timed: Option<Instant>,
    /// Time the time limit keeps for the final round: the search stops this much before the
    /// limit ([`Coordinator::final_reserve`]), so that measuring the winner's contenders in full
    /// ends near the limit rather than past it.
    reserve: Duration,
    /// The tune was asked to stop.
    cancelled: bool,
    /// Compile and evaluation seconds so far, summed, with their counts.
    compile_s: (f64, usize),
    eval_s: (f64, usize),
    /// The first proposals found in the compile cache, and not, before an evaluation is
    /// timed ([`Coordinator::feed`]); `None` where the backend cannot tell, or the strategy
    /// does not adapt.
    cache: Option<(usize, usize)>,
    /// The backend compiles quickly ([`Backend::compiles_quickly`]) and the strategy adapts.
    quick: bool,
}

impl Progress {
    /// Whether the tune still starts warm: no evaluation timed yet, and compiling does not
    /// bound it (the backend compiles quickly, or every proposal so far, none at first, is in
    /// the compile cache).
    fn warm_start(&self) -> bool {
        self.eval_s.1 == 0 && (self.quick || self.probing())
    }
    /// Whether the first proposals are still being looked up in the compile cache: none has
    /// missed, and no evaluation is timed.
    fn probing(&self) -> bool {
        self.eval_s.1 == 0 && self.cache.is_some_and(|(_, missed)| missed == 0)
    }
    /// When the search's part of the time limit ends, counting the time awake only: the limit
    /// less what it keeps for the final round ([`Progress::reserve`]).
    fn deadline(&self) -> Option<Instant> {
        self.deadline.map(|d| {
            let d = d + crate::measure::awake::stopped().saturating_sub(self.stopped_before);
            d.checked_sub(self.reserve).unwrap_or(d)
        })
    }
    /// Whether the search's part of the time limit is over (see [`Progress::deadline`]).
    fn at_time_limit(&self) -> bool {
        self.deadline().is_some_and(|d| Instant::now() >= d)
    }
    fn out_of_time(&self) -> bool {
        self.at_time_limit() || self.wrapped_up()
    }
    /// Whether the tune was told to end now ([`TuneOptions::wrap_up`]).
    fn wrapped_up(&self) -> bool {
        self.wrap_up.as_ref().is_some_and(|w| w.load(Ordering::Relaxed))
    }
    /// Why the tune stops early, when it does: interrupted, its time limit, or told to end.
    fn ending(&self) -> Option<&'static str> {
        if self.cancelled {
            Some("interrupted")
        } else if self.at_time_limit() {
            Some("time limit")
        } else if self.wrapped_up() {
            Some("ended early")
        } else {
            None
        }
    }
    fn done(&self) -> bool {
        self.count >= self.max_evals || self.out_of_time() || self.cancelled
    }
    /// Evaluations a time limit still allows beyond those in flight, at the pace of the search
    /// since its first config was timed (the wall seconds since over the configs timed since:
    /// compiles, the devices' number and the tuner's own work are all in it); `None` without a
    /// time limit or before two configs are timed.
    fn evaluations_left_in_time(&self) -> Option<usize> {
        let (deadline, first) = (self.deadline()?, self.first_timed?);
        let now = Instant::now();
        pipeline::evaluations_left_in_time(
            now.duration_since(first).as_secs_f64(),
            self.eval_s.1,
            deadline.saturating_duration_since(now).as_secs_f64(),
            self.flying,
        )
    }
    /// Evaluations the budget still allows beyond those done and in flight.
    fn room(&self) -> usize {
        self.max_evals.saturating_sub(self.count + self.flying)
    }
}

/// Where the expected outputs stand.
enum RefState {
    /// Nothing to compare with (no verification, or nothing to measure).
    Unneeded,
    /// Made (CPU reference, expected outputs, or a config that ran).
    Ready,
    /// The CPU reference is being computed: configs are measured, and verified once it is made.
    Computing,
    /// Trying reference candidates in `order`; `current` is the one being tried.
    Trying { order: Vec<usize>, pos: usize, current: Option<usize>, sent: bool },
}

/// A compile whose thread tells its CPU time is given up on once it has used the compile
/// timeout's worth of it, or when this many times the timeout of wall time have passed and it
/// has used less than a tenth of the timeout of CPU (a compiler waiting on a lock, not
/// compiling: a compile slowed by the load beside it still gets a share of a core).
const TIMED_OUT_WALL: f64 = 3.0;

/// The CPU reference's outputs (or why not), from its thread: when it began and its seconds.
type HostRef = std::sync::Mutex<Option<(Result<Arc<RefOutputs>, Error>, Instant, f64)>>;

/// What the compile threads share with this one: the queue, the compiles running (candidate
/// and start, for the compile-time model), how many compiled configs wait for a device (the
/// threads pause when too many do), and the order to stop.
#[derive(Default)]
struct Flow {
    queue: CompileQueue,
    running: std::sync::Mutex<Vec<Running>>,
    waiting: AtomicUsize,
    cancel: AtomicBool,
}

/// A compile running on a compile thread: the candidate, since when (counting the time awake:
/// a tune stopped and continued does not find its compiles past the tail's limit or the
/// compile timeout), and the flag that tells the backend the tune no longer waits for it.
struct Running {
    cand: usize,
    start: crate::measure::awake::Since,
    watch: Arc<crate::backend::CompileWatch>,
}

impl Flow {
    fn running(&self) -> std::sync::MutexGuard<'_, Vec<Running>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
    /// The compiles running now, with their seconds so far.
    fn elapsed(&self) -> Vec<(usize, f64)> {
        self.running().iter().map(|r| (r.cand, r.start.elapsed().as_secs_f64())).collect()
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

/// A config measured before the reference was ready, waiting for its verification.
struct Held<K> {
    kernel: Kernel<K>,
    stats: crate::measure::stats::Stats,
    device: usize,
}

/// The kernels of the fastest configs so far, kept for the final round (at most [`KEEP`]).
struct Keep<K> {
    best: Vec<(f64, usize, Kernel<K>)>,
}

/// Kernels kept for the final round.
const KEEP: usize = 24;

impl<K> Keep<K> {
    fn offer(&mut self, mean: f64, cand: usize, kernel: Kernel<K>) {
        if self.best.len() < KEEP || self.best.last().is_some_and(|w| mean < w.0) {
            self.best.retain(|b| b.1 != cand);
            let at = self.best.partition_point(|b| b.0 <= mean);
            self.best.insert(at, (mean, cand, kernel));
            self.best.truncate(KEEP);
        }
    }
    fn get(&self, cand: usize) -> Option<Kernel<K>> {
        self.best.iter().find(|b| b.1 == cand).map(|b| b.2.clone())
    }
}

/// The coordinator: the device pool, the channel everything reports on, and what the loop
/// keeps between the search and the final round.
pub(crate) struct Coordinator<'e, B: Backend> {
    devices: &'e [B],
    ctx: &'e Context,
    opts: &'e TuneOptions,
    plan: &'e Plan,
    pool: Pool<B::Kernel>,
    tx: Sender<Msg<B::Kernel>>,
    rx: Receiver<Msg<B::Kernel>>,
    /// Devices that take jobs, and the candidate each is busy with.
    live: Vec<bool>,
    busy: Vec<Option<usize>>,
    /// The device whose times the others are scaled to (the first to measure a config).
    pub(crate) judge: Option<usize>,
    /// Candidates waiting for a device, compiled, with their compile seconds.
    ready: VecDeque<(usize, Kernel<B::Kernel>, Option<f64>)>,
    keep: Keep<B::Kernel>,
    /// Unexplained worker deaths per candidate, and the device taken out for each.
    deaths: HashMap<usize, usize>,
    /// Workers the system's out-of-memory killer ended (see [`Self::worker_oom_killed`]).
    pub(crate) oom_workers: OomWorkers,
    /// Where the search put its note on them in the tune's notes.
    oom_note_at: Option<usize>,
    retired_for: HashMap<usize, usize>,
    /// Devices taken out because the problem's buffers did not fit on them, and the first's
    /// words (the tune's error when that took every device out).
    no_room: (usize, Option<String>),
    /// Devices taken out because their worker process could not start, and the first's words.
    no_start: (usize, Option<String>),
    /// The config whose outputs became the reference, and how many candidates failed first.
    reference_cand: Option<usize>,
    /// Whether [`Self::warn_if_nothing_compiles`] has judged the first compiles.
    compiles_judged: bool,
    /// Compile seconds per candidate compiled in this run (not compile-cache hits).
    compile_s: HashMap<usize, f64>,
    /// Seconds a device spent evaluating each candidate for the search in this run.
    eval_s: HashMap<usize, f64>,
    /// The compiles far slower than the others (see [`Tail`]).
    tail: Tail,
    /// Candidates whose compile ran past [`TuneOptions::compile_timeout`] and was given up on,
    /// with its wall and CPU seconds then: each fails when its abandoned compile answers.
    /// Whether the compiler ran in a process, killed when given up on (see [`crate::compiler`]).
    compile_timed_out: HashMap<usize, (f64, Option<f64>, bool)>,
    /// Candidates whose compiler process ended while compiling them, compiled again (see
    /// [`Died`] and [`BackendError::CompilerDied`]).
    compiler_died: HashMap<usize, Died>,
    /// Calibration: the candidate timed on every device, and each device's mean of it.
    calibration: Option<usize>,
    calibrated: Vec<Option<f64>>,
    /// Devices whose calibration ran again after the out-of-memory killer ended their worker.
    recalibrated: Vec<bool>,
    /// Jobs a device runs before any other once it is free (its calibration).
    extra: Vec<VecDeque<Job<B::Kernel>>>,
    /// Candidates sent to be measured before the reference was ready, whose verification the
    /// sample asks for; once measured they are held until verified.
    deferred: std::collections::HashSet<usize>,
    held: HashMap<usize, Held<B::Kernel>>,
    /// Held candidates waiting for a device to verify them.
    to_verify: VecDeque<usize>,
    /// The CPU reference's outputs, for devices taking jobs sent before it was made.
    late: LateRef,
    /// Configs verified and near the fastest on their verification launch, measured in full
    /// once nothing else waits for a device, the fastest first (see the module docs).
    shortlist: Vec<Listed<B::Kernel>>,
    /// The fastest verification launch on the shortlist so far, on the judging device's scale
    /// (see [`Ledger::ratios`]).
    fastest_listed: Option<f64>,
    /// Candidates the tune's stop left on the shortlist, recorded with their verification
    /// launch alone: the final round measures those among the winner's contenders in full.
    pub(crate) settled_unmeasured: std::collections::HashSet<usize>,
}

/// A config on the shortlist: verified on `device`, whose verification launch took `prior`.
struct Listed<K> {
    cand: usize,
    kernel: Kernel<K>,
    prior: Vec<f64>,
    device: usize,
}

impl<K> Listed<K> {
    fn fastest(&self) -> f64 {
        self.prior.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// Its fastest verification launch on the judging device's scale (see [`Ledger::ratios`]).
    fn judged(&self, ratios: &[f64]) -> f64 {
        self.fastest() / ratios[self.device]
    }
}

/// What a tune sizes its pipeline by: its own compile and evaluation seconds, or until it has
/// timed an evaluation those its strategy expects ([`pipeline::spent_or_expected`]: the priors'
/// sources'), the evaluation seconds divided over the `devices` measuring at once; and the
/// proposals that keep it busy ([`pipeline::capacity`]; for an adaptive strategy at least one per
/// device and one more).
fn sizing(compile: Spent, eval: Spent, expected: Option<(f64, f64)>, devices: usize, threads: usize, adaptive: bool) -> ((Spent, Spent), usize) {
    let devices = devices.max(1);
    let (compile, eval) = pipeline::spent_or_expected(compile, eval, expected);
    // Measuring on several devices divides the time a config waits to be measured.
    let eval = (eval.0 / devices as f64, eval.1);
    let capacity = pipeline::capacity(compile, eval, threads, adaptive).max(if adaptive { devices + 1 } else { 0 });
    ((compile, eval), capacity)
}

/// Adds `seconds` spent on candidate `i` to its own total in `each` and to `all` (seconds summed,
/// and how many candidates they cover: those in `each`, so one timed in parts counts once).
fn add_seconds(all: &mut Spent, each: &mut HashMap<usize, f64>, i: usize, seconds: f64) {
    *each.entry(i).or_default() += seconds;
    *all = (all.0 + seconds, each.len());
}

impl<'e, B: Backend> Coordinator<'e, B> {
    /// Starts a session thread per device.
    pub fn start<'s>(
        s: &'s std::thread::Scope<'s, 'e>,
        devices: &'e [B],
        ctx: &'e Context,
        opts: &'e TuneOptions,
        plan: &'e Plan,
    ) -> Result<Coordinator<'e, B>, Error> {
        let (tx, rx) = std::sync::mpsc::channel();
        let pool = Pool::start(s, devices, ctx, opts, &tx)?;
        let n = devices.len();
        Ok(Coordinator {
            devices,
            ctx,
            opts,
            plan,
            pool,
            tx,
            rx,
            live: vec![true; n],
            busy: vec![None; n],
            judge: None,
            ready: VecDeque::new(),
            keep: Keep { best: Vec::new() },
            deaths: HashMap::new(),
            oom_workers: OomWorkers::default(),
            oom_note_at: None,
            retired_for: HashMap::new(),
            no_room: (0, None),
            no_start: (0, None),
            reference_cand: None,
            compiles_judged: false,
            compile_s: HashMap::new(),
            eval_s: HashMap::new(),
            tail: Tail::new(opts.compile_tail),
            compile_timed_out: HashMap::new(),
            compiler_died: HashMap::new(),
            calibration: None,
            calibrated: vec![None; n],
            recalibrated: vec![false; n],
            extra: (0..n).map(|_| VecDeque::new()).collect(),
            deferred: Default::default(),
            held: HashMap::new(),
            to_verify: VecDeque::new(),
            late: LateRef::default(),
            shortlist: Vec::new(),
            fastest_listed: None,
            settled_unmeasured: Default::default(),
        })
    }

    /// The candidates.
    pub fn plan(&self) -> &'e Plan {
        self.plan
    }

    /// Runs the strategy until the budget or the candidates run out; returns the strategy's name.
    pub fn search(&mut self, ledger: &mut Ledger<'_>, t0: Instant) -> Result<String, Error> {
        let opts = self.opts;
        let plan = self.plan;
        let params = self.ctx.prep.space.params().to_vec();
        let coords: Vec<Vec<u32>> = plan.cands.iter().map(|c| c.coords.clone()).collect();
        let view = Candidates { params: &params, coords: &coords };
        let threads = opts.threads();
        ledger.compile_threads = threads;
        let Chosen { mut strat, compile: compile_prior, flight: flight_notes } = self.strategy(ledger, &view, threads)?;
        let flight_notes_at = ledger.notes.len();
        let adaptive = strat.adaptive();
        let quick = adaptive && self.devices[0].compiles_quickly();
        let mut progress = Progress {
            evaluated: vec![false; plan.cands.len()],
            in_flight: vec![false; plan.cands.len()],
            count: 0,
            flying: 0,
            max_evals: plan.max_evals.unwrap_or(usize::MAX),
            deadline: opts.budget.max_seconds.map(|s| t0 + Duration::from_secs_f64(s)),
            stopped_before: crate::measure::awake::stopped(),
            wrap_up: opts.wrap_up.clone(),
            first_timed: None,
            reserve: Duration::ZERO,
            cancelled: false,
            compile_s: (0.0, 0),
            eval_s: (0.0, 0),
            cache: if adaptive && !quick { self.in_compile_cache(0).map(|_| (0, 0)) } else { None },
            quick,
        };
        let mut refs = self.reference_state(ledger);
        let flow = Flow::default();
        // Other devices' recorded compile times order a queued-ahead budget longest first from
        // the first compile (`strategy` gives them only to such a strategy: an adaptive one
        // keeps too few proposals queued to reorder).
        let mut times = CompileTimes::new(opts.seed).with_prior(&compile_prior);
        if times.has_prior() {
            ledger.notes.push(format!(
                "compile order: longest first by the compile times the prior's devices recorded ({} of {} candidates), rescaled to this machine's as its compiles finish",
                compile_prior.iter().filter(|t| t.is_finite()).count(),
                view.len()
            ));
        }
        let mut failure: Option<Error> = None;
        // The CPU reference's outputs, from its thread.
        let host_ref: HostRef = Default::default();
        std::thread::scope(|s| {
            failure = self.spawn_compilers(s, threads, &flow).err();
            if failure.is_none() && matches!(refs, RefState::Computing) {
                let (ctx, tx, slot, late) = (self.ctx, self.tx.clone(), &host_ref, self.late.clone());
                let spawned = std::thread::Builder::new().name("kerntune-reference".into()).spawn_scoped(s, move || {
                    let t = Instant::now();
                    let r = host_reference(ctx);
                    tracing::debug!(seconds = t.elapsed().as_secs_f64(), since_start = t0.elapsed().as_secs_f64(), "CPU reference computed");
                    if let Ok(made) = &r {
                        let _ = late.set(made.clone());
                    }
                    *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some((r, t, t.elapsed().as_secs_f64()));
                    let _ = tx.send(Msg::HostReference);
                });
                if let Err(e) = spawned {
                    failure = Some(Error::Reference(format!("starting the CPU reference's thread: {e}")));
                }
            }
            let _stop = StopOnDrop(&flow);
            let mut l = Turn { plan, ledger, strat: strat.as_mut(), progress: &mut progress, view: &view, flow: &flow, times: &mut times, threads, adaptive };
            if failure.is_none() {
                self.next_reference(&mut l, &mut refs);
                // Not for a shard: the records in a database its split shares may be other
                // shards', and each portfolio member is to spend its own share of the budget.
                // A random search too (its sample drawn by another seed, or by the shards of a
                // split: `tune --budget 60` after a split of 40 measured 54 more, not 20).
                if (adaptive || l.strat.name() == "random") && self.opts.shard.is_none() {
                    self.tell_known(&mut l);
                }
                self.feed(&mut l);
            }
            loop {
                if failure.is_some() {
                    flow.stop();
                }
                if failure.is_none() && !l.progress.cancelled {
                    // A free device gets its next compiled config before the strategy is asked
                    // for more: a model-guided strategy fits its model as it is asked (several
                    // milliseconds, longer with every core compiling), and asked first it held
                    // the device idle meanwhile (hybrid's 6-second tunes of SGEMM 410 on an
                    // H100: idle 1.07 s after the first job, 0.71 s with the device served
                    // first, and 228 evaluations became 251; docs/benchmarks.md). What is
                    // measured next is the same: the configs asked now are not compiled yet, so
                    // nothing the strategy asks can be sent before a compile's message comes.
                    self.dispatch(&mut l, &mut refs);
                    self.feed(&mut l);
                }
                // Written once the devices have their next jobs: a database write (3–26 ms every
                // half second on the H100 machine's SGEMM tune) no longer holds a device idle.
                l.ledger.maybe_flush();
                let idle = self.busy.iter().all(Option::is_none);
                if l.progress.flying == 0 && idle {
                    break;
                }
                // Stopping: what is queued is dropped; the loop waits for the devices, and
                // tells the compiles still running that it no longer waits for them (a backend
                // compiling through `abandonable` returns within 20 ms).
                self.keep_final_reserve(&mut l);
                let stopping = failure.is_some() || l.progress.cancelled || l.progress.out_of_time();
                if stopping {
                    let why = l.progress.ending();
                    self.abandon_running(&mut l, why);
                } else {
                    self.watch_compile_timeout(&l);
                    self.watch_tail(&mut l, &refs);
                }
                if stopping && idle && flow.running().is_empty() {
                    break;
                }
                if !self.live.iter().any(|&x| x) && self.busy.iter().all(Option::is_none) {
                    failure.get_or_insert_with(|| Error::Backend(self.every_device_lost(l.ledger)));
                    break;
                }
                let msg = match self.rx.recv_timeout(Duration::from_millis(100)) {
                    Ok(m) => Some(m),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                };
                if !l.progress.cancelled && opts.cancelled() {
                    l.progress.cancelled = true;
                    flow.stop();
                    // What waits on the shortlist was verified and timed by one launch: kept
                    // so (a later run's final round measures the contenders among them in
                    // full), not thrown away with the process.
                    let timed_once = self.settle_shortlist(&mut l, &mut refs);
                    let saved = l.ledger.flush_or_keep();
                    emit(opts.observer.as_ref(), Event::Interrupted { kept: l.ledger.kept(), timed_once, compiling: l.progress.flying, saved });
                }
                let r = match msg {
                    Some(Msg::Compiled(done)) => self.compiled(&mut l, &mut refs, done, failure.is_some()),
                    Some(Msg::Device(a)) => self.answered(&mut l, &mut refs, a),
                    Some(Msg::HostReference) => self.host_reference_ready(l.ledger, &mut refs, &host_ref),
                    None => Ok(()),
                };
                if let Err(e) = r {
                    failure.get_or_insert(e);
                }
                self.keep_final_reserve(&mut l);
                if l.progress.out_of_time() || l.progress.cancelled || failure.is_some() {
                    // Nothing new starts; what waits for a device is dropped.
                    flow.stop();
                    for (i, _, _) in std::mem::take(&mut self.ready) {
                        l.progress.in_flight[i] = false;
                        l.progress.flying -= 1;
                        flow.waiting.fetch_sub(1, Ordering::Relaxed);
                    }
                    self.settle_shortlist(&mut l, &mut refs);
                }
            }
            flow.stop();
            self.oom_workers.hold_end = Some((flow.queue.held_to(), threads));
        });
        // The reference's thread has ended with the scope: a reference made after the loop
        // stopped is kept for the final round. Configs held unverified then (time limit,
        // interrupt) are recorded so, as a sample would leave them, and the final round
        // verifies the contenders among them.
        if failure.is_none() {
            failure = self.host_reference_ready(ledger, &mut refs, &host_ref).err();
        }
        if failure.is_none() && !self.held.is_empty() {
            let mut held: Vec<(usize, Held<B::Kernel>)> = self.held.drain().collect();
            held.sort_by_key(|h| h.0);
            for (i, h) in held {
                let r = self.held_result(ledger, i, h, false);
                ledger.record(r, true);
            }
        }
        // What the first flight was sized by, said once it is known.
        let (_, most) = sizing((0.0, 0), (0.0, 0), None, self.devices.len(), threads, true);
        let warm = pipeline::warm_capacity(self.devices.len());
        let why = match progress.cache {
            _ if progress.quick => Some("compiling a config takes a fraction of measuring it on this backend".to_string()),
            Some((1, 0)) => Some("compile cache: the first config asked for was compiled before".to_string()),
            Some((hits, 0)) if hits > 1 => Some(format!("compile cache: the first {hits} configs asked for were compiled before")),
            _ => None,
        };
        match why.filter(|_| most > warm) {
            Some(why) => ledger.notes.insert(
                flight_notes_at,
                format!(
                    "{why}, so {warm} were kept in flight (not {most}) until an evaluation was timed: the search chose each config after the \
                     outcomes before it were in"
                ),
            ),
            None => {
                ledger.notes.splice(flight_notes_at..flight_notes_at, flight_notes);
            }
        }
        let tail = std::mem::replace(&mut self.tail, Tail::new(None)).finish();
        if let Some(line) = tail.line() {
            ledger.notes.push(line);
        }
        ledger.compile_tail = Some(tail);
        // Told to end (whenever: while configs were in flight, or none), with configs and budget
        // left: told as the last configs were measured, nothing was left, and it did not end early.
        let left = progress.count < progress.max_evals && progress.evaluated.iter().any(|e| !e);
        let ended_early = progress.wrapped_up() && left;
        // Stopped by its time limit with configs and evaluations left: kept with the run, so
        // that a later tune given more time searches on (`lookup::searches_on`). A loop that
        // stopped at the limit finds it over here still (the reserve no longer changes).
        if progress.at_time_limit() && !progress.cancelled && !progress.wrapped_up() && left {
            ledger.time_limit_ms = opts.budget.max_seconds.map(|s| (s * 1000.0).round() as u64);
        }
        if ended_early && !progress.cancelled {
            ledger.ended_early = true;
            let of = if progress.max_evals < usize::MAX { format!(" of its budget of {}", progress.max_evals) } else { String::new() };
            ledger.notes.push(format!(
                "ended early, as asked (`kerntune tune` ends so on SIGUSR1 or SIGUSR2, the warning a scheduler sends before a job's time \
                 limit), after {} evaluation{}{of}: the winner is the best of those, stored for launches; the same command goes on from them",
                progress.count,
                if progress.count == 1 { "" } else { "s" }
            ));
        }
        if let Some(line) = self.compiler_deaths_line() {
            ledger.notes.push(line);
        }
        if let Some(line) = self.oom_workers.line() {
            self.oom_note_at = Some(ledger.notes.len());
            ledger.notes.push(line);
        }
        // Kept with the measurements whatever comes next (a failure or a stop flushes them).
        let summary = strat.summary();
        let made_by = self.reference_cand.map(|i| self.plan.cands[i].config.to_string());
        // A run of listed configs (`kerntune confirm`'s) searched nothing: said so, not as the
        // exhaustive search that measured them.
        let name = if opts.only.is_some() { crate::store::db::LISTED.to_string() } else { strat.name() };
        ledger.note_search(name.clone(), summary.clone(), self.ctx.job.verify.in_full(made_by.as_deref()));
        if let Some(e) = failure {
            return Err(e);
        }
        if progress.cancelled {
            let saved = ledger.flush_or_keep();
            return Err(Error::Interrupted { kept: ledger.kept(), saved: opts.db.is_some() && saved });
        }
        if let RefState::Trying { .. } = refs {
            ledger.notes.push("no config ran to make the reference outputs".into());
        }
        if let Some(line) = summary {
            ledger.notes.push(line);
        }
        Ok(name)
    }

    /// The strategy: the one asked for, with priors where it learns from them. `auto` is the
    /// transfer search when there are priors, else exhaustive. With it, the compile seconds
    /// the priors recorded per candidate, for a strategy that queues its budget ahead (empty
    /// otherwise, or without them). Files named with `--prior` are read whatever the strategy
    /// (their compile times order the compiles); the database's priors only for the transfer
    /// search. And the transfer search's notes on its first flight.
    fn strategy(&self, ledger: &mut Ledger<'_>, view: &Candidates<'_>, threads: usize) -> Result<Chosen, Error> {
        let opts = self.opts;
        let named = strategy::by_name(&opts.strategy, 0).ok();
        let wants = opts.strategy == "auto"
            || named.as_ref().is_some_and(|s| s.name() == "transfer")
            || matches!(opts.prior, crate::run::priors::PriorSetting::Files(_));
        // Compile times are used, and read from databases, only for a strategy named that
        // queues its budget ahead (the only kind they order; `auto` with priors is the transfer
        // search); reading them costs more than the times.
        let budgeted = self.plan.max_evals.is_some() || opts.budget.max_seconds.is_some() || opts.budget.within.is_some();
        let read_compile = named.is_some_and(|s| !s.adaptive()) || (opts.strategy == "auto" && !budgeted);
        let prior = if wants { crate::run::priors::gather(self.ctx, opts, &self.devices[0].target().fingerprint, view, read_compile) } else { None };
        let usable = prior.as_ref().is_some_and(|(p, _)| !p.is_empty());
        // A tune with no budget measures every config; another target's results still change
        // the search (as documented), but this target's own other problem sizes only order the
        // compiles: a library tuning its problems one after another exhaustively is not turned
        // into a transfer search from its second problem on.
        let only_here = prior.as_ref().is_some_and(|(p, _)| p.problems_here == p.sources.len());
        let name = match opts.strategy.as_str() {
            "auto" if usable && (budgeted || !only_here) => "transfer",
            // A `%` budget stops on a model's prediction: the exhaustive search has none. A
            // budget that stops before every candidate is measured would give the exhaustive
            // search the first ones in the space's order (the smallest values of the first
            // parameters): it gets the search that uses a few evaluations best, as a T1 file's
            // budget does.
            "auto"
                if budgeted && (opts.budget.within.is_some() || opts.budget.max_seconds.is_some() || self.plan.max_evals.is_some_and(|b| b < view.len())) =>
            {
                "hybrid"
            }
            "auto" => "exhaustive",
            other => other,
        };
        let bad = |m: String| Error::Spec(SpecError { file: self.ctx.job.origin.clone(), field: "strategy".into(), message: m });
        let compile = prior.as_ref().filter(|_| read_compile).map(|(p, _)| p.compile_s.clone()).unwrap_or_default();
        // What the first flight is sized by, for the transfer search: said once the tune knows
        // whether its first proposals were in the compile cache (see `search`).
        let mut flight = Vec::new();
        let strat: Box<dyn Strategy> = match (name, prior) {
            ("transfer", Some((p, report))) => {
                ledger.prior = Some(report);
                if p.is_empty() {
                    ledger.notes.push("no usable prior: the transfer search is its fallback, the hybrid search".into());
                }
                // The sources are checked on what is measured; before any compile or measurement
                // has been timed, a tune keeps as many proposals in flight as the sources' seconds
                // say keep the slower stage busy (one and a half per compile thread where
                // compiling bounds it, or without their seconds), so a budget under twice that is
                // mostly chosen before anything is measured. Fewer compile threads are not the
                // cure: simulated, a GPU unlike the fleet fares no better with 6 in flight (`-j 4`)
                // than with 24 (`-j 16`), and better with a budget of twice the flight
                // (docs/benchmarks.md, "How many configs a tune keeps in flight").
                let (_, early) = sizing((0.0, 0), (0.0, 0), p.seconds, self.devices.len(), threads, true);
                let (_, most) = sizing((0.0, 0), (0.0, 0), None, self.devices.len(), threads, true);
                if let Some((c, e)) = p.seconds.filter(|_| early < most) {
                    flight.push(format!(
                        "transfer: the sources spent {c:.3} s compiling and {e:.3} s evaluating a config, so {early} proposals are kept in \
                         flight until this device has timed an evaluation (not {most}): fewer are chosen before any outcome is in"
                    ));
                }
                if let Some(b) = self.plan.max_evals.filter(|&b| !p.is_empty() && threads > 1 && b < 2 * early) {
                    let (first, checked) = if early >= b {
                        ("all".to_string(), "only by the picks in flight withdrawn, and replaced, as outcomes rank them lower")
                    } else {
                        (format!("about {early}"), "only in the rest")
                    };
                    flight.push(format!(
                        "transfer: {threads} compile threads ask for {first} of the budget's {b} configs before any is measured, so the sources' \
                         picks are checked against this device {checked}; for a device that may be unlike the sources, a budget of {} or more \
                         leaves most of it to be chosen after outcomes are in, and --no-prior tunes without them",
                        2 * early
                    ));
                }
                let base = || strategy::for_budget("hybrid", opts.strategy_seed(), &opts.budget).map_err(bad);
                Box::new(crate::search::Transfer::adaptive(p, base, self.plan.max_evals)?)
            }
            (_, report) => {
                if name == "transfer" && report.is_none() {
                    let why = if matches!(opts.prior, crate::run::priors::PriorSetting::Off) { "--no-prior" } else { "no database to learn from (--no-db)" };
                    ledger.notes.push(format!("{why}: the transfer search is its fallback, the hybrid search"));
                }
                // Files named with another strategy: say what they are used for.
                if opts.strategy == "auto" && usable {
                    ledger.notes.push(format!(
                        "with no budget every config is measured: this target's other problems only order the compiles{}; give a budget \
                         (--budget 20, say) to tune from them in a few evaluations",
                        if compile.is_empty() { " (they recorded no compile times)" } else { "" }
                    ));
                } else if report.as_ref().is_some_and(|(p, _)| !p.is_empty()) {
                    let ordered = !compile.is_empty();
                    ledger.notes.push(format!(
                        "--strategy {name} does not learn from the prior's times (the transfer search does: --strategy transfer, or no --strategy); {}",
                        if ordered { "its compile times order the compiles" } else { "it is not used" }
                    ));
                }
                ledger.prior = report.map(|r| r.1);
                strategy::for_budget(name, opts.strategy_seed(), &opts.budget).map_err(bad)?
            }
        };
        Ok(Chosen { strat, compile, flight })
    }

    /// The CPU reference's thread has put its outputs (or why there are none) in `slot`: from
    /// now on configs are verified as they are measured, and the held ones are queued to be.
    fn host_reference_ready(&mut self, ledger: &mut Ledger<'_>, refs: &mut RefState, slot: &HostRef) -> Result<(), Error> {
        let Some((made, started, seconds)) = slot.lock().unwrap_or_else(|p| p.into_inner()).take() else { return Ok(()) };
        ledger.reference_computed(started, seconds);
        let reference = made?;
        ledger.reference = Some(reference);
        if matches!(refs, RefState::Computing) {
            *refs = RefState::Ready;
        }
        let mut held: Vec<usize> = self.held.keys().copied().collect();
        held.sort_unstable();
        self.to_verify.extend(held);
        Ok(())
    }

    /// Why every device is out of the tune: the problem's own words when it fitted on none, the
    /// worker's when none could start one.
    fn every_device_lost(&self, ledger: &Ledger<'_>) -> BackendError {
        if let (n, Some(why)) = &self.no_room {
            if *n == ledger.devices.len() {
                return BackendError::ProblemTooLarge(why.clone());
            }
        }
        if let (n, Some(why)) = &self.no_start {
            if *n == ledger.devices.len() {
                return BackendError::WorkerStart(why.clone());
            }
        }
        let reasons: Vec<String> = ledger.devices.iter().filter_map(|d| d.lost.as_ref().map(|l| format!("device {} ({}): {l}", d.index, d.name))).collect();
        BackendError::DeviceLost(format!("every device was lost: {}", reasons.join("; ")))
    }

    /// No config can run on device `d` (see [`BackendError::device_unusable`]: the problem's
    /// buffers did not fit, or its worker could not start): `d` leaves the tune, and the job is
    /// not the config's failure. Whether another device can run it (without one the loop ends
    /// with [`Self::every_device_lost`]).
    fn unusable(&mut self, ledger: &mut Ledger<'_>, d: usize, e: &BackendError) -> bool {
        let (count, why) = match e {
            BackendError::ProblemTooLarge(why) => (&mut self.no_room, format!("the problem does not fit on it: {why}")),
            other => (&mut self.no_start, other.to_string()),
        };
        if self.live[d] {
            count.0 += 1;
            count.1.get_or_insert_with(|| e.to_string());
        }
        self.lose(ledger, d, why);
        self.live.iter().any(|&x| x)
    }

    /// The reference's starting state.
    fn reference_state(&self, ledger: &mut Ledger<'_>) -> RefState {
        let plan = self.plan;
        if plan.cands.iter().all(|c| ledger.known.contains_key(&c.config.key())) {
            return RefState::Unneeded;
        }
        match &self.ctx.job.verify.reference {
            Reference::None => RefState::Unneeded,
            Reference::Host(..) => RefState::Computing,
            Reference::Expected(_) => RefState::Ready,
            Reference::DefaultConfig => RefState::Trying { order: plan.reference_order(true), pos: 0, current: None, sent: false },
            Reference::FirstValid => RefState::Trying { order: plan.reference_order(false), pos: 0, current: None, sent: false },
        }
    }

    /// Starts the compile threads: each takes the next queued candidate, compiles it and sends
    /// it back, until the queue closes. A thread waits while many compiled configs wait for a
    /// device, so that compiling far ahead does not fill memory with kernels.
    fn spawn_compilers<'s>(&self, s: &'s std::thread::Scope<'s, '_>, threads: usize, flow: &'s Flow) -> Result<(), Error>
    where
        'e: 's,
    {
        let (plan, prep, source, backend) = (self.plan, &self.ctx.prep, &self.ctx.job.source, &self.devices[0]);
        let limit = 2 * threads + 2 * self.devices.len();
        // In compiler processes where the tuner may have to stop a compile (see
        // `crate::compiler`): a thread cannot be stopped.
        let in_process = crate::compiler::wanted(self.opts.compile_timeout.is_some());
        for w in 0..threads {
            let tx = self.tx.clone();
            let compile = move || loop {
                let next = loop {
                    if flow.waiting.load(Ordering::Relaxed) < limit || flow.cancel.load(Ordering::Relaxed) {
                        break flow.queue.pop();
                    }
                    // Held back, but the candidate the tune waits on is compiled all the same
                    // (see `CompileQueue::pop_urgent`), and only it.
                    if let Some(urgent) = flow.queue.pop_urgent() {
                        break Some(urgent);
                    }
                    std::thread::sleep(Duration::from_millis(2));
                };
                let Some((i, behind)) = next else { return };
                if flow.cancel.load(Ordering::Relaxed) {
                    flow.queue.done(i, false);
                    continue;
                }
                let c: &Cand = &plan.cands[i];
                let t = Instant::now();
                let watch = Arc::new(crate::backend::CompileWatch::wanting(in_process));
                let awake = crate::measure::awake::Since::now();
                flow.running().push(Running { cand: i, start: awake, watch: watch.clone() });
                let inputs = CompileInputs::new(prep, source, &c.config, &c.launch);
                let req = crate::backend::CompileRequest { abandon: Some(&watch), ..inputs.request(source, &c.config, &c.launch) };
                // Asked first (a lookup of the cache key): a compile error the cache serves is
                // the compiler's earlier one, which the error itself does not say.
                let held = backend.in_compile_cache(&req) == Some(true);
                let result = backend.compile(&req);
                flow.running().retain(|r| r.cand != i);
                flow.queue.done(i, result.is_ok() && !held);
                flow.waiting.fetch_add(1, Ordering::Relaxed);
                if tx.send(Msg::Compiled(CompileDone { index: i, result, started: t, seconds: awake.elapsed().as_secs_f64(), behind, held })).is_err() {
                    return;
                }
            };
            std::thread::Builder::new()
                .name(format!("kerntune-compile-{w}"))
                .spawn_scoped(s, compile)
                .map_err(|e| Error::Backend(BackendError::other(format!("starting a compile thread: {e}"))))?;
        }
        Ok(())
    }

    /// Stops waiting for compiles in the tail: when every device is idle, nothing compiled or
    /// queued waits, and every compile still running has run past the tail's limit, a search
    /// whose budget counts evaluations and whose strategy allows it waits as long as a new
    /// compile takes on average ([`Tail::patience`]), then abandons them; their evaluations go
    /// to other configs. The wait is timed for the report. A reference candidate being tried
    /// is always waited for.
    fn watch_tail(&mut self, l: &mut Turn<'_, '_, '_>, refs: &RefState) {
        let hostage = self.ready.is_empty() && self.busy.iter().all(Option::is_none) && l.flow.queue.len() == 0;
        let running = l.flow.elapsed();
        let limit = if hostage && !running.is_empty() { self.tail.limit() } else { None };
        let Some(limit) = limit.filter(|&x| running.iter().all(|r| r.1 > x)) else {
            self.tail.waiting(false);
            return;
        };
        let trying = match refs {
            RefState::Trying { current, .. } => *current,
            _ => None,
        };
        let replaceable = l.strat.replaceable() && self.plan.max_evals.is_some() && self.opts.only.is_none();
        self.tail.waiting(true);
        if !replaceable || running.iter().any(|r| Some(r.0) == trying) || self.tail.waited() < self.tail.patience() {
            return;
        }
        for (i, secs) in running {
            if self.tail.is_abandoned(i) {
                continue;
            }
            if let Some(r) = l.flow.running().iter().find(|r| r.cand == i) {
                r.watch.abandon();
            }
            let config = self.plan.cands[i].config.key();
            tracing::info!(config, seconds = secs, limit, "stopped waiting for a compile in the tail");
            let replaced = self.tail.abandon(i, config, secs);
            l.progress.in_flight[i] = false;
            l.progress.flying -= 1;
            // Not proposed again in this tune, and not stored: a later tune tries it again.
            l.progress.evaluated[i] = true;
            l.progress.count += usize::from(!replaced);
            l.strat.tell(i, &crate::search::Outcome::Failed(crate::error::FailureKind::TimedOut));
        }
    }

    /// Gives up on every compile that has run past [`TuneOptions::compile_timeout`]: told to stop
    /// waiting, it answers at once (in a compiler process, killed: see [`crate::compiler`]), and
    /// its config fails ([`Self::compiled`]). Where the compile's thread or process tells its CPU
    /// time (a backend compiling through [`crate::backend::abandonable`] or a compiler process, on
    /// Linux), that is what the limit bounds: the compiles running beside it share the cores, and
    /// would otherwise make a short compile look long. A compile that does not use the CPU is
    /// given up on after three times the limit of wall time, as waiting (on an H200, NVRTC kept
    /// 100-line kernels waiting, at 0.0 s of CPU, beside 10^5-line ones).
    fn watch_compile_timeout(&mut self, l: &Turn<'_, '_, '_>) {
        let Some(limit) = self.opts.compile_timeout else { return };
        let limit = limit.as_secs_f64();
        for r in l.flow.running().iter() {
            let wall = r.start.elapsed().as_secs_f64();
            // CPU time never exceeds wall time on one thread: read only once the wall is past.
            if wall <= limit || r.watch.abandoned() {
                continue;
            }
            let cpu = r.watch.cpu_seconds();
            if cpu.is_none_or(|c| c > limit || (wall > TIMED_OUT_WALL * limit && c < limit / 10.0)) {
                r.watch.abandon();
                tracing::info!(config = self.plan.cands[r.cand].config.key(), wall, cpu, limit, "compile timed out");
                self.compile_timed_out.insert(r.cand, (wall, cpu, r.watch.process().is_some()));
            }
        }
    }

    /// At the time limit or when interrupted, tells every compile still running that the tune
    /// no longer waits for it (`why`: recorded in the report; `None`: a failure ends the tune).
    fn abandon_running(&mut self, l: &mut Turn<'_, '_, '_>, why: Option<&str>) {
        let mut newly = Vec::new();
        for r in l.flow.running().iter() {
            if !r.watch.abandon() {
                newly.push((r.cand, r.start.elapsed().as_secs_f64()));
            }
        }
        if let Some(why) = why {
            // Not remembered as abandoned: while stopping, the loop drops every late answer.
            for (i, secs) in newly {
                self.tail.record(self.plan.cands[i].config.key(), secs, why, false);
            }
        }
    }

    /// The proposals to keep in flight now ([`sizing`] over the live devices) and whether queued
    /// compiles start longest first (compiling bounds the tune).
    fn pipeline_now(&self, l: &Turn<'_, '_, '_>) -> (usize, bool) {
        let devices = self.live.iter().filter(|&&x| x).count();
        let ((compile, eval), capacity) = sizing(l.progress.compile_s, l.progress.eval_s, l.strat.expected_seconds(), devices, l.threads, l.adaptive);
        (capacity, pipeline::compile_bound(compile, eval, l.threads))
    }

    /// Asks the strategy for work until enough candidates are in flight (or the budget is
    /// spoken for) and queues the fresh ones by predicted compile time.
    fn feed(&self, l: &mut Turn<'_, '_, '_>) {
        let (sized, longest_first) = self.pipeline_now(l);
        let warm = sized.min(pipeline::warm_capacity(self.live.iter().filter(|&&x| x).count()));
        let mut idle = 0;
        loop {
            // While the proposals are compile-cache hits and nothing has been timed, compiling
            // does not bound the tune: a few in flight keep the devices busy.
            let capacity = if l.progress.warm_start() { warm } else { sized };
            if l.progress.flying >= capacity || l.progress.room() == 0 || l.progress.done() || idle >= 1000 {
                break;
            }
            if let Some(left) = l.progress.evaluations_left_in_time() {
                l.strat.evaluations_left_in_time(left);
            }
            let asked = l.strat.ask(l.view, (capacity - l.progress.flying).min(l.progress.room()));
            if asked.is_empty() {
                return;
            }
            let n = asked.len();
            let fresh = self.triage(l, asked);
            idle = if fresh.is_empty() { idle + 1 } else { 0 };
            let queued = fresh.len();
            for i in fresh {
                if let Some(by) = l.strat.proposed_by(i) {
                    l.ledger.proposed.insert(self.plan.cands[i].config.key(), by);
                }
                l.progress.in_flight[i] = true;
                l.progress.flying += 1;
                l.flow.queue.push(i, if longest_first { l.times.predict(l.view, i) } else { 0.0 });
                if l.progress.probing() {
                    if let Some((hits, missed)) = l.progress.cache.as_mut() {
                        match self.in_compile_cache(i) {
                            Some(true) => *hits += 1,
                            _ => *missed += 1,
                        }
                    }
                }
            }
            tracing::debug!(asked = n, queued, in_flight = l.progress.flying, capacity, evaluated = l.progress.count, "proposals asked of the strategy");
        }
    }

    /// Whether candidate `i`'s compile would be served from the compile cache of the backend
    /// that compiles (see [`Backend::in_compile_cache`]).
    fn in_compile_cache(&self, i: usize) -> Option<bool> {
        in_compile_cache(&self.devices[0], self.ctx, self.plan, i)
    }

    /// Tells an adaptive strategy or a random search, before it proposes anything, what the
    /// database already holds of this entry (a tune resumed after an interruption, or run again
    /// with another budget):
    /// the records count toward the budget, as they do for a search that asks for them in
    /// order, and the search goes on from them instead of spending the budget elsewhere and
    /// leaving them out of the pick. The reference candidate, in flight already, is run again
    /// (its outputs are not stored). The fastest are told first, and failures last: a budget
    /// smaller than the records keeps the best of them.
    fn tell_known(&self, l: &mut Turn<'_, '_, '_>) {
        let plan = self.plan;
        let mut known: Vec<(f64, usize, String)> = (0..plan.cands.len())
            .filter(|&i| !l.progress.in_flight[i] && !l.progress.evaluated[i])
            .filter_map(|i| {
                let key = plan.cands[i].config.key();
                let mean = l.ledger.known.get(&key)?.stats().map_or(f64::INFINITY, |s| s.mean);
                Some((mean, i, key))
            })
            .collect();
        known.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for (_, i, key) in known {
            if l.progress.room() == 0 {
                break;
            }
            self.answer_from_db(l, i, &key);
        }
    }

    /// Records candidate `i`'s measurement (its config's key `key`) from the database, if it has
    /// one, and tells the strategy; whether it had one.
    fn answer_from_db(&self, l: &mut Turn<'_, '_, '_>, i: usize, key: &str) -> bool {
        let Some(m) = l.ledger.known.get(key) else { return false };
        let r = to_result(m, true, self.ctx.prep.metrics(&self.plan.cands[i].config));
        l.ledger.record(r, false);
        told(l, i);
        true
    }

    /// Answers what is known (evaluated before, or in the database) and returns the candidates
    /// that must be compiled and measured, within the budget; candidates in flight are skipped.
    fn triage(&self, l: &mut Turn<'_, '_, '_>, asked: Vec<usize>) -> Vec<usize> {
        let plan = self.plan;
        let mut fresh = Vec::new();
        for i in asked.into_iter().filter(|&i| i < plan.cands.len()) {
            let key = plan.cands[i].config.key();
            if l.progress.in_flight[i] || fresh.contains(&i) {
                continue;
            } else if l.progress.evaluated[i] {
                l.strat.tell(i, &l.ledger.outcome_of(&key));
            } else if !self.answer_from_db(l, i, &key) && fresh.len() < l.progress.room() {
                fresh.push(i);
            }
        }
        fresh
    }

    /// The next reference candidate to try (or none left): in order while the budget has
    /// room, else among the candidates already in flight.
    fn next_reference(&self, l: &mut Turn<'_, '_, '_>, refs: &mut RefState) {
        let RefState::Trying { order, pos, current, sent } = refs else { return };
        if current.is_some() {
            return;
        }
        *sent = false;
        while *pos < order.len() && l.progress.evaluated[order[*pos]] {
            *pos += 1;
        }
        let next = order.get(*pos).copied();
        let pick = match next {
            Some(j) if l.progress.in_flight[j] || l.progress.room() > 0 => Some(j),
            // No room for another config: try the ones this tune measures anyway.
            _ => order[(*pos).min(order.len())..].iter().copied().find(|&j| l.progress.in_flight[j]),
        };
        let Some(j) = pick else { return };
        *pos = order.iter().position(|&x| x == j).map_or(*pos, |p| p.max(*pos));
        *current = Some(j);
        if !l.progress.in_flight[j] {
            l.progress.in_flight[j] = true;
            l.progress.flying += 1;
            l.flow.queue.push_first(j);
        } else {
            // Queued already (or compiling, or compiled): first in line if it still waits.
            l.flow.queue.promote(j);
        }
    }

    /// Sends waiting configs to free devices: the reference candidate alone while a reference
    /// is being made, then everything in order.
    fn dispatch(&mut self, l: &mut Turn<'_, '_, '_>, refs: &mut RefState) {
        if self.send_waiting(l, refs) {
            self.feed(l);
        }
    }

    /// [`Self::dispatch`]'s work: whether the strategy withdrew a proposal.
    fn send_waiting(&mut self, l: &mut Turn<'_, '_, '_>, refs: &mut RefState) -> bool {
        if self.oom_workers.draining(&l.flow.queue) {
            // A worker was killed for memory: the compiles beside it end first.
            return false;
        }
        let mut withdrew = false;
        for d in 0..self.live.len() {
            if self.live[d] && self.busy[d].is_none() {
                if let Some(job) = self.extra[d].pop_front() {
                    self.send(l, d, job, false);
                }
            }
        }
        // Held configs are verified before anything new is measured.
        while let Some(reference) = l.ledger.reference.clone().filter(|_| !self.to_verify.is_empty()) {
            let Some(d) = self.free_device() else { break };
            let Some(cand) = self.to_verify.pop_front() else { break };
            let Some(kernel) = self.held.get(&cand).map(|h| h.kernel.clone()) else { continue };
            self.send(l, d, Job::Verify { cand, kernel, launch: self.plan.cands[cand].launch, reference }, true);
        }
        while let Some(d) = self.free_device() {
            if let RefState::Trying { current: Some(j), sent, .. } = refs {
                if *sent {
                    break;
                }
                let Some(at) = self.ready.iter().position(|r| r.0 == *j) else { break };
                let (cand, kernel, _) = self.ready.remove(at).expect("found");
                l.flow.waiting.fetch_sub(1, Ordering::Relaxed);
                *sent = true;
                self.send(l, d, Job::Reference { cand, kernel, launch: self.plan.cands[cand].launch }, true);
                continue;
            }
            if matches!(refs, RefState::Trying { .. }) {
                break;
            }
            let Some((cand, kernel, _)) = self.ready.pop_front() else {
                // Nothing else waits: the shortlist, the fastest verification launch first.
                let Some(x) = self.take_listed(l.ledger, d) else { break };
                let prior = if x.device == d { x.prior } else { Vec::new() };
                let best = l.ledger.best_on(d);
                let job = Job::Measure {
                    cand: x.cand,
                    kernel: x.kernel,
                    launch: self.plan.cands[x.cand].launch,
                    reference: None,
                    late: None,
                    best,
                    purpose: Purpose::Search,
                    short: Short::Resumed { prior },
                };
                self.send(l, d, job, true);
                continue;
            };
            l.flow.waiting.fetch_sub(1, Ordering::Relaxed);
            // Outcomes told since it was asked may have changed the strategy's mind: one it no
            // longer wants is not measured, and feeding asks for another in its place.
            if !l.progress.evaluated[cand] && Some(cand) != self.reference_cand && !l.strat.still_wanted(l.view, cand) {
                l.progress.in_flight[cand] = false;
                l.progress.flying -= 1;
                withdrew = true;
                continue;
            }
            let picked = Some(cand) != self.reference_cand && self.ctx.job.verify.sample.picks(&self.plan.cands[cand].config.key(), l.ledger.verified);
            let computing = matches!(refs, RefState::Computing);
            let verify = l.ledger.reference.clone().filter(|_| picked && !computing);
            let late = (picked && computing).then(|| self.late.clone());
            if late.is_some() {
                // Verified with its measurement if the CPU reference is made by the time the
                // device takes the job; otherwise measured now and verified once it is made.
                self.deferred.insert(cand);
            }
            l.ledger.verified += usize::from(verify.is_some() || late.is_some());
            let best = l.ledger.best_on(d);
            // The fastest listed verification launch, on this device's scale.
            let fastest = self.fastest_listed.map(|f| f * l.ledger.ratios[d]);
            let short = match () {
                _ if self.plan.cands[cand].is_default => Short::Baseline,
                _ if self.shortlisting(l) && (verify.is_some() || late.is_some()) => Short::May { fastest },
                _ => Short::No,
            };
            let job = Job::Measure { cand, kernel, launch: self.plan.cands[cand].launch, reference: verify, late, best, purpose: Purpose::Search, short };
            self.send(l, d, job, true);
        }
        withdrew
    }

    /// Whether configs may wait on the shortlist: with racing and a strategy whose proposals do
    /// not depend on outcomes (exhaustive, random), which every config on it then waits for; an
    /// adaptive strategy is told each outcome as soon as it is measured.
    fn shortlisting(&self, l: &Turn<'_, '_, '_>) -> bool {
        self.opts.bench.racing && !l.adaptive
    }

    /// For device `d`, the config on the shortlist with the fastest verification launch, taken
    /// off it: of those verified on `d` while there are any (their verification launch is a
    /// sample there, so a clear loser races out on it), else of all, on the judging device's
    /// scale.
    fn take_listed(&mut self, ledger: &Ledger<'_>, d: usize) -> Option<Listed<B::Kernel>> {
        let own = self.shortlist.iter().any(|x| x.device == d);
        let at = (0..self.shortlist.len())
            .filter(|&i| !own || self.shortlist[i].device == d)
            .min_by(|&a, &b| self.shortlist[a].judged(&ledger.ratios).total_cmp(&self.shortlist[b].judged(&ledger.ratios)))?;
        Some(self.shortlist.swap_remove(at))
    }

    /// Sets [`Progress::reserve`] to [`Coordinator::final_reserve`] until the search's time is
    /// up: from then on it stays (the stop settles the shortlist, and a reserve of zero would
    /// have the loop wait, idle, for the whole limit).
    fn keep_final_reserve(&self, l: &mut Turn<'_, '_, '_>) {
        if !l.progress.out_of_time() {
            l.progress.reserve = self.final_reserve(l);
        }
    }

    /// What a time limit keeps for the final round while configs wait on the shortlist: a stop then
    /// leaves them with their verification launch, and the final round measures the winner's
    /// contenders among them in full (commonly one or two, each a warm-up and `min_reps` launches
    /// and more until the interval is narrow), which ran past the limit (up to 1.3 s of a 4-second
    /// tune on llvmpipe). Estimated as twice the warm-up and `min_reps` launches of each config on
    /// the shortlist that one launch cannot tell from its fastest (within the tie tolerance, or the
    /// two launches' run-to-run intervals combined: the tie band a stop would leave; at most
    /// [`crate::run::finals::FINALISTS`]) at that launch's time, and at most a fifth of the limit;
    /// none with an empty shortlist or no limit. (Counting every config within
    /// [`crate::run::finals::MARGIN`] instead, SGEMM's many near-ties on an H100 kept the whole
    /// fifth and cost a tenth of the evaluations for a final round of 0.05–0.16 s.)
    fn final_reserve(&self, l: &Turn<'_, '_, '_>) -> Duration {
        use crate::run::finals::FINALISTS;
        let Some(limit) = self.opts.budget.max_seconds else { return Duration::ZERO };
        let Some(judge) = self.judge_device() else { return Duration::ZERO };
        let judged = || self.shortlist.iter().map(|x| x.judged(&l.ledger.ratios));
        let Some(fastest) = judged().min_by(f64::total_cmp) else { return Duration::ZERO };
        let tied = self.opts.bench.tie_tolerance.max(std::f64::consts::SQRT_2 * self.opts.bench.run_to_run);
        let contenders = judged().filter(|&t| t <= fastest * (1.0 + tied)).count().min(FINALISTS) as f64;
        let launches = 2.0 * f64::from(self.opts.bench.warmup_min + self.opts.bench.min_reps);
        let seconds = (contenders * launches * fastest * l.ledger.ratios[judge]).min(0.2 * limit);
        Duration::try_from_secs_f64(seconds).unwrap_or(Duration::ZERO)
    }

    /// The tune stops with configs on the shortlist: each is recorded with its verification
    /// launch, the one time it was measured (the final round measures the winner's contenders
    /// among them in full).
    fn settle_shortlist(&mut self, l: &mut Turn<'_, '_, '_>, refs: &mut RefState) -> usize {
        let listed = std::mem::take(&mut self.shortlist);
        let n = listed.len();
        for x in listed {
            self.settled_unmeasured.insert(x.cand);
            let stats = crate::measure::stats::Stats::from_samples(&x.prior, false).widened(self.opts.bench.run_to_run);
            let r = self.result(x.cand, ResultOutcome::Measured { stats }, Some(x.kernel.usage.clone()), Some(x.device), true);
            self.finish(l, refs, x.cand, r);
        }
        n
    }

    /// The first device that takes jobs and has none.
    fn free_device(&self) -> Option<usize> {
        (0..self.live.len()).find(|&d| self.live[d] && self.busy[d].is_none())
    }

    /// Sends a job to a device; a device that no longer takes jobs is marked lost and, with
    /// `requeue`, the job's config goes back to the front of the line.
    fn send(&mut self, l: &mut Turn<'_, '_, '_>, d: usize, job: Job<B::Kernel>, requeue: bool) {
        let cand = job.cand();
        let back = match &job {
            Job::Reference { kernel, .. } | Job::Measure { kernel, .. } => Some(kernel.clone()),
            Job::Diagnose { .. } | Job::Verify { .. } => None,
        };
        let verify = matches!(job, Job::Verify { .. });
        if self.pool.send(d, job) {
            self.busy[d] = Some(cand);
        } else {
            self.lose(l.ledger, d, "its session ended".into());
            if verify && requeue {
                self.to_verify.push_front(cand);
            } else if let (Some(k), true) = (back, requeue) {
                self.ready.push_front((cand, k, None));
                l.flow.waiting.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Takes device `d` out of the tune.
    pub(crate) fn lose(&mut self, ledger: &mut Ledger<'_>, d: usize, why: String) {
        if self.live[d] {
            // With no device left, the tune's error says why; a warning would say it twice.
            if self.live.iter().enumerate().any(|(i, &live)| live && i != d) {
                tracing::warn!(device = d, "device taken out of the tune: {why}");
            } else {
                tracing::debug!(device = d, "the last device taken out of the tune: {why}");
            }
            self.live[d] = false;
            ledger.devices[d].lost = Some(why);
        }
    }

    /// The report's line on compiles whose compiler process ended while compiling them (see
    /// [`BackendError::CompilerDied`]): how many were compiled again, and how that went.
    fn compiler_deaths_line(&self) -> Option<String> {
        let again: Vec<_> = self.compiler_died.iter().filter(|(_, d)| d.compiled.is_some()).collect();
        if again.is_empty() {
            return None;
        }
        let ok = again.iter().filter(|(_, d)| d.compiled == Some(true)).count();
        let killed = again.iter().filter(|(_, d)| d.first.killed).count();
        let spared: Vec<usize> = again.iter().filter_map(|(_, d)| d.room).collect();
        let mut first: Vec<_> = again.iter().map(|(&i, d)| (self.plan.cands[i].config.key(), d.first.status.clone())).collect();
        first.sort();
        let (config, status) = &first[0];
        let n = again.len();
        let (configs, their) = if n == 1 { ("config".to_string(), "its") } else { (format!("{n} configs"), "their") };
        let how = if killed == n {
            // One verdict when all share it.
            let oom = again[0].1.first.oom;
            killer(if again.iter().all(|(_, d)| d.first.oom == oom) { oom } else { None })
        } else {
            format!("{config}: {status}{}", if n > 1 { ", and others" } else { "" })
        };
        // Those killed again beside others and compiled a third time, alone.
        let thirds = again.iter().filter(|(_, d)| d.second.is_some()).count();
        let thirds_ok = again.iter().filter(|(_, d)| d.second.is_some() && d.compiled == Some(true)).count();
        let outcome = match (ok, n) {
            (1, 1) if thirds == 1 => "it was killed again and compiled the third time, alone".to_string(),
            (0, 1) if thirds == 1 => "it was killed again, and the third time, alone, too".to_string(),
            _ if thirds > 0 => {
                format!("{ok} of {n} compiled{}", if thirds_ok > 0 { format!(", {thirds_ok} only the third time, alone") } else { String::new() })
            }
            (1, 1) => "it compiled the second time".to_string(),
            (0, 1) => "it failed again".to_string(),
            (ok, n) if ok == n => "each compiled the second time".to_string(),
            (0, _) => "each failed again".to_string(),
            (ok, n) => format!("{ok} of {n} compiled the second time"),
        };
        let fewer = if spared.is_empty() { "" } else { "; fewer compile threads (`-j`) leave each compile more memory" };
        let spared = if spared.len() == n { format!(", {},", spared_words(spared[0])) } else { String::new() };
        Some(format!("{configs} compiled again{spared} after {their} compiler process ended while compiling ({how}): {outcome}{fewer}"))
    }

    /// A compiled (or failed) candidate arrived from a compile thread.
    fn compiled(&mut self, l: &mut Turn<'_, '_, '_>, refs: &mut RefState, done: CompileDone<B::Kernel>, stopping: bool) -> Result<(), Error> {
        let CompileDone { index: i, result, started, seconds: secs, behind, held } = done;
        l.ledger.compile_seconds += secs;
        l.ledger.span(self.plan.cands[i].config.key(), if held { SpanKind::Cached } else { SpanKind::Compile }, None, started, secs);
        if self.tail.is_abandoned(i) {
            // Given up on: already out of flight and told to the strategy.
            l.flow.waiting.fetch_sub(1, Ordering::Relaxed);
            return Ok(());
        }
        l.progress.compile_s = (l.progress.compile_s.0 + secs, l.progress.compile_s.1 + 1);
        self.compile_s.insert(i, secs);
        let c = &self.plan.cands[i];
        if stopping || l.progress.out_of_time() || l.progress.cancelled {
            l.flow.waiting.fetch_sub(1, Ordering::Relaxed);
            l.progress.in_flight[i] = false;
            l.progress.flying -= 1;
            return Ok(());
        }
        let compiled = match result {
            Ok(k) => k,
            Err(e) => {
                l.flow.waiting.fetch_sub(1, Ordering::Relaxed);
                if held && matches!(e, BackendError::CompileFailed { .. } | BackendError::OutOfResources(_)) {
                    // The compiler's earlier refusal, from the compile cache: no compile's seconds.
                    l.ledger.cached_refusals += 1;
                    self.compile_s.remove(&i);
                }
                if let BackendError::CompilerDied { label, status, killed, oom, words } = &e {
                    // Not a compile's seconds, nor one in the average the flight is sized by.
                    self.compile_s.remove(&i);
                    l.progress.compile_s = (l.progress.compile_s.0 - secs, l.progress.compile_s.1.saturating_sub(1));
                    let death = Death { status: status.clone(), killed: *killed, oom: *oom, words: words.clone() };
                    if *killed && *oom == Some(true) {
                        l.ledger.compiles_killed_for_memory += 1;
                    }
                    let Some(died) = self.compiler_died.get_mut(&i) else {
                        // Compiled again before it is blamed (still in flight meanwhile): after
                        // SIGKILL, unless the out-of-memory killer is known not to have acted,
                        // with at most half the compile threads compiling, itself included, in
                        // case the machine's memory was what ran out (alone, the other threads
                        // waited for every running compile to end: on an H200, 13 s of a 23 s
                        // tune of long compiles); after a crash, or a kill by hand, at once.
                        let room = death.spares().then(|| spared_room(l.threads));
                        let how = room.map_or(String::new(), |room| format!(", {}", spared_words(room)));
                        tracing::warn!(config = c.config.key(), "{e}; compiling it again{how}");
                        match room {
                            Some(room) => l.flow.queue.push_spared(i, room),
                            None => l.flow.queue.push_first(i),
                        }
                        self.compiler_died.insert(i, Died { first: death, room, second: None, compiled: None });
                        return Ok(());
                    };
                    if died.second.is_none() && died.room.is_some_and(|r| r > 1) && death.spares() {
                        // Killed again with others beside it: a third time, alone, before the
                        // config is given up on (its compile may need more than half the
                        // machine's memory).
                        tracing::warn!(config = c.config.key(), "{e}; compiling it again, alone");
                        l.flow.queue.push_spared(i, 1);
                        died.second = Some(death);
                        return Ok(());
                    }
                    died.compiled = Some(false);
                    let (message, persist) = died_again(label, died, &death);
                    let r = self.result(i, ResultOutcome::Failed { kind: e.kind(), message }, None, None, false);
                    self.settle(l, refs, i, r, persist);
                    return Ok(());
                }
                if let (Some(&(wall, cpu, killed)), BackendError::Abandoned(_)) = (self.compile_timed_out.get(&i), &e) {
                    // A compile that used more CPU time than the limit is stored: the tunes
                    // after it (a shard run again, `--force`) do not wait for it again, and one
                    // with a longer compile timeout compiles it again (`stale`). One given up on
                    // by the wall clock is not: it waited, or its CPU time is unknown, and the
                    // load beside it decided that. Its seconds count in the sum, not as a
                    // compile's (the slowest named).
                    self.compile_s.remove(&i);
                    let limit = self.opts.compile_timeout.unwrap_or_default().as_secs_f64();
                    let secs = |s: f64| if s < 10.0 { format!("{s:.1}") } else { format!("{s:.0}") };
                    let persist = cpu.is_some_and(|c| c > limit);
                    let past = match cpu {
                        Some(c) if c > limit => format!("still compiling after {} s of its own CPU time ({} s of wall time)", secs(c), secs(wall)),
                        Some(c) => {
                            format!("still compiling after {} s of wall time having used {} s of CPU time (waiting, not compiling)", secs(wall), secs(c))
                        }
                        None => format!("still compiling after {} s", secs(wall)),
                    };
                    let stopped = if killed { " (its compiler process was killed)" } else { "" };
                    let kept = if persist {
                        "stored: a tune with a longer timeout (or `--compile-timeout off`; `kerntune tune --force` where a winner is stored) compiles it again, reusing the rest"
                    } else {
                        "not stored: `kerntune tune --force` with a longer timeout (or `--compile-timeout off`) compiles and measures it, reusing the rest"
                    };
                    let message = format!(
                        "{}: {past}, past the compile timeout of {} s ([tune] compile_timeout, --compile-timeout){stopped}; {kept}",
                        crate::run::diagnose::COMPILE_TIMED_OUT,
                        secs(limit)
                    );
                    let r = self.result(i, ResultOutcome::Failed { kind: crate::error::FailureKind::TimedOut, message }, None, None, false);
                    self.settle(l, refs, i, r, persist);
                    return Ok(());
                }
                let r = self.result(i, ResultOutcome::Failed { kind: e.kind(), message: e.to_string() }, None, None, false);
                self.finish(l, refs, i, r);
                self.warn_if_nothing_compiles(l);
                return Ok(());
            }
        };
        l.ledger.compiled += 1;
        l.ledger.cache_hits += compiled.cached as usize;
        if let Some(died) = self.compiler_died.get_mut(&i) {
            died.compiled = Some(true);
        }
        if compiled.cached {
            // Read from the compile cache: not a compile's seconds (a prior read from this
            // database elsewhere would take them for one).
            self.compile_s.remove(&i);
        }
        self.tail.finished(secs, compiled.cached, behind);
        emit(self.opts.observer.as_ref(), Event::Compiled { config: &c.config, seconds: secs });
        if l.times.observe(i, secs, compiled.cached) && l.times.refit(l.view, &l.flow.elapsed()) {
            // The order `feed` queues by (evaluation divided over the live devices).
            let (_, longest_first) = self.pipeline_now(l);
            let (times, view) = (&*l.times, l.view);
            l.flow.queue.reprioritize(|j| if longest_first { times.predict(view, j) } else { 0.0 });
        }
        if let Err(reason) = prune_after(self.devices[0].limits(), &c.estimate, &compiled.usage, &self.opts.prune) {
            l.flow.waiting.fetch_sub(1, Ordering::Relaxed);
            *l.ledger.pruned_after.entry(reason.category().to_string()).or_default() += 1;
            let r = self.result(i, ResultOutcome::Pruned { reason }, Some(compiled.usage.clone()), None, false);
            self.settle(l, refs, i, r, false);
            return Ok(());
        }
        self.ready.push_back((i, Arc::new(compiled), Some(secs)));
        Ok(())
    }

    /// Says once, while the tune goes on, that the first configs compiled (as many as there are
    /// compile threads, at least 8) all failed with one error and none compiled: a source that
    /// no config compiles (a published kernel's removed intrinsic, a header NVRTC cannot take)
    /// would otherwise be told only when every config of the space has failed, after minutes of
    /// compiles. The search goes on: configs that compile may still come.
    fn warn_if_nothing_compiles(&mut self, l: &mut Turn<'_, '_, '_>) {
        if self.compiles_judged || l.ledger.compiled > 0 {
            return;
        }
        let failed: Vec<&ConfigResult> = l.ledger.results.values().filter(|r| !r.from_db).collect();
        if failed.len() < l.threads.max(8) {
            return;
        }
        // Judged once, on the first that many: results only grow, so a second cause, another
        // kind of failure or a config that compiled would stand in any later judgement too (and
        // grouping every result again at each failure would cost a space that fails throughout
        // its square).
        self.compiles_judged = true;
        let compile_failed = |r: &&ConfigResult| matches!(r.outcome, ResultOutcome::Failed { kind: crate::error::FailureKind::CompileFailed, .. });
        if !failed.iter().all(compile_failed) || l.progress.count >= self.plan.cands.len() {
            return;
        }
        let causes = crate::run::diagnose::group(failed.iter().copied());
        let [cause] = &causes[..] else { return };
        let hints: String = crate::run::diagnose::compile_hints(&cause.message).iter().map(|h| format!("; {h}")).collect();
        let message = format!(
            "the first {} configs all failed to compile with one error, and none compiled: {}{hints}. Every config may fail so: fix the source (the tune goes on; Ctrl-C stops it and keeps what was measured)",
            cause.count, cause.message
        );
        // Not a note of the summary: said while it held; configs that compile later would make
        // it stale there, and a tune where none does ends with the same cause anyway.
        emit(self.opts.observer.as_ref(), Event::Warning { message: &message });
    }

    /// A device spent `seconds` evaluating candidate `i` for the search (measuring or verifying
    /// it). A config timed in parts (shortlisted after its verification launch and measured
    /// later, or measured before the reference and verified later) counts once among the
    /// configs the mean evaluation is taken over, with every part's seconds.
    fn timed(&mut self, l: &mut Turn<'_, '_, '_>, i: usize, seconds: f64) {
        add_seconds(&mut l.progress.eval_s, &mut self.eval_s, i, seconds);
        l.progress.first_timed.get_or_insert_with(Instant::now);
    }

    /// A result for candidate `i` as this run saw it.
    fn result(
        &self,
        i: usize,
        outcome: ResultOutcome,
        usage: Option<crate::plan::prune::ResourceUsage>,
        device: Option<usize>,
        verified: bool,
    ) -> ConfigResult {
        let c = &self.plan.cands[i];
        let metrics = self.ctx.prep.metrics(&c.config);
        ConfigResult {
            config: c.config.clone(),
            outcome,
            usage,
            from_db: false,
            flops: metrics.0,
            bytes: metrics.1,
            compile_seconds: self.compile_s.get(&i).copied(),
            eval_seconds: self.eval_s.get(&i).copied(),
            device: device.filter(|_| self.devices.len() > 1),
            seq: None,
            elapsed_s: None,
            verified,
            proposed_by: None,
            spans: Vec::new(),
        }
    }

    /// Records candidate `i`'s final result, tells the strategy, and moves the reference on
    /// when it was the reference candidate.
    fn finish(&mut self, l: &mut Turn<'_, '_, '_>, refs: &mut RefState, i: usize, r: ConfigResult) {
        self.settle(l, refs, i, r, true);
    }

    /// [`Self::finish`], storing the result in the database only with `persist` (a config pruned
    /// after compiling, or whose compile timed out, is this tune's alone).
    fn settle(&mut self, l: &mut Turn<'_, '_, '_>, refs: &mut RefState, i: usize, r: ConfigResult, persist: bool) {
        let failed = !matches!(r.outcome, ResultOutcome::Measured { .. });
        l.ledger.record(r, persist);
        l.progress.in_flight[i] = false;
        l.progress.flying -= 1;
        told(l, i);
        if failed {
            self.reference_failed(l, refs, i);
        }
    }

    /// Candidate `i` failed; when it was being tried as the reference, the next one is.
    fn reference_failed(&mut self, l: &mut Turn<'_, '_, '_>, refs: &mut RefState, i: usize) {
        if let RefState::Trying { current, pos, .. } = refs {
            if *current == Some(i) {
                *current = None;
                *pos += 1;
                self.next_reference(l, refs);
            }
        }
    }

    /// A device answered.
    fn answered(&mut self, l: &mut Turn<'_, '_, '_>, refs: &mut RefState, a: Answer<B::Kernel>) -> Result<(), Error> {
        let Answer { device: d, cand: i, kernel, done, started, seconds, recovery, distrusted, printed } = a;
        self.busy[d] = None;
        l.ledger.span(self.plan.cands[i].config.key(), done.span_kind(), Some(d), started, seconds);
        if let Some(p) = printed {
            if let Some(line) = l.ledger.printed.add(&self.plan.cands[i].config, p) {
                emit(self.opts.observer.as_ref(), Event::Warning { message: &line });
            }
        }
        if let Some(x) = distrusted {
            l.ledger.notes.push(format!(
                "racing: a verification launch on device {d} took {x:.1}× its config's later launches (over the {:.2}× allowed for chance, as when a driver compiles each kernel at its first launch); from then on configs there were raced on warm launches only",
                1.0 + crate::measure::stats::VERIFY_HICCUP
            ));
        }
        if let Some(Err(why)) = &recovery {
            self.lose(l.ledger, d, format!("it could not be recovered: {why}"));
        }
        match done.search_error() {
            Some(e) if e.oom_killed_worker() => return self.worker_oom_killed(l, refs, d, i, kernel, done),
            // A job done: the worker lived through it.
            None if !matches!(done, Done::Measured { result: Err(_), .. }) => {
                self.oom_workers.in_row = (0, 0);
                self.oom_workers.in_row_configs.clear();
            }
            _ => {}
        }
        match done {
            Done::Reference(Ok((outputs, written))) => {
                let c = &self.plan.cands[i];
                // An input declared read-only that the launch wrote: said at once and kept.
                for line in written.iter().map(|w| w.line(&c.config)) {
                    emit(self.opts.observer.as_ref(), Event::Warning { message: &line });
                    l.ledger.notes.push(line);
                }
                l.ledger.reference = Some(Arc::new(RefOutputs { id: crate::run::reference_id(), buffers: outputs }));
                self.reference_cand = Some(i);
                let tried = match refs {
                    RefState::Trying { order, pos, .. } => order[..*pos].iter().filter(|&&j| l.progress.evaluated[j]).count(),
                    _ => 0,
                };
                let how = match (&self.ctx.job.verify.reference, c.is_default) {
                    (Reference::DefaultConfig, true) => "the default config".to_string(),
                    (Reference::DefaultConfig, false) if self.plan.default_included => "the first valid config that ran (the default config failed)".into(),
                    _ => "the first valid config that ran".into(),
                };
                let failed = if tried > 0 { format!(", after {tried} config(s) before it failed") } else { String::new() };
                let compared: String = self.ctx.job.verify.compare.iter().map(|(n, c)| format!("; {n} compared {}", c.describe())).collect();
                l.ledger.notes.push(format!("reference: the outputs of {} ({how}{failed}){compared}", c.config));
                *refs = RefState::Ready;
                match l.ledger.known.get(&c.config.key()) {
                    // Measured before: only its outputs were needed.
                    Some(m) if !l.progress.evaluated[i] => {
                        let r = to_result(m, true, self.ctx.prep.metrics(&c.config));
                        l.ledger.record(r, false);
                        l.progress.in_flight[i] = false;
                        l.progress.flying -= 1;
                        told(l, i);
                    }
                    Some(_) => {
                        l.progress.in_flight[i] = false;
                        l.progress.flying -= 1;
                    }
                    None => {
                        self.ready.push_front((i, kernel, None));
                        l.flow.waiting.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            Done::Reference(Err(e)) | Done::Measured { result: Err(e), purpose: Purpose::Search, .. } => {
                self.deferred.remove(&i);
                if e.device_unusable() {
                    // Not the config's failure: it runs on another device, if there is one.
                    if self.unusable(l.ledger, d, &e) {
                        self.run_again(l, refs, i, kernel);
                    }
                    return Ok(());
                }
                if let BackendError::WorkerDied { message: why, .. } = &e {
                    let deaths = self.deaths.entry(i).or_default();
                    *deaths += 1;
                    if *deaths == 1 {
                        return self.rerun_after_death(l, refs, d, i, kernel, why.clone());
                    }
                    if let Some(first) = self.retired_for.remove(&i) {
                        // The config ended two workers: it was the cause, not the device.
                        self.live[first] = true;
                        l.ledger.devices[first].lost = None;
                        l.ledger.notes.push(format!("device {first} is back in the tune: {} ended the workers of two devices", self.plan.cands[i].config));
                    }
                }
                let message = match &e {
                    BackendError::WorkerDied { message: m, .. } => {
                        format!("the worker process died twice running this config (on two devices where there were several): {m}")
                    }
                    other => other.to_string(),
                };
                // What the device spent on it is in its record (the seconds a time budget's replay
                // charges), not in the mean evaluation the flight is sized by, which is taken over
                // configs measured.
                *self.eval_s.entry(i).or_default() += seconds;
                let usage = Some(kernel.usage.clone());
                let r = self.result(i, ResultOutcome::Failed { kind: e.kind(), message }, usage, Some(d), false);
                self.finish(l, refs, i, r);
            }
            Done::Measured { result: Ok(stats), verified: false, purpose: Purpose::Search } if self.deferred.remove(&i) => {
                // Measured before the reference was ready: held until verified.
                self.timed(l, i, seconds);
                l.ledger.devices[d].measured += 1;
                let mean = stats.mean;
                self.held.insert(i, Held { kernel: kernel.clone(), stats, device: d });
                if l.ledger.reference.is_some() {
                    self.to_verify.push_back(i);
                }
                self.calibrate(l, d, i, &kernel, mean);
            }
            Done::Shortlisted { prior } => {
                // Verified (with the CPU reference, when sent while it was computed); it stays in
                // flight, untold, until measured in full.
                self.deferred.remove(&i);
                self.timed(l, i, seconds);
                let x = Listed { cand: i, kernel, prior, device: d };
                emit(self.opts.observer.as_ref(), Event::Verified { config: &self.plan.cands[i].config, seconds: x.fastest() });
                // Kept on the judging device's scale; each device compares on its own.
                let v = x.judged(&l.ledger.ratios);
                self.fastest_listed = Some(self.fastest_listed.map_or(v, |f| f.min(v)));
                self.shortlist.push(x);
            }
            Done::Verified(result) => {
                let Some(h) = self.held.remove(&i) else { return Ok(()) };
                // The late verification launch: part of what evaluating it cost.
                self.timed(l, i, seconds);
                let r = match result {
                    Ok(()) => self.held_result(l.ledger, i, h, true),
                    Err(e) if e.device_unusable() => {
                        if self.unusable(l.ledger, d, &e) {
                            self.held.insert(i, h);
                            self.to_verify.push_front(i);
                        }
                        return Ok(());
                    }
                    Err(BackendError::WorkerDied { message: why, .. }) if *self.deaths.entry(i).and_modify(|n| *n += 1).or_insert(1) == 1 => {
                        // As for a measurement: the verification runs again.
                        if self.after_worker_death(l.ledger, d, i, &why, ("verifying", "verified")) {
                            self.held.insert(i, h);
                            self.to_verify.push_front(i);
                        }
                        return Ok(());
                    }
                    Err(e) => {
                        self.result(i, ResultOutcome::Failed { kind: e.kind(), message: e.to_string() }, Some(kernel.usage.clone()), Some(h.device), false)
                    }
                };
                self.finish(l, refs, i, r);
            }
            Done::Measured { result: Ok(stats), verified, purpose: Purpose::Search } => {
                // Sent while the CPU reference was computed, verified with it all the same.
                self.deferred.remove(&i);
                self.timed(l, i, seconds);
                l.ledger.devices[d].measured += 1;
                let verified = verified || self.reference_cand == Some(i);
                let r = self.result(i, ResultOutcome::Measured { stats: stats.clone() }, Some(kernel.usage.clone()), Some(d), verified);
                let norm = l.ledger.ratios[d];
                self.keep.offer(stats.mean / norm, i, kernel.clone());
                self.finish(l, refs, i, r);
                self.calibrate(l, d, i, &kernel, stats.mean);
            }
            Done::Measured { result, purpose: Purpose::Calibrate, .. } => match result {
                Ok(s) => {
                    l.ledger.devices[d].measured += 1;
                    self.calibrated(l.ledger, d, s.mean);
                }
                Err(e) if e.device_unusable() => {
                    self.unusable(l.ledger, d, &e);
                }
                Err(e) if e.oom_killed_worker() => {
                    // The machine's memory, not the device or the config: compiles are held as
                    // for a search job's worker, and the calibration runs once more (first on
                    // that device, once the compiles beside it are down to the hold).
                    let why = e.to_string();
                    self.hold_compiles_after_oom_kill(l, d, &why);
                    if std::mem::replace(&mut self.recalibrated[d], true) {
                        l.ledger.notes.push(format!(
                            "device {d} could not time the calibration config: the system's out-of-memory killer ended its worker both times it ran it ({why}); its times were taken as the judging device's, with no ratio, until the final round measured the best configs again there"
                        ));
                    } else {
                        *self.oom_workers.configs.entry(i).or_default() += 1;
                        self.extra[d].push_front(Job::in_full(i, kernel, self.plan.cands[i].launch, None, Purpose::Calibrate));
                    }
                }
                Err(e) => l.ledger.notes.push(format!("device {d} could not time the calibration config: {e}")),
            },
            Done::Measured { purpose: Purpose::Final | Purpose::Recheck, .. } | Done::Diagnosed(_) => {}
        }
        Ok(())
    }

    /// The first config measured is timed on every other device too (see the module docs);
    /// the judge is the first device (the lowest index).
    fn calibrate(&mut self, l: &mut Turn<'_, '_, '_>, d: usize, i: usize, kernel: &Kernel<B::Kernel>, mean: f64) {
        if self.judge.is_none() {
            self.judge = (0..self.live.len()).find(|&x| self.live[x]);
        }
        if self.calibration.is_some() || self.devices.len() < 2 {
            return;
        }
        self.calibration = Some(i);
        self.calibrated[d] = Some(mean);
        for o in (0..self.devices.len()).filter(|&o| o != d) {
            if !self.live[o] {
                continue;
            }
            let job = Job::in_full(i, kernel.clone(), self.plan.cands[i].launch, None, Purpose::Calibrate);
            if self.busy[o].is_none() {
                self.send(l, o, job, false);
            } else {
                self.extra[o].push_back(job);
            }
        }
    }

    /// A device's time of the calibration config: every ratio to the judge that is known now.
    fn calibrated(&mut self, ledger: &mut Ledger<'_>, d: usize, mean: f64) {
        self.calibrated[d] = Some(mean);
        let Some(j) = self.judge else { return };
        let Some(judged) = self.calibrated[j].filter(|&m| m > 0.0) else { return };
        for (o, m) in self.calibrated.iter().enumerate() {
            if let (Some(m), true) = (m, o != j) {
                ledger.ratios[o] = m / judged;
                ledger.devices[o].ratio = Some((m / judged, 1));
            }
        }
    }

    /// The system's out-of-memory killer ended device `d`'s worker while it ran candidate `i`'s
    /// search job (`done`: a reference launch, a measurement, a verification). The machine ran
    /// short of memory, which says nothing of the config: it is not blamed but runs again (after
    /// a restarted worker, on any device), and fewer compiles run at once beside the workers
    /// (half as many as were running, down to one, rising again by one each time as many as that
    /// allows have compiled: see `CompileQueue::hold_to`), the compiles' memory being what the
    /// tune can give up; until the compiles running are down to that, no device is given a job
    /// (holding new starts frees nothing: on an H200 a worker restarted at once was killed three
    /// times in 1.5 s while 16 compiles still ran). Two kills in a row with at most one compile
    /// running leave nothing to give: the device leaves the tune, saying that its worker does not
    /// fit in the memory the tune may use (alone, the tune ends so) — kills of two configs or
    /// more in a row, so that one config that takes the memory itself does not take the device
    /// out: the config runs again after those waiting (the reference candidate at once), and one
    /// whose worker was killed each of [`OOM_BLAMED`] times it ran is blamed after all (not
    /// stored: a machine with more memory may run it).
    fn worker_oom_killed(
        &mut self,
        l: &mut Turn<'_, '_, '_>,
        refs: &mut RefState,
        d: usize,
        i: usize,
        kernel: Kernel<B::Kernel>,
        done: Done,
    ) -> Result<(), Error> {
        let Some(e) = done.search_error() else { return Ok(()) };
        let (why, kind) = (e.to_string(), e.kind());
        let config = self.plan.cands[i].config.to_string();
        let (running, hold) = self.hold_compiles_after_oom_kill(l, d, &why);
        let o = &mut self.oom_workers;
        o.in_row.0 += 1;
        o.in_row.1 += usize::from(running <= 1);
        o.in_row_configs.insert(i);
        let times = {
            let n = o.configs.entry(i).or_default();
            *n += 1;
            *n
        };
        let (in_row, at_one) = o.in_row;
        if at_one >= 2 && o.in_row_configs.len() >= 2 {
            tracing::warn!(device = d, config, "{why}");
            self.lose(
                l.ledger,
                d,
                format!(
                    "the system's out-of-memory killer ended its worker {in_row} times in a row, the last {at_one} with at most one compile running beside it: the memory this tune may use is too small for this device's worker (the last: {why}); give the tune more memory (Slurm's `--mem`, the container's or pod's memory limit) or run it with less beside it"
                ),
            );
        } else {
            tracing::warn!(
                device = d,
                config,
                "{why}; it runs again (not blamed) once at most {hold} compile(s) run ({running} now), compiles held to that from now on"
            );
        }
        if times >= OOM_BLAMED && self.live.iter().any(|&x| x) {
            // Killed each time it ran: its own doing, most likely.
            let between = if in_row < times { ", while other configs ran between" } else { "" };
            let message = format!("the system's out-of-memory killer ended the worker each of the {times} times it ran this config{between}: it most likely takes more host memory than the tune may use (the last: {why})");
            let (usage, device) = match &done {
                Done::Verified(_) => match self.held.remove(&i) {
                    Some(h) => (Some(h.kernel.usage.clone()), h.device),
                    None => return Ok(()),
                },
                _ => {
                    self.deferred.remove(&i);
                    (Some(kernel.usage.clone()), d)
                }
            };
            self.oom_workers.blamed += 1;
            let r = self.result(i, ResultOutcome::Failed { kind, message }, usage, Some(device), false);
            self.settle(l, refs, i, r, false);
            return Ok(());
        }
        if !self.live.iter().any(|&x| x) {
            return Ok(());
        }
        let reference = matches!(refs, RefState::Trying { current: Some(j), .. } if *j == i);
        match done {
            Done::Verified(_) => {
                if self.held.contains_key(&i) {
                    self.to_verify.push_back(i);
                }
            }
            _ if reference => self.run_again(l, refs, i, kernel),
            _ => {
                // After the others waiting for a device: if they are killed too, it was not
                // this config's doing.
                self.deferred.remove(&i);
                self.ready.push_back((i, kernel, None));
                l.flow.waiting.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    /// The system's out-of-memory killer ended device `d`'s worker (`why`): compiles are held to
    /// half of those running (down to one; the hold then rises again, see
    /// `CompileQueue::hold_to`), and until the compiles running are down to that no device is
    /// given a job (see [`Self::worker_oom_killed`]). The compiles running when it was killed,
    /// and the hold.
    fn hold_compiles_after_oom_kill(&mut self, l: &mut Turn<'_, '_, '_>, d: usize, why: &str) -> (usize, usize) {
        let running = l.flow.queue.active();
        let before = l.flow.queue.held_to().unwrap_or(l.threads);
        let hold = l.flow.queue.hold_to(before.min(running) / 2, l.threads);
        let o = &mut self.oom_workers;
        o.count(d, why);
        if running > hold {
            o.draining.get_or_insert_with(Instant::now);
        }
        o.hold = Some(hold);
        (running, hold)
    }

    /// A worker died without a word while running candidate `i` on device `d`: with other
    /// devices, `d` leaves the tune and `i` runs elsewhere; alone, `d` was recovered and `i`
    /// runs there again.
    fn rerun_after_death(
        &mut self,
        l: &mut Turn<'_, '_, '_>,
        refs: &mut RefState,
        d: usize,
        i: usize,
        kernel: Kernel<B::Kernel>,
        why: String,
    ) -> Result<(), Error> {
        if !self.after_worker_death(l.ledger, d, i, &why, ("measuring", "measured")) {
            return Ok(());
        }
        if !self.live[d] {
            self.retired_for.insert(i, d);
        }
        self.run_again(l, refs, i, kernel);
        Ok(())
    }

    /// Candidate `i`'s job (a measurement, or the reference's launch) goes first to the next
    /// free device; a reference candidate's is sent again as a reference job.
    fn run_again(&mut self, l: &mut Turn<'_, '_, '_>, refs: &mut RefState, i: usize, kernel: Kernel<B::Kernel>) {
        if let RefState::Trying { current: Some(j), sent, .. } = refs {
            if *j == i {
                *sent = false;
            }
        }
        self.ready.push_front((i, kernel, None));
        l.flow.waiting.fetch_add(1, Ordering::Relaxed);
    }

    /// A worker died without a word while `doing.0` candidate `i` on device `d`: with other
    /// devices, `d` leaves the tune (and the job is `doing.1` on another); alone, `d` was
    /// restarted, and the note says so. Whether to run the job again (not when `d` is alone and
    /// already out of the tune).
    fn after_worker_death(&mut self, ledger: &mut Ledger<'_>, d: usize, i: usize, why: &str, doing: (&str, &str)) -> bool {
        let config = &self.plan.cands[i].config;
        let (ing, ed) = doing;
        if (0..self.live.len()).any(|o| o != d && self.live[o]) {
            self.lose(ledger, d, format!("its worker died ({why}) while {ing} {config}; that config was {ed} on another device"));
        } else if !self.live[d] {
            return false;
        } else {
            ledger.notes.push(format!("the worker of device {d} died ({why}) while {ing} {config}; it was restarted and the config {ed} again"));
        }
        true
    }

    /// The result of held candidate `i` as measured (`verified` once its verification passed);
    /// its kernel is offered for the final round.
    fn held_result(&mut self, ledger: &Ledger<'_>, i: usize, h: Held<B::Kernel>, verified: bool) -> ConfigResult {
        let r = self.result(i, ResultOutcome::Measured { stats: h.stats.clone() }, Some(h.kernel.usage.clone()), Some(h.device), verified);
        self.keep.offer(h.stats.mean / ledger.ratios[h.device], i, h.kernel);
        r
    }

    /// After the final round and `--recheck`: the note on workers the out-of-memory killer ended
    /// counts those after the search too (the search's note replaced, or the first).
    pub(crate) fn oom_note_after_search(&mut self, ledger: &mut Ledger<'_>) {
        let Some(line) = self.oom_workers.line() else { return };
        match self.oom_note_at.and_then(|k| ledger.notes.get_mut(k)) {
            Some(note) => *note = line,
            None => ledger.notes.push(line),
        }
    }

    /// [`Self::run_one`] for candidate `i`'s measurement after the search (the final round,
    /// `--recheck`; `job` makes it): a worker the out-of-memory killer ends says nothing of the
    /// config (see [`Self::worker_oom_killed`]), so the job runs once more on a fresh worker,
    /// each kill counted for the tune's `memory:` note. The last answer.
    pub(crate) fn run_one_past_oom_kill(&mut self, ledger: &mut Ledger<'_>, d: usize, i: usize, job: impl Fn() -> Job<B::Kernel>) -> Option<Answer<B::Kernel>> {
        let mut answer = None;
        for _ in 0..2 {
            answer = self.run_one(ledger, d, job());
            let Some(Answer { done: Done::Measured { result: Err(e), .. }, .. }) = &answer else { break };
            if !e.oom_killed_worker() {
                break;
            }
            self.oom_workers.after_search(d, i, &e.to_string());
        }
        answer
    }

    /// Sends one job and waits for its answer (the final round and diagnosis run one job at a
    /// time); answers to earlier jobs (calibration) are handled on the way.
    pub(crate) fn run_one(&mut self, ledger: &mut Ledger<'_>, d: usize, job: Job<B::Kernel>) -> Option<Answer<B::Kernel>> {
        let cand = job.cand();
        if !self.pool.send(d, job) {
            self.lose(ledger, d, "its session ended".into());
            return None;
        }
        loop {
            let msg = self.rx.recv();
            if let Ok(Msg::Device(a)) = &msg {
                ledger.span(self.plan.cands[a.cand].config.key(), a.done.span_kind(), Some(a.device), a.started, a.seconds);
            }
            match msg {
                Ok(Msg::Device(a)) if a.device == d && a.cand == cand && !matches!(a.done, Done::Measured { purpose: Purpose::Calibrate, .. }) => {
                    if let Some(Err(why)) = &a.recovery {
                        self.lose(ledger, d, format!("it could not be recovered: {why}"));
                    }
                    return Some(a);
                }
                Ok(Msg::Device(a)) => {
                    if let Done::Measured { result: Ok(s), purpose: Purpose::Calibrate, .. } = &a.done {
                        self.calibrated(ledger, a.device, s.mean);
                    }
                }
                Ok(Msg::Compiled { .. } | Msg::HostReference) => {}
                Err(_) => return None,
            }
        }
    }

    /// Groups the failures by cause and diagnoses each once: for a memory fault, the buffers the
    /// launch could read past and the backend's memory checker on one config of the cause.
    pub fn diagnose(&mut self, ledger: &mut Ledger<'_>) {
        let mut causes = crate::run::diagnose::group(ledger.results.values().filter(|r| !r.from_db));
        // The parameters that vary, which the findings below name where one tells configs apart.
        let names: Vec<&str> = self.ctx.job.params.iter().filter(|p| p.values.len() > 1).map(|p| p.name.as_str()).collect();
        // One finding for every timed-out cause (it looks at all their configs): made once.
        let launch_timeout =
            |c: &crate::run::diagnose::Cause| c.kind == crate::error::FailureKind::TimedOut && !crate::run::diagnose::is_compile_timeout(c.kind, &c.message);
        let late = if causes.iter().any(launch_timeout) {
            crate::run::diagnose::timeouts(ledger.results.values(), &names, self.opts.bench.timeout)
        } else {
            Vec::new()
        };
        for cause in causes.iter_mut().filter(|c| launch_timeout(c)) {
            cause.diagnosis = late.clone();
        }
        for cause in causes.iter_mut().filter(|c| c.kind == crate::error::FailureKind::CompileFailed) {
            cause.diagnosis = crate::run::diagnose::compile_hints(&cause.message);
        }
        let plan = self.plan;
        for cause in causes.iter_mut().filter(|c| c.is_memory_fault()) {
            let Some(i) = plan.cands.iter().position(|c| c.config == cause.example) else { continue };
            let c = &plan.cands[i];
            cause.diagnosis = crate::run::diagnose::buffer_extents(&self.ctx.prep, &c.config, &c.launch);
            if self.opts.cancelled() {
                continue;
            }
            let (Some(d), Ok(kernel)) = (self.judge_device(), self.kernel_of(i)) else { continue };
            if let Some(Answer { done: Done::Diagnosed(Some(seen)), .. }) = self.run_one(ledger, d, Job::Diagnose { cand: i, kernel, launch: c.launch }) {
                match seen {
                    // A backend whose own check made the failure (wgpu's guard words) says again what the message says.
                    Memcheck::Reported { report, .. } if cause.message.contains(report.as_str()) => {}
                    Memcheck::Reported { tool, report } => cause.diagnosis.push(crate::run::diagnose::name_allocation(&format!("{tool}: {report}"), &self.ctx.prep)),
                    // It ran the launch cleanly and saw nothing: say so, since that is a finding too.
                    Memcheck::Clean { tool } => cause.diagnosis.push(format!(
                        "{tool} saw no out-of-bounds access when it ran this config: the fault depends on what lies past the buffer (the access lands in memory it cannot tell from a valid allocation), so check the sizes named above"
                    )),
                    Memcheck::Inconclusive(why) => tracing::warn!("the memory checker found no out-of-bounds access to quote for {}: {why}", c.config),
                }
            }
        }
        // What each kind of failure shares that the configs measured lack.
        let (mut failed, mut measured) = (Vec::new(), Vec::new());
        for r in ledger.results.values().filter(|r| !r.from_db) {
            match &r.outcome {
                crate::run::report::ResultOutcome::Failed { kind, .. } => failed.push((&r.config, *kind)),
                crate::run::report::ResultOutcome::Measured { .. } => measured.push(&r.config),
                _ => {}
            }
        }
        crate::run::diagnose::add_shared_findings(&mut causes, &failed, &measured, &names);
        // A kernel's failed assertion over parameters only: the restriction it stands for.
        let params: Vec<&str> = self.ctx.job.params.iter().map(|p| p.name.as_str()).collect();
        for cause in causes.iter_mut() {
            if let Some(line) = crate::run::diagnose::assertion_restriction(cause, ledger.results.values().filter(|r| !r.from_db), &params) {
                cause.diagnosis.push(line);
            }
        }
        let wrong: Vec<&str> = ledger
            .results
            .values()
            .filter(|r| !r.from_db)
            .filter_map(|r| match &r.outcome {
                crate::run::report::ResultOutcome::Failed { kind: crate::error::FailureKind::WrongOutput, message } => Some(message.as_str()),
                _ => None,
            })
            .collect();
        // Said beside the first wrong output that is NaN or infinite where the reference is
        // finite (a driver may compute 0/0 as 0 for some configs: those are another cause).
        let wrong_cause = |c: &crate::run::diagnose::Cause| c.kind == crate::error::FailureKind::WrongOutput;
        if let Some(line) = crate::run::diagnose::nonfinite_outputs(wrong.iter().copied()) {
            let at = causes
                .iter()
                .position(|c| wrong_cause(c) && crate::measure::verify::Mismatch::nonfinite_in(&c.message))
                .or_else(|| causes.iter().position(wrong_cause));
            if let Some(at) = at {
                causes[at].diagnosis.push(line);
            }
        }
        if let (Some(line), Some(first)) = (crate::run::diagnose::few_mismatches(wrong.iter().copied()), causes.iter_mut().find(|c| wrong_cause(c))) {
            first.diagnosis.push(line);
        }
        ledger.causes = causes;
        ledger.note_findings();
    }

    /// Runs the winner once under the backend's memory checker (`--memcheck`) and says what it
    /// saw: a winner whose outputs pass may still read or write past its buffers (a read that
    /// lands in memory it does not own can pass verification by chance and fault elsewhere).
    pub(crate) fn memcheck_winner(&mut self, ledger: &mut Ledger<'_>, sel: &crate::run::persist::Selected) -> crate::run::report::WinnerMemcheck {
        let config = sel.winner.clone();
        let said = |verdict: &str, line: String| crate::run::report::WinnerMemcheck { config: config.key(), verdict: verdict.into(), line };
        let plan = self.plan;
        let Some(i) = plan.cands.iter().position(|c| c.config == sel.winner) else {
            return said("inconclusive", "not run: the winner is not among this tune's candidates".into());
        };
        let Some(d) = self.judge_device() else { return said("inconclusive", "not run: no device is left in the tune".into()) };
        let kernel = match self.kernel_of(i) {
            Ok(k) => k,
            Err(e) => return said("inconclusive", format!("not run: the winner did not compile again: {e}")),
        };
        let backend = self.devices[d].target().backend.clone();
        match self.run_one(ledger, d, Job::Diagnose { cand: i, kernel, launch: plan.cands[i].launch }).map(|a| a.done) {
            Some(Done::Diagnosed(seen)) => crate::run::report::WinnerMemcheck::of(&config, &backend, seen, &self.ctx.prep),
            _ => said("inconclusive", "not run: the device ended the job without an answer".into()),
        }
    }

    /// A live device to run single jobs on: the judge when it is live.
    pub(crate) fn judge_device(&self) -> Option<usize> {
        self.judge.filter(|&j| self.live[j]).or_else(|| (0..self.live.len()).find(|&d| self.live[d]))
    }

    /// The kernel of candidate `i` for the final round: kept, else compiled again.
    pub(crate) fn kernel_of(&self, i: usize) -> Result<Kernel<B::Kernel>, BackendError> {
        if let Some(k) = self.keep.get(i) {
            return Ok(k);
        }
        let c = &self.plan.cands[i];
        let (prep, source) = (&self.ctx.prep, &self.ctx.job.source);
        let inputs = CompileInputs::new(prep, source, &c.config, &c.launch);
        self.devices[0].compile(&inputs.request(source, &c.config, &c.launch)).map(Arc::new)
    }

    /// The parts the final round and diagnosis use.
    pub(crate) fn parts(&self) -> (&'e Context, &'e TuneOptions, usize) {
        (self.ctx, self.opts, self.devices.len())
    }
}

/// What one turn of the loop works on.
struct Turn<'a, 'l, 'c> {
    plan: &'a Plan,
    ledger: &'a mut Ledger<'l>,
    strat: &'a mut dyn Strategy,
    progress: &'a mut Progress,
    view: &'a Candidates<'c>,
    flow: &'a Flow,
    times: &'a mut CompileTimes,
    threads: usize,
    adaptive: bool,
}

/// How many times the out-of-memory killer may end the worker running one config before that
/// config is blamed (see `Coordinator::worker_oom_killed`).
const OOM_BLAMED: usize = 3;

/// Workers the system's out-of-memory killer ended: during the search, and counted after it
/// (the final round, `--recheck`: [`OomWorkers::after_search`]).
#[derive(Default)]
pub(crate) struct OomWorkers {
    /// In all, and per device.
    total: usize,
    devices: std::collections::BTreeMap<usize, usize>,
    /// Since a job last ended without a worker killed: kills, those with at most one compile
    /// running beside the worker, and the candidates they ran.
    in_row: (usize, usize),
    in_row_configs: std::collections::BTreeSet<usize>,
    /// Times per candidate, and the candidates blamed for them.
    configs: HashMap<usize, usize>,
    blamed: usize,
    /// The compiles held to after the last kill, and the first kill's words.
    hold: Option<usize>,
    first: Option<String>,
    /// Since when the devices wait for the compiles running to come down to the hold, and the
    /// seconds they waited so before.
    draining: Option<Instant>,
    drained_s: f64,
    /// The compile queue's hold when the search ended (none: not held), and the threads.
    hold_end: Option<(Option<usize>, usize)>,
}

impl OomWorkers {
    /// One more worker killed, on device `d` (`why`: the error it ended with).
    fn count(&mut self, d: usize, why: &str) {
        self.total += 1;
        *self.devices.entry(d).or_default() += 1;
        self.first.get_or_insert_with(|| why.to_string());
    }

    /// A worker killed after the search (the final round, `--recheck`) while it ran candidate
    /// `i` on device `d`: counted for the tune's note; nothing compiles then, so nothing is held.
    pub(crate) fn after_search(&mut self, d: usize, i: usize, why: &str) {
        self.count(d, why);
        *self.configs.entry(i).or_default() += 1;
    }

    /// Whether the devices wait for the compiles running to come down to the hold (ends it when
    /// they have).
    fn draining(&mut self, queue: &crate::run::compile_queue::CompileQueue) -> bool {
        let Some(since) = self.draining else { return false };
        if queue.active() > self.hold.unwrap_or(1) {
            return true;
        }
        self.drained_s += since.elapsed().as_secs_f64();
        self.draining = None;
        false
    }

    /// The tune's note on them, if any.
    fn line(&self) -> Option<String> {
        let first = self.first.as_ref()?;
        let n = self.total;
        let times = if n == 1 { "once".to_string() } else { format!("{n} times") };
        let devices = if self.devices.len() > 1 {
            format!(" ({})", self.devices.iter().map(|(d, k)| format!("device {d}: {k}")).collect::<Vec<_>>().join(", "))
        } else {
            format!(" (device {})", self.devices.keys().next().copied().unwrap_or(0))
        };
        let configs = self.configs.len();
        let ran = match (configs, self.blamed) {
            (1, 0) => "the config it ran ran again, not blamed".to_string(),
            (1, _) => format!("the config it ran was killed each of the {OOM_BLAMED} times and blamed"),
            (n, 0) => format!("the {n} configs they ran ran again, not blamed"),
            (n, b) => format!("the {n} configs they ran ran again, not blamed ({b} killed each of {OOM_BLAMED} times and blamed)"),
        };
        let hold = self.hold.map_or(String::new(), |h| {
            let waited = self.drained_s + self.draining.map_or(0.0, |t| t.elapsed().as_secs_f64());
            let waited =
                if waited > 0.0 { format!("; the devices waited {waited:.1} s in all for the compiles running to come down to that") } else { String::new() };
            let rose = match self.hold_end {
                Some((Some(n), _)) if n > h => Some(format!("{n} by the end")),
                Some((None, threads)) => Some(format!("all {threads} threads again by the end")),
                _ => None,
            };
            match rose {
                Some(rose) => format!(
                    ", and compiles were held to fewer at once (at most {h} after the last kill{waited}; then one more each time as many compiles as the hold allowed had compiled: {rose})"
                ),
                None => format!(", and compiles were held to fewer at once (at most {h} from the last kill on{waited})"),
            }
        });
        let why = if self.hold.is_some() {
            "the memory the tune may use ran short, most likely for the compiles beside the worker — fewer compile threads (`-j`) or a larger memory limit avoid it"
        } else {
            // Killed only after the search (the final round, `--recheck`).
            "the memory the tune may use ran short after the search, with nothing compiling beside the worker — a larger memory limit avoids it"
        };
        Some(format!("memory: the system's out-of-memory killer ended a worker {times}{devices}; {ran}{hold}: {why} (the first: {first})"))
    }
}

/// How many compiles may run at once, itself included, while a config whose compiler was
/// killed from outside compiles again with `threads` compile threads: half of them (1: alone).
fn spared_room(threads: usize) -> usize {
    (threads / 2).max(1)
}

/// How a config killed from outside compiled again, in words: `alone`, or `with at most 8
/// compiles at once`.
fn spared_words(room: usize) -> String {
    if room <= 1 {
        "alone".into()
    } else {
        format!("with at most {room} compiles at once")
    }
}

/// How a compiler process ended while compiling a candidate (see [`BackendError::CompilerDied`]).
struct Death {
    /// How it ended, in words.
    status: String,
    /// Whether by SIGKILL, and then whether the out-of-memory killer acted meanwhile.
    killed: bool,
    oom: Option<bool>,
    /// What it wrote last on its standard error, while compiling it.
    words: Option<String>,
}

impl Death {
    /// Killed, unless the out-of-memory killer is known not to have acted: compiled again with
    /// fewer compiles beside it, in case the machine's memory was what ran out.
    fn spares(&self) -> bool {
        self.killed && self.oom != Some(false)
    }
}

/// A candidate whose compiler process ended while compiling it (see
/// [`BackendError::CompilerDied`]).
struct Died {
    /// The first time.
    first: Death,
    /// How many compiles at once its second compile had, itself included, when spared (see
    /// [`spared_room`]); `None`: compiled again at once.
    room: Option<usize>,
    /// The second time, when spared with others beside it and killed again so: compiled a third
    /// time, alone.
    second: Option<Death>,
    /// Once its last compile has answered, whether it compiled.
    compiled: Option<bool>,
}

/// Who killed a compiler (SIGKILL), in words, from whether the out-of-memory killer acted
/// meanwhile (`None`: the system does not say).
fn killer(oom: Option<bool>) -> String {
    match oom {
        Some(true) => "killed by the system's out-of-memory killer (SIGKILL)".into(),
        Some(false) => format!("killed from outside (SIGKILL), {}", not_the_oom_killer()),
        None => "killed from outside (SIGKILL): most often the system's out-of-memory killer".into(),
    }
}

/// The verdict on a kill its count says the out-of-memory killer did not make.
fn not_the_oom_killer() -> String {
    format!("not by the out-of-memory killer ({}): a user or a job scheduler", crate::worker::oom_count_words(false))
}

/// The failure of a config whose compiler process ended each time it compiled (twice, or three
/// times when spared), and whether it is stored: a crash of the compiler on the config's code is
/// (a later tune does not compile it again), SIGKILL each time is not (the out-of-memory killer,
/// which depends on the machine and what ran beside it, or a user).
fn died_again(label: &str, died: &Died, last: &Death) -> (String, bool) {
    let deaths: Vec<&Death> = std::iter::once(&died.first).chain(died.second.as_ref()).chain(std::iter::once(last)).collect();
    let (times, each) = if deaths.len() == 2 { ("twice", "both times") } else { ("three times", "each time") };
    let how = if deaths.iter().all(|d| d.status == deaths[0].status) {
        format!("{}, {each}", deaths[0].status)
    } else {
        deaths.iter().map(|d| d.status.as_str()).collect::<Vec<_>>().join(", then ")
    };
    // The last it said (a compiler that said nothing the last time may have the time before).
    let said = deaths.iter().rev().find_map(|d| d.words.as_ref()).map_or(String::new(), |w| format!("; its last words on stderr: {w}"));
    let (message, persist) = if deaths.iter().all(|d| d.killed) {
        let mut when = died.room.map_or(String::new(), |room| format!(", the second time {}", spared_words(room)));
        if died.second.is_some() {
            when.push_str(", the third alone");
        }
        let message = if deaths.iter().all(|d| d.oom == Some(false)) {
            format!("the {label} compiler ended {times} while compiling this config ({how}): killed from outside {each}, {}; not stored: a later tune compiles it again", not_the_oom_killer())
        } else if deaths.iter().any(|d| d.oom == Some(true)) {
            format!(
                "the {label} compiler ended {times} while compiling this config{when} ({how}): killed by the system's out-of-memory killer; not stored: a later tune compiles it again (fewer compile threads, `-j`, leave each compile more memory)"
            )
        } else {
            format!(
                "the {label} compiler ended {times} while compiling this config{when} ({how}): killed from outside, most often by the system's out-of-memory killer; not stored: a later tune compiles it again (fewer compile threads, `-j`, leave each compile more memory)"
            )
        };
        (message, false)
    } else {
        (format!("the {label} compiler ended {times} while compiling this config ({how}): a crash of the compiler on this config's code; the tune goes on without it"), true)
    };
    (format!("{message}{said}"), persist)
}

/// Marks candidate `i` evaluated and tells the strategy its outcome.
fn told(l: &mut Turn<'_, '_, '_>, i: usize) {
    if !l.progress.evaluated[i] {
        l.progress.evaluated[i] = true;
        l.progress.count += 1;
    }
    let outcome = l.ledger.outcome_of(&l.plan.cands[i].config.key());
    l.strat.tell(i, &outcome);
}

/// Computes the CPU reference's outputs.
fn host_reference(ctx: &Context) -> Result<Arc<RefOutputs>, Error> {
    let Reference::Host(name, f) = &ctx.job.verify.reference else { return Err(Error::Reference("no CPU reference".into())) };
    let outs = f(&ctx.prep.data).map_err(|e| Error::Reference(format!("cpu reference `{name}`: {e}")))?;
    // One buffer per buffer argument, in their order: else outputs would be compared with
    // another buffer's contents, or not at all.
    let got: Vec<&str> = outs.iter().map(|b| b.name.as_str()).collect();
    let want: Vec<&str> = ctx.prep.data.buffers().map(|b| b.name.as_str()).collect();
    if got != want {
        return Err(Error::Reference(format!(
            "cpu reference `{name}` returned the buffers ({}), where the problem's are ({}): it must return every buffer argument, in argument order, as it is after one launch",
            got.join(", "),
            want.join(", ")
        )));
    }
    Ok(Arc::new(RefOutputs::compared(outs, &ctx.job.verify.outputs, &ctx.prep.data)))
}

/// Whether candidate `i`'s compile is in the backend's compile cache (see
/// [`Backend::in_compile_cache`]); `None` without such a candidate or where the backend cannot
/// tell.
pub(crate) fn in_compile_cache<B: Backend>(backend: &B, ctx: &Context, plan: &Plan, i: usize) -> Option<bool> {
    let c = plan.cands.get(i)?;
    let source = &ctx.job.source;
    let inputs = CompileInputs::new(&ctx.prep, source, &c.config, &c.launch);
    backend.in_compile_cache(&inputs.request(source, &c.config, &c.launch))
}

#[cfg(test)]
mod tests {
    use crate::fake::{Behavior, FakeBackend};
    use crate::limits::Limits;
    use crate::run::fixture::{is, job, opts, searched, time, tuner};
    use crate::run::{TuneOptions, Tuner};
    use crate::spec::settings::Budget;

    fn loop_once(t: &Tuner<FakeBackend>, o: &TuneOptions, stored: Option<crate::store::db::Entry>) -> (usize, usize, String) {
        searched(t, &job(), o, stored, |ledger, _, _, r| (ledger.results.len(), ledger.compiled, r.unwrap()))
    }

    #[test]
    fn sizing_divides_the_evaluation_over_the_live_devices() {
        use crate::search::pipeline::compile_bound;
        // 8 s to compile a config and 1 s to measure it, 16 compile threads: the threads finish
        // a config every 0.5 s. One device measures one a second and two one every 0.5 s, so
        // measuring bounds the tune and queued compiles keep their order; four measure one
        // every 0.25 s, so compiling bounds it and the slowest compiles go first.
        let spent = ((80.0, 10), (10.0, 10));
        for (devices, bound) in [(0, false), (1, false), (2, false), (4, true), (8, true)] {
            let ((compile, eval), _) = super::sizing(spent.0, spent.1, None, devices, 16, true);
            assert_eq!(compile_bound(compile, eval, 16), bound, "{devices} live device(s)");
        }
        // Before any evaluation is timed, the sources' seconds stand in, divided the same way.
        let ((_, eval), _) = super::sizing((0.0, 0), (0.0, 0), Some((8.0, 1.0)), 4, 16, true);
        assert_eq!(eval, (0.25, 1));
        // A measuring-bound adaptive search keeps one per live device and one more in flight;
        // a non-adaptive one queues everything whatever the devices.
        let cheap = ((1.0, 10), (100.0, 10));
        assert_eq!(super::sizing(cheap.0, cheap.1, None, 1, 16, true).1, 3);
        assert_eq!(super::sizing(cheap.0, cheap.1, None, 8, 16, true).1, 9);
        assert_eq!(super::sizing(cheap.0, cheap.1, None, 8, 16, false).1, usize::MAX);
    }

    /// A time limit is read as the evaluations it leaves at the search's pace since its first
    /// config was timed, less those in flight (what a strategy that plans by evaluations left is
    /// told).
    #[test]
    fn a_time_limit_is_read_as_the_evaluations_it_leaves_at_the_pace_so_far() {
        use std::time::{Duration, Instant};
        let now = Instant::now();
        let mut p = super::Progress {
            evaluated: Vec::new(),
            in_flight: Vec::new(),
            count: 0,
            flying: 0,
            max_evals: usize::MAX,
            deadline: Some(now + Duration::from_secs(60)),
            stopped_before: crate::measure::awake::stopped(),
            wrap_up: None,
            first_timed: None,
            reserve: Duration::ZERO,
            cancelled: false,
            compile_s: (0.0, 0),
            eval_s: (0.0, 0),
            cache: None,
            quick: false,
        };
        assert_eq!(p.evaluations_left_in_time(), None, "nothing timed yet");
        p.eval_s = (0.1, 1);
        p.first_timed = now.checked_sub(Duration::from_secs(20));
        assert_eq!(p.evaluations_left_in_time(), None, "one config timed: no pace yet");
        // Ten more configs timed in the 20 s since the first: one every 2 s, and 60 s left.
        p.eval_s = (1.0, 11);
        let left = p.evaluations_left_in_time().unwrap();
        assert!((28..=30).contains(&left), "{left}");
        p.flying = 5;
        let left = p.evaluations_left_in_time().unwrap();
        assert!((23..=25).contains(&left), "{left}");
        // 20 s of the limit kept for the final round: the search has 40 s.
        p.reserve = Duration::from_secs(20);
        let left = p.evaluations_left_in_time().unwrap();
        assert!((13..=15).contains(&left), "{left}");
        assert!(!p.out_of_time());
        p.reserve = Duration::from_secs(61);
        assert!(p.out_of_time() && p.ending() == Some("time limit"), "the search's part of the limit is over");
        p.reserve = Duration::ZERO;
        p.deadline = now.checked_sub(Duration::from_secs(1));
        assert_eq!(p.evaluations_left_in_time(), Some(0), "past the limit");
        p.deadline = None;
        assert_eq!(p.evaluations_left_in_time(), None, "no time limit");
    }

    /// Configs that write NaN where the reference is finite, beside configs wrong otherwise: the
    /// line on NaN goes to their cause, and no allowance of a mismatch is offered for them.
    #[test]
    fn a_nan_is_told_under_its_own_cause() {
        // Fewer configs write NaN than are wrong otherwise: theirs is not the first cause listed.
        let fake = FakeBackend::new(Limits::preset("h100").unwrap().1, time).with_behavior(|c| match (c.get_i64("vec"), c.get_i64("bx")) {
            (Some(2), _) => Behavior::WrongOutput,
            (Some(4), Some(bx)) if bx <= 64 => Behavior::NonFinite,
            _ => Behavior::Ok,
        });
        let r = Tuner::new(fake).tune(&job(), &opts()).unwrap();
        use crate::run::diagnose::Cause;
        let wrong: Vec<&Cause> = r.causes.iter().filter(|c| c.kind == crate::error::FailureKind::WrongOutput).collect();
        assert_eq!(wrong.len(), 2, "{:?}", r.causes);
        let (nan, off): (Vec<&Cause>, Vec<&Cause>) = wrong.iter().partition(|c| c.message.contains("got NaN"));
        let (nan, off) = (nan[0], off[0]);
        assert!(nan.message.contains("; 1 is NaN or infinite where the reference is finite"), "{}", nan.message);
        let said = |c: &Cause| c.diagnosis.join("\n");
        assert!(said(nan).contains("2 of the 8 configs that computed a wrong output wrote NaN or infinity"), "{}", said(nan));
        assert!(!said(off).contains("NaN"), "{}", said(off));
        assert!(!said(nan).contains("verify.mismatches") && !said(off).contains("verify.mismatches"), "{:?}", r.causes);
    }

    #[test]
    fn a_config_timed_in_parts_counts_once_with_all_its_seconds() {
        let (mut all, mut each) = ((0.0, 0), std::collections::HashMap::new());
        // Shortlisted after a 0.1 s verification launch, measured later in 0.3 s; another config
        // measured in one go in 0.2 s.
        super::add_seconds(&mut all, &mut each, 7, 0.1);
        super::add_seconds(&mut all, &mut each, 3, 0.2);
        super::add_seconds(&mut all, &mut each, 7, 0.3);
        assert_eq!(all.1, 2, "two configs");
        assert!((all.0 - 0.6).abs() < 1e-12 && (each[&7] - 0.4).abs() < 1e-12 && (each[&3] - 0.2).abs() < 1e-12, "{all:?} {each:?}");
    }

    #[test]
    fn respects_the_evaluation_budget() {
        let o = TuneOptions { strategy: "random".into(), budget: Budget { max_evals: Some(5), ..Default::default() }, ..opts() };
        let (results, compiled, name) = loop_once(&tuner(), &o, None);
        assert_eq!((results, name.as_str()), (5, "random"));
        // The reference (the default config) may be a sixth config compiled, run for its
        // outputs, and counted among the five.
        assert!(compiled <= 5, "{compiled}");
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
        // The failed compile is recorded as a result but not counted as a compilation.
        assert_eq!((results, compiled), (18, 17));
    }

    #[test]
    fn a_compile_error_from_the_compile_cache_is_counted_and_costs_no_compile_seconds() {
        let fake = FakeBackend::new(Limits::preset("h100").unwrap().1, time)
            .with_behavior(|c| if is(c, 64, 2) || is(c, 128, 2) { Behavior::CompileError("boom".into()) } else { Behavior::Ok })
            .with_compile_cache(|c| is(c, 64, 2));
        let r = Tuner::new(fake).tune(&job(), &opts()).unwrap();
        assert_eq!((r.compiled, r.compile_cache_refusals), (16, 1), "one refusal from the cache, one compiled and refused");
        let from_cache = r.results.iter().find(|x| is(&x.config, 64, 2)).unwrap();
        let fresh = r.results.iter().find(|x| is(&x.config, 128, 2)).unwrap();
        assert_eq!(from_cache.compile_seconds, None, "{from_cache:?}");
        assert!(fresh.compile_seconds.is_some(), "{fresh:?}");
    }

    #[test]
    fn a_reference_that_faults_moves_on_to_the_next_candidate() {
        // The default (bx=256, vec=1) and the first valid config (bx=32, vec=1) fault; the
        // reference comes from the next one in enumeration order, and nothing else fails.
        let fake = FakeBackend::new(Limits::preset("h100").unwrap().1, time).with_behavior(|c| {
            if is(c, 256, 1) || is(c, 32, 1) {
                Behavior::DeviceLost
            } else {
                Behavior::Ok
            }
        });
        searched(&Tuner::new(fake), &job(), &opts(), None, |ledger, _, _, r| {
            r.unwrap();
            let failed: Vec<String> = ledger.results.values().filter(|r| r.stats().is_none()).map(|r| r.config.key()).collect();
            assert_eq!(failed.len(), 2, "{failed:?}");
            assert!(ledger.notes.iter().any(|n| n == "reference: the outputs of bx=32,vec=2 (the first valid config that ran (the default config failed), after 2 config(s) before it failed)"), "{:?}", ledger.notes);
            assert_eq!(ledger.results.values().filter(|r| r.verified).count(), 16);
        });
    }

    /// Configs whose every launch fails, none of which can make the reference outputs: while
    /// the tune tries one after another for the reference (sending only that one to the device),
    /// the configs compiled meanwhile fill the compile threads' allowance of configs waiting
    /// for a device. The candidate tried next must still be compiled: the tune ends, saying
    /// that every config failed, instead of waiting for ever (as it did when a kernel worker
    /// could not be started).
    #[test]
    fn a_tune_whose_every_launch_fails_ends() {
        let fake = FakeBackend::new(Limits::preset("h100").unwrap().1, time).with_behavior(|_| Behavior::LaunchError);
        let o = TuneOptions { strategy: "exhaustive".into(), compile_threads: Some(2), ..opts() };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(Tuner::new(fake).tune(&job(), &o).map(|r| r.results.len()));
        });
        // Not a speed goal: a bound on a hang (the tune itself takes well under a second).
        let r = rx.recv_timeout(std::time::Duration::from_secs(120)).expect("the tune did not end");
        let Err(crate::run::Error::NoValidConfig(why)) = r else { panic!("{r:?}") };
        assert!(why.starts_with("all 18 configs failed to launch: fake launch failure"), "{why}");
    }
}
