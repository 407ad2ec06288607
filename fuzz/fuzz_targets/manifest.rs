//! cargo-fuzz target `manifest`: see `ccc_backends::fuzz::manifest` for what it
//! runs and checks, and docs/fuzzing.md for how to run it.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(finding) = ccc_backends::fuzz::manifest(data) {
        panic!("manifest: {finding}");
    }
});
