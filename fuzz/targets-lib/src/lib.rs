//! The bodies of Rampart's fuzz targets, in one place.
//!
//! Each public function takes the fuzzer's bytes, feeds them to one parser of untrusted input
//! and asserts the properties that parser promises; a broken promise is a panic. Two callers
//! run exactly these bodies: the libFuzzer targets in `fuzz/fuzz_targets/` (nightly,
//! `make fuzz`) and the corpus replay test in `tests/corpus.rs` (stable, `cargo test`), which
//! runs every committed input under `fuzz/corpus/<target>/` through [`TARGETS`].
//!
//! ```
//! // A corpus file is just bytes; a target never panics on input that keeps its promises.
//! rampart_fuzz_targets::token(b" 123-456 ");
//! rampart_fuzz_targets::http_body(br#"{"contactId":"x","token":1e400}"#);
//! ```

use std::sync::LazyLock;

use rampart_core::crypto::Field;
use rampart_core::token::{Code, MAX_TOKEN_BYTES, Token};
use rampart_core::widget::address::{AddressError, AddressKind, Chain, MAX_ADDRESS_LEN, Network, validate_address};
use rampart_core::widget::{
    IframeOptions, MAX_SHOWN_CHARS, Severity, SnippetError, Target, ValidatedOptions, Validation, WidgetConfig,
    build_url, iframe_snippet, parse_url, script_snippet, sign_url, validate_value, verify_signed_url,
    verify_signed_url_with_key_hash,
};
use rampart_core::{ContactId, Environment, KeyRing, PartnerId};
use rampart_server::ApiError;
use rampart_server::input::{JsonObject, Query, contact_id};
use serde_json::Value;

/// A fuzz target: the name of its libFuzzer binary and corpus directory, and its body.
pub type NamedTarget = (&'static str, fn(&[u8]));

/// Every target by name. The replay test requires a corpus directory and a libFuzzer binary
/// for each, and a body here for each corpus directory.
pub const TARGETS: &[NamedTarget] = &[
    ("token", token),
    ("widget_options", widget_options),
    ("widget_url", widget_url),
    ("address", address),
    ("key_file", key_file),
    ("http_body", http_body),
];

/// The widget configuration every widget target uses: the defaults (Rampart roots and coins).
static CONFIG: LazyLock<WidgetConfig> = LazyLock::new(WidgetConfig::default);

/// Secret keys for signing, the ones `tests/vectors/widget/sign.json` uses, so the signed URLs
/// of that file (seeds of `widget_url`) verify and the success path is fuzzed too.
const SANDBOX_SECRET_KEY: &str = "sk_sandbox_9fJ2kLmN3pQrS7tUvWxYz";
const PRODUCTION_SECRET_KEY: &str = "sk_production_7hG5fD3sA1qW9eR7tY5uI3oP";
/// The signing time, and a verification time and maximum age that accept it (as in sign.json).
const SIGNED_AT: u64 = 1_700_000_000;
const VERIFY_NOW: u64 = 1_700_000_100;
const MAX_AGE: u64 = 600;

// ---------------------------------------------------------------------------------------------
// token
// ---------------------------------------------------------------------------------------------

/// The token grammar (SPEC section 2): `Token::parse` on the bytes as text must agree with a
/// model written from the specification's words, and `Token::from_json` on the bytes as JSON
/// must classify every JSON type as the specification says.
pub fn token(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let got = Token::parse(text);
        assert_eq!(got, token_model(text), "Token::parse({text:?})");
        if let Token::Code(code) = got {
            let canonical = format!("{:06}", code.value());
            assert_eq!(Token::parse(&canonical), got, "a code's canonical text reads back");
            assert_eq!(Token::from(code.value()), got, "a code's value reads back");
        }
    }
    if let Ok(value) = serde_json::from_slice::<Value>(data) {
        let expected = match &value {
            Value::Null => Token::Missing,
            Value::String(s) => token_model(s),
            // An integer 0..=999999; floats (`1.0`, `-0`), negatives and larger are malformed.
            Value::Number(n) => n
                .as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .and_then(Code::from_value)
                .map_or(Token::Malformed, Token::Code),
            Value::Bool(_) | Value::Array(_) | Value::Object(_) => Token::Malformed,
        };
        assert_eq!(Token::from_json(Some(&value)), expected, "Token::from_json({value})");
    }
    assert_eq!(Token::from_json(None), Token::Missing);
}

/// SPEC section 2 restated over characters (the implementation works on bytes): trim ASCII
/// white space; nothing left is missing; over 64 bytes is malformed; then six ASCII digits,
/// with one optional space or hyphen between the third and the fourth.
fn token_model(input: &str) -> Token {
    let trimmed = input.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{c}'));
    if trimmed.is_empty() {
        return Token::Missing;
    }
    if input.len() > MAX_TOKEN_BYTES {
        return Token::Malformed;
    }
    let chars: Vec<char> = trimmed.chars().collect();
    let digits: Vec<char> = match chars.as_slice() {
        [a, b, c, sep, d, e, f] if *sep == ' ' || *sep == '-' => vec![*a, *b, *c, *d, *e, *f],
        six if six.len() == 6 => six.to_vec(),
        _ => return Token::Malformed,
    };
    let Some(values) =
        digits.iter().map(|c| c.is_ascii_digit().then(|| c.to_digit(10)).flatten()).collect::<Option<Vec<u32>>>()
    else {
        return Token::Malformed;
    };
    Code::from_value(values.iter().fold(0, |acc, d| acc * 10 + d)).map_or(Token::Malformed, Token::Code)
}

// ---------------------------------------------------------------------------------------------
// widget options and URLs
// ---------------------------------------------------------------------------------------------

/// Widget options as JSON (any JSON value), validated for both targets under every
/// environment hint. Every validation is self-consistent and redacts keys; every valid set
/// round-trips: `validate(parse_url(build_url(o))) == o`, signing then verifying gives the
/// options back, and the snippets cannot be broken out of.
pub fn widget_options(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<Value>(data) else { return };
    let config = &*CONFIG;
    for target in [Target::Url, Target::Script] {
        for hint in [None, Some(Environment::Sandbox), Some(Environment::Production)] {
            let validation = validate_value(&value, target, hint, config);
            check_validation(&validation);
            if let Some(options) = &validation.options {
                assert_eq!(options.target(), target);
                if let Some(hint) = hint {
                    assert_eq!(options.environment(), hint, "the caller's environment is kept");
                }
                check_valid_options(options, config);
            }
        }
    }
}

/// A custom URL (any text): parsing never panics and errors have codes; a parsed URL validates
/// consistently in its root's environment, and when valid its canonical form is a fixed point
/// with every round trip of [`widget_options`]. Signature verification never panics, and a
/// URL it accepts reads as the same options without the signature parameters.
pub fn widget_url(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let config = &*CONFIG;
    match parse_url(text, config) {
        Err(e) => assert!(e.code().starts_with("url_"), "{e:?}"),
        Ok(parsed) => {
            for key in ["timestamp", "signature"] {
                assert!(!parsed.options.contains_key(key), "{key} is never an option");
            }
            let validation = parsed.validate(config);
            check_validation(&validation);
            if let Some(options) = &validation.options {
                assert_eq!(options.target(), Target::Url);
                assert_eq!(options.environment(), parsed.environment, "the root gives the environment");
                check_valid_options(options, config);
            }
        }
    }
    for key in [SANDBOX_SECRET_KEY, PRODUCTION_SECRET_KEY] {
        if let Ok(verified) = verify_signed_url(text, key, VERIFY_NOW, MAX_AGE, config) {
            let parsed = parse_url(text, config).expect("a verified URL parses");
            assert_eq!(verified.environment, parsed.environment);
            assert_eq!(verified.options, parsed.options, "signature parameters never change the options");
        }
    }
    let _ = verify_signed_url_with_key_hash(text, &[0x5a; 32], VERIFY_NOW, MAX_AGE, config);
}

/// What every validation promises: options exactly when there is no error, severities that
/// match the list, issue values cut to [`MAX_SHOWN_CHARS`] and values and paths with secret
/// keys shown only by prefix, and a JSON form.
fn check_validation(validation: &Validation) {
    assert_eq!(validation.options.is_some(), validation.errors.is_empty(), "options exactly when valid");
    for (issues, severity) in [(&validation.errors, Severity::Error), (&validation.warnings, Severity::Warning)] {
        for issue in issues {
            assert_eq!(issue.kind.severity(), severity, "{issue:?}");
            assert_eq!(issue.code, issue.kind.code());
            assert_eq!(issue.message, issue.kind.message());
            if let Some(value) = &issue.value {
                assert!(value.chars().count() <= MAX_SHOWN_LIMIT, "value cut to {MAX_SHOWN_CHARS}: {issue:?}");
                assert_secret_keys_redacted(value);
            }
            // A path may hold an option name the caller chose: it is shown the same way.
            assert_secret_keys_redacted(&issue.path);
        }
    }
    serde_json::to_string(validation).expect("a validation serialises");
}

/// The longest issue value: [`MAX_SHOWN_CHARS`] characters and `…` (a secret key past them is
/// not shown at all). Input `crash-4fbbd3db…` of `widget_options` once went beyond it.
const MAX_SHOWN_LIMIT: usize = MAX_SHOWN_CHARS + 1;

/// Every secret-key marker in `shown` is followed by the ellipsis: the key body never shows.
fn assert_secret_keys_redacted(shown: &str) {
    for marker in ["sk_sandbox_", "sk_production_"] {
        for (at, _) in shown.match_indices(marker) {
            let rest = &shown[at + marker.len()..];
            assert!(rest.starts_with('…'), "secret key shown in an issue: {shown:?}");
        }
    }
}

/// The round trips and snippet properties of valid options.
fn check_valid_options(options: &ValidatedOptions, config: &WidgetConfig) {
    // parse(build(o)) gives o's URL form with no warnings, and validates back to o.
    let url = build_url(options, config);
    let parsed = parse_url(&url, config).unwrap_or_else(|e| panic!("canonical URL does not parse ({e:?}): {url}"));
    assert_eq!(parsed.environment, options.environment(), "{url}");
    assert!(parsed.warnings.is_empty(), "canonical URL parses with warnings {:?}: {url}", parsed.warnings);
    assert_eq!(parsed.options, options.url_options(), "parse(build(o)) != o: {url}");
    let again = parsed.validate(config);
    let Some(reread) = &again.options else { panic!("canonical URL does not validate {:?}: {url}", again.errors) };
    if options.target() == Target::Url {
        assert_eq!(reread, options, "validate(parse(build(o))) != o: {url}");
    }
    assert_eq!(build_url(reread, config), url, "the canonical URL is a fixed point");

    // Signing then verifying gives the options back.
    let key = match options.environment() {
        Environment::Sandbox => SANDBOX_SECRET_KEY,
        Environment::Production => PRODUCTION_SECRET_KEY,
    };
    let signed = sign_url(options, key, SIGNED_AT, config).expect("valid options sign");
    let verified = verify_signed_url(&signed, key, VERIFY_NOW, MAX_AGE, config)
        .unwrap_or_else(|e| panic!("signed URL does not verify ({e:?}): {signed}"));
    assert_eq!(verified.options, options.url_options(), "{signed}");
    assert_eq!(verified.environment, options.environment());

    // Snippets: every value is escaped, so the markup has exactly its own tags, and the render
    // call carries exactly the options.
    let iframe = iframe_snippet(options, &IframeOptions::default(), config);
    assert_eq!(iframe.matches('<').count(), 2, "iframe snippet has only its own tags: {iframe}");
    match options.target() {
        Target::Url => assert_eq!(script_snippet(options, config), Err(SnippetError::NotScriptTarget)),
        Target::Script => {
            let html = script_snippet(options, config).expect("script options make a snippet");
            // <div></div> <script></script> <script></script> <noscript><a></a></noscript>
            assert_eq!(html.matches('<').count(), 10, "script snippet has only its own tags: {html}");
            let start = html.find(".render(").expect("render call") + ".render(".len();
            let end = start + html[start..].find(");</script>").expect("end of the render call");
            let rendered: Value = serde_json::from_str(&html[start..end]).expect("the render call's options are JSON");
            assert_eq!(rendered, Value::Object(options.to_json()), "{html}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// receive addresses
// ---------------------------------------------------------------------------------------------

/// Receive-address decoders of every chain, with and without testnet: never a panic, the
/// testnet switch changes only the testnet answer, a valid address is of the chain's kinds,
/// error codes round-trip, `address_wrong_chain` only for an address another chain accepts,
/// and the case rules of bech32 (one case) and EVM (lower case carries no checksum) hold.
pub fn address(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for chain in Chain::ALL {
        let strict = validate_address(chain, text, false);
        let lenient = validate_address(chain, text, true);
        match (&strict, &lenient) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b, "{chain} {text:?}");
                assert_eq!(a.network, Network::Mainnet, "{chain} {text:?}");
            }
            (Err(AddressError::TestnetNotAllowed), Ok(b)) => assert_eq!(b.network, Network::Testnet),
            (Err(a), Err(b)) => assert_eq!(a, b, "{chain} {text:?}"),
            other => panic!("allow_testnet changed more than the testnet answer for {chain} {text:?}: {other:?}"),
        }
        for error in [strict.err(), lenient.err()].into_iter().flatten() {
            assert_eq!(AddressError::from_code(error.code()), Some(error));
            if error == AddressError::WrongChain {
                let elsewhere = Chain::ALL.into_iter().any(|o| o != chain && validate_address(o, text, true).is_ok());
                assert!(elsewhere, "wrong_chain for {chain} but no chain accepts {text:?}");
            }
        }
        let Ok(info) = lenient else { continue };
        assert_eq!(info.chain, chain);
        assert!(!text.is_empty() && text.len() <= MAX_ADDRESS_LEN && text.bytes().all(|b| b.is_ascii_graphic()));
        match (chain, info.kind) {
            (Chain::Ethereum, AddressKind::Evm) => {
                assert!(text.len() == 42 && text.starts_with("0x"), "{text:?}");
                let lower = format!("0x{}", text[2..].to_ascii_lowercase());
                assert_eq!(validate_address(chain, &lower, true), Ok(info), "lower case has no checksum");
            }
            (Chain::Solana, AddressKind::Solana) => {}
            (Chain::Bitcoin | Chain::Litecoin, AddressKind::P2pkh | AddressKind::P2sh) => {}
            (Chain::Bitcoin | Chain::Litecoin, AddressKind::Segwit { version }) => {
                assert!(version <= 16);
                for cased in [text.to_ascii_lowercase(), text.to_ascii_uppercase()] {
                    assert_eq!(validate_address(chain, &cased, true), Ok(info), "bech32 in one case: {cased:?}");
                }
            }
            (chain, kind) => panic!("{chain} address of kind {kind:?}: {text:?}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// master key file
// ---------------------------------------------------------------------------------------------

/// The master key file parser: never a panic, never key material in an error (message,
/// `Display` or `Debug`) or in the ring's `Debug`; a ring it returns seals and opens.
pub fn key_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match KeyRing::from_key_file_text(text) {
        Err(e) => {
            for shown in [e.message().to_owned(), e.to_string(), format!("{e:?}")] {
                assert_no_key_material(&shown);
            }
            assert!(e.message().starts_with("line ") || e.message().starts_with("holds no key"), "{}", e.message());
        }
        Ok(ring) => {
            assert_no_key_material(&format!("{ring:?}"));
            let partner = PartnerId::parse("0b7f1e2c-4d5a-4e6f-8a9b-1c2d3e4f5a6b").expect("partner id");
            let contact = ContactId::parse("6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11").expect("contact id");
            let sealed = ring.seal(&partner, &contact, Field::Secret, b"fuzz").expect("a loaded ring seals");
            assert!(ring.is_current(&sealed));
            let opened = ring.open(&partner, &contact, Field::Secret, &sealed).expect("and opens");
            assert_eq!(opened.as_slice(), b"fuzz");
        }
    }
}

/// No run of 16 or more hex digits: a key is 64, and the numbers a message may hold (a key id,
/// at most 10 digits; a line number) are shorter.
fn assert_no_key_material(shown: &str) {
    let longest = shown.split(|c: char| !c.is_ascii_hexdigit()).map(str::len).max().unwrap_or(0);
    assert!(longest < 16, "key material in {shown:?}");
}

// ---------------------------------------------------------------------------------------------
// HTTP inputs of the example server
// ---------------------------------------------------------------------------------------------

/// The example server's one JSON body reader and its query reader: every refusal is a 400;
/// a body it reads answers every accessor without panicking, shows only field names in
/// `Debug`, and, when nothing in it was unreadable, is exactly what serde_json reads.
pub fn http_body(data: &[u8]) {
    match JsonObject::read(data) {
        Err(e) => assert_bad_request(&e),
        Ok(body) => {
            let debug = format!("{body:?}");
            for name in ["contactId", "token", "widgetText", "widgetButtonURL", ""] {
                if let Err(e) = body.string(name) {
                    assert_bad_request(&e);
                }
                if let Err(e) = body.required_string(name) {
                    assert_bad_request(&e);
                }
            }
            if let Err(e) = body.string("contactId").and_then(contact_id) {
                assert_bad_request(&e);
            }
            let token = body.token();
            match body.into_fields() {
                Err(e) => assert_bad_request(&e),
                Ok(fields) => {
                    assert_eq!(debug, format!("JsonObject({:?})", fields.keys().collect::<Vec<_>>()));
                    assert_eq!(token, Token::from_json(fields.get("token")), "token() agrees with the core");
                    let plain: Value = serde_json::from_slice(data).expect("a body read whole is JSON");
                    assert_eq!(plain, Value::Object(fields), "one reading of the body");
                }
            }
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        match Query::parse(Some(text)) {
            Err(e) => assert_bad_request(&e),
            Ok(query) => {
                for name in ["contactId", "twoFactorIssuer", "target", "sign"] {
                    if let Err(e) = query.get(name) {
                        assert_bad_request(&e);
                    }
                }
                if let Err(e) = query.get("contactId").and_then(contact_id) {
                    assert_bad_request(&e);
                }
            }
        }
    }
}

fn assert_bad_request(e: &ApiError) {
    assert_eq!(e.0.code(), 400, "{:?}", e.0);
    assert!(!e.0.message().is_empty());
}
