//! Building the new output beside `OUT` and putting it in place: fill, carry the user's entries over by links, switch, remove what ccc wrote from the old tree.

use super::entries::{every_entry, opened, sorted_entries, twins};
use super::existing::{Existing, Listing};
use super::new_file::place;
use super::place::Place;
use super::{MANIFEST_FILE, MANIFEST_PART, NotOurs, OLD_TAG, OutputError, Written, io_error};
use crate::pipeline::Cancel;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Writes the images and the manifest (last) into `tmp`, a folder this
/// process has just made to take `out`'s place; once `cancel` is set,
/// stops before the next file ([`OutputError::Cancelled`]).
pub(super) fn fill<'a>(
    tmp: &Path,
    out: &Path,
    images: impl Iterator<Item = (PathBuf, &'a [u8])>,
    manifest: &[u8],
    written: &mut Written,
    cancel: Option<&Cancel>,
) -> Result<(), OutputError> {
    // A TOP_SP's three images share a folder: it is made once, for the
    // first of them (the files come folder by folder).
    let mut made: PathBuf = tmp.to_path_buf();
    let mut put = |rel: &Path, data: &[u8]| {
        if cancel.is_some_and(Cancel::is_cancelled) {
            return Err(OutputError::Cancelled { out: out.to_path_buf() });
        }
        let path = tmp.join(rel);
        if let Some(dir) = path.parent().filter(|dir| *dir != made) {
            fs::create_dir_all(dir).map_err(io_error("create", dir))?;
            made = dir.to_path_buf();
        }
        fs::write(&path, data).map_err(io_error("write", &path))?;
        written.files += 1;
        written.bytes += data.len() as u64;
        Ok(())
    };
    for (rel, data) in images {
        put(&rel, data)?;
    }
    // The manifest last, whole or not at all (`MANIFEST_PART`).
    put(Path::new(MANIFEST_PART), manifest)?;
    fs::rename(tmp.join(MANIFEST_PART), tmp.join(MANIFEST_FILE)).map_err(io_error("write", &tmp.join(MANIFEST_FILE)))
}

/// A carried-over entry in the way, or a mount point, before the output
/// folder is known.
pub(super) enum CarryError {
    InTheWay(PathBuf),
    Mount(PathBuf),
    Io(OutputError),
}

impl CarryError {
    pub(super) fn at(self, out: &Path) -> OutputError {
        match self {
            CarryError::InTheWay(entry) => OutputError::InTheWay { out: out.to_path_buf(), entry },
            CarryError::Mount(entry) => OutputError::MountInside { out: out.to_path_buf(), entry },
            CarryError::Io(e) => e,
        }
    }
}

/// Links every entry of the old output at `old/rel` that ccc did not write
/// into the same place under `new`. An entry on another file system than
/// its folder (a mount point) is refused: a link cannot carry it over, and
/// switching the folders would take it along into the old tree.
pub(super) fn carry_over(
    old: &Path,
    new: &Path,
    listing: &Listing,
    rel: &Path,
    kept: &mut Vec<PathBuf>,
) -> Result<(), CarryError> {
    let folder =
        fs::symlink_metadata(old.join(rel)).map_err(|e| CarryError::Io(io_error("inspect", &old.join(rel))(e)))?;
    for (name, meta) in entries_to_carry(old, rel)? {
        let r = rel.join(&name);
        if !meta.is_dir() && listing.wrote(&r) {
            continue;
        }
        if other_file_system(&old.join(rel), &folder, &old.join(&r), &meta) {
            return Err(CarryError::Mount(r));
        }
        let there = fs::symlink_metadata(new.join(&r)).ok();
        match there {
            Some(t) if meta.is_dir() && t.is_dir() => carry_over(old, new, listing, &r, kept)?,
            Some(_) => return Err(CarryError::InTheWay(r)),
            None if meta.is_dir() && listing.leads_to_ours(&r) => carry_over(old, new, listing, &r, kept)?,
            None => {
                link_tree(old, new, &r)?;
                kept.push(r);
            }
        }
    }
    Ok(())
}

/// The entries of the folder `old/rel`, every one read, or the refusal
/// to carry it over: a folder ccc cannot list (not readable, or not
/// searchable, by this user) would be carried over empty, and what it
/// holds left in the old tree, out of `OUT`.
fn entries_to_carry(old: &Path, rel: &Path) -> Result<Vec<(std::ffi::OsString, fs::Metadata)>, CarryError> {
    let dir = old.join(rel);
    every_entry(&dir).map_err(|e| CarryError::Io(io_error("carry over", &dir)(e)))
}

/// Whether `entry` (at `entry_path`), an entry of `folder` (at
/// `folder_path`), is a mount point: on another file system (a mount, or
/// a file bound onto it), or, on Linux, on another mount of the same one
/// (a bind mount of a folder of the same disk, whose device is the
/// folder's: `statx`'s mount id tells them apart).
#[cfg(unix)]
fn other_file_system(folder_path: &Path, folder: &fs::Metadata, entry_path: &Path, entry: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    folder.dev() != entry.dev() || other_mount(folder_path, entry_path)
}

#[cfg(not(unix))]
fn other_file_system(_folder_path: &Path, _folder: &fs::Metadata, _entry_path: &Path, _entry: &fs::Metadata) -> bool {
    false
}

/// Whether the folder `dir`, in `parent`, is a mount point (see
/// [`other_file_system`]): `OUT` that is one cannot be switched with the
/// new output built beside it, nor its files linked there.
pub(super) fn is_mount_point(parent: &Path, dir: &Path) -> bool {
    match (fs::metadata(parent), fs::symlink_metadata(dir)) {
        (Ok(p), Ok(d)) => other_file_system(parent, &p, dir, &d),
        _ => false,
    }
}

/// Whether `b` sits on another mount than `a` by their mount ids (Linux's
/// `statx`, not following a link); `false` where the kernel does not say.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn other_mount(a: &Path, b: &Path) -> bool {
    use rustix::fs::{AtFlags, CWD, StatxFlags, statx};
    let id = |p: &Path| {
        statx(CWD, p, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::MNT_ID)
            .ok()
            .filter(|x| StatxFlags::from_bits_retain(x.stx_mask).contains(StatxFlags::MNT_ID))
            .map(|x| x.stx_mnt_id)
    };
    matches!((id(a), id(b)), (Some(x), Some(y)) if x != y)
}

#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
fn other_mount(_a: &Path, _b: &Path) -> bool {
    false
}

/// Makes `new/rel` a twin of `old/rel`: a hard link for a file, the same
/// target for a symbolic link, and for a folder the same permissions and
/// times and a twin of every entry, refusing a mount point among them.
/// Missing parent folders are created.
fn link_tree(old: &Path, new: &Path, rel: &Path) -> Result<(), CarryError> {
    let (from, to) = (&old.join(rel), &new.join(rel));
    if let Some(dir) = to.parent() {
        fs::create_dir_all(dir).map_err(|e| CarryError::Io(io_error("create", dir)(e)))?;
    }
    let meta = fs::symlink_metadata(from).map_err(|e| CarryError::Io(io_error("inspect", from)(e)))?;
    if meta.is_dir() {
        let entries = entries_to_carry(old, rel)?;
        fs::create_dir(to).map_err(|e| CarryError::Io(io_error("create", to)(e)))?;
        for (name, entry) in entries {
            if other_file_system(from, &meta, &from.join(&name), &entry) {
                return Err(CarryError::Mount(rel.join(&name)));
            }
            link_tree(old, new, &rel.join(&name))?;
        }
        // Filling it made it newer: it keeps the old folder's times (a
        // file, hard-linked, keeps its own). Only the times: a failure
        // leaves the user's entries whole, so it fails nothing.
        if let (Ok(modified), Ok(accessed), Ok(folder)) = (meta.modified(), meta.accessed(), fs::File::open(to)) {
            let _ = folder.set_times(fs::FileTimes::new().set_modified(modified).set_accessed(accessed));
        }
        // Last: a read-only folder's twin is filled before it is closed.
        fs::set_permissions(to, meta.permissions()).map_err(|e| CarryError::Io(io_error("set permissions of", to)(e)))
    } else if meta.file_type().is_symlink() {
        let target = fs::read_link(from).map_err(|e| CarryError::Io(io_error("read", from)(e)))?;
        symlink(&target, to).map_err(|e| CarryError::Io(io_error("carry over", from)(e)))
    } else {
        // Named by the user's file, not the work folder's twin of it. A
        // link across devices is a file bound onto this place (a mount
        // point the checks above could not see).
        fs::hard_link(from, to).map_err(|e| match e.kind() {
            io::ErrorKind::CrossesDevices => CarryError::Mount(rel.to_path_buf()),
            _ => CarryError::Io(io_error("carry over", from)(e)),
        })
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

/// Puts `tmp` in the place of `out`, the folder ccc locked, whose id
/// ([`super::folder_id`]) is `out_id` (`Held::out_id`). Returns where the
/// replaced output now is, if there was one, and whether the switch was
/// one atomic step.
///
/// What stands at `out` is switched only while it is that folder: one
/// moved away and another folder or a link put in its place while ccc
/// worked is not the user's output ccc locked, and the switch would carry
/// it into the old tree, which ccc then empties (through a link, the
/// folder it leads to). It is checked before the switch and, since it may
/// change in between, what the switch moved aside is checked after it:
/// not that folder, it is switched back ([`NotOurs::Replaced`]).
pub(super) fn switch(
    place: &Place,
    tmp: &Path,
    existing: &Existing,
    out_id: Option<(u64, u64)>,
) -> Result<Option<(PathBuf, bool)>, OutputError> {
    let out = &place.out;
    let replaced = || OutputError::NotOurs { out: out.clone(), reason: NotOurs::Replaced };
    let is_read = |path: &Path| super::folder_id(path) == out_id;
    if !matches!(existing, Existing::Absent) && !is_read(out) {
        return Err(replaced());
    }
    match existing {
        // rename(2) onto an absent name or an empty folder is one step
        // (onto a folder that is not empty, or a link, it fails).
        Existing::Absent | Existing::Empty => {
            fs::rename(tmp, out).map_err(io_error("rename into place", out))?;
            Ok(None)
        }
        Existing::Ours(_) => match exchange(tmp, out) {
            Ok(()) if is_read(tmp) => Ok(Some((tmp.to_path_buf(), true))),
            Ok(()) => {
                // Put back what was switched: the new output is in `tmp`
                // again, to be removed.
                exchange(tmp, out).map_err(io_error("switch back", out))?;
                Err(replaced())
            }
            Err(_) => {
                let old = place.sibling(OLD_TAG, std::process::id());
                fs::rename(out, &old).map_err(io_error("move aside", out))?;
                if !is_read(&old) {
                    fs::rename(&old, out).map_err(io_error("move back", out))?;
                    return Err(replaced());
                }
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
pub(super) fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(io::Error::from)
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
pub(super) fn exchange(_a: &Path, _b: &Path) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// Removes from the replaced tree at `old/rel` the files ccc wrote and the
/// twins of the entries it carried over (still in `out`); folders left empty
/// go too. An entry of the user's made after [`carry_over`] read the tree
/// (written into `OUT` while ccc worked) is moved into `out` at the same
/// place where `out` has nothing of that name (a folder with what is left
/// of it once ccc's files are gone), so it does not leave `OUT` ([`Written::kept`]).
/// Anything else is left and listed ([`Written::left`]); a file of
/// ccc's that cannot be removed (made immutable) is listed with the error
/// ([`Written::unremoved`]).
pub(super) fn remove_ours(old: &Path, out: &Path, listing: &Listing, rel: &Path, written: &mut Written) {
    for (name, meta) in sorted_entries(&old.join(rel)) {
        let r = rel.join(&name);
        let path = old.join(&r);
        // A folder on the way to no file ccc wrote, and not carried over:
        // the user's, made while ccc worked (empty, or not): it moves whole.
        if meta.is_dir() && !listing.leads_to_ours(&r) && place(&path, &out.join(&r)).is_ok() {
            written.kept.push(r);
        } else if meta.is_dir() {
            let before = (written.left.len(), written.unremoved.len());
            opened(&path, &meta, || remove_ours(old, out, listing, &r, written));
            // What is left of it is the user's alone: it moves whole.
            let users_alone = written.left.len() > before.0 && written.unremoved.len() == before.1;
            if users_alone && place(&path, &out.join(&r)).is_ok() {
                written.left.truncate(before.0);
                written.kept.push(r);
            }
        } else if (listing.wrote(&r) && listing.unchanged(&r, &meta)) || twins(&path, &meta, &out.join(&r)) {
            if let Err(e) = fs::remove_file(&path) {
                written.unremoved.push((path, e.to_string()));
            }
        } else if place(&path, &out.join(&r)).is_ok() {
            written.kept.push(r);
        } else {
            written.left.push(path);
        }
    }
}
