//! `ccc diagnose A B [C ...]`: compare the signatures of specs or manifests
//! and explain, in plain words, what differs and why.
//!
//! Each input is a spec (`.ron`), a `manifest.json`, or a `ccc compile`
//! output folder holding one; other names are read as a manifest when the
//! text starts with `{`, else as a spec. Inputs are named in the report by
//! the shortest trailing part of their paths that tells them apart
//! (`rank-3/manifest.json`).
//!
//! Exit codes: 0 every signature matches, 1 a mismatch (the report is on
//! stdout), 2 an input cannot be read (the report names it and why).

use crate::Failure;
use crate::args::{DiagnoseArgs, HloArgs};
use crate::compile::compile_failure;
use crate::load::{HLO_CAP, MANIFEST_CAP, SPEC_CAP, load_spec_text, read_text, validate_imported};
use ccc_compiler::build::build;
use ccc_compiler::diagnose::{
    Cause, CollectiveDiff, DiffKind, Difference, FieldDiff, Input, Report, Unsigned, diagnose, images_digest,
    is_manifest,
};
use ccc_compiler::hlo::Imported;
use ccc_compiler::output::{ReadError, read_output};
use ccc_compiler::parse::bound_message;
use ccc_compiler::pipeline::{Options, compile};
use ccc_compiler::sign::sign;
use ccc_compiler::valid::ValidProgram;
use ccc_compiler::validate::AutoCache;
use ccc_ir::noun::{count, noun};
use ccc_ir::spec::Program;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

/// When the HLO modules among the inputs (every input, or some beside
/// specs) name more than one device count in their headers, the report
/// of that (exit 1), naming the modules alone; `None` otherwise. (No one
/// target serves both: beside a spec, it was a refusal whose help told
/// the user to give the target the device count of one of them.)
///
/// # Errors
///
/// A [`Failure`] when the report cannot be written.
fn device_counts(args: &DiagnoseArgs, texts: &[Option<String>]) -> Result<Option<ExitCode>, Failure> {
    use ccc_compiler::hlo::compare::{DEVICE_COUNTS, HeaderDevices, header_devices};
    let (inputs, srcs): (Vec<&PathBuf>, Vec<&str>) = args
        .inputs
        .iter()
        .zip(texts)
        .filter_map(|(p, t)| Some((p, t.as_deref().map(ccc_compiler::parse::strip_bom)?)))
        .filter(|(_, s)| ccc_compiler::hlo::looks_like_hlo(s))
        .unzip();
    let read: Vec<HeaderDevices> = srcs.iter().map(|s| header_devices(s)).collect();
    // A count the importer would refuse is its to refuse, with its message.
    if read.contains(&HeaderDevices::Unreadable) {
        return Ok(None);
    }
    let counts: Vec<Option<u64>> =
        read.iter().map(|h| if let HeaderDevices::Devices(n) = *h { Some(n) } else { None }).collect();
    let distinct: std::collections::BTreeSet<u64> = counts.iter().flatten().copied().collect();
    if distinct.len() < 2 {
        return Ok(None);
    }
    let said = |c: Option<u64>| {
        c.map_or_else(|| "no device count (lowered text)".to_owned(), |n| count(n, "device").to_string())
    };
    if args.json {
        let modules: Vec<serde_json::Value> = inputs
            .iter()
            .zip(&counts)
            .map(|(p, c)| serde_json::json!({ "module": p.display().to_string(), "devices": c }))
            .collect();
        let json = serde_json::json!({ "all_match": false, "device_counts": modules, "cause": DEVICE_COUNTS });
        let text = serde_json::to_string_pretty(&json)
            .map_err(|e| Failure::input(miette::miette!("cannot write the report as JSON: {e}")))?;
        crate::out::emit(&format!("{text}\n"))?;
    } else {
        let mut out = String::from("the modules run on different device counts:\n");
        for (p, c) in inputs.iter().zip(&counts) {
            let _ = writeln!(out, "  {}: {}", p.display(), said(*c));
        }
        let _ = writeln!(out, "likely cause: {DEVICE_COUNTS}");
        crate::out::emit(&out)?;
    }
    Ok(Some(ExitCode::from(1)))
}

/// Members listed by name before "and N more".
const MEMBERS_SHOWN: usize = 4;
/// Odd ones out listed by name before "and N more".
const ODD_SHOWN: usize = 16;
/// Values longer than this are shown around their first difference.
const VALUE_MAX: usize = 100;
/// Specs of at most this many ranks are compiled (no proof) to compare
/// their images; larger worlds are compared by signature only.
const IMAGES_RANK_CAP: u32 = 1024;

/// Says on stderr which inputs name one file or folder more than once
/// (`a.ron` given twice counts twice: its signature is in two inputs'
/// places, and a majority may rest on it), each with its positions.
fn note_repeated(inputs: &[PathBuf]) {
    let mut seen: std::collections::BTreeMap<PathBuf, Vec<usize>> = std::collections::BTreeMap::new();
    for (i, p) in inputs.iter().enumerate() {
        // A path that cannot be resolved (it will be refused as such) is
        // compared as written.
        let key = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        seen.entry(key).or_default().push(i + 1);
    }
    let mut repeated: Vec<&Vec<usize>> = seen.values().filter(|at| at.len() > 1).collect();
    repeated.sort();
    for at in repeated {
        let first = at.first().and_then(|&i| inputs.get(i - 1));
        let places: Vec<String> = at.iter().map(usize::to_string).collect();
        let times = if at.len() == 2 { "twice".to_owned() } else { format!("{} times", at.len()) };
        note!(
            "note: {} is given {times} (inputs {}): each counts as an input of its own",
            first.map_or_else(String::new, |p| p.display().to_string()),
            places.join(", ")
        );
    }
}

/// Runs `ccc diagnose`.
pub fn run(args: &DiagnoseArgs) -> Result<ExitCode, Failure> {
    if let [one] = &args.inputs[..] {
        return Err(Failure::input(miette::miette!(
            help = "name another rank's spec, manifest, output folder or HLO module: diagnose compares two or more",
            "diagnose was given one input, {}: nothing to compare it with",
            one.display()
        )));
    }
    let files: Vec<PathBuf> =
        args.inputs.iter().map(|p| if p.is_dir() { p.join("manifest.json") } else { p.clone() }).collect();
    note_repeated(&args.inputs);
    // A manifest (a folder's, or one given) is named with its folder
    // (`out/manifest.json`), never by the name every manifest has.
    let least: Vec<usize> =
        files.iter().map(|p| if p.file_name().is_some_and(|n| n == "manifest.json") { 2 } else { 1 }).collect();
    let names = display_names(&files, &least);
    // Each input is read once (a pipe cannot be read twice): its text, or
    // `None` for an output folder.
    let texts: Vec<Result<Option<String>, Failure>> =
        args.inputs.iter().zip(&files).map(|(given, file)| read_input(given, file, &args.hlo)).collect();
    if texts.iter().any(Result::is_err) {
        return Err(refused_reading(args, &files, names, texts));
    }
    let texts: Vec<Option<String>> = texts.into_iter().flatten().collect();
    // Compiled modules whose headers name different device counts cannot
    // share the one target: that difference is the report (it was a
    // refusal, "the module runs on 16 devices but the target has 8").
    if let Some(code) = device_counts(args, &texts)? {
        return Ok(code);
    }
    let is_module = |t: &str| ccc_compiler::hlo::looks_like_hlo(ccc_compiler::parse::strip_bom(t));
    let any_module = texts.iter().flatten().any(|t| is_module(t));
    // The target's own problem (a value no collective takes, a field it
    // does not have) is said once, not once a module.
    if any_module {
        crate::load::check_target(&args.hlo)?;
    }
    // HLO modules (every input one, `--target` given) are imported once:
    // their collectives compared instruction by instruction, then signed.
    let modules = crate::import::import_modules(args, &texts)?;
    let lowered: Vec<bool> =
        texts.iter().map(|t| t.as_deref().is_some_and(ccc_compiler::hlo::compare::is_lowered)).collect();
    let given: Vec<String> = args.inputs.iter().map(|p| p.display().to_string()).collect();
    let hlo = modules.as_deref().and_then(|m| ccc_compiler::hlo::compare::compare_modules(&given, m, &lowered));
    if let Some(hlo) = hlo.as_ref().filter(|_| !args.json) {
        crate::out::emit(&hlo.render())?;
        return Ok(ExitCode::from(1));
    }
    let mut modules = modules.map(Vec::into_iter);
    // Beside HLO modules, a RON spec is read as it is: `--target` and
    // `--algorithm` are the modules' (alone, they are refused for it).
    // Given for no module, they would be ignored for manifests and output
    // folders (a spec refuses them): refused for every kind alike.
    if !any_module && (args.hlo.target.is_some() || args.hlo.algorithm.is_some()) {
        let mlir =
            args.inputs.iter().zip(&texts).find(|(_, t)| t.as_deref().is_some_and(ccc_compiler::hlo::looks_like_mlir));
        if let Some((path, _)) = mlir {
            return Err(crate::load::mlir_refusal(&path.display().to_string()));
        }
        return Err(Failure::input(miette::miette!(
            help = format!(
                "--target and --algorithm are for XLA HLO modules ({}); specs, manifests and output folders name \
                 their own machine and algorithms: drop them",
                ccc_compiler::hlo::HLO_SOURCES
            ),
            "none of the {} inputs is an XLA HLO module, but --target or --algorithm was given",
            args.inputs.len()
        )));
    }
    let spec_args = HloArgs { target: None, algorithm: None };
    // One cache for every spec: ranks' specs mostly repeat their
    // collectives, and `Auto` then searches each distinct one once.
    let mut cache = AutoCache::new();
    let inputs = crate::report::every_input(args.inputs.iter().zip(&files).zip(names).zip(&texts).map(
        |(((given, file), name), text)| {
            let read = match modules.as_mut().and_then(Iterator::next) {
                Some(module) => Read::Module(Box::new(module)),
                None => text.as_deref().map_or(Read::Folder, Read::Text),
            };
            let hlo = match read {
                Read::Text(t) if any_module && !is_module(t) => &spec_args,
                _ => &args.hlo,
            };
            load(given, file, name, read, hlo, &mut cache)
        },
    ))?;
    let kinds = Kind::plural(inputs.iter().map(|(_, kind)| *kind));
    let inputs: Vec<Input> = inputs.into_iter().map(|(input, _)| input).collect();
    let report = diagnose(&inputs);
    if args.json {
        // HLO modules whose collectives differ: which instructions, under
        // `hlo` (what the prose report says of them), after the report's
        // own fields.
        let hlo = hlo.map(|h| h.json());
        let json = serde_json::to_string_pretty(&ccc_compiler::diagnose::WithHlo { report: &report, hlo })
            .map_err(|e| Failure::input(miette::miette!("cannot write the report as JSON: {e}")))?;
        crate::out::emit(&format!("{json}\n"))?;
    } else {
        crate::out::emit(&render(&report, kinds))?;
    }
    Ok(if report.all_match { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// What `diagnose` says when some inputs cannot be read (`texts`, from
/// [`read_input`]): each that can is loaded as it is, alone (a spec, a
/// manifest, an output folder, an HLO module imported by itself), so that
/// every refused input is said in input order
/// ([`every_input`](crate::report::every_input)), not the
/// unreadable ones alone.
fn refused_reading(
    args: &DiagnoseArgs,
    files: &[PathBuf],
    names: Vec<String>,
    texts: Vec<Result<Option<String>, Failure>>,
) -> Failure {
    let mut cache = AutoCache::new();
    let spec_args = HloArgs { target: None, algorithm: None };
    let is_module = |t: &str| ccc_compiler::hlo::looks_like_hlo(ccc_compiler::parse::strip_bom(t));
    let loaded =
        texts.into_iter().zip(args.inputs.iter().zip(files).zip(names)).map(|(text, ((given, file), name))| {
            let text = text?;
            let read = text.as_deref().map_or(Read::Folder, Read::Text);
            let hlo = match read {
                Read::Text(t) if !is_module(t) => &spec_args,
                _ => &args.hlo,
            };
            load(given, file, name, read, hlo, &mut cache).map(|_| ())
        });
    match crate::report::every_input(loaded) {
        Err(failure) => failure,
        // Not reached: an input was refused reading it.
        Ok(_) => Failure::input(miette::miette!("an input could not be read")),
    }
}

/// What an input was read as.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Spec,
    Manifest,
}

impl Kind {
    /// What the report calls the inputs together: `specs`, `manifests`, or
    /// `inputs` when both kinds are given.
    fn plural(kinds: impl Iterator<Item = Kind>) -> &'static str {
        let kinds: Vec<Kind> = kinds.collect();
        if kinds.iter().all(|&k| k == Kind::Spec) {
            "specs"
        } else if kinds.iter().all(|&k| k == Kind::Manifest) {
            "manifests"
        } else {
            "inputs"
        }
    }
}

/// What [`read_input`] read of an input, as [`load`] takes it.
enum Read<'a> {
    /// An output folder (read by [`load`], by its manifest).
    Folder,
    /// A manifest's or a spec's text.
    Text(&'a str),
    /// An HLO module, imported.
    Module(Box<Imported>),
}

/// The text of input `given` (at `file`: a folder's manifest), read once;
/// `None` for an output folder, which [`load`] reads by its manifest.
///
/// # Errors
///
/// A bad-input [`Failure`] when the file cannot be read, is larger than
/// its cap or is not UTF-8.
fn read_input(given: &Path, file: &Path, hlo: &HloArgs) -> Result<Option<String>, Failure> {
    if given.is_dir() {
        return Ok(None);
    }
    // A spec's own cap is then applied to the text by `load_spec_text`.
    let cap = match file.extension() {
        _ if hlo.target.is_some() => HLO_CAP,
        Some(e) if e == "ron" => SPEC_CAP,
        _ => MANIFEST_CAP,
    };
    let what = if hlo.target.is_some() { "HLO module, spec or manifest" } else { "spec or manifest" };
    read_text(file, cap, what).map(Some)
}

/// Loads one input: an output folder, a manifest, a spec or an imported
/// HLO module.
fn load(
    given: &Path,
    file: &Path,
    name: String,
    read: Read<'_>,
    hlo: &HloArgs,
    cache: &mut AutoCache,
) -> Result<(Input, Kind), Failure> {
    let path = file.display().to_string();
    let text = match read {
        Read::Text(text) => text,
        Read::Module(imported) => {
            let valid = validate_imported(&path, &imported, hlo, cache)?;
            return spec_input(file, name, &imported.program, &valid);
        }
        Read::Folder => {
            // An output folder whose files are the ones its manifest lists
            // (sizes and MD5s) is compared by its images (`read_output`).
            let read = read_output(given).map_err(|e| match e {
                ReadError::NoManifest { .. } => Failure::input(miette::miette!(
                    help = "accepted: a spec (.ron), a manifest.json, or a `ccc compile` output folder",
                    "{} is a folder without a manifest.json",
                    given.display()
                )),
                // Not UTF-8, or too large: said as a manifest named alone
                // says it (the offset, line and column; the cap).
                e @ (ReadError::Io { .. } | ReadError::TooLarge { .. }) => {
                    read_text(&given.join("manifest.json"), MANIFEST_CAP, "manifest")
                        .err()
                        .unwrap_or_else(|| Failure::input(miette::miette!("{e}")))
                }
                // Nothing is wrong with what was given: it was read at
                // the wrong time.
                e @ ReadError::Replaced { .. } => Failure::input(miette::miette!("{e}")),
                e => Failure::input(miette::miette!(
                    help = "accepted: a spec (.ron), a manifest.json, or a `ccc compile` output folder",
                    "{e}"
                )),
            })?;
            let input = manifest_input(path, &read.manifest)?;
            return Ok((Input { name, images: read.images, edited: read.edited, ..input }, Kind::Manifest));
        }
    };
    if is_manifest(Some(file), text) {
        // A manifest alone is not compared by images: its listing vouches
        // for no file.
        Ok((Input { name, ..manifest_input(path, text)? }, Kind::Manifest))
    } else {
        let (spec, valid) = load_spec_text(file, text, hlo, cache)?;
        spec_input(file, name, &spec.program, &valid)
    }
}

/// The input of a valid program read from `file` (`program` as written):
/// its signature, what its `Auto` choices read unsigned, and its images'
/// digest where the world is small enough to compile.
fn spec_input(file: &Path, name: String, program: &Program, valid: &ValidProgram) -> Result<(Input, Kind), Failure> {
    let schedule = build(valid).map_err(|e| compile_failure(file, e.into()))?;
    // No rank could load a program lowering refuses: it has no signature
    // to compare.
    crate::check::refuse_unlowerable(file, valid, Some(&schedule))?;
    let signature = sign(valid, &schedule);
    // The images too, so that a difference they do not carry is named as
    // such; a world too large to compile quickly is left unknown.
    let images = (schedule.shape.rank_n <= IMAGES_RANK_CAP)
        .then(|| compile(valid, &Options { verify: false, ..Options::default() }).ok())
        .flatten()
        .and_then(|c| images_digest(&c.images, c.schedule.shape.rank_n));
    let unsigned = Unsigned::of(program, valid);
    Ok((Input { images, unsigned, ..Input::from_signature(name, &signature) }, Kind::Spec))
}

/// The input of a manifest's text, read from `path`.
fn manifest_input(path: String, text: &str) -> Result<Input, Failure> {
    Input::from_manifest_json(path, text).map_err(|e| {
        Failure::input(miette::miette!(
            help = "a manifest.json is written by `ccc compile`; diagnose reads its signature and signature_fields",
            // The message can quote a value of the file: keep it short.
            "{}",
            bound_message(&e.to_string())
        ))
    })
}

/// The shortest trailing part of every path that tells them all apart,
/// each of at least `least[i]` components where the path has them (`..`
/// read as leaving the folder before it, so that `a/x/../y` is `a/y`).
fn display_names(paths: &[PathBuf], least: &[usize]) -> Vec<String> {
    let parts: Vec<Vec<String>> = paths
        .iter()
        .map(|p| {
            let mut parts: Vec<String> = Vec::new();
            for c in p.components() {
                match c {
                    Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
                    Component::ParentDir if parts.last().is_some_and(|l| l != "..") => {
                        parts.pop();
                    }
                    Component::ParentDir => parts.push("..".to_owned()),
                    _ => {}
                }
            }
            parts
        })
        .collect();
    let longest = parts.iter().map(Vec::len).max().unwrap_or(0);
    for k in 1..=longest {
        let names: Vec<String> = parts
            .iter()
            .zip(least.iter().chain(std::iter::repeat(&1)))
            .map(|(p, &least)| p[p.len().saturating_sub(k.max(least))..].join("/"))
            .collect();
        let mut sorted: Vec<&String> = names.iter().collect();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() == names.len() {
            return names;
        }
    }
    paths.iter().map(|p| p.display().to_string()).collect()
}

/// The report in plain words; `kinds` names the inputs together (`specs`,
/// `manifests`, `inputs`).
fn render(r: &Report, kinds: &str) -> String {
    let mut out = String::new();
    let Some(majority) = r.groups.first() else {
        return "match: no inputs\n".into();
    };
    if r.all_match {
        let _ = writeln!(
            out,
            "match: all {} have signature {} ({})",
            count(r.input_n, "input"),
            majority.digest,
            collectives(majority.collective_n)
        );
        return out;
    }
    // The signatures match, but some folder's files were changed since
    // ccc wrote them.
    if r.groups.len() <= 1 {
        let _ = writeln!(
            out,
            "mismatch: all {} have signature {} ({}), but {} of {} {} files changed since ccc wrote them",
            count(r.input_n, "input"),
            majority.digest,
            collectives(majority.collective_n),
            r.edited.len(),
            r.input_n,
            if r.edited.len() == 1 { "has" } else { "have" }
        );
        render_edited(&mut out, r);
        return out;
    }
    // The largest group is a majority only when it holds more than half
    // the inputs (2 of 4 alike, the others apart, is not).
    let lead = if majority.members.len() as u64 * 2 > u64::from(r.input_n) { "majority" } else { "largest group" };
    let label = |g: usize| -> String {
        match r.groups.get(g) {
            Some(group) if group.members.len() == 1 => group.members.first().cloned().unwrap_or_default(),
            _ if g == 0 && !r.majority_tied => lead.into(),
            _ => format!("group {}", g + 1),
        }
    };
    let two = r.input_n == 2;
    if two {
        let _ = writeln!(out, "mismatch: {} and {} have different signatures", label(0), label(1));
        for g in &r.groups {
            let _ = writeln!(out, "  {}: {} ({})", g.members.join(", "), g.digest, collectives(g.collective_n));
        }
    } else {
        let _ = writeln!(out, "mismatch: {}, {} different signatures", count(r.input_n, "input"), r.groups.len());
        if r.majority_tied {
            let tied = r.groups.iter().take_while(|g| g.members.len() == majority.members.len()).count();
            let _ = writeln!(
                out,
                "no majority: the {tied} largest groups have {} each; group 1 (the first to appear) is the reference",
                inputs(majority.members.len())
            );
        }
        for (i, g) in r.groups.iter().enumerate() {
            let head = if i == 0 && !r.majority_tied {
                format!("{lead}: {} of {}", g.members.len(), r.input_n)
            } else {
                format!("group {}: {}", i + 1, inputs(g.members.len()))
            };
            let _ = writeln!(out, "{head}, signature {} ({}):", g.digest, collectives(g.collective_n));
            let _ = writeln!(out, "    {}", abbreviate(&g.members, MEMBERS_SHOWN));
        }
        let _ = writeln!(
            out,
            "odd ones out ({} of {}): {}",
            r.odd_ones_out.len(),
            r.input_n,
            abbreviate(&r.odd_ones_out, ODD_SHOWN)
        );
    }
    for d in &r.differences {
        let g = d.group as usize;
        let (la, lb) = (label(0), label(g));
        let indent = if two { "" } else { "  " };
        if !two {
            let _ = writeln!(
                out,
                "what sets {lb} apart from {}:",
                if la == lead { format!("the {lead}") } else { la.clone() }
            );
        }
        render_difference(&mut out, d, &la, &lb, indent, kinds);
    }
    if !r.edited.is_empty() {
        let _ = writeln!(
            out,
            "and {} of {} {} files changed since ccc wrote them:",
            r.edited.len(),
            r.input_n,
            if r.edited.len() == 1 { "has" } else { "have" }
        );
        render_edited(&mut out, r);
    }
    out
}

/// The output folders whose files changed since ccc wrote them, one a
/// line.
fn render_edited(out: &mut String, r: &Report) {
    for e in &r.edited {
        let _ = writeln!(
            out,
            "  {}: {}; its ranks would not load the schedule its manifest signs (compile it again into a new \
             folder: ccc does not replace one whose files changed)",
            e.input, e.why
        );
    }
}

fn inputs(n: usize) -> String {
    count(n, "input").to_string()
}

fn collectives(n: u32) -> String {
    count(n, "collective").to_string()
}

/// `a, b, c, d and 56 more`.
fn abbreviate(names: &[String], shown: usize) -> String {
    if names.len() <= shown + 1 {
        return names.join(", ");
    }
    let head = names.get(..shown).unwrap_or(names).join(", ");
    format!("{head} and {} more", names.len() - shown)
}

/// One line of the list of differences.
enum Line<'a> {
    /// A field that differs the same way at one or more collectives.
    Field { diff: &'a FieldDiff, at: Vec<(u32, u32)> },
    /// A program-wide field.
    Program(&'a FieldDiff),
    /// A missing, extra or moved collective.
    Gap(&'a CollectiveDiff),
}

fn render_difference(out: &mut String, d: &Difference, la: &str, lb: &str, indent: &str, kinds: &str) {
    if let Some(v) = d.fields.iter().find(|f| f.field == "format_version") {
        let _ = writeln!(
            out,
            "{indent}written by different ccc versions (format_version {}): every other difference may follow from that",
            values(v, la, lb)
        );
    }
    // The collective `first` names: not always the first listed (one
    // whose `Auto` choice a difference elsewhere moved is passed over).
    let at = |p: &ccc_compiler::diagnose::Position| {
        d.collectives.iter().find(|c| (c.majority_index, c.other_index) == (p.majority_index, p.other_index))
    };
    if let Some((p, c)) = d.first.and_then(|p| Some((p, at(&p).or(d.collectives.first())?))) {
        let what = match c.kind {
            DiffKind::Changed => {
                let (a, b) = (c.majority.as_deref().unwrap_or("?"), c.other.as_deref().unwrap_or("?"));
                if a == b && c.fields.is_empty() {
                    format!("{a} on both sides, with the same fields in a different order")
                } else if a == b {
                    // The fields the list below names: one that follows
                    // from the others (a schedule digest) is left out
                    // there, and so here, unless it is all that differs.
                    let named = |f: &&FieldDiff| f.cause != ccc_compiler::diagnose::Cause::FollowsFromInputs;
                    let mut fields: Vec<&str> = c.fields.iter().filter(named).map(|f| f.field.as_str()).collect();
                    if fields.is_empty() {
                        fields = c.fields.iter().map(|f| f.field.as_str()).collect();
                    }
                    format!(
                        "{a} on both sides, but {} differ{}",
                        fields.join(", "),
                        if fields.len() == 1 { "s" } else { "" }
                    )
                } else {
                    format!("{a} ({la}) vs {b} ({lb})")
                }
            }
            DiffKind::Missing => format!(
                "{lb} has no collective in that place matching {la}'s collective {} ({})",
                c.majority_index,
                c.majority.as_deref().unwrap_or("?")
            ),
            DiffKind::Extra => format!(
                "{lb} has an extra collective {} ({}) that {la} does not have in that place",
                c.other_index,
                c.other.as_deref().unwrap_or("?")
            ),
            DiffKind::Moved => format!(
                "{la}'s collective {} ({}) is {lb}'s collective {}: the same collective in another place",
                c.majority_index,
                c.majority.as_deref().unwrap_or("?"),
                c.other_index
            ),
        };
        let _ = writeln!(
            out,
            "{indent}the {kinds} disagree at {} ({la}) vs {} ({lb}): {what}",
            position(p.majority_index, p.majority_n, "collective "),
            position(p.other_index, p.other_n, "")
        );
    } else if !d.fields.is_empty() {
        let _ = writeln!(out, "{indent}every collective agrees; program-wide fields differ");
    }

    if d.same_images {
        let how = d.collectives.iter().flat_map(|c| &c.fields).any(|f| f.cause == Cause::HowChosen);
        let how = if how {
            "the ranks chose the same algorithm differently (Auto or written), which the signature records"
        } else {
            ""
        };
        // Each differing field said with where it lives, since it is not
        // in these images.
        let homes = [
            (ImageFree::Descriptors, "which the runtime puts in descriptors it builds, not in these images"),
            (ImageFree::Machine, "which the instance type or the launcher sets, not these images"),
            (ImageFree::Build, "which ccc records of itself: a different ccc build or version made these same images"),
        ];
        let rest: Vec<String> = homes
            .iter()
            .filter_map(|&(kind, lives)| {
                let names = image_free_fields(d, kind);
                (!names.is_empty()).then(|| format!("the ranks differ in {names}, {lives}"))
            })
            .collect();
        let rest = rest.join("; ");
        let both = if how.is_empty() || rest.is_empty() { "" } else { "; " };
        if how.is_empty() && rest.is_empty() {
            // Collectives missing, extra or in another order: the images
            // do not say which collective a record serves.
            let _ = writeln!(
                out,
                "{indent}the images are identical: what differs is in the signature, not in these images"
            );
        } else {
            let _ = writeln!(out, "{indent}the images are identical; {how}{both}{rest}");
        }
    }

    let mut lines: Vec<Line<'_>> = d.fields.iter().map(Line::Program).collect();
    for c in &d.collectives {
        match c.kind {
            DiffKind::Changed => {
                for f in &c.fields {
                    if f.cause == ccc_compiler::diagnose::Cause::FollowsFromInputs {
                        continue;
                    }
                    let same = lines.iter_mut().find_map(|l| match l {
                        Line::Field { diff, at }
                            if diff.field == f.field && diff.majority == f.majority && diff.other == f.other =>
                        {
                            Some(at)
                        }
                        _ => None,
                    });
                    match same {
                        Some(at) => at.push((c.majority_index, c.other_index)),
                        None => lines.push(Line::Field { diff: f, at: vec![(c.majority_index, c.other_index)] }),
                    }
                }
            }
            DiffKind::Missing | DiffKind::Extra | DiffKind::Moved => lines.push(Line::Gap(c)),
        }
    }
    if lines.is_empty() {
        let _ = writeln!(
            out,
            "{indent}no field's value differs: the fields are named, numbered or listed differently (an edited manifest?)"
        );
        return;
    }
    // The `algorithm` notes say "here" for the majority's side and
    // "there" for the other's (`FieldDiff::note`): named once, where one
    // is printed.
    let noted =
        lines.iter().any(|l| matches!(l, Line::Field { diff, .. } if diff.field == "algorithm" && diff.note.is_some()));
    let legend = if noted { format!("; in the notes, here is {la} and there is {lb}") } else { String::new() };
    let _ = writeln!(out, "{indent}every difference ({la} vs {lb}; collectives count from 0{legend}):");
    for line in &lines {
        let (text, cause) = match line {
            Line::Program(f) => (format!("{}: {}", f.field, values(f, la, lb)), f.cause),
            Line::Field { diff, at } => match &diff.note {
                // An `algorithm` note names both sides' choices; any other
                // follows the values.
                Some(note) if diff.field == "algorithm" => {
                    (format!("{}: {note}, {}", diff.field, positions(at, la, lb)), diff.cause)
                }
                Some(note) => {
                    (format!("{}: {}, {}: {note}", diff.field, values(diff, la, lb), positions(at, la, lb)), diff.cause)
                }
                None => (format!("{}: {}, {}", diff.field, values(diff, la, lb), positions(at, la, lb)), diff.cause),
            },
            Line::Gap(c) if c.kind == DiffKind::Missing => (
                format!(
                    "{la}'s collective {} ({}) is missing from {lb}: {lb} has no such collective {}",
                    c.majority_index,
                    c.majority.as_deref().unwrap_or("?"),
                    between(c.other_index, d.first.map_or(0, |p| p.other_n))
                ),
                c.cause.unwrap_or(ccc_compiler::diagnose::Cause::ProgramDiverged),
            ),
            Line::Gap(c) if c.kind == DiffKind::Moved => (
                format!(
                    "{la}'s collective {} ({}) moved: it is {lb}'s collective {}, equal in every field",
                    c.majority_index,
                    c.majority.as_deref().unwrap_or("?"),
                    c.other_index
                ),
                c.cause.unwrap_or(Cause::Reordered),
            ),
            Line::Gap(c) => (
                format!(
                    "{lb}'s collective {} ({}) is extra: {la} has no such collective {}",
                    c.other_index,
                    c.other.as_deref().unwrap_or("?"),
                    between(c.majority_index, d.first.map_or(0, |p| p.majority_n))
                ),
                c.cause.unwrap_or(ccc_compiler::diagnose::Cause::ProgramDiverged),
            ),
        };
        let _ = writeln!(out, "{indent}  - {text}");
        let _ = writeln!(out, "{indent}    likely cause: {cause}");
    }
}

/// Where a field that differs between byte-identical images lives.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ImageFree {
    /// In what the runtime builds (dtype, reduce op, groups, ...).
    Descriptors,
    /// In the machine: the architecture, the topology.
    Machine,
    /// In ccc itself: its format version, its lowering (`schedule`).
    Build,
}

impl ImageFree {
    fn of(cause: Cause) -> ImageFree {
        match cause {
            Cause::Machine => ImageFree::Machine,
            Cause::Versions | Cause::Builds => ImageFree::Build,
            _ => ImageFree::Descriptors,
        }
    }
}

/// The differing fields of `d` of `kind` that are not consequences of
/// others, each once, in order: `reduce`, `reduce and dtype`, `groups,
/// reduce and dtype`.
fn image_free_fields(d: &Difference, kind: ImageFree) -> String {
    let mut names: Vec<&str> = Vec::new();
    let fields = d.fields.iter().chain(d.collectives.iter().flat_map(|c| &c.fields));
    let free = |f: &&FieldDiff| !matches!(f.cause, Cause::FollowsFromInputs | Cause::HowChosen);
    for f in fields.filter(free).filter(|f| ImageFree::of(f.cause) == kind) {
        if !names.contains(&f.field.as_str()) {
            names.push(&f.field);
        }
    }
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// Where one side of a disagreement stands in its program of `n`:
/// `collective 4 of 6`, or past its last (an extra collective on the other
/// side at the end) `the end, after collective 3 of 4`; `noun` before a
/// position inside it (`collective `, or nothing after the first side).
fn position(index: u32, n: u32, noun: &str) -> String {
    match n {
        0 => "the start of an empty program".into(),
        n if index >= n => format!("the end, after collective {} of {n}", n - 1),
        n => format!("{noun}{index} of {n}"),
    }
}

/// Where a collective would sit in a program of `n`: `between its
/// collectives 3 and 4`, `before its collective 0`, `after its last
/// collective (5)`.
fn between(next: u32, n: u32) -> String {
    match next {
        0 if n == 0 => "(its program is empty)".into(),
        0 => "before its collective 0".into(),
        i if i >= n => format!("after its last collective ({})", n - 1),
        i => format!("between its collectives {} and {i}", i - 1),
    }
}

/// `4096 (a.ron) vs 4097 (b.ron)`.
fn values(f: &FieldDiff, la: &str, lb: &str) -> String {
    let (a, b) = shorten(f.majority.as_deref(), f.other.as_deref());
    format!("{a} ({la}) vs {b} ({lb})")
}

/// Both values, each cut around the first place they differ when long.
fn shorten(a: Option<&str>, b: Option<&str>) -> (String, String) {
    let (Some(a), Some(b)) = (a, b) else {
        return (a.unwrap_or("(absent)").to_owned(), b.unwrap_or("(absent)").to_owned());
    };
    if a.chars().count() <= VALUE_MAX && b.chars().count() <= VALUE_MAX {
        return (a.to_owned(), b.to_owned());
    }
    let first = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let start = first.saturating_sub(VALUE_MAX / 3);
    let cut = |s: &str| {
        let n = s.chars().count();
        let body: String = s.chars().skip(start).take(VALUE_MAX).collect();
        let pre = if start > 0 { "..." } else { "" };
        let post = if start + VALUE_MAX < n { "..." } else { "" };
        // A value shown whole needs no length.
        if pre.is_empty() && post.is_empty() {
            return body;
        }
        format!("{pre}{body}{post} ({n} chars)")
    };
    (cut(a), cut(b))
}

/// `at collective 3`, `at collectives 0-5`, `at a.ron's collective 4 (b.ron's 5)`.
fn positions(at: &[(u32, u32)], la: &str, lb: &str) -> String {
    let word = noun(at.len(), "collective");
    let a: Vec<u32> = at.iter().map(|p| p.0).collect();
    let b: Vec<u32> = at.iter().map(|p| p.1).collect();
    if a == b {
        format!("at {word} {}", ranges(&a))
    } else {
        format!("at {la}'s {word} {} ({lb}'s {})", ranges(&a), ranges(&b))
    }
}

/// `0-5, 7 and 9`.
fn ranges(values: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &v in values {
        match runs.last_mut() {
            Some((_, hi)) if hi.checked_add(1) == Some(v) => *hi = v,
            _ => runs.push((v, v)),
        }
    }
    let parts: Vec<String> =
        runs.iter().map(|&(lo, hi)| if lo == hi { lo.to_string() } else { format!("{lo}-{hi}") }).collect();
    match parts.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => parts.join(""),
    }
}

#[cfg(test)]
mod tests {
    use super::display_names;
    use std::path::PathBuf;

    /// Names are the shortest trailing parts that tell the paths apart, a
    /// manifest's with its folder, and `..` leaves the folder before it
    /// (`a/x/../y` was shown as `x/y`, a path that need not exist).
    #[test]
    fn inputs_are_named_by_their_shortest_distinct_tails() {
        let names = |paths: &[&str], least: &[usize]| {
            let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
            display_names(&paths, least)
        };
        assert_eq!(names(&["a/r0.ron", "b/r1.ron"], &[1, 1]), ["r0.ron", "r1.ron"]);
        assert_eq!(names(&["a/r0.ron", "b/r0.ron"], &[1, 1]), ["a/r0.ron", "b/r0.ron"]);
        assert_eq!(names(&["runs/out/manifest.json", "x.ron"], &[2, 1]), ["out/manifest.json", "x.ron"]);
        assert_eq!(names(&["p/a/x/../y/s.ron", "p/b/y/s.ron"], &[1, 1]), ["a/y/s.ron", "b/y/s.ron"]);
        assert_eq!(names(&["../s.ron", "../../t/s.ron"], &[1, 1]), ["../s.ron", "t/s.ron"]);
    }
}
