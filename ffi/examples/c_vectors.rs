//! Test support for the C test programs: prints the shared JSON vectors (`tests/vectors/`) and
//! the core's error taxonomy as tab-separated lines a C program reads with `fgets`, so the C
//! side needs no JSON parser. `make c-test` runs it; one line per case:
//!
//! ```text
//! hotp    SECRET_BASE32  COUNTER  CODE
//! totp    SECRET_BASE32  TIME     STEP  CODE
//! token   INPUT_HEX      EXPECT   CODE_OR_-   NOTE   (INPUT_HEX is NULL for JSON null)
//! json-only token     NOTE                        (a JSON token that is not a string)
//! status  NUMBER         CODE     NAME  MESSAGE
//! webhook-sign    NAME SECRET ID TIMESTAMP BODY_HEX SIGNATURE
//! webhook-verify  NAME SECRET ID TIMESTAMP_HEX SIGNATURE BODY_HEX NOW RESULT
//! ```
//!
//! Token inputs, webhook bodies and webhook timestamps (header text) are hex-encoded UTF-8 so
//! white space, NULs and any other byte survive. A webhook `RESULT` is `valid` or the case's
//! `error` (`too_old`, `no_match`, ...), the names `rampart_webhook_verify_result_name` gives.
//!
//! With the argument `widget` it prints the widget and address vectors instead
//! (`tests/vectors/widget/*.json`, `tests/vectors/addresses/*.json`) for `test_widget.c`. Text
//! fields there are `x` followed by the hex of the UTF-8 bytes (`x` alone is empty), `-` for
//! null or absent, `*` for "not checked"; a JSON field is its compact text with keys sorted,
//! as the ABI writes JSON.
//!
//! ```text
//! validate  NAME CONFIG TARGET ENV OPTIONS MODE URL NERRORS NWARNINGS   then the issues:
//! issue     error|warning|parse  CODE PATH VALUE SUGGESTION
//! parse     NAME CONFIG URL ERROR ENV OPTIONS_JSON CANONICAL NPARSE NERRORS NWARNINGS
//! sign      NAME OPTIONS SECRET_KEY TIMESTAMP URL ERROR
//! verify    NAME URL SECRET_KEY NOW MAX_AGE ERROR ENV OPTIONS_JSON
//! script    NAME CONFIG TARGET ENV OPTIONS NONCE HTML ERROR
//! iframe    NAME CONFIG TARGET ENV OPTIONS WIDTH HEIGHT TITLE LAZY HTML   (0: default size)
//! csp       NAME CONFIG ENV JSON
//! address   CHAIN ADDRESS ALLOW_TESTNET NETWORK KIND ERROR
//! ```

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rampart_core::ErrorKind;
use rampart_core::totp::Secret;
use serde_json::Value;

fn read(dir: &Path, name: &str) -> Value {
    let text = std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn cases(v: &Value) -> &[Value] {
    v["cases"].as_array().map_or(&[], Vec::as_slice)
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("expected a string, got {v}"))
}

fn secret_base32(v: &Value) -> String {
    Secret::from_bytes(text(&v["secret_ascii"]).as_bytes().to_vec()).expect("vector secret").to_base32()
}

/// UTF-8 bytes as lower-case hex (empty for an empty string).
fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn one_line(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

fn main() {
    // `make c-test` names the directory: a path baked in at compile time goes stale when a
    // shared target dir serves clones at other paths.
    let dir = std::env::var_os("RAMPART_VECTORS")
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors"), PathBuf::from);
    let mut out = String::new();
    if std::env::args().nth(1).as_deref() == Some("widget") {
        widget::print(&dir, &mut out);
        print!("{out}");
        return;
    }

    let hotp = read(&dir, "totp/rfc4226.json");
    let secret = secret_base32(&hotp);
    for c in cases(&hotp) {
        let _ = writeln!(out, "hotp\t{secret}\t{}\t{}", c["counter"], text(&c["code"]));
    }

    let totp = read(&dir, "totp/rfc6238.json");
    let secret = secret_base32(&totp);
    for c in cases(&totp) {
        let _ = writeln!(out, "totp\t{secret}\t{}\t{}\t{}", c["time"], c["step"], text(&c["code"]));
    }

    for c in cases(&read(&dir, "tokens.json")) {
        let note = one_line(c["note"].as_str().unwrap_or(""));
        match &c["input"] {
            Value::String(input) => {
                let value = c["value"].as_str().unwrap_or("-");
                let _ = writeln!(out, "token\t{}\t{}\t{value}\t{note}", hex(input), text(&c["expect"]));
            }
            // JSON null is an absent token: NULL in C.
            Value::Null => {
                let _ = writeln!(out, "token\tNULL\t{}\t-\t{note}", text(&c["expect"]));
            }
            _ => {
                let _ = writeln!(out, "json-only\ttoken\t{note}");
            }
        }
    }

    let hooks = read(&dir, "webhooks/standard.json");
    for c in hooks["sign"].as_array().map_or(&[][..], Vec::as_slice) {
        let _ = writeln!(
            out,
            "webhook-sign\t{}\t{}\t{}\t{}\t{}\t{}",
            one_line(text(&c["name"])),
            text(&c["secret"]),
            text(&c["id"]),
            c["timestamp"].as_u64().expect("a sign case's timestamp is a number"),
            hex(text(&c["body"])),
            text(&c["signature"]),
        );
    }
    for c in hooks["verify"].as_array().map_or(&[][..], Vec::as_slice) {
        let result = if c["valid"] == Value::Bool(true) { "valid" } else { text(&c["error"]) };
        let _ = writeln!(
            out,
            "webhook-verify\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{result}",
            one_line(text(&c["name"])),
            text(&c["secret"]),
            text(&c["id"]),
            hex(text(&c["timestamp"])),
            text(&c["signature"]),
            hex(text(&c["body"])),
            c["now"].as_u64().expect("a verify case's now is a number"),
        );
    }

    for kind in ErrorKind::ALL {
        let _ = writeln!(out, "status\t{}\t{}\t{}\t{}", kind as u32, kind.code(), kind.name(), kind.message());
    }
    print!("{out}");
}

mod widget {
    use std::fmt::Write as _;
    use std::path::Path;

    use serde_json::Value;

    use super::{cases, read};

    /// `x<hex>` for a string, `-` for null or absent.
    fn hex(v: &Value) -> String {
        match v {
            Value::Null => "-".to_owned(),
            Value::String(s) => x(s),
            other => panic!("expected a string or null, got {other}"),
        }
    }

    fn x(s: &str) -> String {
        let mut out = String::from("x");
        for b in s.bytes() {
            let _ = write!(out, "{b:02x}");
        }
        out
    }

    /// A JSON value as compact text (keys sorted), hex-encoded; `-` for absent or null.
    fn json(v: &Value) -> String {
        if v.is_null() { "-".to_owned() } else { x(&v.to_string()) }
    }

    /// An optional text field: absent is "not checked", null "must be absent".
    fn checked(c: &Value, key: &str) -> String {
        c.as_object().and_then(|o| o.get(key)).map_or_else(|| "*".to_owned(), hex)
    }

    fn word(v: &Value) -> String {
        v.as_str().map_or_else(|| "-".to_owned(), str::to_owned)
    }

    fn mode(v: &Value) -> String {
        match v["kind"].as_str() {
            None => "*".to_owned(),
            Some("incomplete") => format!("incomplete:{}", word(&v["missing"])),
            Some(kind) => kind.to_owned(),
        }
    }

    fn list(v: &Value) -> &[Value] {
        v.as_array().map_or(&[], Vec::as_slice)
    }

    fn issues(out: &mut String, severity: &str, v: &Value) {
        for i in list(v) {
            let _ = writeln!(
                out,
                "issue\t{severity}\t{}\t{}\t{}\t{}",
                word(&i["code"]),
                hex(&i["path"]),
                checked(i, "value"),
                checked(i, "suggestion")
            );
        }
    }

    fn config(file: &Value, c: &Value) -> String {
        json(c.get("config").unwrap_or(&file["config"]))
    }

    fn count(v: &Value) -> String {
        v.as_array().map_or_else(|| "*".to_owned(), |a| a.len().to_string())
    }

    pub(super) fn print(dir: &Path, out: &mut String) {
        for name in ["widget/validate.json", "widget/build.json"] {
            let file = read(dir, name);
            for c in cases(&file) {
                let errors = c.get("errors").cloned().unwrap_or(Value::Array(Vec::new()));
                let warnings = c.get("warnings").cloned().unwrap_or(Value::Null);
                let _ = writeln!(
                    out,
                    "validate\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                    hex(&c["name"]),
                    config(&file, c),
                    word(&c["target"]),
                    word(&c["environment"]),
                    json(&c["options"]),
                    mode(&c["mode"]),
                    hex(&c["url"]),
                    count(&errors),
                    count(&warnings)
                );
                issues(out, "error", &errors);
                issues(out, "warning", &warnings);
            }
        }

        let file = read(dir, "widget/parse.json");
        for c in cases(&file) {
            let validation = &c["validation"];
            let _ = writeln!(
                out,
                "parse\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                hex(&c["name"]),
                config(&file, c),
                hex(&c["url"]),
                word(&c["error"]),
                word(&c["environment"]),
                json(&c["options"]),
                hex(&c["canonical"]),
                list(&c["warnings"]).len(),
                list(&validation["errors"]).len(),
                list(&validation["warnings"]).len()
            );
            issues(out, "parse", &c["warnings"]);
            issues(out, "error", &validation["errors"]);
            issues(out, "warning", &validation["warnings"]);
        }

        for c in cases(&read(dir, "widget/sign.json")) {
            match c["kind"].as_str() {
                Some("sign") => {
                    let _ = writeln!(
                        out,
                        "sign\t{}\t{}\t{}\t{}\t{}\t{}",
                        hex(&c["name"]),
                        json(&c["options"]),
                        hex(&c["secretKey"]),
                        c["timestamp"],
                        hex(&c["url"]),
                        word(&c["error"])
                    );
                }
                _ => {
                    let _ = writeln!(
                        out,
                        "verify\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                        hex(&c["name"]),
                        hex(&c["url"]),
                        hex(&c["secretKey"]),
                        c["now"],
                        c["maxAge"],
                        word(&c["error"]),
                        word(&c["environment"]),
                        json(&c["options"])
                    );
                }
            }
        }

        let file = read(dir, "widget/snippet.json");
        for c in cases(&file) {
            let name = hex(&c["name"]);
            let config = config(&file, c);
            let env = word(&c["environment"]);
            match c["kind"].as_str() {
                Some("script") => {
                    let target = c["target"].as_str().unwrap_or("script");
                    let _ = writeln!(
                        out,
                        "script\t{name}\t{config}\t{target}\t{env}\t{}\t{}\t{}\t{}",
                        json(&c["options"]),
                        hex(&c["nonce"]),
                        hex(&c["html"]),
                        word(&c["error"])
                    );
                }
                Some("iframe") => {
                    let f = &c["iframe"];
                    let _ = writeln!(
                        out,
                        "iframe\t{name}\t{config}\t{}\t{env}\t{}\t{}\t{}\t{}\t{}\t{}",
                        c["target"].as_str().unwrap_or("url"),
                        json(&c["options"]),
                        f["width"].as_u64().unwrap_or(0),
                        f["height"].as_u64().unwrap_or(0),
                        hex(&f["title"]),
                        u8::from(f["lazy"].as_bool().unwrap_or(false)),
                        hex(&c["html"])
                    );
                }
                _ => {
                    let expect = serde_json::json!({
                        "frameSrc": c["frameSrc"], "scriptSrc": c["scriptSrc"], "header": c["header"]
                    });
                    let _ = writeln!(out, "csp\t{name}\t{config}\t{env}\t{}", json(&expect));
                }
            }
        }

        let mut names: Vec<_> = std::fs::read_dir(dir.join("addresses"))
            .expect("tests/vectors/addresses")
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .filter(|n| n.ends_with(".json"))
            .collect();
        names.sort();
        for name in names {
            for c in cases(&read(dir, &format!("addresses/{name}"))) {
                let _ = writeln!(
                    out,
                    "address\t{}\t{}\t{}\t{}\t{}\t{}",
                    word(&c["chain"]),
                    hex(&c["address"]),
                    u8::from(c["allow_testnet"].as_bool().unwrap_or(false)),
                    word(&c["network"]),
                    word(&c["kind"]),
                    word(&c["error"])
                );
            }
        }
    }
}
