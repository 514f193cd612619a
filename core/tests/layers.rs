//! The stage folders of `core/src` depend one way, and so do the files of every backend crate:
//! this test reads the sources, finds every `crate::` path outside comments and test modules,
//! and fails on an import that points up (or sideways between siblings), naming the file and
//! the path. See ARCHITECTURE.md for the order and why.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// core's layers, bottom first. A module may import its own layer's vocabulary-free peers only
/// where listed in `SIBLINGS_OK`; otherwise only strictly lower layers.
const CORE_LAYERS: &[&[&str]] = &[
    &["limits", "target", "hash", "hint"],
    &["error"],
    &["spec"],
    &["space"],
    &["plan"],
    &["search", "measure"],
    &["backend"],
    &["store", "worker", "sharing"],
    &["compiler"],
    &["run", "sim"],
    &["app", "analysis"],
    &["fake", "testing"],
];

/// Each backend crate's files, bottom first (same order in every backend; a backend lacks the
/// files it does not need, and HIP adds its hand-written hipRTC binding at the bottom).
const BACKEND_LAYERS: &[&[&str]] = &[
    &["error", "hiprtc"],
    &["limits", "memory"],
    &["device", "cubin"],
    &["compile"],
    &["bench"],
    &["clock", "guard"],
    &["backend"],
    &["launch", "worker"],
    &["lib"],
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Code without line comments and without what follows the first `#[cfg(test)]` item (test
/// modules and fixtures stand at the end of a file).
fn code_of(text: &str) -> String {
    let text = text.split("\n#[cfg(test)]\n").next().unwrap_or(text);
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// The first segment of every `crate::` path, including the names inside `use crate::{a, b::c}`.
fn imports(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // e.g. `kerntune_core::` is another crate
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    out.push(name);
                }
            }
        } else {
            out.push(rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect());
        }
    }
    out
}

fn rank(layers: &[&[&str]], module: &str) -> Option<usize> {
    layers.iter().position(|l| l.contains(&module))
}

/// Checks every file under `src`; `module_of` maps a file to the module it belongs to.
fn check(src: &Path, layers: &[&[&str]], module_of: impl Fn(&Path) -> String) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut problems = Vec::new();
    let mut graph: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in files {
        let module = module_of(f.strip_prefix(src).unwrap());
        let Some(mine) = rank(layers, &module) else {
            problems.push(format!("{}: module `{module}` is in no layer; add it to the layer list in core/tests/layers.rs", f.display()));
            continue;
        };
        for dep in imports(&code_of(&std::fs::read_to_string(&f).unwrap())) {
            if dep == module || dep == "self" || dep == "super" {
                continue;
            }
            let Some(theirs) = rank(layers, &dep) else { continue };
            graph.entry(module.clone()).or_default().push(dep.clone());
            if theirs >= mine {
                problems.push(format!(
                    "{}: `crate::{dep}` points {} (`{module}` is layer {mine}, `{dep}` layer {theirs})",
                    f.display(),
                    if theirs == mine { "sideways" } else { "up" }
                ));
            }
        }
    }
    problems
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

#[test]
fn core_stages_depend_one_way() {
    let problems = check(&root().join("core/src"), CORE_LAYERS, |rel| {
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().to_string();
        first.trim_end_matches(".rs").to_string()
    });
    // lib.rs declares the modules and re-exports; it is the crate's top, not a layer.
    let problems: Vec<_> = problems.into_iter().filter(|p| !p.contains("module `lib`")).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn backend_files_depend_one_way() {
    for crate_dir in ["backend-cuda", "backend-hip", "backend-wgpu"] {
        let problems = check(&root().join(crate_dir).join("src"), BACKEND_LAYERS, |rel| rel.to_string_lossy().trim_end_matches(".rs").to_string());
        assert!(problems.is_empty(), "{crate_dir}:\n{}", problems.join("\n"));
    }
}

#[test]
fn the_checker_finds_an_upward_import() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("spec")).unwrap();
    std::fs::write(dir.path().join("spec/job.rs"), "use crate::run::tuner::Tuner;\n// crate::store is only mentioned\n").unwrap();
    std::fs::write(dir.path().join("run.rs"), "use crate::{spec::job, store};\n").unwrap();
    let problems = check(dir.path(), CORE_LAYERS, |rel| rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("`crate::run` points up"), "{problems:?}");
    assert_eq!(imports("use crate::{spec::job, store::db::Database};\nlet x = crate::plan::prepare::Launch::default();"), ["spec", "store", "plan"]);
}
