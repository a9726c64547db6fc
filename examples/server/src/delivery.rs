//! The webhook delivery worker (SPEC section 10): every server runs one. It claims due
//! deliveries from the shared queue (leased, so servers sharing PostgreSQL never send one message
//! to one endpoint at the same time, and a dead server's leases expire), signs each attempt,
//! POSTs it with a 15 s time-out and no redirects, and records what came of it (the schedule,
//! `Retry-After`, 410 and the 5-day rule are the core's, `Service::finish_webhook_attempt`).
//!
//! Where it may connect: the host is resolved at every attempt by a resolver that refuses every
//! non-public address (`rampart_core::egress`), and an IP-literal host is checked the same way
//! before the request, unless `--webhook-allow-private`. A refused address is a failed attempt
//! ("address not allowed"), never a request.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rampart_core::Service;
use rampart_core::store::ClaimedDelivery;
use rampart_core::webhooks::SendResult;
use tokio::sync::{Notify, Semaphore, watch};
use tokio::task::JoinSet;

/// Attempts in flight at once, over every endpoint.
pub const MAX_IN_FLIGHT: usize = 64;
/// Attempts in flight at once to one endpoint.
pub const PER_ENDPOINT: usize = 4;
/// How long an attempt may take.
pub const TIMEOUT: Duration = Duration::from_secs(15);
/// How often the queue is looked at when nothing was due.
const IDLE_POLL: Duration = Duration::from_millis(200);
/// How long a stop waits for attempts in flight.
const STOP_GRACE: Duration = Duration::from_secs(20);

/// The worker's settings.
#[derive(Debug, Clone, Copy)]
pub struct WorkerOptions {
    /// `--webhook-allow-private`: loopback and private addresses are allowed.
    pub allow_private: bool,
    /// `--test-webhook-retry-scale`: every scheduled delay is multiplied by this (sandbox
    /// tests; 1 otherwise).
    pub retry_scale: f64,
}

/// The resolver every attempt uses: the system's, then the egress rule on every address.
struct GuardedResolver {
    allow_private: bool,
}

/// The error text of a refused address, found again in the request's error chain.
const NOT_ALLOWED: &str = "address not allowed";

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            if !allow_private && addrs.iter().any(|a| rampart_core::egress::classify(a.ip()).is_some()) {
                return Err(NOT_ALLOWED.into());
            }
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The HTTP client of every attempt: rustls over the system's roots, no redirects, the
/// time-out, the guarded resolver, no proxy from the environment.
pub fn client(allow_private: bool) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .use_rustls_tls()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(TIMEOUT)
        .no_proxy()
        .dns_resolver(Arc::new(GuardedResolver { allow_private }))
        .user_agent(concat!("Rampart-Webhooks/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("HTTP client: {e}"))
}

/// Run the worker until `stop` says so; then finish the attempts in flight (up to 20 s; the
/// rest keep their lease, which expires, and are sent again).
pub async fn run(service: Arc<Service>, options: WorkerOptions, mut stop: watch::Receiver<bool>) {
    let client = match client(options.allow_private) {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "webhook delivery is off: no HTTP client");
            return;
        }
    };
    let total = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    let per_endpoint: Arc<Mutex<HashMap<uuid::Uuid, Arc<Semaphore>>>> = Arc::default();
    let queued = Arc::new(Notify::new());
    let wake = queued.clone();
    service.on_webhook_queued(move || wake.notify_one());
    let mut in_flight = JoinSet::new();
    loop {
        if *stop.borrow() {
            break;
        }
        while in_flight.try_join_next().is_some() {}
        // Claim in batches: while fewer than half the slots are free, wait for attempts to end.
        if total.available_permits() < MAX_IN_FLIGHT / 2 {
            tokio::select! {
                _ = in_flight.join_next() => {}
                r = stop.changed() => if r.is_err() { break },
            }
            continue;
        }
        let room = total.available_permits();
        let svc = service.clone();
        let claimed = match tokio::task::spawn_blocking(move || svc.claim_webhook_deliveries(room)).await {
            Ok(Ok(claimed)) => claimed,
            Ok(Err(e)) => {
                tracing::warn!(kind = e.kind().name(), "webhook queue unreadable; retrying");
                Vec::new()
            }
            Err(_) => Vec::new(),
        };
        if claimed.is_empty() {
            // Nothing due: look again after IDLE_POLL (messages other servers queue, retries
            // coming due), or at once when this server queues one.
            tokio::select! {
                _ = tokio::time::sleep(IDLE_POLL) => {}
                () = queued.notified() => {}
                r = stop.changed() => if r.is_err() { break },
            }
            continue;
        }
        for delivery in claimed {
            let Ok(permit) = total.clone().acquire_owned().await else { break };
            let endpoint = per_endpoint
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(delivery.endpoint.id)
                .or_insert_with(|| Arc::new(Semaphore::new(PER_ENDPOINT)))
                .clone();
            let (service, client) = (service.clone(), client.clone());
            in_flight.spawn(async move {
                let _total = permit;
                let Ok(_one) = endpoint.acquire_owned().await else { return };
                attempt(&service, &client, delivery, options).await;
            });
        }
    }
    let finished = tokio::time::timeout(STOP_GRACE, async { while in_flight.join_next().await.is_some() {} }).await;
    if finished.is_err() {
        tracing::warn!("webhook attempts still in flight at stop; their leases expire and they are sent again");
    }
}

/// One attempt: sign, send, record.
async fn attempt(service: &Arc<Service>, client: &reqwest::Client, d: ClaimedDelivery, options: WorkerOptions) {
    let svc = service.clone();
    let claimed = d.clone();
    let Ok(Ok((at_ms, headers))) = tokio::task::spawn_blocking(move || svc.webhook_headers(&claimed)).await else {
        tracing::error!(endpoint = %d.endpoint.id, "cannot sign a webhook (its secret does not open); it keeps its lease");
        return;
    };
    let started = Instant::now();
    let result = send(service, client, &d, &headers, options.allow_private).await;
    let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let svc = service.clone();
    let done = tokio::task::spawn_blocking(move || {
        svc.finish_webhook_attempt(&d, at_ms, latency_ms, &result, options.retry_scale).map(|o| (o, d))
    })
    .await;
    match done {
        Ok(Ok((outcome, d))) => tracing::info!(
            target: "rampart::webhooks",
            endpoint = %d.endpoint.id,
            event = d.event,
            attempt = d.attempts + 1,
            outcome = outcome.as_str(),
            latency_ms,
            "webhook attempt"
        ),
        Ok(Err(e)) => tracing::warn!(kind = e.kind().name(), "cannot record a webhook attempt; it is sent again"),
        Err(_) => {}
    }
}

async fn send(
    service: &Service,
    client: &reqwest::Client,
    d: &ClaimedDelivery,
    headers: &[(&'static str, String); 3],
    allow_private: bool,
) -> SendResult {
    let Ok(url) = url::Url::parse(&d.endpoint.url) else {
        return SendResult::Failed("url is not valid".into());
    };
    // An IP-literal host never goes through the resolver: check it here.
    let literal = match url.host() {
        Some(url::Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
        _ => None,
    };
    if !allow_private && literal.is_some_and(|ip| rampart_core::egress::classify(ip).is_some()) {
        return SendResult::Failed(NOT_ALLOWED.into());
    }
    let mut request = client.post(url).header("content-type", "application/json").body(d.body.clone());
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    match request.send().await {
        Ok(response) => {
            let status = response.status().as_u16();
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| retry_after_secs(service, v));
            SendResult::Answered { status, retry_after }
        }
        Err(e) => SendResult::Failed(describe(&e)),
    }
}

/// `Retry-After` as seconds: a number of seconds, or an HTTP date counted from the server's
/// clock.
fn retry_after_secs(service: &Service, value: &str) -> Option<u64> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return value.parse().ok();
    }
    let at = httpdate::parse_http_date(value).ok()?;
    let unix = at.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
    Some(service.seconds_until(unix))
}

/// A failed attempt's error, as the delivery log shows it: never a URL or a header.
fn describe(e: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = source {
        if err.to_string().contains(NOT_ALLOWED) {
            return NOT_ALLOWED.into();
        }
        source = err.source();
    }
    if e.is_timeout() {
        "timeout".into()
    } else if e.is_connect() {
        "connection failed".into()
    } else {
        "request failed".into()
    }
}
