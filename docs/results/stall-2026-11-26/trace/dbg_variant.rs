use kerntune_core::search::strategy::{Candidates, Outcome, Strategy};
use kerntune_core::search::Prior;
use kerntune_core::sim::recorded::RecordedSpace;
use kerntune_core::sim::simulate::{prior_for, trace, trace_with};
use std::sync::Arc;
struct Show(Box<dyn Strategy>, Vec<(usize, f64)>, Vec<String>, f64);
const FAVOURITES: f64 = 0.02;
impl Strategy for Show {
    fn name(&self) -> String {
        self.0.name()
    }
    fn ask(&mut self, c: &Candidates<'_>, m: usize) -> Vec<usize> {
        self.0.ask(c, m)
    }
    fn tell(&mut self, i: usize, o: &Outcome) {
        if let Outcome::Time(t) = o {
            self.1.push((i, *t));
        }
        self.0.tell(i, o)
    }
}
impl Drop for Show {
    fn drop(&mut self) {
        let picks: Vec<String> = self.1.iter().map(|(i, t)| format!("{}:{:.2}", self.2[*i].replace("Int(", "").replace(')', ""), self.3 / t)).collect();
        eprintln!("  {:?}", picks);
        eprintln!("  {}", self.0.summary().unwrap_or_default());
    }
}
/// `space` with only the configs `keep` says.
fn subset(space: &RecordedSpace, suffix: &str, keep: impl Fn(usize) -> bool) -> RecordedSpace {
    let idx: Vec<usize> = (0..space.len()).filter(|&i| keep(i)).collect();
    RecordedSpace {
        name: format!("{} {suffix}", space.name),
        coords: pick(&space.coords, &idx),
        times: pick(&space.times, &idx),
        samples: pick(&space.samples, &idx),
        failures: pick(&space.failures, &idx),
        compile_s: pick(&space.compile_s, &idx),
        eval_s: pick(&space.eval_s, &idx),
        ..space.clone()
    }
}

/// The entries of `v` at `idx` (all of `v` where it is not one per config).
fn pick<T: Clone>(v: &[T], idx: &[usize]) -> Vec<T> {
    if idx.iter().all(|&i| i < v.len()) {
        idx.iter().map(|&i| v[i].clone()).collect()
    } else {
        v.to_vec()
    }
}

/// The configs' keys (parameter values joined by commas), to find one space's configs in another.
fn keys(space: &RecordedSpace) -> Vec<String> {
    space.coords.iter().map(|c| space.params.iter().zip(c).map(|(p, &v)| format!("{:?}", p.values[v as usize])).collect::<Vec<_>>().join(",")).collect()
}

/// The configs some source ranks among its best [`FAVOURITES`].
fn favourites(sources: &[&RecordedSpace]) -> std::collections::HashSet<String> {
    let mut out = std::collections::HashSet::new();
    for s in sources {
        let k = keys(s);
        let mut ok: Vec<(f64, usize)> = s.times.iter().enumerate().filter_map(|(i, t)| t.filter(|t| t.is_finite() && *t > 0.0).map(|t| (t, i))).collect();
        ok.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n = ((ok.len() as f64 * FAVOURITES).ceil() as usize).max(1);
        out.extend(ok[..n].iter().map(|&(_, i)| k[i].clone()));
    }
    out
}

/// The held-out space without its optimum's value of the parameter whose removal costs the
/// optimum most.
fn without_decisive(space: &RecordedSpace) -> RecordedSpace {
    let best = |keep: &dyn Fn(usize) -> bool| (0..space.len()).filter(|&i| keep(i)).filter_map(|i| space.times[i]).fold(f64::INFINITY, f64::min);
    let opt = (0..space.len())
        .filter(|&i| space.times[i].is_some())
        .min_by(|&a, &b| space.times[a].unwrap().total_cmp(&space.times[b].unwrap()))
        .expect("a measured config");
    let (p, _) = (0..space.params.len())
        .filter(|&p| space.params[p].values.len() > 1)
        .map(|p| (p, best(&|i| space.coords[i][p] != space.coords[opt][p])))
        .filter(|(_, b)| b.is_finite())
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("a parameter with two values");
    let v = space.coords[opt][p];
    subset(space, &format!("w/o {}={:?}", space.params[p].name, space.params[p].values[v as usize]), |i| space.coords[i][p] != v)
}

/// A random half (xorshift, seeded).
fn half(space: &RecordedSpace, seed: u64) -> RecordedSpace {
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ seed.wrapping_mul(0x2545_F491_4F6C_DD1D);
    let keep: Vec<bool> = (0..space.len())
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x & 1 == 1
        })
        .collect();
    subset(space, &format!("half {seed}"), |i| keep[i])
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let kernels = kerntune_core::sim::simulate::spaces_by_kernel(std::path::Path::new("../shared/spaces/gpus")).unwrap();
    let (kname, gpu, variant, seeds) = (&a[1], &a[2], &a[3], a[4].parse::<u64>().unwrap());
    let spaces = &kernels[kname.as_str()];
    let h = spaces.iter().position(|s| s.name.contains(gpu.as_str())).unwrap();
    let others: Vec<&RecordedSpace> = spaces.iter().enumerate().filter(|(o, _)| *o != h).map(|(_, s)| s).collect();
    let held0 = &spaces[h];
    let held = match variant.as_str() {
        "fav" => {
            let fav = favourites(&others);
            let k = keys(held0);
            subset(held0, "fav", |i| !fav.contains(&k[i]))
        }
        "dec" => without_decisive(held0),
        "h1" => half(held0, 1),
        "h2" => half(held0, 2),
        _ => subset(held0, "all", |_| true),
    };
    top(&held);
    let prior: Arc<Prior> = Arc::new(prior_for(&held, &others));
    let k = keys(&held);
    let best = held.times.iter().filter_map(|t| *t).fold(f64::INFINITY, f64::min);
    for r in 0..seeds {
        let s = 1u64.wrapping_add(r * 7919);
        let show = Show(
            Box::new(
                kerntune_core::search::Transfer::new(prior.clone(), kerntune_core::search::by_name("hybrid", s).unwrap())
                    .with_fresh_base(kerntune_core::search::by_name("hybrid", s).unwrap()),
            ),
            vec![],
            k.clone(),
            best,
        );
        let t = trace_with(&held, Box::new(show), std::env::var("B").map(|b| b.parse().unwrap()).unwrap_or(20), s, false, 1).unwrap();
        eprintln!("SEED {r}: {:.3}", t.last().unwrap());
        let n = trace(&held, "hybrid", std::env::var("B").map(|b| b.parse().unwrap()).unwrap_or(20), s, false, 1).unwrap();
        eprintln!("  none {:.3}", n.last().unwrap());
    }
}
#[allow(dead_code)]
fn top(held: &RecordedSpace) {
    let k = keys(held);
    let best = held.times.iter().filter_map(|t| *t).fold(f64::INFINITY, f64::min);
    let mut v: Vec<(f64, usize)> = held.times.iter().enumerate().filter_map(|(i, t)| t.map(|t| (best / t, i))).collect();
    v.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (f, i) in v.iter().take(12) {
        eprintln!("TOP {} {:.3}", k[*i].replace("Int(", "").replace(')', ""), f);
    }
}
