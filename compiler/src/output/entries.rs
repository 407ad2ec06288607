//! Entries of the trees ccc empties: listing them in order, telling a link ccc made from a user's file, and opening a read-only folder while ccc empties it.

use std::fs;
use std::path::Path;

/// A folder's entries with their metadata (not following links), sorted by
/// name; an unreadable folder has none.
pub(super) fn sorted_entries(dir: &Path) -> Vec<(std::ffi::OsString, fs::Metadata)> {
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

/// A folder's entries with their metadata (not following links), sorted by
/// name (one removed meanwhile left out), or why they cannot all be read:
/// for the trees ccc carries into a
/// new output, where a folder read as empty would be carried over empty
/// and its contents left behind.
pub(super) fn every_entry(dir: &Path) -> std::io::Result<Vec<(std::ffi::OsString, fs::Metadata)>> {
    let mut entries = Vec::new();
    for e in fs::read_dir(dir)? {
        let e = e?;
        // One removed since the folder was listed (by the user, while ccc
        // works) is no longer there to carry.
        let meta = match e.metadata() {
            Err(gone) if gone.kind() == std::io::ErrorKind::NotFound => continue,
            meta => meta?,
        };
        entries.push((e.file_name(), meta));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}

/// A file's device and inode: what tells it from another put at its path.
#[cfg(unix)]
pub(super) type FileId = (u64, u64);

/// The [`FileId`] of the file `meta` describes.
#[cfg(unix)]
pub(super) fn id_of(meta: &fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// Whether `b` is the twin `replace::link_tree` made of `a`: another link to the
/// same file, or a symbolic link to the same target.
pub(super) fn twins(a: &Path, meta: &fs::Metadata, b: &Path) -> bool {
    if meta.file_type().is_symlink() {
        return matches!((fs::read_link(a), fs::read_link(b)), (Ok(x), Ok(y)) if x == y);
    }
    same_file(a, meta, b)
}

#[cfg(unix)]
fn same_file(_a: &Path, a: &fs::Metadata, b: &Path) -> bool {
    fs::symlink_metadata(b).is_ok_and(|b| id_of(&b) == id_of(a))
}

#[cfg(not(unix))]
fn same_file(a: &Path, _meta: &fs::Metadata, b: &Path) -> bool {
    matches!((fs::read(a), fs::read(b)), (Ok(x), Ok(y)) if x == y)
}

/// Runs `empty` (which removes what ccc may from the folder `dir`), the
/// folder writable meanwhile if it was not (a user's read-only folder
/// carried over: its twin is in the new output, and this one goes), then
/// removes the folder if it is empty, or gives it back its permissions.
pub(super) fn opened(dir: &Path, meta: &fs::Metadata, empty: impl FnOnce()) {
    let closed = meta.permissions();
    #[cfg(unix)]
    let opened = {
        use std::os::unix::fs::PermissionsExt;
        let mode = closed.mode();
        (mode & 0o300 != 0o300).then(|| fs::Permissions::from_mode(mode | 0o700))
    };
    #[cfg(not(unix))]
    let opened: Option<fs::Permissions> = None;
    let reopened = opened.is_some_and(|p| fs::set_permissions(dir, p).is_ok());
    empty();
    if fs::remove_dir(dir).is_err() && reopened {
        let _ = fs::set_permissions(dir, closed);
    }
}

/// Removes the tree at `path`, every folder in it opened first when it is
/// not writable: for ccc's own work folder only (what it wrote, and links
/// to a user's files, whose twins stay where they are).
pub(super) fn remove_tree(path: &Path) {
    let Ok(meta) = fs::symlink_metadata(path) else { return };
    if !meta.is_dir() {
        let _ = fs::remove_file(path);
        return;
    }
    opened(path, &meta, || {
        for (name, _) in sorted_entries(path) {
            remove_tree(&path.join(name));
        }
    });
}
