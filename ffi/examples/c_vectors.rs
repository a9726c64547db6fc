//! Test support for the C test programs: prints the shared JSON vectors (`tests/vectors/`) and
//! the core's error taxonomy as tab-separated lines a C program reads with `fgets`, so the C
//! side needs no JSON parser. `make c-test` runs it; one line per case:
//!
//! ```text
//! hotp    SECRET_BASE32  COUNTER  CODE
//! totp    SECRET_BASE32  TIME     STEP  CODE
//! token   INPUT_HEX      EXPECT   CODE_OR_-   NOTE   (INPUT_HEX is NULL for JSON null)
//! skip    token          NOTE                        (a JSON token that is not a string)
//! status  NUMBER         CODE     NAME  MESSAGE
//! ```
//!
//! Token inputs are hex-encoded UTF-8 so white space, NULs and any other byte survive.

use std::fmt::Write as _;
use std::path::Path;

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

fn one_line(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors");
    let mut out = String::new();

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
                let hex: String = input.bytes().map(|b| format!("{b:02x}")).collect();
                let value = c["value"].as_str().unwrap_or("-");
                let _ = writeln!(out, "token\t{hex}\t{}\t{value}\t{note}", text(&c["expect"]));
            }
            // JSON null is an absent token: NULL in C.
            Value::Null => {
                let _ = writeln!(out, "token\tNULL\t{}\t-\t{note}", text(&c["expect"]));
            }
            _ => {
                let _ = writeln!(out, "skip\ttoken\t{note}");
            }
        }
    }

    for kind in ErrorKind::ALL {
        let _ = writeln!(out, "status\t{}\t{}\t{}\t{}", kind as u32, kind.code(), kind.name(), kind.message());
    }
    print!("{out}");
}
