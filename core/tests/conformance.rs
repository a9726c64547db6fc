//! ONE conformance suite, run against every store: the store primitives, every row of the
//! 2FA state table, replay, pending expiry, throttling, the lock and the KYC rule.

#[macro_use]
mod common;

use common::{Backend, Fixture, T0, contact};
use rampart_core::ids::OrderId;
use rampart_core::lifecycle::{self, MSG_DISABLED};
use rampart_core::store::{
    ContactRecord, Effects, OrderRecord, OrderStatus, PartnerRecord, RecoveryCodeSet, RecoveryCodeSlot, SessionRecord,
    SignInRecord, Store, StoreError,
};
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

conformance!(
    store_partners,
    store_contacts,
    store_kyc_list_and_audit,
    store_contacts_with_secrets_cursor,
    store_sessions,
    store_sign_ins,
    store_emails,
    store_orders,
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
        secret_key_last4: None,
        previous_key: None,
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
    assert!(!s.update_partner(&PartnerId::random(), &mut |_, _| unreachable!()).unwrap());
    assert!(
        s.update_partner(&p.id, &mut |r, _| {
            r.widget_text = Some("Done".into());
            true
        })
        .unwrap()
    );
    assert!(
        s.update_partner(&p.id, &mut |r, _| {
            r.widget_text = Some("not written".into());
            false
        })
        .unwrap()
    );
    assert_eq!(s.partner(&p.id).unwrap().unwrap().widget_text.as_deref(), Some("Done"));
    let origins = vec!["https://a.example".to_owned(), "https://b.example:8443".to_owned()];
    assert!(
        s.update_partner(&p.id, &mut |r, _| {
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
    s.update_contact(&p, &c, &mut |r, _| {
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
        recovery: Some(RecoveryCodeSet {
            id: [7; 16],
            codes: (0..10u8).map(|i| RecoveryCodeSlot { hash: [i; 32], used: i % 3 == 0 }).collect(),
        }),
        recovery_failures: 4,
        recovery_last_failure_at: Some(u64::from(u32::MAX) + 9),
        hold_until: Some(1_900_000_000),
        member: true,
    };
    s.update_contact(&p, &c, &mut |r, _| {
        *r = full.clone();
        true
    })
    .unwrap();
    assert_eq!(s.contact(&p, &c).unwrap(), Some(full.clone()));
    assert_eq!(s.contact(&q, &c).unwrap(), None, "keyed by partner too");
    assert_eq!((s.contact_enabled(&p, &c).unwrap(), s.contact_enabled(&q, &c).unwrap()), (Some(true), None));
    s.update_contact(&p, &c, &mut |r, _| {
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
        s.update_contact(&p, c, &mut |r, _| {
            r.kyc_passed = i != 4;
            r.enabled = i == 3;
            true
        })
        .unwrap();
        s.update_contact(&q, c, &mut |r, _| {
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
}

fn store_contacts_with_secrets_cursor(b: Backend) {
    let t = b.open();
    let s = &t.store;
    let (p, q) = (PartnerId::random(), PartnerId::random());
    let mut want = Vec::new();
    for (i, partner) in [p, q, p, q, p, q, p].iter().enumerate() {
        let c = contact();
        s.update_contact(partner, &c, &mut |r, _| {
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

fn session_record(byte: u8, partner: PartnerId, last_seen_at: u64) -> SessionRecord {
    SessionRecord {
        token_hash: [byte; 32],
        partner_id: partner,
        origin: format!("https://shop{byte}.example"),
        created_at: 100,
        last_seen_at,
        email: None,
        contact_id: None,
        two_factor_at: None,
    }
}

/// The session as stored, read through an update that writes nothing.
fn session(s: &dyn Store, token_hash: &[u8; 32]) -> Option<SessionRecord> {
    s.update_session(token_hash, &mut |_| false).unwrap()
}

fn store_sessions(b: Backend) {
    let t = b.open();
    let s = &*t.store;
    let (p, c) = (PartnerId::random(), contact());
    let a = session_record(1, p, 1000);
    s.insert_session(&a).unwrap();
    assert_eq!(session(s, &a.token_hash), Some(a.clone()));
    let same_hash = SessionRecord { partner_id: PartnerId::random(), origin: String::new(), ..a.clone() };
    assert!(matches!(s.insert_session(&same_hash), Err(StoreError::Conflict(_))));
    assert_eq!(session(s, &a.token_hash), Some(a.clone()), "the clash changed nothing");

    // Every field round-trips, the optional ones set and unset, on insert and on update.
    let top = SessionRecord {
        origin: String::new(),
        email: Some("alice@example.com".into()),
        contact_id: Some(c),
        two_factor_at: Some(u64::from(u32::MAX) + 1),
        ..session_record(2, p, 2000)
    };
    s.insert_session(&top).unwrap();
    assert_eq!(session(s, &top.token_hash), Some(top.clone()));
    let signed_in = SessionRecord {
        last_seen_at: 1001,
        email: Some("bob@example.com".into()),
        contact_id: Some(c),
        two_factor_at: Some(1001),
        ..a.clone()
    };
    let mut calls = 0;
    let after = s
        .update_session(&a.token_hash, &mut |r| {
            calls += 1;
            assert_eq!(*r, a);
            *r = signed_in.clone();
            true
        })
        .unwrap();
    assert_eq!((after, calls), (Some(signed_in.clone()), 1));
    assert_eq!(session(s, &a.token_hash), Some(signed_in.clone()));
    let cleared = SessionRecord { email: None, contact_id: None, two_factor_at: None, ..top.clone() };
    let after = s
        .update_session(&top.token_hash, &mut |r| {
            *r = cleared.clone();
            true
        })
        .unwrap();
    assert_eq!(after, Some(cleared.clone()));
    assert_eq!(session(s, &top.token_hash), Some(cleared));

    // A false return hands back the changed record but writes nothing.
    let after = s
        .update_session(&a.token_hash, &mut |r| {
            r.last_seen_at = 5000;
            r.two_factor_at = None;
            false
        })
        .unwrap();
    assert_eq!(after, Some(SessionRecord { last_seen_at: 5000, two_factor_at: None, ..signed_in.clone() }));
    assert_eq!(session(s, &a.token_hash), Some(signed_in));

    // Unknown hash: None, and the closure is never called.
    assert_eq!(s.update_session(&[9; 32], &mut |_| unreachable!()).unwrap(), None);

    assert!(s.delete_session(&a.token_hash).unwrap());
    assert!(!s.delete_session(&a.token_hash).unwrap());
    assert_eq!(s.update_session(&a.token_hash, &mut |_| unreachable!()).unwrap(), None);
    assert!(!s.delete_session(&[9; 32]).unwrap());
    assert!(s.delete_session(&top.token_hash).unwrap());

    // The idle purge removes exactly the sessions last seen before the bound.
    for (byte, seen) in [(10, 10), (11, 19), (12, 20), (13, 21), (14, 30), (15, 0)] {
        s.insert_session(&session_record(byte, p, seen)).unwrap();
    }
    assert_eq!(s.delete_sessions_idle_since(0).unwrap(), 0);
    assert_eq!(s.delete_sessions_idle_since(20).unwrap(), 3);
    for (byte, seen) in [(10, 10), (11, 19), (12, 20), (13, 21), (14, 30), (15, 0)] {
        let want = (seen >= 20).then(|| session_record(byte, p, seen));
        assert_eq!(session(s, &[byte; 32]), want, "last seen at {seen}");
    }
    assert_eq!(s.delete_sessions_idle_since(20).unwrap(), 0);
    assert_eq!(s.delete_sessions_idle_since(30).unwrap(), 2);
    assert_eq!(s.delete_sessions_idle_since(31).unwrap(), 1);
    assert_eq!(session(s, &[14; 32]), None);
}

/// The sign-in state as stored, read through an update that writes nothing.
fn sign_in(s: &dyn Store, partner: &PartnerId, email: &str) -> SignInRecord {
    let mut out = None;
    s.update_sign_in(partner, email, &mut |r| {
        out = Some(r.clone());
        false
    })
    .unwrap();
    out.expect("update_sign_in calls the closure")
}

fn store_sign_ins(b: Backend) {
    let t = b.open();
    let s = &*t.store;
    let (p, q) = (PartnerId::random(), PartnerId::random());
    let email = "alice@example.com";
    assert_eq!(sign_in(s, &p, email), SignInRecord::default());
    s.update_sign_in(&p, email, &mut |r| {
        r.tries = 4;
        r.sent_at.push(1);
        false
    })
    .unwrap();
    assert_eq!(sign_in(s, &p, email), SignInRecord::default(), "a false return writes nothing");

    let live = SignInRecord {
        sent_at: vec![T0, T0 + 1, u64::from(u32::MAX) + 7],
        code_hash: Some([7; 32]),
        expires_at: T0 + 600,
        tries: 2,
    };
    s.update_sign_in(&p, email, &mut |r| {
        assert_eq!(*r, SignInRecord::default());
        *r = live.clone();
        true
    })
    .unwrap();
    assert_eq!(sign_in(s, &p, email), live);
    // Keyed by (partner, email): the same email at another partner, or another email (even
    // differing in case only: the caller normalises), is a separate record.
    assert_eq!(sign_in(s, &q, email), SignInRecord::default());
    assert_eq!(sign_in(s, &p, "bob@example.com"), SignInRecord::default());
    assert_eq!(sign_in(s, &p, "Alice@example.com"), SignInRecord::default());
    let other = SignInRecord { sent_at: vec![5], code_hash: None, expires_at: 0, tries: 0 };
    s.update_sign_in(&q, email, &mut |r| {
        *r = other.clone();
        true
    })
    .unwrap();
    assert_eq!((sign_in(s, &p, email), sign_in(s, &q, email)), (live.clone(), other));

    // An empty list with a live code, then the code used up: each write replaces the record.
    let empty = SignInRecord { sent_at: Vec::new(), code_hash: Some([0; 32]), expires_at: 1, tries: 5 };
    s.update_sign_in(&p, email, &mut |r| {
        assert_eq!(*r, live);
        *r = empty.clone();
        true
    })
    .unwrap();
    assert_eq!(sign_in(s, &p, email), empty);
    s.update_sign_in(&p, email, &mut |r| {
        r.code_hash = None;
        r.sent_at = vec![9, 8, 7];
        true
    })
    .unwrap();
    assert_eq!(
        sign_in(s, &p, email),
        SignInRecord { sent_at: vec![9, 8, 7], code_hash: None, expires_at: 1, tries: 5 }
    );
}

fn store_emails(b: Backend) {
    let t = b.open();
    let s = &t.store;
    let (p, q) = (PartnerId::random(), PartnerId::random());
    let (c1, c2, c3) = (ContactId::random(), ContactId::random(), ContactId::random());
    assert_eq!(s.contact_by_email(&p, "a@example.com").unwrap(), None);
    assert_eq!(s.contact_for_email(&p, "a@example.com", c1).unwrap(), c1, "the first sign-in stores the candidate");
    assert_eq!(s.contact_for_email(&p, "a@example.com", c2).unwrap(), c1, "later ones get the first id");
    assert_eq!(s.contact_for_email(&p, "a@example.com", c1).unwrap(), c1);
    assert_eq!(s.contact_by_email(&p, "a@example.com").unwrap(), Some(c1));
    // Per partner, per (exact) email.
    assert_eq!(s.contact_by_email(&q, "a@example.com").unwrap(), None);
    assert_eq!(s.contact_for_email(&q, "a@example.com", c2).unwrap(), c2);
    assert_eq!(s.contact_by_email(&p, "b@example.com").unwrap(), None);
    assert_eq!(s.contact_for_email(&p, "b@example.com", c3).unwrap(), c3);
    assert_eq!(s.contact_for_email(&p, "b@example.com", c2).unwrap(), c3);
    assert_eq!(s.contact_by_email(&p, "A@example.com").unwrap(), None);
    assert_eq!(
        [
            s.contact_by_email(&p, "a@example.com").unwrap(),
            s.contact_by_email(&q, "a@example.com").unwrap(),
            s.contact_by_email(&p, "b@example.com").unwrap(),
            s.contact_by_email(&q, "b@example.com").unwrap(),
        ],
        [Some(c1), Some(c2), Some(c3), None]
    );
}

/// An order id from its first and last bytes (the rest zero), to fix the tie order.
fn order_id(first: u8, last: u8) -> OrderId {
    let mut bytes = [0; 16];
    (bytes[0], bytes[15]) = (first, last);
    OrderId::from_uuid(uuid::Uuid::from_bytes(bytes))
}

fn order_record(id: OrderId, partner: PartnerId, contact: ContactId, created_at: u64) -> OrderRecord {
    OrderRecord {
        id,
        partner_id: partner,
        contact_id: contact,
        coin: "btc".into(),
        amount: "25.50".into(),
        currency: "usd".into(),
        address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq".into(),
        price: "64000.00".into(),
        quantity: "0.00039843".into(),
        status: OrderStatus::Created,
        created_at,
        updated_at: created_at,
    }
}

fn store_orders(b: Backend) {
    let t = b.open();
    let s = &t.store;
    let (p, q, c, d) = (PartnerId::random(), PartnerId::random(), contact(), contact());

    let o = order_record(OrderId::random(), p, c, 50);
    s.insert_order(&o, &Effects::default()).unwrap();
    assert_eq!(s.order(&p, &o.id).unwrap(), Some(o.clone()));
    assert_eq!(s.order(&q, &o.id).unwrap(), None, "another partner's order");
    assert_eq!(s.order(&p, &OrderId::random()).unwrap(), None);
    let same_id = order_record(o.id, q, d, 60);
    assert!(matches!(s.insert_order(&same_id, &Effects::default()), Err(StoreError::Conflict(_))));
    assert_eq!(s.order(&q, &o.id).unwrap(), None, "the clash stored nothing");

    assert!(!s.update_order(&q, &o.id, &mut |_, _| unreachable!()).unwrap());
    assert!(!s.update_order(&p, &OrderId::random(), &mut |_, _| unreachable!()).unwrap());
    assert!(
        s.update_order(&p, &o.id, &mut |r, _| {
            assert_eq!(*r, o);
            r.status = OrderStatus::Completed;
            r.updated_at = 51;
            true
        })
        .unwrap()
    );
    let completed = OrderRecord { status: OrderStatus::Completed, updated_at: 51, ..o.clone() };
    assert_eq!(s.order(&p, &o.id).unwrap(), Some(completed.clone()));
    assert!(
        s.update_order(&p, &o.id, &mut |r, _| {
            r.status = OrderStatus::Failed;
            r.updated_at = 52;
            false
        })
        .unwrap()
    );
    assert_eq!(s.order(&p, &o.id).unwrap(), Some(completed.clone()), "a false return writes nothing");
    assert!(
        s.update_order(&p, &o.id, &mut |r, _| {
            r.status = OrderStatus::Failed;
            r.updated_at = 53;
            true
        })
        .unwrap()
    );
    let failed = OrderRecord { status: OrderStatus::Failed, updated_at: 53, ..o.clone() };
    assert_eq!(s.order(&p, &o.id).unwrap(), Some(failed.clone()));

    // Seven more of (p, c)'s orders, with ties on created_at broken by the id's bytes, high bit
    // set or not; each status stored as given.
    let statuses = [OrderStatus::Created, OrderStatus::Completed, OrderStatus::Failed];
    let mut seven = Vec::new();
    for (i, (created_at, id)) in [
        (5, order_id(0x10, 0)),
        (7, order_id(0xf0, 0)),
        (7, order_id(0x80, 2)),
        (7, order_id(0x7f, 0)),
        (3, order_id(0x01, 0)),
        (9, order_id(0xa0, 0)),
        (7, order_id(0x80, 1)),
    ]
    .into_iter()
    .enumerate()
    {
        let r = OrderRecord { status: statuses[i % 3], coin: format!("c{i}"), ..order_record(id, p, c, created_at) };
        s.insert_order(&r, &Effects::default()).unwrap();
        seven.push(r);
    }
    // Orders of another contact and of another partner, inside the same time range.
    let of_d = order_record(order_id(0x90, 0), p, d, 7);
    let at_q = order_record(order_id(0x91, 0), q, c, 7);
    s.insert_order(&of_d, &Effects::default()).unwrap();
    s.insert_order(&at_q, &Effects::default()).unwrap();
    assert_eq!(s.order(&p, &at_q.id).unwrap(), None);
    assert_eq!(s.order(&q, &at_q.id).unwrap(), Some(at_q.clone()));

    let by_id = |id: OrderId| seven.iter().chain([&failed]).find(|r| r.id == id).unwrap().clone();
    let want: Vec<OrderRecord> = [
        o.id,
        order_id(0xa0, 0),
        order_id(0xf0, 0),
        order_id(0x80, 2),
        order_id(0x80, 1),
        order_id(0x7f, 0),
        order_id(0x10, 0),
        order_id(0x01, 0),
    ]
    .into_iter()
    .map(by_id)
    .collect();
    assert_eq!(s.orders_for_contact(&p, &c, None, 100).unwrap(), want);
    assert_eq!(s.orders_for_contact(&p, &c, None, 2).unwrap(), want[..2]);
    assert_eq!(s.orders_for_contact(&p, &c, None, 0).unwrap(), vec![]);
    assert_eq!(s.orders_for_contact(&p, &c, Some((7, order_id(0xf0, 0))), 0).unwrap(), vec![]);
    // The cursor is strict, and need not be a stored order.
    assert_eq!(s.orders_for_contact(&p, &c, Some((7, order_id(0x80, 2))), 100).unwrap(), want[4..]);
    assert_eq!(s.orders_for_contact(&p, &c, Some((7, order_id(0x80, 0))), 100).unwrap(), want[5..]);
    assert_eq!(s.orders_for_contact(&p, &c, Some((8, OrderId::random())), 100).unwrap(), want[2..]);
    assert_eq!(s.orders_for_contact(&p, &c, Some((3, order_id(0x01, 0))), 100).unwrap(), vec![]);
    assert_eq!(s.orders_for_contact(&p, &c, Some((u64::from(u32::MAX), order_id(0, 0))), 3).unwrap(), want[..3]);

    // Pages of 3: every order exactly once, in order, then an empty page.
    let (mut walked, mut cursor, mut sizes) = (Vec::new(), None, Vec::new());
    loop {
        let page = s.orders_for_contact(&p, &c, cursor, 3).unwrap();
        sizes.push(page.len());
        let Some(last) = page.last() else { break };
        cursor = Some((last.created_at, last.id));
        walked.extend(page);
    }
    assert_eq!((walked, sizes), (want, vec![3, 3, 2, 0]));

    assert_eq!(s.orders_for_contact(&p, &d, None, 100).unwrap(), vec![of_d]);
    assert_eq!(s.orders_for_contact(&q, &c, None, 100).unwrap(), vec![at_q]);
    assert_eq!(s.orders_for_contact(&q, &d, None, 100).unwrap(), vec![]);
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
    let audit_before = common::audit_rows(&f.service).len();

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
    let events: Vec<_> = common::audit_rows(&rotated).into_iter().filter(|e| e.event == "keys.rewrapped").collect();
    assert_eq!(events.iter().map(|e| (e.event.as_str(), e.partner_id.clone())).collect::<Vec<_>>(), {
        let mut want = vec![("keys.rewrapped", f.partner), ("keys.rewrapped", other)];
        want.sort_by_key(|(_, p)| *p);
        want.into_iter().map(|(e, p)| (e, p.to_string())).collect::<Vec<_>>()
    });
    assert!(events.iter().all(|e| e.details == serde_json::json!({"keyId": 2}) && e.actor == "operator:ops"));
    assert_eq!(
        rotated.rewrap_secrets("ops").unwrap(),
        RewrapReport { key_id: 2, examined: 3, rewrapped: 0, unopenable: 0 }
    );
    assert_eq!(common::audit_rows(&rotated).len(), audit_before + 2, "a run that changes nothing logs nothing");

    // Key 1 removed: every secret still works, the replay state kept.
    let only2 = with_keys(&f, key2);
    let code = f.code(&on_secret, 0);
    assert!(only2.verify_2fa(&f.partner, &on, code.as_str()).unwrap().is_accepted());
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
        .update_contact(&f.partner, &damaged, &mut |r, _| {
            if let Some(s) = r.secret.as_mut() {
                *s.last_mut().unwrap() ^= 1;
            }
            true
        })
        .unwrap();
    let before = f.record(&damaged);
    let mut both = KeyRing::new(1, &[42; 32]);
    both.add(2, &[43; 32]);
    let audit_before = common::audit_rows(&f.service).len();
    let rotated = with_keys(&f, both);
    assert_eq!(
        rotated.rewrap_secrets("ops").unwrap(),
        RewrapReport { key_id: 2, examined: 2, rewrapped: 1, unopenable: 1 }
    );
    assert_eq!(f.record(&damaged), before);
    assert_eq!(common::audit_rows(&rotated).len(), audit_before + 1);
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
    assert!(f.service.verify_2fa(&f.partner, &c, f.code(&s, 0).as_str()).unwrap().is_accepted());
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
    // The 100th failure locked 2FA once (audited in its transaction); the reset is the last row.
    let rows = f.service.audit_events(&f.partner, Some(&c), 0, 500).unwrap().events;
    let events: Vec<_> = rows.iter().map(|r| (r.actor.as_str(), r.event.as_str())).collect();
    assert_eq!(
        events,
        [
            ("partner", "2fa.created"),
            ("partner", "2fa.enabled"),
            ("partner", "recovery_codes.issued"),
            ("partner", "2fa.locked"),
            ("operator:ops@rampart", "2fa.unlocked")
        ]
    );
    assert_eq!(rows[3].details, serde_json::json!({"failures": 100}));
    assert_eq!(rows[4].details, serde_json::json!({"failures": 100}));
    assert_eq!(rows[4].contact_id, Some(c.to_string()));
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
            .update_contact(&f.partner, who, &mut |r, _| {
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
        .update_contact(&other, &c1, &mut |r, _| {
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
    let events: Vec<String> = common::trail(&f.service, &f.partner)
        .into_iter()
        .filter(|(actor, _)| actor == "operator:ops")
        .map(|(_, e)| e)
        .collect();
    assert_eq!(events, ["kyc.marked", "kyc.marked", "partner.waiver_set", "partner.waiver_cleared"]);
    let nobody = PartnerId::random();
    assert_eq!(f.service.is_2fa_required(&nobody, &c).unwrap_err().kind(), ErrorKind::PartnerNotFound);
    assert_eq!(f.service.set_2fa_waiver("ops", &nobody, true).unwrap_err().kind(), ErrorKind::PartnerNotFound);
}
