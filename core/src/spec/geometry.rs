//! Launch geometry as Kernel Tuner computes it, for T1 files and `[launch] problem_size` specs.
//!
//! Kernel Tuner describes a launch by a problem size and, per dimension, a list of "grid
//! divisors": the grid is `ceil(problem_size[d] / product(divisors[d]))`, each divisor an
//! expression over the parameters truncated to an integer. A dimension without divisors is
//! divided by its block size parameter (`block_size_x`, `block_size_y`, `block_size_z`) when the
//! space has one, else not at all. The block is `block_size_x × block_size_y × block_size_z`
//! (256 × 1 × 1 where a name is not a parameter). A problem size is one number or up to three,
//! each a number or an expression over the parameters; missing dimensions are 1.
//!
//! These rules make expressions kerntune's launch evaluates per config, so the geometry is
//! exactly Kernel Tuner's: published T1 files carry a `GlobalSize` too, often one that would
//! launch many times too many blocks, and it is not used when `ProblemSize` is given.

/// The names Kernel Tuner reads the block dimensions from.
pub const BLOCK_SIZE_NAMES: [&str; 3] = ["block_size_x", "block_size_y", "block_size_z"];

/// Kernel Tuner's block when a dimension's name is not a parameter.
const DEFAULT_BLOCK: [&str; 3] = ["256", "1", "1"];

/// The index extent a Kernel Tuner launch covers: the problem size per dimension, and the
/// elements one block covers along it (the product of the grid divisors), as expressions over
/// the parameters and sizes. A fault report compares buffers with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProblemExtent {
    /// The problem size, x, y, z.
    pub size: [String; 3],
    /// Elements one block covers, x, y, z.
    pub per_block: [String; 3],
}

/// The grid expressions for `problem_size` (up to three expressions) and optional divisor
/// lists per dimension, over a space whose parameters are `params`.
pub fn grid(problem_size: &[String], divisors: &[Option<Vec<String>>; 3], params: &[&str]) -> Result<[String; 3], String> {
    grid_and_extent(problem_size, divisors, params).map(|g| g.0)
}

/// [`grid`] and the [`ProblemExtent`] it covers.
pub fn grid_and_extent(problem_size: &[String], divisors: &[Option<Vec<String>>; 3], params: &[&str]) -> Result<([String; 3], ProblemExtent), String> {
    if problem_size.is_empty() || problem_size.len() > 3 {
        return Err(format!("give 1 to 3 problem dimensions, not {}", problem_size.len()));
    }
    let mut out: [String; 3] = ["1".into(), "1".into(), "1".into()];
    let mut extent = ProblemExtent { size: out.clone(), per_block: out.clone() };
    for d in 0..3 {
        let size = problem_size.get(d).map(String::as_str).unwrap_or("1");
        let divs: Vec<String> = match &divisors[d] {
            Some(list) if !list.is_empty() => list.clone(),
            _ if params.contains(&BLOCK_SIZE_NAMES[d]) => vec![BLOCK_SIZE_NAMES[d].to_string()],
            _ => vec![],
        };
        extent.size[d] = format!("int({size})");
        out[d] = if divs.is_empty() {
            format!("int({size})")
        } else {
            let product = divs.iter().map(|x| format!("int({x})")).collect::<Vec<_>>().join(" * ");
            extent.per_block[d] = product.clone();
            format!("ceil(({size}) / ({product}))")
        };
    }
    Ok((out, extent))
}

/// Kernel Tuner's block: the block size parameters, 256 × 1 × 1 where a name is not one.
pub fn block(params: &[&str]) -> [String; 3] {
    [0, 1, 2].map(|d| if params.contains(&BLOCK_SIZE_NAMES[d]) { BLOCK_SIZE_NAMES[d].to_string() } else { DEFAULT_BLOCK[d].to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::expr::Expr;
    use crate::spec::value::Value;

    fn eval(e: &str, names: &[&str], vals: &[i64]) -> i64 {
        Expr::compile(e, names).unwrap().eval_i64(&vals.iter().map(|&v| Value::Int(v)).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn grid_is_problem_size_over_the_divisors() {
        let p = ["block_size_x", "block_size_y", "tile_size_x", "tile_size_y"];
        let g = grid(
            &["4096".into(), "4096".into()],
            &[Some(vec!["block_size_x".into(), "tile_size_x".into()]), Some(vec!["block_size_y".into(), "tile_size_y".into()]), None],
            &p,
        )
        .unwrap();
        // The published convolution file's default (16, 16, 1, 1) and a tiled config.
        let at = |vals: &[i64]| [0, 1, 2].map(|d| eval(&g[d], &p, vals));
        assert_eq!(at(&[16, 16, 1, 1]), [256, 256, 1]);
        assert_eq!(at(&[48, 4, 3, 3]), [29, 342, 1], "ceil(4096/144), ceil(4096/12)");
        // No divisors: the block size parameter divides, else nothing.
        let g = grid(&["1000".into()], &[None, None, None], &["block_size_x"]).unwrap();
        assert_eq!(eval(&g[0], &["block_size_x"], &[128]), 8);
        assert_eq!((g[1].as_str(), g[2].as_str()), ("int(1)", "int(1)"));
        let g = grid(&["n * 2".into()], &[Some(vec!["bx * 2".into()]), None, None], &["n", "bx"]).unwrap();
        assert_eq!(eval(&g[0], &["n", "bx"], &[100, 16]), 7);
        assert!(grid(&[], &[None, None, None], &[]).is_err());
        assert_eq!(block(&["block_size_x", "tile"]), ["block_size_x".to_string(), "1".into(), "1".into()]);
        assert_eq!(block(&[]), ["256".to_string(), "1".into(), "1".into()]);
    }
}
