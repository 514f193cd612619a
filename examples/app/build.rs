//! Embeds shipped winners: with `KERNTUNE_WINNERS=path/to/winners.rs` (what
//! `kerntune db export --rust --out winners.rs` writes) the program starts with those winners and
//! needs neither tuning nor a database; without it the list is empty.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=KERNTUNE_WINNERS");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("winners.rs");
    let text = match std::env::var_os("KERNTUNE_WINNERS") {
        Some(p) => {
            let p = PathBuf::from(p);
            println!("cargo:rerun-if-changed={}", p.display());
            match std::fs::read_to_string(&p) {
                Ok(t) => t,
                Err(e) => {
                    println!("cargo:error=KERNTUNE_WINNERS={}: {e}; write it with `kerntune db export --rust --out FILE`", p.display());
                    std::process::exit(1);
                }
            }
        }
        None => "&[]\n".to_string(),
    };
    if let Err(e) = std::fs::write(&out, text) {
        println!("cargo:error=writing {}: {e}", out.display());
        std::process::exit(1);
    }
}
