//! The widget's purchase flow over HTTP (SPEC 6.3, DESIGN "Widget purchase flow"): a whole
//! purchase through the session routes, the partner's reads of orders and contacts, the order
//! of answers (session, then body, then the core), production's refusals, the public rate
//! limit, and logs without the flow's secrets. The app runs in-process on 127.0.0.1 with a
//! manual clock (see `common`).

mod common;

use std::io::Write;
use std::sync::{Mutex, OnceLock};

use common::{Reply, Server, Setup, T0};
use rampart_core::totp::{self, Secret};
use rampart_core::{Clock, Environment, PartnerId};
use serde_json::{Value, json};

const ADDR: &str = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq";
const EXPIRED: &str = "Widget session expired, sign in again";

// ---------------------------------------------------------------------------------------------
// Captured logs: every event of this test binary, as the server's fmt layer would print it.

static LOG: Mutex<Vec<u8>> = Mutex::new(Vec::new());

struct Capture;

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        LOG.lock().unwrap_or_else(std::sync::PoisonError::into_inner).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn capture_logs() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let subscriber = tracing_subscriber::fmt()
            .with_writer(|| Capture)
            .with_max_level(tracing::Level::TRACE)
            .without_time()
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
    });
}

fn logs() -> String {
    String::from_utf8_lossy(&LOG.lock().unwrap_or_else(std::sync::PoisonError::into_inner)).into_owned()
}

/// `needle` occurs in `text` as a whole word of digits (not inside a longer number).
fn has_number(text: &str, needle: &str) -> bool {
    text.match_indices(needle).any(|(i, _)| {
        let before = text[..i].chars().next_back().is_none_or(|c| !c.is_ascii_digit());
        let after = text[i + needle.len()..].chars().next().is_none_or(|c| !c.is_ascii_digit());
        before && after
    })
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn publishable_key(s: &Server, partner: &PartnerId) -> String {
    s.service.partner(partner).unwrap().publishable_key
}

async fn open(s: &Server, public_key: &str, origin: Option<&str>) -> Reply {
    let mut body = json!({ "publicKey": public_key });
    if let Some(o) = origin {
        body["origin"] = json!(o);
    }
    s.post("/v1/widget/session", None, &body).await
}

/// A new session's token.
async fn session(s: &Server, public_key: &str) -> String {
    let r = open(s, public_key, None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["token"].as_str().unwrap().to_owned()
}

/// Ask for a code (sandbox shows it) and sign in with it.
async fn sign_in(s: &Server, token: &str, email: &str) -> Reply {
    let r = s.post("/v1/widget/session/email", Some(token), &json!({ "email": email })).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let code = r.body["sandboxCode"].as_str().unwrap().to_owned();
    let r = s.post("/v1/widget/session/signin", Some(token), &json!({ "email": email, "code": code })).await;
    assert_eq!(r.status, 200, "{}", r.text);
    r
}

fn session_json(signed_in: bool, email: Option<&str>, kyc: bool, step: Option<&str>, may: bool, env: &str) -> Value {
    json!({
        "signedIn": signed_in,
        "email": email,
        "kycPassed": kyc,
        "twoFactor": step,
        "mayPurchase": may,
        "purchaseHoldUntil": null,
        "recoveryCodesRemaining": 0,
        "environment": env,
    })
}

/// `session_json` of a contact with 2FA on and `n` recovery codes left.
fn with_codes(mut session: Value, n: u32) -> Value {
    session["recoveryCodesRemaining"] = json!(n);
    session
}

fn order_body(coin: &str, amount: &str, currency: &str, address: &str) -> Value {
    json!({ "coin": coin, "amount": amount, "currency": currency, "address": address })
}

fn now(s: &Server) -> u64 {
    s.clock.now()
}

/// A code for `secret` that none of the window's steps gives.
fn wrong(s: &Server, secret: &Secret) -> String {
    common::wrong_code(secret, now(s))
}

// ---------------------------------------------------------------------------------------------
// The whole flow

#[tokio::test]
async fn a_purchase_from_session_to_partner_read() {
    capture_logs();
    let s = Server::sandbox().await;
    let (partner, key) = s.partner();
    let pk = publishable_key(&s, &partner);
    s.post("/v1/users/widgetOrigins", Some(&key), &json!({ "widgetOrigins": ["https://shop.example"] })).await;

    // Open, embedded by a registered origin.
    let r = open(&s, &pk, Some("https://shop.example")).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let token = r.body["token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("ws_") && token.len() == 46, "{token}");
    assert_eq!(
        r.body,
        json!({
            "message": "Widget session opened.",
            "code": 200,
            "token": token,
            "idleTimeout": 1800,
            "session": session_json(false, None, false, None, false, "sandbox"),
        })
    );
    let t = Some(token.as_str());

    // Email: the sandbox shows the code.
    let r = s.post("/v1/widget/session/email", t, &json!({ "email": " Alice@Example.COM " })).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let code = r.body["sandboxCode"].as_str().unwrap().to_owned();
    assert!(code.len() == 6 && code.bytes().all(|b| b.is_ascii_digit()), "{code}");
    assert_eq!(r.body, json!({ "message": "Sign-in code sent.", "code": 200, "expiresIn": 600, "sandboxCode": code }));

    // Sign in.
    let wrong_code = format!("{:06}", (code.parse::<u32>().unwrap() + 1) % 1_000_000);
    s.post("/v1/widget/session/signin", t, &json!({ "email": "alice@example.com", "code": wrong_code }))
        .await
        .assert_error(401, "The sign-in code is wrong");
    let r = s.post("/v1/widget/session/signin", t, &json!({ "email": "alice@example.com", "code": code })).await;
    assert_eq!(
        r.body,
        json!({
            "message": "Signed in.",
            "code": 200,
            "session": session_json(true, Some("alice@example.com"), false, Some("none"), true, "sandbox"),
        })
    );
    s.post("/v1/widget/session/signin", t, &json!({ "email": "alice@example.com", "code": code }))
        .await
        .assert_error(401, "The sign-in code has expired or was tried too often, ask for a new one");

    // KYC in sandbox: 2FA must be set up.
    let r = s.post_raw("/v1/widget/session/kyc", t, "").await;
    assert_eq!(
        r.body,
        json!({
            "message": "Marked as KYC passed.",
            "code": 200,
            "session": session_json(true, Some("alice@example.com"), true, Some("setup"), false, "sandbox"),
        })
    );
    s.post("/v1/widget/session/orders", t, &order_body("btc", "25", "usd", ADDR))
        .await
        .assert_error(403, "2FA is required before buying");

    // Create: QR and manual key, never cached.
    let r = s.post_raw("/v1/widget/session/2fa/create", t, "").await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let manual = r.body["manual"].as_str().unwrap().to_owned();
    let qr = r.body["qrCode"].as_str().unwrap().to_owned();
    assert!(qr.starts_with("data:image/png;base64,"), "{qr}");
    assert_eq!(manual.len(), 32);
    assert_eq!(r.body, json!({ "message": "Successfully created 2fa!", "code": 200, "qrCode": qr, "manual": manual }));
    let secret = Secret::from_base32(&manual).unwrap();

    // Enable with a code of the app.
    let enabling = s.code(&secret);
    s.post("/v1/widget/session/2fa/enable", t, &json!({ "token": wrong(&s, &secret) }))
        .await
        .assert_error(401, "Google 2FA failed");
    let r = s.post("/v1/widget/session/2fa/enable", t, &json!({ "token": enabling })).await;
    let codes = r.body["recoveryCodes"].clone();
    assert_eq!(codes.as_array().map(Vec::len), Some(10), "{}", r.text);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    assert_eq!(
        r.body,
        json!({
            "message": "Successfully enabled 2fa!",
            "code": 200,
            "session": with_codes(session_json(true, Some("alice@example.com"), true, Some("passed"), true, "sandbox"), 10),
            "recoveryCodes": codes,
        })
    );

    // Buy.
    s.clock.advance(7);
    let r = s.post("/v1/widget/session/orders", t, &order_body("btc", "25", "usd", ADDR)).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let order_id = r.body["order"]["orderId"].as_str().unwrap().to_owned();
    let contact_id = r.body["order"]["contactId"].as_str().unwrap().to_owned();
    assert!(uuid::Uuid::parse_str(&order_id).is_ok() && uuid::Uuid::parse_str(&contact_id).is_ok());
    let at = now(&s);
    let order = json!({
        "orderId": order_id,
        "contactId": contact_id,
        "coin": "btc",
        "amount": "25",
        "currency": "usd",
        "address": ADDR,
        "price": "65000.00",
        "quantity": "0.00038461",
        "status": "completed",
        "createdAt": at,
        "updatedAt": at,
    });
    assert_eq!(r.body, json!({ "message": "Order completed.", "code": 200, "order": order }));
    // Without a currency the order is in usd.
    let r = s.post("/v1/widget/session/orders", t, &json!({ "coin": "btc", "amount": "25", "address": ADDR })).await;
    assert_eq!((r.status, &r.body["order"]["currency"]), (200, &json!("usd")), "{}", r.text);

    // The partner confirms the order server-side.
    let path = format!("/v1/widget/orders/{order_id}");
    let r = s.get(&path, Some(&key)).await;
    assert_eq!(r.body, json!({ "message": "Order retrieved.", "code": 200, "order": order }));
    let r = s.get(&path.to_uppercase().replace("/V1/WIDGET/ORDERS/", "/v1/widget/orders/"), Some(&key)).await;
    assert_eq!(r.body["order"], order, "ids are case-insensitive");
    let (_, other_key) = s.partner();
    s.get(&path, Some(&other_key)).await.assert_error(404, "Order not found");
    s.get(&path, None).await.assert_error(401, "Unauthorized");
    s.get(&path, Some(&token)).await.assert_error(401, "Unauthorized");
    s.get(&path, Some(&pk)).await.assert_error(401, "Unauthorized");
    s.get(&format!("/v1/widget/orders/{}", uuid::Uuid::new_v4()), Some(&key))
        .await
        .assert_error(404, "Order not found");
    s.get("/v1/widget/orders/nope", Some(&key)).await.assert_error(400, "orderId must be a UUID");
    s.get("/v1/widget/orders/nope", None).await.assert_error(401, "Unauthorized");

    // The partner finds the contact by email.
    let r = s.get("/v1/widget/contacts?email=ALICE%40example.com", Some(&key)).await;
    assert_eq!(
        r.body,
        json!({ "message": "Contact retrieved.", "code": 200, "contactId": contact_id, "email": "alice@example.com" })
    );

    // The session as it stands, then signed out.
    let r = s.get("/v1/widget/session", t).await;
    assert_eq!(
        r.body,
        json!({
            "message": "Widget session.",
            "code": 200,
            "session": with_codes(session_json(true, Some("alice@example.com"), true, Some("passed"), true, "sandbox"), 10),
        })
    );
    let r = s.send(s.client.delete(s.url("/v1/widget/session")).bearer_auth(&token)).await;
    r.assert_ok("Signed out.");
    s.get("/v1/widget/session", t).await.assert_error(401, EXPIRED);
    s.post("/v1/widget/session/orders", t, &order_body("btc", "25", "usd", ADDR)).await.assert_error(401, EXPIRED);

    // A new session of the same contact must verify; a replayed code is refused.
    let t2 = session(&s, &pk).await;
    let r = sign_in(&s, &t2, "alice@example.com").await;
    assert_eq!(r.body["session"]["twoFactor"], json!("verify"));
    s.post("/v1/widget/session/2fa/verify", Some(&t2), &json!({ "token": enabling }))
        .await
        .assert_error(401, "Google 2FA failed");
    s.clock.advance(30);
    let verifying = s.code(&secret);
    let r = s.post("/v1/widget/session/2fa/verify", Some(&t2), &json!({ "token": verifying })).await;
    assert_eq!(
        r.body,
        json!({
            "message": "2FA token is valid.",
            "code": 200,
            "session": with_codes(session_json(true, Some("alice@example.com"), true, Some("passed"), true, "sandbox"), 10),
        })
    );

    // Nothing secret of this flow reached the log.
    let log = logs();
    assert!(log.contains("rampart::http"), "the request log was captured");
    for secret_text in [token.as_str(), &t2, &manual, &qr[22..]] {
        assert!(!log.contains(secret_text), "a secret in the log");
    }
    for code in codes.as_array().unwrap() {
        let code = code.as_str().unwrap();
        assert!(!log.contains(code) && !log.contains(&code.replace('-', "")), "a recovery code in the log");
    }
    for number in [&code, &wrong_code, &enabling, &verifying] {
        assert!(!has_number(&log, number), "a code in the log: {number}");
    }
    assert!(!log.contains("alice@example.com") && !log.to_lowercase().contains("alice%40"), "the email in the log");
    s.stop().await;
}

#[tokio::test]
async fn partner_reads_orders_page_by_page_and_contacts() {
    let s = Server::sandbox().await;
    let (partner, key) = s.partner();
    let k = Some(key.as_str());
    let pk = publishable_key(&s, &partner);
    let t = session(&s, &pk).await;
    sign_in(&s, &t, "bob@example.com").await;
    let mut ids = Vec::new();
    for i in 0..5 {
        s.clock.advance(10);
        let r = s
            .post(
                "/v1/widget/session/orders",
                Some(&t),
                &order_body("eth", &format!("{}", 10 + i), "eur", "0x52908400098527886E0F7030069857D2E4169EE7"),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        ids.push(r.body["order"]["orderId"].as_str().unwrap().to_owned());
    }
    ids.reverse(); // newest first
    let r = s.get("/v1/widget/contacts?email=bob%40example.com", k).await;
    let contact = r.body["contactId"].as_str().unwrap().to_owned();

    let page_ids = |r: &Reply| -> Vec<String> {
        r.body["orders"].as_array().unwrap().iter().map(|o| o["orderId"].as_str().unwrap().to_owned()).collect()
    };
    let base = format!("/v1/widget/orders?contactId={contact}");
    let r = s.get(&format!("{base}&limit=2"), k).await;
    assert_eq!(
        (r.status, r.body["message"].as_str(), r.body["code"].as_u64()),
        (200, Some("Orders retrieved."), Some(200))
    );
    assert_eq!(page_ids(&r), ids[..2]);
    assert_eq!(r.body["next"], json!(ids[1]));
    assert_eq!(r.body["orders"][0]["price"], json!("2944.00"));
    assert_eq!(r.body["orders"][0]["amount"], json!("14"));
    let mut seen = Vec::new();
    let mut next: Option<String> = None;
    loop {
        let path = match &next {
            None => format!("{base}&limit=2"),
            Some(after) => format!("{base}&limit=2&after={after}"),
        };
        let r = s.get(&path, k).await;
        assert_eq!(r.status, 200, "{}", r.text);
        seen.extend(page_ids(&r));
        match r.body["next"].as_str() {
            Some(n) => next = Some(n.to_owned()),
            None => {
                assert_eq!(r.body["next"], Value::Null);
                break;
            }
        }
    }
    assert_eq!(seen, ids, "every order once, newest first");
    // The default page holds them all.
    let r = s.get(&base, k).await;
    assert_eq!((page_ids(&r), &r.body["next"]), (ids.clone(), &Value::Null));
    // Bad queries.
    for limit in ["0", "101", "abc", "-1", "+5", ""] {
        s.get(&format!("{base}&limit={limit}"), k).await.assert_error(400, "limit must be 1 to 100");
    }
    s.get("/v1/widget/orders", k).await.assert_error(400, "contactId is required");
    s.get("/v1/widget/orders?contactId=nope", k).await.assert_error(400, "contactId must be a UUID");
    s.get(&format!("{base}&after=nope"), k).await.assert_error(400, "orderId must be a UUID");
    s.get(&format!("{base}&after={}", uuid::Uuid::new_v4()), k).await.assert_error(404, "Order not found");
    s.get(&base, None).await.assert_error(401, "Unauthorized");
    // Another partner sees no orders of the contact, and cannot page through them.
    let (_, other) = s.partner();
    let r = s.get(&base, Some(&other)).await;
    assert_eq!((r.status, &r.body["orders"], &r.body["next"]), (200, &json!([]), &Value::Null));
    s.get(&format!("{base}&after={}", ids[0]), Some(&other)).await.assert_error(404, "Order not found");

    // Contacts by email.
    s.get("/v1/widget/contacts?email=%20BOB%40Example.com", k).await.body["contactId"]
        .as_str()
        .map(|c| assert_eq!(c, contact))
        .expect("found");
    s.get("/v1/widget/contacts?email=carol%40example.com", k).await.assert_error(404, "Contact not found");
    s.get("/v1/widget/contacts?email=bob%40example.com", Some(&other)).await.assert_error(404, "Contact not found");
    s.get("/v1/widget/contacts?email=bob", k)
        .await
        .assert_error(400, "email must be an email address such as name@example.com");
    s.get("/v1/widget/contacts", k).await.assert_error(400, "email is required");
    s.get("/v1/widget/contacts?email=bob%40example.com", None).await.assert_error(401, "Unauthorized");
    s.stop().await;
}

// ---------------------------------------------------------------------------------------------
// The order of answers

const SESSION_ROUTES: [(&str, &str); 9] = [
    ("GET", "/v1/widget/session"),
    ("DELETE", "/v1/widget/session"),
    ("POST", "/v1/widget/session/email"),
    ("POST", "/v1/widget/session/signin"),
    ("POST", "/v1/widget/session/kyc"),
    ("POST", "/v1/widget/session/2fa/create"),
    ("POST", "/v1/widget/session/2fa/enable"),
    ("POST", "/v1/widget/session/2fa/verify"),
    ("POST", "/v1/widget/session/orders"),
];

async fn call(s: &Server, method: &str, path: &str, auth: Option<&str>, body: &str) -> Reply {
    let mut req = match method {
        "GET" => s.client.get(s.url(path)),
        "DELETE" => s.client.delete(s.url(path)),
        _ => s.client.post(s.url(path)).header("content-type", "application/json").body(body.to_owned()),
    };
    if let Some(a) = auth {
        req = req.header("authorization", a);
    }
    s.send(req).await
}

#[tokio::test]
async fn the_session_is_checked_before_the_body() {
    let s = Server::sandbox().await;
    let (partner, key) = s.partner();
    let pk = publishable_key(&s, &partner);
    let unknown = format!("Bearer ws_{}", "A".repeat(43));
    let secret = format!("Bearer {key}");
    for (method, path) in SESSION_ROUTES {
        for auth in [None, Some("Bearer"), Some(unknown.as_str()), Some(secret.as_str())] {
            for body in ["[", "{\"email\":1,\"code\":[],\"coin\":{}}"] {
                call(&s, method, path, auth, body).await.assert_error(401, EXPIRED);
            }
        }
    }
    for auth in [Some(""), Some("Basic abc"), Some("ws_nope")] {
        call(&s, "POST", "/v1/widget/session/orders", auth, "{}").await.assert_error(401, EXPIRED);
    }
    // An idle session too: 30 minutes without a call.
    let idle = session(&s, &pk).await;
    s.clock.advance(1800);
    s.post_raw("/v1/widget/session/email", Some(&idle), "[").await.assert_error(401, EXPIRED);
    // A good session: the body's 400 names the field.
    let good = session(&s, &pk).await;
    let bearer_good = format!("Bearer {good}");
    let g = Some(bearer_good.as_str());
    for (path, body, message) in [
        ("/v1/widget/session/email", "[1]", "body must be a JSON object"),
        ("/v1/widget/session/email", "{}", "email is required"),
        ("/v1/widget/session/email", "{\"email\":1}", "email must be a string"),
        ("/v1/widget/session/email", "{\"email\":\"bob\"}", "email must be an email address such as name@example.com"),
        ("/v1/widget/session/signin", "{\"email\":\"a@example.com\"}", "code is required"),
        ("/v1/widget/session/signin", "{\"code\":\"123456\"}", "email is required"),
        ("/v1/widget/session/signin", "{\"email\":\"a@example.com\",\"code\":123456}", "code must be a string"),
    ] {
        call(&s, "POST", path, g, body).await.assert_error(400, message);
    }
    // Orders check the body before the sign-in.
    for (body, message) in [
        (json!({ "amount": "25", "address": ADDR }), "coin is required"),
        (json!({ "coin": "btc", "address": ADDR }), "amount is required"),
        (json!({ "coin": "btc", "amount": "25" }), "address is required"),
        (json!({ "coin": "btc", "amount": 25, "address": ADDR }), "amount must be a string"),
        (json!({ "coin": "btc", "amount": "25", "currency": 1, "address": ADDR }), "currency must be a string"),
    ] {
        s.post("/v1/widget/session/orders", Some(&good), &body).await.assert_error(400, message);
    }
    s.post("/v1/widget/session/orders", Some(&good), &order_body("btc", "25", "usd", ADDR))
        .await
        .assert_error(401, "Sign in to continue");
    for path in ["/v1/widget/session/kyc", "/v1/widget/session/2fa/create"] {
        s.post_raw(path, Some(&good), "").await.assert_error(401, "Sign in to continue");
    }
    for path in ["/v1/widget/session/2fa/enable", "/v1/widget/session/2fa/verify"] {
        s.post(path, Some(&good), &json!({ "token": "123456" })).await.assert_error(401, "Sign in to continue");
    }
    // Signed in: the order's values are checked as widget options, naming the body's field.
    sign_in(&s, &good, "alice@example.com").await;
    for (body, message) in [
        (
            order_body("btc", "1", "usd", ADDR),
            "amount is not valid: amount is below the minimum purchase in the chosen currency.",
        ),
        (
            order_body("btc", "abc", "usd", ADDR),
            "amount is not valid: amount must be a plain decimal: digits, then optionally a point and 1 or 2 digits (for example \"50\" or \"49.99\").",
        ),
        (
            order_body("btc", "25", "xyz", ADDR),
            "currency is not valid: currencies must be \"usd\", \"eur\" or \"gbp\".",
        ),
        (
            order_body("btc", "25", "usd", "nope"),
            "address is not valid: The base58 address has the wrong length: it must hold a version byte, a 20-byte hash and a checksum.",
        ),
        (order_body("xyz", "25", "usd", ADDR), "coin is not valid: The coin symbol is not supported."),
    ] {
        s.post("/v1/widget/session/orders", Some(&good), &body).await.assert_error(400, message);
    }
    // Opening: a bad body is a 400, an unknown key a 404, a secret key is no publishable key.
    s.post_raw("/v1/widget/session", None, "[1]").await.assert_error(400, "body must be a JSON object");
    s.post_raw("/v1/widget/session", None, "[").await.assert_error(400, "body must be valid JSON");
    s.post("/v1/widget/session", None, &json!({})).await.assert_error(400, "publicKey is required");
    s.post("/v1/widget/session", None, &json!({ "publicKey": pk, "origin": 1 }))
        .await
        .assert_error(400, "origin must be a string");
    s.post("/v1/widget/session", None, &json!({ "publicKey": "pk_sandbox_nope" }))
        .await
        .assert_error(404, "Partner not found");
    s.post("/v1/widget/session", None, &json!({ "publicKey": key })).await.assert_error(404, "Partner not found");
    open(&s, &pk, Some("https://evil.example")).await.assert_error(403, "This site may not embed the widget");
    for origin in ["http://localhost:5173", "http://127.0.0.1:9", ""] {
        assert_eq!(open(&s, &pk, Some(origin)).await.status, 200, "{origin}");
    }
    let r = s.post("/v1/widget/session", None, &json!({ "publicKey": pk, "origin": null })).await;
    assert_eq!(r.status, 200, "{}", r.text);
    s.stop().await;
}

#[tokio::test]
async fn verify_throttles_with_retry_after_then_sign_in_codes_too() {
    let s = Server::sandbox().await;
    let (partner, _) = s.partner();
    let pk = publishable_key(&s, &partner);
    let t = session(&s, &pk).await;
    sign_in(&s, &t, "carol@example.com").await;
    s.post_raw("/v1/widget/session/kyc", Some(&t), "").await;
    let r = s.post_raw("/v1/widget/session/2fa/create", Some(&t), "").await;
    let secret = Secret::from_base32(r.body["manual"].as_str().unwrap()).unwrap();
    let r = s.post("/v1/widget/session/2fa/enable", Some(&t), &json!({ "token": s.code(&secret) })).await;
    assert_eq!(r.status, 200, "{}", r.text);
    s.clock.advance(totp::STEP_SECONDS);
    let t = session(&s, &pk).await;
    sign_in(&s, &t, "carol@example.com").await;
    let verify = "/v1/widget/session/2fa/verify";
    s.post(verify, Some(&t), &json!({})).await.assert_error(401, "Google 2FA requires the token to be passed in");
    for bad in [json!(wrong(&s, &secret)), json!("12345"), json!(1.5), json!([1])] {
        s.post(verify, Some(&t), &json!({ "token": bad })).await.assert_error(401, "Google 2FA failed");
    }
    s.post(verify, Some(&t), &json!({ "token": wrong(&s, &secret) })).await.assert_error(401, "Google 2FA failed");
    for token in [s.code(&secret), wrong(&s, &secret)] {
        let r = s.post(verify, Some(&t), &json!({ "token": token })).await;
        r.assert_error(429, "Too many failed 2FA attempts, try again in 30 seconds");
        assert_eq!(r.header("retry-after"), Some("30"));
    }
    s.clock.advance(10);
    let r = s.post(verify, Some(&t), &json!({ "token": s.code(&secret) })).await;
    assert_eq!(r.header("retry-after"), Some("20"), "{}", r.text);
    s.clock.advance(20);
    let r = s.post(verify, Some(&t), &json!({ "token": s.code(&secret) })).await;
    assert_eq!(r.body["session"]["twoFactor"], json!("passed"), "{}", r.text);

    // Sign-in codes: a 4th to one email within 10 minutes is a 429 with Retry-After.
    let u = session(&s, &pk).await;
    let start = now(&s);
    let email = json!({ "email": "dave@example.com" });
    for _ in 0..3 {
        assert_eq!(s.post("/v1/widget/session/email", Some(&u), &email).await.status, 200);
        s.clock.advance(60);
    }
    let r = s.post("/v1/widget/session/email", Some(&u), &email).await;
    r.assert_error(429, "Too many sign-in codes for this email, try again in 420 seconds");
    assert_eq!(r.header("retry-after"), Some("420"));
    s.clock.set(start + 600);
    assert_eq!(s.post("/v1/widget/session/email", Some(&u), &email).await.status, 200);
    assert!(now(&s) > T0);
    s.stop().await;
}

// ---------------------------------------------------------------------------------------------
// Production and the rate limit

#[tokio::test]
async fn production_has_no_sign_in_and_no_purchases() {
    let sandbox = Server::sandbox().await;
    let (sp, _) = sandbox.partner();
    let r = sandbox.get(&format!("/v1/widget/config?publicKey={}", publishable_key(&sandbox, &sp)), None).await;
    assert_eq!((r.status, &r.body["purchases"]), (200, &json!(true)), "{}", r.text);
    sandbox.stop().await;

    let s = Setup { environment: Environment::Production, ..Setup::default() }.start().await;
    let (partner, key) = s.partner();
    let pk = publishable_key(&s, &partner);
    let r = s.get(&format!("/v1/widget/config?publicKey={pk}"), None).await;
    assert_eq!(
        (r.status, &r.body["purchases"], &r.body["approved"]),
        (200, &json!(false), &json!(false)),
        "{}",
        r.text
    );
    open(&s, &pk, None).await.assert_error(403, "This widget is not approved for production yet.");
    s.service.set_widget_approval("olga", &partner, true).unwrap();
    let r = s.get(&format!("/v1/widget/config?publicKey={pk}"), None).await;
    assert_eq!((&r.body["purchases"], &r.body["approved"]), (&json!(false), &json!(true)));
    s.post("/v1/users/widgetOrigins", Some(&key), &json!({ "widgetOrigins": ["https://shop.example"] })).await;
    for origin in ["http://localhost:5173", "https://evil.example"] {
        open(&s, &pk, Some(origin)).await.assert_error(403, "This site may not embed the widget");
    }
    let r = open(&s, &pk, Some("https://shop.example")).await;
    assert_eq!(r.body["session"], session_json(false, None, false, None, false, "production"), "{}", r.text);
    let t = r.body["token"].as_str().unwrap().to_owned();
    s.post("/v1/widget/session/email", Some(&t), &json!({ "email": "alice@example.com" }))
        .await
        .assert_error(503, "Email sign-in is unavailable on this server");
    // The session first, then the body, then the environment.
    s.post("/v1/widget/session/email", None, &json!({ "email": "alice@example.com" })).await.assert_error(401, EXPIRED);
    s.post("/v1/widget/session/email", Some(&t), &json!({})).await.assert_error(400, "email is required");
    s.post("/v1/widget/session/orders", Some(&t), &order_body("btc", "25", "usd", ADDR))
        .await
        .assert_error(401, "Sign in to continue");
    s.post_raw("/v1/widget/session/kyc", Some(&t), "").await.assert_error(401, "Sign in to continue");
    // A contact signed in by a library caller (who mails the code) cannot buy here either.
    let code = s.service.request_sign_in_code(&t, "alice@example.com").unwrap();
    let r = s
        .post(
            "/v1/widget/session/signin",
            Some(&t),
            &json!({ "email": "alice@example.com", "code": code.code.as_str() }),
        )
        .await;
    assert_eq!(
        r.body["session"],
        session_json(true, Some("alice@example.com"), false, Some("none"), true, "production")
    );
    s.post("/v1/widget/session/orders", Some(&t), &order_body("btc", "25", "usd", ADDR))
        .await
        .assert_error(503, "Purchases are unavailable on this server");
    s.post_raw("/v1/widget/session/kyc", Some(&t), "").await.assert_error(403, "Only available in sandbox");
    let contact = s.get("/v1/widget/contacts?email=alice%40example.com", Some(&key)).await.body["contactId"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = s.get(&format!("/v1/widget/orders?contactId={contact}"), Some(&key)).await;
    assert_eq!((r.status, &r.body["orders"]), (200, &json!([])), "nothing stored");
    s.stop().await;
}

#[tokio::test]
async fn opening_sessions_is_rate_limited_per_address() {
    let s = Server::sandbox().await;
    let (partner, _) = s.partner();
    let pk = publishable_key(&s, &partner);
    let (_, burst) = rampart_server::PUBLIC_RATE;
    let mut opened = 0;
    let mut refused = None;
    for _ in 0..burst + 10 {
        let r = open(&s, &pk, None).await;
        if r.status == 429 {
            refused = Some(r);
            break;
        }
        assert_eq!(r.status, 200, "{}", r.text);
        opened += 1;
    }
    let r = refused.expect("refused after the burst");
    assert!(opened >= burst as usize, "{opened} opened before the limit");
    assert_eq!(r.body, json!({ "message": "Too many requests, try again in 1 seconds", "code": 429 }));
    assert_eq!(r.header("retry-after"), Some("1"));
    // The limit is checked before the body: a bad body is refused the same way.
    let r = s.post_raw("/v1/widget/session", None, "[").await;
    assert_eq!(r.status, 429, "{}", r.text);
    // Session routes other than opening are not limited per address.
    let r = s.get("/v1/widget/session", Some("ws_nope")).await;
    r.assert_error(401, EXPIRED);
    s.stop().await;
}
