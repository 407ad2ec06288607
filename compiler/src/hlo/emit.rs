//! An [`Imported`] program as RON: the `Program` a user can read, edit and
//! compile, each collective under a comment naming the HLO instruction it
//! came from. Compiling the RON gives the signature compiling the HLO does.

use super::Imported;
use ron::ser::PrettyConfig;
use std::fmt::Write as _;

/// The RON text of `imported`; `origin` (the file name) goes in the header comment.
///
/// # Errors
///
/// RON's error should a collective not serialise (it always does).
pub fn to_ron(imported: &Imported, origin: &str) -> Result<String, ron::Error> {
    to_ron_noted(imported, origin, &[])
}

/// How every program `ccc import` writes opens: a work file of a dead
/// ccc that holds this (or part of it) is ccc's to remove
/// (`output::OPENINGS`).
pub const OPENING: &str = "// Imported by `ccc import` from ";

/// [`to_ron`], with `notes` (one comment line each, without its `// `)
/// after the header's own, above the program: what the caller found of
/// it (`ccc import`: a program too full to compile as one).
///
/// # Errors
///
/// As [`to_ron`].
pub fn to_ron_noted(imported: &Imported, origin: &str, notes: &[String]) -> Result<String, ron::Error> {
    let config = PrettyConfig::new()
        .struct_names(true)
        .compact_arrays(true)
        .indentor("    ".to_owned())
        .extensions(ron::extensions::Extensions::IMPLICIT_SOME);
    let mut out = String::new();
    let module = imported.module.as_deref().unwrap_or("(no header)");
    // A line break in a file name would end the comment it stands in.
    let origin = origin.replace('\n', "\\n").replace('\r', "\\r");
    let n = imported.program.collectives.len();
    let _ = writeln!(out, "{OPENING}{origin} (HloModule {module}): {n} collective{}.", if n == 1 { "" } else { "s" });
    let _ = writeln!(out, "// Each collective is named by the HLO instruction it came from; a combined");
    let _ = writeln!(out, "// collective whose operands differ in dtype is one collective per dtype.");
    for source in &imported.moved_nothing {
        let _ = writeln!(
            out,
            "// Left out: {} (line {}) moves nothing (an empty array or tuple, or a device sending to itself).",
            source.instruction, source.line
        );
    }
    for source in &imported.transfers {
        let _ = writeln!(
            out,
            "// Not compiled: {} (line {}), a device-to-device send/recv: ccc compiles collectives, not these \
             transfers.",
            source.instruction, source.line
        );
    }
    if let Some((first, rank_n)) = &imported.assumed_devices {
        let _ = writeln!(
            out,
            "// Note: the module names no device count; {} (line {}) runs over all devices, taken as the\n\
             // target's {rank_n} ranks. Import the compiled module, whose header names the count, to have it checked.",
            first.instruction, first.line
        );
    }
    if imported.sources.iter().any(|s| s.branch.is_some()) {
        let _ = writeln!(
            out,
            "// Note: collectives in branches of a `conditional` are compiled one after another, every branch's;\n\
             // a run takes one branch. Compile the branch the ranks take, or keep collectives out of conditionals."
        );
    }
    for note in notes {
        for line in note.lines() {
            let _ = writeln!(out, "// {line}");
        }
    }
    out.push_str("Program(\n    collectives: [\n");
    for (i, (c, source)) in imported.program.collectives.iter().zip(&imported.sources).enumerate() {
        let part = source.part.as_ref().map_or_else(String::new, |p| format!(", {p}"));
        let branch = source.branch.as_ref().map_or_else(String::new, |b| {
            format!(", branch {} of conditional `{}` (line {})", b.index, b.conditional, b.line)
        });
        let _ = writeln!(out, "        // {i}: {} (line {}{part}{branch})", source.instruction, source.line);
        let body = ron::ser::to_string_pretty(c, config.clone())?;
        // The extension is on for every spec `parse` reads: its attribute
        // line, which RON writes first, would be misplaced inside the list.
        for line in body.lines().filter(|l| !l.starts_with("#![enable")) {
            let _ = writeln!(out, "        {line}");
        }
        // The last line closed the collective: add the list's comma.
        out.pop();
        out.push_str(",\n");
    }
    out.push_str("    ],\n)\n");
    Ok(out)
}
