//! ONE conformance suite, run against every store: the store primitives, every row of the
//! 2FA state table, replay, pending expiry, throttling, the lock and the KYC rule.

mod common;

use common::{Backend, Fixture, contact};
use rampart_core::lifecycle::{self, MSG_DISABLED};
use rampart_core::store::{AuditEvent, ContactRecord, PartnerRecord};
use rampart_core::{
    Config, ContactId, Environment, Error, ErrorKind, KeyRing, PartnerId, RewrapReport, Service, Token, Verification,
};

fn assert_err<T: std::fmt::Debug>(r: Result<T, Error>, kind: ErrorKind, code: u16, message: &str) {
    let e = r.expect_err("expected an error");
    assert_eq!((e.kind(), e.code(), e.message()), (kind, code, message));
}

fn missing(r: Result<impl std::fmt::Debug, Error>) {
    assert_err(r, ErrorKind::TokenMissing, 401, "Google 2FA requires the token to be passed in");
}

fn failed(r: Result<impl std::fmt::Debug, Error>) {
    assert_err(r, ErrorKind::TokenFailed, 401, "Google 2FA failed");
}

macro_rules! conformance {
    ($($case:ident),* $(,)?) => {
        mod memory { $( #[test] fn $case() { super::$case(super::Backend::Memory) } )* }
        mod sqlite { $( #[test] fn $case() { super::$case(super::Backend::Sqlite) } )* }
    };
}

conformance!(
    store_partners,
    store_contacts,
    store_kyc_list_and_audit,
    store_contacts_with_secrets_cursor,
    rewrap_after_key_rotation,
    rewrap_leaves_what_no_key_opens,
    create_when_disabled,
    create_replaces_pending,
    create_when_enabled_is_403,
    create_issuer_rules,
    enable_token_missing,
    enable_without_pending,
    enable_wrong_token,
    enable_success,
    enable_when_enabled,
    disable_token_missing,
    disable_wrong_token,
    disable_success_erases_secret,
    disable_when_disabled,
    status_messages,
    verify_outcomes,
    replay_same_code_twice,
    replay_earlier_code_after_later,
    enabling_code_cannot_disable,
    create_never_resets_last_step,
    pending_expires,
    throttle_schedule,
    throttle_shared_and_missing_token_not_counted,
    lock_at_100_and_operator_reset,
    throttling_off_counts_but_never_refuses,
    swapped_ciphertexts_fail_closed,
    kyc_rule,
);

fn partner_record(byte: u8) -> PartnerRecord {
    PartnerRecord {
        id: PartnerId::random(),
        name: format!("p{byte}"),
        environment: Environment::Production,
        secret_key_hash: [byte; 32],
        publishable_key: format!("pk_production_{byte}"),
        widget_text: None,
        widget_button_url: None,
        two_factor_waived: false,
        created_at: 7,
        widget_origins: Vec::new(),
        widget_approved: false,
    }
}

fn store_partners(b: Backend) {
    let t = b.open();
    let s = &t.store;
    let p = partner_record(1);
    s.insert_partner(&p).unwrap();
    assert_eq!(s.partner(&p.id).unwrap(), Some(p.clone()));
    assert_eq!(s.partner_by_secret_key_hash(&[1; 32]).unwrap(), Some(p.clone()));
    assert_eq!(s.partner_by_secret_key_hash(&[2; 32]).unwrap(), None);
    assert_eq!(s.partner_by_publishable_key("pk_production_1").unwrap(), Some(p.clone()));
    assert_eq!(s.partner_by_publishable_key("pk_production_9").unwrap(), None);
    assert!(matches!(s.insert_partner(&p), Err(rampart_core::StoreError::Conflict(_))));
    let same_key = PartnerRecord { id: PartnerId::random(), publishable_key: "other".into(), ..p.clone() };
    assert!(matches!(s.insert_partner(&same_key), Err(rampart_core::StoreError::Conflict(_))));
    assert!(!s.update_partner(&PartnerId::random(), &mut |_| unreachable!()).unwrap());
    assert!(
        s.update_partner(&p.id, &mut |r| {
            r.widget_text = Some("Done".into());
            true
        })
        .unwrap()
    );
    assert!(
        s.update_partner(&p.id, &mut |r| {
            r.widget_text = Some("not written".into());
            false
        })
        .unwrap()
    );
    assert_eq!(s.partner(&p.id).unwrap().unwrap().widget_text.as_deref(), Some("Done"));
    let origins = vec!["https://a.example".to_owned(), "https://b.example:8443".to_owned()];
    assert!(
        s.update_partner(&p.id, &mut |r| {
            r.widget_origins.clone_from(&origins);
            r.widget_approved = true;
            true
        })
        .unwrap()
    );
    let read = s.partner(&p.id).unwrap().unwrap();
    assert_eq!((read.widget_origins, read.widget_approved), (origins, true));
    s.insert_partner(&partner_record(2)).unwrap();
    assert_eq!(s.count_partners().unwrap(), 2);
    s.ping().unwrap();
}

fn store_contacts(b: Backend) {
    let t = b.open();
    let s = &t.store;
    let (p, q, c) = (PartnerId::random(), PartnerId::random(), contact());
    assert_eq!(s.contact(&p, &c).unwrap(), None);
    s.update_contact(&p, &c, &mut |r| {
        assert_eq!(*r, ContactRecord::default());
        r.failures = 3;
        false
    })
    .unwrap();
    assert_eq!(s.contact(&p, &c).unwrap(), None, "a false return writes nothing");
    assert_eq!(s.contact_enabled(&p, &c).unwrap(), None, "never written");
    let full = ContactRecord {
        kyc_passed: true,
        enabled: true,
        secret: Some(vec![1, 2, 3]),
        pending: Some(vec![4]),
        pending_created_at: Some(u64::from(u32::MAX) + 1),
        last_step: Some(666_666_666),
        failures: 99,
        last_failure_at: Some(12),
    };
    s.update_contact(&p, &c, &mut |r| {
        *r = full.clone();
        true
    })
    .unwrap();
    assert_eq!(s.contact(&p, &c).unwrap(), Some(full.clone()));
    assert_eq!(s.contact(&q, &c).unwrap(), None, "keyed by partner too");
    assert_eq!((s.contact_enabled(&p, &c).unwrap(), s.contact_enabled(&q, &c).unwrap()), (Some(true), None));
    s.update_contact(&p, &c, &mut |r| {
        assert_eq!(*r, full);
        r.secret = None;
        r.enabled = false;
        true
    })
    .unwrap();
    assert_eq!(s.contact(&p, &c).unwrap().unwrap().secret, None);
    assert_eq!(s.contact_enabled(&p, &c).unwrap(), Some(false));
}

fn store_kyc_list_and_audit(b: Backend) {
    let t = b.open();
    let s = &t.store;
    let (p, q) = (PartnerId::random(), PartnerId::random());
    let mut ids: Vec<ContactId> = (0..5).map(|_| contact()).collect();
    for (i, c) in ids.iter().enumerate() {
        s.update_contact(&p, c, &mut |r| {
            r.kyc_passed = i != 4;
            r.enabled = i == 3;
            true
        })
        .unwrap();
        s.update_contact(&q, c, &mut |r| {
            r.kyc_passed = true;
            true
        })
        .unwrap();
    }
    let mut want = ids[..3].to_vec();
    want.sort();
    assert_eq!(s.kyc_contacts_without_2fa(&p).unwrap(), want);
    ids.sort();
    assert_eq!(s.kyc_contacts_without_2fa(&q).unwrap(), ids);
    let e1 = AuditEvent { at: 1, operator: "ops".into(), action: "a".into(), partner_id: p, contact_id: None };
    let e2 = AuditEvent { at: 2, operator: "ops".into(), action: "b".into(), partner_id: q, contact_id: Some(ids[0]) };
    s.append_audit(&e1).unwrap();
    s.append_audit(&e2).unwrap();
    assert_eq!(s.audit_log().unwrap(), vec![e1, e2]);
}

fn store_contacts_with_secrets_cursor(b: Backend) {
    let t = b.open();
    let s = &t.store;
    let (p, q) = (PartnerId::random(), PartnerId::random());
    let mut want = Vec::new();
    for (i, partner) in [p, q, p, q, p, q, p].iter().enumerate() {
        let c = contact();
        s.update_contact(partner, &c, &mut |r| {
            // Enabled secret, pending secret, both, or none (a KYC mark only).
            r.secret = (i % 4 == 0 || i % 4 == 2).then(|| vec![1]);
            r.pending = (i % 4 == 1 || i % 4 == 2).then(|| vec![2]);
            r.kyc_passed = true;
            true
        })
        .unwrap();
        if i % 4 != 3 {
            want.push((*partner, c));
        }
    }
    want.sort();
    assert_eq!(s.contacts_with_secrets(None, 100).unwrap(), want);
    // Walked two at a time, each page after the last key of the one before.
    let (mut walked, mut cursor) = (Vec::new(), None);
    loop {
        let page = s.contacts_with_secrets(cursor, 2).unwrap();
        assert!(page.len() <= 2);
        let Some(&last) = page.last() else { break };
        walked.extend(page);
        cursor = Some(last);
    }
    assert_eq!(walked, want);
    assert_eq!(s.contacts_with_secrets(None, 0).unwrap(), vec![]);
}

/// A service on the fixture's store with another key ring (as after editing the key file).
fn with_keys(f: &Fixture, keys: KeyRing) -> Service {
    Service::builder_shared(f.store.store.clone()).master_keys(keys).clock(f.clock.clone()).build().unwrap()
}

fn rewrap_after_key_rotation(b: Backend) {
    let f = Fixture::new(b); // sealed under key 1
    let (on, pending, plain) = (contact(), contact(), contact());
    let on_secret = f.enabled(&on);
    let pending_secret = f.create(&pending);
    f.service.set_kyc_passed("ops", &f.partner, &plain, true).unwrap();
    let other = f.service.create_partner("Other", Environment::Sandbox).unwrap().partner_id;
    f.service.create_2fa(&other, &on, None).unwrap();
    let audit_before = f.service.audit_log().unwrap().len();

    // Key 2 added: older rows still open under key 1, new writes use key 2.
    let mut both = KeyRing::new(1, &[42; 32]);
    both.add(2, &[43; 32]);
    let rotated = with_keys(&f, both);
    let report = rotated.rewrap_secrets("ops").unwrap();
    assert_eq!(report, RewrapReport { key_id: 2, examined: 3, rewrapped: 3, unopenable: 0 });
    let key2 = KeyRing::new(2, &[43; 32]);
    for (partner, c) in [(f.partner, on), (f.partner, pending), (other, on)] {
        let r = f.service.store().contact(&partner, &c).unwrap().unwrap();
        assert!([&r.secret, &r.pending].into_iter().flatten().all(|s| key2.is_current(s)), "{c} re-sealed");
    }
    // One audit event per partner touched, written by the first run only.
    let events: Vec<_> = rotated.audit_log().unwrap().into_iter().skip(audit_before).collect();
    assert_eq!(events.iter().map(|e| (e.action.as_str(), e.partner_id)).collect::<Vec<_>>(), {
        let mut want = vec![("keys.rewrap", f.partner), ("keys.rewrap", other)];
        want.sort_by_key(|(_, p)| *p);
        want
    });
    assert_eq!(
        rotated.rewrap_secrets("ops").unwrap(),
        RewrapReport { key_id: 2, examined: 3, rewrapped: 0, unopenable: 0 }
    );
    assert_eq!(rotated.audit_log().unwrap().len(), audit_before + 2, "a run that changes nothing logs nothing");

    // Key 1 removed: every secret still works, the replay state kept.
    let only2 = with_keys(&f, key2);
    let code = f.code(&on_secret, 0);
    assert_eq!(only2.verify_2fa(&f.partner, &on, code.as_str()).unwrap(), Verification::Accepted);
    assert_eq!(only2.verify_2fa(&f.partner, &on, code.as_str()).unwrap(), Verification::Rejected, "replay");
    only2.enable_2fa(&f.partner, &pending, f.code(&pending_secret, 0).as_str()).unwrap();
    assert!(only2.status_2fa(&f.partner, &pending).unwrap());
    assert_err(
        only2.rewrap_secrets(" "),
        ErrorKind::InvalidInput,
        400,
        "operator must name who acts, without control characters",
    );
}

fn rewrap_leaves_what_no_key_opens(b: Backend) {
    let f = Fixture::new(b);
    let (c, damaged) = (contact(), contact());
    f.enabled(&c);
    f.enabled(&damaged);
    // Key 1 removed too early: the ring opens none of key 1's secrets, so it is refused at start.
    let e = Service::builder_shared(f.store.store.clone()).master_keys(KeyRing::new(2, &[43; 32])).build().unwrap_err();
    assert_eq!(e.kind(), rampart_core::ErrorKind::Config);
    assert_eq!(
        e.message(),
        "master key ring: stored 2FA secrets are sealed under key id 1, which it does not hold; put that key back"
    );
    // One damaged ciphertext: key 1 still opens the other, so the ring starts; rewrap moves the
    // good one to key 2 and leaves the damaged one as it is.
    f.service
        .store()
        .update_contact(&f.partner, &damaged, &mut |r| {
            if let Some(s) = r.secret.as_mut() {
                *s.last_mut().unwrap() ^= 1;
            }
            true
        })
        .unwrap();
    let before = f.record(&damaged);
    let mut both = KeyRing::new(1, &[42; 32]);
    both.add(2, &[43; 32]);
    let audit_before = f.service.audit_log().unwrap().len();
    let rotated = with_keys(&f, both);
    assert_eq!(
        rotated.rewrap_secrets("ops").unwrap(),
        RewrapReport { key_id: 2, examined: 2, rewrapped: 1, unopenable: 1 }
    );
    assert_eq!(f.record(&damaged), before);
    assert_eq!(rotated.audit_log().unwrap().len(), audit_before + 1);
}

fn create_when_disabled(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let setup = f.service.create_2fa(&f.partner, &c, None).unwrap();
    assert_eq!(setup.manual.len(), 32);
    assert!(setup.manual.bytes().all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b)));
    assert!(setup.qr_code.starts_with("data:image/png;base64,iVBORw0KGgo"));
    assert_eq!(
        setup.uri,
        format!(
            "otpauth://totp/Rampart2FA:{c}?secret={}&issuer=Rampart2FA&algorithm=SHA1&digits=6&period=30",
            setup.manual
        )
    );
    assert_eq!(format!("{setup:?}"), "TwoFactorSetup { <redacted> }");
    assert!(!f.service.status_2fa(&f.partner, &c).unwrap());
    let rec = f.record(&c);
    assert!(rec.pending.is_some() && !rec.enabled && rec.secret.is_none());
    assert_eq!(lifecycle::MSG_CREATED, "Successfully created 2fa!");
}

fn create_replaces_pending(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let first = f.create(&c);
    let second = f.create(&c);
    failed(f.service.enable_2fa(&f.partner, &c, f.code(&first, 0).as_str()));
    f.service.enable_2fa(&f.partner, &c, f.code(&second, 0).as_str()).unwrap();
}

fn create_when_enabled_is_403(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    f.enabled(&c);
    assert_err(
        f.service.create_2fa(&f.partner, &c, None),
        ErrorKind::MustDisableFirst,
        403,
        "Must disable 2FA before creating a new one",
    );
    assert!(f.service.status_2fa(&f.partner, &c).unwrap());
}

fn create_issuer_rules(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let s = f.service.create_2fa(&f.partner, &c, Some("Acme Wallet")).unwrap();
    assert!(s.uri.starts_with("otpauth://totp/Acme%20Wallet:"));
    assert!(s.uri.contains("&issuer=Acme%20Wallet&"));
    let s = f.service.create_2fa(&f.partner, &c, Some("")).unwrap();
    assert!(s.uri.starts_with("otpauth://totp/Rampart2FA:"));
    assert!(f.service.create_2fa(&f.partner, &c, Some(&"é".repeat(64))).is_ok());
    for bad in ["a:b", "tab\t", "nul\0", &"x".repeat(65)] {
        let e = f.service.create_2fa(&f.partner, &c, Some(bad)).unwrap_err();
        assert_eq!((e.kind(), e.code()), (ErrorKind::IssuerInvalid, 400));
        assert!(e.message().starts_with("twoFactorIssuer "));
    }
    let s = f.service.create_2fa_with_label(&f.partner, &c, None, "alice@example.com").unwrap();
    assert!(s.uri.starts_with("otpauth://totp/Rampart2FA:alice%40example.com?"));
}

fn enable_token_missing(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    f.create(&c);
    for t in [Token::Missing, Token::parse(""), Token::parse("  ")] {
        missing(f.service.enable_2fa(&f.partner, &c, t));
    }
    assert_eq!(f.record(&c).failures, 0, "a missing token does not count");
    assert!(!f.service.status_2fa(&f.partner, &c).unwrap());
}

fn enable_without_pending(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    for t in [Token::parse("123456"), Token::Missing, Token::Malformed] {
        assert_err(
            f.service.enable_2fa(&f.partner, &c, t),
            ErrorKind::NotCreated,
            409,
            "Must create 2FA before enabling it",
        );
    }
}

fn enable_wrong_token(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let s = f.create(&c);
    failed(f.service.enable_2fa(&f.partner, &c, f.wrong_code(&s).as_str()));
    failed(f.service.enable_2fa(&f.partner, &c, "12345"));
    assert_eq!(f.record(&c).failures, 2);
    assert!(!f.service.status_2fa(&f.partner, &c).unwrap());
}

fn enable_success(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let s = f.create(&c);
    f.service.enable_2fa(&f.partner, &c, f.code(&s, 1).as_str()).unwrap();
    assert!(f.service.status_2fa(&f.partner, &c).unwrap());
    let rec = f.record(&c);
    assert!(rec.enabled && rec.secret.is_some() && rec.pending.is_none());
    assert_eq!(rec.last_step, Some(f.now() / 30 + 1));
    assert_eq!(lifecycle::MSG_ENABLED, "Successfully enabled 2fa!");
}

fn enable_when_enabled(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let s = f.enabled(&c);
    for t in [f.code(&s, 0), f.wrong_code(&s), String::new()] {
        assert_err(
            f.service.enable_2fa(&f.partner, &c, t.as_str()),
            ErrorKind::AlreadyEnabled,
            409,
            "Cannot enable 2FA again, it is already set",
        );
    }
    assert_eq!(f.record(&c).failures, 0);
}

fn disable_token_missing(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    f.enabled(&c);
    missing(f.service.disable_2fa(&f.partner, &c, Token::Missing));
    missing(f.service.disable_2fa(&f.partner, &c, " \t"));
    assert!(f.service.status_2fa(&f.partner, &c).unwrap());
}

fn disable_wrong_token(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let s = f.enabled(&c);
    failed(f.service.disable_2fa(&f.partner, &c, f.wrong_code(&s).as_str()));
    assert!(f.service.status_2fa(&f.partner, &c).unwrap());
    assert_eq!(f.record(&c).failures, 1);
}

fn disable_success_erases_secret(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let s = f.enabled(&c);
    f.service.disable_2fa(&f.partner, &c, f.code(&s, 0).as_str()).unwrap();
    assert!(!f.service.status_2fa(&f.partner, &c).unwrap());
    let rec = f.record(&c);
    assert!(!rec.enabled && rec.secret.is_none() && rec.pending.is_none());
    assert_eq!(MSG_DISABLED, "Successfully disbaled 2fa!");
}

fn disable_when_disabled(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let never = contact();
    let s = f.create(&c);
    for (who, t) in [(&c, f.code(&s, 0)), (&c, String::new()), (&never, "123456".into())] {
        assert_err(
            f.service.disable_2fa(&f.partner, who, t.as_str()),
            ErrorKind::NotEnabled,
            409,
            "2FA is not enabled",
        );
    }
}

fn status_messages(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    assert!(!f.service.status_2fa(&f.partner, &c).unwrap());
    assert_eq!(lifecycle::status_message(false), "2FA is false.");
    f.enabled(&c);
    assert!(f.service.status_2fa(&f.partner, &c).unwrap());
    assert_eq!(lifecycle::status_message(true), "2FA is true.");
}

fn verify_outcomes(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    assert_err(f.service.verify_2fa(&f.partner, &c, "123456"), ErrorKind::NotEnabled, 409, "2FA is not enabled");
    let s = f.enabled(&c);
    missing(f.service.verify_2fa(&f.partner, &c, ""));
    assert_eq!(f.service.verify_2fa(&f.partner, &c, f.wrong_code(&s).as_str()).unwrap(), Verification::Rejected);
    assert_eq!(f.service.verify_2fa(&f.partner, &c, "1234567").unwrap(), Verification::Rejected);
    assert_eq!(f.record(&c).failures, 2);
    assert_eq!(f.service.verify_2fa(&f.partner, &c, f.code(&s, 0).as_str()).unwrap(), Verification::Accepted);
    assert_eq!(f.record(&c).failures, 0, "a success resets the count");
    assert_eq!(lifecycle::MSG_VALID, "2FA token is valid.");
}

fn replay_same_code_twice(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let s = f.enabled(&c);
    let code = f.code(&s, 0);
    assert!(f.service.verify_2fa(&f.partner, &c, code.as_str()).unwrap().is_accepted());
    assert_eq!(f.service.verify_2fa(&f.partner, &c, code.as_str()).unwrap(), Verification::Rejected);
    assert_eq!(f.record(&c).failures, 0, "a replay does not count");
}

fn replay_earlier_code_after_later(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let s = f.enabled(&c);
    assert!(f.service.verify_2fa(&f.partner, &c, f.code(&s, 1).as_str()).unwrap().is_accepted());
    assert_eq!(f.service.verify_2fa(&f.partner, &c, f.code(&s, 0).as_str()).unwrap(), Verification::Rejected);
    assert_eq!(f.service.verify_2fa(&f.partner, &c, f.code(&s, -1).as_str()).unwrap(), Verification::Rejected);
}

fn enabling_code_cannot_disable(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let s = f.create(&c);
    let code = f.code(&s, 0);
    f.service.enable_2fa(&f.partner, &c, code.as_str()).unwrap();
    failed(f.service.disable_2fa(&f.partner, &c, code.as_str()));
    assert!(f.service.status_2fa(&f.partner, &c).unwrap());
}

fn create_never_resets_last_step(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let s = f.create(&c);
    // Enable with the code of step t+1, then disable at t+1's successor is impossible until the
    // clock moves: the last accepted step stays t+1 through a new create.
    f.service.enable_2fa(&f.partner, &c, f.code(&s, 1).as_str()).unwrap();
    f.clock.advance(60);
    f.service.disable_2fa(&f.partner, &c, f.code(&s, 0).as_str()).unwrap();
    let last = f.record(&c).last_step.unwrap();
    let s2 = f.create(&c);
    assert_eq!(f.record(&c).last_step, Some(last));
    failed(f.service.enable_2fa(&f.partner, &c, f.code(&s2, 0).as_str()));
    assert_eq!(f.record(&c).failures, 0, "refused as a replay, not counted");
    f.service.enable_2fa(&f.partner, &c, f.code(&s2, 1).as_str()).unwrap();
}

fn pending_expires(b: Backend) {
    let f = Fixture::new(b);
    let (c1, c2) = (contact(), contact());
    let s1 = f.create(&c1);
    let s2 = f.create(&c2);
    f.clock.advance(599);
    f.service.enable_2fa(&f.partner, &c1, f.code(&s1, 0).as_str()).unwrap();
    f.clock.advance(1);
    assert_err(
        f.service.enable_2fa(&f.partner, &c2, f.code(&s2, 0).as_str()),
        ErrorKind::NotCreated,
        409,
        "Must create 2FA before enabling it",
    );
}

fn throttle_schedule(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let s = f.enabled(&c);
    let verify = |t: &str| f.service.verify_2fa(&f.partner, &c, t);
    for _ in 0..4 {
        assert_eq!(verify(&f.wrong_code(&s)).unwrap(), Verification::Rejected);
    }
    let mut expected = vec![30u64, 60, 120, 240, 480, 960, 1920, 3600, 3600, 3600];
    expected.reverse();
    for k in 5..=14u32 {
        assert_eq!(verify(&f.wrong_code(&s)).unwrap(), Verification::Rejected, "failure {k} is evaluated");
        assert_eq!(f.record(&c).failures, k);
        let delay = expected.pop().unwrap();
        // Refused: the same answer for the right code, a wrong code, a malformed one.
        let answers: Vec<(ErrorKind, u16, String, Option<u64>)> = [f.code(&s, 0), f.wrong_code(&s), "x".into()]
            .iter()
            .map(|t| {
                let e = verify(t).unwrap_err();
                (e.kind(), e.code(), e.message().to_owned(), e.retry_after())
            })
            .collect();
        let want = (
            ErrorKind::Throttled,
            429,
            format!("Too many failed 2FA attempts, try again in {delay} seconds"),
            Some(delay),
        );
        assert!(answers.iter().all(|a| *a == want), "k = {k}: {answers:?}");
        assert_eq!(f.record(&c).failures, k, "a refused attempt is not counted");
        f.clock.advance(delay - 1);
        assert_eq!(verify(&f.code(&s, 0)).unwrap_err().retry_after(), Some(1));
        f.clock.advance(1);
    }
    // A success after the delay resets the count; the next failure is not throttled.
    assert!(verify(&f.code(&s, 0)).unwrap().is_accepted());
    assert_eq!(f.record(&c).failures, 0);
    assert_eq!(verify(&f.wrong_code(&s)).unwrap(), Verification::Rejected);
    assert_eq!(verify(&f.wrong_code(&s)).unwrap(), Verification::Rejected);
}

fn throttle_shared_and_missing_token_not_counted(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let s = f.enabled(&c);
    for _ in 0..3 {
        assert_eq!(f.service.verify_2fa(&f.partner, &c, f.wrong_code(&s).as_str()).unwrap(), Verification::Rejected);
    }
    missing(f.service.verify_2fa(&f.partner, &c, Token::Missing));
    failed(f.service.disable_2fa(&f.partner, &c, f.wrong_code(&s).as_str()));
    assert_eq!(f.record(&c).failures, 4);
    f.service.create_2fa(&f.partner, &c, None).unwrap_err(); // create (refused here) never resets
    failed(f.service.disable_2fa(&f.partner, &c, "bogus"));
    // Five failures across verify and disable: disable is now refused, and so is a missing token.
    let e = f.service.disable_2fa(&f.partner, &c, f.code(&s, 0).as_str()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Throttled);
    assert_eq!(f.service.disable_2fa(&f.partner, &c, Token::Missing).unwrap_err().kind(), ErrorKind::Throttled);
    // The state answer comes first: enable on an enabled contact is still 409.
    assert_eq!(f.service.enable_2fa(&f.partner, &c, Token::Missing).unwrap_err().kind(), ErrorKind::AlreadyEnabled);
    // A disabled contact's create does not reset the count either.
    let d = contact();
    let sd = f.create(&d);
    for _ in 0..5 {
        failed(f.service.enable_2fa(&f.partner, &d, f.wrong_code(&sd).as_str()));
    }
    let sd = f.create(&d);
    assert_eq!(f.record(&d).failures, 5);
    assert_eq!(f.service.enable_2fa(&f.partner, &d, f.code(&sd, 0).as_str()).unwrap_err().kind(), ErrorKind::Throttled);
}

fn lock_at_100_and_operator_reset(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let s = f.enabled(&c);
    for k in 1..=100u32 {
        assert_eq!(f.service.verify_2fa(&f.partner, &c, f.wrong_code(&s).as_str()).unwrap(), Verification::Rejected);
        if let Some(d) = lifecycle::throttle_delay(k) {
            f.clock.advance(d);
        }
    }
    assert_eq!(f.record(&c).failures, 100);
    f.clock.advance(365 * 24 * 3600);
    for t in [f.code(&s, 0), f.wrong_code(&s), String::new()] {
        assert_err(
            f.service.verify_2fa(&f.partner, &c, t.as_str()),
            ErrorKind::Locked,
            423,
            "2FA is locked after too many failed attempts",
        );
        assert_eq!(f.service.disable_2fa(&f.partner, &c, t.as_str()).unwrap_err().kind(), ErrorKind::Locked);
    }
    assert_eq!(f.record(&c).failures, 100);
    assert!(f.service.reset_lock("", &f.partner, &c).is_err(), "the operator must be named");
    f.service.reset_lock("ops@rampart", &f.partner, &c).unwrap();
    assert_eq!(f.record(&c).failures, 0);
    assert!(f.service.verify_2fa(&f.partner, &c, f.code(&s, 0).as_str()).unwrap().is_accepted());
    let log = f.service.audit_log().unwrap();
    let last = log.last().unwrap();
    assert_eq!((last.operator.as_str(), last.action.as_str()), ("ops@rampart", "contact.reset_lock"));
    assert_eq!((last.partner_id, last.contact_id), (f.partner, Some(c)));
}

fn throttling_off_counts_but_never_refuses(b: Backend) {
    let f = Fixture::with_config(b, Config { throttling: false, ..Config::default() });
    let c = contact();
    let s = f.enabled(&c);
    for _ in 0..120 {
        assert_eq!(f.service.verify_2fa(&f.partner, &c, f.wrong_code(&s).as_str()).unwrap(), Verification::Rejected);
    }
    assert_eq!(f.record(&c).failures, 120);
    assert!(f.service.verify_2fa(&f.partner, &c, f.code(&s, 0).as_str()).unwrap().is_accepted());
}

fn swapped_ciphertexts_fail_closed(b: Backend) {
    let f = Fixture::new(b);
    let (c1, c2) = (contact(), contact());
    let s1 = f.enabled(&c1);
    let s2 = f.enabled(&c2);
    let (r1, r2) = (f.record(&c1), f.record(&c2));
    let store = f.service.store();
    for (who, rec) in [(&c1, &r2), (&c2, &r1)] {
        store
            .update_contact(&f.partner, who, &mut |r| {
                r.secret.clone_from(&rec.secret);
                true
            })
            .unwrap();
    }
    // Valid codes of either secret: the swapped ciphertext does not open, so nothing passes.
    for (who, s) in [(&c1, &s1), (&c1, &s2), (&c2, &s1), (&c2, &s2)] {
        assert_err(
            f.service.verify_2fa(&f.partner, who, f.code(s, 0).as_str()),
            ErrorKind::VerifyFailed,
            500,
            "Error verifying 2FA",
        );
        assert_err(
            f.service.disable_2fa(&f.partner, who, f.code(s, 0).as_str()),
            ErrorKind::DisableFailed,
            500,
            "Error disabling 2FA",
        );
    }
    assert!(f.service.status_2fa(&f.partner, &c1).unwrap());
    // The same ciphertext under another partner fails too.
    let other = f.service.create_partner("Other", Environment::Sandbox).unwrap().partner_id;
    store
        .update_contact(&other, &c1, &mut |r| {
            *r = ContactRecord { enabled: true, ..r1.clone() };
            true
        })
        .unwrap();
    assert_eq!(f.service.verify_2fa(&other, &c1, f.code(&s1, 0).as_str()).unwrap_err().kind(), ErrorKind::VerifyFailed);
}

fn kyc_rule(b: Backend) {
    let f = Fixture::new(b);
    let (c, d) = (contact(), contact());
    assert!(!f.service.is_2fa_required(&f.partner, &c).unwrap());
    assert!(f.service.may_purchase(&f.partner, &c).unwrap());
    f.service.set_kyc_passed("ops", &f.partner, &c, true).unwrap();
    f.service.set_kyc_passed("ops", &f.partner, &d, true).unwrap();
    assert!(f.service.is_2fa_required(&f.partner, &c).unwrap());
    assert!(!f.service.may_purchase(&f.partner, &c).unwrap());
    let mut both = vec![c, d];
    both.sort();
    assert_eq!(f.service.contacts_requiring_2fa(&f.partner).unwrap(), both);
    f.enabled(&c);
    assert!(f.service.is_2fa_required(&f.partner, &c).unwrap());
    assert!(f.service.may_purchase(&f.partner, &c).unwrap());
    assert_eq!(f.service.contacts_requiring_2fa(&f.partner).unwrap(), vec![d]);
    f.service.set_2fa_waiver("ops", &f.partner, true).unwrap();
    assert!(!f.service.is_2fa_required(&f.partner, &d).unwrap());
    assert!(f.service.may_purchase(&f.partner, &d).unwrap());
    assert!(f.service.contacts_requiring_2fa(&f.partner).unwrap().is_empty());
    f.service.set_2fa_waiver("ops", &f.partner, false).unwrap();
    assert!(!f.service.may_purchase(&f.partner, &d).unwrap());
    let actions: Vec<String> = f.service.audit_log().unwrap().into_iter().map(|e| e.action).collect();
    assert_eq!(actions, ["contact.mark_kyc", "contact.mark_kyc", "partner.waive_2fa", "partner.unwaive_2fa"]);
    let nobody = PartnerId::random();
    assert_eq!(f.service.is_2fa_required(&nobody, &c).unwrap_err().kind(), ErrorKind::PartnerNotFound);
    assert_eq!(f.service.set_2fa_waiver("ops", &nobody, true).unwrap_err().kind(), ErrorKind::PartnerNotFound);
}
