//! Reading the files the CLI is given. Every verb that takes a spec starts
//! at [`load_spec`], so every verb reports a bad spec the same way (exit 2).
//!
//! Every file is read through [`read_bounded`] with a cap for its kind
//! ([`SPEC_CAP`], [`MANIFEST_CAP`], the image caps in `decode`): a larger
//! file (or an endless one such as `/dev/zero`) is refused after reading at
//! most the cap and one byte, so memory and time stay bounded by the cap.

use crate::Failure;
use crate::args::HloArgs;
use crate::report::{InputKind, ValidationReport, located_report, parse_report, target_report, validation_report};
use ccc_compiler::hlo::{Imported, Target, import_module, parse_target};
use ccc_compiler::parse::{ParsedSpec, SpecForm, parse, strip_bom};
use ccc_compiler::valid::ValidProgram;
use ccc_compiler::validate::{AutoCache, Problem, ValidationError, ValidationErrors, validate_cached};
use ccc_ir::spec::{Algorithm, Collective};
use std::io::Read;
use std::path::Path;

/// The largest spec read ([`ccc_compiler::parse::SPEC_MAX_BYTES`]).
pub const SPEC_CAP: u64 = ccc_compiler::parse::SPEC_MAX_BYTES;

/// The path that names standard input: `ccc check -`, `ccc import
/// model.hlo --target t.ron | ccc compile - -o out` (a file named `-` is
/// `./-`).
pub const STDIN: &str = "-";

/// The largest manifest read ([`ccc_compiler::diagnose::MANIFEST_MAX_BYTES`]).
pub const MANIFEST_CAP: u64 = ccc_compiler::diagnose::MANIFEST_MAX_BYTES;

/// The largest HLO module read ([`ccc_compiler::hlo::MODULE_MAX_BYTES`]).
pub const HLO_CAP: u64 = ccc_compiler::hlo::MODULE_MAX_BYTES;

/// Reads, parses and validates the spec at `path`: RON, or an XLA HLO
/// module (recognised by its content) imported for `hlo.target`.
///
/// # Errors
///
/// A bad-input [`Failure`] (exit 2): the file cannot be read (naming the
/// path and the OS error), is larger than [`SPEC_CAP`], is not UTF-8 (naming
/// the byte offset, line and column), is not RON of the spec schema (a
/// snippet with the token marked), or breaks a rule (every problem, by field
/// path).
pub fn load_spec(path: &Path, hlo: &HloArgs) -> Result<(ParsedSpec, ValidProgram), Failure> {
    load_file(path, hlo, Whole::Program, None)
}

/// [`load_spec`] of the first collective alone (`sweep`, which sizes only
/// it): the program's other collectives are read, but neither validated
/// nor kept, so that a problem of theirs (a program too full for the
/// CTRL SPAD, an algorithm one of them cannot run) does not stop it.
///
/// # Errors
///
/// As [`load_spec`], for the first collective.
pub fn load_first(path: &Path, hlo: &HloArgs) -> Result<(ParsedSpec, ValidProgram), Failure> {
    load_file(path, hlo, Whole::First, None)
}

/// [`load_first`], its collective validated at the count `recount` gives
/// it rather than its written one (an AllToAllV's stays: its sizes are its
/// `counts`): `sweep` never runs the written count, and one that `Auto`
/// cannot serve refused the whole sweep.
///
/// # Errors
///
/// As [`load_first`].
pub fn load_first_recounted(
    path: &Path,
    hlo: &HloArgs,
    recount: &dyn Fn(&Collective) -> u64,
) -> Result<(ParsedSpec, ValidProgram), Failure> {
    load_file(path, hlo, Whole::First, Some(recount))
}

/// A collective's count for [`load_first_recounted`].
type Recount<'a> = Option<&'a dyn Fn(&Collective) -> u64>;

/// `collectives` with their counts as `recount` gives them.
fn recounted(collectives: &mut [Collective], recount: Recount<'_>) {
    let Some(recount) = recount else { return };
    for c in collectives.iter_mut().filter(|c| c.op != ccc_ir::enums::OpType::AllToAllV) {
        c.count = recount(c);
    }
}

/// Reads the spec or module at `path` under its cap, then [`load_text`].
fn load_file(
    path: &Path,
    hlo: &HloArgs,
    whole: Whole,
    recount: Recount<'_>,
) -> Result<(ParsedSpec, ValidProgram), Failure> {
    let cap = spec_cap(path, hlo);
    let what = if cap == HLO_CAP { "HLO module" } else { "spec" };
    let text = read_text(path, cap, what)?;
    load_text(path, &text, hlo, &mut AutoCache::new(), whole, recount)
}

/// What of a spec [`load_text`] validates and keeps.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Whole {
    /// The program.
    Program,
    /// Its first collective.
    First,
}

/// [`load_spec`] of a file already read (`text`, read under a cap at least
/// the spec's): a caller that had to read the file to tell what it is
/// (`diagnose`) reads it once, so a pipe works. `Auto` searches through
/// `cache` (a caller loading many specs shares one; the result is what
/// [`ccc_compiler::validate::validate`] gives).
///
/// # Errors
///
/// As [`load_spec`].
pub fn load_spec_text(
    path: &Path,
    text: &str,
    hlo: &HloArgs,
    cache: &mut AutoCache,
) -> Result<(ParsedSpec, ValidProgram), Failure> {
    load_text(path, text, hlo, cache, Whole::Program, None)
}

/// [`load_spec_text`] of the program or of its first collective alone.
fn load_text(
    path: &Path,
    text: &str,
    hlo: &HloArgs,
    cache: &mut AutoCache,
    whole: Whole,
    recount: Recount<'_>,
) -> Result<(ParsedSpec, ValidProgram), Failure> {
    let name = path.display().to_string();
    // A leading byte-order mark is skipped here and by `parse` alike, so the
    // snippet's columns are the parser's.
    let src = strip_bom(text);
    if ccc_compiler::hlo::looks_like_hlo(src) {
        let mut imported = import_file(path, src, hlo, TargetValues::Validated)?;
        note_imported(&name, &imported);
        if whole == Whole::First {
            imported.program.collectives.truncate(1);
            imported.sources.truncate(1);
        }
        recounted(&mut imported.program.collectives, recount);
        let valid = validate_imported(&name, &imported, hlo, cache)?;
        let parsed = ParsedSpec { program: imported.program, form: SpecForm::Program };
        return Ok((parsed, valid));
    }
    if hlo.target.is_some() || hlo.algorithm.is_some() {
        if ccc_compiler::hlo::looks_like_mlir(src) {
            return Err(mlir_refusal(&name));
        }
        let what = if src.trim().is_empty() {
            "is empty, not an XLA HLO module"
        } else if src.trim_start().starts_with("HloModule") {
            "is not an XLA HLO module: its first line is not `HloModule NAME`"
        } else {
            "is not an XLA HLO module (its first line is not `HloModule NAME`): a RON spec?"
        };
        return Err(Failure::input(miette::miette!(
            help = format!(
                "--target and --algorithm are for an XLA HLO module ({}); a RON spec names its own machine and \
                 algorithms: drop them for a spec",
                ccc_compiler::hlo::HLO_SOURCES
            ),
            "{name} {what}"
        )));
    }
    if text.len() as u64 > SPEC_CAP {
        return Err(too_large(path, Some(text.len() as u64), SPEC_CAP, "spec"));
    }
    let mut parsed = parse(src).map_err(|e| Failure::input(parse_report(&name, src, &e)))?;
    if whole == Whole::First {
        parsed.program.collectives.truncate(1);
    }
    recounted(&mut parsed.program.collectives, recount);
    let valid = validate_cached(&parsed.program, cache)
        .map_err(|e| Failure::input(validation_report(&name, parsed.form, &e)))?;
    Ok((parsed, valid))
}

/// The refusal of input `name`, MLIR text
/// ([`looks_like_mlir`](ccc_compiler::hlo::looks_like_mlir)) where an HLO
/// module is wanted: it says what the text is and how to get HLO text.
pub fn mlir_refusal(name: &str) -> Failure {
    Failure::input(miette::miette!(
        help = format!("give HLO text: {}", ccc_compiler::hlo::HLO_SOURCES),
        "{name} {}",
        ccc_compiler::hlo::MLIR_TEXT
    ))
}

/// Validates the program imported from the HLO module `name` for
/// `hlo.target` (`Auto` searching through `cache`).
///
/// # Errors
///
/// A bad-input [`Failure`]: every problem, the target's first, each
/// other at its instruction (`hlo_validation_report`).
pub fn validate_imported(
    name: &str,
    imported: &Imported,
    hlo: &HloArgs,
    cache: &mut AutoCache,
) -> Result<ValidProgram, Failure> {
    validate_cached(&imported.program, cache)
        .map_err(|e| Failure::input(hlo_validation_report(name, hlo, &imported.sources, e)))
}

/// The fields of an imported collective that its target file sets, the
/// same for every collective (`hlo::target`): a problem with one is the
/// target's, said once, not once a collective.
const TARGET_FIELDS: [&str; 6] = ["arch", "topology", "channels", "barrier", "send_credits", "model"];

/// The validation report of a module imported for `hlo.target`: the
/// problems with a field the target sets come first, each once, under the
/// target's name and by the target's field path (`model.hops_max`); the
/// others follow by the HLO instruction each collective came from, at its
/// line, and their path in the imported program (`` x.hlo:12: `all-reduce.3`
/// (collectives[3].algorithm) ``).
pub fn hlo_validation_report(
    name: &str,
    hlo: &HloArgs,
    sources: &[ccc_compiler::hlo::Source],
    errors: ValidationErrors,
) -> ValidationReport {
    let from_target = |e: &ValidationError| {
        TARGET_FIELDS
            .iter()
            .any(|f| e.field.strip_prefix(f).is_some_and(|rest| rest.is_empty() || rest.starts_with('.')))
    };
    // Past the problems validation lists, it counts the rest
    // (`Problem::Unlisted`), repeats of the target's among them: the
    // target's own, validated alone, are then its whole story.
    let unlisted = errors.0.iter().any(|e| matches!(e.problem, Problem::Unlisted { .. }));
    if unlisted
        && errors.0.iter().any(from_target)
        && let Some(path) = hlo.target.as_ref()
        && let Ok(target) = read_target(path)
        && let Err(own) = target.validate()
    {
        return target_report(&format!("{} (the target of {name})", path.display()), &own);
    }
    let (target, rest): (Vec<_>, Vec<_>) = errors.0.into_iter().partition(from_target);
    // The collectives' own problems, at their HLO instruction.
    let own = rest.into_iter().map(|e| {
        let source = e.collective.and_then(|i| Some((i, sources.get(usize::try_from(i).ok()?)?)));
        let field = match source {
            Some((i, s)) => format!("{name}:{}: `{}` (collectives[{i}].{})", s.line, s.instruction, e.field),
            None => e.field.clone(),
        };
        ValidationError { field, collective: None, ..e }
    });
    let Some(target_path) = hlo.target.as_ref().filter(|_| !target.is_empty()) else {
        return validation_report(name, SpecForm::Collective, &ValidationErrors(own.collect()));
    };
    // Each problem once, in the order first met; `collective: None` so
    // that it is named by the target's own field path.
    let mut seen = std::collections::BTreeSet::new();
    let mut problems: Vec<ValidationError> = target
        .into_iter()
        .filter(|e| seen.insert((e.field.clone(), e.problem.to_string())))
        .map(|e| ValidationError { collective: None, ..e })
        .collect();
    let target_n = problems.len();
    problems.extend(own);
    let title = format!("{} (the target of {name})", target_path.display());
    let only_target = problems.len() == target_n;
    let errors = ValidationErrors(problems);
    if only_target { target_report(&title, &errors) } else { validation_report(&title, SpecForm::Collective, &errors) }
}

/// The cap a spec is read under: [`HLO_CAP`] when it may be an HLO module
/// (a `.hlo` or `.txt` file, or `--target` given), else [`SPEC_CAP`].
fn spec_cap(path: &Path, hlo: &HloArgs) -> u64 {
    let hlo_name = path.extension().is_some_and(|e| e == "hlo" || e == "txt");
    if hlo_name || hlo.target.is_some() { HLO_CAP } else { SPEC_CAP }
}

/// Reads the file at `path`, refusing one larger than `cap` bytes after
/// reading at most `cap + 1` of them. `what` names the kind of file in the
/// messages (`spec`, `manifest`, `--proven-by manifest`, ...).
///
/// # Errors
///
/// A bad-input [`Failure`] (exit 2) naming the path: it cannot be opened or
/// read (with the OS error), or it is larger than `cap` (with its size when
/// the file system knows it).
pub fn read_bounded(path: &Path, cap: u64, what: &str) -> Result<Vec<u8>, Failure> {
    let name = path.display();
    // `-`: standard input, read to its end (a pipe says no size: at most
    // `cap + 1` bytes are read, as of a file whose size is unknown).
    if path == Path::new(STDIN) {
        let mut data = Vec::new();
        let read = std::io::stdin().lock().take(cap.saturating_add(1)).read_to_end(&mut data);
        read.map_err(|e| Failure::input(miette::miette!("cannot read the {what} from standard input (-): {e}")))?;
        if data.len() as u64 > cap {
            return Err(too_large(path, None, cap, what));
        }
        return Ok(data);
    }
    let cannot = |e: std::io::Error| {
        let help = match e.kind() {
            std::io::ErrorKind::NotFound => {
                Some(format!("check the {what}'s path (a relative path starts at the folder ccc runs in)"))
            }
            std::io::ErrorKind::PermissionDenied => Some(format!("ccc needs permission to read the {what}")),
            std::io::ErrorKind::IsADirectory => Some(format!("a {what} is a file; name the file, not a folder")),
            _ => None,
        };
        match help {
            Some(help) => Failure::input(miette::miette!(help = help, "cannot read {name}: {e}")),
            None => Failure::input(miette::miette!("cannot read {name}: {e}")),
        }
    };
    let file = std::fs::File::open(path).map_err(cannot)?;
    // A regular file says its size: refuse a large one without reading it.
    let known = file.metadata().ok().filter(std::fs::Metadata::is_file).map(|m| m.len());
    let mut data = Vec::new();
    if known.is_none_or(|len| len <= cap) {
        file.take(cap.saturating_add(1)).read_to_end(&mut data).map_err(cannot)?;
    }
    let len = data.len() as u64;
    if known.is_some_and(|len| len > cap) || len > cap {
        return Err(too_large(path, known, cap, what));
    }
    Ok(data)
}

/// The refusal of a `what` file at `path` larger than `cap` bytes (of
/// `size` bytes, when known).
fn too_large(path: &Path, size: Option<u64>, cap: u64, what: &str) -> Failure {
    let size = size.map_or_else(String::new, |len| format!("{len} bytes, "));
    Failure::input(miette::miette!(
        code = "ccc::too_large",
        help = format!("ccc reads {} of at most {cap} bytes ({}); is this the right file?", a(what), mib(cap)),
        "{} is too large for {}: {size}more than {cap} bytes",
        path.display(),
        a(what)
    ))
}

/// `what` after its article: "a spec", "an HLO module".
fn a(what: &str) -> String {
    let an = what.starts_with(|c: char| "aeiouAEIOU".contains(c)) || what.starts_with("HLO");
    format!("{} {what}", if an { "an" } else { "a" })
}

/// The names `ccc compile` gives a TOP_SP's images.
const IMAGE_NAMES: [&str; 3] = ["ctrl_spad.bin", "slot_spad.bin", "neff_configs.bin"];

/// How far into a file that is not UTF-8 a NUL byte is looked for, to
/// tell a binary file from text saved in another encoding.
const BINARY_SNIFF_BYTES: usize = 4096;

/// [`read_bounded`], then the bytes as UTF-8 text.
///
/// # Errors
///
/// As [`read_bounded`]; and a bad-input [`Failure`] naming the first byte
/// that is not UTF-8 by offset, line and column.
pub fn read_text(path: &Path, cap: u64, what: &str) -> Result<String, Failure> {
    let data = read_bounded(path, cap, what)?;
    String::from_utf8(data).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let bad_len = e.utf8_error().error_len().unwrap_or(bytes.len() - at).min(4);
        let bad: Vec<String> = bytes.iter().skip(at).take(bad_len).map(|b| format!("{b:#04x}")).collect();
        // The prefix is valid UTF-8 by construction.
        let prefix = std::str::from_utf8(bytes.get(..at).unwrap_or(&[])).unwrap_or("");
        // Columns count chars, after a leading byte-order mark, as the parser does.
        let (line, column) = crate::report::line_column(prefix, prefix.len());
        // A NUL in the first few KiB, or an image's name: a binary file
        // (an image given where text goes), not text saved wrongly.
        let named = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| IMAGE_NAMES.contains(&n));
        // UTF-16 text (a byte-order mark, or ASCII with every other byte
        // NUL, as Windows tools save it) holds NULs and is still text.
        let utf16 = bytes.starts_with(&[0xFF, 0xFE])
            || bytes.starts_with(&[0xFE, 0xFF])
            || (bytes.len() >= 4 && bytes.iter().take(BINARY_SNIFF_BYTES).skip(1).step_by(2).all(|&b| b == 0));
        let binary = !utf16 && (named || bytes.iter().take(BINARY_SNIFF_BYTES).any(|&b| b == 0));
        let help = if utf16 {
            format!("{} is UTF-8 text; this file looks like UTF-16: re-save it as UTF-8", a(what))
        } else if binary {
            format!(
                "this looks like a binary file (a compiled image?), not {}: `ccc decode` reads an image, and \
                 `ccc diagnose` compares output folders (or their manifest.json)",
                a(what)
            )
        } else {
            format!("{} is UTF-8 text; re-save the file as UTF-8", a(what))
        };
        let file = path.display().to_string();
        let message = format!(
            "{file} is not UTF-8: {} {} at offset {at} (line {line}, column {column}) {} not valid UTF-8",
            if bad.len() == 1 { "byte" } else { "bytes" },
            bad.join(" "),
            if bad.len() == 1 { "is" } else { "are" },
        );
        Failure::input(crate::report::NotUtf8Report { message, help, file, line, column, offset: at })
    })
}

/// `bytes` in MiB or KiB for a help line.
fn mib(bytes: u64) -> String {
    // In the largest unit that holds it whole, else to a tenth (3592
    // bytes are 3.5 KiB, not 3).
    let (unit, shift) = if bytes >= 1 << 20 { ("MiB", 20) } else { ("KiB", 10) };
    if bytes.is_multiple_of(1 << shift) {
        format!("{} {unit}", bytes >> shift)
    } else {
        format!("{:.1} {unit}", bytes as f64 / f64::from(1u32 << shift))
    }
}

/// Whether [`import_file`] checks the values the target sets before
/// importing: `import`, whose RON no later pass checks, does; the verbs
/// that validate the imported program report a target's problems with the
/// collectives' own, all at once (`hlo_validation_report`), or, when the
/// module does not import, before the module's error (as `import` does).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TargetValues {
    /// Refuse a value no collective could take, before importing.
    Checked,
    /// Leave them to validation.
    Validated,
}

/// Imports the HLO module at `path` (whose text is `src`) for the target and
/// algorithm of `hlo`.
///
/// # Errors
///
/// A bad-input [`Failure`] (exit 2): no `--target`, a target or
/// `--algorithm` that is not RON of its schema, a target value no
/// collective could take when `checked` says to look (under the target's
/// name, by its field path), or an HLO error (a snippet of the module at
/// its line and column).
pub fn import_file(path: &Path, src: &str, hlo: &HloArgs, checked: TargetValues) -> Result<Imported, Failure> {
    let name = path.display().to_string();
    let Some(target_path) = &hlo.target else {
        return Err(Failure::input(miette::miette!(
            help = "pass --target TARGET.ron, e.g. a file holding `(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8))`",
            "{name} is an XLA HLO module: it names devices, not a machine, so it needs --target"
        )));
    };
    let target = read_target(target_path)?;
    let target_report_of = |e| {
        let title = format!("{} (the target of {name})", target_path.display());
        Failure::input(target_report(&title, &e))
    };
    if checked == TargetValues::Checked {
        // A value no collective could take is the target's, said once,
        // before anything is imported.
        target.validate().map_err(target_report_of)?;
    }
    let algorithm = hlo.algorithm.as_deref().map(parse_algorithm).transpose()?;
    let imported = import_module(src, &target, algorithm.as_ref()).map_err(|e| {
        // A bad target is said before a bad module, whichever verb reads
        // them (`import` and Python's `import_hlo` check the target first).
        if let Err(bad) = target.validate() {
            return target_report_of(bad);
        }
        let range = e.byte_range(src);
        Failure::input(located_report(
            InputKind::Hlo,
            &name,
            src,
            range,
            &e.message,
            "here".to_owned(),
            Some(e.help.clone()),
        ))
    })?;
    Ok(imported)
}

/// Reads the target and `--algorithm` of `hlo`, when a target is given,
/// and checks the target's values, as [`import_file`] does for each
/// module: for a verb reading several modules (`diagnose`), so that a
/// problem of theirs is said once, not once a module.
///
/// # Errors
///
/// The target's or `--algorithm`'s refusal.
pub fn check_target(hlo: &HloArgs) -> Result<(), Failure> {
    let Some(target_path) = &hlo.target else { return Ok(()) };
    let target = read_target(target_path)?;
    target.validate().map_err(|e| Failure::input(target_report(&target_path.display().to_string(), &e)))?;
    hlo.algorithm.as_deref().map(parse_algorithm).transpose()?;
    Ok(())
}

/// Says on stderr what of the module `name` is not compiled as it runs
/// (`import` marks it in the RON it writes; the verbs that compile say so
/// here): collectives in branches of a `conditional` (ccc compiles every
/// branch's), and device-to-device send/recv (not compiled at all).
pub fn note_imported(name: &str, imported: &Imported) {
    for text in imported.notes() {
        note!("note: {name}: {text}");
    }
}

/// Reads and parses a target file; a problem is shown in a snippet of
/// the file, as a spec's is.
fn read_target(path: &Path) -> Result<Target, Failure> {
    let text = read_text(path, SPEC_CAP, "target")?;
    parse_target(&text).map_err(|e| {
        let span = ccc_compiler::parse::SourceSpan { start: e.start, end: e.end }.byte_range(&text);
        // Shown, and counted, without a byte-order mark, as a spec is.
        let body = strip_bom(&text);
        let skipped = text.len() - body.len();
        let range = span.start.saturating_sub(skipped)..span.end.saturating_sub(skipped);
        let (name, message) = (path.display().to_string(), crate::report::lower_first(&e.message));
        let help = e.help.as_deref().map(str::to_owned);
        let mut report = located_report(InputKind::Target, &name, body, range, &message, e.label.to_string(), help);
        report.field = e.field.as_deref().map(str::to_owned);
        Failure::input(report)
    })
}

/// `--algorithm NAME`: an algorithm as a spec writes it.
fn parse_algorithm(text: &str) -> Result<Algorithm, Failure> {
    ccc_compiler::hlo::target::parse_algorithm(text).map_err(|e| {
        let message = crate::report::lower_first(&e.message);
        // The help (how `--algorithm` reads, at least); what is accepted
        // where the message does not list it already.
        let listed = e.message.contains("expected one of");
        let accepted = e.accepted.filter(|_| !listed).map(|a| format!("accepted: {a}"));
        let help = [accepted, e.help.map(String::from)].into_iter().flatten().collect::<Vec<_>>().join("\n");
        Failure::input(miette::miette!(code = "ccc::algorithm", help = help, "--algorithm {text}: {message}"))
    })
}
