//! SPEC section 10 on every store: webhook endpoints (create, list, delete, rotate), their rules
//! (URL, events, at most 10), sealed secrets and audit rows.

#[macro_use]
mod common;

use common::{Backend, Fixture};
use rampart_core::store::WebhookEndpointRecord;
use rampart_core::webhooks::{self, WebhookSecret};
use rampart_core::{Config, Environment, ErrorKind, KeyRing, PartnerId, RewrapReport, Service};

conformance!(
    store_round_trips_endpoints,
    create_list_delete,
    urls_events_and_the_limit,
    rotation_signs_with_both_for_a_day,
    endpoints_are_the_partners_own,
    rewrap_and_the_start_check_cover_endpoint_secrets,
    two_factor_changes_queue_their_webhooks,
    the_queue_leases_retries_and_logs,
    eight_failures_fail_the_message_and_five_days_disable_the_endpoint,
);

/// A public address that needs no DNS (a documentation-free, global IPv4 literal).
const PUBLIC: &str = "https://93.184.216.34/hooks/rampart";

fn changes(f: &Fixture, partner: &PartnerId) -> Vec<(String, String)> {
    let rows = f.service.audit_events(partner, None, 0, 500).unwrap().events;
    rows.into_iter()
        .filter(|r| r.event == "webhook.endpoint_changed")
        .map(|r| {
            (r.details["change"].as_str().unwrap().to_owned(), r.details["endpointId"].as_str().unwrap().to_owned())
        })
        .collect()
}

fn store_round_trips_endpoints(b: Backend) {
    let f = Fixture::new(b);
    let s = f.service.store();
    assert!(s.webhook_endpoints(&f.partner).unwrap().is_empty());
    let full = WebhookEndpointRecord {
        id: uuid::Uuid::new_v4(),
        partner_id: f.partner,
        url: "https://example.com/h".into(),
        events: vec!["order.completed".into(), "2fa.reset".into()],
        enabled: false,
        secret: vec![1, 2, 3],
        previous_secret: Some(vec![4, 5]),
        previous_until: Some(u64::from(u32::MAX) + 1),
        created_at: 7,
        failing_since: Some(9),
    };
    let second = WebhookEndpointRecord {
        id: uuid::Uuid::new_v4(),
        created_at: 8,
        previous_secret: None,
        previous_until: None,
        failing_since: None,
        ..full.clone()
    };
    assert!(
        s.update_webhook_endpoints(&f.partner, &mut |l, _| {
            l.push(full.clone());
            l.push(second.clone());
            true
        })
        .unwrap()
    );
    assert_eq!(s.webhook_endpoints(&f.partner).unwrap(), [full.clone(), second.clone()]);
    // A false return writes nothing; an unknown partner is `false`.
    s.update_webhook_endpoints(&f.partner, &mut |l, _| {
        l.clear();
        false
    })
    .unwrap();
    assert_eq!(s.webhook_endpoints(&f.partner).unwrap().len(), 2);
    assert!(!s.update_webhook_endpoints(&PartnerId::random(), &mut |_, _| true).unwrap());
    s.update_webhook_endpoints(&f.partner, &mut |l, _| {
        l.retain(|e| e.id != full.id);
        true
    })
    .unwrap();
    assert_eq!(s.webhook_endpoints(&f.partner).unwrap(), [second]);
}

fn create_list_delete(b: Backend) {
    let f = Fixture::new(b);
    let (endpoint, secret) =
        f.service.create_webhook_endpoint(&f.partner, PUBLIC, &["order.completed", "2fa.reset"]).unwrap();
    assert!(secret.starts_with("whsec_") && secret.len() == 50, "{}", secret.as_str());
    assert_eq!((endpoint.url.as_str(), endpoint.enabled), (PUBLIC, true));
    assert_eq!(endpoint.events, ["order.completed", "2fa.reset"]);
    assert_eq!(f.service.webhook_endpoints(&f.partner).unwrap(), std::slice::from_ref(&endpoint));
    // Stored sealed: the secret's bytes are not in the record, and the signing secret opens.
    let stored = f.service.store().webhook_endpoints(&f.partner).unwrap().remove(0);
    let bytes = WebhookSecret::parse(&secret).unwrap();
    assert!(!stored.secret.windows(32).any(|w| w == bytes.as_bytes()));
    assert!(!format!("{stored:?}").contains(&secret[6..]));
    assert_eq!(f.service.signing_secrets(&stored).unwrap(), [bytes]);
    f.service.delete_webhook_endpoint(&f.partner, &endpoint.id.to_string().to_uppercase()).unwrap();
    assert!(f.service.webhook_endpoints(&f.partner).unwrap().is_empty());
    for id in [endpoint.id.to_string(), "nope".to_owned(), String::new()] {
        let e = f.service.delete_webhook_endpoint(&f.partner, &id).unwrap_err();
        assert_eq!(
            (e.kind(), e.code(), e.message()),
            (ErrorKind::WebhookEndpointNotFound, 404, "Webhook endpoint not found")
        );
    }
    let id = endpoint.id.to_string();
    assert_eq!(changes(&f, &f.partner), [("created".to_owned(), id.clone()), ("deleted".to_owned(), id)]);
}

fn urls_events_and_the_limit(b: Backend) {
    let f = Fixture::new(b);
    let p = &f.partner;
    let url_rule = "url must be an absolute https URL without credentials, at most 2048 characters";
    for (url, message) in [
        ("http://93.184.216.34/h", url_rule),
        ("https://u:p@93.184.216.34/h", url_rule),
        ("https://127.0.0.1/h", "url resolves to a non-public address: loopback"),
        ("https://[::ffff:127.0.0.1]/h", "url resolves to a non-public address: loopback"),
        ("https://169.254.169.254/h", "url resolves to a non-public address: cloud-metadata"),
        ("https://10.0.0.7/h", "url resolves to a non-public address: private"),
        ("https://100.64.0.1/h", "url resolves to a non-public address: cgnat"),
        ("https://2130706433/h", "url resolves to a non-public address: loopback"),
        ("https://localhost/h", "url resolves to a non-public address: loopback"),
    ] {
        let e = f.service.create_webhook_endpoint(p, url, &["order.completed"]).unwrap_err();
        assert_eq!((e.kind(), e.message()), (ErrorKind::InvalidInput, message), "{url}");
    }
    let e = f.service.create_webhook_endpoint(p, PUBLIC, &[]).unwrap_err();
    assert_eq!(e.message(), "events must name at least one event");
    let e = f.service.create_webhook_endpoint(p, PUBLIC, &["order.completed", "order.shipped"]).unwrap_err();
    assert_eq!(e.message(), "events has an unknown event: order.shipped");
    assert!(f.service.webhook_endpoints(p).unwrap().is_empty(), "nothing stored");
    for i in 0..webhooks::MAX_ENDPOINTS {
        f.service.create_webhook_endpoint(p, &format!("{PUBLIC}/{i}"), &["webhook.test"]).unwrap();
    }
    let e = f.service.create_webhook_endpoint(p, PUBLIC, &["webhook.test"]).unwrap_err();
    assert_eq!(
        (e.kind(), e.code(), e.message()),
        (ErrorKind::TooManyWebhookEndpoints, 409, "At most 10 webhook endpoints")
    );
    assert_eq!(f.service.webhook_endpoints(p).unwrap().len(), 10);
    // The test flag allows http and private addresses; production refuses the flag.
    let dev = Fixture::with_config(b, Config { webhook_allow_private: true, ..Config::default() });
    dev.service.create_webhook_endpoint(&dev.partner, "http://127.0.0.1:9/h", &["webhook.test"]).unwrap();
    let refused = rampart_core::Service::builder(rampart_core::MemoryStore::new())
        .master_keys(rampart_core::KeyRing::new(1, &[1; 32]))
        .environment(Environment::Production)
        .webhook_allow_private(true)
        .build()
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Config);
}

fn rotation_signs_with_both_for_a_day(b: Backend) {
    let f = Fixture::new(b);
    let (endpoint, first) = f.service.create_webhook_endpoint(&f.partner, PUBLIC, &["order.completed"]).unwrap();
    let second = f.service.rotate_webhook_secret(&f.partner, &endpoint.id.to_string()).unwrap();
    assert_ne!(first, second);
    let record = || f.service.store().webhook_endpoints(&f.partner).unwrap().remove(0);
    let (a, b2) = (WebhookSecret::parse(&second).unwrap(), WebhookSecret::parse(&first).unwrap());
    assert_eq!(f.service.signing_secrets(&record()).unwrap(), [a.clone(), b2]);
    f.clock.advance(webhooks::ROTATION_OVERLAP_SECS - 1);
    assert_eq!(f.service.signing_secrets(&record()).unwrap().len(), 2);
    f.clock.advance(1);
    assert_eq!(f.service.signing_secrets(&record()).unwrap(), [a]);
    let e = f.service.rotate_webhook_secret(&f.partner, &uuid::Uuid::new_v4().to_string()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::WebhookEndpointNotFound);
    assert_eq!(
        changes(&f, &f.partner).iter().map(|(c, _)| c.as_str()).collect::<Vec<_>>(),
        ["created", "secret_rotated"]
    );
}

fn endpoints_are_the_partners_own(b: Backend) {
    let f = Fixture::new(b);
    let other = f.service.create_partner("Other", Environment::Sandbox).unwrap().partner_id;
    let (endpoint, _) = f.service.create_webhook_endpoint(&f.partner, PUBLIC, &["order.completed"]).unwrap();
    let id = endpoint.id.to_string();
    assert!(f.service.webhook_endpoints(&other).unwrap().is_empty());
    assert_eq!(f.service.delete_webhook_endpoint(&other, &id).unwrap_err().kind(), ErrorKind::WebhookEndpointNotFound);
    assert_eq!(f.service.rotate_webhook_secret(&other, &id).unwrap_err().kind(), ErrorKind::WebhookEndpointNotFound);
    assert_eq!(f.service.webhook_endpoints(&f.partner).unwrap().len(), 1);
    let ghost = PartnerId::random();
    assert_eq!(f.service.webhook_endpoints(&ghost).unwrap_err().kind(), ErrorKind::PartnerNotFound);
    assert_eq!(
        f.service.create_webhook_endpoint(&ghost, PUBLIC, &["webhook.test"]).unwrap_err().kind(),
        ErrorKind::PartnerNotFound
    );
}

fn rewrap_and_the_start_check_cover_endpoint_secrets(b: Backend) {
    let f = Fixture::new(b); // key 1
    let (endpoint, secret) = f.service.create_webhook_endpoint(&f.partner, PUBLIC, &["webhook.test"]).unwrap();
    f.service.rotate_webhook_secret(&f.partner, &endpoint.id.to_string()).unwrap();
    let with_keys =
        |keys: KeyRing| Service::builder_shared(f.store.store.clone()).master_keys(keys).clock(f.clock.clone()).build();
    let mut both = KeyRing::new(1, &[42; 32]);
    both.add(2, &[43; 32]);
    let rotated = with_keys(both).unwrap();
    let report = rotated.rewrap_secrets("ops").unwrap();
    assert_eq!(report, RewrapReport { key_id: 2, examined: 2, rewrapped: 2, unopenable: 0 });
    let key2 = KeyRing::new(2, &[43; 32]);
    let stored = f.service.store().webhook_endpoints(&f.partner).unwrap().remove(0);
    assert!(key2.is_current(&stored.secret) && key2.is_current(stored.previous_secret.as_ref().unwrap()));
    // Key 1 removed: both secrets still open.
    let only2 = with_keys(key2).unwrap();
    let secrets = only2.signing_secrets(&stored).unwrap();
    assert_eq!(secrets[1], WebhookSecret::parse(&secret).unwrap());
    // A ring that opens no stored endpoint secret is refused at start.
    let e = with_keys(KeyRing::new(3, &[44; 32])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{e:?}");
}

fn two_factor_changes_queue_their_webhooks(b: Backend) {
    let f = Fixture::new(b);
    let events = ["2fa.enabled", "2fa.disabled", "2fa.reset", "recovery_code.used"];
    let (endpoint, _) = f.service.create_webhook_endpoint(&f.partner, PUBLIC, &events).unwrap();
    let (off, _) = f.service.create_webhook_endpoint(&f.partner, PUBLIC, &["2fa.enabled"]).unwrap();
    // A disabled endpoint receives nothing.
    f.service
        .store()
        .update_webhook_endpoints(&f.partner, &mut |l, _| {
            l.iter_mut().filter(|e| e.id == off.id).for_each(|e| e.enabled = false);
            true
        })
        .unwrap();
    // The delivery worker's wake-up: told of each committed change that queued a message, and
    // of nothing else.
    let told = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = told.clone();
    f.service.on_webhook_queued(move || {
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    });
    let told = move || told.load(std::sync::atomic::Ordering::SeqCst);
    let c = common::contact();
    let secret = f.create(&c);
    assert_eq!(told(), 0, "a create queues nothing");
    // A second apart, so the queue's oldest-first order is the order of the changes.
    let codes = f.service.enable_2fa(&f.partner, &c, f.code(&secret, 0).as_str()).unwrap();
    assert_eq!(told(), 1);
    f.clock.advance(1);
    f.service.verify_2fa(&f.partner, &c, rampart_core::Factor::recovery_code(&codes.as_slice()[0])).unwrap();
    f.clock.advance(1);
    f.service.reset_2fa("ops", &f.partner, &c, "lost phone", None).unwrap();
    assert_eq!(told(), 3);
    f.service.regenerate_recovery_codes(&f.partner, &c, "000000").unwrap_err();
    assert_eq!(told(), 3, "a refused change queues nothing");
    let queued = f.service.store().webhook_deliveries(&f.partner).unwrap();
    assert_eq!(
        queued.iter().map(|d| (d.event.as_str(), d.endpoint_id)).collect::<Vec<_>>(),
        [("2fa.enabled", endpoint.id), ("recovery_code.used", endpoint.id), ("2fa.reset", endpoint.id)]
    );
    // The message id is the audit row's: one event, one id.
    let rows = f.service.audit_events(&f.partner, Some(&c), 0, 100).unwrap().events;
    let enabled = rows.iter().find(|r| r.event == "2fa.enabled").unwrap();
    assert_eq!(queued[0].message_id, format!("msg_{}", enabled.id.replace('-', "")));
}

fn the_queue_leases_retries_and_logs(b: Backend) {
    use rampart_core::webhooks::{AttemptOutcome, SendResult};
    let f = Fixture::new(b);
    let (endpoint, _) = f.service.create_webhook_endpoint(&f.partner, PUBLIC, &["2fa.enabled"]).unwrap();
    let c = common::contact();
    let secret = f.create(&c);
    f.service.enable_2fa(&f.partner, &c, f.code(&secret, 0).as_str()).unwrap();
    // Claimed once: a second claim (another server) finds it leased.
    let claimed = f.service.claim_webhook_deliveries(10).unwrap();
    assert_eq!(claimed.len(), 1);
    assert!(f.service.claim_webhook_deliveries(10).unwrap().is_empty(), "leased");
    assert_eq!(f.service.store().webhook_queue_depth().unwrap(), 1);
    let d = &claimed[0];
    assert_eq!((d.event.as_str(), d.attempts, d.endpoint.id), ("2fa.enabled", 0, endpoint.id));
    assert!(d.body.starts_with(r#"{"type":"2fa.enabled","timestamp":"#), "{}", d.body);
    let (at_ms, headers) = f.service.webhook_headers(d).unwrap();
    assert_eq!(headers[0], ("webhook-id", d.message_id.clone()));
    // A 503 with Retry-After 600: the next attempt in 600 s, not 5.
    let answered = SendResult::Answered { status: 503, retry_after: Some(600) };
    assert_eq!(f.service.finish_webhook_attempt(d, at_ms, 12, &answered, 1.0).unwrap(), AttemptOutcome::Retrying);
    assert!(f.service.claim_webhook_deliveries(10).unwrap().is_empty(), "not due");
    f.clock.advance(599);
    assert!(f.service.claim_webhook_deliveries(10).unwrap().is_empty(), "not due yet");
    f.clock.advance(1);
    let again = f.service.claim_webhook_deliveries(10).unwrap();
    assert_eq!((again.len(), again[0].attempts, &again[0].message_id), (1, 1, &d.message_id));
    let (at2, _) = f.service.webhook_headers(&again[0]).unwrap();
    let ok = SendResult::Answered { status: 204, retry_after: None };
    assert_eq!(f.service.finish_webhook_attempt(&again[0], at2, 3, &ok, 1.0).unwrap(), AttemptOutcome::Delivered);
    assert_eq!(f.service.store().webhook_queue_depth().unwrap(), 0);
    f.clock.advance(100_000);
    assert!(f.service.claim_webhook_deliveries(10).unwrap().is_empty(), "delivered is done");
    let log = f.service.store().webhook_attempts(&f.partner, &endpoint.id, None, 10).unwrap();
    assert_eq!(
        log.iter().map(|a| (a.attempt, a.status, a.latency_ms)).collect::<Vec<_>>(),
        [(2, Some(204), 3), (1, Some(503), 12)]
    );
    // Another partner sees no log of this endpoint.
    let other = f.service.create_partner("Other", Environment::Sandbox).unwrap().partner_id;
    assert!(f.service.store().webhook_attempts(&other, &endpoint.id, None, 10).unwrap().is_empty());
}

fn eight_failures_fail_the_message_and_five_days_disable_the_endpoint(b: Backend) {
    use rampart_core::webhooks::{AttemptOutcome, SCHEDULE_SECS, SendResult};
    let f = Fixture::new(b);
    let (endpoint, _) = f.service.create_webhook_endpoint(&f.partner, PUBLIC, &["webhook.test"]).unwrap();
    let id = endpoint.id.to_string();
    f.service.test_webhook_endpoint(&f.partner, &id).unwrap();
    let down = SendResult::Failed("connection failed".into());
    // Attempt k fails; the next is due after SCHEDULE_SECS[k] plus up to 20%, not before.
    for k in 1..=8u32 {
        let claimed = f.service.claim_webhook_deliveries(10).unwrap();
        assert_eq!((claimed.len(), claimed[0].attempts), (1, k - 1), "attempt {k}");
        let (at, _) = f.service.webhook_headers(&claimed[0]).unwrap();
        let outcome = f.service.finish_webhook_attempt(&claimed[0], at, 1, &down, 1.0).unwrap();
        if k == 8 {
            assert_eq!(outcome, AttemptOutcome::Failed);
            break;
        }
        assert_eq!(outcome, AttemptOutcome::Retrying);
        let delay = SCHEDULE_SECS[k as usize];
        f.clock.advance(delay.saturating_sub(1));
        assert!(f.service.claim_webhook_deliveries(10).unwrap().is_empty(), "attempt {} came early", k + 1);
        f.clock.advance(delay / 5 + 1);
    }
    f.clock.advance(30 * 24 * 3600);
    assert!(f.service.claim_webhook_deliveries(10).unwrap().is_empty(), "failed for good");
    let queued = f.service.store().webhook_deliveries(&f.partner).unwrap();
    assert_eq!((queued[0].state.as_str(), queued[0].attempts), ("failed", 8));
    // The endpoint has failed since the first attempt, over 5 days ago: the next failure
    // disables it, audited as the system's.
    f.service.test_webhook_endpoint(&f.partner, &id).unwrap();
    let claimed = f.service.claim_webhook_deliveries(10).unwrap();
    let (at, _) = f.service.webhook_headers(&claimed[0]).unwrap();
    f.service.finish_webhook_attempt(&claimed[0], at, 1, &down, 1.0).unwrap();
    assert!(!f.service.webhook_endpoints(&f.partner).unwrap()[0].enabled);
    let rows = f.service.audit_events(&f.partner, None, 0, 500).unwrap().events;
    let last = rows.last().unwrap();
    assert_eq!((last.actor.as_str(), last.details["change"].as_str()), ("system", Some("disabled")));
    // A disabled endpoint's deliveries are not claimed.
    f.service.test_webhook_endpoint(&f.partner, &id).unwrap();
    assert!(f.service.claim_webhook_deliveries(10).unwrap().is_empty());
}

/// On SQLite a change appends each message to `webhook_outbox` and nothing else; a claim files
/// it (`webhook_messages`, a `webhook_deliveries` row per endpoint) in its own transaction, and
/// every read and resend meanwhile finds it, pending.
#[test]
fn sqlite_files_the_outbox_when_the_queue_is_claimed() {
    let f = Fixture::new(Backend::Sqlite);
    let path = f.store.path.clone().unwrap();
    let count = |table: &str| -> i64 {
        rusqlite::Connection::open(&path)
            .unwrap()
            .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    };
    let events = ["2fa.enabled", "2fa.disabled"];
    let (one, _) = f.service.create_webhook_endpoint(&f.partner, PUBLIC, &events).unwrap();
    let (two, _) = f.service.create_webhook_endpoint(&f.partner, PUBLIC, &events).unwrap();
    let c = common::contact();
    let secret = f.create(&c);
    f.service.enable_2fa(&f.partner, &c, f.code(&secret, 0).as_str()).unwrap();
    assert_eq!((count("webhook_outbox"), count("webhook_messages"), count("webhook_deliveries")), (1, 0, 0));
    let s = f.service.store();
    assert_eq!(s.webhook_queue_depth().unwrap(), 2);
    let staged = s.webhook_deliveries(&f.partner).unwrap();
    let mut ids = [one.id, two.id];
    ids.sort();
    assert_eq!(
        staged.iter().map(|d| (d.event.as_str(), d.endpoint_id, d.attempts, d.state.as_str())).collect::<Vec<_>>(),
        [("2fa.enabled", ids[0], 0, "pending"), ("2fa.enabled", ids[1], 0, "pending")]
    );
    // A claim files it, then leases both deliveries.
    let claimed = f.service.claim_webhook_deliveries(10).unwrap();
    assert_eq!(claimed.len(), 2);
    assert_eq!((count("webhook_outbox"), count("webhook_messages"), count("webhook_deliveries")), (0, 1, 2));
    assert_eq!(s.webhook_deliveries(&f.partner).unwrap(), staged, "the same deliveries, filed");
    // The disable's message waits in the outbox beside the filed one; the list has both, in order.
    f.clock.advance(30);
    f.service.disable_2fa(&f.partner, &c, f.code(&secret, 0).as_str()).unwrap();
    assert_eq!((count("webhook_outbox"), count("webhook_messages")), (1, 1));
    let both = s.webhook_deliveries(&f.partner).unwrap();
    assert_eq!(
        both.iter().map(|d| d.event.as_str()).collect::<Vec<_>>(),
        ["2fa.enabled", "2fa.enabled", "2fa.disabled", "2fa.disabled"]
    );
    assert_eq!(s.webhook_queue_depth().unwrap(), 4);
    // A resend finds the message in the outbox (not attempted yet: already pending and due),
    // but not as another partner's.
    let now = rampart_core::Clock::now(&*f.clock);
    assert!(s.resend_webhook_message(&f.partner, &both[2].message_id, now).unwrap());
    let other = f.service.create_partner("Other", Environment::Sandbox).unwrap().partner_id;
    assert!(!s.resend_webhook_message(&other, &both[2].message_id, now).unwrap());
    assert_eq!(s.webhook_deliveries(&f.partner).unwrap(), both);
    // The next claim files it.
    assert_eq!(f.service.claim_webhook_deliveries(10).unwrap().len(), 2);
    assert_eq!((count("webhook_outbox"), count("webhook_messages"), count("webhook_deliveries")), (0, 2, 4));
}
