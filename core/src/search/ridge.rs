//! Ridge regression with its penalty picked by leave-one-out error: a linear model that, unlike
//! a forest, extrapolates. The compile-time model uses it while few compiles are known (the
//! first ones to finish are the quickest, and a forest cannot predict beyond the times it saw).
//!
//! Written here rather than taken from a crate: it is a Cholesky solve of a small system, and
//! the linear-algebra crates would add far more than they save.

/// A fitted linear model on standardized features.
#[derive(Clone, Debug)]
pub struct Ridge {
    mean: Vec<f64>,
    scale: Vec<f64>,
    weights: Vec<f64>,
    intercept: f64,
}

/// Penalties tried; the one with the least leave-one-out error is kept.
const LAMBDAS: [f64; 6] = [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0];

/// The least-squares line `y ≈ a + b·x` through `(x, y)` pairs, its slope chosen by the caller:
/// `slope` gets `Σ(x − x̄)(y − ȳ)` and `Σ(x − x̄)²` (the unconstrained slope is their ratio)
/// and returns the slope to use; the offset then puts the line through the means. `(0, 0)`
/// for no pairs.
pub(crate) fn line_fit(pairs: impl Iterator<Item = (f64, f64)> + Clone, slope: impl FnOnce(f64, f64) -> f64) -> (f64, f64) {
    let n = pairs.clone().count() as f64;
    if n == 0.0 {
        return (0.0, 0.0);
    }
    let (mx, my) = (pairs.clone().map(|p| p.0).sum::<f64>() / n, pairs.clone().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = pairs.clone().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pairs.map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let b = slope(sxy, sxx);
    (my - b * mx, b)
}

/// Cholesky factor `L` (lower, row-major `p × p`) of a symmetric positive-definite `a`.
pub(crate) fn cholesky(a: &[f64], p: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; p * p];
    for i in 0..p {
        for j in 0..=i {
            let s: f64 = a[i * p + j] - (0..j).map(|k| l[i * p + k] * l[j * p + k]).sum::<f64>();
            if i == j {
                if s <= 0.0 || !s.is_finite() {
                    return None;
                }
                l[i * p + i] = s.sqrt();
            } else {
                l[i * p + j] = s / l[j * p + j];
            }
        }
    }
    Some(l)
}

/// Solves `L Lᵀ x = b`.
pub(crate) fn solve(l: &[f64], p: usize, b: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; p];
    for i in 0..p {
        y[i] = (b[i] - (0..i).map(|k| l[i * p + k] * y[k]).sum::<f64>()) / l[i * p + i];
    }
    let mut x = vec![0.0; p];
    for i in (0..p).rev() {
        x[i] = (y[i] - (i + 1..p).map(|k| l[k * p + i] * x[k]).sum::<f64>()) / l[i * p + i];
    }
    x
}

impl Ridge {
    /// Fits `ys` on `xs` (rows of equal length); `None` when there are fewer than two rows.
    pub fn fit(xs: &[Vec<f64>], ys: &[f64]) -> Option<Ridge> {
        let n = xs.len().min(ys.len());
        let p = xs.first()?.len();
        if n < 2 {
            return None;
        }
        let mean: Vec<f64> = (0..p).map(|j| xs[..n].iter().map(|x| x[j]).sum::<f64>() / n as f64).collect();
        let scale: Vec<f64> = (0..p)
            .map(|j| {
                let v = xs[..n].iter().map(|x| (x[j] - mean[j]).powi(2)).sum::<f64>() / n as f64;
                if v > 1e-12 {
                    v.sqrt()
                } else {
                    0.0 // constant in the data: left out
                }
            })
            .collect();
        let z: Vec<Vec<f64>> = xs[..n].iter().map(|x| (0..p).map(|j| if scale[j] > 0.0 { (x[j] - mean[j]) / scale[j] } else { 0.0 }).collect()).collect();
        let ym = ys[..n].iter().sum::<f64>() / n as f64;
        let yc: Vec<f64> = ys[..n].iter().map(|y| y - ym).collect();
        let mut gram = vec![0.0; p * p];
        for r in &z {
            for i in 0..p {
                if r[i] == 0.0 {
                    continue;
                }
                for j in 0..=i {
                    gram[i * p + j] += r[i] * r[j];
                }
            }
        }
        for i in 0..p {
            for j in 0..i {
                gram[j * p + i] = gram[i * p + j];
            }
        }
        let xty: Vec<f64> = (0..p).map(|j| z.iter().zip(&yc).map(|(r, y)| r[j] * y).sum()).collect();
        let mut best: Option<(f64, Vec<f64>)> = None;
        for lambda in LAMBDAS {
            let mut a = gram.clone();
            for i in 0..p {
                a[i * p + i] += lambda;
            }
            let Some(l) = cholesky(&a, p) else { continue };
            let w = solve(&l, p, &xty);
            // Leave-one-out residuals: eᵢ ÷ (1 − hᵢᵢ), hᵢᵢ = zᵢᵀ A⁻¹ zᵢ (the intercept's 1/n added).
            let loo: f64 = z
                .iter()
                .zip(&yc)
                .map(|(r, y)| {
                    let e = y - r.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>();
                    let h = r.iter().zip(solve(&l, p, r)).map(|(a, b)| a * b).sum::<f64>() + 1.0 / n as f64;
                    (e / (1.0 - h).max(1e-6)).powi(2)
                })
                .sum();
            if best.as_ref().is_none_or(|b| loo < b.0) {
                best = Some((loo, w));
            }
        }
        let (_, weights) = best?;
        Some(Ridge { mean, scale, weights, intercept: ym })
    }

    /// The predicted value at `x`.
    pub fn predict(&self, x: &[f64]) -> f64 {
        self.intercept
            + (0..self.weights.len())
                .filter(|&j| self.scale[j] > 0.0)
                .map(|j| self.weights[j] * (x.get(j).copied().unwrap_or(0.0) - self.mean[j]) / self.scale[j])
                .sum::<f64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_a_line_and_extrapolates_it() {
        // y = 2 a − b + 1, seen for a, b in 0..4; predicted at a = 8, beyond what was seen.
        let xs: Vec<Vec<f64>> = (0..4).flat_map(|a| (0..4).map(move |b| vec![a as f64, b as f64, 5.0])).collect();
        let ys: Vec<f64> = xs.iter().map(|x| 2.0 * x[0] - x[1] + 1.0).collect();
        let r = Ridge::fit(&xs, &ys).unwrap();
        let at = r.predict(&[8.0, 1.0, 5.0]);
        assert!((at - 16.0).abs() < 0.2, "{at}");
        assert!(Ridge::fit(&xs[..1], &ys[..1]).is_none(), "one row is not a fit");
    }

    #[test]
    fn noise_alone_is_shrunk_to_the_mean() {
        // y does not depend on x: the chosen penalty leaves the prediction near the mean.
        let xs: Vec<Vec<f64>> = (0..12).map(|i| vec![i as f64]).collect();
        let ys: Vec<f64> = (0..12).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        let r = Ridge::fit(&xs, &ys).unwrap();
        assert!(r.predict(&[100.0]).abs() < 2.0, "{}", r.predict(&[100.0]));
    }
}
