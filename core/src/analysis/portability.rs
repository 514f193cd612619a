//! How each entry's winner performs on the other entries: the same kernel on several devices
//! or problem sizes, side by side (after a fleet merge, say).
//!
//! Cell (i, j) is entry j's fastest time ÷ the time of entry i's winner measured in entry j:
//! 100 % on the diagonal, less where i's winner is slower there. A winner that entry j never
//! measured (or that failed there) has no number: it is not guessed.

use crate::analysis::EntryView;
use serde::Serialize;

/// One cell of the table.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum Cell {
    /// Measured there: its time (seconds) and the fastest time there ÷ its time.
    Measured {
        /// Seconds.
        time: f64,
        /// From 0 to 1.
        relative: f64,
    },
    /// It failed there (compile, launch, wrong output, …).
    Failed {
        /// The failure kind.
        kind: String,
    },
    /// Not measured there.
    Missing,
}

/// The table: one row per entry with a winner, one column per entry.
#[derive(Clone, Debug, Serialize)]
pub struct Portability {
    /// Column labels (entries).
    pub columns: Vec<String>,
    /// Rows: the entry whose winner it is, the winner's key, its cells.
    pub rows: Vec<Row>,
}

/// One winner across the entries.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The entry (column position) the winner is from.
    pub from: usize,
    /// The winner's config key.
    pub winner: String,
    /// Its cell in each column.
    pub cells: Vec<Cell>,
    /// Geometric mean of `relative` over the columns where it was measured, and how many.
    pub mean: Option<(f64, usize)>,
}

impl Portability {
    /// The table of `views`; `None` for fewer than two entries.
    pub fn of(views: &[EntryView]) -> Option<Portability> {
        if views.len() < 2 {
            return None;
        }
        let columns = views.iter().map(EntryView::label).collect();
        let best: Vec<Option<f64>> = views.iter().map(|v| v.points.first().map(|p| p.time)).collect();
        let mut rows = Vec::new();
        for (i, v) in views.iter().enumerate() {
            let Some(w) = &v.winner else { continue };
            let cells: Vec<Cell> = views
                .iter()
                .enumerate()
                .map(|(j, o)| match (o.points.iter().find(|p| &p.key == w), best[j]) {
                    (Some(p), Some(b)) => Cell::Measured { time: p.time, relative: (b / p.time).min(1.0) },
                    _ => match o.failed.get(w) {
                        Some(kind) => Cell::Failed { kind: kind.clone() },
                        None => Cell::Missing,
                    },
                })
                .collect();
            let rel: Vec<f64> = cells
                .iter()
                .filter_map(|c| match c {
                    Cell::Measured { relative, .. } => Some(*relative),
                    _ => None,
                })
                .collect();
            let mean = (!rel.is_empty()).then(|| ((rel.iter().map(|r| r.ln()).sum::<f64>() / rel.len() as f64).exp(), rel.len()));
            rows.push(Row { from: i, winner: w.clone(), cells, mean });
        }
        Some(Portability { columns, rows })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{EntryView, Point, Position};
    use crate::space::config::Config;

    fn view(name: &str, times: &[(&str, f64)], winner: &str, failed: &[&str]) -> EntryView {
        let points = times
            .iter()
            .map(|(k, t)| Point {
                key: k.to_string(),
                config: Config::parse(k).unwrap(),
                time: *t,
                ci_half: 0.0,
                samples: 3,
                raced: false,
                position: Position::of(None, None, *t, None),
                compile_s: None,
                trace: None,
            })
            .collect();
        EntryView {
            kernel: "k".into(),
            target_name: name.into(),
            target: name.into(),
            source: String::new(),
            toolchain: String::new(),
            problem: String::new(),
            points,
            causes: vec![],
            findings: vec![],
            failures: Default::default(),
            failure_split: None,
            failed: failed.iter().map(|k| (k.to_string(), "launch failed".to_string())).collect(),
            failed_compiles: vec![],
            winner: Some(winner.into()),
            tie_band: vec![],
            default: None,
            effects: vec![],
            interaction: None,
            runs: vec![],
            untraced: 0,
            timed_runs: 0,
            peaks: None,
            notes: vec![],
            file: None,
        }
    }

    #[test]
    fn each_winner_is_measured_against_the_best_of_every_entry() {
        let a = view("A", &[("x=1", 1.0), ("x=2", 2.0)], "x=1", &[]);
        let b = view("B", &[("x=2", 1.0), ("x=1", 4.0)], "x=2", &[]);
        let c = view("C", &[("x=2", 2.0)], "x=2", &["x=1"]);
        let t = Portability::of(&[a, b, c]).unwrap();
        assert_eq!(t.columns, ["k on A", "k on B", "k on C"]);
        let r0 = &t.rows[0];
        assert_eq!(r0.cells[0], Cell::Measured { time: 1.0, relative: 1.0 });
        assert_eq!(r0.cells[1], Cell::Measured { time: 4.0, relative: 0.25 });
        assert_eq!(r0.cells[2], Cell::Failed { kind: "launch failed".into() });
        assert!((r0.mean.unwrap().0 - 0.5).abs() < 1e-12 && r0.mean.unwrap().1 == 2, "geometric mean of 1 and 0.25");
        assert_eq!(t.rows[1].cells[0], Cell::Measured { time: 2.0, relative: 0.5 });
        assert_eq!(t.rows[1].cells[2], Cell::Measured { time: 2.0, relative: 1.0 });
        let lone = view("D", &[("x=3", 1.0)], "x=3", &[]);
        assert!(Portability::of(std::slice::from_ref(&lone)).is_none());
        let t = Portability::of(&[lone, view("E", &[("x=1", 1.0)], "x=1", &[])]).unwrap();
        assert_eq!(t.rows[0].cells[1], Cell::Missing);
        assert_eq!(t.rows[0].mean.unwrap().1, 1);
    }
}
