//! A job with every expression compiled ("prepared"): the search space, launch geometry,
//! resource estimates, metrics and the problem data, evaluated per config.

use crate::plan::prune::Estimate;
use crate::space::config::Config;
use crate::space::restrict::SearchSpace;
use crate::spec::error::SpecError;
use crate::spec::expr::Expr;
use crate::spec::job::ArgKind;
use crate::spec::job::{Compat, TuneJob};
use crate::spec::key::ProblemKey;
use crate::spec::problem::ArgData;
use crate::spec::problem::HostBuffer;
use crate::spec::problem::ProblemData;
use crate::spec::problem::{Access, Init};
use crate::spec::value::Value;
use serde::{Deserialize, Serialize};
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

/// A job with every expression compiled.
pub struct Prepared {
    /// The search space (parameters + restrictions, sizes as constants).
    pub space: SearchSpace,
    names_len: usize,
    grid: [Expr; 3],
    block: [Expr; 3],
    extent: Option<([Expr; 3], [Expr; 3])>,
    shared_mem: Option<Expr>,
    res_shared: Option<Expr>,
    res_regs: Option<Expr>,
    tile: Option<[Expr; 2]>,
    dims: Option<[Expr; 2]>,
    flops: Option<Expr>,
    bytes: Option<Expr>,
    sizes: Vec<(String, Value)>,
    size_defines: bool,
    compat: Compat,
    /// The problem's key.
    pub key: ProblemKey,
    /// Host data of the arguments (empty from [`Prepared::without_data`]), shared: a worker
    /// process's workspace keeps it to start a fresh worker, without a copy.
    pub data: std::sync::Arc<ProblemData>,
    /// Each argument's size or value.
    pub layout: Vec<ArgLayout>,
    /// The default config.
    pub default: Config,
    /// Whether the default config satisfies the restrictions.
    pub default_valid: bool,
    /// Whether the job declared a default (an undeclared one is the first valid config).
    pub default_declared: bool,
    /// A generated job's candidate list (see [`Prepared::with_candidates`]).
    pub explicit: Option<Vec<Config>>,
}

impl Prepared {
    /// Compiles a job's expressions; errors name the job's origin and the field.
    pub fn new(job: &TuneJob) -> Result<Prepared, SpecError> {
        Prepared::with_candidates(job, None)
    }

    /// Like [`Prepared::new`], for a generated job: `explicit` is the candidate list (the class
    /// default first) that [`crate::plan::expand`] made, and `job.params` the values in it.
    pub fn with_candidates(job: &TuneJob, explicit: Option<Vec<Config>>) -> Result<Prepared, SpecError> {
        Prepared::build(job, explicit, true)
    }

    /// Like [`Prepared::with_candidates`] but without making the problem's host data (`data`
    /// stays empty; `layout` describes it): what inspecting a spec needs.
    pub fn without_data(job: &TuneJob, explicit: Option<Vec<Config>>) -> Result<Prepared, SpecError> {
        Prepared::build(job, explicit, false)
    }

    /// Makes the problem's host data of a [`Prepared::without_data`] (for instance once its
    /// sizes were checked against the device).
    pub fn make_data(&mut self, job: &TuneJob) -> Result<(), SpecError> {
        self.data = std::sync::Arc::new(problem_data(job, &self.layout)?);
        Ok(())
    }

    /// The buffers' names and sizes in bytes.
    pub fn buffer_sizes(&self) -> Vec<(&str, u64)> {
        self.layout.iter().filter(|a| matches!(a.kind, LayoutKind::Buffer { .. })).map(|a| (a.name.as_str(), a.bytes())).collect()
    }

    fn build(job: &TuneJob, explicit: Option<Vec<Config>>, with_data: bool) -> Result<Prepared, SpecError> {
        let err = |field: &str, message: String| SpecError { file: job.origin.clone(), field: field.into(), message };
        let space = SearchSpace::new(job.params.clone(), &job.restrictions, job.sizes.clone()).map_err(|e| match &e {
            crate::space::error::SpaceError::Restriction { index, error } => err(&format!("restrictions[{index}]"), error.to_string()),
            other => err("params", other.to_string()),
        })?;
        let names: Vec<&str> = job.params.iter().map(|p| p.name.as_str()).chain(job.sizes.iter().map(|(n, _)| n.as_str())).collect();
        let ce = |field: &str, text: &str| Expr::compile(text, &names).map_err(|e| err(field, e.to_string()));
        let three = |field: &str, t: &[String; 3]| -> Result<[Expr; 3], SpecError> {
            Ok([ce(&format!("{field}[0]"), &t[0])?, ce(&format!("{field}[1]"), &t[1])?, ce(&format!("{field}[2]"), &t[2])?])
        };
        let opt = |field: &str, t: &Option<String>| t.as_deref().map(|t| ce(field, t)).transpose();
        let two = |field: &str, t: &Option<[String; 2]>| -> Result<Option<[Expr; 2]>, SpecError> {
            t.as_ref().map(|t| Ok([ce(&format!("{field}[0]"), &t[0])?, ce(&format!("{field}[1]"), &t[1])?])).transpose()
        };
        let layout = layout(job)?;
        let data = std::sync::Arc::new(if with_data { problem_data(job, &layout)? } else { ProblemData::default() });
        let key = problem_key(job)?;
        let (default, default_valid) = default_config(job, &space, explicit.as_deref())?;
        Ok(Prepared {
            grid: three("launch.grid", &job.grid)?,
            extent: match &job.extent {
                Some(e) => Some((three("launch.problem_size", &e.size)?, three("launch.grid_div", &e.per_block)?)),
                None => None,
            },
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
            compat: job.compat,
            space,
            key,
            data,
            layout,
            default,
            default_valid,
            default_declared: job.default.is_some() || explicit.is_some(),
            explicit,
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
        let first = self.space.params().len();
        let dim = |e: &Expr, what: &str| -> Result<u32, String> {
            let v = e.eval_i64(&s).map_err(|x| format!("{what} `{e}`: {x}{}", sizes_at_fault(e, &self.sizes, first)))?;
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

    /// The index extent a config's launch covers, where the job gives a problem size: the
    /// problem size and the elements the grid covers, per dimension (x, y, z).
    pub fn extent(&self, cfg: &Config, launch: &Launch) -> Option<([u64; 3], [u64; 3])> {
        let (size, per_block) = self.extent.as_ref()?;
        let s = self.slots(cfg);
        let mut out = ([1u64; 3], [1u64; 3]);
        for d in 0..3 {
            out.0[d] = u64::try_from(size[d].eval_i64(&s).ok()?).ok()?;
            out.1[d] = (launch.grid[d] as u64).checked_mul(u64::try_from(per_block[d].eval_i64(&s).ok()?).ok()?)?;
        }
        Some(out)
    }

    /// A config's launch and estimate when it fits a device of `limits` before compiling
    /// ([`crate::plan::prune::prune_before`]), or why it does not (a launch or estimate that
    /// cannot be computed is a geometry reason): what a tune's candidates and `check
    /// --target`'s forecast both ask.
    pub fn fits(
        &self,
        cfg: &Config,
        limits: &crate::limits::Limits,
        opts: &crate::spec::settings::PruneOptions,
    ) -> Result<(Launch, Estimate), crate::plan::prune::PruneReason> {
        let (launch, estimate) =
            self.launch(cfg).and_then(|l| self.estimate(cfg, &l).map(|e| (l, e))).map_err(|message| crate::plan::prune::PruneReason::Geometry { message })?;
        crate::plan::prune::prune_before(limits, &estimate, opts)?;
        Ok((launch, estimate))
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
        Ok(Estimate {
            block: launch.block,
            grid: launch.grid,
            shared_bytes: extra + launch.shared_mem_bytes as u64,
            dynamic_shared_bytes: launch.shared_mem_bytes as u64,
            regs_per_thread: regs,
            tile,
        })
    }

    /// FLOPs and bytes of a config's launch, where the job gives formulas.
    pub fn metrics(&self, cfg: &Config) -> (Option<f64>, Option<f64>) {
        let s = self.slots(cfg);
        (self.flops.as_ref().and_then(|e| e.eval_f64(&s).ok()), self.bytes.as_ref().and_then(|e| e.eval_f64(&s).ok()))
    }

    /// Access of each buffer argument, in order.
    pub fn buffer_access(&self) -> Vec<Access> {
        self.layout
            .iter()
            .filter_map(|a| match a.kind {
                LayoutKind::Buffer { access, .. } => Some(access),
                LayoutKind::Scalar { .. } => None,
            })
            .collect()
    }

    /// By-value scalar arguments and their values.
    pub fn scalars(&self) -> Vec<(String, Value)> {
        self.layout
            .iter()
            .filter_map(|a| match &a.kind {
                LayoutKind::Scalar { value } => Some((a.name.clone(), value.clone())),
                LayoutKind::Buffer { .. } => None,
            })
            .collect()
    }

    /// Defines for a config launched as `launch`: its parameters, then the problem sizes when
    /// asked; with [`Compat::KernelTuner`], Kernel Tuner's set instead (see [`Compat`]).
    pub fn defines(&self, cfg: &Config, launch: &Launch) -> Vec<(String, String)> {
        let kt = self.compat == Compat::KernelTuner;
        let mut d: Vec<(String, String)> = cfg.defines().filter(|(k, _)| !(kt && is_unroll_factor(k))).map(|(k, v)| (k.to_string(), v)).collect();
        if self.size_defines {
            d.extend(self.sizes.iter().map(|(k, v)| (k.clone(), v.to_source())));
        }
        if kt {
            for (i, axis) in ["x", "y", "z"].iter().enumerate() {
                d.push((format!("grid_size_{axis}"), launch.grid[i].to_string()));
                let name = format!("block_size_{axis}");
                if cfg.get(&name).is_none() {
                    d.push((name, launch.block[i].to_string()));
                }
            }
            d.push(("kernel_tuner".into(), "1".into()));
        }
        d
    }

    /// The source a config compiles: `code` itself, except under [`Compat::KernelTuner`] with
    /// `loop_unroll_factor*` parameters, which Kernel Tuner turns into `constexpr int NAME =
    /// VALUE;` before the code (a `#pragma unroll` argument is not macro-expanded), or, for 0,
    /// into no unroll hint at all: the `#pragma unroll NAME` lines are blanked (line numbers in
    /// compiler messages stay the file's).
    pub fn code<'a>(&self, cfg: &Config, code: &'a str) -> std::borrow::Cow<'a, str> {
        if self.compat != Compat::KernelTuner {
            return std::borrow::Cow::Borrowed(code);
        }
        let factors: Vec<(&str, String)> = cfg.params.iter().filter(|(k, _)| is_unroll_factor(k)).map(|(k, v)| (k.as_str(), v.to_source())).collect();
        if factors.is_empty() {
            return std::borrow::Cow::Borrowed(code);
        }
        let mut prefix = String::new();
        let mut zero = Vec::new();
        for (k, v) in &factors {
            if v == "0" {
                zero.push(*k);
            } else {
                prefix.push_str(&format!("constexpr int {k} = {v};\n"));
            }
        }
        prefix.push_str("#line 1\n");
        let mut out = prefix;
        for line in code.split_inclusive('\n') {
            let pragma = line.trim_start().strip_prefix("#pragma").map(str::trim_start).and_then(|r| r.strip_prefix("unroll")).map(str::trim);
            if pragma.is_some_and(|arg| zero.iter().any(|z| arg.split(|c: char| !(c.is_alphanumeric() || c == '_')).next() == Some(*z))) {
                out.push_str(if line.ends_with('\n') { "\n" } else { "" });
            } else {
                out.push_str(line);
            }
        }
        std::borrow::Cow::Owned(out)
    }
}

/// Reads a spec (TOML or T1) and compiles every expression of every problem (see [`check`]).
pub fn load(path: &std::path::Path) -> Result<crate::spec::file::Spec, SpecError> {
    load_with(path, Default::default())
}

/// [`load`] with options.
pub fn load_with(path: &std::path::Path, opts: crate::spec::file::LoadOptions) -> Result<crate::spec::file::Spec, SpecError> {
    let spec = crate::spec::file::Spec::load_with(path, opts)?;
    check(&spec)?;
    Ok(spec)
}

/// Compiles every expression of every problem of `spec` (restrictions, launch geometry,
/// argument sizes and values, metrics) and evaluates what depends on sizes only, so that a bad
/// one is reported, with its file and field, before any device work.
pub fn check(spec: &crate::spec::file::Spec) -> Result<(), SpecError> {
    // Expected outputs' files (verify.expected, `--reference NAME=FILE`) that are not there are
    // said before any device work, as buffers' own files are (their contents are checked
    // against each problem's when its data are made).
    if let crate::spec::job::Reference::Expected(files) = &spec.verification().reference {
        for (name, init) in files {
            if let crate::spec::problem::Init::File { path } = init {
                let field = format!("verify.expected.{name}");
                let message = match std::fs::metadata(path) {
                    Ok(m) if m.is_dir() => format!("{} is a folder; name the file of `{name}`'s expected contents (.npy, or raw elements)", path.display()),
                    Ok(_) => continue,
                    Err(e) => format!("{}: cannot read: {e}", path.display()),
                };
                return Err(SpecError { file: spec.path.display().to_string(), field, message });
            }
        }
    }
    for (suffix, mut job) in spec.validation_jobs() {
        // As a tune compares them (a name of expected outputs that is no buffer is said here).
        job.verify.compare_what_is_expected();
        Prepared::without_data(&job, None).map_err(|mut e| {
            e.field.push_str(&suffix);
            e
        })?;
    }
    Ok(())
}

/// A job's `SpecError` maker.
fn spec_err(job: &TuneJob) -> impl Fn(&str, String) -> SpecError + '_ {
    move |field: &str, message: String| SpecError { file: job.origin.clone(), field: field.into(), message }
}

/// The problem's sizes that `e` reads (from slot `first` on) and that are no whole number, said
/// beside the error of evaluating it (`` (the problem's size `M` is 1.5, no whole number: …) ``):
/// the value at fault is in `[[problems]]` or `--key`, not in the field whose expression failed.
/// Empty when every size it reads is an integer.
fn sizes_at_fault(e: &Expr, sizes: &[(String, Value)], first: usize) -> String {
    let odd: Vec<String> = e
        .vars_used()
        .iter()
        .filter_map(|&i| sizes.get(i.checked_sub(first)?))
        .filter_map(|(n, v)| match v {
            Value::Int(_) | Value::Bool(_) => None,
            Value::Float(_) => Some(format!("`{n}` is {v}")),
            Value::Str(s) => Some(format!("`{n}` is the string '{s}'")),
        })
        .collect();
    match odd.len() {
        0 => String::new(),
        1 => format!(" (the problem's size {}, no whole number: give it one in `[[problems]]` or `--key`)", odd[0]),
        _ => format!(" (the problem's sizes {}, no whole numbers: give them ones in `[[problems]]` or `--key`)", odd.join(", ")),
    }
}

/// One argument's shape, evaluated from the job's expressions over its sizes, before any data
/// is made.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ArgLayout {
    /// The argument's name.
    pub name: String,
    /// Element type.
    pub dtype: crate::spec::problem::DType,
    /// What it is.
    #[serde(flatten)]
    pub kind: LayoutKind,
}

/// A buffer's size and use, or a scalar's value.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LayoutKind {
    /// A buffer.
    Buffer {
        /// Elements.
        elements: u64,
        /// Bytes (checked against overflow).
        bytes: u64,
        /// How the kernel uses it.
        access: crate::spec::problem::Access,
        /// Where it lives.
        memory: crate::spec::problem::Memory,
    },
    /// A by-value scalar.
    Scalar {
        /// Its value.
        value: Value,
    },
}

impl ArgLayout {
    /// Bytes of device memory a buffer takes (0 for a scalar).
    pub fn bytes(&self) -> u64 {
        match self.kind {
            LayoutKind::Buffer { bytes, .. } => bytes,
            LayoutKind::Scalar { .. } => 0,
        }
    }
}

/// Every argument's size or value, from expressions over the job's sizes; sizes are checked
/// against overflow and [`crate::spec::t1::MAX_BUFFER_BYTES`], so nothing is allocated yet.
pub fn layout(job: &TuneJob) -> Result<Vec<ArgLayout>, SpecError> {
    let err = spec_err(job);
    let size_names: Vec<&str> = job.sizes.iter().map(|(n, _)| n.as_str()).collect();
    let size_vals: Vec<Value> = job.sizes.iter().map(|(_, v)| v.clone()).collect();
    let mut out = Vec::new();
    for (i, a) in job.args.iter().enumerate() {
        let field = format!("args[{i}] ({})", a.name);
        match &a.kind {
            ArgKind::Buffer { dtype, len, access, memory, .. } => {
                let f = format!("{field}.len");
                let elements = match parameters_named(job, len) {
                    // A buffer is made once for every config: a parameter stands for its list of
                    // values, as Kernel Tuner binds them in a T1 file's `Size` (`max(R)`).
                    named if !named.is_empty() => len_over_parameters(job, len, &named).map_err(|m| err(&f, m))?,
                    _ => {
                        let e = Expr::compile(len, &size_names).map_err(|e| err(&f, e.to_string()))?;
                        let n = e.eval_i64(&size_vals).map_err(|x| err(&f, format!("{x}{}", sizes_at_fault(&e, &job.sizes, 0))))?;
                        u64::try_from(n).map_err(|_| err(&f, format!("length {n} is negative")))?
                    }
                };
                let bytes = elements.checked_mul(dtype.size() as u64).filter(|&b| b <= crate::spec::t1::MAX_BUFFER_BYTES).ok_or_else(|| {
                    err(
                        &f,
                        format!(
                            "{elements} elements of {} bytes exceed the {} a buffer may have",
                            dtype.size(),
                            crate::spec::problem::human_bytes(crate::spec::t1::MAX_BUFFER_BYTES)
                        ),
                    )
                })?;
                out.push(ArgLayout { name: a.name.clone(), dtype: *dtype, kind: LayoutKind::Buffer { elements, bytes, access: *access, memory: *memory } });
            }
            ArgKind::Scalar { dtype, value } => {
                let f = format!("{field}.value");
                let e = Expr::compile(value, &size_names).map_err(|e| err(&f, e.to_string()))?;
                let v = e.eval(&size_vals).map_err(|x| err(&f, format!("{x}{}", sizes_at_fault(&e, &job.sizes, 0))))?;
                out.push(ArgLayout { name: a.name.clone(), dtype: *dtype, kind: LayoutKind::Scalar { value: v } });
            }
        }
    }
    let buffers: Vec<&str> = job.args.iter().filter(|a| matches!(a.kind, ArgKind::Buffer { .. })).map(|a| a.name.as_str()).collect();
    for o in &job.verify.outputs {
        if !buffers.contains(&o.as_str()) {
            // Expected outputs name the outputs they hold (verify.expected, or `--reference
            // NAME=FILE` on the command line, where `NAME` may be mistyped).
            let given = matches!(&job.verify.reference, crate::spec::job::Reference::Expected(f) if f.iter().any(|(n, _)| n == o));
            let by = if given { "; expected outputs (verify.expected, or --reference NAME=FILE) name it: give each file for an output buffer" } else { "" };
            return Err(err("verify.outputs", format!("`{o}` is not a buffer argument (buffers: {}){by}", buffers.join(", "))));
        }
    }
    // A setting for one output (how it is compared, how many of its elements may differ) must
    // name an output the verification compares: else it would be silently unused.
    let compared_output = |o: &str, what: &str, flag: &str| -> Result<(), String> {
        let access = job.args.iter().find_map(|a| match &a.kind {
            ArgKind::Buffer { access, .. } if a.name == o => Some(*access),
            _ => None,
        });
        let Some(access) = access else {
            return Err(format!("`{o}` is not a buffer argument (buffers: {}); name an output there or in {flag}", buffers.join(", ")));
        };
        if crate::spec::job::compares(&job.verify.outputs, o, access) {
            return Ok(());
        }
        let why = if job.verify.outputs.is_empty() {
            "it is an input (access = \"read\"), and only outputs are compared".to_string()
        } else {
            format!("only {} are (verify.outputs, or the expected outputs given)", job.verify.outputs.join(", "))
        };
        Err(format!("`{o}` {what}, but it is not compared at all: {why}"))
    };
    // A tolerance for a name that is no buffer (a typo, or an output renamed since), or for a
    // buffer that is not compared, would be silently unused.
    for (o, _) in &job.verify.per_output {
        compared_output(o, "has a tolerance of its own", "--atol/--rtol NAME=VALUE").map_err(|m| err("verify.tolerances", m))?;
    }
    for (o, how) in &job.verify.compare {
        compared_output(o, &format!("is to be compared {}", how.describe()), &format!("--compare NAME={}", how.word()))
            .map_err(|m| err("verify.compare", m))?;
    }
    // An allowance names an output compared element by element (a sum or a sorted comparison
    // has its own tolerance rule).
    for (o, a) in &job.verify.mismatches {
        let field = format!("verify.mismatches.{o}");
        compared_output(o, &format!("may differ in up to {}", a.describe()), "--mismatches NAME=COUNT").map_err(|m| err(&field, m))?;
        if let Some(how) = job.verify.compare_of(o) {
            return Err(err(
                &field,
                format!(
                    "`{o}` is compared {}, which has its own tolerance; an allowance of elements applies to outputs compared element by element",
                    how.describe()
                ),
            ));
        }
    }
    Ok(out)
}

/// The tunable parameters `text` names (as whole identifiers), in declaration order.
fn parameters_named<'j>(job: &'j TuneJob, text: &str) -> Vec<&'j str> {
    let words: std::collections::HashSet<&str> = text.split(|c: char| !(c.is_alphanumeric() || c == '_')).collect();
    job.params.iter().map(|p| p.name.as_str()).filter(|n| words.contains(n)).collect()
}

/// A buffer length that names parameters: each stands for its list of values and each problem
/// size for its value (`(nx + 2*max(R)) * (ny + 2*max(R))`). One that uses a parameter as a
/// number is told to take the largest.
fn len_over_parameters(job: &TuneJob, text: &str, named: &[&str]) -> Result<u64, String> {
    use crate::spec::pyvalues::{eval_count, PyValue};
    let mut env: Vec<(&str, PyValue)> = job.sizes.iter().map(|(n, v)| (n.as_str(), PyValue::from_value(v))).collect();
    env.extend(job.params.iter().map(|p| (p.name.as_str(), PyValue::List(p.values.iter().map(PyValue::from_value).collect()))));
    eval_count(text, &env).map_err(|e| {
        let p = named[0];
        let values: Vec<String> = job.params.iter().find(|q| q.name == p).map(|q| q.values.iter().map(|v| v.to_string()).collect()).unwrap_or_default();
        format!(
            "{e}: `{p}` is a tunable parameter ({}), and a buffer is made once for every config, so in a length it stands for its list of values, as in Kernel Tuner: size the buffer for every config with max({p})",
            values.join(", ")
        )
    })
}

/// The host data of the job's arguments, laid out by [`layout`].
fn problem_data(job: &TuneJob, layout: &[ArgLayout]) -> Result<ProblemData, SpecError> {
    let err = spec_err(job);
    let mut args = Vec::new();
    for (i, (a, l)) in job.args.iter().zip(layout).enumerate() {
        match (&a.kind, &l.kind) {
            (ArgKind::Buffer { init, .. }, LayoutKind::Buffer { elements, access, memory, .. }) => {
                let n = usize::try_from(*elements).map_err(|_| err(&format!("args[{i}] ({}).len", a.name), "too large for this machine".into()))?;
                // A file's contents that disagree with the length are the file's to fix, or the
                // length's: the message names both.
                let field = if matches!(init, Init::File { .. }) { "file" } else { "len" };
                let b = HostBuffer::try_new(&a.name, l.dtype, n, init, *access).map_err(|m| err(&format!("args[{i}] ({}).{field}", a.name), m))?;
                args.push(ArgData::Buffer(b.in_memory(*memory)));
            }
            (_, LayoutKind::Scalar { value }) => args.push(ArgData::Scalar { name: a.name.clone(), dtype: l.dtype, value: value.clone() }),
            _ => unreachable!("layout follows the arguments"),
        }
    }
    Ok(ProblemData { args })
}

/// The problem key: the sizes the job names in `key` (every size when it names none).
fn problem_key(job: &TuneJob) -> Result<ProblemKey, SpecError> {
    let err = spec_err(job);
    let fields: Vec<(String, Value)> = if job.key.is_empty() {
        job.sizes.clone()
    } else {
        job.key
            .iter()
            .map(|k| {
                job.sizes.iter().find(|(n, _)| n == k).cloned().ok_or_else(|| {
                    err("key", format!("`{k}` is not a problem size; sizes are: {}", job.sizes.iter().map(|s| s.0.as_str()).collect::<Vec<_>>().join(", ")))
                })
            })
            .collect::<Result<_, _>>()?
    };
    Ok(ProblemKey::new(&fields, job.bucket))
}

/// The default config and whether it satisfies the restrictions: the generated list's first,
/// else the declared values (missing parameters take their first value), else the first valid
/// config.
fn default_config(job: &TuneJob, space: &SearchSpace, explicit: Option<&[Config]>) -> Result<(Config, bool), SpecError> {
    let err = spec_err(job);
    if let Some(d) = &job.default {
        for (n, v) in d {
            let Some(p) = job.params.iter().find(|p| &p.name == n) else {
                return Err(err("default", format!("`{n}` is not a parameter")));
            };
            if explicit.is_none() && !p.values.iter().any(|x| x == v || x.as_f64().zip(v.as_f64()).is_some_and(|(a, b)| a == b)) {
                let values = p.values.iter().take(16).map(|x| x.to_string()).collect::<Vec<_>>().join(", ");
                let more = if p.values.len() > 16 { ", ..." } else { "" };
                return Err(err("default", format!("`{n} = {v}` is not among its values [{values}{more}]; give one of them")));
            }
        }
    }
    if let Some(list) = explicit {
        // A generated list starts with the class default.
        return Ok((list.first().cloned().unwrap_or_default(), true));
    }
    let mut default = Config::default();
    for p in &job.params {
        let v = job.default.as_ref().and_then(|d| d.iter().find(|(n, _)| n == &p.name).map(|(_, v)| v.clone()));
        default.params.push((p.name.clone(), v.unwrap_or_else(|| p.values[0].clone())));
    }
    let restrictions = |e: crate::space::error::SpaceError| err("restrictions", e.to_string());
    let valid = match space.coords_of(&default) {
        Some(c) => space.is_valid(&c).map_err(restrictions)?,
        None => false,
    };
    Ok(match () {
        _ if valid => (default, true),
        // No declared default: the first valid config.
        _ if job.default.is_none() => {
            let mut it = space.iter_coords();
            match it.next() {
                Some(c) => (space.config_at(&c), true),
                None => match it.take_error() {
                    Some(e) => return Err(restrictions(e)),
                    None => (default, false),
                },
            }
        }
        _ => (default, false),
    })
}

/// Kernel Tuner's name rule for unroll factors (`loop_unroll_factor`, `loop_unroll_factor_t`).
fn is_unroll_factor(name: &str) -> bool {
    name.contains("loop_unroll_factor")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped matmul with its problem's `M` replaced by `value`: the error of preparing it
    /// (`Err`) or the geometry of its default config.
    fn matmul_with_m(value: &str) -> Result<Result<Launch, String>, String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/matmul");
        let text = std::fs::read_to_string(dir.join("matmul.toml")).unwrap().replacen("M = 512", &format!("M = {value}"), 1);
        let spec = crate::spec::Spec::parse(&text, &dir.join("matmul.toml")).unwrap();
        let job = spec.job("wgsl", 0).unwrap();
        let prep = Prepared::without_data(&job, None).map_err(|e| e.to_string())?;
        let default = prep.default.clone();
        Ok(prep.launch(&default))
    }

    /// An expected output named for an argument that is no buffer (`--reference N=FILE`) says
    /// the buffers there are and where the name came from.
    #[test]
    fn an_expected_output_for_no_buffer_names_the_buffers() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/triad");
        let spec = crate::spec::Spec::parse(&std::fs::read_to_string(dir.join("triad.toml")).unwrap(), &dir.join("triad.toml")).unwrap();
        let mut job = spec.job("wgsl", 0).unwrap();
        job.verify.outputs = vec!["N".into()];
        let e = Prepared::without_data(&job, None).err().expect("an error").to_string();
        assert!(e.contains("verify.outputs: `N` is not a buffer argument (buffers: x, y)") && !e.contains("--reference"), "{e}");
        job.verify.reference = crate::spec::job::Reference::Expected(vec![("N".into(), Init::File { path: "y.bin".into() })]);
        let e = Prepared::without_data(&job, None).err().expect("an error").to_string();
        assert!(e.contains("(buffers: x, y); expected outputs (verify.expected, or --reference NAME=FILE) name it"), "{e}");
    }

    /// A problem size that is no whole number is named where an expression that reads it fails
    /// (a buffer's length, the grid): the field that failed is not where the fault is.
    #[test]
    fn a_size_that_is_no_whole_number_is_named_where_it_is_read() {
        let e = matmul_with_m("\"x\"").unwrap_err();
        assert!(e.contains("args[0] (A).len") && e.contains("the problem's size `M` is the string 'x', no whole number: give it one in `[[problems]]`"), "{e}");
        let e = matmul_with_m("1.5").unwrap().unwrap_err();
        assert!(
            e.starts_with("grid.y `div_ceil(M, WG_Y * TM)`: ")
                && e.ends_with("(the problem's size `M` is 1.5, no whole number: give it one in `[[problems]]` or `--key`)"),
            "{e}"
        );
        // Whole sizes: no such words (and the geometry is made).
        assert!(matmul_with_m("512").unwrap().is_ok());
        let e = matmul_with_m("-4").unwrap_err();
        assert!(e.contains("length -2048 is negative") && !e.contains("problem's size"), "{e}");
    }
}
