//! What `kerntune check` prints: a job's search space (cartesian size, valid count, the default
//! config and its launch) and its arguments' sizes, computed without a device and without
//! making the problem's data.

use crate::plan::expand::Expanded;
use crate::plan::prepare::{ArgLayout, Launch, Prepared};
use crate::space::config::Config;
use crate::spec::error::SpecError;
use crate::spec::job::TuneJob;
use crate::spec::value::Value;
use serde::Serialize;
use std::time::{Duration, Instant};

/// One parameter: its name, how many values, and the first few.
#[derive(Clone, Debug, Serialize)]
pub struct ParamSummary {
    /// Name.
    pub name: String,
    /// Number of values.
    pub count: usize,
    /// The values (at most 12).
    pub values: Vec<Value>,
}

/// A job's space and arguments.
#[derive(Clone, Debug, Serialize)]
pub struct SpaceSummary {
    /// The problem sizes.
    pub sizes: Vec<(String, Value)>,
    /// The parameters.
    pub params: Vec<ParamSummary>,
    /// Restrictions.
    pub restrictions: usize,
    /// Size of the cartesian product.
    #[serde(serialize_with = "as_string")]
    pub cartesian: u128,
    /// Valid configs (restrictions satisfied); a lower bound when `valid_complete` is false.
    pub valid: u64,
    /// Whether counting finished within its time.
    pub valid_complete: bool,
    /// Candidates a generator proposed (a class-based job), if any.
    pub generated: Option<usize>,
    /// The default config.
    pub default: Config,
    /// Whether it satisfies the restrictions.
    pub default_valid: bool,
    /// Its launch.
    pub default_launch: Option<Launch>,
    /// Why it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_launch_error: Option<String>,
    /// Each argument's size or value.
    pub args: Vec<ArgLayout>,
    /// Bytes of all buffers.
    pub total_bytes: u64,
    /// The first valid configs (as many as asked for) with their launch.
    pub launches: Vec<ConfigLaunch>,
}

/// A config and its launch (or why it has none).
#[derive(Clone, Debug, Serialize)]
pub struct ConfigLaunch {
    /// The config.
    pub config: Config,
    /// Its launch.
    pub launch: Option<Launch>,
    /// Why it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn as_string<S: serde::Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
    // JSON numbers beyond 2^53 lose precision in most readers.
    if *v < (1 << 53) {
        s.serialize_u64(*v as u64)
    } else {
        s.serialize_str(&v.to_string())
    }
}

/// What pruning before compiling would keep of a space's valid configs on one device
/// (`kerntune check --target`): a tune there prunes the same (and more, from the compiler's
/// report of registers and spills).
#[derive(Clone, Debug, Serialize)]
pub struct PruneForecast {
    /// The device's name and architecture, as the preset gives them.
    pub target: String,
    /// Valid configs looked at.
    pub checked: u64,
    /// Whether those are all of them (the look stops at its time limit).
    pub complete: bool,
    /// Of those, the ones that fit.
    pub fit: u64,
    /// The others, by reason (`threads`, `shared_memory`, …): how many, and one of them with
    /// its reason.
    pub pruned: std::collections::BTreeMap<String, (u64, String)>,
}

/// Looks at `prep`'s valid configs (until `until`) as a tune on a device of `limits` would
/// before compiling ([`crate::plan::prune::prune_before`]), counting what it would prune and why.
pub fn prune_forecast(prep: &Prepared, target: &crate::Target, limits: &crate::Limits, opts: &crate::PruneOptions, until: Instant) -> PruneForecast {
    let mut f = PruneForecast { target: format!("{} ({})", target.name, target.arch), checked: 0, complete: true, fit: 0, pruned: Default::default() };
    for config in prep.space.iter() {
        if f.checked.is_multiple_of(256) && Instant::now() >= until {
            f.complete = false;
            break;
        }
        f.checked += 1;
        let Err(reason) = prep.fits(&config, limits, opts) else {
            f.fit += 1;
            continue;
        };
        let slot = f.pruned.entry(reason.category().to_string()).or_insert_with(|| (0, format!("{config}: {reason}")));
        slot.0 += 1;
    }
    f
}

/// Summarizes `job` (expanded, when class-based); counting valid configs stops after
/// `count_for` (a huge space then gives a lower bound); `launches` of the first valid configs
/// are listed with their launch.
pub fn summarize(expanded: &Expanded, count_for: Duration, launches: usize) -> Result<SpaceSummary, SpecError> {
    let job: &TuneJob = &expanded.job;
    let prep = Prepared::without_data(job, expanded.explicit.clone())?;
    let restrictions = |e: crate::space::error::SpaceError| SpecError { file: job.origin.clone(), field: "restrictions".into(), message: e.to_string() };
    let (valid, valid_complete) = match &expanded.explicit {
        Some(list) => {
            let mut n = 0u64;
            for c in list {
                if let Some(co) = prep.space.coords_of(c) {
                    n += prep.space.is_valid(&co).map_err(restrictions)? as u64;
                }
            }
            (n, true)
        }
        None => prep.space.count_until(Instant::now() + count_for).map_err(restrictions)?,
    };
    let params =
        job.params.iter().map(|p| ParamSummary { name: p.name.clone(), count: p.values.len(), values: p.values.iter().take(12).cloned().collect() }).collect();
    let total_bytes = prep.layout.iter().map(ArgLayout::bytes).sum();
    Ok(SpaceSummary {
        sizes: job.sizes.clone(),
        params,
        restrictions: job.restrictions.len(),
        cartesian: prep.space.cartesian_size(),
        valid,
        valid_complete,
        generated: expanded.explicit.as_ref().map(Vec::len),
        default_launch: prep.launch(&prep.default).ok(),
        default_launch_error: prep.launch(&prep.default).err(),
        default: prep.default.clone(),
        default_valid: prep.default_valid,
        args: prep.layout.clone(),
        total_bytes,
        launches: prep
            .space
            .iter()
            .take(launches)
            .map(|config| {
                let l = prep.launch(&config);
                ConfigLaunch { launch: l.as_ref().ok().copied(), error: l.err(), config }
            })
            .collect(),
    })
}
