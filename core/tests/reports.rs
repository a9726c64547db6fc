//! SPEC 11's reads on every store: the orders list with its filters, pages and export; the
//! contacts counted and listed by 2FA state (the KYC list is `contacts_requiring_2fa`, paged);
//! the Overview's checklist.

#[macro_use]
mod common;

use common::{Backend, Fixture, T0};
use rampart_core::store::{
    ContactCounts, ContactList, ContactRecord, Effects, OrderFilter, OrderRecord, OrderStatus, RecoveryCodeSet,
    RecoveryCodeSlot,
};
use rampart_core::{ContactId, ErrorKind, OrderId, PartnerId};

conformance!(orders_filter_page_and_export, contacts_counted_and_listed, the_overview_checklist);

fn order(partner: PartnerId, contact: ContactId, coin: &str, status: OrderStatus, at: u64) -> OrderRecord {
    OrderRecord {
        id: OrderId::random(),
        partner_id: partner,
        contact_id: contact,
        coin: coin.into(),
        amount: "25".into(),
        currency: "usd".into(),
        address: "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx".into(),
        price: "64000.00".into(),
        quantity: "0.00039062".into(),
        status,
        created_at: at,
        updated_at: at,
    }
}

/// Every order of `all` passing `filter`, newest first: what the store must answer.
fn expected(all: &[OrderRecord], filter: &OrderFilter) -> Vec<OrderId> {
    let mut out: Vec<&OrderRecord> = all.iter().filter(|o| filter.matches(o)).collect();
    out.sort_by_key(|o| std::cmp::Reverse((o.created_at, o.id)));
    out.iter().map(|o| o.id).collect()
}

fn orders_filter_page_and_export(b: Backend) {
    let f = Fixture::new(b);
    let (alice, bob) = (common::contact(), common::contact());
    let statuses = [OrderStatus::Created, OrderStatus::Completed, OrderStatus::Failed];
    let mut all = Vec::new();
    for i in 0..60u64 {
        let who = if i % 3 == 0 { alice } else { bob };
        let coin = ["btc", "eth", "sol"][usize::try_from(i % 3).unwrap()];
        // Some share a second, so the id breaks ties.
        let o = order(f.partner, who, coin, statuses[usize::try_from(i % 4 % 3).unwrap()], T0 + i / 2);
        f.service.store().insert_order(&o, &Effects::default()).unwrap();
        all.push(o);
    }
    // Another partner's orders never show.
    let other = f.service.create_partner("Other", rampart_core::Environment::Sandbox).unwrap().partner_id;
    f.service
        .store()
        .insert_order(&order(other, alice, "btc", OrderStatus::Completed, T0), &Effects::default())
        .unwrap();
    let filters = [
        OrderFilter::default(),
        OrderFilter { status: Some(OrderStatus::Completed), ..OrderFilter::default() },
        OrderFilter { coin: Some("eth".into()), ..OrderFilter::default() },
        OrderFilter { contact: Some(alice), ..OrderFilter::default() },
        OrderFilter { from: Some(T0 + 5), until: Some(T0 + 20), ..OrderFilter::default() },
        OrderFilter {
            status: Some(OrderStatus::Created),
            coin: Some("btc".into()),
            contact: Some(alice),
            from: Some(T0),
            until: Some(T0 + 30),
        },
        OrderFilter { coin: Some("doge".into()), ..OrderFilter::default() },
    ];
    for filter in &filters {
        let want = expected(&all, filter);
        // Pages of 7 follow `next` to the end and give exactly the filtered rows, in order.
        let (mut got, mut after) = (Vec::new(), None);
        loop {
            let (page, next) = f.service.partner_orders(&f.partner, filter, after.as_ref(), 7).unwrap();
            assert!(page.len() <= 7);
            got.extend(page.iter().map(|o| o.id));
            match next {
                Some(n) => after = Some(n),
                None => break,
            }
        }
        assert_eq!(got, want, "{filter:?}");
        // The export gives the same rows, chunk by chunk.
        let mut exported = Vec::new();
        let total = f
            .service
            .export_orders(&f.partner, filter, |chunk| {
                exported.extend(chunk.iter().map(|o| o.id));
                Ok(())
            })
            .unwrap();
        assert_eq!((exported, total), (want.clone(), want.len() as u64), "{filter:?}");
    }
    let e = f.service.partner_orders(&f.partner, &OrderFilter::default(), None, 501).unwrap_err();
    assert_eq!(e.message(), "limit must be an integer from 1 to 500");
    let unknown = OrderId::random();
    let e = f.service.partner_orders(&f.partner, &OrderFilter::default(), Some(&unknown), 5).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::OrderNotFound);
}

fn set(remaining: usize) -> RecoveryCodeSet {
    RecoveryCodeSet {
        id: [1; 16],
        codes: (0..10u8).map(|i| RecoveryCodeSlot { hash: [i; 32], used: usize::from(i) >= remaining }).collect(),
    }
}

fn contacts_counted_and_listed(b: Backend) {
    let f = Fixture::new(b);
    let s = f.service.store();
    let mut ids: Vec<ContactId> = (0..40).map(|_| common::contact()).collect();
    ids.sort();
    let mut records = Vec::new();
    for (i, c) in ids.iter().enumerate() {
        let rec = ContactRecord {
            kyc_passed: i % 3 == 0,
            enabled: i % 4 == 0,
            failures: if i % 5 == 0 { 100 } else { u32::try_from(i % 5).unwrap() },
            recovery: (i % 4 == 0).then(|| set(i % 6)),
            // A team member's record, counted nowhere.
            member: i == 39,
            ..ContactRecord::default()
        };
        s.update_contact(&f.partner, c, &mut |r, _| {
            *r = rec.clone();
            true
        })
        .unwrap();
        records.push((*c, rec));
    }
    let of = |list: ContactList| -> Vec<ContactId> {
        records.iter().filter(|(_, r)| list.matches(r)).map(|(c, _)| *c).collect()
    };
    let contacts = || records.iter().filter(|(_, r)| !r.member);
    let want = ContactCounts {
        enabled: contacts().filter(|(_, r)| r.enabled).count() as u64,
        not_enabled: contacts().filter(|(_, r)| !r.enabled).count() as u64,
        locked: of(ContactList::Locked).len() as u64,
        kyc_without_2fa: of(ContactList::KycWithout2fa).len() as u64,
        low_recovery_codes: of(ContactList::LowRecoveryCodes).len() as u64,
    };
    assert_eq!(f.service.contact_counts(&f.partner).unwrap(), want);
    assert!(want.locked > 0 && want.low_recovery_codes > 0 && want.kyc_without_2fa > 0, "{want:?}");
    for list in [ContactList::KycWithout2fa, ContactList::Locked, ContactList::LowRecoveryCodes] {
        let (mut got, mut after) = (Vec::new(), None);
        loop {
            let page = f.service.contacts_on(&f.partner, list, after, 3).unwrap();
            got.extend(page.contacts.iter().map(|c| c.contact_id));
            match page.next {
                Some(n) => after = Some(n),
                None => break,
            }
        }
        assert_eq!(got, of(list), "{list:?}");
    }
    // The KYC list is the library's rule, paged.
    assert_eq!(of(ContactList::KycWithout2fa), f.service.contacts_requiring_2fa(&f.partner).unwrap());
    let page = f.service.contacts_on(&f.partner, ContactList::LowRecoveryCodes, None, 500).unwrap();
    assert!(page.contacts.iter().all(|c| c.enabled && c.recovery_codes_remaining.is_some_and(|n| n <= 3)));
    // A waiver: nobody is required to enable 2FA.
    f.service.set_2fa_waiver("alice", &f.partner, true).unwrap();
    assert_eq!(f.service.contact_counts(&f.partner).unwrap().kyc_without_2fa, 0);
    assert!(f.service.contacts_on(&f.partner, ContactList::KycWithout2fa, None, 10).unwrap().contacts.is_empty());
    let e = f.service.contacts_on(&f.partner, ContactList::Locked, None, 0).unwrap_err();
    assert_eq!(e.message(), "limit must be an integer from 1 to 500");
}

fn the_overview_checklist(b: Backend) {
    use rampart_core::webhooks::SendResult;
    let f = Fixture::new(b);
    let o = f.service.overview(&f.partner).unwrap();
    assert!(o.widget_approved, "sandbox needs no approval");
    assert!(!o.origin_registered && !o.sandbox_order_placed && !o.webhook_answered);
    f.service.set_widget_origins(&f.partner, &["https://shop.example"]).unwrap();
    f.service
        .store()
        .insert_order(&order(f.partner, common::contact(), "btc", OrderStatus::Completed, T0), &Effects::default())
        .unwrap();
    let (endpoint, _) =
        f.service.create_webhook_endpoint(&f.partner, "https://93.184.216.34/h", &["order.created"]).unwrap();
    f.service.test_webhook_endpoint(&f.partner, &endpoint.id.to_string()).unwrap();
    let claimed = f.service.claim_webhook_deliveries(10).unwrap();
    let (at, _) = f.service.webhook_headers(&claimed[0]).unwrap();
    let failed = SendResult::Answered { status: 500, retry_after: None };
    f.service.finish_webhook_attempt(&claimed[0], at, 5, &failed, 1.0).unwrap();
    assert!(!f.service.overview(&f.partner).unwrap().webhook_answered, "a 500 is no answer");
    f.clock.advance(10);
    let again = f.service.claim_webhook_deliveries(10).unwrap();
    let (at, _) = f.service.webhook_headers(&again[0]).unwrap();
    f.service
        .finish_webhook_attempt(&again[0], at, 5, &SendResult::Answered { status: 204, retry_after: None }, 1.0)
        .unwrap();
    let o = f.service.overview(&f.partner).unwrap();
    assert!(o.origin_registered && o.sandbox_order_placed && o.webhook_answered, "{o:?}");
}

/// SPEC 11 at scale: 100,000 contacts of one partner (written in one transaction, straight
/// into the SQLite file), the lists read page by page match the library's rule and a count of
/// the same rows, and the counts agree.
#[test]
fn a_hundred_thousand_contacts_paged() {
    const N: u32 = 100_000;
    let f = Fixture::new(Backend::Sqlite);
    let path = f.store.path.clone().expect("an SQLite file");
    let mut expected_kyc = Vec::new();
    let (mut locked, mut low, mut enabled) = (Vec::new(), Vec::new(), 0u64);
    {
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        let tx = conn.transaction().unwrap();
        let mut insert = tx
            .prepare(
                "INSERT INTO contacts (partner_id, contact_id, kyc_passed, enabled, failures, recovery_codes, \
                 recovery_remaining, member) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .unwrap();
        for i in 0..N {
            let c = ContactId::from_uuid(uuid::Uuid::from_u128(u128::from(i) * 7919 + 1));
            let (kyc, on) = (i % 3 == 0, i % 4 == 0);
            let failures = if i % 97 == 0 { 100 } else { i % 5 };
            let left = usize::try_from(i % 11).unwrap();
            let codes = on.then(|| set(left.min(10)));
            let member = i % 1000 == 999;
            insert
                .execute(rusqlite::params![
                    f.partner.as_bytes(),
                    c.as_bytes(),
                    kyc,
                    on,
                    failures,
                    codes.as_ref().map(RecoveryCodeSet::to_bytes),
                    codes.as_ref().map(RecoveryCodeSet::remaining),
                    member,
                ])
                .unwrap();
            if member {
                continue;
            }
            enabled += u64::from(on);
            if kyc && !on {
                expected_kyc.push(c);
            }
            if failures >= 100 {
                locked.push(c);
            }
            if on && left.min(10) <= 3 {
                low.push(c);
            }
        }
        drop(insert);
        tx.commit().unwrap();
    }
    for list in [&mut expected_kyc, &mut locked, &mut low] {
        list.sort();
    }
    let counts = f.service.contact_counts(&f.partner).unwrap();
    assert_eq!(
        (counts.enabled, counts.kyc_without_2fa, counts.locked, counts.low_recovery_codes),
        (enabled, expected_kyc.len() as u64, locked.len() as u64, low.len() as u64)
    );
    let walk = |list: ContactList| {
        let (mut got, mut after) = (Vec::new(), None);
        loop {
            let page = f.service.contacts_on(&f.partner, list, after, 500).unwrap();
            assert!(page.contacts.len() <= 500);
            got.extend(page.contacts.iter().map(|c| c.contact_id));
            match page.next {
                Some(n) => after = Some(n),
                None => return got,
            }
        }
    };
    let kyc = walk(ContactList::KycWithout2fa);
    assert_eq!(kyc.len(), expected_kyc.len());
    assert_eq!(kyc, expected_kyc);
    assert_eq!(kyc, f.service.contacts_requiring_2fa(&f.partner).unwrap(), "the library's rule, paged");
    assert_eq!(walk(ContactList::Locked), locked);
    assert_eq!(walk(ContactList::LowRecoveryCodes), low);
}
