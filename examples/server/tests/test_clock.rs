//! The hidden sandbox test hook `--test-clock-file PATH` (SPEC section 3) on the built binary:
//! the server's clock is the absolute Unix time in the file, re-read at every use; a start with
//! a file that holds no valid time is refused, naming the file; a reading that fails later keeps
//! the last good time and is logged once.

mod common;

use std::path::Path;

use common::{Instance, Reply, contact, master_key_file, server_command, wrong_code};
use rampart_core::totp::{self, STEP_SECONDS, Secret};
use serde_json::{Value, json};

/// A time far from now (in 2033), at the start of a TOTP step.
const T: u64 = 2_000_000_010;

/// The file replaced whole, as a test should move the clock (a reading never sees it half
/// written).
fn set_clock(path: &Path, text: &str) {
    let next = path.with_extension("next");
    std::fs::write(&next, text).unwrap();
    std::fs::rename(&next, path).unwrap();
}

/// A sandbox partner's secret key, made by the CLI.
fn partner_key(db: &Path) -> String {
    let out = server_command()
        .args(["partner", "create", "--db", db.to_str().unwrap(), "--name", "Acme", "--environment", "sandbox"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let partner: Value = serde_json::from_slice(&out.stdout).unwrap();
    partner["secretKey"].as_str().unwrap().to_owned()
}

struct Api {
    client: reqwest::Client,
    base: String,
    key: String,
}

impl Api {
    async fn send(&self, req: reqwest::RequestBuilder) -> Reply {
        let resp = req.bearer_auth(&self.key).send().await.expect("an answer");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply { status, headers, text, body }
    }

    async fn attempt(&self, op: &str, contact: &str, code: &str) -> Reply {
        let body = json!({ "contactId": contact, "token": code });
        self.send(self.client.post(format!("{}/v1/auth/{op}", self.base)).json(&body)).await
    }

    async fn create(&self, contact: &str) -> Secret {
        let r = self.send(self.client.get(format!("{}/v1/auth/create2fa?contactId={contact}", self.base))).await;
        assert_eq!(r.status, 200, "{}", r.text);
        Secret::from_base32(r.body["details"]["manual"].as_str().unwrap()).unwrap()
    }
}

/// A 429 of the throttle with exactly `seconds` to wait.
#[track_caller]
fn assert_throttled(r: &Reply, seconds: u64) {
    r.assert_error(429, &format!("Too many failed 2FA attempts, try again in {seconds} seconds"));
    assert_eq!(r.header("retry-after"), Some(seconds.to_string().as_str()), "{}", r.text);
}

fn real_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

#[tokio::test]
async fn the_server_clock_is_the_absolute_time_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let clock = dir.path().join("clock");
    let key = partner_key(&db);
    set_clock(&clock, &format!("{T}\n"));
    let server = Instance::start_with(
        db.to_str().unwrap(),
        &master_key_file(dir.path()),
        &["--test-clock-file", clock.to_str().unwrap()],
    );
    let api = Api { client: common::client(), base: server.base.clone(), key };

    // The clock is T, not the system's time (nor the system's time plus T): only T's code
    // enables.
    let contact = contact();
    let secret = api.create(&contact).await;
    assert!(real_now().abs_diff(T) > 10 * STEP_SECONDS);
    api.attempt("enable2fa", &contact, &totp::code_at(&secret, real_now()))
        .await
        .assert_error(401, "Google 2FA failed");
    api.attempt("enable2fa", &contact, &totp::code_at(&secret, T)).await.assert_enabled();

    // 5 failures at T: refused for 30 s. The clock stands still while the file does, so the
    // wait stays exactly 30 s.
    for _ in 0..5 {
        api.attempt("verify2fa", &contact, &wrong_code(&secret, T)).await.assert_error(401, "Google 2FA failed");
    }
    let right = totp::code_at(&secret, T + STEP_SECONDS);
    assert_throttled(&api.attempt("verify2fa", &contact, &right).await, 30);
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_throttled(&api.attempt("verify2fa", &contact, &right).await, 30);

    // A file that no longer holds a time: the last good time is kept.
    set_clock(&clock, "not a time\n");
    assert_throttled(&api.attempt("verify2fa", &contact, &right).await, 30);
    set_clock(&clock, &format!("{}.999\n", T + 29));
    assert_throttled(&api.attempt("verify2fa", &contact, &right).await, 1);
    std::fs::remove_file(&clock).unwrap();
    assert_throttled(&api.attempt("verify2fa", &contact, &right).await, 1);

    // T + 31: the throttle is over, and the code of T + 31's step is accepted.
    set_clock(&clock, &format!("{}.25\n", T + 31));
    api.attempt("verify2fa", &contact, &right).await.assert_valid("token", 10);

    // The failed readings were logged once, as a warning naming the file; no panic.
    let log = server.log();
    let warnings: Vec<_> =
        log.lines().filter(|l| l.contains("WARN") && l.contains("test clock file unreadable")).collect();
    assert_eq!(warnings.len(), 1, "{log}");
    assert!(warnings[0].contains(&clock.display().to_string()), "{log}");
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
fn a_start_with_a_clock_file_that_holds_no_time_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let clock = dir.path().join("clock");
    let key = master_key_file(dir.path());
    for (text, said) in [
        (None, "cannot be read"),
        (Some(""), "is empty"),
        (Some("tomorrow\n"), "does not hold a Unix time"),
        (Some("-5"), "does not hold a Unix time"),
        (Some("1e9"), "does not hold a Unix time"),
    ] {
        match text {
            Some(text) => std::fs::write(&clock, text).unwrap(),
            None => {
                let _ = std::fs::remove_file(&clock);
            }
        }
        let out = server_command()
            .args(["--db", db.to_str().unwrap(), "--master-key-file", &key, "--listen", "127.0.0.1:0"])
            .args(["--test-clock-file", clock.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{text:?} started");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&format!("--test-clock-file {}: {said}", clock.display())), "{text:?}: {stderr}");
        assert!(!db.exists(), "a refused start leaves no database behind");
    }
}
