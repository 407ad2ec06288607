//! Writing a compile into a folder, without ever losing a file ccc did not
//! write.
//!
//! [`write()`] puts every compiled rank's images and `manifest.json` into the
//! folder `OUT` a user names. Its promise:
//!
//! - **It writes** `OUT/manifest.json` and `OUT/rank-R/topsp-T/{ctrl_spad,
//!   slot_spad,neff_configs}.bin`, nothing else, and while it works, one
//!   sibling folder `.OUT.ccc-tmp-PID` (PID: the writing process), where
//!   the manifest, last, is written as [`MANIFEST_PART`] and then renamed.
//! - **It replaces** only a folder that is absent, empty, or recognised as
//!   its own output by content: a `manifest.json` of ccc's schema and every
//!   file that manifest lists, present with the size and MD5 it lists (a
//!   manifest of an earlier ccc build lists sizes only). Anything else
//!   (a folder of someone else's that happens to hold a `manifest.json`, a
//!   plain file) is refused before a byte is written.
//! - **It keeps** every entry of a replaced output that it did not write (a
//!   user's notes beside the images): each is carried into the new output by
//!   a hard link, so it never leaves `OUT`; one written into `OUT` while ccc
//!   works (after it read the old tree) is moved into the new output after
//!   the switch, where that holds nothing of its name. A user's file
//!   standing where the new output puts one of its own is refused, not
//!   overwritten.
//! - **It removes** only what it wrote: the files the old manifest lists
//!   (each as it checked them: one replaced or written to since is left),
//!   the old manifest, the links it made, and folders that end up empty.
//!   Anything else found in the old tree is left where it is and reported.
//! - **It lasts**: on Linux the new tree is on disk (one `syncfs`) before
//!   the switch, and the folder holding `OUT` is synced after it, so a
//!   machine that stops at any point finds the old output or the new one
//!   whole (elsewhere, this holds against the process dying only).
//! - **Readers see a switch, not a gap**: the finished sibling and `OUT` are
//!   exchanged in one `renameat2(RENAME_EXCHANGE)` (Linux; `renamex_np`
//!   with `RENAME_SWAP` on Apple systems). Where the file system refuses
//!   the exchange, two renames do it, and a reader can find `OUT` missing
//!   for the instant between them ([`Written::atomic`] says which ran).
//! - **Writers take turns**: each holds an exclusive `flock` on `OUT`
//!   (made empty when it is missing) from the first look at it to the last
//!   removal, and one on its work folder, the new `OUT` once switched,
//!   as long, so two compiles into the same place both succeed and the
//!   later one wins; and a shared one on every folder above it, each made
//!   under its parent's lock, so a compile replacing `OUT` waits for one
//!   writing into `OUT/sub` (or deeper), and the other way round, while
//!   compiles into sibling folders go on side by side (`place::hold`).
//! - **Debris is swept**: a compile killed while writing (by a signal it
//!   cannot handle; `ccc compile` stops on Ctrl-C through
//!   [`write_cancellable`] and removes its own) leaves its
//!   `.OUT.ccc-tmp-PID` (or, after an interrupted two-rename switch,
//!   `.OUT.ccc-old-PID`). The next compile into the same place removes those
//!   whose process is gone, by the same rule (only files ccc writes, each
//!   holding what ccc writes there: an image that decodes as its region, a
//!   manifest of ccc's schema; and the links it made to a user's file: the
//!   same file at the same place in `OUT`), and reports each in [`Written::swept`]. One under this very
//!   process's id (ids are reused) that still holds other files is left
//!   whole, and the write refused ([`OutputError::WorkFolderTaken`]).

mod entries;
mod existing;
mod new_file;
mod place;
mod read;
mod replace;

pub use new_file::{NewFileError, OPENINGS, SweptFile, sweep_work_files, write_new, write_new_all};
pub use read::{OutputRead, ReadError, read_output};

use crate::manifest::Manifest;
use crate::pipeline::{Cancel, Compiled};
use entries::{opened, remove_tree};
use existing::{Existing, recognise};
use place::{Held, Place, Waiting, hold, remove_made, sweep};
use replace::{carry_over, fill, remove_ours, switch};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The manifest's file name in `OUT`.
pub const MANIFEST_FILE: &str = "manifest.json";

/// The name the manifest is written under in the work folder before it
/// takes [`MANIFEST_FILE`]: the manifest can be large, and a compile killed
/// while writing it leaves this name, which only ccc writes, never a
/// `manifest.json` cut short.
pub const MANIFEST_PART: &str = "manifest.json.ccc-part";

/// The three image files in each `rank-R/topsp-T/` folder, in the order
/// they are written.
pub const IMAGE_FILES: [&str; 3] = ["ctrl_spad.bin", "slot_spad.bin", "neff_configs.bin"];

/// The process id in a work name's `PID`, when it is written as ccc
/// writes one (`format!` of a `u32`: decimal digits, no sign, no leading
/// zero, and not 0, which names no process); `None` for any other text,
/// so that a name ccc never writes is never taken for one of its own.
pub(super) fn pid_written(digits: &[u8]) -> Option<u32> {
    let pid: u32 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    (pid != 0 && pid.to_string().as_bytes() == digits).then_some(pid)
}

/// The tag of a work folder being written: `.OUT.ccc-tmp-PID`.
const TMP_TAG: &str = "ccc-tmp";

/// The bytes a file name may have (`NAME_MAX` on Linux and macOS): a work
/// folder or file ccc names beside `OUT` must fit it too.
const NAME_MAX: usize = 255;

/// The tag of a replaced output moved aside by the two-rename fallback:
/// `.OUT.ccc-old-PID`.
const OLD_TAG: &str = "ccc-old";

/// The largest `manifest.json` read when recognising an output: far above
/// any manifest ccc writes (about 340 bytes per TOP_SP, its files' sizes
/// and MD5s), far below memory.
pub const MANIFEST_READ_CAP: u64 = 1 << 30;

/// The relative path of one image file: `rank-R/topsp-T/FILE`.
pub fn image_path(rank: u32, topsp: u8, file: &str) -> PathBuf {
    Path::new(&format!("rank-{rank}")).join(format!("topsp-{topsp}")).join(file)
}

/// What [`write()`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Files ccc wrote (images and the manifest).
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// `true` when an earlier output of ccc's was replaced.
    pub replaced: bool,
    /// Entries of the replaced output that ccc did not write, carried into
    /// the new one (paths relative to `OUT`).
    pub kept: Vec<PathBuf>,
    /// Stale work folders of dead compiles, removed.
    pub swept: Vec<Swept>,
    /// Entries ccc found but did not write, and so left where they were
    /// (absolute paths: inside a swept folder or the replaced tree).
    pub left: Vec<PathBuf>,
    /// Files of ccc's own (an old image, a stale work file) that it went
    /// to remove and could not, each with the OS error (absolute paths:
    /// inside a swept folder or the replaced tree, which stays for them).
    pub unremoved: Vec<(PathBuf, String)>,
    /// `true` when the switch was one atomic exchange (or a rename onto an
    /// absent or empty folder); `false` when the two-rename fallback ran.
    pub atomic: bool,
}

/// One stale work folder found beside `OUT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Swept {
    /// The folder.
    pub path: PathBuf,
    /// The dead process that left it.
    pub pid: u32,
    /// Bytes removed.
    pub bytes: u64,
    /// `true` when the folder was a replaced output moved aside by a switch
    /// that died half-way, and was put back as `OUT` (nothing removed).
    pub restored: bool,
    /// `true` when the folder is still there: it holds files ccc did not
    /// write (listed in [`Written::left`]), so only ccc's own were
    /// removed, or files of its own it could not remove (listed in
    /// [`Written::unremoved`]).
    pub kept: bool,
}

/// Why a folder is not recognised as ccc's own output.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotOurs {
    /// `OUT` is a file (or other non-folder).
    #[error("it is not a folder")]
    NotAFolder,
    /// `OUT` is the file-system root: it has no parent to build the new
    /// output in beside it, and no name to give it.
    #[error("it is the root of the file system, which ccc cannot write an output in place of")]
    Root,
    /// No `manifest.json`.
    #[error("it is not empty and holds no manifest.json")]
    NoManifest,
    /// Its `manifest.json` is a folder or a symbolic link, not a file ccc
    /// wrote.
    #[error("its manifest.json is not a plain file (a folder or a symbolic link), so ccc did not write it")]
    ManifestNotAFile,
    /// `OUT` is the folder ccc runs in, or holds it: switching a new output
    /// into its place would leave the caller in a removed folder.
    #[error("it is the folder ccc runs in, or holds it")]
    HoldsCurrentFolder,
    /// A `manifest.json` that is not ccc's.
    #[error("its manifest.json is not a ccc manifest ({0})")]
    ForeignManifest(String),
    /// A file the manifest lists is missing or not a plain file.
    #[error("its manifest.json lists {0}, which is missing or not a plain file")]
    Missing(PathBuf),
    /// A file the manifest lists has another size than listed.
    #[error("{file} has {found} bytes where its manifest.json says {listed}: changed since ccc wrote it")]
    Resized {
        /// The file, relative to `OUT`.
        file: PathBuf,
        /// Its size now.
        found: u64,
        /// The size the manifest lists.
        listed: u64,
    },
    /// `OUT` is a mount point: the new output is built beside it and
    /// switched with it, which a mount point refuses.
    #[error("it is a mount point, which ccc cannot switch with the new output it builds beside it")]
    MountPoint,
    /// `OUT` was moved away, or another folder or link put in its place,
    /// while ccc worked: it is no longer the folder ccc locked and read,
    /// and ccc replaces only that one (what stands there now is put back
    /// as it was found).
    #[error("it was moved or replaced while ccc worked: it is no longer the folder ccc read")]
    Replaced,
    /// A file the manifest lists has its listed size but other contents.
    #[error("{} was edited since ccc wrote it: its MD5 is {found}, where its manifest.json says {listed}", file.display())]
    Edited {
        /// The file, relative to `OUT`.
        file: PathBuf,
        /// Its MD5 now.
        found: String,
        /// The MD5 the manifest lists.
        listed: String,
    },
}

/// Why [`write()`] wrote nothing (or, for [`OutputError::Io`] after the
/// switch, could not finish removing the old tree).
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The caller's [`Cancel`] was set while the
    /// new output was being filled ([`write_cancellable`]): the work folder
    /// was removed, `OUT` is as it was.
    #[error("the write into {} was cancelled before the output took its place: nothing was written", out.display())]
    Cancelled {
        /// The folder.
        out: PathBuf,
    },
    /// `OUT` exists and is not ccc's to replace.
    #[error("refusing to replace {}: {reason}", out.display())]
    NotOurs {
        /// The folder.
        out: PathBuf,
        /// Why it is not recognised.
        reason: NotOurs,
    },
    /// A file ccc did not write stands where the new output puts one of its
    /// own.
    #[error("refusing to replace {}: {} is not ccc's, and the new output writes {}", out.display(), entry.display(), entry.display())]
    InTheWay {
        /// The folder.
        out: PathBuf,
        /// The entry, relative to `OUT`.
        entry: PathBuf,
    },
    /// A mount point (an entry on another file system, or a folder of the
    /// same one bound there) inside `OUT`: a
    /// link cannot carry it into the new output, and switching the folders
    /// would take it into the old tree.
    #[error(
        "refusing to replace {}: {} is a mount point (another file system, or a folder bound there) inside it, \
         which ccc can neither \
         carry into the new output nor leave in place",
        out.display(),
        entry.display()
    )]
    MountInside {
        /// The folder.
        out: PathBuf,
        /// The mount point, relative to `OUT`.
        entry: PathBuf,
    },
    /// `OUT`'s name is too long for the work folder ccc writes beside it
    /// (`.NAME.ccc-tmp-PID`, which must fit a file name's 255 bytes).
    #[error(
        "cannot write {}: its name is {len} bytes, and the work folder ccc writes beside it, .NAME.ccc-tmp-PID, \
         would pass the 255 bytes a file name may have",
        out.display()
    )]
    NameTooLong {
        /// The folder.
        out: PathBuf,
        /// Its name's length, bytes.
        len: usize,
        /// The longest name ccc can write.
        max: usize,
    },
    /// The work folder's name is taken by something ccc did not make: a
    /// dead compile's folder of the same process id (ids are reused) still
    /// holding files ccc does not write after the sweep removed its own, or
    /// a file.
    #[error(
        "cannot write {}: ccc works in {} beside it, and {}",
        out.display(),
        work.display(),
        taken_by(left.as_deref())
    )]
    WorkFolderTaken {
        /// The folder.
        out: PathBuf,
        /// The work folder.
        work: PathBuf,
        /// What is left in it that ccc did not write, when it is a folder.
        left: Option<Vec<PathBuf>>,
    },
    /// A file-system call failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done ("create", "write", "lock", ...).
        action: &'static str,
        /// On what.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

/// What takes the work folder's name, for [`OutputError::WorkFolderTaken`].
fn taken_by(left: Option<&[PathBuf]>) -> String {
    const NAMED: usize = 3;
    match left {
        None => "a file of that name is there".to_owned(),
        Some([]) => "a folder of that name is there".to_owned(),
        Some(left) => {
            let names: Vec<String> = left.iter().take(NAMED).map(|p| p.display().to_string()).collect();
            let more = left.len().saturating_sub(NAMED);
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            format!("a folder of that name holds files ccc did not write: {}{more}", names.join(", "))
        }
    }
}

fn io_error<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> OutputError + 'a {
    move |source| OutputError::Io { action, path: path.to_path_buf(), source }
}

/// Writes `compiled` into `out` as the module overview describes.
///
/// # Errors
///
/// [`OutputError::NotOurs`] or [`OutputError::InTheWay`] when `out` holds
/// anything ccc may not replace, [`OutputError::WorkFolderTaken`] when the
/// work folder's name is (nothing is written then);
/// [`OutputError::Io`] when the file system refuses a step (the work folder
/// is removed, `out` is as it was).
pub fn write(out: &Path, compiled: &Compiled) -> Result<Written, OutputError> {
    write_cancellable(out, compiled, None)
}

/// [`write()`], stopping while the new output is filled once `cancel` is
/// set ([`OutputError::Cancelled`]: the work folder removed, `OUT` as it
/// was). Once the new output has taken `OUT`'s place, the old tree is
/// emptied whatever `cancel` says: a write that stopped there would leave
/// it behind.
///
/// # Errors
///
/// As [`write()`], and [`OutputError::Cancelled`].
pub fn write_cancellable(out: &Path, compiled: &Compiled, cancel: Option<&Cancel>) -> Result<Written, OutputError> {
    write_telling(out, compiled, cancel, &|_| {})
}

/// [`write_cancellable`], calling `waiting` with the folder when another
/// compile holds a lock the write needs (one writing into the same place,
/// or replacing a folder around it), before it waits: a caller may say
/// so (`ccc compile` does, on stderr). A `cancel` set meanwhile stops the
/// wait.
///
/// # Errors
///
/// As [`write_cancellable`].
pub fn write_telling(
    out: &Path,
    compiled: &Compiled,
    cancel: Option<&Cancel>,
    waiting: &dyn Fn(&Path),
) -> Result<Written, OutputError> {
    let manifest = Manifest::of(compiled).to_json().map_err(|e| OutputError::Io {
        action: "write",
        path: out.join(MANIFEST_FILE),
        source: io::Error::other(e),
    })?;
    let images = compiled.images.iter().flat_map(|rank| {
        rank.topsps.iter().flat_map(move |t| {
            [&t.ctrl_spad[..], &t.slot_spad[..], &t.neff_configs[..]]
                .into_iter()
                .zip(IMAGE_FILES)
                .map(move |(data, file)| (image_path(rank.rank.0, t.topsp.0, file), data))
        })
    });
    write_files(out, images, manifest.as_bytes(), Waiting { cancel, told: waiting })
}

/// [`write()`] over any list of image files (relative path, bytes) and the
/// manifest text.
fn write_files<'a>(
    out: &Path,
    images: impl Iterator<Item = (PathBuf, &'a [u8])>,
    manifest: &[u8],
    waiting: Waiting<'_>,
) -> Result<Written, OutputError> {
    let place = Place::of(out)?;
    // `OUT` too: a missing one is made (empty) to be locked.
    let created = missing_folders(&place.out);
    let result = hold(&place, |dir| fs::create_dir_all(dir), waiting)
        .and_then(|held| write_in(&place, held, images, manifest, waiting.cancel));
    // The folders made on the way go again where they hold nothing: all of
    // them when nothing was written, and after a write those that are not
    // on the way to `OUT` (`-o new/../out` makes `new`). Deepest first;
    // a folder that holds anything, or that another compile has locked,
    // stays.
    for dir in created.iter().rev() {
        remove_made(dir);
    }
    result
}

/// The folders on the way to `dir` (itself included) that do not exist,
/// outermost first.
fn missing_folders(dir: &Path) -> Vec<PathBuf> {
    let mut missing: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && fs::symlink_metadata(a).is_err())
        .map(Path::to_path_buf)
        .collect();
    missing.reverse();
    missing
}

/// [`write_files`] once `OUT` and the folders on the way exist, `held`
/// ([`Held`]'s locks) held.
fn write_in<'a>(
    place: &Place,
    mut held: Held,
    images: impl Iterator<Item = (PathBuf, &'a [u8])>,
    manifest: &[u8],
    cancel: Option<&Cancel>,
) -> Result<Written, OutputError> {
    let mut written = Written::default();
    written.swept.extend(held.restored.take());
    sweep(place, &mut written)?;
    // The folder locked, to switch with it and nothing else put in its
    // place (taken from the lock: by path, a link put there since would
    // pass for it).
    let out_id = held.out_id;
    let existing = recognise(&place.out)?;
    if holds_current_folder(&place.out) {
        return Err(OutputError::NotOurs { out: place.out.clone(), reason: NotOurs::HoldsCurrentFolder });
    }
    // A mount point (a tmpfs, a folder bound there) cannot take the new
    // output's place, nor its files be linked into it: said as such (its
    // files' links failing across devices read as a mount inside it).
    if !matches!(existing, Existing::Absent) && replace::is_mount_point(&place.parent, &place.out) {
        return Err(OutputError::NotOurs { out: place.out.clone(), reason: NotOurs::MountPoint });
    }
    let tmp = place.sibling(TMP_TAG, std::process::id());
    // Made here, apart from filling it: only a folder this process made is
    // removed on failure. One of the same name is a dead compile's (the
    // sweep above kept it for the files it holds that ccc did not write):
    // not ccc's to remove.
    fs::create_dir(&tmp).map_err(|source| match source.kind() {
        io::ErrorKind::AlreadyExists => {
            let folder = fs::symlink_metadata(&tmp).is_ok_and(|m| m.is_dir());
            let left = folder.then(|| written.left.iter().filter(|p| p.starts_with(&tmp)).cloned().collect());
            OutputError::WorkFolderTaken { out: place.out.clone(), work: tmp.clone(), left }
        }
        _ => OutputError::Io { action: "create", path: tmp.clone(), source },
    })?;
    // The folder made, to remove on failure only while it is the one there.
    let tmp_id = folder_id(&tmp);
    // Locked as `OUT` is, for as long: it takes `OUT`'s place at the
    // switch, and a compile into a folder inside it waits until the old
    // tree is emptied. (One that did not wait replaced such a folder
    // while the old tree still held its earlier files, which then no
    // longer matched it and were left there as the user's.)
    #[cfg(unix)]
    let _new_out = match place::lock_as(&tmp, rustix::fs::FlockOperation::LockExclusive) {
        Ok(lock) => lock,
        Err(e) => {
            remove_tree(&tmp);
            return Err(e);
        }
    };
    if matches!(existing, Existing::Ours(_) | Existing::Empty) {
        same_group(&place.out, &tmp);
    }
    let result = fill(&tmp, &place.out, images, manifest, &mut written, cancel)
        .and_then(|()| match &existing {
            Existing::Ours(listing) => {
                carry_over(&place.out, &tmp, listing, Path::new(""), &mut written.kept).map_err(|e| e.at(&place.out))
            }
            _ => Ok(()),
        })
        .and_then(|()| match &existing {
            // The new folder takes the old one's permissions (and owner,
            // where the process may give it): a private output stays private.
            Existing::Ours(_) | Existing::Empty => same_attributes(&place.out, &tmp),
            Existing::Absent => Ok(()),
        })
        .and_then(|()| durable(&tmp))
        .and_then(|()| switch(place, &tmp, &existing, out_id));
    let old = match result {
        Ok(old) => old,
        Err(e) => {
            // Only ccc's own files and links to the user's are in `tmp`
            // (read-only folders among them: opened to be emptied), while
            // it is the folder made: what a failed switch could not put
            // back is not removed.
            if folder_id(&tmp) == tmp_id {
                remove_tree(&tmp);
            }
            return Err(e);
        }
    };
    // The switch itself on disk: the folder holding `OUT`, synced (a file
    // system that cannot sync a folder has nothing more to do).
    // (`place.parent`, not `out.parent()`: `-o out/` has `.`, not ``.)
    if let Ok(folder) = fs::File::open(&place.parent) {
        let _ = folder.sync_all();
    }
    written.atomic = old.as_ref().is_none_or(|(_, atomic)| *atomic);
    if let (Existing::Ours(listing), Some((old, _))) = (&existing, &old) {
        written.replaced = true;
        let reported = (written.left.len(), written.unremoved.len());
        // The old tree's root has the permissions the new one took from it:
        // opened while ccc empties it, even when the user made it read-only.
        if let Ok(meta) = fs::symlink_metadata(old) {
            opened(old, &meta, || remove_ours(old, &place.out, listing, Path::new(""), &mut written));
        }
        // The old tree stays only for what it holds that ccc did not write
        // or could not remove; name the tree itself when no entry of it was
        // named.
        if fs::symlink_metadata(old).is_ok() && (written.left.len(), written.unremoved.len()) == reported {
            written.left.push(old.clone());
        }
    }
    Ok(written)
}

/// Puts what `tmp` holds on disk before it takes `OUT`'s place, so that a
/// machine that stops (power lost) after the switch finds the new output
/// whole, not files cut short where the old ones were: one `syncfs` of the
/// file system holding it (Linux: one call, not one per file). Elsewhere
/// nothing is synced: the switch is whole against the process dying, not
/// against the machine stopping.
#[cfg(target_os = "linux")]
fn durable(tmp: &Path) -> Result<(), OutputError> {
    let folder =
        fs::File::open(tmp).map_err(|source| OutputError::Io { action: "sync", path: tmp.to_path_buf(), source })?;
    rustix::fs::syncfs(&folder).map_err(|e| OutputError::Io {
        action: "sync",
        path: tmp.to_path_buf(),
        source: e.into(),
    })
}

#[cfg(not(target_os = "linux"))]
fn durable(_tmp: &Path) -> Result<(), OutputError> {
    Ok(())
}

/// Why ccc could not carry a user's entry (at `path`) over into the new
/// output, and what to do, by what the file system said: a folder it may
/// not list, a file of another user's it may not link (the kernel's
/// `fs.protected_hardlinks`), or one made immutable. For the help of an
/// [`OutputError::Io`] of action `carry over`.
pub fn carry_over_help(path: &Path, source: &io::Error) -> String {
    let meta = fs::symlink_metadata(path).ok();
    let folder = meta.as_ref().is_some_and(fs::Metadata::is_dir);
    let denied = source.kind() == io::ErrorKind::PermissionDenied;
    #[cfg(unix)]
    let others = {
        use std::os::unix::fs::MetadataExt;
        meta.as_ref().is_some_and(|m| m.uid() != rustix::process::geteuid().as_raw())
    };
    #[cfg(not(unix))]
    let others = false;
    let (what, why, way) = match (folder, denied, others) {
        (true, true, _) => (
            "folder",
            "may not list this one (not readable or not searchable by this user)",
            "make it readable to this user, or move it out of the folder",
        ),
        (true, false, _) => ("folder", "could not list this one", "move it out of the folder"),
        (false, true, true) => (
            "file",
            "the kernel refuses a link to a file of another user's (fs.protected_hardlinks)",
            "move it out of the folder, or have its owner do so",
        ),
        (false, _, _) => (
            "file",
            "the file system refused this one (an immutable file?)",
            "make it linkable (chattr -i) or move it out of the folder",
        ),
    };
    format!(
        "ccc keeps a user's {what} in a replaced output by linking it into the new one, and {why}: nothing was written; {way}"
    )
}

/// What tells the folder at `path` from another put in its place (its
/// device and inode, not following a link; a link has its own): `None`
/// where nothing stands there, or off Unix, where nothing is compared.
#[cfg(unix)]
fn folder_id(path: &Path) -> Option<(u64, u64)> {
    fs::symlink_metadata(path).ok().map(|m| entries::id_of(&m))
}

#[cfg(not(unix))]
fn folder_id(_path: &Path) -> Option<(u64, u64)> {
    None
}

/// Whether the folder this process runs in is `out` or lies inside it.
fn holds_current_folder(out: &Path) -> bool {
    match (std::env::current_dir(), fs::canonicalize(out)) {
        (Ok(here), Ok(out)) => here.starts_with(out),
        _ => false,
    }
}

/// The set-group-ID bit of a folder's mode: what is made in it takes the
/// folder's group.
#[cfg(unix)]
const SET_GROUP_ID: u32 = 0o2000;

/// Gives `to`, before anything is written in it, the group of `from` and
/// its set-group-ID bit where `from` has that bit, so that the files ccc
/// writes take the group they would take written in `from` itself (a
/// shared output folder stays shared; `same_attributes` gives the rest
/// once they are written). Where the process may not give the group, the
/// files keep the one they would have had.
#[cfg(unix)]
fn same_group(from: &Path, to: &Path) {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Ok(meta) = fs::metadata(from) else { return };
    if meta.mode() & SET_GROUP_ID == 0 || std::os::unix::fs::chown(to, None, Some(meta.gid())).is_err() {
        return;
    }
    if let Ok(made) = fs::metadata(to) {
        let _ = fs::set_permissions(to, fs::Permissions::from_mode(made.mode() | SET_GROUP_ID));
    }
}

#[cfg(not(unix))]
fn same_group(_from: &Path, _to: &Path) {}

/// Gives `to` the permissions of `from` and, on Unix, its owner and group
/// where this process may (a user cannot give a folder away; then `to`
/// stays theirs).
fn same_attributes(from: &Path, to: &Path) -> Result<(), OutputError> {
    let meta = fs::metadata(from).map_err(io_error("inspect", from))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // Owner and group, or the group alone (a member of the group may
        // give it without owning the folder).
        if std::os::unix::fs::chown(to, Some(meta.uid()), Some(meta.gid())).is_err() {
            let _ = std::os::unix::fs::chown(to, None, Some(meta.gid()));
        }
    }
    fs::set_permissions(to, meta.permissions()).map_err(io_error("set permissions of", to))
}

#[cfg(test)]
mod tests;
