//! Recognising what stands at `OUT`: nothing, an empty folder, or ccc's own output listed by its manifest.

use super::{IMAGE_FILES, MANIFEST_FILE, MANIFEST_READ_CAP, NotOurs, OutputError, image_path, io_error};
use crate::manifest::{MANIFEST_SCHEMA, Manifest};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// What stands at `OUT` now.
pub(super) enum Existing {
    /// Nothing.
    Absent,
    /// An empty folder.
    Empty,
    /// ccc's own output: the files its manifest lists, with their sizes.
    Ours(Listing),
}

/// The files an output's manifest lists (relative path → what it lists of
/// the file), and every folder on the way to one.
pub(super) struct Listing {
    pub(super) files: BTreeMap<PathBuf, Listed>,
    /// The manifest as [`recognise`] read it: one replaced or written to
    /// since (while ccc works) is the user's, and is not removed as ccc's.
    pub(super) manifest: Option<Stamp>,
}

/// What a manifest lists of one file: its size, and its MD5 (hex) when the
/// manifest's ccc recorded one.
#[derive(Clone)]
pub(super) struct Listed {
    pub(super) size: u64,
    pub(super) md5: Option<String>,
    /// The file as [`recognise`] found it, once it checked it: a file
    /// replaced or written to since (while ccc works) is no longer the one
    /// ccc wrote, and is not removed as one.
    pub(super) stamp: Option<Stamp>,
}

/// What tells one file from another, or from itself changed: its size, its
/// modification time, and on Unix its device and inode.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    id: (u64, u64),
}

impl Stamp {
    pub(super) fn of(meta: &fs::Metadata) -> Stamp {
        #[cfg(unix)]
        let id = super::entries::id_of(meta);
        #[cfg(not(unix))]
        let id = (0, 0);
        Stamp { len: meta.len(), modified: meta.modified().ok(), id }
    }
}

impl Listing {
    pub(super) fn of(manifest: &Manifest) -> Listing {
        Listing::of_ranks(&manifest.ranks)
    }

    /// The files a manifest's `ranks` list.
    pub(super) fn of_ranks(ranks: &[crate::manifest::ManifestRank]) -> Listing {
        let mut files = BTreeMap::new();
        for rank in ranks {
            for t in &rank.topsps {
                let listed = [
                    (t.ctrl_spad_bytes, &t.ctrl_spad_md5),
                    (t.slot_spad_bytes, &t.slot_spad_md5),
                    (t.neff_configs_bytes, &t.neff_configs_md5),
                ];
                for (file, (size, md5)) in IMAGE_FILES.into_iter().zip(listed) {
                    let listed = Listed { size, md5: md5.clone(), stamp: None };
                    files.insert(image_path(rank.rank, t.topsp, file), listed);
                }
            }
        }
        Listing { files, manifest: None }
    }

    /// Whether ccc wrote the file at `rel`.
    pub(super) fn wrote(&self, rel: &Path) -> bool {
        rel == Path::new(MANIFEST_FILE) || self.files.contains_key(rel)
    }

    /// Whether the file at `rel` (found as `meta`) is the one ccc wrote
    /// there as [`recognise`] found it: not replaced or written to since.
    pub(super) fn unchanged(&self, rel: &Path, meta: &fs::Metadata) -> bool {
        let stamp = match rel == Path::new(MANIFEST_FILE) {
            true => self.manifest,
            false => self.files.get(rel).and_then(|l| l.stamp),
        };
        match stamp {
            Some(stamp) => stamp == Stamp::of(meta),
            None => true,
        }
    }

    /// Whether `rel` is a folder on the way to a file ccc wrote.
    pub(super) fn leads_to_ours(&self, rel: &Path) -> bool {
        self.files.range(rel.to_path_buf()..).next().is_some_and(|(f, _)| f.starts_with(rel))
    }
}

/// Recognises what stands at `out`.
pub(super) fn recognise(out: &Path) -> Result<Existing, OutputError> {
    recognise_between(out, &mut || {})
}

/// [`recognise`], calling `checked` once the listed files are checked
/// (a test writes to one there, as a user may while ccc works).
pub(super) fn recognise_between(out: &Path, checked: &mut dyn FnMut()) -> Result<Existing, OutputError> {
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
    match fs::symlink_metadata(&path) {
        Ok(m) if m.is_file() && m.len() > MANIFEST_READ_CAP => {
            return not_ours(NotOurs::ForeignManifest(format!(
                "{} bytes, more than the {MANIFEST_READ_CAP} of any manifest ccc reads",
                m.len()
            )));
        }
        Ok(m) if m.is_file() => {}
        Ok(_) => return not_ours(NotOurs::ManifestNotAFile),
        Err(_) => return not_ours(NotOurs::NoManifest),
    }
    let mut text = String::new();
    // The manifest as read: the file opened is the one stamped.
    let mut stamp = None;
    File::open(&path)
        .and_then(|f| {
            stamp = f.metadata().ok().map(|m| Stamp::of(&m));
            f.take(MANIFEST_READ_CAP).read_to_string(&mut text)
        })
        .map_err(|e| match e.kind() {
            io::ErrorKind::InvalidData => {
                OutputError::NotOurs { out: out.to_path_buf(), reason: NotOurs::ForeignManifest("not UTF-8".into()) }
            }
            _ => io_error("read", &path)(e),
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
    let mut listing = Listing { manifest: stamp, ..Listing::of(&manifest) };
    // Each file as it stands before it is checked (a `stat` each, before
    // the MD5s): one written to or replaced from then on (while ccc
    // works) no longer has this stamp, and is the user's. Stamped after
    // the MD5s, a file rewritten between its own check and its stamp was
    // taken for ccc's, and removed with the old output.
    for (file, listed) in &mut listing.files {
        listed.stamp = fs::symlink_metadata(out.join(file)).ok().map(|m| Stamp::of(&m));
    }
    check_listed(out, &listing)?;
    checked();
    Ok(Existing::Ours(listing))
}

/// Checks that every file `listing` names is in `out`, of the size and
/// (where listed) MD5 listed.
pub(super) fn check_listed(out: &Path, listing: &Listing) -> Result<(), OutputError> {
    let not_ours = |reason| Err(OutputError::NotOurs { out: out.to_path_buf(), reason });
    // Sizes first (one `stat` a file), then contents: a file of the listed
    // size may still have been edited in place.
    for (file, listed) in &listing.files {
        match fs::symlink_metadata(out.join(file)) {
            Ok(m) if m.is_file() && m.len() == listed.size => {}
            Ok(m) if m.is_file() => {
                return not_ours(NotOurs::Resized { file: file.clone(), found: m.len(), listed: listed.size });
            }
            _ => return not_ours(NotOurs::Missing(file.clone())),
        }
    }
    for (file, listed) in &listing.files {
        let Some(md5) = &listed.md5 else { continue };
        let path = out.join(file);
        let found = md5_of_file(&path).map_err(io_error("read", &path))?;
        if &found != md5 {
            return not_ours(NotOurs::Edited { file: file.clone(), found, listed: md5.clone() });
        }
    }
    Ok(())
}

/// The MD5 of the file at `path` (lower-case hex), read in pieces: a
/// manifest edited to list a huge file costs time, not memory.
pub(super) fn md5_of_file(path: &Path) -> io::Result<String> {
    use md5::{Digest, Md5};
    let mut file = File::open(path)?;
    let mut md5 = Md5::new();
    let mut buf = vec![0u8; READ_PIECE];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(hex::encode(md5.finalize()));
        }
        md5.update(buf.get(..n).unwrap_or_default());
    }
}

/// The bytes [`md5_of_file`] reads at a time.
const READ_PIECE: usize = 64 << 10;
