//! Metrics (SPEC section 9.2): one registry per [`Service`](crate::Service), no global state,
//! rendered as Prometheus text by `metrics-exporter-prometheus`.
//!
//! Every label value is an enum of this module (or a route template the caller's router
//! names), so no contact id, partner id, key or email can become a label. The audit gauge
//! `rampart_audit_events{event}` is read from the store when the text is rendered, at most once
//! per 60 s, so it counts what every process wrote, the operator commands' rows included.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use std::collections::HashMap;
use std::sync::{OnceLock, PoisonError, RwLock};

use metrics::{Counter, Histogram, Key, KeyName, Label, Metadata, Recorder, SharedString, Unit};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle, PrometheusRecorder};

use crate::ids::{ContactId, OrderId, PartnerId};
use crate::store::{
    AttemptRecord, AuditHead, AuditRow, ClaimedDelivery, ContactCounts, ContactList, ContactRecord,
    DashboardSessionRecord, DeliveryNext, DeliveryRecord, Effects, InvitationRecord, MemberRecord, OrderFilter,
    OrderRecord, PartnerRecord, SealedSample, SessionRecord, SignInRecord, Store, StoreError, TeamRecord,
    WebhookEndpointRecord,
};

/// Histogram buckets, in seconds: 0.5 ms to 5 s.
const BUCKETS: &[f64] = &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0];
/// The audit gauge is read from the store at most this often.
pub const AUDIT_GAUGE_MAX_AGE: Duration = Duration::from_secs(60);
/// Histogram samples wait in the recorder until drained; drain them every this many samples
/// as well as at each render, so a process nobody scrapes does not grow.
const UPKEEP_EVERY: u64 = 4096;

const ATTEMPTS: &str = "rampart_2fa_attempts_total";
const ATTEMPT_DURATION: &str = "rampart_2fa_attempt_duration_seconds";
const TRANSITIONS: &str = "rampart_2fa_transitions_total";
const AUDIT_EVENTS: &str = "rampart_audit_events";
const HTTP_REQUESTS: &str = "rampart_http_requests_total";
const HTTP_DURATION: &str = "rampart_http_request_duration_seconds";
const STORE_ERRORS: &str = "rampart_store_errors_total";
const AUDIT_WRITE_FAILURES: &str = "rampart_audit_write_failures_total";
const RECOVERY_CODE_REUSE: &str = "rampart_recovery_code_reuse_total";
const WEBHOOK_DELIVERIES: &str = "rampart_webhook_deliveries_total";
const WEBHOOK_QUEUE_DEPTH: &str = "rampart_webhook_queue_depth";
const BUILD_INFO: &str = "rampart_build_info";

/// A 2FA operation, as the `operation` label names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOperation {
    /// Enable.
    Enable,
    /// Disable.
    Disable,
    /// Verify.
    Verify,
    /// Regenerate recovery codes.
    Regenerate,
}

impl AttemptOperation {
    /// The label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Enable => "enable",
            Self::Disable => "disable",
            Self::Verify => "verify",
            Self::Regenerate => "regenerate",
        }
    }
}

/// The factor an attempt used, as the `factor` label names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Factor {
    /// An authenticator code (also an attempt with neither factor).
    Token,
    /// A recovery code.
    RecoveryCode,
}

impl Factor {
    /// The label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Token => "token",
            Self::RecoveryCode => "recovery_code",
        }
    }
}

/// How an attempt ended, as the `result` label names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptResult {
    /// The code verified.
    Accepted,
    /// Wrong or malformed (counted as a failure).
    Rejected,
    /// A code whose step was already used (refused, not counted).
    Replayed,
    /// Refused by the back-off (429).
    Throttled,
    /// Refused by the lock (423).
    Locked,
    /// No code given.
    Missing,
    /// Anything else: the state answers (403, 409), an unknown partner, a store failure.
    Error,
}

impl AttemptResult {
    /// The label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Accepted => "accepted",
            Self::Rejected => "rejected",
            Self::Replayed => "replayed",
            Self::Throttled => "throttled",
            Self::Locked => "locked",
            Self::Missing => "missing",
            Self::Error => "error",
        }
    }
}

/// A 2FA state change this process made, as the `transition` label names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// A pending secret was created.
    Created,
    /// 2FA was enabled.
    Enabled,
    /// 2FA was disabled.
    Disabled,
    /// The 100th failure locked 2FA.
    Locked,
}

impl Transition {
    /// The label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Enabled => "enabled",
            Self::Disabled => "disabled",
            Self::Locked => "locked",
        }
    }
}

/// The `method` label of an HTTP request: `GET`, `POST`, `DELETE` or `OTHER`.
pub fn http_method_label(method: &str) -> &'static str {
    match method {
        "GET" => "GET",
        "POST" => "POST",
        "DELETE" => "DELETE",
        _ => "OTHER",
    }
}

/// A service's metrics registry. Cheap to share; every method takes `&self`.
///
/// Each series' handle is registered once, on its first use, and kept: a request then costs
/// an atomic increment per counter and a lock-free push per histogram sample, never a lookup
/// of the series by name and labels.
pub struct Metrics {
    /// Off: nothing is recorded (the text still renders, with `rampart_build_info`).
    enabled: bool,
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
    samples: AtomicU64,
    /// When the audit gauge was last read from the store.
    audit_read_at: Mutex<Option<Instant>>,
    /// `rampart_2fa_attempts_total` by operation, factor and result.
    attempts: [[[OnceLock<Counter>; 7]; 2]; 4],
    /// `rampart_2fa_attempt_duration_seconds` by operation.
    attempt_durations: [OnceLock<Histogram>; 4],
    /// `rampart_2fa_transitions_total` by transition.
    transitions: [OnceLock<Counter>; 4],
    /// The HTTP series of each route template seen.
    routes: RwLock<HashMap<String, Route>>,
}

/// One route template's HTTP series.
struct Route {
    duration: Histogram,
    requests: RwLock<HashMap<(&'static str, u16), Counter>>,
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

static METADATA: Metadata<'static> = Metadata::new(module_path!(), metrics::Level::INFO, None);

fn label(key: &'static str, value: impl Into<SharedString>) -> Label {
    Label::new(key, value)
}

impl Metrics {
    /// A registry with `rampart_build_info` set for this version, `environment` and store kind.
    pub(crate) fn new(enabled: bool, environment: &'static str, store: &'static str) -> Self {
        let recorder =
            PrometheusBuilder::new().set_buckets(BUCKETS).expect("the bucket list is not empty").build_recorder();
        let handle = recorder.handle();
        let metrics = Self {
            enabled,
            recorder,
            handle,
            samples: AtomicU64::new(0),
            audit_read_at: Mutex::new(None),
            attempts: [const { [const { [const { OnceLock::new() }; 7] }; 2] }; 4],
            attempt_durations: [const { OnceLock::new() }; 4],
            transitions: [const { OnceLock::new() }; 4],
            routes: RwLock::new(HashMap::new()),
        };
        metrics.describe();
        let build =
            vec![label("version", env!("CARGO_PKG_VERSION")), label("environment", environment), label("store", store)];
        metrics.recorder.register_gauge(&Key::from_parts(BUILD_INFO, build), &METADATA).set(1.0);
        // A counter without labels starts at 0, so a rate is defined before the first event.
        metrics.recorder.register_counter(&Key::from_name(AUDIT_WRITE_FAILURES), &METADATA).absolute(0);
        metrics.recorder.register_counter(&Key::from_name(RECOVERY_CODE_REUSE), &METADATA).absolute(0);
        metrics
    }

    fn describe(&self) {
        let r = &self.recorder;
        let text = |name: &'static str, unit: Option<Unit>, help: &'static str| (KeyName::from(name), unit, help);
        for (name, unit, help) in [
            text(ATTEMPTS, None, "2FA attempts by operation, factor and result."),
            text(TRANSITIONS, None, "2FA state changes this process made."),
            text(HTTP_REQUESTS, None, "HTTP requests by route template, method and status."),
            text(STORE_ERRORS, None, "Store calls that failed, by store operation."),
            text(AUDIT_WRITE_FAILURES, None, "Changes refused because their audit events could not be written."),
            text(RECOVERY_CODE_REUSE, None, "Used recovery codes presented again (a leaked code sheet)."),
            text(WEBHOOK_DELIVERIES, None, "Webhook delivery attempts by result."),
        ] {
            r.describe_counter(name, unit, help.into());
        }
        for (name, unit, help) in [
            text(ATTEMPT_DURATION, Some(Unit::Seconds), "Time to answer a 2FA attempt, by operation."),
            text(HTTP_DURATION, Some(Unit::Seconds), "Time to answer an HTTP request, by route template."),
        ] {
            r.describe_histogram(name, unit, help.into());
        }
        for (name, unit, help) in [
            text(AUDIT_EVENTS, None, "Audit trail rows by event, over every partner (read from the store)."),
            text(WEBHOOK_QUEUE_DEPTH, None, "Webhook deliveries waiting, over every server (read from the store)."),
            text(BUILD_INFO, None, "Version, environment and store kind; always 1."),
        ] {
            r.describe_gauge(name, unit, help.into());
        }
    }

    fn counter(&self, name: &'static str, labels: Vec<Label>) -> Counter {
        self.recorder.register_counter(&Key::from_parts(name, labels), &METADATA)
    }

    fn histogram(&self, name: &'static str, labels: Vec<Label>) -> Histogram {
        self.recorder.register_histogram(&Key::from_parts(name, labels), &METADATA)
    }

    fn count(&self, name: &'static str, labels: Vec<Label>) {
        self.counter(name, labels).increment(1);
    }

    fn observe(&self, histogram: &Histogram, elapsed: Duration) {
        histogram.record(elapsed.as_secs_f64());
        if self.samples.fetch_add(1, Ordering::Relaxed) % UPKEEP_EVERY == UPKEEP_EVERY - 1 {
            self.handle.run_upkeep();
        }
    }

    /// One 2FA attempt and how long it took.
    pub fn attempt(&self, operation: AttemptOperation, factor: Factor, result: AttemptResult, elapsed: Duration) {
        if !self.enabled {
            return;
        }
        let (o, f, r) = (operation as usize, factor as usize, result as usize);
        self.attempts[o][f][r]
            .get_or_init(|| {
                self.counter(
                    ATTEMPTS,
                    vec![
                        label("operation", operation.as_str()),
                        label("factor", factor.as_str()),
                        label("result", result.as_str()),
                    ],
                )
            })
            .increment(1);
        let duration = self.attempt_durations[o]
            .get_or_init(|| self.histogram(ATTEMPT_DURATION, vec![label("operation", operation.as_str())]));
        self.observe(duration, elapsed);
    }

    /// One webhook delivery attempt: `delivered`, `retrying`, `failed` or `endpoint_disabled`.
    pub fn webhook_delivery(&self, result: &'static str) {
        if self.enabled {
            self.count(WEBHOOK_DELIVERIES, vec![label("result", result)]);
        }
    }

    /// A used recovery code presented again.
    pub fn recovery_code_reused(&self) {
        if self.enabled {
            self.count(RECOVERY_CODE_REUSE, Vec::new());
        }
    }

    /// A 2FA state change this process made.
    pub fn transition(&self, transition: Transition) {
        if !self.enabled {
            return;
        }
        self.transitions[transition as usize]
            .get_or_init(|| self.counter(TRANSITIONS, vec![label("transition", transition.as_str())]))
            .increment(1);
    }

    /// An HTTP request: `route` is the route's template (`/v1/auth/2fa`), or `unmatched`; never
    /// a path with values in it.
    pub fn http_request(&self, route: &str, method: &str, status: u16, elapsed: Duration) {
        if !self.enabled {
            return;
        }
        let method = http_method_label(method);
        let routes = self.routes.read().unwrap_or_else(PoisonError::into_inner);
        if let Some(known) = routes.get(route) {
            self.route_request(route, known, method, status, elapsed);
            return;
        }
        drop(routes);
        let mut routes = self.routes.write().unwrap_or_else(PoisonError::into_inner);
        let known = routes.entry(route.to_owned()).or_insert_with(|| Route {
            duration: self.histogram(HTTP_DURATION, vec![label("route", route.to_owned())]),
            requests: RwLock::new(HashMap::new()),
        });
        self.route_request(route, known, method, status, elapsed);
    }

    fn route_request(&self, route: &str, known: &Route, method: &'static str, status: u16, elapsed: Duration) {
        let requests = known.requests.read().unwrap_or_else(PoisonError::into_inner);
        match requests.get(&(method, status)) {
            Some(counter) => counter.increment(1),
            None => {
                drop(requests);
                let mut requests = known.requests.write().unwrap_or_else(PoisonError::into_inner);
                requests
                    .entry((method, status))
                    .or_insert_with(|| {
                        self.counter(
                            HTTP_REQUESTS,
                            vec![
                                label("route", route.to_owned()),
                                label("method", method),
                                label("status", status.to_string()),
                            ],
                        )
                    })
                    .increment(1);
            }
        }
        self.observe(&known.duration, elapsed);
    }

    fn store_error(&self, operation: &'static str, e: &StoreError) {
        if !self.enabled {
            return;
        }
        self.count(STORE_ERRORS, vec![label("operation", operation)]);
        if matches!(e, StoreError::Audit(_)) {
            self.count(AUDIT_WRITE_FAILURES, Vec::new());
        }
    }

    /// Whether the audit gauge is due a read from the store (and, when it is, mark it read).
    fn audit_gauge_due(&self) -> bool {
        let mut read_at = self.audit_read_at.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let due = read_at.is_none_or(|t| t.elapsed() >= AUDIT_GAUGE_MAX_AGE);
        if due {
            *read_at = Some(Instant::now());
        }
        due
    }

    fn set_audit_counts(&self, counts: &[(String, u64)]) {
        for (event, n) in counts {
            let key = Key::from_parts(AUDIT_EVENTS, vec![label("event", event.clone())]);
            #[allow(clippy::cast_precision_loss)] // exact below 2^53 rows
            self.recorder.register_gauge(&key, &METADATA).set(*n as f64);
        }
    }

    /// The Prometheus text (format 0.0.4), reading the audit gauge from `store` first when it
    /// is due. A store that cannot answer leaves the gauge as it was (and counts the error).
    pub(crate) fn render(&self, store: &dyn Store) -> String {
        if self.enabled {
            // The queue is shared by every server: read at every scrape (one indexed count).
            match store.webhook_queue_depth() {
                #[allow(clippy::cast_precision_loss)] // exact below 2^53 deliveries
                Ok(n) => self.recorder.register_gauge(&Key::from_name(WEBHOOK_QUEUE_DEPTH), &METADATA).set(n as f64),
                Err(e) => tracing::warn!(error = %e, "cannot read the webhook queue's depth for /metrics"),
            }
        }
        if self.enabled && self.audit_gauge_due() {
            match store.audit_counts() {
                Ok(counts) => self.set_audit_counts(&counts),
                Err(e) => {
                    // Read again at the next scrape rather than in 60 s.
                    *self.audit_read_at.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
                    tracing::warn!(error = %e, "cannot read the audit trail's counts for /metrics");
                }
            }
        }
        self.handle.render()
    }
}

impl Drop for Metrics {
    /// Histogram samples wait in lock-free blocks until drained, and those blocks are freed
    /// only by draining: drain them, so a dropped service leaves nothing behind.
    fn drop(&mut self) {
        self.handle.run_upkeep();
    }
}

/// Who is told when a committed change has queued webhook messages (the server's delivery
/// worker, so it need not wait for its next look at the queue).
#[derive(Default)]
pub(crate) struct QueuedSignal(RwLock<Option<Box<dyn Fn() + Send + Sync>>>);

impl fmt::Debug for QueuedSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = self.0.read().unwrap_or_else(PoisonError::into_inner).is_some();
        f.write_str(if set { "QueuedSignal(set)" } else { "QueuedSignal(unset)" })
    }
}

/// The service's store, counting failed calls in `rampart_store_errors_total{operation}` (the
/// store method's name) and failed audit writes in `rampart_audit_write_failures_total`, and
/// telling [`QueuedSignal`]'s listener of every committed write that queued webhook messages.
#[derive(Debug)]
pub(crate) struct Metered {
    pub(crate) inner: Arc<dyn Store>,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) queued: QueuedSignal,
}

impl Metered {
    fn watch<T>(&self, operation: &'static str, r: Result<T, StoreError>) -> Result<T, StoreError> {
        if let Err(e) = &r {
            self.metrics.store_error(operation, e);
        }
        r
    }

    /// Set the listener of queued messages, in place of the one before.
    pub(crate) fn on_queued(&self, listener: Box<dyn Fn() + Send + Sync>) {
        *self.queued.0.write().unwrap_or_else(PoisonError::into_inner) = Some(listener);
    }

    fn signal(&self, queued: bool) {
        if queued && let Some(listener) = &*self.queued.0.read().unwrap_or_else(PoisonError::into_inner) {
            listener();
        }
    }

    /// An update through `f`, signalled when its committed run queued a message.
    fn update<R, T>(
        &self,
        operation: &'static str,
        f: &mut dyn FnMut(&mut R, &mut Effects) -> bool,
        run: impl FnOnce(&mut dyn FnMut(&mut R, &mut Effects) -> bool) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut queued = false;
        let r = run(&mut |record, effects| {
            let write = f(record, effects);
            queued = write && !effects.webhooks.is_empty();
            write
        });
        if r.is_ok() {
            self.signal(queued);
        }
        self.watch(operation, r)
    }
}

impl Store for Metered {
    fn insert_partner(&self, partner: &PartnerRecord) -> Result<(), StoreError> {
        self.watch("insert_partner", self.inner.insert_partner(partner))
    }
    fn partner(&self, id: &PartnerId) -> Result<Option<PartnerRecord>, StoreError> {
        self.watch("partner", self.inner.partner(id))
    }
    fn partner_by_secret_key_hash(&self, hash: &[u8; 32]) -> Result<Option<PartnerRecord>, StoreError> {
        self.watch("partner_by_secret_key_hash", self.inner.partner_by_secret_key_hash(hash))
    }
    fn partner_by_publishable_key(&self, key: &str) -> Result<Option<PartnerRecord>, StoreError> {
        self.watch("partner_by_publishable_key", self.inner.partner_by_publishable_key(key))
    }
    fn update_partner(
        &self,
        id: &PartnerId,
        f: &mut dyn FnMut(&mut PartnerRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.update("update_partner", f, |f| self.inner.update_partner(id, f))
    }
    fn count_partners(&self) -> Result<u64, StoreError> {
        self.watch("count_partners", self.inner.count_partners())
    }
    fn webhook_endpoints(&self, partner: &PartnerId) -> Result<Vec<WebhookEndpointRecord>, StoreError> {
        self.watch("webhook_endpoints", self.inner.webhook_endpoints(partner))
    }
    fn update_webhook_endpoints(
        &self,
        partner: &PartnerId,
        f: &mut dyn FnMut(&mut Vec<WebhookEndpointRecord>, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.update("update_webhook_endpoints", f, |f| self.inner.update_webhook_endpoints(partner, f))
    }
    fn contact(&self, partner: &PartnerId, contact: &ContactId) -> Result<Option<ContactRecord>, StoreError> {
        self.watch("contact", self.inner.contact(partner, contact))
    }
    fn contact_enabled(&self, partner: &PartnerId, contact: &ContactId) -> Result<Option<bool>, StoreError> {
        self.watch("contact_enabled", self.inner.contact_enabled(partner, contact))
    }
    fn update_contact(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        f: &mut dyn FnMut(&mut ContactRecord, &mut Effects) -> bool,
    ) -> Result<(), StoreError> {
        self.update("update_contact", f, |f| self.inner.update_contact(partner, contact, f))
    }
    fn kyc_contacts_without_2fa(&self, partner: &PartnerId) -> Result<Vec<ContactId>, StoreError> {
        self.watch("kyc_contacts_without_2fa", self.inner.kyc_contacts_without_2fa(partner))
    }
    fn contacts_with_secrets(
        &self,
        after: Option<(PartnerId, ContactId)>,
        limit: usize,
    ) -> Result<Vec<(PartnerId, ContactId)>, StoreError> {
        self.watch("contacts_with_secrets", self.inner.contacts_with_secrets(after, limit))
    }
    fn sealed_samples(&self, per_header: usize) -> Result<Vec<SealedSample>, StoreError> {
        self.watch("sealed_samples", self.inner.sealed_samples(per_header))
    }
    fn insert_session(&self, session: &SessionRecord) -> Result<(), StoreError> {
        self.watch("insert_session", self.inner.insert_session(session))
    }
    fn update_session(
        &self,
        token_hash: &[u8; 32],
        f: &mut dyn FnMut(&mut SessionRecord) -> bool,
    ) -> Result<Option<SessionRecord>, StoreError> {
        self.watch("update_session", self.inner.update_session(token_hash, f))
    }
    fn delete_session(&self, token_hash: &[u8; 32]) -> Result<bool, StoreError> {
        self.watch("delete_session", self.inner.delete_session(token_hash))
    }
    fn delete_sessions_idle_since(&self, before: u64) -> Result<u64, StoreError> {
        self.watch("delete_sessions_idle_since", self.inner.delete_sessions_idle_since(before))
    }
    fn update_sign_in(
        &self,
        partner: &PartnerId,
        email: &str,
        f: &mut dyn FnMut(&mut SignInRecord) -> bool,
    ) -> Result<(), StoreError> {
        self.watch("update_sign_in", self.inner.update_sign_in(partner, email, f))
    }
    fn contact_for_email(
        &self,
        partner: &PartnerId,
        email: &str,
        candidate: ContactId,
    ) -> Result<ContactId, StoreError> {
        self.watch("contact_for_email", self.inner.contact_for_email(partner, email, candidate))
    }
    fn contact_by_email(&self, partner: &PartnerId, email: &str) -> Result<Option<ContactId>, StoreError> {
        self.watch("contact_by_email", self.inner.contact_by_email(partner, email))
    }
    fn insert_order(&self, order: &OrderRecord, effects: &Effects) -> Result<(), StoreError> {
        let r = self.watch("insert_order", self.inner.insert_order(order, effects));
        self.signal(r.is_ok() && !effects.webhooks.is_empty());
        r
    }
    fn order(&self, partner: &PartnerId, id: &OrderId) -> Result<Option<OrderRecord>, StoreError> {
        self.watch("order", self.inner.order(partner, id))
    }
    fn webhook_deliveries(&self, partner: &PartnerId) -> Result<Vec<DeliveryRecord>, StoreError> {
        self.watch("webhook_deliveries", self.inner.webhook_deliveries(partner))
    }
    fn claim_deliveries(&self, now: u64, lease_until: u64, limit: usize) -> Result<Vec<ClaimedDelivery>, StoreError> {
        self.watch("claim_deliveries", self.inner.claim_deliveries(now, lease_until, limit))
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
        self.watch(
            "finish_delivery",
            self.inner.finish_delivery(partner, endpoint_id, attempt, next, endpoint, effects),
        )
    }
    fn webhook_attempts(
        &self,
        partner: &PartnerId,
        endpoint_id: &uuid::Uuid,
        before: Option<(u64, String)>,
        limit: usize,
    ) -> Result<Vec<AttemptRecord>, StoreError> {
        self.watch("webhook_attempts", self.inner.webhook_attempts(partner, endpoint_id, before, limit))
    }
    fn resend_webhook_message(&self, partner: &PartnerId, message_id: &str, now: u64) -> Result<bool, StoreError> {
        let r = self.watch("resend_webhook_message", self.inner.resend_webhook_message(partner, message_id, now));
        self.signal(matches!(r, Ok(true)));
        r
    }
    fn webhook_queue_depth(&self) -> Result<u64, StoreError> {
        self.watch("webhook_queue_depth", self.inner.webhook_queue_depth())
    }
    fn update_order(
        &self,
        partner: &PartnerId,
        id: &OrderId,
        f: &mut dyn FnMut(&mut OrderRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.update("update_order", f, |f| self.inner.update_order(partner, id, f))
    }
    fn orders_for_contact(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        before: Option<(u64, OrderId)>,
        limit: usize,
    ) -> Result<Vec<OrderRecord>, StoreError> {
        self.watch("orders_for_contact", self.inner.orders_for_contact(partner, contact, before, limit))
    }
    fn audit_events(
        &self,
        partner: &PartnerId,
        contact: Option<&ContactId>,
        after: u64,
        limit: usize,
    ) -> Result<Vec<AuditRow>, StoreError> {
        self.watch("audit_events", self.inner.audit_events(partner, contact, after, limit))
    }
    fn orders_page(
        &self,
        partner: &PartnerId,
        filter: &OrderFilter,
        before: Option<(u64, OrderId)>,
        limit: usize,
    ) -> Result<Vec<OrderRecord>, StoreError> {
        self.watch("orders_page", self.inner.orders_page(partner, filter, before, limit))
    }
    fn contact_counts(&self, partner: &PartnerId) -> Result<ContactCounts, StoreError> {
        self.watch("contact_counts", self.inner.contact_counts(partner))
    }
    fn contacts_page(
        &self,
        partner: &PartnerId,
        list: ContactList,
        after: Option<ContactId>,
        limit: usize,
    ) -> Result<Vec<(ContactId, ContactRecord)>, StoreError> {
        self.watch("contacts_page", self.inner.contacts_page(partner, list, after, limit))
    }
    fn webhook_answered(&self, partner: &PartnerId) -> Result<bool, StoreError> {
        self.watch("webhook_answered", self.inner.webhook_answered(partner))
    }
    fn team(&self, partner: &PartnerId) -> Result<TeamRecord, StoreError> {
        self.watch("team", self.inner.team(partner))
    }
    fn update_team(
        &self,
        partner: &PartnerId,
        f: &mut dyn FnMut(&mut TeamRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.watch("update_team", self.inner.update_team(partner, f))
    }
    fn member_by_email(&self, email: &str) -> Result<Option<MemberRecord>, StoreError> {
        self.watch("member_by_email", self.inner.member_by_email(email))
    }
    fn invitation_by_token(&self, token_hash: &[u8; 32]) -> Result<Option<InvitationRecord>, StoreError> {
        self.watch("invitation_by_token", self.inner.invitation_by_token(token_hash))
    }
    fn insert_dashboard_session(&self, session: &DashboardSessionRecord) -> Result<(), StoreError> {
        self.watch("insert_dashboard_session", self.inner.insert_dashboard_session(session))
    }
    fn update_dashboard_session(
        &self,
        token_hash: &[u8; 32],
        f: &mut dyn FnMut(&mut DashboardSessionRecord) -> bool,
    ) -> Result<Option<DashboardSessionRecord>, StoreError> {
        self.watch("update_dashboard_session", self.inner.update_dashboard_session(token_hash, f))
    }
    fn delete_dashboard_session(&self, token_hash: &[u8; 32]) -> Result<bool, StoreError> {
        self.watch("delete_dashboard_session", self.inner.delete_dashboard_session(token_hash))
    }
    fn delete_dashboard_sessions_idle_since(&self, before: u64) -> Result<u64, StoreError> {
        self.watch("delete_dashboard_sessions_idle_since", self.inner.delete_dashboard_sessions_idle_since(before))
    }
    fn audit_heads(&self) -> Result<Vec<(PartnerId, AuditHead)>, StoreError> {
        self.watch("audit_heads", self.inner.audit_heads())
    }
    fn audit_counts(&self) -> Result<Vec<(String, u64)>, StoreError> {
        self.watch("audit_counts", self.inner.audit_counts())
    }
    fn ping(&self) -> Result<(), StoreError> {
        self.watch("ping", self.inner.ping())
    }
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
}
