//! The report's charts, drawn by plotters into SVG strings that the page inlines.
//!
//! Each function returns `Ok(None)` when its data is absent (nothing measured, no compile
//! times, no FLOP or byte formula), so the page can say why instead of drawing an empty frame.
//! Charts of one mark per config draw [`kerntune_core::analysis::sample`] of the configs.

use kerntune_core::analysis::portability::{Cell, Portability};
use kerntune_core::analysis::{sample, Effect, EntryView, FailureSplit, Interaction, Point};
use kerntune_core::run::timeline::{Bar, Timeline};
use kerntune_core::search::proposer;
use kerntune_core::store::db::SpanKind;
use plotters::coord::combinators::WithKeyPoints;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// A chart could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("drawing the {chart} chart failed: {detail}")]
pub struct ChartError {
    chart: &'static str,
    detail: String,
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Drawn = Result<(), Box<dyn std::error::Error>>;

/// Marks per scatter chart, at most (plus the winner, tie band and default).
pub const MARKS: usize = 2000;

const WINNER: RGBColor = RGBColor(0x1b, 0x9e, 0x77);
const DEFAULT: RGBColor = RGBColor(0xd9, 0x5f, 0x02);
const CONFIG: RGBColor = RGBColor(0x75, 0x70, 0xb3);
const GREY: RGBColor = RGBColor(0xa0, 0xa0, 0xa0);
/// Evaluations the sources' ranking proposed.
const PRIOR: RGBColor = RGBColor(0x1f, 0x78, 0xb4);
const CEILING: RGBColor = RGBColor(0xc0, 0x39, 0x2b);
const FONT: &str = "sans-serif";

/// Draws into an SVG string of the given size.
fn svg(chart: &'static str, size: (u32, u32), draw: impl FnOnce(&Area<'_>) -> Drawn) -> Result<String, ChartError> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        let r = root.fill(&WHITE).map_err(Into::into).and_then(|_| draw(&root)).and_then(|_| root.present().map_err(Into::into));
        r.map_err(|e| ChartError { chart, detail: e.to_string() })?;
    }
    Ok(out)
}

/// The legend box every chart uses, at `at`, in `size`-point type.
fn legend<'a, CT: CoordTranslate>(c: &mut ChartContext<'a, SVGBackend<'a>, CT>, at: SeriesLabelPosition, size: u32) -> Drawn {
    c.configure_series_labels().position(at).background_style(WHITE.mix(0.85)).border_style(BLACK).label_font((FONT, size)).draw()?;
    Ok(())
}

/// The width kept right of a plot for [`legend_beside`].
const LEGEND_RIGHT: u32 = 200;

/// The radius of a config's dot in a chart of `n` dots: large enough to see where there are few
/// (a 2-pixel dot of a short tune vanished on a grid line), small enough not to hide each other
/// where there are many (up to [`MARKS`]).
fn dot_radius(n: usize) -> u32 {
    match n {
        0..=100 => 4,
        101..=500 => 3,
        _ => 2,
    }
}

/// How a legend entry is drawn.
enum Glyph {
    /// A filled box (bars, bands).
    Fill(RGBAColor),
    /// A line.
    Line(RGBColor),
    /// A dashed line.
    Dashed(RGBColor),
}

/// A legend box in the [`LEGEND_RIGHT`] pixels right of a plot, its top level with the plot's
/// (`top` pixels down): a legend inside the plot covers what is drawn under it, and plotters
/// clips a series legend's marks to the plot.
fn legend_beside(root: &Area<'_>, top: i32, entries: &[(String, Glyph)], size: u32) -> Drawn {
    let (w, _) = root.dim_in_pixel();
    let font = (FONT, size).into_font();
    let row = size as i32 + 6;
    let x0 = w as i32 - LEGEND_RIGHT as i32 + 10;
    let x1 = w as i32 - 8;
    let y1 = top + 8 + row * entries.len() as i32;
    root.draw(&Rectangle::new([(x0, top), (x1, y1)], WHITE.filled()))?;
    root.draw(&Rectangle::new([(x0, top), (x1, y1)], BLACK.stroke_width(1)))?;
    for (i, (label, glyph)) in entries.iter().enumerate() {
        let y = top + 4 + row * i as i32 + row / 2;
        let (gx, gx1) = (x0 + 8, x0 + 24);
        match glyph {
            Glyph::Fill(c) => root.draw(&Rectangle::new([(gx, y - 5), (gx1, y + 5)], c.filled()))?,
            Glyph::Line(c) => root.draw(&PathElement::new(vec![(gx, y), (gx1, y)], c.stroke_width(2)))?,
            Glyph::Dashed(c) => root.draw(&DashedPathElement::new(vec![(gx, y), (gx1, y)], 4, 3, c.stroke_width(2)))?,
        }
        root.draw(&Text::new(label.clone(), (gx1 + 8, y - size as i32 / 2), font.clone()))?;
    }
    Ok(())
}

/// `lo..hi` widened so that a log axis has room, and never empty.
fn log_span(lo: f64, hi: f64) -> (f64, f64) {
    let (lo, hi) = (lo.max(1e-30), hi.max(1e-30));
    if hi / lo < 1.2 {
        let m = (lo * hi).sqrt();
        (m / 1.3, m * 1.3)
    } else {
        (lo / 1.15, hi * 1.15)
    }
}

/// Tick values for a log axis over `lo..hi`: the 1-2-5 steps of each decade inside it, or the
/// first of denser steps (1..9; then with 1.5 and 2.5; then in fifths below 5) that gives three
/// or more and leaves neither end of the axis a quarter of its length without one (times
/// from 1.3 to 4.5 ms had ticks at 2, 3, 4 and 5 only: the fastest configs sat under no label).
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    const STEPS: [&[f64]; 4] = [
        &[1.0, 2.0, 5.0],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
        &[1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
        &[1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0],
    ];
    let steps = |ms: &[f64]| -> Vec<f64> {
        let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        (a..=b).flat_map(|d| ms.iter().map(move |m| m * 10f64.powi(d))).filter(|v| *v >= lo && *v <= hi).collect()
    };
    let span = (hi / lo).log10();
    let covers = |t: &[f64]| match (t.first(), t.last()) {
        (Some(&a), Some(&b)) => t.len() >= 3 && (a / lo).log10() <= span / 4.0 && (hi / b).log10() <= span / 4.0,
        _ => false,
    };
    STEPS.iter().map(|ms| steps(ms)).find(|t| covers(t)).unwrap_or_else(|| vec![lo, (lo * hi).sqrt(), hi])
}

/// A log axis over `lo..hi` with [`log_ticks`].
fn log_axis(lo: f64, hi: f64) -> WithKeyPoints<LogCoord<f64>> {
    (lo..hi).log_scale().with_key_points(log_ticks(lo, hi))
}

fn ms(p: &Point) -> f64 {
    p.time * 1e3
}

/// A label on an axis of whole numbers (configs, evaluations, ranks): the number where the tick
/// is whole, nothing between (plotters puts ticks at 0.25 or 0.5 steps on a short axis, which
/// rounded read "0 0 1 1 1 2").
fn whole(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        String::new()
    }
}

/// An axis of `n` categories side by side, category `i` centred on `i`, labelled there by
/// [`slot_label`] with `x_labels(n)` (plotters' segmented range over `0..n` holds `n + 1` slots,
/// an integer range including its end, and left an empty one after the last).
fn slots(n: usize) -> std::ops::Range<f64> {
    -0.5..n.max(1) as f64 - 0.5
}

/// The margin on each side of a bar (or box) in one of `n` slots of a chart `width` pixels
/// wide: `least`, or more so that a bar is at most 90 pixels wide (one category in a whole
/// chart was a wall of colour).
fn bar_margin(width: u32, n: usize, least: u32) -> u32 {
    let slot = width.saturating_sub(80) / n.max(1) as u32;
    least.max(slot.saturating_sub(90) / 2)
}

/// The label of category `names[i]` at its tick `x` (`i`, see [`slots`]).
fn slot_label(names: &[String], x: f64) -> String {
    names.get(x.round().max(0.0) as usize).filter(|_| (x - x.round()).abs() < 1e-9).cloned().unwrap_or_default()
}

/// A time axis label: `0.25`, `1.2`, `30`.
fn tick(v: &f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.3}").trim_end_matches('0').trim_end_matches('.').into()
    } else {
        let digits = (-a.log10().floor()) as usize + 2;
        format!("{v:.digits$}").trim_end_matches('0').trim_end_matches('.').into()
    }
}

/// The distribution of measured times: a histogram on a log axis, with the winner, its tie band
/// and the default marked.
pub fn distribution(v: &EntryView) -> Result<Option<String>, ChartError> {
    if v.points.is_empty() {
        return Ok(None);
    }
    let (lo, hi) = log_span(ms(&v.points[0]), ms(v.points.last().expect("not empty")));
    let bins = if v.points.len() >= 80 { 40 } else { (v.points.len() / 2).clamp(5, 40) };
    let step = (hi / lo).ln() / bins as f64;
    let mut counts = vec![0u32; bins];
    for p in &v.points {
        let b = (((ms(p) / lo).ln() / step).floor() as usize).min(bins - 1);
        counts[b] += 1;
    }
    let top = *counts.iter().max().unwrap_or(&1) as f64 * 1.15 + 0.5;
    let edge = |i: usize| lo * (step * i as f64).exp();
    let tied: Vec<f64> = v.points.iter().filter(|p| v.tie_band.contains(&p.key)).map(ms).collect();
    svg("distribution", (880, 340), |root| {
        // The legend stands right of the plot: inside it, the default's line (most often the
        // slowest configs', at the right) and tall bars there ran under it.
        let mut c = ChartBuilder::on(root)
            .caption(format!("Measured times of {} configs", v.points.len()), (FONT, 17))
            .margin(12)
            .margin_right(LEGEND_RIGHT)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(log_axis(lo, hi), 0.0..top)?;
        c.configure_mesh()
            .x_desc("time per launch (ms, log scale)")
            .y_desc("configs")
            .x_label_formatter(&tick)
            .y_label_formatter(&whole)
            .max_light_lines(1)
            .draw()?;
        let mut entries = Vec::new();
        if let (Some(a), Some(b)) = (tied.iter().copied().reduce(f64::min), tied.iter().copied().reduce(f64::max)) {
            let (a, b) = if b / a < 1.01 { (a / 1.005, b * 1.005) } else { (a, b) };
            c.draw_series(std::iter::once(Rectangle::new([(a, 0.0), (b, top)], WINNER.mix(0.18).filled())))?;
            // Short enough for the legend's box beside the plot (182 pixels) at any count.
            let label = if tied.len() == 1 { "tie band: the winner alone".to_string() } else { format!("tie band: {} configs", tied.len()) };
            entries.push((label, Glyph::Fill(WINNER.mix(0.18))));
        }
        c.draw_series(
            counts
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(i, n)| Rectangle::new([(edge(i), 0.0), (edge(i + 1), *n as f64)], CONFIG.mix(0.75).filled())),
        )?;
        entries.push(("configs per bin".to_string(), Glyph::Fill(CONFIG.mix(0.75))));
        if let Some(w) = v.winner_point() {
            c.draw_series(std::iter::once(PathElement::new(vec![(ms(w), 0.0), (ms(w), top)], WINNER.stroke_width(2))))?;
            entries.push((format!("winner {:.4} ms", ms(w)), Glyph::Line(WINNER)));
        }
        if let Some(d) = v.default_point() {
            c.draw_series(std::iter::once(DashedPathElement::new(vec![(ms(d), 0.0), (ms(d), top)], 6, 4, DEFAULT.stroke_width(2))))?;
            entries.push((format!("default {:.4} ms", ms(d)), Glyph::Dashed(DEFAULT)));
        }
        let plot_top = c.plotting_area().get_base_pixel().1;
        legend_beside(root, plot_top, &entries, 12)?;
        Ok(())
    })
    .map(Some)
}

/// One parameter's effect: the times of each of its values as a box (quartiles), a whisker
/// (fastest to slowest) and a dot (median).
pub fn effect(e: &Effect) -> Result<String, ChartError> {
    let n = e.values.len();
    let lo = e.values.iter().map(|v| v.quartiles[0]).fold(f64::INFINITY, f64::min) * 1e3;
    let hi = e.values.iter().map(|v| v.quartiles[4]).fold(0.0, f64::max) * 1e3;
    let (lo, hi) = log_span(lo, hi);
    let names: Vec<String> = e.values.iter().map(|v| v.value.clone()).collect();
    let width = (200 + 46 * n as u32).clamp(420, 880);
    svg("parameter", (width, 300), |root| {
        let mut c = ChartBuilder::on(root)
            .caption(format!("{}: {:.0} % of the variance of log(time)", e.name, e.explained * 100.0), (FONT, 15))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(50)
            .build_cartesian_2d(slots(n), log_axis(lo, hi))?;
        let label = |x: &f64| slot_label(&names, *x);
        c.configure_mesh()
            .x_labels(n.min(24))
            .x_label_formatter(&label)
            .y_desc("time (ms)")
            .y_label_formatter(&tick)
            .x_desc(&e.name)
            .max_light_lines(1)
            .draw()?;
        let q = |i: usize, k: usize| e.values[i].quartiles[k] * 1e3;
        c.draw_series((0..n).map(|i| PathElement::new(vec![(i as f64, q(i, 0)), (i as f64, q(i, 4))], GREY.stroke_width(1))))?;
        c.draw_series((0..n).map(|i| {
            let mut r = Rectangle::new([(i as f64 - 0.5, q(i, 1)), (i as f64 + 0.5, q(i, 3))], CONFIG.mix(0.55).filled());
            let m = bar_margin(width, n, 6);
            r.set_margin(0, 0, m, m);
            r
        }))?;
        c.draw_series((0..n).map(|i| Circle::new((i as f64, q(i, 2)), 3, BLACK.filled())))?;
        Ok(())
    })
}

/// Where a cell `k` times slower than the fastest sits on the interaction chart's colour scale:
/// 1 (bright) for the fastest, 0 (dark) at [`SLOWEST`] and beyond, on a log scale.
fn shade(k: f64) -> f64 {
    (1.0 - k.max(1.0).ln() / SLOWEST.ln()).clamp(0.0, 1.0)
}

/// The interaction chart's darkest colour: this many times slower than the fastest, or more.
const SLOWEST: f64 = 100.0;

/// Two parameters together: a grid of their values, each cell coloured by the fastest config
/// measured with both (as a multiple of the fastest overall, written in it where there is
/// room), blank where none was; the winner's cell outlined; the colour key beside.
pub fn interaction(i: &Interaction) -> Result<String, ChartError> {
    let (nr, nc) = (i.row_values.len(), i.column_values.len());
    let best = i.fastest.iter().flatten().copied().fold(f64::INFINITY, f64::min);
    let width = (170 + 56 * nc as u32).clamp(420, 800);
    let height = (110 + 30 * nr as u32).clamp(240, 720);
    let write_in = nr * nc <= 12 * 16;
    svg("interaction", (width + 90, height), |root| {
        let (chart, key) = root.split_horizontally(width);
        let mut c = ChartBuilder::on(&chart)
            .caption(format!("{} × {}: the fastest of each pair of values", i.rows, i.columns), (FONT, 15))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d(slots(nc), slots(nr))?;
        let (cols, rows) = (&i.column_values, &i.row_values);
        let xl = |x: &f64| slot_label(cols, *x);
        let yl = |y: &f64| slot_label(rows, *y);
        c.configure_mesh().x_labels(nc).y_labels(nr).x_label_formatter(&xl).y_label_formatter(&yl).x_desc(&i.columns).y_desc(&i.rows).disable_mesh().draw()?;
        let map = ViridisRGB;
        let cell = |r: usize, k: usize| [(k as f64 - 0.5, r as f64 - 0.5), (k as f64 + 0.5, r as f64 + 0.5)];
        let mut cells = Vec::new();
        let mut labels = Vec::new();
        for r in 0..nr {
            for k in 0..nc {
                match i.at(r, k) {
                    Some(t) => {
                        let slower = t / best;
                        let h = shade(slower);
                        cells.push(Rectangle::new(cell(r, k), map.get_color(h as f32).filled()));
                        if write_in {
                            let text = if slower < 9.95 { format!("{slower:.2}") } else { format!("{slower:.0}") };
                            let color = if h < 0.55 { WHITE } else { BLACK };
                            labels.push(Text::new(text, (k as f64, r as f64), (FONT, 11).into_font().color(&color).pos(Pos::new(HPos::Center, VPos::Center))));
                        }
                    }
                    None => cells.push(Rectangle::new(cell(r, k), GREY.mix(0.12).filled())),
                }
            }
        }
        c.draw_series(cells)?;
        c.draw_series(labels)?;
        if let Some((r, k)) = i.winner {
            c.draw_series(std::iter::once(Rectangle::new(cell(r, k), BLACK.stroke_width(3))))?;
        }
        // The key: the scale from the fastest (top) to SLOWEST times slower (bottom).
        let (top, bottom) = (40, height as i32 - 50);
        let steps = 48;
        for s in 0..steps {
            let y0 = top + (bottom - top) * s / steps;
            let y1 = top + (bottom - top) * (s + 1) / steps;
            let h = 1.0 - s as f64 / (steps - 1) as f64;
            key.draw(&Rectangle::new([(10, y0), (28, y1)], map.get_color(h as f32).filled()))?;
        }
        key.draw(&Text::new("× fastest", (6, top - 22), (FONT, 11).into_font()))?;
        for k in [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0] {
            let y = top + ((bottom - top) as f64 * (1.0 - shade(k))) as i32;
            key.draw(&Text::new(if k < 100.0 { format!("{k}") } else { format!("≥ {k}") }, (32, y - 6), (FONT, 11).into_font()))?;
        }
        Ok(())
    })
}

/// Whether the sources' ranking (other devices' results) proposed any evaluation drawn.
pub fn proposed_by_priors(v: &EntryView) -> bool {
    v.runs.iter().any(|r| r.by.iter().flatten().any(|b| proposer::from_priors(b)))
}

/// The runs [`trace`] draws: the first eight with a successful evaluation.
fn traced_runs(v: &EntryView) -> Vec<&kerntune_core::analysis::Run> {
    v.runs.iter().filter(|r| r.evals.iter().any(|e| e.2.is_some())).take(8).collect()
}

/// The failed evaluations of the runs [`trace`] draws (its red ticks along the top).
pub fn failed_evaluations(v: &EntryView) -> usize {
    traced_runs(v).iter().map(|r| r.evals.iter().filter(|e| e.2.is_none()).count()).sum()
}

/// The best time so far, one line per run, against evaluations (left) and seconds (right), over
/// every successful evaluation as a grey dot.
pub fn trace(v: &EntryView) -> Result<Option<String>, ChartError> {
    let runs = traced_runs(v);
    if runs.is_empty() {
        return Ok(None);
    }
    let times: Vec<f64> = runs.iter().flat_map(|r| r.evals.iter().filter_map(|e| e.2)).map(|t| t * 1e3).collect();
    let (lo, hi) = log_span(times.iter().copied().fold(f64::INFINITY, f64::min), times.iter().copied().fold(0.0, f64::max));
    // Evaluations are numbered from 1, as the page's tables number them.
    let max_eval = runs.iter().flat_map(|r| r.evals.iter().map(|e| e.0)).max().unwrap_or(0) as f64 + 2.0;
    let max_s = runs.iter().flat_map(|r| r.evals.iter().map(|e| e.1)).fold(0.0, f64::max).max(1e-3) * 1.05;
    let several = runs.len() > 1;
    // Whether a run's search learned from priors: its dots say who proposed them.
    let tagged = runs.iter().any(|r| r.by.iter().any(Option::is_some));
    svg("search trace", (880, 330), |root| {
        let halves = root.split_evenly((1, 2));
        for (h, by_seconds) in halves.iter().zip([false, true]) {
            let xmax = if by_seconds { max_s } else { max_eval };
            let mut c = ChartBuilder::on(h)
                .caption(if by_seconds { "best so far against wall time" } else { "best so far against evaluations" }, (FONT, 15))
                .margin(10)
                .x_label_area_size(36)
                .y_label_area_size(50)
                .build_cartesian_2d(0.0..xmax, log_axis(lo, hi))?;
            c.configure_mesh()
                .x_desc(if by_seconds { "seconds since the run started" } else { "evaluation" })
                .x_label_formatter(&|x| if by_seconds { tick(x) } else { whole(x) })
                .y_desc("time (ms)")
                .y_label_formatter(&tick)
                .max_light_lines(1)
                .draw()?;
            let mut failed_labelled = false;
            for (k, r) in runs.iter().enumerate() {
                // Each evaluation's place: its number, or when the run met it (the end of its
                // first launch: configs that waited on the shortlist were timed in full only at
                // the run's end, where their results' seconds put them all).
                let x = |i: usize| if by_seconds { r.met_s(i) } else { r.evals[i].0 as f64 + 1.0 };
                // Each successful evaluation, and whether the sources' ranking proposed it.
                let ok: Vec<(usize, bool)> = r
                    .evals
                    .iter()
                    .zip(&r.by)
                    .enumerate()
                    .filter(|(_, (e, _))| e.2.is_some())
                    .map(|(i, (_, by))| (i, by.as_deref().is_some_and(proposer::from_priors)))
                    .collect();
                let dots = sample(ok.len(), MARKS / runs.len(), &[]);
                let dot = |i: &usize| (x(ok[*i].0), r.evals[ok[*i].0].2.unwrap_or(0.0) * 1e3);
                let (mine, others): (Vec<usize>, Vec<usize>) = dots.into_iter().partition(|&i| ok[i].1);
                let radius = dot_radius(ok.len());
                let s = c.draw_series(others.iter().map(|i| Circle::new(dot(i), radius, GREY.mix(0.6).filled())))?;
                if tagged && !by_seconds && k == 0 {
                    s.label("proposed by the search (or the tuner)").legend(|(x, y)| Circle::new((x + 8, y), 3, GREY.mix(0.6).filled()));
                }
                let s = c.draw_series(mine.iter().map(|i| Circle::new(dot(i), radius + 1, PRIOR.mix(0.8).filled())))?;
                if tagged && !by_seconds && k == 0 {
                    s.label("proposed by the sources' ranking").legend(|(x, y)| Circle::new((x + 8, y), 3, PRIOR.mix(0.8).filled()));
                }
                // Each failed evaluation: a red tick along the top (a run whose first
                // evaluations failed drew nothing there, as though they had not happened).
                let failed: Vec<usize> = (0..r.evals.len()).filter(|&i| r.evals[i].2.is_none()).collect();
                let top = hi * (lo / hi).powf(0.05);
                let s = c.draw_series(
                    sample(failed.len(), MARKS / runs.len(), &[])
                        .into_iter()
                        .map(|i| PathElement::new(vec![(x(failed[i]), hi), (x(failed[i]), top)], CEILING.mix(0.8))),
                )?;
                if (several || tagged) && !by_seconds && !failed.is_empty() && !std::mem::replace(&mut failed_labelled, true) {
                    s.label("failed").legend(|(x, y)| PathElement::new(vec![(x + 8, y - 5), (x + 8, y + 5)], CEILING.mix(0.8)));
                }
                let color = if several { Palette99::pick(k).to_rgba() } else { WINNER.to_rgba() };
                // The best so far, on to the run's last result.
                let (best, end): (Vec<(f64, f64)>, f64) = if by_seconds {
                    (r.best_so_far_met(), r.evals.iter().map(|e| e.1).fold(0.0, f64::max))
                } else {
                    (r.best_so_far().iter().map(|b| (b.0 as f64 + 1.0, b.2)).collect(), r.evals.last().map_or(0.0, |e| e.0 as f64 + 1.0))
                };
                let mut line: Vec<(f64, f64)> = Vec::with_capacity(best.len() * 2 + 1);
                for (j, &(bx, b)) in best.iter().enumerate() {
                    if j > 0 {
                        line.push((bx, line.last().expect("a point").1));
                    }
                    line.push((bx, b * 1e3));
                }
                if let Some(&(_, y)) = line.last() {
                    line.push((end.max(line.last().expect("a point").0), y));
                }
                let s = c.draw_series(LineSeries::new(line, color.stroke_width(2)))?;
                if several && !by_seconds {
                    let shard = r.note.as_ref().and_then(|n| n.shard).map_or(String::new(), |s| format!(", shard {s}"));
                    s.label(format!("run {}{shard} ({} evaluation{})", k + 1, r.evals.len(), if r.evals.len() == 1 { "" } else { "s" }))
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
                }
            }
            if (several || tagged) && !by_seconds {
                legend(&mut c, SeriesLabelPosition::UpperRight, 11)?;
            }
        }
        Ok(())
    })
    .map(Some)
}

/// Compile seconds per config, in the order they were evaluated: the configs measured, and
/// those that failed after compiling (red crosses).
pub fn compile(v: &EntryView) -> Result<Option<String>, ChartError> {
    let mut pts: Vec<(f64, f64, bool)> =
        v.points.iter().filter_map(|p| Some((p.trace.as_ref()?.seq as f64 + 1.0, p.compile_s?, v.winner.as_ref() == Some(&p.key)))).collect();
    let failed: Vec<(f64, f64)> = v.failed_compiles.iter().map(|&(seq, c)| (seq as f64, c)).collect();
    if pts.is_empty() && failed.is_empty() {
        return Ok(None);
    }
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let keep: Vec<usize> = pts.iter().enumerate().filter(|(_, p)| p.2).map(|(i, _)| i).collect();
    let shown = sample(pts.len(), MARKS, &keep);
    let every = || pts.iter().map(|p| (p.0, p.1)).chain(failed.iter().copied());
    let xmax = every().map(|p| p.0).fold(0.0, f64::max) + 1.0;
    let ymax = every().map(|p| p.1).fold(0.0, f64::max).max(1e-3) * 1.1;
    let total: f64 = every().map(|p| p.1).sum();
    let count =
        if failed.is_empty() { format!("{} configs", pts.len()) } else { format!("{} configs, {} of them failed", pts.len() + failed.len(), failed.len()) };
    let failed_shown = sample(failed.len(), MARKS, &[]);
    svg("compile", (880, 300), |root| {
        let mut c = ChartBuilder::on(root)
            .caption(format!("Compile seconds per config ({count}, {} s summed)", tick(&total)), (FONT, 15))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..xmax, 0.0..ymax)?;
        c.configure_mesh().x_desc("evaluation").x_label_formatter(&whole).y_desc("compile (s)").y_label_formatter(&tick).max_light_lines(1).draw()?;
        c.draw_series(shown.iter().map(|&i| {
            let (x, y, w) = pts[i];
            Circle::new((x, y), if w { 6 } else { dot_radius(shown.len()) }, if w { WINNER.filled() } else { CONFIG.mix(0.7).filled() })
        }))?;
        c.draw_series(failed_shown.iter().map(|&i| Cross::new(failed[i], 4, CEILING.stroke_width(1))))?;
        Ok(())
    })
    .map(Some)
}

/// Spans a timeline draws at most (the longest; the caption says how many were left out).
pub const SPANS: usize = 6000;
/// Compile lanes a timeline draws at most.
pub const COMPILE_LANES: usize = 32;
/// Device jobs: a config measured (or verified, timed again).
const JOB: RGBColor = RGBColor(0x1f, 0x78, 0xb4);
/// A compile.
const COMPILING: RGBColor = RGBColor(0x9e, 0x9a, 0xc8);

/// The runs of `v` with a timeline, newest first, each with its position among the runs.
pub fn timed_runs(v: &EntryView) -> Vec<(usize, &Timeline)> {
    v.runs.iter().enumerate().rev().filter_map(|(k, r)| Some((k, r.timeline.as_ref()?))).collect()
}

/// Where a run's time went (`t`, a run of `v`): a lane per device (its jobs), one for the CPU
/// reference where there was one, and the compile lanes (each compile on the first lane free
/// when it began). Coloured by what each span was; the winner's spans in green, failed
/// configs' in red.
pub fn timeline(v: &EntryView, t: &Timeline) -> Result<Option<String>, ChartError> {
    let mut names: Vec<String> = (0..t.devices).map(|d| format!("device {d}")).collect();
    let reference_lane = t.reference.map(|_| {
        names.push("CPU reference".into());
        names.len() - 1
    });
    let lanes = t.compile_lanes.min(COMPILE_LANES);
    let first_compile = names.len();
    names.extend((0..lanes).map(|l| format!("compile {}", l + 1)));
    let n = names.len();
    // The longest spans, when there are too many to draw.
    let mut shown: Vec<&Bar> = t.bars.iter().filter(|b| b.span.what.on_device() || b.lane < lanes).collect();
    if shown.len() > SPANS {
        shown.sort_by(|a, b| b.span.seconds().total_cmp(&a.span.seconds()));
        shown.truncate(SPANS);
    }
    let wall = t.wall_s.max(1e-3);
    // A span under a pixel still shows.
    let least = wall / 800.0;
    let winner = v.winner.as_deref();
    let height = (60 + 18 * n as u32).max(200);
    let row = |lane: usize| (n - 1 - lane) as f64;
    let lane_of = |b: &Bar| if b.span.what.on_device() { b.lane } else { first_compile + b.lane };
    svg("timeline", (880, height), |root| {
        let (chart, key) = root.split_horizontally(720);
        let mut c = ChartBuilder::on(&chart).margin(10).x_label_area_size(36).y_label_area_size(96).build_cartesian_2d(0.0..wall * 1.01, slots(n))?;
        let label = |y: &f64| {
            let k = y.round();
            if (y - k).abs() > 1e-9 || k < 0.0 || k as usize >= n {
                return String::new();
            }
            names[n - 1 - k as usize].clone()
        };
        c.configure_mesh()
            .x_desc("seconds since the tune started")
            .x_label_formatter(&tick)
            .y_labels(n)
            .y_label_formatter(&label)
            .disable_y_mesh()
            .max_light_lines(1)
            .draw()?;
        let rect = |lane: usize, from: f64, to: f64, color: RGBAColor| {
            let y = row(lane);
            Rectangle::new([(from, y - 0.38), (to.max(from + least), y + 0.38)], color.filled())
        };
        type Kind = (&'static str, RGBAColor, fn(&Bar, Option<&str>) -> bool);
        let kinds: [Kind; 6] = [
            ("compile", COMPILING.to_rgba(), |b, w| b.span.what == SpanKind::Compile && !b.failed && Some(b.key.as_str()) != w),
            ("from the compile cache", GREY.mix(0.5), |b, w| b.span.what == SpanKind::Cached && !b.failed && Some(b.key.as_str()) != w),
            ("verify and measure", JOB.mix(0.9), |b, w| b.span.what.on_device() && !after_search(b.span.what) && !b.failed && Some(b.key.as_str()) != w),
            ("final round, recheck", JOB.mix(0.45), |b, w| after_search(b.span.what) && !b.failed && Some(b.key.as_str()) != w),
            ("the winner", WINNER.to_rgba(), |b, w| Some(b.key.as_str()) == w),
            ("a config that failed", CEILING.mix(0.8), |b, w| b.failed && Some(b.key.as_str()) != w),
        ];
        // Spans side by side on a lane, told apart: every other one on its lane lighter.
        let mut light = vec![false; shown.len()];
        let mut order: Vec<usize> = (0..shown.len()).collect();
        order.sort_by(|&a, &b| shown[a].span.from_s.total_cmp(&shown[b].span.from_s));
        let mut on_lane = vec![0usize; n];
        for i in order {
            let k = &mut on_lane[lane_of(shown[i])];
            *k += 1;
            light[i] = k.is_multiple_of(2);
        }
        let mut drawn: Vec<(&str, RGBAColor)> = Vec::new();
        for (name, color, keep) in kinds {
            let of_kind: Vec<usize> = (0..shown.len()).filter(|&i| keep(shown[i], winner)).collect();
            if of_kind.is_empty() {
                continue;
            }
            c.draw_series(of_kind.iter().map(|&i| {
                let b = shown[i];
                rect(lane_of(b), b.span.from_s, b.span.to_s, if light[i] { color.mix(color.3 * 0.65) } else { color })
            }))?;
            drawn.push((name, color));
        }
        if let (Some(lane), Some((a, b))) = (reference_lane, t.reference) {
            c.draw_series(std::iter::once(rect(lane, a, b, DEFAULT.mix(0.7))))?;
            drawn.push(("CPU reference", DEFAULT.mix(0.7)));
        }
        // The key, beside the chart (over it, it hid the lanes).
        for (k, (name, color)) in drawn.iter().enumerate() {
            let y = 14 + 18 * k as i32;
            key.draw(&Rectangle::new([(6, y - 5), (20, y + 5)], color.filled()))?;
            key.draw(&Text::new(name.to_string(), (26, y - 6), (FONT, 11).into_font()))?;
        }
        Ok(())
    })
    .map(Some)
}

/// Measured again after the search: the final round and `--recheck`.
fn after_search(k: SpanKind) -> bool {
    matches!(k, SpanKind::Final | SpanKind::Recheck)
}

/// Failed configs per kind.
pub fn failures(v: &EntryView) -> Result<Option<String>, ChartError> {
    if v.failures.is_empty() {
        return Ok(None);
    }
    if let Some(split) = &v.failure_split {
        return failures_by_value(split).map(Some);
    }
    let kinds: Vec<(&String, usize)> = v.failures.iter().map(|(k, n)| (k, *n)).collect();
    let n = kinds.len();
    let top = kinds.iter().map(|k| k.1).max().unwrap_or(1) as f64 * 1.15;
    let size = (620, 280);
    svg("failures", size, |root| {
        let mut c = ChartBuilder::on(root)
            .caption("Failed configs by kind", (FONT, 15))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(50)
            .build_cartesian_2d(slots(n), 0.0..top)?;
        let names: Vec<String> = kinds.iter().map(|k| k.0.clone()).collect();
        let label = |x: &f64| slot_label(&names, *x);
        c.configure_mesh().x_labels(n).x_label_formatter(&label).y_desc("configs").y_label_formatter(&whole).max_light_lines(1).draw()?;
        c.draw_series(kinds.iter().enumerate().map(|(i, (_, k))| {
            let mut r = Rectangle::new([(i as f64 - 0.5, 0.0), (i as f64 + 0.5, *k as f64)], CEILING.mix(0.7).filled());
            let m = bar_margin(size.0, n, 14);
            r.set_margin(0, 0, m, m);
            r
        }))?;
        Ok(())
    })
    .map(Some)
}

/// Colours of the kinds of failure in [`failures_by_value`], most frequent first.
/// One each for the seven kinds: five kinds on one chart (examples/faults) reused a colour.
const KINDS: [RGBColor; 7] = [
    CEILING,
    DEFAULT,
    RGBColor(0x8c, 0x2d, 0x04),
    RGBColor(0xe7, 0x29, 0x8a),
    RGBColor(0xe6, 0xab, 0x02),
    RGBColor(0x66, 0x66, 0x66),
    RGBColor(0xa6, 0x76, 0x1d),
];

/// Configs per value of the parameter that best tells failed configs from measured ones: a bar
/// per value, measured below, failed above by kind (a published kernel's `PER_THREAD = 2 or 8`
/// writing NaN reads at a glance).
fn failures_by_value(split: &FailureSplit) -> Result<String, ChartError> {
    let n = split.values.len();
    // Headroom for the legend (a line per kind, and one for the measured), which covered the
    // last bars where five kinds failed.
    let top = split.values.iter().map(|(_, ok, bad)| ok + bad.iter().sum::<usize>()).max().unwrap_or(1) as f64 * (1.15 + 0.15 * (split.kinds.len() + 1) as f64);
    let size = (620, 300);
    svg("failures", size, |root| {
        let mut c = ChartBuilder::on(root)
            .caption(format!("Configs by {}: measured, and failed by kind", split.param), (FONT, 15))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(50)
            .build_cartesian_2d(slots(n), 0.0..top)?;
        let names: Vec<String> = split.values.iter().map(|v| v.0.clone()).collect();
        let label = |x: &f64| slot_label(&names, *x);
        c.configure_mesh().x_labels(n).x_label_formatter(&label).x_desc(&split.param).y_desc("configs").y_label_formatter(&whole).max_light_lines(1).draw()?;
        let m = bar_margin(size.0, n, 6);
        let bar = |i: usize, from: usize, to: usize, color: RGBAColor| {
            let mut r = Rectangle::new([(i as f64 - 0.5, from as f64), (i as f64 + 0.5, to as f64)], color.filled());
            r.set_margin(0, 0, m, m);
            r
        };
        c.draw_series(split.values.iter().enumerate().filter(|(_, v)| v.1 > 0).map(|(i, v)| bar(i, 0, v.1, CONFIG.mix(0.7))))?
            .label("measured")
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], CONFIG.mix(0.7).filled()));
        for (k, kind) in split.kinds.iter().enumerate() {
            let color = KINDS[k % KINDS.len()].mix(0.8);
            c.draw_series(split.values.iter().enumerate().filter(|(_, v)| v.2[k] > 0).map(|(i, v)| {
                let below = v.1 + v.2[..k].iter().sum::<usize>();
                bar(i, below, below + v.2[k], color)
            }))?
            .label(kind.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], color.filled()));
        }
        legend(&mut c, SeriesLabelPosition::UpperRight, 11)?;
        Ok(())
    })
}

/// The roofline: GFLOP/s against FLOP per byte under the bandwidth and compute ceilings when
/// both formulas are known; otherwise the one known rate per config, fastest first, under its
/// peak.
pub fn roofline(v: &EntryView) -> Result<Option<String>, ChartError> {
    let both: Vec<usize> = (0..v.points.len()).filter(|&i| v.points[i].position.intensity.is_some() && v.points[i].position.flops_per_s.is_some()).collect();
    // Configs at one arithmetic intensity (a GEMM whose `flops` and `bytes` formulas do not
    // depend on its tiles) are one column of dots on a roofline: the rank chart below says more.
    let intensities = v.points.iter().filter_map(|p| p.position.intensity);
    let (least, most) = intensities.fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
    if both.len() == v.points.len() && !both.is_empty() && most > least * 1.01 {
        return roofline_2d(v).map(Some);
    }
    let flops = v.points.iter().all(|p| p.position.flops_per_s.is_some());
    // Bytes per second, unless FLOPs are known too and the kernel is compute-bound: as the
    // winner's place on the roofline says, else by its intensity (most GPUs balance at 10 to
    // 100 FLOP per byte).
    let compute = flops
        && v.winner_point().is_some_and(|w| match w.position.bound {
            Some(b) => b == kerntune_core::analysis::roofline::Bound::Compute,
            None => w.position.intensity.is_some_and(|i| i >= 10.0),
        });
    let bytes = v.points.iter().all(|p| p.position.bytes_per_s.is_some()) && !compute;
    if v.points.is_empty() || !(bytes || flops) {
        return Ok(None);
    }
    let rate = |p: &Point| if bytes { p.position.bytes_per_s } else { p.position.flops_per_s }.unwrap_or(0.0) / 1e9;
    let (peak, unit) = if bytes {
        (v.peaks.as_ref().and_then(|p| p.bandwidth).map(|b| b / 1e9), "GB/s")
    } else {
        (v.peaks.as_ref().and_then(|p| p.compute_for(None)).map(|c| c.0 / 1e9), "GFLOP/s")
    };
    let shown = sample(v.points.len(), MARKS, &v.marked());
    let top = v.points.iter().map(rate).fold(peak.unwrap_or(0.0), f64::max).max(1e-9) * 1.12;
    // Ranks from 1, as the page's tables number the configs, with half a rank of room each side.
    let n = v.points.len() as f64;
    let (left, right) = (0.5, n + 0.5);
    svg("roofline", (880, 340), |root| {
        let mut c = ChartBuilder::on(root)
            .caption(format!("Achieved {unit} per config, fastest first"), (FONT, 16))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d(left..right, 0.0..top)?;
        c.configure_mesh().x_desc("rank by time").x_label_formatter(&whole).y_desc(unit).y_label_formatter(&tick).max_light_lines(1).draw()?;
        if let Some(pk) = peak {
            c.draw_series(std::iter::once(PathElement::new(vec![(left, pk), (right, pk)], CEILING.stroke_width(2))))?
                .label(format!("peak {pk:.0} {unit}"))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], CEILING.stroke_width(2)));
        }
        draw_points(&mut c, v, &shown, |i, p| (i as f64 + 1.0, rate(p)))?;
        legend(&mut c, SeriesLabelPosition::UpperRight, 12)?;
        Ok(())
    })
    .map(Some)
}

/// Configs as dots, the winner and the default larger and coloured, with legend entries.
fn draw_points<'a, X, Y>(
    c: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    v: &EntryView,
    shown: &[usize],
    at: impl Fn(usize, &Point) -> (X::ValueType, Y::ValueType),
) -> Drawn
where
    X: Ranged,
    Y: Ranged,
    X::ValueType: Clone + 'static,
    Y::ValueType: Clone + 'static,
{
    let plain: Vec<usize> =
        shown.iter().copied().filter(|&i| Some(&v.points[i].key) != v.winner.as_ref() && Some(&v.points[i].key) != v.default.as_ref()).collect();
    c.draw_series(plain.iter().map(|&i| Circle::new(at(i, &v.points[i]), dot_radius(shown.len()), CONFIG.mix(0.6).filled())))?
        .label(if shown.len() < v.points.len() {
            format!("configs ({} of {} drawn)", shown.len(), v.points.len())
        } else {
            format!("configs ({})", v.points.len())
        })
        .legend(|(x, y)| Circle::new((x + 8, y), 3, CONFIG.filled()));
    for (key, color, name) in [(&v.default, DEFAULT, "default"), (&v.winner, WINNER, "winner")] {
        if let Some(i) = key.as_ref().and_then(|k| v.points.iter().position(|p| &p.key == k)) {
            c.draw_series(std::iter::once(Circle::new(at(i, &v.points[i]), 6, color.filled())))?
                .label(name)
                .legend(move |(x, y)| Circle::new((x + 8, y), 5, color.filled()));
        }
    }
    Ok(())
}

fn roofline_2d(v: &EntryView) -> Result<String, ChartError> {
    let ai: Vec<f64> = v.points.iter().filter_map(|p| p.position.intensity).collect();
    let gf: Vec<f64> = v.points.iter().filter_map(|p| p.position.flops_per_s).map(|f| f / 1e9).collect();
    let bw = v.peaks.as_ref().and_then(|p| p.bandwidth).map(|b| b / 1e9);
    let best = gf.iter().copied().fold(0.0, f64::max) * 1e9;
    let compute = v.peaks.as_ref().and_then(|p| p.compute_for(Some(best))).map(|(c, w)| (c / 1e9, w));
    let ridge = bw.zip(compute).map(|(b, (c, _))| c / b);
    let (mut xlo, mut xhi) = (ai.iter().copied().fold(f64::INFINITY, f64::min), ai.iter().copied().fold(0.0, f64::max));
    if let Some(r) = ridge {
        (xlo, xhi) = (xlo.min(r), xhi.max(r));
    }
    let (xlo, xhi) = (xlo / 4.0, xhi * 4.0);
    let ytop = gf.iter().copied().fold(compute.map_or(0.0, |c| c.0), f64::max) * 2.0;
    let ylo = gf.iter().copied().fold(f64::INFINITY, f64::min) / 4.0;
    let shown = sample(v.points.len(), MARKS, &v.marked());
    svg("roofline", (880, 400), |root| {
        let mut c = ChartBuilder::on(root)
            .caption("Roofline: each config's GFLOP/s at its arithmetic intensity", (FONT, 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(log_axis(xlo, xhi), log_axis(ylo, ytop))?;
        c.configure_mesh().x_desc("arithmetic intensity (FLOP/byte, log)").y_desc("GFLOP/s (log)").x_label_formatter(&tick).y_label_formatter(&tick).draw()?;
        if let Some(b) = bw {
            let end = ridge.unwrap_or(xhi);
            c.draw_series(std::iter::once(PathElement::new(vec![(xlo, xlo * b), (end, end * b)], CEILING.stroke_width(2))))?
                .label(format!("peak bandwidth {b:.0} GB/s"))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], CEILING.stroke_width(2)));
        }
        if let Some((cp, w)) = compute {
            let start = ridge.unwrap_or(xlo);
            c.draw_series(std::iter::once(DashedPathElement::new(vec![(start, cp), (xhi, cp)], 8, 4, CEILING.stroke_width(2))))?
                .label(format!("{w} peak {:.1} TFLOP/s", cp / 1e3))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], CEILING.stroke_width(1)));
        }
        draw_points(&mut c, v, &shown, |_, p| (p.position.intensity.unwrap_or(1.0), p.position.flops_per_s.unwrap_or(1.0) / 1e9))?;
        legend(&mut c, SeriesLabelPosition::LowerRight, 12)?;
        Ok(())
    })
}

/// Several entries: each entry's fastest time as a bar, and every other entry's winner measured
/// there as a dot.
pub fn comparison(views: &[EntryView], table: &Portability) -> Result<String, ChartError> {
    let n = views.len();
    // A log axis: a winner that does not carry over can be many times the fastest there, which
    // on a linear axis flattened every bar to its foot (convolution on six GPUs: bars of
    // 0.55-1.7 ms under dots up to 23 ms).
    let times: Vec<f64> = table
        .rows
        .iter()
        .flat_map(|r| r.cells.iter())
        .filter_map(|c| match c {
            Cell::Measured { time, .. } => Some(time * 1e3),
            _ => None,
        })
        .chain(views.iter().filter_map(|v| v.points.first().map(ms)))
        .collect();
    let (lo, hi) = log_span(times.iter().copied().fold(f64::INFINITY, f64::min), times.iter().copied().fold(0.0, f64::max));
    // Room above the highest dot for the legend, which hid a dot there; and below the fastest
    // bar, whose foot is the axis's end: an H100 matmul at 1024³ (0.169 ms, beside 0.66 ms and
    // dots to 0.93 ms) drew a bar a fifteenth of the plot high, a sliver under its dot.
    let (lo, hi) = (lo / (hi / lo).powf(0.2), hi * (hi / lo).powf(0.3));
    let labels: Vec<String> = (1..=n).map(|i| format!("#{i}")).collect();
    let size = (880, 340);
    svg("comparison", size, |root| {
        let mut c = ChartBuilder::on(root)
            .caption("Each entry's best time (bar) and the other entries' winners measured there (dots)", (FONT, 15))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d(slots(n), log_axis(lo, hi))?;
        let label = |x: &f64| slot_label(&labels, *x);
        c.configure_mesh()
            .x_labels(n)
            .x_label_formatter(&label)
            .x_desc("entry (see the table)")
            .y_desc("time (ms, log scale)")
            .y_label_formatter(&tick)
            .max_light_lines(1)
            .draw()?;
        c.draw_series(views.iter().enumerate().filter_map(|(j, v)| {
            let t = ms(v.points.first()?);
            let mut r = Rectangle::new([(j as f64 - 0.5, lo), (j as f64 + 0.5, t)], WINNER.mix(0.45).filled());
            let m = bar_margin(size.0, n, 10);
            r.set_margin(0, 0, m, m);
            Some(r)
        }))?
        .label("fastest there")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], WINNER.mix(0.45).filled()));
        let dots: Vec<(usize, f64)> = table
            .rows
            .iter()
            .flat_map(|r| {
                r.cells.iter().enumerate().filter(move |(j, _)| *j != r.from).filter_map(|(j, c)| match c {
                    Cell::Measured { time, .. } => Some((j, time * 1e3)),
                    _ => None,
                })
            })
            .collect();
        c.draw_series(dots.iter().map(|&(j, t)| Circle::new((j as f64, t), 4, DEFAULT.filled())))?
            .label("another entry's winner")
            .legend(|(x, y)| Circle::new((x + 8, y), 4, DEFAULT.filled()));
        legend(&mut c, SeriesLabelPosition::UpperRight, 12)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::log_ticks;

    /// Neither end of a log axis is left a quarter of its length without a label, and a wide
    /// range keeps the sparse 1-2-5 steps.
    #[test]
    fn a_log_axis_has_a_label_near_each_end() {
        for (lo, hi) in [(1.128, 5.14), (0.0435, 30.0), (1.1, 40.0), (8.0, 11.0), (0.9, 1.3), (2.2e-3, 3.1e-3), (0.5, 900.0)] {
            let t = log_ticks(lo, hi);
            let span = (hi / lo).log10();
            assert!(t.len() >= 3, "{lo}..{hi}: {t:?}");
            assert!((t[0] / lo).log10() <= span / 4.0 + 1e-12 && (hi / t[t.len() - 1]).log10() <= span / 4.0 + 1e-12, "{lo}..{hi}: {t:?}");
            assert!(t.windows(2).all(|w| w[0] < w[1]) && t.iter().all(|v| (lo..=hi).contains(v)), "{lo}..{hi}: {t:?}");
        }
        assert_eq!(log_ticks(1.128, 5.14), vec![1.5, 2.0, 2.5, 3.0, 4.0, 5.0]);
        assert_eq!(log_ticks(0.0435, 30.0), vec![0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0]);
    }
}
