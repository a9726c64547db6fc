//! The webhook delivery worker against a real receiver on loopback (SPEC section 10): signed
//! messages that verify, retries keeping `webhook-id` with a new `webhook-timestamp`,
//! `Retry-After`, 410 disabling the endpoint (audited), no redirects, and the egress rule at
//! connect.

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use rampart_core::totp::{self, Secret};
use rampart_core::webhooks::{self, WebhookSecret};
use rampart_core::{Clock, ContactId, Environment, KeyRing, ManualClock, MemoryStore, PartnerId, Service};
use rampart_server::delivery::{self, WorkerOptions};
use serde_json::Value;
use tokio::sync::watch;

const T0: u64 = 1_900_000_020;

#[derive(Clone, Debug)]
struct Received {
    headers: HeaderMap,
    body: String,
}

/// A receiver on loopback that records every request and answers `status` (with `Retry-After:
/// retry_after` when not empty).
#[derive(Clone, Default)]
struct Receiver {
    got: Arc<Mutex<Vec<Received>>>,
    status: Arc<AtomicU16>,
    retry_after: Arc<Mutex<String>>,
}

impl Receiver {
    async fn start(&self) -> String {
        self.status.store(200, Ordering::SeqCst);
        let me = self.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: String| {
                let me = me.clone();
                async move {
                    me.got.lock().unwrap().push(Received { headers, body });
                    let status = StatusCode::from_u16(me.status.load(Ordering::SeqCst)).unwrap();
                    let retry = me.retry_after.lock().unwrap().clone();
                    let mut response = (status, "").into_response();
                    if status.is_redirection() {
                        response.headers_mut().insert("location", "http://127.0.0.1:9/elsewhere".parse().unwrap());
                    }
                    if !retry.is_empty() {
                        response.headers_mut().insert("retry-after", retry.parse().unwrap());
                    }
                    response
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        url
    }

    fn count(&self) -> usize {
        self.got.lock().unwrap().len()
    }

    async fn wait_for(&self, n: usize) -> Vec<Received> {
        for _ in 0..200 {
            if self.count() >= n {
                return self.got.lock().unwrap().clone();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the receiver got {} requests, not {n}", self.count());
    }
}

struct World {
    service: Arc<Service>,
    clock: Arc<ManualClock>,
    partner: PartnerId,
    stop: watch::Sender<bool>,
    worker: tokio::task::JoinHandle<()>,
}

async fn world(options: WorkerOptions) -> World {
    let clock = Arc::new(ManualClock::new(T0));
    let service = Arc::new(
        Service::builder(MemoryStore::new())
            .master_keys(KeyRing::generate().unwrap())
            .clock(clock.clone())
            .webhook_allow_private(true)
            .build()
            .unwrap(),
    );
    let partner = service.create_partner("Hooks", Environment::Sandbox).unwrap().partner_id;
    let (stop, stopped) = watch::channel(false);
    let worker = tokio::spawn(delivery::run(service.clone(), options, stopped));
    World { service, clock, partner, stop, worker }
}

impl World {
    /// A 2FA enable, the event `2fa.enabled` (and recovery codes).
    fn enable_2fa(&self) -> ContactId {
        let contact = ContactId::random();
        let setup = self.service.create_2fa(&self.partner, &contact, None).unwrap();
        let secret = Secret::from_base32(&setup.manual).unwrap();
        self.service.enable_2fa(&self.partner, &contact, totp::code_at(&secret, self.clock.now()).as_str()).unwrap();
        contact
    }

    async fn stop(self) {
        self.stop.send(true).unwrap();
        self.worker.await.unwrap();
    }
}

fn header<'a>(r: &'a Received, name: &str) -> &'a str {
    r.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_are_signed_retried_and_410_disables() {
    let receiver = Receiver::default();
    let url = receiver.start().await;
    let w = world(WorkerOptions { allow_private: true, retry_scale: 1.0 }).await;
    let (endpoint, secret) = w.service.create_webhook_endpoint(&w.partner, &url, &["2fa.enabled"]).unwrap();
    let secret = WebhookSecret::parse(&secret).unwrap();

    // Delivered at once, signed, the body as SPEC 10 shapes it.
    let contact = w.enable_2fa();
    let got = receiver.wait_for(1).await;
    let r = &got[0];
    let id = header(r, "webhook-id");
    assert!(id.starts_with("msg_"), "{id}");
    assert_eq!(header(r, "webhook-timestamp"), T0.to_string());
    assert_eq!(header(r, "content-type"), "application/json");
    webhooks::verify(
        &secret,
        id,
        header(r, "webhook-timestamp"),
        header(r, "webhook-signature"),
        r.body.as_bytes(),
        T0,
    )
    .unwrap();
    let body: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(body["type"], "2fa.enabled");
    assert_eq!(body["data"]["contactId"], contact.to_string());
    assert!(r.body.starts_with(r#"{"type":"2fa.enabled","timestamp":""#), "{}", r.body);

    // A 500: retried after 5 s (up to 20% more), same id, a new timestamp.
    receiver.status.store(500, Ordering::SeqCst);
    w.enable_2fa();
    let first = receiver.wait_for(2).await[1].clone();
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(receiver.count(), 2, "not before its time");
    receiver.status.store(200, Ordering::SeqCst);
    w.clock.advance(7);
    let again = receiver.wait_for(3).await[2].clone();
    assert_eq!(header(&again, "webhook-id"), header(&first, "webhook-id"));
    assert_eq!(header(&again, "webhook-timestamp"), (T0 + 7).to_string());
    assert_eq!(again.body, first.body);
    webhooks::verify(
        &secret,
        header(&again, "webhook-id"),
        &(T0 + 7).to_string(),
        header(&again, "webhook-signature"),
        again.body.as_bytes(),
        T0 + 7,
    )
    .unwrap();

    // A 429 with Retry-After: 120 waits 120 s, not 5.
    receiver.status.store(429, Ordering::SeqCst);
    *receiver.retry_after.lock().unwrap() = "120".into();
    w.enable_2fa();
    receiver.wait_for(4).await;
    receiver.status.store(200, Ordering::SeqCst);
    receiver.retry_after.lock().unwrap().clear();
    w.clock.advance(60);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(receiver.count(), 4, "Retry-After is honoured");
    w.clock.advance(61);
    receiver.wait_for(5).await;

    // A 301 is not followed: a failed attempt.
    receiver.status.store(301, Ordering::SeqCst);
    w.enable_2fa();
    receiver.wait_for(6).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.count(), 6, "the redirect was not followed");

    // A 410 disables the endpoint, audited as the system's.
    receiver.status.store(410, Ordering::SeqCst);
    w.clock.advance(10);
    receiver.wait_for(7).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let listed = w.service.webhook_endpoints(&w.partner).unwrap();
    assert!(!listed[0].enabled, "410 disabled it");
    let rows = w.service.audit_events(&w.partner, None, 0, 500).unwrap().events;
    let disabled = rows.iter().find(|r| r.details["change"] == "disabled").expect("audited");
    assert_eq!(
        (disabled.actor.as_str(), disabled.details["endpointId"].as_str()),
        ("system", Some(endpoint.id.to_string().as_str()))
    );
    // The delivery log says what happened, newest first.
    let log = w.service.store().webhook_attempts(&w.partner, &endpoint.id, None, 50).unwrap();
    assert!(log.windows(2).all(|p| p[0].at_ms >= p[1].at_ms), "newest first");
    // Attempts of one clock second are in any order among themselves.
    let mut statuses: Vec<(u64, Option<u16>)> = log.iter().map(|a| (a.at_ms, a.status)).collect();
    statuses.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let at = |s: u64| (T0 + s) * 1000;
    assert_eq!(
        statuses,
        [
            (at(138), Some(410)),
            (at(128), Some(200)),
            (at(128), Some(301)),
            (at(7), Some(200)),
            (at(7), Some(429)),
            (at(0), Some(200)),
            (at(0), Some(500)),
        ]
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_address_gets_nothing_at_send() {
    let receiver = Receiver::default();
    let url = receiver.start().await;
    // The endpoint was saved under the development flag; the worker runs without it.
    let w = world(WorkerOptions { allow_private: false, retry_scale: 1.0 }).await;
    let (endpoint, _) = w.service.create_webhook_endpoint(&w.partner, &url, &["2fa.enabled"]).unwrap();
    let named = url.replace("127.0.0.1", "localhost");
    let (by_name, _) = w.service.create_webhook_endpoint(&w.partner, &named, &["2fa.enabled"]).unwrap();
    w.enable_2fa();
    for id in [endpoint.id, by_name.id] {
        let mut log = Vec::new();
        for _ in 0..100 {
            log = w.service.store().webhook_attempts(&w.partner, &id, None, 10).unwrap();
            if !log.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(log.len(), 1, "{id}");
        assert_eq!((log[0].status, log[0].error.as_deref()), (None, Some("address not allowed")));
    }
    assert_eq!(receiver.count(), 0, "no request reached the receiver");
    w.stop().await;
}
