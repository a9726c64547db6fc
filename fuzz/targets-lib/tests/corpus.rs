//! Replays the committed fuzz corpus on stable Rust: every file under `fuzz/corpus/<target>/`
//! runs through the same body the libFuzzer target runs ([`rampart_fuzz_targets::TARGETS`]),
//! so each input a fuzzer ever kept, crashing ones included, stays a regression test of
//! `cargo test`. Also checks that targets, corpus directories and libFuzzer binaries match.

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use rampart_fuzz_targets::TARGETS;

/// Keeps the committed corpus small enough to replay in well under a second.
const MAX_CORPUS_FILES: usize = 2000;
const MAX_CORPUS_BYTES: u64 = 1024 * 1024;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("fuzz/").to_path_buf()
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.is_file())
        .collect();
    out.sort();
    out
}

#[test]
fn every_corpus_file_replays_without_a_failure() {
    let corpus = fuzz_dir().join("corpus");
    let (mut count, mut bytes, mut failures) = (0usize, 0u64, Vec::new());
    for (name, body) in TARGETS {
        let inputs = files(&corpus.join(name));
        assert!(!inputs.is_empty(), "fuzz/corpus/{name} holds no input");
        for path in inputs {
            let data = std::fs::read(&path).expect("read corpus file");
            count += 1;
            bytes += data.len() as u64;
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| body(&data))) {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                failures.push(format!("{}: {message}", path.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{} corpus input(s) fail:\n{}", failures.len(), failures.join("\n"));
    assert!(count <= MAX_CORPUS_FILES, "{count} corpus files: minimise with `cargo fuzz cmin`");
    assert!(bytes <= MAX_CORPUS_BYTES, "{bytes} corpus bytes: minimise with `cargo fuzz cmin`");
}

#[test]
fn targets_corpus_directories_and_fuzzer_binaries_match() {
    let fuzz = fuzz_dir();
    let names: BTreeSet<String> = TARGETS.iter().map(|(name, _)| (*name).to_owned()).collect();
    assert_eq!(names.len(), TARGETS.len(), "target names are unique");
    let dirs: BTreeSet<String> = std::fs::read_dir(fuzz.join("corpus"))
        .expect("fuzz/corpus")
        .map(|entry| entry.expect("directory entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(dirs, names, "one fuzz/corpus/<target> directory per target");
    let manifest = std::fs::read_to_string(fuzz.join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for name in &names {
        let source = std::fs::read_to_string(fuzz.join("fuzz_targets").join(format!("{name}.rs")))
            .unwrap_or_else(|e| panic!("fuzz/fuzz_targets/{name}.rs: {e}"));
        assert!(
            source.contains(&format!("rampart_fuzz_targets::{name}(")),
            "fuzz/fuzz_targets/{name}.rs must call rampart_fuzz_targets::{name}"
        );
        assert!(manifest.contains(&format!("name = \"{name}\"")), "fuzz/Cargo.toml has no [[bin]] {name}");
    }
}
