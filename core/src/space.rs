//! Search spaces: parameters with value lists and restrictions, enumerated lazily.
//!
//! Enumeration is a depth-first walk over the parameters in declaration order. Each restriction
//! is checked at the shallowest depth where every parameter it reads is bound, so a violated
//! restriction cuts a whole subtree instead of being tested on every leaf. The result is the
//! same set, in the same order, as filtering the full cartesian product, which is what Kernel
//! Tuner defines; only much faster (the 663,552-point GEMM space enumerates in milliseconds).

use crate::config::Config;
use crate::expr::{Expr, ExprError};
use crate::value::Value;
use serde::{Deserialize, Serialize};

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

/// A search space definition error.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum SpaceError {
    /// A restriction does not compile.
    #[error("restriction {index} is invalid: {source}")]
    Restriction {
        /// Position of the restriction in the list (0-based).
        index: usize,
        /// The expression error.
        source: ExprError,
    },
    /// A parameter has no values.
    #[error("parameter `{0}` has no values; give it at least one")]
    EmptyParam(String),
    /// Two parameters share a name.
    #[error("parameter `{0}` is declared twice")]
    DuplicateParam(String),
}

/// Parameters, fixed constants (problem sizes restrictions may read) and restrictions.
#[derive(Clone, Debug)]
pub struct SearchSpace {
    params: Vec<Param>,
    constants: Vec<(String, Value)>,
    restrictions: Vec<Expr>,
    /// Restriction indices to check once parameter `d` is bound.
    checks_at: Vec<Vec<usize>>,
    /// Restrictions that read no parameter (checked once).
    constant_checks: Vec<usize>,
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
            exprs.push(Expr::compile(r.as_ref(), &names).map_err(|source| SpaceError::Restriction { index, source })?);
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
        let np = self.params.len();
        let mut slots: Vec<Value> = self.params.iter().map(|p| p.values[0].clone()).collect();
        slots.extend(self.constants.iter().map(|(_, v)| v.clone()));
        let ok = self.constant_checks.iter().all(|&i| self.restrictions[i].eval_bool(&slots).unwrap_or(false));
        CoordIter { space: self, slots, idx: vec![0; np], depth: 0, done: !ok, empty_yielded: false }
    }

    /// Lazily enumerates valid configs.
    pub fn iter(&self) -> impl Iterator<Item = Config> + '_ {
        self.iter_coords().map(move |c| self.config_at(&c))
    }

    /// Number of valid configurations (enumerates).
    pub fn count(&self) -> usize {
        self.iter_coords().count()
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

    /// Whether a config (given as coordinates) satisfies every restriction.
    pub fn is_valid(&self, coords: &[u32]) -> bool {
        let mut slots: Vec<Value> = self.params.iter().zip(coords).map(|(p, &i)| p.values[i as usize].clone()).collect();
        slots.extend(self.constants.iter().map(|(_, v)| v.clone()));
        self.restrictions.iter().all(|r| r.eval_bool(&slots).unwrap_or(false))
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

/// Depth-first iterator over valid coordinates.
pub struct CoordIter<'a> {
    space: &'a SearchSpace,
    slots: Vec<Value>,
    idx: Vec<u32>,
    depth: usize,
    done: bool,
    empty_yielded: bool,
}

impl Iterator for CoordIter<'_> {
    type Item = Vec<u32>;

    fn next(&mut self) -> Option<Vec<u32>> {
        let np = self.space.params.len();
        if self.done {
            return None;
        }
        if np == 0 {
            self.done = true;
            return (!self.empty_yielded).then(Vec::new);
        }
        loop {
            let d = self.depth;
            let values = &self.space.params[d].values;
            if self.idx[d] as usize >= values.len() {
                if d == 0 {
                    self.done = true;
                    return None;
                }
                self.idx[d] = 0;
                self.depth = d - 1;
                self.idx[d - 1] += 1;
                continue;
            }
            self.slots[d] = values[self.idx[d] as usize].clone();
            let ok = self.space.checks_at[d].iter().all(|&i| self.space.restrictions[i].eval_bool(&self.slots).unwrap_or(false));
            if !ok {
                self.idx[d] += 1;
                continue;
            }
            if d + 1 == np {
                let out = self.idx.clone();
                self.idx[d] += 1;
                return Some(out);
            }
            self.depth = d + 1;
            self.idx[d + 1] = 0;
        }
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
            assert!(s.is_valid(c));
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
        assert_eq!(s.count(), 0);
    }
}
