//! `kerntune devices`.

use crate::cli::out::outln;
use kerntune::BackendChoice;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only this backend: auto (all compiled in), cuda, hip or wgpu.
    #[arg(long, default_value = "auto")]
    backend: BackendChoice,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

#[derive(serde::Serialize)]
struct Found {
    backend: String,
    index: usize,
    target: kerntune::Target,
    /// An object in JSON (`details.api`, `details.driver`), in the order listed.
    #[serde(serialize_with = "as_object")]
    details: Vec<(String, String)>,
    limits: kerntune::Limits,
}

fn as_object<S: serde::Serializer>(pairs: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    let mut found: Vec<Found> = Vec::new();
    // Why a backend found nothing, by backend: an error when the command asked for that
    // backend or nothing was found at all, otherwise a note (a compiled-in backend that found
    // nothing said nothing: a user missing their GPU from the list was not told why).
    let mut problems: Vec<(&str, String)> = Vec::new();
    for b in ["cuda", "hip", "wgpu"] {
        let choice: BackendChoice = b.parse().expect("known");
        if a.backend != BackendChoice::Auto && a.backend != choice {
            continue;
        }
        match b {
            #[cfg(feature = "wgpu")]
            "wgpu" => {
                let list = kerntune::wgpu_backend::adapters();
                if list.is_empty() {
                    problems.push((b, "no adapter found (no Vulkan, Metal or DX12 driver); on Debian/Ubuntu `apt-get install mesa-vulkan-drivers` gives a software Vulkan device".into()));
                }
                for s in list {
                    let mut details = vec![
                        ("api".into(), format!("{:?}", s.info.backend)),
                        ("type".into(), format!("{:?}", s.info.device_type)),
                        ("driver".into(), format!("{} {}", s.info.driver, s.info.driver_info).trim().to_string()),
                        ("shader_f16".into(), if s.shader_f16 { "yes".into() } else { "no (f16 kernels cannot run here)".into() }),
                    ];
                    if !s.info.device_pci_bus_id.is_empty() {
                        details.push(("pci_bus".into(), s.info.device_pci_bus_id.clone()));
                    }
                    found.push(Found { backend: "wgpu".into(), index: s.index, details, target: s.target, limits: s.limits });
                }
            }
            #[cfg(feature = "cuda")]
            "cuda" => match kerntune::cuda_backend::devices() {
                Ok(list) => {
                    for d in list {
                        found.push(Found {
                            backend: "cuda".into(),
                            index: d.ordinal,
                            details: d.attributes.iter().map(|(k, v)| (k.clone(), v.to_string())).collect(),
                            target: d.target,
                            limits: d.limits,
                        });
                    }
                }
                Err(e) => problems.push((b, e.to_string())),
            },
            #[cfg(feature = "hip")]
            "hip" => match kerntune::hip_backend::devices() {
                Ok(list) => {
                    for d in list {
                        found.push(Found {
                            backend: "hip".into(),
                            index: d.ordinal,
                            details: vec![("gcnArchName".into(), d.attributes.arch_name.clone())],
                            target: d.target,
                            limits: d.limits,
                        });
                    }
                }
                Err(e) => problems.push((b, e.to_string())),
            },
            _ => problems.push((b, kerntune::OpenError::NotCompiledIn { backend: b.into() }.to_string())),
        }
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&found)?);
    } else {
        for f in &found {
            outln!("[{} #{}] {}  (arch {}, fingerprint {})", f.backend, f.index, f.target.name, f.target.arch, f.target.fingerprint);
            for (k, v) in &f.details {
                // A driver's attributes (CUDA's `SharedPerBlock`, `L2Bytes`) read as the limits do.
                let lower = k.to_ascii_lowercase();
                let sized = (lower.contains("shared") || lower.ends_with("bytes")).then(|| v.parse::<u64>().ok()).flatten();
                match sized {
                    Some(b) => outln!("    {k:<26} {v} ({})", kerntune::limits::human_bytes(b)),
                    None => outln!("    {k:<26} {v}"),
                }
            }
            let l = serde_json::to_value(&f.limits)?;
            // wgpu reports no multiprocessor count: a software adapter's is the host's cores,
            // a GPU's a stand-in of 1 (what occupancy-derived grids fall back to).
            let software = f.details.iter().any(|(k, v)| k == "type" && v == "Cpu");
            if let Some(m) = l.as_object() {
                for (k, v) in m {
                    match k.as_str() {
                        "sm_count" if f.backend == "wgpu" && software => outln!("    {k:<26} {} (the host's cores)", shown(k, v)),
                        "sm_count" if f.backend == "wgpu" => outln!("    {k:<26} unknown (wgpu does not report it; 1 assumed)"),
                        _ => outln!("    {k:<26} {}", shown(k, v)),
                    }
                }
            }
        }
    }
    let level = if found.is_empty() || a.backend != BackendChoice::Auto { "error" } else { "note" };
    for (b, p) in &problems {
        crate::cli::out::eprint_line(&format!("{level}: {b}: {p}"));
    }
    Ok(if found.is_empty() { 1 } else { 0 })
}

/// A limit as a person reads it: sizes in bytes with their unit beside the count, bandwidth in
/// GB/s, throughput in TFLOP/s (`--json` keeps the plain numbers).
fn shown(key: &str, v: &serde_json::Value) -> String {
    match (v.as_u64(), v.as_f64()) {
        _ if v.is_null() => "unknown".to_string(),
        (Some(b), _) if key.ends_with("_bytes") || key.starts_with("shared_mem") => format!("{b} ({})", kerntune::limits::human_bytes(b)),
        (_, Some(x)) if key == "memory_bandwidth" => format!("{:.0} GB/s", x / 1e9),
        (_, Some(x)) if key.starts_with("peak_flops") => format!("{:.1} TFLOP/s", x / 1e12),
        _ => v.to_string(),
    }
}
