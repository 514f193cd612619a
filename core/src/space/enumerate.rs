//! Lazy enumeration: a depth-first walk over the parameters in declaration order that checks
//! each restriction at the shallowest depth where every parameter it reads is bound, so a
//! violated restriction cuts a whole subtree instead of being tested on every leaf.

use crate::space::error::SpaceError;
use crate::space::restrict::SearchSpace;
use crate::spec::value::Value;

/// Depth-first iterator over valid coordinates. A restriction that cannot be evaluated for a
/// config ends the iteration; [`CoordIter::error`] then says which and for what config, and
/// callers must check it (the `try_` methods of [`SearchSpace`] do).
pub struct CoordIter<'a> {
    space: &'a SearchSpace,
    slots: Vec<Value>,
    idx: Vec<u32>,
    depth: usize,
    done: bool,
    empty_yielded: bool,
    error: Option<SpaceError>,
}

impl<'a> CoordIter<'a> {
    /// Starts at the first point of `space`.
    pub(crate) fn new(space: &'a SearchSpace) -> CoordIter<'a> {
        let np = space.params.len();
        let mut slots: Vec<Value> = space.params.iter().map(|p| p.values[0].clone()).collect();
        slots.extend(space.constants.iter().map(|(_, v)| v.clone()));
        let mut it = CoordIter { space, slots, idx: vec![0; np], depth: 0, done: false, empty_yielded: false, error: None };
        match space.all_hold(&space.constant_checks, &it.slots, 0) {
            Ok(ok) => it.done = !ok,
            Err(e) => {
                it.error = Some(e);
                it.done = true;
            }
        }
        it
    }

    /// Why the iteration stopped early: a restriction that cannot be evaluated.
    pub fn error(&self) -> Option<&SpaceError> {
        self.error.as_ref()
    }

    /// Takes that error.
    pub fn take_error(&mut self) -> Option<SpaceError> {
        self.error.take()
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
            let ok = match self.space.all_hold(&self.space.checks_at[d], &self.slots, d + 1) {
                Ok(ok) => ok,
                Err(e) => {
                    self.error = Some(e);
                    self.done = true;
                    return None;
                }
            };
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
