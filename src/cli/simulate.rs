//! `kerntune simulate`: replay recorded spaces as oracles and score strategies.

use crate::cli::out::outln;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Table};
use kerntune::sim::recorded::RecordedSpace;
use kerntune::sim::simulate::{score, Flight, Score};
use kerntune::sim::timed::TimedScore;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Recorded spaces: Kernel Tuner cache files (.json, .json.gz), T4 results files (a list of
    /// them, as `db export --format t4` writes several entries, is a space each), kerntune tune
    /// reports (`kerntune tune --json`; a space per tune), or a kerntune database (SQLite, or
    /// `db export`'s JSON; a space per entry, of the configs it measured).
    #[arg(required = true)]
    spaces: Vec<PathBuf>,
    /// Strategies, comma separated, or `all`.
    #[arg(long, default_value = "all")]
    strategy: String,
    /// Evaluations per run (default 400, or the largest --at beyond it; with --leave-one-out,
    /// the largest --at), or a time budget (30s, 5m): each run is then a tune with `--jobs N`
    /// compile threads (default 1) replayed in simulated time on the recorded compile and
    /// evaluation seconds until the budget is spent, and the table reads the fraction of
    /// optimum at the `--at` durations.
    #[arg(long, allow_hyphen_values = true)]
    budget: Option<String>,
    /// Seeds per strategy (the mean and spread are over these).
    #[arg(long, default_value_t = 50)]
    repeats: usize,
    /// First seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Answer each evaluation by measuring draws from the recorded repetitions (racing and the
    /// tie band are exercised; the pick is scored by its true mean).
    #[arg(long)]
    noise: bool,
    /// Proposals in flight (outcomes come back oldest first); 1 is a strictly sequential
    /// search. A tune of an adaptive strategy keeps one and a half per compile thread while
    /// compiling bounds it (24 with `-j 16`, 6 with `-j 4`, 3 with `-j 2`) and never fewer than 2
    /// (one compiling while one is measured); `--jobs` follows a tune's count as it changes.
    #[arg(long, default_value_t = 1)]
    parallel: usize,
    /// Instead of --parallel: keep in flight what a tune with N compile threads (`tune -j N`)
    /// keeps: until outcomes are in, one and a half per thread (the adaptive search with priors:
    /// as many as its sources' mean recorded seconds say), then as many as keep the slower
    /// of compiling and measuring busy, by the space's recorded compile and evaluation seconds
    /// (Kernel Tuner's `compile_time`, `benchmark_time` and `verification_time`) of the configs
    /// told so far, never fewer than 2. That is a cold CUDA or HIP tune: one on wgpu, or whose
    /// first proposals are in the compile cache, keeps 2 until it has timed an evaluation, and
    /// then as many as its own quick compiles call for (`--parallel 2` is near it). With a time
    /// budget: the tune's compile threads.
    #[arg(long, value_name = "N", conflicts_with_all = ["parallel", "compile_threads"])]
    jobs: Option<usize>,
    /// Simulate the wall time instead, with this many compile threads: the tuner's compile
    /// pipeline replayed on the recorded compile and benchmark times (Kernel Tuner's
    /// `compile_time`, `benchmark_time`, `verification_time`) for `--budget` evaluations, with
    /// the tuner's compile order (without and with the compile-tail watch at its default
    /// factor), first-in-first-out order, and the true times as the order.
    #[arg(long, value_name = "N")]
    compile_threads: Option<usize>,
    /// Evaluation counts to report in the table (default those of 50,100,200,400 the budget
    /// reaches, and the budget; with --leave-one-out 5,10,20). All are read from one run of
    /// --budget evaluations: the transfer search knows its budget (near its end a stalled model
    /// keeps its turns), so its score at 20 of a 200-evaluation run may differ from a
    /// 20-evaluation run's.
    ///
    /// With a time budget, durations instead (default a quarter, a half, three quarters and
    /// all of the budget): `--budget 2m --at 30s,1m,2m`.
    #[arg(long = "at", value_name = "AT", value_delimiter = ',')]
    at_given: Vec<String>,
    /// Few-shot transfer, offline: each space in turn is the device never seen and the others
    /// are its priors (the same kernel measured on other GPUs; parameters are matched by name
    /// and value). Reports, for each held-out space, the search without priors (--strategy,
    /// default hybrid), plain transfer (each other GPU's best in turn) and the adaptive transfer
    /// search: mean and 5th percentile over seeds.
    #[arg(long)]
    leave_one_out: bool,
    /// Write the curves (fraction of optimum against evaluations, mean and 5th percentile over
    /// the seeds) as SVG: a panel per space, or with --leave-one-out per held-out space, its
    /// three curves the search without priors, plain transfer and the adaptive search.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

/// The most evaluations a simulated run may have.
const MAX_BUDGET: usize = 10_000_000;
/// The most seeds a simulation may run.
const MAX_REPEATS: usize = 100_000;
/// The most scores (evaluations × seeds) kept at once (8 bytes each).
const MAX_CELLS: usize = 200_000_000;
/// The most proposals in flight.
const MAX_PARALLEL: usize = 100_000;

/// A bar on the terminal that counts the simulated runs (one seed of one strategy on one space)
/// while they run in parallel: a simulation of many seeds takes minutes. None with `--json`, or
/// where standard error is not a terminal.
struct Progress {
    pb: indicatif::ProgressBar,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    poll: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    fn start(runs: usize, json: bool) -> Progress {
        use std::sync::atomic::Ordering::Relaxed;
        let pb = if json { indicatif::ProgressBar::hidden() } else { indicatif::ProgressBar::new(runs as u64) };
        pb.set_style(
            indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        // The runs count is the process's: this simulation's are those after now.
        let from = kerntune::sim::simulate::runs_finished();
        let poll = (!pb.is_hidden()).then(|| {
            let (pb, done) = (pb.clone(), done.clone());
            std::thread::spawn(move || {
                while !done.load(Relaxed) {
                    pb.set_position(kerntune::sim::simulate::runs_finished().saturating_sub(from) as u64);
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
            })
        });
        Progress { pb, done, poll }
    }

    /// Names what runs now.
    fn doing(&self, what: String) {
        self.pb.set_message(what);
    }

    /// Runs `f` (which prints) with the bar off the screen.
    fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.pb.suspend(f)
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(poll) = self.poll.take() {
            let _ = poll.join();
        }
        self.pb.finish_and_clear();
    }
}

/// A budget or a point to read the scores at: a count of evaluations, or simulated seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Point {
    Count(usize),
    Seconds(f64),
}

/// Parses `flag`'s `text`: a count (`400`) or a duration (`30s`, `5m`), as `tune --budget` writes
/// them.
fn point(flag: &str, text: &str) -> anyhow::Result<Point> {
    if text.trim() == "0" {
        if flag == "--budget" {
            anyhow::bail!("--budget: 0 evaluations measure nothing; give at least 1, or a duration (such as 30s)");
        }
        anyhow::bail!("{flag}: 0 evaluations have no score; give counts from 1 (such as 5,10,20) or durations (such as 30s,1m)");
    }
    let b = kerntune::spec::settings::Budget::parse(text).map_err(|m| anyhow::anyhow!("{flag}: {m}"))?;
    match (b.max_evals, b.max_seconds, b.within, b.fraction) {
        (Some(n), None, None, None) => Ok(Point::Count(n)),
        (None, Some(s), None, None) => Ok(Point::Seconds(s)),
        _ => anyhow::bail!(
            "{flag}: `{text}`: a simulation takes one count of evaluations (400) or one duration (30s, 5m); percentages and fractions of the space are not simulated"
        ),
    }
}

/// A duration as `--at` and `--budget` write it: `90s`, `2m`, `7.5s`.
fn secs_label(s: f64) -> String {
    let trim = |x: f64| {
        let t = format!("{x:.3}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    if s >= 60.0 && (s / 60.0 - (s / 60.0).round()).abs() < 1e-9 {
        format!("{}m", trim(s / 60.0))
    } else {
        format!("{}s", trim(s))
    }
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    let budget = a.budget.as_deref().map(|t| point("--budget", t)).transpose()?;
    let given: Vec<Point> = a.at_given.iter().map(|t| point("--at", t)).collect::<anyhow::Result<_>>()?;
    if let Some(Point::Seconds(limit)) = budget {
        let mut at = Vec::new();
        for p in &given {
            match *p {
                Point::Seconds(s) if s <= limit + 1e-9 => at.push(s),
                Point::Seconds(s) => anyhow::bail!(
                    "--at {} is beyond --budget {}: raise --budget, or leave --at out to read a quarter, a half, three quarters and all of it",
                    secs_label(s),
                    secs_label(limit)
                ),
                Point::Count(n) => anyhow::bail!("--at {n} is a count of evaluations; with a time budget give durations (such as 30s,1m)"),
            }
        }
        if at.is_empty() {
            at = vec![limit / 4.0, limit / 2.0, 0.75 * limit, limit];
        }
        at.sort_by(f64::total_cmp);
        at.dedup();
        return in_time(&a, limit, &at);
    }
    let mut at: Vec<usize> = Vec::new();
    for p in &given {
        match *p {
            Point::Count(n) => at.push(n),
            Point::Seconds(s) => anyhow::bail!(
                "--at {} is a duration; give --budget a duration too (such as --budget {}) to simulate a tune's time, or give --at counts of evaluations",
                secs_label(s),
                secs_label(s)
            ),
        }
    }
    let budget = budget.map(|b| match b {
        Point::Count(n) => n,
        Point::Seconds(_) => unreachable!("a time budget returned above"),
    });
    if let (Some(b), Some(&most)) = (budget, at.iter().max()) {
        if most > b {
            anyhow::bail!("--at {most} is beyond --budget {b}: raise --budget, or leave it out to run to the largest --at");
        }
    }
    at.sort_unstable();
    at.dedup();
    let most_at = at.iter().copied().max();
    let budget = budget.unwrap_or(if a.leave_one_out { most_at.unwrap_or(20) } else { most_at.map_or(400, |m| m.max(400)) });
    if at.is_empty() {
        // The usual counts the run reaches, and always its last evaluation.
        let usual: &[usize] = if a.leave_one_out { &[5, 10, 20] } else { &[50, 100, 200, 400] };
        at = usual.iter().copied().filter(|&n| n <= budget).collect();
        if at.last() != Some(&budget) {
            at.push(budget);
        }
    }
    let a = Resolved { budget, at, a };
    if a.a.leave_one_out {
        return leave_one_out(&a);
    }
    run_resolved(&a)
}

impl Args {
    /// What a simulated run keeps in flight.
    fn flight(&self) -> Flight {
        self.jobs.map_or(Flight::Fixed(self.parallel), Flight::Jobs)
    }

    /// The line saying so, unless one at a time.
    fn flight_line(&self) -> Option<String> {
        let flight = self.flight();
        match flight {
            Flight::Jobs(n) => Some(format!(
                "proposals in flight as a tune with -j {n} keeps them: {} until outcomes are in (with priors, as many as the sources' recorded compile and evaluation seconds say), then by the recorded seconds of those told (outcomes arrive oldest first)",
                flight.first()
            )),
            Flight::Fixed(n) if n > 1 => Some(format!("{n} proposals in flight (outcomes arrive oldest first)")),
            Flight::Fixed(_) => None,
        }
    }
}

/// The arguments with the budget settled.
struct Resolved {
    budget: usize,
    /// The evaluation counts the table reads.
    at: Vec<usize>,
    a: Args,
}

impl std::ops::Deref for Resolved {
    type Target = Args;
    fn deref(&self) -> &Args {
        &self.a
    }
}

/// The recorded spaces a file holds (one, or one per entry or document of a database or a list:
/// [`RecordedSpace::load_all`]), with a note where one was cut off while written or holds part
/// of a space, or, with `noise`, has configs with one recorded time (nothing to draw noise
/// from). Of a file of several, a space no config of which succeeded is left out, with a note;
/// of a file of one, it is refused (nothing to score against).
fn load(path: &std::path::Path, noise: bool) -> anyhow::Result<Vec<RecordedSpace>> {
    let all = RecordedSpace::load_all(path).map_err(anyhow::Error::msg)?;
    let several = all.len() > 1;
    let mut kept = Vec::new();
    for space in all {
        if space.cut_off {
            crate::cli::out::eprint_line(&format!("note: {}", kerntune::store::recorded::cut_off_note(path, space.len())));
        }
        if space.optimum().is_infinite() {
            if !several {
                anyhow::bail!("{}: no config in this space succeeded; nothing to score against", path.display());
            }
            crate::cli::out::eprint_line(&format!("note: {} left out: none of its {} configs succeeded; nothing to score against", space.name, space.len()));
            continue;
        }
        if let Some(note) = &space.note {
            crate::cli::out::eprint_line(&format!("note: {note}"));
        }
        if noise {
            let measured = space.times.iter().filter(|t| t.is_some()).count();
            let once = space.times.iter().zip(&space.samples).filter(|(t, s)| t.is_some() && s.len() < 2).count();
            if once > 0 {
                crate::cli::out::eprint_line(&format!(
                    "note: --noise: in {}, {once} of the {measured} configs that succeeded have fewer than two recorded launch times (Kernel Tuner's `times`, T4's `times.runtimes`), so answer with their recorded time, without noise",
                    space.name
                ));
            }
        }
        kept.push(space);
    }
    if kept.is_empty() {
        anyhow::bail!("{}: no config of any of its spaces succeeded; nothing to score against", path.display());
    }
    Ok(kept)
}

/// Every space of every file given, each with a config that succeeded to score against.
fn load_scorable(a: &Args) -> anyhow::Result<Vec<RecordedSpace>> {
    Ok(load_named(a)?.into_iter().map(|(_, s)| s).collect())
}

/// [`load_scorable`]'s spaces, each with where it came from for messages: its file, and the
/// space's name too where the file holds several.
fn load_named(a: &Args) -> anyhow::Result<Vec<(String, RecordedSpace)>> {
    let mut spaces = Vec::new();
    for p in &a.spaces {
        let these = load(p, a.noise)?;
        let several = these.len() > 1;
        spaces.extend(these.into_iter().map(|s| (if several { format!("{} ({})", p.display(), s.name) } else { p.display().to_string() }, s)));
    }
    Ok(spaces)
}

/// `--leave-one-out`'s search without priors (`--strategy`, `all` meaning hybrid), once at least
/// two spaces are given (`spaces`: how many the files hold).
fn held_out_base(a: &Args, spaces: usize) -> anyhow::Result<String> {
    if spaces < 2 {
        anyhow::bail!("--leave-one-out needs at least two spaces (one held out, the others its priors); the files given hold {spaces}");
    }
    if a.strategy.contains(',') {
        anyhow::bail!(
            "--strategy {}: --leave-one-out compares one search without priors with the transfer searches; name one (default hybrid), or run it once per strategy",
            a.strategy
        );
    }
    let base = if a.strategy == "all" { "hybrid".to_string() } else { a.strategy.clone() };
    kerntune::search::strategy::by_name(&base, 0).map_err(|m| anyhow::anyhow!("--strategy: {m}"))?;
    Ok(base)
}

/// Says the spaces not held out (no other space can be their prior), and refuses a leave-one-out
/// that held out none.
fn said_alone(alone: &[(String, String)], none_held: bool) -> anyhow::Result<()> {
    for (space, why) in alone {
        crate::cli::out::eprint_line(&format!("note: {space} is not held out: no other space given can be its prior ({why})"));
    }
    if none_held {
        anyhow::bail!("--leave-one-out: no two of the spaces given share a parameter space (the same kernel measured on other GPUs); nothing to hold out");
    }
    Ok(())
}

/// A leave-one-out row's name for how its space was searched.
fn prior_label(kind: &kerntune::sim::simulate::PriorKind, base: &str) -> String {
    use kerntune::sim::simulate::PriorKind;
    match kind {
        PriorKind::None => format!("none ({base})"),
        PriorKind::Plain => "plain transfer".into(),
        PriorKind::Adaptive => "adaptive".into(),
    }
}

/// `--leave-one-out`: see the flag's help.
fn leave_one_out(a: &Resolved) -> anyhow::Result<i32> {
    use kerntune::sim::simulate::{leave_one_out, PriorKind};
    check_sizes(a)?;
    let spaces = load_scorable(a)?;
    let base = held_out_base(a, spaces.len())?;
    let progress = Progress::start(spaces.len() * 3 * a.repeats, a.json);
    progress.doing(format!("(leave one out over {} spaces)", spaces.len()));
    let (rows, alone) = leave_one_out(&spaces, &base, a.budget, a.repeats, a.seed, a.flight()).map_err(anyhow::Error::msg)?;
    drop(progress);
    said_alone(&alone, rows.is_empty())?;
    let at: Vec<usize> = a.at.iter().copied().filter(|&n| n >= 1 && n <= a.budget).collect();
    let label = |kind: &PriorKind| prior_label(kind, &base);
    if let Some(svg) = &a.svg {
        let labelled: Vec<(String, &Score)> = rows.iter().map(|(kind, s)| (label(kind), s)).collect();
        let drawn =
            plot(&by_evaluation(&labelled), 1.0, a.budget.max(2) as f64, "evaluations").map_err(|e| anyhow::anyhow!("drawing {}: {e}", svg.display()))?;
        crate::cli::out::write_named(svg, drawn.as_bytes(), "")?;
    }
    if a.json {
        let brief: Vec<serde_json::Value> = rows
            .iter()
            .map(|(kind, s)| {
                let at: serde_json::Map<String, serde_json::Value> =
                    at.iter().map(|&n| (n.to_string(), serde_json::json!({"mean": s.at(n).0, "p5": s.p5_at(n), "std": s.at(n).1}))).collect();
                let mut record = serde_json::json!({"space": s.space, "strategy": s.strategy, "prior": kind, "repeats": s.repeats, "at": at, "mean": s.mean, "std": s.std, "p5": s.p5});
                // Only with proposals in flight: picks withdrawn before they were measured.
                if s.withdrawn > 0.0 {
                    record["withdrawn"] = serde_json::json!(s.withdrawn);
                }
                // With priors: the evaluations their ranking proposed, and how often it proposed
                // the final pick.
                if *kind != PriorKind::None {
                    record["from_sources"] = serde_json::json!(s.from_sources);
                    record["pick_from_sources"] = serde_json::json!(s.pick_from_sources);
                }
                record
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&brief)?);
        return Ok(0);
    }
    outln!(
        "leave one out: each space as the device never seen, the others of its parameter space as its priors; fraction of optimum, mean (5th percentile) over {} seeds",
        a.repeats
    );
    if let Some(line) = a.flight_line() {
        outln!("{line}");
    }
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    let mut header = vec!["held out".to_string(), "prior".to_string()];
    header.extend(at.iter().map(|n| format!("@{n}")));
    header.push("sources' picks (final pick)".into());
    t.set_header(header);
    for (kind, s) in &rows {
        let mut row = vec![Cell::new(&s.space), Cell::new(label(kind))];
        for &n in &at {
            row.push(Cell::new(format!("{:.3} ({:.3})", s.at(n).0, s.p5_at(n))).set_alignment(CellAlignment::Right));
        }
        let picks =
            if *kind == PriorKind::None { "-".to_string() } else { format!("{:.1} of {} ({:.0} %)", s.from_sources, a.budget, s.pick_from_sources * 100.0) };
        row.push(Cell::new(picks).set_alignment(CellAlignment::Right));
        t.add_row(row);
    }
    outln!("{t}");
    outln!(
        "sources' picks: the evaluations the sources' ranking proposed, on the mean over the seeds, and the share of seeds whose final pick (after {}) it proposed",
        a.budget
    );
    if let Some(&last) = at.last() {
        let adaptive: Vec<&Score> = rows.iter().filter(|r| r.0 == PriorKind::Adaptive).map(|r| &r.1).collect();
        let none: Vec<&Score> = rows.iter().filter(|r| r.0 == PriorKind::None).map(|r| &r.1).collect();
        let reach = adaptive.iter().filter(|s| s.at(last).0 >= 0.98).count();
        let not_worse = adaptive.iter().zip(&none).filter(|(x, y)| x.at(last).0 >= y.at(last).0).count();
        outln!(
            "adaptive at {last}: ≥ 0.98 of the optimum in {reach} of {} spaces; at least as good as {base} without priors in {not_worse} of {}",
            adaptive.len(),
            adaptive.len()
        );
        let withdrawn: Vec<f64> = adaptive.iter().map(|s| s.withdrawn).collect();
        if withdrawn.iter().any(|&w| w > 0.0) {
            let (low, high) = withdrawn.iter().fold((f64::INFINITY, 0.0f64), |(l, h), &w| (l.min(w), h.max(w)));
            outln!(
                "adaptive: {:.1} of its picks in flight withdrawn per run before being measured, on the mean ({low:.1} to {high:.1} by space); in a tune each is a compile not measured",
                withdrawn.iter().sum::<f64>() / withdrawn.len() as f64
            );
        }
    }
    if let Some(svg) = &a.svg {
        outln!("curves written to {}", svg.display());
    }
    Ok(0)
}

/// A time budget (`--budget 30s`): each run a tune with `--jobs` compile threads replayed in
/// simulated time until the budget is spent, read at the `at` seconds.
fn in_time(a: &Args, limit: f64, at: &[f64]) -> anyhow::Result<i32> {
    use kerntune::sim::simulate::PriorKind;
    use kerntune::sim::timed::{grid, leave_one_out_in_time, score_named_in_time};
    if a.noise {
        anyhow::bail!("--noise is not simulated under a time budget (the tune is replayed on each config's recorded seconds); give a budget of evaluations (--budget 200) to answer with noise");
    }
    if a.parallel != 1 {
        anyhow::bail!("--parallel: under a time budget what is in flight follows the tune's compile threads, as in a tune; give --jobs N instead");
    }
    if a.compile_threads.is_some() {
        anyhow::bail!("--compile-threads reports the wall time of a count of evaluations; under a time budget give the tune's compile threads as --jobs N");
    }
    let threads = a.jobs.unwrap_or(1);
    at_least_one(&[("--repeats", a.repeats), ("--jobs", threads)])?;
    check_seeds_and_threads(a)?;
    let points = grid(limit, at);
    let labels: Vec<String> = at.iter().map(|&s| secs_label(s)).collect();
    let spaces = load_scorable(a)?;
    let base = if a.leave_one_out { Some(held_out_base(a, spaces.len())?) } else { None };
    let header = format!(
        "a tune with a time budget of {}, simulated: {threads} compile thread{} (the tuner's compile order and compile-tail watch), each config's recorded compile and evaluation seconds (opening the device and making the reference not counted); fraction of optimum of the fastest config measured by then (0 before the first), mean ± sd (5th percentile) over {} seeds",
        secs_label(limit),
        if threads == 1 { "" } else { "s" },
        a.repeats
    );
    let record = |s: &TimedScore| -> serde_json::Value {
        let read: serde_json::Map<String, serde_json::Value> = at
            .iter()
            .zip(&labels)
            .map(|(&t, l)| (l.clone(), serde_json::json!({"mean": s.at(t).0, "std": s.at(t).1, "p5": s.p5_at(t), "evaluations": s.done_at(t)})))
            .collect();
        serde_json::json!({"space": s.space, "strategy": s.strategy, "repeats": s.repeats, "seconds": limit, "jobs": threads, "at": read, "evaluations": s.evaluations()})
    };
    let cell = |s: &TimedScore, t: f64| Cell::new(format!("{:.3} ± {:.3} ({:.3})", s.at(t).0, s.at(t).1, s.p5_at(t))).set_alignment(CellAlignment::Right);
    let evaluations = |s: &TimedScore| Cell::new(format!("{:.1}", s.evaluations())).set_alignment(CellAlignment::Right);
    let mut header_row: Vec<String> = labels.iter().map(|l| format!("@{l}")).collect();
    header_row.push("evaluations".into());
    let (scores, labelled): (Vec<TimedScore>, Vec<String>) = if let Some(base) = base {
        let progress = Progress::start(spaces.len() * 3 * a.repeats, a.json);
        progress.doing(format!("(leave one out over {} spaces, {} each)", spaces.len(), secs_label(limit)));
        let (rows, alone) = leave_one_out_in_time(&spaces, &base, limit, a.repeats, a.seed, threads, &points).map_err(anyhow::Error::msg)?;
        drop(progress);
        said_alone(&alone, rows.is_empty())?;
        let label = |kind: &PriorKind| prior_label(kind, &base);
        if a.json {
            let brief: Vec<serde_json::Value> = rows
                .iter()
                .map(|(kind, s)| {
                    let mut r = record(s);
                    r["prior"] = serde_json::json!(kind);
                    r
                })
                .collect();
            outln!("{}", serde_json::to_string_pretty(&brief)?);
        } else {
            outln!("leave one out: each space as the device never seen, the others of its parameter space as its priors; {header}");
            let mut t = Table::new();
            t.load_preset(UTF8_FULL_CONDENSED);
            let mut h = vec!["held out".to_string(), "prior".to_string()];
            h.extend(header_row.iter().cloned());
            t.set_header(h);
            for (kind, s) in &rows {
                let mut row = vec![Cell::new(&s.space), Cell::new(label(kind))];
                row.extend(at.iter().map(|&x| cell(s, x)));
                row.push(evaluations(s));
                t.add_row(row);
            }
            outln!("{t}");
            outln!("evaluations: those that ended within {}, on the mean over the seeds", secs_label(limit));
        }
        let names = rows.iter().map(|(kind, _)| label(kind)).collect();
        (rows.into_iter().map(|r| r.1).collect(), names)
    } else {
        let strategies = strategies(a)?;
        let progress = Progress::start(spaces.len() * strategies.len() * a.repeats, a.json);
        let mut all = Vec::new();
        for space in &spaces {
            let mut scores = Vec::new();
            for st in &strategies {
                progress.doing(format!("({}, {st})", space.name));
                scores.push(score_named_in_time(space, st, limit, a.repeats, a.seed, threads, &points).map_err(|e| anyhow::anyhow!("{}: {e}", space.name))?);
            }
            if !a.json {
                progress.suspend(|| {
                    outln!(
                        "{} ({}): {} configs, optimum {:.4} ms; {header}",
                        space.name,
                        if space.device.is_empty() { "device not recorded" } else { &space.device },
                        space.len(),
                        space.optimum()
                    );
                    let mut t = Table::new();
                    t.load_preset(UTF8_FULL_CONDENSED);
                    let mut h = vec!["strategy".to_string()];
                    h.extend(header_row.iter().cloned());
                    t.set_header(h);
                    for sc in &scores {
                        let mut row = vec![Cell::new(&sc.strategy)];
                        row.extend(at.iter().map(|&x| cell(sc, x)));
                        row.push(evaluations(sc));
                        t.add_row(row);
                    }
                    outln!("{t}\n");
                    anyhow::Ok(())
                })?;
            }
            all.extend(scores);
        }
        drop(progress);
        if a.json {
            outln!("{}", serde_json::to_string_pretty(&all.iter().map(record).collect::<Vec<_>>())?);
        }
        let names = all.iter().map(|s| s.strategy.clone()).collect();
        (all, names)
    };
    if let Some(svg) = &a.svg {
        let labelled: Vec<(String, &TimedScore)> = labelled.into_iter().zip(&scores).collect();
        let drawn = plot(&by_time(&labelled), 0.0, limit, "simulated seconds").map_err(|e| anyhow::anyhow!("drawing {}: {e}", svg.display()))?;
        crate::cli::out::write_named(svg, drawn.as_bytes(), "")?;
        if !a.json {
            outln!("curves written to {}", svg.display());
        }
    }
    Ok(0)
}

/// The bounds every simulation keeps (memory and time).
fn check_sizes(a: &Resolved) -> anyhow::Result<()> {
    at_least_one(&[
        ("--budget", a.budget),
        ("--repeats", a.repeats),
        ("--parallel", a.parallel),
        ("--jobs", a.jobs.unwrap_or(1)),
        ("--compile-threads", a.compile_threads.unwrap_or(1)),
    ])?;
    // Each run keeps a score per evaluation, and the runs go one seed at a time: beyond these
    // a simulation would exhaust memory or never end.
    if a.budget > MAX_BUDGET {
        anyhow::bail!("--budget {} is more than the {MAX_BUDGET} evaluations a simulated run may have", a.budget);
    }
    check_seeds_and_threads(a)?;
    if a.budget.saturating_mul(a.repeats) > MAX_CELLS {
        anyhow::bail!(
            "--budget {} × --repeats {} keeps {} scores in memory, more than {MAX_CELLS}; lower one of them",
            a.budget,
            a.repeats,
            a.budget.saturating_mul(a.repeats)
        );
    }
    if a.parallel > MAX_PARALLEL {
        anyhow::bail!("--parallel {} is more than the {MAX_PARALLEL} proposals in flight a simulation may keep", a.parallel);
    }
    Ok(())
}

/// Refuses the first count that is 0, naming its flag (`--repeats 0: give at least 1`).
fn at_least_one(counts: &[(&str, usize)]) -> anyhow::Result<()> {
    match counts.iter().find(|(_, n)| *n == 0) {
        Some((flag, _)) => anyhow::bail!("{flag} 0: give at least 1"),
        None => Ok(()),
    }
}

/// The most seeds a simulation runs and compile threads it follows, whatever its budget.
fn check_seeds_and_threads(a: &Args) -> anyhow::Result<()> {
    if a.repeats > MAX_REPEATS {
        anyhow::bail!("--repeats {} is more than the {MAX_REPEATS} seeds a simulation may run", a.repeats);
    }
    if a.jobs.is_some_and(|n| n > MAX_PARALLEL / 2) {
        anyhow::bail!("--jobs {} is more than the {} compile threads a simulation may follow", a.jobs.unwrap_or_default(), MAX_PARALLEL / 2);
    }
    Ok(())
}

/// The strategies `--strategy` names (`all`: every one but exhaustive and the transfer search),
/// each checked.
fn strategies(a: &Args) -> anyhow::Result<Vec<String>> {
    let strategies: Vec<String> = if a.strategy == "all" {
        kerntune::spec::settings::STRATEGIES.iter().filter(|s| s.name != "exhaustive" && s.name != "transfer").map(|s| s.name.to_string()).collect()
    } else {
        // Each once, in the order given (`hybrid,hybrid` drew the same column twice).
        let mut named: Vec<String> = Vec::new();
        for s in a.strategy.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if !named.iter().any(|n| n == s) {
                named.push(s.to_string());
            }
        }
        named
    };
    for s in &strategies {
        kerntune::search::strategy::by_name(s, 0).map_err(|m| anyhow::anyhow!("--strategy: {m}"))?;
    }
    Ok(strategies)
}

fn run_resolved(a: &Resolved) -> anyhow::Result<i32> {
    let strategies = strategies(a)?;
    check_sizes(a)?;
    if let Some(threads) = a.compile_threads {
        return wall(a, &strategies, threads);
    }
    let mut all: Vec<Score> = Vec::new();
    let spaces = load_scorable(a)?;
    let progress = Progress::start(spaces.len() * strategies.len() * a.repeats, a.json);
    for space in spaces {
        let mut scores = Vec::new();
        for s in &strategies {
            progress.doing(format!("({}, {s})", space.name));
            scores.push(score(&space, s, a.budget, a.repeats, a.seed, a.noise, a.flight()).map_err(anyhow::Error::msg)?);
        }
        if !a.json {
            progress.suspend(|| print_scores(a, &space, &scores))?;
        }
        all.extend(scores);
    }
    drop(progress);
    if let Some(svg) = &a.svg {
        let labelled: Vec<(String, &Score)> = all.iter().map(|s| (s.strategy.clone(), s)).collect();
        let drawn =
            plot(&by_evaluation(&labelled), 1.0, a.budget.max(2) as f64, "evaluations").map_err(|e| anyhow::anyhow!("drawing {}: {e}", svg.display()))?;
        crate::cli::out::write_named(svg, drawn.as_bytes(), "")?;
        if !a.json {
            outln!("curves written to {}", svg.display());
        }
    }
    if a.json {
        let brief: Vec<serde_json::Value> = all
            .iter()
            .map(|s| {
                let at: serde_json::Map<String, serde_json::Value> =
                    a.at.iter()
                        .filter(|&&n| n >= 1 && n <= a.budget)
                        .map(|&n| (n.to_string(), serde_json::json!({"mean": s.at(n).0, "std": s.at(n).1, "p5": s.p5_at(n)})))
                        .collect();
                serde_json::json!({"space": s.space, "strategy": s.strategy, "repeats": s.repeats, "at": at, "mean": s.mean, "std": s.std, "p5": s.p5})
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&brief)?);
    }
    Ok(0)
}

/// One space's table of scores.
fn print_scores(a: &Resolved, space: &RecordedSpace, scores: &[Score]) -> anyhow::Result<()> {
    let failed = space.times.iter().filter(|t| t.is_none()).count();
    outln!(
        "{} ({}): {} configs, {failed} failed, optimum {:.4} ms; fraction of optimum, mean ± sd (5th percentile) over {} seeds{}",
        space.name,
        if space.device.is_empty() { "device not recorded" } else { &space.device },
        space.len(),
        space.optimum(),
        a.repeats,
        if a.noise { ", noisy answers" } else { "" }
    );
    if let Some(line) = a.flight_line() {
        outln!("{line}");
    }
    if a.budget > space.len() {
        outln!(
            "(the space has {} configs: a run evaluates each at most once, so it ends by evaluation {}; later columns repeat its end)",
            space.len(),
            space.len()
        );
    }
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    let at: Vec<usize> = a.at.iter().copied().filter(|&n| n >= 1 && n <= a.budget).collect();
    let mut header = vec!["strategy".to_string()];
    header.extend(at.iter().map(|n| format!("@{n}")));
    t.set_header(header);
    for sc in scores {
        let mut row = vec![Cell::new(&sc.strategy)];
        for &n in &at {
            let (m, sd) = sc.at(n);
            row.push(Cell::new(format!("{m:.3} ± {sd:.3} ({:.3})", sc.p5_at(n))).set_alignment(CellAlignment::Right));
        }
        t.add_row(row);
    }
    outln!("{t}\n");
    Ok(())
}

/// `--compile-threads`: simulated wall times, mean over the seeds, per space and strategy.
fn wall(a: &Resolved, strategies: &[String], threads: usize) -> anyhow::Result<i32> {
    use kerntune::sim::schedule::{compare, Comparison};
    let mut rows: Vec<Comparison> = Vec::new();
    let named = load_named(a)?;
    let spaces: Vec<&RecordedSpace> = named.iter().map(|(_, s)| s).collect();
    let progress = Progress::start(spaces.len() * strategies.len() * a.repeats, a.json);
    for (h, (from, space)) in named.iter().enumerate() {
        // The other spaces of the same parameters (the same kernel on other devices): their
        // recorded compile times as the prior a tune of this one would have.
        let names = |s: &RecordedSpace| s.params.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
        let others: Vec<&RecordedSpace> = spaces.iter().enumerate().filter(|(o, s)| *o != h && names(s) == names(space)).map(|(_, s)| *s).collect();
        let prior = kerntune::sim::simulate::prior_for(space, &others).compile_s;
        let prior = (prior.iter().any(|t| t.is_finite())).then_some(prior.as_slice());
        for st in strategies {
            progress.doing(format!("({}, {st})", space.name));
            rows.push(compare(space, st, a.budget, a.repeats, a.seed, threads, prior).map_err(|e| anyhow::anyhow!("{from}: {e}"))?);
        }
    }
    drop(progress);
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(0);
    }
    outln!(
        "simulated wall time of {} evaluations with {threads} compile threads, mean over {} seeds (recorded compile times, taken one at a time; device start not included)",
        a.budget,
        a.repeats
    );
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    // With several spaces of one kernel, each is also run with the others' compile times as
    // its prior, as a tune with priors from those devices would order its compiles.
    let fleet = rows.iter().any(|r| r.fleet.is_some());
    let mut header = vec!["space", "strategy", "wall s", "efficiency", "with the tail watch (abandoned)", "first in, first out", "true times as order"];
    if fleet {
        header.push("other spaces' compile times as prior");
    }
    header.push("bound s");
    t.set_header(header);
    let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    for r in &rows {
        let mut row = vec![
            Cell::new(&r.space),
            Cell::new(&r.strategy),
            right(format!("{:.1}", r.model.wall_s)),
            right(format!("{:.0} %", 100.0 * r.model.efficiency)),
            right(format!("{:.1} s ({:.1})", r.tail.wall_s, r.tail.abandoned)),
            right(format!("{:.1} s ({:.0} %)", r.fifo.wall_s, 100.0 * r.fifo.efficiency)),
            right(format!("{:.1} s", r.oracle.wall_s)),
        ];
        if fleet {
            row.push(right(r.fleet.as_ref().map_or("–".into(), |f| format!("{:.1} s ({:.0} %)", f.wall_s, 100.0 * f.efficiency))));
        }
        row.push(right(format!("{:.1}", r.model.bound_s)));
        t.add_row(row);
    }
    outln!("{t}");
    Ok(0)
}

/// Curve colours, told apart on white (and by most colour-blind readers).
const CURVES: [plotters::style::RGBColor; 6] = [
    plotters::style::RGBColor(0xd6, 0x27, 0x28),
    plotters::style::RGBColor(0x2c, 0xa0, 0x2c),
    plotters::style::RGBColor(0x1f, 0x77, 0xb4),
    plotters::style::RGBColor(0xff, 0x7f, 0x0e),
    plotters::style::RGBColor(0x94, 0x67, 0xbd),
    plotters::style::RGBColor(0x8c, 0x56, 0x4b),
];

/// One curve of a plot: its legend label, its space's panel and its points (x, mean, 5th
/// percentile).
struct Curve<'s> {
    label: String,
    space: &'s str,
    points: Vec<(f64, f64, f64)>,
}

/// The curves of scores by evaluation.
fn by_evaluation<'s>(scores: &[(String, &'s Score)]) -> Vec<Curve<'s>> {
    scores
        .iter()
        .map(|(label, s)| Curve {
            label: label.clone(),
            space: &s.space,
            points: s.mean.iter().zip(&s.p5).enumerate().map(|(i, (m, p))| ((i + 1) as f64, *m, *p)).collect(),
        })
        .collect()
}

/// The curves of scores against simulated seconds.
fn by_time<'s>(scores: &[(String, &'s TimedScore)]) -> Vec<Curve<'s>> {
    scores
        .iter()
        .map(|(label, s)| Curve {
            label: label.clone(),
            space: &s.space,
            points: s.seconds.iter().zip(s.mean.iter().zip(&s.p5)).map(|(x, (m, p))| (*x, *m, *p)).collect(),
        })
        .collect()
}

/// Draws `curves` as SVG text: one legend across the top (every panel has the same curves, and a
/// legend inside a panel hid the low 5th-percentile lines of spaces tuned badly without priors),
/// then a panel per space, two side by side when there are more than two, each curve the mean
/// fraction of optimum over the seeds (solid) and its 5th percentile (dashed, the same colour),
/// against `x_desc` from `x_min` to `x_max`, every panel on one y range to be compared at a
/// glance.
fn plot(curves: &[Curve<'_>], x_min: f64, x_max: f64, x_desc: &str) -> Result<String, Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    let mut spaces: Vec<&str> = Vec::new();
    let mut labels: Vec<&str> = Vec::new();
    for c in curves {
        if !spaces.contains(&c.space) {
            spaces.push(c.space);
        }
        if !labels.contains(&c.label.as_str()) {
            labels.push(&c.label);
        }
    }
    let color_of = |label: &str| CURVES[labels.iter().position(|l| *l == label).unwrap_or(0) % CURVES.len()].to_rgba();
    let columns = if spaces.len() > 2 { 2 } else { 1 };
    let rows = spaces.len().div_ceil(columns).max(1);
    let (w, h, legend_h) = (if columns == 1 { 900 } else { 620 }, 360, 34);
    let x_max = if x_max > x_min { x_max } else { x_min + 1.0 };
    // Whole numbers where the axis spans more than a few units (evaluations, long budgets).
    let decimals = if x_max - x_min >= 10.0 { 0 } else { 1 };
    // Evaluations from 1 to 100 or more on a log axis: the first tens, where strategies differ,
    // took a tenth of a linear axis, and the flat tail the rest.
    let log_x = x_min >= 1.0 && x_max / x_min >= 100.0;
    // Its labels at 1, 2, 5 of each decade (plotters' own are the powers of ten only).
    let ticks: Vec<f64> = (0..6).flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e))).filter(|t| (x_min..=x_max).contains(t)).collect();
    let ymin = curves.iter().flat_map(|c| c.points.iter().flat_map(|p| [p.1, p.2])).fold(1.0f64, f64::min).max(0.0);
    let y_range = (ymin - 0.02).max(0.0)..1.005f64;
    // Drawn in memory, then written whole: a full disk leaves no cut-off plot.
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, ((w * columns) as u32, (h * rows + legend_h) as u32)).into_drawing_area();
        root.fill(&WHITE)?;
        let (legend, body) = root.split_vertically(legend_h as u32);
        // The legend: a short line of each curve's colour and its label, centred in one row.
        let font = ("sans-serif", 14).into_text_style(&legend);
        let (line, gap, pad) = (22i32, 6i32, 26i32);
        let widths: Vec<i32> = labels.iter().map(|l| legend.estimate_text_size(l, &font).map(|(tw, _)| tw as i32)).collect::<Result<_, _>>()?;
        let total: i32 = widths.iter().map(|tw| line + gap + tw).sum::<i32>() + pad * (labels.len() as i32 - 1).max(0);
        let mut x = ((w * columns) as i32 - total).max(0) / 2;
        let y = legend_h as i32 / 2 + 2;
        for (label, tw) in labels.iter().zip(&widths) {
            let color = color_of(label);
            legend.draw(&PathElement::new(vec![(x, y), (x + line, y)], color.stroke_width(2)))?;
            legend.draw(&Text::new(label.to_string(), (x + line + gap, y - 7), font.clone()))?;
            x += line + gap + tw + pad;
        }
        let panels = body.split_evenly((rows, columns));
        for (panel, space) in panels.iter().zip(&spaces) {
            let mine: Vec<(RGBAColor, &Curve<'_>)> = curves.iter().filter(|c| c.space == *space).map(|c| (color_of(&c.label), c)).collect();
            let caption = format!("{space}: fraction of optimum");
            if log_x {
                draw_panel(
                    panel,
                    &caption,
                    (x_min..x_max).log_scale().with_key_points(ticks.clone()),
                    y_range.clone(),
                    &format!("{x_desc} (log scale)"),
                    0,
                    &mine,
                )?;
            } else {
                draw_panel(panel, &caption, x_min..x_max, y_range.clone(), x_desc, decimals, &mine)?;
            }
        }
        root.present()?;
    }
    Ok(svg)
}

/// One panel of [`plot`]: its axes (x by `x_spec`, linear or log) and each curve's mean (solid)
/// and 5th percentile (dashed) in its colour.
fn draw_panel<X>(
    panel: &plotters::drawing::DrawingArea<plotters::prelude::SVGBackend<'_>, plotters::coord::Shift>,
    caption: &str,
    x_spec: X,
    y_range: std::ops::Range<f64>,
    x_desc: &str,
    decimals: usize,
    curves: &[(plotters::style::RGBAColor, &Curve<'_>)],
) -> Result<(), Box<dyn std::error::Error>>
where
    X: plotters::coord::ranged1d::AsRangedCoord<Value = f64>,
    X::CoordDescType: plotters::coord::ranged1d::ValueFormatter<f64>,
{
    use plotters::prelude::*;
    let mut chart = ChartBuilder::on(panel)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(48)
        .build_cartesian_2d(x_spec, y_range)?;
    // One light line between labels, as the report's charts have (the default drew graph paper).
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("best found / optimum (dashed: 5th pct.)")
        .x_label_formatter(&|x| format!("{x:.decimals$}"))
        .max_light_lines(1)
        .draw()?;
    for (color, c) in curves {
        chart.draw_series(LineSeries::new(c.points.iter().map(|p| (p.0, p.1)), color.stroke_width(2)))?;
        chart.draw_series(DashedLineSeries::new(c.points.iter().map(|p| (p.0, p.2)), 4, 3, color.stroke_width(1)))?;
    }
    Ok(())
}
