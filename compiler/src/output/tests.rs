use super::existing::{self, Listed, Listing};
use super::place::{Place, is_ccc_file};
use super::*;
use std::collections::BTreeMap;

fn place(name: &str) -> Place {
    Place { out: PathBuf::from(name), parent: PathBuf::from("."), name: name.into() }
}

/// Only `.NAME.ccc-tmp-PID` and `.NAME.ccc-old-PID` of this very name,
/// with a decimal PID, are work folders of ccc's.
#[test]
fn work_folder_names_are_recognised_exactly() {
    let out = place("out");
    let pid = |p: &Place, name: &str| p.sibling_pid(std::ffi::OsStr::new(name));
    assert_eq!(pid(&out, ".out.ccc-tmp-42"), Some((TMP_TAG, 42)));
    assert_eq!(pid(&out, ".out.ccc-old-7"), Some((OLD_TAG, 7)));
    for other in [
        ".out.ccc-tmp-",
        ".out.ccc-tmp-+4",
        ".out.ccc-tmp-4x",
        ".out.ccc-tmp-99999999999",
        ".out.b.ccc-tmp-4",
        ".outer.ccc-tmp-4",
        "out.ccc-tmp-4",
        ".out.ccc-new-4",
        // A process id as ccc never writes one.
        ".out.ccc-tmp-042",
        ".out.ccc-tmp-0",
    ] {
        assert_eq!(pid(&out, other), None, "{other}");
    }
    assert_eq!(pid(&place("a.b"), ".a.b.ccc-tmp-3"), Some((TMP_TAG, 3)));
    assert_eq!(out.sibling(TMP_TAG, 5), Path::new(".").join(".out.ccc-tmp-5"));
}

/// The files ccc writes, by name and place; nothing else.
#[test]
fn ccc_files_are_the_manifest_and_the_images_in_their_folders() {
    for ours in [
        "manifest.json",
        "manifest.json.ccc-part",
        "rank-0/topsp-0/ctrl_spad.bin",
        "rank-4095/topsp-3/neff_configs.bin",
    ] {
        assert!(is_ccc_file(Path::new(ours)), "{ours}");
    }
    for not in [
        "rank-0/manifest.json",
        "rank-0/manifest.json.ccc-part",
        "rank-0/topsp-0/ctrl_spad.bin.ccc-part",
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
    let listing = Listing {
        files: BTreeMap::from([(image_path(10, 0, IMAGE_FILES[0]), Listed { size: 8, md5: None, stamp: None })]),
        manifest: None,
    };
    assert!(listing.leads_to_ours(Path::new("rank-10")));
    assert!(listing.leads_to_ours(Path::new("rank-10/topsp-0")));
    assert!(!listing.leads_to_ours(Path::new("rank-1")));
    assert!(!listing.leads_to_ours(Path::new("rank-10/topsp-1")));
    assert!(listing.wrote(Path::new("manifest.json")));
    assert!(listing.wrote(&image_path(10, 0, IMAGE_FILES[0])));
    assert!(!listing.wrote(&image_path(10, 0, IMAGE_FILES[1])));
}

/// A scratch folder of this test process under the system's temporary
/// folder, empty.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ccc-output-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    dir
}

/// Another compile removing `OUT`'s parent (it made it, and it held
/// nothing) between this compile's making it and locking it: the folder
/// is made and locked again; removed every time, the compile gives up
/// with an error naming the lock, after a bounded number of attempts.
#[test]
fn a_parent_removed_before_it_is_locked_is_made_again() {
    let dir = scratch("made-again").join("parent");
    fs::create_dir_all(dir.parent().unwrap()).unwrap();
    let place = super::place::Place::of(&dir.join("out")).unwrap();
    let mut calls = 0;
    let held = super::place::hold(
        &place,
        |d| {
            calls += 1;
            fs::create_dir_all(d)?;
            if calls == 1 { fs::remove_dir(d) } else { Ok(()) }
        },
        super::place::Waiting { cancel: None, told: &|_| {} },
    );
    assert!(held.is_ok() && dir.is_dir(), "{held:?}");
    // The parent made, removed, made again; then `OUT`, made to be locked.
    assert_eq!(calls, 3);
    drop(held);
    fs::remove_dir_all(&dir).unwrap();
    let mut calls = 0;
    let refused = super::place::hold(
        &place,
        |d| {
            calls += 1;
            fs::create_dir_all(d)?;
            fs::remove_dir(d)
        },
        super::place::Waiting { cancel: None, told: &|_| {} },
    );
    assert!(matches!(&refused, Err(OutputError::Io { action: "lock", .. })), "{refused:?}");
    // One making of the parent per attempt, every attempt made.
    assert_eq!(calls, super::place::LOCK_ATTEMPTS, "{calls}");
    let _ = fs::remove_dir_all(dir.parent().unwrap());
}

/// A folder a compile made on the way stays while another compile holds
/// its lock (it is writing there, or about to), and goes once it is
/// free and empty; a lock on a folder removed and made again is not a
/// lock on the new one.
#[cfg(unix)]
#[test]
fn a_made_folder_another_compile_holds_stays() {
    let dir = scratch("held");
    fs::create_dir_all(&dir).unwrap();
    let held = super::place::lock_as(&dir, rustix::fs::FlockOperation::LockExclusive).unwrap();
    assert!(super::place::still_there(&held, &dir));
    super::place::remove_made(&dir);
    assert!(dir.is_dir(), "removed while locked");
    drop(held);
    super::place::remove_made(&dir);
    assert!(!dir.exists(), "free and empty, yet kept");
    fs::create_dir_all(&dir).unwrap();
    let held = fs::File::open(&dir).unwrap();
    fs::remove_dir(&dir).unwrap();
    assert!(!super::place::still_there(&held, &dir));
    fs::create_dir_all(&dir).unwrap();
    assert!(!super::place::still_there(&held, &dir), "a new folder at the same path");
    fs::remove_dir(&dir).unwrap();
}

/// An old tree and a new output under `scratch(name)`, each holding one
/// image at `OURS`, five bytes: a replaced output and its replacement.
fn old_and_new(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = scratch(name);
    let (old, out) = (dir.join("old"), dir.join("out"));
    for tree in [&old, &out] {
        fs::create_dir_all(tree.join(OURS).parent().unwrap()).unwrap();
        fs::write(tree.join(OURS), b"image").unwrap();
    }
    (dir, old, out)
}

/// The image [`old_and_new`] writes in both trees.
const OURS: &str = "rank-0/topsp-0/ctrl_spad.bin";

/// A listing of the image at [`OURS`] alone, found as `stamp`.
fn listing_of_ours(stamp: Option<existing::Stamp>) -> Listing {
    Listing { files: BTreeMap::from([(PathBuf::from(OURS), Listed { size: 5, md5: None, stamp })]), manifest: None }
}

/// Entries of the user's written into `OUT` while ccc worked (after the
/// old tree was read, so not carried over) move into the new output when
/// the old tree is emptied, a new folder of theirs whole with what is
/// left of it; one whose name the new output already holds stays in the
/// old tree and is listed. They ended up beside `OUT`, in the old tree.
#[test]
fn entries_written_while_ccc_worked_stay_in_out() {
    let (dir, old, out) = old_and_new("late");
    let ours = Path::new(OURS);
    for tree in [&old, &out] {
        fs::write(tree.join("taken.txt"), tree.display().to_string()).unwrap();
    }
    fs::write(old.join("late.txt"), b"mine").unwrap();
    fs::create_dir_all(old.join("rank-0/ud")).unwrap();
    fs::write(old.join("rank-0/ud/v.txt"), b"mine too").unwrap();
    fs::create_dir_all(old.join("empty/deeper")).unwrap();
    let mut written = Written::default();
    replace::remove_ours(&old, &out, &listing_of_ours(None), Path::new(""), &mut written);
    assert_eq!(fs::read(out.join("late.txt")).unwrap(), b"mine");
    assert_eq!(fs::read(out.join("rank-0/ud/v.txt")).unwrap(), b"mine too");
    assert_eq!(fs::read(out.join(ours)).unwrap(), b"image");
    assert!(out.join("empty/deeper").is_dir(), "an empty folder of the user's is theirs too");
    let kept = ["empty", "late.txt", "rank-0/ud"].map(PathBuf::from);
    assert_eq!(written.kept, kept);
    // The new output's own `taken.txt` stays; the old one is left, named.
    assert_eq!(fs::read_to_string(out.join("taken.txt")).unwrap(), out.display().to_string());
    assert_eq!(written.left, [old.join("taken.txt")]);
    assert!(!old.join(ours).exists() && !old.join("late.txt").exists() && !old.join("rank-0").exists());
    fs::remove_dir_all(&dir).unwrap();
}

/// A file at a path the old manifest lists, replaced while ccc worked
/// (removed and written again), is the user's now: not removed as ccc's,
/// but left and named where the new output holds that path. It was
/// removed silently.
#[test]
fn a_listed_file_replaced_while_ccc_worked_is_not_removed() {
    let (dir, old, out) = old_and_new("replaced");
    let ours = Path::new(OURS);
    let stamp = || Some(existing::Stamp::of(&fs::symlink_metadata(old.join(ours)).unwrap()));
    let listing = listing_of_ours(stamp());
    fs::remove_file(old.join(ours)).unwrap();
    fs::write(old.join(ours), b"MINE\n").unwrap();
    let mut written = Written::default();
    replace::remove_ours(&old, &out, &listing, Path::new(""), &mut written);
    assert_eq!(fs::read(old.join(ours)).unwrap(), b"MINE\n");
    assert_eq!(written.left, [old.join(ours)]);
    // Unchanged, it is ccc's and goes.
    replace::remove_ours(&old, &out, &listing_of_ours(stamp()), Path::new(""), &mut Written::default());
    assert!(!old.join(ours).exists());
    fs::remove_dir_all(&dir).unwrap();
}

/// Another compile putting its output in `OUT`'s place after a reader of
/// `OUT` has read the manifest and before it reads the images: the reader
/// reads the folder again and reports the new output whole, not the old
/// manifest over the new images (which it called edited); replaced every
/// time, it says so.
#[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
#[test]
fn a_folder_replaced_while_it_is_read_is_read_again() {
    use crate::testing::Case;
    use ccc_ir::enums::{AlgType, OpType};
    let root = scratch("replaced-while-read");
    let (out, next) = (root.join("out"), root.join("next"));
    let options = crate::pipeline::Options::default();
    for (dir, rank_n) in [(&out, 4), (&next, 8)] {
        let valid = Case::flat(OpType::AllReduce, AlgType::Ring, rank_n, 1).valid();
        write(dir, &crate::pipeline::compile(&valid, &options).unwrap()).unwrap();
    }
    let alone = read::read_output(&next).unwrap();
    assert!(alone.edited.is_none() && alone.images.is_some(), "{alone:?}");

    let mut switched = false;
    let read = read::read_output_between(&out, &mut || {
        if !std::mem::replace(&mut switched, true) {
            replace::exchange(&out, &next).unwrap();
        }
    })
    .unwrap();
    assert!(switched);
    assert_eq!(read, alone, "the output now in OUT's place, read whole");

    // Entries made in it while it is read (a compile into `OUT/sub`
    // makes its work folder there) change no output: read once.
    let mut made = 0;
    let read = read::read_output_between(&out, &mut || {
        made += 1;
        fs::create_dir(out.join(format!(".sub.ccc-tmp-{made}"))).unwrap();
    })
    .unwrap();
    assert_eq!((made, &read), (1, &alone));
    let error = read::read_output_between(&out, &mut || replace::exchange(&out, &next).unwrap()).unwrap_err();
    assert!(matches!(error, ReadError::Replaced { attempts: 3, .. }), "{error:?}");
    assert!(error.to_string().contains("was replaced while it was read, 3 times"), "{error}");
    fs::remove_dir_all(&root).unwrap();
}

/// A listed image written to after ccc checked it (its MD5 matched) is
/// the user's: its stamp is the file as it stood before the check, so the
/// written file no longer has it. Stamped after the checks, a file
/// rewritten between its own check and its stamp was taken for ccc's,
/// and a replacing compile removed it (a helper's probe lost two images
/// rewritten 0.7 s into a compile replacing 16,384 ranks' output).
#[test]
fn a_listed_file_written_after_its_check_is_the_users() {
    use crate::testing::Case;
    use ccc_ir::enums::{AlgType, OpType};
    let root = scratch("written-after-check");
    let out = root.join("out");
    let valid = Case::flat(OpType::AllReduce, AlgType::Ring, 4, 1).valid();
    write(&out, &crate::pipeline::compile(&valid, &crate::pipeline::Options::default()).unwrap()).unwrap();
    let rel = Path::new("rank-1/topsp-0/ctrl_spad.bin");
    let image = out.join(rel);
    let existing = existing::recognise_between(&out, &mut || {
        // The same bytes written again, an hour later by its clock: the
        // file a user wrote, whatever it holds.
        let bytes = fs::read(&image).unwrap();
        fs::write(&image, &bytes).unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
        fs::File::options().write(true).open(&image).unwrap().set_modified(later).unwrap();
    })
    .unwrap();
    let Existing::Ours(listing) = existing else { panic!("ccc's output, recognised") };
    assert!(listing.wrote(rel));
    assert!(!listing.unchanged(rel, &fs::symlink_metadata(&image).unwrap()), "written after its check: the user's");
    let other = Path::new("rank-2/topsp-0/ctrl_spad.bin");
    assert!(listing.unchanged(other, &fs::symlink_metadata(out.join(other)).unwrap()), "untouched: ccc's");
    fs::remove_dir_all(&root).unwrap();
}

/// The old manifest, replaced while ccc worked (removed and written
/// again by the user), is theirs now: left and named, not removed as
/// ccc's. It was removed silently (its stamp was never taken).
#[test]
fn a_manifest_replaced_while_ccc_worked_is_not_removed() {
    let (dir, old, out) = old_and_new("manifest-replaced");
    let manifest = Path::new(MANIFEST_FILE);
    fs::write(old.join(manifest), b"{}").unwrap();
    let stamp = || Some(existing::Stamp::of(&fs::symlink_metadata(old.join(manifest)).unwrap()));
    let listing = Listing { manifest: stamp(), ..listing_of_ours(None) };
    fs::remove_file(old.join(manifest)).unwrap();
    fs::write(old.join(manifest), b"my notes\n").unwrap();
    fs::write(out.join(manifest), b"{}").unwrap();
    let mut written = Written::default();
    replace::remove_ours(&old, &out, &listing, Path::new(""), &mut written);
    assert_eq!(fs::read(old.join(manifest)).unwrap(), b"my notes\n");
    assert_eq!(written.left, [old.join(manifest)]);
    // As read, it is ccc's and goes.
    let listing = Listing { manifest: stamp(), ..listing_of_ours(None) };
    replace::remove_ours(&old, &out, &listing, Path::new(""), &mut Written::default());
    assert!(!old.join(manifest).exists());
    fs::remove_dir_all(&dir).unwrap();
}

/// `OUT` moved away and a link to another folder put in its place while
/// ccc worked is not switched: the link stays, the folder it leads to
/// keeps what it holds (the switch took the link into the old tree, and
/// emptying that moved the folder's files into the new output), and the
/// new output stays where it was built, for the caller to remove.
#[cfg(unix)]
#[test]
fn an_out_replaced_by_a_link_while_ccc_worked_is_not_switched() {
    let dir = scratch("switch-replaced");
    let (read, proj, tmp) = (dir.join("out"), dir.join("proj"), dir.join(".out.ccc-tmp-1"));
    for folder in [&read, &proj, &tmp] {
        fs::create_dir_all(folder).unwrap();
    }
    fs::write(proj.join("main.c"), b"code").unwrap();
    fs::write(tmp.join(MANIFEST_FILE), b"{}").unwrap();
    let place = Place::of(&read).unwrap();
    let id = super::folder_id(&read);
    fs::rename(&read, dir.join("out.old")).unwrap();
    std::os::unix::fs::symlink(&proj, &read).unwrap();
    let existing = existing::Existing::Ours(listing_of_ours(None));
    let error = replace::switch(&place, &tmp, &existing, id).unwrap_err();
    assert!(matches!(error, OutputError::NotOurs { reason: NotOurs::Replaced, .. }), "{error:?}");
    assert!(fs::symlink_metadata(&read).unwrap().file_type().is_symlink());
    assert_eq!(fs::read(proj.join("main.c")).unwrap(), b"code");
    assert!(tmp.join(MANIFEST_FILE).is_file());
    // Another folder in its place is refused the same way; the folder
    // read, put back, is switched.
    fs::remove_file(&read).unwrap();
    fs::create_dir(&read).unwrap();
    let error = replace::switch(&place, &tmp, &existing, id).unwrap_err();
    assert!(matches!(error, OutputError::NotOurs { reason: NotOurs::Replaced, .. }), "{error:?}");
    fs::remove_dir(&read).unwrap();
    fs::rename(dir.join("out.old"), &read).unwrap();
    let (old, _) = replace::switch(&place, &tmp, &existing, id).unwrap().unwrap();
    assert!(read.join(MANIFEST_FILE).is_file() && super::folder_id(&old) == id);
    fs::remove_dir_all(&dir).unwrap();
}

/// The folder a write may switch is the one it locked, known by its lock,
/// not by its path after it read it: `OUT` moved away once locked and a
/// copy of it put in its place (which reads as ccc's output) is refused
/// at the switch, the copy and the moved folder untouched. (The id was
/// taken by path after reading `OUT`, so a link or folder put there
/// before that passed for the folder locked; through a link, emptying
/// the old tree emptied the folder it led to.)
#[cfg(unix)]
#[test]
fn the_folder_switched_is_the_one_locked() {
    use crate::testing::Case;
    use ccc_ir::enums::{AlgType, OpType};
    let root = scratch("switch-locked");
    let (out, moved) = (root.join("out"), root.join("out.moved"));
    let valid = Case::flat(OpType::AllReduce, AlgType::Ring, 4, 1).valid();
    let compiled = crate::pipeline::compile(&valid, &crate::pipeline::Options::default()).unwrap();
    write(&out, &compiled).unwrap();
    let before = read::read_output(&out).unwrap();
    let place = Place::of(&out).unwrap();
    let held =
        super::place::hold(&place, |d| fs::create_dir_all(d), place::Waiting { cancel: None, told: &|_| {} }).unwrap();
    fs::rename(&out, &moved).unwrap();
    let copied = std::process::Command::new("cp").arg("-a").arg(&moved).arg(&out).status().unwrap();
    assert!(copied.success());
    let images = [(PathBuf::from("rank-0/topsp-0/ctrl_spad.bin"), &b"new"[..])];
    let error = write_in(&place, held, images.into_iter(), b"{}", None).unwrap_err();
    assert!(matches!(error, OutputError::NotOurs { reason: NotOurs::Replaced, .. }), "{error:?}");
    assert_eq!(read::read_output(&out).unwrap(), before, "the copy in OUT's place, untouched");
    assert_eq!(read::read_output(&moved).unwrap(), before, "the folder locked, untouched");
    let left: Vec<_> = fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 2, "no work folder left: {left:?}");
    fs::remove_dir_all(&root).unwrap();
}
