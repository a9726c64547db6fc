//! The audit trail (SPEC 9.1) and the metrics (SPEC 9.2) on every store: rows written in the
//! change's own transaction, the chain, paging, verification, and what the registry counts.

#[macro_use]
mod common;

use std::sync::Arc;

use common::{Backend, Fixture, contact};
use rampart_core::store::{FaultyStore, Store};
use rampart_core::{
    AuditRow, Config, ContactId, Environment, ErrorKind, KeyRing, MemoryStore, PartnerId, Service, Verification,
};

conformance!(
    lifecycle_changes_are_chained_in_order,
    operator_and_partner_settings_are_recorded,
    pages_follow_next_and_the_contact_filter,
    page_arguments_out_of_range_name_the_parameter,
    verify_finds_an_edit_a_deletion_and_a_reorder,
    a_failing_audit_write_keeps_nothing,
    chains_are_per_partner,
);

fn shown(rows: &[AuditRow]) -> Vec<(u64, &str, &str, Option<&str>, String)> {
    rows.iter()
        .map(|r| (r.seq, r.actor.as_str(), r.event.as_str(), r.contact_id.as_deref(), r.details.to_string()))
        .collect()
}

fn lifecycle_changes_are_chained_in_order(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let secret = f.enabled(&c);
    let cs = c.to_string();
    f.service.disable_2fa(&f.partner, &c, f.code(&secret, 0).as_str()).unwrap();
    // Wrong codes, throttles and verifies change no security state: counted, not audited.
    let again = f.create(&c);
    f.service.enable_2fa(&f.partner, &c, f.code(&again, 1).as_str()).unwrap();
    f.clock.advance(60);
    assert!(f.service.verify_2fa(&f.partner, &c, f.code(&again, 0).as_str()).unwrap().is_accepted());
    assert_eq!(f.service.verify_2fa(&f.partner, &c, f.wrong_code(&again).as_str()).unwrap(), Verification::Rejected);

    let page = f.service.audit_events(&f.partner, None, 0, 100).unwrap();
    assert_eq!(page.next, None);
    assert_eq!(
        shown(&page.events),
        [
            (1, "partner", "2fa.created", Some(cs.as_str()), "{}".to_owned()),
            (2, "partner", "2fa.enabled", Some(cs.as_str()), "{}".to_owned()),
            (3, "partner", "recovery_codes.issued", Some(cs.as_str()), r#"{"reason":"enable"}"#.to_owned()),
            (4, "partner", "2fa.disabled", Some(cs.as_str()), r#"{"method":"token"}"#.to_owned()),
            (5, "partner", "2fa.created", Some(cs.as_str()), "{}".to_owned()),
            (6, "partner", "2fa.enabled", Some(cs.as_str()), "{}".to_owned()),
            (7, "partner", "recovery_codes.issued", Some(cs.as_str()), r#"{"reason":"enable"}"#.to_owned()),
        ]
    );
    let rows = &page.events;
    assert_eq!(rows[0].prev, rampart_core::audit::GENESIS);
    for pair in rows.windows(2) {
        assert_eq!(pair[1].prev, pair[0].hash, "row {} links to row {}", pair[1].seq, pair[0].seq);
    }
    for row in rows {
        assert_eq!(row.hash, row.computed_hash());
        assert_eq!(row.partner_id, f.partner.to_string());
        assert!(uuid::Uuid::parse_str(&row.id).is_ok());
    }
    // `at` is the service clock's, in milliseconds.
    assert_eq!(rows[0].at, rampart_core::audit::rfc3339_millis(common::T0 * 1000));
    assert_eq!(rows[3].at, rampart_core::audit::rfc3339_millis((common::T0 + 30) * 1000));
    let report = f.service.verify_audit(Some(&f.partner)).unwrap();
    assert_eq!((report[0].rows, report[0].first_bad_seq), (7, None));
}

fn operator_and_partner_settings_are_recorded(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let p = &f.partner;
    f.service.set_widget_text(p, "Back to shop").unwrap();
    f.service.set_widget_button_url(p, "https://shop.example.com/done").unwrap();
    f.service.set_widget_origins(p, &["https://shop.example.com"]).unwrap();
    f.service.set_kyc_passed("alice", p, &c, true).unwrap();
    f.service.set_kyc_passed("alice", p, &c, false).unwrap();
    f.service.set_2fa_waiver("bob", p, true).unwrap();
    f.service.set_2fa_waiver("bob", p, false).unwrap();
    f.service.set_widget_approval("carol", p, true).unwrap();
    f.service.set_widget_approval("carol", p, false).unwrap();
    f.service.reset_lock("dana", p, &c).unwrap();
    f.service.rotate_keys("erin", p).unwrap();
    let cs = c.to_string();
    let rows = f.service.audit_events(p, None, 0, 100).unwrap().events;
    assert_eq!(
        shown(&rows),
        [
            (1, "partner", "widget.settings_changed", None, r#"{"field":"widgetText"}"#.to_owned()),
            (2, "partner", "widget.settings_changed", None, r#"{"field":"widgetButtonURL"}"#.to_owned()),
            (3, "partner", "widget.settings_changed", None, r#"{"field":"widgetOrigins"}"#.to_owned()),
            (4, "operator:alice", "kyc.marked", Some(cs.as_str()), "{}".to_owned()),
            (5, "operator:alice", "kyc.unmarked", Some(cs.as_str()), "{}".to_owned()),
            (6, "operator:bob", "partner.waiver_set", None, "{}".to_owned()),
            (7, "operator:bob", "partner.waiver_cleared", None, "{}".to_owned()),
            (8, "operator:carol", "widget.approved", None, "{}".to_owned()),
            (9, "operator:carol", "widget.unapproved", None, "{}".to_owned()),
            (10, "operator:dana", "2fa.unlocked", Some(cs.as_str()), r#"{"failures":0}"#.to_owned()),
            (11, "operator:erin", "partner.keys_rotated", None, "{}".to_owned()),
        ]
    );
    // An operator action on a contact with nothing to change writes no contact record.
    assert_eq!(f.service.store().contact(p, &c).unwrap().map(|r| r.kyc_passed), Some(false));
    // No secret, key, email or text the partner typed in any row.
    let all = serde_json::to_string(&rows).unwrap();
    for needle in ["Back to shop", "shop.example.com", "sk_", "pk_"] {
        assert!(!all.contains(needle), "{needle} in the audit trail");
    }
}

fn pages_follow_next_and_the_contact_filter(b: Backend) {
    let f = Fixture::new(b);
    let (c, d) = (contact(), contact());
    for i in 0..7 {
        f.service.set_kyc_passed("ops", &f.partner, if i % 2 == 0 { &c } else { &d }, i % 4 < 2).unwrap();
    }
    let first = f.service.audit_events(&f.partner, None, 0, 3).unwrap();
    assert_eq!(first.events.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(first.next, Some(3));
    let second = f.service.audit_events(&f.partner, None, 3, 3).unwrap();
    assert_eq!(second.events.iter().map(|r| r.seq).collect::<Vec<_>>(), [4, 5, 6]);
    assert_eq!(second.next, Some(6));
    let last = f.service.audit_events(&f.partner, None, 6, 3).unwrap();
    assert_eq!((last.events.len(), last.events[0].seq, last.next), (1, 7, None));
    // Exactly one page's worth: no next.
    assert_eq!(f.service.audit_events(&f.partner, None, 4, 3).unwrap().next, None);
    let mine = f.service.audit_events(&f.partner, Some(&c), 0, 2).unwrap();
    assert_eq!(mine.events.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 3]);
    assert_eq!(mine.next, Some(3));
    let rest = f.service.audit_events(&f.partner, Some(&c), 3, 2).unwrap();
    assert_eq!((rest.events.iter().map(|r| r.seq).collect::<Vec<_>>(), rest.next), (vec![5, 7], None));
    assert!(f.service.audit_events(&f.partner, Some(&contact()), 0, 100).unwrap().events.is_empty());
    assert!(f.service.audit_events(&f.partner, None, 7, 100).unwrap().events.is_empty());
}

fn page_arguments_out_of_range_name_the_parameter(b: Backend) {
    let f = Fixture::new(b);
    for limit in [0, 501, usize::MAX] {
        let e = f.service.audit_events(&f.partner, None, 0, limit).unwrap_err();
        assert_eq!(
            (e.kind(), e.code(), e.message()),
            (ErrorKind::InvalidInput, 400, "limit must be an integer from 1 to 500")
        );
    }
    let e = f.service.audit_events(&f.partner, None, u64::MAX, 10).unwrap_err();
    assert_eq!(e.message(), "after must be an integer from 0 to 9223372036854775807");
    let e = f.service.audit_events(&PartnerId::random(), None, 0, 10).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::PartnerNotFound);
    assert_eq!(f.service.audit_events(&f.partner, None, 0, 500).unwrap().events.len(), 0);
}

/// Three rows on a contact, then the stored rows changed behind the store's back.
fn verify_finds_an_edit_a_deletion_and_a_reorder(b: Backend) {
    let cases: [(&str, Option<u64>); 5] = [
        ("UPDATE audit_events SET details = '{\"method\":\"recoveryCode\"}' WHERE seq = 3", Some(3)),
        ("UPDATE audit_events SET at = '2020-01-01T00:00:00.000Z' WHERE seq = 1", Some(1)),
        ("DELETE FROM audit_events WHERE seq = 2", Some(2)),
        ("DELETE FROM audit_events WHERE seq = 3", Some(3)),
        // Rows 1 and 2 swap places: each keeps its hash, neither links any more.
        (
            "UPDATE audit_events SET seq = -1 WHERE seq = 1; UPDATE audit_events SET seq = 1 WHERE seq = 2; \
             UPDATE audit_events SET seq = 2 WHERE seq = -1",
            Some(1),
        ),
    ];
    for (sql, bad) in cases {
        let f = Fixture::new(b);
        let c = contact();
        let secret = f.enabled(&c);
        f.service.disable_2fa(&f.partner, &c, f.code(&secret, 0).as_str()).unwrap();
        let other = f.service.create_partner("Other", Environment::Sandbox).unwrap().partner_id;
        f.service.set_2fa_waiver("ops", &other, true).unwrap();
        let mut reports = f.service.verify_audit(None).unwrap();
        reports.sort_by_key(|r| r.rows);
        assert_eq!(reports.iter().map(|r| (r.rows, r.first_bad_seq)).collect::<Vec<_>>(), [(1, None), (4, None)]);
        let scoped = sql.replace("WHERE seq", &format!("WHERE partner_id = {} AND seq", hex(&f.partner, b)));
        if !f.store.raw_sql(&scoped) {
            return; // the memory store has no rows to tamper with
        }
        let mine = f.service.verify_audit(Some(&f.partner)).unwrap();
        assert_eq!(mine[0].first_bad_seq, bad, "{sql}");
        // The other partner's chain is untouched and still holds.
        assert_eq!(f.service.verify_audit(Some(&other)).unwrap()[0].first_bad_seq, None);
    }
}

/// A partner id as an SQL byte-string literal of the backend.
fn hex(p: &PartnerId, b: Backend) -> String {
    let hex: String = p.as_bytes().iter().map(|x| format!("{x:02x}")).collect();
    match b {
        Backend::Sqlite | Backend::Memory => format!("X'{hex}'"),
        #[cfg(feature = "postgres-tests")]
        Backend::Postgres => format!("'\\x{hex}'::bytea"),
    }
}

/// An audit row that cannot be written fails the change with the operation's 500 message, and
/// neither the change nor any row is kept: through the faulty store (every backend) and, on the
/// SQL stores, a trigger that fails the insert inside the real transaction.
fn a_failing_audit_write_keeps_nothing(b: Backend) {
    let (t, fail_audit_writes) = faulty(b);
    let f = Fixture::on_store(t, Config::default());
    let c = contact();
    let secret = f.create(&c);
    let before = f.record(&c);
    let rows_before = common::audit_rows(&f.service).len();
    fail_audit_writes(true);
    let code = f.code(&secret, 0);
    let e = f.service.enable_2fa(&f.partner, &c, code.as_str()).unwrap_err();
    assert_eq!((e.code(), e.message()), (500, "Error enabling 2FA"));
    let e = f.service.create_2fa(&f.partner, &contact(), None).unwrap_err();
    assert_eq!((e.code(), e.message()), (500, "Error enabling 2FA"));
    let e = f.service.set_widget_text(&f.partner, "Done").unwrap_err();
    assert_eq!((e.code(), e.message()), (500, "Internal server error"));
    assert_eq!(f.service.set_kyc_passed("ops", &f.partner, &c, true).unwrap_err().code(), 500);
    // A verify writes no audit row, so it is not refused.
    assert_eq!(f.service.verify_2fa(&f.partner, &c, "000000").unwrap_err().kind(), ErrorKind::NotEnabled);
    fail_audit_writes(false);
    assert_eq!(f.record(&c), before, "the enable was not kept");
    assert_eq!(f.service.widget_text(&f.partner).unwrap(), None);
    assert_eq!(common::audit_rows(&f.service).len(), rows_before);
    let text = f.service.metrics_text();
    assert!(text.contains("\nrampart_audit_write_failures_total 4\n"), "{text}");
    assert!(text.contains("rampart_store_errors_total{operation=\"update_contact\"} 3\n"), "{text}");
    assert!(text.contains("rampart_store_errors_total{operation=\"update_partner\"} 1\n"), "{text}");

    // The real thing: the insert fails inside the store's own transaction.
    if f.store.raw_sql(&fail_audit_inserts(b)) {
        let e = f.service.enable_2fa(&f.partner, &c, code.as_str()).unwrap_err();
        assert_eq!((e.code(), e.message()), (500, "Error enabling 2FA"));
        assert_eq!(f.record(&c), before, "the enable was rolled back with its audit row");
        assert_eq!(common::audit_rows(&f.service).len(), rows_before);
        let e = f.service.set_widget_text(&f.partner, "Done").unwrap_err();
        assert_eq!(e.code(), 500);
        assert_eq!(f.service.widget_text(&f.partner).unwrap(), None);
        assert_eq!(f.service.verify_audit(None).unwrap().iter().filter(|r| r.first_bad_seq.is_some()).count(), 0);
    }
}

fn fail_audit_inserts(b: Backend) -> String {
    match b {
        Backend::Sqlite | Backend::Memory => "CREATE TRIGGER no_audit BEFORE INSERT ON audit_events \
             BEGIN SELECT RAISE(ABORT, 'audit table is read-only'); END;"
            .to_owned(),
        #[cfg(feature = "postgres-tests")]
        Backend::Postgres => "CREATE FUNCTION no_audit() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RAISE EXCEPTION 'audit table is read-only'; END $$; \
             CREATE TRIGGER no_audit BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION no_audit();"
            .to_owned(),
    }
}

fn chains_are_per_partner(b: Backend) {
    let f = Fixture::new(b);
    let other = f.service.create_partner("Other", Environment::Sandbox).unwrap().partner_id;
    f.service.set_2fa_waiver("ops", &f.partner, true).unwrap();
    f.service.set_2fa_waiver("ops", &other, true).unwrap();
    f.service.set_2fa_waiver("ops", &f.partner, false).unwrap();
    let mine = f.service.audit_events(&f.partner, None, 0, 10).unwrap().events;
    let theirs = f.service.audit_events(&other, None, 0, 10).unwrap().events;
    assert_eq!(mine.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(theirs.iter().map(|r| r.seq).collect::<Vec<_>>(), [1]);
    assert_eq!(theirs[0].prev, rampart_core::audit::GENESIS);
    assert_eq!(mine[1].prev, mine[0].hash);
}

/// Turns a [`FaultyStore`]'s audit faults on or off.
type Switch = Box<dyn Fn(bool)>;

/// The backend behind a [`FaultyStore`], and its audit-fault switch.
fn faulty(b: Backend) -> (common::TestStore, Switch) {
    fn wrap<S: Store + 'static>(inner: S) -> (Arc<FaultyStore<S>>, Switch) {
        let store = Arc::new(FaultyStore::new(inner));
        let switch = store.clone();
        (store, Box::new(move |on| switch.fail_audit_writes(on)))
    }
    let plain = b.open();
    let (store, switch): (Arc<dyn Store>, _) = match b {
        Backend::Memory => {
            let (s, f) = wrap(MemoryStore::new());
            (s, f)
        }
        Backend::Sqlite => {
            let (s, f) = wrap(rampart_core::SqliteStore::open(plain.path.as_ref().unwrap()).unwrap());
            (s, f)
        }
        #[cfg(feature = "postgres-tests")]
        Backend::Postgres => {
            let config = plain.postgres.clone().unwrap();
            let (s, f) = wrap(rampart_core::PostgresStore::open_with(config, &Default::default()).unwrap());
            (s, f)
        }
    };
    (common::TestStore { store, ..plain }, switch)
}

// ---------------------------------------------------------------------------------------------
// Metrics

/// The value of one sample line of a Prometheus text, or 0 when there is none.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')))
        .map_or(0.0, |v| v.parse().unwrap())
}

fn service() -> (Service, PartnerId, Arc<rampart_core::ManualClock>) {
    let clock = Arc::new(rampart_core::ManualClock::new(common::T0));
    let s = Service::builder(MemoryStore::new())
        .master_keys(KeyRing::generate().unwrap())
        .clock(clock.clone())
        .build()
        .unwrap();
    let p = s.create_partner("Acme", Environment::Sandbox).unwrap().partner_id;
    (s, p, clock)
}

#[test]
fn a_scripted_sequence_moves_each_counter_by_its_exact_amount() {
    let (s, p, clock) = service();
    let c = ContactId::random();
    let setup = s.create_2fa(&p, &c, None).unwrap();
    let secret = rampart_core::totp::Secret::from_base32(&setup.manual).unwrap();
    let code = |t: u64| rampart_core::totp::code_at(&secret, t);
    let now = || rampart_core::Clock::now(&*clock);
    assert_eq!(s.enable_2fa(&p, &c, "").unwrap_err().kind(), ErrorKind::TokenMissing);
    s.enable_2fa(&p, &c, code(now()).as_str()).unwrap();
    assert_eq!(s.verify_2fa(&p, &c, code(now()).as_str()).unwrap(), Verification::Rejected, "replay");
    for _ in 0..5 {
        assert_eq!(s.verify_2fa(&p, &c, "abc").unwrap(), Verification::Rejected);
    }
    assert_eq!(s.verify_2fa(&p, &c, "abc").unwrap_err().kind(), ErrorKind::Throttled);
    clock.advance(31);
    s.disable_2fa(&p, &c, code(now()).as_str()).unwrap();
    assert_eq!(s.verify_2fa(&p, &c, "123456").unwrap_err().kind(), ErrorKind::NotEnabled);
    // 100 failures lock.
    let d = ContactId::random();
    let setup = s.create_2fa(&p, &d, None).unwrap();
    let secret_d = rampart_core::totp::Secret::from_base32(&setup.manual).unwrap();
    s.enable_2fa(&p, &d, rampart_core::totp::code_at(&secret_d, now()).as_str()).unwrap();
    for _ in 0..100 {
        clock.advance(3600);
        assert_eq!(s.verify_2fa(&p, &d, "abc").unwrap(), Verification::Rejected);
    }
    assert_eq!(s.verify_2fa(&p, &d, "abc").unwrap_err().kind(), ErrorKind::Locked);
    s.metrics().http_request("/v1/auth/2fa", "GET", 200, std::time::Duration::from_millis(2));
    s.metrics().http_request("/v1/auth/2fa", "PATCH", 405, std::time::Duration::from_millis(1));
    s.metrics().http_request("unmatched", "GET", 404, std::time::Duration::from_millis(1));

    let text = s.metrics_text();
    let attempts = |op: &str, result: &str| {
        sample(&text, &format!("rampart_2fa_attempts_total{{operation=\"{op}\",factor=\"token\",result=\"{result}\"}}"))
    };
    assert_eq!(attempts("enable", "missing"), 1.0);
    assert_eq!(attempts("enable", "accepted"), 2.0);
    assert_eq!(attempts("verify", "replayed"), 1.0);
    assert_eq!(attempts("verify", "rejected"), 105.0);
    assert_eq!(attempts("verify", "throttled"), 1.0);
    assert_eq!(attempts("verify", "locked"), 1.0);
    assert_eq!(attempts("verify", "error"), 1.0);
    assert_eq!(attempts("disable", "accepted"), 1.0);
    assert_eq!(sample(&text, "rampart_2fa_attempt_duration_seconds_count{operation=\"verify\"}"), 109.0);
    let transitions = |t: &str| sample(&text, &format!("rampart_2fa_transitions_total{{transition=\"{t}\"}}"));
    assert_eq!((transitions("created"), transitions("enabled")), (2.0, 2.0));
    assert_eq!((transitions("disabled"), transitions("locked")), (1.0, 1.0));
    let audit = |e: &str| sample(&text, &format!("rampart_audit_events{{event=\"{e}\"}}"));
    assert_eq!(
        (audit("2fa.created"), audit("2fa.enabled"), audit("2fa.disabled"), audit("2fa.locked")),
        (2.0, 2.0, 1.0, 1.0)
    );
    assert_eq!(
        sample(&text, "rampart_http_requests_total{route=\"/v1/auth/2fa\",method=\"OTHER\",status=\"405\"}"),
        1.0
    );
    assert_eq!(sample(&text, "rampart_http_requests_total{route=\"unmatched\",method=\"GET\",status=\"404\"}"), 1.0);
    assert_eq!(sample(&text, "rampart_http_request_duration_seconds_count{route=\"/v1/auth/2fa\"}"), 2.0);
    assert_eq!(sample(&text, "rampart_build_info{version=\"0.1.0\",environment=\"sandbox\",store=\"memory\"}"), 1.0);
    assert_eq!(sample(&text, "rampart_audit_write_failures_total"), 0.0);
    assert!(text.contains("\nrampart_audit_write_failures_total 0\n"), "present at 0");
    // No label value is an id, a key or an email.
    for needle in [p.to_string(), c.to_string(), d.to_string()] {
        assert!(!text.contains(&needle));
    }
}

#[test]
fn two_services_in_one_process_count_apart() {
    let (a, p, _) = service();
    let (b, _, _) = service();
    let c = ContactId::random();
    a.create_2fa(&p, &c, None).unwrap();
    assert_eq!(sample(&a.metrics_text(), "rampart_2fa_transitions_total{transition=\"created\"}"), 1.0);
    assert_eq!(sample(&b.metrics_text(), "rampart_2fa_transitions_total{transition=\"created\"}"), 0.0);
    assert_eq!(sample(&b.metrics_text(), "rampart_audit_events{event=\"2fa.created\"}"), 0.0);
}

#[test]
fn the_audit_gauge_is_read_at_most_once_a_minute() {
    let (s, p, _) = service();
    s.set_2fa_waiver("ops", &p, true).unwrap();
    assert_eq!(sample(&s.metrics_text(), "rampart_audit_events{event=\"partner.waiver_set\"}"), 1.0);
    s.set_2fa_waiver("ops", &p, true).unwrap();
    // Read less than 60 s ago: the same value until the next read.
    assert_eq!(sample(&s.metrics_text(), "rampart_audit_events{event=\"partner.waiver_set\"}"), 1.0);
}

#[test]
fn metrics_off_records_nothing() {
    let s =
        Service::builder(MemoryStore::new()).master_keys(KeyRing::generate().unwrap()).metrics(false).build().unwrap();
    let p = s.create_partner("Acme", Environment::Sandbox).unwrap().partner_id;
    s.create_2fa(&p, &ContactId::random(), None).unwrap();
    s.metrics().http_request("/v1/auth/2fa", "GET", 200, std::time::Duration::from_millis(1));
    let text = s.metrics_text();
    assert!(!text.contains("rampart_2fa_transitions_total{"), "{text}");
    assert!(!text.contains("rampart_http_requests_total{"), "{text}");
    assert_eq!(sample(&text, "rampart_build_info{version=\"0.1.0\",environment=\"sandbox\",store=\"memory\"}"), 1.0);
}
