//! Writing a compile into a folder, without ever losing a file ccc did not
//! write.
//!
//! [`write()`] puts every compiled rank's images and `manifest.json` into the
//! folder `OUT` a user names. Its promise:
//!
//! - **It writes** `OUT/manifest.json` and `OUT/rank-R/topsp-T/{ctrl_spad,
//!   slot_spad,neff_configs}.bin`, nothing else, and while it works, one
//!   sibling folder `.OUT.ccc-tmp-PID` (PID: the writing process).
//! - **It replaces** only a folder that is absent, empty, or recognised as
//!   its own output by content: a `manifest.json` of ccc's schema and every
//!   file that manifest lists, present with the size it lists. Anything else
//!   (a folder of someone else's that happens to hold a `manifest.json`, a
//!   plain file) is refused before a byte is written.
//! - **It keeps** every entry of a replaced output that it did not write (a
//!   user's notes beside the images): each is carried into the new output by
//!   a hard link, so it never leaves `OUT`. A user's file standing where the
//!   new output puts one of its own is refused, not overwritten.
//! - **It removes** only what it wrote: the files the old manifest lists,
//!   the old manifest, the links it made, and folders that end up empty.
//!   Anything else found in the old tree is left where it is and reported.
//! - **Readers see a switch, not a gap**: the finished sibling and `OUT` are
//!   exchanged in one `renameat2(RENAME_EXCHANGE)` (Linux; `renamex_np`
//!   with `RENAME_SWAP` on Apple systems). Where the file system refuses
//!   the exchange, two renames do it, and a reader can find `OUT` missing
//!   for the instant between them ([`Written::atomic`] says which ran).
//! - **Writers take turns**: each holds an exclusive `flock` on `OUT`'s
//!   parent folder from the first look at `OUT` to the last removal, so two
//!   compiles into the same place both succeed and the later one wins.
//! - **Debris is swept**: a compile killed while writing leaves its
//!   `.OUT.ccc-tmp-PID` (or, after an interrupted two-rename switch,
//!   `.OUT.ccc-old-PID`). The next compile into the same place removes those
//!   whose process is gone, by the same rule (only files ccc writes, and
//!   links whose twin lives on), and reports each in [`Written::swept`].

use crate::manifest::{MANIFEST_SCHEMA, Manifest};
use crate::pipeline::Compiled;
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// The manifest's file name in `OUT`.
pub const MANIFEST_FILE: &str = "manifest.json";

/// The three image files in each `rank-R/topsp-T/` folder, in the order
/// they are written.
pub const IMAGE_FILES: [&str; 3] = ["ctrl_spad.bin", "slot_spad.bin", "neff_configs.bin"];

/// The tag of a work folder being written: `.OUT.ccc-tmp-PID`.
const TMP_TAG: &str = "ccc-tmp";

/// The tag of a replaced output moved aside by the two-rename fallback:
/// `.OUT.ccc-old-PID`.
const OLD_TAG: &str = "ccc-old";

/// The largest `manifest.json` read when recognising an output: far above
/// any manifest ccc writes (about 150 bytes per TOP_SP), far below memory.
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
}

/// Why a folder is not recognised as ccc's own output.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotOurs {
    /// `OUT` is a file (or other non-folder).
    #[error("it is not a folder")]
    NotAFolder,
    /// No `manifest.json`.
    #[error("it is not empty and holds no manifest.json")]
    NoManifest,
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
}

/// Why [`write()`] wrote nothing (or, for [`OutputError::Io`] after the
/// switch, could not finish removing the old tree).
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
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

fn io_error<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> OutputError + 'a {
    move |source| OutputError::Io { action, path: path.to_path_buf(), source }
}

/// Writes `compiled` into `out` as the module overview describes.
///
/// # Errors
///
/// [`OutputError::NotOurs`] or [`OutputError::InTheWay`] when `out` holds
/// anything ccc may not replace (nothing is written then);
/// [`OutputError::Io`] when the file system refuses a step (the work folder
/// is removed, `out` is as it was).
pub fn write(out: &Path, compiled: &Compiled) -> Result<Written, OutputError> {
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
    write_files(out, images, manifest.as_bytes())
}

/// [`write()`] over any list of image files (relative path, bytes) and the
/// manifest text.
fn write_files<'a>(
    out: &Path,
    images: impl Iterator<Item = (PathBuf, &'a [u8])>,
    manifest: &[u8],
) -> Result<Written, OutputError> {
    let place = Place::of(out)?;
    fs::create_dir_all(&place.parent).map_err(io_error("create", &place.parent))?;
    let _lock = lock(&place.parent)?;
    let mut written = Written::default();
    sweep(&place, &mut written)?;
    let existing = recognise(&place.out)?;
    let tmp = place.sibling(TMP_TAG, std::process::id());
    let result = fill(&tmp, images, manifest, &mut written)
        .and_then(|()| match &existing {
            Existing::Ours(listing) => {
                carry_over(&place.out, &tmp, listing, Path::new(""), &mut written.kept).map_err(|e| e.at(&place.out))
            }
            _ => Ok(()),
        })
        .and_then(|()| switch(&place, &tmp, &existing));
    let old = match result {
        Ok(old) => old,
        Err(e) => {
            // Only ccc's own files and links to the user's are in `tmp`.
            let _ = fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    written.atomic = old.as_ref().is_none_or(|(_, atomic)| *atomic);
    if let (Existing::Ours(listing), Some((old, _))) = (&existing, &old) {
        written.replaced = true;
        let reported = written.left.len();
        remove_ours(old, &place.out, listing, Path::new(""), &mut written.left);
        // The old tree stays only for what it holds that ccc did not write;
        // name the tree itself when no entry of it was named.
        if fs::remove_dir(old).is_err() && fs::symlink_metadata(old).is_ok() && written.left.len() == reported {
            written.left.push(old.clone());
        }
    }
    Ok(written)
}

/// `OUT`, resolved, with its parent and name.
struct Place {
    out: PathBuf,
    parent: PathBuf,
    name: String,
}

impl Place {
    fn of(out: &Path) -> Result<Place, OutputError> {
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
            Some(n) => n.to_string_lossy().into_owned(),
            // `OUT` ends in `..` or is `/`: name the folder it means.
            None => {
                let real = fs::canonicalize(&out).map_err(io_error("resolve", &out))?;
                return match real.file_name() {
                    Some(_) => Place::of(&real),
                    None => Err(OutputError::NotOurs { out: real, reason: NotOurs::NotAFolder }),
                };
            }
        };
        Ok(Place { out, parent, name })
    }

    /// `.NAME.TAG-PID` beside `OUT`.
    fn sibling(&self, tag: &str, pid: u32) -> PathBuf {
        self.parent.join(format!(".{}.{tag}-{pid}", self.name))
    }

    /// The tag and PID in a sibling's file name, when it is one of ours.
    fn sibling_pid(&self, file_name: &str) -> Option<(&'static str, u32)> {
        let rest = file_name.strip_prefix('.')?.strip_prefix(self.name.as_str())?.strip_prefix('.')?;
        [TMP_TAG, OLD_TAG].into_iter().find_map(|tag| {
            let pid = rest.strip_prefix(tag)?.strip_prefix('-')?;
            pid.bytes().all(|b| b.is_ascii_digit()).then(|| Some((tag, pid.parse().ok()?)))?
        })
    }
}

/// An exclusive lock on the parent folder, released when dropped (and by
/// the kernel when the process dies).
#[cfg(unix)]
fn lock(parent: &Path) -> Result<File, OutputError> {
    let dir = File::open(parent).map_err(io_error("open", parent))?;
    rustix::fs::flock(&dir, rustix::fs::FlockOperation::LockExclusive).map_err(|e| OutputError::Io {
        action: "lock",
        path: parent.to_path_buf(),
        source: e.into(),
    })?;
    Ok(dir)
}

#[cfg(not(unix))]
fn lock(_parent: &Path) -> Result<(), OutputError> {
    Ok(())
}

/// Whether process `pid` is alive (or might be: when in doubt, it is).
#[cfg(unix)]
fn alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else { return true };
    match rustix::process::Pid::from_raw(raw) {
        Some(pid) => !matches!(rustix::process::test_kill_process(pid), Err(rustix::io::Errno::SRCH)),
        None => true,
    }
}

#[cfg(not(unix))]
fn alive(_pid: u32) -> bool {
    true
}

/// Removes the work folders of dead compiles beside `OUT` (and any of this
/// process's own names, which no live compile can be using). A replaced
/// output moved aside by a two-rename switch that died before the second
/// rename is put back first, when `OUT` is still missing.
fn sweep(place: &Place, written: &mut Written) -> Result<(), OutputError> {
    let entries = fs::read_dir(&place.parent).map_err(io_error("read", &place.parent))?;
    let mut stale: Vec<(PathBuf, &'static str, u32)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let (tag, pid) = place.sibling_pid(e.file_name().to_str()?)?;
            let is_dir = e.file_type().ok()?.is_dir();
            (is_dir && (pid == std::process::id() || !alive(pid))).then(|| (e.path(), tag, pid))
        })
        .collect();
    // `ccc-old` sorts before `ccc-tmp`: a restored output is in place
    // before the work folder that shares its users' files is swept.
    stale.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    for (path, tag, pid) in stale {
        if tag == OLD_TAG && fs::symlink_metadata(&place.out).is_err() && fs::rename(&path, &place.out).is_ok() {
            written.swept.push(Swept { path, pid, bytes: 0, restored: true });
            continue;
        }
        let mut bytes = 0;
        remove_debris(&path, Path::new(""), &mut bytes, &mut written.left);
        let _ = fs::remove_dir(&path);
        written.swept.push(Swept { path, pid, bytes, restored: false });
    }
    Ok(())
}

/// Removes from a stale work folder what ccc may remove: files of the names
/// it writes where it writes them, and files that have another link (a
/// user's file carried over, whose twin lives in `OUT`). Everything else is
/// left and listed.
fn remove_debris(root: &Path, rel: &Path, bytes: &mut u64, left: &mut Vec<PathBuf>) {
    for (name, meta) in sorted_entries(&root.join(rel)) {
        let r = rel.join(&name);
        let path = root.join(&r);
        if meta.is_dir() {
            remove_debris(root, &r, bytes, left);
            let _ = fs::remove_dir(&path);
        } else if is_ccc_file(&r) || links(&meta) > 1 {
            if fs::remove_file(&path).is_ok() {
                *bytes += meta.len();
            }
        } else {
            left.push(path);
        }
    }
}

/// Whether a relative path is one ccc writes: `manifest.json` or
/// `rank-R/topsp-T/<image>.bin`.
fn is_ccc_file(rel: &Path) -> bool {
    let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
    let numbered = |s: &str, prefix: &str| {
        s.strip_prefix(prefix).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    match parts[..] {
        [file] => file == MANIFEST_FILE,
        [rank, topsp, file] => numbered(rank, "rank-") && numbered(topsp, "topsp-") && IMAGE_FILES.contains(&file),
        _ => false,
    }
}

#[cfg(unix)]
fn links(meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(meta)
}

#[cfg(not(unix))]
fn links(_meta: &fs::Metadata) -> u64 {
    1
}

/// A folder's entries with their metadata (not following links), sorted by
/// name; an unreadable folder has none.
fn sorted_entries(dir: &Path) -> Vec<(std::ffi::OsString, fs::Metadata)> {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let e = e.ok()?;
            Some((e.file_name(), e.metadata().ok()?))
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries
}

/// What stands at `OUT` now.
enum Existing {
    /// Nothing.
    Absent,
    /// An empty folder.
    Empty,
    /// ccc's own output: the files its manifest lists, with their sizes.
    Ours(Listing),
}

/// The files an output's manifest lists (relative path → size), and every
/// folder on the way to one.
struct Listing {
    files: BTreeMap<PathBuf, u64>,
}

impl Listing {
    fn of(manifest: &Manifest) -> Listing {
        let mut files = BTreeMap::new();
        for rank in &manifest.ranks {
            for t in &rank.topsps {
                let sizes = [t.ctrl_spad_bytes, t.slot_spad_bytes, t.neff_configs_bytes];
                for (file, size) in IMAGE_FILES.into_iter().zip(sizes) {
                    files.insert(image_path(rank.rank, t.topsp, file), size);
                }
            }
        }
        Listing { files }
    }

    /// Whether ccc wrote the file at `rel`.
    fn wrote(&self, rel: &Path) -> bool {
        rel == Path::new(MANIFEST_FILE) || self.files.contains_key(rel)
    }

    /// Whether `rel` is a folder on the way to a file ccc wrote.
    fn leads_to_ours(&self, rel: &Path) -> bool {
        self.files.range(rel.to_path_buf()..).next().is_some_and(|(f, _)| f.starts_with(rel))
    }
}

/// Recognises what stands at `out`.
fn recognise(out: &Path) -> Result<Existing, OutputError> {
    let not_ours = |reason| Err(OutputError::NotOurs { out: out.to_path_buf(), reason });
    let meta = match fs::symlink_metadata(out) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Existing::Absent),
        Err(e) => return Err(io_error("inspect", out)(e)),
        Ok(meta) => meta,
    };
    if !meta.is_dir() {
        return not_ours(NotOurs::NotAFolder);
    }
    if fs::read_dir(out).map_err(io_error("read", out))?.next().is_none() {
        return Ok(Existing::Empty);
    }
    let path = out.join(MANIFEST_FILE);
    if !fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
        return not_ours(NotOurs::NoManifest);
    }
    let mut text = String::new();
    File::open(&path).and_then(|f| f.take(MANIFEST_READ_CAP).read_to_string(&mut text)).map_err(|e| {
        match e.kind() {
            io::ErrorKind::InvalidData => {
                OutputError::NotOurs { out: out.to_path_buf(), reason: NotOurs::ForeignManifest("not UTF-8".into()) }
            }
            _ => io_error("read", &path)(e),
        }
    })?;
    let manifest: Manifest = match serde_json::from_str(&text) {
        Ok(m) => m,
        Err(e) => return not_ours(NotOurs::ForeignManifest(e.to_string())),
    };
    if manifest.manifest_schema != MANIFEST_SCHEMA {
        return not_ours(NotOurs::ForeignManifest(format!(
            "manifest_schema {}, where this ccc writes {MANIFEST_SCHEMA}",
            manifest.manifest_schema
        )));
    }
    let listing = Listing::of(&manifest);
    for (file, &listed) in &listing.files {
        match fs::symlink_metadata(out.join(file)) {
            Ok(m) if m.is_file() && m.len() == listed => {}
            Ok(m) if m.is_file() => {
                return not_ours(NotOurs::Resized { file: file.clone(), found: m.len(), listed });
            }
            _ => return not_ours(NotOurs::Missing(file.clone())),
        }
    }
    Ok(Existing::Ours(listing))
}

/// Writes the images and the manifest (last) into a fresh `tmp`.
fn fill<'a>(
    tmp: &Path,
    images: impl Iterator<Item = (PathBuf, &'a [u8])>,
    manifest: &[u8],
    written: &mut Written,
) -> Result<(), OutputError> {
    fs::create_dir(tmp).map_err(io_error("create", tmp))?;
    let mut put = |rel: &Path, data: &[u8]| {
        let path = tmp.join(rel);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(io_error("create", dir))?;
        }
        fs::write(&path, data).map_err(io_error("write", &path))?;
        written.files += 1;
        written.bytes += data.len() as u64;
        Ok(())
    };
    for (rel, data) in images {
        put(&rel, data)?;
    }
    put(Path::new(MANIFEST_FILE), manifest)
}

/// A carried-over entry in the way, before the output folder is known.
enum CarryError {
    InTheWay(PathBuf),
    Io(OutputError),
}

impl CarryError {
    fn at(self, out: &Path) -> OutputError {
        match self {
            CarryError::InTheWay(entry) => OutputError::InTheWay { out: out.to_path_buf(), entry },
            CarryError::Io(e) => e,
        }
    }
}

/// Links every entry of the old output at `old/rel` that ccc did not write
/// into the same place under `new`.
fn carry_over(
    old: &Path,
    new: &Path,
    listing: &Listing,
    rel: &Path,
    kept: &mut Vec<PathBuf>,
) -> Result<(), CarryError> {
    for (name, meta) in sorted_entries(&old.join(rel)) {
        let r = rel.join(&name);
        if !meta.is_dir() && listing.wrote(&r) {
            continue;
        }
        let there = fs::symlink_metadata(new.join(&r)).ok();
        match there {
            Some(t) if meta.is_dir() && t.is_dir() => carry_over(old, new, listing, &r, kept)?,
            Some(_) => return Err(CarryError::InTheWay(r)),
            None if meta.is_dir() && listing.leads_to_ours(&r) => carry_over(old, new, listing, &r, kept)?,
            None => {
                link_tree(&old.join(&r), &new.join(&r)).map_err(CarryError::Io)?;
                kept.push(r);
            }
        }
    }
    Ok(())
}

/// Makes `to` a twin of `from`: a hard link for a file, the same target for
/// a symbolic link, and for a folder the same permissions and a twin of
/// every entry. Missing parent folders are created.
fn link_tree(from: &Path, to: &Path) -> Result<(), OutputError> {
    if let Some(dir) = to.parent() {
        fs::create_dir_all(dir).map_err(io_error("create", dir))?;
    }
    let meta = fs::symlink_metadata(from).map_err(io_error("inspect", from))?;
    if meta.is_dir() {
        fs::create_dir(to).map_err(io_error("create", to))?;
        fs::set_permissions(to, meta.permissions()).map_err(io_error("set permissions of", to))?;
        for (name, _) in sorted_entries(from) {
            link_tree(&from.join(&name), &to.join(&name))?;
        }
        Ok(())
    } else if meta.file_type().is_symlink() {
        let target = fs::read_link(from).map_err(io_error("read", from))?;
        symlink(&target, to).map_err(io_error("link", to))
    } else {
        fs::hard_link(from, to).map_err(io_error("link", to))
    }
}

#[cfg(unix)]
fn symlink(target: &Path, at: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, at)
}

#[cfg(not(unix))]
fn symlink(target: &Path, at: &Path) -> io::Result<()> {
    fs::copy(target, at).map(|_| ())
}

/// Puts `tmp` in the place of `out`. Returns where the replaced output now
/// is, if there was one, and whether the switch was one atomic step.
fn switch(place: &Place, tmp: &Path, existing: &Existing) -> Result<Option<(PathBuf, bool)>, OutputError> {
    let out = &place.out;
    match existing {
        // rename(2) onto an absent name or an empty folder is one step.
        Existing::Absent | Existing::Empty => {
            fs::rename(tmp, out).map_err(io_error("rename into place", out))?;
            Ok(None)
        }
        Existing::Ours(_) => match exchange(tmp, out) {
            Ok(()) => Ok(Some((tmp.to_path_buf(), true))),
            Err(_) => {
                let old = place.sibling(OLD_TAG, std::process::id());
                fs::rename(out, &old).map_err(io_error("move aside", out))?;
                if let Err(e) = fs::rename(tmp, out) {
                    let _ = fs::rename(&old, out);
                    return Err(io_error("rename into place", out)(e));
                }
                Ok(Some((old, false)))
            }
        },
    }
}

/// Exchanges two folders in one step.
#[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(io::Error::from)
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
fn exchange(_a: &Path, _b: &Path) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// Removes from the replaced tree at `old/rel` the files ccc wrote and the
/// twins of the entries it carried over (still in `out`); folders left empty
/// go too. Anything else is left and listed.
fn remove_ours(old: &Path, out: &Path, listing: &Listing, rel: &Path, left: &mut Vec<PathBuf>) {
    for (name, meta) in sorted_entries(&old.join(rel)) {
        let r = rel.join(&name);
        let path = old.join(&r);
        if meta.is_dir() {
            remove_ours(old, out, listing, &r, left);
            let _ = fs::remove_dir(&path);
        } else if listing.wrote(&r) || twins(&path, &meta, &out.join(&r)) {
            let _ = fs::remove_file(&path);
        } else {
            left.push(path);
        }
    }
}

/// Whether `b` is the twin [`link_tree`] made of `a`: another link to the
/// same file, or a symbolic link to the same target.
fn twins(a: &Path, meta: &fs::Metadata, b: &Path) -> bool {
    if meta.file_type().is_symlink() {
        return matches!((fs::read_link(a), fs::read_link(b)), (Ok(x), Ok(y)) if x == y);
    }
    same_file(a, meta, b)
}

#[cfg(unix)]
fn same_file(_a: &Path, a: &fs::Metadata, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    fs::symlink_metadata(b).is_ok_and(|b| b.dev() == a.dev() && b.ino() == a.ino())
}

#[cfg(not(unix))]
fn same_file(a: &Path, _meta: &fs::Metadata, b: &Path) -> bool {
    matches!((fs::read(a), fs::read(b)), (Ok(x), Ok(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(name: &str) -> Place {
        Place { out: PathBuf::from(name), parent: PathBuf::from("."), name: name.into() }
    }

    /// Only `.NAME.ccc-tmp-PID` and `.NAME.ccc-old-PID` of this very name,
    /// with a decimal PID, are work folders of ccc's.
    #[test]
    fn work_folder_names_are_recognised_exactly() {
        let out = place("out");
        assert_eq!(out.sibling_pid(".out.ccc-tmp-42"), Some((TMP_TAG, 42)));
        assert_eq!(out.sibling_pid(".out.ccc-old-7"), Some((OLD_TAG, 7)));
        for other in [
            ".out.ccc-tmp-",
            ".out.ccc-tmp-+4",
            ".out.ccc-tmp-4x",
            ".out.ccc-tmp-99999999999",
            ".out.b.ccc-tmp-4",
            ".outer.ccc-tmp-4",
            "out.ccc-tmp-4",
            ".out.ccc-new-4",
        ] {
            assert_eq!(out.sibling_pid(other), None, "{other}");
        }
        assert_eq!(place("a.b").sibling_pid(".a.b.ccc-tmp-3"), Some((TMP_TAG, 3)));
        assert_eq!(out.sibling(TMP_TAG, 5), Path::new(".").join(".out.ccc-tmp-5"));
    }

    /// The files ccc writes, by name and place; nothing else.
    #[test]
    fn ccc_files_are_the_manifest_and_the_images_in_their_folders() {
        for ours in ["manifest.json", "rank-0/topsp-0/ctrl_spad.bin", "rank-4095/topsp-3/neff_configs.bin"] {
            assert!(is_ccc_file(Path::new(ours)), "{ours}");
        }
        for not in [
            "rank-0/manifest.json",
            "rank-0/topsp-0/notes.bin",
            "rank-x/topsp-0/ctrl_spad.bin",
            "rank-/topsp-0/ctrl_spad.bin",
            "rank-0/topsp-0/sub/ctrl_spad.bin",
            "ctrl_spad.bin",
        ] {
            assert!(!is_ccc_file(Path::new(not)), "{not}");
        }
        assert_eq!(image_path(12, 3, IMAGE_FILES[1]), Path::new("rank-12/topsp-3/slot_spad.bin"));
    }

    /// A folder leads to ccc's files when one lies below it, and only then
    /// (`rank-1` is not on the way to `rank-10/...`).
    #[test]
    fn folders_on_the_way_to_listed_files() {
        let listing = Listing { files: BTreeMap::from([(image_path(10, 0, IMAGE_FILES[0]), 8)]) };
        assert!(listing.leads_to_ours(Path::new("rank-10")));
        assert!(listing.leads_to_ours(Path::new("rank-10/topsp-0")));
        assert!(!listing.leads_to_ours(Path::new("rank-1")));
        assert!(!listing.leads_to_ours(Path::new("rank-10/topsp-1")));
        assert!(listing.wrote(Path::new("manifest.json")));
        assert!(listing.wrote(&image_path(10, 0, IMAGE_FILES[0])));
        assert!(!listing.wrote(&image_path(10, 0, IMAGE_FILES[1])));
    }
}
