#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `ccc compile -o OUT` never loses a file it did not write: what it
//! refuses, what it keeps, what it sweeps, and how two compiles into the
//! same folder and a reader polling it get along.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

const BIN: &str = env!("CARGO_BIN_EXE_ccc");

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(name)
}

/// An 8-rank flat ring: small and quick.
fn ring() -> PathBuf {
    example("allreduce_ring.ron")
}

fn compile(out: &Path, extra: &[&str]) -> Output {
    Command::new(BIN)
        .arg("compile")
        .arg(ring())
        .arg("-o")
        .arg(out)
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .expect("run ccc")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assert_ok(out: &Output) {
    assert_eq!(out.status.code(), Some(0), "stdout:\n{}\nstderr:\n{}", text(&out.stdout), text(&out.stderr));
}

/// Exit 2, and `says` in the report (compared without whitespace and
/// frame characters: the report is wrapped to a width).
fn assert_refused(out: &Output, says: &str) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr:\n{stderr}");
    let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace() && *c != '│').collect::<String>();
    assert!(squeeze(&stderr).contains(&squeeze(says)), "stderr lacks {says:?}:\n{stderr}");
}

/// Every file under `dir` (relative), with its contents.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        let mut entries: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            let meta = fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            if meta.is_dir() {
                out.push((rel.clone(), b"<dir>".to_vec()));
                walk(root, &path, out);
            } else if meta.file_type().is_symlink() {
                out.push((rel, format!("-> {}", fs::read_link(&path).unwrap().display()).into_bytes()));
            } else {
                out.push((rel, fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out
}

/// The image files a manifest lists, and the manifest itself.
fn listed(out: &Path) -> BTreeSet<PathBuf> {
    let manifest: serde_json::Value = serde_json::from_slice(&fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let mut files = BTreeSet::from([PathBuf::from("manifest.json")]);
    for rank in manifest["ranks"].as_array().unwrap() {
        for t in rank["topsps"].as_array().unwrap() {
            for f in ["ctrl_spad.bin", "slot_spad.bin", "neff_configs.bin"] {
                files.insert(PathBuf::from(format!("rank-{}/topsp-{}/{f}", rank["rank"], t["topsp"])));
            }
        }
    }
    files
}

/// The plain files under `out`, relative.
fn files(out: &Path) -> BTreeSet<PathBuf> {
    tree(out).into_iter().filter(|(_, c)| c != b"<dir>").map(|(p, _)| p).collect()
}

/// The ring example over `rank_n` ranks of 16 a node, written to
/// `dir/name`: a write of many files, long enough to act on while it runs.
fn big_ring(dir: &Path, name: &str, rank_n: u32) -> PathBuf {
    let text = fs::read_to_string(ring())
        .unwrap()
        .replace("rank_n: 8, local_rank_n: 8", &format!("rank_n: {rank_n}, local_rank_n: 16"));
    assert!(text.contains(&format!("rank_n: {rank_n},")));
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path
}

/// Starts `ccc compile SPEC -o OUT --no-verify -q`, its output piped.
fn spawn_compile(spec: &Path, out: &Path) -> std::process::Child {
    Command::new(BIN)
        .arg("compile")
        .arg(spec)
        .arg("-o")
        .arg(out)
        .args(["--no-verify", "-q"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until a work folder `.NAME.ccc-tmp-*` is in `dir`: the compile
/// writing `NAME` is under way (and holds its locks).
fn wait_for_work_folder(dir: &Path, name: &str) {
    let prefix = format!(".{name}.ccc-tmp-");
    for _ in 0..600_000 {
        let found = fs::read_dir(dir).into_iter().flatten().flatten();
        if found.into_iter().any(|e| e.file_name().to_string_lossy().starts_with(&prefix)) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    panic!("no work folder for {name} appeared in {}", dir.display());
}

/// The work folders and files of ccc (`.NAME.ccc-...`) in `dir`.
fn debris(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".ccc-"))
        .collect()
}

/// The issue's case: a web-extension folder that happens to hold a
/// `manifest.json` was deleted whole. It must be refused, untouched.
#[test]
fn a_folder_with_a_foreign_manifest_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let ext = dir.path().join("webext");
    fs::create_dir_all(ext.join("src")).unwrap();
    fs::write(ext.join("manifest.json"), "{\"manifest_version\": 3, \"name\": \"x\"}\n").unwrap();
    fs::write(ext.join("src/main.js"), "console.log(1)\n").unwrap();
    fs::write(ext.join("README"), "mine\n").unwrap();
    let before = tree(&ext);
    let out = compile(&ext, &[]);
    assert_refused(&out, "is not a ccc manifest");
    assert!(text(&out.stderr).contains("choose another -o folder"), "{}", text(&out.stderr));
    assert_eq!(tree(&ext), before);
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no work folder left beside it");
}

/// A folder without a manifest, a plain file, a ccc output whose listed
/// file was changed or removed: each refused, each untouched.
#[test]
fn anything_not_recognisably_ccc_s_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    fs::create_dir(&plain).unwrap();
    fs::write(plain.join("thesis.tex"), "words").unwrap();
    assert_refused(&compile(&plain, &[]), "holds no manifest.json");
    assert_eq!(fs::read(plain.join("thesis.tex")).unwrap(), b"words");

    let file = dir.path().join("file");
    fs::write(&file, "data").unwrap();
    assert_refused(&compile(&file, &[]), "it is not a folder");
    assert_refused(&compile(&file, &[]), "help: -o names a folder to write");
    assert_eq!(fs::read(&file).unwrap(), b"data");

    // The root is a folder, but not one ccc can write an output in place of
    // (it used to be called "not a folder"); `..` up to it means it too.
    for root in ["/", "/tmp/../.."] {
        assert_refused(&compile(Path::new(root), &[]), "refusing to replace /: it is the root of the file system");
        assert_refused(&compile(Path::new(root), &[]), "choose a folder below the root");
    }

    let edited = dir.path().join("edited");
    assert_ok(&compile(&edited, &[]));
    fs::write(edited.join("rank-3/topsp-0/ctrl_spad.bin"), b"patched by hand").unwrap();
    let before = tree(&edited);
    assert_refused(&compile(&edited, &[]), "changed since ccc wrote it");
    assert_eq!(tree(&edited), before);

    // Edited in place, its size kept: found by its MD5 (it used to be
    // overwritten, since only sizes were compared).
    let same_size = dir.path().join("same_size");
    assert_ok(&compile(&same_size, &[]));
    // The MD5s listed are `md5sum`'s of the files on disk.
    let listed: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(same_size.join("manifest.json")).unwrap()).unwrap();
    let mut checked = 0;
    for rank in listed["ranks"].as_array().unwrap() {
        for t in rank["topsps"].as_array().unwrap() {
            for file in ["ctrl_spad", "slot_spad", "neff_configs"] {
                let path = same_size.join(format!("rank-{}/topsp-{}/{file}.bin", rank["rank"], t["topsp"]));
                let digest = hex::encode(<md5::Md5 as md5::Digest>::digest(fs::read(&path).unwrap()));
                assert_eq!(t[format!("{file}_md5")], serde_json::Value::from(digest), "{}", path.display());
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 8 * 3 * listed["topsps_used"].as_u64().unwrap());
    let image = same_size.join("rank-3/topsp-0/ctrl_spad.bin");
    let mut bytes = fs::read(&image).unwrap();
    bytes[0] ^= 0xff;
    fs::write(&image, &bytes).unwrap();
    let before = tree(&same_size);
    assert_refused(&compile(&same_size, &[]), "rank-3/topsp-0/ctrl_spad.bin was edited since ccc wrote it: its MD5 is");
    assert_eq!(tree(&same_size), before);
    // A manifest of an earlier ccc build lists sizes only: still recognised.
    let manifest = same_size.join("manifest.json");
    let text = fs::read_to_string(&manifest).unwrap();
    let sizes_only: String = text.lines().filter(|l| !l.contains("_md5\"")).map(|l| format!("{l}\n")).collect();
    let sizes_only = sizes_only.replace("_bytes\": 3592,\n", "_bytes\": 3592\n");
    assert!(!sizes_only.contains("md5"), "{sizes_only}");
    fs::write(&manifest, sizes_only).unwrap();
    assert_ok(&compile(&same_size, &[]));
    assert!(fs::read_to_string(&manifest).unwrap().contains("\"ctrl_spad_md5\""));

    fs::remove_file(edited.join("rank-3/topsp-0/ctrl_spad.bin")).unwrap();
    let before = tree(&edited);
    assert_refused(&compile(&edited, &[]), "lists rank-3/topsp-0/ctrl_spad.bin, which is missing");
    assert_eq!(tree(&edited), before);
}

/// Replacing a real earlier output keeps every file, folder and link the
/// user added, anywhere in it, and removes exactly the files ccc wrote
/// (here: ranks the new compile does not emit).
#[test]
fn replacing_an_output_keeps_what_the_user_added() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    assert_ok(&compile(&out, &[]));
    fs::write(out.join("notes.txt"), "mine").unwrap();
    fs::create_dir_all(out.join("plots/empty")).unwrap();
    fs::write(out.join("plots/a.svg"), "<svg/>").unwrap();
    fs::write(out.join("rank-5/README"), "rank five").unwrap();
    fs::write(out.join("rank-6/topsp-0/diff.txt"), "a diff").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("notes.txt", out.join("latest")).unwrap();
    let user: Vec<_> = tree(&out)
        .into_iter()
        .filter(|(p, c)| !listed(&out).contains(p) && (c != b"<dir>" || p.starts_with("plots")))
        .collect();
    // The user's folder keeps its times (it was made anew, so they were
    // the compile's).
    let long_ago = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
    fs::File::open(out.join("plots")).unwrap().set_modified(long_ago).unwrap();

    let again = compile(&out, &["--rank", "0", "--rank", "1"]);
    assert_ok(&again);
    assert_eq!(fs::metadata(out.join("plots")).unwrap().modified().unwrap(), long_ago);
    assert!(text(&again.stdout).contains("kept"), "{}", text(&again.stdout));
    let now = tree(&out);
    for entry in &user {
        assert!(now.contains(entry), "{} was lost or changed", entry.0.display());
    }
    // Only ranks 0 and 1 of ccc's files remain; the user's rank-5 README
    // and rank-6 diff keep their folders.
    let ccc: BTreeSet<_> = files(&out).into_iter().filter(|p| !user.iter().any(|(u, _)| u == p)).collect();
    assert_eq!(user.len(), 7, "{user:?}");
    assert_eq!(ccc, listed(&out));
    assert!(listed(&out).iter().all(|p| !p.starts_with("rank-5") && !p.starts_with("rank-2")));
    assert!(!out.join("rank-2").exists(), "a folder left empty by ccc's own files is removed");
    let siblings: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(siblings, vec![std::ffi::OsString::from("out")], "no work folder left beside it");
}

/// A file of the user's standing where the new output writes one of ccc's
/// is refused, not overwritten.
#[test]
fn a_users_file_in_the_way_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    assert_ok(&compile(&out, &["--rank", "0"]));
    fs::create_dir_all(out.join("rank-1/topsp-0")).unwrap();
    fs::write(out.join("rank-1/topsp-0/ctrl_spad.bin"), "hand made").unwrap();
    let before = tree(&out);
    assert_refused(&compile(&out, &[]), "rank-1/topsp-0/ctrl_spad.bin is not ccc's");
    assert_eq!(tree(&out), before);
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "the work folder is removed");
}

/// An empty folder, and a symbolic link to a folder, are written into.
#[cfg(unix)]
#[test]
fn empty_folders_and_links_to_folders_are_written_into() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    fs::create_dir(&empty).unwrap();
    assert_ok(&compile(&empty, &[]));
    assert_eq!(files(&empty), listed(&empty));

    let real = dir.path().join("real");
    fs::create_dir(&real).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert_ok(&compile(&link, &[]));
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays a link");
    assert_eq!(files(&real), listed(&real));

    // `link/` and `real/.` name the same folders (a trailing `/` used to
    // hide the link from ccc, and the rename then failed).
    let mut slash = link.clone().into_os_string();
    slash.push("/");
    assert_ok(&compile(Path::new(&slash), &[]));
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_ok(&compile(&real.join("."), &[]));
    assert_eq!(files(&real), listed(&real));
    let names: BTreeSet<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["empty", "link", "real"].into_iter().map(std::ffi::OsString::from).collect());
}

/// A replaced output keeps its folder's permissions (a private output
/// stays private), a kept read-only folder of the user's keeps its own,
/// and an empty folder written into keeps its mode too.
#[cfg(unix)]
#[test]
fn a_replaced_folder_keeps_its_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    fs::create_dir(&out).unwrap();
    fs::set_permissions(&out, fs::Permissions::from_mode(0o700)).unwrap();
    assert_ok(&compile(&out, &[]));
    assert_eq!(mode(&out), 0o700, "an empty folder written into");
    fs::create_dir(out.join("archive")).unwrap();
    fs::write(out.join("archive/a.txt"), "a").unwrap();
    fs::set_permissions(out.join("archive"), fs::Permissions::from_mode(0o555)).unwrap();
    fs::set_permissions(&out, fs::Permissions::from_mode(0o750)).unwrap();
    assert_ok(&compile(&out, &[]));
    assert_eq!(mode(&out), 0o750, "a replaced output");
    assert_eq!(mode(&out.join("archive")), 0o555);
    assert_eq!(fs::read(out.join("archive/a.txt")).unwrap(), b"a");
    let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["out"], "the old tree, read-only folder and all, is gone");
}

/// As a user who is not root (file permissions bind then): a read-only
/// output folder, and a read-only folder of the user's inside it, are
/// replaced without leaving the old tree behind, keep their modes, and a
/// second compile finds no debris. Run through `setpriv` as `nobody` when
/// the tests run as root.
#[cfg(target_os = "linux")]
#[test]
fn read_only_folders_are_replaced_cleanly_by_their_owner() {
    use std::os::unix::fs::PermissionsExt;
    // Root ignores permissions: run as `nobody` where setpriv can drop to
    // it (where it cannot, as root, the same assertions hold but test
    // less).
    let via_setpriv = fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .is_some_and(|uids| uids.split_whitespace().next() == Some("0"))
        && Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "true"])
            .output()
            .is_ok_and(|o| o.status.success());
    let as_user = |args: &[&OsStr]| -> Output {
        let mut cmd = if via_setpriv {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(BIN);
            c
        } else {
            Command::new(BIN)
        };
        cmd.args(args).stdin(Stdio::null()).output().expect("run ccc")
    };
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
    let spec = dir.path().join("ring.ron");
    fs::copy(ring(), &spec).unwrap();
    fs::set_permissions(&spec, fs::Permissions::from_mode(0o644)).unwrap();
    let out = dir.path().join("out");
    let compile = || as_user(&[OsStr::new("compile"), spec.as_os_str(), OsStr::new("-o"), out.as_os_str()]);
    assert_ok(&compile());
    let owner = |args: &[&str]| {
        let mut c = if via_setpriv { Command::new("setpriv") } else { Command::new(args[0]) };
        if via_setpriv {
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).args(args);
        } else {
            c.args(&args[1..]);
        }
        assert!(c.status().unwrap().success(), "{args:?}");
    };
    let archive = out.join("archive");
    owner(&["mkdir", archive.to_str().unwrap()]);
    owner(&["cp", spec.to_str().unwrap(), archive.join("kept.ron").to_str().unwrap()]);
    owner(&["chmod", "555", archive.to_str().unwrap()]);
    owner(&["chmod", "555", out.to_str().unwrap()]);
    for _ in 0..2 {
        assert_ok(&compile());
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&out), mode(&archive)), (0o555, 0o555));
        assert_eq!(fs::read(archive.join("kept.ron")).unwrap(), fs::read(&spec).unwrap());
        let mut names: Vec<_> =
            fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        assert_eq!(names, ["out", "ring.ron"], "no old tree or debris left beside it");
    }
    owner(&["chmod", "-R", "u+w", out.to_str().unwrap()]);
}

/// ccc refuses to switch a new folder into the place of the one it runs
/// in (the caller would be left in a removed folder), and a name too long
/// for its work folder beside it; both before writing anything.
#[test]
fn the_current_folder_and_overlong_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    assert_ok(&compile(&out, &[]));
    let before = tree(&out);
    for (cwd, arg) in [(out.clone(), "."), (out.join("rank-0"), ".."), (out.join("rank-0"), "../")] {
        let run = Command::new(BIN)
            .args(["compile", ring().to_str().unwrap(), "-o", arg])
            .current_dir(&cwd)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_refused(&run, "it is the folder ccc runs in, or holds it");
        assert_refused(&run, "help: run ccc from outside the folder it writes");
    }
    assert_eq!(tree(&out), before);

    let long = dir.path().join("y".repeat(250));
    assert_refused(&compile(&long, &[]), "its name is 250 bytes");
    assert_refused(&compile(&long, &[]), "name the output folder in at most 235 bytes");
    let fits = dir.path().join("y".repeat(235));
    assert_ok(&compile(&fits, &[]));
    // Folders made on the way that the output does not use go again
    // (`new/..` made `new`); those it uses stay.
    assert_ok(&compile(&dir.path().join("new/../made/out"), &[]));
    assert!(!dir.path().join("new").exists());
    assert!(dir.path().join("made/out/manifest.json").is_file());
    fs::remove_dir_all(dir.path().join("made")).unwrap();
    let names: BTreeSet<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["out".to_owned(), "y".repeat(235)].into_iter().map(std::ffi::OsString::from).collect());
}

/// A process id that is not running: a child that has exited.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// A compile killed while writing leaves `.OUT.ccc-tmp-PID`; the next
/// compile into the same place removes it and says so, but leaves a file
/// in it that ccc did not write.
#[test]
fn work_folders_of_dead_compiles_are_swept_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    assert_ok(&compile(&scratch, &[]));
    let pid = dead_pid();
    let stale = dir.path().join(format!(".out.ccc-tmp-{pid}"));
    fs::rename(&scratch, &stale).unwrap();
    let live = dir.path().join(format!(".out.ccc-tmp-{}", std::process::id()));
    fs::create_dir(&live).unwrap();
    fs::write(live.join("manifest.json"), "a live compile's").unwrap();
    let other = dir.path().join(format!(".other.ccc-tmp-{pid}"));
    fs::create_dir(&other).unwrap();

    let out = dir.path().join("out");
    let run = compile(&out, &[]);
    assert_ok(&run);
    let stderr = text(&run.stderr);
    assert!(stderr.contains(&format!("removed {}", stale.display())), "{stderr}");
    assert!(stderr.contains(&format!("(process {pid})")), "{stderr}");
    assert!(!stale.exists());
    assert!(live.exists(), "a live process's work folder is not touched");
    assert!(other.exists(), "another output's work folder is not touched");

    // Debris holding a file ccc does not write: that file stays.
    let stale = dir.path().join(format!(".out.ccc-tmp-{}", dead_pid()));
    fs::create_dir_all(stale.join("rank-0/topsp-0")).unwrap();
    fs::copy(out.join("rank-0/topsp-0/ctrl_spad.bin"), stale.join("rank-0/topsp-0/ctrl_spad.bin")).unwrap();
    fs::write(stale.join("precious.txt"), "not ccc's").unwrap();
    let run = compile(&out, &[]);
    assert_ok(&run);
    let stderr = text(&run.stderr);
    assert!(stderr.contains("left ") && stderr.contains("precious.txt"), "{stderr}");
    assert_eq!(fs::read(stale.join("precious.txt")).unwrap(), b"not ccc's");
    assert!(!stale.join("rank-0").exists(), "ccc's own files in it are removed");
    // The folder stays, and the note says it was kept, not removed.
    assert!(stderr.contains(&format!("kept {}", stale.display())), "{stderr}");
    assert!(!stderr.contains(&format!("removed {}", stale.display())), "{stderr}");

    // A file of a name ccc writes that does not hold what ccc writes there
    // (an image that does not decode, a manifest not of ccc's schema) is
    // not ccc's: it stays, and is named.
    let stale = dir.path().join(format!(".out.ccc-tmp-{}", dead_pid()));
    fs::create_dir_all(stale.join("rank-0/topsp-0")).unwrap();
    fs::write(stale.join("rank-0/topsp-0/slot_spad.bin"), "precious").unwrap();
    fs::write(stale.join("rank-0/topsp-0/neff_configs.bin"), [0u8; 8]).unwrap();
    fs::write(stale.join("manifest.json"), "{}").unwrap();
    let run = compile(&out, &[]);
    assert_ok(&run);
    let stderr = text(&run.stderr);
    for kept in ["rank-0/topsp-0/slot_spad.bin", "rank-0/topsp-0/neff_configs.bin", "manifest.json"] {
        assert!(stale.join(kept).exists(), "{kept} is not ccc's");
        assert!(stderr.contains(&format!("left {}", stale.join(kept).display())), "{stderr}");
    }
    assert_eq!(fs::read(stale.join("rank-0/topsp-0/slot_spad.bin")).unwrap(), b"precious");

    // A link by an image's name is the user's, even one that leads to an
    // image (read through, it decoded as one and was removed): ccc writes
    // plain files only.
    #[cfg(unix)]
    {
        let stale = dir.path().join(format!(".out.ccc-tmp-{}", dead_pid()));
        fs::create_dir_all(stale.join("rank-0/topsp-0")).unwrap();
        let link = stale.join("rank-0/topsp-0/ctrl_spad.bin");
        std::os::unix::fs::symlink(out.join("rank-0/topsp-0/ctrl_spad.bin"), &link).unwrap();
        let run = compile(&out, &[]);
        assert_ok(&run);
        assert!(fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()), "{}", text(&run.stderr));
        assert!(text(&run.stderr).contains(&format!("left {}", link.display())), "{}", text(&run.stderr));
    }

    // A compile that exited but was not yet reaped (a zombie, as one
    // killed while its parent has not waited for it) is dead: its work
    // folder is swept (it was counted alive, and left for a later compile).
    #[cfg(target_os = "linux")]
    {
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        let state = || {
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next())
        };
        for _ in 0..2000 {
            if state() == Some('Z') {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(state(), Some('Z'), "process {pid} did not become a zombie");
        let stale = dir.path().join(format!(".out.ccc-tmp-{pid}"));
        fs::create_dir_all(stale.join("rank-0/topsp-0")).unwrap();
        fs::copy(out.join("rank-0/topsp-0/ctrl_spad.bin"), stale.join("rank-0/topsp-0/ctrl_spad.bin")).unwrap();
        let run = compile(&out, &[]);
        child.wait().unwrap();
        assert_ok(&run);
        assert!(text(&run.stderr).contains(&format!("removed {}", stale.display())), "{}", text(&run.stderr));
        assert!(!stale.exists());
    }

    // What a compile killed while writing leaves is swept whole: an image
    // created but not yet written (empty), and the manifest under its work
    // name, cut short (a `manifest.json` is never left cut short).
    let stale = dir.path().join(format!(".out.ccc-tmp-{}", dead_pid()));
    fs::create_dir_all(stale.join("rank-0/topsp-0")).unwrap();
    fs::copy(out.join("rank-0/topsp-0/ctrl_spad.bin"), stale.join("rank-0/topsp-0/ctrl_spad.bin")).unwrap();
    fs::write(stale.join("rank-0/topsp-0/slot_spad.bin"), b"").unwrap();
    let manifest = fs::read(out.join("manifest.json")).unwrap();
    fs::write(stale.join("manifest.json.ccc-part"), &manifest[..manifest.len() / 2]).unwrap();
    let run = compile(&out, &[]);
    assert_ok(&run);
    let stderr = text(&run.stderr);
    assert!(!stale.exists(), "{stderr}");
    assert!(stderr.contains(&format!("removed {}", stale.display())), "{stderr}");
    assert!(!stderr.contains(&format!("left {}", stale.display())), "{stderr}");
    // A compile leaves no work name behind.
    assert!(!out.join("manifest.json.ccc-part").exists());

    // A link ccc made to a user's file carried over goes (the same file is
    // at the same place in OUT); a link to a file anywhere else stays.
    fs::write(out.join("notes.txt"), "mine").unwrap();
    let home = dir.path().join("home");
    fs::create_dir(&home).unwrap();
    fs::write(home.join("shared.txt"), "shared").unwrap();
    let stale = dir.path().join(format!(".out.ccc-tmp-{}", dead_pid()));
    fs::create_dir(&stale).unwrap();
    fs::hard_link(out.join("notes.txt"), stale.join("notes.txt")).unwrap();
    fs::hard_link(home.join("shared.txt"), stale.join("shared.txt")).unwrap();
    let run = compile(&out, &[]);
    assert_ok(&run);
    assert!(!stale.join("notes.txt").exists(), "the twin of OUT's notes.txt is ccc's link");
    assert_eq!(fs::read(stale.join("shared.txt")).unwrap(), b"shared", "not a twin of anything in OUT");
    assert_eq!(fs::read(out.join("notes.txt")).unwrap(), b"mine");

    // A file of an image's name holding an image, but linked from the
    // user's folder (not from the same place in OUT), is the user's: ccc
    // writes its own files under one name. (It was removed as ccc's.)
    let image = "rank-0/topsp-0/ctrl_spad.bin";
    fs::copy(out.join(image), home.join("precious.bin")).unwrap();
    let stale = dir.path().join(format!(".out.ccc-tmp-{}", dead_pid()));
    fs::create_dir_all(stale.join("rank-0/topsp-0")).unwrap();
    fs::hard_link(home.join("precious.bin"), stale.join(image)).unwrap();
    let run = compile(&out, &[]);
    assert_ok(&run);
    let stderr = text(&run.stderr);
    assert!(stale.join(image).exists(), "{stderr}");
    assert!(stderr.contains(&format!("left {}", stale.join(image).display())), "{stderr}");
    assert_eq!(fs::read(stale.join(image)).unwrap(), fs::read(home.join("precious.bin")).unwrap());
}

/// Runs `script` in `dir` with `sh`, which becomes ccc (`exec` keeps its
/// process id): `$0` is ccc, `$1` the ring spec.
#[cfg(unix)]
fn as_this_process(dir: &Path, script: &str) -> Output {
    Command::new("sh")
        .current_dir(dir)
        .args(["-c", script, BIN])
        .arg(ring())
        .stdin(Stdio::null())
        .output()
        .expect("run sh")
}

/// What in `dir` bears a work name of `out`'s.
#[cfg(unix)]
fn work_names(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(".out.ccc-tmp-"))
        .collect()
}

/// A dead compile's work folder under this very process id (ids are
/// reused: a container's first process often has the same one) that holds
/// a user's files: the sweep removes ccc's own files from it and leaves the
/// rest, and the compile, which cannot make its work folder there, refuses
/// and says why, removing nothing more. (It once removed the whole folder,
/// the user's files with it, and said the folder was as it was.)
#[cfg(unix)]
#[test]
fn a_work_folder_under_this_process_id_holding_user_files_is_left_whole() {
    let dir = tempfile::tempdir().unwrap();
    // `sh` makes the folder under its own id, then becomes ccc (`exec`
    // keeps the id), so ccc finds its work folder's name taken.
    let script = r#"w=".out.ccc-tmp-$$"; mkdir -p "$w/sub" "$w/rank-0/topsp-0" &&
        echo notes > "$w/notes.txt" && echo deep > "$w/sub/deep.txt" &&
        printf 12345678 > "$w/rank-0/topsp-0/neff_configs.bin" &&
        exec "$0" compile "$1" -o out"#;
    let run = as_this_process(dir.path(), script);
    assert_refused(&run, "ccc works in");
    assert_refused(&run, "holds files ccc did not write:");
    // The files it holds are named (those the sweep left).
    assert_refused(&run, "notes.txt");
    let work = work_names(dir.path());
    assert_eq!(work.len(), 1, "{work:?}");
    let work = &work[0];
    assert_eq!(fs::read(work.join("notes.txt")).unwrap(), b"notes\n");
    assert_eq!(fs::read(work.join("sub/deep.txt")).unwrap(), b"deep\n");
    assert!(!dir.path().join("out").exists(), "nothing was written");

    // A plain file of that name: said to be one, and left.
    let script = r#"echo mine > ".out.ccc-tmp-$$" && exec "$0" compile "$1" -o out"#;
    let run = as_this_process(dir.path(), script);
    assert_refused(&run, "a file of that name is there");
    let files: Vec<PathBuf> = work_names(dir.path()).into_iter().filter(|p| p.is_file()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(fs::read(&files[0]).unwrap(), b"mine\n");
}

/// Several compiles into one folder at once all succeed (24 of them, each
/// twice: a compile gives up only after 1,024 turns lost to others, where
/// 5 to 14 of 24 once gave up after 8); a reader polling
/// `OUT/manifest.json` never finds it missing once it exists; the folder
/// ends as exactly one compile's output.
#[test]
fn concurrent_compiles_take_turns_and_readers_never_see_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    assert_ok(&compile(&out, &[]));
    let done = Arc::new(AtomicBool::new(false));
    let misses = Arc::new(AtomicU64::new(0));
    let polls = Arc::new(AtomicU64::new(0));
    let reader = {
        let (done, misses, polls, manifest) = (done.clone(), misses.clone(), polls.clone(), out.join("manifest.json"));
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                polls.fetch_add(1, Ordering::Relaxed);
                if !manifest.is_file() {
                    misses.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    let writers: Vec<_> = (0..24)
        .map(|i| {
            let out = out.clone();
            std::thread::spawn(move || {
                (0..2)
                    .map(|_| if i % 2 == 0 { compile(&out, &[]) } else { compile(&out, &["--rank", "2"]) })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for w in writers {
        for run in w.join().unwrap() {
            assert_ok(&run);
        }
    }
    done.store(true, Ordering::Relaxed);
    reader.join().unwrap();
    assert!(polls.load(Ordering::Relaxed) > 0);
    assert_eq!(misses.load(Ordering::Relaxed), 0, "a reader found manifest.json missing");
    assert_eq!(files(&out), listed(&out));
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no work folder left beside it");
}

/// A file where a folder on the way to OUT must be: refused, saying so,
/// and the file is as it was.
#[test]
fn a_file_on_the_way_to_out_is_named_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("blocker");
    fs::write(&blocker, "mine").unwrap();
    let run = compile(&blocker.join("sub"), &[]);
    assert_refused(&run, "a file stands where a folder on the way to -o must be");
    assert_eq!(fs::read(&blocker).unwrap(), b"mine");
}

/// A compile into `OUT/sub` while another replaces `OUT`, either one
/// first: each waits for the other (the one into `OUT/sub` holds `OUT`'s
/// lock), so neither writes into a tree the other is switching. Before,
/// the one replacing `OUT` carried `OUT/sub`'s half-filled work folder
/// into its new tree, and the other finished there: it reported success
/// with images missing from its output, or failed saying nothing was
/// written, and left debris beside `OUT` that no later compile swept.
#[cfg(unix)]
#[test]
fn a_compile_into_a_folder_inside_out_and_one_replacing_out_take_turns() {
    let dir = tempfile::tempdir().unwrap();
    // 1,024 ranks: about 12,000 files, long enough a write to start the
    // other compile while it runs.
    let big = big_ring(dir.path(), "big.ron", 1024);
    let (start, writing) = (spawn_compile, wait_for_work_folder);
    let out = dir.path().join("nst");
    // Two folders down: one folder down, a compile that made it on the way
    // made it empty, which a switch onto it replaces.
    let sub = out.join("sub").join("deep");
    // The third case: `OUT` missing when the compile replacing it starts,
    // and the other one's folders on the way (`sub`) inside it (it once
    // made them there unlocked, and the first compile's switch failed).
    for (inner_first, out_there) in [(true, true), (false, true), (false, false)] {
        let _ = fs::remove_dir_all(&out);
        if out_there {
            assert_ok(&compile(&out, &[]));
        }
        let (first, second) = if inner_first {
            let inner = start(&big, &sub);
            writing(sub.parent().unwrap(), "deep");
            (inner, start(&ring(), &out))
        } else {
            let outer = start(&big, &out);
            writing(dir.path(), "nst");
            (outer, start(&ring(), &sub))
        };
        for child in [first, second] {
            assert_ok(&child.wait_with_output().unwrap());
        }
        let case = format!("inner first: {inner_first}, OUT there: {out_there}");
        // Both outputs whole, the inner one inside the outer as a folder
        // the outer kept; no work folder left anywhere.
        assert_eq!(files(&sub), listed(&sub), "{case}");
        let outer_files: BTreeSet<PathBuf> = files(&out).into_iter().filter(|p| !p.starts_with("sub")).collect();
        assert_eq!(outer_files, listed(&out), "{case}");
        for d in [dir.path(), out.as_path()] {
            assert_eq!(debris(d), Vec::<String>::new(), "{case}: in {}", d.display());
        }
    }
}

/// A compile into `OUT/sub` (an earlier output there) that starts after
/// a compile replacing `OUT` has switched, while it still empties the old
/// tree: it waits for that one to finish. It did not (nothing locked the
/// new `OUT`): it replaced `OUT/sub`, and the old tree's copy of the
/// earlier `sub`, no longer the same files, was left beside `OUT` as the
/// user's, named in a note by every later compile.
#[cfg(unix)]
#[test]
fn a_compile_inside_out_waits_for_one_that_switched_out_to_finish() {
    let dir = tempfile::tempdir().unwrap();
    // 1,024 ranks: about 12,000 files in the old tree to empty.
    let big = big_ring(dir.path(), "big.ron", 1024);
    let big2 = dir.path().join("big2.ron");
    fs::write(&big2, fs::read_to_string(&big).unwrap().replace("count: 1048576", "count: 2097152")).unwrap();
    let out = dir.path().join("out");
    let sub = out.join("sub");
    let quick = |spec: &Path, out: &Path| {
        Command::new(BIN).arg("compile").arg(spec).arg("-o").arg(out).args(["--no-verify", "-q"]).output().unwrap()
    };
    assert_ok(&quick(&big, &out));
    assert_ok(&compile(&sub, &[]));
    let manifest = out.join("manifest.json");
    let before = fs::read(&manifest).unwrap();
    let outer = spawn_compile(&big2, &out);
    // The switch: `OUT` holds the new manifest.
    let mut switched = false;
    for _ in 0..600_000 {
        if fs::read(&manifest).is_ok_and(|m| m != before) {
            switched = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    assert!(switched, "the compile replacing OUT never switched");
    let other = dir.path().join("other.ron");
    fs::write(&other, fs::read_to_string(ring()).unwrap().replace("count: 1048576", "count: 2097152")).unwrap();
    let inner = quick(&other, &sub);
    let outer = outer.wait_with_output().unwrap();
    assert_ok(&inner);
    assert_ok(&outer);
    let said = String::from_utf8_lossy(&outer.stderr);
    assert!(!said.contains("ccc did not write it"), "{said}");
    assert_eq!(files(&sub), listed(&sub));
    assert_eq!(debris(dir.path()), Vec::<String>::new());
}

/// Ctrl-C while the new output is written: the compile stops before it
/// takes `OUT`'s place, removes its work folder and exits 130; `OUT` is
/// as it was, the user's file in it too. (The signal ended it, leaving a
/// work folder of every rank's images until the next compile.) SIGTERM
/// the same, exit 143.
#[cfg(unix)]
#[test]
fn an_interrupted_compile_leaves_out_as_it_was_and_no_work_folder() {
    let dir = tempfile::tempdir().unwrap();
    // 4,096 ranks: about 49,000 files to write.
    let big = big_ring(dir.path(), "big.ron", 4096);
    let out = dir.path().join("out");
    assert_ok(&compile(&out, &[]));
    fs::write(out.join("notes.txt"), "mine").unwrap();
    let before = files(&out);
    for (signal, code) in [("-INT", 130), ("-TERM", 143)] {
        let child = spawn_compile(&big, &out);
        wait_for_work_folder(dir.path(), "out");
        assert!(Command::new("kill").arg(signal).arg(child.id().to_string()).status().unwrap().success());
        let run = child.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(code), "{signal}: {said}");
        assert!(said.contains("interrupted: nothing was written (the output folder is as it was)"), "{said}");
        assert_eq!(files(&out), before, "{signal}");
        assert_eq!(fs::read(out.join("notes.txt")).unwrap(), b"mine");
        assert_eq!(debris(dir.path()), Vec::<String>::new(), "{signal}");
    }
}

/// A process holding a lock on a folder while it lives, killed when
/// dropped (`flock --no-fork -x DIR sleep`: the holder is the process
/// killed).
struct Locker(std::process::Child);

impl Drop for Locker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A compile that finds another holding `OUT`'s lock says it waits, and a
/// Ctrl-C while it waits stops it (exit 130, nothing written): it waited
/// silently, and a Ctrl-C took effect only once the other let go.
#[cfg(unix)]
#[test]
fn a_compile_waiting_for_a_lock_says_so_and_stops_on_ctrl_c() {
    use std::io::{BufRead, BufReader, Read};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    assert_ok(&compile(&out, &["-q"]));
    let before = files(&out);
    // Held for a minute, not for good: a compile that regressed to
    // waiting silently, or past its Ctrl-C, then takes the lock and ends
    // without the note or with 0, and the test fails within that minute
    // rather than hanging until the holder's sleep ends.
    let _locker =
        Locker(Command::new("flock").args(["--no-fork", "-x"]).arg(&out).args(["sleep", "60"]).spawn().unwrap());
    // Until the locker holds it (a compile of its own could not take it).
    let probe = || Command::new("flock").args(["-n", "-x"]).arg(&out).arg("true").status().unwrap().success();
    while probe() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut child = spawn_compile(&ring(), &out);
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains("note: waiting for another compile writing into") {
        assert_ne!(stderr.read_line(&mut said).unwrap(), 0, "ended without saying it waits: {said}");
    }
    assert!(said.contains(&format!("into {} to finish (Ctrl-C stops)", out.display())), "{said}");
    assert!(Command::new("kill").arg("-INT").arg(child.id().to_string()).status().unwrap().success());
    let status = child.wait().unwrap();
    let _ = stderr.read_to_string(&mut said);
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(said.contains("interrupted: nothing was written (the output folder is as it was)"), "{said}");
    assert_eq!(files(&out), before);
    assert_eq!(debris(dir.path()), Vec::<String>::new());
}

/// A compile killed between the two renames of the fallback switch leaves
/// the replaced output moved aside as `.OUT.ccc-old-PID` and `OUT` missing:
/// the next compile puts it back (the user's file in it with it) before it
/// replaces it, and says so. (When `OUT` came to be made empty to be
/// locked, this was swept as debris instead, and the user's file stranded
/// in it.)
#[cfg(unix)]
#[test]
fn an_output_moved_aside_by_a_dead_switch_is_put_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    assert_ok(&compile(&out, &[]));
    fs::write(out.join("notes.txt"), "mine").unwrap();
    let pid = dead_pid();
    let aside = dir.path().join(format!(".out.ccc-old-{pid}"));
    fs::rename(&out, &aside).unwrap();
    let run = compile(&out, &[]);
    assert_ok(&run);
    let stderr = text(&run.stderr);
    assert!(stderr.contains(&format!("put back {}", aside.display())), "{stderr}");
    assert_eq!(fs::read(out.join("notes.txt")).unwrap(), b"mine");
    assert!(!aside.exists());
    assert_eq!(files(&out), listed(&out).into_iter().chain([PathBuf::from("notes.txt")]).collect());
}

/// Work folders are named from `OUT`'s bytes: an output moved aside from
/// `q\xff` by a dead switch is not put back as `q\xfe` (or any name whose
/// lossy text is the same, `q\u{fffd}`): it was, and the next compile
/// into `q\xfe` then replaced it, the user's file in it moved to the
/// wrong folder.
#[cfg(unix)]
#[test]
fn names_that_are_not_utf8_keep_their_own_work_folders() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let name = |b: &[u8]| dir.path().join(std::ffi::OsStr::from_bytes(b));
    let (ff, fe) = (name(b"q\xff"), name(b"q\xfe"));
    assert_ok(&compile(&ff, &[]));
    fs::write(ff.join("notes.txt"), "mine").unwrap();
    let pid = dead_pid();
    let mut aside_name = b".q\xff".to_vec();
    aside_name.extend_from_slice(format!(".ccc-old-{pid}").as_bytes());
    let aside = name(&aside_name);
    fs::rename(&ff, &aside).unwrap();
    for other in [fe, name("q\u{fffd}".as_bytes())] {
        let run = compile(&other, &[]);
        assert_ok(&run);
        assert!(!text(&run.stderr).contains("put back"), "{}", text(&run.stderr));
        assert!(!other.join("notes.txt").exists());
        assert_eq!(fs::read(aside.join("notes.txt")).unwrap(), b"mine");
    }
    // Its own name's next compile puts it back.
    let run = compile(&ff, &[]);
    assert_ok(&run);
    assert!(text(&run.stderr).contains("put back"), "{}", text(&run.stderr));
    assert_eq!(fs::read(ff.join("notes.txt")).unwrap(), b"mine");
}

/// A symbolic link on the way to `-o` that leads nowhere, or round a
/// loop of links, is named as such, nothing written. (It was blamed on
/// other compiles after 1,024 attempts: a link whose folder another
/// compile is switching is still tried again; a loop was called a file.)
#[cfg(unix)]
#[test]
fn a_link_to_nothing_on_the_way_is_named() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("nowhere", dir.path().join("dangling")).unwrap();
    std::os::unix::fs::symlink("loop", dir.path().join("loop")).unwrap();
    for (link, why) in [("dangling", "No such file or directory"), ("loop", "Too many levels of symbolic links")] {
        let run = compile(&dir.path().join(link).join("out"), &[]);
        assert_eq!(run.status.code(), Some(2), "{}", text(&run.stderr));
        let stderr = text(&run.stderr);
        assert!(stderr.contains(&format!("cannot resolve {}: {why}", dir.path().join(link).display())), "{stderr}");
        assert!(stderr.contains("is a symbolic link to nothing (or to a loop of links)"), "{stderr}");
        assert!(!stderr.contains("times"), "{stderr}");
    }
    let mut left: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    left.sort();
    assert_eq!(left, ["dangling", "loop"]);
}

/// Makes a file immutable (`chattr +i`) while it lives, so that not even
/// root can remove it; mutable again when dropped, even on a failed
/// assertion, so that the temporary folder can go.
struct Immutable(PathBuf);

impl Immutable {
    /// `None` where `chattr` cannot (not root, or a file system without
    /// the flag).
    fn new(path: &Path) -> Option<Immutable> {
        let ok = Command::new("chattr").arg("+i").arg(path).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
        ok.then(|| Immutable(path.to_owned()))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

/// An old image ccc cannot remove (made immutable) was reported as a file
/// ccc "did not write", and the next compile called its folder the debris
/// of a compile that "died while writing" and "holds files ccc did not
/// write": the file and the OS error are named, and so is why the folder
/// stays; once the file can go, the next compile removes it.
#[test]
#[allow(clippy::print_stderr, reason = "a skip where chattr cannot run is said, not silent")]
fn an_image_ccc_cannot_remove_is_named_with_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    assert_ok(&compile(&out, &["-q"]));
    let image = out.join("rank-3/topsp-0/ctrl_spad.bin");
    let Some(mut flag) = Immutable::new(&image) else {
        eprintln!("skipped: chattr +i is not available here (needs root and a file system with the flag)");
        return;
    };
    let replaced = compile(&out, &["-q", "--rank", "0"]);
    assert_ok(&replaced);
    let stderr = text(&replaced.stderr);
    let work = work_names(dir.path());
    let [debris] = &work[..] else { panic!("one work folder left: {work:?}\n{stderr}") };
    // The old tree, with the immutable image, was moved aside.
    let stuck = debris.join("rank-3/topsp-0/ctrl_spad.bin");
    flag.0.clone_from(&stuck);
    assert!(
        stderr.contains(&format!(
            "note: could not remove {}, a file ccc wrote: Operation not permitted",
            stuck.display()
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("did not write"), "{stderr}");
    // Still stuck: kept, and said why.
    let again = compile(&out, &["-q", "--rank", "0"]);
    assert_ok(&again);
    let stderr = text(&again.stderr);
    assert!(stderr.contains("which holds files of its own it could not remove"), "{stderr}");
    assert!(!stderr.contains("died while writing") && !stderr.contains("did not write"), "{stderr}");
    // A user's file in OUT that cannot be linked into the new output is
    // named where it is (it was named by its twin in the work folder),
    // with what to do.
    let notes = out.join("notes.txt");
    fs::write(&notes, "mine").unwrap();
    let mine = Immutable::new(&notes).unwrap();
    assert_refused(&compile(&out, &["-q", "--rank", "0"]), &format!("cannot carry over {}", notes.display()));
    assert_refused(&compile(&out, &["-q", "--rank", "0"]), "make it linkable (chattr -i) or move it out of the folder");
    drop(mine);
    fs::remove_file(&notes).unwrap();
    // A dead compile's work folder kept for a folder in it that cannot go
    // is said to be, not said to hold files.
    let stale = dir.path().join(format!(".out.ccc-tmp-{}", dead_pid()));
    fs::create_dir_all(stale.join("rank-0")).unwrap();
    let folder = Immutable::new(&stale.join("rank-0")).unwrap();
    let kept = compile(&out, &["-q", "--rank", "0"]);
    assert_ok(&kept);
    let stderr = text(&kept.stderr);
    let line = stderr.lines().find(|l| l.contains(&format!("kept {}", stale.display()))).unwrap_or_default();
    assert!(line.ends_with("but could not remove the folder (or a folder inside it)"), "{stderr}");
    drop(folder);
    fs::remove_dir_all(&stale).unwrap();
    drop(flag);
    let last = compile(&out, &["-q", "--rank", "0"]);
    assert_ok(&last);
    assert!(text(&last.stderr).contains(&format!("note: removed {}", debris.display())), "{}", text(&last.stderr));
    assert!(work_names(dir.path()).is_empty());
}

/// Whether `ccc` runs as `nobody` (where this user is root, through
/// `setpriv`, `dir` given to `nobody` so that it may write there: `None`
/// where that cannot be arranged) or as this user (not root, whose folder
/// of mode 000 it may not list), to meet what this user may read and it
/// may not.
fn unprivileged(dir: &Path) -> Option<bool> {
    use std::os::unix::fs::MetadataExt;
    if !fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0) {
        return Some(false);
    }
    let chown = Command::new("chown").args(["-R", "65534:65534"]).arg(dir).status();
    let setpriv = Command::new("setpriv").arg("--version").stdout(Stdio::null()).status();
    (chown.is_ok_and(|s| s.success()) && setpriv.is_ok_and(|s| s.success())).then_some(true)
}

/// `ccc compile RING -o OUT extra...`, as `nobody` or not ([`unprivileged`]).
fn compile_as(as_nobody: bool, out: &Path, extra: &[&str]) -> Output {
    let mut command = match as_nobody {
        true => {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN]);
            c
        }
        false => Command::new(BIN),
    };
    command.arg("compile").arg(ring()).arg("-o").arg(out).args(extra).stdin(Stdio::null()).output().expect("run ccc")
}

/// A folder in a replaced output that ccc may not list (a colleague's
/// private one, or one of mode 000) is refused before anything is
/// written: it was read as empty, carried over as an empty twin, and what
/// it held left in the old tree beside `OUT` (exit 0, "kept"). A file of
/// another user's that the kernel will not let ccc link is refused too,
/// its help naming `fs.protected_hardlinks` where it blamed an immutable
/// file.
#[test]
#[allow(clippy::print_stderr, reason = "a skip where no user lacks the rights is said, not silent")]
fn an_entry_ccc_may_not_carry_over_is_refused_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let Some(as_nobody) = unprivileged(dir.path()) else {
        eprintln!("skipped: no way to run ccc without this user's rights here (setpriv)");
        return;
    };
    assert_ok(&compile_as(as_nobody, &out, &["-q"]));
    let private = out.join("colleague");
    fs::create_dir(&private).unwrap();
    fs::write(private.join("data.txt"), b"work").unwrap();
    // Root's folder, private, where ccc runs as nobody; else one of mode
    // 000, which its owner may not list either.
    fs::set_permissions(&private, fs::Permissions::from_mode(if as_nobody { 0o700 } else { 0o000 })).unwrap();
    let before = work_names(dir.path());
    let refused = compile_as(as_nobody, &out, &["-q"]);
    fs::set_permissions(&private, fs::Permissions::from_mode(0o700)).unwrap();
    assert_refused(&refused, &format!("cannot carry over {}", private.display()));
    assert_refused(&refused, "and may not list this one (not readable or not searchable by this user)");
    assert_eq!(fs::read(private.join("data.txt")).unwrap(), b"work");
    assert_eq!(work_names(dir.path()), before, "nothing left beside OUT");
    fs::remove_dir_all(&private).unwrap();
    // Root's file, where the kernel protects hard links.
    let protected = fs::read_to_string("/proc/sys/fs/protected_hardlinks").is_ok_and(|v| v.trim() == "1");
    if as_nobody && protected {
        let note = out.join("note.txt");
        fs::write(&note, b"mine").unwrap();
        std::os::unix::fs::chown(&note, Some(0), Some(0)).unwrap();
        let refused = compile_as(as_nobody, &out, &["-q"]);
        assert_refused(&refused, &format!("cannot carry over {}", note.display()));
        assert_refused(&refused, "the kernel refuses a link to a file of another user's (fs.protected_hardlinks)");
        assert_eq!(fs::read(&note).unwrap(), b"mine");
    }
}

/// A write-only folder around `OUT` (a drop folder, mode 0311) is refused
/// saying why ccc must read it (to sweep killed compiles' leftovers): the
/// help said only that nothing was written.
#[test]
#[allow(clippy::print_stderr, reason = "a skip where no user lacks the rights is said, not silent")]
fn a_folder_around_out_that_cannot_be_read_says_why_it_must_be() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let Some(as_nobody) = unprivileged(dir.path()) else {
        eprintln!("skipped: no way to run ccc without this user's rights here (setpriv)");
        return;
    };
    let drop_folder = dir.path().join("drop");
    fs::create_dir(&drop_folder).unwrap();
    if as_nobody {
        std::os::unix::fs::chown(&drop_folder, Some(65534), Some(65534)).unwrap();
    }
    fs::set_permissions(&drop_folder, fs::Permissions::from_mode(0o311)).unwrap();
    let refused = compile_as(as_nobody, &drop_folder.join("out"), &["-q"]);
    fs::set_permissions(&drop_folder, fs::Permissions::from_mode(0o755)).unwrap();
    assert_refused(&refused, &format!("cannot read {}", drop_folder.display()));
    assert_refused(&refused, "ccc lists the folder holding -o's folder (to clear what killed compiles left there");
    assert!(fs::read_dir(&drop_folder).unwrap().next().is_none(), "nothing written");
}

/// A tmpfs mounted at a folder while it lives (`mount -t tmpfs`), or a
/// folder of the same file system bound there (`mount --bind`),
/// unmounted when dropped, even on a failed assertion, wherever it has
/// gone under the test's folder `root` (a compile that moved it into the
/// old tree, as one without the refusal does, takes it along).
struct Mounted(PathBuf, PathBuf);

/// The device name the tests' tmpfs mounts take.
const TEST_MOUNT: &str = "ccc-test";

impl Mounted {
    /// `None` where `mount` cannot (not root, or no mount namespace of
    /// one's own).
    fn new(path: &Path, root: &Path) -> Option<Mounted> {
        Mounted::with(&["-t", "tmpfs", TEST_MOUNT], path, root)
    }

    /// The folder `source` bound at `path` (the same file system: the same
    /// device number on both sides).
    fn bind(source: &Path, path: &Path, root: &Path) -> Option<Mounted> {
        let source = source.to_str().unwrap_or_default();
        Mounted::with(&["--bind", source], path, root)
    }

    fn with(args: &[&str], path: &Path, root: &Path) -> Option<Mounted> {
        fs::create_dir_all(path).unwrap();
        let ok = Command::new("mount").args(args).arg(path).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
        ok.then(|| Mounted(path.to_owned(), root.to_owned()))
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        // Every mount under `root`, deepest first (`/proc/self/mountinfo`'s
        // fifth field; it writes a space in a path as `\040`, and the tests'
        // paths have none).
        let mounts = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mut under: Vec<&str> =
            mounts.lines().filter_map(|l| l.split(' ').nth(4)).filter(|p| Path::new(p).starts_with(&self.1)).collect();
        under.sort_by_key(|p| std::cmp::Reverse(p.len()));
        if under.is_empty() {
            let _ = Command::new("umount").arg(&self.0).status();
        }
        for p in under {
            let _ = Command::new("umount").arg(p).status();
        }
    }
}

/// A mount point inside `OUT`, empty or not, at its top or deeper in a
/// user's folder, is refused before anything is written: a link cannot
/// carry a file across file systems (the help blamed an immutable file and
/// suggested `chattr -i`), and an empty one was "kept" as a twin folder
/// while the mount itself went into the old tree, left beside `OUT`.
#[test]
#[allow(clippy::print_stderr, reason = "a skip where mount cannot run is said, not silent")]
fn a_mount_point_inside_out_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    assert_ok(&compile(&out, &["-q"]));
    // A folder of the same file system bound there (a container's
    // volume) has the folder's device number: it was carried over as an
    // empty twin, the mount left in the old tree beside `OUT`.
    let shared = dir.path().join("shared");
    fs::create_dir_all(shared.join("sub")).unwrap();
    for (at, with_file, bound) in
        [("data", false, false), ("data", true, false), ("mine/deeper", false, false), ("data", false, true)]
    {
        let mounted = match bound {
            true => Mounted::bind(&shared, &out.join(at), dir.path()),
            false => Mounted::new(&out.join(at), dir.path()),
        };
        let Some(mount) = mounted else {
            eprintln!("skipped: mount is not available here (needs root)");
            return;
        };
        if with_file {
            fs::write(mount.0.join("f"), b"kept").unwrap();
        }
        let before = tree(&out);
        let refused = compile(&out, &["-q", "--rank", "0"]);
        assert_refused(
            &refused,
            &format!(
                "refusing to replace {}: {at} is a mount point (another file system, or a folder bound there) inside \
                 it",
                out.display()
            ),
        );
        assert_refused(&refused, "help: nothing was written; unmount it");
        assert_eq!(tree(&out), before, "{at}");
        assert!(work_names(dir.path()).is_empty(), "{at}");
        drop(mount);
    }
    // Unmounted, the folders are the user's own, kept.
    let replaced = compile(&out, &["-q", "--rank", "0"]);
    assert_ok(&replaced);
    assert!(out.join("data").is_dir() && out.join("mine/deeper").is_dir());
    assert!(work_names(dir.path()).is_empty());
}

/// An `OUT` that is itself a mount point (an output folder bound there,
/// a user's file in it; or an empty tmpfs) is refused as one, before
/// anything is written: the first said a file of the user's was "a
/// mount point inside it" (its link across devices failed), the second
/// "cannot rename into place: Device or resource busy".
#[test]
#[allow(clippy::print_stderr, reason = "a skip where mount cannot run is said, not silent")]
fn an_out_that_is_a_mount_point_is_refused_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let (shown, out) = (dir.path().join("shown"), dir.path().join("out"));
    assert_ok(&compile(&shown, &["-q"]));
    fs::write(shown.join("notes.txt"), "mine").unwrap();
    let Some(mount) = Mounted::bind(&shown, &out, dir.path()) else {
        eprintln!("skipped: mount is not available here (needs root)");
        return;
    };
    let before = tree(&out);
    let refused = compile(&out, &["-q", "--rank", "0"]);
    assert_refused(&refused, &format!("refusing to replace {}: it is a mount point", out.display()));
    assert_refused(&refused, "write into a folder inside it");
    assert_eq!(tree(&out), before);
    assert!(work_names(dir.path()).is_empty());
    drop(mount);
    let empty = dir.path().join("empty");
    let Some(mount) = Mounted::new(&empty, dir.path()) else { return };
    assert_refused(&compile(&empty, &["-q"]), "it is a mount point");
    assert!(fs::read_dir(&empty).unwrap().next().is_none());
    drop(mount);
}

/// Files written into a set-group-ID output folder take its group, as
/// they would written in it directly: the new output was built beside it
/// and its files took the parent folder's group, so a folder shared by a
/// group lost it on every compile.
#[test]
#[allow(clippy::print_stderr, reason = "a skip where the group cannot be given is said, not silent")]
fn a_set_group_id_folder_s_files_take_its_group() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    assert_ok(&compile(&out, &["-q"]));
    let mine = fs::metadata(&out).unwrap().gid();
    // Another group: root may give any; another user is refused it (and
    // the test says it skipped).
    let other = mine.wrapping_add(4242);
    if std::os::unix::fs::chown(&out, None, Some(other)).is_err() {
        eprintln!("skipped: this user cannot give a folder another group");
        return;
    }
    let mode = fs::metadata(&out).unwrap().mode();
    fs::set_permissions(&out, fs::Permissions::from_mode(mode | 0o2000)).unwrap();
    assert_ok(&compile(&out, &["-q"]));
    let (mut files, mut folders) = (0, 0);
    let mut stack = vec![out.clone()];
    while let Some(at) = stack.pop() {
        let meta = fs::symlink_metadata(&at).unwrap();
        assert_eq!(meta.gid(), other, "{}", at.display());
        if meta.is_dir() {
            assert_ne!(meta.mode() & 0o2000, 0, "{}", at.display());
            folders += 1;
            stack.extend(fs::read_dir(&at).unwrap().map(|e| e.unwrap().path()));
        } else {
            files += 1;
        }
    }
    assert!(files > 1 && folders > 1, "{files} files, {folders} folders");
}
