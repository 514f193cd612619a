//! The result table printed after a tune.

use crate::cli::out::outln;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Table};
use kerntune::search::proposer;
use kerntune::TuneReport;
use std::path::Path;

fn rate(bytes_or_flops: Option<f64>, seconds: f64, scale: f64) -> String {
    match bytes_or_flops {
        Some(x) if seconds > 0.0 => format!("{:.1}", x / seconds / scale),
        _ => "-".into(),
    }
}

/// The 95 % half-interval, or why there is none: a raced config stopped after one launch has
/// no spread to show.
fn interval(s: &kerntune::Stats) -> String {
    if s.ci_half.is_finite() {
        format!("{:.4}", s.ci_half * 1e3)
    } else if s.samples <= 1 {
        "1 sample".into()
    } else {
        "-".into()
    }
}

/// How the compiles went: seconds summed over threads, threads, efficiency, slowest config.
fn compile_line(r: &TuneReport) -> String {
    let mut line = format!("compiled {} in {:.2} s summed over {} thread(s)", r.compiled, r.compile_seconds, r.compile_threads.max(1));
    // Only where compiling could have held the tune: with every config from the compile cache,
    // or compiles that filled under a tenth of the threads' time (a tune bound by measuring, as
    // on a CPU adapter), a percentage would read as a fault that is not there (`--json` keeps
    // it).
    if let Some(e) = r.compile_efficiency.filter(|&e| e >= 0.1 && r.compile_cache_hits < r.compiled) {
        line.push_str(&format!(", compile-parallel efficiency {:.0} % (÷ wall × threads)", e * 100.0));
    }
    let slowest = r.results.iter().filter_map(|x| x.compile_seconds.map(|s| (s, &x.config))).max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((secs, cfg)) = slowest {
        line.push_str(&format!("; slowest {secs:.2} s ({cfg})"));
    }
    if r.compile_cache_hits > 0 {
        line.push_str(&format!("; {} from the compile cache", r.compile_cache_hits));
    }
    if r.compile_cache_refusals > 0 {
        line.push_str(&format!(
            "; {} config(s) failed to compile before and were not compiled again (the compile cache keeps the compiler's errors; KERNTUNE_NO_COMPILE_CACHE=1 compiles them)",
            r.compile_cache_refusals
        ));
    }
    line
}

/// What the winner gained over the spec's default config: its time and the speed-up, or why
/// there is none (a published kernel's default that fails is worth a line of its own; a search
/// that never measured it, or a default outside the candidates, is said as such).
fn default_line(r: &TuneReport) -> String {
    let Some(d) = r.default_result() else {
        // Said too: silence read as "no default", and what tuning gained is then unknown.
        let key = r.default.key();
        return if !r.default_included {
            match (r.shard, r.default_in_shard) {
                (Some(s), Some(k)) => format!("default: {key} is in shard {k}/{}'s part of the space, not shard {s}'s", s.count),
                _ => format!("default: {key} was not a candidate (the restrictions or the pruning left it out)"),
            }
        } else if r.db_hit {
            format!("default: {key} was not measured by the tune that stored this winner")
        } else {
            format!("default: {key} was not measured by this search ({}, {} of {} candidates)", r.strategy, r.evaluated, r.candidates)
        };
    };
    let key = d.config.key();
    match d.stats() {
        _ if d.config == r.winner => format!("default: {key} is the winner"),
        Some(s) if r.tie_band.contains(&d.config) => format!("default: {key}  {:.4} ms, tied with the winner within noise", s.mean * 1e3),
        // A raced default stopped once clearly slower: its few launches are said, so the speed-up
        // reads as the estimate it is.
        Some(s) if s.raced => format!(
            "default: {key}  {:.4} ms (raced: {} launch{}{}); the winner is about {:.2}× as fast",
            s.mean * 1e3,
            s.samples,
            if s.samples == 1 { "" } else { "es" },
            if s.ci_half.is_finite() { format!(", ± {:.4} ms", s.ci_half * 1e3) } else { String::new() },
            s.mean / r.winner_stats.mean
        ),
        Some(s) => format!("default: {key}  {:.4} ms; the winner is {:.2}× as fast", s.mean * 1e3, s.mean / r.winner_stats.mean),
        None if matches!(d.outcome, kerntune::ResultOutcome::Failed { .. }) => format!("default: {key} failed ({})", d.summary_line()),
        None => format!("default: {key} was {}", d.summary_line()),
    }
}

pub fn print(r: &TuneReport, top: usize, db: Option<&Path>) -> Result<(), crate::cli::out::OutputError> {
    // What most needs reading comes first.
    if let Some(d) = &r.disagreement {
        outln!("warning: {d}");
    }
    if let Some(p) = &r.prior {
        outln!("{}", p.line);
        for x in p.refused.iter().chain(&p.notes) {
            outln!("    {x}");
        }
    }
    if let Some(m) = r.memcheck.as_ref().filter(|m| m.out_of_bounds()) {
        outln!("warning: memcheck: {}", m.line);
    }
    if r.db_hit {
        // A second tune with another strategy, or a budget no larger, is a hit too: say how to
        // search again.
        outln!(
            "database hit for {} on {}: the stored winner is reused, nothing was benchmarked (`--force` searches again, reusing the stored measurements)",
            r.entry.label(),
            r.target.name
        );
    }
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(["#", "config", "time (ms)", "±95% (ms)", "runs", "GB/s", "GFLOP/s", ""]);
    let mut shown = 0;
    for res in &r.results {
        let Some(s) = res.stats() else { continue };
        if shown >= top {
            break;
        }
        shown += 1;
        let mut note = Vec::new();
        if res.config == r.winner {
            note.push("winner");
        } else if r.tie_band.contains(&res.config) {
            note.push("tied");
        }
        if s.raced {
            note.push("raced");
        }
        if res.from_db {
            note.push("db");
        }
        // In a search that learned from priors: what the other devices' results proposed.
        match res.proposed_by.as_deref() {
            Some(tag) if proposer::from_priors(tag) => note.push("sources"),
            Some(proposer::CONTRAST) => note.push("contrast"),
            _ => {}
        }
        let device = res.device.filter(|_| r.devices.len() > 1).map(|d| format!("device {d}"));
        if let Some(d) = &device {
            note.push(d);
        }
        t.add_row(vec![
            Cell::new(shown),
            Cell::new(res.config.key()),
            Cell::new(format!("{:.4}", s.mean * 1e3)).set_alignment(CellAlignment::Right),
            Cell::new(interval(s)).set_alignment(CellAlignment::Right),
            Cell::new(s.samples),
            Cell::new(rate(res.bytes, s.mean, 1e9)).set_alignment(CellAlignment::Right),
            Cell::new(rate(res.flops, s.mean, 1e9)).set_alignment(CellAlignment::Right),
            Cell::new(note.join(", ")),
        ]);
    }
    outln!("{t}");
    let hidden = r.results.iter().filter(|x| x.stats().is_some()).count() - shown;
    if hidden > 0 {
        outln!("… and {hidden} more measured, not shown (`--top` sets the rows; `--json` lists every result)");
    }
    let w = &r.winner_stats;
    let (flops, bytes) = r.winner_metrics;
    let mut line = format!("winner: {}  {:.4} ms ± {:.4} ms", r.winner, w.mean * 1e3, if w.ci_half.is_finite() { w.ci_half * 1e3 } else { 0.0 });
    if bytes.is_some() {
        line.push_str(&format!(", {} GB/s", rate(bytes, w.mean, 1e9)));
    }
    if flops.is_some() {
        line.push_str(&format!(", {} GFLOP/s", rate(flops, w.mean, 1e9)));
    }
    if let Some(words) = r.roofline.as_ref().and_then(|p| p.words()) {
        let estimate = if r.peaks.as_ref().is_some_and(|p| p.estimated) { ", peak estimated from the preset this device's name matches" } else { "" };
        line.push_str(&format!(" — {words}{estimate}"));
    }
    if r.tie_band.len() > 1 {
        let rule = r.tie_break.map_or("this one".to_string(), |t| t.words().to_string());
        line.push_str(&format!(" ({} configs tied within noise; the stable tie-break took {rule})", r.tie_band.len()));
    }
    if let Some(tag) = r.results.iter().find(|x| x.config == r.winner).and_then(|x| x.proposed_by.as_deref()) {
        line.push_str(&format!("; proposed by {}", proposer::words(tag)));
    }
    outln!("{line}");
    outln!("{}", default_line(r));
    if !r.db_hit {
        if r.sampled {
            outln!(
                "space: {} combinations, about {} valid (estimated); too large to enumerate, so a random sample of {} candidates was searched; evaluated {} ({} from the database)",
                r.cartesian,
                r.valid,
                r.candidates,
                r.evaluated,
                r.from_db
            );
        } else {
            outln!(
                "space: {} combinations, {} valid, {} candidates after pruning; evaluated {} ({} from the database)",
                r.cartesian,
                r.valid,
                r.candidates,
                r.evaluated,
                r.from_db
            );
        }
        outln!("{}", compile_line(r));
        if let Some(t) = &r.time {
            outln!("{}", t.line());
        }
        let join = |m: &std::collections::BTreeMap<String, usize>| m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
        if !r.pruned_before.is_empty() {
            outln!("pruned before compiling: {}", join(&r.pruned_before));
            // Each example names its reason (a resource in words, or `occupancy:`, `shape:` …).
            for ex in r.prune_examples.values() {
                outln!("    e.g. {ex}");
            }
        }
        if !r.pruned_after.is_empty() {
            outln!("pruned after compiling: {}", join(&r.pruned_after));
            // One example of each category, as for those pruned before compiling.
            for k in r.pruned_after.keys() {
                let example = r.results.iter().find_map(|x| match &x.outcome {
                    kerntune::ResultOutcome::Pruned { reason } if reason.category() == k => Some(format!("{}: {reason}", x.config)),
                    _ => None,
                });
                if let Some(ex) = example {
                    outln!("    e.g. {ex}");
                }
            }
        }
        if !r.causes.is_empty() {
            outln!("failures: {} ({} cause{})", join(&r.failures), r.causes.len(), if r.causes.len() == 1 { "" } else { "s" });
            for c in r.causes.iter().take(8) {
                outln!("    {} × {}: {} (e.g. {})", c.count, c.kind, c.message, c.example);
                for d in &c.diagnosis {
                    outln!("        {d}");
                }
            }
            if r.causes.len() > 8 {
                outln!("    and {} more cause(s); --json lists them all", r.causes.len() - 8);
            }
        } else if !r.failures.is_empty() {
            outln!("failures: {}", join(&r.failures));
        }
        if r.devices.len() > 1 {
            for d in &r.devices {
                let ratio =
                    d.ratio.map(|(x, n)| format!(", times {x:.3}× the first device's (on {n} config{})", if n == 1 { "" } else { "s" })).unwrap_or_default();
                let lost = d.lost.as_ref().map(|l| format!("; LOST: {l}")).unwrap_or_default();
                outln!("device {} ({}): {} measured{ratio}{lost}", d.index, d.name, d.measured);
            }
        }
        if let Some(c) = &r.recheck {
            outln!("{}", c.line());
        }
        for n in &r.notes {
            outln!("note: {n}");
        }
        outln!("timing: {}; verification: {}; strategy: {}; wall time {:.2} s", r.timing, r.reference, r.strategy, r.wall_seconds);
    }
    if let Some(m) = r.memcheck.as_ref().filter(|m| !m.out_of_bounds()) {
        outln!("memcheck: {}", m.line);
    }
    if let Some(p) = db {
        match (&r.unsaved, &r.winner_withheld) {
            (Some(u), _) => outln!(
                "database: {} NOT written: {}",
                p.display(),
                u.kept_in.as_ref().map_or("nothing kept (see below)".to_string(), |f| format!("kept in {}", f.display()))
            ),
            (None, Some(why)) => outln!("database: {} (measurements written, no winner: {why})", p.display()),
            (None, None) => outln!("database: {} ({})", p.display(), if r.db_hit { "read" } else { "winner written" }),
        }
    }
    Ok(())
}

/// After a run of several problems: one line per problem with its winner, so that a library's
/// shapes can be read together (each problem's own summary is above, under `== problem …`).
pub fn print_problems(reports: &[TuneReport]) -> Result<(), crate::cli::out::OutputError> {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(["problem", "winner", "time (ms)", "GB/s", "GFLOP/s", "evaluated", "search"]);
    for r in reports {
        let mean = r.winner_stats.mean;
        let search = match &r.prior {
            Some(p) if !r.db_hit => format!("{}, {}", r.strategy, kerntune::search::prior::learned_from(p.targets, p.problems_here)),
            _ if r.db_hit => "database hit".to_string(),
            _ => r.strategy.clone(),
        };
        t.add_row(vec![
            Cell::new(&r.entry.problem),
            Cell::new(r.winner.to_string()),
            Cell::new(format!("{:.4}", mean * 1e3)).set_alignment(CellAlignment::Right),
            Cell::new(rate(r.winner_metrics.1, mean, 1e9)).set_alignment(CellAlignment::Right),
            Cell::new(rate(r.winner_metrics.0, mean, 1e9)).set_alignment(CellAlignment::Right),
            Cell::new(r.evaluated).set_alignment(CellAlignment::Right),
            Cell::new(search),
        ]);
    }
    outln!("== {} problems", reports.len());
    outln!("{t}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use kerntune::ResultOutcome;

    /// The default config's line: its time and the speed-up, said as an estimate (with its
    /// launches and interval) where racing stopped measuring it early.
    #[test]
    fn a_raced_default_says_how_few_launches_its_time_rests_on() {
        let (tuner, job) = kerntune::fake::example();
        let mut r = tuner.tune(&job, &kerntune::TuneOptions::default()).unwrap();
        let default = r.default.clone();
        let winner = r.winner_stats.mean;
        let slower = kerntune::Stats { samples: 3, mean: 4.0 * winner, ci_half: 0.5 * winner, raced: false, ..r.winner_stats.clone() };
        assert_ne!(default, r.winner, "the fake's default is not its winner");
        set_default_stats(&mut r, &default, slower.clone());
        r.tie_band.retain(|c| *c != default);
        let line = super::default_line(&r);
        assert!(line.ends_with("; the winner is 4.00× as fast") && !line.contains("raced"), "{line}");
        let ci = slower.ci_half * 1e3;
        set_default_stats(&mut r, &default, kerntune::Stats { raced: true, ..slower.clone() });
        let line = super::default_line(&r);
        assert!(line.contains(&format!("(raced: 3 launches, ± {ci:.4} ms); the winner is about 4.00× as fast")), "{line}");
        set_default_stats(&mut r, &default, kerntune::Stats { raced: true, samples: 1, ci_half: f64::INFINITY, ..slower });
        let line = super::default_line(&r);
        assert!(line.contains("(raced: 1 launch); the winner is about 4.00× as fast"), "{line}");
    }

    fn set_default_stats(r: &mut kerntune::TuneReport, default: &kerntune::Config, stats: kerntune::Stats) {
        r.results.iter_mut().find(|x| x.config == *default).expect("an exhaustive tune measures the default").outcome = ResultOutcome::Measured { stats };
    }
}
