//! cargo-fuzz target `decode_ctrl`: see `ccc_backends::fuzz::decode_ctrl` for what it
//! runs and checks, and docs/fuzzing.md for how to run it.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(finding) = ccc_backends::fuzz::decode_ctrl(data) {
        panic!("decode_ctrl: {finding}");
    }
});
