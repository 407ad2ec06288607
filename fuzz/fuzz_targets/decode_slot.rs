//! cargo-fuzz target `decode_slot`: see `ccc_backends::fuzz::decode_slot` for what it
//! runs and checks, and docs/fuzzing.md for how to run it.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(finding) = ccc_backends::fuzz::decode_slot(data) {
        panic!("decode_slot: {finding}");
    }
});
