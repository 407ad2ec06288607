//! Helpers shared by the `ir` integration tests.

use ccc_ir::wire::{DecodeError, DecodeErrorKind};

/// Concatenates 8-byte words into an image.
pub fn image(words: &[[u8; 8]]) -> Vec<u8> {
    words.concat()
}

/// Asserts two byte strings are equal, and on failure names the first
/// differing offset and up to 16 differing offsets, so that a failure in a
/// 3592-byte block reads as "at offset 0x898: got 01, want 00" rather than
/// as two walls of numbers.
#[track_caller]
pub fn assert_bytes_eq(actual: &[u8], expected: &[u8], what: &str) {
    if actual == expected {
        return;
    }
    let diffs: Vec<String> = actual
        .iter()
        .zip(expected)
        .enumerate()
        .filter(|(_, (a, e))| a != e)
        .take(16)
        .map(|(i, (a, e))| format!("  at offset {i:#06x} ({i}): got {a:02x}, want {e:02x}"))
        .collect();
    panic!("{what}: bytes differ (got {} bytes, want {} bytes)\n{}", actual.len(), expected.len(), diffs.join("\n"));
}

/// Asserts that a decode failed at `offset` with a `ReservedBits` error.
#[track_caller]
pub fn assert_reserved_at<T: std::fmt::Debug>(result: Result<T, DecodeError>, offset: u64, what: &str) {
    match result {
        Err(DecodeError { offset: got, kind: DecodeErrorKind::ReservedBits { .. } }) if got == offset => {}
        other => panic!("{what}: want ReservedBits at offset {offset:#x}, got {other:?}"),
    }
}

/// Asserts that a decode failed at `offset` with a `BadValue` error for `field`.
#[track_caller]
pub fn assert_bad_value_at<T: std::fmt::Debug>(result: Result<T, DecodeError>, offset: u64, field: &str, what: &str) {
    match result {
        Err(DecodeError { offset: got, kind: DecodeErrorKind::BadValue { field: f, .. } })
            if got == offset && f == field => {}
        other => panic!("{what}: want BadValue({field}) at offset {offset:#x}, got {other:?}"),
    }
}

/// Asserts that a decode failed with a `BadLength` error reporting `len`.
#[track_caller]
pub fn assert_bad_length<T: std::fmt::Debug>(result: Result<T, DecodeError>, len: usize, what: &str) {
    match result {
        Err(DecodeError { kind: DecodeErrorKind::BadLength { len: got, .. }, .. }) if got == len as u64 => {}
        other => panic!("{what}: want BadLength({len}), got {other:?}"),
    }
}
