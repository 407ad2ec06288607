//! Reading an output folder back: what `ccc diagnose OUT` (and Python's
//! `ccc.diagnose` given a folder) compares it by.

#[cfg(unix)]
use super::entries::{FileId, id_of};
use super::existing::{Listing, check_listed, md5_of_file};
use super::{MANIFEST_FILE, NotOurs};
use crate::diagnose::{MANIFEST_MAX_BYTES, manifest_images_digest};
use crate::manifest::{MANIFEST_SCHEMA, Manifest};
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// An output folder as read back ([`read_output`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputRead {
    /// The text of its `manifest.json`, for
    /// [`Input::from_manifest_json`](crate::diagnose::Input::from_manifest_json)
    /// (which reads the manifests of other ccc versions too).
    pub manifest: String,
    /// [`images_digest`](crate::diagnose::images_digest) of its images,
    /// from the sizes and MD5s its manifest lists, when every file it lists
    /// is there with that size and MD5 (the files are the images the
    /// manifest describes); `None` otherwise: a file missing, resized or
    /// edited, or a manifest of another schema or one listing no MD5.
    pub images: Option<String>,
    /// Why a file it holds is not the one its manifest (of ccc's schema)
    /// lists, as a sentence (`rank-3/topsp-0/slot_spad.bin was edited
    /// since ccc wrote it: ...`): a rank loading it does not run the
    /// schedule the manifest signs. `None` when every file it holds is
    /// (files missing claim nothing: a folder may hold some ranks' only),
    /// or when the manifest is not one this ccc checks.
    pub edited: Option<String>,
}

/// Why an output folder cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The folder holds no `manifest.json` file.
    #[error("{} holds no manifest.json file; a `ccc compile -o` output folder does", dir.display())]
    NoManifest {
        /// The folder.
        dir: PathBuf,
    },
    /// The folder's `manifest.json` is not a file (nor a link to one).
    #[error(
        "{} is {what}, not a file; a `ccc compile -o` output folder holds manifest.json as a file",
        path.display()
    )]
    NotAFile {
        /// The manifest's path.
        path: PathBuf,
        /// What it is instead: `a folder`, `a named pipe`, `a device`,
        /// `a socket`.
        what: &'static str,
    },
    /// The manifest is larger than any ccc reads ([`MANIFEST_MAX_BYTES`]).
    #[error("{} is {size} bytes, more than the {cap} bytes of any manifest ccc reads", path.display())]
    TooLarge {
        /// The manifest.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The most ccc reads.
        cap: u64,
    },
    /// Another compile put a new output in the folder's place while it
    /// was read, every time it was read.
    #[error(
        "{} was replaced while it was read, {attempts} times: another `ccc compile -o` into it is running; run again once it has ended",
        dir.display()
    )]
    Replaced {
        /// The folder.
        dir: PathBuf,
        /// How many times it was read.
        attempts: usize,
    },
    /// The file system refused to read the manifest (or it is not UTF-8).
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The manifest.
        path: PathBuf,
        /// The OS's error.
        source: io::Error,
    },
}

/// Reads output folder `dir`: its manifest's text, and the digest of its
/// images when the folder holds every image its manifest lists, intact.
///
/// # Errors
///
/// [`ReadError`] when `dir/manifest.json` is missing, not a file, larger
/// than [`MANIFEST_MAX_BYTES`] or unreadable.
pub fn read_output(dir: &Path) -> Result<OutputRead, ReadError> {
    read_output_between(dir, &mut || ())
}

/// How many times [`read_output`] reads a folder that another compile
/// replaces while it reads it before it gives up ([`ReadError::Replaced`]).
const READ_ATTEMPTS: usize = 3;

/// [`read_output`], calling `between` once per attempt after the manifest
/// is read and before its images are (tests replace the folder there).
///
/// A compile into `dir` puts its new output in `dir`'s place in one step
/// (`replace::switch`), so a reader may read the manifest of one output
/// and the images of the next: they do not match, and the folder would be
/// said to be edited when it is not. The folder and its manifest are
/// therefore looked at before and after each attempt; one that changed
/// under the reader is read again.
pub(super) fn read_output_between(dir: &Path, between: &mut dyn FnMut()) -> Result<OutputRead, ReadError> {
    for _ in 0..READ_ATTEMPTS {
        let before = identity(dir);
        let read = read_once(dir, between);
        if identity(dir) == before {
            return read;
        }
    }
    Err(ReadError::Replaced { dir: dir.to_path_buf(), attempts: READ_ATTEMPTS })
}

/// What tells one output in folder `dir` from the next one put in its
/// place: the folder's file identity, and its manifest's with its
/// modification time (`None` for what cannot be looked at). Not the
/// folder's modification time: a file made in it (a compile into
/// `OUT/sub` makes its work folder there) changes no output.
#[cfg(unix)]
fn identity(dir: &Path) -> (Option<FileId>, Option<(FileId, i64, i64)>) {
    use std::os::unix::fs::MetadataExt;
    let folder = fs::metadata(dir).ok().map(|m| id_of(&m));
    let manifest = fs::metadata(dir.join(MANIFEST_FILE)).ok().map(|m| (id_of(&m), m.mtime(), m.mtime_nsec()));
    (folder, manifest)
}

/// What tells one output in folder `dir` from the next one put in its
/// place: the manifest's modification time and size.
#[cfg(not(unix))]
fn identity(dir: &Path) -> Option<(std::time::SystemTime, u64)> {
    fs::metadata(dir.join(MANIFEST_FILE)).ok().and_then(|m| Some((m.modified().ok()?, m.len())))
}

/// One reading of `dir` ([`read_output_between`]).
fn read_once(dir: &Path, between: &mut dyn FnMut()) -> Result<OutputRead, ReadError> {
    let path = dir.join(MANIFEST_FILE);
    let io_error = |source| ReadError::Io { path: path.clone(), source };
    let size = match fs::metadata(&path) {
        Ok(m) if m.is_file() => m.len(),
        // Not opened: a named pipe would wait for a writer, a device
        // (`/dev/zero`) never end.
        Ok(m) => return Err(ReadError::NotAFile { path, what: not_a_file(&m) }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadError::NoManifest { dir: dir.to_path_buf() }),
        Err(e) => return Err(io_error(e)),
    };
    if size > MANIFEST_MAX_BYTES {
        return Err(ReadError::TooLarge { path, size, cap: MANIFEST_MAX_BYTES });
    }
    let mut manifest = String::new();
    // `take`: a file that grew since `metadata` is still read within the cap.
    File::open(&path).and_then(|f| f.take(MANIFEST_MAX_BYTES).read_to_string(&mut manifest)).map_err(io_error)?;
    between();
    let (images, edited) = match serde_json::from_str::<Manifest>(&manifest) {
        Ok(m) if m.manifest_schema == MANIFEST_SCHEMA => {
            let listing = Listing::of(&m);
            match check_listed(dir, &listing) {
                Ok(()) => (manifest_images_digest(&m), None),
                Err(_) => (None, changed(dir, &listing)),
            }
        }
        // Another schema's (another ccc's): its images are not checked.
        Ok(_) => (None, None),
        // Not one this ccc reads whole (an earlier ccc's of the same
        // schema lacks fields added since; or one edited by hand): its
        // images are checked against the files its `ranks` list, which
        // is all a check needs, so that an edited image beside it does
        // not pass as a match. One whose listing does not read either,
        // claiming this ccc's format and schema, was edited: its images
        // cannot be checked.
        Err(e) => match serde_json::from_str::<RanksOnly>(&manifest) {
            Ok(r) => (None, changed(dir, &Listing::of_ranks(&r.ranks))),
            Err(_) if claims_ours(&manifest) => {
                let said = crate::parse::bound_message(&e.to_string());
                (
                    None,
                    Some(format!("{MANIFEST_FILE} is not as ccc wrote it ({said}), so its images cannot be checked")),
                )
            }
            Err(_) => (None, None),
        },
    };
    Ok(OutputRead { manifest, images, edited })
}

/// What an entry that is not a file is, in words.
fn not_a_file(meta: &fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a named pipe";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() { "a folder" } else { "not a file" }
}

/// The part of a manifest that lists its files (its other fields are not
/// read).
#[derive(serde::Deserialize)]
struct RanksOnly {
    ranks: Vec<crate::manifest::ManifestRank>,
}

/// Whether manifest text `json` states this ccc's `format_version` and
/// either its `manifest_schema` or none that any ccc writes (missing, or
/// not a whole number): so [`Manifest`] must read it.
fn claims_ours(json: &str) -> bool {
    let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(json) else { return false };
    let format = m.get("format_version").and_then(serde_json::Value::as_u64);
    let schema = m.get("manifest_schema").and_then(serde_json::Value::as_u64).and_then(|s| u32::try_from(s).ok());
    format == Some(u64::from(ccc_ir::FORMAT_VERSION)) && schema.is_none_or(|s| s == MANIFEST_SCHEMA)
}

/// How many changed files [`changed`] names by path after the first.
const CHANGED_NAMED: usize = 3;

/// Why files of `dir` are not the ones `listing` lists: the first, in
/// path order, that is there (a plain file, or a link to one) with another
/// size or, where the listing has one, another MD5, as a sentence; then
/// how many others are changed, the first [`CHANGED_NAMED`] by path; and
/// for a changed file that holds what the listing lists for another (its
/// size and MD5), which one: files swapped or copied between ranks. A
/// rank's files all missing claim nothing (a folder may hold some ranks'
/// files only, as a launcher ships each node its own, or the manifest
/// alone), nor does a file that cannot be read; a file missing where
/// other files of its rank are there is a change: that rank cannot load
/// its images. `None` when no file is changed.
fn changed(dir: &Path, listing: &Listing) -> Option<String> {
    // The ranks (a listed path's first part, `rank-5`) with a file there.
    fn rank_of(file: &Path) -> Option<std::path::Component<'_>> {
        file.components().next().filter(|_| file.components().count() > 1)
    }
    let there: std::collections::BTreeSet<_> = listing
        .files
        .keys()
        .filter(|file| fs::metadata(dir.join(file)).is_ok_and(|m| m.is_file()))
        .filter_map(|file| rank_of(file))
        .collect();
    // What each listed content is, by size and MD5, to tell a file that
    // holds another's (the first listed of equal ones).
    let mut by_content: std::collections::BTreeMap<(u64, &str), &Path> = std::collections::BTreeMap::new();
    for (file, listed) in &listing.files {
        if let Some(md5) = &listed.md5 {
            by_content.entry((listed.size, md5.as_str())).or_insert(file.as_path());
        }
    }
    // A file of a size no listed file has holds none of them: it is not
    // read (a huge one costs its metadata only).
    let sizes: std::collections::BTreeSet<u64> = listing.files.values().map(|l| l.size).collect();
    let mut found: Vec<(String, &Path, Option<&Path>)> = Vec::new();
    for (file, listed) in &listing.files {
        let path = dir.join(file);
        let meta = match fs::metadata(&path) {
            Ok(meta) if meta.is_file() => meta,
            // Missing while its rank's other files are there.
            Err(e) if e.kind() == io::ErrorKind::NotFound && rank_of(file).is_some_and(|r| there.contains(&r)) => {
                let rank = rank_of(file).map(|r| r.as_os_str().to_string_lossy().into_owned()).unwrap_or_default();
                let why = format!(
                    "{} is missing, while other files of {rank} are there: that rank cannot load its images",
                    file.display()
                );
                found.push((why, file, None));
                continue;
            }
            _ => continue,
        };
        // Hashed where the manifest lists MD5s (a manifest of an earlier
        // ccc may list sizes only: then nothing is compared but sizes).
        let md5 = listed.md5.as_ref().filter(|_| sizes.contains(&meta.len())).and_then(|_| md5_of_file(&path).ok());
        let holds = md5.as_deref().and_then(|m| by_content.get(&(meta.len(), m)).copied()).filter(|&o| o != file);
        let why = if meta.len() != listed.size {
            let (found, listed) = (meta.len(), listed.size);
            NotOurs::Resized { file: file.clone(), found, listed }.to_string()
        } else {
            match (&listed.md5, md5) {
                (Some(listed), Some(found)) if &found != listed => {
                    NotOurs::Edited { file: file.clone(), found, listed: listed.clone() }.to_string()
                }
                _ => continue,
            }
        };
        found.push((why, file, holds));
    }
    let ((first, _, holds), rest) = found.split_first()?;
    let mut sentence = first.clone();
    if let Some(other) = holds {
        sentence.push_str(&format!(
            " (it holds what the manifest lists for {}: files swapped or copied?)",
            other.display()
        ));
    }
    if !rest.is_empty() {
        let named: Vec<String> =
            rest.iter().take(CHANGED_NAMED).map(|(_, file, _)| file.display().to_string()).collect();
        let more = rest.len().saturating_sub(CHANGED_NAMED);
        sentence.push_str(&format!(
            "; {} changed too: {}{}",
            ccc_ir::noun::count(rest.len() as u64, "other file"),
            named.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        ));
    }
    Some(sentence)
}
