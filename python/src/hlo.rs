//! The adapter's HLO half, without PyO3: an XLA HLO module imported for a
//! target (`ccc_compiler::hlo`), as the CLI's `--target` and `--algorithm`
//! read them. `import_hlo` in `lib.rs` hands its result to Python.

use crate::adapter::{ErrorClass, ErrorInfo, Failure, Spec};
use crate::strict::Strict;
use ccc_compiler::hlo::target::{TargetError, parse_algorithm};
use ccc_compiler::hlo::{HloError, Target, import_module, parse_target};
use ccc_compiler::parse::SpecForm;

/// A target as the caller gave it.
pub enum TargetText<'a> {
    /// RON text, as a target file holds it.
    Ron(&'a str),
    /// JSON of the target's serde form (a Python dict, dumped).
    Json(&'a str),
}

/// Imports the collectives of the HLO module `text` for `target`;
/// `algorithm` (as a spec writes it: `Ring`, `Hier((...))`, `Auto`)
/// overrides the target's choice for every collective, as `--algorithm`
/// does. The program is in the `Program(collectives: [...])` form.
///
/// # Errors
///
/// [`ErrorClass::Parse`]: kind `Target` for a target that is not of the
/// schema (line and column in its RON, or the field path in its dict),
/// `Algorithm` for an algorithm that is not one, `Hlo` for a module ccc
/// cannot import (line and column in the module; `help` says what would
/// be accepted).
pub fn import_hlo(
    text: &str,
    target: &TargetText<'_>,
    algorithm: Option<&str>,
) -> Result<(Spec, Vec<String>), Failure> {
    crate::adapter::too_large(text, "HLO module", ccc_compiler::hlo::MODULE_MAX_BYTES)?;
    let target = read_target(target)?;
    let algorithm =
        algorithm.map(|a| parse_algorithm(a).map_err(|e| located(&e, "Algorithm", "algorithm"))).transpose()?;
    // Without a leading byte-order mark, as the CLI reads a file: it is
    // not a column.
    let text = ccc_compiler::parse::strip_bom(text);
    let imported = import_module(text, &target, algorithm.as_ref()).map_err(|e| hlo_error(&e))?;
    let notes = imported.notes();
    let lowered = Some(ccc_compiler::hlo::compare::is_lowered(text));
    Ok((Spec { program: imported.program, form: SpecForm::Program, sources: imported.sources, lowered }, notes))
}

fn read_target(target: &TargetText<'_>) -> Result<Target, Failure> {
    let target = parse_either(target)?;
    target.validate().map_err(|errors| {
        // Every problem in the message; the first one's field and what it
        // would accept.
        let message = errors.0.iter().map(|e| format!("target.{e}")).collect::<Vec<_>>().join("; ");
        let mut info = ErrorInfo::new(ErrorClass::Parse, "Target", message);
        if let Some(first) = errors.0.first() {
            info.field = Some(format!("target.{}", first.field));
            info.accepted = first.accepted();
        }
        info
    })?;
    Ok(target)
}

/// The target, parsed from its RON or its dict's JSON.
fn parse_either(target: &TargetText<'_>) -> Result<Target, Failure> {
    match target {
        TargetText::Ron(text) => parse_target(text).map_err(|e| located(&e, "Target", "target")),
        TargetText::Json(json) => {
            let value: serde_json::Value = serde_json::from_str(json).map_err(|e| {
                ErrorInfo::new(ErrorClass::Parse, "Target", format!("target: not a target's dict: {e}"))
            })?;
            let target = serde_path_to_error::deserialize::<_, Target>(Strict(value)).map_err(|e| {
                let path = e.path().to_string();
                let inner = e.inner().to_string();
                // serde_json's "at line L column C" is of the dumped dict, not the user's text.
                let message = inner.split(" at line ").next().unwrap_or(&inner).to_owned();
                let (accepted, help) = crate::adapter::integer_said(&message, &path);
                let message = crate::adapter::with_hier_form(message);
                // A map key that does not read (`devices: {-1: 0}`): the
                // dict's int key crossed as JSON's string, so serde says
                // "string"; say what the user wrote, a key.
                let key = message.strip_prefix("invalid type: string ").and_then(|m| m.split(", expected").next());
                let message = match key {
                    Some(k) if path.ends_with(".?") => {
                        // An int key (`-1`) bare, a text one (`"00"`) quoted.
                        let bare = k.trim_matches('"');
                        let int = bare.parse::<i128>().is_ok_and(|n| n.to_string() == bare);
                        format!("key {} is not a device id (a whole number, not negative)", if int { bare } else { k })
                    }
                    _ => message,
                };
                // A map's key that does not read is `?` in the path: the
                // map is the field (the message names the key).
                let path = path.strip_suffix(".?").unwrap_or(&path);
                let field = if path == "." { "target".to_owned() } else { format!("target.{path}") };
                // A missing field's path is where it belongs.
                let field = match message.strip_prefix("missing field `").and_then(|m| m.split('`').next()) {
                    Some(missing) => format!("{field}.{missing}"),
                    None => field,
                };
                let mut info = ErrorInfo::new(
                    ErrorClass::Parse,
                    "Target",
                    format!("{field}: {message}; a target reads {{\"arch\": \"Cayman\", \"topology\": {{\"rank_n\": 32, \"local_rank_n\": 16}}}} with optional channels, algorithm, algorithms, devices, barrier, send_credits, model"),
                );
                info.field = Some(field);
                info.accepted = accepted;
                info.help = help;
                info
            })?;
            target.check_devices().map_err(|why| {
                let mut info = ErrorInfo::new(ErrorClass::Parse, "Target", format!("target.devices: {why}"));
                info.field = Some("target.devices".to_owned());
                info.accepted = Some(Target::DEVICES_ACCEPTED.to_owned());
                info
            })?;
            Ok(target)
        }
    }
}

/// A target or algorithm error at its line and column, with its field
/// under `field` (`target.channels`), what is accepted there and how to
/// fix it, as the CLI says them.
fn located(e: &TargetError, kind: &str, field: &str) -> Failure {
    let path = e.field.as_deref().map_or_else(|| field.to_owned(), |f| format!("{field}.{f}"));
    let mut info = ErrorInfo::new(ErrorClass::Parse, kind, format!("{path}: {}", e.message));
    info.field = Some(path);
    info.line = Some(e.start.line as u64);
    info.column = Some(e.start.col as u64);
    info.end_line = Some(e.end.line as u64);
    info.end_column = Some(e.end.col as u64);
    info.accepted = e.accepted.as_deref().map(str::to_owned);
    info.help = e.help.as_deref().map(str::to_owned);
    info
}

/// An HLO error at its line and column in the module.
fn hlo_error(e: &HloError) -> Failure {
    let mut info = ErrorInfo::new(ErrorClass::Parse, "Hlo", e.message.clone());
    info.line = Some(e.start.line as u64);
    info.column = Some(e.start.col as u64);
    info.help = Some(e.help.clone());
    // The help often reads `accepted: ...` already: not twice.
    info.accepted = Some(e.help.strip_prefix("accepted: ").unwrap_or(&e.help).to_owned());
    info
}
