//! The partner dashboard's routes (SPEC 11, `dashboard/API.md`): invitation to signed in, the
//! session cookie, CSRF (token and origin), roles refused by the server, the key roll, widget
//! settings with field errors, the team's last owner, webhooks through a member's session, the
//! audit page, and the page's own headers.

mod common;

use common::{Reply, Server, wrong_code};
use rampart_core::totp::{self, Secret};
use rampart_core::vocab::Role;
use rampart_core::{Clock, PartnerId};
use serde_json::{Value, json};

/// The test server's public origin: the default widget root's (https, so the cookie is
/// `__Host-` and `Secure`).
const ORIGIN: &str = "https://widget-sandbox.rampart.network";
const PASSWORD: &str = "violet tractor lamp 42";

/// A browser of the dashboard: its cookie and CSRF token.
struct Browser<'a> {
    server: &'a Server,
    cookie: Option<String>,
    csrf: Option<String>,
}

impl<'a> Browser<'a> {
    fn new(server: &'a Server) -> Self {
        Self { server, cookie: None, csrf: None }
    }

    async fn call(&mut self, method: &str, path: &str, body: Option<Value>) -> Reply {
        self.call_with(method, path, body, Some(ORIGIN), true).await
    }

    async fn call_with(
        &mut self,
        method: &str,
        path: &str,
        body: Option<Value>,
        origin: Option<&str>,
        csrf: bool,
    ) -> Reply {
        let url = self.server.url(path);
        let c = &self.server.client;
        let mut req = match method {
            "GET" => c.get(url),
            "POST" => c.post(url),
            "PUT" => c.put(url),
            "DELETE" => c.delete(url),
            _ => unreachable!(),
        };
        if let Some(o) = origin {
            req = req.header("origin", o);
        }
        if let Some(cookie) = &self.cookie {
            req = req.header("cookie", cookie);
        }
        if csrf && let Some(t) = &self.csrf {
            req = req.header("x-csrf-token", t);
        }
        if let Some(b) = body {
            req = req.header("content-type", "application/json").body(b.to_string());
        }
        let reply = self.server.send(req).await;
        if let Some(set) = reply.header("set-cookie") {
            let pair = set.split(';').next().unwrap().to_owned();
            self.cookie = if pair.ends_with('=') { None } else { Some(pair) };
        }
        if let Some(t) = reply.body["csrfToken"].as_str() {
            self.csrf = Some(t.to_owned());
        }
        assert_eq!(reply.header("cache-control"), Some("no-store"), "{path}: {}", reply.text);
        reply
    }
}

fn invite(server: &Server, partner: &PartnerId, email: &str, role: Role) -> String {
    let issued = server.service.invite_member_as_operator("ops", partner, email, role).unwrap();
    issued.token.expose().to_owned()
}

/// Invited, password set, authenticator set up: the browser signed in, and the member's secret.
async fn member<'a>(server: &'a Server, partner: &PartnerId, email: &str, role: Role) -> (Browser<'a>, Secret) {
    let token = invite(server, partner, email, role);
    let mut b = Browser::new(server);
    let r =
        b.call("POST", "/v1/dashboard/invitation/accept", Some(json!({ "token": token, "password": PASSWORD }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let secret = Secret::from_base32(r.body["twoFactor"]["manualKey"].as_str().unwrap()).unwrap();
    let code = totp::code_at(&secret, server.clock.now());
    let r = b.call("POST", "/v1/dashboard/setup/enable", Some(json!({ "code": code }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    (b, secret)
}

#[tokio::test]
async fn invitation_to_signed_in_and_out() {
    let server = Server::sandbox().await;
    let (partner, _) = server.partner();
    let token = invite(&server, &partner, "dana@example.com", Role::Owner);
    let mut b = Browser::new(&server);
    // The invitation, from this origin only.
    let r = b.call_with("POST", "/v1/dashboard/invitation", Some(json!({ "token": token })), None, false).await;
    assert_eq!((r.status, r.body["message"].as_str()), (403, Some("CSRF check failed.")));
    let r = b.call("POST", "/v1/dashboard/invitation", Some(json!({ "token": token }))).await;
    assert_eq!(r.body["invitation"]["email"], "dana@example.com");
    assert_eq!(
        (r.body["invitation"]["role"].as_str(), r.body["invitation"]["partnerName"].as_str()),
        (Some("owner"), Some("Test partner"))
    );
    let r = b.call("POST", "/v1/dashboard/invitation", Some(json!({ "token": "inv_unknown" }))).await;
    assert_eq!(r.body, json!({ "message": "Invitation not found or already used.", "code": 404 }));
    // A weak password: 400 naming the field, shown next to it.
    let r =
        b.call("POST", "/v1/dashboard/invitation/accept", Some(json!({ "token": token, "password": "short" }))).await;
    assert_eq!(
        r.body,
        json!({ "message": "password must be at least 12 characters", "code": 400, "field": "password" })
    );
    let r =
        b.call("POST", "/v1/dashboard/invitation/accept", Some(json!({ "token": token, "password": PASSWORD }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let set = r.header("set-cookie").unwrap();
    assert!(
        set.starts_with("__Host-rampart_dashboard=ds_") && set.ends_with("; Path=/; HttpOnly; SameSite=Strict; Secure"),
        "{set}"
    );
    assert!(r.body["twoFactor"]["qrCode"].as_str().unwrap().starts_with("data:image/png;base64,"));
    assert_eq!(r.body["twoFactor"]["accountName"], "dana@example.com");
    // Not signed in before the authenticator is set up.
    let r = b.call("GET", "/v1/dashboard/me", None).await;
    assert_eq!(r.body, json!({ "message": "Sign in to continue.", "code": 401 }));
    // A wrong code is 401 naming the code field (the setup itself is `member`'s).
    let r = b.call("POST", "/v1/dashboard/setup/enable", Some(json!({ "code": "000000" }))).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.body["field"], "code");
    // Sign out needs the session's CSRF token.
    let (mut owner, secret) = member(&server, &partner, "owner@example.com", Role::Owner).await;
    let r = owner.call("GET", "/v1/dashboard/me", None).await;
    assert_eq!(r.body["me"]["member"]["email"], "owner@example.com");
    assert_eq!(r.body["me"]["permissions"], json!({ "keys": true, "widget": true, "webhooks": true, "team": true }));
    let r = owner.call_with("POST", "/v1/dashboard/sign-out", None, Some(ORIGIN), false).await;
    assert_eq!(r.status, 403);
    let r = owner.call("POST", "/v1/dashboard/sign-out", None).await;
    assert_eq!(r.status, 200);
    assert!(r.header("set-cookie").unwrap().contains("Max-Age=0"));
    assert!(owner.cookie.is_none());
    // Sign in again: password, then code (a wrong code names the field; throttled like 2FA).
    let mut again = Browser::new(&server);
    let r = again
        .call(
            "POST",
            "/v1/dashboard/sign-in",
            Some(json!({ "email": "owner@example.com", "password": "wrong password!" })),
        )
        .await;
    assert_eq!(r.body, json!({ "message": "Email or password is wrong.", "code": 401 }));
    let r = again
        .call("POST", "/v1/dashboard/sign-in", Some(json!({ "email": "owner@example.com", "password": PASSWORD })))
        .await;
    assert_eq!(r.body["next"], "code");
    let wrong = wrong_code(&secret, server.clock.now());
    let r = again.call("POST", "/v1/dashboard/sign-in/code", Some(json!({ "code": wrong }))).await;
    assert_eq!(r.body["field"], "code");
    server.clock.advance(30);
    let code = totp::code_at(&secret, server.clock.now());
    let r = again.call("POST", "/v1/dashboard/sign-in/code", Some(json!({ "code": code }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["me"]["member"]["role"], "owner");
    // 30 idle minutes end the session.
    server.clock.advance(30 * 60);
    let r = again.call("GET", "/v1/dashboard/me", None).await;
    assert_eq!(r.status, 401);
    server.stop().await;
}

#[tokio::test]
async fn csrf_roles_and_the_key_roll() {
    let server = Server::sandbox().await;
    let (partner, _) = server.partner();
    let (mut owner, _) = member(&server, &partner, "owner@example.com", Role::Owner).await;
    let (mut dev, _) = member(&server, &partner, "dev@example.com", Role::Developer).await;
    let (mut viewer, _) = member(&server, &partner, "viewer@example.com", Role::Viewer).await;
    let roll = || Some(json!({ "expiresIn": "24h" }));
    // CSRF: without the token, with another session's, from another origin.
    for (origin, csrf) in [(Some(ORIGIN), false), (Some("https://evil.example"), true), (None, true)] {
        let r = owner.call_with("POST", "/v1/dashboard/keys/roll", roll(), origin, csrf).await;
        assert_eq!(r.body, json!({ "message": "CSRF check failed.", "code": 403 }), "{origin:?} {csrf}");
    }
    let theirs = dev.csrf.clone();
    let mine = std::mem::replace(&mut owner.csrf, theirs);
    let r = owner.call("POST", "/v1/dashboard/keys/roll", roll()).await;
    assert_eq!(r.status, 403, "another session's token");
    owner.csrf = mine;
    // A viewer is refused by the server, whatever the page shows.
    let r = viewer.call("POST", "/v1/dashboard/keys/roll", roll()).await;
    assert_eq!(r.body, json!({ "message": "Your role cannot do this.", "code": 403 }));
    let r = viewer.call("PUT", "/v1/dashboard/widget", Some(json!({ "widgetText": "Back" }))).await;
    assert_eq!(r.status, 403);
    let r = dev.call("GET", "/v1/dashboard/team", None).await;
    assert_eq!(r.status, 403);
    // A bad choice names the field.
    let r = dev.call("POST", "/v1/dashboard/keys/roll", Some(json!({ "expiresIn": "2h" }))).await;
    assert_eq!(
        r.body,
        json!({ "message": "expiresIn must be one of now, 1h, 24h, 7d", "code": 400, "field": "expiresIn" })
    );
    // The roll: the new key once; afterwards only prefix and last 4.
    let before = viewer.call("GET", "/v1/dashboard/keys", None).await;
    let r = dev.call("POST", "/v1/dashboard/keys/roll", roll()).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let new_key = r.body["secretKey"].as_str().unwrap().to_owned();
    assert!(new_key.starts_with("sk_sandbox_"));
    assert_eq!(r.body["previousKey"]["last4"], before.body["secretKey"]["last4"]);
    assert_eq!(server.service.authenticate(&new_key).unwrap().partner_id, partner);
    let after = viewer.call("GET", "/v1/dashboard/keys", None).await;
    assert_eq!(after.body["secretKey"], json!({ "prefix": "sk_sandbox_", "last4": &new_key[new_key.len() - 4..] }));
    assert!(!after.text.contains(&new_key));
    assert_eq!(after.body["previousKey"]["expiresAt"], rampart_core::recovery::rfc3339(server.clock.now() + 86_400));
    // Widget settings: errors name the field; null clears.
    let r = dev.call("PUT", "/v1/dashboard/widget", Some(json!({ "widgetButtonURL": "javascript:alert(1)" }))).await;
    assert_eq!(r.body["field"], "widgetButtonURL");
    let r = dev
        .call(
            "PUT",
            "/v1/dashboard/widget",
            Some(json!({ "widgetText": "Back to shop", "widgetButtonURL": null, "widgetOrigins": ["https://shop.example"] })),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!((r.body["widgetText"].as_str(), &r.body["widgetButtonURL"]), (Some("Back to shop"), &Value::Null));
    assert_eq!(r.body["widgetOrigins"], json!(["https://shop.example"]));
    assert!(r.body["previewUrl"].as_str().unwrap().starts_with("/widget/?publicKey=pk_sandbox_"));
    // The team: the last owner stays; an invitation's link is shown once.
    let team = owner.call("GET", "/v1/dashboard/team", None).await;
    let owner_id = team.body["members"][0]["id"].as_str().unwrap().to_owned();
    let r = owner.call("DELETE", &format!("/v1/dashboard/team/members/{owner_id}"), None).await;
    assert_eq!(r.body, json!({ "message": "A team needs at least one owner.", "code": 409 }));
    let r = owner.call("POST", "/v1/dashboard/team/invitations", Some(json!({ "email": "x", "role": "viewer" }))).await;
    assert_eq!(r.body["field"], "email");
    let r = owner
        .call("POST", "/v1/dashboard/team/invitations", Some(json!({ "email": "new@example.com", "role": "boss" })))
        .await;
    assert_eq!(r.body, json!({ "message": "role must be owner, developer or viewer", "code": 400, "field": "role" }));
    let r = owner
        .call("POST", "/v1/dashboard/team/invitations", Some(json!({ "email": "new@example.com", "role": "viewer" })))
        .await;
    assert!(
        r.body["link"].as_str().unwrap().starts_with("https://widget-sandbox.rampart.network/dashboard/#invite=inv_")
    );
    // Webhooks through a member's session: a viewer reads, a developer changes.
    let hook = json!({ "url": "https://93.184.216.34/hooks", "events": ["order.completed"] });
    let r = viewer.call("POST", "/v1/dashboard/webhooks", Some(hook.clone())).await;
    assert_eq!(r.status, 403);
    let r = dev.call("POST", "/v1/dashboard/webhooks", Some(hook)).await;
    assert_eq!(r.status, 201, "{}", r.text);
    // The shared routes' refusals name their field for the page, as the dashboard's own do.
    let inside = json!({ "url": "https://127.0.0.1/hooks", "events": ["order.completed"] });
    let r = dev.call("POST", "/v1/dashboard/webhooks", Some(inside)).await;
    assert_eq!(
        r.body,
        json!({ "message": "url resolves to a non-public address: loopback", "code": 400, "field": "url" })
    );
    let r = viewer.call("GET", "/v1/dashboard/webhooks", None).await;
    assert_eq!(r.body["endpoints"].as_array().unwrap().len(), 1);
    // The page's choices: every event an endpoint may receive (the test event comes anyway).
    let choices: Vec<&str> = rampart_core::webhooks::EVENTS.into_iter().filter(|e| *e != "webhook.test").collect();
    assert_eq!((choices.len(), &r.body["events"]), (10, &json!(choices)));
    // The partner API's list is SPEC 10's, endpoints alone.
    let r = server.get("/v1/webhooks", Some(&new_key)).await;
    assert_eq!(r.body.as_object().unwrap().keys().collect::<Vec<_>>(), ["code", "endpoints", "message"]);
    // The audit page: the chain with its verification; members as actors, no key or email.
    let r = viewer.call("GET", "/v1/dashboard/audit?limit=500", None).await;
    assert_eq!(r.body["verification"]["ok"], true);
    let events: Vec<&str> = r.body["events"].as_array().unwrap().iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert!(events.contains(&"partner.key_rolled") && events.contains(&"widget.settings_changed"), "{events:?}");
    assert!(!r.text.contains(&new_key) && !r.text.contains("example.com"));
    let r = viewer.call("GET", "/v1/dashboard/audit?limit=0", None).await;
    assert_eq!(r.body["field"], "limit");
    server.stop().await;
}

#[tokio::test]
async fn orders_csv_contacts_and_overview() {
    use rampart_core::store::{ContactRecord, Effects, OrderRecord, OrderStatus};
    let server = Server::sandbox().await;
    let (partner, _) = server.partner();
    let (mut viewer, _) = member(&server, &partner, "viewer@example.com", Role::Viewer).await;
    let r = viewer.call("GET", "/v1/dashboard/overview", None).await;
    assert_eq!(
        r.body,
        json!({ "message": "Overview retrieved.", "code": 200, "environment": "sandbox", "widgetApproved": true,
                "checklist": { "originRegistered": false, "sandboxOrderPlaced": false, "webhookAnswered": false } })
    );
    // 30 orders over three days, one with cells a spreadsheet would run or split.
    let day = 86_400;
    let start = 1_764_115_200; // 2025-11-26T00:00:00Z
    let contact = rampart_core::ContactId::random();
    let mut ids = Vec::new();
    for i in 0..30u64 {
        let o = OrderRecord {
            id: rampart_core::OrderId::random(),
            partner_id: partner,
            contact_id: contact,
            coin: if i % 2 == 0 { "btc" } else { "eth" }.into(),
            amount: "25".into(),
            currency: "usd".into(),
            address: if i == 7 { "=HYPERLINK(\"http://evil\"),x".into() } else { format!("addr{i}") },
            price: "-1".into(),
            quantity: "0.1".into(),
            status: if i % 3 == 0 { OrderStatus::Completed } else { OrderStatus::Created },
            created_at: start + (i % 3) * day + i,
            updated_at: start + (i % 3) * day + i,
        };
        server.service.store().insert_order(&o, &Effects::default()).unwrap();
        ids.push(o);
    }
    let query = "status=created&coin=btc&from=2025-11-26&to=2025-11-27";
    let want: Vec<String> = {
        let mut w: Vec<&OrderRecord> = ids
            .iter()
            .filter(|o| o.status == OrderStatus::Created && o.coin == "btc" && o.created_at < start + 2 * day)
            .collect();
        w.sort_by_key(|o| std::cmp::Reverse((o.created_at, o.id)));
        w.iter().map(|o| o.id.to_string()).collect()
    };
    assert!(want.len() > 3);
    // The JSON pages, followed to the end.
    let (mut got, mut cursor) = (Vec::new(), String::new());
    loop {
        let r = viewer.call("GET", &format!("/v1/dashboard/orders?{query}&limit=3&cursor={cursor}"), None).await;
        assert_eq!(r.status, 200, "{}", r.text);
        got.extend(r.body["orders"].as_array().unwrap().iter().map(|o| o["orderId"].as_str().unwrap().to_owned()));
        match r.body["next"].as_str() {
            Some(n) => cursor = n.to_owned(),
            None => break,
        }
    }
    assert_eq!(got, want);
    // The CSV: a header row and exactly the same rows, RFC 4180, formulas defused.
    let csv = viewer.call("GET", &format!("/v1/dashboard/orders.csv?{query}"), None).await;
    assert_eq!(csv.status, 200);
    assert_eq!(csv.header("content-type"), Some("text/csv; charset=utf-8; header=present"));
    assert_eq!(csv.header("content-disposition"), Some("attachment; filename=\"orders.csv\""));
    let mut reader = csv::Reader::from_reader(csv.text.as_bytes());
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "orderId",
            "contactId",
            "coin",
            "amount",
            "currency",
            "address",
            "price",
            "quantity",
            "status",
            "createdAt",
            "updatedAt"
        ]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.iter().map(|r| r[0].to_owned()).collect::<Vec<_>>(), want);
    assert!(rows.iter().all(|r| &r[6] == "'-1" && &r[8] == "created"), "a leading - is escaped too");
    assert!(csv.text.contains("\r\n"), "CRLF line ends");
    let all = viewer.call("GET", "/v1/dashboard/orders.csv", None).await;
    let hostile = csv::Reader::from_reader(all.text.as_bytes())
        .records()
        .map(Result::unwrap)
        .find(|r| r[5].contains("HYPERLINK"))
        .unwrap();
    assert_eq!(&hostile[5], "'=HYPERLINK(\"http://evil\"),x", "quoted, then read back whole");
    assert_eq!(csv::Reader::from_reader(all.text.as_bytes()).records().count(), 30);
    // Bad filters name the parameter, on the list and on the export.
    for (q, field) in [
        ("from=2025-13-01", "from"),
        ("to=2025-02-30", "to"),
        ("status=paid", "status"),
        ("limit=0", "limit"),
        ("contactId=x", "contactId"),
        ("from=2025-11-27&to=2025-11-26", "to"),
    ] {
        let r = viewer.call("GET", &format!("/v1/dashboard/orders?{q}"), None).await;
        assert_eq!((r.status, r.body["field"].as_str()), (400, Some(field)), "{q}: {}", r.text);
    }
    let r = viewer.call("GET", "/v1/dashboard/orders.csv?coin=%3Dx", None).await;
    assert_eq!(r.body["field"], "coin");
    // Contacts: counts and a list.
    for (i, c) in [rampart_core::ContactId::random(), rampart_core::ContactId::random()].iter().enumerate() {
        let rec =
            ContactRecord { kyc_passed: true, failures: if i == 0 { 100 } else { 0 }, ..ContactRecord::default() };
        server
            .service
            .store()
            .update_contact(&partner, c, &mut |r, _| {
                *r = rec.clone();
                true
            })
            .unwrap();
    }
    let r = viewer.call("GET", "/v1/dashboard/contacts", None).await;
    assert_eq!(
        r.body["counts"],
        json!({ "enabled": 0, "notEnabled": 2, "locked": 1, "kycWithout2fa": 2, "lowRecoveryCodes": 0 })
    );
    let r = viewer.call("GET", "/v1/dashboard/contacts/list?kind=locked", None).await;
    assert_eq!(r.body["contacts"].as_array().unwrap().len(), 1);
    assert_eq!(r.body["contacts"][0]["twoFactor"], "locked");
    let r = viewer.call("GET", "/v1/dashboard/contacts/list?kind=everyone", None).await;
    assert_eq!(r.body["field"], "kind");
    let r = viewer.call("GET", "/v1/dashboard/overview", None).await;
    assert_eq!(r.body["checklist"]["sandboxOrderPlaced"], true);
    // Without a session, the export is a JSON 401 like every route.
    let mut stranger = Browser::new(&server);
    let r = stranger.call("GET", "/v1/dashboard/orders.csv", None).await;
    assert_eq!(r.status, 401);
    server.stop().await;
}

/// The text between `open` and the next `close` in `html`, exactly as served.
fn element<'a>(html: &'a str, open: &str, close: &str) -> &'a str {
    let start = html.find(open).expect("the element") + open.len();
    let end = start + html[start..].find(close).expect("its end");
    &html[start..end]
}

#[tokio::test]
async fn the_page_and_its_headers() {
    use base64::Engine as _;
    use sha2::Digest as _;
    let server = Server::sandbox().await;
    let r = server.get("/dashboard/", None).await;
    assert_eq!(r.status, 200);
    // The policy allows exactly the page's one script and one style, by their hashes.
    let hash = |text: &str| {
        format!("'sha384-{}'", base64::engine::general_purpose::STANDARD.encode(sha2::Sha384::digest(text)))
    };
    assert_eq!((r.text.matches("<script").count(), r.text.matches("<style").count()), (1, 1));
    let (script, style) = (element(&r.text, "<script>", "</script>"), element(&r.text, "<style>", "</style>"));
    assert!(script.len() > 10_000 && style.len() > 1_000, "the app's script and style are in the page");
    assert_eq!(
        r.header("content-security-policy").map(str::to_owned),
        Some(format!(
            "default-src 'none'; script-src {}; style-src {}; img-src 'self' data:; connect-src 'self'; \
             frame-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
            hash(script),
            hash(style)
        ))
    );
    assert_eq!((r.header("x-frame-options"), r.header("referrer-policy")), (Some("DENY"), Some("no-referrer")));
    let committed = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../dashboard/dist/index.html")).unwrap();
    assert_eq!(r.text.as_bytes(), &committed[..]);
    assert_eq!(server.get("/dashboard/index.html", None).await.text, r.text);
    for gone in ["/dashboard/app.js", "/dashboard/app.css"] {
        assert_eq!(server.get(gone, None).await.status, 404, "{gone}: the page holds it");
    }
    let r = server.get("/dashboard", None).await;
    assert_eq!(r.status, 200, "redirected to /dashboard/");
    server.stop().await;
}
