//! SPEC section 3 and the section 2 state table over real HTTP on 127.0.0.1.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use common::{JWT_SECRET, Reply, Server, Setup, contact, wrong_code};
use rampart_core::totp::{self, STEP_SECONDS, Secret};
use rampart_core::{Environment, KeyRing, SqliteStore};
use serde_json::{Value, json};

const UNAUTHORIZED: &str = "Unauthorized";
const FAILED: &str = "Google 2FA failed";
const MISSING: &str = "Google 2FA requires the token to be passed in";

// ---------------------------------------------------------------- create and status

#[tokio::test]
async fn create_answers_qr_code_and_manual_secret_without_caching() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let c = contact();
    let r = s.create(&key, &c).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    assert!(
        r.text.starts_with(r#"{"message":"Successfully created 2fa!","code":200,"details":{"qrCode":"#),
        "{}",
        r.text
    );
    let details = r.body["details"].as_object().unwrap();
    assert_eq!(details.len(), 2);
    assert!(details["qrCode"].as_str().unwrap().starts_with("data:image/png;base64,"));
    let manual = details["manual"].as_str().unwrap();
    assert_eq!(manual.len(), 32);
    assert!(manual.bytes().all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b)));
    assert_eq!(r.body.as_object().unwrap().len(), 3);

    // A custom issuer, and an empty one meaning the default.
    for issuer in ["Acme%20Shop", "", &"x".repeat(64)] {
        let r = s.get(&format!("/v1/auth/create2fa?contactId={c}&twoFactorIssuer={issuer}"), Some(&key)).await;
        assert_eq!(r.status, 200, "{issuer}: {}", r.text);
    }
    // Error answers of create are not cached either.
    let r = s.get("/v1/auth/create2fa", Some(&key)).await;
    r.assert_error(400, "contactId is required");
    assert_eq!(r.header("cache-control"), Some("no-store"));
    s.stop().await;
}

#[tokio::test]
async fn create_checks_contact_id_then_issuer() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let c = contact();
    let issuer_msg = "twoFactorIssuer must be 1 to 64 characters without ':' or control characters";
    for (query, code, msg) in [
        (String::new(), 400, "contactId is required"),
        ("contactId=".to_owned(), 400, "contactId is required"),
        ("contactId=not-a-uuid".to_owned(), 400, "contactId must be a UUID"),
        ("contactId=6f1c2a4e93b14c558f1e0b9b6a0d2c11".to_owned(), 400, "contactId must be a UUID"),
        ("contactId=%7B6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11%7D".to_owned(), 400, "contactId must be a UUID"),
        // contactId is checked before twoFactorIssuer.
        ("contactId=bad&twoFactorIssuer=a:b".to_owned(), 400, "contactId must be a UUID"),
        (format!("contactId={c}&twoFactorIssuer=a:b"), 400, issuer_msg),
        (format!("contactId={c}&twoFactorIssuer=a%0Ab"), 400, issuer_msg),
        (format!("contactId={c}&twoFactorIssuer={}", "x".repeat(65)), 400, issuer_msg),
    ] {
        let r = s.get(&format!("/v1/auth/create2fa?{query}"), Some(&key)).await;
        r.assert_error(code, msg);
    }
    s.stop().await;
}

#[tokio::test]
async fn status_reports_false_then_true_and_ids_are_case_insensitive() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let c = contact();
    let r = s.status(&key, &c).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, json!({"message": "2FA is false.", "code": 200, "status": false, "recoveryCodesRemaining": 0}));
    assert_eq!(r.text, r#"{"message":"2FA is false.","code":200,"status":false,"recoveryCodesRemaining":0}"#);
    s.enabled(&key, &c).await;
    let r = s.status(&key, &c.to_uppercase()).await;
    assert_eq!(r.body, json!({"message": "2FA is true.", "code": 200, "status": true, "recoveryCodesRemaining": 10}));
    s.get("/v1/auth/2fa", Some(&key)).await.assert_error(400, "contactId is required");
    s.get("/v1/auth/2fa?contactId=xyz", Some(&key)).await.assert_error(400, "contactId must be a UUID");
    s.stop().await;
}

// ---------------------------------------------------------------- the state table

#[tokio::test]
async fn state_table_disabled_rows() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let c = contact();
    // disabled, enable, no pending secret -> 409
    s.attempt("enable2fa", &key, &c, "123456".into()).await.assert_error(409, "Must create 2FA before enabling it");
    // disabled, disable -> 409 (also without a token)
    s.attempt("disable2fa", &key, &c, "123456".into()).await.assert_error(409, "2FA is not enabled");
    s.attempt("disable2fa", &key, &c, Value::Null).await.assert_error(409, "2FA is not enabled");
    s.attempt("verify2fa", &key, &c, "123456".into()).await.assert_error(409, "2FA is not enabled");
    // disabled, create -> 200, pending
    let first = s.create_secret(&key, &c).await;
    s.status(&key, &c).await.assert_ok_status(false);
    // disabled (pending), disable -> still 409
    s.attempt("disable2fa", &key, &c, s.code(&first).into()).await.assert_error(409, "2FA is not enabled");
    // disabled, enable, token missing (absent, null, empty, white space) -> 401
    let body = json!({ "contactId": c });
    s.post("/v1/auth/enable2fa", Some(&key), &body).await.assert_error(401, MISSING);
    for token in [Value::Null, json!(""), json!("  \t ")] {
        s.attempt("enable2fa", &key, &c, token).await.assert_error(401, MISSING);
    }
    // create again replaces the pending secret: the first secret's code no longer verifies.
    let second = s.create_secret(&key, &c).await;
    assert_ne!(first.to_base32(), second.to_base32());
    let first_code = s.code(&first);
    if first_code != s.code(&second) {
        s.attempt("enable2fa", &key, &c, first_code.into()).await.assert_error(401, FAILED);
    }
    // disabled, enable, wrong token -> 401
    let wrong = wrong_code(&second, s.clock_now());
    s.attempt("enable2fa", &key, &c, wrong.into()).await.assert_error(401, FAILED);
    s.status(&key, &c).await.assert_ok_status(false);
    // disabled, enable, token verifies -> 200, enabled
    s.attempt("enable2fa", &key, &c, s.code(&second).into()).await.assert_enabled();
    s.status(&key, &c).await.assert_ok_status(true);
    s.stop().await;
}

#[tokio::test]
async fn state_table_enabled_rows() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let c = contact();
    let secret = s.create_secret(&key, &c).await;
    let enabling = s.code(&secret);
    s.attempt("enable2fa", &key, &c, enabling.clone().into()).await.assert_enabled();
    // enabled, create -> 403
    let r = s.create(&key, &c).await;
    r.assert_error(403, "Must disable 2FA before creating a new one");
    assert_eq!(r.header("cache-control"), Some("no-store"));
    // enabled, enable -> 409, whatever the token
    for token in [json!(enabling), Value::Null, json!("garbage")] {
        s.attempt("enable2fa", &key, &c, token).await.assert_error(409, "Cannot enable 2FA again, it is already set");
    }
    // enabled, disable, token missing -> 401
    s.attempt("disable2fa", &key, &c, json!("")).await.assert_error(401, MISSING);
    // the enabling code is used up: it cannot disable
    s.attempt("disable2fa", &key, &c, enabling.into()).await.assert_error(401, FAILED);
    // enabled, disable, wrong token -> 401
    let wrong = wrong_code(&secret, s.clock_now());
    s.attempt("disable2fa", &key, &c, wrong.into()).await.assert_error(401, FAILED);
    s.status(&key, &c).await.assert_ok_status(true);
    // enabled, disable, token verifies -> 200, disabled, secret erased
    s.clock.advance(STEP_SECONDS);
    s.attempt("disable2fa", &key, &c, s.code(&secret).into()).await.assert_ok("Successfully disbaled 2fa!");
    s.status(&key, &c).await.assert_ok_status(false);
    s.attempt("disable2fa", &key, &c, s.code(&secret).into()).await.assert_error(409, "2FA is not enabled");
    // create works again after disable
    assert_eq!(s.create(&key, &c).await.status, 200);
    s.stop().await;
}

#[tokio::test]
async fn verify_accepts_once_per_step_and_answers_like_disable() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let c = contact();
    let secret = s.enabled(&key, &c).await;
    let code = s.code(&secret);
    let r = s.attempt("verify2fa", &key, &c, code.clone().into()).await;
    assert_eq!(r.text, r#"{"message":"2FA token is valid.","code":200,"method":"token","recoveryCodesRemaining":10}"#);
    // a replay is refused
    s.attempt("verify2fa", &key, &c, code.into()).await.assert_error(401, FAILED);
    s.attempt("verify2fa", &key, &c, json!(null)).await.assert_error(401, MISSING);
    // verify does not change the state
    s.status(&key, &c).await.assert_ok_status(true);
    // an earlier in-window code dies with the later accepted one
    s.clock.advance(STEP_SECONDS);
    let earlier = totp::code_at(&secret, s.clock_now() - STEP_SECONDS);
    let now_code = s.code(&secret);
    s.attempt("verify2fa", &key, &c, now_code.into()).await.assert_valid("token", 10);
    s.attempt("verify2fa", &key, &c, earlier.into()).await.assert_error(401, FAILED);
    s.stop().await;
}

#[tokio::test]
async fn token_grammar_over_json() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    // Accepted forms, each on a fresh contact so no replay rule interferes.
    for form in ["plain", "spaced", "hyphen", "padded", "integer"] {
        let c = contact();
        let secret = s.create_secret(&key, &c).await;
        let code = s.code(&secret);
        let token = match form {
            "plain" => json!(code),
            "spaced" => json!(format!("{} {}", &code[..3], &code[3..])),
            "hyphen" => json!(format!("{}-{}", &code[..3], &code[3..])),
            "padded" => json!(format!(" \t{code}\n")),
            _ => json!(code.parse::<u32>().unwrap()),
        };
        s.attempt("enable2fa", &key, &c, token).await.assert_enabled();
    }
    // Every other JSON type or shape is a wrong code: 401, never 400 or 500.
    let c = contact();
    let secret = s.create_secret(&key, &c).await;
    let code = s.code(&secret);
    let bad = [
        json!(format!("+{}", &code[1..])),
        json!(1.5),
        json!(true),
        json!([code]),
        json!({ "token": code }),
        json!("１２３４５６"),
        json!(&code[..5]),
        json!(format!("{code}1")),
        json!(-1),
    ];
    for (i, token) in bad.into_iter().enumerate() {
        // Stay under the throttle (5 consecutive failures).
        if i % 4 == 0 {
            s.service.reset_lock("test", &s.partner_of(&key), &c.parse().unwrap()).unwrap();
        }
        s.attempt("enable2fa", &key, &c, token.clone()).await.assert_error(401, FAILED);
    }
    s.stop().await;
}

#[tokio::test]
async fn pending_secret_expires_after_ten_minutes() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let c = contact();
    let secret = s.create_secret(&key, &c).await;
    s.clock.advance(600);
    s.attempt("enable2fa", &key, &c, s.code(&secret).into())
        .await
        .assert_error(409, "Must create 2FA before enabling it");
    s.stop().await;
}

// ---------------------------------------------------------------- throttle and lock

#[tokio::test]
async fn throttle_answers_429_with_retry_after_then_lock_423() {
    let s = Server::sandbox().await;
    let (partner, key) = s.partner();
    let c = contact();
    let secret = s.enabled(&key, &c).await;
    for _ in 0..5 {
        let wrong = wrong_code(&secret, s.clock_now());
        s.attempt("verify2fa", &key, &c, wrong.into()).await.assert_error(401, FAILED);
    }
    // Refused for 30 seconds, identically for a right and a wrong code, on every operation.
    for (op, token) in [
        ("verify2fa", json!(s.code(&secret))),
        ("disable2fa", json!(wrong_code(&secret, s.clock_now()))),
        ("verify2fa", json!("x")),
    ] {
        let r = s.attempt(op, &key, &c, token).await;
        r.assert_error(429, "Too many failed 2FA attempts, try again in 30 seconds");
        assert_eq!(r.header("retry-after"), Some("30"));
    }
    s.clock.advance(10);
    let r = s.attempt("verify2fa", &key, &c, json!("000000")).await;
    r.assert_error(429, "Too many failed 2FA attempts, try again in 20 seconds");
    assert_eq!(r.header("retry-after"), Some("20"));
    // A missing token is throttled too (429 comes before 401 missing token).
    assert_eq!(s.attempt("verify2fa", &key, &c, Value::Null).await.status, 429);
    s.clock.advance(20);
    // After the wait a right code is evaluated and resets the count.
    s.attempt("verify2fa", &key, &c, s.code(&secret).into()).await.assert_valid("token", 10);

    // 100 consecutive failures lock the contact: 423 until an operator reset.
    for _ in 0..100 {
        s.clock.advance(3600);
        let wrong = wrong_code(&secret, s.clock_now());
        s.attempt("verify2fa", &key, &c, wrong.into()).await.assert_error(401, FAILED);
    }
    s.clock.advance(3600);
    let locked = "2FA is locked after too many failed attempts";
    s.attempt("verify2fa", &key, &c, s.code(&secret).into()).await.assert_error(423, locked);
    s.attempt("disable2fa", &key, &c, s.code(&secret).into()).await.assert_error(423, locked);
    // the state answers come first
    s.attempt("enable2fa", &key, &c, s.code(&secret).into())
        .await
        .assert_error(409, "Cannot enable 2FA again, it is already set");
    s.service.reset_lock("ops", &partner, &c.parse().unwrap()).unwrap();
    s.attempt("disable2fa", &key, &c, s.code(&secret).into()).await.assert_ok("Successfully disbaled 2fa!");
    s.stop().await;
}

// ---------------------------------------------------------------- bad input

#[tokio::test]
async fn bodies_and_fields_are_checked_with_messages_naming_the_field() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let k = Some(key.as_str());
    for path in ["/v1/auth/enable2fa", "/v1/auth/disable2fa", "/v1/auth/verify2fa"] {
        for (body, msg) in [
            ("", "body must be a JSON object"),
            ("   ", "body must be a JSON object"),
            ("{", "body must be valid JSON"),
            ("contactId=x&token=1", "body must be valid JSON"),
            ("[]", "body must be a JSON object"),
            ("\"x\"", "body must be a JSON object"),
            ("null", "body must be a JSON object"),
            ("{}", "contactId is required"),
            (r#"{"contactId":null,"token":"123456"}"#, "contactId is required"),
            (r#"{"contactId":"","token":"123456"}"#, "contactId is required"),
            (r#"{"contactId":42,"token":"123456"}"#, "contactId must be a string"),
            (r#"{"contactId":["x"],"token":"123456"}"#, "contactId must be a string"),
            (r#"{"contactId":"nope","token":"123456"}"#, "contactId must be a UUID"),
            // the token's type never makes a 400: contactId is what is wrong here
            (r#"{"contactId":"nope","token":{"a":1}}"#, "contactId must be a UUID"),
        ] {
            s.post_raw(path, k, body).await.assert_error(400, msg);
        }
    }
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    s.post_raw("/v1/auth/enable2fa", k, deep.clone()).await.assert_error(400, "body must be a JSON object");
    s.post_raw("/v1/auth/enable2fa", k, format!("{{\"pad\":{deep}}}"))
        .await
        .assert_error(400, "body must be nested at most 32 levels deep");
    let text_msg = "widgetText must be 1 to 64 characters without control characters";
    for (body, msg) in [
        ("{}", "widgetText is required"),
        (r#"{"widgetText":null}"#, "widgetText is required"),
        (r#"{"widgetText":5}"#, "widgetText must be a string"),
        (r#"{"widgetText":true}"#, "widgetText must be a string"),
        (r#"{"widgetText":""}"#, text_msg),
        (r#"{"widgetText":"tab\there"}"#, text_msg),
        ("[1]", "body must be a JSON object"),
    ] {
        s.post_raw("/v1/users/widgetText", k, body).await.assert_error(400, msg);
    }
    let long_text = json!({ "widgetText": "x".repeat(65) });
    s.post("/v1/users/widgetText", k, &long_text).await.assert_error(400, text_msg);
    let url_msg = "widgetButtonURL must be an absolute http(s) URL without credentials, at most 2048 characters";
    for body in [
        json!({ "widgetButtonURL": "/relative" }),
        json!({ "widgetButtonURL": "ftp://example.com/" }),
        json!({ "widgetButtonURL": "javascript:alert(1)" }),
        json!({ "widgetButtonURL": "https://user:pw@example.com/" }),
        json!({ "widgetButtonURL": format!("https://example.com/{}", "x".repeat(2048)) }),
    ] {
        s.post("/v1/users/widgetButtonURL", k, &body).await.assert_error(400, url_msg);
    }
    s.post("/v1/users/widgetButtonURL", k, &json!({})).await.assert_error(400, "widgetButtonURL is required");
    s.post("/v1/users/widgetButtonURL", k, &json!({ "widgetButtonURL": 1 }))
        .await
        .assert_error(400, "widgetButtonURL must be a string");
    s.stop().await;
}

#[tokio::test]
async fn every_body_and_query_is_read_once() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let k = Some(key.as_str());
    let c = contact();
    let secret = s.create_secret(&key, &c).await;
    let valid = s.code(&secret);
    let wrong = wrong_code(&secret, {
        use rampart_core::Clock;
        s.clock.now()
    });
    // A proxy reading the first value and a server reading the last must never disagree: a
    // field given twice is refused, whichever copy holds the valid code.
    for (body, name) in [
        (format!(r#"{{"contactId":"{c}","token":"{wrong}","token":"{valid}"}}"#), "token"),
        (format!(r#"{{"token":"{valid}","contactId":"{c}","token":"{wrong}"}}"#), "token"),
        (format!(r#"{{"contactId":"{c}","contactId":"{}","token":"{valid}"}}"#, contact()), "contactId"),
    ] {
        s.post_raw("/v1/auth/enable2fa", k, body).await.assert_error(400, &format!("duplicate field: {name}"));
    }
    assert_eq!(s.status(&key, &c).await.body["status"], json!(false));
    s.post_raw("/v1/users/widgetText", k, r#"{"widgetText":"A","widgetText":"B"}"#)
        .await
        .assert_error(400, "duplicate field: widgetText");
    s.post_raw("/v1/widget/url", k, r#"{"receiveAddress":{"btc":"x","btc":"y"}}"#)
        .await
        .assert_error(400, "duplicate field: receiveAddress.btc");
    s.get(&format!("/v1/auth/2fa?contactId={c}&contactId={}", contact()), k)
        .await
        .assert_error(400, "duplicate field: contactId");
    // A number out of range is a token like any other number: it does not verify.
    for token in ["1e400", "-1e400", "123456e999"] {
        s.post_raw("/v1/auth/enable2fa", k, format!(r#"{{"contactId":"{c}","token":{token}}}"#))
            .await
            .assert_error(401, FAILED);
    }
    s.post_raw("/v1/users/widgetText", k, r#"{"widgetText":1e400}"#)
        .await
        .assert_error(400, "widgetText must be a string");
    s.post_raw("/v1/widget/validate", k, r#"{"amount":1e400}"#)
        .await
        .assert_error(400, "amount is a number out of range");
    // Text that is not Unicode is the field's own 400, never a replacement character.
    s.post_raw("/v1/auth/verify2fa", k, r#"{"contactId":"\ud800","token":"123456"}"#)
        .await
        .assert_error(400, "contactId must be a UUID");
    s.post_raw("/v1/auth/enable2fa", k, format!(r#"{{"contactId":"{c}","token":"\ud800"}}"#))
        .await
        .assert_error(401, FAILED);
    s.post_raw("/v1/users/widgetText", k, r#"{"widgetText":"Acme\udfff"}"#)
        .await
        .assert_error(400, "widgetText must be 1 to 64 characters without control characters");
    s.post_raw("/v1/widget/url", k, r#"{"clientName":"Acme\ud800"}"#)
        .await
        .assert_error(400, "clientName must be valid Unicode text");
    let issuer = "twoFactorIssuer must be 1 to 64 characters without ':' or control characters";
    for bad in ["Acme%FF", "Acme%ED%A0%80"] {
        s.get(&format!("/v1/auth/create2fa?contactId={}&twoFactorIssuer={bad}", contact()), k)
            .await
            .assert_error(400, issuer);
    }
    s.get("/v1/auth/2fa?contactId=%FF", k).await.assert_error(400, "contactId must be a UUID");
    // Four malformed tokens were counted (under the throttle's five), the duplicates nothing,
    // and nothing was enabled: the next step's code enables.
    s.clock.advance(30);
    let now_valid = s.code(&secret);
    s.attempt("enable2fa", &key, &c, now_valid.into()).await.assert_enabled();
    s.stop().await;
}

#[tokio::test]
async fn body_over_64_kib_is_413_after_auth_and_before_400() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let too_large = "x".repeat(64 * 1024 + 1);
    for path in ["/v1/auth/enable2fa", "/v1/auth/disable2fa", "/v1/auth/verify2fa", "/v1/users/widgetText"] {
        s.post_raw(path, Some(&key), too_large.clone()).await.assert_error(413, "Request body is too large");
        // 401 comes first
        s.post_raw(path, None, too_large.clone()).await.assert_error(401, UNAUTHORIZED);
    }
    let big_json = json!({ "contactId": "bad", "pad": "y".repeat(100 * 1024) });
    s.post("/v1/auth/enable2fa", Some(&key), &big_json).await.assert_error(413, "Request body is too large");
    // Exactly 64 KiB is accepted (the body is read and answered on its merits).
    let c = contact();
    let mut exact = json!({ "contactId": c, "token": "" }).to_string();
    exact.push_str(&" ".repeat(64 * 1024 - exact.len()));
    assert_eq!(exact.len(), 64 * 1024);
    s.post_raw("/v1/auth/disable2fa", Some(&key), exact).await.assert_error(409, "2FA is not enabled");
    s.stop().await;
}

#[tokio::test]
async fn unknown_paths_404_and_wrong_methods_405_as_json() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    for path in ["/", "/v1", "/v1/auth/create2fa/", "/v1/auth/CREATE2FA", "/v1/widget/", "/v1/widget/URL", "/nope"] {
        s.get(path, Some(&key)).await.assert_error(404, "Not found");
        s.get(path, None).await.assert_error(404, "Not found");
    }
    let methods = [
        (reqwest::Method::POST, "/v1/auth/create2fa"),
        (reqwest::Method::GET, "/v1/auth/enable2fa"),
        (reqwest::Method::PUT, "/v1/auth/disable2fa"),
        (reqwest::Method::GET, "/v1/auth/verify2fa"),
        (reqwest::Method::DELETE, "/v1/auth/2fa"),
        (reqwest::Method::PATCH, "/v1/users/widgetText"),
        (reqwest::Method::DELETE, "/v1/users/widgetButtonURL"),
        (reqwest::Method::POST, "/healthz"),
        (reqwest::Method::POST, "/openapi.json"),
        (reqwest::Method::GET, "/v1/widget/validate"),
        (reqwest::Method::GET, "/v1/widget/url"),
        (reqwest::Method::PUT, "/v1/widget/snippet"),
    ];
    for (method, path) in methods {
        let r = s.send(s.client.request(method.clone(), s.url(path)).bearer_auth(&key)).await;
        r.assert_error(405, "Method not allowed");
        assert!(r.header("allow").is_some(), "{method} {path} has an Allow header");
    }
    s.stop().await;
}

// ---------------------------------------------------------------- authentication

#[tokio::test]
async fn missing_or_bad_credentials_are_401() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let sandbox = s.credentials(Environment::Sandbox);
    let production = s.credentials(Environment::Production);
    let c = contact();
    let path = format!("/v1/auth/2fa?contactId={c}");
    s.get(&path, None).await.assert_error(401, UNAUTHORIZED);
    for value in [
        "".to_owned(),
        "Bearer".to_owned(),
        "Bearer ".to_owned(),
        format!("Basic {key}"),
        format!("Token {key}"),
        key.clone(),
        format!("Bearer {key}x"),
        format!("Bearer {}", &key[..key.len() - 1]),
        "Bearer sk_sandbox_unknown".to_owned(),
        format!("Bearer {}", sandbox.publishable_key),
        format!("Bearer {}", production.secret_key.expose()),
        format!("Bearer {}", sandbox.partner_id),
        "Bearer eyJhbGciOiJIUzI1NiJ9.e30.x".to_owned(),
    ] {
        let r = s.send(s.client.get(s.url(&path)).header("authorization", value.as_str())).await;
        r.assert_error(401, UNAUTHORIZED);
        assert!(r.header("deprecation").is_none());
    }
    // 401 comes before 400 (bad JSON, bad contactId) and before the route's answers.
    s.post_raw("/v1/auth/enable2fa", Some("sk_sandbox_nope"), "{").await.assert_error(401, UNAUTHORIZED);
    s.get("/v1/auth/create2fa", None).await.assert_error(401, UNAUTHORIZED);
    s.get("/v1/users/widgetText", None).await.assert_error(401, UNAUTHORIZED);
    // The scheme is case-insensitive.
    let r = s.send(s.client.get(s.url(&path)).header("authorization", format!("bearer {key}"))).await;
    assert_eq!(r.status, 200);
    s.stop().await;
}

#[tokio::test]
async fn production_server_refuses_sandbox_keys() {
    let s = Setup { environment: Environment::Production, ..Setup::default() }.start().await;
    let prod = s.credentials(Environment::Production);
    let sandbox = s.credentials(Environment::Sandbox);
    let path = format!("/v1/auth/2fa?contactId={}", contact());
    s.get(&path, Some(sandbox.secret_key.expose())).await.assert_error(401, UNAUTHORIZED);
    s.get(&path, Some(&prod.publishable_key)).await.assert_error(401, UNAUTHORIZED);
    assert_eq!(s.get(&path, Some(prod.secret_key.expose())).await.status, 200);
    s.stop().await;
}

fn jwt(claims: &Value, secret: &[u8], alg: jsonwebtoken::Algorithm) -> String {
    jsonwebtoken::encode(&jsonwebtoken::Header::new(alg), claims, &jsonwebtoken::EncodingKey::from_secret(secret))
        .unwrap()
}

#[tokio::test]
async fn legacy_jwt_works_with_deprecation_header_and_refuses_forgeries() {
    use base64::Engine;
    use jsonwebtoken::Algorithm;
    let s = Setup { jwt: true, ..Setup::default() }.start().await;
    let (partner, key) = s.partner();
    let c = contact();
    let path = format!("/v1/auth/2fa?contactId={c}");
    let exp = s.clock_now() + 600;
    let good = jwt(&json!({ "sub": partner.to_string(), "exp": exp }), JWT_SECRET, Algorithm::HS256);
    let r = s.get(&path, Some(&good)).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("deprecation"), Some("true"));
    // Error answers to a JWT carry the header too.
    let r = s.get("/v1/auth/2fa?contactId=bad", Some(&good)).await;
    r.assert_error(400, "contactId must be a UUID");
    assert_eq!(r.header("deprecation"), Some("true"));
    let r = s.post_raw("/v1/auth/enable2fa", Some(&good), "x".repeat(70_000)).await;
    r.assert_error(413, "Request body is too large");
    assert_eq!(r.header("deprecation"), Some("true"));
    // Secret-key answers do not.
    assert!(s.get(&path, Some(&key)).await.header("deprecation").is_none());
    // Same partner, same data, both ways.
    s.enabled(&key, &c).await;
    assert_eq!(s.get(&path, Some(&good)).await.body["status"], json!(true));

    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let claims = b64.encode(json!({ "sub": partner.to_string(), "exp": exp }).to_string());
    let alg_none = format!("{}.{claims}.", b64.encode(r#"{"alg":"none","typ":"JWT"}"#));
    let tampered = {
        let mut parts: Vec<&str> = good.split('.').collect();
        let other = b64.encode(json!({ "sub": uuid::Uuid::new_v4().to_string(), "exp": exp }).to_string());
        parts[1] = &other;
        parts.join(".")
    };
    let other_partner = s.credentials(Environment::Production).partner_id;
    for bad in [
        jwt(
            &json!({ "sub": partner.to_string(), "exp": exp }),
            b"another-secret-of-at-least-32-bytes!!!",
            Algorithm::HS256,
        ),
        alg_none,
        tampered,
        jwt(&json!({ "sub": partner.to_string(), "exp": s.clock_now() - 120 }), JWT_SECRET, Algorithm::HS256),
        jwt(
            &json!({ "sub": partner.to_string(), "exp": exp, "nbf": s.clock_now() + 300 }),
            JWT_SECRET,
            Algorithm::HS256,
        ),
        jwt(&json!({ "sub": partner.to_string(), "exp": exp }), JWT_SECRET, Algorithm::HS384),
        jwt(&json!({ "exp": exp }), JWT_SECRET, Algorithm::HS256),
        jwt(&json!({ "sub": "not-a-uuid", "exp": exp }), JWT_SECRET, Algorithm::HS256),
        jwt(&json!({ "sub": uuid::Uuid::new_v4().to_string(), "exp": exp }), JWT_SECRET, Algorithm::HS256),
        // a partner of the other environment
        jwt(&json!({ "sub": other_partner.to_string(), "exp": exp }), JWT_SECRET, Algorithm::HS256),
    ] {
        let r = s.get(&path, Some(&bad)).await;
        r.assert_error(401, UNAUTHORIZED);
        assert!(r.header("deprecation").is_none());
    }
    // exp and nbf follow the service's clock: valid from nbf, refused from exp on.
    let (t, alg) = (s.clock_now(), Algorithm::HS256);
    let window = jwt(&json!({ "sub": partner.to_string(), "nbf": t + 10, "exp": t + 20 }), JWT_SECRET, alg);
    s.get(&path, Some(&window)).await.assert_error(401, UNAUTHORIZED);
    s.clock.advance(10);
    assert_eq!(s.get(&path, Some(&window)).await.status, 200);
    s.clock.advance(10);
    s.get(&path, Some(&window)).await.assert_error(401, UNAUTHORIZED);
    s.stop().await;

    // Without a configured JWT secret, JWTs are refused.
    let s = Server::sandbox().await;
    let (partner, _) = s.partner();
    let good = jwt(&json!({ "sub": partner.to_string(), "exp": exp }), JWT_SECRET, Algorithm::HS256);
    s.get(&path, Some(&good)).await.assert_error(401, UNAUTHORIZED);
    s.stop().await;
}

// ---------------------------------------------------------------- widget settings

#[tokio::test]
async fn widget_settings_round_trip() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let k = Some(key.as_str());
    let r = s.get("/v1/users/widgetText", k).await;
    assert_eq!(r.text, r#"{"message":"Widget text retrieved.","code":200,"widgetText":null}"#);
    let r = s.get("/v1/users/widgetButtonURL", k).await;
    assert_eq!(r.text, r#"{"message":"Widget button URL retrieved.","code":200,"widgetButtonURL":null}"#);

    s.post("/v1/users/widgetText", k, &json!({ "widgetText": "Back to shop ✓" }))
        .await
        .assert_ok("Widget text updated to: Back to shop ✓");
    let r = s.get("/v1/users/widgetText", k).await;
    assert_eq!(r.body, json!({ "message": "Widget text retrieved.", "code": 200, "widgetText": "Back to shop ✓" }));
    let url = "https://shop.example.com/done?order=1";
    s.post("/v1/users/widgetButtonURL", k, &json!({ "widgetButtonURL": url }))
        .await
        .assert_ok(&format!("Widget button URL updated to: {url}"));
    let r = s.get("/v1/users/widgetButtonURL", k).await;
    assert_eq!(r.body, json!({ "message": "Widget button URL retrieved.", "code": 200, "widgetButtonURL": url }));
    // Extra fields are ignored.
    s.post("/v1/users/widgetText", k, &json!({ "widgetText": "Done", "other": [1] }))
        .await
        .assert_ok("Widget text updated to: Done");
    s.stop().await;
}

// ---------------------------------------------------------------- tenants

#[tokio::test]
async fn partners_never_see_each_others_contacts_or_settings() {
    let s = Server::sandbox().await;
    let (_, a) = s.partner();
    let (_, b) = s.partner();
    let c = contact();
    let secret = s.enabled(&a, &c).await;
    s.status(&b, &c).await.assert_ok_status(false);
    s.attempt("disable2fa", &b, &c, s.code(&secret).into()).await.assert_error(409, "2FA is not enabled");
    s.attempt("verify2fa", &b, &c, s.code(&secret).into()).await.assert_error(409, "2FA is not enabled");
    // B's create on the same contact id is B's own record and does not touch A's.
    let b_secret = s.create_secret(&b, &c).await;
    assert_ne!(b_secret.to_base32(), secret.to_base32());
    s.status(&a, &c).await.assert_ok_status(true);
    s.attempt("verify2fa", &a, &c, s.code(&secret).into()).await.assert_valid("token", 10);
    // Widget settings are per partner.
    s.post("/v1/users/widgetText", Some(&a), &json!({ "widgetText": "A's text" }))
        .await
        .assert_ok("Widget text updated to: A's text");
    assert_eq!(s.get("/v1/users/widgetText", Some(&b)).await.body["widgetText"], Value::Null);
    s.stop().await;
}

// ---------------------------------------------------------------- concurrency and restart

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_32_concurrent_enables_with_one_code_exactly_one_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("r.db")).unwrap();
    let s = Setup { store: Arc::new(store), ..Setup::default() }.start().await;
    let (_, key) = s.partner();
    let c = contact();
    let secret = s.create_secret(&key, &c).await;
    let code = s.code(&secret);
    let s = Arc::new(s);
    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let (s, key, c, code) = (s.clone(), key.clone(), c.clone(), code.clone());
            tokio::spawn(async move { s.attempt("enable2fa", &key, &c, code.into()).await })
        })
        .collect();
    let mut by_status: BTreeMap<u16, Vec<Reply>> = BTreeMap::new();
    for t in tasks {
        let r = t.await.unwrap();
        by_status.entry(r.status).or_default().push(r);
    }
    assert_eq!(by_status.get(&200).map_or(0, Vec::len), 1, "{:?}", by_status.keys());
    for r in by_status.values().flatten().filter(|r| r.status != 200) {
        let msg = r.body["message"].as_str().unwrap();
        assert!(
            (r.status == 409 && msg == "Cannot enable 2FA again, it is already set")
                || (r.status == 401 && msg == FAILED),
            "{}",
            r.text
        );
    }
    s.status(&key, &c).await.assert_ok_status(true);
}

#[tokio::test]
async fn state_survives_a_restart_on_the_same_database_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let key_file = dir.path().join("r.db.key");
    let store = || Arc::new(SqliteStore::open(&db).unwrap());
    let keys = || KeyRing::load_or_generate(&key_file, &*store()).unwrap();

    let s = Setup { store: store(), keys: keys(), ..Setup::default() }.start().await;
    let (_, key) = s.partner();
    let (enabled, pending) = (contact(), contact());
    let secret = s.enabled(&key, &enabled).await;
    let pending_secret = s.create_secret(&key, &pending).await;
    s.post("/v1/users/widgetText", Some(&key), &json!({ "widgetText": "Kept" }))
        .await
        .assert_ok("Widget text updated to: Kept");
    let now = s.clock_now();
    s.stop().await;

    let s = Setup { store: store(), keys: keys(), ..Setup::default() }.start().await;
    s.clock.set(now);
    s.status(&key, &enabled).await.assert_ok_status(true);
    assert_eq!(s.get("/v1/users/widgetText", Some(&key)).await.body["widgetText"], json!("Kept"));
    // The sealed secrets still open under the same key file.
    s.attempt("verify2fa", &key, &enabled, s.code(&secret).into()).await.assert_valid("token", 10);
    s.attempt("enable2fa", &key, &pending, s.code(&pending_secret).into()).await.assert_enabled();
    s.stop().await;
}

// ---------------------------------------------------------------- failures, health, OpenAPI

#[tokio::test]
async fn store_failures_answer_the_operations_500_message_and_healthz_503() {
    let store = common::failing_store();
    let s = Setup { store: store.clone(), ..Setup::default() }.start().await;
    let (_, key) = s.partner();
    let c = contact();
    let secret = s.enabled(&key, &c).await;
    let r = s.get("/healthz", None).await;
    assert_eq!(r.text, r#"{"message":"Store is reachable.","code":200}"#);

    common::set_failing(&store, true);
    s.create(&key, &contact()).await.assert_error(500, "Error enabling 2FA");
    s.attempt("enable2fa", &key, &contact(), json!("123456")).await.assert_error(500, "Error enabling 2FA");
    s.attempt("disable2fa", &key, &c, s.code(&secret).into()).await.assert_error(500, "Error disabling 2FA");
    s.attempt("verify2fa", &key, &c, s.code(&secret).into()).await.assert_error(500, "Error verifying 2FA");
    s.status(&key, &c).await.assert_error(500, "Error getting 2FA");
    s.post("/v1/users/widgetText", Some(&key), &json!({ "widgetText": "x" }))
        .await
        .assert_error(500, "Internal server error");
    s.get("/healthz", None).await.assert_error(503, "Store is unreachable.");

    common::set_failing(&store, false);
    s.status(&key, &c).await.assert_ok_status(true);
    s.stop().await;
}

/// Records which codes each documented route answered.
#[derive(Default)]
struct Observed(BTreeMap<(String, String), BTreeSet<u16>>);

impl Observed {
    fn note(&mut self, method: &str, path: &str, r: &Reply) {
        let route = path.split('?').next().unwrap().to_owned();
        self.0.entry((method.to_lowercase(), route)).or_default().insert(r.status);
    }
}

#[tokio::test]
async fn openapi_document_matches_the_running_app() {
    let store = common::failing_store();
    let s = Setup { store: store.clone(), ..Setup::default() }.start().await;
    let (partner, key) = s.partner();
    let k = Some(key.as_str());
    let r = s.get("/openapi.json", None).await;
    assert_eq!(r.status, 200);
    let doc = r.body;
    assert_eq!(doc["openapi"], json!("3.1.0"));
    let paths = doc["paths"].as_object().unwrap();

    // Every documented path and method exists and answers with a documented code.
    let mut seen = Observed::default();
    for (path, item) in paths {
        for method in item.as_object().unwrap().keys() {
            let m = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let r = s.send(s.client.request(m, s.url(path)).bearer_auth(&key).body("{}")).await;
            // A 404 of the route's own (an unknown id) shows the route exists; the router's is "Not found".
            let unrouted = r.status == 404 && r.body["message"] == json!("Not found");
            assert!(!unrouted && r.status != 405, "{method} {path}: {}", r.text);
            seen.note(method, path, &r);
        }
    }

    // Drive every route through the answers it can give and record them.
    let c = contact();
    let cq = |p: &str| format!("{p}?contactId={c}");
    let create = cq("/v1/auth/create2fa");
    let status = cq("/v1/auth/2fa");
    for (path, key) in [(create.as_str(), None), ("/v1/auth/create2fa", k), (create.as_str(), k)] {
        let r = s.get(path, key).await;
        seen.note("get", path, &r);
    }
    for path in [status.as_str(), "/v1/auth/2fa"] {
        seen.note("get", path, &s.get(path, k).await);
        seen.note("get", path, &s.get(path, None).await);
    }
    let secret = Secret::from_base32(&{
        let r = s.create(&key, &c).await;
        r.body["details"]["manual"].as_str().unwrap().to_owned()
    })
    .unwrap();
    let big = "x".repeat(70_000);
    for op in ["enable2fa", "disable2fa", "verify2fa"] {
        let path = format!("/v1/auth/{op}");
        seen.note("post", &path, &s.post_raw(&path, None, "{}").await);
        seen.note("post", &path, &s.post_raw(&path, k, "{").await);
        seen.note("post", &path, &s.post_raw(&path, k, big.clone()).await);
        seen.note("post", &path, &s.attempt(op, &key, &c, Value::Null).await);
        seen.note("post", &path, &s.attempt(op, &key, &c, json!("000000")).await);
    }
    let path = "/v1/auth/enable2fa";
    seen.note("post", path, &s.attempt("enable2fa", &key, &c, s.code(&secret).into()).await);
    seen.note("post", path, &s.attempt("enable2fa", &key, &c, json!("1")).await);
    seen.note("get", &create, &s.get(&create, k).await);
    s.clock.advance(STEP_SECONDS);
    for op in ["verify2fa", "disable2fa"] {
        let path = format!("/v1/auth/{op}");
        seen.note("post", &path, &s.attempt(op, &key, &c, json!(wrong_code(&secret, s.clock_now()))).await);
        seen.note("post", &path, &s.attempt(op, &key, &c, json!(null)).await);
    }
    // throttle (429), then lock (423)
    for op in ["verify2fa", "disable2fa", "verify2fa", "disable2fa", "verify2fa", "disable2fa"] {
        let path = format!("/v1/auth/{op}");
        seen.note("post", &path, &s.attempt(op, &key, &c, json!("999999x")).await);
    }
    for _ in 0..100 {
        s.clock.advance(3600);
        s.attempt("verify2fa", &key, &c, json!("x")).await;
    }
    for op in ["verify2fa", "disable2fa"] {
        let path = format!("/v1/auth/{op}");
        seen.note("post", &path, &s.attempt(op, &key, &c, json!("x")).await);
    }
    s.service.reset_lock("test", &partner, &c.parse().unwrap()).unwrap();
    s.clock.advance(STEP_SECONDS);
    seen.note("post", "/v1/auth/verify2fa", &s.attempt("verify2fa", &key, &c, s.code(&secret).into()).await);
    s.clock.advance(STEP_SECONDS);
    seen.note("post", "/v1/auth/disable2fa", &s.attempt("disable2fa", &key, &c, s.code(&secret).into()).await);
    for (path, field, good) in [
        ("/v1/users/widgetText", "widgetText", "Done"),
        ("/v1/users/widgetButtonURL", "widgetButtonURL", "https://example.com/"),
    ] {
        seen.note("post", path, &s.post(path, k, &json!({ field: good })).await);
        seen.note("post", path, &s.post(path, k, &json!({ field: 1 })).await);
        seen.note("post", path, &s.post_raw(path, None, "{}").await);
        seen.note("post", path, &s.post_raw(path, k, big.clone()).await);
        seen.note("get", path, &s.get(path, k).await);
        seen.note("get", path, &s.get(path, None).await);
    }
    let origins = "/v1/users/widgetOrigins";
    seen.note("post", origins, &s.post(origins, k, &json!({ "widgetOrigins": ["https://a.example"] })).await);
    seen.note("post", origins, &s.post(origins, k, &json!({ "widgetOrigins": 1 })).await);
    seen.note("post", origins, &s.post_raw(origins, None, "{}").await);
    seen.note("post", origins, &s.post_raw(origins, k, big.clone()).await);
    seen.note("get", origins, &s.get(origins, k).await);
    seen.note("get", origins, &s.get(origins, None).await);
    let public_key = s.service.partner(&partner).unwrap().publishable_key;
    let config = "/v1/widget/config";
    seen.note("get", config, &s.get(&format!("{config}?publicKey={public_key}"), None).await);
    seen.note("get", config, &s.get(&format!("{config}?publicKey=pk_sandbox_x"), None).await);
    seen.note("get", config, &s.get(config, None).await);
    let check = "/v1/widget/check";
    seen.note("post", check, &s.post(check, None, &json!({ "publicKey": public_key })).await);
    seen.note("post", check, &s.post(check, None, &json!({ "publicKey": "pk_sandbox_x" })).await);
    seen.note("post", check, &s.post(check, None, &json!({})).await);
    seen.note("post", check, &s.post_raw(check, None, big.clone()).await);
    for _ in 0..rampart_server::PUBLIC_RATE.1 {
        seen.note("post", check, &s.post(check, None, &json!({ "publicKey": public_key })).await);
    }
    for path in ["/v1/widget/validate", "/v1/widget/url", "/v1/widget/snippet"] {
        let snippet_ready = json!({ "environment": "sandbox", "targetContainerId": "w" });
        seen.note("post", path, &s.post(path, k, &snippet_ready).await);
        seen.note("post", path, &s.post(path, k, &json!({ "amount": 5 })).await);
        seen.note("post", path, &s.post_raw(path, k, "[").await);
        seen.note("post", path, &s.post_raw(path, None, "{}").await);
        seen.note("post", path, &s.post_raw(path, k, big.clone()).await);
    }
    seen.note("get", "/healthz", &s.get("/healthz", None).await);
    seen.note("get", "/openapi.json", &s.get("/openapi.json", None).await);
    // Server failures: 500 and 503.
    common::set_failing(&store, true);
    seen.note("get", &create, &s.get(&cq("/v1/auth/create2fa"), k).await);
    seen.note("get", &status, &s.get(&status, k).await);
    for op in ["enable2fa", "disable2fa", "verify2fa"] {
        let path = format!("/v1/auth/{op}");
        seen.note("post", &path, &s.attempt(op, &key, &c, json!("123456")).await);
    }
    for path in ["/v1/users/widgetText", "/v1/users/widgetButtonURL"] {
        seen.note(
            "post",
            path,
            &s.post(path, k, &json!({ "widgetText": "x", "widgetButtonURL": "https://e.com/" })).await,
        );
    }
    for path in ["/v1/widget/validate", "/v1/widget/url", "/v1/widget/snippet"] {
        seen.note("post", path, &s.post(path, k, &json!({})).await);
    }
    seen.note("post", origins, &s.post(origins, k, &json!({ "widgetOrigins": [] })).await);
    seen.note("get", "/healthz", &s.get("/healthz", None).await);

    // Every observed code is documented for its route, and every route was exercised.
    let mut routes = 0;
    for ((method, path), codes) in &seen.0 {
        let documented: BTreeSet<u16> = paths
            .get(path)
            .and_then(|item| item.get(method))
            .unwrap_or_else(|| panic!("{method} {path} is not documented"))["responses"]
            .as_object()
            .unwrap()
            .keys()
            .map(|c| c.parse().unwrap())
            .collect();
        assert!(codes.is_subset(&documented), "{method} {path}: observed {codes:?}, documented {documented:?}");
        routes += 1;
    }
    let documented_routes: usize = paths.values().map(|i| i.as_object().unwrap().len()).sum();
    assert_eq!(routes, documented_routes);
    // The codes the test provoked cover most of what is documented (every 2FA code is seen).
    for (method, path, expect) in [
        ("get", "/v1/auth/create2fa", &[200, 400, 401, 403, 500][..]),
        ("post", "/v1/auth/enable2fa", &[200, 400, 401, 409, 413, 500][..]),
        ("post", "/v1/auth/disable2fa", &[200, 400, 401, 409, 413, 423, 429, 500][..]),
        ("post", "/v1/auth/verify2fa", &[200, 400, 401, 409, 413, 423, 429, 500][..]),
        ("get", "/healthz", &[200, 503][..]),
        ("post", "/v1/widget/url", &[200, 400, 401, 413][..]),
        ("post", "/v1/widget/snippet", &[200, 400, 401, 413][..]),
        ("post", "/v1/widget/validate", &[200, 400, 401, 413][..]),
    ] {
        let got = &seen.0[&(method.to_owned(), path.to_owned())];
        assert!(expect.iter().all(|c| got.contains(c)), "{method} {path}: {got:?}");
    }
    s.stop().await;
}

// Small helpers on the harness that read better inline.
trait ReplyExt {
    fn assert_ok_status(&self, enabled: bool);
}

impl ReplyExt for Reply {
    #[track_caller]
    fn assert_ok_status(&self, enabled: bool) {
        let msg = if enabled { "2FA is true." } else { "2FA is false." };
        assert_eq!(self.status, 200, "{}", self.text);
        let remaining = self.body["recoveryCodesRemaining"].as_u64().expect("recoveryCodesRemaining");
        assert_eq!(
            self.body,
            json!({ "message": msg, "code": 200, "status": enabled, "recoveryCodesRemaining": remaining })
        );
        assert!(if enabled { remaining <= 10 } else { remaining == 0 }, "{}", self.text);
    }
}

trait ServerExt {
    fn clock_now(&self) -> u64;
    fn partner_of(&self, key: &str) -> rampart_core::PartnerId;
}

impl ServerExt for Server {
    fn clock_now(&self) -> u64 {
        use rampart_core::Clock;
        self.clock.now()
    }
    fn partner_of(&self, key: &str) -> rampart_core::PartnerId {
        self.service.authenticate(key).unwrap().partner_id
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_lets_a_request_in_flight_finish() {
    use std::io::{Read, Write};
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let addr = s.base.trim_start_matches("http://").to_owned();
    let body = json!({ "contactId": contact(), "token": "" }).to_string();
    let (started_tx, started_rx) = tokio::sync::oneshot::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    // A client that sends the headers and half the body, then waits.
    let client = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        let head = format!(
            "POST /v1/auth/disable2fa HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {key}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(&body.as_bytes()[..5]).unwrap();
        started_tx.send(()).unwrap();
        go_rx.recv().unwrap();
        stream.write_all(&body.as_bytes()[5..]).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    });
    started_rx.await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let stop = tokio::spawn(s.stop());
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!stop.is_finished(), "the server waits for the request in flight");
    go_tx.send(()).unwrap();
    let answer = client.await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 409"), "{answer}");
    assert!(answer.ends_with(r#"{"message":"2FA is not enabled","code":409}"#), "{answer}");
    stop.await.unwrap();
}

#[tokio::test]
async fn chunked_body_over_64_kib_is_413() {
    use std::io::{Read, Write};
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let addr = s.base.trim_start_matches("http://").to_owned();
    let answer = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        let mut request = format!(
            "POST /v1/auth/enable2fa HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {key}\r\n\
             Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        );
        for _ in 0..10 {
            request.push_str(&format!("{:x}\r\n{}\r\n", 7000, " ".repeat(7000)));
        }
        request.push_str("0\r\n\r\n");
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.ends_with(r#"{"message":"Request body is too large","code":413}"#), "{answer}");
    s.stop().await;
}

// ---------------------------------------------------------------- who may embed the widget

#[tokio::test]
async fn widget_origins_are_set_checked_and_public_through_the_publishable_key() {
    let s = Server::sandbox().await;
    let (partner, key) = s.partner();
    let k = Some(key.as_str());
    let r = s.get("/v1/users/widgetOrigins", k).await;
    assert_eq!(r.body, json!({ "message": "Widget origins retrieved.", "code": 200, "widgetOrigins": [] }));
    let r = s
        .post(
            "/v1/users/widgetOrigins",
            k,
            &json!({ "widgetOrigins": ["HTTPS://Shop.Example:443", "http://localhost:3000"] }),
        )
        .await;
    assert_eq!(
        r.body,
        json!({ "message": "Widget origins updated.", "code": 200,
                "widgetOrigins": ["https://shop.example", "http://localhost:3000"] })
    );
    for (body, message) in [
        (json!({}), "widgetOrigins is required"),
        (json!({ "widgetOrigins": "https://a.example" }), "widgetOrigins must be an array of strings"),
        (json!({ "widgetOrigins": ["https://a.example", 5] }), "widgetOrigins[1] must be a string"),
        (
            json!({ "widgetOrigins": ["https://a.example", "https://user@b.example"] }),
            "widgetOrigins[1] must be an origin: http(s)://host[:port], without path, query or credentials",
        ),
        (
            json!({ "widgetOrigins": ["https://*.example"] }),
            "widgetOrigins[0] must not hold a wildcard: register each origin",
        ),
    ] {
        s.post("/v1/users/widgetOrigins", k, &body).await.assert_error(400, message);
    }
    s.post("/v1/users/widgetOrigins", None, &json!({ "widgetOrigins": [] })).await.assert_error(401, UNAUTHORIZED);
    let many: Vec<String> = (0..21).map(|i| format!("https://s{i}.example")).collect();
    s.post("/v1/users/widgetOrigins", k, &json!({ "widgetOrigins": many }))
        .await
        .assert_error(400, "widgetOrigins may list at most 20 origins");
    assert_eq!(s.get("/v1/users/widgetOrigins", k).await.body["widgetOrigins"].as_array().unwrap().len(), 2);

    // The page's view: public, by publishable key, no secret in it.
    let public_key = s.service.partner(&partner).unwrap().publishable_key;
    s.post("/v1/users/widgetText", k, &json!({ "widgetText": "Back to the shop" }))
        .await
        .assert_ok("Widget text updated to: Back to the shop");
    let r = s.get(&format!("/v1/widget/config?publicKey={public_key}"), None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["message"], "Widget configuration retrieved.");
    assert_eq!(r.body["environment"], "sandbox");
    assert_eq!(r.body["approved"], true, "sandbox widgets need no approval");
    assert_eq!(r.body["widgetText"], "Back to the shop");
    assert_eq!(r.body["widgetButtonURL"], Value::Null);
    assert_eq!(r.body["widgetOrigins"], json!(["https://shop.example", "http://localhost:3000"]));
    assert_eq!(r.body["coins"][0], json!({ "symbol": "btc", "name": "Bitcoin", "chain": "bitcoin" }));
    assert!(!r.text.contains(&key) && !r.text.contains("secret"), "{}", r.text);
    s.get("/v1/widget/config?publicKey=pk_sandbox_nope", None).await.assert_error(404, "Partner not found");
    s.get(&format!("/v1/widget/config?publicKey={key}"), None).await.assert_error(404, "Partner not found");
    s.get("/v1/widget/config", None).await.assert_error(400, "publicKey is required");
    s.stop().await;
}

#[tokio::test]
async fn production_widgets_need_https_origins_and_an_operator_approval() {
    let s = Setup { environment: Environment::Production, ..Setup::default() }.start().await;
    let (partner, key) = s.partner();
    let k = Some(key.as_str());
    s.post("/v1/users/widgetOrigins", k, &json!({ "widgetOrigins": ["https://shop.example", "http://shop.example"] }))
        .await
        .assert_error(400, "widgetOrigins[1] must be https in production");
    let public_key = s.service.partner(&partner).unwrap().publishable_key;
    let config = format!("/v1/widget/config?publicKey={public_key}");
    assert_eq!(s.get(&config, None).await.body["approved"], false);
    s.service.set_widget_approval("olga", &partner, true).unwrap();
    assert_eq!(s.get(&config, None).await.body["approved"], true);
    s.stop().await;
}

#[tokio::test]
async fn the_public_check_answers_as_validate_and_is_rate_limited_per_address() {
    let s = Server::sandbox().await;
    let (partner, key) = s.partner();
    let public_key = s.service.partner(&partner).unwrap().publishable_key;
    let options = json!({ "publicKey": public_key, "tokens": "btc", "amount": "4" });
    let checked = s.post("/v1/widget/check", None, &options).await;
    let validated = s.post("/v1/widget/validate", Some(&key), &options).await;
    assert_eq!(checked.status, 200, "{}", checked.text);
    assert_eq!(checked.body, validated.body, "the same result as /v1/widget/validate");
    assert_eq!(checked.body["errors"][0]["code"], "amount_below_minimum");
    s.post("/v1/widget/check", None, &json!({ "tokens": "btc" })).await.assert_error(400, "publicKey is required");
    s.post("/v1/widget/check", None, &json!({ "publicKey": "pk_sandbox_nope" }))
        .await
        .assert_error(404, "Partner not found");
    s.post("/v1/widget/check", None, &json!({ "publicKey": key })).await.assert_error(404, "Partner not found");
    // 60 at once from one address, then a wait named in seconds.
    let (per_minute, burst) = rampart_server::PUBLIC_RATE;
    assert_eq!((per_minute, burst), (120, 60));
    let mut refused = None;
    for _ in 0..burst {
        let r = s.post("/v1/widget/check", None, &json!({ "publicKey": public_key })).await;
        if r.status == 429 {
            refused = Some(r);
            break;
        }
    }
    let r = refused.expect("refused within the burst, counting the requests above");
    assert_eq!(r.body, json!({ "message": "Too many requests, try again in 1 seconds", "code": 429 }));
    assert_eq!(r.header("retry-after"), Some("1"));
    s.stop().await;
}

#[tokio::test]
async fn the_loader_is_served_immutable_with_its_sri() {
    use base64::Engine;
    use sha2::Digest;
    let s = Server::sandbox().await;
    let r = s.get("/widget/v1/rampart.js", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/javascript; charset=utf-8"));
    assert_eq!(r.header("cache-control"), Some("public, max-age=31536000, immutable"));
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    let committed = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../widget/dist/rampart.js")).unwrap();
    assert_eq!(r.text.as_bytes(), &committed[..], "the binary serves the committed build");
    let sri = s.get("/widget/v1/rampart.js.sri", None).await;
    assert_eq!(sri.status, 200);
    let want = format!("sha384-{}", base64::engine::general_purpose::STANDARD.encode(sha2::Sha384::digest(&committed)));
    assert_eq!(sri.text.trim_end(), want);
    assert_eq!(sri.text.lines().count(), 1);
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    assert!(readme.contains(&format!("integrity=\"{want}\"")), "README.md's embed example has a stale integrity value");
    s.stop().await;
}

#[tokio::test]
async fn the_widget_page_is_framed_only_by_the_partners_origins() {
    let s = Server::sandbox().await;
    let (partner, key) = s.partner();
    let public_key = s.service.partner(&partner).unwrap().publishable_key;
    s.post("/v1/users/widgetOrigins", Some(&key), &json!({ "widgetOrigins": ["https://shop.example"] })).await;
    let r = s.get(&format!("/widget/?publicKey={public_key}&tokens=btc"), None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    let committed = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../widget/dist/index.html")).unwrap();
    assert_eq!(r.text.as_bytes(), &committed[..]);
    assert_eq!(
        r.header("content-security-policy"),
        Some(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
             base-uri 'none'; form-action 'none'; \
             frame-ancestors https://shop.example http://localhost:* http://127.0.0.1:* 'self'"
        )
    );
    for (path, file, content_type) in [
        ("/widget/page.js", "page.js", "text/javascript; charset=utf-8"),
        ("/widget/page.css", "page.css", "text/css; charset=utf-8"),
    ] {
        let r = s.get(path, None).await;
        assert_eq!((r.status, r.header("content-type")), (200, Some(content_type)));
        let built = std::fs::read(format!("{}/../../widget/dist/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        assert_eq!(r.text.as_bytes(), &built[..]);
    }
    // No known publishable key: an explanation nobody may frame.
    for (query, status) in [("", 400), ("?publicKey=pk_sandbox_nope", 404), (&*format!("?publicKey={key}"), 404)] {
        let r = s.get(&format!("/widget/{query}"), None).await;
        assert_eq!(r.status, status, "{query}");
        assert!(r.header("content-security-policy").unwrap().ends_with("frame-ancestors 'none'"));
        assert!(r.text.contains("This widget cannot open") && !r.text.contains(&key));
    }
    // /widget keeps the query on its way to /widget/.
    let r = s.send(s.client.get(s.url(&format!("/widget?publicKey={public_key}&a=1")))).await;
    assert_eq!((r.status, r.header("content-type")), (200, Some("text/html; charset=utf-8")), "followed the redirect");
    s.stop().await;
}

#[tokio::test]
async fn the_script_snippet_loads_the_served_loader_and_takes_a_nonce() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let k = Some(key.as_str());
    let options = json!({ "targetContainerId": "buy" });
    let r = s.post("/v1/widget/snippet", k, &options).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let script = r.body["script"].as_str().unwrap();
    assert!(script.contains("https://widget-sandbox.rampart.network/v1/rampart.js\"></script>"), "{script}");
    let r = s.post("/v1/widget/snippet?nonce=r4nd0m%2B%2F%3D", k, &options).await;
    let script = r.body["script"].as_str().unwrap();
    assert_eq!(script.matches(" nonce=\"r4nd0m+/=\"").count(), 2, "{script}");
    s.post("/v1/widget/snippet?nonce=bad%20nonce", k, &options)
        .await
        .assert_error(400, "nonce must be 1 to 256 characters of A-Z a-z 0-9 + / = - _");
    s.stop().await;
}
