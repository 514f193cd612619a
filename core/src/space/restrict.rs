//! Search spaces: parameters with value lists and restrictions, enumerated lazily.
//!
//! Enumeration is a depth-first walk over the parameters in declaration order. Each restriction
//! is checked at the shallowest depth where every parameter it reads is bound, so a violated
//! restriction cuts a whole subtree instead of being tested on every leaf. The result is the
//! same set, in the same order, as filtering the full cartesian product, which is what Kernel
//! Tuner defines; only much faster (the 663,552-point GEMM space enumerates in milliseconds).

use crate::space::config::Config;
use crate::space::enumerate::CoordIter;
use crate::space::error::SpaceError;
use crate::spec::expr::Expr;
use crate::spec::job::Param;
use crate::spec::value::Value;

/// Parameters, fixed constants (problem sizes restrictions may read) and restrictions.
#[derive(Clone, Debug)]
pub struct SearchSpace {
    pub(crate) params: Vec<Param>,
    pub(crate) constants: Vec<(String, Value)>,
    pub(crate) restrictions: Vec<Expr>,
    /// Restriction indices to check once parameter `d` is bound.
    pub(crate) checks_at: Vec<Vec<usize>>,
    /// Restrictions that read no parameter (checked once).
    pub(crate) constant_checks: Vec<usize>,
}

impl SearchSpace {
    /// Builds a space. `constants` are names restrictions may read besides the parameters.
    pub fn new(params: Vec<Param>, restrictions: &[impl AsRef<str>], constants: Vec<(String, Value)>) -> Result<SearchSpace, SpaceError> {
        for (i, p) in params.iter().enumerate() {
            if p.values.is_empty() {
                return Err(SpaceError::EmptyParam(p.name.clone()));
            }
            if params[..i].iter().any(|q| q.name == p.name) {
                return Err(SpaceError::DuplicateParam(p.name.clone()));
            }
        }
        let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).chain(constants.iter().map(|(n, _)| n.as_str())).collect();
        let mut exprs = Vec::new();
        for (index, r) in restrictions.iter().enumerate() {
            exprs.push(Expr::compile(r.as_ref(), &names).map_err(|error| SpaceError::Restriction { index, error })?);
        }
        let np = params.len();
        let mut checks_at = vec![Vec::new(); np];
        let mut constant_checks = Vec::new();
        for (i, e) in exprs.iter().enumerate() {
            match e.vars_used().iter().copied().filter(|&v| v < np).max() {
                Some(d) => checks_at[d].push(i),
                None => constant_checks.push(i),
            }
        }
        Ok(SearchSpace { params, constants, restrictions: exprs, checks_at, constant_checks })
    }

    /// The parameters.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// The restrictions.
    pub fn restrictions(&self) -> &[Expr] {
        &self.restrictions
    }

    /// The constants restrictions may read.
    pub fn constants(&self) -> &[(String, Value)] {
        &self.constants
    }

    /// Size of the cartesian product, before restrictions.
    pub fn cartesian_size(&self) -> u128 {
        self.params.iter().map(|p| p.values.len() as u128).product()
    }

    /// Lazily enumerates valid points as value-index coordinates.
    pub fn iter_coords(&self) -> CoordIter<'_> {
        CoordIter::new(self)
    }

    /// Lazily enumerates valid configs.
    pub fn iter(&self) -> impl Iterator<Item = Config> + '_ {
        self.iter_coords().map(move |c| self.config_at(&c))
    }

    /// Number of valid configurations (enumerates); an error when a restriction cannot be
    /// evaluated for some config.
    pub fn count(&self) -> Result<usize, SpaceError> {
        let mut it = self.iter_coords();
        let n = it.by_ref().count();
        it.take_error().map_or(Ok(n), Err)
    }

    /// Counts valid configurations until `deadline`: the count, and whether it is complete.
    pub fn count_until(&self, deadline: std::time::Instant) -> Result<(u64, bool), SpaceError> {
        let mut n = 0u64;
        let mut it = self.iter_coords();
        loop {
            // The clock is read every 64 Ki points: cheap, and a fraction of a second late.
            for _ in 0..65_536 {
                if it.next().is_none() {
                    return it.take_error().map_or(Ok((n, true)), Err);
                }
                n += 1;
            }
            if std::time::Instant::now() >= deadline {
                return Ok((n, false));
            }
        }
    }

    /// Up to `n` distinct valid configs drawn at random, without enumerating the space: each
    /// draw picks a random value per parameter in declaration order, re-drawing (up to 16
    /// times) a value that breaks a restriction checkable at that depth, and starts over when
    /// none fits. Memory and time grow with `n`, not with the space; the draws are not exactly
    /// uniform over valid configs (values that pass more often are favoured a little).
    pub fn sample(&self, n: usize, seed: u64) -> Result<Vec<Vec<u32>>, SpaceError> {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let np = self.params.len();
        let mut slots: Vec<Value> = self.params.iter().map(|p| p.values[0].clone()).collect();
        slots.extend(self.constants.iter().map(|(_, v)| v.clone()));
        if !self.all_hold(&self.constant_checks, &slots, 0)? {
            return Ok(Vec::new());
        }
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        let max_draws = n.saturating_mul(200).saturating_add(10_000);
        'draw: for _ in 0..max_draws {
            if out.len() >= n {
                break;
            }
            let mut coords = vec![0u32; np];
            for d in 0..np {
                let values = &self.params[d].values;
                let mut found = false;
                for _ in 0..values.len().min(16) {
                    let vi = rng.random_range(0..values.len());
                    slots[d] = values[vi].clone();
                    if self.all_hold(&self.checks_at[d], &slots, d + 1)? {
                        coords[d] = vi as u32;
                        found = true;
                        break;
                    }
                }
                if !found {
                    continue 'draw;
                }
            }
            if seen.insert(coords.clone()) {
                out.push(coords);
            }
        }
        Ok(out)
    }

    /// The number of valid configs estimated from `draws` uniform random points of the
    /// cartesian product (for spaces too large to count).
    pub fn estimate_valid(&self, draws: usize, seed: u64) -> Result<f64, SpaceError> {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0xe571);
        let mut hits = 0usize;
        for _ in 0..draws.max(1) {
            let coords: Vec<u32> = self.params.iter().map(|p| rng.random_range(0..p.values.len()) as u32).collect();
            hits += self.is_valid(&coords)? as usize;
        }
        Ok(self.cartesian_size() as f64 * hits as f64 / draws.max(1) as f64)
    }

    /// Whether every restriction in `which` holds with the first `bound` parameters set in
    /// `slots` (the rest of `slots` are constants, after the parameters).
    pub(crate) fn all_hold(&self, which: &[usize], slots: &[Value], bound: usize) -> Result<bool, SpaceError> {
        for &i in which {
            match self.restrictions[i].eval_bool(slots) {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(e) => {
                    let config = self.params.iter().zip(slots).take(bound).map(|(p, v)| format!("{}={v}", p.name)).collect::<Vec<_>>().join(",");
                    let text = crate::spec::error::quote(self.restrictions[i].text()).into_owned();
                    return Err(SpaceError::RestrictionFailed { index: i, text, config, message: e.to_string() });
                }
            }
        }
        Ok(true)
    }

    /// The config at given value indices.
    pub fn config_at(&self, coords: &[u32]) -> Config {
        Config { params: self.params.iter().zip(coords).map(|(p, &i)| (p.name.clone(), p.values[i as usize].clone())).collect(), knobs: Default::default() }
    }

    /// Value-index coordinates of a config, if every value is in the space's lists.
    pub fn coords_of(&self, cfg: &Config) -> Option<Vec<u32>> {
        self.params
            .iter()
            .map(|p| {
                let v = cfg.get(&p.name)?;
                p.values.iter().position(|x| x == v || x.as_f64().zip(v.as_f64()).is_some_and(|(a, b)| a == b)).map(|i| i as u32)
            })
            .collect()
    }

    /// Whether a config (given as coordinates) satisfies every restriction; an error when one
    /// cannot be evaluated for it.
    pub fn is_valid(&self, coords: &[u32]) -> Result<bool, SpaceError> {
        let mut slots: Vec<Value> = self.params.iter().zip(coords).map(|(p, &i)| p.values[i as usize].clone()).collect();
        slots.extend(self.constants.iter().map(|(_, v)| v.clone()));
        let all: Vec<usize> = (0..self.restrictions.len()).collect();
        self.all_hold(&all, &slots, coords.len())
    }

    /// The first restriction a config breaks, as its position (from 0) and text; `None` when
    /// every one holds.
    pub fn broken_restriction(&self, coords: &[u32]) -> Result<Option<(usize, String)>, SpaceError> {
        let mut slots: Vec<Value> = self.params.iter().zip(coords).map(|(p, &i)| p.values[i as usize].clone()).collect();
        slots.extend(self.constants.iter().map(|(_, v)| v.clone()));
        for i in 0..self.restrictions.len() {
            if !self.all_hold(&[i], &slots, coords.len())? {
                return Ok(Some((i, self.restrictions[i].text().to_string())));
            }
        }
        Ok(None)
    }

    /// A stable hash of the definition (parameters, values, restrictions, constants).
    pub fn fingerprint(&self) -> String {
        let mut text = String::new();
        for p in &self.params {
            text.push_str(&p.name);
            text.push('=');
            for v in &p.values {
                text.push_str(&v.to_string());
                text.push('|');
            }
            text.push(';');
        }
        for r in &self.restrictions {
            text.push_str(r.text());
            text.push(';');
        }
        for (k, v) in &self.constants {
            text.push_str(&format!("{k}={v};"));
        }
        crate::hash::short_hash(text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_brute_force_filter() {
        let params = vec![Param::new("a", [1, 2, 4, 8]), Param::new("b", [1, 2, 3]), Param::new("c", [0, 1])];
        let r = ["a*b <= 8", "c == 0 or a % 4 == 0", "b != N"];
        let s = SearchSpace::new(params, &r, vec![("N".into(), Value::Int(3))]).unwrap();
        let got: Vec<_> = s.iter_coords().collect();
        let mut want = Vec::new();
        for (ai, a) in [1, 2, 4, 8].iter().enumerate() {
            for (bi, b) in [1, 2, 3].iter().enumerate() {
                for (ci, c) in [0, 1].iter().enumerate() {
                    if a * b <= 8 && (*c == 0 || a % 4 == 0) && *b != 3 {
                        want.push(vec![ai as u32, bi as u32, ci as u32]);
                    }
                }
            }
        }
        assert_eq!(got, want);
        assert_eq!(s.cartesian_size(), 24);
        for c in &got {
            assert!(s.is_valid(c).unwrap());
            assert_eq!(s.coords_of(&s.config_at(c)).as_ref(), Some(c));
        }
    }

    #[test]
    fn bad_definitions_are_named() {
        let e = SearchSpace::new(vec![Param::new("a", [1])], &["a < b"], vec![]).unwrap_err();
        assert!(e.to_string().contains("restriction 0"), "{e}");
        assert!(e.to_string().contains("unknown name `b`"), "{e}");
        let e = SearchSpace::new(vec![Param::new("a", Vec::<i64>::new())], &[] as &[&str], vec![]).unwrap_err();
        assert_eq!(e, SpaceError::EmptyParam("a".into()));
    }

    #[test]
    fn constant_false_restriction_gives_empty_space() {
        let s = SearchSpace::new(vec![Param::new("a", [1, 2])], &["N > 10"], vec![("N".into(), Value::Int(3))]).unwrap();
        assert_eq!(s.count().unwrap(), 0);
    }
}
