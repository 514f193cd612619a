//! `kerntune generate`: the generated config set for a target, class and shape.

use crate::cli::out::outln;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use kerntune::plan::generate::{generate, GenContext, Shape};
use kerntune::spec::Class;
use kerntune::PruneOptions;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A preset (a100, h100, h200, mi250x, mi300x, rx7900xtx, llvmpipe) or an architecture
    /// (sm_80, sm_90, gfx90a, gfx942, gfx1100). Without it, the local device is used.
    #[arg(long)]
    target: Option<String>,
    /// Kernel class: elementwise, reduction, matmul, attention.
    #[arg(long)]
    class: String,
    /// Problem shape: MxNxK (matmul), MxNxD (attention: query, key length, head dim) or N.
    #[arg(long)]
    shape: String,
    /// Element type: f32, f16, bf16 or f64.
    #[arg(long, default_value = "f32")]
    dtype: String,
    /// Rows of the candidate table.
    #[arg(long, default_value_t = 20)]
    top: usize,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    let class = Class::parse(&a.class).ok_or_else(|| anyhow::anyhow!("--class: `{}` is not elementwise, reduction, matmul or attention", a.class))?;
    let sizes = Shape::sizes(&a.shape).unwrap_or_default();
    let shape = Shape::from_sizes(&sizes).ok_or_else(|| {
        anyhow::anyhow!(
            "--shape: `{}` is not a shape: give one to three sizes of at least 1, joined by x (1048576, 4096x4096, 4096x4096x4096)",
            kerntune::spec::error::quote(&a.shape)
        )
    })?;
    let sizes = sizes.len();
    if matches!(class, Class::Matmul | Class::Attention) && sizes != 3 {
        let want = if matches!(class, Class::Matmul) { "MxNxK" } else { "MxNxD (queries, keys, head dimension)" };
        anyhow::bail!("--shape: {} needs three sizes, {want}, such as 4096x4096x64; `{}` has {sizes}", a.class, kerntune::spec::error::quote(&a.shape));
    }
    let elem_bytes = match a.dtype.as_str() {
        "f32" | "float" => 4,
        "f16" | "bf16" | "half" => 2,
        "f64" | "double" => 8,
        other => anyhow::bail!("--dtype: `{other}` is not f32, f16, bf16 or f64"),
    };
    let (target, limits) = match &a.target {
        Some(t) => super::target_preset(t)?,
        None => {
            let b = kerntune::open(kerntune::BackendChoice::Auto, None)?;
            (b.target().clone(), b.limits().clone())
        }
    };
    let ctx = GenContext { target: &target, limits: &limits, class, shape, elem_bytes, prune: PruneOptions::default() };
    let g = generate(&ctx).map_err(anyhow::Error::msg)?;
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&serde_json::json!({"target": target, "class": class, "shape": shape, "generated": g}))?);
        return Ok(0);
    }
    outln!(
        "{} on {} ({}): {} candidates, {} pruned; default {} {}",
        g.generator,
        target.name,
        target.arch,
        g.candidates.len(),
        g.pruned.len(),
        shown(&g.default),
        if g.default_included { "(included)" } else { "(pruned: does not fit this device)" }
    );
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(["#", "config", "model estimate (ms)"]);
    for (i, (c, est)) in g.candidates.iter().take(a.top).enumerate() {
        t.add_row(vec![(i + 1).to_string(), shown(c), est.map_or("-".into(), |e| format!("{:.4}", e * 1e3))]);
    }
    outln!("{t}");
    if !g.candidates.is_empty() && g.candidates.iter().all(|c| c.1.is_none()) {
        // No estimate at all: the table's order is the keys', which the `-` column alone does
        // not say.
        outln!(
            "note: no model estimate: {} reports neither its peak FLOP/s nor its memory bandwidth, so the candidates are listed in key order; a tune measures them (`--target` with a GPU preset, such as h100 or mi300x, shows the model's order there)",
            target.name
        );
    }
    // The roofline model gives configs of the same bound and wave efficiency one estimate: its
    // order among them says nothing, which the table alone does not show.
    if let Some(best) = g.candidates.first().and_then(|c| c.1) {
        let tied = g.candidates.iter().filter(|c| c.1.is_some_and(|e| (e - best).abs() <= best * 1e-9)).count();
        if tied > 1 {
            outln!(
                "note: the model gives {tied} configs the fastest estimate ({:.4} ms: one roofline bound and wave efficiency) and cannot order them; a tune measures them",
                best * 1e3
            );
        }
    }
    for (k, n) in g.pruned_counts() {
        let ex = g.pruned.iter().find(|(_, r)| r.category() == k).map(|(c, r)| format!("{}: {r}", shown(c))).unwrap_or_default();
        outln!("pruned {k}: {n}  (e.g. {ex})");
    }
    Ok(0)
}

/// A generated config's key without the launch knobs (`@threads=128`) that repeat a parameter of
/// the same name and value (`threads=128`): each row named them twice.
fn shown(c: &kerntune::Config) -> String {
    let key = c.key();
    let parts: Vec<&str> = key.split(',').collect();
    parts.iter().filter(|p| !p.strip_prefix('@').is_some_and(|plain| parts.contains(&plain))).copied().collect::<Vec<_>>().join(",")
}
