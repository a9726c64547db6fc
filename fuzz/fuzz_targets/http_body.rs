//! libFuzzer target `http_body`: the body is `rampart_fuzz_targets::http_body`, shared with the stable
//! corpus replay test (fuzz/targets-lib/tests/corpus.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rampart_fuzz_targets::http_body(data));
