//! libFuzzer target `widget_url`: the body is `rampart_fuzz_targets::widget_url`, shared with the stable
//! corpus replay test (fuzz/targets-lib/tests/corpus.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rampart_fuzz_targets::widget_url(data));
