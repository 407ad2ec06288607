//! Everything a verb prints on stdout goes through [`emit`]; every file a
//! verb writes besides a compile's output folder (`--svg`, `import -o`)
//! through [`write_new`].
//!
//! `println!` panics when stdout is closed (`ccc graph ... | head -1`):
//! "failed printing to stdout: Broken pipe" and exit 101. A reader that
//! stops early is not an error of ours: [`emit`] treats a broken pipe as
//! success and stays quiet, and reports any other write error as bad
//! input naming stdout (exit 2).

use crate::Failure;
use ccc_compiler::output::{self, NewFileError};
use std::io::{ErrorKind, Write};
use std::path::Path;

/// Writes `text` to stdout and flushes it.
///
/// # Errors
///
/// A bad-input [`Failure`] naming stdout when the write fails for any
/// reason but a closed reader (a broken pipe is a quiet success).
pub fn emit(text: &str) -> Result<(), Failure> {
    // A path or name quoted from the input must not drive the terminal.
    let text = crate::report::escape_for_stdout(text);
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::input(miette::miette!("cannot write to stdout: {e}"))),
    }
}

/// [`emit`] of `text` (`what`: what it is, `this summary`, `the tables`),
/// after this run wrote `written` whole (a compile's folder, an `--svg`
/// file), if anything: a failure to print then says so, so that it does
/// not read as "nothing was written".
///
/// # Errors
///
/// [`emit`]'s, with that help.
pub fn emit_after(text: &str, what: &str, written: Option<&Path>) -> Result<(), Failure> {
    emit(text).map_err(|f| match written {
        Some(path) => Failure::input(miette::miette!(
            help = format!("{} was written whole; only {what} was lost", path.display()),
            "{}",
            f.report
        )),
        None => f,
    })
}

/// Writes `text` to a new file at `path`, whole or not at all
/// ([`output::write_new`]: ccc never overwrites a file, and never leaves
/// half of one).
///
/// # Errors
///
/// A bad-input [`Failure`] naming `path`, with the way forward: it exists,
/// is a folder, its folder is missing or not writable, or the write failed
/// (a full disk).
pub fn write_new(path: &Path, text: &str) -> Result<(), Failure> {
    // A killed ccc's work files go first, said whether the write then
    // succeeds or not.
    report_swept(&output::sweep_work_files(&[path]));
    output::write_new(path, text.as_bytes()).map_err(|e| new_file_failure(path, text, e))
}

/// Says on stderr which work files of dead ccc processes the write
/// removed beside its files ([`output::SweptFile`]).
fn report_swept(swept: &[output::SweptFile]) {
    for s in swept {
        note!(
            "note: removed {} ({}), left by a ccc (process {}) that died while writing it",
            s.path.display(),
            ccc_ir::noun::count(s.bytes, "byte"),
            s.pid
        );
    }
}

/// [`write_new`] of several files, all or none ([`output::write_new_all`]).
///
/// # Errors
///
/// [`write_new`]'s, for the file that failed; nothing is written.
pub fn write_new_all(files: &[(std::path::PathBuf, String)]) -> Result<(), Failure> {
    let borrowed: Vec<(&Path, &[u8])> = files.iter().map(|(p, t)| (p.as_path(), t.as_bytes())).collect();
    let paths: Vec<&Path> = borrowed.iter().map(|&(p, _)| p).collect();
    report_swept(&output::sweep_work_files(&paths));
    output::write_new_all(&borrowed).map_err(|(i, e)| match files.get(i) {
        Some((path, text)) => new_file_failure(path, text, e),
        None => Failure::input(miette::miette!("{e}")),
    })
}

/// The failure of writing `text` to a new file at `path`, with the way
/// forward.
fn new_file_failure(path: &Path, text: &str, e: NewFileError) -> Failure {
    match e {
        NewFileError::Create(e) => {
            // A name like the file meant: an SVG's, or the RON `import` writes.
            let in_folder = if text.starts_with("<svg") || text.starts_with("<?xml") {
                "that is a folder: name a file in it, e.g. FOLDER/plot.svg"
            } else {
                "that is a folder: name a file in it, e.g. FOLDER/program.ron"
            };
            // `new.svg/` names a folder's contents, never a file.
            let slash = path.as_os_str().as_encoded_bytes().ends_with(b"/");
            let help = match e.kind() {
                _ if path.is_dir() => in_folder,
                _ if slash => "a file's name cannot end in `/`: name the file without it",
                ErrorKind::AlreadyExists if std::fs::symlink_metadata(path).is_err() => {
                    "a file of that name beside it is in the way: move it away, or choose another name"
                }
                ErrorKind::AlreadyExists => "ccc never overwrites a file: choose another name, or move that file away",
                // The folder is there (`/proc`): it takes no new file.
                ErrorKind::NotFound if path.parent().is_some_and(|p| p.as_os_str().is_empty() || p.is_dir()) => {
                    "its folder exists but makes no new file (a system folder such as /proc?): name a file in a \
                     folder you can write"
                }
                ErrorKind::NotFound => {
                    "its folder does not exist: create it first, or name a file in an existing folder"
                }
                ErrorKind::PermissionDenied => "you may not write there: name a file in a folder you can write",
                _ => "name a new file in a folder you can write",
            };
            Failure::input(miette::miette!(help = help, "cannot create {}: {e}", path.display()))
        }
        NewFileError::Write(e) => Failure::input(miette::miette!(
            help = "nothing was written (a full disk?); free some space, or name a file on another disk",
            "cannot write {}: {e}",
            path.display()
        )),
    }
}
