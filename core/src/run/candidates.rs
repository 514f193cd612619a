//! Stage 3: candidates. Enumerate the valid configs (or walk a generated list), prune before
//! compiling with a reason for each, optionally order by the roofline model and keep its top
//! k, and keep this shard's part. A declared default that breaks a restriction is not a
//! candidate (it is never run) and the plan says so.

use crate::limits::Limits;
use crate::plan::model;
use crate::plan::model::ModelInput;
use crate::plan::prepare::{Launch, Prepared};
use crate::plan::prune::Estimate;
use crate::run::error::Error;
use crate::run::{Context, TuneOptions};
use crate::space::config::Config;
use crate::spec::job::Reference;
use crate::spec::settings::PruneOptions;
use std::collections::BTreeMap;

/// One candidate: a config that passed pruning before compiling.
pub(crate) struct Cand {
    /// The config.
    pub config: Config,
    /// Its value indices, one per parameter.
    pub coords: Vec<u32>,
    /// Its position in enumeration order (the tie-break of last resort).
    pub order: usize,
    /// Whether it is the default config.
    pub is_default: bool,
    /// Its launch geometry.
    pub launch: Launch,
    /// Its pre-compile resource estimate.
    pub estimate: Estimate,
}

/// The candidates and what was dropped on the way.
pub(crate) struct Plan {
    /// Candidates, in the order the strategy sees them.
    pub cands: Vec<Cand>,
    /// Valid configs (restrictions satisfied).
    pub valid: usize,
    /// Configs pruned before compiling, by category.
    pub pruned_before: BTreeMap<String, usize>,
    /// The first config pruned in each category, with its reason.
    pub prune_examples: BTreeMap<String, String>,
    /// Whether the default config is a candidate.
    pub default_included: bool,
    /// With `--shard`, where the default config is a candidate of the space but in another
    /// shard's part: that shard's index.
    pub default_in_shard: Option<usize>,
    /// Set when the space was too large to enumerate and the candidates are a random sample:
    /// `valid` is then an estimate.
    pub sampled: bool,
    /// The evaluation budget for this tune (this shard's share of it).
    pub max_evals: Option<usize>,
    /// What the report should say about the plan (an invalid default, a shard's part, configs
    /// to confirm that are not candidates here).
    pub notes: Vec<String>,
}

impl Plan {
    /// Configs pruned before compiling, in all.
    pub fn pruned(&self) -> usize {
        self.pruned_before.values().sum()
    }

    /// The candidates to try as the reference, in order: the default first when `default_first`
    /// (and it is a candidate), then every candidate in enumeration order.
    pub fn reference_order(&self, default_first: bool) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.cands.len()).collect();
        order.sort_by_key(|&i| (!(default_first && self.cands[i].is_default), self.cands[i].order));
        order
    }
}

/// Spaces whose cartesian product is larger than this are sampled, not enumerated, when a
/// budget bounds the search (and the strategy is not exhaustive): memory then grows with the
/// budget, not with the space.
const ENUMERATE_UP_TO: u128 = 1 << 22;
/// Candidates sampled per evaluation the budget allows, within [`POOL_MIN`, `POOL_MAX`]: the
/// pool a strategy searches.
const POOL_PER_EVAL: usize = 64;
const POOL_MIN: usize = 2_048;
const POOL_MAX: usize = 200_000;
/// The most candidates kept in memory (each holds its config, launch and estimate).
const MAX_CANDIDATES: usize = 4_000_000;

/// Where candidates come from.
enum Source {
    /// Every valid config, in enumeration order (the first `n` with a budget of `n` for an
    /// exhaustive search).
    Enumerate(Option<usize>),
    /// A random sample of this many valid configs.
    Sample(usize),
}

/// Enumeration for spaces that fit; a sample sized by the budget for larger ones; an error for
/// an unbounded search of a space too large to hold.
fn source(ctx: &Context, opts: &TuneOptions) -> Result<Source, Error> {
    let cartesian = ctx.prep.space.cartesian_size();
    let exhaustive = opts.strategy == "exhaustive";
    let evals = opts.budget.max_evals;
    if ctx.prep.explicit.is_some() || cartesian <= ENUMERATE_UP_TO {
        return Ok(Source::Enumerate(None));
    }
    match (exhaustive, evals, opts.budget.max_seconds) {
        (true, Some(n), _) => Ok(Source::Enumerate(Some(n))),
        (false, Some(n), _) => Ok(Source::Sample(n.saturating_mul(POOL_PER_EVAL).clamp(POOL_MIN, POOL_MAX))),
        (false, None, Some(_)) => Ok(Source::Sample(POOL_MAX)),
        (_, None, _) => {
            // Every valid config would be held: refuse up front when there are clearly too many.
            if ctx.prep.space.estimate_valid(4_096, opts.seed)? > MAX_CANDIDATES as f64 {
                return Err(too_large(ctx, cartesian));
            }
            Ok(Source::Enumerate(None))
        }
    }
}

/// Enumerates, prunes and orders; an error when nothing is left.
pub(crate) fn plan(ctx: &Context, limits: &Limits, opts: &TuneOptions) -> Result<Plan, Error> {
    let mut plan = enumerate(ctx, limits, opts)?;
    if opts.model {
        order_by_model(&mut plan, &ctx.prep, limits, opts.top_k, ctx.job.half_precision());
    }
    // The config every shard verifies against, so that all compare with the same outputs: the
    // default config where the reference is its output (else the first valid config, as each
    // tune falls back to), the first valid config where that is the reference; none where the
    // outputs come from elsewhere (a CPU function, files) or are not checked.
    let first = || plan.cands.iter().min_by_key(|c| c.order).map(|c| c.order);
    let shared_reference = match ctx.job.verify.reference {
        Reference::DefaultConfig => plan.cands.iter().find(|c| c.is_default).map(|c| c.order).or_else(first),
        Reference::FirstValid => first(),
        Reference::Host(..) | Reference::Expected(_) | Reference::None => None,
    };
    if let Some(keys) = &opts.only {
        keep_only(&mut plan, keys, shared_reference);
    }
    let mut reference_elsewhere = false;
    let partitioned = match opts.shard {
        // `auto` partitions too: its search (transfer or exhaustive) then runs on the part.
        Some(shard) if opts.strategy == "auto" || !crate::search::strategy::by_name(&opts.strategy, 0).map(|s| s.adaptive()).unwrap_or(true) => {
            let before = plan.cands.len();
            // The shared reference stays in every part (measured in each, once per shard).
            let kept = shared_reference.and_then(|o| plan.cands.iter().find(|c| c.order == o)).filter(|c| !shard.takes(c.order));
            let also = kept.map(|c| {
                if c.is_default {
                    ", and the default config, the reference of every shard".to_string()
                } else {
                    format!(", and the first valid config ({}), the reference of every shard", c.config.key())
                }
            });
            reference_elsewhere = also.is_some();
            plan.default_in_shard =
                plan.cands.iter().find(|c| c.is_default && !shard.takes(c.order) && Some(c.order) != shared_reference).map(|c| c.order % shard.count);
            plan.cands.retain(|c| shard.takes(c.order) || Some(c.order) == shared_reference);
            plan.notes.push(format!(
                "shard {shard}: {} of the {before} candidates (positions {}, {}, {}, ... in enumeration order{})",
                plan.cands.len(),
                shard.index,
                shard.index + shard.count,
                shard.index + 2 * shard.count,
                also.unwrap_or_default()
            ));
            true
        }
        Some(shard) => {
            plan.notes.push(format!(
                "shard {shard}: the whole space with the {} search's own seed ({}), a portfolio member",
                opts.strategy,
                opts.strategy_seed()
            ));
            false
        }
        None => false,
    };
    plan.max_evals = opts.budget.max_evals_for(plan.valid).map(|n| match opts.shard {
        // A part given the shared reference measures it on top of its share.
        Some(s) if partitioned || opts.budget.max_evals.is_some() => s.share(n).max(1) + usize::from(reference_elsewhere),
        _ => n,
    });
    // Once every step that keeps or drops candidates is done (the model's top k, `confirm`'s
    // list, a shard's part).
    plan.default_included = plan.cands.iter().any(|c| c.is_default);
    if plan.cands.is_empty() && opts.shard.is_some() && plan.valid > 0 {
        return Err(Error::NoValidConfig(format!("this shard's part of the {} valid configs is empty; use fewer shards", plan.valid)));
    }
    if plan.cands.is_empty() {
        let why = if plan.valid == 0 {
            "the restrictions leave no valid config".to_string()
        } else {
            format!(
                "all {} valid configs were pruned ({}); e.g. {}",
                plan.valid,
                plan.pruned_before.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", "),
                // One of each reason: a user whose every config is pruned fixes each.
                plan.prune_examples.values().cloned().collect::<Vec<_>>().join("; ")
            )
        };
        return Err(Error::NoValidConfig(why));
    }
    Ok(plan)
}

/// Every valid config (or generated candidate, or a sample of a huge space), pruned before
/// compiling.
fn enumerate(ctx: &Context, limits: &Limits, opts: &TuneOptions) -> Result<Plan, Error> {
    let prep = &ctx.prep;
    let space = &prep.space;
    let mut plan = Plan {
        cands: Vec::new(),
        valid: 0,
        pruned_before: ctx.generated_pruned.iter().map(|(k, v)| (format!("generator: {k}"), *v)).collect(),
        prune_examples: BTreeMap::new(),
        default_included: false,
        default_in_shard: None,
        sampled: false,
        max_evals: None,
        notes: Vec::new(),
    };
    let default_key = prep.default.key();
    let mut default_seen = false;
    let mut add = |plan: &mut Plan, order: usize, coords: Vec<u32>| -> Result<(), Error> {
        plan.valid += 1;
        let mut config = space.config_at(&coords);
        if let Some(list) = &prep.explicit {
            // Keep the generator's knobs (stages, warps, ...) on the config.
            if let Some(orig) = list.iter().find(|c| c.params == config.params) {
                config.knobs = orig.knobs.clone();
            }
        }
        let is_default = !default_seen && config.key() == default_key;
        default_seen |= is_default;
        consider(plan, prep, limits, &opts.prune, config, coords, order, is_default);
        if plan.cands.len() > MAX_CANDIDATES {
            return Err(too_large(ctx, space.cartesian_size()));
        }
        Ok(())
    };
    match (&prep.explicit, source(ctx, opts)?) {
        (Some(list), _) => {
            let mut order = 0;
            for coords in list.iter().filter_map(|c| space.coords_of(c)) {
                if space.is_valid(&coords)? {
                    add(&mut plan, order, coords)?;
                    order += 1;
                }
            }
        }
        (None, Source::Enumerate(limit)) => {
            let mut it = space.iter_coords();
            for (order, coords) in it.by_ref().take(limit.unwrap_or(usize::MAX)).enumerate() {
                add(&mut plan, order, coords)?;
            }
            if let Some(e) = it.take_error() {
                return Err(e.into());
            }
        }
        (None, Source::Sample(n)) => {
            for (order, coords) in space.sample(n, opts.seed)?.into_iter().enumerate() {
                add(&mut plan, order, coords)?;
            }
            plan.sampled = true;
            plan.valid = space.estimate_valid(4_096, opts.seed)?.round().max(plan.valid as f64) as usize;
            tracing::info!(cartesian = %space.cartesian_size(), sampled = plan.cands.len(), "the space is too large to enumerate; searching a random sample sized by the budget");
        }
    }
    if !default_seen && plan.sampled && prep.default_valid {
        // A sample may miss the default: it is still a candidate, so that tuning is never worse
        // than the default (and it can serve as the reference).
        if let Some(coords) = space.coords_of(&prep.default) {
            consider(&mut plan, prep, limits, &opts.prune, prep.default.clone(), coords, usize::MAX, true);
        }
    }
    if !default_seen && prep.default_declared && !prep.default_valid {
        // Never run: the restrictions are the kernel author's statement of what works (a
        // default that breaks them may read past a buffer or divide by zero).
        if let Some(coords) = space.coords_of(&prep.default) {
            let why = match space.broken_restriction(&coords)? {
                Some((i, text)) => format!("restriction {} (`{}`)", i + 1, crate::spec::error::quote(&text)),
                None => "the restrictions".into(),
            };
            let msg = format!("the default config ({}) violates {why}: it was not run", prep.default);
            // The report's notes say it; the log only for those who ask.
            tracing::info!("{msg}");
            plan.notes.push(msg);
        }
    }
    Ok(plan)
}

/// Keeps the candidates listed in `keys` (`kerntune confirm`), the default config (the baseline
/// the winner is compared with) and the shards' shared reference (the candidate of enumeration
/// order `reference`, see [`plan`]); notes the listed ones that are not candidates here.
fn keep_only(plan: &mut Plan, keys: &[String], reference: Option<usize>) {
    let wanted: std::collections::HashSet<&str> = keys.iter().map(String::as_str).collect();
    plan.cands.retain(|c| c.is_default || Some(c.order) == reference || wanted.contains(c.config.key().as_str()));
    let found: std::collections::HashSet<String> = plan.cands.iter().map(|c| c.config.key()).collect();
    // The summary's candidate count is these and the others kept: say so (a confirm of the
    // shards' best 8 read "9 candidates after pruning; evaluated 9").
    let extra: Vec<String> = plan
        .cands
        .iter()
        .filter(|c| !wanted.contains(c.config.key().as_str()))
        .map(|c| match (c.is_default, Some(c.order) == reference) {
            (true, true) => format!("the default config ({}), the reference the shards verified against", c.config.key()),
            (true, false) => format!("the default config ({}), the baseline the winner is compared with", c.config.key()),
            (false, _) => format!("the first valid config ({}), the reference the shards verified against", c.config.key()),
        })
        .collect();
    if !extra.is_empty() {
        let listed = plan.cands.len() - extra.len();
        let these = if listed == keys.len() {
            format!("the {listed} configs to confirm")
        } else {
            format!("the {listed} of the {} configs to confirm that are candidates here", keys.len())
        };
        plan.notes.push(format!("{} candidates: {these}, and {}", plan.cands.len(), extra.join(", and ")));
    }
    let missing: Vec<&String> = keys.iter().filter(|k| !found.contains(*k)).collect();
    if !missing.is_empty() {
        plan.notes.push(format!(
            "{} of the {} configs to confirm are not candidates on this device (pruned, or not in the space), e.g. {}",
            missing.len(),
            keys.len(),
            crate::spec::error::quote(missing[0])
        ));
    }
}

fn too_large(ctx: &Context, cartesian: u128) -> Error {
    Error::Spec(crate::spec::error::SpecError {
        file: ctx.job.origin.clone(),
        field: "budget".into(),
        message: format!(
            "the space ({cartesian} combinations) has more than {MAX_CANDIDATES} valid configs, too many to search without a budget; give --budget (a count such as 400, or a time such as 10m) and a strategy other than exhaustive, which then searches a random sample"
        ),
    })
}

/// Adds `config` as a candidate, or counts why it was pruned.
#[allow(clippy::too_many_arguments)]
fn consider(plan: &mut Plan, prep: &Prepared, limits: &Limits, prune: &PruneOptions, config: Config, coords: Vec<u32>, order: usize, is_default: bool) {
    let reason = match prep.fits(&config, limits, prune) {
        Ok((launch, estimate)) => {
            plan.cands.push(Cand { config, coords, order, is_default, launch, estimate });
            return;
        }
        Err(r) => r,
    };
    tracing::debug!(config = %config, reason = %reason, "pruned before compiling");
    *plan.pruned_before.entry(reason.category().to_string()).or_default() += 1;
    plan.prune_examples.entry(reason.category().to_string()).or_insert_with(|| format!("{config}: {reason}"));
}

/// Orders candidates by the roofline estimate (against the FP16 peak for a kernel that computes
/// in half precision); with `top_k`, keeps the best k (and the default).
fn order_by_model(plan: &mut Plan, prep: &Prepared, limits: &Limits, top_k: Option<usize>, half: bool) {
    let mut est: Vec<(f64, usize)> = plan
        .cands
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (flops, bytes) = prep.metrics(&c.config);
            let occ = limits.occupancy(c.launch.threads(), c.estimate.regs_per_thread, c.estimate.shared_bytes).blocks_per_sm;
            let input = ModelInput { flops: flops.unwrap_or(0.0), bytes: bytes.unwrap_or(0.0), blocks: c.launch.blocks(), occupancy: occ };
            (model::estimate(limits, &input, half).unwrap_or(f64::INFINITY), i)
        })
        .collect();
    est.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut keep: Vec<usize> = est.iter().map(|e| e.1).collect();
    if let Some(k) = top_k {
        let def = keep.iter().position(|&i| plan.cands[i].is_default);
        let mut kept: Vec<usize> = keep.iter().copied().take(k.max(1)).collect();
        if let Some(d) = def.filter(|&d| d >= k) {
            kept.push(keep[d]);
        }
        let dropped = keep.len() - kept.len();
        if dropped > 0 {
            *plan.pruned_before.entry("model_top_k".into()).or_default() += dropped;
        }
        keep = kept;
    }
    let mut slots: Vec<Option<Cand>> = std::mem::take(&mut plan.cands).into_iter().map(Some).collect();
    plan.cands = keep.into_iter().map(|i| slots[i].take().expect("each kept once")).collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Backend as _;
    use crate::run::fixture::{job, opts, tuner};
    use crate::spec::settings::Shard;
    use crate::spec::value::Value;

    #[test]
    fn prunes_with_reasons_and_keeps_the_default() {
        let t = tuner();
        let ctx = t.prepare(&job()).unwrap();
        let p = plan(&ctx, t.backend().limits(), &opts()).unwrap();
        assert_eq!((p.valid, p.cands.len(), p.pruned()), (21, 18, 3));
        assert_eq!(p.pruned_before.get("threads"), Some(&3));
        assert!(p.prune_examples["threads"].starts_with("bx=2048"), "{:?}", p.prune_examples);
        assert!(p.default_included && p.cands.iter().filter(|c| c.is_default).count() == 1);
        assert_eq!(p.cands.iter().map(|c| c.order).collect::<Vec<_>>(), (0..18).collect::<Vec<_>>());
    }

    #[test]
    fn a_default_that_breaks_a_restriction_is_never_a_candidate() {
        let t = tuner();
        let mut j = job();
        j.restrictions = vec!["vec > 0".into(), "bx != 256".into()];
        let p = plan(&t.prepare(&j).unwrap(), t.backend().limits(), &opts()).unwrap();
        assert!(!p.default_included && p.cands.iter().all(|c| c.config.get_i64("bx") != Some(256)));
        assert_eq!(p.notes, vec!["the default config (bx=256,vec=1) violates restriction 2 (`bx != 256`): it was not run".to_string()]);
        // The reference is tried from the first valid config on.
        assert_eq!(p.reference_order(true)[0], 0);
        // Restrictions that leave nothing are an error even with a declared default.
        j.restrictions = vec!["bx > 4096".into()];
        let e = plan(&t.prepare(&j).unwrap(), t.backend().limits(), &opts()).err().unwrap().to_string();
        assert!(e.contains("the restrictions leave no valid config"), "{e}");
    }

    #[test]
    fn shards_of_an_exhaustive_search_partition_the_candidates_and_the_budget() {
        let t = tuner();
        let ctx = t.prepare(&job()).unwrap();
        let mut seen = std::collections::BTreeMap::new();
        for k in 0..3 {
            let o = TuneOptions {
                shard: Some(Shard { index: k, count: 3 }),
                budget: crate::spec::settings::Budget { max_evals: Some(10), ..Default::default() },
                ..opts()
            };
            let p = plan(&ctx, t.backend().limits(), &o).unwrap();
            // Its share of the budget, and one more where the default joins the part as its
            // reference: the default does not take an evaluation from the part's own configs.
            let joined = p.cands.iter().any(|c| c.is_default && c.order % 3 != k);
            assert_eq!(p.max_evals, Some([4, 3, 3][k] + usize::from(joined)));
            for c in &p.cands {
                *seen.entry(c.config.key()).or_insert(0) += 1;
            }
        }
        // Every config in one part, but the default, every shard's reference, in all three.
        assert_eq!(seen.len(), 18);
        let default = ctx.prep.default.key();
        assert!(seen.iter().all(|(k, &n)| n == if *k == default { 3 } else { 1 }), "{seen:?}");
        // An adaptive strategy keeps the whole space.
        let o = TuneOptions { strategy: "hybrid".into(), shard: Some(Shard { index: 1, count: 3 }), ..opts() };
        assert_eq!(plan(&ctx, t.backend().limits(), &o).unwrap().cands.len(), 18);
        // Where the default is no shard's reference (a CPU function's outputs), it is in one part
        // only, and the others know which.
        let mut j = job();
        j.verify.reference = Reference::None;
        let ctx = t.prepare(&j).unwrap();
        let parts: Vec<Plan> =
            (0..3).map(|k| plan(&ctx, t.backend().limits(), &TuneOptions { shard: Some(Shard { index: k, count: 3 }), ..opts() }).unwrap()).collect();
        let holder = parts.iter().position(|p| p.default_included).expect("one part holds the default");
        assert_eq!(parts.iter().filter(|p| p.default_included).count(), 1);
        for (k, p) in parts.iter().enumerate() {
            assert_eq!(p.default_in_shard, (k != holder).then_some(holder), "shard {k}");
        }
    }

    #[test]
    fn only_keeps_the_listed_configs_and_notes_the_rest() {
        let t = tuner();
        let ctx = t.prepare(&job()).unwrap();
        let o = TuneOptions { only: Some(vec!["bx=64,vec=2".into(), "bx=2048,vec=1".into()]), ..opts() };
        let p = plan(&ctx, t.backend().limits(), &o).unwrap();
        // The listed config, and the default (bx=256,vec=1), the reference the shards verified against.
        assert_eq!(p.cands.iter().map(|c| c.config.key()).collect::<Vec<_>>(), vec!["bx=64,vec=2", "bx=256,vec=1"]);
        assert!(p.cands[1].is_default);
        assert_eq!(
            p.notes[0],
            "2 candidates: the 1 of the 2 configs to confirm that are candidates here, and the default config (bx=256,vec=1), the reference the shards verified against"
        );
        assert!(p.notes[1].starts_with("1 of the 2 configs to confirm are not candidates"), "{:?}", p.notes);
        // Where outputs are checked against something else (a CPU function, files, nothing), the
        // default is kept as the baseline, and the note says so.
        let mut j = job();
        j.verify.reference = Reference::None;
        let p = plan(&t.prepare(&j).unwrap(), t.backend().limits(), &o).unwrap();
        assert!(p.notes[0].ends_with("and the default config (bx=256,vec=1), the baseline the winner is compared with"), "{:?}", p.notes);
        // Where the reference is the first valid config's output, confirm keeps it too: it is
        // what the shards verified against.
        j.verify.reference = Reference::FirstValid;
        let p = plan(&t.prepare(&j).unwrap(), t.backend().limits(), &o).unwrap();
        assert_eq!(p.cands.iter().map(|c| c.config.key()).collect::<Vec<_>>(), vec!["bx=32,vec=1", "bx=64,vec=2", "bx=256,vec=1"]);
        assert!(
            p.notes[0].ends_with(
                "and the first valid config (bx=32,vec=1), the reference the shards verified against, and the default config (bx=256,vec=1), the baseline the winner is compared with"
            ),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn every_shard_keeps_the_reference_it_verifies_against_and_no_other() {
        let t = tuner();
        let mut j = job();
        let parts = |j: &crate::spec::job::TuneJob| {
            (0..3)
                .map(|k| {
                    let o = TuneOptions {
                        shard: Some(Shard { index: k, count: 3 }),
                        budget: crate::spec::settings::Budget { max_evals: Some(9), ..Default::default() },
                        ..opts()
                    };
                    plan(&t.prepare(j).unwrap(), t.backend().limits(), &o).unwrap()
                })
                .collect::<Vec<_>>()
        };
        // The first valid config's output: every part holds it (bx=32,vec=1, position 0).
        j.verify.reference = Reference::FirstValid;
        let p = parts(&j);
        assert!(p.iter().all(|p| p.cands.iter().any(|c| c.config.key() == "bx=32,vec=1")));
        assert_eq!(p.iter().map(|p| p.max_evals).collect::<Vec<_>>(), vec![Some(3), Some(4), Some(4)]);
        assert!(p[1].notes[0].ends_with(", and the first valid config (bx=32,vec=1), the reference of every shard)"), "{:?}", p[1].notes);
        // Outputs from elsewhere: the parts are disjoint, none holds the default but its own,
        // and no part's budget grows for it.
        j.verify.reference = Reference::None;
        let p = parts(&j);
        assert_eq!(p.iter().map(|p| p.cands.len()).sum::<usize>(), 18);
        assert_eq!(p.iter().filter(|p| p.cands.iter().any(|c| c.is_default)).count(), 1);
        assert_eq!(p.iter().map(|p| p.max_evals).collect::<Vec<_>>(), vec![Some(3), Some(3), Some(3)]);
        assert!(p.iter().all(|p| !p.notes[0].contains("reference")), "{:?}", p[0].notes);
    }

    #[test]
    fn the_model_keeps_its_top_k_and_the_default() {
        let t = tuner();
        let mut j = job();
        j.flops = Some("n".into());
        j.bytes = Some("8*n".into());
        let o = TuneOptions { model: true, top_k: Some(2), ..opts() };
        let p = plan(&t.prepare(&j).unwrap(), t.backend().limits(), &o).unwrap();
        assert!(p.cands.len() <= 3 && p.cands.iter().any(|c| c.is_default), "{}", p.cands.len());
        assert_eq!(p.pruned_before.get("model_top_k"), Some(&(18 - p.cands.len())));
    }

    #[test]
    fn nothing_left_is_an_error_that_says_why() {
        let t = tuner();
        let mut j = job();
        j.restrictions = vec!["bx > 4096".into()];
        j.default = None;
        let e = plan(&t.prepare(&j).unwrap(), t.backend().limits(), &opts()).err().unwrap().to_string();
        assert!(e.contains("the restrictions leave no valid config"), "{e}");
        let mut j = job();
        j.params[0].values = vec![Value::Int(2048)];
        j.default = None;
        let e = plan(&t.prepare(&j).unwrap(), t.backend().limits(), &opts()).err().unwrap().to_string();
        assert!(e.contains("all 3 valid configs were pruned (threads: 3)"), "{e}");
        // Two reasons: an example of each (a grid that divides by zero, and too many threads).
        let mut j = job();
        j.params[0].values = vec![Value::Int(64), Value::Int(2048)];
        j.grid[0] = "n / (bx - 64) * 0 + 1".into();
        j.default = None;
        let e = plan(&t.prepare(&j).unwrap(), t.backend().limits(), &opts()).err().unwrap().to_string();
        assert!(e.contains("all 6 valid configs were pruned (geometry: 3, threads: 3)"), "{e}");
        assert!(
            e.contains(
                "e.g. bx=64,vec=1: geometry: grid.x `n / (bx - 64) * 0 + 1`: division by zero; bx=2048,vec=1: threads per block (workgroup): needs 2048"
            ),
            "{e}"
        );
    }
}
