//! A tuning job as plain data, and its compiled ("prepared") form.
//!
//! A [`TuneJob`] holds expressions as text so it is easy to build from a spec file, a T1 file or
//! code. [`Prepared::new`] compiles every expression once, naming the field of any that fails,
//! and then evaluates launch geometry, resource estimates, metrics and problem data per config.

use crate::backend::{KernelSource, Launch};
use crate::config::Config;
use crate::expr::Expr;
use crate::key::{Bucket, ProblemKey};
use crate::problem::{Access, ArgData, DType, HostBuffer, Init, ProblemData};
use crate::prune::Estimate;
use crate::space::{Param, SearchSpace};
use crate::spec::SpecError;
use crate::value::Value;
use crate::verify::Tolerance;
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
    pub class: crate::generate::Class,
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
    /// An explicit candidate list (filled from `generate` at tune time); `params` then hold
    /// the values that occur in it.
    pub explicit: Option<Vec<Config>>,
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
            explicit: None,
        }
    }
}

/// A job with every expression compiled.
pub struct Prepared {
    /// The search space (parameters + restrictions, sizes as constants).
    pub space: SearchSpace,
    names_len: usize,
    grid: [Expr; 3],
    block: [Expr; 3],
    shared_mem: Option<Expr>,
    res_shared: Option<Expr>,
    res_regs: Option<Expr>,
    tile: Option<[Expr; 2]>,
    dims: Option<[Expr; 2]>,
    flops: Option<Expr>,
    bytes: Option<Expr>,
    sizes: Vec<(String, Value)>,
    size_defines: bool,
    /// The problem's key.
    pub key: ProblemKey,
    /// Host data of the arguments.
    pub data: ProblemData,
    /// The default config.
    pub default: Config,
    /// Whether the default config satisfies the restrictions.
    pub default_valid: bool,
    /// Whether the job declared a default (an undeclared one is the first valid config).
    pub default_declared: bool,
}

impl Prepared {
    /// Compiles a job's expressions; errors name the job's origin and the field.
    pub fn new(job: &TuneJob) -> Result<Prepared, SpecError> {
        let err = |field: &str, message: String| SpecError { file: job.origin.clone(), field: field.into(), message };
        let space = SearchSpace::new(job.params.clone(), &job.restrictions, job.sizes.clone()).map_err(|e| match &e {
            crate::space::SpaceError::Restriction { index, source } => err(&format!("restrictions[{index}]"), source.to_string()),
            other => err("params", other.to_string()),
        })?;
        let names: Vec<&str> = job.params.iter().map(|p| p.name.as_str()).chain(job.sizes.iter().map(|(n, _)| n.as_str())).collect();
        let size_names: Vec<&str> = job.sizes.iter().map(|(n, _)| n.as_str()).collect();
        let ce = |field: &str, text: &str| Expr::compile(text, &names).map_err(|e| err(field, e.to_string()));
        let three = |field: &str, t: &[String; 3]| -> Result<[Expr; 3], SpecError> {
            Ok([ce(&format!("{field}[0]"), &t[0])?, ce(&format!("{field}[1]"), &t[1])?, ce(&format!("{field}[2]"), &t[2])?])
        };
        let opt = |field: &str, t: &Option<String>| t.as_deref().map(|t| ce(field, t)).transpose();
        let two = |field: &str, t: &Option<[String; 2]>| -> Result<Option<[Expr; 2]>, SpecError> {
            t.as_ref().map(|t| Ok([ce(&format!("{field}[0]"), &t[0])?, ce(&format!("{field}[1]"), &t[1])?])).transpose()
        };
        // Problem data from expressions over sizes only.
        let size_vals: Vec<Value> = job.sizes.iter().map(|(_, v)| v.clone()).collect();
        let mut args = Vec::new();
        for (i, a) in job.args.iter().enumerate() {
            let field = format!("args[{i}] ({})", a.name);
            match &a.kind {
                ArgKind::Buffer { dtype, len, init, access } => {
                    let e = Expr::compile(len, &size_names).map_err(|e| err(&format!("{field}.len"), e.to_string()))?;
                    let n = e.eval_i64(&size_vals).map_err(|e| err(&format!("{field}.len"), e.to_string()))?;
                    if n < 0 {
                        return Err(err(&format!("{field}.len"), format!("length {n} is negative")));
                    }
                    args.push(ArgData::Buffer(HostBuffer::new(&a.name, *dtype, n as usize, init, *access)));
                }
                ArgKind::Scalar { dtype, value } => {
                    let e = Expr::compile(value, &size_names).map_err(|e| err(&format!("{field}.value"), e.to_string()))?;
                    let v = e.eval(&size_vals).map_err(|e| err(&format!("{field}.value"), e.to_string()))?;
                    args.push(ArgData::Scalar { name: a.name.clone(), dtype: *dtype, value: v });
                }
            }
        }
        for o in &job.verify.outputs {
            if !job.args.iter().any(|a| &a.name == o && matches!(a.kind, ArgKind::Buffer { .. })) {
                return Err(err("verify.outputs", format!("`{o}` is not a buffer argument")));
            }
        }
        let key_fields: Vec<(String, Value)> = if job.key.is_empty() {
            job.sizes.clone()
        } else {
            job.key
                .iter()
                .map(|k| {
                    job.sizes
                        .iter()
                        .find(|(n, _)| n == k)
                        .cloned()
                        .ok_or_else(|| err("key", format!("`{k}` is not a problem size; sizes are: {}", size_names.join(", "))))
                })
                .collect::<Result<_, _>>()?
        };
        let key = ProblemKey::new(&key_fields, job.bucket);
        // The default config.
        let mut default = Config::default();
        if let Some(first) = job.explicit.as_ref().and_then(|e| e.first()) {
            // A generated list starts with the class default.
            default = first.clone();
        }
        for p in job.params.iter().filter(|_| job.explicit.is_none()) {
            let v = job.default.as_ref().and_then(|d| d.iter().find(|(n, _)| n == &p.name).map(|(_, v)| v.clone()));
            default.params.push((p.name.clone(), v.unwrap_or_else(|| p.values[0].clone())));
        }
        if let Some(d) = &job.default {
            for (n, _) in d {
                if !job.params.iter().any(|p| &p.name == n) {
                    return Err(err("default", format!("`{n}` is not a parameter")));
                }
            }
        }
        let mut default_valid = true;
        match space.coords_of(&default) {
            _ if job.explicit.is_some() => {}
            Some(c) if space.is_valid(&c) => {}
            _ if job.default.is_none() => {
                // No declared default: the first valid config.
                match space.iter_coords().next() {
                    Some(c) => default = space.config_at(&c),
                    None => default_valid = false,
                }
            }
            _ => default_valid = false,
        }
        Ok(Prepared {
            grid: three("launch.grid", &job.grid)?,
            block: three("launch.block", &job.block)?,
            shared_mem: opt("launch.shared_mem", &job.shared_mem)?,
            res_shared: opt("resources.shared_mem", &job.resources.shared_mem)?,
            res_regs: opt("resources.registers", &job.resources.registers)?,
            tile: two("resources.tile", &job.resources.tile)?,
            dims: two("resources.dims", &job.resources.dims)?,
            flops: opt("metrics.flops", &job.flops)?,
            bytes: opt("metrics.bytes", &job.bytes)?,
            names_len: names.len(),
            sizes: job.sizes.clone(),
            size_defines: job.size_defines,
            space,
            key,
            data: ProblemData { args },
            default,
            default_valid,
            default_declared: job.default.is_some() || job.explicit.is_some(),
        })
    }

    /// Slot values for a config: its parameters, then the sizes.
    pub fn slots(&self, cfg: &Config) -> Vec<Value> {
        let mut v: Vec<Value> = Vec::with_capacity(self.names_len);
        for p in self.space.params() {
            v.push(cfg.get(&p.name).cloned().unwrap_or(Value::Int(0)));
        }
        v.extend(self.sizes.iter().map(|(_, x)| x.clone()));
        v
    }

    /// Launch geometry of a config.
    pub fn launch(&self, cfg: &Config) -> Result<Launch, String> {
        let s = self.slots(cfg);
        let dim = |e: &Expr, what: &str| -> Result<u32, String> {
            let v = e.eval_i64(&s).map_err(|x| format!("{what} `{e}`: {x}"))?;
            u32::try_from(v).ok().filter(|&v| v > 0).ok_or_else(|| format!("{what} `{e}` = {v}, must be a positive 32-bit integer"))
        };
        let shared = match &self.shared_mem {
            Some(e) => {
                let v = e.eval_i64(&s).map_err(|x| format!("shared_mem `{e}`: {x}"))?;
                u32::try_from(v).map_err(|_| format!("shared_mem `{e}` = {v} is out of range"))?
            }
            None => 0,
        };
        Ok(Launch {
            grid: [dim(&self.grid[0], "grid.x")?, dim(&self.grid[1], "grid.y")?, dim(&self.grid[2], "grid.z")?],
            block: [dim(&self.block[0], "block.x")?, dim(&self.block[1], "block.y")?, dim(&self.block[2], "block.z")?],
            shared_mem_bytes: shared,
        })
    }

    /// The pre-compile estimate of a config.
    pub fn estimate(&self, cfg: &Config, launch: &Launch) -> Result<Estimate, String> {
        let s = self.slots(cfg);
        let num = |e: &Expr| e.eval_i64(&s).map_err(|x| format!("`{e}`: {x}"));
        let extra = self.res_shared.as_ref().map(num).transpose()?.unwrap_or(0).max(0) as u64;
        let regs = self.res_regs.as_ref().map(num).transpose()?.map(|r| r.max(0) as u32);
        let tile = match (&self.tile, &self.dims) {
            (Some(t), Some(d)) => Some(([num(&t[0])? as u64, num(&t[1])? as u64], [num(&d[0])? as u64, num(&d[1])? as u64])),
            _ => None,
        };
        Ok(Estimate { block: launch.block, grid: launch.grid, shared_bytes: extra + launch.shared_mem_bytes as u64, regs_per_thread: regs, tile })
    }

    /// FLOPs and bytes of a config's launch, where the job gives formulas.
    pub fn metrics(&self, cfg: &Config) -> (Option<f64>, Option<f64>) {
        let s = self.slots(cfg);
        (self.flops.as_ref().and_then(|e| e.eval_f64(&s).ok()), self.bytes.as_ref().and_then(|e| e.eval_f64(&s).ok()))
    }

    /// Access of each buffer argument, in order.
    pub fn buffer_access(&self) -> Vec<Access> {
        self.data.buffers().map(|b| b.access).collect()
    }

    /// By-value scalar arguments and their values.
    pub fn scalars(&self) -> Vec<(String, Value)> {
        self.data
            .args
            .iter()
            .filter_map(|a| match a {
                ArgData::Scalar { name, value, .. } => Some((name.clone(), value.clone())),
                _ => None,
            })
            .collect()
    }

    /// Defines for a config: parameters, then sizes when asked.
    pub fn defines(&self, cfg: &Config) -> Vec<(String, String)> {
        let mut d: Vec<(String, String)> = cfg.defines().map(|(k, v)| (k.to_string(), v)).collect();
        if self.size_defines {
            d.extend(self.sizes.iter().map(|(k, v)| (k.clone(), v.to_source())));
        }
        d
    }
}
