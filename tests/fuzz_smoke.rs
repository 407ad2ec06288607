//! The fuzz smoke: every fuzz target's seed corpus (`fuzz/seeds/<target>/`),
//! then a fixed-seed run of mutants of it, fed to the same one-input
//! functions the cargo-fuzz targets call (`ccc_backends::fuzz`), so that
//! `cargo test` catches a panic or a broken check that the fuzzers would.
//!
//! The mutator is a small deterministic xorshift one (bit flips, byte
//! overwrites with boundary values, inserts, deletes, duplicated runs,
//! splices with another seed, swaps of numbers and identifiers for others),
//! so a failure reproduces exactly: the message names the target, the seed,
//! the round and where the input was written. It is no substitute for a
//! campaign (docs/fuzzing.md): a few thousand inputs per target, a few
//! seconds in all.
//!
//! A minimized crash from a campaign becomes a regression test by copying
//! it into `fuzz/seeds/<target>/`: every seed is run here unmutated.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stderr)]

use ccc_backends::fuzz::{Outcome, Target};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

/// Mutants per seed corpus, by target: sized so that the whole smoke runs in
/// a few seconds at the test profile.
fn rounds(target: Target) -> usize {
    match target {
        Target::RonSpec | Target::Hlo => 12_000,
        Target::Manifest => 6000,
        Target::DecodeCtrl | Target::DecodeSlot | Target::DecodeNeff => 20_000,
    }
}

/// The seed of the whole run: change it to explore, never to make a failure
/// go away.
const SEED: u64 = 0x005e_edcc_f022;

/// A xorshift64* generator: deterministic on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

/// Bytes that sit on edges: zero, sign bits, all ones, ASCII structure.
const BOUNDARY_BYTES: &[u8] = &[0x00, 0x01, 0x7f, 0x80, 0xff, b'"', b'(', b')', b'[', b']', b',', b':', b'{', b'}'];

/// Tokens swapped into text inputs: numbers at the edges of every width,
/// the spec's and the manifest's words.
const TOKENS: &[&str] = &[
    "0",
    "1",
    "-1",
    "255",
    "256",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "1e309",
    "\"\"",
    "[]",
    "()",
    "null",
    "Ring",
    "Hier",
    "Mesh",
    "AllReduce",
    "AllToAllV",
    "Permute",
    "Mariana",
    "Sunda",
    "Device",
    "Some",
    "None",
    "true",
    "\"format_version\"",
    "\"signature\"",
    "\u{feff}",
    "/*",
    "é",
];

/// One mutant of `seed`, splicing from `other` now and then; one to four
/// edits.
fn mutate(rng: &mut Rng, seed: &[u8], other: &[u8], text: bool) -> Vec<u8> {
    let mut data = seed.to_vec();
    for _ in 0..=rng.below(4) {
        let len = data.len();
        match rng.below(if text { 8 } else { 7 }) {
            0 if len > 0 => {
                let i = rng.below(len);
                data[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                data[i] = BOUNDARY_BYTES[rng.below(BOUNDARY_BYTES.len())];
            }
            2 => {
                let i = rng.below(len + 1);
                data.insert(i, rng.next() as u8);
            }
            3 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(64));
                data.drain(i..i + n);
            }
            4 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(64));
                let run: Vec<u8> = data[i..i + n].to_vec();
                let at = rng.below(len + 1);
                data.splice(at..at, run);
            }
            5 if !other.is_empty() => {
                // Our head, the other input's tail.
                let cut = rng.below(len + 1);
                let from = rng.below(other.len());
                data.truncate(cut);
                data.extend_from_slice(&other[from..]);
            }
            6 if len >= 8 && !text => {
                // A whole little-endian word set to an edge value.
                // (Word-aligned half the time, as the images' words are.)
                let mut i = rng.below(len - 7);
                if rng.chance(2) {
                    i &= !7;
                }
                let value = [0, 1, u64::MAX, u64::from(u32::MAX), 1 << 63, rng.next()][rng.below(6)];
                data[i..i + 8].copy_from_slice(&value.to_le_bytes());
            }
            7 => swap_token(rng, &mut data),
            _ => {}
        }
    }
    data
}

/// Replaces one number or identifier of a text input with a token.
fn swap_token(rng: &mut Rng, data: &mut Vec<u8>) {
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let starts: Vec<usize> =
        (0..data.len()).filter(|&i| is_word(data[i]) && (i == 0 || !is_word(data[i - 1]))).collect();
    let token = TOKENS[rng.below(TOKENS.len())].as_bytes();
    if starts.is_empty() {
        data.extend_from_slice(token);
        return;
    }
    let start = starts[rng.below(starts.len())];
    let end = (start..data.len()).find(|&i| !is_word(data[i])).unwrap_or(data.len());
    data.splice(start..end, token.iter().copied());
}

/// The seeds of a target, sorted by name.
fn seeds(target: Target) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds").join(target.name());
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            (path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&path).unwrap())
        })
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "{} holds no seeds", dir.display());
    seeds
}

/// Runs one input; a panic or a finding fails the test, naming the input
/// and writing it where it can be replayed with `cargo fuzz run TARGET FILE`.
fn run(target: Target, what: &str, data: &[u8]) -> Outcome {
    let result = catch_unwind(AssertUnwindSafe(|| target.run(data)));
    let failure = match result {
        Ok(Ok(outcome)) => return outcome,
        Ok(Err(finding)) => format!("finding: {finding}"),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            format!("panic: {message}")
        }
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fuzz-smoke");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{}-{}", target.name(), what.replace(['/', ' '], "_")));
    std::fs::write(&file, data).unwrap();
    panic!(
        "{} on {what} ({} bytes, written to {}; replay: cd fuzz && cargo fuzz run --sanitizer none {} {}): {failure}",
        target.name(),
        data.len(),
        file.display(),
        target.name(),
        file.display()
    );
}

/// Every seed, then the mutants of one target.
fn smoke(target: Target) {
    let seeds = seeds(target);
    let text = matches!(target, Target::RonSpec | Target::Manifest | Target::Hlo);
    let mut accepted = 0;
    for (name, data) in &seeds {
        accepted += usize::from(run(target, &format!("seed {name}"), data).accepted);
    }
    assert!(accepted > 0, "{}: no seed is accepted: the checks past the first refusal never run", target.name());
    let mut rng = Rng(SEED ^ (target as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let (mut mutants_accepted, mut messages) = (0, 0);
    for round in 0..rounds(target) {
        let (name, seed) = &seeds[rng.below(seeds.len())];
        let other = &seeds[rng.below(seeds.len())].1;
        let data = mutate(&mut rng, seed, other, text);
        let outcome = run(target, &format!("round {round} from {name}"), &data);
        mutants_accepted += usize::from(outcome.accepted);
        messages += outcome.messages.len();
    }
    // Not vacuous: some mutants get past the reader, some are refused
    // (and their messages were checked).
    assert!(mutants_accepted > 0, "{}: no mutant was accepted", target.name());
    assert!(messages > 0, "{}: no mutant was refused", target.name());
}

#[test]
fn ron_spec() {
    smoke(Target::RonSpec);
}

#[test]
fn decode_ctrl() {
    smoke(Target::DecodeCtrl);
}

#[test]
fn decode_slot() {
    smoke(Target::DecodeSlot);
}

#[test]
fn decode_neff() {
    smoke(Target::DecodeNeff);
}

#[test]
fn manifest() {
    smoke(Target::Manifest);
}

#[test]
fn hlo() {
    smoke(Target::Hlo);
}

/// The mutator is deterministic: the same seed gives the same mutants.
#[test]
fn mutants_are_reproducible() {
    let seed = b"Collective(op: AllReduce, count: 4096)";
    let draw = || {
        let mut rng = Rng(SEED);
        (0..50).map(|_| mutate(&mut rng, seed, b"[1, 2]", true)).collect::<Vec<_>>()
    };
    assert_eq!(draw(), draw());
}

/// The `hlo` target imports every fixture for a machine of its device
/// count, named by its header or, in lowered text, by its ids: each valid
/// fixture seed with collectives is accepted and refused nothing (its
/// collectives validated, built and signed, and compiled up to 16 ranks),
/// whatever its count. Before the target was chosen per module, the 16-,
/// 32- and 64-device fixtures were refused at their header or groups.
#[test]
fn hlo_fixtures_of_every_device_count_are_accepted() {
    /// Seeds that are not fixtures (`fuzz/seeds/regenerate.sh` names them
    /// by their folder in `tests/hlo/`).
    const NOT_FIXTURES: [&str; 3] = ["invalid-", "handwritten-", "regression-"];
    let mut counts = std::collections::BTreeSet::new();
    for (name, data) in seeds(Target::Hlo) {
        let partly_manual = name.starts_with("partly_manual") && name.contains(".lowered.");
        if NOT_FIXTURES.iter().any(|p| name.starts_with(p)) || name == "gspmd_matmul_8.lowered.hlo" || partly_manual {
            // Not a fixture, a module with no collectives (lowered but
            // not partitioned), or lowered text the import refuses (a
            // shard_map manual over some mesh axes only).
            continue;
        }
        let outcome = run(Target::Hlo, &format!("seed {name}"), &data);
        assert!(outcome.accepted && outcome.messages.is_empty(), "{name}: {:?}", outcome.messages);
        let devices = name.split('.').next().unwrap().rsplit('_').next().unwrap();
        counts.insert(devices.parse::<u32>().unwrap());
    }
    assert_eq!(counts.into_iter().collect::<Vec<_>>(), [8, 16, 32, 64]);
}
