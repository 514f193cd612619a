//! # Stage 6: running a tune
//!
//! The pipeline ([`Tuner::tune`]: prepare → candidates → search loop (propose, compile,
//! measure, verify, record) → select → persist, each a function of its own in [`tuner`] and
//! its neighbours), the report it returns ([`report`]), worker processes that isolate faulting
//! kernels ([`worker`]), the runtime handle that tunes once and launches ([`handle`]), and the
//! composed [`Error`].
//!
//! **May import:** every stage below (`spec`, `space`, `plan`, `search`, `measure`, `backend`,
//! `store`) and the vocabulary; never `sim`.

pub mod args;
mod candidates;
mod compile_queue;
pub mod error;
pub mod evaluate;
pub mod handle;
mod lookup;
mod persist;
pub mod report;
mod search_loop;
pub mod tuner;
pub mod worker;

pub use args::{Arg, ArgType, Args, LaunchError, Lens, Signature, MAX_ARGS};
pub use error::Error;
pub use evaluate::CompileInputs;
pub use handle::{Autotuned, EmbeddedWinner, Origin, Policy, Slot, Tuned};
pub use report::{ConfigResult, Event, Observer, ResultOutcome, TuneReport};
pub use tuner::{TuneOptions, Tuner};

/// A small job on the fake backend that the stage tests share: `bx` in 32..2048 (2048 breaks
/// the 1024-thread limit) × `vec` in 1, 2, 4, default bx=256, vec=1, fastest at bx=128, vec=4.
#[cfg(test)]
pub(crate) mod fixture {
    use crate::fake::FakeBackend;
    use crate::limits::Limits;
    use crate::run::tuner::{TuneOptions, Tuner};
    use crate::space::config::Config;
    use crate::spec::job::{ArgKind, ArgSpec, Param, TuneJob};
    use crate::spec::problem::{Access, DType, Init, Memory};
    use crate::spec::source::KernelSource;
    use crate::spec::value::Value;

    pub fn job() -> TuneJob {
        let mut j = TuneJob::new(
            KernelSource::new("k", "fake", "// fake kernel"),
            vec![Param::new("bx", [32, 64, 128, 256, 512, 1024, 2048]), Param::new("vec", [1, 2, 4])],
        );
        j.sizes = vec![("n".into(), Value::Int(4096))];
        j.args = vec![
            ArgSpec {
                name: "x".into(),
                kind: ArgKind::Buffer { dtype: DType::F32, len: "n".into(), init: Init::Random { seed: 1 }, access: Access::Read, memory: Memory::Global },
            },
            ArgSpec {
                name: "y".into(),
                kind: ArgKind::Buffer { dtype: DType::F32, len: "n".into(), init: Init::Zeros, access: Access::Write, memory: Memory::Global },
            },
        ];
        j.grid = ["div_ceil(n, bx*vec)".into(), "1".into(), "1".into()];
        j.block = ["bx".into(), "1".into(), "1".into()];
        j.default = Some(vec![("bx".into(), Value::Int(256)), ("vec".into(), Value::Int(1))]);
        j
    }

    pub fn time(c: &Config) -> f64 {
        let bx = c.get_i64("bx").unwrap() as f64;
        let vec = c.get_i64("vec").unwrap() as f64;
        1e-3 * (1.0 + 0.1 * (bx / 128.0).log2().abs()) * (1.0 + 0.1 * (4.0 / vec).log2())
    }

    pub fn tuner() -> Tuner<FakeBackend> {
        Tuner::new(FakeBackend::new(Limits::preset("h100").unwrap().1, time))
    }

    pub fn opts() -> TuneOptions {
        TuneOptions { compile_threads: Some(2), ..Default::default() }
    }

    pub fn is(c: &Config, bx: i64, vec: i64) -> bool {
        c.get_i64("bx") == Some(bx) && c.get_i64("vec") == Some(vec)
    }
}
