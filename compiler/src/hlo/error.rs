//! [`HloError`]: what was wrong in an HLO module, where (line and column of
//! the text), and what would be accepted.

use crate::parse::{LineCol, bound_message};
use std::ops::Range;

/// A module ccc cannot import: not HLO as XLA prints it, or a collective
/// ccc cannot express. It names the line and column, and the instruction or
/// computation where there is one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{start}: {message}")]
pub struct HloError {
    /// What is wrong (naming the instruction or computation).
    pub message: String,
    /// What would be accepted, or how to fix it.
    pub help: String,
    /// Byte offset of the offending text in the module.
    offset: usize,
    /// Its length in bytes (0: a point between tokens).
    len: usize,
    /// Line and column of `offset` (filled in by [`HloError::locate`]).
    pub start: LineCol,
}

impl HloError {
    /// An error at byte `offset`, `len` bytes long (located later). The
    /// message and help are bounded as a spec's parse errors are
    /// ([`bound_message`]: a long token cut to an excerpt, the whole cut
    /// after 1 KiB): they quote the module's text, which a message must
    /// never amplify (an `unexpected ...` quoting the rest of a line was
    /// 6,744 bytes of a 6,920-byte module).
    pub fn at(offset: usize, len: usize, message: impl Into<String>, help: impl Into<String>) -> Self {
        let (message, help) = (bound_message(&message.into()), bound_message(&help.into()));
        HloError { message, help, offset, len, start: LineCol { line: 1, col: 1 } }
    }

    /// The error `by` bytes further on: at its place in a text that has
    /// `by` bytes before the one it was found in.
    #[must_use]
    pub(crate) const fn shifted(mut self, by: usize) -> Self {
        self.offset = self.offset.saturating_add(by);
        self
    }

    /// The error's byte offset in the module.
    pub const fn offset(&self) -> usize {
        self.offset
    }

    /// The byte range of the offending text in the module's source, clamped to it.
    pub fn byte_range(&self, src: &str) -> Range<usize> {
        let start = floor_char(src, self.offset.min(src.len()));
        let end = floor_char(src, self.offset.saturating_add(self.len).min(src.len())).max(start);
        start..end
    }

    /// Fills in the line and column of the error in `src` (1-based; columns in chars).
    #[must_use]
    pub fn locate(mut self, src: &str) -> Self {
        let at = self.byte_range(src).start;
        let before = src.get(..at).unwrap_or("");
        let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |nl| nl + 1);
        let col = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
        self.start = LineCol { line, col };
        self
    }
}

/// The largest char boundary of `src` at or before `at`.
fn floor_char(src: &str, mut at: usize) -> usize {
    while at > 0 && !src.is_char_boundary(at) {
        at -= 1;
    }
    at
}
