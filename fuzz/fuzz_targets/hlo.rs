//! cargo-fuzz target `hlo`: see `ccc_backends::fuzz::hlo` for what it
//! runs and checks, and docs/fuzzing.md for how to run it.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(finding) = ccc_backends::fuzz::hlo(data) {
        panic!("hlo: {finding}");
    }
});
