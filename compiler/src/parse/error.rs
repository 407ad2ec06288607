//! Parse errors: RON's error mapped to a kind, a span on the offending token, and bounded messages.

use super::scan::{LineCol, advance, byte_offset, pos_le, skip_insignificant, to_line_col, token_at, unclosed_comment};
use super::{SpecForm, strip_bom};
use ron::error::Error as RonError;
use std::ops::Range;

/// The most chars of a token an error quotes; a longer token is quoted as
/// its first chars, `…` and its length in bytes.
pub const QUOTE_MAX_CHARS: usize = 48;

/// The most bytes of an error message kept (a message can quote a value of
/// the input, which can be large); past it the message ends with `…`.
pub const MESSAGE_MAX_BYTES: usize = 1024;

/// `text` in backticks for an error message: whole when at most
/// [`QUOTE_MAX_CHARS`] long, else its first chars, `…`, and its length
/// (`` `aaaa…` (4194304 bytes) ``).
pub fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE_MAX_CHARS) {
        None => format!("`{text}`"),
        Some((cut, _)) => format!("`{}…` ({} bytes)", text.get(..cut).unwrap_or(""), text.len()),
    }
}

/// A message with every long token in it cut to an excerpt (as [`quote`]
/// does, the length placed after the token's closing quote) and the whole
/// cut after [`MESSAGE_MAX_BYTES`]. Linear in the message.
pub fn bound_message(message: &str) -> String {
    let is_quote = |c: char| matches!(c, '`' | '\'' | '"');
    let is_word = |c: char| !(c.is_whitespace() || is_quote(c));
    let mut out = String::new();
    let mut rest = message;
    while let Some(c) = rest.chars().next() {
        if out.len() >= MESSAGE_MAX_BYTES {
            out.push_str(&format!("… ({} bytes in all)", message.len()));
            break;
        }
        if !is_word(c) {
            out.push(c);
            rest = rest.get(c.len_utf8()..).unwrap_or("");
            continue;
        }
        let len = rest.find(|c: char| !is_word(c)).unwrap_or(rest.len());
        let (word, after) = (rest.get(..len).unwrap_or(""), rest.get(len..).unwrap_or(""));
        rest = after;
        match word.char_indices().nth(QUOTE_MAX_CHARS) {
            None => out.push_str(word),
            Some((cut, _)) => {
                out.push_str(word.get(..cut).unwrap_or(""));
                out.push('…');
                if let Some(q) = after.chars().next().filter(|&q| is_quote(q)) {
                    out.push(q);
                    rest = after.get(q.len_utf8()..).unwrap_or("");
                }
                out.push_str(&format!(" ({len} bytes)"));
            }
        }
    }
    out
}

/// Where a parse error is: `start` is the first char of the offending
/// token, `end` is exclusive (equal to `start` when RON points between
/// tokens, e.g. a missing comma).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SourceSpan {
    /// The first char.
    pub start: LineCol,
    /// One past the last char.
    pub end: LineCol,
}

impl SourceSpan {
    /// The byte range of this span in `src` (for miette and other renderers).
    /// Positions count from after a leading [`BOM`](super::BOM), as [`parse`](super::parse()) counts
    /// them. Positions beyond a line's end clamp to it, positions beyond the
    /// source clamp to its end; the range is always valid for slicing `src`.
    pub fn byte_range(&self, src: &str) -> Range<usize> {
        let body = strip_bom(src);
        let skipped = src.len() - body.len();
        let start = byte_offset(body, self.start);
        let end = byte_offset(body, self.end).max(start);
        start + skipped..end + skipped
    }
}

/// `, in `PATH`` for [`ParseError`]'s message, or nothing.
fn where_in(path: Option<&str>) -> String {
    path.map_or_else(String::new, |p| format!(", in `{p}`"))
}

/// What kind of mistake a parse error is, for a short label under the token.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ParseErrorKind {
    /// A field the struct does not have (`algoritm:`).
    UnknownField {
        /// The field as written.
        found: String,
    },
    /// A variant the enum does not have (`op: AllReduc`).
    UnknownVariant {
        /// The variant as written.
        found: String,
    },
    /// A required field is absent.
    MissingField {
        /// The field's name.
        field: &'static str,
        /// The struct it belongs to, when RON knows it.
        outer: Option<String>,
    },
    /// A field given twice.
    DuplicateField {
        /// The field's name.
        field: &'static str,
    },
    /// A struct written with the wrong name (`Colective(...)`).
    WrongStructName {
        /// The name the schema expects.
        expected: &'static str,
        /// The name as written.
        found: String,
    },
    /// Text after the complete spec.
    TrailingCharacters,
    /// The file ends in the middle of the spec.
    UnexpectedEof,
    /// A missing `,` between two fields or elements.
    MissingComma,
    /// `Auto(Ring)`: how a signature or manifest shows what `Auto` chose,
    /// written in a spec (RON reads `Auto` and then misses a comma at
    /// the `(`).
    ChosenAuto {
        /// The field it is the value of (`algorithm`,
        /// `inter_all_reduce`), when it directly follows `field:`.
        field: Option<String>,
    },
    /// A name given a value in parentheses (`algorithm: Ring()`, `reduce:
    /// Add(1)`): RON reads the name and then misses a comma at the `(`.
    NameTakesNoValue {
        /// The name.
        name: String,
        /// The field it is the value of, when it directly follows
        /// `field:`.
        field: Option<String>,
    },
    /// `Hier((...))` written as a leg's choice (`inter_all_reduce:
    /// Hier(())`): a leg cannot itself be Hier (RON reads `Hier`, a name of
    /// a leg's choices, and then misses a comma at the `(`).
    HierInLeg {
        /// The leg's field (`inter_all_reduce`).
        leg: String,
    },
    /// A `/* */` comment that is never closed; the span marks its `/*`.
    UnclosedComment,
    /// A whole number too large for its field, or negative where the
    /// field takes none (`channels: -5`, `count: 99999999999999999999`).
    IntegerOutOfBounds {
        /// The field it is the value of, when it directly follows `field:`.
        field: Option<String>,
    },
    /// A fraction where the field takes a whole number (`count: 1.5`):
    /// RON reads the number up to the `.` and then misses a comma.
    Fraction {
        /// The field it is the value of, when it directly follows `field:`.
        field: Option<String>,
    },
    /// Any other syntax or type error (a string where a number belongs, an
    /// unclosed bracket, ...).
    Syntax,
}

/// A spec that is not well-formed RON of the spec schema.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message} at line {}, column {}{}", span.start.line, span.start.col, where_in(path.as_deref()))]
pub struct ParseError {
    /// RON's description of the problem (boxed, as is `path`: the error
    /// stays small enough to return by value from every pass).
    pub message: Box<str>,
    /// The kind of problem, with its values.
    pub kind: ParseErrorKind,
    /// Where it is.
    pub span: SourceSpan,
    /// The form the file was read as (from its first token).
    pub form: SpecForm,
    /// The path of the field it is about, as the spec writes it
    /// (`collectives[1].topology.rank_n`; for a missing field, where it
    /// belongs); `None` where RON was in no field (trailing text) or
    /// cannot say which.
    pub path: Option<Box<str>>,
}

impl ParseError {
    /// What would be accepted at the offending token, as the message
    /// says it (`expected one of ...`, `accepted: ...`), or a whole number
    /// for a fraction where an integer goes; `None` when it says nothing
    /// of it.
    pub fn accepted(&self) -> Option<String> {
        match &self.kind {
            ParseErrorKind::Fraction { .. } => Some("a whole number".to_owned()),
            // `channels: -1`, `count: 99999999999999999999`: the range.
            ParseErrorKind::IntegerOutOfBounds { field } => Some(whole_number_accepted(field.as_deref())),
            // `count: 1e6`, `channels: nan`.
            ParseErrorKind::Syntax
                if self.message.starts_with("Expected integer") || self.message.starts_with("Invalid digit") =>
            {
                Some(whole_number_accepted(self.last_field()))
            }
            // `op: "AllReduce"`, `reduce: 1`: a field that takes a name
            // accepts its names, as a misspelt one's refusal lists them.
            ParseErrorKind::Syntax if let Some((_, names)) = self.names_taken() => {
                Some(format!("one of {names}, written bare"))
            }
            _ => crate::accepted::accepted_in(&self.message),
        }
    }

    /// A short label for the offending token.
    pub fn label(&self) -> String {
        match &self.kind {
            ParseErrorKind::UnknownField { found } => format!("unknown field {}", quote(found)),
            ParseErrorKind::UnknownVariant { found } => format!("unknown variant {}", quote(found)),
            ParseErrorKind::MissingField { field, .. } => format!("closed here without `{field}`"),
            ParseErrorKind::DuplicateField { field } => format!("`{field}` given again here"),
            ParseErrorKind::WrongStructName { expected, .. } => format!("expected `{}` here", spec_name(expected)),
            ParseErrorKind::TrailingCharacters => "unexpected text after the spec".to_owned(),
            ParseErrorKind::UnexpectedEof => "the file ends here".to_owned(),
            ParseErrorKind::MissingComma => "a `,` is missing before this".to_owned(),
            ParseErrorKind::ChosenAuto { .. } => "`Auto` takes no choice here".to_owned(),
            ParseErrorKind::NameTakesNoValue { name, .. } => format!("`{name}` takes nothing in parentheses"),
            ParseErrorKind::HierInLeg { .. } => "a leg's choice cannot be `Hier`".to_owned(),
            ParseErrorKind::UnclosedComment => "this comment is never closed".to_owned(),
            ParseErrorKind::IntegerOutOfBounds { field: Some(field) } => format!("out of range for `{field}`"),
            ParseErrorKind::IntegerOutOfBounds { field: None } => "out of range".to_owned(),
            ParseErrorKind::Fraction { .. } => "a fraction where a whole number belongs".to_owned(),
            ParseErrorKind::Syntax => {
                // RON's messages start with a capital (`Expected integer`).
                let mut chars = self.message.chars();
                chars.next().map_or_else(String::new, |c| c.to_lowercase().chain(chars).collect())
            }
        }
    }

    /// The field the path ends in, without its indices (`groups`).
    fn last_field(&self) -> Option<&str> {
        self.path.as_deref().and_then(|p| p.rsplit('.').next()).map(|f| f.split('[').next().unwrap_or(f))
    }

    /// Where RON found a value that is not a name (`reduce: 1`, `dtype:
    /// "F32"`, `arch: (Cayman)`) in a field that takes one: the field and
    /// its names.
    fn names_taken(&self) -> Option<(&str, String)> {
        let not_a_name = self.message.ends_with("where a name belongs") || &*self.message == "Expected identifier";
        let field = self.last_field().filter(|_| not_a_name)?;
        Some((field, names_of(field)?))
    }

    /// The text of the string found where a name belongs (`op:
    /// "AllReduce"` gives `AllReduce`), when the message names one.
    fn quoted_name(&self) -> Option<&str> {
        let quoted = self.message.strip_prefix("Found the string `\"")?;
        quoted.strip_suffix("\"` where a name belongs")
    }

    /// A hint on how to fix it, where one is more useful than RON's message.
    pub fn help(&self) -> Option<String> {
        let whole = |field: &Option<String>| whole_number_help(field.as_deref());
        let last = self.last_field();
        match &self.kind {
            ParseErrorKind::IntegerOutOfBounds { field } | ParseErrorKind::Fraction { field } => Some(whole(field)),
            ParseErrorKind::ChosenAuto { .. } => Some(chosen_auto_help("spec")),
            ParseErrorKind::NameTakesNoValue { name, .. } => {
                Some(format!("a name is written bare: `{name}`, without the parentheses"))
            }
            ParseErrorKind::HierInLeg { leg } => Some(format!(
                "`{leg}` takes one of these names, written bare: {}; `Hier((...))` is written only as the whole \
                 `algorithm`",
                names_of(leg).unwrap_or_default()
            )),
            // `root: "3"`, `count: 1e3`, `count: true`.
            ParseErrorKind::Syntax
                if self.message.starts_with("Expected integer") || self.message.starts_with("Invalid digit") =>
            {
                Some(whole(&last.map(str::to_owned)))
            }
            // `op: "AllReduce"`: a name in quotes, written bare (`op:
            // "allreduse"`: the name it is nearest).
            ParseErrorKind::Syntax
                if let Some((field, names)) = self.names_taken()
                    && let Some(found) = self.quoted_name()
                    && let quoted = names.split(", ").map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                    && let Some(name) = nearest(found, &quoted) =>
            {
                Some(match name == found {
                    true => format!("a name is written bare, without quotes: `{field}: {name}`"),
                    false => format!("a name is written bare, without quotes; did you mean `{field}: {name}`?"),
                })
            }
            // `reduce: 1`, `dtype: "F32"`, `arch: (Cayman)`: a field that
            // takes a name says which.
            ParseErrorKind::Syntax if let Some((field, names)) = self.names_taken() => {
                Some(format!("`{field}` takes one of these names, written bare: {names}"))
            }
            // `topology: (8, 8)`: RON's advice (a raw identifier) is not a spec's.
            ParseErrorKind::Syntax if self.message.ends_with("where a name belongs") => Some(format!(
                "{} fields are written by name, `(name: value, ...)`{}",
                last.map_or_else(|| "a struct's".to_owned(), |f| format!("`{f}`'s")),
                if last == Some("topology") { ": `topology: (rank_n: 8, local_rank_n: 8)`" } else { "" }
            )),
            // `(AllReduce, F32, ...)`: a value where a field's name belongs
            // (RON read a positional struct's first value as a field name):
            // not a misspelt field, whatever name is near it.
            ParseErrorKind::UnknownField { found }
                if in_a_collective(self.path.as_deref())
                    && let Some(field) = field_taking(found) =>
            {
                Some(format!(
                    "`{found}` is a value of `{field}`: a spec's fields are written by name, `{field}: {found}`"
                ))
            }
            // `op: AllReduse`, `dtype: BF16`, `chanels: 4`: the name meant,
            // where one accepted is near it, before any other help.
            ParseErrorKind::UnknownVariant { found } | ParseErrorKind::UnknownField { found }
                if let Some(near) = self.accepted().and_then(|a| nearest(found, &a).map(str::to_owned)) =>
            {
                let also = self.fixed_help().map_or_else(String::new, |h| format!(" ({h})"));
                Some(format!("did you mean `{near}`?{also}"))
            }
            _ => self.fixed_help().map(str::to_owned),
        }
    }

    /// [`ParseError::help`] where it does not depend on the input.
    fn fixed_help(&self) -> Option<&'static str> {
        // A Hier's legs or a `model:` block, named by what the spec writes.
        if self.message.contains("`Hier((...))`") || self.label().contains("`Hier((...))`") {
            return Some(
                "a Hier takes its legs by name in two parentheses: `Hier((intra_reduce_scatter: Ring, \
                 inter_all_reduce: SingleCycleRing, intra_all_gather: Kangaring))`",
            );
        }
        if self.message.contains("`model: (...)`") {
            return Some("`model:` takes the cost model's overrides by name: `model: (launch_ns: 20000)`");
        }
        if self.message.starts_with("found the control character") {
            return Some(
                "delete it (an editor may show it as a space, or not at all): a spec holds printable text, \
                 spaces, tabs and line breaks",
            );
        }
        // `#` starts no comment in RON (RON reads an attribute, or nothing).
        if self.message.starts_with("found `#`") {
            return Some("RON's comments are `// ...` to the end of the line, or `/* ... */`; `#` starts none");
        }
        match &self.kind {
            // `(collectives: [...])`: a program needs its name.
            ParseErrorKind::UnknownField { found } if found == "collectives" => Some(
                "a program is written with its name, `Program(collectives: [...])`; a nameless `(...)` is read as a `Collective`",
            ),
            ParseErrorKind::WrongStructName { expected, .. }
                if *expected == SpecForm::Collective.struct_name() || *expected == SpecForm::Program.struct_name() =>
            {
                Some(
                    "a spec file holds one `Collective(...)` (the name may be left out) or a `Program(collectives: [...])`",
                )
            }
            ParseErrorKind::UnexpectedEof => Some(
                "the text ends before the spec does: a spec holds one `Collective(...)` (the name may be left out) or \
                 a `Program(collectives: [...])`, every bracket closed",
            ),
            // Two collectives one after the other.
            ParseErrorKind::TrailingCharacters => Some(
                "a spec file holds one `Collective(...)` or one `Program(...)`; several collectives are one \
                 program: `Program(collectives: [Collective(...), Collective(...)])`",
            ),
            // `[Collective(...), ...]`: a list of collectives, nameless.
            ParseErrorKind::Syntax
                if self.path.is_none() && &*self.message == "Expected opening `(` for struct `Collective`" =>
            {
                Some(
                    "a spec file holds one `Collective(...)`; a list of collectives is a program: \
                     `Program(collectives: [Collective(...), ...])`",
                )
            }
            ParseErrorKind::UnclosedComment => {
                Some("close it with `*/`; block comments nest, so each `/*` inside it needs its own `*/` too")
            }
            ParseErrorKind::MissingField { outer: Some(outer), .. } => match outer.as_str() {
                "Collective" => Some("every collective needs op, dtype, count, arch, topology, channels and algorithm"),
                "Topology" => Some("a topology needs rank_n and local_rank_n (pod_n defaults to 1)"),
                "Program" => Some("a program needs `collectives: [...]`"),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Whether `after`, the text from where RON wants a comma, is at most one
/// token and closing brackets: the end of the text, not a missing comma.
fn ends_here(after: &str) -> bool {
    let rest = after.get(super::scan::token_at(after).len()..).unwrap_or("");
    let mut rest = super::scan::skip_trivia(rest, false);
    while let Some(after) = rest.strip_prefix([')', ']', '}']) {
        rest = super::scan::skip_trivia(after, false);
    }
    rest.is_empty()
}

/// The names a spec gives what serde calls by its Rust type: a Hier's
/// legs and a `model:` block.
const SPEC_NAMES: [(&str, &str); 2] = [("HierLegs", "Hier((...))"), ("ModelOverrides", "model: (...)")];

/// The name a spec gives the Rust type `rust` ([`SPEC_NAMES`]), or `rust`.
fn spec_name(rust: &str) -> &str {
    SPEC_NAMES.iter().find(|(r, _)| *r == rust).map_or(rust, |(_, spec)| spec)
}

/// RON's `message` with the Rust type names a spec never writes in the
/// spec's words (`struct `HierLegs`` → ``Hier((...))``).
fn spec_words(message: &str) -> String {
    SPEC_NAMES.iter().fold(message.to_owned(), |m, (rust, spec)| {
        m.replace(&format!("struct `{rust}`"), &format!("`{spec}`")).replace(&format!("`{rust}`"), &format!("`{spec}`"))
    })
}

/// The name RON read before a missing comma at a `(`, when it is one a
/// spec writes bare (`Ring()`, `Add(1)`, `F32()`: an algorithm, a reduce
/// operator, a dtype, an op, an arch, a barrier); `None` otherwise (`Auto`
/// is [`chosen_auto`]'s; `Hier` and structs take parentheses).
fn bare_name_called<'s>(before: &'s str, after: &str) -> Option<&'s str> {
    if !after.starts_with('(') {
        return None;
    }
    let before = super::scan::trim_trailing_trivia(before);
    let start = before.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
    let name = before.get(start..)?;
    let bare = field_taking(name).is_some() || names_of("choices").is_some_and(|n| n.split(", ").any(|n| n == name));
    (bare && name != "Auto").then_some(name)
}

/// A character no spec holds but invisibly: a control character (C0,
/// DEL, C1) other than a tab or a line break.
fn is_stray_control(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\n' | '\r')
}

/// The leg whose choice is written `Hier(...)` where RON misses a comma
/// between `before` and `after` (the `(` after `leg: Hier`), if that is
/// what it is.
fn hier_in_leg(src: &str, before: &str, after: &str) -> Option<String> {
    let trimmed = super::scan::trim_trailing_trivia(before);
    let start = trimmed.strip_suffix("Hier")?.len();
    let whole = !trimmed.get(..start)?.ends_with(|c: char| c.is_alphanumeric() || c == '_');
    let leg = field_before(src, start)?;
    (after.starts_with('(') && whole && ccc_ir::spec::Leg::ALL.iter().any(|l| l.field() == leg)).then_some(leg)
}

/// Whether RON's missing comma between `before` and `after` is
/// `algorithm: Auto(Ring)`, copied from a signature or manifest: RON reads
/// `Auto` and misses a comma at the `(` (comments between the two read as
/// RON skips them). Targets ask it too.
pub fn chosen_auto(before: &str, after: &str) -> bool {
    after.starts_with('(')
        && super::scan::trim_trailing_trivia(before)
            .strip_suffix("Auto")
            .is_some_and(|b| !b.ends_with(|c: char| c.is_alphanumeric() || c == '_'))
}

/// The help of a [`chosen_auto`] error in a `file` (`spec`, `target`).
pub fn chosen_auto_help(file: &str) -> String {
    format!(
        "`Auto(X)` is how a signature or manifest shows what Auto chose; a {file} writes `Auto` (the cost model \
         chooses) or the algorithm itself (`X`)"
    )
}

/// RON's error `e` at `path` of `src`, read as `form`, in a spec's words;
/// `text` names the whole (`the spec`; `the target`, `--algorithm` for
/// [`super::parse_part`]) where the error is of it.
pub(super) fn error_from_ron(
    src: &str,
    form: SpecForm,
    text: &str,
    e: ron::error::SpannedError,
    path: Option<String>,
) -> ParseError {
    // Nothing but whitespace and comments: RON expects the first `(`;
    // say the text is empty.
    if super::scan::skip_trivia(src, true).is_empty() {
        let at = to_line_col(e.span.start);
        let (kind, span) = (ParseErrorKind::UnexpectedEof, SourceSpan { start: at, end: at });
        return ParseError { message: format!("{text} is empty").into(), kind, span, form, path: None };
    }
    // Where RON stopped, as a byte offset into `src`.
    let stopped = byte_offset(src, to_line_col(e.span.start));
    let kind = match &e.code {
        RonError::NoSuchStructField { found, .. } => ParseErrorKind::UnknownField { found: found.clone() },
        RonError::NoSuchEnumVariant { found, .. } => ParseErrorKind::UnknownVariant { found: found.clone() },
        RonError::MissingStructField { field, outer } => ParseErrorKind::MissingField { field, outer: outer.clone() },
        RonError::DuplicateStructField { field, .. } => ParseErrorKind::DuplicateField { field },
        RonError::ExpectedDifferentStructName { expected, found } => {
            ParseErrorKind::WrongStructName { expected, found: found.clone() }
        }
        // `Auto(Ring)` as the whole text (a `--algorithm`): RON reads
        // `Auto`, then text after it.
        RonError::TrailingCharacters
            if chosen_auto(src.get(..stopped).unwrap_or(""), src.get(stopped..).unwrap_or("")) =>
        {
            ParseErrorKind::ChosenAuto { field: None }
        }
        RonError::TrailingCharacters => ParseErrorKind::TrailingCharacters,
        RonError::Eof => ParseErrorKind::UnexpectedEof,
        RonError::ExpectedComma => ParseErrorKind::MissingComma,
        RonError::UnclosedBlockComment => ParseErrorKind::UnclosedComment,
        RonError::IntegerOutOfBounds => {
            let at = byte_offset(src, skip_insignificant(src, e.span.start));
            ParseErrorKind::IntegerOutOfBounds { field: field_before(src, at).or_else(|| list_field(src, at)) }
        }
        _ => ParseErrorKind::Syntax,
    };
    // RON stops at the end of the text, wanting more (`Expected opening
    // `(``): the text ends before a bracket closes.
    let at_end = || {
        super::scan::skip_trivia(src.get(byte_offset(src, to_line_col(e.span.start))..).unwrap_or(""), false).is_empty()
    };
    let kind = match kind {
        ParseErrorKind::Syntax if at_end() && super::scan::unclosed_bracket(src).is_some() => {
            ParseErrorKind::UnexpectedEof
        }
        other => other,
    };
    // `count: 1.5`: RON reads `1` and misses a comma at `.5`.
    let kind = match kind {
        ParseErrorKind::MissingComma => {
            let (before, after) = (src.get(..stopped).unwrap_or(""), src.get(stopped..).unwrap_or(""));
            let digits = before.trim_end_matches(|c: char| c.is_ascii_digit() || c == '_');
            let fraction = after.starts_with('.') && digits.len() < before.len();
            if fraction {
                ParseErrorKind::Fraction {
                    field: field_before(src, digits.len()).or_else(|| list_field(src, digits.len())),
                }
            } else if chosen_auto(before, after) {
                let start = super::scan::trim_trailing_trivia(before).len() - "Auto".len();
                ParseErrorKind::ChosenAuto { field: field_before(src, start) }
            } else if let Some(leg) = hier_in_leg(src, before, after) {
                ParseErrorKind::HierInLeg { leg }
            } else if let Some(name) = bare_name_called(before, after) {
                let start = super::scan::trim_trailing_trivia(before).len() - name.len();
                ParseErrorKind::NameTakesNoValue { name: name.to_owned(), field: field_before(src, start) }
            } else if ends_here(after) && super::scan::unclosed_bracket(src).is_some() {
                // The last value, then nothing but the brackets it closes
                // of its own: no comma is missing, the text ends (RON wants
                // a `,` or the closing bracket).
                ParseErrorKind::UnexpectedEof
            } else {
                ParseErrorKind::MissingComma
            }
        }
        other => other,
    };
    // An invisible control character where RON stopped (a NUL in a
    // number, a C1 character before one): named, whatever RON wanted
    // there (it said `expected comma` at what looks like a space).
    let control = src
        .get(stopped..)
        .and_then(|rest| rest.trim_start_matches(' ').chars().next())
        .filter(|&c| is_stray_control(c));
    let kind = if control.is_some() { ParseErrorKind::Syntax } else { kind };
    let path = field_path(path, &kind).map(String::into_boxed_str);
    // A list of lists left open (`groups: [[0, 1], [2, 3],` then the
    // collective's `)` or the next field's name, `algorithm:`): RON wanted
    // another element's `[` there. What stands there, to say.
    let unclosed_list = match e.code {
        RonError::ExpectedArray if path.as_deref().is_some_and(|p| p.ends_with(']')) => {
            let rest = src.get(stopped..).unwrap_or("");
            let word = rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
            let field = !word.is_empty() && rest.get(word.len()..).is_some_and(|r| r.trim_start().starts_with(':'));
            match (rest.starts_with(')'), field) {
                (true, _) => Some(")".to_owned()),
                (false, true) => Some(format!("{word}:")),
                _ => None,
            }
        }
        _ => None,
    };
    let message = match kind {
        _ if let Some(c) = control => {
            format!("found the control character `{}`, invisible in most editors", c.escape_unicode())
        }
        _ if let Some(found) = &unclosed_list => {
            // `groups[2]`: the list is `groups`.
            let list = path.as_deref().and_then(|p| p.rsplit_once('[')).map_or("the list", |(l, _)| l);
            format!("found `{found}` where `{list}` goes on: a `]` is missing before it, closing the list")
        }
        ParseErrorKind::Fraction { .. } => "expected a whole number, found a fraction".to_owned(),
        // The bracket left open is what the reader must close.
        ParseErrorKind::UnexpectedEof if let Some((at, opened)) = super::scan::unclosed_bracket(src) => {
            format!("the text ends before `{opened}` at line {}, column {} is closed", at.line, at.col)
        }
        ParseErrorKind::ChosenAuto { .. } => "`Auto` takes no choice in a spec".to_owned(),
        ParseErrorKind::NameTakesNoValue { ref name, .. } => format!("`{name}` is a name, written without parentheses"),
        ParseErrorKind::HierInLeg { ref leg } => format!("`{leg}: Hier(...)`: a leg cannot itself be Hier"),
        // RON's advice to write a raw identifier (`r#8`) is never a spec's:
        // a name was expected, and the help says how a struct reads.
        _ if let RonError::SuggestRawIdentifier(found) = &e.code => {
            format!("Found {} where a name belongs", quote(found))
        }
        // `op: "AllReduce"`: RON says only `Expected identifier`; the
        // string it found is named (`help` says to write it bare).
        _ if matches!(e.code, RonError::ExpectedIdentifier)
            && let found = super::scan::token_at(src.get(stopped..).unwrap_or(""))
            && found.starts_with('"') =>
        {
            format!("Found the string {} where a name belongs", quote(found))
        }
        // `in enum `AlgType``: the field the name is for, in the spec's
        // words (`for `algorithm.intra_reduce_scatter``), where known.
        ParseErrorKind::UnknownVariant { .. }
            if let RonError::NoSuchEnumVariant { outer: Some(outer), .. } = &e.code =>
        {
            let said = spec_words(&bound_message(&e.code.to_string()));
            // At the root (`--algorithm ring`): the text itself.
            let field = path.as_deref().map_or_else(|| text.to_owned(), |p| format!("`{p}`"));
            said.replacen("Unexpected variant named", "Unexpected name", 1).replacen(
                &format!(" in enum `{outer}`"),
                &format!(" for {field}"),
                1,
            )
        }
        _ => spec_words(&bound_message(&e.code.to_string())),
    }
    .into_boxed_str();
    // RON points inside the comment: mark the `/*` that opens it instead.
    if kind == ParseErrorKind::UnclosedComment
        && let Some(start) = unclosed_comment(src)
    {
        let end = LineCol { line: start.line, col: start.col + 2 };
        return ParseError { message, kind, span: SourceSpan { start, end }, form, path };
    }
    // `# a comment`: RON wants a name there, or an attribute.
    // (At the top, RON reads `#` as the start of an `#![enable(...)]`.)
    let hash = src.get(byte_offset(src, skip_insignificant(src, e.span.start))..).is_some_and(|r| r.starts_with('#'));
    let stray = message.contains("#![enable") && !super::scan::skip_trivia(src, false).starts_with("#!");
    let message = if kind == ParseErrorKind::Syntax && (stray || hash && !message.contains("#![")) {
        "found `#`, which starts no comment in RON".into()
    } else {
        message
    };
    // The text ends: mark where, past its last token (RON may point at
    // that token, wanting a `,` after it).
    if kind == ParseErrorKind::UnexpectedEof {
        let text = super::scan::trim_trailing_trivia(src);
        let last = text.char_indices().next_back().map_or(0, |(i, _)| i);
        let start = advance(LineCol { line: 1, col: 1 }, text.get(..last).unwrap_or(""));
        let end = advance(LineCol { line: 1, col: 1 }, text);
        return ParseError { message, kind, span: SourceSpan { start, end }, form, path };
    }
    // RON's span of a value error starts on the whitespace (or comment)
    // before the token: advance it to the token itself.
    let mut start = skip_insignificant(src, e.span.start);
    let mut end = if pos_le(e.span.end, start) { start } else { to_line_col(e.span.end) };
    // RON points past a number's sign (`-5` at `5`): mark the sign too.
    if matches!(kind, ParseErrorKind::IntegerOutOfBounds { .. })
        && start.col > 1
        && src.get(..byte_offset(src, start)).is_some_and(|b| b.ends_with('-'))
    {
        start.col -= 1;
    }
    // A value of the wrong type gets an empty span at its start: mark the
    // whole token (`"4M"`, `-1`, `Ring`) instead of a caret.
    if kind == ParseErrorKind::Syntax && end == start {
        let rest = src.get(byte_offset(src, start)..).unwrap_or("");
        end = advance(start, token_at(rest));
    }
    ParseError { message, kind, span: SourceSpan { start, end }, form, path }
}

/// The field whose values include the name `found` (`AllReduce`: `op`),
/// if one does.
fn field_taking(found: &str) -> Option<&'static str> {
    ["op", "dtype", "reduce", "arch", "barrier", "algorithm"]
        .into_iter()
        .find(|f| names_of(f).is_some_and(|names| names.split(", ").any(|n| n == found)))
}

/// Whether a field at `path` is one of a collective's own (`AllReduce`,
/// or `collectives[2].AllReduce` in a program), not one inside a nested
/// struct (`topology.Cayman`, `algorithm.Hier.Ring`).
fn in_a_collective(path: Option<&str>) -> bool {
    let Some(path) = path else { return true };
    match path.rsplit_once('.') {
        None => true,
        Some((parent, _)) => parent
            .strip_prefix("collectives[")
            .and_then(|i| i.strip_suffix(']'))
            .is_some_and(|i| !i.is_empty() && i.chars().all(|c| c.is_ascii_digit())),
    }
}

/// The name among the `` `quoted` `` names of `accepted` (a message's
/// `expected one of ...` list) that `found` most likely misspells: one
/// equal to it but for case, else the closest by edit distance (a swap
/// of two letters one edit), within a
/// third of its length (at least 1, at most 3 edits); `None` when none is
/// that near, or two are equally near.
pub fn nearest<'a>(found: &str, accepted: &'a str) -> Option<&'a str> {
    let names: Vec<&str> = accepted.split('`').skip(1).step_by(2).collect();
    if let Some(same) = names.iter().find(|n| n.eq_ignore_ascii_case(found)) {
        return Some(same);
    }
    let most = (found.chars().count() / 3).clamp(1, 3);
    let mut by: Vec<(usize, &str)> = names
        .iter()
        .map(|n| (strsim::osa_distance(&found.to_ascii_lowercase(), &n.to_ascii_lowercase()), *n))
        .filter(|&(d, _)| d <= most)
        .collect();
    by.sort_unstable();
    match by.as_slice() {
        [(d, n), rest @ ..] if rest.first().is_none_or(|(e, _)| e > d) => Some(n),
        _ => None,
    }
}

/// The path of the field an error of `kind` is about, from the path RON
/// was reading (`read`): a missing field's is where it belongs; where
/// serde_path_to_error could not name the last step (`?`: RON had read a
/// field's value and failed before the next, as `count: 1.5` does), the
/// field the error names takes its place, or no path is given. A missing
/// or repeated field is found by the struct around it: the path is the
/// struct's, and the field is added.
fn field_path(read: Option<String>, kind: &ParseErrorKind) -> Option<String> {
    let named = match kind {
        // Found by the struct lacking or repeating it: its path is the
        // struct's.
        ParseErrorKind::MissingField { field, .. } | ParseErrorKind::DuplicateField { field } => {
            return Some(read.map_or_else(|| (*field).to_owned(), |p| format!("{p}.{field}")));
        }
        ParseErrorKind::IntegerOutOfBounds { field }
        | ParseErrorKind::Fraction { field }
        | ParseErrorKind::NameTakesNoValue { field, .. }
        | ParseErrorKind::ChosenAuto { field } => field.as_deref(),
        ParseErrorKind::HierInLeg { leg } => Some(leg.as_str()),
        ParseErrorKind::UnknownField { found } => Some(found.as_str()),
        _ => None,
    };
    let read = read?;
    let (parent, last) = read.rsplit_once('.').map_or(("", read.as_str()), |(p, l)| (p, l));
    if parent.contains('?') {
        return None;
    }
    let join = |field: &str| if parent.is_empty() { field.to_owned() } else { format!("{parent}.{field}") };
    match (last.starts_with('?'), named) {
        (false, _) => Some(read.clone()),
        (true, Some(field)) => Some(join(field)),
        // Inside a struct before any field of it read (`topology: (8, 4)`,
        // a value where a field's name belongs): the struct's field.
        (true, None) if !parent.is_empty() && matches!(kind, ParseErrorKind::Syntax) => Some(parent.to_owned()),
        (true, None) => None,
    }
}

/// The field whose value holds the list element at byte `at` (`groups` in
/// `groups: [[0, -1]]`, `peers` in `peers: [(0, -1)]`): the first field
/// written before a bracket open around it, innermost first (comments and
/// strings are not told apart: a guess for a help, never for a path).
fn list_field(src: &str, at: usize) -> Option<String> {
    let before = src.get(..at)?;
    let mut depth = 0usize;
    for (i, c) in before.char_indices().rev() {
        match c {
            ')' | ']' => depth += 1,
            '(' | '[' if depth > 0 => depth -= 1,
            '(' | '[' => {
                if let Some(field) = field_before(src, i) {
                    return Some(field);
                }
            }
            _ => {}
        }
    }
    None
}

/// The field whose value starts at byte `at` (`channels` in
/// `channels: -5`), when the value directly follows `field:`.
fn field_before(src: &str, at: usize) -> Option<String> {
    let before = src.get(..at)?.trim_end();
    // RON points past a sign (`-5` at `5`).
    let before = before.strip_suffix(['-', '+']).unwrap_or(before).trim_end();
    let before = before.strip_suffix(':')?.trim_end();
    let start = before.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
    let name = before.get(start..)?;
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then(|| name.to_owned())
}

/// What an integer field takes, by its name (`None`: unknown), as a
/// parse error's help says it: `` `count` takes a whole number of at most
/// 18446744073709551615: not negative, no fraction ``, `` `rank_n` takes a
/// whole number from 1 to 1048576: no fraction `` (validation's range,
/// where it holds the field to one). The Python binding's dict errors say
/// the same.
pub fn whole_number_help(field: Option<&str>) -> String {
    let name = field.map_or_else(|| "this field".to_owned(), |f| format!("`{f}`"));
    // Validation holds a count to the bytes its dtype allows, which
    // parsing does not know (`accepted` says the same).
    if field == Some("count") {
        return format!("{name} takes {}: no fraction", whole_number_accepted(field));
    }
    match field.and_then(integer_range) {
        None => format!("{name} takes a whole number: not negative, no fraction"),
        Some((0, max)) => format!("{name} takes a whole number of at most {max}: not negative, no fraction"),
        Some((min, max)) => format!("{name} takes a whole number from {min} to {max}: no fraction"),
    }
}

/// What an integer field accepts, by its name, as [`ParseError::accepted`]
/// says it: `a whole number from 1 to 32`, `a whole number of at most
/// 18446744073709551615`, or `a whole number` (the name unknown); a
/// `count`'s upper end is its dtype's, which parsing does not know. The
/// Python binding's dict errors say the same.
pub fn whole_number_accepted(field: Option<&str>) -> String {
    // Validation holds a count to 1 and the bytes its dtype allows.
    if field == Some("count") {
        return "a whole number from 1, of at most 2^64 - 1 bytes of its dtype".to_owned();
    }
    match field.and_then(integer_range) {
        None => "a whole number".to_owned(),
        Some((0, max)) => format!("a whole number of at most {max}"),
        Some((min, max)) => format!("a whole number from {min} to {max}"),
    }
}

/// The names a spec's field that takes a name is accepted with, by the
/// field's name, listed (`None`: the field takes no name).
pub fn names_of(field: &str) -> Option<String> {
    use ccc_ir::arch::Arch;
    use ccc_ir::enums::{AlgType, OpType};
    use ccc_ir::spec::{Algorithm, Barrier, DType, Leg, ReduceOp};
    let list = |names: &mut dyn Iterator<Item = &'static str>| names.collect::<Vec<_>>().join(", ");
    let algorithms = || list(&mut AlgType::ALL.iter().filter(|a| Algorithm::flat(**a).is_some()).map(|a| a.name()));
    Some(match field {
        "op" => list(&mut OpType::ALL.iter().map(|o| o.name())),
        "dtype" => list(&mut DType::ALL.iter().map(|d| d.name())),
        "reduce" => list(&mut ReduceOp::ALL.iter().map(|r| r.name())),
        "arch" => list(&mut Arch::ALL.iter().map(|a| a.name())),
        "barrier" => list(&mut [Barrier::Host, Barrier::Device].iter().map(|b| b.name())),
        "choices" => "Seed, Wide".to_owned(),
        "algorithm" => format!("{}, Hier((leg: algorithm, ...)), Auto", algorithms()),
        leg if Leg::ALL.iter().any(|l| l.field() == leg) => format!("{}, Auto", algorithms()),
        _ => return None,
    })
}

/// The least and largest values a spec's integer field is accepted with,
/// by its name: validation's range where it holds the field to one,
/// else the field's type's.
fn integer_range(field: &str) -> Option<(u64, u64)> {
    use ccc_ir::spec::{CHANNELS, MAX_RANK_N, SEND_CREDITS};
    let of = |r: std::ops::RangeInclusive<u32>| (u64::from(*r.start()), u64::from(*r.end()));
    match field {
        "count" | "counts" => Some((0, u64::MAX)),
        "rank_n" | "local_rank_n" | "pod_n" => Some(of(1..=MAX_RANK_N)),
        // A rank: below `rank_n`.
        "root" | "peer" | "peers" | "groups" => Some(of(0..=MAX_RANK_N - 1)),
        "channels" => Some(of(CHANNELS)),
        "send_credits" => Some(of(SEND_CREDITS)),
        // The cost model's overrides (`docs/cost-model.md` §2), which
        // validation holds to `OVERRIDE_MAX` (0 is refused where the
        // least is 1).
        f if is_override(f) => Some((ccc_ir::model::override_min(f), ccc_ir::model::OVERRIDE_MAX)),
        _ => None,
    }
}

/// Whether `field` is one of the cost model's overrides (a `model:` field).
fn is_override(field: &str) -> bool {
    field.ends_with("_ns") || field.ends_with("_mbps") || field.ends_with("_melems") || field == "hops_max"
}
