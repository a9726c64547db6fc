//! SPEC section 8 over HTTP and on the command line: recovery codes on enable, disable, verify,
//! status and `POST /v1/auth/recoveryCodes`; the widget session's way back; `contact show` and
//! `contact reset-2fa`; and the purchase hold on the built binary, moved past with the
//! `--test-clock-file` hook (nothing mocked in the server).

mod common;

use std::path::Path;
use std::process::Output;

use common::{Instance, Reply, Server, contact, master_key_file, server_command};
use rampart_core::totp::{self, Secret};
use serde_json::{Value, json};

const FAILED: &str = "Google 2FA failed";
const BOTH: &str = "Give token or recoveryCode, not both";
const NOT_HERE: &str = "recoveryCode is not accepted here";

/// Create and enable 2FA over HTTP; the secret and the recovery codes.
async fn enabled(s: &Server, key: &str, c: &str) -> (Secret, Vec<String>) {
    let secret = s.create_secret(key, c).await;
    let codes = s.attempt("enable2fa", key, c, s.code(&secret).into()).await.assert_enabled();
    s.clock.advance(totp::STEP_SECONDS);
    (secret, codes)
}

async fn with(s: &Server, op: &str, key: &str, body: Value) -> Reply {
    s.post(&format!("/v1/auth/{op}"), Some(key), &body).await
}

#[tokio::test]
async fn recovery_codes_over_http() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let c = contact();
    let (secret, codes) = enabled(&s, &key, &c).await;
    let r = s.status(&key, &c).await;
    assert_eq!(r.text, r#"{"message":"2FA is true.","code":200,"status":true,"recoveryCodesRemaining":10}"#);

    // Verify by recovery code, in any case and spacing; a reuse is 401.
    let lower = codes[0].to_lowercase().replace('-', " ");
    let r = with(&s, "verify2fa", &key, json!({ "contactId": c, "recoveryCode": lower })).await;
    assert_eq!(
        r.text,
        r#"{"message":"2FA token is valid.","code":200,"method":"recoveryCode","recoveryCodesRemaining":9}"#
    );
    with(&s, "verify2fa", &key, json!({ "contactId": c, "recoveryCode": codes[0] })).await.assert_error(401, FAILED);
    // A token verify answers its method and the same count.
    with(&s, "verify2fa", &key, json!({ "contactId": c, "token": s.code(&secret) })).await.assert_valid("token", 9);

    // Both factors, whatever their values, are 400 before anything else; "given" means
    // present, not null and not only white space.
    for token in [json!("123456"), json!(123456), json!(false), json!("x")] {
        for op in ["verify2fa", "disable2fa"] {
            let body = json!({ "contactId": c, "token": token, "recoveryCode": codes[1] });
            with(&s, op, &key, body).await.assert_error(400, BOTH);
        }
    }
    let body = json!({ "contactId": c, "token": null, "recoveryCode": codes[1] });
    with(&s, "verify2fa", &key, body).await.assert_valid("recoveryCode", 8);
    let body = json!({ "contactId": c, "token": "  ", "recoveryCode": " " });
    with(&s, "verify2fa", &key, body).await.assert_error(401, "Google 2FA requires the token to be passed in");
    // A recovery code that is not a string is a code that does not verify.
    for value in [json!(12), json!(["a"]), json!({}), json!(true)] {
        with(&s, "verify2fa", &key, json!({ "contactId": c, "recoveryCode": value })).await.assert_error(401, FAILED);
    }
    // Enable and regenerate take only a token.
    for op in ["enable2fa", "recoveryCodes"] {
        let body = json!({ "contactId": c, "token": s.code(&secret), "recoveryCode": codes[2] });
        with(&s, op, &key, body).await.assert_error(400, NOT_HERE);
        with(&s, op, &key, json!({ "contactId": c, "recoveryCode": 7 })).await.assert_error(400, NOT_HERE);
    }
    // The contactId's own 400 comes first.
    with(&s, "verify2fa", &key, json!({ "recoveryCode": codes[2], "token": "1" }))
        .await
        .assert_error(400, "contactId is required");

    // Regenerate: a new set, shown once; the old codes are dead.
    s.clock.advance(totp::STEP_SECONDS);
    let r = with(&s, "recoveryCodes", &key, json!({ "contactId": c, "token": s.code(&secret) })).await;
    let fresh = r.assert_codes("Recovery codes regenerated.");
    with(&s, "verify2fa", &key, json!({ "contactId": c, "recoveryCode": codes[3] })).await.assert_error(401, FAILED);
    s.status(&key, &c).await.body["recoveryCodesRemaining"].as_u64().filter(|n| *n == 10).expect("10 left");

    // Four non-string codes and one of the replaced set: the 5th wrong recovery code throttles
    // recovery codes for 30 s (a right one too).
    let r = with(&s, "disable2fa", &key, json!({ "contactId": c, "recoveryCode": fresh[9] })).await;
    r.assert_error(429, "Too many failed 2FA attempts, try again in 30 seconds");
    assert_eq!(r.header("retry-after"), Some("30"));
    s.clock.advance(30);

    // Disable by recovery code: 2FA off, every code gone, regenerate then 409.
    with(&s, "disable2fa", &key, json!({ "contactId": c, "recoveryCode": fresh[9] }))
        .await
        .assert_ok("Successfully disbaled 2fa!");
    let r = s.status(&key, &c).await;
    assert_eq!(r.text, r#"{"message":"2FA is false.","code":200,"status":false,"recoveryCodesRemaining":0}"#);
    with(&s, "verify2fa", &key, json!({ "contactId": c, "recoveryCode": fresh[0] }))
        .await
        .assert_error(409, "2FA is not enabled");
    with(&s, "recoveryCodes", &key, json!({ "contactId": c, "token": s.code(&secret) }))
        .await
        .assert_error(409, "2FA is not enabled");
    s.stop().await;
}

#[tokio::test]
async fn the_widget_session_recovers_with_a_code_and_is_held() {
    let s = Server::sandbox().await;
    let (partner, key) = s.partner();
    let pk = s.service.partner(&partner).unwrap().publishable_key;
    let open = s.post("/v1/widget/session", None, &json!({ "publicKey": pk })).await;
    let token = open.body["token"].as_str().unwrap().to_owned();
    let t = Some(token.as_str());
    let sent = s.post("/v1/widget/session/email", t, &json!({ "email": "bob@example.com" })).await;
    let code = sent.body["sandboxCode"].as_str().unwrap();
    s.post("/v1/widget/session/signin", t, &json!({ "email": "bob@example.com", "code": code })).await;
    s.post_raw("/v1/widget/session/kyc", t, "").await;
    let created = s.post_raw("/v1/widget/session/2fa/create", t, "").await;
    let secret = Secret::from_base32(created.body["manual"].as_str().unwrap()).unwrap();
    let r = s.post("/v1/widget/session/2fa/enable", t, &json!({ "token": s.code(&secret) })).await;
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let codes: Vec<String> = serde_json::from_value(r.body["recoveryCodes"].clone()).unwrap();
    assert_eq!((codes.len(), &r.body["session"]["recoveryCodesRemaining"]), (10, &json!(10)));
    s.clock.advance(totp::STEP_SECONDS);

    // New codes in the session, proven by an authenticator code.
    let r = s.post("/v1/widget/session/2fa/recoveryCodes", t, &json!({ "token": s.code(&secret) })).await;
    let codes = r.assert_codes("Recovery codes regenerated.");
    s.post("/v1/widget/session/2fa/verify", t, &json!({ "token": "1", "recoveryCode": codes[0] }))
        .await
        .assert_error(400, BOTH);

    // The way back: a recovery code turns 2FA off; the KYC contact must set it up again, held.
    let r = s.post("/v1/widget/session/2fa/verify", t, &json!({ "recoveryCode": codes[0] })).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["message"], json!("Successfully disbaled 2fa!"));
    let until = rampart_core::recovery::rfc3339(rampart_core::Clock::now(&*s.clock) + 86_400);
    let session = &r.body["session"];
    assert_eq!(
        (
            &session["twoFactor"],
            &session["mayPurchase"],
            &session["purchaseHoldUntil"],
            &session["recoveryCodesRemaining"]
        ),
        (&json!("setup"), &json!(false), &json!(until), &json!(0))
    );
    let order = json!({ "coin": "btc", "amount": "25", "currency": "usd", "address": "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq" });
    s.post("/v1/widget/session/orders", t, &order).await.assert_error(403, "2FA is required before buying");
    // Set up again: the hold still stands.
    let created = s.post_raw("/v1/widget/session/2fa/create", t, "").await;
    let again = Secret::from_base32(created.body["manual"].as_str().unwrap()).unwrap();
    s.clock.advance(totp::STEP_SECONDS);
    let r = s.post("/v1/widget/session/2fa/enable", t, &json!({ "token": s.code(&again) })).await;
    assert_eq!((&r.body["session"]["twoFactor"], &r.body["session"]["mayPurchase"]), (&json!("passed"), &json!(false)));
    let held = format!("Purchases are on hold until {until} after a 2FA reset");
    s.post("/v1/widget/session/orders", t, &order).await.assert_error(403, &held);
    // The partner's status shows the new set; the audit trail has the contact's own actions.
    let contact_id = s.get("/v1/widget/contacts?email=bob%40example.com", Some(&key)).await.body["contactId"].clone();
    let audit = s.get(&format!("/v1/audit?contactId={}", contact_id.as_str().unwrap()), Some(&key)).await;
    let events: Vec<(&str, &str)> = audit.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["actor"].as_str().unwrap(), e["event"].as_str().unwrap()))
        .collect();
    assert_eq!(
        events[4..],
        [
            ("contact", "recovery_codes.issued"),
            ("contact", "recovery_code.used"),
            ("contact", "2fa.disabled"),
            ("contact", "2fa.created"),
            ("contact", "2fa.enabled"),
            ("contact", "recovery_codes.issued"),
        ]
    );
    s.stop().await;
}

fn run(args: &[&str]) -> Output {
    server_command().args(args).output().expect("run rampart-server")
}

fn json_of(out: &Output) -> Value {
    assert!(out.status.success(), "exit {:?}; stderr: {}", out.status, String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(text.lines().count(), 1, "one JSON object: {text}");
    serde_json::from_str(&text).unwrap()
}

/// A refused command: exit 1, nothing on stdout; the sentence it ends stderr with.
fn refused(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "stdout: {}", String::from_utf8_lossy(&out.stdout));
    assert!(out.stdout.is_empty());
    String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or_default().to_owned()
}

fn partner(db: &Path, environment: &str) -> (String, String) {
    let made = json_of(&run(&[
        "partner",
        "create",
        "--db",
        db.to_str().unwrap(),
        "--name",
        "Acme",
        "--environment",
        environment,
    ]));
    (made["superuserId"].as_str().unwrap().to_owned(), made["secretKey"].as_str().unwrap().to_owned())
}

/// The file replaced whole (a reading never sees it half written).
fn set_clock(path: &Path, secs: u64) {
    let next = path.with_extension("next");
    std::fs::write(&next, format!("{secs}\n")).unwrap();
    std::fs::rename(&next, path).unwrap();
}

fn real_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

#[test]
fn contact_show_and_reset_2fa_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let dbs = db.to_str().unwrap();
    let (sandbox, _) = partner(&db, "sandbox");
    let (production, _) = partner(&db, "production");
    let c = contact();
    let at = |p: &str, cmd: &[&str], extra: &[&str]| -> Output {
        let mut args: Vec<&str> = cmd.to_vec();
        args.extend(["--db", dbs, "--partner", p, "--contact", &c]);
        args.extend(extra);
        run(&args)
    };
    let fresh = json!({
        "enabled": false, "locked": false, "failures": 0, "recoveryFailures": 0,
        "recoveryCodesRemaining": 0, "kycPassed": false, "purchaseHoldUntil": null
    });
    // A contact the store never saw is a contact without 2FA.
    assert_eq!(json_of(&at(&sandbox, &["contact", "show"], &[])), fresh);
    let ghost = uuid::Uuid::new_v4().to_string();
    assert_eq!(refused(&at(&ghost, &["contact", "show"], &[])), "rampart-server: error: Partner not found");
    assert_eq!(
        refused(&at(&ghost, &["contact", "reset-2fa"], &["--reason", "lost phone"])),
        "rampart-server: error: Partner not found"
    );

    // Reason rules, each naming the flag; nothing changed.
    let rule = "rampart-server: error: --reason must be 1 to 500 characters without control characters";
    for reason in ["", &"x".repeat(501), "line\nbreak"] {
        assert_eq!(refused(&at(&sandbox, &["contact", "reset-2fa"], &["--reason", reason])), rule);
    }
    // Four eyes in production.
    let reset = ["contact", "reset-2fa"];
    let needs =
        "rampart-server: error: --approved-by is required in production: a second operator must approve the reset";
    assert_eq!(refused(&at(&production, &reset, &["--reason", "lost phone", "--operator", "alice"])), needs);
    assert_eq!(
        refused(&at(&production, &reset, &["--reason", "lost phone", "--operator", "alice", "--approved-by", "alice"])),
        "rampart-server: error: --approved-by must name another operator than the one resetting"
    );
    let rows = |p: &str| json_of(&run(&["audit", "verify", "--db", dbs, "--partner", p]))["rows"].clone();
    assert_eq!(rows(&production), json!(0), "nothing audited");

    // Done: the state before, audited, held from real time for --purchase-hold-secs.
    let before = real_now();
    let out = at(
        &production,
        &reset,
        &["--reason", "lost phone", "--operator", "alice", "--approved-by", "bob", "--purchase-hold-secs", "3600"],
    );
    assert_eq!(json_of(&out), fresh);
    let shown = json_of(&at(&production, &["contact", "show"], &[]));
    let until = rampart_core::audit::parse_rfc3339_millis(shown["purchaseHoldUntil"].as_str().unwrap()).unwrap() / 1000;
    assert!((before + 3600..=real_now() + 3600).contains(&until), "{shown}");
    let export = run(&["audit", "export", "--db", dbs, "--partner", &production]);
    let row: Value = serde_json::from_slice(&export.stdout).unwrap();
    assert_eq!(
        (&row["actor"], &row["event"], &row["details"]),
        (&json!("operator:alice"), &json!("2fa.reset"), &json!({ "reason": "lost phone", "approvedBy": "bob" }))
    );
    let huge = run(&[
        "contact",
        "reset-2fa",
        "--db",
        dbs,
        "--partner",
        &sandbox,
        "--contact",
        &c,
        "--reason",
        "x",
        "--purchase-hold-secs",
        "604801",
    ]);
    assert_eq!(huge.status.code(), Some(2), "clap refuses the range");
}

#[tokio::test]
async fn an_order_in_the_hold_is_refused_and_one_after_it_goes_through() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let dbs = db.to_str().unwrap();
    let clock = dir.path().join("clock");
    let (partner, key) = partner(&db, "sandbox");
    set_clock(&clock, real_now());
    let server =
        Instance::start_with(dbs, &master_key_file(dir.path()), &["--test-clock-file", clock.to_str().unwrap()]);
    let client = common::client();
    let post = |path: &str, bearer: Option<&str>, body: Value| {
        let mut req = client.post(server.url(path)).json(&body);
        if let Some(b) = bearer {
            req = req.bearer_auth(b);
        }
        async move {
            let resp = req.send().await.unwrap();
            let status = resp.status().as_u16();
            let body: Value = resp.json().await.unwrap();
            (status, body)
        }
    };
    let pk = {
        let store = rampart_core::SqliteStore::open(&db).unwrap();
        let id = rampart_core::PartnerId::parse(&partner).unwrap();
        rampart_core::Store::partner(&store, &id).unwrap().unwrap().publishable_key
    };
    let (_, opened) = post("/v1/widget/session", None, json!({ "publicKey": pk })).await;
    let t = opened["token"].as_str().unwrap().to_owned();
    let (_, sent) = post("/v1/widget/session/email", Some(&t), json!({ "email": "carol@example.com" })).await;
    let code = sent["sandboxCode"].as_str().unwrap().to_owned();
    post("/v1/widget/session/signin", Some(&t), json!({ "email": "carol@example.com", "code": code })).await;
    let found =
        client.get(server.url("/v1/widget/contacts?email=carol%40example.com")).bearer_auth(&key).send().await.unwrap();
    let contact_id = found.json::<Value>().await.unwrap()["contactId"].as_str().unwrap().to_owned();

    // The operator resets the contact (real time; a hold shorter than the session's idle
    // time, so the session lives to see it end); the server's clock is the same time.
    let out = run(&[
        "contact",
        "reset-2fa",
        "--db",
        dbs,
        "--partner",
        &partner,
        "--contact",
        &contact_id,
        "--reason",
        "support ticket 17",
        "--purchase-hold-secs",
        "120",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let shown = json_of(&run(&["contact", "show", "--db", dbs, "--partner", &partner, "--contact", &contact_id]));
    let until_text = shown["purchaseHoldUntil"].as_str().unwrap().to_owned();
    let until = rampart_core::audit::parse_rfc3339_millis(&until_text).unwrap() / 1000;
    let order = json!({ "coin": "btc", "amount": "25", "currency": "usd", "address": "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq" });
    let (status, body) = post("/v1/widget/session/orders", Some(&t), order.clone()).await;
    assert_eq!(
        (status, body),
        (403, json!({ "message": format!("Purchases are on hold until {until_text} after a 2FA reset"), "code": 403 }))
    );
    set_clock(&clock, until - 1);
    assert_eq!(post("/v1/widget/session/orders", Some(&t), order.clone()).await.0, 403);
    set_clock(&clock, until);
    let (status, body) = post("/v1/widget/session/orders", Some(&t), order).await;
    assert_eq!((status, &body["order"]["status"]), (200, &json!("completed")), "{body}");
}
