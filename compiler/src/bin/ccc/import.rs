//! `ccc import MODULE --target T [-o FILE]`: the RON program equivalent to an
//! XLA HLO module's collectives, each under a comment naming its HLO
//! instruction; and `diagnose` on HLO modules. (Every verb reads an HLO
//! module given in place of a spec through `load::import_file`.)

use crate::Failure;
use crate::args::ImportArgs;
use crate::load::{HLO_CAP, TargetValues, hlo_validation_report, import_file, note_imported, read_text};
use ccc_compiler::cost::auto::fit::Overflow;
use ccc_compiler::cost::auto::legal::exceeded;
use ccc_compiler::hlo::{Imported, emit};
use ccc_compiler::parse::strip_bom;
use ccc_compiler::validate::{AutoCache, Problem, ValidationError, validate, validate_cached};
use std::process::ExitCode;

/// Runs `ccc import`.
pub fn run(args: &ImportArgs) -> Result<ExitCode, Failure> {
    let text = read_text(&args.module, HLO_CAP, "HLO module")?;
    let src = strip_bom(&text);
    if ccc_compiler::hlo::looks_like_mlir(src) {
        return Err(crate::load::mlir_refusal(&args.module.display().to_string()));
    }
    if !ccc_compiler::hlo::looks_like_hlo(src) {
        // A RON spec given to import: it needs no import (every verb reads
        // it).
        if ccc_compiler::parse::parse(src).is_ok() {
            return Err(Failure::input(miette::miette!(
                help = "every verb reads a RON spec as it is: `ccc check SPEC`, `ccc compile SPEC -o OUT`; `ccc \
                        import` turns an XLA HLO module into one",
                "{} is a RON spec, not an XLA HLO module",
                args.module.display()
            )));
        }
        return Err(Failure::input(miette::miette!(
            help = format!("an HLO module starts `HloModule NAME`: {}", ccc_compiler::hlo::HLO_SOURCES),
            "{} is not an XLA HLO module",
            args.module.display()
        )));
    }
    let imported = import_file(&args.module, src, &args.hlo, TargetValues::Checked)?;
    // What it writes is a program every other verb takes: one that would
    // not validate (a permute whose member sends twice, which XLA's own
    // verifier refuses too; `--algorithm` naming one the op cannot run)
    // is refused with `check`'s report, each problem at its instruction.
    // One refusal is the program's, not a collective's: more collectives
    // (or their records) than a TOP_SP's CTRL SPAD holds. Such a program
    // is cut into programs that fit with `--split`, else written whole
    // for the user to cut (docs/hlo.md), with a note saying so, rather
    // than refused.
    let name = args.module.display().to_string();
    // So is one whose choices exceed a lowering limit that depends on the
    // algorithm (`--algorithm Mesh` over more peers than a TOP_SP has mesh
    // events): `check` refuses it, as `compile` would, and splitting may
    // be the way out (a TOP_SP's events add up over the program).
    let (overflow, exceeded) = match validate(&imported.program) {
        Ok(valid) => (None, exceeded(&valid).map(|x| (x, valid.arch()))),
        Err(e) => match &e.0[..] {
            [ValidationError { problem: Problem::CtrlSpadFull(o), collective: None, .. }] => (Some(o.clone()), None),
            _ => return Err(Failure::input(hlo_validation_report(&name, &args.hlo, &imported.sources, e))),
        },
    };
    // (`--split` requires `-o`.)
    if let (true, Some(out)) = (args.split, &args.out) {
        return write_parts(&imported, &name, out);
    }
    let mut notes: Vec<String> = overflow.iter().map(too_full_note).collect();
    let does_not_lower = exceeded.map(|(x, arch)| format!("collective {}: {}", x.collective, x.describe(arch)));
    notes.extend(does_not_lower.iter().map(|d| does_not_compile_note(d)));
    let ron = emit::to_ron_noted(&imported, &name, &notes)
        .map_err(|e| Failure::input(miette::miette!("cannot write the program as RON: {e}")))?;
    match &args.out {
        None => crate::out::emit(&ron)?,
        Some(out) => crate::out::write_new(out, &ron)?,
    }
    if let Some(o) = overflow {
        note!(
            "note: {name}: written, but it does not compile as one program: {}",
            Problem::CtrlSpadFull(o).to_string()
        );
    }
    if let Some(d) = does_not_lower {
        note_does_not_compile(&name, &d);
    }
    Ok(ExitCode::SUCCESS)
}

/// The collectives of `imported` cut into programs that each validate (fit
/// a TOP_SP's CTRL SPAD), in order, each as many as fit: the ranges of
/// its collectives. `imported` validates but for the CTRL SPAD, so a
/// program of one collective always does (a collective alone is never
/// refused for it), and a program's slots only grow with its collectives:
/// each part's end is found by doubling, then halving (a dozen
/// validations a part of 64, not 64), through one `Auto` cache, so that
/// each collective's choice is searched once, not once a validation.
fn parts(imported: &Imported) -> Vec<std::ops::Range<usize>> {
    let all = &imported.program.collectives;
    let mut cache = AutoCache::new();
    greedy_parts(all.len(), |range| {
        validate_cached(&ccc_ir::spec::Program { collectives: all[range].to_vec() }, &mut cache).is_ok()
    })
}

/// `0..n` cut, in order, into the longest runs `fits` takes, each found
/// by doubling then halving. `fits` must take every run of one and take
/// every run that starts where a run it takes starts and is shorter.
fn greedy_parts(n: usize, mut fits: impl FnMut(std::ops::Range<usize>) -> bool) -> Vec<std::ops::Range<usize>> {
    let mut parts = Vec::new();
    let mut start = 0;
    while start < n {
        // `good` fits; `bad`, once found, does not.
        let (mut good, mut step, mut bad) = (start + 1, 1, None);
        while good < n {
            let next = (good + step).min(n);
            if !fits(start..next) {
                bad = Some(next);
                break;
            }
            (good, step) = (next, step * 2);
        }
        if let Some(mut bad) = bad {
            while bad - good > 1 {
                let mid = good + (bad - good) / 2;
                if fits(start..mid) { good = mid } else { bad = mid }
            }
        }
        parts.push(start..good);
        start = good;
    }
    parts
}

/// `ccc import --split -o FILE`: each part of [`parts`] as its own program,
/// `FILE`'s stem numbered (`step.1.ron`, `step.2.ron`, ...), each a new
/// file: none is written unless none exists, and those written are
/// removed again should a later one fail.
fn write_parts(imported: &Imported, name: &str, out: &std::path::Path) -> Result<ExitCode, Failure> {
    // A file's name to number: a folder (or a path ending in `/`) is
    // refused, as `-o` without `--split` refuses it.
    let as_text = out.as_os_str().to_string_lossy();
    if out.is_dir() || as_text.ends_with('/') || out.file_name().is_none() {
        return Err(Failure::input(miette::miette!(
            help = "name a file, whose name the parts take numbered: -o FOLDER/step.ron writes FOLDER/step.1.ron, ...",
            "cannot write the parts of {name} as {}: that is a folder",
            out.display()
        )));
    }
    let parts = parts(imported);
    let (stem, ext) = (out.file_stem().unwrap_or_default(), out.extension());
    let path = |k: usize| {
        let mut file = stem.to_os_string();
        file.push(format!(".{k}."));
        file.push(ext.unwrap_or(std::ffi::OsStr::new("ron")));
        out.with_file_name(file)
    };
    let paths: Vec<std::path::PathBuf> = (1..=parts.len()).map(path).collect();
    if let Some((k, there)) = paths.iter().enumerate().find(|(_, p)| std::fs::symlink_metadata(p).is_ok()) {
        return Err(Failure::input(miette::miette!(
            help = "ccc never overwrites a file: move it away, or name another -o file",
            "cannot write part {} of {name}: {} exists; nothing was written",
            k + 1,
            there.display()
        )));
    }
    let n = parts.len();
    let mut files: Vec<(std::path::PathBuf, String)> = Vec::with_capacity(n);
    // A part fits the CTRL SPAD, but its choices may still exceed a
    // lowering limit (a TOP_SP's mesh events): said in it, as for a whole.
    let mut cache = AutoCache::new();
    let mut does_not_lower = Vec::new();
    for (k, range) in parts.iter().enumerate() {
        let sources = &imported.sources[range.clone()];
        // Collectives of called computations stand elsewhere in the text:
        // the lines between the first and the last of them.
        let lines = match (sources.iter().map(|s| s.line).min(), sources.iter().map(|s| s.line).max()) {
            (Some(a), Some(b)) => format!(", at HLO lines {a} to {b}"),
            _ => String::new(),
        };
        let part = Imported {
            module: imported.module.clone(),
            program: ccc_ir::spec::Program { collectives: imported.program.collectives[range.clone()].to_vec() },
            sources: sources.to_vec(),
            // What the module leaves out is said once, in the first part.
            moved_nothing: if k == 0 { imported.moved_nothing.clone() } else { Vec::new() },
            transfers: if k == 0 { imported.transfers.clone() } else { Vec::new() },
            assumed_devices: if k == 0 { imported.assumed_devices.clone() } else { None },
        };
        let note = format!(
            "Part {} of {n}: the module's collectives {} to {}{lines} (`ccc import --split`); compile each part as \
             its own program.",
            k + 1,
            range.start,
            range.end - 1
        );
        let mut notes = vec![note];
        let valid = validate_cached(&part.program, &mut cache).ok();
        if let Some((x, v)) = valid.as_ref().and_then(|v| Some((exceeded(v)?, v))) {
            let d = format!("collective {}: {}", x.collective, x.describe(v.arch()));
            notes.push(does_not_compile_note(&d));
            does_not_lower.push((k, d));
        }
        let ron = emit::to_ron_noted(&part, name, &notes)
            .map_err(|e| Failure::input(miette::miette!("cannot write the program as RON: {e}")))?;
        files.push((paths[k].clone(), ron));
    }
    // All or nothing: each part whole in its work file first, then every
    // one takes its name (a failure removes what was placed).
    crate::out::write_new_all(&files)?;
    for (p, range) in paths.iter().zip(&parts) {
        note!("wrote {}: collectives {} to {}", p.display(), range.start, range.end - 1);
    }
    for (k, d) in does_not_lower {
        note_does_not_compile(paths[k].display(), &d);
    }
    Ok(ExitCode::SUCCESS)
}

/// The note `ccc import` writes above a program whose choices exceed a
/// lowering limit (`d`: the collective and the limit, in words).
fn does_not_compile_note(d: &str) -> String {
    format!("Note: this program does not compile: {d} (`ccc check` says why and what to change).")
}

/// The note `ccc import` says on stderr of `file`, written though its
/// choices exceed a lowering limit (`d`, as for [`does_not_compile_note`]).
fn note_does_not_compile(file: impl std::fmt::Display, d: &str) {
    note!("note: {file}: written, but it does not compile: {d} (`ccc check` says what to change)");
}

/// The note `ccc import` writes above a program that does not fit one
/// TOP_SP's CTRL SPAD.
fn too_full_note(o: &Overflow) -> String {
    let cut = if o.by_count {
        format!(
            "cut it into programs that fit, at most {} collectives each, fewer where they take more slots (`ccc \
             import --split -o FILE` does)",
            o.capacity
        )
    } else {
        "cut it into programs that fit (`ccc import --split -o FILE` does), or choose algorithms with fewer phases"
            .to_owned()
    };
    format!(
        "Note: these collectives take {} slots of a TOP_SP's CTRL SPAD, more than its {}: the program does not\n\
         compile as one (`ccc check` says why); {cut} (docs/hlo.md).",
        o.needed, o.capacity
    )
}

/// The HLO modules of `ccc diagnose`, imported once (for the
/// instruction-level comparison and the signatures alike) from the
/// `texts` it read once (`None` for an output folder): `None` unless
/// `--target` is given and every input is a module.
///
/// # Errors
///
/// A bad-input [`Failure`] when a module cannot be imported, or the
/// target holds a value no collective could take (said once, first).
pub fn import_modules(
    args: &crate::args::DiagnoseArgs,
    texts: &[Option<String>],
) -> Result<Option<Vec<Imported>>, Failure> {
    let srcs: Option<Vec<&str>> = texts.iter().map(|t| t.as_deref().map(strip_bom)).collect();
    let Some(srcs) =
        srcs.filter(|s| args.hlo.target.is_some() && s.iter().all(|s| ccc_compiler::hlo::looks_like_hlo(s)))
    else {
        return Ok(None);
    };
    // Every module refused is said, in input order (`every_input`).
    let modules = args.inputs.iter().zip(srcs).map(|(path, src)| {
        let imported = import_file(path, src, &args.hlo, TargetValues::Checked)?;
        note_imported(&path.display().to_string(), &imported);
        Ok(imported)
    });
    crate::report::every_input(modules).map(Some)
}

#[cfg(test)]
mod tests {
    use super::greedy_parts;
    use proptest::prelude::*;

    proptest! {
        /// Collectives of random slot counts under a random capacity: the
        /// parts are the ones taking each collective in turn while it fits
        /// gives, and the search asks about a part of `k` collectives no
        /// more than about 2 log2(k) + 2 times.
        #[test]
        fn parts_are_the_longest_runs_that_fit(slots in prop::collection::vec(1u32..9, 0..300), spare in 0u32..40) {
            let capacity = slots.iter().copied().max().unwrap_or(1) + spare;
            let mut asked = 0usize;
            let parts = greedy_parts(slots.len(), |r| {
                asked += 1;
                slots[r].iter().sum::<u32>() <= capacity
            });
            // One collective at a time.
            let mut expected = Vec::new();
            let (mut start, mut used) = (0, 0);
            for (i, &s) in slots.iter().enumerate() {
                if used + s > capacity {
                    expected.push(start..i);
                    (start, used) = (i, 0);
                }
                used += s;
            }
            if start < slots.len() {
                expected.push(start..slots.len());
            }
            prop_assert_eq!(&parts, &expected);
            let bound: usize = parts.iter().map(|p| 2 * (p.len().max(1).ilog2() as usize) + 2).sum();
            prop_assert!(asked <= bound, "{} questions for parts {:?}", asked, parts);
        }
    }
}
