//! `kerntune report`'s page: one self-contained HTML file from database entries.
//!
//! The page is built with maud (escaped text, no hand-written tags soup) around the SVG charts
//! of [`charts`], inlined. It holds no script, stylesheet, font or image from anywhere else, so
//! it opens offline, from a CI artifact or a mail attachment alike.
//!
//! Per entry it shows the distribution of times (winner, tie band and default marked), the
//! fastest configs, each parameter's effect and share of variance, the search trace, compile
//! times, failures by cause and the roofline. Several entries (one kernel on several devices or
//! problem sizes) get a side-by-side part first: the winner of each and the portability table
//! (see [`kerntune_core::analysis::portability`]).

pub mod charts;

use kerntune_core::analysis::portability::{Cell, Portability};
use kerntune_core::analysis::roofline::Bound;
use kerntune_core::analysis::{EntryView, Point, Run};
use kerntune_core::run::diagnose::shared_kind;
use maud::{html, Markup, PreEscaped, DOCTYPE};

pub use charts::ChartError;

/// Facts about where the page's entries come from.
pub struct Source {
    /// The database (or file) read.
    pub database: String,
    /// What selected the entries (`kernel triad`, the spec's path).
    pub selection: String,
}

/// Rows of the fastest-configs table per entry.
const TOP: usize = 25;
/// Parameter charts per entry (the table lists every parameter).
const PARAM_CHARTS: usize = 8;
/// Runs per entry whose proposals are tabled (the newest).
const PROPOSAL_TABLES: usize = 4;
/// Failure causes listed per entry.
const CAUSES: usize = 20;
/// What a part of an entry says when none of its configs was measured successfully.
const NOTHING: &str = "Nothing was measured successfully.";

const STYLE: &str = "
body { font-family: sans-serif; margin: 24px auto; max-width: 1100px; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { border-bottom: 2px solid #ddd; padding-bottom: 4px; margin-top: 2.2em; }
h3 { margin-top: 1.6em; } .muted { color: #666; } .note { background: #fff8e1; border-left: 4px solid #f0b400; padding: 6px 10px; margin: 6px 0; }
table { border-collapse: collapse; margin: 8px 0; font-size: 0.9em; } th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.num { text-align: right; font-variant-numeric: tabular-nums; } code { font-size: 0.95em; overflow-wrap: anywhere; }
figure { margin: 10px 0; } figure svg { max-width: 100%; height: auto; } .grid { display: flex; flex-wrap: wrap; gap: 8px; }
.winner { color: #1b9e77; font-weight: bold; } .default { color: #d95f02; } nav li { margin: 2px 0; }
";

fn time(s: f64) -> String {
    if !s.is_finite() {
        "-".into()
    } else if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.4} ms", s * 1e3)
    } else {
        format!("{:.2} µs", s * 1e6)
    }
}

/// A rate in `scale` units with three significant digits at least one decimal: `1340.2`,
/// `0.0213`.
fn rate(x: Option<f64>, scale: f64) -> String {
    match x.map(|v| v / scale) {
        Some(v) if v >= 100.0 || v == 0.0 => format!("{v:.1}"),
        Some(v) => {
            let digits = (2 - v.abs().log10().floor() as i32).max(1) as usize;
            format!("{v:.digits$}")
        }
        None => "-".into(),
    }
}

/// A time in seconds since the Unix epoch as `2026-12-07 03:01:02 UTC`.
pub fn utc(secs: u64) -> String {
    // humantime writes years up to 9999; a later start is a damaged record, not a date.
    if secs > 253_402_300_799 {
        return format!("{secs} s after 1970 (not a date: a damaged record)");
    }
    humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs)).to_string().replace('T', " ").replace('Z', " UTC")
}

/// A run's verification line ([`kerntune_core::store::db::RunNote::verification`]) as the
/// report says it: a run without a reference checked no output, which a reader of its times
/// should not have to infer.
fn verification(note: &kerntune_core::store::db::RunNote, line: &str) -> Markup {
    if note.unverified() {
        html! { strong { "outputs not verified" } " (reference " code { "none" } "): a config that computes a wrong result was timed like any other" }
    } else {
        html! { "verification: " (line) }
    }
}

/// A run's memory-checker line ([`kerntune_core::store::db::RunNote::memcheck`]): a winner that
/// reads or writes past its buffers in bold, whatever its time.
fn memcheck(m: &kerntune_core::store::db::WinnerMemcheck) -> Markup {
    if m.out_of_bounds() {
        html! { strong { "the winner reads or writes past its buffers" } " (memcheck): " (m.line) }
    } else {
        html! { "memcheck: " (m.line) }
    }
}

/// What the interaction chart shows, and what it means for tuning.
fn interaction_caption(i: &kerntune_core::analysis::Interaction) -> String {
    format!(
        "{r} and {c} together explain {j:.0} % of the variance of log(time), {r} alone {a:.0} % and {c} alone {b:.0} %; {x:.0} % is how they act together: the fastest {c} depends on {r}, so a search that changes one parameter at a time can miss the fastest pair. Each cell: the fastest config measured with both values, as a multiple of the fastest measured (1.00); blank where no config with both was measured (or every one failed){w}.",
        r = i.rows,
        c = i.columns,
        j = i.explained * 100.0,
        a = i.alone.0 * 100.0,
        b = i.alone.1 * 100.0,
        x = i.interaction * 100.0,
        w = if i.winner.is_some() { "; outlined: the winner's" } else { "" },
    )
}

/// What the timeline of run `k` (from 0) shows, and its account of the run's time; `later`:
/// a later run measured the entry too.
fn timeline_caption(k: usize, t: &kerntune_core::run::timeline::Timeline, later: bool) -> String {
    let a = t.account();
    let mut s = format!(
        "Run {}: each bar is one config's compile (on the first compile lane free when it began) or one job a device ran for it. {}.",
        k + 1,
        capitalized(a.line().trim_start_matches("time: "))
    );
    if later {
        s.push_str(" A config measured by more than one run keeps one record, and its bars are drawn in that record's run only.");
    }
    if t.compile_lanes > charts::COMPILE_LANES {
        s.push_str(&format!(" The first {} of {} compile lanes are drawn.", charts::COMPILE_LANES, t.compile_lanes));
    }
    if t.bars.len() > charts::SPANS {
        s.push_str(&format!(" The longest {} of {} spans are drawn.", charts::SPANS, t.bars.len()));
    }
    let (n, secs) = t.unrecorded;
    if n > 0 {
        s.push_str(&format!(
            " {n} compile(s) of configs no record keeps (pruned after compiling, or given up on), {secs:.1} s summed, are counted in the compile threads' share but not drawn."
        ));
    }
    s
}

/// `s` with its first letter upper-case.
fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

fn figure(chart: &str, svg: Result<Option<String>, ChartError>, caption: &str, absent: &str) -> Result<Markup, ChartError> {
    Ok(match svg? {
        Some(s) => html! { figure data-chart=(chart) { (PreEscaped(s)) figcaption.muted { (caption) } } },
        None => html! { p.muted { (absent) } },
    })
}

/// The page for `views` (at least one).
pub fn page(views: &[EntryView], source: &Source) -> Result<String, ChartError> {
    let kernels: Vec<&str> = {
        let mut k: Vec<&str> = views.iter().map(|v| v.kernel.as_str()).collect();
        k.dedup();
        k
    };
    let title = format!("kerntune report: {}", kernels.join(", "));
    let measured: usize = views.iter().map(|v| v.points.len()).sum();
    let failed: usize = views.iter().map(|v| v.failures.values().sum::<usize>()).sum();
    let sections = views.iter().enumerate().map(|(i, v)| entry(i, v)).collect::<Result<Vec<_>, _>>()?;
    let compare = match Portability::of(views) {
        Some(t) => Some(side_by_side(views, &t)?),
        None => None,
    };
    let made = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { (title) }
                p.muted {
                    (views.len()) " entr" (if views.len() == 1 { "y" } else { "ies" }) " (" (source.selection) ") from " code { (source.database) }
                    ": " (measured) " configs measured, " (failed) " failed. Made " (utc(made)) " by kerntune " (env!("CARGO_PKG_VERSION")) "."
                }
                @if views.len() > 1 {
                    nav { ol { @for (i, v) in views.iter().enumerate() { li { a href=(format!("#entry-{}", i + 1)) { (v.label()) } } } } }
                }
                @if let Some(c) = compare { (c) }
                @for s in sections { (s) }
                h2 { "Reading this page" }
                p.muted {
                    "Times are the mean per launch of each config's timed launches. The tie band is the configs the winner could not be told apart from within the measurement noise; the stable tie-break picked the winner among them. "
                    "A parameter's share of variance is η² of log(time): the between-values sum of squares over the total, taking the parameter alone — where a search measured an uneven sample of the space (anything but an exhaustive one), parameters that moved together share their effects. "
                    "Charts with one mark per config draw at most " (charts::MARKS) " of them, evenly spaced by rank in time (fastest and slowest included), plus the winner, its tie band and the default; histograms, box plots, best-so-far lines and tables use every measurement. "
                    "Roofline peaks are theoretical (clock × width); no kernel reaches 100 %."
                }
            }
        }
    };
    Ok(markup.into_string())
}

/// Each chart of a [`page`] as a file of its own, in the page's order: its name and its SVG.
/// The name is the entry the chart belongs to (or `side-by-side`, for the comparison of
/// several), then its kind, numbered where an entry has several of a kind:
/// `entry-1-distribution`, `entry-2-parameter-3`, `side-by-side-comparison`.
pub fn charts_of(page: &str) -> Vec<(String, String)> {
    const FIGURE: &str = "<figure data-chart=\"";
    let sections: Vec<(usize, &str)> = page
        .match_indices("<section id=\"")
        .filter_map(|(at, m)| {
            let id = &page[at + m.len()..];
            Some((at, &id[..id.find('"')?]))
        })
        .collect();
    let mut found: Vec<(String, String, String)> = Vec::new();
    for (at, m) in page.match_indices(FIGURE) {
        let rest = &page[at + m.len()..];
        let Some(kind) = rest.find('"').map(|e| &rest[..e]) else { continue };
        let (Some(start), Some(end)) = (rest.find("<svg"), rest.find("</svg>")) else { continue };
        let within = match sections.iter().rev().find(|(s, _)| *s < at) {
            Some((_, id)) if *id != "compare" => id,
            _ => "side-by-side",
        };
        found.push((within.to_string(), kind.to_string(), rest[start..end + "</svg>".len()].to_string()));
    }
    let mut seen: std::collections::BTreeMap<(String, String), usize> = std::collections::BTreeMap::new();
    let counts = found.iter().fold(std::collections::BTreeMap::new(), |mut m, (w, k, _)| {
        *m.entry((w.clone(), k.clone())).or_insert(0usize) += 1;
        m
    });
    found
        .into_iter()
        .map(|(within, kind, svg)| {
            let n = seen.entry((within.clone(), kind.clone())).or_insert(0);
            *n += 1;
            let name = if counts[&(within.clone(), kind.clone())] > 1 { format!("{within}-{kind}-{n}") } else { format!("{within}-{kind}") };
            (name, svg)
        })
        .collect()
}

/// A config key in a table cell: a line may break after each comma.
fn config_key(key: &str) -> Markup {
    html! { code { @for (i, part) in key.split(',').enumerate() { @if i > 0 { "," wbr; } (part) } } }
}

/// `key` without the `name=value` parts of `fixed` (parameters every measured config has one
/// value of, which the table says once above itself).
fn key_without(key: &str, fixed: &[(&str, &str)]) -> String {
    let parts: Vec<&str> =
        key.split(',').filter(|part| !fixed.iter().any(|(n, v)| part.strip_prefix(n).and_then(|r| r.strip_prefix('=')) == Some(v))).collect();
    if parts.is_empty() {
        key.to_string()
    } else {
        parts.join(",")
    }
}

/// Who proposed run `k`'s evaluations (a search that learned from priors), and what each found.
fn proposals(v: &EntryView, k: usize, r: &Run) -> Markup {
    let best = r.evals.iter().filter_map(|e| e.2).fold(f64::INFINITY, f64::min);
    let from_priors: usize = r.proposed.iter().filter(|p| p.from_priors).map(|p| p.evaluations).sum();
    html! {
        h4 { "Who proposed run " (k + 1) "'s evaluations" }
        p.muted { (from_priors) " of " (r.evals.len()) " came from the sources' ranking (the other devices' results); the rest from the search without priors, or the tuner itself." }
        table {
            tr { th { "proposed by" } th { "evaluations" } th { "failed" } th { "fastest found" } th { "time" } th { "at evaluation" } th { "× the run's best" } th { "" } }
            @for p in &r.proposed {
                tr {
                    td { (p.words) } td.num { (p.evaluations) } td.num { (p.failed) }
                    @match &p.best {
                        Some((seq, t, key)) => {
                            td { (config_key(key)) } td.num { (time(*t)) } td.num { (seq + 1) } td.num { (format!("{:.2}", t / best)) }
                            td { @if Some(key) == v.winner.as_ref() { span.winner { "winner" } } }
                        },
                        None => { td { "-" } td { } td { } td { } td { } },
                    }
                }
            }
        }
    }
}

fn position_words(p: &Point) -> String {
    p.position.words().unwrap_or_else(|| "-".into())
}

fn side_by_side(views: &[EntryView], t: &Portability) -> Result<Markup, ChartError> {
    let chart = charts::comparison(views, t)?;
    let shade = |r: f64| format!("background: hsl({:.0}, 65%, 85%)", 120.0 * r.clamp(0.0, 1.0));
    Ok(html! {
        section id="compare" {
            h2 { "Side by side" }
            h3 { "Winner per entry" }
            table {
                tr { th { "#" } th { "kernel" } th { "device" } th { "problem" } th { "winner" } th { "time" } th { "roofline" } th { "measured" } th { "failed" } }
                @for (i, v) in views.iter().enumerate() {
                    tr {
                        td { a href=(format!("#entry-{}", i + 1)) { "#" (i + 1) } }
                        td { (v.kernel) } td { (v.target_name) } td { code { (v.problem) } }
                        @match v.winner_point() {
                            Some(w) => { td { (config_key(&w.key)) } td.num { (time(w.time)) } td { (position_words(w)) } }
                            None => { td colspan="3" { "no winner (unfinished tune, a shard, or withheld: see the entry)" } }
                        }
                        td.num { (v.points.len()) } td.num { (v.failures.values().sum::<usize>()) }
                    }
                }
            }
            h3 { "Portability" }
            p.muted { "Each row is one entry's winner; each column an entry. A cell is that column's fastest time ÷ the row's winner's time there (100 % on the diagonal). Blank: the winner was never measured there — nothing is guessed." }
            table {
                tr { th { "winner of" } th { "config" } @for (j, _) in t.columns.iter().enumerate() { th { "on #" (j + 1) } } th { "geometric mean" } }
                @for r in &t.rows {
                    tr {
                        td { "#" (r.from + 1) } td { code { (r.winner) } }
                        @for c in &r.cells {
                            @match c {
                                Cell::Measured { time: s, relative } => { td.num style=(shade(*relative)) title=(time(*s)) { (format!("{:.0} %", relative * 100.0)) } }
                                Cell::Failed { kind } => { td style="background: #f5c6c6" { (kind) } }
                                Cell::Missing => { td.muted { "not measured" } }
                            }
                        }
                        td.num { @match r.mean { Some((m, n)) => { (format!("{:.0} %", m * 100.0)) " over " (n) } None => { "-" } } }
                    }
                }
            }
            figure data-chart="comparison" { (PreEscaped(chart)) figcaption.muted { "Bars: each entry's fastest time. Dots: the other entries' winners measured on that entry; a dot far above its bar is a winner that does not carry over." } }
        }
    })
}

fn entry(i: usize, v: &EntryView) -> Result<Markup, ChartError> {
    let w = v.winner_point();
    let d = v.default_point();
    let peaks = v.peaks.as_ref();
    // A parameter with one value measured (a fixed filter size, `use_cmem = [1]`) has no effect
    // to draw: its chart was one box at "0 %" in place of a parameter that varies.
    let varying: Vec<_> = v.effects.iter().filter(|e| e.values.len() > 1).collect();
    let effects = varying.iter().take(PARAM_CHARTS).map(|e| charts::effect(e)).collect::<Result<Vec<_>, _>>()?;
    let interaction = v.interaction.as_ref().map(|i| figure("interaction", charts::interaction(i).map(Some), &interaction_caption(i), NOTHING)).transpose()?;
    let distribution = figure("distribution", charts::distribution(v), "Each bar counts the configs whose time falls in it (log-spaced bins).", NOTHING)?;
    let failed = match charts::failed_evaluations(v) {
        0 => String::new(),
        1 => " The red tick along the top is the evaluation that failed (see Failures).".to_string(),
        n => format!(" Red ticks along the top are the {n} evaluations that failed (see Failures)."),
    };
    let blue = if charts::proposed_by_priors(v) { ", blue where the sources' ranking (other devices' results) proposed it" } else { "" };
    let trace_caption = format!(
        "The line steps down when a run finds a faster config; dots are every successful evaluation{blue}, each where the run met it (the end of its first launch; a config verified and measured in full later stays there).{failed}"
    );
    let trace = figure(
        "trace",
        charts::trace(v),
        &trace_caption,
        if v.points.is_empty() { NOTHING } else { "No measurement records its place in a run (recorded by an older kerntune)." },
    )?;
    let compile = figure(
        "compile",
        charts::compile(v),
        if v.failed_compiles.is_empty() { "Green: the winner." } else { "Green: the winner; red crosses: configs that failed after compiling." },
        if v.points.is_empty() { NOTHING } else { "No compile times recorded (database records, or an older kerntune)." },
    )?;
    let failures = figure("failures", charts::failures(v), "", "No config failed.")?;
    let timed = charts::timed_runs(v);
    let absent = if v.runs.is_empty() {
        NOTHING
    } else if kerntune_core::store::foreign::is_recorded(&v.target) {
        "A recorded space (a Kernel Tuner cache or T4 file) keeps no record of when each compile and measurement ran."
    } else {
        "No run recorded when its compiles and measurements ran (recorded by an older kerntune, or every result came from the database)."
    };
    // The newest run's timeline; the earlier ones drawn below it, folded.
    let mut timelines = timed.iter().map(|&(k, t)| figure("timeline", charts::timeline(v, t), &timeline_caption(k, t, k + 1 < v.runs.len()), absent));
    let timeline = timelines.next().unwrap_or_else(|| figure("timeline", Ok(None), "", absent))?;
    let earlier = timelines.collect::<Result<Vec<_>, _>>()?;
    // What the last tune found out about its failures, then what the records show (each kind's
    // shared value, over every run's records: it replaces the last tune's line on the same kind,
    // which counted that run's configs only).
    let computed: Vec<String> = v.causes.iter().take(CAUSES).flat_map(|c| c.findings()).collect();
    let mut findings: Vec<String> =
        v.findings.iter().filter(|l| shared_kind(l).is_none_or(|kind| !computed.iter().any(|c| shared_kind(c) == Some(kind)))).cloned().collect();
    for line in computed {
        if !findings.contains(&line) {
            findings.push(line);
        }
    }
    let roofline = figure(
        "roofline",
        charts::roofline(v),
        match peaks {
            Some(p) if p.estimated => "Ceilings are estimates: this device reported no peaks, so the published figures of the matching preset are used.",
            Some(_) => "Ceilings: the device's theoretical peaks.",
            None => "This device reports no peak bandwidth or FLOP rate (a wgpu adapter or software device): no ceiling is drawn.",
        },
        if v.points.is_empty() {
            "No roofline: nothing was measured successfully."
        } else {
            "No roofline: the spec gives no `flops` or `bytes` formula ([metrics] in the spec) and the records hold none; add them to see each config against the peaks."
        },
    )?;
    let slowest_compiles: Vec<&Point> = {
        let mut c: Vec<&Point> = v.points.iter().filter(|p| p.compile_s.is_some()).collect();
        c.sort_by(|a, b| b.compile_s.unwrap_or(0.0).total_cmp(&a.compile_s.unwrap_or(0.0)));
        c.truncate(5);
        c
    };
    // Parameters of one value over every measured config (a convolution's fixed filter size,
    // `use_cmem = [1]`): said once above the table instead of in each of its keys.
    let fixed: Vec<(&str, &str)> = if v.points.len() > 1 {
        v.effects.iter().filter(|e| e.values.len() == 1).map(|e| (e.name.as_str(), e.values[0].value.as_str())).collect()
    } else {
        Vec::new()
    };
    // Columns that no listed config has a figure for (no interval from one launch, no `bytes`
    // or `flops`, no peaks) are left out.
    let top: Vec<&Point> = v.points.iter().take(TOP).collect();
    let has_ci = top.iter().any(|p| p.ci_half.is_finite());
    let has_bytes = top.iter().any(|p| p.position.bytes_per_s.is_some());
    let has_flops = top.iter().any(|p| p.position.flops_per_s.is_some());
    let has_fraction = top.iter().any(|p| p.position.fraction.is_some());
    let has_bound = top.iter().any(|p| p.position.bound.is_some());
    let bound = |p: &Point| match p.position.bound {
        Some(Bound::Memory) => "memory",
        Some(Bound::Compute) => "compute",
        None => "-",
    };
    Ok(html! {
        section id=(format!("entry-{}", i + 1)) {
            h2 { "#" (i + 1) " " (v.label()) }
            p.muted { "target " code { (v.target) } }
            @match w {
                Some(w) => p {
                    "Winner " span.winner { code { (w.key) } } ": " (time(w.time))
                    @if w.ci_half.is_finite() { " ± " (time(w.ci_half)) } " over " (w.samples) (if w.samples == 1 { " launch" } else { " launches" })
                    @if let Some(words) = w.position.words() { "; " (words) }
                    "."
                    @if v.tie_band.len() > 1 { " " (v.tie_band.len()) " configs are tied with it within noise." }
                    @match (&v.default, d) {
                        (Some(dk), Some(d)) if dk != &w.key => { " The default " span.default { code { (dk) } } " takes " (time(d.time)) ": " (format!("{:.2}×", d.time / w.time)) " the winner's time." }
                        (Some(_), Some(_)) => { " The winner is the default config." }
                        (Some(dk), None) => @match v.failed.get(dk) {
                            Some(kind) => { " The default " code { (dk) } " failed here (" (kind) "; see Failures)." }
                            None => { " The default " code { (dk) } " was not measured here." }
                        },
                        (None, _) => { " The default config is not known for this entry (pass the spec to mark it)." }
                    }
                },
                // Why there is none is among the notes below.
                None => {},
            }
            @if let Some(p) = peaks { p.muted { "Peaks: " (rate(p.bandwidth, 1e9)) " GB/s, FP32 " (rate(p.flops_f32, 1e12)) " TFLOP/s" @if p.flops_f16.is_some() { ", FP16 " (rate(p.flops_f16, 1e12)) " TFLOP/s" } " — " (p.source) @if p.estimated { " (an estimate for this device)" } "." } }
            @for n in &v.notes { div.note { (n) } }
            h3 { "Times" }
            (distribution)
            h3 { "Fastest configs" }
            @if !fixed.is_empty() {
                p.muted {
                    "Every measured config has " code { (fixed.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(",")) }
                    (if fixed.len() == 1 { ", left out of the keys below." } else { "; they are left out of the keys below." })
                }
            }
            @if top.is_empty() { p.muted { (NOTHING) } } @else { table {
                tr {
                    th { "#" } th { "config" } th { "time" } @if has_ci { th { "±95 %" } } th { "launches" }
                    @if has_bytes { th { "GB/s" } } @if has_flops { th { "GFLOP/s" } } @if has_fraction { th { "roofline" } } @if has_bound { th { "bound" } } th { "" }
                }
                @for (k, p) in top.iter().enumerate() {
                    tr {
                        td.num { (k + 1) } td { (config_key(&key_without(&p.key, &fixed))) } td.num { (time(p.time)) }
                        @if has_ci { td.num { @if p.ci_half.is_finite() { (time(p.ci_half)) } @else { "-" } } } td.num { (p.samples) }
                        @if has_bytes { td.num { (rate(p.position.bytes_per_s, 1e9)) } } @if has_flops { td.num { (rate(p.position.flops_per_s, 1e9)) } }
                        @if has_fraction { td.num { (p.position.fraction.map(|f| format!("{:.0} %", f * 100.0)).unwrap_or_else(|| "-".into())) } } @if has_bound { td { (bound(p)) } }
                        td {
                            @if Some(&p.key) == v.winner.as_ref() { span.winner { "winner " } } @else if v.tie_band.contains(&p.key) { "tied " }
                            @if Some(&p.key) == v.default.as_ref() { span.default { "default " } }
                            @if p.raced { "raced" }
                        }
                    }
                }
            } }
            @if v.points.len() > TOP {
                p.muted {
                    (v.points.len() - TOP)
                    (if v.file.is_some() { " more measured configs are not listed; the file they were read from has them all." } else { " more measured configs are not listed; `kerntune db export` has them all." })
                }
            }
            h3 { "Parameters" }
            @if v.effects.is_empty() { p.muted { "Nothing measured." } } @else {
                table {
                    tr { th { "parameter" } th { "share of log-time variance" } th { "fastest value (median)" } th { "values measured" } }
                    @for e in &v.effects {
                        @let fastest = e.values.iter().min_by(|a, b| a.quartiles[2].total_cmp(&b.quartiles[2]));
                        tr {
                            td { code { (e.name) } } td.num { (format!("{:.1} %", e.explained * 100.0)) }
                            td { @if let Some(f) = fastest { code { (f.value) } " (" (time(f.quartiles[2])) ")" } }
                            td.num { (e.values.len()) }
                        }
                    }
                }
                div.grid { @for s in effects { figure data-chart="parameter" { (PreEscaped(s)) } } }
                @if varying.len() > PARAM_CHARTS {
                    p.muted { "Charts for the " (PARAM_CHARTS) " parameters that explain most; the table lists all " (v.effects.len()) "." }
                } @else if varying.len() < v.effects.len() {
                    p.muted { "No chart for a parameter with one value measured (" (v.effects.len() - varying.len()) ")." }
                }
                p.muted { "Boxes: the middle half of the times of the configs with that value; whiskers: fastest to slowest; dot: median." }
                @if let Some(f) = interaction { (f) }
            }
            h3 { "Search" }
            (trace)
            @if !v.runs.is_empty() {
                ul { @for (k, r) in v.runs.iter().enumerate() {
                    li {
                        // A Kernel Tuner cache without timestamps has no start (its seconds are
                        // the recorded compile and benchmark times summed): not 1970.
                        "run " (k + 1)
                        @if let Some(shard) = r.note.as_ref().and_then(|n| n.shard) { " (shard " (shard) ")" }
                        @if r.note.as_ref().is_some_and(kerntune_core::store::db::RunNote::listed) { " (the listed configs measured again: " code { "kerntune confirm" } ")" }
                        @if r.started > 0 { ", started " (utc(r.started)) } @else { " (its start not recorded)" } ": " (r.evals.len()) @if r.evals.len() == 1 { " evaluation" } @else { " evaluations" } " over " (format!("{:.1}", r.evals.iter().map(|e| e.1).fold(0.0, f64::max))) " s"
                        @if let Some(ms) = r.note.as_ref().and_then(|n| n.time_limit_ms) { ", stopped at its time limit of " (ms as f64 / 1000.0) " s" }
                        @if r.devices.len() > 1 {
                            ", on " (r.devices.len()) " devices ("
                            (r.devices.iter().map(|(d, n)| format!("device {d}: {n}")).collect::<Vec<_>>().join(", "))
                            ")"
                        }
                        @if let Some(n) = &r.note { ", strategy " code { (n.strategy) } }
                        @if let Some(line) = r.note.as_ref().and_then(|n| n.prior.as_ref()) { br; "learned from " (line.trim_start_matches("prior: ")) }
                        @if let Some((n, line)) = r.note.as_ref().and_then(|n| Some((n, n.verification.as_ref()?))) { br; (verification(n, line)) }
                        @if let Some(m) = r.note.as_ref().and_then(|n| n.memcheck.as_ref()) { br; (memcheck(m)) }
                        @if let Some(line) = r.note.as_ref().and_then(|n| n.search.as_ref()) { br; span.muted { (line) } }
                    }
                } }
                @if v.runs.len() > 8 { p.muted { "The chart draws the first 8 runs." } }
                @let tagged: Vec<(usize, &Run)> = v.runs.iter().enumerate().filter(|(_, r)| !r.proposed.is_empty()).collect();
                @for (k, r) in &tagged[tagged.len().saturating_sub(PROPOSAL_TABLES)..] {
                    (proposals(v, *k, r))
                }
                @if tagged.len() > PROPOSAL_TABLES { p.muted { "Who proposed what is shown for the newest " (PROPOSAL_TABLES) " of the " (tagged.len()) " runs that learned from priors." } }
            }
            @if v.untraced > 0 { p.muted { (v.untraced) " measurement(s) carry no trace (recorded by an older kerntune) and are not in the search chart." } }
            h3 { "Where the time went" }
            (timeline)
            @if !earlier.is_empty() {
                details {
                    summary { "Earlier runs (" (earlier.len()) ")" }
                    @for f in &earlier { (f) }
                }
            }
            @if v.timed_runs > timed.len() {
                p.muted { "The timelines of the newest " (timed.len()) " of the " (v.timed_runs) " runs that recorded them are drawn." }
            }
            h3 { "Compile times" }
            (compile)
            @if !slowest_compiles.is_empty() {
                table { tr { th { "slowest compiles" } th { "seconds" } }
                    @for p in slowest_compiles { tr { td { (config_key(&p.key)) } td.num { (format!("{:.2}", p.compile_s.unwrap_or(0.0))) } } } }
            }
            h3 { "Failures" }
            (failures)
            @if !v.causes.is_empty() {
                table {
                    tr { th { "configs" } th { "kind" } th { "message" } th { "example" } }
                    @for c in v.causes.iter().take(CAUSES) {
                        tr { td.num { (c.count) } td { (c.kind.to_string()) } td { (c.message) } td { (config_key(&c.example.key())) } }
                    }
                }
                @if !findings.is_empty() {
                    ul.findings { @for f in &findings { li { (f) } } }
                }
                @if v.causes.len() > CAUSES { p.muted { (v.causes.len() - CAUSES) " more causes; `kerntune db export` lists every failure." } }
            }
            h3 { "Roofline" }
            (roofline)
        }
    })
}
