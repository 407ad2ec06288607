#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The built binary on inputs that are huge, endless or odd: every file it
//! reads has a cap, an error quotes at most an excerpt of a token, and the
//! small refusals (not UTF-8, a byte-order mark, an unclosed comment, a
//! negative rank, an empty image, a SLOT SPAD of the wrong length) say
//! what was wrong, where, and what would be accepted. No assertion is timed:
//! the bounds are on output size.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_ccc");

/// The most stderr any refusal here may print.
const STDERR_MAX: usize = 64 << 10;

fn example_text() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join("allreduce_ring.ron");
    std::fs::read_to_string(path).unwrap()
}

fn ccc<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("run ccc")
}

/// Writes `bytes` to `name` in `dir`.
fn file(dir: &tempfile::TempDir, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The message without miette's line wrapping and box drawing.
fn unwrapped(stderr: &str) -> String {
    stderr.lines().map(|l| l.trim_start_matches([' ', '×', '│']).trim()).collect::<Vec<_>>().join(" ")
}

/// Runs ccc, expects exit 2 and a bounded stderr; returns the stderr,
/// unwrapped.
fn refused<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> String {
    let out = ccc(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "stderr:\n{}", &stderr[..stderr.len().min(4000)]);
    assert!(stderr.len() < STDERR_MAX, "{} bytes of stderr:\n{}", stderr.len(), &stderr[..4000]);
    assert!(!stderr.contains("panicked"), "{stderr}");
    unwrapped(&stderr)
}

#[test]
fn a_4_mib_identifier_is_quoted_as_an_excerpt() {
    let dir = tempfile::tempdir().unwrap();
    let long = "a".repeat(4 << 20);
    let good = example_text();
    for (name, text) in [
        ("variant.ron", good.replace("op: AllReduce", &format!("op: {long}"))),
        ("field.ron", good.replace("dtype:", &format!("{long}: 1,\n    dtype:"))),
        ("struct.ron", good.replacen("Collective", &long, 1)),
        ("number.ron", good.replace("count: 1048576", &format!("count: 1{long}"))),
        ("string.ron", good.replace("op: AllReduce", &format!("op: \"{long}\""))),
    ] {
        let path = file(&dir, name, text);
        let stderr = refused(&["check".as_ref(), path.as_os_str()]);
        assert!(!stderr.contains(&"a".repeat(200)), "{name}: a long run of the token is quoted:\n{stderr}");
        assert!(stderr.contains("allreduce") || stderr.contains(name), "{name}: {stderr}");
    }
    let path = dir.path().join("variant.ron");
    let stderr = refused(&["check".as_ref(), path.as_os_str()]);
    assert!(stderr.contains(&format!("…` ({} bytes)", long.len())), "{stderr}");
    assert!(stderr.contains("variant.ron:4:9]"), "{stderr}");
}

#[test]
fn a_long_line_keeps_its_columns_in_the_snippet() {
    let dir = tempfile::tempdir().unwrap();
    let text = example_text().replace("algorithm: Ring", &format!("{}algorithm: Rng", " ".repeat(500)));
    let line = text.lines().position(|l| l.contains("Rng")).unwrap() + 1;
    let col = text.lines().nth(line - 1).unwrap().find("Rng").unwrap() + 1;
    let path = file(&dir, "long_line.ron", &text);
    let stderr = refused(&["check".as_ref(), path.as_os_str()]);
    assert!(stderr.contains(&format!("long_line.ron:{line}:{col}]")), "{stderr}");
    // 40 chars are kept before the token: 29 spaces and `algorithm: `.
    assert!(stderr.contains(&format!("│ …{}algorithm: Rng,", " ".repeat(29))), "{stderr}");
    assert!(!stderr.contains(&" ".repeat(200)), "{stderr}");
}

#[test]
fn a_spec_larger_than_the_cap_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = example_text();
    text.push_str(&"//".repeat(9 << 20));
    let path = file(&dir, "huge.ron", text);
    for verb in ["check", "sign", "verify", "graph"] {
        let stderr = refused(&[verb.as_ref(), path.as_os_str()]);
        assert!(stderr.contains("is too large for a spec"), "{verb}: {stderr}");
        assert!(stderr.contains("16777216"), "{verb}: {stderr}");
    }
}

#[cfg(unix)]
#[test]
fn endless_input_is_refused_at_the_cap() {
    let stderr = refused(&["check", "/dev/zero"]);
    assert!(stderr.contains("/dev/zero is too large for a spec: more than 16777216 bytes"), "{stderr}");
    let stderr = refused(&["decode", "/dev/zero"]);
    assert!(stderr.contains("too large for a CTRL SPAD image"), "{stderr}");
    // A cap that is no whole number of KiB is given to a tenth.
    let stderr = refused(&["decode", "/dev/zero", "--region", "neff"]);
    assert!(stderr.contains("at most 3592 bytes (3.5 KiB)"), "{stderr}");
    let stderr = refused(&["diagnose", "/dev/zero", "/dev/zero"]);
    assert!(stderr.contains("too large"), "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    let spec = file(&dir, "spec.ron", example_text());
    let out = dir.path().join("out");
    let stderr = refused(&[
        "compile".as_ref(),
        spec.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
        "--proven-by".as_ref(),
        "/dev/zero".as_ref(),
    ]);
    assert!(stderr.contains("too large for a --proven-by manifest"), "{stderr}");
    assert!(!out.exists(), "nothing is written");
}

#[test]
fn an_image_larger_than_its_region_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (name, region, cap) in
        [("big_ctrl.bin", "ctrl", 0x1000), ("big_slot.bin", "slot", 0x8000), ("big_neff.bin", "neff", 3592)]
    {
        let path = file(&dir, name, vec![0u8; cap + 8]);
        let stderr = refused(&["decode".as_ref(), path.as_os_str(), "--region".as_ref(), region.as_ref()]);
        assert!(stderr.contains(&format!("{} bytes, more than {cap} bytes", cap + 8)), "{stderr}");
    }
    // A SLOT SPAD image whose name says nothing is taken for a CTRL SPAD
    // one, too large for it: the refusal says the region was a guess, and
    // which flag takes another (it asked "is this the right file?").
    let path = file(&dir, "tp0.slot", vec![0u8; 4816]);
    let stderr = refused(&["decode".as_ref(), path.as_os_str()]);
    let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace() && *c != '│').collect::<String>();
    for said in [
        "not a valid CTRL SPAD image: 4816 bytes, more than any arch's CTRL SPAD (4096 bytes)",
        "the region (CTRL SPAD) was taken from the file name; --region chooses another: ctrl, slot or neff",
    ] {
        assert!(squeeze(&stderr).contains(&squeeze(said)), "{stderr}");
    }
}

#[test]
fn a_large_manifest_value_is_quoted_as_an_excerpt() {
    let dir = tempfile::tempdir().unwrap();
    let spec = file(&dir, "ring.ron", example_text());
    let out = dir.path().join("out");
    let compiled = ccc(&["compile".as_ref(), spec.as_os_str(), "-o".as_ref(), out.as_os_str()]);
    assert_eq!(compiled.status.code(), Some(0), "{}", String::from_utf8_lossy(&compiled.stderr));
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    let start = manifest.find("\"signature\": \"").unwrap() + "\"signature\": \"".len();
    let end = start + manifest[start..].find('"').unwrap();
    let edited = format!("{}{}{}", &manifest[..start], "a".repeat(4 << 20), &manifest[end..]);
    let bad = file(&dir, "manifest.json", edited);
    let stderr = refused(&["diagnose".as_ref(), bad.as_os_str(), spec.as_os_str()]);
    assert!(!stderr.contains(&"a".repeat(200)), "{stderr}");
}

#[test]
fn non_utf8_names_the_byte_offset_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "latin1.ron", b"Collective(\n  op: AllReduce,\n  dtype: F\xff32,\n");
    let stderr = refused(&["check".as_ref(), path.as_os_str()]);
    assert!(stderr.contains("is not UTF-8: byte 0xff at offset 39 (line 3, column 11) is not valid UTF-8"), "{stderr}");
    // Text in another encoding: re-save it.
    assert!(stderr.contains("re-save the file as UTF-8"), "{stderr}");
    // UTF-16 (as Windows tools save it) holds NULs and is still text.
    let utf16: Vec<u8> =
        [0xFF, 0xFE].into_iter().chain(example_text().encode_utf16().flat_map(u16::to_le_bytes)).collect();
    let path = file(&dir, "utf16.ron", utf16);
    let stderr = refused(&["check".as_ref(), path.as_os_str()]);
    assert!(stderr.contains("this file looks like UTF-16: re-save it as UTF-8"), "{stderr}");
    assert!(!stderr.contains("binary"), "{stderr}");
}

/// An image given where a spec or manifest goes (by its name, or a NUL in
/// its bytes) is called a binary file, and the verbs that read images
/// and folders are named, not told to re-save it as UTF-8.
#[test]
fn an_image_given_as_text_is_called_binary() {
    let dir = tempfile::tempdir().unwrap();
    let spec = file(&dir, "ring.ron", example_text());
    let binary = "this looks like a binary file (a compiled image?), not a spec or manifest: `ccc decode`";
    for (name, bytes) in [("ctrl_spad.bin", &b"\x01\x80\x02\x03"[..]), ("data", &b"\x00\x00\xff\x01"[..])] {
        let image = file(&dir, name, bytes);
        let stderr = refused(&["diagnose".as_ref(), spec.as_os_str(), image.as_os_str()]);
        assert!(stderr.contains("is not UTF-8"), "{stderr}");
        assert!(stderr.contains(binary), "{stderr}");
        assert!(!stderr.contains("re-save"), "{stderr}");
    }
}

#[test]
fn a_leading_bom_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let good = file(&dir, "bom.ron", format!("\u{feff}{}", example_text()));
    let out = ccc(&["check".as_ref(), good.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // An error on line 1 is at the column an editor shows.
    let bad = file(&dir, "bom_bad.ron", "\u{feff}Colective(op: AllReduce)");
    let stderr = refused(&["check".as_ref(), bad.as_os_str()]);
    assert!(stderr.contains("bom_bad.ron:1:1]"), "{stderr}");
    assert!(!stderr.contains('\u{feff}'), "{stderr}");
}

#[test]
fn an_unclosed_comment_is_marked_at_its_opening() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "unclosed.ron", "Collective(\n  op: AllReduce, /* never closed\n  dtype: F32,\n");
    let stderr = refused(&["check".as_ref(), path.as_os_str()]);
    assert!(stderr.contains("unclosed.ron:2:18]"), "{stderr}");
    assert!(stderr.contains("this comment is never closed"), "{stderr}");
}

#[test]
fn a_negative_rank_is_told_what_a_rank_is() {
    let dir = tempfile::tempdir().unwrap();
    let spec = file(&dir, "ring.ron", example_text());
    let out = dir.path().join("out");
    for args in [
        vec!["compile".as_ref(), spec.as_os_str(), "-o".as_ref(), out.as_os_str(), "--rank".as_ref(), "-1".as_ref()],
        vec!["compile".as_ref(), spec.as_os_str(), "-o".as_ref(), out.as_os_str(), "--rank=-1".as_ref()],
        vec!["graph".as_ref(), spec.as_os_str(), "--rank".as_ref(), "-3".as_ref()],
    ] {
        let stderr = refused(&args);
        assert!(stderr.contains("a rank is a non-negative integer below"), "{stderr}");
        assert!(!stderr.contains("'-- -1'"), "{stderr}");
    }
    // Too large is said as such, not as "not a whole number"; a size too.
    let stderr = refused(&["compile".as_ref(), spec.as_os_str(), "--rank".as_ref(), "4294967296".as_ref()]);
    assert!(stderr.contains("too large (a world holds at most 1048576 ranks)"), "{stderr}");
    let budget = ["compile".as_ref(), spec.as_os_str(), "--memory-budget".as_ref(), "18446744073709551616".as_ref()];
    assert!(refused(&budget).contains("is 2^64 bytes or more, past the largest size (2^64 - 1 bytes)"));
    assert!(!out.exists());
    // decode's --device and --topsp say what they accept, not clap's
    // "use '-- -1'" (which would not work).
    let image = file(&dir, "ctrl_spad.bin", []);
    for flag in ["--device", "--topsp"] {
        let stderr = refused(&["decode".as_ref(), image.as_os_str(), flag.as_ref(), "-1".as_ref()]);
        assert!(stderr.contains("accepted: a non-negative whole number"), "{flag}: {stderr}");
        assert!(!stderr.contains("'-- -1'"), "{flag}: {stderr}");
    }
}

/// An empty SLOT or `neff_configs` image is refused (both have a header);
/// an empty CTRL image is what ccc writes for a TOP_SP no collective has
/// work on (groups of one, say), and decodes as no chain.
#[test]
fn an_empty_image_is_refused_unless_ctrl() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "ctrl_spad.bin", []);
    for region in ["slot", "neff"] {
        let stderr = refused(&["decode".as_ref(), path.as_os_str(), "--region".as_ref(), region.as_ref()]);
        assert!(stderr.contains("empty image"), "{region}: {stderr}");
    }
    // ccc's own output: a 0-byte ctrl_spad.bin, which decodes.
    let spec = file(
        &dir,
        "single.ron",
        "Collective(op: AllReduce, dtype: F32, reduce: Add, count: 8, arch: Cayman, \
         topology: (rank_n: 4, local_rank_n: 4), channels: 1, algorithm: Ring, groups: [[0],[1],[2],[3]])",
    );
    let out = dir.path().join("out");
    let done = Command::new(env!("CARGO_BIN_EXE_ccc"))
        .args(["compile".as_ref(), spec.as_os_str(), "-o".as_ref(), out.as_os_str(), "-q".as_ref()])
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let ctrl = out.join("rank-0/topsp-0/ctrl_spad.bin");
    assert_eq!(std::fs::metadata(&ctrl).unwrap().len(), 0);
    for (format, printed) in [("text", "(empty: no collective has work on this TOP_SP)\n"), ("json", "[]"), ("log", "")]
    {
        let decoded = Command::new(env!("CARGO_BIN_EXE_ccc"))
            .args(["decode".as_ref(), ctrl.as_os_str(), "--format".as_ref(), format.as_ref()])
            .output()
            .unwrap();
        assert!(decoded.status.success(), "{format}: {}", String::from_utf8_lossy(&decoded.stderr));
        assert_eq!(String::from_utf8(decoded.stdout).unwrap().trim_end(), printed.trim_end(), "{format}");
    }
}

#[test]
fn a_slot_spad_of_the_wrong_length_says_the_length_expected() {
    let dir = tempfile::tempdir().unwrap();
    // record_n 1, entry_n 2: 8 + 8 (index, padded) + 2 x 8 = 32 bytes; give 24.
    let mut image = vec![1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0];
    image.extend([0u8; 8]);
    let path = file(&dir, "slot_spad.bin", image);
    let stderr = refused(&["decode".as_ref(), path.as_os_str()]);
    assert!(stderr.contains("image is 24 bytes, not the 32 its header says"), "{stderr}");
}

/// A written ring refused for VAL_MASK (a step's 64 KiB descriptors past
/// the increment register) is told to shrink the count first, not to
/// choose "a ring or Hier", which it is.
#[test]
fn a_ring_past_val_mask_is_told_a_smaller_count() {
    let dir = tempfile::tempdir().unwrap();
    let text = example_text();
    let count = text.lines().find_map(|l| l.trim().strip_prefix("count: ")).unwrap().trim_end_matches(',');
    let spec = file(&dir, "huge.ron", text.replace(&format!("count: {count},"), "count: 4611686018427387903,"));
    let stderr = refused(&["check".as_ref(), spec.as_os_str()]);
    assert!(stderr.contains("(VAL_MASK)"), "{stderr}");
    assert!(stderr.contains("than the increment register holds: a smaller count, more channels"), "{stderr}");
}
