//! parse: RON text into a [`Program`], with line/column errors.
//!
//! A spec file holds either one `Collective(...)` (the struct name is
//! optional, as RON allows) or a `Program(collectives: [...])`. Which one is
//! decided by the first significant token — whitespace, `//` and `/* */`
//! comments and `#![enable(...)]` attributes are skipped — so that an error
//! inside a program is reported against the program's schema and not as
//! "expected `Collective`". `implicit_some` is on, so `root: 0` and
//! `groups: [[...]]` need no `Some(...)`.
//!
//! Positions are lost once parsing succeeds (RON has no `Spanned<T>`): later
//! passes locate problems by field path instead.
//!
//! A leading UTF-8 byte-order mark ([`BOM`]) is skipped: some editors write
//! one, and it is not part of the spec. Positions count from the char after
//! it, as an editor shows them.
//!
//! Errors stay small whatever the input: a token longer than
//! [`QUOTE_MAX_CHARS`] is quoted as an excerpt with its length
//! (`` `aaaa…` (4194304 bytes) ``), and a message is cut after
//! [`MESSAGE_MAX_BYTES`].

use ccc_ir::spec::{Collective, Program};
use ron::error::{Error as RonError, Position};
use ron::extensions::Extensions;
use std::ops::Range;

/// The byte-order mark some editors write at the start of a UTF-8 file.
pub const BOM: char = '\u{feff}';

/// The most chars of a token an error quotes; a longer token is quoted as
/// its first chars, `…` and its length in bytes.
pub const QUOTE_MAX_CHARS: usize = 48;

/// The most bytes of an error message kept (a message can quote a value of
/// the input, which can be large); past it the message ends with `…`.
pub const MESSAGE_MAX_BYTES: usize = 1024;

/// `src` without one leading [`BOM`].
pub fn strip_bom(src: &str) -> &str {
    src.strip_prefix(BOM).unwrap_or(src)
}

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

/// What the file held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecForm {
    /// One `Collective(...)` (or an anonymous `(...)`).
    Collective,
    /// A `Program(collectives: [...])`.
    Program,
}

impl SpecForm {
    /// The struct name the file is parsed as.
    pub const fn struct_name(self) -> &'static str {
        match self {
            SpecForm::Collective => "Collective",
            SpecForm::Program => "Program",
        }
    }
}

/// A parsed spec: always a [`Program`] (a lone collective becomes a program
/// of one), and the form the file was written in (for error paths).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedSpec {
    /// The collectives.
    pub program: Program,
    /// How the file was written.
    pub form: SpecForm,
}

/// A position in the source: 1-based line, 1-based column counted in chars
/// (as RON counts them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineCol {
    /// Line, from 1.
    pub line: usize,
    /// Column in chars, from 1.
    pub col: usize,
}

impl std::fmt::Display for LineCol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
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
    /// Positions count from after a leading [`BOM`], as [`parse`] counts
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
        field: String,
        /// The struct it belongs to, when RON knows it.
        outer: Option<String>,
    },
    /// A field given twice.
    DuplicateField {
        /// The field's name.
        field: String,
    },
    /// A struct written with the wrong name (`Colective(...)`).
    WrongStructName {
        /// The name the schema expects.
        expected: String,
        /// The name as written.
        found: String,
    },
    /// Text after the complete spec.
    TrailingCharacters,
    /// The file ends in the middle of the spec.
    UnexpectedEof,
    /// A missing `,` between two fields or elements.
    MissingComma,
    /// A `/* */` comment that is never closed; the span marks its `/*`.
    UnclosedComment,
    /// Any other syntax or type error (a string where a number belongs, an
    /// unclosed bracket, ...).
    Syntax,
}

/// A spec that is not well-formed RON of the spec schema.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParseError {
    /// RON's description of the problem.
    pub message: String,
    /// The kind of problem, with its values.
    pub kind: ParseErrorKind,
    /// Where it is.
    pub span: SourceSpan,
    /// The form the file was read as (from its first token).
    pub form: SpecForm,
}

impl ParseError {
    /// A short label for the offending token.
    pub fn label(&self) -> String {
        match &self.kind {
            ParseErrorKind::UnknownField { found } => format!("unknown field {}", quote(found)),
            ParseErrorKind::UnknownVariant { found } => format!("unknown variant {}", quote(found)),
            ParseErrorKind::MissingField { field, .. } => format!("closed here without `{field}`"),
            ParseErrorKind::DuplicateField { field } => format!("`{field}` given again here"),
            ParseErrorKind::WrongStructName { expected, .. } => format!("expected `{expected}` here"),
            ParseErrorKind::TrailingCharacters => "unexpected text after the spec".to_owned(),
            ParseErrorKind::UnexpectedEof => "the file ends here".to_owned(),
            ParseErrorKind::MissingComma => "a `,` is missing before this".to_owned(),
            ParseErrorKind::UnclosedComment => "this comment is never closed".to_owned(),
            ParseErrorKind::Syntax => {
                // RON's messages start with a capital (`Expected integer`).
                let mut chars = self.message.chars();
                chars.next().map_or_else(String::new, |c| c.to_lowercase().chain(chars).collect())
            }
        }
    }

    /// A hint on how to fix it, where one is more useful than RON's message.
    pub fn help(&self) -> Option<&'static str> {
        match &self.kind {
            ParseErrorKind::WrongStructName { expected, .. }
                if expected == SpecForm::Collective.struct_name() || expected == SpecForm::Program.struct_name() =>
            {
                Some(
                    "a spec file holds one `Collective(...)` (the name may be left out) or a `Program(collectives: [...])`",
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

/// The RON options every spec is read with: `implicit_some` on.
fn options() -> ron::Options {
    ron::Options::default().with_default_extension(Extensions::IMPLICIT_SOME)
}

/// Parses a spec file's text.
///
/// # Errors
///
/// [`ParseError`] with RON's message and the span of the offending token
/// when the text is not RON, or not of the spec schema (unknown field or
/// variant, missing field, wrong struct name, trailing text, ...).
pub fn parse(src: &str) -> Result<ParsedSpec, ParseError> {
    let src = strip_bom(src);
    let form = detect_form(src);
    let opts = options();
    let program = match form {
        SpecForm::Collective => opts.from_str::<Collective>(src).map(Program::from),
        SpecForm::Program => opts.from_str::<Program>(src),
    }
    .map_err(|e| error_from_ron(src, form, e))?;
    Ok(ParsedSpec { program, form })
}

fn error_from_ron(src: &str, form: SpecForm, e: ron::error::SpannedError) -> ParseError {
    let kind = match &e.code {
        RonError::NoSuchStructField { found, .. } => ParseErrorKind::UnknownField { found: found.clone() },
        RonError::NoSuchEnumVariant { found, .. } => ParseErrorKind::UnknownVariant { found: found.clone() },
        RonError::MissingStructField { field, outer } => {
            ParseErrorKind::MissingField { field: (*field).to_owned(), outer: outer.clone() }
        }
        RonError::DuplicateStructField { field, .. } => ParseErrorKind::DuplicateField { field: (*field).to_owned() },
        RonError::ExpectedDifferentStructName { expected, found } => {
            ParseErrorKind::WrongStructName { expected: (*expected).to_owned(), found: found.clone() }
        }
        RonError::TrailingCharacters => ParseErrorKind::TrailingCharacters,
        RonError::Eof => ParseErrorKind::UnexpectedEof,
        RonError::ExpectedComma => ParseErrorKind::MissingComma,
        RonError::UnclosedBlockComment => ParseErrorKind::UnclosedComment,
        _ => ParseErrorKind::Syntax,
    };
    let message = bound_message(&e.code.to_string());
    // RON points inside the comment: mark the `/*` that opens it instead.
    if kind == ParseErrorKind::UnclosedComment
        && let Some(start) = unclosed_comment(src)
    {
        let end = LineCol { line: start.line, col: start.col + 2 };
        return ParseError { message, kind, span: SourceSpan { start, end }, form };
    }
    // RON's span of a value error starts on the whitespace (or comment)
    // before the token: advance it to the token itself.
    let start = skip_insignificant(src, e.span.start);
    let mut end = if pos_le(e.span.end, start) { start } else { to_line_col(e.span.end) };
    // A value of the wrong type gets an empty span at its start: mark the
    // whole token (`"4M"`, `-1`, `Ring`) instead of a caret.
    if kind == ParseErrorKind::Syntax && end == start {
        let rest = src.get(byte_offset(src, start)..).unwrap_or("");
        end = advance(start, token_at(rest));
    }
    ParseError { message, kind, span: SourceSpan { start, end }, form }
}

/// Where the first `/*` that is never closed starts, skipping string
/// literals and `//` comments on the way; `None` when every comment closes.
fn unclosed_comment(src: &str) -> Option<LineCol> {
    let mut rest = src;
    loop {
        let at = rest.find(['"', '/'])?;
        let here = rest.get(at..)?;
        rest = if here.starts_with("/*") {
            match skip_block_comment(here) {
                Some(after) => after,
                None => return Some(advance(LineCol { line: 1, col: 1 }, src.get(..src.len() - here.len())?)),
            }
        } else if let Some(after) = here.strip_prefix("//") {
            after.find('\n').map_or("", |nl| after.get(nl..).unwrap_or(""))
        } else if let Some(body) = here.strip_prefix('"') {
            let token = token_at(here);
            if token.is_empty() { body } else { here.get(token.len()..)? }
        } else {
            here.get(1..)?
        };
    }
}

fn to_line_col(p: Position) -> LineCol {
    LineCol { line: p.line.max(1), col: p.col.max(1) }
}

fn pos_le(a: Position, b: LineCol) -> bool {
    (a.line, a.col) <= (b.line, b.col)
}

/// The byte offset of a line/char-column position, clamped into `src`.
fn byte_offset(src: &str, pos: LineCol) -> usize {
    let mut line_start = 0;
    for _ in 1..pos.line {
        match src.get(line_start..).and_then(|rest| rest.find('\n')) {
            Some(nl) => line_start += nl + 1,
            None => return src.len(),
        }
    }
    let line = src.get(line_start..).unwrap_or("");
    let line_len = line.find('\n').unwrap_or(line.len());
    let within = line.char_indices().nth(pos.col.saturating_sub(1)).map_or(line.len(), |(i, _)| i).min(line_len);
    line_start + within
}

/// Moves a position forward past whitespace and comments.
fn skip_insignificant(src: &str, pos: Position) -> LineCol {
    let pos = to_line_col(pos);
    let offset = byte_offset(src, pos);
    let rest = src.get(offset..).unwrap_or("");
    let skipped = rest.len() - skip_trivia(rest, false).len();
    advance(pos, src.get(offset..offset + skipped).unwrap_or(""))
}

/// The position after `text`, starting from `pos`.
fn advance(mut pos: LineCol, text: &str) -> LineCol {
    for c in text.chars() {
        if c == '\n' {
            pos.line += 1;
            pos.col = 1;
        } else {
            pos.col += 1;
        }
    }
    pos
}

/// The token `s` starts with: a string literal (when closed on its line) or
/// a run of identifier and number characters; empty for anything else.
fn token_at(s: &str) -> &str {
    if let Some(body) = s.strip_prefix('"') {
        let mut escaped = false;
        for (i, c) in body.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => return s.get(..i + 2).unwrap_or(""),
                '\n' => return "",
                _ => escaped = false,
            }
        }
        return "";
    }
    let len = s.find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '+' | '-'))).unwrap_or(s.len());
    s.get(..len).unwrap_or("")
}

/// Skips whitespace, `//` and (nested) `/* */` comments, and, when
/// `attributes` is set, `#![...]` attributes.
fn skip_trivia(mut s: &str, attributes: bool) -> &str {
    loop {
        let trimmed = s.trim_start();
        if let Some(after) = trimmed.strip_prefix("//") {
            s = after.find('\n').map_or("", |nl| after.get(nl..).unwrap_or(""));
        } else if trimmed.starts_with("/*") {
            match skip_block_comment(trimmed) {
                Some(after) => s = after,
                None => return trimmed,
            }
        } else if attributes && trimmed.starts_with("#!") {
            match skip_attribute(trimmed) {
                Some(after) => s = after,
                None => return trimmed,
            }
        } else {
            return trimmed;
        }
    }
}

/// `s` starts with `/*`; returns the text after the matching `*/`.
fn skip_block_comment(s: &str) -> Option<&str> {
    let mut depth = 0usize;
    let mut iter = s.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        match (c, iter.peek().map(|&(_, n)| n)) {
            ('/', Some('*')) => {
                depth += 1;
                iter.next();
            }
            ('*', Some('/')) => {
                depth = depth.saturating_sub(1);
                iter.next();
                if depth == 0 {
                    return s.get(i + 2..);
                }
            }
            _ => {}
        }
    }
    None
}

/// `s` starts with `#!`; returns the text after the attribute's closing `]`.
fn skip_attribute(s: &str) -> Option<&str> {
    let body = s.strip_prefix("#!")?.trim_start().strip_prefix('[')?;
    let mut depth = 1usize;
    for (i, c) in body.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return body.get(i + 1..);
                }
            }
            _ => {}
        }
    }
    None
}

/// The form of a spec, from its first significant token: the identifier
/// `Program` makes it a program, anything else a collective.
pub fn detect_form(src: &str) -> SpecForm {
    let rest = skip_trivia(src, true);
    let ident_len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
    if rest.get(..ident_len) == Some("Program") { SpecForm::Program } else { SpecForm::Collective }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccc_ir::enums::{AlgType, OpType};
    use ccc_ir::spec::{Algorithm, ReduceOp};

    const GOOD: &str = "Collective(
    op: AllReduce,
    dtype: Bf16,
    reduce: Add,
    count: 4194304,
    arch: Cayman,
    topology: (rank_n: 32, local_rank_n: 16),
    channels: 4,
    algorithm: Hier((intra_reduce_scatter: Ring, inter_all_reduce: SingleCycleRing, intra_all_gather: Kangaring)),
)
";

    fn err(src: &str) -> ParseError {
        parse(src).unwrap_err()
    }

    fn lc(line: usize, col: usize) -> LineCol {
        LineCol { line, col }
    }

    #[test]
    fn parses_a_collective() {
        let spec = parse(GOOD).unwrap();
        assert_eq!(spec.form, SpecForm::Collective);
        assert_eq!(spec.program.collectives.len(), 1);
        let c = &spec.program.collectives[0];
        assert_eq!(c.op, OpType::AllReduce);
        assert_eq!(c.reduce, Some(ReduceOp::Add));
        assert_eq!(c.topology.pod_n, 1);
        match &c.algorithm {
            Algorithm::Hier(legs) => assert_eq!(legs.inter_all_reduce, Some(AlgType::SingleCycleRing)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_struct_name_is_optional() {
        let spec = parse(GOOD.trim_start_matches("Collective")).unwrap();
        assert_eq!(spec.form, SpecForm::Collective);
    }

    #[test]
    fn implicit_some_for_root_and_groups() {
        let src = GOOD.replace("channels: 4,", "channels: 4, root: 0, groups: [[0, 1], [2, 3]],");
        let c = &parse(&src).unwrap().program.collectives[0];
        assert_eq!(c.root, Some(0));
        assert_eq!(c.groups, Some(vec![vec![0, 1], vec![2, 3]]));
    }

    #[test]
    fn parses_a_program_after_comments_and_attributes() {
        let src = format!(
            "// a model\n/* two /* nested */ collectives */\n#![enable(implicit_some)]\n  Program(collectives: [{g}, {g}])",
            g = GOOD.trim()
        );
        let spec = parse(&src).unwrap();
        assert_eq!(spec.form, SpecForm::Program);
        assert_eq!(spec.program.collectives.len(), 2);
    }

    #[test]
    fn detect_form_reads_the_first_token_only() {
        assert_eq!(detect_form("Program(collectives: [])"), SpecForm::Program);
        assert_eq!(detect_form("  // x\nProgram (collectives: [])"), SpecForm::Program);
        assert_eq!(detect_form("Programs(collectives: [])"), SpecForm::Collective);
        assert_eq!(detect_form("(op: AllReduce)"), SpecForm::Collective);
        assert_eq!(detect_form("/* unterminated"), SpecForm::Collective);
        assert_eq!(detect_form("#![enable(implicit_some"), SpecForm::Collective);
        assert_eq!(detect_form(""), SpecForm::Collective);
    }

    #[test]
    fn a_wrong_struct_name_is_an_error() {
        let e = err(&GOOD.replacen("Collective", "Colective", 1));
        assert_eq!(
            e.kind,
            ParseErrorKind::WrongStructName { expected: "Collective".into(), found: "Colective".into() }
        );
        assert_eq!(e.span, SourceSpan { start: lc(1, 1), end: lc(1, 10) });
        assert!(e.help().is_some());
        let e = err(&GOOD.replace("topology: (", "topology: Topolgy("));
        assert!(matches!(e.kind, ParseErrorKind::WrongStructName { .. }), "{e:?}");
        // A program's collectives are checked too.
        let e = err(&format!("Program(collectives: [{}])", GOOD.replacen("Collective", "Colective", 1).trim()));
        assert_eq!(e.form, SpecForm::Program);
        assert!(matches!(e.kind, ParseErrorKind::WrongStructName { .. }), "{e:?}");
    }

    #[test]
    fn unknown_field_spans_the_identifier() {
        let e = err(&GOOD.replace("algorithm:", "algoritm:"));
        assert_eq!(e.kind, ParseErrorKind::UnknownField { found: "algoritm".into() });
        assert_eq!(e.span, SourceSpan { start: lc(9, 5), end: lc(9, 13) });
        assert!(e.message.contains("`algorithm`"), "{}", e.message);
    }

    #[test]
    fn unknown_variant() {
        let e = err(&GOOD.replace("op: AllReduce", "op: AllReduc"));
        assert_eq!(e.kind, ParseErrorKind::UnknownVariant { found: "AllReduc".into() });
        assert_eq!(e.span, SourceSpan { start: lc(2, 9), end: lc(2, 17) });
    }

    #[test]
    fn value_error_span_starts_on_the_token() {
        let src = GOOD.replace("count: 4194304", "count:    x");
        let e = err(&src);
        assert_eq!(e.kind, ParseErrorKind::Syntax);
        assert_eq!(e.span, SourceSpan { start: lc(5, 15), end: lc(5, 16) });
        assert_eq!(&src[e.span.byte_range(&src)], "x");
        assert_eq!(e.label(), "expected integer");
        // Across a comment and a line break too.
        let src = GOOD.replace("count: 4194304", "count: /* c */\n  \"lots\"");
        let e = err(&src);
        assert_eq!(e.span.start, lc(6, 3));
        assert_eq!(&src[e.span.byte_range(&src)], "\"lots\"");
        // A string with escapes, and one not closed on its line.
        assert_eq!(token_at(r#""a\"b" x"#), r#""a\"b""#);
        assert_eq!(token_at("\"open\nx\""), "");
        assert_eq!(token_at("-1,"), "-1");
        assert_eq!(token_at("éx€ "), "éx");
        assert_eq!(token_at("(x"), "");
    }

    #[test]
    fn missing_comma_and_missing_field() {
        let e = err(&GOOD.replace("count: 4194304,", "count: 4194304"));
        assert_eq!(e.message, "Expected comma");
        assert_eq!(e.kind, ParseErrorKind::MissingComma);
        assert_eq!(e.span.start, lc(6, 5));
        let e = err(&GOOD.replace("    channels: 4,\n", ""));
        assert_eq!(e.kind, ParseErrorKind::MissingField { field: "channels".into(), outer: Some("Collective".into()) });
        assert!(e.help().is_some());
        assert_eq!(e.span.start, lc(9, 1));
        let e = err(&GOOD.replace("rank_n: 32, ", ""));
        assert_eq!(e.kind, ParseErrorKind::MissingField { field: "rank_n".into(), outer: Some("Topology".into()) });
        assert!(e.help().unwrap().contains("rank_n"));
    }

    #[test]
    fn trailing_text_and_empty_input() {
        let e = err(&format!("{GOOD} extra"));
        assert_eq!(e.kind, ParseErrorKind::TrailingCharacters);
        let e = err("");
        assert_eq!(e.span.start, lc(1, 1));
        assert_eq!(e.span.byte_range(""), 0..0);
    }

    #[test]
    fn byte_range_counts_chars_and_clamps() {
        let src = "é€x\nab";
        let span = SourceSpan { start: lc(1, 3), end: lc(1, 4) };
        assert_eq!(&src[span.byte_range(src)], "x");
        let span = SourceSpan { start: lc(2, 1), end: lc(2, 99) };
        assert_eq!(&src[span.byte_range(src)], "ab");
        let span = SourceSpan { start: lc(1, 50), end: lc(7, 1) };
        let r = span.byte_range(src);
        assert!(src.get(r).is_some());
        let span = SourceSpan { start: lc(0, 0), end: lc(0, 0) };
        assert_eq!(span.byte_range(src), 0..0);
    }

    #[test]
    fn never_panics_on_odd_input() {
        let samples = [
            "(",
            ")",
            "é",
            "Collective(op: \"€\u{1F600}\", count: ",
            "Program(",
            "Program(collectives: [(op: AllReduce, count: é)])",
            "/*",
            "#![",
            "\u{feff}Collective()",
            "\r\n\r\n  x",
            "Collective(op: AllReduce,\n\tdtype: Bf16,\n\tcount: -1)",
        ];
        for s in samples {
            let e = err(s);
            let r = e.span.byte_range(s);
            assert!(s.get(r).is_some(), "{s:?} {e:?}");
        }
        // Truncating a good spec at every char boundary never panics.
        for (i, _) in GOOD.char_indices() {
            let s = &GOOD[..i];
            if let Err(e) = parse(s) {
                assert!(s.get(e.span.byte_range(s)).is_some());
            }
        }
    }

    #[test]
    fn a_leading_bom_is_skipped_and_columns_stay_right() {
        let src = format!("{BOM}{GOOD}");
        assert_eq!(parse(&src).unwrap().program, parse(GOOD).unwrap().program);
        // An error on line 1 is at the column an editor shows.
        let src = format!("{BOM}Colective(op: AllReduce)");
        let e = err(&src);
        assert_eq!(e.span, SourceSpan { start: lc(1, 1), end: lc(1, 10) });
        assert_eq!(&src[e.span.byte_range(&src)], "Colective");
        // Only a leading BOM: one elsewhere is an error.
        let e = err(&GOOD.replace("op: AllReduce", "op: \u{feff}AllReduce"));
        assert_eq!(e.span.start, lc(2, 9));
    }

    #[test]
    fn an_unclosed_comment_is_marked_at_its_opening() {
        let src = "Collective(\n  op: AllReduce, /* never closed\n  dtype: F32,\n";
        let e = err(src);
        assert_eq!(e.kind, ParseErrorKind::UnclosedComment);
        assert_eq!(e.span, SourceSpan { start: lc(2, 18), end: lc(2, 20) });
        assert_eq!(&src[e.span.byte_range(src)], "/*");
        assert!(e.help().is_some());
        // The outer of two nested comments, after a closed one and a `//`.
        let src = "// a /* b\n/* closed */ (op: AllReduce, /* x /* y */ z\n";
        let e = err(src);
        assert_eq!(e.kind, ParseErrorKind::UnclosedComment);
        assert_eq!(e.span.start, lc(2, 30));
        // A `/*` in a string opens nothing.
        assert_eq!(unclosed_comment("\"/*\" /* x"), Some(lc(1, 6)));
        assert_eq!(unclosed_comment("/* a */ b"), None);
    }

    #[test]
    fn long_tokens_are_quoted_as_an_excerpt_with_their_length() {
        let long = "a".repeat(1 << 20);
        for src in [
            GOOD.replace("op: AllReduce", &format!("op: {long}")),
            GOOD.replace("dtype:", &format!("{long}: 1,\n dtype:")),
            GOOD.replace("count: 4194304", &format!("count: 1{long}")),
            GOOD.replace("op: AllReduce", &format!("op: \"{long}\"")),
            GOOD.replacen("Collective", &long, 1),
        ] {
            let e = err(&src);
            assert!(e.message.len() <= MESSAGE_MAX_BYTES + 64, "{}", e.message.len());
            assert!(e.label().len() <= MESSAGE_MAX_BYTES + 64, "{}", e.label().len());
            assert!(!e.message.contains(&"a".repeat(QUOTE_MAX_CHARS + 2)), "{}", e.message);
        }
        let e = err(&GOOD.replace("op: AllReduce", &format!("op: {long}")));
        assert_eq!(e.label(), format!("unknown variant `{}…` ({} bytes)", &long[..QUOTE_MAX_CHARS], long.len()));
        assert!(e.message.contains(&format!("…` ({} bytes)", long.len())), "{}", e.message);
        assert_eq!(quote("Ring"), "`Ring`");
        assert_eq!(bound_message("short `words` stay"), "short `words` stay");
        let spaced = "a ".repeat(1 << 20);
        let bounded = bound_message(&spaced);
        assert!(
            bounded.len() < MESSAGE_MAX_BYTES + 64 && bounded.ends_with(&format!("({} bytes in all)", spaced.len()))
        );
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(s in "\\PC{0,120}") {
            if let Err(e) = parse(&s) {
                proptest::prop_assert!(s.get(e.span.byte_range(&s)).is_some());
            }
        }

        #[test]
        fn edited_specs_never_panic(at in 0usize..400, cut in 0usize..6, insert in "[ -~é€\n]{0,4}") {
            let chars: Vec<char> = GOOD.chars().collect();
            let at = at.min(chars.len());
            let end = (at + cut).min(chars.len());
            let s: String = chars[..at].iter().copied().chain(insert.chars()).chain(chars[end..].iter().copied()).collect();
            if let Err(e) = parse(&s) {
                let range = e.span.byte_range(&s);
                proptest::prop_assert!(s.get(range).is_some());
                proptest::prop_assert!(e.span.start <= e.span.end);
            }
        }
    }
}
