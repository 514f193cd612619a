//! Expanding a class-based job (`[roles]` in a spec) into an explicit candidate list for one
//! device: the vendor generator proposes configs of standard roles (`tile_m`, `num_warps`,
//! ...), the job's role expressions map them onto the kernel's own parameters, and the job's
//! restrictions and `top_k` apply to the mapped configs.

use crate::limits::Limits;
use crate::plan::error::PlanError;
use crate::plan::generate::{self, GenContext, Shape};
use crate::space::config::Config;
use crate::space::restrict::SearchSpace;
use crate::spec::error::SpecError;
use crate::spec::expr::Expr;
use crate::spec::job::{GenerateSpec, Param, TuneJob};
use crate::spec::settings::PruneOptions;
use crate::spec::value::Value;
use crate::target::Target;
use std::collections::{BTreeMap, HashSet};

/// The generator's roles, in the slot order role expressions see them.
const ROLES: &[&str] = &[
    "tile_m",
    "tile_n",
    "tile_k",
    "num_warps",
    "num_stages",
    "num_ctas",
    "group_m",
    "waves_per_eu",
    "matrix_instr_nonkdim",
    "threads",
    "occupancy",
    "vec",
    "warp_size",
    "sm_count",
];

/// A job ready to enumerate: for a class-based job, `params` hold the values that occur in the
/// generated list and `explicit` the list itself (default first).
#[derive(Clone, Debug)]
pub struct Expanded {
    /// The job (unchanged when it lists its own parameter values).
    pub job: TuneJob,
    /// The generated candidates, the class default first; `None` for a listed space.
    pub explicit: Option<Vec<Config>>,
    /// Configs the generator dropped, by reason.
    pub pruned: BTreeMap<String, usize>,
}

fn spec_err(job: &TuneJob, field: &str, message: String) -> PlanError {
    PlanError::Spec(SpecError { file: job.origin.clone(), field: field.into(), message })
}

/// Expands `job` for `target`; a job without `generate` passes through unchanged.
pub fn expand(job: &TuneJob, target: &Target, limits: &Limits) -> Result<Expanded, PlanError> {
    let Some(g) = &job.generate else { return Ok(Expanded { job: job.clone(), explicit: None, pruned: BTreeMap::new() }) };
    let ctx = GenContext { target, limits, class: g.class, shape: shape(job, g)?, elem_bytes: g.elem_bytes, prune: PruneOptions::default() };
    let gen = generate::generate(&ctx).map_err(|m| spec_err(job, "kernel.class", m))?;
    let mut pruned = gen.pruned_counts();
    let exprs = role_exprs(job, g)?;
    let ordered = std::iter::once(gen.default.clone()).chain(gen.candidates.iter().map(|c| c.0.clone()));
    let mut seen = HashSet::new();
    let mut configs: Vec<Config> = Vec::new();
    for rc in ordered {
        let Some(cfg) = map_roles(&rc, g, &exprs, limits) else {
            *pruned.entry("roles".into()).or_default() += 1;
            continue;
        };
        // Knobs no role maps onto the kernel (stages, clusters, ...) do not change it: configs
        // that differ only there are one kernel (maxnreg does reach the compiler).
        if seen.insert((cfg.params.clone(), cfg.knobs.maxnreg)) {
            configs.push(cfg);
        }
    }
    let params = mapped_params(g, &configs);
    restrict(job, &params, &mut configs, &mut pruned)?;
    if configs.is_empty() {
        return Err(PlanError::NoValidConfig(format!("the {} generator's configs all fail the spec's [roles] mapping or restrictions", gen.generator)));
    }
    if let Some(k) = g.top_k {
        let before = configs.len();
        configs.truncate(k.max(1));
        if before > configs.len() {
            *pruned.entry("model_top_k".into()).or_default() += before - configs.len();
        }
    }
    let mut out = job.clone();
    out.params = params;
    out.generate = None;
    Ok(Expanded { job: out, explicit: Some(configs), pruned })
}

/// The problem shape (m, n, k) from the job's shape expressions over its sizes.
fn shape(job: &TuneJob, g: &GenerateSpec) -> Result<Shape, PlanError> {
    let size_names: Vec<&str> = job.sizes.iter().map(|s| s.0.as_str()).collect();
    let size_vals: Vec<Value> = job.sizes.iter().map(|s| s.1.clone()).collect();
    let mut dims = [0u64; 3];
    for (i, e) in g.shape.iter().enumerate() {
        let field = format!("generate.shape[{i}]");
        let x = Expr::compile(e, &size_names).map_err(|m| spec_err(job, &field, m.to_string()))?;
        dims[i] = x.eval_i64(&size_vals).map_err(|m| spec_err(job, &field, m.to_string()))?.max(1) as u64;
    }
    Ok(Shape { m: dims[0], n: dims[1], k: dims[2] })
}

/// Each role expression, compiled over the roles and the parameters mapped before it.
fn role_exprs(job: &TuneJob, g: &GenerateSpec) -> Result<Vec<Expr>, PlanError> {
    let mut names: Vec<String> = ROLES.iter().map(|s| s.to_string()).collect();
    let mut exprs = Vec::new();
    for (p, e) in &g.roles {
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        exprs.push(Expr::compile(e, &refs).map_err(|m| spec_err(job, &format!("roles.{p}"), m.to_string()))?);
        names.push(p.clone());
    }
    Ok(exprs)
}

/// A generated config mapped onto the kernel's parameters; `None` when a role expression fails.
fn map_roles(rc: &Config, g: &GenerateSpec, exprs: &[Expr], limits: &Limits) -> Option<Config> {
    let mut slots: Vec<Value> = ROLES
        .iter()
        .map(|r| match *r {
            "warp_size" => Value::Int(limits.warp_size as i64),
            "sm_count" => Value::Int(limits.sm_count as i64),
            _ => rc.get(r).cloned().unwrap_or(Value::Int(0)),
        })
        .collect();
    let mut cfg = Config { params: vec![], knobs: rc.knobs.clone() };
    for ((p, _), e) in g.roles.iter().zip(exprs) {
        let v = e.eval_i64(&slots).ok()?;
        slots.push(Value::Int(v));
        cfg.params.push((p.clone(), Value::Int(v)));
    }
    Some(cfg)
}

/// The values each mapped parameter takes in the list, sorted.
fn mapped_params(g: &GenerateSpec, configs: &[Config]) -> Vec<Param> {
    g.roles
        .iter()
        .map(|(p, _)| {
            let mut vals: Vec<i64> = configs.iter().filter_map(|c| c.get_i64(p)).collect();
            vals.sort_unstable();
            vals.dedup();
            Param::new(p.clone(), vals)
        })
        .collect()
}

/// Drops mapped configs that break the job's restrictions (before the top-k cut).
fn restrict(job: &TuneJob, params: &[Param], configs: &mut Vec<Config>, pruned: &mut BTreeMap<String, usize>) -> Result<(), PlanError> {
    let space = SearchSpace::new(params.to_vec(), &job.restrictions, job.sizes.clone()).map_err(|e| spec_err(job, "restrictions", e.to_string()))?;
    let before = configs.len();
    let mut keep = Vec::with_capacity(configs.len());
    for c in configs.iter() {
        let ok = match space.coords_of(c) {
            Some(co) => space.is_valid(&co).map_err(|e| spec_err(job, "restrictions", e.to_string()))?,
            None => false,
        };
        keep.push(ok);
    }
    let mut k = keep.into_iter();
    configs.retain(|_| k.next().unwrap_or(false));
    if before > configs.len() {
        *pruned.entry("restrictions".into()).or_default() += before - configs.len();
    }
    Ok(())
}
