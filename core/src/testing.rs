//! Helpers for kerntune's own tests, shared by every crate's test suite.

/// Records a test that skipped part of its work because this machine lacks something (a GPU, a
/// compiler): on stderr, and appended to the file `KERNTUNE_SKIP_LOG` names, which `make test`
/// prints at the end (libtest hides a passing test's output).
pub fn skipped(what: &str) {
    // One line, whatever `what` holds (a command's output, say): the log has a line per skip.
    let what = what.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
    eprintln!("SKIPPED {what}");
    if let Some(p) = std::env::var_os("KERNTUNE_SKIP_LOG") {
        use std::io::Write;
        // One write of the whole line: appends from tests running at once do not interleave.
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(p) {
            let _ = f.write_all(format!("SKIPPED {what}\n").as_bytes());
        }
    }
}

/// A test's work skipped for want of a `backend` device (`what` names the work, `why` says what
/// was missing), as [`skipped`] records it; a failure instead where `KERNTUNE_REQUIRE_DEVICE`
/// asks for that backend (a list such as `cuda,wgpu`, or `1` for every backend), as on the GPU
/// machine, where a skip would hide a broken backend.
pub fn skipped_without_device(backend: &str, what: &str, why: &dyn std::fmt::Display) {
    let required = std::env::var("KERNTUNE_REQUIRE_DEVICE").is_ok_and(|v| v == "1" || v.split(',').any(|b| b == backend));
    assert!(!required, "{backend} is required (KERNTUNE_REQUIRE_DEVICE) but unavailable: {why}");
    skipped(&format!("{what}: {why}"));
}

/// The recorded spaces of two kernels on six GPUs (`../shared/spaces/gpus`): the transfer
/// examples' default `SPACES_DIR`.
pub const SHARED_GPU_SPACES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/spaces/gpus");

/// The next positional argument of a command-line example: `default` when there is none, a
/// message naming it (`name`) when it does not parse.
pub fn arg<T: std::str::FromStr>(args: &mut impl Iterator<Item = String>, name: &str, default: T) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    Ok(args.next().map(|s| s.parse().map_err(|e| format!("{name}: {e}"))).transpose()?.unwrap_or(default))
}

/// Runs the tests of a test binary built without libtest (`harness = false`: its `main` must
/// install a worker hook first, so a worker process started from it serves instead of testing),
/// in order, printing libtest's lines. The first argument that is not a flag filters by name, as
/// with libtest; a failing test panics, which fails the binary.
pub fn run_tests(tests: &[(&str, fn())]) {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let mut ran = 0;
    for (name, f) in tests {
        if filter.as_deref().is_some_and(|x| !name.contains(x)) {
            continue;
        }
        print!("test {name} ... ");
        f();
        println!("ok");
        ran += 1;
    }
    println!("\ntest result: ok. {ran} passed; 0 failed");
}

/// A made-up database entry for tests and benchmarks of what reads entries (reports, priors):
/// `configs` configs of a five-parameter space (`a`..`e`, ten values each, up to 100,000), a
/// memory-bound time model (the `a` and `b` parameters matter most) scaled by `slowness`, about
/// 3 % failures of three kinds, compile times, FLOP and byte counts, and two runs' traces. The
/// winner is the fastest config with the next one tied; the default is `a=0,b=0,c=0,d=0,e=0`
/// when measured. Deterministic in `seed`, and configs are shared between seeds' entries.
pub fn synthetic_entry(target_name: &str, target: &str, problem: &str, configs: usize, slowness: f64, seed: u64) -> crate::store::db::Entry {
    use crate::error::FailureKind;
    use crate::measure::stats::Stats;
    use crate::space::config::Config;
    use crate::store::db::{Entry, EntryId, Environment, Measurement, Span, SpanKind, Status, Trace, Winner};
    let mix = |x: u64| {
        let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let unit = |x: u64| (mix(x) >> 11) as f64 / (1u64 << 53) as f64;
    let id = EntryId { kernel: "triad".into(), kernel_hash: "synthetic".into(), target: target.into(), toolchain: "synthetic".into(), problem: problem.into() };
    let mut e =
        Entry::new(id, target_name.into(), Environment { kerntune: "test".into(), host: "test".into(), timing: "events".into(), details: Default::default() });
    let n = configs.min(100_000);
    let bytes = 24.0 * (1u64 << 24) as f64;
    let runs = [1_763_900_000u64, 1_763_990_000];
    let first_run = n * 3 / 5;
    let mut best: Option<(f64, String)> = None;
    let mut second: Option<(f64, String)> = None;
    for i in 0..n {
        // The same index visits the same config in every entry: a stride coprime to 100,000.
        let code = (i as u64 * 7_919 + 13) % 100_000;
        let digit = |k: u32| ((code / 10u64.pow(k)) % 10) as i64;
        let config = Config::new([("a", digit(4)), ("b", digit(3)), ("c", digit(2)), ("d", digit(1)), ("e", digit(0))]);
        let key = config.key();
        let (a, b, c) = (digit(4) as f64, digit(3) as f64, digit(2) as f64);
        let model = 1.0 + 0.35 * (a - 4.0).abs() + 0.2 * (b - 6.0).abs() + 0.03 * c + 0.05 * unit(code ^ seed);
        let time = bytes / (0.85 * 3.35e12) * model * slowness;
        let (run, seq) = if i < first_run { (runs[0], i) } else { (runs[1], i - first_run) };
        let (elapsed_s, compile_s, eval_s) = (0.05 * seq as f64 + 0.2, 0.2 + 1.5 * unit(code * 3 + 1), 0.02 + 0.05 * unit(code * 5 + 2));
        // Its compile, then its job on the device (at most the 50 ms between results).
        let job = eval_s.min(0.05);
        let spans =
            vec![Span::new(SpanKind::Compile, None, elapsed_s - job - compile_s, compile_s), Span::new(SpanKind::Measure, Some(0), elapsed_s - job, job)];
        let trace = Trace { run, seq, elapsed_s, compile_s: Some(compile_s), eval_s: Some(eval_s), device: None, by: None, spans, shard: None };
        let f = unit(code * 7 + seed);
        let status = if f < 0.01 {
            Status::Failed {
                failure: FailureKind::CompileFailed,
                message: format!("ptxas error: Entry function uses too much shared data (0x{:x} bytes, 0xc000 max)", 0xc000 + code),
            }
        } else if f < 0.02 {
            Status::Failed { failure: FailureKind::LaunchFailed, message: format!("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access at 0x7f{code:08x}") }
        } else if f < 0.03 {
            Status::Failed {
                failure: FailureKind::WrongOutput,
                message: format!("output c: {} of 16777216 elements differ; largest error 1.5 at index {code}", code + 1),
            }
        } else {
            let s = Stats::from_samples(&[time * 0.995, time, time * 1.005], false);
            if best.as_ref().is_none_or(|(t, _)| time < *t) {
                second = best.replace((time, key.clone()));
            } else if second.as_ref().is_none_or(|(t, _)| time < *t) {
                second = Some((time, key.clone()));
            }
            Status::Ok { stats: s }
        };
        let m = Measurement {
            config,
            status,
            usage: None,
            at: run,
            verified: Some(true),
            trace: Some(trace),
            flops: Some(2.0 * (1u64 << 24) as f64),
            bytes: Some(bytes),
        };
        e.measurements.insert(key, m);
    }
    if let Some((t, w)) = best {
        let default = Config::new([("a", 0i64), ("b", 0), ("c", 0), ("d", 0), ("e", 0)]).key();
        e.winner = Some(Winner {
            config: w.clone(),
            stats: Stats::from_samples(&[t * 0.995, t, t * 1.005], false),
            space: "synthetic".into(),
            verify: "synthetic".into(),
            tie_band: std::iter::once(w).chain(second.map(|s| s.1)).collect(),
            at: runs[1],
            default: e.measurements.contains_key(&default).then_some(default),
            partial: false,
        });
    }
    e
}

/// A recorded space from the workspace's `../shared/spaces` (`name` relative to it); `None`,
/// with a [`skipped`] line, where it is absent, except under CI, which has it beside the clone.
pub fn shared_space(name: &str) -> Option<crate::store::recorded::RecordedSpace> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/spaces").join(name);
    match crate::store::recorded::RecordedSpace::load(&p) {
        Ok(s) => Some(s),
        Err(e) => {
            assert!(std::env::var("CI").is_err(), "CI has ../shared beside the clone: {e}");
            if p.exists() {
                skipped(&e);
            } else {
                // A clone of its own has no ../shared: say what is missing, not an OS error.
                skipped(&format!("the recorded space {name}: ../shared/spaces (the team's recorded spaces) is not beside this clone"));
            }
            None
        }
    }
}

/// `space` with every time inverted: sources that rank its configs exactly backwards.
pub fn inverted(space: &crate::store::recorded::RecordedSpace) -> crate::store::recorded::RecordedSpace {
    crate::store::recorded::RecordedSpace { times: space.times.iter().map(|t| t.map(|t| 1.0 / t)).collect(), ..space.clone() }
}

/// A seed that follows `names` and `draw` alone (FNV-1a): a draw keyed by the spaces' names
/// stays the same when other spaces join the folder they are read from.
pub fn seed_of(names: &[&str], draw: u64) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in names.iter().flat_map(|n| n.bytes().chain([0])).chain(draw.to_le_bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// `space` with its times permuted over the configs (xorshift, seeded): sources that tell
/// nothing.
pub fn shuffled(space: &crate::store::recorded::RecordedSpace, seed: u64) -> crate::store::recorded::RecordedSpace {
    let mut times = space.times.clone();
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ seed;
    for i in (1..times.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        times.swap(i, (x % (i as u64 + 1)) as usize);
    }
    crate::store::recorded::RecordedSpace { times, ..space.clone() }
}

/// `sources` with their times shuffled, as sources that tell nothing about `held`: permutation
/// `draw` of each, seeded by the names of `held` and of the source ([`seed_of`]).
pub fn shuffled_for(
    held: &crate::store::recorded::RecordedSpace,
    sources: &[&crate::store::recorded::RecordedSpace],
    draw: u64,
) -> Vec<crate::store::recorded::RecordedSpace> {
    sources.iter().map(|s| shuffled(s, seed_of(&[&held.name, &s.name], draw))).collect()
}

#[cfg(test)]
mod tests {
    use super::seed_of;

    #[test]
    fn a_seed_follows_the_names_and_the_draw_alone() {
        let a = seed_of(&["convolution_A100", "convolution_W6600"], 0);
        assert_eq!(a, seed_of(&["convolution_A100", "convolution_W6600"], 0), "the same names and draw, the same seed");
        assert_ne!(a, seed_of(&["convolution_A100", "convolution_W6600"], 1), "another draw");
        assert_ne!(a, seed_of(&["convolution_W6600", "convolution_A100"], 0), "held out and source swapped");
        // The names are kept apart: moving a character from one name to the next is another pair.
        assert_ne!(seed_of(&["ab", "c"], 0), seed_of(&["a", "bc"], 0));
    }
}
