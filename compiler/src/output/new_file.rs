//! Writing one new file (a plot, an imported program) whole or not at all, never over another.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Why [`write_new`] wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum NewFileError {
    /// The file could not be created: something stands at its path (a
    /// file, a folder, a symbolic link, even a dangling one), or its folder
    /// is missing or not writable.
    #[error("{0}")]
    Create(#[source] io::Error),
    /// Its bytes could not be written (a full disk).
    #[error("{0}")]
    Write(#[source] io::Error),
}

/// How the files ccc writes through [`write_new`] open: a plot (SVG) and
/// a program `ccc import` wrote. A dead ccc's work file beside a new file
/// that holds the start of one of them, or nothing (it was killed before
/// writing), is ccc's to remove ([`SweptFile`]); any other is left.
pub const OPENINGS: [&str; 2] = ["<svg", crate::hlo::emit::OPENING];

/// A work file of a dead ccc removed beside a new file before it was
/// written: a process killed between making it and placing it left it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweptFile {
    /// The work file.
    pub path: PathBuf,
    /// The process that made it (named in its name), no longer running.
    pub pid: u32,
    /// Its size.
    pub bytes: u64,
}

/// Writes `bytes` to a new file at `path`, whole or not at all.
///
/// The bytes go to a sibling `.NAME.ccc-tmp-PID` first; once they are all
/// there and synced, that file takes the name `path` in one step that
/// fails if `path` exists (`renameat2(RENAME_NOREPLACE)`, or a hard link
/// where the file system has no such rename). On any failure the sibling
/// is removed and `path` is as it was: ccc never overwrites a file, and
/// never leaves half of one.
///
/// A process killed before placing its file leaves its work file: a
/// caller sweeps those first ([`sweep_work_files`]), and says what went.
///
/// # Errors
///
/// [`NewFileError`]; nothing is left behind.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<(), NewFileError> {
    write_new_all(&[(path, bytes)]).map_err(|(_, e)| e)
}

/// Removes the work files a dead ccc left beside each of `paths` for that
/// name ([`SweptFile`]): `.NAME.ccc-tmp-PID` of another process that no
/// longer runs, a plain file of one name holding nothing or the start of
/// what ccc writes ([`OPENINGS`]); anything else is left. Returns what
/// went, to be said. Called before [`write_new`] or [`write_new_all`],
/// whether or not the write then succeeds.
pub fn sweep_work_files(paths: &[&Path]) -> Vec<SweptFile> {
    let mut swept = Vec::new();
    for path in paths {
        sweep_beside(path, &mut swept);
    }
    swept
}

/// [`write_new`] of several files, all or none: every file is refused
/// first if anything stands at its path, then each is written whole to its
/// sibling work file, then each work file takes its name. On a failure
/// the files placed so far and the work files go again, and nothing is
/// left (a process killed while they take their names, a few renames,
/// leaves those placed; killed before, only work files).
///
/// # Errors
///
/// The position of the file that failed and why ([`NewFileError`]);
/// nothing is left behind.
pub fn write_new_all(files: &[(&Path, &[u8])]) -> Result<(), (usize, NewFileError)> {
    // Refuse what stands at any path before writing anything beside it.
    for (i, &(path, _)) in files.iter().enumerate() {
        if let Some(e) = standing(path) {
            return Err((i, e));
        }
    }
    let mut tmps: Vec<PathBuf> = Vec::with_capacity(files.len());
    let remove = |paths: &[PathBuf]| {
        for p in paths {
            let _ = fs::remove_file(p);
        }
    };
    for (i, &(path, bytes)) in files.iter().enumerate() {
        match write_work_file(path, bytes) {
            Ok(tmp) => tmps.push(tmp),
            Err(e) => {
                remove(&tmps);
                return Err((i, e));
            }
        }
    }
    for (i, (&(path, _), tmp)) in files.iter().zip(&tmps).enumerate() {
        if let Err(e) = place(tmp, path) {
            remove(tmps.get(i..).unwrap_or_default());
            let placed: Vec<PathBuf> = files.iter().take(i).map(|&(p, _)| p.to_path_buf()).collect();
            remove(&placed);
            // Another writer took the name since it was looked at: said as
            // what stands there now, as when it stood there before.
            let e = match e.kind() {
                io::ErrorKind::AlreadyExists => standing(path).unwrap_or(NewFileError::Create(e)),
                _ => NewFileError::Create(e),
            };
            return Err((i, e));
        }
    }
    Ok(())
}

/// Removes the work files beside `path` that a dead ccc made for it
/// ([`sibling`]'s names, of another process that no longer runs): plain
/// files of one name that hold nothing or the start of what ccc writes
/// ([`OPENINGS`]). Each removed is added to `out`; anything else is left.
fn sweep_beside(path: &Path, out: &mut Vec<SweptFile>) {
    let Some(name) = path.file_name() else { return };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Ok(entries) = fs::read_dir(dir) else { return };
    let names = WorkNames::of(name);
    let mut found: Vec<(PathBuf, u32)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let pid = names.pid(&e.file_name())?;
            (pid != std::process::id() && !super::place::alive(pid)).then(|| (e.path(), pid))
        })
        .collect();
    found.sort();
    for (work, pid) in found {
        let Ok(meta) = fs::symlink_metadata(&work) else { continue };
        if !meta.is_file() || super::place::linked_elsewhere(&meta) || !opens_as_ccc_writes(&work, meta.len()) {
            continue;
        }
        if fs::remove_file(&work).is_ok() {
            out.push(SweptFile { path: work, pid, bytes: meta.len() });
        }
    }
}

/// The two forms of the work file names [`sibling`] gives a file named
/// NAME, worked out once for a folder's entries: `.NAME.ccc-tmp-` before
/// the PID, or `.ccc-tmp-` before it and `-HASH` after, HASH NAME's.
struct WorkNames {
    long: Vec<u8>,
    short: String,
    tail: String,
}

impl WorkNames {
    fn of(name: &std::ffi::OsStr) -> WorkNames {
        let short = format!(".{}-", super::TMP_TAG);
        let mut long = b".".to_vec();
        long.extend_from_slice(name.as_encoded_bytes());
        long.extend_from_slice(short.as_bytes());
        let hash = crate::sign::md5_hex(name.as_encoded_bytes());
        WorkNames { long, short, tail: format!("-{}", hash.get(..16).unwrap_or(&hash)) }
    }

    /// The process id in `entry` when it is one of the two names.
    fn pid(&self, entry: &std::ffi::OsStr) -> Option<u32> {
        let entry = entry.as_encoded_bytes();
        if let Some(digits) = entry.strip_prefix(self.long.as_slice()) {
            return super::pid_written(digits);
        }
        let rest = entry.strip_prefix(self.short.as_bytes())?;
        super::pid_written(rest.strip_suffix(self.tail.as_bytes())?)
    }
}

/// Whether the file at `path`, `len` bytes, holds nothing or the start of
/// a file ccc writes through [`write_new`] ([`OPENINGS`], or a part of
/// one: it was cut short).
fn opens_as_ccc_writes(path: &Path, len: u64) -> bool {
    use std::io::Read;
    let most = OPENINGS.iter().map(|o| o.len()).max().unwrap_or(0);
    let mut head = Vec::with_capacity(most);
    let Ok(file) = fs::File::open(path) else { return false };
    if file.take(most as u64).read_to_end(&mut head).is_err() {
        return false;
    }
    if len == 0 {
        return head.is_empty();
    }
    !head.is_empty()
        && OPENINGS.iter().any(|o| {
            let o = o.as_bytes();
            head.starts_with(o) || (head.len() as u64 == len && o.starts_with(&head))
        })
}

/// The refusal of what stands at `path` (a file, a folder, a symbolic
/// link, even a dangling one), if anything does.
fn standing(path: &Path) -> Option<NewFileError> {
    let meta = fs::symlink_metadata(path).ok()?;
    let what = if meta.is_dir() {
        "a folder"
    } else if meta.file_type().is_symlink() {
        "a symbolic link"
    } else {
        "a file"
    };
    Some(NewFileError::Create(io::Error::new(io::ErrorKind::AlreadyExists, format!("{what} is there"))))
}

/// Writes `bytes` whole and synced to `path`'s sibling work file
/// ([`sibling`]), which it returns; on a failure removes it.
fn write_work_file(path: &Path, bytes: &[u8]) -> Result<PathBuf, NewFileError> {
    let tmp = sibling(path);
    let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(|e| {
        // The work file's name is taken (a dead process's of the same id):
        // say so, rather than that `path` is, which it is not.
        let taken = e.kind() == io::ErrorKind::AlreadyExists;
        let what = || format!("its work file {} is there (not ccc's to remove)", tmp.display());
        NewFileError::Create(if taken { io::Error::new(io::ErrorKind::AlreadyExists, what()) } else { e })
    })?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    drop(file);
    match written {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(NewFileError::Write(e))
        }
    }
}

/// `.NAME.ccc-tmp-PID` beside `path`, or, when that would pass the 255
/// bytes of a file name (NAME itself may have them all),
/// `.ccc-tmp-PID-HASH`, HASH 16 hex digits of NAME's MD5.
fn sibling(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or(std::ffi::OsStr::new("out"));
    let pid = std::process::id();
    // Built from the name's bytes (not a lossy text of them).
    let mut full = std::ffi::OsString::from(".");
    full.push(name);
    full.push(format!(".{}-{pid}", super::TMP_TAG));
    if full.as_encoded_bytes().len() <= super::NAME_MAX {
        return path.with_file_name(full);
    }
    let hash = crate::sign::md5_hex(name.as_encoded_bytes());
    path.with_file_name(format!(".{}-{pid}-{}", super::TMP_TAG, hash.get(..16).unwrap_or(&hash)))
}

/// Gives `tmp` the name `path` unless `path` exists, in one step.
pub(super) fn place(tmp: &Path, path: &Path) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        match renameat_with(CWD, tmp, CWD, path, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::EXIST) => return Err(io::ErrorKind::AlreadyExists.into()),
            // The file system has no such rename: a link does the same.
            Err(_) => {}
        }
    }
    fs::hard_link(tmp, path)?;
    let _ = fs::remove_file(tmp);
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    /// A name of 255 bytes, the most a file name has, is written (its work
    /// file beside it takes a shorter name).
    #[test]
    fn a_name_of_255_bytes_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("{}.svg", "p".repeat(251)));
        write_new(&path, b"<svg/>").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"<svg/>");
        assert_eq!(names(dir.path()).len(), 1);
    }

    /// Several files, all or none: one that cannot be written (its folder
    /// is missing) or whose name is taken leaves none of them, and no
    /// work file.
    #[test]
    fn files_written_together_are_all_written_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("p.1.ron"), dir.path().join("p.2.ron"));
        let missing = dir.path().join("gone").join("p.3.ron");
        let three = [(a.as_path(), &b"one"[..]), (b.as_path(), &b"two"[..]), (missing.as_path(), &b"three"[..])];
        let Err((2, NewFileError::Create(e))) = write_new_all(&three) else { panic!("written") };
        assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
        fs::write(&b, "mine").unwrap();
        let Err((1, _)) = write_new_all(&three[..2]) else { panic!("written") };
        assert_eq!(names(dir.path()), ["p.2.ron"]);
        fs::remove_file(&b).unwrap();
        write_new_all(&three[..2]).unwrap();
        assert_eq!((fs::read(&a).unwrap(), fs::read(&b).unwrap()), (b"one".to_vec(), b"two".to_vec()));
        assert_eq!(names(dir.path()), ["p.1.ron", "p.2.ron"]);
    }

    #[test]
    fn a_new_file_is_written_whole_and_nothing_is_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plot.svg");
        write_new(&path, b"<svg/>").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"<svg/>");
        let refused = |at: &Path, what: &str| match write_new(at, b"other") {
            Err(NewFileError::Create(e)) => {
                assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{e}");
                assert_eq!(e.to_string(), format!("{what} is there"));
            }
            other => panic!("{other:?}"),
        };
        refused(&path, "a file");
        assert_eq!(fs::read(&path).unwrap(), b"<svg/>");
        refused(dir.path(), "a folder");
        #[cfg(unix)]
        {
            let dangling = dir.path().join("dangling");
            std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
            refused(&dangling, "a symbolic link");
            assert!(!dir.path().join("nowhere").exists(), "not written through the link");
        }
        // A missing folder: nothing created, nothing left.
        assert!(matches!(write_new(&dir.path().join("no/such.svg"), b"x"), Err(NewFileError::Create(_))));
        let mut expected = vec!["plot.svg".to_owned()];
        if cfg!(unix) {
            expected.insert(0, "dangling".to_owned());
        }
        assert_eq!(names(dir.path()), expected, "no work file left beside them");
    }

    /// The work file names [`sibling`] gives, both forms, and no other.
    #[test]
    fn work_file_names_are_recognised_for_their_file_alone() {
        let name = std::ffi::OsStr::new("step.1.ron");
        let names = WorkNames::of(name);
        let pid = |entry: &str| names.pid(std::ffi::OsStr::new(entry));
        assert_eq!(pid(".step.1.ron.ccc-tmp-42"), Some(42));
        assert_eq!(pid(".step.1.ron.ccc-tmp-4294967295"), Some(u32::MAX));
        for other in [
            ".step.1.ron.ccc-tmp-",
            ".step.1.ron.ccc-tmp-+42",
            ".step.1.ron.ccc-tmp-42x",
            ".step.1.ron.ccc-tmp-4294967296",
            // ccc writes a process id as `format!` does: no leading zero.
            ".step.1.ron.ccc-tmp-042",
            ".step.1.ron.ccc-tmp-0",
            ".step.2.ron.ccc-tmp-42",
            "step.1.ron.ccc-tmp-42",
            ".step.1.ron.ccc-old-42",
        ] {
            assert_eq!(pid(other), None, "{other}");
        }
        // The short form, for a name too long for the long one: its hash
        // must be this name's.
        let long = "p".repeat(250);
        let path = Path::new("/tmp").join(&long);
        let work = sibling(&path);
        let entry = work.file_name().unwrap();
        assert!(entry.to_str().unwrap().starts_with(".ccc-tmp-"), "{entry:?}");
        assert_eq!(WorkNames::of(std::ffi::OsStr::new(&long)).pid(entry), Some(std::process::id()));
        assert_eq!(WorkNames::of(std::ffi::OsStr::new(&"q".repeat(250))).pid(entry), None);
    }

    /// What a work file may hold for ccc to remove it: nothing, or what
    /// ccc writes from its start, cut short anywhere.
    #[test]
    fn only_the_openings_of_what_ccc_writes_are_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let holds = |text: &str| {
            let path = dir.path().join("w");
            fs::write(&path, text).unwrap();
            opens_as_ccc_writes(&path, text.len() as u64)
        };
        for ours in ["", "<", "<svg", "<svg xmlns=...", "// Imported by `ccc", "// Imported by `ccc import` from m.hlo"]
        {
            assert!(holds(ours), "{ours:?}");
        }
        for theirs in ["x", "<sv x", "// Imported by hand", " <svg", "// my notes"] {
            assert!(!holds(theirs), "{theirs:?}");
        }
    }

    /// A file holding the work file's name (a dead process's of the same
    /// id) is left as it is, and the refusal names it, not `path`.
    #[test]
    fn a_work_file_name_taken_is_named_and_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plot.svg");
        let work = dir.path().join(format!(".plot.svg.ccc-tmp-{}", std::process::id()));
        fs::write(&work, b"someone's").unwrap();
        match write_new(&path, b"<svg/>") {
            Err(NewFileError::Create(e)) => {
                assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
                assert!(e.to_string().contains(&format!("its work file {} is there", work.display())), "{e}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(fs::read(&work).unwrap(), b"someone's");
        assert!(!path.exists());
    }
}
