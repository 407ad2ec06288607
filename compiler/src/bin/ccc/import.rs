//! `ccc import MODULE --target T [-o FILE]`: the RON program equivalent to an
//! XLA HLO module's collectives, each under a comment naming its HLO
//! instruction; and `diagnose` on HLO modules. (Every verb reads an HLO
//! module given in place of a spec through `load::import_file`.)

use crate::Failure;
use crate::args::ImportArgs;
use crate::load::{HLO_CAP, TargetValues, import_file, read_text};
use ccc_compiler::hlo::emit;
use ccc_compiler::parse::strip_bom;
use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
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
/// output): groups the modules whose collectives agree, compares each other
/// group with the largest (the earliest of equal ones) and names the
/// instructions that differ. `None` when the inputs are not all HLO, or
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
        modules.push((path, import_file(path, src, &args.hlo, TargetValues::Checked)?));
    }
    // Modules whose collectives agree form a group (by one key each, in
    // the order first met); the largest (the earliest of equal ones) is
    // the reference the others are told apart from, so that one odd rank
    // among many is the one named.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    for (i, (_, module)) in modules.iter().enumerate() {
        match by_key.entry(ccc_compiler::hlo::compare::key(module)) {
            Entry::Occupied(g) => groups[*g.get()].push(i),
            Entry::Vacant(g) => {
                g.insert(groups.len());
                groups.push(vec![i]);
            }
        }
    }
    let Some(most) = groups.iter().map(Vec::len).max() else { return Ok(None) };
    let Some(majority) = groups.iter().find(|g| g.len() == most) else { return Ok(None) };
    let (reference_path, reference) = &modules[majority[0]];
    let names = |g: &[usize]| g.iter().map(|&i| modules[i].0.display().to_string()).collect::<Vec<_>>().join(", ");
    let mut out = String::new();
    if modules.len() > 2 && groups.len() > 1 {
        let tied = groups.iter().filter(|g| g.len() == most).count();
        out.push_str(&if most == 1 {
            format!("no two of the {} modules agree; each is compared with the first\n", modules.len())
        } else if tied > 1 {
            format!(
                "no majority: {tied} groups of {most} modules agree among themselves; compared with the first: {}\n",
                names(majority)
            )
        } else {
            format!("{most} of {} modules agree: {}\n", modules.len(), names(majority))
        });
    }
    // Each other group's differences, with its cause.
    let mut told: Vec<(String, &str)> = Vec::new();
    for group in groups.iter().filter(|g| !std::ptr::eq(*g, majority)) {
        let (path, module) = &modules[group[0]];
        let differences = ccc_compiler::hlo::compare::compare(reference, module);
        let also = group.get(1..).unwrap_or_default();
        let with = if also.is_empty() { String::new() } else { format!(" (as do {})", names(also)) };
        let mut text =
            format!("{} and {}{with} differ in their HLO collectives:\n", reference_path.display(), path.display());
        for d in &differences {
            text.push_str(&format!("  {d}\n"));
        }
        told.push((text, ccc_compiler::hlo::compare::cause(&differences)));
    }
    if told.is_empty() {
        return Ok(None);
    }
    // One cause every group shares is said once, at the end; causes that
    // differ are said group by group.
    let shared = told.first().map(|&(_, first)| first).filter(|&first| told.iter().all(|&(_, c)| c == first));
    for (text, cause) in &told {
        out.push_str(text);
        if shared.is_none() {
            out.push_str(&format!("likely cause: {cause}\n"));
        }
    }
    if let Some(cause) = shared {
        out.push_str(&format!("likely cause: {cause}\n"));
    }
    crate::out::emit(&out)?;
    Ok(Some(ExitCode::from(1)))
}
