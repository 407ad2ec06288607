//! Scanning source text: line/column positions, tokens, and the trivia (whitespace, comments, attributes) between them.

use ron::error::Position;

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

/// Where the first `/*` that is never closed starts, skipping string
/// literals and `//` comments on the way; `None` when every comment closes.
pub(super) fn unclosed_comment(src: &str) -> Option<LineCol> {
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

/// Calls `each` with the byte offset and character of every bracket of
/// `src` outside string literals and comments, in order, until it
/// returns `false`.
fn brackets(src: &str, mut each: impl FnMut(usize, char) -> bool) {
    let mut rest = src;
    while let Some(at) = rest.find(['"', '/', '(', '[', '{', ')', ']', '}']) {
        let Some(here) = rest.get(at..) else { return };
        let offset = src.len() - here.len();
        rest = if here.starts_with("/*") {
            skip_block_comment(here).unwrap_or("")
        } else if let Some(after) = here.strip_prefix("//") {
            after.find('\n').map_or("", |nl| after.get(nl..).unwrap_or(""))
        } else if let Some(body) = here.strip_prefix('"') {
            let token = token_at(here);
            if token.is_empty() { body } else { here.get(token.len()..).unwrap_or("") }
        } else {
            match here.chars().next() {
                Some(c) if "([{)]}".contains(c) && !each(offset, c) => return,
                _ => {}
            }
            here.get(1..).unwrap_or("")
        };
    }
}

/// The innermost bracket (`(`, `[` or `{`) left open at the end of
/// `src`: where it starts and how it reads, with the name written right
/// before it (`Collective(`, or `(` alone), skipping string literals and
/// comments; `None` when every bracket closes.
pub(super) fn unclosed_bracket(src: &str) -> Option<(LineCol, &str)> {
    let mut open: Vec<usize> = Vec::new();
    brackets(src, |offset, c| {
        if "([{".contains(c) {
            open.push(offset);
        } else {
            open.pop();
        }
        true
    });
    let at = *open.last()?;
    let name = src.get(..at)?.trim_end();
    let start = name.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
    let name = name.get(start..).unwrap_or("");
    // From the name, where there is one; else the bracket.
    let from = if name.is_empty() { at } else { start };
    Some((advance(LineCol { line: 1, col: 1 }, src.get(..from)?), src.get(from..=at)?))
}

pub(super) fn to_line_col(p: Position) -> LineCol {
    LineCol { line: p.line.max(1), col: p.col.max(1) }
}

pub(super) fn pos_le(a: Position, b: LineCol) -> bool {
    (a.line, a.col) <= (b.line, b.col)
}

/// The byte offset of a line/char-column position, clamped into `src`.
pub(super) fn byte_offset(src: &str, pos: LineCol) -> usize {
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
pub(super) fn skip_insignificant(src: &str, pos: Position) -> LineCol {
    let pos = to_line_col(pos);
    let offset = byte_offset(src, pos);
    let rest = src.get(offset..).unwrap_or("");
    let skipped = rest.len() - skip_trivia(rest, false).len();
    advance(pos, src.get(offset..offset + skipped).unwrap_or(""))
}

/// The position after `text`, starting from `pos`.
pub(super) fn advance(mut pos: LineCol, text: &str) -> LineCol {
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
pub(super) fn token_at(s: &str) -> &str {
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
/// `s` without what ends it that RON skips: whitespace, a `// ...` comment
/// on its last line, a `/* ... */` comment (nested ones matched), any
/// number of them. What comes before an error's position reads as the
/// value it follows (`Auto /* the model */ (Ring)` ends in `Auto`).
pub(super) fn trim_trailing_trivia(mut s: &str) -> &str {
    loop {
        let trimmed = s.trim_end();
        // A line comment on the last line (a spec's text holds no string
        // with `//` in it where this is asked).
        let line_start = trimmed.rfind('\n').map_or(0, |nl| nl + 1);
        if let Some(at) = trimmed.get(line_start..).and_then(|line| line.find("//")) {
            s = trimmed.get(..line_start + at).unwrap_or("");
            continue;
        }
        if trimmed.ends_with("*/") {
            // Back to the `/*` that opens it, nested comments matched.
            let (mut depth, mut at) = (0usize, trimmed.len());
            let bytes = trimmed.as_bytes();
            let opened = loop {
                if at < 2 {
                    break None;
                }
                match (bytes.get(at - 2), bytes.get(at - 1)) {
                    (Some(b'*'), Some(b'/')) => {
                        depth += 1;
                        at -= 2;
                    }
                    (Some(b'/'), Some(b'*')) => {
                        depth -= 1;
                        at -= 2;
                        if depth == 0 {
                            break Some(at);
                        }
                    }
                    _ => at -= 1,
                }
            };
            match opened {
                Some(at) => s = trimmed.get(..at).unwrap_or(""),
                None => return trimmed,
            }
            continue;
        }
        return trimmed;
    }
}

pub(super) fn skip_trivia(mut s: &str, attributes: bool) -> &str {
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
