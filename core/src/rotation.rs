//! Rotating inputs ([`L2Flush::Rotate`](crate::backend::L2Flush::Rotate)) for backends that
//! launch with raw parameter arrays (CUDA, HIP): copies of every buffer, each with its own
//! parameter set, taken in turn so that a launch's data were evicted from L2 by the launches in
//! between, and nothing else runs between launches.

use crate::error::BackendError;
use std::ffi::c_void;

/// The copies and which parameter set comes next. `P` is a backend's device pointer.
#[derive(Debug)]
pub struct Rotation<P> {
    /// Per copy: its buffers and its kernel parameters.
    copies: Vec<(Vec<P>, Vec<Vec<u8>>)>,
    /// The set the last launch used (0: the workspace's own parameters, i: copy i - 1).
    at: usize,
}

impl<P> Default for Rotation<P> {
    fn default() -> Self {
        Rotation { copies: Vec::new(), at: 0 }
    }
}

impl<P: Copy> Rotation<P> {
    /// Makes the copies, once: enough that the sets other than the one launched span `span`
    /// bytes (2×L2). `params` are the workspace's own kernel parameters; `buffers` has, per
    /// buffer, its pristine data's pointer, its size and the index of its pointer in `params`;
    /// `copy(src, bytes)` allocates a buffer and copies `src` into it; `param(p)` is a
    /// pointer's bytes as a kernel parameter. After a failure, [`Rotation::allocations`] still
    /// lists what was allocated.
    pub fn ensure(
        &mut self,
        params: &[Vec<u8>],
        buffers: &[(P, usize, usize)],
        span: usize,
        mut copy: impl FnMut(P, usize) -> Result<P, BackendError>,
        param: impl Fn(P) -> Vec<u8>,
    ) -> Result<(), BackendError> {
        let bytes: usize = buffers.iter().map(|b| b.1).sum();
        if !self.copies.is_empty() || span == 0 || bytes == 0 {
            return Ok(());
        }
        for _ in 0..span.div_ceil(bytes) {
            self.copies.push((Vec::new(), params.to_vec()));
            let (ptrs, set) = self.copies.last_mut().expect("pushed");
            for &(pristine, size, at) in buffers {
                let p = copy(pristine, size)?;
                ptrs.push(p);
                set[at] = param(p);
            }
        }
        Ok(())
    }

    /// Every buffer the copies hold, for freeing.
    pub fn allocations(&self) -> impl Iterator<Item = P> + '_ {
        self.copies.iter().flat_map(|(ptrs, _)| ptrs.iter().copied())
    }

    /// Launch argument arrays, one per parameter set: `own` first, then each copy's. The
    /// pointers are valid while `own` and this rotation are neither moved nor changed.
    pub fn pointer_sets(&mut self, own: &mut [Vec<u8>]) -> Vec<Vec<*mut c_void>> {
        let raw = |params: &mut [Vec<u8>]| params.iter_mut().map(|p| p.as_mut_ptr() as *mut c_void).collect();
        std::iter::once(raw(own)).chain(self.copies.iter_mut().map(|(_, set)| raw(set))).collect()
    }

    /// The set the next rotating launch uses (an index into [`Rotation::pointer_sets`]).
    pub fn next_set(&mut self) -> usize {
        self.at = (self.at + 1) % (self.copies.len() + 1);
        self.at
    }
}

#[cfg(test)]
mod tests {
    use super::Rotation;

    #[test]
    fn copies_span_the_flush_size_and_are_taken_in_turn() {
        // Arguments: buffer (100 B), scalar, buffer (60 B); 2×L2 = 400 B.
        let own = vec![1u64.to_le_bytes().to_vec(), vec![7, 0, 0, 0], 2u64.to_le_bytes().to_vec()];
        let buffers = [(1u64, 100usize, 0usize), (2, 60, 2)];
        let mut next_addr = 100u64;
        let mut copied = Vec::new();
        let mut r = Rotation::default();
        r.ensure(
            &own,
            &buffers,
            400,
            |src, bytes| {
                next_addr += 1;
                copied.push((src, bytes));
                Ok(next_addr)
            },
            |p| p.to_le_bytes().to_vec(),
        )
        .unwrap();
        // 160 B a set, 400 / 160 rounded up: 3 copies, so the 3 sets not being launched span 480 B.
        assert_eq!(r.allocations().count(), 6);
        assert_eq!(copied[..2], [(1, 100), (2, 60)], "each copy starts from the pristine data");
        let mut own_mut = own.clone();
        let sets = r.pointer_sets(&mut own_mut);
        assert_eq!(sets.len(), 4);
        // A copy's parameters point at its own buffers and keep the scalar.
        assert_eq!(r.copies[0].1, vec![101u64.to_le_bytes().to_vec(), vec![7, 0, 0, 0], 102u64.to_le_bytes().to_vec()]);
        let order: Vec<usize> = (0..8).map(|_| r.next_set()).collect();
        assert_eq!(order, [1, 2, 3, 0, 1, 2, 3, 0]);
        // Made once.
        r.ensure(&own, &buffers, 400, |_, _| panic!("copied twice"), |p: u64| p.to_le_bytes().to_vec()).unwrap();
        // Nothing to rotate: no copies, always the own set.
        let mut none = Rotation::<u64>::default();
        none.ensure(&own, &[], 400, |_, _| panic!("no buffers"), |p| p.to_le_bytes().to_vec()).unwrap();
        assert_eq!((none.next_set(), none.next_set()), (0, 0));
    }
}
