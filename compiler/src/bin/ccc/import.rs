//! `ccc import MODULE --target T [-o FILE]`: the RON program equivalent to an
//! XLA HLO module's collectives, each under a comment naming its HLO
//! instruction; and `diagnose` on HLO modules. (Every verb reads an HLO
//! module given in place of a spec through `load::import_file`.)

use crate::Failure;
use crate::args::ImportArgs;
use crate::load::{HLO_CAP, TargetValues, import_file, read_text};
use ccc_compiler::hlo::emit;
use ccc_compiler::parse::strip_bom;
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
    let imported = import_file(&args.module, src, &args.hlo, TargetValues::Checked)?;
    let ron = emit::to_ron(&imported, &args.module.display().to_string())
        .map_err(|e| Failure::input(miette::miette!("cannot write the program as RON: {e}")))?;
    match &args.out {
        None => crate::out::emit(&ron)?,
        Some(out) => crate::out::write_new(out, &ron)?,
    }
    Ok(ExitCode::SUCCESS)
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
        modules.push((path, import_file(path, src, &args.hlo, TargetValues::Validated)?));
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
