//! Partners, keys, bearer authentication (secret keys and legacy JWTs), widget settings, and
//! fail-closed storage errors.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{Backend, Fixture, T0, contact};
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use rampart_core::store::FaultyStore;
use rampart_core::{AuthMethod, Environment, ErrorKind, KeyRing, ManualClock, PartnerId, Service};
use serde_json::json;

const JWT_SECRET: &[u8] = b"0123456789abcdef0123456789abcdef-legacy";

fn service(env: Environment) -> (Service, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = rampart_core::SqliteStore::open(dir.path().join("p.db")).unwrap();
    let svc = Service::builder(store)
        .master_keys(KeyRing::generate().unwrap())
        .environment(env)
        .jwt_secret(JWT_SECRET)
        .build()
        .unwrap();
    (svc, dir)
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

fn jwt(alg: Algorithm, key: &[u8], claims: serde_json::Value) -> String {
    encode(&Header::new(alg), &claims, &EncodingKey::from_secret(key)).unwrap()
}

#[test]
fn keys_have_the_documented_shape() {
    let (svc, _d) = service(Environment::Sandbox);
    let a = svc.create_partner("Acme", Environment::Sandbox).unwrap();
    let b = svc.create_partner("Acme", Environment::Production).unwrap();
    let sk = a.secret_key.expose();
    assert!(sk.starts_with("sk_sandbox_") && sk.len() >= "sk_sandbox_".len() + 22, "{sk}");
    assert!(a.publishable_key.starts_with("pk_sandbox_"));
    assert!(b.secret_key.expose().starts_with("sk_production_"));
    assert!(b.publishable_key.starts_with("pk_production_"));
    assert_ne!(a.secret_key, b.secret_key);
    assert!(!format!("{a:?}").contains(sk), "Debug must not print the secret key");
    let p = svc.partner(&a.partner_id).unwrap();
    assert_eq!(
        (p.name.as_str(), p.environment, p.publishable_key.as_str()),
        ("Acme", Environment::Sandbox, a.publishable_key.as_str())
    );
    for bad in ["", "   ", "nul\0"] {
        assert_eq!(svc.create_partner(bad, Environment::Sandbox).unwrap_err().kind(), ErrorKind::InvalidInput);
    }
    assert_eq!(svc.partner_count().unwrap(), 2);
}

#[test]
fn secret_keys_authenticate_in_their_environment_only() {
    let (svc, _d) = service(Environment::Sandbox);
    let a = svc.create_partner("Acme", Environment::Sandbox).unwrap();
    let prod = svc.create_partner("Acme live", Environment::Production).unwrap();
    let got = svc.authenticate(a.secret_key.expose()).unwrap();
    assert_eq!((got.partner_id, got.method), (a.partner_id, AuthMethod::SecretKey));
    let unauthorized = |bearer: &str| {
        let e = svc.authenticate(bearer).unwrap_err();
        assert_eq!((e.kind(), e.code(), e.message()), (ErrorKind::Unauthorized, 401, "Unauthorized"), "{bearer}");
    };
    unauthorized(prod.secret_key.expose());
    unauthorized(&a.publishable_key);
    unauthorized(&a.partner_id.to_string());
    unauthorized("");
    unauthorized("sk_sandbox_");
    unauthorized(&format!("{}x", a.secret_key.expose()));
    unauthorized(&a.secret_key.expose().replace("sk_sandbox_", "sk_production_"));
}

#[test]
fn rotation_replaces_both_keys() {
    let (svc, _d) = service(Environment::Sandbox);
    let a = svc.create_partner("Acme", Environment::Sandbox).unwrap();
    let b = svc.rotate_keys("ops", &a.partner_id).unwrap();
    assert_eq!(b.partner_id, a.partner_id);
    assert_ne!(b.publishable_key, a.publishable_key);
    assert_eq!(svc.authenticate(a.secret_key.expose()).unwrap_err().kind(), ErrorKind::Unauthorized);
    assert_eq!(svc.authenticate(b.secret_key.expose()).unwrap().partner_id, a.partner_id);
    assert_eq!(svc.partner(&a.partner_id).unwrap().publishable_key, b.publishable_key);
    assert_eq!(svc.rotate_keys("ops", &PartnerId::random()).unwrap_err().kind(), ErrorKind::PartnerNotFound);
    assert_eq!(
        common::trail(&svc, &a.partner_id).last().unwrap(),
        &("operator:ops".to_owned(), "partner.keys_rotated".to_owned())
    );
}

/// Two services on one database file, as two processes would be; the first remembers keys.
fn cached_pair(ttl: Duration) -> (Service, Service, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let open = |ttl| {
        let store = rampart_core::SqliteStore::open(dir.path().join("p.db")).unwrap();
        Service::builder(store).master_keys(KeyRing::new(1, &[7; 32])).auth_cache_ttl(ttl).build().unwrap()
    };
    (open(ttl), open(Duration::ZERO), dir)
}

#[test]
fn remembered_keys_are_forgotten_on_rotation_here_and_after_the_ttl_elsewhere() {
    let (cached, other, _d) = cached_pair(Duration::from_millis(300));
    let creds = cached.create_partner("Acme", Environment::Sandbox).unwrap();
    let old = creds.secret_key.expose().to_owned();
    assert_eq!(cached.authenticate(&old).unwrap().partner_id, creds.partner_id);
    // Rotated by this service: the old key is refused at once.
    let rotated = cached.rotate_keys("ops", &creds.partner_id).unwrap();
    assert_eq!(cached.authenticate(&old).unwrap_err().kind(), ErrorKind::Unauthorized);
    let current = rotated.secret_key.expose().to_owned();
    assert_eq!(cached.authenticate(&current).unwrap().partner_id, creds.partner_id);
    // Rotated by another process: remembered for at most the TTL, then refused.
    other.rotate_keys("ops", &creds.partner_id).unwrap();
    assert_eq!(other.authenticate(&current).unwrap_err().kind(), ErrorKind::Unauthorized);
    assert_eq!(cached.authenticate(&current).unwrap().partner_id, creds.partner_id);
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(cached.authenticate(&current).unwrap_err().kind(), ErrorKind::Unauthorized);
    // Wrong keys are never remembered, and a remembered key keeps its environment's rules.
    assert_eq!(cached.authenticate("sk_production_x").unwrap_err().kind(), ErrorKind::Unauthorized);
}

#[test]
fn without_a_cache_every_call_asks_the_store() {
    let (uncached, other, _d) = cached_pair(Duration::ZERO);
    let creds = uncached.create_partner("Acme", Environment::Sandbox).unwrap();
    let key = creds.secret_key.expose().to_owned();
    assert!(uncached.authenticate(&key).is_ok());
    other.rotate_keys("ops", &creds.partner_id).unwrap();
    assert_eq!(uncached.authenticate(&key).unwrap_err().kind(), ErrorKind::Unauthorized);
}

#[test]
fn legacy_jwt() {
    let (svc, _d) = service(Environment::Sandbox);
    let a = svc.create_partner("Acme", Environment::Sandbox).unwrap();
    let prod = svc.create_partner("Live", Environment::Production).unwrap();
    let sub = a.partner_id.to_string();
    let ok = |t: &str| svc.authenticate(t).unwrap();
    let refused =
        |t: &str, why: &str| assert_eq!(svc.authenticate(t).unwrap_err().kind(), ErrorKind::Unauthorized, "{why}");

    let good = ok(&jwt(Algorithm::HS256, JWT_SECRET, json!({"sub": sub})));
    assert_eq!((good.partner_id, good.method), (a.partner_id, AuthMethod::LegacyJwt));
    ok(&jwt(Algorithm::HS256, JWT_SECRET, json!({"sub": sub, "exp": now() + 60, "nbf": now() - 60})));

    refused(&jwt(Algorithm::HS256, b"another secret that is long enough!!", json!({"sub": sub})), "bad signature");
    refused(&jwt(Algorithm::HS256, JWT_SECRET, json!({"sub": sub, "exp": now() - 10})), "expired");
    refused(&jwt(Algorithm::HS256, JWT_SECRET, json!({"sub": sub, "nbf": now() + 600})), "not yet valid");
    refused(&jwt(Algorithm::HS512, JWT_SECRET, json!({"sub": sub})), "HS512");
    refused(&jwt(Algorithm::HS384, JWT_SECRET, json!({"sub": sub})), "HS384");
    refused(&jwt(Algorithm::HS256, JWT_SECRET, json!({"exp": now() + 60})), "no sub");
    refused(&jwt(Algorithm::HS256, JWT_SECRET, json!({"sub": "not-a-uuid"})), "sub not a UUID");
    refused(&jwt(Algorithm::HS256, JWT_SECRET, json!({"sub": PartnerId::random().to_string()})), "unknown partner");
    refused(&jwt(Algorithm::HS256, JWT_SECRET, json!({"sub": prod.partner_id.to_string()})), "other environment");
    // alg: none, built by hand since no library will sign it.
    let b64 = |v: serde_json::Value| {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
    };
    let none = format!("{}.{}.", b64(json!({"alg": "none", "typ": "JWT"})), b64(json!({"sub": sub})));
    refused(&none, "alg none");
    let none_signed = format!("{none}c2lnbmF0dXJl");
    refused(&none_signed, "alg none with a signature");
    refused("a.b.c", "garbage");

    // Without a JWT secret the legacy path is off.
    let plain =
        Service::builder(rampart_core::MemoryStore::new()).master_keys(KeyRing::generate().unwrap()).build().unwrap();
    let p = plain.create_partner("Acme", Environment::Sandbox).unwrap();
    let t = jwt(Algorithm::HS256, JWT_SECRET, json!({"sub": p.partner_id.to_string()}));
    assert_eq!(plain.authenticate(&t).unwrap_err().kind(), ErrorKind::Unauthorized);
}

#[test]
fn configuration_is_checked() {
    let build = |f: &dyn Fn(rampart_core::ServiceBuilder) -> rampart_core::ServiceBuilder| {
        f(Service::builder(rampart_core::MemoryStore::new()).master_keys(KeyRing::generate().unwrap())).build()
    };
    assert!(build(&|b| b).is_ok());
    for (why, f) in [
        ("short JWT secret", &(|b: rampart_core::ServiceBuilder| b.jwt_secret(b"short".to_vec())) as &dyn Fn(_) -> _),
        ("empty service name", &|b: rampart_core::ServiceBuilder| b.service_name("")),
        ("colon in service name", &|b: rampart_core::ServiceBuilder| b.service_name("a:b")),
        ("auth cache over 60 s", &|b: rampart_core::ServiceBuilder| b.auth_cache_ttl(Duration::from_secs(61))),
    ] {
        assert_eq!(build(f).unwrap_err().kind(), ErrorKind::Config, "{why}");
    }
    // An out-of-range number is the argument's own 400, as in every surface.
    let e = build(&|b| b.window(3)).unwrap_err();
    assert_eq!((e.kind(), e.code(), e.message()), (ErrorKind::InvalidInput, 400, "window must be 0, 1 or 2"));
    let e =
        Service::builder(rampart_core::MemoryStore::new()).environment(Environment::Production).build().unwrap_err();
    assert_eq!((e.kind(), e.message()), (ErrorKind::Config, "production refuses to start without a master key"));
    let svc = build(&|b| b.service_name("Acme").jwt_secret(JWT_SECRET.to_vec())).unwrap();
    let dbg = format!("{svc:?}");
    assert!(dbg.contains("<redacted>") && !dbg.contains("legacy"), "{dbg}");
}

#[test]
fn widget_settings() {
    let f = Fixture::new(Backend::Sqlite);
    assert_eq!(f.service.widget_text(&f.partner).unwrap(), None);
    assert_eq!(f.service.widget_button_url(&f.partner).unwrap(), None);
    assert_eq!(f.service.set_widget_text(&f.partner, "Back to Acme").unwrap(), "Back to Acme");
    assert_eq!(
        f.service.set_widget_button_url(&f.partner, "https://acme.example/done").unwrap(),
        "https://acme.example/done"
    );
    assert_eq!(f.service.widget_text(&f.partner).unwrap().as_deref(), Some("Back to Acme"));
    assert_eq!(f.service.widget_button_url(&f.partner).unwrap().as_deref(), Some("https://acme.example/done"));
    let e = f.service.set_widget_text(&f.partner, "").unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::WidgetTextInvalid, 400));
    assert!(e.message().starts_with("widgetText "));
    let e = f.service.set_widget_button_url(&f.partner, "https://u:p@acme.example/").unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::WidgetButtonUrlInvalid, 400));
    assert!(e.message().starts_with("widgetButtonURL "));
    assert_eq!(f.service.widget_text(&f.partner).unwrap().as_deref(), Some("Back to Acme"), "nothing lost");
    let other = f.service.create_partner("Other", Environment::Sandbox).unwrap().partner_id;
    assert_eq!(f.service.widget_text(&other).unwrap(), None);
    assert_eq!(f.service.set_widget_text(&PartnerId::random(), "x").unwrap_err().kind(), ErrorKind::PartnerNotFound);
}

#[test]
fn storage_failures_fail_closed() {
    let store = Arc::new(FaultyStore::new(rampart_core::MemoryStore::new()));
    let clock = Arc::new(ManualClock::new(T0));
    let svc = Service::builder_shared(store.clone())
        .master_keys(KeyRing::new(1, &[42; 32]))
        .clock(clock.clone())
        .build()
        .unwrap();
    let p = svc.create_partner("Acme", Environment::Sandbox).unwrap().partner_id;
    let (enabled, pending) = (contact(), contact());
    let s = rampart_core::totp::Secret::from_base32(&svc.create_2fa(&p, &enabled, None).unwrap().manual).unwrap();
    let code = |steps: u64| rampart_core::totp::code_at(&s, T0 + steps * 30);
    svc.enable_2fa(&p, &enabled, code(0).as_str()).unwrap();
    let sp = rampart_core::totp::Secret::from_base32(&svc.create_2fa(&p, &pending, None).unwrap().manual).unwrap();
    let pending_code = rampart_core::totp::code_at(&sp, T0);

    let check = |r: Result<(), rampart_core::Error>, kind: ErrorKind, msg: &str| {
        let e = r.unwrap_err();
        assert_eq!((e.kind(), e.code(), e.message()), (kind, 500, msg));
        assert!(e.cause().is_some(), "the cause is kept for the log");
        assert!(!e.message().contains("injected"));
    };
    for fail in [FaultyStore::<rampart_core::MemoryStore>::fail_reads, FaultyStore::fail_writes] {
        fail(&store, true);
        check(svc.create_2fa(&p, &contact(), None).map(drop), ErrorKind::CreateFailed, "Error enabling 2FA");
        check(
            svc.enable_2fa(&p, &pending, pending_code.as_str()).map(drop),
            ErrorKind::EnableFailed,
            "Error enabling 2FA",
        );
        check(svc.disable_2fa(&p, &enabled, code(1).as_str()), ErrorKind::DisableFailed, "Error disabling 2FA");
        check(svc.verify_2fa(&p, &enabled, code(1).as_str()).map(drop), ErrorKind::VerifyFailed, "Error verifying 2FA");
        check(svc.verify_2fa(&p, &enabled, "000000").map(drop), ErrorKind::VerifyFailed, "Error verifying 2FA");
        fail(&store, false);
    }
    store.fail_reads(true);
    check(svc.status_2fa(&p, &enabled).map(drop), ErrorKind::StatusFailed, "Error getting 2FA");
    check(svc.authenticate("sk_sandbox_x").map(drop), ErrorKind::Internal, "Internal server error");
    check(svc.ping(), ErrorKind::Internal, "Internal server error");
    store.fail_reads(false);
    // Re-sealing under a newer key fails closed too, and leaves every secret as it was.
    let mut rotated_keys = KeyRing::new(1, &[42; 32]);
    rotated_keys.add(2, &[43; 32]);
    let rotated =
        Service::builder_shared(store.clone()).master_keys(rotated_keys).clock(clock.clone()).build().unwrap();
    for fail in [FaultyStore::<rampart_core::MemoryStore>::fail_reads, FaultyStore::fail_writes] {
        fail(&store, true);
        check(rotated.rewrap_secrets("ops").map(drop), ErrorKind::Internal, "Internal server error");
        fail(&store, false);
    }
    let before = svc.store().contact(&p, &enabled).unwrap();
    assert!(
        before.as_ref().and_then(|r| r.secret.as_deref()).is_some_and(|s| KeyRing::new(1, &[42; 32]).is_current(s))
    );
    // Nothing was lost or half-applied: the states are as before the failures.
    assert!(svc.status_2fa(&p, &enabled).unwrap());
    assert!(!svc.status_2fa(&p, &pending).unwrap());
    svc.enable_2fa(&p, &pending, pending_code.as_str()).unwrap();
    assert!(svc.verify_2fa(&p, &enabled, code(1).as_str()).unwrap().is_accepted());
}

#[test]
fn an_unknown_partner_is_404_and_never_an_orphan_contact() {
    for b in [Backend::Memory, Backend::Sqlite] {
        let f = Fixture::new(b);
        let (ghost, c) = (rampart_core::PartnerId::random(), common::contact());
        let not_found = |e: rampart_core::Error| (e.kind(), e.code(), e.message().to_owned());
        let want = (ErrorKind::PartnerNotFound, 404, "Partner not found".to_owned());
        assert_eq!(not_found(f.service.create_2fa(&ghost, &c, None).unwrap_err()), want);
        assert_eq!(f.service.store().contact(&ghost, &c).unwrap(), None, "no orphan contact");
        assert_eq!(not_found(f.service.status_2fa(&ghost, &c).unwrap_err()), want);
        assert_eq!(not_found(f.service.enable_2fa(&ghost, &c, "123456").unwrap_err()), want);
        assert_eq!(not_found(f.service.disable_2fa(&ghost, &c, "123456").unwrap_err()), want);
        assert_eq!(not_found(f.service.verify_2fa(&ghost, &c, "123456").unwrap_err()), want);
        // A known partner's unknown contact is simply disabled.
        assert!(!f.service.status_2fa(&f.partner, &c).unwrap());
        assert_eq!(f.service.verify_2fa(&f.partner, &c, "123456").unwrap_err().kind(), ErrorKind::NotEnabled);
    }
}

#[test]
fn widget_origins_and_approval() {
    for b in [Backend::Memory, Backend::Sqlite] {
        let f = Fixture::new(b);
        assert_eq!(f.service.widget_origins(&f.partner).unwrap(), Vec::<String>::new());
        let stored = f.service.set_widget_origins(&f.partner, &["HTTPS://Shop.Example:443", "http://localhost:3000"]);
        assert_eq!(stored.unwrap(), ["https://shop.example", "http://localhost:3000"]);
        assert_eq!(f.service.widget_origins(&f.partner).unwrap(), ["https://shop.example", "http://localhost:3000"]);
        let e = f.service.set_widget_origins(&f.partner, &["https://a.example/path"]).unwrap_err();
        assert_eq!((e.kind(), e.code()), (ErrorKind::InvalidInput, 400));
        assert!(e.message().starts_with("widgetOrigins[0] must be an origin"), "{}", e.message());
        assert_eq!(f.service.widget_origins(&f.partner).unwrap().len(), 2, "a refused list changes nothing");
        let ghost = PartnerId::random();
        assert_eq!(f.service.set_widget_origins::<&str>(&ghost, &[]).unwrap_err().kind(), ErrorKind::PartnerNotFound);

        // Production: https only, the index named; approval is an audited operator action.
        let production = Service::builder_shared(f.store.store.clone())
            .master_keys(KeyRing::generate().unwrap())
            .environment(Environment::Production)
            .build()
            .unwrap();
        let creds = production.create_partner("Live shop", Environment::Production).unwrap();
        let e =
            production.set_widget_origins(&creds.partner_id, &["https://a.example", "http://b.example"]).unwrap_err();
        assert_eq!(e.message(), "widgetOrigins[1] must be https in production");
        assert!(!production.partner(&creds.partner_id).unwrap().widget_approved);
        production.set_widget_approval("olga", &creds.partner_id, true).unwrap();
        assert!(production.partner(&creds.partner_id).unwrap().widget_approved);
        production.set_widget_approval("olga", &creds.partner_id, false).unwrap();
        let events: Vec<String> = common::trail(&production, &creds.partner_id).into_iter().map(|(_, e)| e).collect();
        assert_eq!(events[events.len() - 2..], ["widget.approved", "widget.unapproved"]);
        assert_eq!(
            production.set_widget_approval("olga", &ghost, true).unwrap_err().kind(),
            ErrorKind::PartnerNotFound
        );

        // A publishable key names its partner, in this service's environment only.
        let found = production.partner_by_publishable_key(&creds.publishable_key).unwrap().unwrap();
        assert_eq!(found.id, creds.partner_id);
        assert_eq!(f.service.partner_by_publishable_key(&creds.publishable_key).unwrap(), None, "other environment");
        assert_eq!(production.partner_by_publishable_key("pk_production_nope").unwrap(), None);
        assert_eq!(production.partner_by_publishable_key(creds.secret_key.expose()).unwrap(), None);
    }
}
