//! Receive-address checks against the shared vectors in `tests/vectors/addresses/`, plus
//! properties no vector can pin down: no input panics, and a one-character typo in a
//! checksummed Bitcoin or Litecoin address is never accepted.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use proptest::prelude::*;
use rampart_core::widget::address::{AddressError, Chain, MAX_ADDRESS_LEN, validate_address};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct VectorFile {
    description: String,
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    chain: String,
    address: String,
    allow_testnet: bool,
    valid: bool,
    network: Option<String>,
    kind: Option<String>,
    error: Option<String>,
    #[allow(dead_code)] // Documentation for people reading the vectors.
    note: Option<String>,
}

fn vector_dir() -> PathBuf {
    common::vectors_dir().join("addresses")
}

fn vector_files() -> Vec<(String, VectorFile)> {
    let mut paths: Vec<PathBuf> = fs::read_dir(vector_dir())
        .expect("tests/vectors/addresses exists")
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no vector files in {}", vector_dir().display());
    paths
        .into_iter()
        .map(|path| {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
            let file: VectorFile = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, file)
        })
        .collect()
}

/// The outcome in the vectors' words: `valid <network> <kind>` or the error code.
fn outcome(chain: Chain, address: &str, allow_testnet: bool) -> String {
    match validate_address(chain, address, allow_testnet) {
        Ok(info) => {
            assert_eq!(info.chain, chain, "{address}");
            format!("valid {} {}", info.network.name(), info.kind.name())
        }
        Err(error) => error.code().to_owned(),
    }
}

fn expected(name: &str, index: usize, case: &Case) -> String {
    let at = format!("{name} case {index} ({:?})", case.address);
    if case.valid {
        assert!(case.error.is_none(), "{at}: a valid case has no error");
        let network = case.network.as_deref().unwrap_or_else(|| panic!("{at}: a valid case needs network"));
        let kind = case.kind.as_deref().unwrap_or_else(|| panic!("{at}: a valid case needs kind"));
        format!("valid {network} {kind}")
    } else {
        assert!(case.network.is_none() && case.kind.is_none(), "{at}: an invalid case has no network or kind");
        let code = case.error.as_deref().unwrap_or_else(|| panic!("{at}: an invalid case needs error"));
        assert!(AddressError::from_code(code).is_some(), "{at}: unknown error code {code}");
        code.to_owned()
    }
}

#[test]
fn every_vector_gives_its_exact_outcome() {
    let mut failures = Vec::new();
    let mut total = 0;
    for (name, file) in vector_files() {
        assert!(!file.description.trim().is_empty(), "{name}: empty description");
        assert!(!file.cases.is_empty(), "{name}: no cases");
        for (index, case) in file.cases.iter().enumerate() {
            let chain = Chain::from_name(&case.chain)
                .unwrap_or_else(|| panic!("{name} case {index}: unknown chain {:?}", case.chain));
            let want = expected(&name, index, case);
            let got = outcome(chain, &case.address, case.allow_testnet);
            if got != want {
                failures.push(format!(
                    "{name} case {index}: {} {:?} (allow_testnet {}): want {want}, got {got}",
                    case.chain, case.address, case.allow_testnet
                ));
            }
            total += 1;
        }
    }
    assert!(failures.is_empty(), "{} of {total} cases failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn vectors_cover_every_chain_and_error() {
    let mut chains = BTreeSet::new();
    let mut codes = BTreeSet::new();
    for (_, file) in vector_files() {
        for case in &file.cases {
            chains.insert(case.chain.clone());
            if let Some(code) = &case.error {
                codes.insert(code.clone());
            }
        }
    }
    for chain in Chain::ALL {
        assert!(chains.contains(chain.name()), "no vector for {chain}");
    }
    for error in AddressError::ALL {
        assert!(codes.contains(error.code()), "no vector expects {}", error.code());
    }
}

#[test]
fn error_codes_are_unique_stable_snake_case() {
    let mut codes = BTreeSet::new();
    let mut messages = BTreeSet::new();
    for error in AddressError::ALL {
        let code = error.code();
        assert!(!code.is_empty(), "{error:?}: empty code");
        assert!(code.starts_with("address_"), "{code}: codes share the address_ prefix");
        assert!(
            code.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "{code}: not snake_case"
        );
        assert!(codes.insert(code), "duplicate code {code}");
        let message = error.message();
        assert!(!message.is_empty() && message.ends_with('.'), "{code}: message {message:?}");
        assert!(messages.insert(message), "duplicate message for {code}");
        assert_eq!(error.to_string(), message);
        assert_eq!(AddressError::from_code(code), Some(error));
    }
    assert_eq!(AddressError::from_code("address_unknown"), None);
}

/// Valid addresses whose every character is covered by a checksum (base58check or bech32).
const CHECKSUMMED: [(Chain, &str); 8] = [
    (Chain::Bitcoin, "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"),
    (Chain::Bitcoin, "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"),
    (Chain::Bitcoin, "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"),
    (Chain::Bitcoin, "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0"),
    (Chain::Bitcoin, "BC1SW50QGDZ25J"),
    (Chain::Litecoin, "LXYx4j8PDGE8GEwDFnEQhcLyHFGsRxSJwt"),
    (Chain::Litecoin, "MEnuCzUGHaQx9fK5WYvLwR1NK4SAo8HmSr"),
    (Chain::Litecoin, "ltc1qx88q7zjd74lxwgkjmmwlqv5pd3vujuehexfttt"),
];

/// Characters typos are made of: base58, bech32 and hex letters of both cases, and a few others.
const TYPO_CHARS: &str = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ -_.";

fn check_never_panics(address: &str) {
    for chain in Chain::ALL {
        for allow_testnet in [false, true] {
            if let Ok(info) = validate_address(chain, address, allow_testnet) {
                assert_eq!(info.chain, chain);
                assert!(address.len() <= MAX_ADDRESS_LEN);
            }
        }
    }
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(address in ".{0,300}") {
        check_never_panics(&address);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        check_never_panics(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn address_shaped_text_never_panics(
        prefix in prop_oneof![
            Just(""), Just("0x"), Just("bc1"), Just("BC1"), Just("tb1"), Just("bcrt1"), Just("ltc1"), Just("tltc1"),
            Just("rltc1"), Just("1"), Just("3"), Just("L"), Just("M"), Just("So"),
        ],
        body in "[0-9a-zA-Z]{0,100}",
    ) {
        check_never_panics(&format!("{prefix}{body}"));
    }

    #[test]
    fn one_typo_in_a_checksummed_address_is_rejected(
        which in 0..CHECKSUMMED.len(),
        position in any::<proptest::sample::Index>(),
        replacement in any::<proptest::sample::Index>(),
    ) {
        let (chain, address) = CHECKSUMMED[which];
        let typo_char = TYPO_CHARS.as_bytes()[replacement.index(TYPO_CHARS.len())];
        let mut typo = address.as_bytes().to_vec();
        let at = position.index(typo.len());
        prop_assume!(typo[at] != typo_char);
        typo[at] = typo_char;
        let typo = String::from_utf8(typo).expect("ASCII");
        for allow_testnet in [false, true] {
            prop_assert!(validate_address(chain, &typo, allow_testnet).is_err(), "{typo} accepted for {chain}");
        }
    }
}
