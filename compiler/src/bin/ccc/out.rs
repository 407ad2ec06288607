//! Everything a verb prints on stdout goes through [`emit`].
//!
//! `println!` panics when stdout is closed (`ccc graph ... | head -1`):
//! "failed printing to stdout: Broken pipe" and exit 101. A reader that
//! stops early is not an error of ours: [`emit`] treats a broken pipe as
//! success and stays quiet, and reports any other write error as bad
//! input naming stdout (exit 2).

use crate::Failure;
use std::io::{ErrorKind, Write};

/// Writes `text` to stdout and flushes it.
///
/// # Errors
///
/// A bad-input [`Failure`] naming stdout when the write fails for any
/// reason but a closed reader (a broken pipe is a quiet success).
pub fn emit(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::input(miette::miette!("cannot write to stdout: {e}"))),
    }
}
