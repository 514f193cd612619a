//! Where a tune's time went: every config's compile (on a compile thread) and every job a
//! device ran for it, as spans from the tune's start ([`Span`], kept with each record), put
//! on lanes and accounted for. The account says how busy each device was and why it waited —
//! before its first job, while compiles ran, while the CPU computed the expected outputs, or
//! otherwise (the tuner's own work: the final round's choice, diagnosis, the database) — how
//! full the compile threads were, and so what bound the tune: compiling or measuring. The
//! summary prints its line, `--json` carries it, and `kerntune report` draws the lanes.
//!
//! The spans are those of configs a record keeps: compiles of configs pruned after compiling,
//! or given up on, are counted in the run's [`RunTime`] (their number and seconds), not drawn.

use crate::store::db::{RunTime, Span, SpanKind};
use serde::Serialize;

/// Spans closer than this (seconds; they are kept to the millisecond) still fit one lane.
const SLACK: f64 = 0.0015;

/// One config's spans as a timeline takes them: its key, its spans and whether it failed.
pub type Spanned<'a> = (&'a str, &'a [Span], bool);

/// The longest a run's recorded times may be, in seconds (about 116 days): beyond it a span is
/// a damaged record, not a tune.
pub const HORIZON_S: f64 = 1e7;

/// The most device or compile lanes a run's records may name: beyond it, a damaged record.
pub const MAX_LANES: usize = 4096;

/// Whether `from..to` (seconds into a run) is a span a tune could have recorded.
pub fn plausible(from: f64, to: f64) -> bool {
    from.is_finite() && to.is_finite() && 0.0 <= from && from <= to && to <= HORIZON_S
}

/// One span of one config, on its lane.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bar {
    /// The config's key.
    pub key: String,
    /// The span.
    pub span: Span,
    /// A device's job: the device. A compile: its lane among the compile threads (compiles
    /// packed onto as few lanes as hold them; a lane is a thread's time, not one thread).
    pub lane: usize,
    /// Whether the config failed (its compile, or on a device).
    pub failed: bool,
}

/// One run's spans, on lanes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Timeline {
    /// Seconds from the run's start to its end.
    pub wall_s: f64,
    /// Compile threads it ran (at least the lanes its compiles fill).
    pub compile_threads: usize,
    /// Devices it measured on.
    pub devices: usize,
    /// Compile lanes the compiles fill.
    pub compile_lanes: usize,
    /// Every span: compiles first, each kind by start.
    pub bars: Vec<Bar>,
    /// When the CPU computed the expected outputs, where it did.
    pub reference: Option<(f64, f64)>,
    /// Seconds compile starts were held for memory.
    pub memory_held_s: f64,
    /// Compiles of configs no record keeps (pruned after compiling, given up on) and their
    /// seconds summed.
    pub unrecorded: (usize, f64),
    /// When those compiles ran (from, to), merged: not drawn, but a device idle then waited for
    /// them.
    pub unrecorded_spans: Vec<(f64, f64)>,
    /// Compiler processes the out-of-memory killer ended while compiling.
    pub killed_for_memory: u32,
    /// Spans and run times left out as no tune could have recorded them (see [`Timeline::new`]).
    pub implausible: usize,
}

/// What one device did with the run's time, in seconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DeviceTime {
    /// Running jobs.
    pub busy_s: f64,
    /// Idle before its first job (planning, the first compiles, its worker starting).
    pub before_first_s: f64,
    /// Idle after its first job while compiles ran: waiting for them.
    pub compiles_s: f64,
    /// Idle otherwise while the CPU computed the expected outputs.
    pub reference_s: f64,
    /// Idle otherwise: the tuner's own work between jobs and after the last.
    pub other_s: f64,
}

/// What held a tune: where most of its time went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// The devices were busy most of the time.
    Measuring,
    /// The devices waited most for compiles.
    Compiling,
    /// The devices waited most before their first job.
    Starting,
    /// The devices waited most for the CPU reference.
    Reference,
    /// The devices waited most for the tuner's own work.
    Tuner,
}

/// Where a run's time went (see the module docs).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Account {
    /// The run's seconds.
    pub wall_s: f64,
    /// Each device's.
    pub devices: Vec<DeviceTime>,
    /// Compile threads.
    pub compile_threads: usize,
    /// Compile seconds summed over threads (those no record keeps included).
    pub compile_s: f64,
    /// `compile_s` over threads × wall.
    pub compile_busy: f64,
    /// When the last compile ended.
    pub compiles_end_s: Option<f64>,
    /// The slowest compile: its config and seconds.
    pub slowest_compile: Option<(String, f64)>,
    /// Seconds from the last moment half the compile threads or more were compiling to the
    /// end of the last compile: the compile tail, which a few slow compiles hold.
    pub compile_tail_s: f64,
    /// What held the tune.
    pub bound: Bound,
    /// Seconds compile starts were held for memory.
    pub memory_held_s: f64,
    /// Compiler processes the out-of-memory killer ended while compiling.
    pub killed_for_memory: u32,
}

/// `spans` merged into disjoint intervals, in order.
pub(crate) fn merged(mut spans: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(spans.len());
    for (a, b) in spans {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Seconds of `(a, b)` that the disjoint, ordered `set` covers.
fn covered(a: f64, b: f64, set: &[(f64, f64)]) -> f64 {
    set.iter().map(|&(x, y)| (b.min(y) - a.max(x)).max(0.0)).sum()
}

impl Timeline {
    /// The timeline of one run: each config's key, spans and whether it failed, with the
    /// run's [`RunTime`] where its note has one. `None` when no span was recorded (an older
    /// kerntune's records, or a tune that read every result from the database).
    ///
    /// Spans no tune could have recorded (reversed, negative, past [`HORIZON_S`], or on a device
    /// past [`MAX_LANES`]: a database damaged or edited by hand) are left out and counted in
    /// `implausible`, and so are such numbers in `time`: one damaged record must not stretch a
    /// chart over 10^300 seconds, or make a lane for each of 2^53 devices.
    pub fn new<'a>(configs: impl IntoIterator<Item = Spanned<'a>>, time: Option<&RunTime>) -> Option<Timeline> {
        let mut compiles: Vec<Bar> = Vec::new();
        let mut jobs: Vec<Bar> = Vec::new();
        let mut implausible = 0;
        for (key, spans, failed) in configs {
            for s in spans {
                if !plausible(s.from_s, s.to_s) || s.device.is_some_and(|d| d >= MAX_LANES) {
                    implausible += 1;
                    continue;
                }
                let bar = Bar { key: key.to_string(), span: s.clone(), lane: s.device.unwrap_or(0), failed };
                if s.what.on_device() {
                    jobs.push(bar);
                } else {
                    compiles.push(bar);
                }
            }
        }
        if compiles.is_empty() && jobs.is_empty() {
            return None;
        }
        let ms = |x: u64| x as f64 / 1e3;
        let span_ms = |(a, b): (u64, u64)| -> Option<(f64, f64)> { plausible(ms(a), ms(b)).then_some((ms(a), ms(b))) };
        let lanes = |n: u32| (n as usize <= MAX_LANES).then_some(n as usize);
        let wall_ms = time.map(|t| t.wall_ms).filter(|&w| ms(w) <= HORIZON_S);
        let devices_recorded = time.map_or(Some(1), |t| lanes(t.devices));
        let threads_recorded = time.map_or(Some(0), |t| lanes(t.compile_threads));
        let reference = time.and_then(|t| t.reference_ms).and_then(span_ms);
        let unrecorded_spans: Vec<(f64, f64)> = time.map_or(Vec::new(), |t| t.unrecorded_spans_ms.iter().filter_map(|&r| span_ms(r)).collect());
        if let Some(t) = time {
            let dropped = [wall_ms.is_none(), devices_recorded.is_none(), threads_recorded.is_none(), t.reference_ms.is_some() && reference.is_none()];
            implausible += dropped.iter().filter(|&&d| d).count() + t.unrecorded_spans_ms.len() - unrecorded_spans.len();
        }
        let (devices_recorded, threads_recorded) = (devices_recorded.unwrap_or(1), threads_recorded.unwrap_or(0));
        let by_start = |a: &Bar, b: &Bar| a.span.from_s.total_cmp(&b.span.from_s).then_with(|| a.key.cmp(&b.key));
        compiles.sort_by(by_start);
        jobs.sort_by(by_start);
        // Interval partitioning: each compile onto the first lane free when it starts.
        let mut ends: Vec<f64> = Vec::new();
        for c in &mut compiles {
            match ends.iter().position(|&e| e <= c.span.from_s + SLACK) {
                Some(l) => {
                    ends[l] = c.span.to_s;
                    c.lane = l;
                }
                None => {
                    c.lane = ends.len();
                    ends.push(c.span.to_s);
                }
            }
        }
        let last = compiles.iter().chain(&jobs).map(|b| b.span.to_s).fold(0.0, f64::max);
        let wall_s = wall_ms.map_or(last, |w| ms(w).max(last));
        let devices = jobs.iter().map(|b| b.lane + 1).max().unwrap_or(0).max(devices_recorded).max(1);
        Some(Timeline {
            wall_s,
            compile_threads: threads_recorded.max(ends.len()).max(1),
            devices,
            compile_lanes: ends.len(),
            bars: compiles.into_iter().chain(jobs).collect(),
            reference,
            unrecorded: time.map_or((0, 0.0), |t| (t.unrecorded_compiles as usize, ms(t.unrecorded_compile_ms).min(HORIZON_S))),
            unrecorded_spans,
            killed_for_memory: time.map_or(0, |t| t.compiles_killed_for_memory),
            memory_held_s: time.map_or(0.0, |t| ms(t.memory_held_ms).min(HORIZON_S)),
            implausible,
        })
    }

    /// Where the time went.
    pub fn account(&self) -> Account {
        let wall = self.wall_s;
        let compile_spans: Vec<(f64, f64)> = self.bars.iter().filter(|b| !b.span.what.on_device()).map(|b| (b.span.from_s, b.span.to_s)).collect();
        // A device idle while a compile no record keeps ran (one given up on at the time limit,
        // say) waited for it too.
        let compiling = merged(compile_spans.iter().chain(&self.unrecorded_spans).copied().collect());
        let reference: Vec<(f64, f64)> = self.reference.into_iter().collect();
        let devices = (0..self.devices)
            .map(|d| {
                let busy = merged(self.bars.iter().filter(|b| b.span.what.on_device() && b.lane == d).map(|b| (b.span.from_s, b.span.to_s)).collect());
                let mut t = DeviceTime { busy_s: busy.iter().map(|(a, b)| b - a).sum(), ..Default::default() };
                let Some(&(first, _)) = busy.first() else {
                    t.before_first_s = wall;
                    return t;
                };
                t.before_first_s = first;
                // The gaps between its jobs, and after the last.
                let mut gaps: Vec<(f64, f64)> = busy.windows(2).map(|w| (w[0].1, w[1].0)).collect();
                gaps.push((busy.last().map_or(first, |l| l.1), wall.max(first)));
                for (a, b) in gaps.into_iter().filter(|(a, b)| b > a) {
                    let by_compiles = covered(a, b, &compiling);
                    // The reference's part of the gap that no compile covers.
                    let by_reference = reference
                        .iter()
                        .map(|&(x, y)| {
                            let (x, y) = (a.max(x), b.min(y));
                            if y > x {
                                (y - x) - covered(x, y, &compiling)
                            } else {
                                0.0
                            }
                        })
                        .sum::<f64>();
                    t.compiles_s += by_compiles;
                    t.reference_s += by_reference;
                    t.other_s += ((b - a) - by_compiles - by_reference).max(0.0);
                }
                t
            })
            .collect::<Vec<DeviceTime>>();
        let compile_s = compile_spans.iter().map(|(a, b)| b - a).sum::<f64>() + self.unrecorded.1;
        let compile_busy = if wall > 0.0 { compile_s / (wall * self.compile_threads as f64) } else { 0.0 };
        let slowest_compile = self
            .bars
            .iter()
            .filter(|b| b.span.what == SpanKind::Compile)
            .max_by(|a, b| a.span.seconds().total_cmp(&b.span.seconds()))
            .map(|b| (b.key.clone(), b.span.seconds()));
        // The occupancy of the compile threads over time: when it last fell below half.
        let mut edges: Vec<(f64, i32)> = compile_spans.iter().flat_map(|&(a, b)| [(a, 1), (b, -1)]).collect();
        edges.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        let half = self.compile_threads.div_ceil(2).max(1) as i32;
        let (mut running, mut fell) = (0i32, None);
        for (at, d) in edges {
            if running >= half && running + d < half {
                fell = Some(at);
            }
            running += d;
        }
        let compiles_end_s = compiling.last().map(|c| c.1);
        let compile_tail_s = match (fell, compiles_end_s) {
            (Some(f), Some(e)) => (e - f).max(0.0),
            _ => 0.0,
        };
        let n = devices.len().max(1) as f64;
        let mean = |f: fn(&DeviceTime) -> f64| devices.iter().map(f).sum::<f64>() / n;
        let bound = if mean(|d| d.busy_s) >= 0.6 * wall {
            Bound::Measuring
        } else {
            [
                (Bound::Compiling, mean(|d| d.compiles_s)),
                (Bound::Starting, mean(|d| d.before_first_s)),
                (Bound::Reference, mean(|d| d.reference_s)),
                (Bound::Tuner, mean(|d| d.other_s)),
                (Bound::Measuring, mean(|d| d.busy_s)),
            ]
            .into_iter()
            .fold((Bound::Measuring, f64::NEG_INFINITY), |best, x| if x.1 > best.1 { x } else { best })
            .0
        };
        Account {
            wall_s: wall,
            devices,
            compile_threads: self.compile_threads,
            compile_s,
            compile_busy,
            compiles_end_s,
            slowest_compile,
            compile_tail_s,
            bound,
            memory_held_s: self.memory_held_s,
            killed_for_memory: self.killed_for_memory,
        }
    }
}

/// Seconds as the account's line writes them: `0.42 s`, `3.1 s`, `127 s`.
fn secs(s: f64) -> String {
    if s >= 100.0 {
        format!("{s:.0} s")
    } else if s >= 10.0 {
        format!("{s:.1} s")
    } else {
        format!("{s:.2} s")
    }
}

fn pct(x: f64) -> String {
    format!("{:.0} %", (100.0 * x).clamp(0.0, 100.0))
}

impl Account {
    /// Each device's busy share of the run, mean over devices.
    pub fn device_busy(&self) -> f64 {
        if self.wall_s <= 0.0 {
            return 0.0;
        }
        self.devices.iter().map(|d| d.busy_s).sum::<f64>() / (self.devices.len().max(1) as f64 * self.wall_s)
    }

    /// One line: how busy the devices were, why they waited, how full the compile threads
    /// were, and what bound the tune — `time: the device was busy 62 % of 15.7 s (idle 1.90 s
    /// before its first job, 3.60 s while compiles ran, 0.42 s otherwise); compiles filled
    /// 51 % of 16 threads × 15.7 s; compiling bound this tune: …`.
    pub fn line(&self) -> String {
        let n = self.devices.len().max(1);
        let mean = |f: fn(&DeviceTime) -> f64| self.devices.iter().map(f).sum::<f64>() / n as f64;
        let who = if n == 1 {
            format!("the device was busy {}", pct(self.device_busy()))
        } else {
            let each: Vec<String> = self.devices.iter().map(|d| pct(d.busy_s / self.wall_s.max(1e-9))).collect();
            format!("the {n} devices were busy {} on average ({})", pct(self.device_busy()), each.join(", "))
        };
        let mut idle = vec![format!("{} before {} first job", secs(mean(|d| d.before_first_s)), if n == 1 { "its" } else { "their" })];
        idle.push(format!("{} while compiles ran", secs(mean(|d| d.compiles_s))));
        if mean(|d| d.reference_s) >= 0.005 {
            idle.push(format!("{} while the CPU computed the expected outputs", secs(mean(|d| d.reference_s))));
        }
        idle.push(format!("{} otherwise", secs(mean(|d| d.other_s))));
        let mut line = format!(
            "time: {who} of {} (idle{} {}); compiles filled {} of {} thread{} × {}",
            secs(self.wall_s),
            if n == 1 { "" } else { " on average" },
            idle.join(", "),
            pct(self.compile_busy),
            self.compile_threads,
            if self.compile_threads == 1 { "" } else { "s" },
            secs(self.wall_s)
        );
        line.push_str("; ");
        line.push_str(&self.verdict());
        line
    }

    /// What bound the tune, and what would shorten it.
    pub fn verdict(&self) -> String {
        let devices = if self.devices.len() == 1 { "the device" } else { "the devices" };
        // Compile starts held for memory: whatever else the devices waited for (compiles given
        // up on or killed leave no span, so the time they ran reads as the tuner's own).
        let held = self.compile_busy < 0.7 && self.memory_held_s >= 0.2 * self.wall_s;
        match self.bound {
            Bound::Measuring => format!("measuring bound this tune ({devices} busy {}): more devices (`--devices`) or a budget shorten it", pct(self.device_busy())),
            _ if held => format!(
                "compiling bound this tune, with the compile threads {} full: compile starts waited {} of it for the memory they need (the `compile memory:` note says how little was left); more memory for the tune (Slurm's `--mem`, a container's or pod's limit) shortens it",
                pct(self.compile_busy),
                secs(self.memory_held_s)
            ),
            // Compiles the out-of-memory killer ended, compiled again with fewer beside them (some
            // alone): the compile threads stood mostly idle, and the time the killed compiles
            // had run was spent again.
            Bound::Compiling | Bound::Tuner if self.killed_for_memory > 0 && self.compile_busy < 0.7 => {
                let n = self.killed_for_memory;
                format!(
                    "compiling bound this tune, with the compile threads {} full: the out-of-memory killer ended {n} compile{} and each was compiled again with fewer beside it (a note says which); more memory for the tune (Slurm's `--mem`, a container's or pod's limit), or fewer compile threads (`-j`), shortens it",
                    pct(self.compile_busy),
                    if n == 1 { "" } else { "s" }
                )
            }
            Bound::Compiling if self.compile_tail_s >= 0.2 * self.wall_s => {
                let slowest = self.slowest_compile.as_ref().map(|(k, s)| format!(" (the slowest, {k}, took {})", secs(*s))).unwrap_or_default();
                format!(
                    "compiling bound this tune, and for its last {} (of the compiles' {}) fewer than half the compile threads had one left: a few slow compiles held its end{slowest}; with a budget of evaluations, a lower `--compile-tail` (default 3) gives up on such compiles sooner",
                    secs(self.compile_tail_s),
                    secs(self.compiles_end_s.unwrap_or(0.0))
                )
            }
            Bound::Compiling if self.compile_busy >= 0.7 => {
                "compiling bound this tune, every compile thread busy: more compile threads (`-j`) where cores are free, or the compile cache a second tune finds, shorten it".into()
            }
            Bound::Compiling => {
                let slowest = self.slowest_compile.as_ref().map(|(k, s)| format!(" (the slowest, {k}, took {})", secs(*s))).unwrap_or_default();
                format!(
                    "compiling bound this tune, with the compile threads {} full: {devices} waited on a few long compiles{slowest} or on a search that kept few configs in flight",
                    pct(self.compile_busy)
                )
            }
            Bound::Starting => format!("{devices} waited most before the first job: the first compiles, and starting the device's worker"),
            Bound::Reference => format!(
                "{devices} waited most for the CPU reference: a reference config on the device (`[verify] reference = \"default\"`) does not wait for the CPU"
            ),
            Bound::Tuner => format!("{devices} waited most for the tuner's own work between and after jobs (the final round's choice, diagnosis, the database)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(from: f64, to: f64) -> Span {
        Span::new(SpanKind::Compile, None, from, to - from)
    }
    fn m(d: usize, from: f64, to: f64) -> Span {
        Span::new(SpanKind::Measure, Some(d), from, to - from)
    }

    /// Spans and run times no tune could have recorded (a database damaged or edited by hand)
    /// are left out and counted: a report drew them by stretching its axis over 10^300 s
    /// (plotters overflowed) or by making a lane for each of 2^53 devices (the process aborted
    /// for memory), and a run of 4 billion devices would have been accounted device by device.
    #[test]
    fn spans_no_tune_could_have_recorded_are_left_out_and_counted() {
        let good = [c(0.0, 1.0), m(0, 1.0, 2.0)];
        // As read from a damaged record (`Span::new` would have clamped them).
        let raw = |device: Option<usize>, from_s: f64, to_s: f64| Span {
            what: if device.is_some() { SpanKind::Measure } else { SpanKind::Compile },
            device,
            from_s,
            to_s,
        };
        let bad = [raw(None, 1e300, 1e300), raw(Some(1 << 53), 1.0, 2.0), raw(None, 3.0, 2.0), raw(None, -1.0, 0.5), raw(None, 0.0, f64::NAN)];
        let time = RunTime {
            wall_ms: u64::MAX,
            compile_threads: u32::MAX,
            devices: u32::MAX,
            reference_ms: Some((5, u64::MAX)),
            unrecorded_spans_ms: vec![(0, 10), (7, 3)],
            ..Default::default()
        };
        let t = Timeline::new([("a", &good[..], false), ("b", &bad[..], false)], Some(&time)).unwrap();
        assert_eq!(t.bars.len(), 2, "{t:?}");
        assert_eq!(t.implausible, 5 + 4 + 1, "five spans; the wall, devices, threads and reference; one unrecorded span");
        assert_eq!((t.wall_s, t.devices, t.compile_threads, t.reference, t.unrecorded_spans.len()), (2.0, 1, 1, None, 1));
        let acc = t.account();
        assert_eq!(acc.devices.len(), 1);
        assert!((acc.devices[0].busy_s - 1.0).abs() < 1e-9, "{acc:?}");
        // Nothing left at all: no timeline, as for a run without spans.
        assert!(Timeline::new([("b", &bad[..], false)], None).is_none());
    }

    #[test]
    fn compiles_are_packed_onto_as_few_lanes_as_hold_them() {
        let a = [c(0.0, 2.0), m(0, 2.0, 2.5)];
        let b = [c(0.0, 1.0), m(0, 2.5, 3.0)];
        let x = [c(1.0, 3.0), m(0, 3.0, 3.5)];
        let t = Timeline::new([("a", &a[..], false), ("b", &b[..], false), ("x", &x[..], true)], None).unwrap();
        assert_eq!(t.compile_lanes, 2, "{t:?}");
        let lanes: Vec<(String, usize)> = t.bars.iter().filter(|b| !b.span.what.on_device()).map(|b| (b.key.clone(), b.lane)).collect();
        // a and b start together; x starts as b ends, on b's lane.
        assert_eq!(lanes, [("a".to_string(), 0), ("b".to_string(), 1), ("x".to_string(), 1)]);
        assert_eq!(t.wall_s, 3.5);
        assert_eq!(t.devices, 1);
        assert!(t.bars.iter().any(|b| b.key == "x" && b.failed));
    }

    #[test]
    fn a_device_waiting_for_compiles_is_told_from_one_waiting_for_the_cpu_or_the_tuner() {
        // One device: idle until 2 s, busy 2–3, idle 3–5 while a compile runs (2.4–5), busy 5–6,
        // idle 6–7 while the CPU reference runs (6–7.5, a compile also at 7–7.5), idle 7.5–10.
        let a = [c(0.0, 2.0), m(0, 2.0, 3.0)];
        let b = [c(2.4, 5.0), m(0, 5.0, 6.0)];
        let x = [c(7.0, 7.5)];
        let time = RunTime { wall_ms: 10_000, compile_threads: 4, devices: 1, reference_ms: Some((6_000, 7_500)), ..Default::default() };
        let t = Timeline::new([("a", &a[..], false), ("b", &b[..], false), ("x", &x[..], false)], Some(&time)).unwrap();
        let acc = t.account();
        let d = &acc.devices[0];
        let near = |x: f64, y: f64| (x - y).abs() < 1e-9;
        assert!(near(d.busy_s, 2.0) && near(d.before_first_s, 2.0), "{d:?}");
        assert!(near(d.compiles_s, 2.5), "{d:?}"); // 3–5 and 7–7.5
        assert!(near(d.reference_s, 1.0), "{d:?}"); // 6–7 (7–7.5 was a compile's)
        assert!(near(d.other_s, 2.5), "{d:?}"); // 7.5–10
        assert!(near(acc.compile_s, 5.1) && near(acc.compile_busy, 5.1 / 40.0), "{acc:?}");
        assert_eq!(acc.compiles_end_s, Some(7.5));
        assert_eq!(acc.slowest_compile.as_ref().map(|s| s.0.as_str()), Some("b"));
        // Waiting for compiles (2.5 s) and the tuner (2.5 s) tie; the first named wins, and
        // the threads were far from full.
        assert_eq!(acc.bound, Bound::Compiling);
        let line = acc.line();
        assert!(line.starts_with("time: the device was busy 20 % of 10.0 s (idle 2.00 s before its first job, 2.50 s while compiles ran, 1.00 s while the CPU computed the expected outputs, 2.50 s otherwise); compiles filled 13 % of 4 threads × 10.0 s; compiling bound this tune, with the compile threads 13 % full: the device waited on a few long compiles"), "{line}");
        // The same run with compile starts held 3 s for memory: that is what is told.
        let held = RunTime { memory_held_ms: 3_000, ..time.clone() };
        let t = Timeline::new([("a", &a[..], false), ("b", &b[..], false), ("x", &x[..], false)], Some(&held)).unwrap();
        let verdict = t.account().verdict();
        assert!(
            verdict.starts_with("compiling bound this tune, with the compile threads 13 % full: compile starts waited 3.00 s of it for the memory they need"),
            "{verdict}"
        );
        assert!(verdict.contains("--mem"), "{verdict}");
        // Idle mostly with no compile running: the tuner's own work, unless compile starts were
        // held for memory.
        let long = RunTime { wall_ms: 20_000, reference_ms: None, ..time };
        let t = Timeline::new([("a", &a[..], false), ("b", &b[..], false), ("x", &x[..], false)], Some(&long)).unwrap();
        assert_eq!(t.account().bound, Bound::Tuner);
        assert!(t.account().verdict().contains("the tuner's own work"), "{}", t.account().verdict());
        let held = RunTime { memory_held_ms: 5_000, ..long.clone() };
        let t = Timeline::new([("a", &a[..], false), ("b", &b[..], false), ("x", &x[..], false)], Some(&held)).unwrap();
        let verdict = t.account().verdict();
        assert!(verdict.contains("compile starts waited 5.00 s of it for the memory they need"), "{verdict}");
        // The same idle time while a compile ran that no record keeps (given up on at the time
        // limit, from 8 to 20 s): the device waited for it (on an H200, a tune with 60 of its
        // 120 s "otherwise" and one compile running 92 s until the limit read as the tuner's).
        let given_up = RunTime { unrecorded_compiles: 1, unrecorded_compile_ms: 12_000, unrecorded_spans_ms: vec![(8_000, 20_000)], ..long.clone() };
        let t = Timeline::new([("a", &a[..], false), ("b", &b[..], false), ("x", &x[..], false)], Some(&given_up)).unwrap();
        let acc = t.account();
        assert!(near(acc.devices[0].compiles_s, 2.5 + 12.0) && near(acc.devices[0].other_s, 1.5), "{:?}", acc.devices[0]); // 3–5, 7–7.5, 8–20; 6–7, 7.5–8
        assert_eq!(acc.bound, Bound::Compiling, "{}", acc.line());
        // Compiles the out-of-memory killer ended (the memory check off): that is what is told,
        // whether the idle time reads as compiling or as the tuner's.
        for time in [RunTime { compiles_killed_for_memory: 18, ..given_up }, RunTime { compiles_killed_for_memory: 1, ..long }] {
            let verdict = Timeline::new([("a", &a[..], false), ("b", &b[..], false), ("x", &x[..], false)], Some(&time)).unwrap().account().verdict();
            let n = time.compiles_killed_for_memory;
            let said = format!("the out-of-memory killer ended {n} compile{} and each was compiled again with fewer beside it", if n == 1 { "" } else { "s" });
            assert!(
                verdict.starts_with("compiling bound this tune, with the compile threads ") && verdict.contains(&said) && verdict.contains("--mem"),
                "{verdict}"
            );
        }
    }

    #[test]
    fn a_compile_far_slower_than_the_others_is_told_as_the_tail() {
        // Four threads: three compiles of a second and one of five; the device measures each as
        // it comes. From 1 s on one thread of four compiles: a 4 s tail of the 5 s.
        let spans: Vec<[Span; 2]> =
            (0..4).map(|k| if k < 3 { [c(0.0, 1.0), m(0, 1.0 + 0.1 * k as f64, 1.1 + 0.1 * k as f64)] } else { [c(0.0, 5.0), m(0, 5.0, 5.5)] }).collect();
        let keys = ["a", "b", "x", "slow"];
        let time = RunTime { wall_ms: 5_500, compile_threads: 4, devices: 1, ..Default::default() };
        let acc = Timeline::new(keys.iter().zip(&spans).map(|(k, s)| (*k, &s[..], false)), Some(&time)).unwrap().account();
        assert!((acc.compile_tail_s - 4.0).abs() < 1e-9, "{acc:?}");
        assert_eq!(acc.bound, Bound::Compiling);
        assert!(
            acc.verdict().contains("for its last 4.00 s (of the compiles' 5.00 s) fewer than half the compile threads had one left")
                && acc.verdict().contains("slow, took 5.00 s"),
            "{}",
            acc.verdict()
        );
        // Half the threads or more compiling to the end: no tail.
        let even = [[c(0.0, 1.0), m(0, 1.0, 1.1)], [c(0.0, 5.0), m(0, 5.0, 5.1)], [c(0.0, 5.0), m(0, 5.1, 5.2)], [c(1.0, 5.0), m(0, 5.2, 5.3)]];
        let acc = Timeline::new(keys.iter().zip(&even).map(|(k, s)| (*k, &s[..], false)), Some(&time)).unwrap().account();
        assert_eq!((acc.compile_tail_s, acc.bound), (0.0, Bound::Compiling), "{acc:?}");
        assert!(acc.verdict().contains("with the compile threads 68 % full"), "{}", acc.verdict());
    }

    #[test]
    fn busy_devices_bound_a_tune_and_a_device_without_jobs_waited_all_along() {
        let a = [c(0.0, 0.5), m(0, 0.5, 9.5)];
        let time = RunTime { wall_ms: 10_000, compile_threads: 1, devices: 2, ..Default::default() };
        let t = Timeline::new([("a", &a[..], false)], Some(&time)).unwrap();
        let acc = t.account();
        assert_eq!(acc.devices.len(), 2);
        assert_eq!(acc.devices[1].before_first_s, 10.0);
        // 90 % and 0 %: 45 % on average, under the 60 % that says measuring bound it.
        assert_eq!(acc.bound, Bound::Starting, "{acc:?}");
        let one = Timeline::new([("a", &a[..], false)], Some(&RunTime { devices: 1, ..time })).unwrap().account();
        assert_eq!(one.bound, Bound::Measuring);
        assert!(one.line().contains("measuring bound this tune (the device busy 90 %)"), "{}", one.line());
        assert!(Timeline::new([("a", &[][..], false)], None).is_none());
    }
}
