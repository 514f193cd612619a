//! What the surrogate models see of a config: numbers derived from its parameter values.

use crate::spec::job::Param;

/// Features of the config at `coords`: for each parameter with more than one value, its value
/// index, its value (log2 when positive) and, for whole values, the largest power of two
/// dividing it (block sizes that are multiples of the warp or of a cache line behave alike);
/// then the sum of log values of every pair of parameters (their product: kernel and compile
/// times often depend on threads × per-thread tile and the like, which single splits cannot
/// see).
pub fn encode(params: &[Param], coords: &[u32]) -> Vec<f64> {
    let mut f = Vec::with_capacity(coords.len() * 3);
    let mut logs = Vec::with_capacity(coords.len());
    for (p, &vi) in coords.iter().enumerate() {
        let Some(param) = params.get(p) else { continue };
        if param.values.len() < 2 {
            continue; // a constant parameter tells a model nothing
        }
        f.push(vi as f64);
        let v = param.values.get(vi as usize).and_then(|v| v.as_f64()).unwrap_or(vi as f64);
        let l = if v > 0.0 { v.log2() } else { v };
        f.push(l);
        logs.push(l);
        let whole = v.fract() == 0.0 && v.abs() >= 1.0 && v.abs() < 1e15;
        f.push(if whole { f64::from((v.abs() as u64).trailing_zeros().min(12)) } else { 0.0 });
    }
    for a in 0..logs.len() {
        for b in a + 1..logs.len() {
            f.push(logs[a] + logs[b]);
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_parameters_are_left_out_and_pairs_are_products() {
        let params = [Param::new("a", [1, 2, 4]), Param::new("b", [8]), Param::new("c", [16, 32])];
        let f = encode(&params, &[2, 0, 1]);
        // a: index 2, log2 4 = 2, 2 trailing zeros; c: index 1, log2 32 = 5, 5 zeros; a·c: 2 + 5.
        assert_eq!(f, vec![2.0, 2.0, 2.0, 1.0, 5.0, 5.0, 7.0]);
    }
}
