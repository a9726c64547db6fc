//! Widget checks against the shared vectors in `tests/vectors/widget/`, plus properties no
//! vector can pin down: URL round trips, idempotent canonical forms, no panics on any input,
//! inert snippets and tamper-proof signatures.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use proptest::prelude::*;
use rampart_core::Environment;
use rampart_core::widget::{
    IframeOptions, Issue, IssueCode, MAX_CLOCK_SKEW_SECS, MAX_OPTIONS, MAX_URL_BYTES, Mode, SignatureError, Target,
    UrlError, ValidatedOptions, Validation, WidgetConfig, build_url, csp_directives, escape_html, iframe_snippet,
    parse_url, script_snippet, script_snippet_with_nonce, sign_url, validate, validate_value, verify_signed_url,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------------------------------------
// Vector files

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct VectorFile<C> {
    description: String,
    config: Option<Value>,
    cases: Vec<C>,
}

/// `Some(None)` for an explicit `null`, `None` when the key is absent.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectedIssue {
    code: String,
    path: String,
    #[serde(default, deserialize_with = "present")]
    value: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    suggestion: Option<Option<String>>,
}

fn vector_path(name: &str) -> PathBuf {
    common::vectors_dir().join("widget").join(name)
}

fn load<C: DeserializeOwned>(name: &str) -> VectorFile<C> {
    let path = vector_path(name);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file: VectorFile<C> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(!file.description.is_empty(), "{name}: no description");
    assert!(!file.cases.is_empty(), "{name}: no cases");
    file
}

fn config_for(file_config: &Option<Value>, case_config: &Option<Value>) -> WidgetConfig {
    match case_config.as_ref().or(file_config.as_ref()) {
        Some(json) => WidgetConfig::from_json(json).unwrap_or_else(|e| panic!("config {json}: {}", e.code())),
        None => WidgetConfig::default(),
    }
}

fn environment(name: Option<&str>) -> Option<Environment> {
    match name {
        None => None,
        Some("sandbox") => Some(Environment::Sandbox),
        Some("production") => Some(Environment::Production),
        Some(other) => panic!("unknown environment {other}"),
    }
}

fn check_issues(case: &str, what: &str, actual: &[Issue], expected: &[ExpectedIssue]) {
    let got: Vec<(&str, &str)> = actual.iter().map(|i| (i.code, i.path.as_str())).collect();
    let want: Vec<(&str, &str)> = expected.iter().map(|i| (i.code.as_str(), i.path.as_str())).collect();
    assert_eq!(got, want, "{case}: {what}");
    for (issue, expected) in actual.iter().zip(expected) {
        if let Some(value) = &expected.value {
            assert_eq!(&issue.value, value, "{case}: {what} {} value", issue.code);
        }
        if let Some(suggestion) = &expected.suggestion {
            assert_eq!(&issue.suggestion, suggestion, "{case}: {what} {} suggestion", issue.code);
        }
        assert_eq!(issue.message, issue.kind.message(), "{case}");
        assert_eq!(issue.code, issue.kind.code(), "{case}");
    }
}

/// `parse_url(build_url(o))` gives back `o`'s URL options, and rebuilding gives the same URL.
fn assert_round_trip(case: &str, options: &ValidatedOptions, config: &WidgetConfig) -> String {
    let url = build_url(options, config);
    let parsed = parse_url(&url, config).unwrap_or_else(|e| panic!("{case}: {url}: {}", e.code()));
    assert!(parsed.warnings.is_empty(), "{case}: {:?}", parsed.warnings);
    assert_eq!(parsed.environment, options.environment(), "{case}");
    assert_eq!(parsed.options, options.url_options(), "{case}");
    let again = parsed.validate(config);
    assert!(again.errors.is_empty(), "{case}: {:?}", again.errors);
    let rebuilt = again.options.as_ref().map(|o| build_url(o, config));
    assert_eq!(rebuilt.as_deref(), Some(url.as_str()), "{case}");
    url
}

// --- validate.json ---------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ValidateCase {
    name: String,
    #[allow(dead_code)] // For people reading the vectors.
    note: Option<String>,
    config: Option<Value>,
    target: Target,
    environment: Option<String>,
    options: Value,
    errors: Vec<ExpectedIssue>,
    warnings: Vec<ExpectedIssue>,
    mode: Mode,
    url: Option<String>,
}

#[test]
fn validate_vectors() {
    let file: VectorFile<ValidateCase> = load("validate.json");
    for case in &file.cases {
        let config = config_for(&file.config, &case.config);
        let v = validate_value(&case.options, case.target, environment(case.environment.as_deref()), &config);
        check_issues(&case.name, "errors", &v.errors, &case.errors);
        check_issues(&case.name, "warnings", &v.warnings, &case.warnings);
        assert_eq!(v.mode, case.mode, "{}", case.name);
        assert_eq!(v.options.is_some(), v.errors.is_empty(), "{}", case.name);
        match (&v.options, &case.url) {
            (Some(options), Some(url)) => {
                assert_eq!(&build_url(options, &config), url, "{}", case.name);
                assert_round_trip(&case.name, options, &config);
            }
            (None, None) => {}
            (options, url) => panic!("{}: options {:?} but url {url:?}", case.name, options.is_some()),
        }
    }
}

// --- build.json ------------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BuildCase {
    name: String,
    config: Option<Value>,
    target: Target,
    environment: Option<String>,
    options: Value,
    #[serde(default)]
    warnings: Vec<ExpectedIssue>,
    mode: Option<Mode>,
    url: String,
}

#[test]
fn build_vectors() {
    let file: VectorFile<BuildCase> = load("build.json");
    for case in &file.cases {
        let config = config_for(&file.config, &case.config);
        let v = validate_value(&case.options, case.target, environment(case.environment.as_deref()), &config);
        check_issues(&case.name, "errors", &v.errors, &[]);
        check_issues(&case.name, "warnings", &v.warnings, &case.warnings);
        if let Some(mode) = case.mode {
            assert_eq!(v.mode, mode, "{}", case.name);
        }
        let options = v.options.as_ref().unwrap_or_else(|| panic!("{}: not valid", case.name));
        assert_eq!(build_url(options, &config), case.url, "{}", case.name);
        assert_round_trip(&case.name, options, &config);
    }
}

// --- parse.json ------------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectedValidation {
    errors: Vec<ExpectedIssue>,
    warnings: Vec<ExpectedIssue>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ParseCase {
    name: String,
    config: Option<Value>,
    url: String,
    error: Option<String>,
    environment: Option<String>,
    options: Option<Map<String, Value>>,
    #[serde(default)]
    warnings: Vec<ExpectedIssue>,
    validation: Option<ExpectedValidation>,
    canonical: Option<String>,
}

#[test]
fn parse_vectors() {
    let file: VectorFile<ParseCase> = load("parse.json");
    for case in &file.cases {
        let config = config_for(&file.config, &case.config);
        let name = &case.name;
        let parsed = match (parse_url(&case.url, &config), &case.error) {
            (Err(e), Some(code)) => {
                assert_eq!(e.code(), code, "{name}");
                continue;
            }
            (Ok(parsed), None) => parsed,
            (Err(e), None) => panic!("{name}: unexpected {}", e.code()),
            (Ok(_), Some(code)) => panic!("{name}: expected {code}"),
        };
        assert_eq!(Some(parsed.environment), environment(case.environment.as_deref()), "{name}");
        assert_eq!(Some(&parsed.options), case.options.as_ref(), "{name}");
        check_issues(name, "parse warnings", &parsed.warnings, &case.warnings);

        let expected = case.validation.as_ref().unwrap_or_else(|| panic!("{name}: no validation"));
        let v = validate(&parsed.options, Target::Url, Some(parsed.environment), &config);
        check_issues(name, "validation errors", &v.errors, &expected.errors);
        check_issues(name, "validation warnings", &v.warnings, &expected.warnings);
        let merged = parsed.validate(&config);
        let all: Vec<&str> = parsed.warnings.iter().chain(&v.warnings).map(|i| i.code).collect();
        assert_eq!(merged.warnings.iter().map(|i| i.code).collect::<Vec<_>>(), all, "{name}");

        let canonical = v.options.as_ref().map(|o| build_url(o, &config));
        assert_eq!(canonical, case.canonical, "{name}");
        if let Some(options) = &v.options {
            // Canonical forms are fixed points.
            assert_round_trip(name, options, &config);
        }
    }
}

// --- sign.json -------------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "lowercase")]
enum SignCase {
    Sign {
        name: String,
        options: Value,
        #[serde(rename = "secretKey")]
        secret_key: String,
        timestamp: u64,
        url: Option<String>,
        error: Option<String>,
    },
    Verify {
        name: String,
        url: String,
        #[serde(rename = "secretKey")]
        secret_key: String,
        now: u64,
        #[serde(rename = "maxAge")]
        max_age: u64,
        error: Option<String>,
        options: Option<Map<String, Value>>,
        environment: Option<String>,
    },
}

#[test]
fn sign_vectors() {
    let file: VectorFile<SignCase> = load("sign.json");
    let config = config_for(&file.config, &None);
    for case in &file.cases {
        match case {
            SignCase::Sign { name, options, secret_key, timestamp, url, error } => {
                let v = validate_value(options, Target::Url, None, &config);
                let options = v.options.as_ref().unwrap_or_else(|| panic!("{name}: {:?}", v.errors));
                match (sign_url(options, secret_key, *timestamp, &config), url, error) {
                    (Ok(got), Some(url), None) => assert_eq!(&got, url, "{name}"),
                    (Err(e), None, Some(code)) => assert_eq!(e.code(), code, "{name}"),
                    (got, _, _) => panic!("{name}: {got:?}"),
                }
            }
            SignCase::Verify { name, url, secret_key, now, max_age, error, options, environment: env } => {
                match (verify_signed_url(url, secret_key, *now, *max_age, &config), error) {
                    (Ok(parsed), None) => {
                        assert_eq!(Some(&parsed.options), options.as_ref(), "{name}");
                        assert_eq!(Some(parsed.environment), environment(env.as_deref()), "{name}");
                        assert!(parsed.warnings.is_empty(), "{name}");
                    }
                    (Err(e), Some(code)) => assert_eq!(e.code(), code, "{name}"),
                    (got, _) => panic!("{name}: {got:?}"),
                }
            }
        }
    }
}

// --- snippet.json ----------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct IframeCase {
    width: Option<u32>,
    height: Option<u32>,
    title: Option<String>,
    lazy: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "lowercase")]
enum SnippetCase {
    Script {
        name: String,
        target: Option<Target>,
        environment: Option<String>,
        nonce: Option<String>,
        options: Value,
        html: Option<String>,
        error: Option<String>,
    },
    Iframe {
        name: String,
        target: Option<Target>,
        environment: Option<String>,
        options: Value,
        iframe: Option<IframeCase>,
        html: String,
    },
    Csp {
        name: String,
        config: Option<Value>,
        environment: String,
        #[serde(rename = "frameSrc")]
        frame_src: String,
        #[serde(rename = "scriptSrc")]
        script_src: String,
        header: String,
    },
}

#[test]
fn snippet_vectors() {
    let file: VectorFile<SnippetCase> = load("snippet.json");
    for case in &file.cases {
        let config = config_for(&file.config, &None);
        match case {
            SnippetCase::Script { name, target, environment: env, nonce, options, html, error } => {
                let target = target.unwrap_or(Target::Script);
                let v = validate_value(options, target, environment(env.as_deref()), &config);
                let options = v.options.as_ref().unwrap_or_else(|| panic!("{name}: {:?}", v.errors));
                let got = match nonce {
                    Some(nonce) => script_snippet_with_nonce(options, nonce, &config),
                    None => script_snippet(options, &config),
                };
                match (got, html, error) {
                    (Ok(got), Some(html), None) => {
                        assert_eq!(&got, html, "{name}");
                        assert_script_inert(&got, options);
                    }
                    (Err(e), None, Some(code)) => assert_eq!(e.code(), code, "{name}"),
                    (got, _, _) => panic!("{name}: {got:?}"),
                }
            }
            SnippetCase::Iframe { name, target, environment: env, options, iframe, html } => {
                let v = validate_value(options, target.unwrap_or(Target::Url), environment(env.as_deref()), &config);
                let options = v.options.as_ref().unwrap_or_else(|| panic!("{name}: {:?}", v.errors));
                let mut presentation = IframeOptions::default();
                if let Some(iframe) = iframe {
                    presentation.width = iframe.width.unwrap_or(presentation.width);
                    presentation.height = iframe.height.unwrap_or(presentation.height);
                    presentation.title = iframe.title.clone();
                    presentation.lazy = iframe.lazy.unwrap_or(false);
                }
                let got = iframe_snippet(options, &presentation, &config);
                assert_eq!(&got, html, "{name}");
                assert_attributes_inert(&got);
            }
            SnippetCase::Csp { name, config: case_config, environment: env, frame_src, script_src, header } => {
                let config = config_for(&file.config, case_config);
                let env = environment(Some(env)).unwrap_or_else(|| panic!("{name}: environment"));
                let directives = csp_directives(env, &config);
                assert_eq!(&directives.frame_src, frame_src, "{name}");
                assert_eq!(&directives.script_src, script_src, "{name}");
                assert_eq!(&directives.to_header_value(), header, "{name}");
            }
        }
    }
}

/// Every listed issue code is exercised by some vector (the size limit on the number of
/// options is tested below instead: its vector would be mostly noise).
#[test]
fn vectors_cover_every_issue_code() {
    let mut seen = BTreeSet::new();
    for name in ["validate.json", "build.json", "parse.json"] {
        let text = fs::read_to_string(vector_path(name)).expect("vector file");
        let json: Value = serde_json::from_str(&text).expect("json");
        collect_codes(&json, &mut seen);
    }
    let missing: Vec<&str> =
        IssueCode::LISTED.iter().map(|c| c.code()).filter(|c| !seen.contains(*c) && *c != "too_many_options").collect();
    assert!(missing.is_empty(), "no vector for {missing:?}");
}

fn collect_codes(value: &Value, seen: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(code)) = map.get("code") {
                seen.insert(code.clone());
            }
            map.values().for_each(|v| collect_codes(v, seen));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_codes(v, seen)),
        _ => {}
    }
}

#[test]
fn vector_counts() {
    let mut total = 0;
    for name in ["validate.json", "build.json", "parse.json", "sign.json", "snippet.json"] {
        let file: VectorFile<Value> = load(name);
        total += file.cases.len();
    }
    assert!(total >= 60, "only {total} widget vectors");
}

// ---------------------------------------------------------------------------------------------
// Fixed checks that vectors cannot carry well

#[test]
fn size_limits() {
    let config = WidgetConfig::default();
    let mut options = Map::new();
    options.insert("publicKey".into(), json!("pk_sandbox_abc"));
    for i in 0..MAX_OPTIONS {
        options.insert(format!("extra{i}"), json!(i));
    }
    let v = validate(&options, Target::Url, Some(Environment::Sandbox), &config);
    assert_eq!(v.errors.first().map(|i| i.code), Some("too_many_options"));
    assert_eq!(v.warnings.len(), MAX_OPTIONS, "unknown options examined are bounded");

    let addresses: Map<String, Value> = (0..100).map(|i| (format!("c{i}"), json!("x"))).collect();
    let options = json!({"publicKey": "pk_sandbox_abc", "receiveAddress": addresses});
    let v = validate_value(&options, Target::Url, Some(Environment::Sandbox), &config);
    assert_eq!(v.errors.first().map(|i| (i.code, i.path.as_str())), Some(("too_many_options", "receiveAddress")));
    assert_eq!(v.errors.len(), 1 + MAX_OPTIONS);

    let long = format!("https://widget.rampart.network/?clientName={}", "a".repeat(MAX_URL_BYTES));
    assert_eq!(parse_url(&long, &config).err(), Some(UrlError::TooLong));
    assert_eq!(
        verify_signed_url(&long, "sk_production_abc", 0, 0, &config).err(),
        Some(SignatureError::Url(UrlError::TooLong))
    );
    let huge_name = "n".repeat(10_000);
    let v = validate_value(&json!({ huge_name.as_str(): 1 }), Target::Url, Some(Environment::Sandbox), &config);
    assert!(v.warnings.iter().all(|w| w.path.chars().count() <= 101));
}

#[test]
fn validation_serialises_with_camel_case_keys() {
    let config = WidgetConfig::default();
    let options = json!({"environment": "sandbox", "publicKey": "sk_sandbox_abc", "darktheme": true, "amount": "50"});
    let v = validate_value(&options, Target::Url, None, &config);
    let json = serde_json::to_value(&v).expect("serialises");
    assert_eq!(
        json,
        json!({
            "errors": [{
                "code": "public_key_secret",
                "path": "publicKey",
                "message": IssueCode::PublicKeySecret.message(),
                "value": "sk_sandbox_…",
                "suggestion": null
            }],
            "warnings": [{
                "code": "unknown_option",
                "path": "darktheme",
                "message": IssueCode::UnknownOption.message(),
                "value": null,
                "suggestion": "darkTheme"
            }],
            "mode": {"kind": "standard"},
            "options": null
        })
    );
    let valid = json!({"environment": "sandbox", "publicKey": "pk_sandbox_abc", "tokens": "btc", "amount": "50"});
    let v = validate_value(&valid, Target::Url, None, &config);
    let json = serde_json::to_value(&v).expect("serialises");
    assert_eq!(json["mode"], json!({"kind": "incomplete", "missing": "receiveAddress"}));
    assert_eq!(json["options"], valid);
}

#[test]
fn validated_options_apply_defaults_without_writing_them() {
    let config = WidgetConfig::default();
    let v =
        validate_value(&json!({"publicKey": "pk_production_abc"}), Target::Url, Some(Environment::Production), &config);
    let options = v.options.expect("valid");
    assert_eq!(options.client_name(), "Rampart Widget");
    assert_eq!(options.home_screen_message(), config.default_home_screen_message());
    assert_eq!(options.tokens(), ["btc", "ltc", "eth", "usdc", "usdt", "dai", "sol"]);
    assert_eq!(options.amount(), "5");
    assert_eq!(options.currency().as_str(), "usd");
    assert!(!options.dark_theme() && !options.show_logo());
    assert_eq!(build_url(&options, &config), "https://widget.rampart.network/?publicKey=pk_production_abc");
    let eur = config.clone().with_minimum(rampart_core::widget::Currency::Eur, "7.5").expect("minimum");
    let v = validate_value(
        &json!({"publicKey": "pk_production_abc", "currencies": "eur"}),
        Target::Url,
        Some(Environment::Production),
        &eur,
    );
    assert_eq!(v.options.expect("valid").amount(), "7.50");
}

#[test]
fn typed_options_match_json_options() {
    use rampart_core::widget::WidgetOptions;
    let config = WidgetConfig::default();
    let typed = WidgetOptions {
        environment: Some(Environment::Sandbox),
        public_key: Some("pk_sandbox_abc".into()),
        tokens: Some(vec!["btc".into(), "eth".into()]),
        receive_address: [("btc".to_owned(), "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx".to_owned())].into(),
        target_container_id: Some("w".into()),
        dark_theme: Some(true),
        show_logo: Some(false),
        ..WidgetOptions::default()
    };
    let json = json!({
        "environment": "sandbox",
        "publicKey": "pk_sandbox_abc",
        "tokens": "btc,eth",
        "receiveAddress": {"btc": "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"},
        "targetContainerId": "w",
        "darkTheme": true,
        "showRampartLogo": false
    });
    assert_eq!(Value::Object(typed.to_json(&config)), json);
    let v = typed.validate(Target::Script, &config);
    assert!(v.is_valid(), "{:?}", v.errors);
    assert_eq!(v.options.map(|o| Value::Object(o.to_json())), Some(json));
}

#[test]
fn verify_with_the_stored_key_hash() {
    let config = WidgetConfig::default();
    let secret = "sk_production_abc123";
    let options = json!({"publicKey": "pk_production_abc", "amount": "10"});
    let v = validate_value(&options, Target::Url, Some(Environment::Production), &config);
    let url = sign_url(v.options.as_ref().expect("valid"), secret, 1000, &config).expect("signs");
    let hash = rampart_core::partner::secret_key_hash(secret);
    let parsed = rampart_core::widget::verify_signed_url_with_key_hash(&url, &hash, 1000, 10, &config);
    assert_eq!(parsed.map(|p| p.options), Ok(v.options.expect("valid").url_options()));
}

// ---------------------------------------------------------------------------------------------
// Properties

const PK_SANDBOX: &str = "pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc";
const SECRET_MARK: &str = "SECRETxyz123";

/// Valid addresses per coin (from `tests/vectors/addresses/`); sandbox also takes testnet ones.
fn addresses(symbol: &str, env: Environment) -> Vec<&'static str> {
    let mut list = match symbol {
        "btc" => vec![
            "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
            "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",
            "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4",
        ],
        "ltc" => vec!["LXYx4j8PDGE8GEwDFnEQhcLyHFGsRxSJwt", "ltc1qx88q7zjd74lxwgkjmmwlqv5pd3vujuehexfttt"],
        "sol" => vec!["EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "So11111111111111111111111111111111111111112"],
        _ => vec!["0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xde709f2102306220921060314715629080e2fb77"],
    };
    if env == Environment::Sandbox {
        match symbol {
            "btc" => list.push("tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"),
            "ltc" => list.push("tltc1qea8gdr057k9gyjnurk7v3d9enha8qgds58ajt0"),
            _ => {}
        }
    }
    list
}

const SYMBOLS: [&str; 7] = ["btc", "ltc", "eth", "usdc", "usdt", "dai", "sol"];

/// Free text without control characters, with the characters that need escaping.
fn text(max: usize) -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "a",
        "Z",
        "7",
        " ",
        "&",
        "<",
        ">",
        "\"",
        "'",
        "/",
        "%",
        "+",
        "=",
        "?",
        "#",
        ",",
        "~",
        "é",
        "東",
        "🚀",
        "\u{2028}",
        "\u{2029}",
        "</script>",
        "<!--",
    ]);
    prop::collection::vec(pieces, 1..max)
        .prop_map(|parts| parts.concat())
        .prop_filter("not blank", |s| !s.trim().is_empty() && s.chars().count() <= 100)
}

fn amount() -> impl Strategy<Value = String> {
    (5u64..100_000, prop::option::of(0u8..100), any::<bool>()).prop_map(|(int, frac, two)| match frac {
        None => int.to_string(),
        Some(f) if two => format!("{int}.{f:02}"),
        Some(f) => format!("{int}.{}", f % 10),
    })
}

/// Valid options (script form) for a target and environment.
fn valid_options() -> impl Strategy<Value = (Map<String, Value>, Target, Environment)> {
    let env = prop_oneof![Just(Environment::Sandbox), Just(Environment::Production)];
    let target = prop_oneof![Just(Target::Script), Just(Target::Url)];
    (env, target).prop_flat_map(|(env, target)| {
        let key = "[A-Za-z0-9]{1,24}".prop_map(move |body| format!("pk_{}_{body}", env.as_str()));
        let tokens = prop::sample::subsequence(SYMBOLS.to_vec(), 1..=SYMBOLS.len()).prop_shuffle();
        (
            key,
            prop::option::of(Just("6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11")),
            prop::option::of(text(12)),
            prop::option::of(tokens),
            prop::option::of(text(20)),
            prop::collection::vec((prop::sample::select(SYMBOLS.to_vec()), 0usize..3), 0..4),
            "[A-Za-z0-9_:./-]{1,20}",
            (prop::option::of(any::<bool>()), prop::option::of(prop::sample::select(vec!["usd", "eur", "gbp"]))),
            (prop::option::of(amount()), prop::option::of(any::<bool>()), any::<bool>()),
        )
            .prop_map(
                move |(pk, api, name, tokens, message, picks, container, (dark, currency), (amount, logo, keep_pk))| {
                    let mut map = Map::new();
                    if target == Target::Script {
                        map.insert("environment".into(), json!(env.as_str()));
                        map.insert("targetContainerId".into(), json!(container));
                    }
                    if keep_pk || api.is_none() {
                        map.insert("publicKey".into(), json!(pk));
                    }
                    if let Some(api) = api {
                        map.insert("apiKey".into(), json!(api));
                    }
                    if let Some(name) = name {
                        map.insert("clientName".into(), json!(name));
                    }
                    let allowed: Vec<&str> = tokens.clone().unwrap_or_else(|| SYMBOLS.to_vec());
                    if let Some(tokens) = &tokens {
                        map.insert("tokens".into(), json!(tokens.join(",")));
                    }
                    if let Some(message) = message {
                        map.insert("homeScreenMessage".into(), json!(message));
                    }
                    let mut receive = Map::new();
                    for (symbol, pick) in picks {
                        if allowed.contains(&symbol) {
                            let pool = addresses(symbol, env);
                            receive.insert(symbol.into(), json!(pool[pick % pool.len()]));
                        }
                    }
                    if !receive.is_empty() {
                        map.insert("receiveAddress".into(), Value::Object(receive));
                    }
                    if let Some(dark) = dark {
                        map.insert("darkTheme".into(), json!(dark));
                    }
                    if let Some(currency) = currency {
                        map.insert("currencies".into(), json!(currency));
                    }
                    if let Some(amount) = amount {
                        map.insert("amount".into(), json!(amount));
                    }
                    if let Some(logo) = logo {
                        map.insert("showRampartLogo".into(), json!(logo));
                    }
                    (map, target, env)
                },
            )
    })
}

fn validated(map: &Map<String, Value>, target: Target, env: Environment, config: &WidgetConfig) -> Validation {
    let hint = (target == Target::Url).then_some(env);
    validate(map, target, hint, config)
}

/// Arbitrary JSON with keys drawn mostly from the option names.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,40}".prop_map(Value::String),
        Just(Value::String(format!("sk_sandbox_{SECRET_MARK}"))),
        Just(Value::String(format!("x sk_production_{SECRET_MARK}"))),
        prop::sample::select(vec!["btc", "BTC,eth", "btc,,", "5", "4.99", "1e3", "-5", "sandbox", "production", "usd"])
            .prop_map(Value::from),
        prop::sample::select(vec![
            "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
            "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((option_key(), inner), 0..6).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn option_key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "clientName", "environment", "publicKey", "apiKey", "tokens", "homeScreenMessage", "receiveAddress",
            "targetContainerId", "darkTheme", "currencies", "amount", "showRampartLogo", "btc", "eth", "sol",
        ])
        .prop_map(str::to_owned),
        1 => "[a-zA-Z_]{0,12}",
    ]
}

fn hint() -> impl Strategy<Value = Option<Environment>> {
    prop::option::of(prop_oneof![Just(Environment::Sandbox), Just(Environment::Production)])
}

/// URL parameters from the vocabulary, historical forms and noise, with awkward values.
fn url_parameter() -> impl Strategy<Value = String> {
    let names = prop::sample::select(vec![
        "publicKey",
        "apiKey",
        "clientName",
        "tokens",
        "tokens",
        "receiveAddressBtc",
        "receiveAddressbtc",
        "receiveAddressETH",
        "receiveAddressSol",
        "homeScreenMessage",
        "darkTheme",
        "currencies",
        "amount",
        "showRampartLogo",
        "showCarbonLogo",
        "environment",
        "targetContainerId",
        "darktheme",
        "timestamp",
        "x",
    ]);
    let values = prop::sample::select(vec![
        "pk_sandbox_abc",
        "pk_production_abc",
        "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11",
        "Acme+Shop",
        "Caf%C3%A9",
        "btc",
        "btc,eth",
        "btc%2Csol",
        "true",
        "false",
        "usd",
        "eur",
        "50",
        "49.99",
        "sandbox",
        "box",
        "%20a%2B",
        "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx",
        "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
        "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
        "%7E~",
    ]);
    (names, values).prop_map(|(n, v)| format!("{n}={v}"))
}

fn assert_script_inert(html: &str, options: &ValidatedOptions) {
    let lower = html.to_ascii_lowercase();
    assert_eq!(lower.matches("</script").count(), 2, "{html}");
    assert_eq!(lower.matches("<script").count(), 2, "{html}");
    assert_eq!(lower.matches("<!--").count(), 0, "{html}");
    // The render call: no character that could end or restart markup inside the script.
    let start = html.find(".render(").expect("render call") + ".render(".len();
    let end = html.rfind(");</script>").expect("render end");
    let json = &html[start..end];
    assert!(!json.contains(['<', '>', '&', '\u{2028}', '\u{2029}']), "{json}");
    let back: Value = serde_json::from_str(json).expect("render options are JSON");
    assert_eq!(back, Value::Object(options.to_json()));
    assert_attributes_inert(html);
    let id = options.target_container_id().expect("script options");
    assert!(html.starts_with(&format!("<div id=\"{}\"></div>\n", escape_html(id))));
}

/// Every attribute value is double-quoted and holds no quote or angle bracket, and every `&`
/// in one starts an entity.
fn assert_attributes_inert(html: &str) {
    for tag in html.split('<').skip(1) {
        let Some((inside, _)) = tag.split_once('>') else { panic!("unclosed tag in {html}") };
        let mut rest = inside;
        while let Some(at) = rest.find("=\"") {
            let after = &rest[at + 2..];
            let close = after.find('"').expect("closing quote");
            let value = &after[..close];
            assert!(!value.contains(['<', '>', '\'']), "{value}");
            for (i, _) in value.match_indices('&') {
                let entity = &value[i..];
                assert!(["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"].iter().any(|e| entity.starts_with(e)), "{value}");
            }
            rest = &after[close + 1..];
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn parse_of_build_gives_back_the_options((map, target, env) in valid_options()) {
        let config = WidgetConfig::default();
        let v = validated(&map, target, env, &config);
        prop_assert!(v.errors.is_empty(), "{:?}", v.errors);
        let options = v.options.expect("valid");
        let url = assert_round_trip("generated", &options, &config);
        // Nothing is normalised: the URL options are exactly the input's.
        let mut expected = map.clone();
        expected.remove("environment");
        expected.remove("targetContainerId");
        prop_assert_eq!(parse_url(&url, &config).expect("parses").options, expected);
    }

    #[test]
    fn canonical_form_is_idempotent(params in prop::collection::vec(url_parameter(), 0..10), sandbox in any::<bool>()) {
        let config = WidgetConfig::default();
        let root = if sandbox { "https://widget-sandbox.rampart.network" } else { "https://WIDGET.rampart.network:443/" };
        let url = format!("{root}?{}", params.join("&"));
        let parsed = parse_url(&url, &config).expect("parses");
        let v = parsed.validate(&config);
        prop_assert_eq!(v.options.is_some(), v.errors.is_empty());
        if let Some(options) = v.options {
            let canonical = build_url(&options, &config);
            let again = parse_url(&canonical, &config).expect("canonical parses");
            prop_assert!(again.warnings.is_empty());
            let rebuilt = again.validate(&config).options.map(|o| build_url(&o, &config));
            prop_assert_eq!(rebuilt, Some(canonical));
        }
    }

    #[test]
    fn validate_never_panics_or_leaks_secrets(value in json_value(), hint in hint(), script in any::<bool>()) {
        let config = WidgetConfig::default();
        let target = if script { Target::Script } else { Target::Url };
        let v = validate_value(&value, target, hint, &config);
        prop_assert_eq!(v.options.is_some(), v.errors.is_empty());
        let shown = serde_json::to_string(&(&v.errors, &v.warnings)).expect("serialises");
        prop_assert!(!shown.contains(SECRET_MARK), "{}", shown);
        for issue in v.errors.iter().chain(&v.warnings) {
            prop_assert!(!issue.message.is_empty());
            prop_assert!(issue.value.as_ref().is_none_or(|s| s.chars().count() <= 101));
        }
        if let Some(options) = v.options {
            let url = build_url(&options, &config);
            prop_assert!(parse_url(&url, &config).is_ok());
        }
    }

    #[test]
    fn parse_and_verify_never_panic(tail in ".{0,200}", raw in ".{0,200}", now in any::<u64>(), age in any::<u64>()) {
        let config = WidgetConfig::default();
        for url in [format!("https://widget.rampart.network/?{tail}"), raw.clone()] {
            if let Ok(parsed) = parse_url(&url, &config) {
                let v = parsed.validate(&config);
                prop_assert_eq!(v.options.is_some(), v.errors.is_empty());
            }
            let _ = verify_signed_url(&url, "sk_production_abc", now, age, &config);
        }
    }

    #[test]
    fn snippets_stay_inert(name in text(30), message in text(30), id in "[a-z<>\"'&/!-]{1,20}", title in text(20)) {
        let config = WidgetConfig::default();
        let options = json!({
            "environment": "sandbox",
            "publicKey": PK_SANDBOX,
            "targetContainerId": id,
            "clientName": name,
            "homeScreenMessage": message,
        });
        let v = validate_value(&options, Target::Script, None, &config);
        prop_assert!(v.errors.is_empty(), "{:?}", v.errors);
        let options = v.options.expect("valid");
        let html = script_snippet(&options, &config).expect("script target");
        assert_script_inert(&html, &options);
        let nonce = script_snippet_with_nonce(&options, "abc+/=", &config).expect("nonce");
        assert_script_inert(&nonce, &options);
        let iframe = IframeOptions { title: Some(title), lazy: true, ..IframeOptions::default() };
        let html = iframe_snippet(&options, &iframe, &config);
        assert_attributes_inert(&html);
        prop_assert_eq!(html.matches("<iframe").count(), 1);
    }

    #[test]
    fn signatures_round_trip_and_expire(
        (map, target, env) in valid_options(),
        ts in 1_000u64..4_000_000_000,
        max_age in 0u64..100_000,
        body in "[A-Za-z0-9]{1,30}",
    ) {
        let config = WidgetConfig::default();
        let options = validated(&map, target, env, &config).options.expect("valid");
        let secret = format!("sk_{}_{body}", env.as_str());
        let url = sign_url(&options, &secret, ts, &config).expect("signs");
        prop_assert!(url.starts_with(&build_url(&options, &config)));
        for now in [ts - MAX_CLOCK_SKEW_SECS, ts, ts + max_age] {
            let parsed = verify_signed_url(&url, &secret, now, max_age, &config).expect("verifies");
            prop_assert_eq!(parsed.options, options.url_options());
        }
        prop_assert_eq!(verify_signed_url(&url, &secret, ts + max_age + 1, max_age, &config).err(), Some(SignatureError::Expired));
        prop_assert_eq!(
            verify_signed_url(&url, &secret, ts - MAX_CLOCK_SKEW_SECS - 1, max_age, &config).err(),
            Some(SignatureError::FromFuture)
        );
        let other = format!("{secret}X");
        prop_assert_eq!(verify_signed_url(&url, &other, ts, max_age, &config).err(), Some(SignatureError::Mismatch));
    }

    #[test]
    fn any_change_to_a_signed_url_fails((map, target, env) in valid_options(), at in any::<prop::sample::Index>(), with in 0x21u8..0x7f) {
        let config = WidgetConfig::default();
        let options = validated(&map, target, env, &config).options.expect("valid");
        let secret = format!("sk_{}_abc123", env.as_str());
        let url = sign_url(&options, &secret, 1_700_000_000, &config).expect("signs");
        let query_start = url.find('?').expect("query") + 1;
        let position = query_start + at.index(url.len() - query_start);
        let replacement = char::from(with);
        prop_assume!(!url[position..].starts_with(replacement));
        let mut tampered = url.clone();
        tampered.replace_range(position..position + 1, &replacement.to_string());
        prop_assert!(verify_signed_url(&tampered, &secret, 1_700_000_000, 600, &config).is_err(), "{}", tampered);
    }
}
