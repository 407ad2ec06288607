//! The cross-crate tests of ccc, in one binary (one link step instead of
//! one per file): each module is one area, run alone with
//! `cargo test --test all <module>::`. Snapshot paths are set in one place,
//! [`snapshot::settings`].

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod snapshot;

mod certificate;
mod cli_robustness;
mod cost_cli;
mod decode_cli;
mod determinism;
mod diagnose_cli;
mod examples;
mod fidelity;
mod fuzz_smoke;
mod hlo_import;
mod input_bounds;
mod invalid_specs;
mod json_errors;
mod output_dir;
mod plurals;
mod readme;
mod signature;
mod timings;

/// Every test file of every crate is a module of its crate's one test
/// binary, or a test target of its own in the crate's `Cargo.toml` (one
/// that needs a binary to itself: a global allocator): with `autotests =
/// false`, a file left out of both would silently never run.
#[test]
fn every_test_file_is_a_module() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in ["tests", "ir/tests", "compiler/tests"] {
        let dir = root.join(dir);
        let main = std::fs::read_to_string(dir.join("main.rs")).unwrap_or_default();
        let manifest = dir.parent().map(|c| c.join("Cargo.toml")).and_then(|m| std::fs::read_to_string(m).ok());
        let manifest = manifest.unwrap_or_default();
        let mut stems: Vec<String> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let is_mod_dir = e.path().join("mod.rs").is_file();
                name.strip_suffix(".rs").map(str::to_owned).or(is_mod_dir.then_some(name))
            })
            .filter(|stem| stem != "main")
            .collect();
        stems.sort();
        assert!(!stems.is_empty(), "{} has no test files", dir.display());
        for stem in stems {
            let target = format!("\n[[test]]\nname = \"{stem}\"\npath = \"tests/{stem}.rs\"\n");
            assert!(
                main.contains(&format!("\nmod {stem};\n")) || manifest.contains(&target),
                "{}/{stem} is not a module of its main.rs, nor a test target of its own",
                dir.display()
            );
        }
    }
}
