//! The widget's purchase flow (SPEC 6.3, DESIGN "Widget purchase flow") at the service level,
//! run against every store: sessions, email sign-in, the 2FA step, orders and their pages, and
//! failing closed. Time moves only through the fixture's `ManualClock`; TOTP codes come from
//! totp-rs, an implementation independent of the core's.

#[macro_use]
mod common;

use std::sync::{Arc, Mutex};

use common::{Backend, Fixture, TestStore};
use rampart_core::checkout::{SESSION_IDLE_SECS, SIGN_IN_CODE_TTL_SECS};
use rampart_core::ids::OrderId;
use rampart_core::lifecycle;
use rampart_core::store::{
    AttemptRecord, AuditHead, AuditRow, ClaimedDelivery, ContactCounts, ContactList, ContactRecord,
    DashboardSessionRecord, DeliveryNext, DeliveryRecord, Effects, FaultyStore, InvitationRecord, MemberRecord,
    OrderFilter, OrderRecord, OrderStatus, PartnerRecord, SessionRecord, SignInRecord, Store, StoreError, TeamRecord,
    WebhookEndpointRecord,
};
use rampart_core::widget::WidgetConfig;
use rampart_core::{
    Config, ContactId, Environment, Error, ErrorKind, KeyRing, ManualClock, MemoryStore, OrderRequest, PartnerId,
    Service, SessionState, SqliteStore, TwoFactorStep,
};

conformance!(
    an_order_queues_its_webhooks_in_its_own_transactions,
    session_tokens_are_random_and_46_characters,
    session_needs_a_known_key_and_an_approved_production_widget,
    session_origins,
    session_dies_after_30_minutes_idle,
    session_garbage_and_closed_tokens_are_expired,
    session_and_code_lifetimes_are_settings,
    session_token_is_never_stored,
    sign_in_with_the_emailed_code,
    sign_in_one_contact_per_partner_and_email,
    sign_in_wrong_codes_and_the_fifth_kills,
    sign_in_code_expires_and_is_single_use,
    sign_in_code_works_only_in_its_session,
    sign_in_new_code_replaces_the_old,
    sign_in_three_codes_per_email_per_ten_minutes,
    sign_in_same_answers_for_known_and_unknown_emails,
    sign_in_malformed_email_and_no_code,
    session_calls_need_a_sign_in,
    two_factor_fresh_contact_and_sandbox_kyc,
    two_factor_kyc_is_sandbox_only,
    two_factor_waiver_lifts_the_setup,
    two_factor_setup_enable_then_verify,
    two_factor_verify_throttles_and_locks,
    orders_need_a_sign_in_and_the_2fa_step,
    orders_bad_inputs_name_the_path,
    orders_complete_in_sandbox_at_the_simulated_price,
    orders_are_unavailable_in_production,
    orders_paging,
    fail_closed_on_faulty_store,
    fail_closed_on_a_single_failing_call,
);

// ---------------------------------------------------------------------------------------------
// Helpers

const ADDR: &str = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq";
const EXPIRED: (ErrorKind, u16, &str) = (ErrorKind::SessionExpired, 401, "Widget session expired, sign in again");
const CODE_FAILED: (ErrorKind, u16, &str) = (ErrorKind::SignInCodeFailed, 401, "The sign-in code is wrong");
const CODE_EXPIRED: (ErrorKind, u16, &str) =
    (ErrorKind::SignInCodeExpired, 401, "The sign-in code has expired or was tried too often, ask for a new one");
const SIGN_IN_REQUIRED: (ErrorKind, u16, &str) = (ErrorKind::SignInRequired, 401, "Sign in to continue");
const INTERNAL: (ErrorKind, u16, &str) = (ErrorKind::Internal, 500, "Internal server error");
const BAD_EMAIL: &str = "email must be an email address such as name@example.com";

#[track_caller]
fn assert_err<T: std::fmt::Debug>(r: Result<T, Error>, (kind, code, message): (ErrorKind, u16, &str)) {
    let e = r.expect_err("expected an error");
    assert_eq!((e.kind(), e.code(), e.message()), (kind, code, message));
}

#[track_caller]
fn bad_input<T: std::fmt::Debug>(r: Result<T, Error>, message: &str) {
    assert_err(r, (ErrorKind::InvalidInput, 400, message));
}

fn answer<T>(r: Result<T, Error>) -> Result<T, (ErrorKind, u16, String, Option<u64>)> {
    r.map_err(|e| (e.kind(), e.code(), e.message().to_owned(), e.retry_after()))
}

fn publishable_key(f: &Fixture, partner: &PartnerId) -> String {
    f.service.partner(partner).unwrap().publishable_key
}

/// A session of the fixture's partner, opened at the top level.
fn open(f: &Fixture) -> String {
    open_for(f, &f.partner)
}

fn open_for(f: &Fixture, partner: &PartnerId) -> String {
    let (token, _) = f.service.open_session(&publishable_key(f, partner), None).unwrap();
    token.as_str().to_owned()
}

/// Ask for a code and sign in with it.
fn sign_in(f: &Fixture, token: &str, email: &str) -> SessionState {
    let code = f.service.request_sign_in_code(token, email).unwrap();
    f.service.sign_in(token, email, &code.code).unwrap()
}

/// A new session of the fixture's partner, signed in as `email`.
fn signed_in(f: &Fixture, email: &str) -> (String, ContactId) {
    let token = open(f);
    let state = sign_in(f, &token, email);
    (token, state.contact_id.unwrap())
}

fn order_request(coin: &str, amount: &str, currency: &str, address: &str) -> OrderRequest {
    OrderRequest { coin: coin.into(), amount: amount.into(), currency: currency.into(), address: address.into() }
}

fn btc(amount: &str) -> OrderRequest {
    order_request("btc", amount, "usd", ADDR)
}

fn place(f: &Fixture, token: &str, request: &OrderRequest) -> Result<OrderRecord, Error> {
    f.service.place_order(token, request, &WidgetConfig::default())
}

/// An independent TOTP (totp-rs) over the `manual` key the service handed out.
fn peer(manual: &str) -> totp_rs::TOTP {
    let raw = totp_rs::Secret::Encoded(manual.to_owned()).to_bytes().unwrap();
    totp_rs::TOTP::new_unchecked(totp_rs::Algorithm::SHA1, 6, 1, 30, raw)
}

fn code_now(f: &Fixture, totp: &totp_rs::TOTP) -> String {
    totp.generate(f.now())
}

/// A code none of the window's steps (two either side) gives.
fn wrong_code(f: &Fixture, totp: &totp_rs::TOTP) -> String {
    let window: Vec<String> = (-2i64..=2).map(|s| totp.generate(f.now().checked_add_signed(s * 30).unwrap())).collect();
    (0..1_000_000).map(|v| format!("{v:06}")).find(|c| !window.contains(c)).unwrap()
}

/// Move the clock `secs` forward, touching the session every 20 minutes so it stays alive.
fn wait(f: &Fixture, token: &str, mut secs: u64) {
    while secs > 0 {
        let step = secs.min(1200);
        f.clock.advance(step);
        secs -= step;
        f.service.session_state(token).unwrap();
    }
}

/// A production service (and its production partner, approved unless told otherwise) on `b`.
fn production(b: Backend) -> (Fixture, PartnerId) {
    let f = Fixture::with_config(b, Config { environment: Environment::Production, ..Config::default() });
    let p = f.service.create_partner("Acme live", Environment::Production).unwrap().partner_id;
    (f, p)
}

// ---------------------------------------------------------------------------------------------
// Sessions

fn session_tokens_are_random_and_46_characters(b: Backend) {
    let f = Fixture::new(b);
    let pk = publishable_key(&f, &f.partner);
    let (t1, s1) = f.service.open_session(&pk, None).unwrap();
    let (t2, _) = f.service.open_session(&pk, Some("")).unwrap();
    for t in [&t1, &t2] {
        let text = t.as_str();
        assert_eq!(text.len(), 46, "{text}");
        assert!(text.starts_with("ws_"));
        assert!(text[3..].bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'), "base64url");
        assert!(!format!("{t:?}").contains(&text[3..]), "Debug redacts the token");
    }
    assert_ne!(t1, t2);
    assert_eq!(
        s1,
        SessionState {
            partner_id: f.partner,
            environment: Environment::Sandbox,
            origin: String::new(),
            email: None,
            contact_id: None,
            kyc_passed: false,
            two_factor: None,
            may_purchase: false,
            purchase_hold_until: None,
            recovery_codes_remaining: 0,
        }
    );
    assert!(!s1.signed_in());
    assert_eq!(f.service.session_state(t1.as_str()).unwrap(), s1);
}

fn session_needs_a_known_key_and_an_approved_production_widget(b: Backend) {
    let f = Fixture::new(b);
    let not_found = (ErrorKind::PartnerNotFound, 404, "Partner not found");
    assert_err(f.service.open_session("pk_sandbox_nope", None), not_found);
    assert_err(f.service.open_session("", None), not_found);
    // A production partner's key is of the other environment for a sandbox service.
    let live = f.service.create_partner("Acme live", Environment::Production).unwrap();
    assert_err(f.service.open_session(&live.publishable_key, None), not_found);
    // The secret key is not a publishable key.
    let sandbox = f.service.create_partner("Other", Environment::Sandbox).unwrap();
    assert_err(f.service.open_session(sandbox.secret_key.expose(), None), not_found);

    let (p, partner) = production(b);
    let pk = publishable_key(&p, &partner);
    let not_approved = (ErrorKind::WidgetNotApproved, 403, "This widget is not approved for production yet.");
    assert_err(p.service.open_session(&pk, None), not_approved);
    p.service.set_widget_approval("ops", &partner, true).unwrap();
    let (_, state) = p.service.open_session(&pk, None).unwrap();
    assert_eq!((state.partner_id, state.environment), (partner, Environment::Production));
    p.service.set_widget_approval("ops", &partner, false).unwrap();
    assert_err(p.service.open_session(&pk, None), not_approved);
    // The sandbox partner of a production service is of the other environment.
    assert_err(p.service.open_session(&publishable_key(&p, &p.partner), None), not_found);
}

fn session_origins(b: Backend) {
    let f = Fixture::new(b);
    let pk = publishable_key(&f, &f.partner);
    f.service.set_widget_origins(&f.partner, &["https://shop.example", "https://pay.example:8443"]).unwrap();
    let not_allowed = (ErrorKind::OriginNotAllowed, 403, "This site may not embed the widget");
    for ok in [
        None,
        Some(""),
        Some("https://shop.example"),
        Some("https://pay.example:8443"),
        Some("http://localhost:5173"),
        Some("http://127.0.0.1:9"),
    ] {
        let (_, state) = f.service.open_session(&pk, ok).unwrap_or_else(|e| panic!("{ok:?}: {e:?}"));
        assert_eq!(state.origin, ok.unwrap_or_default(), "{ok:?}");
    }
    for bad in [
        "https://evil.example",
        "https://pay.example",
        "http://shop.example",
        "https://shop.example:444",
        "https://sub.shop.example",
        "null",
    ] {
        assert_err(f.service.open_session(&pk, Some(bad)), not_allowed);
    }

    // Production: registered https origins only, no localhost.
    let (p, partner) = production(b);
    p.service.set_widget_approval("ops", &partner, true).unwrap();
    p.service.set_widget_origins(&partner, &["https://shop.example"]).unwrap();
    let pk = publishable_key(&p, &partner);
    p.service.open_session(&pk, Some("https://shop.example")).unwrap();
    p.service.open_session(&pk, None).unwrap();
    for bad in ["https://evil.example", "http://localhost:5173", "http://127.0.0.1:9"] {
        assert_err(p.service.open_session(&pk, Some(bad)), not_allowed);
    }
}

fn session_dies_after_30_minutes_idle(b: Backend) {
    let f = Fixture::new(b);
    let a = open(&f);
    let c = open(&f);
    assert_eq!(SESSION_IDLE_SECS, 1800);
    f.clock.advance(29 * 60 + 59);
    f.service.session_state(&a).unwrap();
    // The touch restarted a's clock: 29 more minutes are fine, twice.
    f.clock.advance(29 * 60);
    f.service.session_state(&a).unwrap();
    f.clock.advance(29 * 60);
    f.service.session_state(&a).unwrap();
    // c was never touched: gone after 30 minutes (and 58 more).
    assert_err(f.service.session_state(&c), EXPIRED);
    // 30 minutes exactly without a call: gone, and stays gone.
    f.clock.advance(30 * 60);
    assert_err(f.service.session_state(&a), EXPIRED);
    f.clock.set(f.now() - 60 * 60);
    assert_err(f.service.session_state(&a), EXPIRED);
    // Every session call touches: a sign-in code request too.
    let d = open(&f);
    f.clock.advance(1799);
    f.service.request_sign_in_code(&d, "alice@example.com").unwrap();
    f.clock.advance(1799);
    f.service.session_state(&d).unwrap();
}

fn session_and_code_lifetimes_are_settings(b: Backend) {
    let config = Config { session_idle_secs: 60, sign_in_code_ttl_secs: 30, ..Config::default() };
    let f = Fixture::with_config(b, config);
    let t = open(&f);
    f.clock.advance(59);
    let code = f.service.request_sign_in_code(&t, "alice@example.com").unwrap();
    assert_eq!(code.expires_in, 30);
    f.clock.advance(29);
    let code = f.service.request_sign_in_code(&t, "alice@example.com").unwrap();
    f.clock.advance(30);
    assert_err(f.service.sign_in(&t, "alice@example.com", &code.code), CODE_EXPIRED);
    f.clock.advance(60);
    assert_err(f.service.session_state(&t), EXPIRED);
    // Zero is refused at build time.
    for bad in
        [Config { session_idle_secs: 0, ..Config::default() }, Config { sign_in_code_ttl_secs: 0, ..Config::default() }]
    {
        let built = Service::builder(MemoryStore::new()).master_keys(KeyRing::new(1, &[1; 32])).config(bad).build();
        assert_eq!(built.unwrap_err().kind(), ErrorKind::InvalidInput);
    }
}

fn session_garbage_and_closed_tokens_are_expired(b: Backend) {
    let f = Fixture::new(b);
    let live = open(&f);
    let unknown = format!("ws_{}", "A".repeat(43));
    let secret_key = f.service.create_partner("Other", Environment::Sandbox).unwrap().secret_key.expose().to_owned();
    let with_space = format!(" {live}");
    let longer = format!("{live}A");
    let garbage = ["", "ws_", "ws_short", &unknown, &secret_key, &format!("sk_{}", &live[3..]), &with_space, &longer];
    for g in garbage {
        assert_err(f.service.session_state(g), EXPIRED);
        assert_err(f.service.request_sign_in_code(g, "alice@example.com"), EXPIRED);
        assert_err(f.service.sign_in(g, "alice@example.com", "123456"), EXPIRED);
        assert_err(place(&f, g, &btc("25")), EXPIRED);
        assert_err(f.service.session_create_2fa(g), EXPIRED);
        assert_err(f.service.session_verify_2fa(g, "123456"), EXPIRED);
        assert_err(f.service.session_enable_2fa(g, "123456"), EXPIRED);
        assert_err(f.service.session_mark_kyc(g), EXPIRED);
        assert_err(f.service.close_session(g), EXPIRED);
    }
    f.service.session_state(&live).unwrap();
    // Closed: the token stops working everywhere, closing again included.
    let (signed, _) = signed_in(&f, "alice@example.com");
    f.service.close_session(&signed).unwrap();
    assert_err(f.service.session_state(&signed), EXPIRED);
    assert_err(place(&f, &signed, &btc("25")), EXPIRED);
    assert_err(f.service.close_session(&signed), EXPIRED);
    f.service.session_state(&live).unwrap();
    // An idle session cannot be closed either (it is already gone).
    f.clock.advance(SESSION_IDLE_SECS);
    assert_err(f.service.close_session(&live), EXPIRED);
}

fn session_token_is_never_stored(b: Backend) {
    let f = Fixture::new(b);
    let (token, _) = signed_in(&f, "alice@example.com");
    let other = open(&f);
    for t in [&token, &other] {
        assert!(!format!("{:?}", f.store.store).contains(&t[3..]), "the store's Debug shows no token");
    }
    let TestStore { dir: Some(dir), .. } = &f.store else { return };
    // Every file of the database (main file, WAL, journal) as it stands on disk.
    let mut scanned = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        for t in [&token, &other] {
            for needle in [t.as_bytes(), &t.as_bytes()[3..], &t.as_bytes()[3..20]] {
                assert!(!bytes.windows(needle.len()).any(|w| w == needle), "token text on disk");
            }
        }
        scanned += bytes.len();
    }
    assert!(scanned > 4096, "the database was scanned");
    // The email is stored (it is the contact's key), so the scan can see text at all.
    let mut found_email = false;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        found_email |= bytes.windows(17).any(|w| w == b"alice@example.com");
    }
    assert!(found_email, "the scan reads the stored text");
}

// ---------------------------------------------------------------------------------------------
// Sign-in

fn sign_in_with_the_emailed_code(b: Backend) {
    let f = Fixture::new(b);
    let token = open(&f);
    let code = f.service.request_sign_in_code(&token, " Alice@Example.COM ").unwrap();
    assert_eq!((code.code.len(), code.expires_in), (6, 600));
    assert_eq!(SIGN_IN_CODE_TTL_SECS, 600);
    assert!(code.code.bytes().all(|c| c.is_ascii_digit()), "6 ASCII digits");
    assert!(!format!("{code:?}").contains(code.code.as_str()), "Debug redacts the code");
    // The code may be given with surrounding white space, the email in another case.
    let state = f.service.sign_in(&token, "ALICE@example.com", &format!(" {} ", code.code.as_str())).unwrap();
    let contact = state.contact_id.unwrap();
    assert_eq!(
        state,
        SessionState {
            partner_id: f.partner,
            environment: Environment::Sandbox,
            origin: String::new(),
            email: Some("alice@example.com".into()),
            contact_id: Some(contact),
            kyc_passed: false,
            two_factor: Some(TwoFactorStep::None),
            may_purchase: true,
            purchase_hold_until: None,
            recovery_codes_remaining: 0,
        }
    );
    assert_eq!(f.service.session_state(&token).unwrap(), state);
    assert_eq!(f.service.contact_by_email(&f.partner, "alice@example.com").unwrap(), contact);
    assert_eq!(f.service.contact_by_email(&f.partner, " ALICE@example.COM").unwrap(), contact);
    assert_err(
        f.service.contact_by_email(&f.partner, "bob@example.com"),
        (ErrorKind::ContactNotFound, 404, "Contact not found"),
    );
    bad_input(f.service.contact_by_email(&f.partner, "bob"), BAD_EMAIL);
    assert_err(
        f.service.contact_by_email(&PartnerId::random(), "alice@example.com"),
        (ErrorKind::PartnerNotFound, 404, "Partner not found"),
    );
}

fn sign_in_one_contact_per_partner_and_email(b: Backend) {
    let f = Fixture::new(b);
    let (_, alice) = signed_in(&f, "alice@example.com");
    let (_, again) = signed_in(&f, "ALICE@EXAMPLE.COM");
    assert_eq!(alice, again, "the same email from a second session is the same contact");
    let (_, bob) = signed_in(&f, "bob@example.com");
    assert_ne!(alice, bob);
    let other = f.service.create_partner("Other", Environment::Sandbox).unwrap().partner_id;
    let token = open_for(&f, &other);
    let at_other = sign_in(&f, &token, "alice@example.com").contact_id.unwrap();
    assert_ne!(at_other, alice, "another partner, another contact");
    assert_eq!(f.service.contact_by_email(&other, "alice@example.com").unwrap(), at_other);
    assert_eq!(f.service.contact_by_email(&f.partner, "alice@example.com").unwrap(), alice);
    // Signing in again as someone else in the same session switches the contact.
    let t = open(&f);
    assert_eq!(sign_in(&f, &t, "alice@example.com").contact_id, Some(alice));
    assert_eq!(sign_in(&f, &t, "bob@example.com").contact_id, Some(bob));
    assert_eq!(f.service.session_state(&t).unwrap().email.as_deref(), Some("bob@example.com"));
}

/// A 6-digit code other than `code`.
fn other_code(code: &str, n: u32) -> String {
    let mut v: u32 = code.parse().unwrap();
    v = (v + n) % 1_000_000;
    format!("{v:06}")
}

fn sign_in_wrong_codes_and_the_fifth_kills(b: Backend) {
    let f = Fixture::new(b);
    let email = "alice@example.com";
    // Four wrong (some malformed), then the right one: signed in.
    let t = open(&f);
    let code = f.service.request_sign_in_code(&t, email).unwrap();
    for wrong in [other_code(&code.code, 1), "12345".into(), "abcdef".into(), String::new()] {
        assert_err(f.service.sign_in(&t, email, &wrong), CODE_FAILED);
    }
    assert!(f.service.sign_in(&t, email, &code.code).unwrap().signed_in());

    // Five wrong: the fifth is still "wrong", then the code is dead, even the right one.
    let t = open(&f);
    let code = f.service.request_sign_in_code(&t, email).unwrap();
    for n in 1..=5 {
        assert_err(f.service.sign_in(&t, email, &other_code(&code.code, n)), CODE_FAILED);
    }
    assert_err(f.service.sign_in(&t, email, &code.code), CODE_EXPIRED);
    assert_err(f.service.sign_in(&t, email, &other_code(&code.code, 1)), CODE_EXPIRED);
    assert!(!f.service.session_state(&t).unwrap().signed_in());
    // A new code works again.
    let code = f.service.request_sign_in_code(&t, email).unwrap();
    assert!(f.service.sign_in(&t, email, &code.code).unwrap().signed_in());
}

fn sign_in_code_expires_and_is_single_use(b: Backend) {
    let f = Fixture::new(b);
    let email = "alice@example.com";
    let t = open(&f);
    let code = f.service.request_sign_in_code(&t, email).unwrap();
    f.clock.advance(599);
    assert!(f.service.sign_in(&t, email, &code.code).unwrap().signed_in(), "alive at 9:59");
    // Used once: gone.
    assert_err(f.service.sign_in(&t, email, &code.code), CODE_EXPIRED);

    let t = open(&f);
    let code = f.service.request_sign_in_code(&t, email).unwrap();
    f.clock.advance(600);
    assert_err(f.service.sign_in(&t, email, &code.code), CODE_EXPIRED);
    assert_err(f.service.sign_in(&t, email, &other_code(&code.code, 1)), CODE_EXPIRED);
    assert!(!f.service.session_state(&t).unwrap().signed_in());
}

fn sign_in_code_works_only_in_its_session(b: Backend) {
    let f = Fixture::new(b);
    let email = "alice@example.com";
    let a = open(&f);
    let other = open(&f);
    let code = f.service.request_sign_in_code(&a, email).unwrap();
    // In another session the right code is just a wrong code (it counts as a try of a's code).
    assert_err(f.service.sign_in(&other, email, &code.code), CODE_FAILED);
    assert!(!f.service.session_state(&other).unwrap().signed_in());
    // Another email in the same session has no code at all.
    assert_err(f.service.sign_in(&a, "bob@example.com", &code.code), CODE_EXPIRED);
    assert!(f.service.sign_in(&a, email, &code.code).unwrap().signed_in());
    // Another partner's session with the same email has no code either.
    let p2 = f.service.create_partner("Other", Environment::Sandbox).unwrap().partner_id;
    let b2 = open_for(&f, &p2);
    let code = f.service.request_sign_in_code(&a, email).unwrap();
    assert_err(f.service.sign_in(&b2, email, &code.code), CODE_EXPIRED);
    assert!(f.service.sign_in(&a, email, &code.code).unwrap().signed_in());
}

fn sign_in_new_code_replaces_the_old(b: Backend) {
    let f = Fixture::new(b);
    let email = "alice@example.com";
    let t = open(&f);
    let old = f.service.request_sign_in_code(&t, email).unwrap();
    let new = f.service.request_sign_in_code(&t, email).unwrap();
    if old.code != new.code {
        assert_err(f.service.sign_in(&t, email, &old.code), CODE_FAILED);
    }
    assert!(f.service.sign_in(&t, email, &new.code).unwrap().signed_in());
    // A new code also restores the tries (another email: 3 codes per email per 10 minutes).
    let email = "bob@example.com";
    let t = open(&f);
    let first = f.service.request_sign_in_code(&t, email).unwrap();
    for n in 1..=4 {
        assert_err(f.service.sign_in(&t, email, &other_code(&first.code, n)), CODE_FAILED);
    }
    let second = f.service.request_sign_in_code(&t, email).unwrap();
    for n in 1..=4 {
        assert_err(f.service.sign_in(&t, email, &other_code(&second.code, n)), CODE_FAILED);
    }
    assert!(f.service.sign_in(&t, email, &second.code).unwrap().signed_in());
    // A code asked for by another session replaces this session's code.
    let a = open(&f);
    let c = open(&f);
    let code_a = f.service.request_sign_in_code(&a, "carol@example.com").unwrap();
    f.service.request_sign_in_code(&c, "carol@example.com").unwrap();
    assert_err(f.service.sign_in(&a, "carol@example.com", &code_a.code), CODE_FAILED);
}

fn sign_in_three_codes_per_email_per_ten_minutes(b: Backend) {
    let f = Fixture::new(b);
    let email = "alice@example.com";
    let t = open(&f);
    let t0 = f.now();
    for at in [0, 60, 120] {
        f.clock.set(t0 + at);
        f.service.request_sign_in_code(&t, email).unwrap();
    }
    let throttled = |n: u64| {
        (
            ErrorKind::SignInThrottled,
            429,
            format!("Too many sign-in codes for this email, try again in {n} seconds"),
            Some(n),
        )
    };
    f.clock.set(t0 + 180);
    assert_eq!(answer(f.service.request_sign_in_code(&t, email)).unwrap_err(), throttled(420));
    // The normalised email is what counts; another session of the partner too.
    let u = open(&f);
    assert_eq!(answer(f.service.request_sign_in_code(&u, " ALICE@example.com")).unwrap_err(), throttled(420));
    // The refused requests did not count, nor replace the live code.
    f.clock.set(t0 + 599);
    assert_eq!(answer(f.service.request_sign_in_code(&t, email)).unwrap_err(), throttled(1));
    // Another email, or the same email at another partner, is not affected.
    f.service.request_sign_in_code(&t, "bob@example.com").unwrap();
    let p2 = f.service.create_partner("Other", Environment::Sandbox).unwrap().partner_id;
    let t2 = open_for(&f, &p2);
    f.service.request_sign_in_code(&t2, email).unwrap();
    // Once the first code is 10 minutes old, a code is sent again (and works).
    f.clock.set(t0 + 600);
    let code = f.service.request_sign_in_code(&t, email).unwrap();
    // The window slides: the codes of t0+60 and t0+120 still count.
    assert_eq!(answer(f.service.request_sign_in_code(&t, email)).unwrap_err(), throttled(60));
    assert!(f.service.sign_in(&t, email, &code.code).unwrap().signed_in());
    f.clock.set(t0 + 660);
    f.service.request_sign_in_code(&t, email).unwrap();
}

fn sign_in_same_answers_for_known_and_unknown_emails(b: Backend) {
    let f = Fixture::new(b);
    signed_in(&f, "known@example.com");
    f.clock.advance(600);
    let run = |email: &str| {
        let t = open(&f);
        let mut answers = Vec::new();
        let code = f.service.request_sign_in_code(&t, email).unwrap();
        answers.push(Ok(code.expires_in.to_string()));
        answers
            .push(answer(f.service.sign_in(&t, email, &other_code(&code.code, 1)).map(drop)).map(|()| String::new()));
        f.service.request_sign_in_code(&t, email).unwrap();
        f.service.request_sign_in_code(&t, email).unwrap();
        answers.push(answer(f.service.request_sign_in_code(&t, email).map(|c| c.expires_in.to_string())));
        f.clock.advance(600);
        answers.push(answer(f.service.sign_in(&t, email, "000000").map(drop)).map(|()| String::new()));
        let code = f.service.request_sign_in_code(&t, email).unwrap();
        let state = f.service.sign_in(&t, email, &code.code).unwrap();
        answers.push(Ok(format!("{:?} {}", state.two_factor, state.may_purchase)));
        f.clock.advance(600);
        answers
    };
    let known = run("known@example.com");
    let unknown = run("new@example.com");
    assert_eq!(known, unknown);
    assert_eq!(known[1].clone().unwrap_err().2, "The sign-in code is wrong");
    assert_eq!(known[2].clone().unwrap_err().0, ErrorKind::SignInThrottled);
}

fn sign_in_malformed_email_and_no_code(b: Backend) {
    let f = Fixture::new(b);
    let t = open(&f);
    let long_local = format!("{}@example.com", "a".repeat(65));
    for bad in
        ["", "  ", "alice", "alice@", "@example.com", "a@b", "a b@example.com", "alice@example..com", &long_local]
    {
        bad_input(f.service.request_sign_in_code(&t, bad), BAD_EMAIL);
        bad_input(f.service.sign_in(&t, bad, "123456"), BAD_EMAIL);
    }
    // The session is checked before the email.
    assert_err(f.service.request_sign_in_code("ws_nope", "alice"), EXPIRED);
    // No code was ever sent: expired, whatever is given.
    for code in ["123456", "", "abc"] {
        assert_err(f.service.sign_in(&t, "alice@example.com", code), CODE_EXPIRED);
    }
    assert!(!f.service.session_state(&t).unwrap().signed_in());
}

fn session_calls_need_a_sign_in(b: Backend) {
    let f = Fixture::new(b);
    let t = open(&f);
    assert_err(f.service.session_mark_kyc(&t), SIGN_IN_REQUIRED);
    assert_err(f.service.session_create_2fa(&t), SIGN_IN_REQUIRED);
    assert_err(f.service.session_enable_2fa(&t, "123456"), SIGN_IN_REQUIRED);
    assert_err(f.service.session_verify_2fa(&t, "123456"), SIGN_IN_REQUIRED);
    assert_err(place(&f, &t, &btc("25")), SIGN_IN_REQUIRED);
    assert_err(place(&f, &t, &btc("abc")), SIGN_IN_REQUIRED);
    assert!(common::audit_rows(&f.service).is_empty());
}

// ---------------------------------------------------------------------------------------------
// The 2FA step

fn two_factor_fresh_contact_and_sandbox_kyc(b: Backend) {
    let f = Fixture::new(b);
    let (t, contact) = signed_in(&f, "alice@example.com");
    let state = f.service.session_state(&t).unwrap();
    assert_eq!((state.two_factor, state.may_purchase, state.kyc_passed), (Some(TwoFactorStep::None), true, false));
    let state = f.service.session_mark_kyc(&t).unwrap();
    assert_eq!((state.two_factor, state.may_purchase, state.kyc_passed), (Some(TwoFactorStep::Setup), false, true));
    assert_eq!(f.service.session_state(&t).unwrap(), state);
    let rows = common::audit_rows(&f.service);
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!((row.seq, row.actor.as_str(), row.event.as_str()), (1, "contact", "kyc.marked"));
    assert_eq!((row.partner_id.clone(), row.contact_id.clone()), (f.partner.to_string(), Some(contact.to_string())));
    assert_eq!(row.at, rampart_core::audit::rfc3339_millis(f.now() * 1000));
    assert!(f.service.is_2fa_required(&f.partner, &contact).unwrap());
    // Another session of the same contact sees the same step.
    let (t2, _) = signed_in(&f, "alice@example.com");
    assert_eq!(f.service.session_state(&t2).unwrap().two_factor, Some(TwoFactorStep::Setup));
    // Marking again is harmless.
    assert_eq!(f.service.session_mark_kyc(&t2).unwrap().two_factor, Some(TwoFactorStep::Setup));
}

fn two_factor_kyc_is_sandbox_only(b: Backend) {
    let (f, partner) = production(b);
    f.service.set_widget_approval("ops", &partner, true).unwrap();
    let t = open_for(&f, &partner);
    assert_err(f.service.session_mark_kyc(&t), SIGN_IN_REQUIRED);
    let state = sign_in(&f, &t, "alice@example.com");
    assert_eq!(state.environment, Environment::Production);
    assert_err(f.service.session_mark_kyc(&t), (ErrorKind::SandboxOnly, 403, "Only available in sandbox"));
    let state = f.service.session_state(&t).unwrap();
    assert_eq!((state.kyc_passed, state.two_factor), (false, Some(TwoFactorStep::None)));
    let events: Vec<String> = common::trail(&f.service, &partner).into_iter().map(|(_, e)| e).collect();
    assert_eq!(events, ["widget.approved"], "no KYC mark was recorded");
    // The operator's mark works in production; then the contact must set 2FA up.
    f.service.set_kyc_passed("ops", &partner, &state.contact_id.unwrap(), true).unwrap();
    let state = f.service.session_state(&t).unwrap();
    assert_eq!((state.kyc_passed, state.two_factor, state.may_purchase), (true, Some(TwoFactorStep::Setup), false));
}

fn two_factor_waiver_lifts_the_setup(b: Backend) {
    let f = Fixture::new(b);
    let (t, _) = signed_in(&f, "alice@example.com");
    assert_eq!(f.service.session_mark_kyc(&t).unwrap().two_factor, Some(TwoFactorStep::Setup));
    f.service.set_2fa_waiver("ops", &f.partner, true).unwrap();
    let state = f.service.session_state(&t).unwrap();
    assert_eq!((state.kyc_passed, state.two_factor, state.may_purchase), (true, Some(TwoFactorStep::None), true));
    place(&f, &t, &btc("25")).unwrap();
    f.service.set_2fa_waiver("ops", &f.partner, false).unwrap();
    let state = f.service.session_state(&t).unwrap();
    assert_eq!((state.two_factor, state.may_purchase), (Some(TwoFactorStep::Setup), false));
}

fn two_factor_setup_enable_then_verify(b: Backend) {
    let f = Fixture::new(b);
    let (t, contact) = signed_in(&f, " Alice@Example.COM");
    f.service.session_mark_kyc(&t).unwrap();
    let setup = f.service.session_create_2fa(&t).unwrap();
    assert_eq!(setup.manual.len(), 32);
    assert_eq!(
        setup.uri,
        format!(
            "otpauth://totp/Rampart2FA:alice%40example.com?secret={}&issuer=Rampart2FA&algorithm=SHA1&digits=6&period=30",
            setup.manual
        )
    );
    assert!(setup.qr_code.starts_with("data:image/png;base64,"));
    let totp = peer(&setup.manual);
    // Created, not enabled: the step is still setup.
    assert_eq!(f.service.session_state(&t).unwrap().two_factor, Some(TwoFactorStep::Setup));
    assert_err(
        f.service.session_enable_2fa(&t, wrong_code(&f, &totp).as_str()),
        (ErrorKind::TokenFailed, 401, "Google 2FA failed"),
    );
    assert_err(
        f.service.session_enable_2fa(&t, ""),
        (ErrorKind::TokenMissing, 401, "Google 2FA requires the token to be passed in"),
    );
    let (state, codes) = f.service.session_enable_2fa(&t, code_now(&f, &totp).as_str()).unwrap();
    assert_eq!((state.two_factor, state.may_purchase), (Some(TwoFactorStep::Passed), true));
    assert_eq!((codes.len(), state.recovery_codes_remaining), (10, 10));
    assert!(f.service.status_2fa(&f.partner, &contact).unwrap());
    assert_eq!(f.service.session_state(&t).unwrap(), state);
    // Enabled: create and enable again are the lifecycle's answers.
    assert_err(
        f.service.session_create_2fa(&t),
        (ErrorKind::MustDisableFirst, 403, "Must disable 2FA before creating a new one"),
    );
    assert_err(
        f.service.session_enable_2fa(&t, code_now(&f, &totp).as_str()),
        (ErrorKind::AlreadyEnabled, 409, "Cannot enable 2FA again, it is already set"),
    );

    // A new session of the same contact must verify.
    let (t2, again) = signed_in(&f, "alice@example.com");
    assert_eq!(again, contact);
    let state = f.service.session_state(&t2).unwrap();
    assert_eq!((state.two_factor, state.may_purchase), (Some(TwoFactorStep::Verify), false));
    assert_err(place(&f, &t2, &btc("25")), (ErrorKind::TwoFactorRequired, 403, "2FA is required before buying"));
    assert_err(
        f.service.session_verify_2fa(&t2, wrong_code(&f, &totp).as_str()),
        (ErrorKind::TokenFailed, 401, "Google 2FA failed"),
    );
    // The enabling code's step is used up: the same code is a replay.
    assert_err(
        f.service.session_verify_2fa(&t2, code_now(&f, &totp).as_str()),
        (ErrorKind::TokenFailed, 401, "Google 2FA failed"),
    );
    f.clock.advance(30);
    let code = code_now(&f, &totp);
    let state = f.service.session_verify_2fa(&t2, code.as_str()).unwrap();
    assert_eq!((state.two_factor, state.may_purchase), (Some(TwoFactorStep::Passed), true));
    // The same valid code twice: the second is refused (in another session too).
    let (t3, _) = signed_in(&f, "alice@example.com");
    assert_err(f.service.session_verify_2fa(&t3, code.as_str()), (ErrorKind::TokenFailed, 401, "Google 2FA failed"));
    assert_eq!(f.service.session_state(&t3).unwrap().two_factor, Some(TwoFactorStep::Verify));
    // t2's wrong code counted, its success reset the count, and the replay did not count.
    assert_eq!(f.service.store().contact(&f.partner, &contact).unwrap().unwrap().failures, 0);
    // Signing in again in a passed session asks for 2FA again (past the sign-in code limit).
    f.clock.advance(600);
    assert_eq!(sign_in(&f, &t2, "alice@example.com").two_factor, Some(TwoFactorStep::Verify));
    // A contact without 2FA: verify is the lifecycle's 409.
    let (t4, _) = signed_in(&f, "bob@example.com");
    assert_err(f.service.session_verify_2fa(&t4, "123456"), (ErrorKind::NotEnabled, 409, "2FA is not enabled"));
}

fn two_factor_verify_throttles_and_locks(b: Backend) {
    let f = Fixture::new(b);
    let (t, contact) = signed_in(&f, "alice@example.com");
    f.service.session_mark_kyc(&t).unwrap();
    let totp = peer(&f.service.session_create_2fa(&t).unwrap().manual);
    f.service.session_enable_2fa(&t, code_now(&f, &totp).as_str()).unwrap();
    f.clock.advance(30);
    let (t, _) = signed_in(&f, "alice@example.com");
    let failed = (ErrorKind::TokenFailed, 401, "Google 2FA failed");
    for _ in 0..5 {
        assert_err(f.service.session_verify_2fa(&t, wrong_code(&f, &totp).as_str()), failed);
    }
    // Refused for 30 s, the same answer for the right code and a wrong one.
    let throttled =
        (ErrorKind::Throttled, 429, "Too many failed 2FA attempts, try again in 30 seconds".to_owned(), Some(30));
    assert_eq!(answer(f.service.session_verify_2fa(&t, code_now(&f, &totp).as_str())).unwrap_err(), throttled);
    assert_eq!(answer(f.service.session_verify_2fa(&t, wrong_code(&f, &totp).as_str())).unwrap_err(), throttled);
    assert_eq!(f.service.session_state(&t).unwrap().two_factor, Some(TwoFactorStep::Verify));
    // Up to 100 consecutive failures, waiting out each throttle (touching the session).
    wait(&f, &t, 30);
    for k in 6..=100u32 {
        assert_err(f.service.session_verify_2fa(&t, wrong_code(&f, &totp).as_str()), failed);
        if let Some(d) = lifecycle::throttle_delay(k) {
            wait(&f, &t, d);
        }
    }
    assert_eq!(f.service.store().contact(&f.partner, &contact).unwrap().unwrap().failures, 100);
    let locked = (ErrorKind::Locked, 423, "2FA is locked after too many failed attempts");
    assert_err(f.service.session_verify_2fa(&t, code_now(&f, &totp).as_str()), locked);
    assert_err(f.service.session_verify_2fa(&t, wrong_code(&f, &totp).as_str()), locked);
    let state = f.service.session_state(&t).unwrap();
    assert_eq!((state.two_factor, state.may_purchase), (Some(TwoFactorStep::Verify), false));
    assert_err(place(&f, &t, &btc("25")), (ErrorKind::TwoFactorRequired, 403, "2FA is required before buying"));
    // The operator's reset lifts it.
    f.service.reset_lock("ops", &f.partner, &contact).unwrap();
    let state = f.service.session_verify_2fa(&t, code_now(&f, &totp).as_str()).unwrap();
    assert_eq!(state.two_factor, Some(TwoFactorStep::Passed));
}

// ---------------------------------------------------------------------------------------------
// Orders

fn orders_need_a_sign_in_and_the_2fa_step(b: Backend) {
    let f = Fixture::new(b);
    let (t, contact) = signed_in(&f, "alice@example.com");
    f.service.session_mark_kyc(&t).unwrap();
    let required = (ErrorKind::TwoFactorRequired, 403, "2FA is required before buying");
    // Step setup: refused, nothing stored.
    assert_err(place(&f, &t, &btc("25")), required);
    // Created but not enabled: still setup.
    let totp = peer(&f.service.session_create_2fa(&t).unwrap().manual);
    assert_err(place(&f, &t, &btc("25")), required);
    assert!(f.service.orders(&f.partner, &contact, None, 100).unwrap().orders.is_empty());
    // The options are checked before the 2FA step.
    bad_input(
        place(&f, &t, &btc("abc")),
        "amount is not valid: amount must be a plain decimal: digits, then optionally a point and 1 or 2 digits (for example \"50\" or \"49.99\").",
    );
    f.service.session_enable_2fa(&t, code_now(&f, &totp).as_str()).unwrap();
    f.clock.advance(30);
    // Step verify in a new session: refused, nothing stored.
    let (t2, _) = signed_in(&f, "alice@example.com");
    assert_err(place(&f, &t2, &btc("25")), required);
    assert!(f.service.orders(&f.partner, &contact, None, 100).unwrap().orders.is_empty());
    // Passed (enable in t, verify in t2): both may buy.
    place(&f, &t, &btc("25")).unwrap();
    f.service.session_verify_2fa(&t2, code_now(&f, &totp).as_str()).unwrap();
    place(&f, &t2, &btc("25")).unwrap();
    assert_eq!(f.service.orders(&f.partner, &contact, None, 100).unwrap().orders.len(), 2);
}

fn orders_bad_inputs_name_the_path(b: Backend) {
    let f = Fixture::new(b);
    let (t, contact) = signed_in(&f, "alice@example.com");
    let plain_decimal = "amount is not valid: amount must be a plain decimal: digits, then optionally a point and 1 or 2 digits (for example \"50\" or \"49.99\").";
    let currencies = "currency is not valid: currencies must be \"usd\", \"eur\" or \"gbp\".";
    let mut wrong = Vec::new();
    for (request, message) in [
        (order_request("xyz", "25", "usd", ADDR), "coin is not valid: The coin symbol is not supported."),
        (order_request("BTC", "25", "usd", ADDR), "coin is not valid: Coin symbols in tokens must be lower case."),
        (
            order_request("", "25", "usd", ADDR),
            "coin is not valid: tokens must list at least one coin symbol; leave it out to offer every supported coin.",
        ),
        (order_request("btc,eth", "25", "usd", ADDR), "coin must be one coin symbol"),
        (btc("1"), "amount is not valid: amount is below the minimum purchase in the chosen currency."),
        (btc("4.99"), "amount is not valid: amount is below the minimum purchase in the chosen currency."),
        (btc("abc"), plain_decimal),
        (btc(" 25"), plain_decimal),
        (btc("25.001"), "amount is not valid: amount must have at most 2 decimals."),
        (
            order_request("btc", "25", "usd", "nope"),
            "address is not valid: The base58 address has the wrong length: it must hold a version byte, a 20-byte hash and a checksum.",
        ),
        (
            order_request("btc", "25", "usd", &format!(" {ADDR}")),
            "address is not valid: The address contains spaces, control characters or non-ASCII characters.",
        ),
        (order_request("btc", "25", "xyz", ADDR), currencies),
        (order_request("btc", "25", "USD", ADDR), currencies),
        (order_request("btc", "25", "", ADDR), currencies),
    ] {
        let e = place(&f, &t, &request).expect_err(&format!("{request:?}"));
        if (e.kind(), e.code(), e.message()) != (ErrorKind::InvalidInput, 400, message) {
            wrong.push(format!("{request:?}: got {:?} {} {:?}, want {message:?}", e.kind(), e.code(), e.message()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(f.service.orders(&f.partner, &contact, None, 100).unwrap().orders.is_empty());
}

fn orders_complete_in_sandbox_at_the_simulated_price(b: Backend) {
    let f = Fixture::new(b);
    let (t, contact) = signed_in(&f, "alice@example.com");
    let before = f.now();
    f.clock.advance(5);
    let order = place(&f, &t, &btc("25")).unwrap();
    let now = before + 5;
    assert_eq!(
        order,
        OrderRecord {
            id: order.id,
            partner_id: f.partner,
            contact_id: contact,
            coin: "btc".into(),
            amount: "25".into(),
            currency: "usd".into(),
            address: ADDR.into(),
            price: "65000.00".into(),
            quantity: "0.00038461".into(),
            status: OrderStatus::Completed,
            created_at: now,
            updated_at: now,
        }
    );
    assert_eq!(f.service.order(&f.partner, &order.id).unwrap(), order, "stored as answered");
    let eur = place(&f, &t, &order_request("btc", "25", "eur", ADDR)).unwrap();
    assert_eq!((eur.price.as_str(), eur.quantity.as_str()), ("59800.00", "0.00041806"));
    let gbp = place(&f, &t, &order_request("eth", "5", "gbp", "0x52908400098527886E0F7030069857D2E4169EE7")).unwrap();
    assert_eq!(
        (gbp.price.as_str(), gbp.quantity.as_str(), gbp.status),
        ("2528.00", "0.00197784", OrderStatus::Completed)
    );
    let usdc =
        place(&f, &t, &order_request("usdc", "10.50", "usd", "0x52908400098527886E0F7030069857D2E4169EE7")).unwrap();
    assert_eq!((usdc.amount.as_str(), usdc.price.as_str(), usdc.quantity.as_str()), ("10.50", "1.00", "10.5"));
    assert_ne!(order.id, eur.id);
    // Another partner sees none of them.
    let other = f.service.create_partner("Other", Environment::Sandbox).unwrap().partner_id;
    let not_found = (ErrorKind::OrderNotFound, 404, "Order not found");
    assert_err(f.service.order(&other, &order.id), not_found);
    assert_err(f.service.order(&f.partner, &OrderId::random()), not_found);
    assert_err(
        f.service.order(&PartnerId::random(), &order.id),
        (ErrorKind::PartnerNotFound, 404, "Partner not found"),
    );
    assert!(f.service.orders(&other, &contact, None, 100).unwrap().orders.is_empty());
}

fn orders_are_unavailable_in_production(b: Backend) {
    let (f, partner) = production(b);
    f.service.set_widget_approval("ops", &partner, true).unwrap();
    let t = open_for(&f, &partner);
    // The core hands out codes in production (the caller mails them).
    let state = sign_in(&f, &t, "alice@example.com");
    let contact = state.contact_id.unwrap();
    assert_eq!((state.two_factor, state.may_purchase), (Some(TwoFactorStep::None), true));
    // Options are still checked first.
    bad_input(
        place(&f, &t, &btc("1")),
        "amount is not valid: amount is below the minimum purchase in the chosen currency.",
    );
    assert_err(
        place(&f, &t, &btc("25")),
        (ErrorKind::PurchasesUnavailable, 503, "Purchases are unavailable on this server"),
    );
    assert!(f.service.orders(&partner, &contact, None, 100).unwrap().orders.is_empty());
    // The 2FA step comes before the environment.
    f.service.set_kyc_passed("ops", &partner, &contact, true).unwrap();
    assert_err(place(&f, &t, &btc("25")), (ErrorKind::TwoFactorRequired, 403, "2FA is required before buying"));
}

fn orders_paging(b: Backend) {
    let f = Fixture::new(b);
    let (t, contact) = signed_in(&f, "alice@example.com");
    let (u, bob) = signed_in(&f, "bob@example.com");
    let bobs = place(&f, &u, &btc("5")).unwrap();
    let mut placed = Vec::new();
    for i in 0..7 {
        f.clock.advance(10);
        placed.push(place(&f, &t, &btc(&format!("{}", 10 + i))).unwrap());
    }
    placed.reverse(); // newest first
    let first = f.service.orders(&f.partner, &contact, None, 3).unwrap();
    assert_eq!(first.orders, placed[..3]);
    assert_eq!(first.next, Some(placed[2].id));
    let mut seen = Vec::new();
    let mut after = None;
    let mut pages = 0;
    loop {
        let page = f.service.orders(&f.partner, &contact, after.as_ref(), 3).unwrap();
        pages += 1;
        seen.extend(page.orders.clone());
        match page.next {
            Some(next) => {
                assert_eq!(Some(next), page.orders.last().map(|o| o.id));
                after = Some(next);
            }
            None => {
                assert_eq!(page.orders.len(), 1, "the last page");
                break;
            }
        }
    }
    assert_eq!((seen, pages), (placed.clone(), 3));
    // Exactly full pages: the last full page says there is no more.
    let all = f.service.orders(&f.partner, &contact, None, 7).unwrap();
    assert_eq!((all.orders, all.next), (placed.clone(), None));
    let six = f.service.orders(&f.partner, &contact, None, 6).unwrap();
    assert_eq!(six.next, Some(placed[5].id));
    let rest = f.service.orders(&f.partner, &contact, six.next.as_ref(), 6).unwrap();
    assert_eq!((rest.orders, rest.next), (placed[6..].to_vec(), None));
    let one = f.service.orders(&f.partner, &contact, None, 1).unwrap();
    assert_eq!((one.orders, one.next), (placed[..1].to_vec(), Some(placed[0].id)));
    assert_eq!(f.service.orders(&f.partner, &contact, None, 100).unwrap().orders.len(), 7);
    // Bob's order is bob's only.
    let bob_page = f.service.orders(&f.partner, &bob, None, 100).unwrap();
    assert_eq!((bob_page.orders, bob_page.next), (vec![bobs.clone()], None));
    // Bad limits and cursors.
    for limit in [0, 101, usize::MAX] {
        bad_input(f.service.orders(&f.partner, &contact, None, limit), "limit must be 1 to 100");
    }
    // A cursor that is not an order of this contact reads as an unknown order.
    let not_ours = (ErrorKind::OrderNotFound, 404, "Order not found");
    assert_err(f.service.orders(&f.partner, &contact, Some(&bobs.id), 3), not_ours);
    assert_err(f.service.orders(&f.partner, &bob, Some(&placed[0].id), 3), not_ours);
    assert_err(f.service.orders(&f.partner, &contact, Some(&OrderId::random()), 3), not_ours);
    let other = f.service.create_partner("Other", Environment::Sandbox).unwrap().partner_id;
    assert_err(f.service.orders(&other, &contact, Some(&placed[0].id), 3), not_ours);
    assert_err(
        f.service.orders(&PartnerId::random(), &contact, None, 3),
        (ErrorKind::PartnerNotFound, 404, "Partner not found"),
    );
}

// ---------------------------------------------------------------------------------------------
// Failing closed

fn fail_closed_on_faulty_store(b: Backend) {
    match b {
        Backend::Memory => faulty_case(MemoryStore::new(), None),
        Backend::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            faulty_case(SqliteStore::open(dir.path().join("f.db")).unwrap(), Some(dir));
        }
        #[cfg(feature = "postgres-tests")]
        Backend::Postgres => faulty_case(common::postgres_store(), None),
    }
}

fn faulty_case<S: Store + 'static>(inner: S, _dir: Option<tempfile::TempDir>) {
    let store = Arc::new(FaultyStore::new(inner));
    let clock = Arc::new(ManualClock::new(common::T0));
    let service = Service::builder_shared(store.clone())
        .master_keys(KeyRing::new(1, &[42; 32]))
        .clock(clock.clone())
        .build()
        .unwrap();
    let partner = service.create_partner("Acme", Environment::Sandbox).unwrap().partner_id;
    let pk = service.partner(&partner).unwrap().publishable_key;
    let widget = WidgetConfig::default();
    let email = "alice@example.com";
    let (token, _) = service.open_session(&pk, None).unwrap();
    let t = token.as_str();
    let code = service.request_sign_in_code(t, email).unwrap();
    type Fault<S> = fn(&FaultyStore<S>, bool);
    let faults: [(&str, Fault<S>); 2] = [("reads", FaultyStore::fail_reads), ("writes", FaultyStore::fail_writes)];
    let internal = |r: Result<(), Error>, what: &str| {
        let e = r.expect_err(what);
        assert_eq!((e.kind(), e.code(), e.message()), INTERNAL, "{what}");
        assert!(e.cause().is_some(), "{what}: the cause is kept for the log");
    };
    for spare in [false, true] {
        store.spare_partner_reads(spare);
        for (name, fault) in faults {
            let what = |op: &str| format!("{op} with failing {name}, partner reads spared: {spare}");
            fault(&store, true);
            // Opening reads nothing but the partner.
            if !(spare && name == "reads") {
                internal(service.open_session(&pk, None).map(drop), &what("open"));
            }
            internal(service.session_state(t).map(drop), &what("state"));
            internal(service.request_sign_in_code(t, email).map(drop), &what("code"));
            internal(service.sign_in(t, email, &code.code).map(drop), &what("sign-in"));
            fault(&store, false);
        }
    }
    store.spare_partner_reads(false);
    // Nothing was used up: the code still signs in.
    let contact = service.sign_in(t, email, &code.code).unwrap().contact_id.unwrap();
    for (name, fault) in faults {
        fault(&store, true);
        internal(service.place_order(t, &btc("25"), &widget).map(drop), &format!("order with failing {name}"));
        internal(service.session_create_2fa(t).map(drop), &format!("create with failing {name}"));
        internal(service.session_mark_kyc(t).map(drop), &format!("kyc with failing {name}"));
        internal(service.close_session(t), &format!("close with failing {name}"));
        fault(&store, false);
    }
    store.fail_reads(true);
    internal(service.orders(&partner, &contact, None, 10).map(drop), "orders");
    internal(service.contact_by_email(&partner, email).map(drop), "contact by email");
    store.fail_reads(false);
    // No order was kept, no KYC mark, and the session still works.
    assert!(service.orders(&partner, &contact, None, 100).unwrap().orders.is_empty());
    let state = service.session_state(t).unwrap();
    assert_eq!((state.kyc_passed, state.two_factor), (false, Some(TwoFactorStep::None)));
    assert!(common::audit_rows(&service).is_empty());
    assert_eq!(service.place_order(t, &btc("25"), &widget).unwrap().status, OrderStatus::Completed);
}

/// A store that fails the calls named in `failing` (by trait method name), for faults a
/// [`FaultyStore`] cannot aim: one call in the middle of an operation.
#[derive(Debug)]
struct Trip {
    inner: Arc<dyn Store>,
    failing: Mutex<Vec<&'static str>>,
}

impl Trip {
    fn fail(&self, names: &[&'static str]) {
        *self.failing.lock().unwrap() = names.to_vec();
    }

    fn check(&self, name: &str) -> Result<(), StoreError> {
        if self.failing.lock().unwrap().contains(&name) {
            Err(StoreError::Backend(format!("{name} failed (injected)").into()))
        } else {
            Ok(())
        }
    }
}

impl Store for Trip {
    fn insert_partner(&self, p: &PartnerRecord) -> Result<(), StoreError> {
        self.check("insert_partner")?;
        self.inner.insert_partner(p)
    }
    fn partner(&self, id: &PartnerId) -> Result<Option<PartnerRecord>, StoreError> {
        self.check("partner")?;
        self.inner.partner(id)
    }
    fn partner_by_secret_key_hash(&self, h: &[u8; 32]) -> Result<Option<PartnerRecord>, StoreError> {
        self.check("partner_by_secret_key_hash")?;
        self.inner.partner_by_secret_key_hash(h)
    }
    fn partner_by_publishable_key(&self, k: &str) -> Result<Option<PartnerRecord>, StoreError> {
        self.check("partner_by_publishable_key")?;
        self.inner.partner_by_publishable_key(k)
    }
    fn update_partner(
        &self,
        id: &PartnerId,
        f: &mut dyn FnMut(&mut PartnerRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.check("update_partner")?;
        self.inner.update_partner(id, f)
    }
    fn count_partners(&self) -> Result<u64, StoreError> {
        self.check("count_partners")?;
        self.inner.count_partners()
    }
    fn webhook_endpoints(&self, p: &PartnerId) -> Result<Vec<WebhookEndpointRecord>, StoreError> {
        self.check("webhook_endpoints")?;
        self.inner.webhook_endpoints(p)
    }
    fn update_webhook_endpoints(
        &self,
        p: &PartnerId,
        f: &mut dyn FnMut(&mut Vec<WebhookEndpointRecord>, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.check("update_webhook_endpoints")?;
        self.inner.update_webhook_endpoints(p, f)
    }
    fn contact(&self, p: &PartnerId, c: &ContactId) -> Result<Option<ContactRecord>, StoreError> {
        self.check("contact")?;
        self.inner.contact(p, c)
    }
    fn update_contact(
        &self,
        p: &PartnerId,
        c: &ContactId,
        f: &mut dyn FnMut(&mut ContactRecord, &mut Effects) -> bool,
    ) -> Result<(), StoreError> {
        self.check("update_contact")?;
        self.inner.update_contact(p, c, f)
    }
    fn kyc_contacts_without_2fa(&self, p: &PartnerId) -> Result<Vec<ContactId>, StoreError> {
        self.check("kyc_contacts_without_2fa")?;
        self.inner.kyc_contacts_without_2fa(p)
    }
    fn contacts_with_secrets(
        &self,
        after: Option<(PartnerId, ContactId)>,
        limit: usize,
    ) -> Result<Vec<(PartnerId, ContactId)>, StoreError> {
        self.check("contacts_with_secrets")?;
        self.inner.contacts_with_secrets(after, limit)
    }
    fn insert_session(&self, s: &SessionRecord) -> Result<(), StoreError> {
        self.check("insert_session")?;
        self.inner.insert_session(s)
    }
    fn update_session(
        &self,
        h: &[u8; 32],
        f: &mut dyn FnMut(&mut SessionRecord) -> bool,
    ) -> Result<Option<SessionRecord>, StoreError> {
        self.check("update_session")?;
        self.inner.update_session(h, f)
    }
    fn delete_session(&self, h: &[u8; 32]) -> Result<bool, StoreError> {
        self.check("delete_session")?;
        self.inner.delete_session(h)
    }
    fn delete_sessions_idle_since(&self, before: u64) -> Result<u64, StoreError> {
        self.check("delete_sessions_idle_since")?;
        self.inner.delete_sessions_idle_since(before)
    }
    fn update_sign_in(
        &self,
        p: &PartnerId,
        email: &str,
        f: &mut dyn FnMut(&mut SignInRecord) -> bool,
    ) -> Result<(), StoreError> {
        self.check("update_sign_in")?;
        self.inner.update_sign_in(p, email, f)
    }
    fn contact_for_email(&self, p: &PartnerId, email: &str, c: ContactId) -> Result<ContactId, StoreError> {
        self.check("contact_for_email")?;
        self.inner.contact_for_email(p, email, c)
    }
    fn contact_by_email(&self, p: &PartnerId, email: &str) -> Result<Option<ContactId>, StoreError> {
        self.check("contact_by_email")?;
        self.inner.contact_by_email(p, email)
    }
    fn insert_order(&self, o: &OrderRecord, e: &Effects) -> Result<(), StoreError> {
        self.check("insert_order")?;
        self.inner.insert_order(o, e)
    }
    fn order(&self, p: &PartnerId, id: &OrderId) -> Result<Option<OrderRecord>, StoreError> {
        self.check("order")?;
        self.inner.order(p, id)
    }
    fn update_order(
        &self,
        p: &PartnerId,
        id: &OrderId,
        f: &mut dyn FnMut(&mut OrderRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.check("update_order")?;
        self.inner.update_order(p, id, f)
    }
    fn webhook_deliveries(&self, p: &PartnerId) -> Result<Vec<DeliveryRecord>, StoreError> {
        self.check("webhook_deliveries")?;
        self.inner.webhook_deliveries(p)
    }
    fn claim_deliveries(&self, now: u64, lease_until: u64, limit: usize) -> Result<Vec<ClaimedDelivery>, StoreError> {
        self.check("claim_deliveries")?;
        self.inner.claim_deliveries(now, lease_until, limit)
    }
    fn finish_delivery(
        &self,
        partner: &PartnerId,
        endpoint_id: &uuid::Uuid,
        attempt: &AttemptRecord,
        next: &DeliveryNext,
        endpoint: Option<&WebhookEndpointRecord>,
        effects: &Effects,
    ) -> Result<(), StoreError> {
        self.check("finish_delivery")?;
        self.inner.finish_delivery(partner, endpoint_id, attempt, next, endpoint, effects)
    }
    fn webhook_attempts(
        &self,
        partner: &PartnerId,
        endpoint_id: &uuid::Uuid,
        before: Option<(u64, String)>,
        limit: usize,
    ) -> Result<Vec<AttemptRecord>, StoreError> {
        self.check("webhook_attempts")?;
        self.inner.webhook_attempts(partner, endpoint_id, before, limit)
    }
    fn resend_webhook_message(&self, partner: &PartnerId, message_id: &str, now: u64) -> Result<bool, StoreError> {
        self.check("resend_webhook_message")?;
        self.inner.resend_webhook_message(partner, message_id, now)
    }
    fn webhook_queue_depth(&self) -> Result<u64, StoreError> {
        self.check("webhook_queue_depth")?;
        self.inner.webhook_queue_depth()
    }
    fn orders_for_contact(
        &self,
        p: &PartnerId,
        c: &ContactId,
        before: Option<(u64, OrderId)>,
        limit: usize,
    ) -> Result<Vec<OrderRecord>, StoreError> {
        self.check("orders_for_contact")?;
        self.inner.orders_for_contact(p, c, before, limit)
    }
    fn audit_events(
        &self,
        p: &PartnerId,
        c: Option<&ContactId>,
        after: u64,
        limit: usize,
    ) -> Result<Vec<AuditRow>, StoreError> {
        self.check("audit_events")?;
        self.inner.audit_events(p, c, after, limit)
    }
    fn orders_page(
        &self,
        partner: &PartnerId,
        filter: &OrderFilter,
        before: Option<(u64, OrderId)>,
        limit: usize,
    ) -> Result<Vec<OrderRecord>, StoreError> {
        self.check("orders_page")?;
        self.inner.orders_page(partner, filter, before, limit)
    }
    fn contact_counts(&self, partner: &PartnerId) -> Result<ContactCounts, StoreError> {
        self.check("contact_counts")?;
        self.inner.contact_counts(partner)
    }
    fn contacts_page(
        &self,
        partner: &PartnerId,
        list: ContactList,
        after: Option<ContactId>,
        limit: usize,
    ) -> Result<Vec<(ContactId, ContactRecord)>, StoreError> {
        self.check("contacts_page")?;
        self.inner.contacts_page(partner, list, after, limit)
    }
    fn webhook_answered(&self, partner: &PartnerId) -> Result<bool, StoreError> {
        self.check("webhook_answered")?;
        self.inner.webhook_answered(partner)
    }
    fn team(&self, p: &PartnerId) -> Result<TeamRecord, StoreError> {
        self.check("team")?;
        self.inner.team(p)
    }
    fn update_team(
        &self,
        p: &PartnerId,
        f: &mut dyn FnMut(&mut TeamRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.check("update_team")?;
        self.inner.update_team(p, f)
    }
    fn member_by_email(&self, email: &str) -> Result<Option<MemberRecord>, StoreError> {
        self.check("member_by_email")?;
        self.inner.member_by_email(email)
    }
    fn invitation_by_token(&self, h: &[u8; 32]) -> Result<Option<InvitationRecord>, StoreError> {
        self.check("invitation_by_token")?;
        self.inner.invitation_by_token(h)
    }
    fn insert_dashboard_session(&self, s: &DashboardSessionRecord) -> Result<(), StoreError> {
        self.check("insert_dashboard_session")?;
        self.inner.insert_dashboard_session(s)
    }
    fn update_dashboard_session(
        &self,
        h: &[u8; 32],
        f: &mut dyn FnMut(&mut DashboardSessionRecord) -> bool,
    ) -> Result<Option<DashboardSessionRecord>, StoreError> {
        self.check("update_dashboard_session")?;
        self.inner.update_dashboard_session(h, f)
    }
    fn delete_dashboard_session(&self, h: &[u8; 32]) -> Result<bool, StoreError> {
        self.check("delete_dashboard_session")?;
        self.inner.delete_dashboard_session(h)
    }
    fn delete_dashboard_sessions_idle_since(&self, before: u64) -> Result<u64, StoreError> {
        self.check("delete_dashboard_sessions_idle_since")?;
        self.inner.delete_dashboard_sessions_idle_since(before)
    }
    fn audit_heads(&self) -> Result<Vec<(PartnerId, AuditHead)>, StoreError> {
        self.check("audit_heads")?;
        self.inner.audit_heads()
    }
    fn audit_counts(&self) -> Result<Vec<(String, u64)>, StoreError> {
        self.check("audit_counts")?;
        self.inner.audit_counts()
    }
    fn ping(&self) -> Result<(), StoreError> {
        self.check("ping")?;
        self.inner.ping()
    }
}

fn fail_closed_on_a_single_failing_call(b: Backend) {
    let backing = b.open();
    let trip = Arc::new(Trip { inner: backing.store.clone(), failing: Mutex::new(Vec::new()) });
    let store = TestStore {
        store: trip.clone(),
        dir: None,
        path: None,
        #[cfg(feature = "postgres-tests")]
        postgres: None,
    };
    let f = Fixture::on_store(store, Config::default());
    let email = "alice@example.com";
    let internal = |r: Result<(), Error>, what: &str| {
        let e = r.expect_err(what);
        assert_eq!((e.kind(), e.code(), e.message()), INTERNAL, "{what}");
    };
    // Sign-in: the code checks out but the contact cannot be stored: 500, not signed in.
    let t = open(&f);
    let code = f.service.request_sign_in_code(&t, email).unwrap();
    trip.fail(&["contact_for_email"]);
    internal(f.service.sign_in(&t, email, &code.code).map(drop), "contact_for_email");
    trip.fail(&[]);
    assert!(!f.service.session_state(&t).unwrap().signed_in());
    // Sign-in: the contact's 2FA record cannot be read: 500 (not a state without 2FA).
    let code = f.service.request_sign_in_code(&t, email).unwrap();
    trip.fail(&["contact"]);
    internal(f.service.sign_in(&t, email, &code.code).map(drop), "sign-in, contact read");
    trip.fail(&[]);
    let code = f.service.request_sign_in_code(&t, email).unwrap();
    let contact = f.service.sign_in(&t, email, &code.code).unwrap().contact_id.unwrap();

    // The state of an enabled contact cannot be read: never "may purchase".
    let totp = peer(&f.service.create_2fa(&f.partner, &contact, None).unwrap().manual);
    f.service.enable_2fa(&f.partner, &contact, code_now(&f, &totp).as_str()).unwrap();
    for failing in ["contact", "partner"] {
        trip.fail(&[failing]);
        internal(f.service.session_state(&t).map(drop), &format!("state, {failing}"));
        internal(place(&f, &t, &btc("25")).map(drop), &format!("order, {failing}"));
        internal(f.service.session_mark_kyc(&t).map(drop), &format!("kyc, {failing}"));
        trip.fail(&[]);
    }
    assert_eq!(f.service.session_state(&t).unwrap().two_factor, Some(TwoFactorStep::Verify));
    f.clock.advance(30);
    f.service.session_verify_2fa(&t, code_now(&f, &totp).as_str()).unwrap();

    // Orders: the insert fails: 500, nothing stored.
    trip.fail(&["insert_order"]);
    internal(place(&f, &t, &btc("25")).map(drop), "insert_order");
    trip.fail(&[]);
    assert!(f.service.orders(&f.partner, &contact, None, 100).unwrap().orders.is_empty());
    // The settlement fails after the insert: 500, and no order is ever read as completed.
    trip.fail(&["update_order"]);
    internal(place(&f, &t, &btc("25")).map(drop), "update_order");
    trip.fail(&[]);
    let kept = f.service.orders(&f.partner, &contact, None, 100).unwrap().orders;
    assert!(kept.iter().all(|o| o.status != OrderStatus::Completed), "{kept:?}");
    drop(backing);
}

fn an_order_queues_its_webhooks_in_its_own_transactions(b: Backend) {
    let f = Fixture::new(b);
    let (token, contact) = signed_in(&f, "webhooks@example.com");
    // No endpoint: nothing is queued.
    place(&f, &token, &btc("25")).unwrap();
    assert!(f.service.store().webhook_deliveries(&f.partner).unwrap().is_empty());
    let url = "https://93.184.216.34/hooks";
    let (both, _) = f.service.create_webhook_endpoint(&f.partner, url, &["order.created", "order.completed"]).unwrap();
    let (done, _) = f.service.create_webhook_endpoint(&f.partner, url, &["order.completed"]).unwrap();
    let (_, _) = f.service.create_webhook_endpoint(&f.partner, url, &["2fa.enabled"]).unwrap();
    let order = place(&f, &token, &btc("30")).unwrap();
    let mut queued = f.service.store().webhook_deliveries(&f.partner).unwrap();
    // Both events are of the same second: in any order.
    queued.sort_by(|a, b| (&a.event, a.endpoint_id).cmp(&(&b.event, b.endpoint_id)));
    let shown: Vec<(&str, uuid::Uuid, u32, &str)> =
        queued.iter().map(|d| (d.event.as_str(), d.endpoint_id, d.attempts, d.state.as_str())).collect();
    let mut completed = [("order.completed", both.id, 0, "pending"), ("order.completed", done.id, 0, "pending")];
    completed.sort_by_key(|(_, id, _, _)| *id);
    let mut want = completed.to_vec();
    want.push(("order.created", both.id, 0, "pending"));
    assert_eq!(shown, want);
    // One message per event: the same id for every endpoint.
    assert_eq!(queued[0].message_id, queued[1].message_id);
    assert_ne!(queued[0].message_id, queued[2].message_id);
    assert!(queued.iter().all(|d| d.message_id.starts_with("msg_") && d.next_at == order.created_at));
    let _ = contact;
}
