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

/// The files an output's manifest lists (relative path → size), and every
/// folder on the way to one.
pub(super) struct Listing {
    pub(super) files: BTreeMap<PathBuf, u64>,
}

impl Listing {
    pub(super) fn of(manifest: &Manifest) -> Listing {
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
    pub(super) fn wrote(&self, rel: &Path) -> bool {
        rel == Path::new(MANIFEST_FILE) || self.files.contains_key(rel)
    }

    /// Whether `rel` is a folder on the way to a file ccc wrote.
    pub(super) fn leads_to_ours(&self, rel: &Path) -> bool {
        self.files.range(rel.to_path_buf()..).next().is_some_and(|(f, _)| f.starts_with(rel))
    }
}

/// Recognises what stands at `out`.
pub(super) fn recognise(out: &Path) -> Result<Existing, OutputError> {
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
