//! The contract every backend implements: target and limits, compile a config, allocate a
//! workspace for a problem, time launches, read outputs back.
//!
//! Threading: `compile` is called from a pool of worker threads at the same time as the tuner's
//! thread times other configs, so a backend must be `Sync` and compilation must not disturb
//! timing (CUDA's NVRTC and module loading, wgpu's pipeline creation and the fake all qualify).
//! Everything that touches a [`Backend::Workspace`] happens on the tuner's thread.

use crate::config::Config;
use crate::error::BackendError;
use crate::limits::Limits;
use crate::problem::{HostBuffer, ProblemData};
use crate::target::Target;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A kernel's source and the options that shape its binary.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KernelSource {
    /// Entry-point name. CUDA and HIP kernels may be templates, named with their template
    /// arguments as in Kernel Tuner (`matmul<BM, BN, float>`): see [`KernelSource::instance`].
    pub name: String,
    /// Source language: `cuda`, `hip`, `wgsl` (or `fake`).
    pub language: String,
    /// The source text.
    pub code: String,
    /// Where it came from, for messages.
    pub path: Option<String>,
    /// Extra compiler options (e.g. `-use_fast_math`).
    pub options: Vec<String>,
    /// An architecture override, e.g. `sm_90a` (defaults to the device's).
    pub arch: Option<String>,
}

impl KernelSource {
    /// A source with no extra options.
    pub fn new(name: &str, language: &str, code: &str) -> KernelSource {
        KernelSource { name: name.into(), language: language.into(), code: code.into(), path: None, options: vec![], arch: None }
    }

    /// The entry point's name without a template argument list (`matmul` for
    /// `matmul<BM, BN, float>`): what a WGSL entry point is called, and the CUDA/HIP program
    /// name. Reports show the whole name, template arguments included.
    pub fn entry(&self) -> &str {
        self.name.split_once('<').map_or(self.name.as_str(), |(base, _)| base.trim_end())
    }

    /// The template instantiation a config compiles, for a templated name: each identifier in
    /// the argument list that names one of `defines` becomes its value, so
    /// `matmul<BM, BN, float>` with `BM = 64`, `BN = 32` is `matmul<64, 32, float>`. CUDA and
    /// HIP hand this to the compiler as a name expression and launch the symbol it lowers to.
    /// `None` for a plain name.
    pub fn instance(&self, defines: &[(String, String)]) -> Option<String> {
        let (base, args) = self.name.split_once('<')?;
        let mut out = format!("{}<", base.trim_end());
        let mut chars = args.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c.is_ascii_alphabetic() || c == '_' {
                let mut end = i + c.len_utf8();
                while let Some(&(j, d)) = chars.peek() {
                    if !(d.is_ascii_alphanumeric() || d == '_') {
                        break;
                    }
                    end = j + d.len_utf8();
                    chars.next();
                }
                let word = &args[i..end];
                out.push_str(defines.iter().find(|(k, _)| k == word).map_or(word, |(_, v)| v.as_str()));
            } else {
                out.push(c);
            }
        }
        Some(out)
    }

    /// Checks a kernel name: an identifier, optionally followed by one template argument list
    /// (`matmul<BM, BN, float>`). The error says what is wrong.
    pub fn check_name(name: &str) -> Result<(), String> {
        let (base, args) = match name.split_once('<') {
            Some((b, a)) => (b.trim_end(), Some(a)),
            None => (name, None),
        };
        let ident = |s: &str| s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident(base) {
            return Err(format!(
                "`{name}` is not a kernel name: use the entry point's identifier, optionally with template arguments (`matmul<BM, BN, float>`)"
            ));
        }
        if let Some(args) = args {
            let mut depth = 1i32;
            for (i, c) in args.char_indices() {
                match c {
                    '<' => depth += 1,
                    '>' => depth -= 1,
                    _ => {}
                }
                if depth == 0 && !args[i + 1..].trim().is_empty() {
                    return Err(format!("`{name}` has text after its template argument list"));
                }
            }
            if depth != 0 {
                return Err(format!("`{name}`: the template argument list is not closed with `>`"));
            }
            if args.trim_end().trim_end_matches('>').trim().is_empty() {
                return Err(format!("`{name}`: the template argument list is empty"));
            }
        }
        Ok(())
    }

    /// Hash of everything here that changes the binary.
    pub fn identity_hash(&self) -> String {
        let opts = self.options.join("\u{1}");
        let arch = self.arch.clone().unwrap_or_default();
        crate::hash::hash_parts([self.name.as_bytes(), self.language.as_bytes(), self.code.as_bytes(), opts.as_bytes(), arch.as_bytes()])
    }
}

/// Launch geometry for one config.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Launch {
    /// Blocks (work-groups) along x, y, z.
    pub grid: [u32; 3],
    /// Threads per block (work-group size) along x, y, z.
    pub block: [u32; 3],
    /// Dynamic shared memory, bytes.
    pub shared_mem_bytes: u32,
}

impl Launch {
    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.block.iter().product()
    }
    /// Blocks in the grid.
    pub fn blocks(&self) -> u64 {
        self.grid.iter().map(|&g| g as u64).product()
    }
}

/// What the backend is asked to compile.
#[derive(Clone, Debug)]
pub struct CompileRequest<'a> {
    /// The source.
    pub source: &'a KernelSource,
    /// The config.
    pub config: &'a Config,
    /// Name/value pairs to define: the config's parameters, then any problem constants the
    /// spec asks to pass. CUDA and HIP pass them as `-D`; WGSL injects `const` declarations
    /// (or pipeline overrides where declared).
    pub defines: &'a [(String, String)],
    /// The launch this config will use (block size for launch bounds, workgroup size).
    pub launch: &'a Launch,
    /// By-value scalar arguments with their values. CUDA and HIP pass these at launch and
    /// ignore them here; WGSL has no by-value kernel arguments, so the wgpu backend injects
    /// them as `const` declarations.
    pub scalars: &'a [(String, crate::value::Value)],
    /// How each buffer argument is used, in argument order (binding layouts need it).
    pub buffers: &'a [crate::problem::Access],
}

/// Resources the compiler reports for a compiled kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceUsage {
    /// Registers per thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registers: Option<u32>,
    /// Static shared memory per block, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub static_shared_bytes: Option<u64>,
    /// Local memory (spills) per thread, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_bytes: Option<u64>,
    /// Most threads per block this binary can be launched with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_threads_per_block: Option<u32>,
    /// Resident blocks per SM for the config's block size (occupancy API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_blocks_per_sm: Option<u32>,
}

impl ResourceUsage {
    /// Lower is better: registers × threads + shared memory in 32-bit words.
    pub fn score(&self, threads: u32) -> Option<u64> {
        if self.registers.is_none() && self.static_shared_bytes.is_none() {
            return None;
        }
        Some(self.registers.unwrap_or(0) as u64 * threads as u64 + self.static_shared_bytes.unwrap_or(0) / 4)
    }
}

/// A compiled kernel with its resource report.
#[derive(Debug)]
pub struct Compiled<K> {
    /// The backend's loaded kernel.
    pub kernel: K,
    /// What the compiler reported.
    pub usage: ResourceUsage,
    /// Whether it came from a persistent compile cache.
    pub cached: bool,
}

/// How launches were timed; reports always say which.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimingMethod {
    /// Device events around each launch (CUDA/HIP events).
    DeviceEvents,
    /// GPU timestamp queries (wgpu `TIMESTAMP_QUERY`).
    TimestampQueries,
    /// Host clock around submit and wait: includes submission overhead.
    HostClock,
    /// Synthetic times from a table (the fake backend).
    Simulated,
}

impl std::fmt::Display for TimingMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TimingMethod::DeviceEvents => "device events",
            TimingMethod::TimestampQueries => "GPU timestamp queries",
            TimingMethod::HostClock => "host clock around submit+wait",
            TimingMethod::Simulated => "simulated",
        })
    }
}

/// How a backend keeps the previous launch's data out of L2 before a timed launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum L2Flush {
    /// Nothing: the launch may find its data in L2 (warm).
    Off,
    /// Write a buffer of twice the L2 size first (what Triton and nvbench do).
    #[default]
    Memset,
    /// Launch on the next of enough copies of the arguments to span twice the L2 size, so that
    /// nothing runs between launches (the copies start as the arguments' pristine data).
    Rotate,
}

/// One timing request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeRequest {
    /// Launches to time, each reported separately.
    pub launches: u32,
    /// How L2 is emptied before each launch (backends without a way to do so ignore it).
    pub flush: L2Flush,
    /// A launch that takes longer fails with [`BackendError::TimedOut`].
    pub timeout: Duration,
}

/// What [`Backend::verify`] checks.
#[derive(Clone, Copy, Debug)]
pub struct VerifyRequest<'a> {
    /// Expected contents of every buffer, in argument order.
    pub reference: &'a [HostBuffer],
    /// Identifies `reference` for the duration of a tune, so a backend may cache it.
    pub reference_id: u64,
    /// Buffers to compare; empty means every written buffer.
    pub outputs: &'a [String],
    /// Tolerances.
    pub tolerance: crate::verify::Tolerance,
    /// Time limit of the launch.
    pub timeout: Duration,
}

impl VerifyRequest<'_> {
    /// Whether a buffer is compared: the named outputs, or every written buffer.
    pub fn selects(&self, b: &HostBuffer) -> bool {
        if self.outputs.is_empty() {
            b.access != crate::problem::Access::Read
        } else {
            self.outputs.contains(&b.name)
        }
    }

    /// Compares read-back buffers with the reference (only the selected ones).
    pub fn check(&self, outs: &[HostBuffer]) -> Result<(), BackendError> {
        for (got, want) in outs.iter().zip(self.reference) {
            if self.selects(want) {
                crate::verify::compare(got, want, self.tolerance).map_err(BackendError::WrongOutput)?;
            }
        }
        Ok(())
    }
}

/// A GPU (or GPU-like) backend. See the module docs for the threading contract.
pub trait Backend: Send + Sync {
    /// A compiled, loaded kernel.
    type Kernel: Send + Sync + 'static;
    /// Device memory for one problem instance.
    type Workspace: Send;

    /// The device.
    fn target(&self) -> &Target;
    /// Its limits.
    fn limits(&self) -> &Limits;
    /// Compiler and driver versions; part of every cache key.
    fn toolchain(&self) -> String;
    /// The source language this backend compiles (`cuda`, `hip`, `wgsl`).
    fn language(&self) -> &'static str;
    /// How [`Backend::time`] measures.
    fn timing_method(&self) -> TimingMethod;
    /// Facts for the database's environment record (driver, adapter, ...).
    fn environment(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Compiles one config. Called concurrently from worker threads.
    fn compile(&self, req: &CompileRequest<'_>) -> Result<Compiled<Self::Kernel>, BackendError>;

    /// Allocates device memory for a problem and uploads its initial data.
    fn workspace(&self, problem: &ProblemData) -> Result<Self::Workspace, BackendError>;

    /// Restores every input and read-write buffer to its initial data; with `poison`, fills
    /// write-only outputs with the poison pattern (all bits set).
    fn reset(&self, ws: &mut Self::Workspace, poison: bool) -> Result<(), BackendError>;

    /// Launches `req.launches` times and returns each launch's time in seconds.
    fn time(&self, ws: &mut Self::Workspace, kernel: &Self::Kernel, launch: &Launch, req: &TimeRequest) -> Result<Vec<f64>, BackendError>;

    /// Reads every buffer back, in argument order.
    fn read_outputs(&self, ws: &mut Self::Workspace) -> Result<Vec<HostBuffer>, BackendError>;

    /// Poisons write-only outputs and restores the inputs, launches once, reads back and compares
    /// with the reference; returns the times of the launches it made (the tuner uses them to
    /// race clearly slow configs out without further launches). A backend that runs kernels
    /// elsewhere, or can compare on the device, overrides this to avoid shipping every output
    /// back to the host.
    fn verify(&self, ws: &mut Self::Workspace, kernel: &Self::Kernel, launch: &Launch, req: &VerifyRequest<'_>) -> Result<Vec<f64>, BackendError> {
        self.reset(ws, true)?;
        let t = self.time(ws, kernel, launch, &TimeRequest { launches: 1, flush: L2Flush::Off, timeout: req.timeout })?;
        let outs = self.read_outputs(ws)?;
        req.check(&outs)?;
        self.reset(ws, false)?;
        Ok(t)
    }

    /// After [`BackendError::DeviceLost`]: make the device usable again (a fresh context),
    /// so that a new workspace can be allocated and kernels launched. Kernels compiled before
    /// must stay usable (the backend reloads them as needed).
    fn recover(&self) -> Result<(), BackendError> {
        Err(BackendError::DeviceLost("this backend cannot recover a lost device".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::KernelSource;

    fn defines(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn a_templated_name_instantiates_with_the_configs_values() {
        let k = KernelSource::new("matmul <BM, BN,float, Tile<BK>, BM_X>", "cuda", "");
        assert_eq!(k.entry(), "matmul");
        let d = defines(&[("BM", "64"), ("BN", "32"), ("BK", "16")]);
        // Whole identifiers only: BM_X and float are left alone.
        assert_eq!(k.instance(&d).unwrap(), "matmul<64, 32,float, Tile<16>, BM_X>");
        let plain = KernelSource::new("triad", "cuda", "");
        assert_eq!(plain.entry(), "triad");
        assert_eq!(plain.instance(&d), None);
    }

    #[test]
    fn kernel_names_are_checked() {
        for ok in ["triad", "_k2", "matmul<BM, BN, float>", "k<Tile<8>, 4>", "k <A> "] {
            assert_eq!(KernelSource::check_name(ok), Ok(()), "{ok}");
        }
        for (bad, says) in [
            ("", "not a kernel name"),
            ("2fast", "not a kernel name"),
            ("my kernel", "not a kernel name"),
            ("k<A", "not closed"),
            ("k<A>>", "text after"),
            ("k<A> x", "text after"),
            ("k<>", "empty"),
        ] {
            let e = KernelSource::check_name(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
