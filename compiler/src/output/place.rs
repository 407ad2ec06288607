//! The place around `OUT`: its resolved name and parent, the writers' lock on the parent, and the sweep of dead compiles' work folders.

use super::entries::{opened, sorted_entries, twins};
use super::{
    IMAGE_FILES, MANIFEST_FILE, MANIFEST_PART, MANIFEST_READ_CAP, NAME_MAX, NotOurs, OLD_TAG, OutputError, Swept,
    TMP_TAG, Written, io_error,
};
use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::path::{Path, PathBuf};

/// The most digits a process ID has (Linux's `pid_max` is at most 2^22).
const PID_DIGITS: usize = 10;

/// `OUT`, resolved, with its parent and name.
pub(super) struct Place {
    pub(super) out: PathBuf,
    pub(super) parent: PathBuf,
    /// `OUT`'s file name, as the file system has it: its work folders'
    /// names are built from its bytes, so that two names that differ only
    /// in bytes that are not UTF-8 never share one.
    pub(super) name: OsString,
}

impl Place {
    pub(super) fn of(out: &Path) -> Result<Place, OutputError> {
        // `out/`, `out/.` and `out` are one folder: its components say it
        // without the trailing separator or `.` (a rename of `link/` would
        // go through the link).
        let out: PathBuf = out.components().collect();
        let out = out.as_path();
        // A symbolic link to a folder stands for the folder: write there,
        // and leave the link as it is.
        let out = match fs::symlink_metadata(out) {
            Ok(m) if m.file_type().is_symlink() => fs::canonicalize(out).map_err(io_error("resolve", out))?,
            _ => out.to_path_buf(),
        };
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = match out.file_name() {
            Some(n) => n.to_os_string(),
            // `OUT` ends in `..` or is `/`: name the folder it means.
            None => {
                let real = fs::canonicalize(&out).map_err(io_error("resolve", &out))?;
                return match real.file_name() {
                    Some(_) => Place::of(&real),
                    None => Err(OutputError::NotOurs { out: real, reason: NotOurs::Root }),
                };
            }
        };
        // `.NAME.ccc-tmp-PID` must be a file name too.
        let max = NAME_MAX - ".".len() - ".".len() - TMP_TAG.len() - "-".len() - PID_DIGITS;
        let len = name.as_encoded_bytes().len();
        if len > max {
            return Err(OutputError::NameTooLong { out, len, max });
        }
        Ok(Place { out, parent, name })
    }

    /// `.NAME.TAG-PID` beside `OUT`.
    pub(super) fn sibling(&self, tag: &str, pid: u32) -> PathBuf {
        let mut file = OsString::from(".");
        file.push(&self.name);
        file.push(format!(".{tag}-{pid}"));
        self.parent.join(file)
    }

    /// The tag and PID in a sibling's file name, when it is one of ours
    /// (`OUT`'s name matched byte for byte).
    pub(super) fn sibling_pid(&self, file_name: &OsStr) -> Option<(&'static str, u32)> {
        let rest = file_name.as_encoded_bytes().strip_prefix(b".")?;
        let rest = rest.strip_prefix(self.name.as_encoded_bytes())?.strip_prefix(b".")?;
        let rest = std::str::from_utf8(rest).ok()?;
        [TMP_TAG, OLD_TAG].into_iter().find_map(|tag| {
            let pid = rest.strip_prefix(tag)?.strip_prefix('-')?;
            Some((tag, super::pid_written(pid.as_bytes())?))
        })
    }
}

/// How often a lock another compile holds is tried again while ccc
/// waits for it, so that a Ctrl-C meanwhile stops the wait.
#[cfg(unix)]
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(50);

/// What a write does while it waits for another compile's lock: what it
/// may be told then, and what may stop it.
#[derive(Clone, Copy)]
pub(super) struct Waiting<'a> {
    /// Set (a Ctrl-C): stop waiting ([`OutputError::Cancelled`]).
    pub(super) cancel: Option<&'a crate::pipeline::Cancel>,
    /// Called once, with the folder, when a lock is found taken.
    pub(super) told: &'a dyn Fn(&Path),
}

/// [`lock_as`], telling `waiting` when another compile holds the lock,
/// then waiting for it in turns of [`LOCK_RETRY`] and stopping once its
/// `cancel` is set ([`OutputError::Cancelled`], for `out`): a Ctrl-C
/// while ccc waits for another compile into the same place stops it then,
/// not once the other is done. Without `cancel`, it waits as [`lock_as`]
/// does.
#[cfg(unix)]
fn lock_until(
    dir: &Path,
    how: rustix::fs::FlockOperation,
    waiting: Waiting<'_>,
    out: &Path,
) -> Result<File, OutputError> {
    use rustix::fs::FlockOperation::{LockExclusive, LockShared, NonBlockingLockExclusive, NonBlockingLockShared};
    let try_how = match how {
        LockExclusive => NonBlockingLockExclusive,
        LockShared => NonBlockingLockShared,
        other => other,
    };
    let failed = |e: rustix::io::Errno| OutputError::Io { action: "lock", path: dir.to_path_buf(), source: e.into() };
    let held = File::open(dir).map_err(io_error("open", dir))?;
    let mut told = false;
    loop {
        match rustix::fs::flock(&held, try_how) {
            Ok(()) => return Ok(held),
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => {}
            Err(e) => return Err(failed(e)),
        }
        if !std::mem::replace(&mut told, true) {
            (waiting.told)(dir);
        }
        let Some(cancel) = waiting.cancel else {
            rustix::fs::flock(&held, how).map_err(failed)?;
            return Ok(held);
        };
        if cancel.is_cancelled() {
            return Err(OutputError::Cancelled { out: out.to_path_buf() });
        }
        std::thread::sleep(LOCK_RETRY);
    }
}

/// A lock of kind `how` on folder `dir`, released when dropped (and by the
/// kernel when the process dies).
#[cfg(unix)]
pub(super) fn lock_as(dir: &Path, how: rustix::fs::FlockOperation) -> Result<File, OutputError> {
    let held = File::open(dir).map_err(io_error("open", dir))?;
    rustix::fs::flock(&held, how).map_err(|e| OutputError::Io {
        action: "lock",
        path: dir.to_path_buf(),
        source: e.into(),
    })?;
    Ok(held)
}

/// What a write holds while it works (see the module doc, "Writers take
/// turns"): an exclusive lock on `OUT` (made, empty, when it is missing)
/// and a shared one on every folder above it, outermost first. Two
/// compiles into one `OUT` take turns on `OUT`'s lock; a compile into
/// `OUT/sub` (or deeper) holds `OUT` shared, so a compile replacing `OUT`
/// waits for it to finish, and it for that one, and neither fills or
/// replaces a tree the other is writing. Compiles into other folders,
/// siblings included, hold nothing another needs exclusively. A folder
/// on the way is made only under its parent's lock, so none appears
/// inside an `OUT` another compile holds. Locks taken outermost first
/// along each path never wait on each other in a circle.
#[derive(Debug)]
pub(super) struct Held {
    #[cfg(unix)]
    #[allow(dead_code, reason = "held for its locks, released when dropped")]
    files: Vec<File>,
    /// A replaced output a dead compile's two-rename switch had moved
    /// aside, put back as the missing `OUT` before it was locked
    /// ([`restore`]).
    pub(super) restored: Option<Swept>,
    /// The device and inode of the folder locked as `OUT`, from its lock
    /// (`fstat`, not the path, which may name another folder or a link by
    /// the time ccc switches): the only folder the write may switch
    /// (`replace::switch`). `None` off Unix, where nothing is compared, or
    /// where `OUT` is no folder (the write refuses it).
    pub(super) out_id: Option<(u64, u64)>,
}

/// Makes the folders on the way to `place.out` and `OUT` itself when they
/// are missing (by `make`, each under its parent's lock) and takes
/// [`Held`]'s locks, each on the folder its path names when it is taken.
/// A compile that made a folder on the way to its own `OUT` removes it
/// again when it holds nothing ([`remove_made`]), and a compile into a
/// folder above may switch one: when that falls between making (or
/// finding) a folder and locking it, every lock is taken again, up to
/// [`LOCK_ATTEMPTS`] times.
#[cfg(unix)]
pub(super) fn hold(
    place: &Place,
    mut make: impl FnMut(&Path) -> std::io::Result<()>,
    waiting: Waiting<'_>,
) -> Result<Held, OutputError> {
    // Absolute, as the path reads (`..` and links kept): a compile that
    // runs elsewhere names the same folders from the root.
    let out = std::path::absolute(&place.out).map_err(io_error("resolve", &place.out))?;
    let mut restored = None;
    let mut attempt = 1;
    loop {
        if let Some(files) = try_hold(place, &out, &mut make, &mut restored, waiting)? {
            // Checked at `OUT` when locked; gone since, nothing may be
            // switched (a `None` the switch refuses).
            let locked = files.iter().rev().find(|f| still_there(f, &out));
            let out_id = locked.and_then(|f| f.metadata().ok()).map(|m| super::entries::id_of(&m));
            return Ok(Held { files, restored, out_id });
        }
        if attempt == LOCK_ATTEMPTS {
            // A link on the way that leads nowhere (or round a loop of
            // links) is why: no folder can be made through it.
            if let Some((link, e)) = out.ancestors().find_map(|dir| {
                let link = fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink());
                link.then(|| fs::metadata(dir).err().map(|e| (dir.to_path_buf(), e))).flatten()
            }) {
                return Err(OutputError::Io { action: "resolve", path: link, source: e });
            }
            let gone = std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "it, or a folder on the way to it, was replaced or removed each of the {LOCK_ATTEMPTS} times \
                     it was locked (by other compiles writing there, or another process)"
                ),
            );
            return Err(OutputError::Io { action: "lock", path: place.out.clone(), source: gone });
        }
        attempt += 1;
    }
}

/// One attempt of [`hold`] on `place`, whose `OUT` is `out` made
/// absolute: the locked folders, or `None` when a folder was removed or
/// switched between finding and locking it. A missing `OUT` is first
/// [`restore`]d (into `restored`), else made.
#[cfg(unix)]
fn try_hold(
    place: &Place,
    out: &Path,
    make: &mut impl FnMut(&Path) -> std::io::Result<()>,
    restored: &mut Option<Swept>,
    waiting: Waiting<'_>,
) -> Result<Option<Vec<File>>, OutputError> {
    use rustix::fs::FlockOperation::{LockExclusive, LockShared};
    let mut held: Vec<File> = Vec::new();
    let folders: Vec<&Path> = out.ancestors().collect();
    for dir in folders.into_iter().rev() {
        let is_out = dir == out;
        if is_out && restored.is_none() && fs::symlink_metadata(dir).is_err() {
            *restored = restore(place);
        }
        if fs::symlink_metadata(dir).is_err() {
            make(dir).map_err(io_error("create", dir))?;
        }
        match fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            // Made, and removed again by another compile: again. (So is a
            // link whose folder another compile is switching; one that
            // leads nowhere for good is named when the attempts run out.)
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            // A link round a loop of links (or that cannot be followed).
            Err(e) if fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) => {
                return Err(OutputError::Io { action: "resolve", path: dir.to_path_buf(), source: e });
            }
            // `OUT` that is a file: nothing to lock (the write refuses it).
            _ if is_out => break,
            // A file on the way: no folder can be made there.
            _ => {
                let there = std::io::Error::new(std::io::ErrorKind::AlreadyExists, "a file is there, not a folder");
                return Err(OutputError::Io { action: "create", path: dir.to_path_buf(), source: there });
            }
        }
        // A folder held already (`-o a/b/..` names `a`; a bind mount
        // shows a folder twice): a second lock of this process on it
        // would wait for the first.
        if held.iter().any(|f| still_there(f, dir)) {
            continue;
        }
        let file = match lock_until(dir, if is_out { LockExclusive } else { LockShared }, waiting, &place.out) {
            Ok(file) => file,
            Err(OutputError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            // A folder above `OUT` this user may not open is not locked: a
            // compile of theirs into it could not be replacing this tree.
            Err(_) if !is_out => continue,
            Err(e) => return Err(e),
        };
        if !still_there(&file, dir) {
            return Ok(None);
        }
        held.push(file);
    }
    Ok(Some(held))
}

#[cfg(not(unix))]
pub(super) fn hold(
    place: &Place,
    mut make: impl FnMut(&Path) -> std::io::Result<()>,
    _waiting: Waiting<'_>,
) -> Result<Held, OutputError> {
    make(&place.parent).map_err(io_error("create", &place.parent))?;
    let restored = if fs::symlink_metadata(&place.out).is_err() { restore(place) } else { None };
    Ok(Held { restored, out_id: None })
}

/// Puts back as the missing `OUT` a replaced output that a two-rename
/// switch moved aside (`.OUT.ccc-old-PID`) and died before the second
/// rename (its process gone, or this very process's id reused): the
/// user's output and their files in it are where they were, before `OUT`
/// is made or locked. The first that renames, by name; none: `None`.
fn restore(place: &Place) -> Option<Swept> {
    let mut aside: Vec<(PathBuf, u32)> = fs::read_dir(&place.parent)
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let (tag, pid) = place.sibling_pid(&e.file_name())?;
            let stale = tag == OLD_TAG && e.file_type().ok()?.is_dir() && (pid == std::process::id() || !alive(pid));
            stale.then(|| (e.path(), pid))
        })
        .collect();
    aside.sort();
    aside.into_iter().find_map(|(path, pid)| {
        fs::rename(&path, &place.out).ok()?;
        Some(Swept { path, pid, bytes: 0, restored: true, kept: false })
    })
}

/// Times [`hold`] makes and locks a folder that another compile removes
/// (or replaces) in between, before it gives up. Each such attempt means
/// another compile took its turn first: compiles queued on one `OUT` may
/// each lose one attempt to every other (24 at once lost 8 attempts, where
/// this was 8), so the bound is for a folder something removes without
/// end, not for a queue.
pub(super) const LOCK_ATTEMPTS: u32 = 1024;

/// Whether the folder `held` locks is still the one at `dir`.
#[cfg(unix)]
pub(super) fn still_there(held: &File, dir: &Path) -> bool {
    match (held.metadata(), fs::metadata(dir)) {
        (Ok(a), Ok(b)) => super::entries::id_of(&a) == super::entries::id_of(&b),
        _ => false,
    }
}

/// Removes `dir`, a folder this compile made on the way to `OUT`, when it
/// holds nothing and no compile holds its lock (one that does is writing
/// there, or about to): under its lock, so that a compile that has just
/// made it (it was there) and locks it next finds it removed and makes it
/// again ([`hold`]), rather than writing into a removed folder.
#[cfg(unix)]
pub(super) fn remove_made(dir: &Path) {
    use rustix::fs::{FlockOperation, flock};
    let Ok(held) = File::open(dir) else { return };
    if flock(&held, FlockOperation::NonBlockingLockExclusive).is_ok() {
        let _ = fs::remove_dir(dir);
    }
}

#[cfg(not(unix))]
pub(super) fn remove_made(dir: &Path) {
    let _ = fs::remove_dir(dir);
}

/// Whether process `pid` is alive (or might be: when in doubt, it is). On
/// Linux a zombie (a process that has exited, every thread of it, and
/// whose parent has not yet reaped it) is not: it never runs again, its
/// locks are released, and its id cannot be reused while it is one.
#[cfg(unix)]
pub(super) fn alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else { return true };
    match rustix::process::Pid::from_raw(raw) {
        Some(pid) => !matches!(rustix::process::test_kill_process(pid), Err(rustix::io::Errno::SRCH)) && !exited(raw),
        None => true,
    }
}

/// Whether `/proc` says process `pid` has exited: every thread of it in
/// state `Z` (a zombie) or `X` (dead). A process whose main thread alone
/// has ended shows `Z` for it while its other threads run: it is alive.
/// Only a `/proc` of this process's own PID namespace is read (one of
/// another namespace names other processes by these numbers).
#[cfg(target_os = "linux")]
fn exited(pid: i32) -> bool {
    if !proc_is_ours() {
        return false;
    }
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else { return false };
    let mut threads = 0;
    for task in tasks {
        let Ok(task) = task else { return false };
        let Ok(stat) = fs::read(task.path().join("stat")) else { return false };
        if !matches!(stat_state(&stat), Some(b'Z' | b'X')) {
            return false;
        }
        threads += 1;
    }
    threads > 0
}

/// The state in a `/proc/.../stat` line: the field after the command
/// name, which is in parentheses and may hold any byte, so read after
/// the last `)`.
#[cfg(target_os = "linux")]
fn stat_state(stat: &[u8]) -> Option<u8> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    stat.get(close + 1..)?.iter().copied().find(|b| !b.is_ascii_whitespace())
}

/// Whether `/proc` is of this process's PID namespace: `/proc/self/stat`
/// names this process by its own id.
#[cfg(target_os = "linux")]
fn proc_is_ours() -> bool {
    let Ok(stat) = fs::read("/proc/self/stat") else { return false };
    let pid = stat.split(|&b| b == b' ').next().and_then(|p| std::str::from_utf8(p).ok()?.parse::<u32>().ok());
    pid == Some(std::process::id())
}

#[cfg(all(unix, not(target_os = "linux")))]
fn exited(_pid: i32) -> bool {
    false
}

#[cfg(not(unix))]
pub(super) fn alive(_pid: u32) -> bool {
    true
}

/// Removes the work folders of dead compiles beside `OUT` (and any of this
/// process's own names, which no live compile can be using). A replaced
/// output moved aside by a two-rename switch that died before the second
/// rename was put back before `OUT` was locked ([`hold`]); one left here
/// (`OUT` was there) is swept as debris.
pub(super) fn sweep(place: &Place, written: &mut Written) -> Result<(), OutputError> {
    let entries = fs::read_dir(&place.parent).map_err(io_error("read", &place.parent))?;
    let mut stale: Vec<(PathBuf, &'static str, u32)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let (tag, pid) = place.sibling_pid(&e.file_name())?;
            let is_dir = e.file_type().ok()?.is_dir();
            (is_dir && (pid == std::process::id() || !alive(pid))).then(|| (e.path(), tag, pid))
        })
        .collect();
    stale.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    for (path, _, pid) in stale {
        let mut bytes = 0;
        if let Ok(meta) = fs::symlink_metadata(&path) {
            opened(&path, &meta, || remove_debris(&path, &place.out, Path::new(""), &mut bytes, written));
        }
        let kept = fs::symlink_metadata(&path).is_ok();
        written.swept.push(Swept { path, pid, bytes, restored: false, kept });
    }
    Ok(())
}

/// Removes from a stale work folder what ccc may remove: files of the names
/// it writes where it writes them, holding what it writes there, and the
/// links it made to a user's file
/// carried over (the same file is at the same place in `out`). A file with
/// other names (a hard link) goes only as such a link: ccc writes its own
/// files under one name, so one of an image's name linked from elsewhere
/// is the user's, whatever it holds. Everything else is left and listed
/// ([`Written::left`]); a file of ccc's that cannot be removed is listed
/// with the error ([`Written::unremoved`]).
fn remove_debris(root: &Path, out: &Path, rel: &Path, bytes: &mut u64, written: &mut Written) {
    for (name, meta) in sorted_entries(&root.join(rel)) {
        let r = rel.join(&name);
        let path = root.join(&r);
        // ccc writes plain files: a link by an image's name is the user's
        // (read through, it would decode as the image it points to).
        let ours =
            || meta.is_file() && !linked_elsewhere(&meta) && is_ccc_file(&r) && holds_what_ccc_writes(&path, &meta);
        if meta.is_dir() {
            opened(&path, &meta, || remove_debris(root, out, &r, bytes, written));
        } else if ours() || twins(&path, &meta, &out.join(&r)) {
            match fs::remove_file(&path) {
                Ok(()) => *bytes += meta.len(),
                Err(e) => written.unremoved.push((path, e.to_string())),
            }
        } else {
            written.left.push(path);
        }
    }
}

/// Whether the file `meta` describes has other names than this one (a
/// hard link): never so for a file ccc wrote.
#[cfg(unix)]
pub(super) fn linked_elsewhere(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.is_file() && meta.nlink() > 1
}

#[cfg(not(unix))]
pub(super) fn linked_elsewhere(_meta: &fs::Metadata) -> bool {
    false
}

/// The most bytes an image in debris is read to be recognised: larger, it
/// is not one ccc wrote (a CTRL SPAD is 4 KiB, a SLOT SPAD 32 KiB, a
/// `neff_configs` block 3592 bytes on every arch; this leaves room).
const DEBRIS_IMAGE_MAX: u64 = 1 << 20;

/// Whether the file at `path`, of one of the names ccc writes, is ccc's to
/// remove: the manifest's work name (only ccc writes it; a compile killed
/// while writing it leaves it cut short), empty (a compile killed between
/// creating a file and writing it leaves that; removing it loses nothing),
/// or holding what ccc writes there: an image that decodes as its region,
/// a manifest of ccc's schema. A name alone is not enough.
fn holds_what_ccc_writes(path: &Path, meta: &fs::Metadata) -> bool {
    use ccc_ir::wire::{ctrl_spad, neff_configs::NeffConfigs, slot_spad::SlotSpad};
    let name = path.file_name().and_then(|n| n.to_str());
    if name == Some(MANIFEST_PART) || meta.len() == 0 {
        return true;
    }
    let cap = if name == Some(MANIFEST_FILE) { MANIFEST_READ_CAP } else { DEBRIS_IMAGE_MAX };
    if meta.len() > cap {
        return false;
    }
    let Ok(bytes) = fs::read(path) else { return false };
    let [ctrl, slot, neff] = IMAGE_FILES;
    match name {
        Some(MANIFEST_FILE) => serde_json::from_slice::<crate::manifest::Manifest>(&bytes)
            .is_ok_and(|m| m.manifest_schema == crate::manifest::MANIFEST_SCHEMA),
        Some(n) if n == ctrl => ctrl_spad::decode(&bytes).is_ok(),
        Some(n) if n == slot => SlotSpad::decode(&bytes).is_ok(),
        Some(n) if n == neff => NeffConfigs::decode(&bytes).is_ok(),
        _ => false,
    }
}

/// Whether a relative path is one ccc writes: `manifest.json` (or its
/// work name, [`MANIFEST_PART`]) or `rank-R/topsp-T/<image>.bin`.
pub(super) fn is_ccc_file(rel: &Path) -> bool {
    let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
    let numbered = |s: &str, prefix: &str| {
        s.strip_prefix(prefix).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    match parts[..] {
        [file] => file == MANIFEST_FILE || file == MANIFEST_PART,
        [rank, topsp, file] => numbered(rank, "rank-") && numbered(topsp, "topsp-") && IMAGE_FILES.contains(&file),
        _ => false,
    }
}
