//! A tuning job as plain data, and its compiled ("prepared") form.
//!
//! A [`TuneJob`] holds expressions as text so it is easy to build from a spec file, a T1 file or
//! code. [`crate::plan::Prepared::new`] compiles every expression once, naming the field of any that fails,
//! and then evaluates launch geometry, resource estimates, metrics and problem data per config.

use crate::spec::key::Bucket;
use crate::spec::problem::{Access, DType, HostBuffer, Init, Memory, ProblemData};
use crate::spec::source::KernelSource;
use crate::spec::value::Value;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A kernel argument, as declared.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgSpec {
    /// Name (used in verification and references).
    pub name: String,
    /// Buffer or scalar.
    pub kind: ArgKind,
}

/// Buffer or scalar.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgKind {
    /// A device buffer.
    Buffer {
        /// Element type.
        dtype: DType,
        /// Element count, an expression over problem sizes.
        len: String,
        /// Initial contents.
        init: Init,
        /// How the kernel uses it.
        access: Access,
        /// Where it lives on the device (global memory, or a `__constant__` symbol).
        memory: Memory,
    },
    /// A by-value scalar.
    Scalar {
        /// Type.
        dtype: DType,
        /// Value, an expression over problem sizes.
        value: String,
    },
}

/// A host function producing the expected contents of every buffer, in argument order.
pub type HostReference = Arc<dyn Fn(&ProblemData) -> Result<Vec<HostBuffer>, String> + Send + Sync>;

/// Where expected outputs come from.
#[derive(Clone)]
pub enum Reference {
    /// The default config's output.
    DefaultConfig,
    /// A host (CPU) function, with a name for reports and hashes.
    Host(String, HostReference),
    /// No verification.
    None,
}

impl std::fmt::Debug for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reference::DefaultConfig => f.write_str("DefaultConfig"),
            Reference::Host(n, _) => write!(f, "Host({n})"),
            Reference::None => f.write_str("None"),
        }
    }
}

impl Reference {
    /// Short name for reports: `default config`, `cpu:NAME`, `none`.
    pub fn describe(&self) -> String {
        match self {
            Reference::DefaultConfig => "default config".into(),
            Reference::Host(n, _) => format!("cpu:{n}"),
            Reference::None => "none".into(),
        }
    }
}

/// Which outputs to verify and how.
#[derive(Clone, Debug)]
pub struct Verification {
    /// Buffers to compare; empty means every written (write or read-write) buffer.
    pub outputs: Vec<String>,
    /// Tolerances.
    pub tolerance: Tolerance,
    /// The reference.
    pub reference: Reference,
}

impl Default for Verification {
    fn default() -> Self {
        Verification { outputs: vec![], tolerance: Tolerance::default(), reference: Reference::DefaultConfig }
    }
}

/// Optional resource formulas for pruning before compiling (expressions over parameters and
/// problem sizes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Resources {
    /// Shared memory per block in bytes besides the dynamic amount (e.g. static tiles).
    pub shared_mem: Option<String>,
    /// Registers per thread estimate.
    pub registers: Option<String>,
    /// Output tile per block (m, n) and the problem's (m, n), for shape rules.
    pub tile: Option<[String; 2]>,
    /// Problem extents (m, n) the tile is compared with.
    pub dims: Option<[String; 2]>,
}

/// Configs from a vendor generator instead of listed values: each kernel parameter is an
/// expression over the generator's roles (`tile_m`, `num_warps`, ..., `warp_size`) and the
/// parameters mapped before it.
#[derive(Clone, Debug)]
pub struct GenerateSpec {
    /// Kernel class.
    pub class: crate::spec::job::Class,
    /// Kernel parameter → expression, in order.
    pub roles: Vec<(String, String)>,
    /// Problem shape (m, n, k) as expressions over problem sizes.
    pub shape: [String; 3],
    /// Bytes per element.
    pub elem_bytes: u64,
    /// Keep the generator's (model-ordered) best this many, the default included.
    pub top_k: Option<usize>,
}

/// A tuning job.
#[derive(Clone, Debug)]
pub struct TuneJob {
    /// The kernel.
    pub source: KernelSource,
    /// Tunable parameters.
    pub params: Vec<Param>,
    /// Restrictions (Python expressions over parameters and sizes).
    pub restrictions: Vec<String>,
    /// The default config's values (missing parameters take their first value); `None` means
    /// the first valid config.
    pub default: Option<Vec<(String, Value)>>,
    /// Problem sizes and other problem variables (N, M, K, dtype ...).
    pub sizes: Vec<(String, Value)>,
    /// Also pass problem sizes as defines.
    pub size_defines: bool,
    /// Kernel arguments in order.
    pub args: Vec<ArgSpec>,
    /// Grid in blocks (x, y, z), expressions.
    pub grid: [String; 3],
    /// Block in threads (x, y, z), expressions.
    pub block: [String; 3],
    /// Dynamic shared memory in bytes, expression.
    pub shared_mem: Option<String>,
    /// Verification.
    pub verify: Verification,
    /// Resource formulas.
    pub resources: Resources,
    /// FLOPs of one launch, for GFLOP/s and the model.
    pub flops: Option<String>,
    /// DRAM bytes of one launch, for GB/s and the model.
    pub bytes: Option<String>,
    /// Size names forming the problem key; empty means every size.
    pub key: Vec<String>,
    /// Bucketing of the key.
    pub bucket: Bucket,
    /// Where the job came from (spec file), for messages.
    pub origin: String,
    /// Generate configs for the device instead of enumerating `params`.
    pub generate: Option<GenerateSpec>,
    /// Compile each config the way another tuner would, so that its kernels build unchanged.
    pub compat: Compat,
}

/// Which tuner's conventions a job's kernels were written for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Compat {
    /// kerntune's: each parameter (and, with `size_defines`, each problem size) is a define.
    #[default]
    Kerntune,
    /// Kernel Tuner's (T1 files, `[kernel] compat = "kernel_tuner"`): also `grid_size_x/y/z`,
    /// `block_size_x/y/z` (when not parameters) and `kernel_tuner = 1` are defined, and a
    /// parameter named `loop_unroll_factor*` becomes `constexpr int NAME = VALUE;`, or, when 0,
    /// removes the `#pragma unroll NAME` lines it names (no unroll hint), as Kernel Tuner does
    /// for CUDA and HIP.
    KernelTuner,
}

impl TuneJob {
    /// A job with one-dimensional defaults: grid `1`, block `1`, verification against the
    /// default config; fill in the rest.
    pub fn new(source: KernelSource, params: Vec<Param>) -> TuneJob {
        TuneJob {
            source,
            params,
            restrictions: vec![],
            default: None,
            sizes: vec![],
            size_defines: false,
            args: vec![],
            grid: ["1".into(), "1".into(), "1".into()],
            block: ["1".into(), "1".into(), "1".into()],
            shared_mem: None,
            verify: Verification::default(),
            resources: Resources::default(),
            flops: None,
            bytes: None,
            key: vec![],
            bucket: Bucket::Exact,
            origin: "<job>".into(),
            generate: None,
            compat: Compat::Kerntune,
        }
    }
}

/// Absolute and relative tolerance: `|got - want| <= atol + rtol * |want|`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Tolerance {
    /// Absolute tolerance.
    pub atol: f64,
    /// Relative tolerance.
    pub rtol: f64,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance { atol: 1e-5, rtol: 1e-5 }
    }
}

/// Kernel classes with generated configs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Element-wise (memory-bound).
    Elementwise,
    /// Reductions and normalizations (memory-bound).
    Reduction,
    /// Matrix multiply (compute-bound).
    Matmul,
    /// Attention forward.
    Attention,
}

impl Class {
    /// Parses `elementwise`, `reduction` (or `normalization`), `matmul`, `attention`.
    pub fn parse(s: &str) -> Option<Class> {
        Some(match s {
            "elementwise" => Class::Elementwise,
            "reduction" | "normalization" => Class::Reduction,
            "matmul" | "gemm" => Class::Matmul,
            "attention" => Class::Attention,
            _ => return None,
        })
    }

    pub(crate) fn file(self) -> &'static str {
        match self {
            Class::Elementwise => "elementwise",
            Class::Reduction => "reduction",
            Class::Matmul => "matmul",
            Class::Attention => "attention",
        }
    }
}

/// A tunable parameter and the values it may take.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    /// Name, as used in restrictions and as the `-D` define.
    pub name: String,
    /// Candidate values, in the order given.
    pub values: Vec<Value>,
}

impl Param {
    /// A parameter with the given values.
    pub fn new(name: impl Into<String>, values: impl IntoIterator<Item = impl Into<Value>>) -> Param {
        Param { name: name.into(), values: values.into_iter().map(Into::into).collect() }
    }
}
