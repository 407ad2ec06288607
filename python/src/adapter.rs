//! Every call this crate makes into ccc's libraries (`ccc_compiler`,
//! `ccc_ir`, `ccc_backends`), in one file and without PyO3: when the
//! library's API changes, this file is the one to fix.
//!
//! Each function takes and returns plain Rust values; a failure is an
//! [`ErrorInfo`], the Rust error's structured fields (kind, field path,
//! rank, step, line, column, what would be accepted) pulled out once, so
//! that `errors.rs` only has to hand them to Python.
//!
//! Two small pieces mirror the CLI's private code (`compiler/src/bin/ccc/`),
//! which the library does not export: how `diagnose` makes an input of a
//! spec (its signature, and for at most [`IMAGES_RANK_CAP`] ranks the digest
//! of its unverified images), and how `decode` picks the decoder and JSON
//! view for a region.
//!
//! Two companions make the same kind of calls for the functions that came
//! with later front ends, so that this file stays walkable: `hlo.rs`
//! (`import_hlo`: the HLO front end) and `cost.rs` (`explain`: the cost
//! model's tables, from `ccc_compiler::explain` as the CLI's).

use crate::strict::Strict;
use ccc_compiler::build::{BuildError, build};
use ccc_compiler::diagnose::{Input, InputError, Unsigned, diagnose as diagnose_inputs, images_digest};
use ccc_compiler::hlo::{Imported, Source};
use ccc_compiler::lower::LowerErrorKind;
use ccc_compiler::manifest::Manifest;
use ccc_compiler::output::{self, NotOurs, OutputError};
use ccc_compiler::parse::{ParseError, ParseErrorKind, SpecForm, parse as parse_ron};
use ccc_compiler::pipeline::{
    CallerHolds, Cancel, CertificateError, CompileError, DEFAULT_MEMORY_BUDGET, Options, WayOut, compile as run,
};
use ccc_compiler::sign::sign as sign_schedule;
use ccc_compiler::valid::ValidProgram;
use ccc_compiler::validate::{AutoCache, ValidationErrors, validate, validate_cached};
use ccc_compiler::verify::VerifyError;
use ccc_ir::id::Rank;
use ccc_ir::wire::DecodeError;
use ccc_ir::wire::ctrl_word;
use ccc_ir::wire::neff_configs::NeffConfigs;
use ccc_ir::wire::slot_spad::SlotSpad;
use std::fmt::Debug;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

pub use ccc_compiler::output::Written;
pub use ccc_compiler::pipeline::Compiled;
pub use ccc_ir::spec::Program;

/// Specs of at most this many ranks are compiled (no proof) when given to
/// [`diagnose`], so that a difference the images do not carry is named as
/// such; the CLI's `ccc diagnose` uses the same bound.
pub const IMAGES_RANK_CAP: u32 = 1024;

/// A spec as the user gave it: the program, and whether it was written as
/// one `Collective(...)` or a `Program(collectives: [...])` (error paths
/// are spelt the way the user wrote them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// The collectives.
    pub program: Program,
    /// The form it was written in.
    pub form: SpecForm,
    /// For a program `import_hlo` made, the HLO instruction each
    /// collective came from, by position (empty otherwise): a validation
    /// problem names it and its line, as the CLI does.
    pub sources: Vec<Source>,
    /// For a program `import_hlo` made, whether its module was lowered
    /// text (`hlo::compare::is_lowered`); `None` otherwise. `diagnose`
    /// of such programs compares their modules' collectives too.
    pub lowered: Option<bool>,
}

/// Which family of error a failure is; each is one Python exception class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// The text (or dict) is not a spec.
    Parse,
    /// The spec breaks rules (every problem at once).
    Validation,
    /// The algorithms could not be composed.
    Build,
    /// A rank does not fit the device.
    Lower,
    /// An image does not fit its region.
    Image,
    /// The proof found a defect (the CLI's exit 1).
    Proof,
    /// The proof cannot be attempted at this size.
    ProofTooLarge,
    /// More memory than the budget.
    Memory,
    /// A certificate that does not vouch for the schedule.
    Certificate,
    /// An output folder that may not be replaced, or a file-system failure.
    Output,
    /// Bytes that are not an image of the region.
    Decode,
    /// An input to `diagnose` that is not a manifest.
    Input,
    /// A panic inside ccc: a defect, reported instead of aborting.
    Internal,
}

/// One problem of a spec, as validation reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProblemInfo {
    /// The Rust `Problem` variant (`OutOfRange`, `NotADivisor`, ...).
    pub kind: String,
    /// The field path as the user wrote the spec (`collectives[1].channels`).
    pub field: String,
    /// The collective's index; `None` for the program itself.
    pub collective: Option<u64>,
    /// The whole message.
    pub message: String,
    /// What would be accepted, when the message says.
    pub accepted: Option<String>,
    /// For a collective `import_hlo` made: its HLO instruction's line.
    pub line: Option<u64>,
    /// For a collective `import_hlo` made: its HLO instruction's name.
    pub instruction: Option<String>,
}

/// A failure's structured fields (absent ones are `None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorInfo {
    /// The family.
    pub class: ErrorClass,
    /// The Rust variant that failed (`UnknownVariant`, `Limit`, `UnmatchedSend`).
    pub kind: String,
    /// The message, as the CLI prints it after the file name.
    pub message: String,
    /// The field path.
    pub field: Option<String>,
    /// The collective's index.
    pub collective: Option<u64>,
    /// The rank.
    pub rank: Option<u64>,
    /// The TOP_SP.
    pub topsp: Option<u64>,
    /// The step.
    pub step: Option<u64>,
    /// The record (index in its collective's chain on the TOP_SP).
    pub record: Option<u64>,
    /// 1-based line of the start of the offending text.
    pub line: Option<u64>,
    /// 1-based column (in characters) of its start.
    pub column: Option<u64>,
    /// 1-based line of its end.
    pub end_line: Option<u64>,
    /// 1-based column of its end.
    pub end_column: Option<u64>,
    /// Byte offset in an image.
    pub offset: Option<u64>,
    /// What would be accepted.
    pub accepted: Option<String>,
    /// A hint on how to fix it.
    pub help: Option<String>,
    /// Every problem, for a validation failure.
    pub problems: Vec<ProblemInfo>,
}

/// A failure as the adapter returns it (boxed: the fields are many).
pub type Failure = Box<ErrorInfo>;

impl ErrorInfo {
    /// An error of `class` and `kind` with `message` and no other field.
    pub fn new(class: ErrorClass, kind: impl Into<String>, message: impl Into<String>) -> Failure {
        Box::new(ErrorInfo {
            class,
            kind: kind.into(),
            message: message.into(),
            field: None,
            collective: None,
            rank: None,
            topsp: None,
            step: None,
            record: None,
            line: None,
            column: None,
            end_line: None,
            end_column: None,
            offset: None,
            accepted: None,
            help: None,
            problems: Vec::new(),
        })
    }
}

/// The variant name of an enum value (`Limit` of `Limit { .. }`), from its
/// `Debug` form.
fn variant<T: Debug>(value: &T) -> String {
    let debug = format!("{value:?}");
    debug.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or_default().to_owned()
}

pub(crate) use ccc_compiler::pipeline::accepted_in;

/// Parses RON text (`Collective(...)` or `Program(collectives: [...])`).
///
/// # Errors
///
/// [`ErrorClass::Parse`] with the line and column of the offending token.
pub fn parse(text: &str) -> Result<Spec, Failure> {
    // An HLO module where a spec belongs: RON's "expected struct
    // `Collective` but found `HloModule`" would not say what reads it.
    if ccc_compiler::hlo::looks_like_hlo(text) {
        let mut info = ErrorInfo::new(
            ErrorClass::Parse,
            "Hlo",
            "the text is an XLA HLO module, not a RON spec: ccc.import_hlo(module, target) reads it into a \
             ccc.Program"
                .to_owned(),
        );
        // At the `HloModule` line (comments may come before it).
        let line = text.lines().position(|l| l.trim_start().starts_with("HloModule")).unwrap_or(0);
        (info.line, info.column) = (Some(line as u64 + 1), Some(1));
        info.accepted =
            Some("a RON spec (`Collective(...)` or `Program(...)`), or the Program ccc.import_hlo makes".to_owned());
        info.help = Some("import the module first: ccc.sign(ccc.import_hlo(module, target))".to_owned());
        return Err(info);
    }
    too_large(text, "spec", ccc_compiler::parse::SPEC_MAX_BYTES)?;
    let parsed = parse_ron(text).map_err(|e| parse_error(&e))?;
    Ok(Spec { program: parsed.program, form: parsed.form, sources: Vec::new(), lowered: None })
}

/// Refuses `text` longer than `max` bytes, as the CLI refuses such a file
/// (`ParseError` of kind `TooLarge`).
pub fn too_large(text: &str, what: &str, max: u64) -> Result<(), Failure> {
    if text.len() as u64 <= max {
        return Ok(());
    }
    let mut info = ErrorInfo::new(
        ErrorClass::Parse,
        "TooLarge",
        format!("the {what} is {} bytes, more than the {max} ccc reads", text.len()),
    );
    info.accepted = Some(format!("a {what} of at most {max} bytes"));
    Err(info)
}

fn parse_error(e: &ParseError) -> Failure {
    let mut info = ErrorInfo::new(ErrorClass::Parse, variant(&e.kind), e.message.clone());
    info.line = Some(e.span.start.line as u64);
    info.column = Some(e.span.start.col as u64);
    info.end_line = Some(e.span.end.line as u64);
    info.end_column = Some(e.span.end.col as u64);
    info.help = e.help();
    info.accepted = e.accepted();
    // The path RON was reading (`collectives[1].topology.pod_n`), else
    // the field the error names.
    info.field = e.path.as_deref().map(str::to_owned).or_else(|| match &e.kind {
        ParseErrorKind::UnknownField { found } => Some(found.clone()),
        ParseErrorKind::MissingField { field, .. } | ParseErrorKind::DuplicateField { field } => {
            Some((*field).to_owned())
        }
        ParseErrorKind::IntegerOutOfBounds { field } | ParseErrorKind::Fraction { field } => field.clone(),
        _ => None,
    });
    // A lone collective is collective 0, as validation names it.
    let lone = e.form == SpecForm::Collective && info.field.is_some();
    info.collective = info.field.as_deref().and_then(collective_of).or(lone.then_some(0));
    info
}

/// The collective a field path is in: `i` of `collectives[i]...`.
pub(crate) fn collective_of(path: &str) -> Option<u64> {
    path.strip_prefix("collectives[")?.split(']').next()?.parse().ok()
}

/// Reads a spec from JSON of the spec's serde form (what `Program.from_dict`
/// hands over): an object with `collectives` is a program, any other object
/// one collective.
///
/// # Errors
///
/// [`ErrorClass::Parse`] naming the field path where the JSON does not fit
/// the schema.
pub fn from_json(json: &str) -> Result<Spec, Failure> {
    let value: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| ErrorInfo::new(ErrorClass::Parse, "Syntax", format!("not a spec: {e}")))?;
    let is_program = value.as_object().is_some_and(|o| o.contains_key("collectives"));
    let (program, form) = if is_program {
        (serde_path_to_error::deserialize::<_, Program>(Strict(value)).map_err(|e| dict_error(&e))?, SpecForm::Program)
    } else {
        let collective: ccc_ir::spec::Collective = serde_path_to_error::deserialize(Strict(value)).map_err(|e| {
            // A lone collective is collective 0, as validation names it.
            let mut info = dict_error(&e);
            info.collective = info.field.is_some().then_some(0);
            info
        })?;
        (Program::from(collective), SpecForm::Collective)
    };
    Ok(Spec { program, form, sources: Vec::new(), lowered: None })
}

fn dict_error(e: &serde_path_to_error::Error<serde_json::Error>) -> Failure {
    let path = e.path().to_string();
    let message = e.inner().to_string();
    // serde_json appends "at line L column C" of the JSON text, which a
    // caller who passed a dict never saw.
    let message = message.split(" at line ").next().unwrap_or_default().to_owned();
    // The kinds `parse` gives the same mistakes in RON text.
    let kind = if message.starts_with("unknown field") {
        "UnknownField"
    } else if message.starts_with("unknown variant") {
        "UnknownVariant"
    } else if message.starts_with("missing field") {
        "MissingField"
    } else if message.starts_with("invalid value: integer") {
        "IntegerOutOfBounds"
    } else if message.starts_with("invalid type: floating point") {
        "Fraction"
    } else if message.contains("` is a name, written as the text") {
        // `{"Mesh": None}`, as `parse` names `Mesh()` in RON.
        "NameTakesNoValue"
    } else if message.starts_with("a leg cannot itself be Hier") {
        "HierInLeg"
    } else {
        "Syntax"
    };
    let (accepted, help) = integer_said(&message, &path);
    // serde's words for a type (`string or map`, `struct Topology`, `a
    // sequence`) in a dict's: what the field takes, as `parse` says it.
    let said = accepted.clone();
    let accepted = accepted.map(|a| in_dict_words(a, &path));
    // ... and so is the message (`expected string or map`).
    let message = match (&said, &accepted) {
        // `"algorithm": "Hier"`: the name alone, where serde speaks of
        // variants.
        (Some(said), Some(words)) if said == "newtype variant" => format!("`Hier` given no legs; expected {words}"),
        (Some(said), Some(words)) if said != words => {
            message.replacen(&format!("expected {said}"), &format!("expected {words}"), 1)
        }
        _ => message,
    };
    // What was found, in Python's words (serde's `sequence`, `map`, `null`).
    let found = [("sequence", "a list"), ("map", "a dict"), ("null", "None")];
    let message = found.iter().fold(message, |m, (serde, python)| {
        m.replacen(&format!("invalid type: {serde},"), &format!("invalid type: {python},"), 1)
    });
    // `chanels`, `AllReduse`, `lunch_ns`: the name meant, as `parse` says
    // it of the same mistake in RON.
    let help = help.or_else(|| misspelt(&message));
    let message = with_hier_form(message);
    // `peers: [[0, 1, 2]]`: serde's "invalid length 3, expected fewer
    // elements in array" says nothing of a pair.
    let pair = path.rsplit('.').next().is_some_and(|f| f.starts_with("peers["))
        && (message.starts_with("invalid length ") || message.ends_with("expected a tuple of size 2"));
    let (message, accepted) = if pair {
        let found = match message.strip_prefix("invalid length ").and_then(|m| m.split(',').next()) {
            Some(n) => format!("this one has {} of them", n),
            None => format!(
                "found {}",
                message.split(", expected").next().unwrap_or_default().replace("invalid type: ", "")
            ),
        };
        (format!("a peer pair is two member indices, [source, target]; {found}"), Some("[source, target]".to_owned()))
    } else {
        (message, accepted)
    };
    // A name written as a dict (`{"Mesh": None}`) is refused inside
    // its variant: the field is the one holding it (`algorithm`).
    let path = match kind {
        "NameTakesNoValue" | "HierInLeg" => path.rsplit_once('.').map_or(path.clone(), |(field, _)| field.to_owned()),
        _ => path,
    };
    let field = if path == "." { None } else { Some(path) };
    // A missing field's path is where it belongs, not the struct lacking it.
    let field = match message.strip_prefix("missing field `").and_then(|m| m.split('`').next()) {
        Some(missing) => Some(field.map_or_else(|| missing.to_owned(), |f| format!("{f}.{missing}"))),
        None => field,
    };
    let mut info = ErrorInfo::new(
        ErrorClass::Parse,
        kind,
        match &field {
            Some(f) => format!("{f}: {message}"),
            None => message.clone(),
        },
    );
    info.accepted = accepted;
    info.help = help;
    info.collective = field.as_deref().and_then(collective_of);
    info.field = field;
    info
}

/// What serde's `expected` says a value at `path` takes (`accepted`), in
/// a dict's words: a field that takes a name lists its names (serde says
/// `string or map`), a struct is a dict of its fields (`struct
/// Topology`), a sequence a list; anything else as serde says it.
fn in_dict_words(accepted: String, path: &str) -> String {
    // The field the path ends in, without its indices (`groups`).
    let last = path.rsplit('.').next().map_or("", |f| f.split('[').next().unwrap_or(f));
    match accepted.as_str() {
        "string or map" | "unit variant" | "string" if last == "algorithm" => {
            let names = ccc_compiler::parse::names_of("inter_all_reduce").unwrap_or_default();
            format!("a name as text ({names}), or {HIER_DICT}")
        }
        "string or map" | "unit variant" | "string" => match ccc_compiler::parse::names_of(last) {
            Some(names) => format!("one of {names}, as text"),
            None => accepted,
        },
        "newtype variant" => HIER_DICT.to_owned(),
        "map with a single key" => format!("a name as text, or a dict of one key: {HIER_DICT}"),
        "a sequence" => "a list".to_owned(),
        _ => match accepted.strip_prefix("struct ") {
            Some("Topology") => r#"a dict: {"rank_n": 32, "local_rank_n": 16} (and "pod_n")"#.to_owned(),
            Some("HierLegs") => format!("a dict of legs, {HIER_LEGS}"),
            Some("ModelOverrides") => r#"a dict of the cost model's overrides: {"launch_ns": 20000}"#.to_owned(),
            Some(_) if !last.is_empty() => format!("a dict of `{last}`'s fields"),
            Some(_) => "a dict of a collective's fields, or {\"collectives\": [...]}".to_owned(),
            None => accepted,
        },
    }
}

/// serde's refusal of an unknown field or name (`` unknown field `chanels`,
/// expected one of `op`, ... ``) as `parse`'s help says it: the accepted
/// name it most likely misspells.
fn misspelt(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `").or_else(|| message.strip_prefix("unknown variant `"))?;
    let (found, accepted) = rest.split_once('`')?;
    ccc_compiler::parse::nearest(found, accepted).map(|near| format!("did you mean `{near}`?"))
}

/// What a dict error's `accepted` and `help` say, from serde's `message`
/// at `path`: where an integer field was refused (a negative number, a
/// fraction, text, one past 2^64), what `parse` says of RON, the field's
/// range in `help` by its name (`parse::whole_number_help`), not serde's
/// type name (`u64`) in `accepted`.
pub(crate) fn integer_said(message: &str, path: &str) -> (Option<String>, Option<String>) {
    let accepted = accepted_in(message).map(|a| a.trim_end_matches('.').to_owned());
    let integer = matches!(accepted.as_deref(), Some("u8" | "u16" | "u32" | "u64"))
        || message.contains("is out of range: no field");
    if !integer {
        return (accepted, None);
    }
    // The field the path ends in, without its indices (`groups`); a map's
    // key (`devices.9`, or `?` where the key itself is wrong) is not a
    // field: the map's name is.
    let field = |f: &&str| !f.is_empty() && *f != "?" && !f.bytes().all(|b| b.is_ascii_digit() || b == b'-');
    let last = path.rsplit('.').map(|f| f.split('[').next().unwrap_or(f)).find(field);
    let fraction = message.starts_with("invalid type: floating point");
    let help = ccc_compiler::parse::whole_number_help(last);
    // As `ParseError::accepted` says it of the same value in RON.
    let accepted =
        if fraction { "a whole number".to_owned() } else { ccc_compiler::parse::whole_number_accepted(last) };
    (Some(accepted), Some(help))
}

/// `message`, and where it refuses RON's `Hier((...))` written as a
/// dict's string, the form a dict takes instead.
pub(crate) fn with_hier_form(message: String) -> String {
    if !message.starts_with("unknown variant `Hier(") {
        return message;
    }
    format!("{message}; in a dict a Hier algorithm is {HIER_DICT} (the form Program.to_dict gives)")
}

/// A Hier's legs as a dict writes them (a macro, so that [`HIER_DICT`]
/// is built of the same text).
macro_rules! hier_legs {
    () => {
        r#"{"intra_reduce_scatter": "Ring", "inter_all_reduce": "Ring", "intra_all_gather": "Ring"}"#
    };
}

/// A Hier's legs as a dict writes them.
const HIER_LEGS: &str = hier_legs!();

/// A Hier algorithm as a dict writes it.
const HIER_DICT: &str = concat!(r#"{"Hier": "#, hier_legs!(), "}");

/// The spec as RON text that [`parse`] reads back to the same spec.
///
/// # Errors
///
/// [`ErrorClass::Internal`] if RON refuses a value (none in practice).
pub fn to_ron(spec: &Spec) -> Result<String, Failure> {
    // Arrays on one line, as `ccc import` writes them: a counts matrix one
    // number a line would be 7 times the text, past the spec cap a RON
    // text may have (a Program read from a dict has no such cap).
    let config = ron::ser::PrettyConfig::new().struct_names(true).compact_arrays(true);
    let text = match (spec.form, spec.program.collectives.as_slice()) {
        (SpecForm::Collective, [one]) => ron::ser::to_string_pretty(one, config),
        _ => ron::ser::to_string_pretty(&spec.program, config),
    };
    text.map_err(|e| ErrorInfo::new(ErrorClass::Internal, "Ron", format!("cannot write the spec as RON: {e}")))
}

/// The spec as JSON of its serde form (what `Program.to_dict` returns):
/// the program object, or the one collective's object.
///
/// # Errors
///
/// [`ErrorClass::Internal`] if serde_json refuses a value (none in practice).
pub fn to_json(spec: &Spec) -> Result<String, Failure> {
    let text = match (spec.form, spec.program.collectives.as_slice()) {
        (SpecForm::Collective, [one]) => serde_json::to_string(one),
        _ => serde_json::to_string(&spec.program),
    };
    text.map_err(|e| ErrorInfo::new(ErrorClass::Internal, "Json", format!("cannot write the spec as JSON: {e}")))
}

/// What [`compile`] is asked to do.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The ranks to emit; `None` for every rank.
    pub ranks: Option<Vec<u32>>,
    /// Skip the proof.
    pub no_verify: bool,
    /// The memory budget in bytes; `None` for the library's default.
    pub memory_budget: Option<u64>,
    /// The manifest of an earlier verified compile of the same schedule,
    /// whose proof of the world this compile takes instead of proving it
    /// again (`ccc compile --proven-by`).
    pub certificate: Option<std::sync::Arc<Manifest>>,
}

/// Validates and compiles a spec.
///
/// # Errors
///
/// The failing pass's error (validation lists every problem).
pub fn compile(
    spec: &Spec,
    request: &Request,
    cache: Option<&Mutex<AutoCache>>,
    cancel: Option<Cancel>,
) -> Result<Compiled, Failure> {
    let valid = validated(spec, cache)?;
    let options = Options {
        ranks: request.ranks.iter().flatten().copied().map(Rank).collect(),
        verify: !request.no_verify,
        memory_budget: request.memory_budget.unwrap_or(DEFAULT_MEMORY_BUDGET),
        certificate: request.certificate.clone(),
        // `Compiled` copies each image into a `bytes` and keeps a
        // `TopSpImages` and its map entry per TOP_SP: counted against the
        // budget as the compile's own memory.
        caller_holds: CallerHolds { image_copies: 1, bytes: PY_TOPSP_BYTES },
        cancel,
        ..Options::default()
    };
    run(&valid, &options).map_err(|e| compile_error(&e, spec))
}

/// What Python keeps per emitted TOP_SP besides the images' bytes, about: a
/// `TopSpImages`, three `bytes` headers, its entry in its rank's mapping.
const PY_TOPSP_BYTES: u64 = 512;

/// Validates a spec, through `cache` when one is given (the same result,
/// `Auto`'s answers kept for the calls after). A cache whose lock a
/// panicking call poisoned is used as it is: validation gives what it
/// gives without a cache, whatever the cache holds.
fn validated(spec: &Spec, cache: Option<&Mutex<AutoCache>>) -> Result<ValidProgram, Failure> {
    let valid = match cache {
        // In a forked process the lock may be held by a thread of the
        // parent's that the child does not have: taken only if free.
        Some(cache) if crate::fork::forked() => match crate::fork::try_lock(cache) {
            Some(mut kept) => validate_cached(&spec.program, &mut kept),
            None => validate(&spec.program),
        },
        Some(cache) => validate_cached(&spec.program, &mut cache.lock().unwrap_or_else(PoisonError::into_inner)),
        None => validate(&spec.program),
    };
    valid.map_err(|e| validation_error(&e, spec))
}

/// The collective signature of a spec (32 hex digits): what `ccc sign` prints.
///
/// # Errors
///
/// Validation or build errors.
pub fn sign(spec: &Spec, cache: Option<&Mutex<AutoCache>>) -> Result<String, Failure> {
    let valid = validated(spec, cache)?;
    let schedule = build(&valid).map_err(|e| build_error(&e))?;
    refuse_unlowerable(&valid, &schedule)?;
    Ok(sign_schedule(&valid, &schedule).digest)
}

/// Refuses a program whose choices validate but exceed a lowering limit
/// that depends on the algorithm (`legal::exceeded`: a written Mesh over
/// more peers than a TOP_SP has mesh events), as `compile` does: `sign`
/// and `diagnose` give no signature that no rank could load.
///
/// # Errors
///
/// `LowerError` of kind `Limit`, at the rank (for the mesh events) and
/// collective, with the limit's advice.
fn refuse_unlowerable(valid: &ValidProgram, schedule: &ccc_compiler::schedule::Schedule) -> Result<(), Failure> {
    let Some(x) = ccc_compiler::cost::auto::legal::exceeded_built(valid, schedule) else { return Ok(()) };
    let arch = valid.arch();
    // As `ccc check` says it: a compile refuses it (one of some ranks
    // without the proof judges the others on the schedule, as here).
    let mut info = ErrorInfo::new(ErrorClass::Lower, "Limit", x.refusal_text(arch));
    info.rank = x.rank.map(u64::from);
    info.collective = Some(u64::from(x.collective));
    info.help = Some(x.refusal.limit.advice(arch));
    Err(info)
}

/// A validation failure: every problem, by field path as `spec` was
/// written; one of a collective `import_hlo` made also at the HLO
/// instruction it came from and its line (`line 86: `all-gather.3`
/// (collectives[0].algorithm): ...`, as the CLI prints it after the
/// module's name), the first one's line the error's `line`.
pub(crate) fn validation_error(errors: &ValidationErrors, spec: &Spec) -> Failure {
    let form = spec.form;
    let problems: Vec<ProblemInfo> = errors
        .0
        .iter()
        .map(|e| {
            let field = e.path(form);
            let source = e.collective.and_then(|i| spec.sources.get(usize::try_from(i).ok()?));
            let message = match source {
                Some(s) => format!("line {}: `{}` ({field}): {}", s.line, s.instruction, e.problem),
                None => format!("{field}: {}", e.problem),
            };
            ProblemInfo {
                kind: variant(&e.problem),
                field,
                collective: e.collective.map(u64::from),
                accepted: e.accepted(),
                message,
                line: source.map(|s| s.line as u64),
                instruction: source.map(|s| s.instruction.clone()),
            }
        })
        .collect();
    // Each problem by its path as the spec was written (`collectives[1].arch:
    // ...`, as the CLI lists them), or at its HLO instruction.
    // The problems found, those validation counted past the ones it lists
    // among them (the last entry says how many).
    let n = errors.count();
    let listed: String = problems.iter().map(|p| format!("\n  - {}", p.message)).collect();
    let what = if spec.sources.is_empty() { "spec" } else { "imported module" };
    let message = format!("{n} problem{} in the {what}:{listed}", if n == 1 { "" } else { "s" });
    let mut info = ErrorInfo::new(ErrorClass::Validation, "Validation", message);
    if let Some(first) = problems.first() {
        info.kind.clone_from(&first.kind);
        info.field = Some(first.field.clone());
        info.collective = first.collective;
        info.accepted.clone_from(&first.accepted);
        info.line = first.line;
    }
    info.problems = problems;
    info
}

fn build_error(e: &BuildError) -> Failure {
    let mut info = ErrorInfo::new(ErrorClass::Build, variant(e), e.to_string());
    info.collective = Some(u64::from(match e {
        BuildError::UnevenGroups { collective, .. }
        | BuildError::Unsupported { collective, .. }
        | BuildError::TooManySteps { collective, .. } => *collective,
    }));
    if let BuildError::UnevenGroups { group, .. } = e {
        info.field = Some(format!("groups[{group}]"));
    }
    info
}

fn compile_error(e: &CompileError, spec: &Spec) -> Failure {
    let message = e.to_string();
    // What the message says would be accepted (a rank not in the world),
    // for the branches that set no `accepted` of their own.
    let said = e.accepted();
    match e {
        CompileError::Parse(e) => parse_error(e),
        CompileError::Validate(e) => validation_error(e, spec),
        CompileError::Build(e) => build_error(e),
        CompileError::Lower(e) => {
            let mut info = ErrorInfo::new(ErrorClass::Lower, variant(&e.kind), message);
            info.rank = Some(u64::from(e.rank.0));
            info.topsp = e.topsp.map(|t| u64::from(t.0));
            info.collective = e.collective.map(|c| u64::from(c.0));
            info.step = e.step.map(|s| u64::from(s.0));
            info.accepted = said;
            // A limit's advice in `help`, as `sign` gives it (the message
            // ends with it too, as the CLI prints it).
            if let LowerErrorKind::Limit { limit, arch, .. } = e.kind {
                info.help = Some(limit.advice(arch));
            }
            info
        }
        CompileError::Image(e) => {
            let mut info = ErrorInfo::new(ErrorClass::Image, variant(&e.source), message);
            info.rank = Some(u64::from(e.rank.0));
            info.topsp = Some(u64::from(e.topsp.0));
            info.accepted = said;
            info
        }
        CompileError::Verify(VerifyError::Defects(defects)) => {
            // The first defect locates the failure; the message counts the rest.
            let d = &defects.first;
            let mut info = ErrorInfo::new(ErrorClass::Proof, variant(&d.kind), message);
            info.collective = Some(u64::from(d.collective.0));
            info.rank = d.rank.map(|r| u64::from(r.0));
            info.topsp = d.topsp.map(|t| u64::from(t.0));
            info.record = d.record.map(u64::from);
            info.step = d.step.map(|s| u64::from(s.0));
            info
        }
        CompileError::Verify(e @ VerifyError::TooLarge { collective, provable, .. }) => {
            let mut info = ErrorInfo::new(ErrorClass::ProofTooLarge, variant(e), message);
            info.collective = Some(u64::from(*collective));
            let write = provable.as_ref().map_or_else(String::new, |a| format!("{a} as its algorithm, "));
            info.accepted = Some(format!("{write}a smaller world, or verify=False with the ranks you need"));
            info
        }
        CompileError::Memory(m) => {
            let ways = m.ways_out();
            let mut info = ErrorInfo::new(ErrorClass::Memory, "Memory", m.to_string());
            info.accepted = Some(ways.iter().map(|w| w.describe()).collect::<Vec<_>>().join("; "));
            // The ways out this compile has, as the call's arguments say
            // them (`verify=False` only where skipping the proof would
            // fit; ranks already named are not asked for again).
            let named = m.ranks < u64::from(m.rank_n);
            let help: Vec<&str> = ways
                .iter()
                .map(|w| match w {
                    WayOut::EmitFewerRanks => "compile fewer ranks (ranks=[...])",
                    WayOut::SkipProof if named => "verify=False",
                    WayOut::SkipProof => "ranks=[...] with verify=False",
                    WayOut::FewerRanks => "a world of fewer ranks",
                    WayOut::Certificate if named => "proven_by=<an earlier verified compile of this spec>",
                    WayOut::Certificate => "ranks=[...] with proven_by=<an earlier verified compile of this spec>",
                })
                .collect();
            // Never empty: a smaller world is always a way out.
            info.help = Some(format!("{}, or raise memory_budget", help.join(", ")));
            info
        }
        // Set only when the caller was interrupted, which is what it
        // raises (`interruptible`): not seen by a user unless a defect.
        CompileError::Unlowered(u) => {
            // As `refuse_unlowerable` names it: at the rank (for the mesh
            // events) and collective, the limit's advice in `help`.
            let x = u.exceeded;
            let mut info = ErrorInfo::new(ErrorClass::Lower, "Limit", message);
            info.rank = x.rank.map(u64::from);
            info.collective = Some(u64::from(x.collective));
            info.help = Some(x.refusal.limit.advice(u.arch));
            info
        }
        CompileError::Cancelled => ErrorInfo::new(ErrorClass::Internal, "Cancelled", message),
        CompileError::Certificate(c) => {
            let mut info = ErrorInfo::new(ErrorClass::Certificate, variant(c), message);
            if let CertificateError::ProofMismatch { field, expected, .. } = c {
                info.field = Some(field.clone());
                info.accepted = Some(expected.clone());
            }
            // What to do, as the CLI's `--proven-by` says it, in the
            // call's terms.
            info.help = Some(
                match c {
                    CertificateError::NotProven => {
                        "its compile ran with verify=False; a compile without it makes a manifest that certifies"
                    }
                    CertificateError::OtherSchedule { .. } => {
                        "ccc.diagnose([spec, proven_by]) says why the two schedules differ"
                    }
                    CertificateError::Schema { .. } | CertificateError::FormatVersion { .. } => {
                        "a certificate is the manifest of a verified compile by this ccc: compile once without \
                         proven_by to make one"
                    }
                    CertificateError::Corrupt { .. } | CertificateError::ProofMismatch { .. } => {
                        "the manifest is not as ccc wrote it: use the manifest of a verified compile, unedited"
                    }
                }
                .to_owned(),
            );
            info
        }
    }
}

/// One TOP_SP's images, borrowed from a [`Compiled`].
pub struct Image<'a> {
    /// The rank.
    pub rank: u32,
    /// The TOP_SP.
    pub topsp: u8,
    /// `ctrl_spad.bin`.
    pub ctrl_spad: &'a [u8],
    /// `slot_spad.bin`.
    pub slot_spad: &'a [u8],
    /// `neff_configs.bin`.
    pub neff_configs: &'a [u8],
    /// Records in the chain.
    pub record_n: u32,
}

/// Every emitted image, by rank then TOP_SP, ascending.
pub fn images(compiled: &Compiled) -> impl Iterator<Item = Image<'_>> {
    compiled.images.iter().flat_map(|rank| {
        rank.topsps.iter().map(move |t| Image {
            rank: rank.rank.0,
            topsp: t.topsp.0,
            ctrl_spad: &t.ctrl_spad,
            slot_spad: &t.slot_spad,
            neff_configs: &t.neff_configs[..],
            record_n: t.record_n,
        })
    })
}

/// The signature's digest and its fields (name, value) in preimage order.
pub fn signature(compiled: &Compiled) -> (String, Vec<(String, String)>) {
    let s = &compiled.signature;
    (s.digest.clone(), s.fields.iter().map(|f| (f.name.clone(), f.value.clone())).collect())
}

/// The proof's summary as JSON (`null` when the proof was skipped): what
/// was proven per collective, the protocol's figures, and the times.
pub fn proof_json(compiled: &Compiled) -> serde_json::Value {
    let Some(p) = &compiled.proof else { return serde_json::Value::Null };
    serde_json::json!({
        "certified": p.certified,
        "postconditions": p.postcondition,
        "protocol": p.protocol,
        "symmetric_groups": p.symmetric_groups,
        "symmetric_by_phase": p.symmetric_by_phase,
        "images_checked": p.images_checked,
        "lowering_seconds": p.lowering_time.as_secs_f64(),
        "postcondition_seconds": p.postcondition_time.as_secs_f64(),
        "protocol_seconds": p.protocol_time.as_secs_f64(),
        "roundtrip_seconds": p.roundtrip_time.as_secs_f64(),
    })
}

/// Where a certificate's JSON came from (what its errors name).
#[derive(Clone, Copy)]
pub enum CertificateFrom<'a> {
    /// A dict, dumped by the binding: a line and column in that text
    /// point at nothing the caller wrote.
    Dict,
    /// Text the caller passed.
    Text,
    /// A file the caller named.
    File(&'a Path),
}

/// What `proven_by` accepts, as an error's `accepted` says it.
const CERTIFICATE_ACCEPTED: &str = "the manifest of an earlier verified compile of this spec: a ccc.Compiled, its \
                                    manifest (dict or JSON text), or an os.PathLike naming its manifest.json or \
                                    output folder";

/// An [`ErrorClass::Input`] error about `proven_by`.
fn certificate_input(kind: &str, message: String) -> Failure {
    let mut info = ErrorInfo::new(ErrorClass::Input, kind, message);
    info.field = Some("proven_by".to_owned());
    info.accepted = Some(CERTIFICATE_ACCEPTED.to_owned());
    info
}

/// A certificate (`compile`'s `proven_by`) from a manifest's JSON text.
///
/// # Errors
///
/// [`ErrorClass::Input`] of kind `NotAManifest` naming what does not read
/// (and, from text or a file, where).
pub fn certificate_json(json: &str, from: CertificateFrom<'_>) -> Result<Manifest, Failure> {
    serde_json::from_str(json).map_err(|e| {
        let said = e.to_string();
        let said = match from {
            CertificateFrom::Dict => said.split(" at line ").next().unwrap_or_default().to_owned(),
            _ => said,
        };
        let what = if e.is_syntax() || e.is_eof() { "is not JSON" } else { "is not a ccc manifest" };
        let which = match from {
            CertificateFrom::File(file) => format!("proven_by {}", file.display()),
            _ => "proven_by".to_owned(),
        };
        certificate_input("NotAManifest", format!("{which} {what}: {said}"))
    })
}

/// The refusal of a manifest dict given as `proven_by` holding, at
/// `path`, a value JSON cannot carry (`why`): of the kind
/// [`certificate_json`] gives a dict that does not read.
pub fn certificate_unheld(path: &str, why: &str) -> Failure {
    let at = if path.is_empty() { String::new() } else { format!("{path}: ") };
    certificate_input("NotAManifest", format!("proven_by is not a ccc manifest: {at}{why}"))
}

/// A certificate read from the `manifest.json` `path` names (itself, or
/// in the output folder it names), at most the manifest cap `ccc
/// diagnose` reads.
///
/// # Errors
///
/// [`ErrorClass::Input`] of kind `Io`, `TooLarge`, `NotUtf8` or
/// `NotAManifest`, naming the file.
pub fn read_certificate(path: &Path) -> Result<Manifest, Failure> {
    let file = if path.is_dir() { path.join("manifest.json") } else { path.to_path_buf() };
    let cap = ccc_compiler::diagnose::MANIFEST_MAX_BYTES;
    let text = read_capped(&file, cap, "a manifest", "proven_by: ", certificate_input)?;
    certificate_json(&text, CertificateFrom::File(&file))
}

/// A certificate from a compile this process made.
pub fn certificate_of(compiled: &Compiled) -> Manifest {
    Manifest::of(compiled)
}

/// The manifest a write of `compiled` puts in `manifest.json`, that very text.
///
/// # Errors
///
/// [`ErrorClass::Internal`] if serde_json refuses a value (none in practice).
pub fn manifest_json(compiled: &Compiled) -> Result<String, Failure> {
    Manifest::of(compiled)
        .to_json()
        .map_err(|e| ErrorInfo::new(ErrorClass::Internal, "Json", format!("cannot write the manifest: {e}")))
}

/// Writes `compiled` into `out` the way `ccc compile -o OUT` does (never
/// losing a file it did not write).
///
/// # Errors
///
/// [`ErrorClass::Output`]: a folder that is not ccc's to replace, a file in
/// the way, or a file-system failure.
pub fn write(out: &Path, compiled: &Compiled, cancel: Option<&Cancel>) -> Result<Written, Failure> {
    output::write_cancellable(out, compiled, cancel).map_err(|e| {
        let mut info = ErrorInfo::new(ErrorClass::Output, variant(&e), e.to_string());
        match &e {
            OutputError::InTheWay { entry, .. } => {
                info.field = Some(entry.display().to_string());
                info.help = Some(
                    "ccc never overwrites a file it did not write: move that file elsewhere, or write to another \
                     folder"
                        .to_owned(),
                );
            }
            OutputError::Io { action: "resolve", path, .. } => {
                info.field = Some(path.display().to_string());
                info.help = Some(if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
                    format!(
                        "{} is a symbolic link to nothing (or to a loop of links): create the folder it points \
                         to, or write to another folder",
                        path.display()
                    )
                } else {
                    "a folder on the way to it does not exist (or a link on the way leads nowhere): check the path"
                        .to_owned()
                });
            }
            OutputError::Io { action, path, source } => {
                info.field = Some(path.display().to_string());
                // As `ccc compile -o` says it, in the binding's words.
                let help = match *action {
                    "create"
                        if source.kind() == std::io::ErrorKind::AlreadyExists
                            && std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_dir()) =>
                    {
                        "a file stands where a folder on the way to it must be: nothing was written; write to \
                         another folder"
                    }
                    "carry over" => &output::carry_over_help(path, source),
                    "read" if source.kind() == std::io::ErrorKind::PermissionDenied => {
                        "ccc lists the folder holding the output folder (to clear what killed compiles left there, \
                         `.NAME.ccc-tmp-PID`) and the output folder itself, so this user must be able to read \
                         both: nothing was written; make it readable, or write to another folder"
                    }
                    _ if source.kind() == std::io::ErrorKind::ResourceBusy => {
                        "the folder is a mount point (or in use as one), which ccc cannot switch with the new \
                         folder it writes beside it: nothing was written; write into a folder inside it"
                    }
                    _ => "nothing was written; the folder is as it was",
                };
                info.help = Some(help.to_owned());
            }
            // Only set by Ctrl-C, whose `KeyboardInterrupt` is raised
            // instead (`interruptible`).
            OutputError::Cancelled { .. } => {}
            OutputError::MountInside { entry, .. } => {
                info.field = Some(entry.display().to_string());
                info.help = Some(
                    "nothing was written; unmount it (or mount it outside the folder), or write to another folder"
                        .to_owned(),
                );
            }
            OutputError::WorkFolderTaken { work, .. } => {
                info.field = Some(work.display().to_string());
                info.help = Some("nothing was written; move what takes that name away, then write again".to_owned());
            }
            OutputError::NotOurs { reason, .. } => {
                info.help = Some(
                    match reason {
                        NotOurs::NotAFolder => {
                            "write names a folder to write (it need not exist yet); pass a path that is not a file"
                        }
                        NotOurs::Root => {
                            "ccc writes a new folder beside the old one and switches them; pass a folder below the \
                             root"
                        }
                        NotOurs::HoldsCurrentFolder => {
                            "the process runs in that folder or below it (os.getcwd()): os.chdir out of it first"
                        }
                        NotOurs::MountPoint => "nothing was written; write into a folder inside it",
                        NotOurs::Replaced => {
                            "nothing was written, and what stands there now was left as it was found; write again \
                             once nothing else moves that folder"
                        }
                        _ => {
                            "ccc replaces only a folder it wrote itself (its manifest.json and every file that \
                             lists, unchanged); write to another folder, or move that folder's contents elsewhere"
                        }
                    }
                    .to_owned(),
                )
            }
            OutputError::NameTooLong { max, .. } => {
                info.accepted = Some(format!("a folder name of at most {max} bytes"))
            }
        }
        info
    })
}

/// An input to [`diagnose`].
pub enum DiagnoseInput<'a> {
    /// A spec: its signature, and its images' digest when it is small.
    Spec(&'a Spec),
    /// The text of a `manifest.json`.
    ManifestJson(&'a str),
    /// A manifest given as a dict, as JSON text the binding wrote (an
    /// error names no line or column in it).
    ManifestDict(&'a str),
    /// A compile's result (its manifest).
    Compiled(&'a Compiled),
    /// A `ccc compile -o` output folder (its manifest, and its images when
    /// they are the ones it lists).
    Folder(&'a Path),
}

/// Compares the inputs' signatures; the report as JSON, exactly what
/// `ccc diagnose --json` prints.
///
/// # Errors
///
/// The input that cannot be read: a spec's validation or build error, or
/// [`ErrorClass::Input`] for text that is not a manifest.
pub fn diagnose(inputs: &[(String, DiagnoseInput<'_>)]) -> Result<String, Vec<(usize, Failure)>> {
    let mut read = Vec::with_capacity(inputs.len());
    let mut refused = Vec::new();
    for (i, (name, input)) in inputs.iter().enumerate() {
        match diagnose_input(name, input) {
            Ok(input) => read.push(input),
            Err(e) => refused.push((i, e)),
        }
    }
    if !refused.is_empty() {
        return Err(refused);
    }
    let report = diagnose_inputs(&read);
    let hlo = modules_report(inputs).map(|r| r.json());
    serde_json::to_string(&ccc_compiler::diagnose::WithHlo { report: &report, hlo })
        .map_err(|e| vec![(0, ErrorInfo::new(ErrorClass::Internal, "Json", format!("cannot write the report: {e}")))])
}

/// When every input is a program `import_hlo` made (two or more), their
/// modules' collectives compared instruction by instruction, as `ccc
/// diagnose MODULE.hlo ... --target T` compares them
/// (`hlo::compare::compare_modules`); `None` otherwise, or when their
/// collectives agree.
fn modules_report(inputs: &[(String, DiagnoseInput<'_>)]) -> Option<ccc_compiler::hlo::compare::ModulesReport> {
    let mut modules = Vec::with_capacity(inputs.len());
    let mut lowered = Vec::with_capacity(inputs.len());
    for (_, input) in inputs {
        let DiagnoseInput::Spec(spec) = input else { return None };
        let is_lowered = spec.lowered.filter(|_| spec.sources.len() == spec.program.collectives.len())?;
        modules.push(Imported {
            module: None,
            program: spec.program.clone(),
            sources: spec.sources.clone(),
            moved_nothing: Vec::new(),
            transfers: Vec::new(),
            assumed_devices: None,
        });
        lowered.push(is_lowered);
    }
    let names: Vec<String> = inputs.iter().map(|(name, _)| name.clone()).collect();
    (modules.len() >= 2).then(|| ccc_compiler::hlo::compare::compare_modules(&names, &modules, &lowered)).flatten()
}

/// One `diagnose` input read ([`diagnose`]).
fn diagnose_input(name: &str, input: &DiagnoseInput<'_>) -> Result<Input, Failure> {
    Ok(match input {
        DiagnoseInput::Spec(spec) => spec_input(name, spec)?,
        DiagnoseInput::ManifestJson(json) => Input::from_manifest_json(name.to_owned(), json).map_err(input_error)?,
        // The JSON is ccc's own text of the caller's dict: a line and
        // column in it point at nothing the caller wrote.
        DiagnoseInput::ManifestDict(json) => Input::from_manifest_json(name.to_owned(), json).map_err(|e| {
            let mut info = match e {
                InputError::NotAManifest { name, message, .. } => {
                    let mut info = input_error(InputError::NotAManifest { name, message, line: 0, column: 0 });
                    info.message = info.message.split(" (at line ").next().unwrap_or_default().to_owned();
                    info
                }
                e => input_error(e),
            };
            (info.line, info.column) = (None, None);
            info
        })?,
        DiagnoseInput::Compiled(c) => {
            // Its images are at hand: compared by them, as a spec's are.
            let input = Input::from_manifest(name.to_owned(), &Manifest::of(c)).map_err(input_error)?;
            Input { images: images_digest(&c.images, c.schedule.shape.rank_n), ..input }
        }
        DiagnoseInput::Folder(dir) => {
            let read = output::read_output(dir).map_err(read_error)?;
            let input = Input::from_manifest_json(name.to_owned(), &read.manifest).map_err(input_error)?;
            Input { images: read.images, edited: read.edited, ..input }
        }
    })
}

/// A spec's input, as `ccc diagnose` makes it (`compiler/src/bin/ccc/diagnose.rs`).
fn spec_input(name: &str, spec: &Spec) -> Result<Input, Failure> {
    let valid = validate(&spec.program).map_err(|e| validation_error(&e, spec))?;
    let schedule = build(&valid).map_err(|e| build_error(&e))?;
    // No rank could load a program lowering refuses: no signature to
    // compare.
    refuse_unlowerable(&valid, &schedule)?;
    let signature = sign_schedule(&valid, &schedule);
    let images = (schedule.shape.rank_n <= IMAGES_RANK_CAP)
        .then(|| run(&valid, &Options { verify: false, ..Options::default() }).ok())
        .flatten()
        .and_then(|c| images_digest(&c.images, c.schedule.shape.rank_n));
    let unsigned = Unsigned::of(&spec.program, &valid);
    Ok(Input { images, unsigned, ..Input::from_signature(name, &signature) })
}

/// A `diagnose` input file's text (`path`, not a folder): at most a
/// spec's cap for a `.ron` file, a manifest's for any other.
///
/// # Errors
///
/// `InputError` of kind `Io` (with the OS's reason), `TooLarge` or
/// `NotUtf8`.
pub fn read_input_file(path: &Path) -> Result<String, Failure> {
    let ron = path.extension().is_some_and(|e| e == "ron");
    let (cap, what) = match ron {
        true => (ccc_compiler::parse::SPEC_MAX_BYTES, "a spec"),
        false => (ccc_compiler::diagnose::MANIFEST_MAX_BYTES, "a manifest"),
    };
    read_capped(path, cap, what, "", |kind, message| {
        let mut info = ErrorInfo::new(ErrorClass::Input, kind, message);
        info.accepted = Some("a spec (.ron), a manifest.json, or a `ccc compile -o` output folder".to_owned());
        info
    })
}

/// The UTF-8 text of `path`, at most `cap` bytes (`what` it is, as a
/// refusal names it), each refusal of kind `Io`, `TooLarge` or `NotUtf8`
/// made by `failure` from its message (which starts with `said`).
fn read_capped(
    path: &Path,
    cap: u64,
    what: &str,
    said: &str,
    failure: impl Fn(&str, String) -> Failure,
) -> Result<String, Failure> {
    let io = |e: std::io::Error| failure("Io", format!("{said}cannot read {}: {e}", path.display()));
    // A FIFO (or a device) would block the open, or the read, where a
    // Ctrl-C cannot reach it: refused, as it is no file the binding reads.
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() && !meta.is_dir() {
        let message = format!("{said}{} is not a regular file (a FIFO, socket or device)", path.display());
        return Err(failure("Io", message));
    }
    let mut data = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| std::io::Read::read_to_end(&mut std::io::Read::take(f, cap + 1), &mut data))
        .map_err(io)?;
    if data.len() as u64 > cap {
        let message = format!("{said}{} is more than the {cap} bytes ccc reads of {what}", path.display());
        return Err(failure("TooLarge", message));
    }
    String::from_utf8(data).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let message = format!("{said}{} is not UTF-8: the byte at offset {at} is not valid UTF-8", path.display());
        failure("NotUtf8", message)
    })
}

/// A failure to read an output folder given to `diagnose`.
fn read_error(e: output::ReadError) -> Failure {
    let mut info = ErrorInfo::new(ErrorClass::Input, variant(&e), e.to_string());
    info.accepted = Some("a `ccc compile -o` output folder (it holds manifest.json)".to_owned());
    info
}

fn input_error(e: InputError) -> Failure {
    let mut info = ErrorInfo::new(ErrorClass::Input, variant(&e), e.to_string());
    match e {
        InputError::NotAManifest { line, column, .. } => {
            info.line = Some(line as u64);
            info.column = Some(column as u64);
            info.accepted = Some("a manifest.json written by `ccc compile` (or Compiled.manifest)".to_owned());
        }
        InputError::DigestMismatch { computed, .. } => info.accepted = Some(computed),
        InputError::FormatVersionMismatch { field, .. } => info.accepted = Some(field),
        InputError::EditedFields { index, .. } => {
            info.field = Some(format!("signature_fields[{index}]"));
            info.accepted = Some("the signature fields `ccc compile` writes (docs/signature.md)".to_owned());
        }
    }
    info
}

/// An image region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// `ctrl_spad.bin`: 8-byte words.
    Ctrl,
    /// `slot_spad.bin`: the tail-pointer schedule.
    Slot,
    /// `neff_configs.bin`: the 3592-byte EXEC config.
    Neff,
}

impl Region {
    /// The names `decode` accepts, as the accepted-values text says them.
    pub const ACCEPTED: &'static str = "ctrl, slot or neff (or ctrl_spad, slot_spad, neff_configs)";

    /// The region of a name: `ctrl`, `slot`, `neff` (`ccc decode --region`),
    /// or the image's file stem.
    pub fn of(name: &str) -> Option<Region> {
        match name {
            "ctrl" | "ctrl_spad" => Some(Region::Ctrl),
            "slot" | "slot_spad" => Some(Region::Slot),
            "neff" | "neff_configs" => Some(Region::Neff),
            _ => None,
        }
    }
}

/// Decodes an image of `region` into the JSON `ccc decode --format json`
/// prints for it.
///
/// # Errors
///
/// [`ErrorClass::Decode`] with the byte offset and what was wrong there.
pub fn decode(data: &[u8], region: Region) -> Result<String, Failure> {
    // An empty CTRL image is a TOP_SP no collective has work on (ccc
    // emits one): no chain, as `ccc decode` says. The other regions always
    // have a header.
    if data.is_empty() && !matches!(region, Region::Ctrl) {
        return Err(ErrorInfo::new(ErrorClass::Decode, "Empty", "empty image (0 bytes)"));
    }
    // The CLI's caps: no image ccc emits is larger than its region on the
    // arch where it is largest.
    let (ctrl, slot) = ccc_ir::arch::Arch::largest_spads();
    let cap = match region {
        Region::Ctrl => u64::from(ctrl),
        Region::Slot => u64::from(slot),
        Region::Neff => ccc_ir::wire::neff_configs::NEFF_CONFIGS_BYTES as u64,
    };
    if data.len() as u64 > cap {
        let mut info = ErrorInfo::new(
            ErrorClass::Decode,
            "TooLarge",
            format!("image is {} bytes, more than the {cap} of its region on any arch", data.len()),
        );
        info.accepted = Some(format!("at most {cap} bytes"));
        return Err(info);
    }
    // What the region's image is, as `ccc decode`'s help says it.
    let shape = match region {
        Region::Ctrl => ctrl_word::IMAGE_SHAPE,
        Region::Slot => ccc_ir::wire::slot_spad::IMAGE_SHAPE,
        Region::Neff => ccc_ir::wire::neff_configs::IMAGE_SHAPE,
    };
    let refused = |e: DecodeError| {
        let mut info = decode_error(&e);
        info.help = Some(format!("{shape}; see docs/wire-format.md"));
        info
    };
    let json = match region {
        Region::Ctrl => ccc_backends::json::ctrl(&ctrl_word::decode_words(data).map_err(refused)?),
        Region::Slot => ccc_backends::json::slot(&SlotSpad::decode(data).map_err(refused)?),
        Region::Neff => ccc_backends::json::neff(&NeffConfigs::decode(data).map_err(refused)?),
    };
    json.map_err(|e| ErrorInfo::new(ErrorClass::Internal, "Json", e.to_string()))
}

fn decode_error(e: &DecodeError) -> Failure {
    let message = e.kind.to_string();
    let mut info =
        ErrorInfo::new(ErrorClass::Decode, variant(&e.kind), format!("{message} (at offset {:#x})", e.offset));
    info.offset = Some(e.offset);
    if let ccc_ir::wire::DecodeErrorKind::BadValue { field, expected, .. } = &e.kind {
        info.field = Some((*field).to_owned());
        info.accepted = Some(expected.to_string());
    }
    if let ccc_ir::wire::DecodeErrorKind::BadLength { expected, .. } = &e.kind {
        info.accepted = Some(expected.to_string());
    }
    // Reserved bits are zero; a word is one of the four kinds.
    if let ccc_ir::wire::DecodeErrorKind::ReservedBits { field, value, mask } = &e.kind {
        info.field = Some((*field).to_owned());
        info.accepted = Some(format!("{:#04x}: the reserved bits {mask:#04x} clear", value & !mask));
    }
    if let ccc_ir::wire::DecodeErrorKind::UnknownWord { .. } = &e.kind {
        info.accepted = Some("an op entry, an END mark, a CONTINUE mark or an empty word".to_owned());
    }
    info
}

/// Whether the compile ran the proof (or took it from a certificate).
pub fn proven(compiled: &Compiled) -> bool {
    compiled.proof.is_some()
}

/// The wire format version written into manifests and signatures.
pub const FORMAT_VERSION: u32 = ccc_ir::FORMAT_VERSION;

/// Each collective of a spec as JSON of its serde form.
///
/// # Errors
///
/// As [`to_json`].
pub fn collectives_json(spec: &Spec) -> Result<Vec<String>, Failure> {
    spec.program
        .collectives
        .iter()
        .map(|c| {
            to_json(&Spec { program: c.clone().into(), form: SpecForm::Collective, sources: Vec::new(), lowered: None })
        })
        .collect()
}

/// Each collective's op, by its RON name.
pub fn ops(spec: &Spec) -> Vec<String> {
    spec.program.collectives.iter().map(|c| c.op.to_string()).collect()
}

/// Whether two specs hold the same collectives (in whichever form
/// written): field by field, a field written with its default value
/// (`barrier: Host`, `send_credits: 2`, an empty `model: ()`) the same as
/// one left out ([`defaults_left_out`]).
pub fn same_collectives(a: &Spec, b: &Spec) -> bool {
    let (a, b) = (&a.program.collectives, &b.program.collectives);
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| defaults_left_out(x) == defaults_left_out(y))
}

/// `c` with every field that holds its default value left out, as
/// equality compares and hashing hashes it: `barrier: Host`,
/// `send_credits: 2` and an empty `model: ()` say what leaving them out
/// says.
fn defaults_left_out(c: &ccc_ir::spec::Collective) -> ccc_ir::spec::Collective {
    let mut c = c.clone();
    if c.barrier == Some(ccc_ir::spec::Barrier::default()) {
        c.barrier = None;
    }
    if c.send_credits == Some(u32::from(ccc_compiler::valid::DEFAULT_SEND_CREDITS)) {
        c.send_credits = None;
    }
    if c.model == Some(ccc_ir::model::ModelOverrides::default()) {
        c.model = None;
    }
    c
}

/// Each collective of a spec as JSON of its serde form, its fields of
/// default value left out ([`defaults_left_out`]): what equal programs
/// share, to hash.
///
/// # Errors
///
/// As [`to_json`].
pub fn collectives_hashed(spec: &Spec) -> Result<Vec<String>, Failure> {
    spec.program
        .collectives
        .iter()
        .map(|c| {
            let one = defaults_left_out(c).into();
            to_json(&Spec { program: one, form: SpecForm::Collective, sources: Vec::new(), lowered: None })
        })
        .collect()
}

/// The number of collectives.
pub fn collective_n(spec: &Spec) -> usize {
    spec.program.collectives.len()
}
