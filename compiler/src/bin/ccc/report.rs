//! Rendering of library errors as miette reports.
//!
//! A parse error has a position, so it is shown as a snippet of the file
//! with the offending token marked (`file:line:col` in the header). A
//! validation error has none — RON keeps no positions after parsing — so
//! each problem is printed as `path: message`, the path written the way the
//! file is (`collectives[2].groups[1][3]` in a program).

use ccc_compiler::parse::{ParseError, SpecForm};
use ccc_compiler::validate::ValidationErrors;
use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceCode, SourceSpan};
use std::fmt::Display;
use std::io::IsTerminal;

/// The width reports are wrapped to when the output is not a terminal.
const PLAIN_WIDTH: usize = 100;

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

// The Diagnostic impls are written out: the root package's miette has no
// `derive` feature, and three small impls do not justify one.

/// A parse error, with the file's text to show the snippet.
#[derive(Debug, thiserror::Error)]
#[error("cannot parse {path}: {message}")]
pub struct ParseReport {
    path: String,
    message: String,
    src: NamedSource<String>,
    span: SourceSpan,
    label: String,
    help: Option<String>,
}

impl Diagnostic for ParseReport {
    fn code<'a>(&'a self) -> Option<Box<dyn Display + 'a>> {
        Some(Box::new("ccc::parse"))
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
    ParseReport {
        path: path.to_owned(),
        message: lower_first(&error.message),
        src: NamedSource::new(path, src.to_owned()),
        span: SourceSpan::from(range),
        label: error.label(),
        help: error.help().map(str::to_owned),
    }
}

/// RON's messages start with a capital (`Expected comma`); after
/// `cannot parse FILE:` they read better without.
fn lower_first(s: &str) -> String {
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
#[error("{path} is not a valid spec: {count} problem{plural}")]
pub struct ValidationReport {
    path: String,
    count: usize,
    plural: &'static str,
    #[source]
    problems: Option<Box<ProblemReport>>,
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
    let listed = errors.0.get(..MAX_LISTED).unwrap_or(&errors.0);
    let rest = (errors.0.len() > listed.len()).then(|| {
        let more = errors.0.len() - listed.len();
        Box::new(ProblemReport { line: format!("... and {more} more problems"), next: None })
    });
    let problems = listed
        .iter()
        .rev()
        .fold(rest, |next, e| Some(Box::new(ProblemReport { line: format!("{}: {}", e.path(form), e.problem), next })));
    let count = errors.0.len();
    ValidationReport { path: path.to_owned(), count, plural: if count == 1 { "" } else { "s" }, problems }
}
