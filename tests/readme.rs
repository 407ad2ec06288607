#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The README and the project's own docs against what ccc does: what the
//! README's commands leave behind is ignored by git; every verb and flag of
//! `ccc --help` is in the README's command table and in `docs/interface.md`;
//! nothing points outside the repository for the interface or the contract;
//! the "As a library" program is `examples/library.rs` verbatim, and runs.

use std::path::Path;
use std::process::Command;

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

/// `ccc ARGS --help`, as the built binary prints it.
fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ccc")).args(args).arg("--help").output().unwrap();
    assert!(out.status.success(), "ccc {args:?} --help");
    String::from_utf8(out.stdout).unwrap()
}

/// A flag: its long form and its short form, if it has one.
type Flag = (String, Option<String>);

/// The verbs `ccc --help` lists, and for each its flags.
fn verbs_and_flags() -> Vec<(String, Vec<Flag>)> {
    let top = help(&[]);
    let commands = top.split("Commands:\n").nth(1).unwrap().split("\n\n").next().unwrap();
    let verbs: Vec<String> = commands
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|v| *v != "help")
        .map(str::to_owned)
        .collect();
    assert!(verbs.len() >= 7, "{verbs:?}");
    verbs
        .into_iter()
        .map(|verb| {
            let flags = help(&[&verb])
                .lines()
                .filter_map(|l| {
                    let l = l.trim_start();
                    let (short, rest) = match l.strip_prefix('-').filter(|r| !r.starts_with('-')) {
                        Some(r) => (Some(format!("-{}", &r[..1])), r[1..].trim_start_matches(',').trim_start()),
                        None => (None, l),
                    };
                    let long = rest.strip_prefix("--")?.split([' ', '<']).next()?;
                    Some((format!("--{long}"), short))
                })
                .filter(|(long, _)| long != "--help" && long != "--version")
                .collect();
            (verb, flags)
        })
        .collect()
}

/// Every verb and flag the CLI has is in the README's command table (long
/// or short form) and in docs/interface.md (issue 10, items 6 and 11).
#[test]
fn every_verb_and_flag_is_documented() {
    let readme = read("README.md");
    let table_start = readme.find("| command | does | exit |").unwrap();
    let table: Vec<&str> = readme[table_start..].lines().take_while(|l| l.starts_with('|')).collect();
    let interface = read("docs/interface.md");
    for (verb, flags) in verbs_and_flags() {
        let row = table.iter().find(|r| r.starts_with(&format!("| `ccc {verb} "))).unwrap_or_else(|| {
            panic!("the README's command table has no row for `ccc {verb}`");
        });
        assert!(interface.contains(&format!("`ccc {verb} ")), "docs/interface.md does not list `ccc {verb}`");
        for (long, short) in flags {
            let short_in_row = |s: &String| [" ", "]", "`"].iter().any(|end| row.contains(&format!("{s}{end}")));
            let in_row = row.contains(&long) || short.as_ref().is_some_and(short_in_row);
            assert!(in_row, "README's row for `ccc {verb}` does not mention {long}: {row}");
            assert!(interface.contains(&long), "docs/interface.md does not mention `ccc {verb} {long}`");
        }
    }
}

/// The interface and the contract are the project's own copies in docs/:
/// no text points at a folder outside the repository for them (issue 10,
/// item 6).
#[test]
fn the_interface_and_contract_are_the_repositorys_own() {
    let outside = ["shared", "spec"].join("/");
    let mut stack = vec![Path::new(ROOT).to_path_buf()];
    let mut found = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") || name.ends_with(".md") || name.ends_with(".toml") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                if text.contains(&outside) {
                    found.push(path.strip_prefix(ROOT).unwrap().display().to_string());
                }
            }
        }
    }
    assert!(found.is_empty(), "these point at {outside}/ (outside the repository), not docs/: {found:?}");
    for doc in ["docs/interface.md", "docs/wire-contract.md"] {
        assert!(Path::new(ROOT).join(doc).is_file(), "{doc} is missing");
    }
}

/// Every example of `ccc` output the README shows (a fenced block opened
/// by `$ ccc ...`) is what that command prints today: each shown line,
/// its runs of spaces taken as one, is a line of the output, in order,
/// where `...` alone stands for any lines and a line ending in ` ...`
/// for any line that starts as it does. A model or format change that
/// leaves the README behind fails here.
#[test]
fn the_readme_ccc_examples_are_what_ccc_prints() {
    let readme = read("README.md");
    let squeeze = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut checked = 0;
    for block in readme.split("```\n").skip(1).step_by(2) {
        let mut lines = block.lines();
        let Some(command) = lines.next().and_then(|l| l.strip_prefix("$ ccc ")) else { continue };
        let args: Vec<&str> = command.split_whitespace().collect();
        let out = Command::new(env!("CARGO_BIN_EXE_ccc")).args(&args).current_dir(ROOT).output().unwrap();
        assert!(out.status.success(), "README: ccc {command}: {}", String::from_utf8_lossy(&out.stderr));
        let printed = String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap();
        let mut printed = printed.lines().map(squeeze);
        for shown in lines.map(squeeze).filter(|l| l != "...") {
            let matches = |p: &String| match shown.strip_suffix(" ...") {
                Some(start) => p.starts_with(start),
                None => *p == shown,
            };
            assert!(printed.any(|p| matches(&p)), "README: ccc {command}: not printed (in this order): {shown}");
        }
        checked += 1;
    }
    assert!(checked >= 4, "the README shows {checked} ccc examples");
}
