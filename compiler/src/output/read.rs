//! Reading an output folder back: what `ccc diagnose OUT` (and Python's
//! `ccc.diagnose` given a folder) compares it by.

use super::MANIFEST_FILE;
use super::existing::{Listing, check_listed};
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
    let path = dir.join(MANIFEST_FILE);
    let io_error = |source| ReadError::Io { path: path.clone(), source };
    let size = match fs::metadata(&path) {
        Ok(m) if m.is_file() => m.len(),
        Ok(_) => return Err(ReadError::NoManifest { dir: dir.to_path_buf() }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadError::NoManifest { dir: dir.to_path_buf() }),
        Err(e) => return Err(io_error(e)),
    };
    if size > MANIFEST_MAX_BYTES {
        return Err(ReadError::TooLarge { path, size, cap: MANIFEST_MAX_BYTES });
    }
    let mut manifest = String::new();
    // `take`: a file that grew since `metadata` is still read within the cap.
    File::open(&path).and_then(|f| f.take(MANIFEST_MAX_BYTES).read_to_string(&mut manifest)).map_err(io_error)?;
    let images = serde_json::from_str::<Manifest>(&manifest)
        .ok()
        .filter(|m| m.manifest_schema == MANIFEST_SCHEMA)
        .filter(|m| check_listed(dir, &Listing::of(m)).is_ok())
        .and_then(|m| manifest_images_digest(&m));
    Ok(OutputRead { manifest, images })
}
