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
    /// The default config's output when it satisfies the restrictions and runs; otherwise the
    /// first valid config's (in enumeration order) that runs.
    DefaultConfig,
    /// The output of the first valid config (in enumeration order) that runs.
    FirstValid,
    /// A host (CPU) function, with a name for reports and hashes.
    Host(String, HostReference),
    /// Expected outputs, by buffer name: files (Kernel Tuner's `answer` saved as `.npy`, raw
    /// binaries as T1's `BinaryRaw` `ReferenceArguments`) or fills (T1's `Constant`,
    /// `Generator`). Only these buffers are compared.
    Expected(Vec<(String, Init)>),
    /// No verification.
    None,
}

impl std::fmt::Debug for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reference::DefaultConfig => f.write_str("DefaultConfig"),
            Reference::FirstValid => f.write_str("FirstValid"),
            Reference::Host(n, _) => write!(f, "Host({n})"),
            Reference::Expected(files) => write!(f, "Expected({files:?})"),
            Reference::None => f.write_str("None"),
        }
    }
}

impl Reference {
    /// Short name for reports: `default config`, `first valid config`, `cpu:NAME`, `expected
    /// outputs (y: y.npy)`, `none`.
    pub fn describe(&self) -> String {
        match self {
            Reference::DefaultConfig => "default config".into(),
            Reference::FirstValid => "first valid config".into(),
            Reference::Host(n, _) => format!("cpu:{n}"),
            Reference::Expected(files) => {
                format!("expected outputs ({})", files.iter().map(|(n, i)| format!("{n}: {}", i.describe())).collect::<Vec<_>>().join(", "))
            }
            Reference::None => "none".into(),
        }
    }

    /// Parses the words a spec or the command line gives: `default`, `first-valid`, `none`,
    /// `cpu:NAME`, or expected-output files `NAME=FILE[,NAME=FILE...]` (relative paths are
    /// resolved against `dir`). `Err` says what is accepted.
    pub fn parse(text: &str, dir: &std::path::Path) -> Result<Reference, String> {
        match text.trim() {
            "default" => Ok(Reference::DefaultConfig),
            "first-valid" | "first_valid" => Ok(Reference::FirstValid),
            "none" => Ok(Reference::None),
            r if r.starts_with("cpu:") => {
                let name = &r[4..];
                let f = crate::spec::reference::builtin(name).ok_or_else(|| {
                    format!("unknown CPU reference `{}`; built-in: {}", crate::spec::error::quote(name), crate::spec::reference::BUILTINS.join(", "))
                })?;
                Ok(Reference::Host(name.to_string(), f))
            }
            r if r.contains('=') => {
                let mut files = Vec::new();
                for part in r.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let (name, file) = part.split_once('=').ok_or_else(|| format!("`{}` is not NAME=FILE", crate::spec::error::quote(part)))?;
                    if name.trim().is_empty() || file.trim().is_empty() {
                        return Err(format!("`{}` is not NAME=FILE", crate::spec::error::quote(part)));
                    }
                    files.push((name.trim().to_string(), Init::File { path: dir.join(file.trim()) }));
                }
                Ok(Reference::Expected(files))
            }
            other => Err(format!(
                "`{}` is not `default`, `first-valid`, `none`, `cpu:NAME` or expected-output files `NAME=FILE[,NAME=FILE]`",
                crate::spec::error::quote(other)
            )),
        }
    }

    /// Whether outputs are checked at all.
    pub fn verifies(&self) -> bool {
        !matches!(self, Reference::None)
    }
}

/// How an output is compared with its reference, when not element by element (the default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compare {
    /// The sum of its written elements: partial results whose number or layout depends on a
    /// parameter (a partial sum per block).
    Sum,
    /// Its written elements sorted: the same values in an order that differs between configs
    /// (a compaction whose order depends on atomics).
    Sorted,
}

/// Whether a verification of `outputs` (empty: every buffer a kernel may write) compares the
/// buffer argument `name` with `access` (`measure::verify::compared` for a buffer with data).
pub fn compares(outputs: &[String], name: &str, access: Access) -> bool {
    if outputs.is_empty() {
        access != Access::Read
    } else {
        outputs.iter().any(|o| o == name)
    }
}

/// How output `name` is compared by a list of comparisons ([`Verification::compare`], a
/// verification request's), when not element by element.
pub fn compare_of(list: &[(String, Compare)], name: &str) -> Option<Compare> {
    list.iter().find(|(n, _)| n == name).map(|c| c.1)
}

impl Compare {
    /// The words of a spec's `verify.compare` or `--compare NAME=HOW`: `Ok(Some(..))` for `sum`
    /// and `sorted`, `Ok(None)` for `elements` (element by element, the default).
    pub fn parse(how: &str) -> Result<Option<Compare>, String> {
        match how.trim() {
            "sum" => Ok(Some(Compare::Sum)),
            "sorted" => Ok(Some(Compare::Sorted)),
            "elements" => Ok(None),
            other => Err(format!(
                "`{}` is not `sum` (the sum of the output's written elements: partial results whose number depends on a parameter), `sorted` (its written elements sorted: the same values in an order that differs between configs) or `elements` (element by element, the default)",
                crate::spec::error::quote(other)
            )),
        }
    }

    /// The word a spec gives for it: `sum`, `sorted`.
    pub fn word(self) -> &'static str {
        match self {
            Compare::Sum => "sum",
            Compare::Sorted => "sorted",
        }
    }

    /// How a summary says it: `by its sum`, `sorted`.
    pub fn describe(self) -> &'static str {
        match self {
            Compare::Sum => "by its sum",
            Compare::Sorted => "sorted",
        }
    }
}

/// How many elements of an output compared element by element may differ from the reference's
/// and the output still pass (`[verify] mismatches = { bitmap = 10 }`, `--mismatches
/// bitmap=0.001%`): for outputs where a few elements legitimately differ between correct
/// configs (a point on a polygon's edge counted in or out by a different test, ties broken
/// another way). Kernel Tuner users write such a rule as a `verify` function.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Allowance {
    /// At most this many elements.
    Count(u64),
    /// At most this share of the output's elements (0 to 1), rounded down.
    Share(f64),
}

impl Allowance {
    /// Parses a count (`10`) or a percentage (`0.001%`).
    pub fn parse(text: &str) -> Result<Allowance, String> {
        let t = text.trim();
        let bad = || format!("`{}` is not a count of elements (10) or a percentage of them (0.001%)", crate::spec::error::quote(t));
        match t.strip_suffix('%') {
            Some(p) => match p.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && (0.0..=100.0).contains(&x) => Ok(Allowance::Share(x / 100.0)),
                _ => Err(bad()),
            },
            None => t.parse::<u64>().map(Allowance::Count).map_err(|_| bad()),
        }
    }

    /// Whether it lets any element differ (`0` and `0%` do not: the default, not an allowance).
    pub fn allows_any(self) -> bool {
        self.of(u64::MAX) > 0
    }

    /// The most elements of an output of `n` that may differ.
    pub fn of(self, n: u64) -> u64 {
        match self {
            Allowance::Count(c) => c,
            Allowance::Share(s) => (s * n as f64).floor() as u64,
        }
    }

    /// As a summary says it: `10 elements`, `0.001 % of its elements`.
    pub fn describe(self) -> String {
        match self {
            Allowance::Count(1) => "1 element".into(),
            Allowance::Count(c) => format!("{c} elements"),
            Allowance::Share(s) => format!("{} % of its elements", s * 100.0),
        }
    }
}

/// The elements of output `name` (of `n`) that may differ, by `list`'s allowance for it; 0 when
/// it has none.
pub fn allowed(list: &[(String, Allowance)], name: &str, n: u64) -> u64 {
    list.iter().find(|(o, _)| o == name).map_or(0, |(_, a)| a.of(n))
}

/// How many of the measured configs are verified against the reference. The winner and its
/// tie band are always verified before they are stored, whatever the sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum VerifySample {
    /// Every config (the default).
    #[default]
    All,
    /// The first this many configs measured.
    First(usize),
    /// This share of the configs, picked by a hash of each config's key (so the same configs
    /// are verified in every run and on every shard).
    Fraction(f64),
}

impl VerifySample {
    /// Parses `all`, a count (`20`) or a percentage (`10%`).
    pub fn parse(text: &str) -> Result<VerifySample, String> {
        let t = text.trim();
        if t == "all" {
            return Ok(VerifySample::All);
        }
        if let Some(p) = t.strip_suffix('%') {
            let f: f64 = p.trim().parse().map_err(|_| format!("`{}` is not a percentage", crate::spec::error::quote(t)))?;
            if !(f > 0.0 && f <= 100.0) {
                return Err(format!("{f}% is not a share above 0 and at most 100%"));
            }
            return Ok(if f >= 100.0 { VerifySample::All } else { VerifySample::Fraction(f / 100.0) });
        }
        match t.parse::<usize>() {
            Ok(0) => Err("a sample of 0 configs verifies nothing; use verify.reference = \"none\" to turn verification off".into()),
            Ok(n) => Ok(VerifySample::First(n)),
            Err(_) => Err(format!("`{}` is not `all`, a count of configs (20) or a percentage (10%)", crate::spec::error::quote(t))),
        }
    }

    /// Whether the config with `key` is verified during the search, being the `nth` (from 0)
    /// config measured.
    pub fn picks(&self, key: &str, nth: usize) -> bool {
        match *self {
            VerifySample::All => true,
            VerifySample::First(n) => nth < n,
            VerifySample::Fraction(f) => {
                // short_hash is 16 hex digits: a uniform u64.
                let h = u64::from_str_radix(&crate::hash::short_hash(key.as_bytes()), 16).unwrap_or(0);
                (h as f64) < f * 18_446_744_073_709_551_616.0
            }
        }
    }
}

impl std::fmt::Display for VerifySample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerifySample::All => f.write_str("all"),
            VerifySample::First(n) => write!(f, "the first {n}"),
            VerifySample::Fraction(x) => write!(f, "{:.4}%", 100.0 * x),
        }
    }
}

/// Which outputs to verify and how.
#[derive(Clone, Debug)]
pub struct Verification {
    /// Buffers to compare; empty means every written (write or read-write) buffer.
    pub outputs: Vec<String>,
    /// Tolerances of every output without one of its own.
    pub tolerance: Tolerance,
    /// Tolerances of single outputs, by buffer name.
    pub per_output: Vec<(String, Tolerance)>,
    /// Outputs compared otherwise than element by element (`compare = { NAME = "sum" }`), by
    /// buffer name.
    pub compare: Vec<(String, Compare)>,
    /// Elements of single outputs (compared element by element) that may differ, by buffer
    /// name.
    pub mismatches: Vec<(String, Allowance)>,
    /// The reference.
    pub reference: Reference,
    /// Which configs are verified during the search.
    pub sample: VerifySample,
}

impl Verification {
    /// With expected outputs given, only the buffers they name are compared: they become the
    /// outputs.
    pub fn compare_what_is_expected(&mut self) {
        if let Reference::Expected(files) = &self.reference {
            self.outputs = files.iter().map(|(n, _)| n.clone()).collect();
        }
    }

    /// The reference as [`Reference::describe`] names it, and the outputs compared otherwise
    /// than element by element: `default config; partial by its sum`.
    pub fn describe(&self) -> String {
        let r = self.reference.describe();
        if !self.reference.verifies() {
            return r;
        }
        r + &self.compared_otherwise()
    }

    /// `; partial by its sum, y sorted` for the outputs compared otherwise than element by
    /// element; empty when none is.
    fn compared_otherwise(&self) -> String {
        if self.compare.is_empty() {
            return String::new();
        }
        let how: Vec<String> = self.compare.iter().map(|(n, c)| format!("{n} {}", c.describe())).collect();
        format!("; {}", how.join(", "))
    }

    /// The whole verification in one line, as `kerntune check` prints it and a tune's run note
    /// keeps it: the reference — followed by `made_by`, the config whose outputs it was, where
    /// a tune knows it — the outputs compared otherwise than element by element, the outputs
    /// compared when not all, the tolerances, and the sample verified during the search:
    /// `default config (bx=256); partial by its sum; atol 1e-2, rtol 1e-5`.
    pub fn in_full(&self, made_by: Option<&str>) -> String {
        let mut s = self.reference.describe();
        if !self.reference.verifies() {
            return s;
        }
        if let Some(c) = made_by {
            s.push_str(&format!(" ({c})"));
        }
        s.push_str(&self.compared_otherwise());
        if !self.outputs.is_empty() {
            s.push_str(&format!("; outputs {}", self.outputs.join(", ")));
        }
        s.push_str(&format!("; atol {:e}, rtol {:e}", self.tolerance.atol, self.tolerance.rtol));
        for (name, t) in &self.per_output {
            s.push_str(&format!("; {name}: atol {:e}, rtol {:e}", t.atol, t.rtol));
        }
        for (name, a) in &self.mismatches {
            s.push_str(&format!("; {name}: up to {} may differ", a.describe()));
        }
        if self.sample != VerifySample::All {
            s.push_str(&format!("; during the search, {} of the configs (the winner's always)", self.sample));
        }
        s
    }

    /// How output `name` is compared, when not element by element.
    pub fn compare_of(&self, name: &str) -> Option<Compare> {
        compare_of(&self.compare, name)
    }

    /// Gives each half-precision output (f16, bf16) the relative tolerance of its type
    /// ([`DType::default_rtol`]) where that is looser than the job's and the output has no
    /// tolerance of its own: for a spec that sets no `rtol`, whose default (1e-5) is below one
    /// unit in the last place of a half (about 1e-3), so that two correct configs could not agree.
    pub fn default_half_precision(&mut self, args: &[ArgSpec]) {
        for a in args {
            let ArgKind::Buffer { dtype, access, .. } = &a.kind else { continue };
            let verified = *access != Access::Read && (self.outputs.is_empty() || self.outputs.contains(&a.name));
            let Some(rtol) = dtype.default_rtol().filter(|&r| verified && r > self.tolerance.rtol) else { continue };
            if !self.per_output.iter().any(|(n, _)| n == &a.name) {
                self.per_output.push((a.name.clone(), Tolerance { atol: self.tolerance.atol, rtol }));
            }
        }
    }
}

impl Default for Verification {
    fn default() -> Self {
        Verification {
            outputs: vec![],
            tolerance: Tolerance::default(),
            per_output: vec![],
            compare: vec![],
            mismatches: vec![],
            reference: Reference::DefaultConfig,
            sample: VerifySample::All,
        }
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
    /// The index extent the launch covers, where the spec gives a problem size (Kernel Tuner's
    /// geometry): fault reports compare buffers with it.
    pub extent: Option<crate::spec::geometry::ProblemExtent>,
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
    /// Whether the kernel computes in half precision: every floating-point buffer it reads is
    /// f16 or bf16 (an f16 GEMM that accumulates in f32 and writes f32 too). Its FLOP rate is
    /// then put against the device's FP16 (tensor or matrix core) peak, not the FP32 one.
    ///
    /// ```
    /// let mut j = kerntune_core::fake::xy_job(&[64], &[1], 1024);
    /// assert!(!j.half_precision()); // reads an f32 buffer
    /// for a in &mut j.args {
    ///     if let kerntune_core::spec::ArgKind::Buffer { dtype, .. } = &mut a.kind {
    ///         *dtype = kerntune_core::spec::DType::F16;
    ///     }
    /// }
    /// assert!(j.half_precision());
    /// ```
    pub fn half_precision(&self) -> bool {
        let mut read = self
            .args
            .iter()
            .filter_map(|a| match &a.kind {
                ArgKind::Buffer { dtype, access, .. } if *access != Access::Write && dtype.is_float() => Some(*dtype),
                _ => None,
            })
            .peekable();
        read.peek().is_some() && read.all(|d| matches!(d, DType::F16 | DType::BF16))
    }

    /// Parameters of more than one value that nothing a config compiles or launches reads, one
    /// warning each: a name that appears nowhere in the source, the headers kerntune reads with it
    /// ([`KernelSource::headers`]), the kernel's name (a template's arguments), the launch's grid,
    /// block (not for WGSL, whose `@workgroup_size` sizes a workgroup) and shared memory, or a
    /// scalar argument's value. Such a parameter's values compile and launch one kernel: the
    /// tune measures it once per value and picks among them by noise, which is what a misspelt
    /// name (`block_size_X`) does. The warning names a close identifier of the source where there
    /// is one, and the headers included that were not searched (a library's, the toolkit's).
    /// Generated configs and sources of other languages (`fake`) are not looked at.
    ///
    /// ```
    /// use kerntune_core::spec::{KernelSource, Param, TuneJob};
    /// let src = KernelSource::new("k", "cuda", "__global__ void k(float* y) { y[threadIdx.x] = TILE; }");
    /// let mut job = TuneJob::new(src, vec![Param::new("TILE", [1, 2]), Param::new("tile_sise", [4, 8]), Param::new("WG", [64, 128])]);
    /// job.block = ["WG".into(), "1".into(), "1".into()];
    /// let w = job.unused_params();
    /// assert_eq!(w.len(), 1, "{w:?}");
    /// assert!(w[0].starts_with("parameter `tile_sise` (2 values) appears nowhere"), "{}", w[0]);
    /// ```
    pub fn unused_params(&self) -> Vec<String> {
        let wgsl = self.source.language == "wgsl";
        if self.generate.is_some() || !(wgsl || matches!(self.source.language.as_str(), "cuda" | "hip")) {
            return Vec::new();
        }
        let in_source: std::collections::BTreeSet<&str> =
            std::iter::once(self.source.code.as_str()).chain(self.source.headers.iter().map(|h| h.code.as_str())).flat_map(identifiers).collect();
        let scalars = self.args.iter().filter_map(|a| match &a.kind {
            ArgKind::Scalar { value, .. } => Some(value.as_str()),
            ArgKind::Buffer { .. } => None,
        });
        let launch: std::collections::BTreeSet<&str> = self
            .grid
            .iter()
            .map(String::as_str)
            .chain(self.shared_mem.as_deref())
            .chain(scalars)
            .chain(std::iter::once(self.source.name.as_str()))
            .chain(self.block.iter().map(String::as_str).filter(|_| !wgsl))
            .flat_map(identifiers)
            .collect();
        let in_block = |name: &str| self.block.iter().any(|b| identifiers(b).any(|i| i == name));
        let file = self.source.path.as_deref().map_or_else(
            || "the kernel's source".to_string(),
            |p| std::path::Path::new(p).file_name().map_or(p.to_string(), |f| f.to_string_lossy().into_owned()),
        );
        let read: Vec<&str> = self.source.headers.iter().map(|h| h.name.as_str()).collect();
        let unread: Vec<String> = std::iter::once(self.source.code.as_str())
            .chain(self.source.headers.iter().map(|h| h.code.as_str()))
            .flat_map(crate::spec::source::included)
            .filter(|n| !read.contains(&n.as_str()))
            .fold(Vec::new(), |mut v, n| {
                if !v.contains(&n) {
                    v.push(n);
                }
                v
            });
        let mut out = Vec::new();
        for p in self.params.iter().filter(|p| p.values.len() > 1) {
            let name = p.name.as_str();
            if in_source.contains(name) || launch.contains(name) {
                continue;
            }
            let mut line = format!(
                "parameter `{name}` ({} values) appears nowhere in {file}{}, the kernel's name, [launch] or the scalar arguments",
                p.values.len(),
                if read.is_empty() { String::new() } else { format!(" or its headers ({})", read.join(", ")) }
            );
            if wgsl && in_block(name) {
                line.push_str(" but [launch] block, which does not size a WGSL workgroup (its `@workgroup_size` does)");
            }
            line.push_str(": its values compile and launch the same kernel, each measured as a config of its own");
            let close = crate::hint::nearest(name, in_source.iter().copied().filter(|i| i.len() > 1 && !self.params.iter().any(|q| q.name == *i)), 4);
            match close {
                Some(i) => line.push_str(&format!("; did you mean `{i}`, which {file} uses?")),
                None => line.push_str(if wgsl {
                    "; use it in the kernel (`override NAME: u32;`, or a constant by its name) or drop it"
                } else {
                    "; use it in the kernel (each parameter is a define) or drop it"
                }),
            }
            if !unread.is_empty() {
                line.push_str(&format!(" (not searched: the headers kerntune does not read, {})", unread.join(", ")));
            }
            out.push(line);
        }
        out
    }

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
            extent: None,
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

/// `Err` unless both tolerances are finite and not negative.
pub fn check_tolerance(t: &Tolerance) -> Result<(), String> {
    for (name, v) in [("atol", t.atol), ("rtol", t.rtol)] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(format!("{name} = {v} is not a tolerance (a number of at least 0)"));
        }
    }
    Ok(())
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

/// The identifiers of `text` (C's and WGSL's: a letter or `_`, then letters, digits or `_`).
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_'))
}

impl Param {
    /// A parameter with the given values.
    pub fn new(name: impl Into<String>, values: impl IntoIterator<Item = impl Into<Value>>) -> Param {
        Param { name: name.into(), values: values.into_iter().map(Into::into).collect() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(name: &str, dtype: DType, access: Access) -> ArgSpec {
        ArgSpec { name: name.into(), kind: ArgKind::Buffer { dtype, len: "4".into(), init: Init::Zeros, access, memory: Memory::Global } }
    }

    #[test]
    fn half_precision_outputs_get_their_type_s_tolerance_unless_one_is_set() {
        let args = [
            buffer("A", DType::F16, Access::Read),
            buffer("C", DType::F16, Access::Write),
            buffer("D", DType::BF16, Access::ReadWrite),
            buffer("E", DType::F32, Access::Write),
            ArgSpec { name: "n".into(), kind: ArgKind::Scalar { dtype: DType::F16, value: "1".into() } },
        ];
        let rtols = |v: &Verification| v.per_output.iter().map(|(n, t)| (n.clone(), t.rtol, t.atol)).collect::<Vec<_>>();
        let mut v = Verification { tolerance: Tolerance { atol: 0.5, rtol: 1e-5 }, ..Default::default() };
        v.default_half_precision(&args);
        assert_eq!(rtols(&v), [("C".to_string(), 1e-3, 0.5), ("D".to_string(), 1.6e-2, 0.5)], "written halves only, the job's atol kept");
        let mut loose = Verification { tolerance: Tolerance { atol: 0.0, rtol: 0.05 }, ..Default::default() };
        loose.default_half_precision(&args);
        assert!(loose.per_output.is_empty(), "a looser job tolerance is kept");
        let mut named = Verification { outputs: vec!["D".into()], ..Default::default() };
        named.default_half_precision(&args);
        assert_eq!(rtols(&named), [("D".to_string(), 1.6e-2, 1e-5)], "only the outputs verified");
        let own = Tolerance { atol: 0.0, rtol: 1e-6 };
        let mut set = Verification { per_output: vec![("C".into(), own)], ..Default::default() };
        set.default_half_precision(&args);
        assert_eq!(set.per_output[0], ("C".to_string(), own), "an output's own tolerance is kept");
    }

    #[test]
    fn a_spec_s_rtol_turns_the_half_precision_default_off() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/hgemm");
        let text = std::fs::read_to_string(dir.join("hgemm.toml")).unwrap();
        let shipped = crate::spec::Spec::parse(&text, &dir.join("hgemm.toml")).unwrap();
        let v = &shipped.job("cuda", 0).unwrap().verify;
        assert_eq!(v.per_output, [("C".to_string(), Tolerance { atol: 1e-2, rtol: 1e-3 })]);
        let strict = crate::spec::Spec::parse(&text.replace("atol = 1e-2", "atol = 1e-2\nrtol = 1e-5"), &dir.join("hgemm.toml")).unwrap();
        let v = &strict.job("cuda", 0).unwrap().verify;
        assert!(v.per_output.is_empty() && v.tolerance.rtol == 1e-5, "{:?}", v.per_output);
    }

    /// A kernel file that starts with a byte-order mark (Windows editors write one) is read
    /// without it: naga stopped at it (`expected global item … found "\u{feff}"`).
    #[test]
    fn a_byte_order_mark_is_no_source() {
        let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/triad");
        let dir = tempfile::tempdir().unwrap();
        for f in ["triad.toml", "triad.cu"] {
            std::fs::copy(shipped.join(f), dir.path().join(f)).unwrap();
        }
        let wgsl = std::fs::read_to_string(shipped.join("triad.wgsl")).unwrap();
        std::fs::write(dir.path().join("triad.wgsl"), format!("\u{feff}{wgsl}")).unwrap();
        let spec = crate::spec::Spec::load(&dir.path().join("triad.toml")).unwrap();
        assert_eq!(spec.job("wgsl", 0).unwrap().source.code, wgsl);
        // An empty one (or one of a byte-order mark and blank lines) is said at once.
        std::fs::write(dir.path().join("triad.wgsl"), "\u{feff}\n\n").unwrap();
        let e = spec.job("wgsl", 0).unwrap_err().to_string();
        assert!(e.contains("kernel.source.wgsl") && e.contains("triad.wgsl is empty; it should hold the kernel `triad`"), "{e}");
    }

    /// A parameter of more than one value that nothing compiled or launched reads is warned of;
    /// one read by a header, the kernel's template name, the grid, shared memory or a scalar
    /// argument is not, nor one of a single value; WGSL's block does not count; a close name of
    /// the source is suggested and the headers not searched are named.
    #[test]
    fn a_parameter_that_changes_nothing_is_warned_of() {
        use crate::spec::source::Header;
        let code = "#include \"tile.h\"\n#include <cub/block/block_reduce.cuh>\ntemplate <int B> __global__ void k(float* y, int s) { y[threadIdx.x] = TILE_SIZE + B + s; }";
        let mut src = KernelSource::new("k<BLOCK>", "cuda", code);
        src.path = Some("/x/kernels/k.cu".into());
        src.headers = vec![Header { name: "tile.h".into(), path: "./tile.h".into(), code: "#define TILE_SIZE (HDR * 2)".into() }];
        let p = |n: &str| Param::new(n, [1, 2]);
        let mut job = TuneJob::new(src, vec![p("HDR"), p("BLOCK"), p("GX"), p("SMEM"), p("S"), p("TILE_SIZ"), p("NOTHING"), Param::new("ONE", [1])]);
        job.grid = ["div_ceil(1024, GX)".into(), "1".into(), "1".into()];
        job.shared_mem = Some("SMEM * 4".into());
        job.args = vec![ArgSpec { name: "s".into(), kind: ArgKind::Scalar { dtype: DType::I32, value: "S + 1".into() } }];
        let w = job.unused_params();
        assert_eq!(w.len(), 2, "{w:#?}");
        assert!(w[0].starts_with("parameter `TILE_SIZ` (2 values) appears nowhere in k.cu or its headers (tile.h), the kernel's name"), "{}", w[0]);
        assert!(w[0].contains("did you mean `TILE_SIZE`, which k.cu uses?"), "{}", w[0]);
        assert!(w[0].ends_with("(not searched: the headers kerntune does not read, cub/block/block_reduce.cuh)"), "{}", w[0]);
        assert!(w[1].starts_with("parameter `NOTHING`") && w[1].contains("use it in the kernel (each parameter is a define) or drop it"), "{}", w[1]);
        // WGSL: a parameter only the block names sizes nothing.
        let wgsl = KernelSource::new("k", "wgsl", "override WG: u32 = 64u;\n@compute @workgroup_size(64) fn k() {}\n");
        let mut job = TuneJob::new(wgsl, vec![p("WG"), p("BS")]);
        job.block = ["BS".into(), "1".into(), "1".into()];
        let w = job.unused_params();
        assert_eq!(w.len(), 1, "{w:#?}");
        assert!(
            w[0].contains("`BS` (2 values) appears nowhere in the kernel's source")
                && w[0].contains("but [launch] block, which does not size a WGSL workgroup"),
            "{}",
            w[0]
        );
        // Generated configs are the generator's.
        job.generate = Some(GenerateSpec { class: Class::Elementwise, roles: vec![], shape: ["1".into(), "1".into(), "1".into()], elem_bytes: 4, top_k: None });
        assert!(job.unused_params().is_empty());
    }
}
