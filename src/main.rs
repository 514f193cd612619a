//! The `kerntune` command line: `devices`, `tune`, `generate`, `simulate`, `db`.

// A build without any backend compiles the tuning paths only to report "not compiled in".
#![cfg_attr(not(any(feature = "wgpu", feature = "cuda", feature = "hip")), allow(dead_code, unused_variables, unused_mut))]

mod cli;

fn main() {
    // Logging first, so that worker processes (this program again) log too, to the stderr
    // they share with the tuner (`KERNTUNE_LOG=kerntune_core=debug` shows their start-up).
    cli::init_logging();
    // In a CUDA, HIP or wgpu worker process this serves the tuner and exits; otherwise it lets
    // those backends run kernels in such workers (so a faulting or hung kernel cannot end a tune).
    kerntune::hook();
    // Mesa's Vulkan drivers complain on every start when XDG_RUNTIME_DIR is unset (containers,
    // CI); give them a private one, as a login session would.
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        let dir = std::env::temp_dir().join(format!("kerntune-runtime-{}", std::process::id()));
        if std::fs::create_dir_all(&dir).is_ok() {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
            }
            std::env::set_var("XDG_RUNTIME_DIR", &dir);
        }
    }
    let code = cli::main();
    kerntune::exit(code);
}
