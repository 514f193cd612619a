//! A small random forest of regression trees, for the model-guided strategy.
//!
//! Written here rather than taken from a crate because the strategy needs each tree's own
//! prediction (their spread is the model's uncertainty, which expected improvement needs), and
//! the available crates hide the trees behind an averaged `predict`.

use rand::seq::SliceRandom;
use rand::Rng;

#[derive(Clone, Debug)]
enum Node {
    Leaf(f64),
    Split { feature: usize, threshold: f64, left: Box<Node>, right: Box<Node> },
}

impl Node {
    fn predict(&self, x: &[f64]) -> f64 {
        match self {
            Node::Leaf(v) => *v,
            Node::Split { feature, threshold, left, right } => {
                if x[*feature] <= *threshold {
                    left.predict(x)
                } else {
                    right.predict(x)
                }
            }
        }
    }
}

/// Bagged regression trees with random feature subsets at each split.
#[derive(Clone, Debug, Default)]
pub struct Forest {
    trees: Vec<Node>,
}

const MIN_LEAF: usize = 2;
const MAX_DEPTH: usize = 12;

fn mean(ys: &[f64], idx: &[usize]) -> f64 {
    idx.iter().map(|&i| ys[i]).sum::<f64>() / idx.len().max(1) as f64
}

fn build(xs: &[Vec<f64>], ys: &[f64], idx: &mut [usize], depth: usize, rng: &mut impl Rng) -> Node {
    if idx.len() < 2 * MIN_LEAF || depth >= MAX_DEPTH {
        return Node::Leaf(mean(ys, idx));
    }
    let nf = xs[0].len();
    let mut features: Vec<usize> = (0..nf).collect();
    features.shuffle(rng);
    let try_f = nf.div_ceil(2).max(1);
    let total: f64 = idx.iter().map(|&i| ys[i]).sum();
    let n = idx.len() as f64;
    let mut best: Option<(f64, usize, f64)> = None;
    for &f in features.iter().take(try_f) {
        idx.sort_by(|&a, &b| xs[a][f].total_cmp(&xs[b][f]));
        let mut left_sum = 0.0;
        for k in 0..idx.len() - 1 {
            left_sum += ys[idx[k]];
            let (xa, xb) = (xs[idx[k]][f], xs[idx[k + 1]][f]);
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
    let Some((_, feature, threshold)) = best else { return Node::Leaf(mean(ys, idx)) };
    let split = partition(idx, |i| xs[i][feature] <= threshold);
    let (l, r) = idx.split_at_mut(split);
    Node::Split { feature, threshold, left: Box::new(build(xs, ys, l, depth + 1, rng)), right: Box::new(build(xs, ys, r, depth + 1, rng)) }
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
        let trees = (0..trees)
            .map(|_| {
                let mut idx: Vec<usize> = (0..n).map(|_| rng.random_range(0..n)).collect();
                build(xs, ys, &mut idx, 0, rng)
            })
            .collect();
        Forest { trees }
    }

    /// Mean and standard deviation of the trees' predictions.
    pub fn predict(&self, x: &[f64]) -> (f64, f64) {
        if self.trees.is_empty() {
            return (0.0, 1.0);
        }
        let p: Vec<f64> = self.trees.iter().map(|t| t.predict(x)).collect();
        let m = p.iter().sum::<f64>() / p.len() as f64;
        let v = p.iter().map(|y| (y - m).powi(2)).sum::<f64>() / p.len() as f64;
        (m, v.sqrt())
    }
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
}
