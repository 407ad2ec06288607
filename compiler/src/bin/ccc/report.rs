//! Rendering of library errors as miette reports.
//!
//! A parse error has a position, so it is shown as a snippet of the file
//! with the offending token marked (`file:line:col` in the header). A
//! validation error has none — RON keeps no positions after parsing — so
//! each problem is printed as `path: message`, the path written the way the
//! file is (`collectives[2].groups[1][3]` in a program).
//!
//! A report stays small whatever the file: the snippet holds only the lines
//! around the error, each cut to a window of [`SNIPPET_LINE_MAX_CHARS`]
//! around the token, and keeps the file's own line and column numbers.

use ccc_compiler::parse::{ParseError, SpecForm};
use ccc_compiler::validate::{ValidationError, ValidationErrors};
use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents, SourceCode,
    SourceSpan, SpanContents,
};
use std::borrow::Cow;
use std::fmt::Display;
use std::io::IsTerminal;

/// The width reports are wrapped to when the output is not a terminal.
const PLAIN_WIDTH: usize = 100;

/// The most chars of a source line a snippet shows; a longer line is cut to
/// a window around the error, `…` marking what was left out.
const SNIPPET_LINE_MAX_CHARS: usize = 160;

/// How many chars before the error a cut line keeps.
const SNIPPET_LEAD_CHARS: usize = 40;

/// The most lines a snippet shows of a span that covers several.
const SNIPPET_SPAN_LINES: usize = 8;

/// The most validation problems a report lists.
const MAX_LISTED: usize = 50;

/// Installs the miette handler used for every report. When stderr is not a
/// terminal or `NO_COLOR` is set, reports render deterministically: no
/// colour, no hyperlinks, wrapped at 100 columns (so snapshots and logs do
/// not depend on the terminal).
pub fn install_handler() {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let plain = no_color || !std::io::stderr().is_terminal();
    // Installing twice only fails; the first handler stays, which is fine.
    let _ = miette::set_hook(Box::new(move |_| {
        if plain {
            Box::new(
                GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
                    .with_width(PLAIN_WIDTH)
                    .with_links(false),
            )
        } else {
            Box::new(miette::MietteHandlerOpts::new().build())
        }
    }));
}

/// Prints `report` on stderr as the installed handler renders it, unless
/// it holds a control character (a path or name quoted from the input: an
/// ESC `]` in a file name sets the terminal's title): then plainly, each
/// such character escaped ([`escape_controls`]), colour given up.
pub fn print(report: &miette::Report) {
    use std::io::Write as _;
    let mut plain = String::new();
    let handler =
        GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor()).with_width(PLAIN_WIDTH).with_links(false);
    // Rendered plainly first: only a rendering that holds one is printed so.
    let shown = match handler.render_report(&mut plain, report.as_ref()).map(|()| escaped(&plain, braced)) {
        Ok(Cow::Owned(escaped)) => escaped,
        _ => format!("{report:?}"),
    };
    let _ = writeln!(std::io::stderr(), "{shown}");
}

// The Diagnostic impls are written out: the root package's miette has no
// `derive` feature, and three small impls do not justify one.

/// A parse error, with the file's text to show the snippet.
#[derive(Debug, thiserror::Error)]
#[error("cannot {} {path}: {message}", .kind.verb())]
pub struct ParseReport {
    kind: InputKind,
    path: String,
    message: String,
    src: Snippet,
    span: SourceSpan,
    label: String,
    help: Option<String>,
    /// Where the problem starts in the file: line and column, from 1
    /// (a column counts chars), for `--json` ([`json`]).
    at: (usize, usize),
    /// The field it is about, as the spec writes it, where known.
    pub field: Option<String>,
}

/// What kind of input a [`ParseReport`] could not read: the verb of its
/// header and its diagnostic code.
#[derive(Clone, Copy, Debug)]
pub enum InputKind {
    /// A RON spec (or model, program): `cannot parse`, `ccc::parse`.
    Spec,
    /// An XLA HLO module: `cannot import`, `ccc::hlo` (its text or a
    /// collective ccc cannot express).
    Hlo,
    /// An HLO target file: `cannot parse target`, `ccc::target`.
    Target,
}

impl InputKind {
    /// The header's verb.
    const fn verb(self) -> &'static str {
        match self {
            InputKind::Spec => "parse",
            InputKind::Hlo => "import",
            InputKind::Target => "parse target",
        }
    }

    /// The diagnostic code.
    const fn code(self) -> &'static str {
        match self {
            InputKind::Spec => "ccc::parse",
            InputKind::Hlo => "ccc::hlo",
            InputKind::Target => "ccc::target",
        }
    }
}

impl Diagnostic for ParseReport {
    fn code<'a>(&'a self) -> Option<Box<dyn Display + 'a>> {
        Some(Box::new(self.kind.code()))
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.src)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(Some(self.label.clone()), self.span))))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn Display + 'a>> {
        self.help.as_ref().map(|h| Box::new(h) as Box<dyn Display + 'a>)
    }
}

/// Turns a [`ParseError`] into a report over the file `path` (as given on
/// the command line) whose text is `src`.
pub fn parse_report(path: &str, src: &str, error: &ParseError) -> ParseReport {
    let range = error.span.byte_range(src);
    let (message, mut help) = (lower_first(&error.message), error.help());
    // JSON where RON goes, refused at its first token: a manifest given to
    // a verb that reads a spec (`ccc sign out/manifest.json`).
    let first = src.len() - src.trim_start_matches('\u{feff}').trim_start().len();
    if range.start <= first && ccc_compiler::diagnose::is_manifest(None, src) {
        help = Some(
            "this looks like JSON (a manifest.json?), not a spec: a spec is RON, `Collective(...)` or \
             `Program(...)`; `ccc diagnose` compares manifests"
                .to_owned(),
        );
    }
    let mut report = located_report(InputKind::Spec, path, src, range, &message, error.label(), help);
    report.field = error.path.as_deref().map(escape_controls);
    report
}

/// A report of a problem at byte `range` of the `kind` file `path` whose
/// text is `src`: the header, a snippet with the range marked by `label`,
/// the help.
pub fn located_report(
    kind: InputKind,
    path: &str,
    src: &str,
    range: std::ops::Range<usize>,
    message: &str,
    label: String,
    help: Option<String>,
) -> ParseReport {
    let at = line_column(src, range.start);
    let (snippet, span) = Snippet::around(path, src, range);
    let (message, label, help) = (escape_controls(message), escape_controls(&label), help.map(|h| escape_controls(&h)));
    ParseReport { kind, path: path.to_owned(), message, src: snippet, span, label, help, at, field: None }
}

/// The line and column (from 1; a column counts chars, a leading byte
/// order mark none) of byte `offset` of `src`, as the report's header
/// gives them.
pub fn line_column(src: &str, offset: usize) -> (usize, usize) {
    let before = src.get(..offset).unwrap_or(src);
    let line_start = before.rfind('\n').map_or(0, |nl| nl + 1);
    let line = before.get(line_start..).unwrap_or("");
    let column = line.strip_prefix('\u{feff}').unwrap_or(line).chars().count();
    (before.bytes().filter(|&b| b == b'\n').count() + 1, column + 1)
}

/// `text` with each control character (C0, DEL, C1) but a tab or a line
/// break written as an escape (`\u{1b}`): a message quoting the input
/// must not drive the terminal it is printed on (an ESC `c` in a module
/// resets it; some terminals read U+009B as ESC `[`).
pub fn escape_controls(text: &str) -> String {
    escaped(text, braced).into_owned()
}

/// A name quoted on a line of its own (a file or folder name in a
/// summary line): every control character written as an escape, a line
/// break and a tab too, so that a name holding one cannot start a line
/// that reads as ccc's (`-o $'n\nwrote fake'`).
pub fn one_line(name: &impl std::fmt::Display) -> String {
    name.to_string().chars().map(|c| if drives_terminal(c) { braced(c) } else { c.to_string() }).collect()
}

/// Whether `c`, printed raw, changes how a terminal shows what follows:
/// a control character (C0, DEL, C1: an ESC sequence sets the title or
/// clears the screen), or a bidirectional formatting character (U+202E
/// and its kin reorder the text after it, so that a name or value shown
/// reads as another: "Trojan Source").
pub fn drives_terminal(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A control character as Rust writes it (`\u{1b}`).
fn braced(c: char) -> String {
    c.escape_unicode().to_string()
}

/// `text` for stdout: each control character (C0, DEL, C1) but a tab or
/// a line break written as a JSON escape (`\u001b`), so that a file name
/// an output quotes does not drive the terminal, and a `--json` output,
/// whose strings may hold DEL and C1 characters raw (JSON escapes C0
/// only), stays JSON that reads back the same.
pub fn escape_for_stdout(text: &str) -> Cow<'_, str> {
    escaped(text, |c| format!("\\u{:04x}", u32::from(c)))
}

/// `text` with each control character but a tab or a line break written
/// as `escape` writes it; `text` itself when it holds none.
fn escaped(text: &str, escape: impl Fn(char) -> String) -> Cow<'_, str> {
    let control = |c: char| drives_terminal(c) && c != '\t' && c != '\n';
    if !text.chars().any(control) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().map(|c| if control(c) { escape(c) } else { c.to_string() }).collect())
}

/// The lines of a file a parse report shows: the line before the error,
/// the lines of its span (at most [`SNIPPET_SPAN_LINES`]) and the line
/// after, each cut to [`SNIPPET_LINE_MAX_CHARS`]. miette is told the file's
/// line and column numbers, so the header and gutter read as for the whole
/// file; the snippet's size does not depend on the file's.
#[derive(Debug)]
pub struct Snippet {
    name: String,
    text: String,
    /// The file's line number (0-based) of the snippet's first line.
    first_line: usize,
    /// The snippet line (0-based) whose start was cut, and how many
    /// characters were left out there (the `…` stands in for them).
    cut: Option<(usize, usize)>,
}

/// One source line as the snippet shows it.
struct Window {
    /// Byte offsets in the file of the part shown.
    shown: std::ops::Range<usize>,
    /// Byte offset in the snippet text where the shown part starts.
    at: usize,
}

impl Snippet {
    /// The snippet of `src` around `range` (byte offsets in `src`), and the
    /// range's span in the snippet.
    fn around(name: &str, src: &str, range: std::ops::Range<usize>) -> (Snippet, SourceSpan) {
        let line_start = |at: usize| src.get(..at).and_then(|s| s.rfind('\n')).map_or(0, |nl| nl + 1);
        let line_end = |at: usize| src.get(at..).and_then(|s| s.find('\n')).map_or(src.len(), |nl| at + nl);
        let start_line = line_start(range.start);
        // The first line shown: the one before the error's, if any.
        let first = if start_line == 0 { 0 } else { line_start(start_line - 1) };
        let first_line = src.get(..first).map_or(0, |s| s.bytes().filter(|&b| b == b'\n').count());
        let mut text = String::new();
        let mut windows: Vec<Window> = Vec::new();
        let mut cut = None;
        let mut at = first;
        // Lines before the error, the span's lines, one after.
        let mut after_span = 0;
        while at <= src.len() && after_span < 2 && windows.len() < SNIPPET_SPAN_LINES + 2 {
            let end = line_end(at);
            let line = src.get(at..end).unwrap_or("");
            let focus = (at..=end).contains(&range.start).then(|| range.start - at);
            // A short line is shown whole; a long one from a little before
            // the error (or from its start, when the error is elsewhere).
            let long = line.char_indices().nth(SNIPPET_LINE_MAX_CHARS).is_some();
            let skip = match focus {
                Some(f) if long => line.get(..f).map_or(0, |s| s.chars().count()).saturating_sub(SNIPPET_LEAD_CHARS),
                _ => 0,
            };
            let skip_bytes = line.char_indices().nth(skip).map_or(line.len(), |(i, _)| i);
            let kept = line.get(skip_bytes..).unwrap_or("");
            let kept_bytes = kept.char_indices().nth(SNIPPET_LINE_MAX_CHARS).map_or(kept.len(), |(i, _)| i);
            if skip > 0 {
                text.push('…');
                cut = Some((windows.len(), skip));
            }
            windows.push(Window { shown: at + skip_bytes..at + skip_bytes + kept_bytes, at: text.len() });
            // miette breaks a line at a lone `\r` too, where the file's
            // lines (and RON's count of them) break at `\n` only: a `\r`
            // is shown as a space, one byte for one, so that offsets hold;
            // so is every other control character but a tab, which would
            // drive the terminal (an ESC `c` resets it), as many spaces
            // as it has bytes (a C1 control has two).
            for c in kept.get(..kept_bytes).unwrap_or("").chars() {
                match drives_terminal(c) && c != '\t' {
                    true => text.extend(std::iter::repeat_n(' ', c.len_utf8())),
                    false => text.push(c),
                }
            }
            if kept_bytes < kept.len() {
                text.push('…');
            }
            if at >= start_line && end >= range.end {
                after_span += 1;
            }
            if end >= src.len() {
                break;
            }
            text.push('\n');
            at = end + 1;
        }
        // A file offset in the snippet, clamped into the part shown.
        let map = |offset: usize| {
            let w = windows.iter().rev().find(|w| w.shown.start <= offset).or(windows.first());
            w.map_or(0, |w| w.at + offset.clamp(w.shown.start, w.shown.end) - w.shown.start)
        };
        let start = map(range.start);
        let end = map(range.end).max(start);
        let snippet = Snippet { name: name.to_owned(), text, first_line, cut };
        (snippet, SourceSpan::from(start..end))
    }
}

impl SourceCode for Snippet {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let inner = self.text.read_span(span, context_lines_before, context_lines_after)?;
        // miette counts a column in bytes; an editor (and ccc's own
        // errors) in characters: the characters before the span on its
        // line, the `…` of a cut line counted as those it stands for.
        let line_start = span.offset().saturating_sub(inner.column());
        let chars = self.text.get(line_start..span.offset()).map_or(inner.column(), |s| s.chars().count());
        let column = match self.cut {
            Some((line, skipped)) if line == inner.line() && chars > 0 => chars - 1 + skipped,
            _ => chars,
        };
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            inner.line() + self.first_line,
            column,
            inner.line_count(),
        )))
    }
}

/// RON's messages start with a capital (`Expected comma`); after
/// `cannot parse FILE:` they read better without.
pub fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map_or_else(String::new, |c| c.to_lowercase().chain(chars).collect())
}

/// Every validation problem of a spec.
///
/// miette draws an error's source chain as an indented list (`├─▶ ...`,
/// wrapped with a hanging indent), which is exactly how the problems should
/// read, so each problem is chained as the `source` of the one before. They
/// are siblings, not causes; only the rendering uses the chain. (miette's
/// `related` list would repeat the `×` header on every line.)
#[derive(Debug, thiserror::Error)]
#[error("{path} is not a valid {what}: {count} problem{plural}")]
pub struct ValidationReport {
    path: String,
    /// What the file is: `spec`, or `target` for an HLO target's own values.
    what: &'static str,
    count: u64,
    plural: &'static str,
    #[source]
    problems: Option<Box<ProblemReport>>,
    /// The problems listed, each its field path and message, for
    /// `--json` ([`json`]).
    listed: Vec<(String, String)>,
}

impl Diagnostic for ValidationReport {
    fn code<'a>(&'a self) -> Option<Box<dyn Display + 'a>> {
        Some(Box::new("ccc::invalid"))
    }
}

/// One line of the list (`path: message`), then the next one.
#[derive(Debug, thiserror::Error)]
#[error("{line}")]
pub struct ProblemReport {
    line: String,
    #[source]
    next: Option<Box<ProblemReport>>,
}

impl Diagnostic for ProblemReport {}

/// Turns [`ValidationErrors`] into a report; `form` decides how field paths
/// are written.
/// At most [`MAX_LISTED`] are listed (a huge list helps nobody, and the
/// chain is dropped recursively).
pub fn validation_report(path: &str, form: SpecForm, errors: &ValidationErrors) -> ValidationReport {
    // Validation's own count of those it did not list is in `count`.
    let listed: Vec<&ValidationError> = errors.listed().take(MAX_LISTED).collect();
    let count = errors.count();
    let rest = (count > listed.len() as u64).then(|| {
        let more = count - listed.len() as u64;
        Box::new(ProblemReport { line: format!("... and {more} more problems"), next: None })
    });
    let listed: Vec<(String, String)> = listed.iter().map(|e| (e.path(form), e.problem.to_string())).collect();
    let problems = listed
        .iter()
        .rev()
        .fold(rest, |next, (at, problem)| Some(Box::new(ProblemReport { line: format!("{at}: {problem}"), next })));
    let plural = if count == 1 { "" } else { "s" };
    ValidationReport { path: path.to_owned(), what: "spec", count, plural, problems, listed }
}

/// [`validation_report`] of an HLO target's own values (`path` names the
/// target): "is not a valid target".
pub fn target_report(path: &str, errors: &ValidationErrors) -> ValidationReport {
    ValidationReport { what: "target", ..validation_report(path, SpecForm::Collective, errors) }
}

/// Every input's value, or, when some cannot be compared, every one's
/// refusal, in input order: one alone is returned as it is; several are
/// printed and a closing line says how many there were, so that a user
/// fixing the inputs of many ranks sees them all at once. The exit code
/// is the highest of theirs (a bad input, 2, before a proof's defect).
///
/// # Errors
///
/// The refusal, or the closing line.
pub fn every_input<T>(results: impl Iterator<Item = Result<T, crate::Failure>>) -> Result<Vec<T>, crate::Failure> {
    let (mut values, mut failures) = (Vec::new(), Vec::new());
    let mut given = 0;
    for result in results {
        given += 1;
        match result {
            Ok(value) => values.push(value),
            Err(failure) => failures.push(failure),
        }
    }
    if failures.len() < 2 {
        return failures.pop().map_or(Ok(values), Err);
    }
    let code = failures.iter().map(|f| f.code).max().unwrap_or(2);
    for failure in &failures {
        print(&failure.report);
    }
    Err(crate::Failure { code, report: Refusals { given, each: failures }.into() })
}

/// A file that is not UTF-8: where its first bad byte is, for `--json`
/// ([`json`]) as well as the message.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct NotUtf8Report {
    /// The whole message (the file, the bytes, the offset, line and column).
    pub message: String,
    /// How to fix it.
    pub help: String,
    /// The file, as given.
    pub file: String,
    /// The line of the first bad byte, from 1.
    pub line: usize,
    /// Its column, from 1, in characters.
    pub column: usize,
    /// Its byte offset.
    pub offset: usize,
}

impl Diagnostic for NotUtf8Report {
    fn code<'a>(&'a self) -> Option<Box<dyn Display + 'a>> {
        Some(Box::new("ccc::not_utf8"))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn Display + 'a>> {
        Some(Box::new(&self.help))
    }
}

/// The closing line of several inputs refused ([`every_input`]), which
/// keeps each refusal for `--json` ([`json`]: its `inputs`).
#[derive(Debug, thiserror::Error)]
#[error("{} of the {given} inputs were refused, each as said above; diagnose compares them once all read", .each.len())]
pub struct Refusals {
    given: usize,
    each: Vec<crate::Failure>,
}

impl Diagnostic for Refusals {}

/// `failure` as `--json` prints it on stdout (interface.md, "Errors under
/// `--json`"): `{"error": {...}}` with the exit code, the diagnostic
/// code, the message and help as the prose report gives them, and what
/// the report knows besides: a parse error's `file`, `line`, `column`,
/// `label` and `field`; a file not UTF-8's `file`, `line`, `column` and
/// `offset`; a validation error's `problems` (each `path` and
/// `message`) and their `count`; several refused inputs' `inputs`, each
/// such an object; any other report's `causes`.
pub fn json(failure: &crate::Failure) -> serde_json::Value {
    serde_json::json!({ "error": error_json(failure) })
}

/// The object under `"error"` of [`json`].
fn error_json(failure: &crate::Failure) -> serde_json::Value {
    use serde_json::{Value, json};
    let report = &failure.report;
    let text = |d: Option<Box<dyn Display + '_>>| d.map_or(Value::Null, |d| Value::String(d.to_string()));
    let mut error = serde_json::Map::new();
    let mut add = |key: &str, value: Value| {
        error.insert(key.to_owned(), value);
    };
    add("exit_code", json!(failure.code));
    add("code", text(report.code()));
    add("message", json!(report.to_string()));
    add("help", text(report.help()));
    if let Some(parse) = report.downcast_ref::<ParseReport>() {
        add("file", json!(parse.path));
        add("line", json!(parse.at.0));
        add("column", json!(parse.at.1));
        add("label", json!(parse.label));
        add("field", json!(parse.field));
    } else if let Some(invalid) = report.downcast_ref::<ValidationReport>() {
        let problems: Vec<Value> =
            invalid.listed.iter().map(|(path, message)| json!({ "path": path, "message": message })).collect();
        add("problems", Value::Array(problems));
        add("count", json!(invalid.count));
    } else if let Some(bad) = report.downcast_ref::<NotUtf8Report>() {
        add("file", json!(bad.file));
        add("line", json!(bad.line));
        add("column", json!(bad.column));
        add("offset", json!(bad.offset));
    } else if let Some(refusals) = report.downcast_ref::<Refusals>() {
        add("inputs", refusals.each.iter().map(error_json).collect());
    } else {
        let causes: Vec<String> = report.chain().skip(1).map(ToString::to_string).collect();
        add("causes", json!(causes));
    }
    Value::Object(error)
}

/// Prints [`json`] of `failure` on stdout, its control characters escaped
/// ([`escape_for_stdout`]); a stdout that cannot take it loses it (the
/// prose report on stderr and the exit code still say what failed).
pub fn print_json(failure: &crate::Failure) {
    use std::io::Write as _;
    let text = serde_json::to_string_pretty(&json(failure)).unwrap_or_default();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", escape_for_stdout(&text)).and_then(|()| out.flush());
}
