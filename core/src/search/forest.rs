//! A small random forest of regression trees, for the model-guided strategy.
//!
//! Written here rather than taken from a crate because the strategy needs each tree's own
//! prediction (their spread is the model's uncertainty, which expected improvement needs), and
//! the available crates hide the trees behind an averaged `predict`.

use rand::seq::SliceRandom;
use rand::Rng;

/// A tree as one array, root first: a node splits on `feature` at `threshold` (to node `left`
/// when `x ≤ threshold`, else to `left + 1`), or is a leaf holding `threshold` as its value
/// when `feature` is [`LEAF`].
#[derive(Clone, Copy, Debug)]
struct Node {
    threshold: f64,
    feature: u32,
    left: u32,
}

const LEAF: u32 = u32::MAX;

fn predict_tree(nodes: &[Node], x: &[f64]) -> f64 {
    let mut n = nodes[0];
    while n.feature != LEAF {
        n = nodes[n.left as usize + usize::from(x[n.feature as usize] > n.threshold)];
    }
    n.threshold
}

/// Bagged regression trees with random feature subsets at each split.
#[derive(Clone, Debug, Default)]
pub struct Forest {
    trees: Vec<Vec<Node>>,
}

const MIN_LEAF: usize = 2;
const MAX_DEPTH: usize = 12;

fn mean(ys: &[f64], idx: &[usize]) -> f64 {
    idx.iter().map(|&i| ys[i]).sum::<f64>() / idx.len().max(1) as f64
}

/// The training rows column by column, with each value's rank among its column's distinct
/// values: sorting rows by a feature is then a counting sort, stable like the comparison sort
/// it replaces and giving the same order (the forest is the same, only faster to grow).
struct Columns {
    rows: usize,
    /// `values[f * rows + r]`: feature `f` of row `r`.
    values: Vec<f64>,
    /// `ranks[f * rows + r]`: its rank in column `f` (`f64::total_cmp` order, ties equal).
    ranks: Vec<u32>,
    /// Distinct values per column.
    distinct: Vec<usize>,
    /// Scratch for the counting sort.
    counts: Vec<usize>,
    sorted: Vec<usize>,
}

impl Columns {
    fn new(xs: &[Vec<f64>]) -> Columns {
        let (rows, nf) = (xs.len(), xs[0].len());
        let mut values = vec![0.0; nf * rows];
        let mut ranks = vec![0u32; nf * rows];
        let mut distinct = vec![0; nf];
        let mut order: Vec<usize> = (0..rows).collect();
        for f in 0..nf {
            let col = &mut values[f * rows..(f + 1) * rows];
            for (r, x) in xs.iter().enumerate() {
                col[r] = x[f];
            }
            order.sort_by(|&a, &b| col[a].total_cmp(&col[b]));
            let mut k = 0u32;
            for (j, &r) in order.iter().enumerate() {
                if j > 0 && col[order[j - 1]].total_cmp(&col[r]).is_ne() {
                    k += 1;
                }
                ranks[f * rows + r] = k;
            }
            distinct[f] = if rows == 0 { 0 } else { k as usize + 1 };
        }
        let most = distinct.iter().copied().max().unwrap_or(0);
        Columns { rows, values, ranks, distinct, counts: vec![0; most + 1], sorted: Vec::new() }
    }

    fn value(&self, f: usize, r: usize) -> f64 {
        self.values[f * self.rows + r]
    }

    /// Whether `idx` is already in order by feature `f`, and whether `f` is the same over it.
    fn order(&self, idx: &[usize], f: usize) -> Order {
        let ranks = &self.ranks[f * self.rows..(f + 1) * self.rows];
        if idx.windows(2).any(|w| ranks[w[0]] > ranks[w[1]]) {
            Order::Unsorted
        } else if ranks[idx[0]] == ranks[idx[idx.len() - 1]] {
            Order::Constant
        } else {
            Order::Sorted
        }
    }

    /// Sorts `idx` by feature `f`, stably.
    fn sort(&mut self, idx: &mut [usize], f: usize) {
        let ranks = &self.ranks[f * self.rows..(f + 1) * self.rows];
        if idx.len() < 24 {
            // Insertion sort: stable, and quicker than counting over every distinct value.
            for j in 1..idx.len() {
                let (i, key) = (idx[j], ranks[idx[j]]);
                let mut k = j;
                while k > 0 && ranks[idx[k - 1]] > key {
                    idx[k] = idx[k - 1];
                    k -= 1;
                }
                idx[k] = i;
            }
            return;
        }
        let counts = &mut self.counts[..=self.distinct[f]];
        counts.fill(0);
        for &i in idx.iter() {
            counts[ranks[i] as usize + 1] += 1;
        }
        for k in 1..counts.len() {
            counts[k] += counts[k - 1];
        }
        if self.sorted.len() < idx.len() {
            self.sorted.resize(idx.len(), 0);
        }
        let sorted = &mut self.sorted[..idx.len()];
        for &i in idx.iter() {
            let slot = &mut counts[ranks[i] as usize];
            sorted[*slot] = i;
            *slot += 1;
        }
        idx.copy_from_slice(sorted);
    }
}

/// How a node's rows stand against a feature.
enum Order {
    /// Every row has the same value.
    Constant,
    /// In order, not all the same.
    Sorted,
    Unsorted,
}

/// Grows the subtree over rows `idx` into `nodes`, its root at `nodes[at]`.
#[allow(clippy::too_many_arguments)]
fn build(cols: &mut Columns, nf: usize, ys: &[f64], idx: &mut [usize], depth: usize, rng: &mut impl Rng, nodes: &mut Vec<Node>, at: usize) {
    let leaf = |idx: &[usize]| Node { feature: LEAF, threshold: mean(ys, idx), left: 0 };
    if idx.len() < 2 * MIN_LEAF || depth >= MAX_DEPTH {
        nodes[at] = leaf(idx);
        return;
    }
    let mut features: Vec<usize> = (0..nf).collect();
    features.shuffle(rng);
    let try_f = nf.div_ceil(2).max(1);
    let total: f64 = idx.iter().map(|&i| ys[i]).sum();
    let n = idx.len() as f64;
    let mut best: Option<(f64, usize, f64)> = None;
    for &f in features.iter().take(try_f) {
        // Most features tried deep in a tree are constant over the node's rows, or already in
        // order: a stable sort would leave the rows as they are, so it is skipped (and with a
        // constant feature, the scan that would find no split).
        match cols.order(idx, f) {
            Order::Constant => continue,
            Order::Sorted => {}
            Order::Unsorted => cols.sort(idx, f),
        }
        let mut left_sum = 0.0;
        for k in 0..idx.len() - 1 {
            left_sum += ys[idx[k]];
            let (xa, xb) = (cols.value(f, idx[k]), cols.value(f, idx[k + 1]));
            if xa == xb || k + 1 < MIN_LEAF || idx.len() - k - 1 < MIN_LEAF {
                continue;
            }
            let nl = (k + 1) as f64;
            let nr = n - nl;
            // Maximising between-group variance ≡ minimising within-group squared error.
            let gain = left_sum * left_sum / nl + (total - left_sum).powi(2) / nr;
            if best.is_none_or(|b| gain > b.0) {
                best = Some((gain, f, 0.5 * (xa + xb)));
            }
        }
    }
    let Some((_, feature, threshold)) = best else {
        nodes[at] = leaf(idx);
        return;
    };
    let split = partition(idx, |i| cols.value(feature, i) <= threshold);
    let left = nodes.len();
    nodes[at] = Node { feature: feature as u32, threshold, left: left as u32 };
    nodes.extend([Node { threshold: 0.0, feature: LEAF, left: 0 }; 2]);
    let (l, r) = idx.split_at_mut(split);
    build(cols, nf, ys, l, depth + 1, rng, nodes, left);
    build(cols, nf, ys, r, depth + 1, rng, nodes, left + 1);
}

fn partition(idx: &mut [usize], pred: impl Fn(usize) -> bool) -> usize {
    let mut k = 0;
    for j in 0..idx.len() {
        if pred(idx[j]) {
            idx.swap(k, j);
            k += 1;
        }
    }
    k
}

impl Forest {
    /// Fits `trees` trees on bootstrap samples of (xs, ys).
    pub fn fit(xs: &[Vec<f64>], ys: &[f64], trees: usize, rng: &mut impl Rng) -> Forest {
        if xs.is_empty() {
            return Forest::default();
        }
        let n = xs.len();
        let nf = xs[0].len();
        let mut cols = Columns::new(xs);
        let trees = (0..trees)
            .map(|_| {
                let mut idx: Vec<usize> = (0..n).map(|_| rng.random_range(0..n)).collect();
                let mut nodes = Vec::with_capacity(2 * n);
                nodes.push(Node { threshold: 0.0, feature: LEAF, left: 0 });
                build(&mut cols, nf, ys, &mut idx, 0, rng, &mut nodes, 0);
                nodes
            })
            .collect();
        Forest { trees }
    }

    /// Mean and standard deviation of the trees' predictions.
    pub fn predict(&self, x: &[f64]) -> (f64, f64) {
        if self.trees.is_empty() {
            return (0.0, 1.0);
        }
        with_buffer(self.trees.len(), |p| {
            for (p, t) in p.iter_mut().zip(&self.trees) {
                *p = predict_tree(t, x);
            }
            spread(p)
        })
    }

    /// [`Forest::predict`] of each of `rows`, bit for bit, but faster: each tree walks
    /// sixteen rows at once (independent chains of loads the processor overlaps, where one
    /// row at a time waits on each node in turn) while its nodes stay in the cache.
    pub fn predict_many(&self, rows: &[&[f64]]) -> Vec<(f64, f64)> {
        if self.trees.is_empty() {
            return vec![(0.0, 1.0); rows.len()];
        }
        let t = self.trees.len();
        // `by_tree[c * t + k]`: tree k's prediction for row c.
        let mut by_tree = vec![0.0; rows.len() * t];
        let walks: Vec<(Vec<Node>, usize)> = self.trees.iter().map(|nodes| walkable(nodes)).collect();
        // Blocks of rows small enough to stay in the cache while every tree walks them.
        let mut copy: Vec<f64> = vec![];
        for (b, block) in rows.chunks(BLOCK).enumerate() {
            // The block's rows side by side (they are scattered over the heap).
            copy.clear();
            block.iter().for_each(|r| copy.extend_from_slice(r));
            let mut rest = copy.as_slice();
            let block: Vec<&[f64]> = block.iter().map(|r| rest.split_off(..r.len()).unwrap_or_default()).collect();
            for (k, (walk, depth)) in walks.iter().enumerate() {
                for (c0, chunk) in block.chunks(LANES).enumerate() {
                    let mut at = [0usize; LANES];
                    // Every row takes `depth` steps; one at a leaf stays there.
                    for _ in 0..*depth {
                        for (a, x) in at.iter_mut().zip(chunk) {
                            let n = walk[*a];
                            *a = n.left as usize + usize::from(x[n.feature as usize] > n.threshold);
                        }
                    }
                    for (l, a) in at.iter().take(chunk.len()).enumerate() {
                        by_tree[(b * BLOCK + c0 * LANES + l) * t + k] = self.trees[k][*a].threshold;
                    }
                }
            }
        }
        by_tree.chunks(t).map(spread).collect()
    }
}

/// `nodes` with every leaf turned into a step to itself (feature 0, a threshold no value
/// exceeds), so that a walk needs no test for leaves, and the tree's depth.
fn walkable(nodes: &[Node]) -> (Vec<Node>, usize) {
    let walk =
        nodes.iter().enumerate().map(|(i, n)| if n.feature == LEAF { Node { threshold: f64::INFINITY, feature: 0, left: i as u32 } } else { *n }).collect();
    // Children come after their parent: one pass gives every node's depth.
    let mut depth = vec![0usize; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        if n.feature != LEAF {
            depth[n.left as usize] = depth[i] + 1;
            depth[n.left as usize + 1] = depth[i] + 1;
        }
    }
    (walk, depth.into_iter().max().unwrap_or(0))
}

/// Rows walked through a tree together by [`Forest::predict_many`].
const LANES: usize = 16;
/// Rows every tree walks before the next rows (their features stay in the cache).
const BLOCK: usize = 128;

/// Runs `f` on a scratch slice of `n` values, on the stack when it is small.
fn with_buffer<R>(n: usize, f: impl FnOnce(&mut [f64]) -> R) -> R {
    let mut buf = [0.0f64; 64];
    if n <= buf.len() {
        f(&mut buf[..n])
    } else {
        f(&mut vec![0.0; n])
    }
}

/// Mean and standard deviation of the trees' predictions (one function for both ways of
/// predicting, so that they agree to the bit).
fn spread(p: &[f64]) -> (f64, f64) {
    let m = p.iter().sum::<f64>() / p.len() as f64;
    let v = p.iter().map(|y| (y - m).powi(2)).sum::<f64>() / p.len() as f64;
    (m, v.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn learns_a_step_and_knows_where_it_is_unsure() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let xs: Vec<Vec<f64>> = (0..40).map(|i| vec![i as f64, (i % 3) as f64]).collect();
        let ys: Vec<f64> = xs.iter().map(|x| if x[0] < 20.0 { 1.0 } else { 5.0 }).collect();
        let f = Forest::fit(&xs, &ys, 30, &mut rng);
        let (lo, _) = f.predict(&[5.0, 0.0]);
        let (hi, _) = f.predict(&[35.0, 0.0]);
        assert!(lo < 1.5 && hi > 4.5, "{lo} {hi}");
        let (_, sd_edge) = f.predict(&[19.5, 1.0]);
        let (_, sd_far) = f.predict(&[2.0, 1.0]);
        assert!(sd_edge >= sd_far, "{sd_edge} {sd_far}");
    }

    /// The forest as the plain algorithm grows it: each tried feature's rows sorted by a stable
    /// comparison sort, every position scanned on the values themselves.
    fn plain_fit(xs: &[Vec<f64>], ys: &[f64], trees: usize, rng: &mut impl Rng) -> Vec<Vec<Node>> {
        #[allow(clippy::too_many_arguments)]
        fn grow(xs: &[Vec<f64>], ys: &[f64], idx: &mut [usize], depth: usize, rng: &mut impl Rng, nodes: &mut Vec<Node>, at: usize) {
            if idx.len() < 2 * MIN_LEAF || depth >= MAX_DEPTH {
                nodes[at] = Node { feature: LEAF, threshold: mean(ys, idx), left: 0 };
                return;
            }
            let nf = xs[0].len();
            let mut features: Vec<usize> = (0..nf).collect();
            features.shuffle(rng);
            let total: f64 = idx.iter().map(|&i| ys[i]).sum();
            let mut best: Option<(f64, usize, f64)> = None;
            for &f in features.iter().take(nf.div_ceil(2).max(1)) {
                if idx.iter().all(|&i| xs[i][f].total_cmp(&xs[idx[0]][f]).is_eq()) {
                    continue; // constant: no split
                }
                idx.sort_by(|&a, &b| xs[a][f].total_cmp(&xs[b][f]));
                let mut left_sum = 0.0;
                for k in 0..idx.len() - 1 {
                    left_sum += ys[idx[k]];
                    let (xa, xb) = (xs[idx[k]][f], xs[idx[k + 1]][f]);
                    if xa == xb || k + 1 < MIN_LEAF || idx.len() - k - 1 < MIN_LEAF {
                        continue;
                    }
                    let (nl, nr) = ((k + 1) as f64, (idx.len() - k - 1) as f64);
                    let gain = left_sum * left_sum / nl + (total - left_sum).powi(2) / nr;
                    if best.is_none_or(|b| gain > b.0) {
                        best = Some((gain, f, 0.5 * (xa + xb)));
                    }
                }
            }
            let Some((_, feature, threshold)) = best else {
                nodes[at] = Node { feature: LEAF, threshold: mean(ys, idx), left: 0 };
                return;
            };
            let split = partition(idx, |i| xs[i][feature] <= threshold);
            let left = nodes.len();
            nodes[at] = Node { feature: feature as u32, threshold, left: left as u32 };
            nodes.extend([Node { threshold: 0.0, feature: LEAF, left: 0 }; 2]);
            let (l, r) = idx.split_at_mut(split);
            grow(xs, ys, l, depth + 1, rng, nodes, left);
            grow(xs, ys, r, depth + 1, rng, nodes, left + 1);
        }
        let n = xs.len();
        (0..trees)
            .map(|_| {
                let mut idx: Vec<usize> = (0..n).map(|_| rng.random_range(0..n)).collect();
                let mut nodes = vec![Node { threshold: 0.0, feature: LEAF, left: 0 }];
                grow(xs, ys, &mut idx, 0, rng, &mut nodes, 0);
                nodes
            })
            .collect()
    }

    #[test]
    fn the_forest_is_the_one_the_plain_algorithm_grows_to_the_bit() {
        // Columns with few and many distinct values, a constant one, signed zeros (equal, yet
        // ordered apart by `total_cmp`) and NaNs; nodes above and below the insertion-sort size.
        for (seed, rows) in [(1u64, 7usize), (2, 23), (3, 60), (4, 300), (5, 700)] {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let xs: Vec<Vec<f64>> = (0..rows)
                .map(|_| {
                    let a = f64::from(rng.random_range(0..4u8));
                    let b = f64::from(rng.random_range(0..200u16)) * 0.37;
                    let z = if rng.random_bool(0.5) { -0.0 } else { 0.0 };
                    let zero_or_one = if rng.random_bool(0.3) { 1.0 } else { z };
                    let nan = if rng.random_bool(0.1) { f64::NAN } else { f64::from(rng.random_range(0..3u8)) };
                    vec![a, b, 5.0, zero_or_one, nan, a + b.floor()]
                })
                .collect();
            let ys: Vec<f64> = xs.iter().map(|x| (x[0] * 0.3 + x[1]).sin() + 0.01 * x[5] + rng.random::<f64>()).collect();
            let (mut r1, mut r2) = (rand_chacha::ChaCha8Rng::seed_from_u64(seed), rand_chacha::ChaCha8Rng::seed_from_u64(seed));
            let fast = Forest::fit(&xs, &ys, 24, &mut r1);
            let plain = plain_fit(&xs, &ys, 24, &mut r2);
            assert_eq!(fast.trees.len(), plain.len());
            for (t, (a, b)) in fast.trees.iter().zip(&plain).enumerate() {
                let bits = |n: &[Node]| n.iter().map(|n| (n.feature, n.left, n.threshold.to_bits())).collect::<Vec<_>>();
                assert_eq!(bits(a), bits(b), "{rows} rows, tree {t}");
            }
            assert!(fast.trees.iter().any(|t| t.len() > rows / 4), "{rows} rows: the trees hardly grew");
        }
    }

    #[test]
    fn predicting_many_rows_at_once_gives_each_row_s_prediction_to_the_bit() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let xs: Vec<Vec<f64>> = (0..300).map(|_| (0..6).map(|_| f64::from(rng.random_range(0..9u8))).collect()).collect();
        let ys: Vec<f64> = xs.iter().map(|x| (x[0] * x[1] + x[2]).ln_1p() + 0.1 * x[3]).collect();
        let f = Forest::fit(&xs, &ys, 24, &mut rng);
        // 300 rows: whole chunks of lanes and a partial one; every row reaches its own leaf.
        let rows: Vec<&[f64]> = xs.iter().map(|x| x.as_slice()).collect();
        let many = f.predict_many(&rows);
        assert_eq!(many.len(), rows.len());
        let mut spread_seen = false;
        for (x, got) in rows.iter().zip(&many) {
            let one = f.predict(x);
            assert_eq!((got.0.to_bits(), got.1.to_bits()), (one.0.to_bits(), one.1.to_bits()), "{x:?}");
            spread_seen |= one.1 > 0.0;
        }
        assert!(spread_seen, "the trees never disagree: the test would not see a lane mix-up in the spread");
        assert_eq!(Forest::default().predict_many(&rows[..3]), vec![(0.0, 1.0); 3]);
    }
}
