//! Lazy enumeration: a depth-first walk over the parameters in declaration order that checks
//! each restriction at the shallowest depth where every parameter it reads is bound, so a
//! violated restriction cuts a whole subtree instead of being tested on every leaf.

use crate::space::restrict::SearchSpace;
use crate::spec::value::Value;

/// Depth-first iterator over valid coordinates.
pub struct CoordIter<'a> {
    space: &'a SearchSpace,
    slots: Vec<Value>,
    idx: Vec<u32>,
    depth: usize,
    done: bool,
    empty_yielded: bool,
}

impl<'a> CoordIter<'a> {
    /// Starts at the first point of `space`.
    pub(crate) fn new(space: &'a SearchSpace) -> CoordIter<'a> {
        let np = space.params.len();
        let mut slots: Vec<Value> = space.params.iter().map(|p| p.values[0].clone()).collect();
        slots.extend(space.constants.iter().map(|(_, v)| v.clone()));
        let ok = space.constant_checks.iter().all(|&i| space.restrictions[i].eval_bool(&slots).unwrap_or(false));
        CoordIter { space, slots, idx: vec![0; np], depth: 0, done: !ok, empty_yielded: false }
    }
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
