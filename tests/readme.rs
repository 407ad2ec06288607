#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The README and the project's own docs against what ccc does: what the
//! README's commands leave behind is ignored by git; the "As a library"
//! program is `examples/library.rs` verbatim, and runs.

use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every `-o DIR` of a `cargo run` command in the README is a folder
/// `.gitignore` ignores at the repository root, so following the README
/// leaves `git status` clean.
#[test]
fn the_readme_compile_output_is_ignored_by_git() {
    let readme = read("README.md");
    let ignored: Vec<String> = read(".gitignore").lines().map(str::trim).map(str::to_owned).collect();
    let mut outs = Vec::new();
    for line in readme.lines().filter(|l| l.contains("cargo run") && l.contains(" compile ")) {
        let mut words = line.split_whitespace();
        while let Some(word) = words.next() {
            if word == "-o" {
                outs.push(words.next().unwrap().trim_end_matches('/').to_owned());
            }
        }
    }
    assert!(!outs.is_empty(), "the README shows no `cargo run -- compile ... -o DIR`");
    for out in outs {
        assert!(
            ignored.iter().any(|l| *l == format!("/{out}/") || *l == format!("/{out}")),
            "README compiles into {out}/, which .gitignore does not ignore"
        );
    }
}

/// The README's "As a library" program: the very file `cargo run --example
/// library` builds, compiled into this test.
#[path = "../examples/library.rs"]
mod library;

#[test]
fn the_readme_library_program_runs() {
    library::main().unwrap();
}

/// The README shows `examples/library.rs` verbatim, so the snippet a reader
/// copies is the program `cargo test` compiles (without warnings: clippy
/// runs on it with `-D warnings`) and runs.
#[test]
fn the_readme_library_snippet_is_the_tested_example() {
    let readme = read("README.md");
    let section = readme.split("## As a library\n").nth(1).expect("README has an \"As a library\" section");
    let block = section.split("```rust\n").nth(1).and_then(|b| b.split("```").next()).expect("a ```rust block");
    assert_eq!(block, read("examples/library.rs"), "README's library snippet is not examples/library.rs");
    assert!(!block.contains("std::fs") && !block.contains("read_to_string"), "the snippet reads no file");
}
