//! `ccc import MODULE --target T [-o FILE]`: the RON program equivalent to an
//! XLA HLO module's collectives, each under a comment naming its HLO
//! instruction; and [`import_file`], which every verb uses to read an HLO
//! module given in place of a spec.

use crate::Failure;
use crate::args::{HloArgs, ImportArgs};
use crate::load::{HLO_CAP, SPEC_CAP, read_text};
use crate::report::located_report;
use ccc_compiler::hlo::{Imported, Target, emit, import_module, parse_target};
use ccc_compiler::parse::strip_bom;
use ccc_ir::spec::Algorithm;
use std::path::Path;
use std::process::ExitCode;

/// Runs `ccc import`.
pub fn run(args: &ImportArgs) -> Result<ExitCode, Failure> {
    let text = read_text(&args.module, HLO_CAP, "HLO module")?;
    let src = strip_bom(&text);
    if !ccc_compiler::hlo::looks_like_hlo(src) {
        return Err(Failure::input(miette::miette!(
            help = "an HLO module starts `HloModule NAME` (`as_text()`, `--xla_dump_to`)",
            "{} is not an XLA HLO module",
            args.module.display()
        )));
    }
    let imported = import_file(&args.module, src, &args.hlo)?;
    let ron = emit::to_ron(&imported, &args.module.display().to_string())
        .map_err(|e| Failure::input(miette::miette!("cannot write the program as RON: {e}")))?;
    match &args.out {
        None => crate::out::emit(&ron)?,
        Some(out) => std::fs::write(out, ron)
            .map_err(|e| Failure::input(miette::miette!("cannot write {}: {e}", out.display())))?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Imports the HLO module at `path` (whose text is `src`) for the target and
/// algorithm of `hlo`.
///
/// # Errors
///
/// A bad-input [`Failure`] (exit 2): no `--target`, a target or
/// `--algorithm` that is not RON of its schema, or an HLO error (a snippet
/// of the module at its line and column).
pub fn import_file(path: &Path, src: &str, hlo: &HloArgs) -> Result<Imported, Failure> {
    let name = path.display().to_string();
    let Some(target_path) = &hlo.target else {
        return Err(Failure::input(miette::miette!(
            help = "pass --target TARGET.ron, e.g. a file holding `(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8))`",
            "{name} is an XLA HLO module: it names devices, not a machine, so it needs --target"
        )));
    };
    let target = read_target(target_path)?;
    let algorithm = hlo.algorithm.as_deref().map(parse_algorithm).transpose()?;
    import_module(src, &target, algorithm.as_ref()).map_err(|e| {
        let range = e.byte_range(src);
        Failure::input(located_report(&name, src, range, &e.message, "here".to_owned(), Some(e.help.clone())))
    })
}

/// Reads and parses a target file.
fn read_target(path: &Path) -> Result<Target, Failure> {
    let text = read_text(path, SPEC_CAP, "target")?;
    parse_target(&text).map_err(|e| {
        Failure::input(miette::miette!(
            code = "ccc::target",
            "cannot parse target {}:{}: {}",
            path.display(),
            e.start,
            e.message
        ))
    })
}

/// `--algorithm NAME`: an algorithm as a spec writes it.
fn parse_algorithm(text: &str) -> Result<Algorithm, Failure> {
    ccc_compiler::hlo::target::parse_algorithm(text)
        .map_err(|e| Failure::input(miette::miette!("--algorithm {text}: {}", e.message)))
}

/// `ccc diagnose` on HLO modules (every input one, `--target` given, prose
/// output): compares each module's collectives with the first's and names
/// the instructions that differ. `None` when the inputs are not all HLO, or
/// their collectives agree (the signature comparison then runs as for specs).
///
/// # Errors
///
/// A bad-input [`Failure`] when a module cannot be read or imported.
pub fn diagnose_modules(args: &crate::args::DiagnoseArgs) -> Result<Option<ExitCode>, Failure> {
    if args.hlo.target.is_none() || args.json || args.inputs.iter().any(|p| p.is_dir()) {
        return Ok(None);
    }
    let mut modules = Vec::new();
    for path in &args.inputs {
        let text = read_text(path, HLO_CAP, "HLO module")?;
        let src = strip_bom(&text);
        if !ccc_compiler::hlo::looks_like_hlo(src) {
            return Ok(None);
        }
        modules.push((path, import_file(path, src, &args.hlo)?));
    }
    let Some(((first_path, first), rest)) = modules.split_first() else { return Ok(None) };
    let mut out = String::new();
    for (path, module) in rest {
        let differences = ccc_compiler::hlo::compare::compare(first, module);
        if differences.is_empty() {
            continue;
        }
        out.push_str(&format!("{} and {} differ in their HLO collectives:\n", first_path.display(), path.display()));
        for d in &differences {
            out.push_str(&format!("  {d}\n"));
        }
    }
    if out.is_empty() {
        return Ok(None);
    }
    out.push_str(&format!("likely cause: {}\n", ccc_compiler::hlo::compare::CAUSE));
    crate::out::emit(&out)?;
    Ok(Some(ExitCode::from(1)))
}
