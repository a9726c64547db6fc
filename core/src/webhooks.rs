//! Standard Webhooks 1.0 signing (SPEC section 10): what a partner's receiver checks.
//!
//! A message is signed as `v1,` followed by the base64 of HMAC-SHA256, keyed with the secret's
//! bytes, over `{webhook-id}.{webhook-timestamp}.{body}`. During a secret's rotation both
//! secrets sign, the signatures space-separated in `webhook-signature`. [`verify`] accepts a
//! message when any `v1` signature matches one computed here, compared in constant time, and
//! its timestamp is within 5 minutes of now either way. Secrets are written `whsec_` followed
//! by the standard base64 of their bytes (32 random bytes for endpoints made here).

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use serde_json::Value;

use crate::audit::{Actor, details, event};
use crate::crypto::fill_random;
use crate::error::{Error, ErrorKind, Result};
use crate::ids::{ContactId, PartnerId};
use crate::service::Service;
use crate::store::{AttemptRecord, ClaimedDelivery, DeliveryNext, Effects, WebhookEndpointRecord, WebhookEvent};
use crate::vocab::Field;

/// How far a message's timestamp may be from now, either way.
pub const TOLERANCE_SECS: u64 = 5 * 60;
/// The prefix of a secret's text form.
pub const SECRET_PREFIX: &str = "whsec_";
/// The random bytes of a secret made here.
pub const SECRET_BYTES: usize = 32;
/// The signature scheme this library writes and reads.
const VERSION: &str = "v1";

/// A webhook signing secret. Prints redacted; wiped when dropped.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret(Zeroizing<Vec<u8>>);

impl WebhookSecret {
    /// A new secret of 32 bytes from the OS CSPRNG.
    pub fn generate() -> Result<Self> {
        let mut bytes = Zeroizing::new(vec![0u8; SECRET_BYTES]);
        fill_random(&mut bytes)?;
        Ok(Self(bytes))
    }

    /// A secret from its text (`whsec_` + standard base64; the prefix is optional, as the
    /// reference libraries read it). 400 naming `secret` when it does not decode or is empty.
    pub fn parse(text: &str) -> Result<Self> {
        let body = text.strip_prefix(SECRET_PREFIX).unwrap_or(text);
        match STANDARD.decode(body) {
            Ok(bytes) if !bytes.is_empty() => Ok(Self(Zeroizing::new(bytes))),
            _ => Err(Error::invalid_input("secret", "must be whsec_ followed by base64")),
        }
    }

    /// A secret from its bytes (as stored, once unsealed).
    pub fn from_bytes(bytes: &[u8]) -> Self {
        Self(Zeroizing::new(bytes.to_vec()))
    }

    /// The key bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The text form, `whsec_...`, to show the partner once.
    pub fn to_text(&self) -> Zeroizing<String> {
        Zeroizing::new(format!("{SECRET_PREFIX}{}", STANDARD.encode(&self.0[..])))
    }
}

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WebhookSecret(<redacted>)")
    }
}

fn mac(secret: &WebhookSecret, id: &str, timestamp: u64, body: &[u8]) -> [u8; 32] {
    // HMAC takes a key of any length.
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()).unwrap_or_else(|_| unreachable!());
    m.update(id.as_bytes());
    m.update(b".");
    m.update(timestamp.to_string().as_bytes());
    m.update(b".");
    m.update(body);
    m.finalize().into_bytes().into()
}

/// The `webhook-signature` value for a message: `v1,<base64>` for each secret, space-separated
/// (several during a rotation, the newest first).
pub fn sign(secrets: &[&WebhookSecret], id: &str, timestamp: u64, body: &[u8]) -> String {
    secrets
        .iter()
        .map(|s| format!("{VERSION},{}", STANDARD.encode(mac(s, id, timestamp, body))))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Why a message does not verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// `webhook-timestamp` is not a whole number of seconds.
    #[error("webhook-timestamp is not a number")]
    BadTimestamp,
    /// More than 5 minutes before now.
    #[error("webhook-timestamp is too old")]
    TooOld,
    /// More than 5 minutes after now.
    #[error("webhook-timestamp is too far in the future")]
    TooNew,
    /// No `v1` signature matches.
    #[error("no signature matches")]
    NoMatch,
}

/// Check a received message: its `webhook-id`, `webhook-timestamp` and `webhook-signature`
/// headers and the raw body, against the secret, at `now` (Unix seconds).
pub fn verify(
    secret: &WebhookSecret,
    id: &str,
    timestamp: &str,
    signature: &str,
    body: &[u8],
    now: u64,
) -> std::result::Result<(), VerifyError> {
    let ts: u64 = match timestamp.trim() {
        t if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {
            t.parse().map_err(|_| VerifyError::BadTimestamp)?
        }
        _ => return Err(VerifyError::BadTimestamp),
    };
    if now.saturating_sub(ts) > TOLERANCE_SECS {
        return Err(VerifyError::TooOld);
    }
    if ts.saturating_sub(now) > TOLERANCE_SECS {
        return Err(VerifyError::TooNew);
    }
    let expected = mac(secret, id, ts, body);
    let mut matched = subtle::Choice::from(0);
    for candidate in signature.split(' ') {
        let Some((VERSION, encoded)) = candidate.split_once(',') else { continue };
        let Ok(given) = STANDARD.decode(encoded) else { continue };
        matched |= given.ct_eq(&expected);
    }
    if bool::from(matched) { Ok(()) } else { Err(VerifyError::NoMatch) }
}

/// The longest endpoint URL.
pub const MAX_URL_LEN: usize = 2048;

const URL_RULE: &str = "must be an absolute https URL without credentials, at most 2048 characters";

/// Check an endpoint URL's form (SPEC 10, "URLs"): absolute `https` (or `http` when
/// `allow_private`), no credentials, at most 2048 characters. The host is not resolved here;
/// see [`check_destination`].
pub fn check_url(text: &str, allow_private: bool) -> Result<url::Url> {
    let bad = || Error::invalid_input("url", URL_RULE);
    if text.len() > MAX_URL_LEN {
        return Err(bad());
    }
    let url = url::Url::parse(text).map_err(|_| bad())?;
    let scheme_ok = url.scheme() == "https" || (allow_private && url.scheme() == "http");
    if !scheme_ok || !url.username().is_empty() || url.password().is_some() || url.host().is_none() {
        return Err(bad());
    }
    Ok(url)
}

/// Resolve the URL's host (blocking) and refuse it unless every address is public (or
/// `allow_private`): 400 "url resolves to a non-public address: `<class>`", or 400 "url host does
/// not resolve". What the worker checks again at every connect.
pub fn check_destination(url: &url::Url, allow_private: bool) -> Result<Vec<std::net::SocketAddr>> {
    use std::net::ToSocketAddrs as _;
    let port = url.port_or_known_default().unwrap_or(443);
    let addrs: Vec<std::net::SocketAddr> = match url.host() {
        Some(url::Host::Ipv4(ip)) => vec![(ip, port).into()],
        Some(url::Host::Ipv6(ip)) => vec![(ip, port).into()],
        Some(url::Host::Domain(name)) => (name, port).to_socket_addrs().map(Iterator::collect).unwrap_or_default(),
        None => Vec::new(),
    };
    if addrs.is_empty() {
        return Err(Error::invalid_input("url", "host does not resolve"));
    }
    if !allow_private && let Some(class) = addrs.iter().find_map(|a| crate::egress::classify(a.ip())) {
        return Err(Error::invalid_input("url", &format!("resolves to a non-public address: {}", class.as_str())));
    }
    Ok(addrs)
}

/// Every event a webhook endpoint can receive (SPEC 10).
pub const EVENTS: [&str; 11] = [
    "order.created",
    "order.completed",
    "order.failed",
    "2fa.enabled",
    "2fa.disabled",
    "2fa.reset",
    "2fa.locked",
    "recovery_code.used",
    "widget.approved",
    "widget.unapproved",
    "webhook.test",
];

/// The most endpoints a partner may have.
pub const MAX_ENDPOINTS: usize = 10;

/// How long the secret before a rotation keeps signing.
pub const ROTATION_OVERLAP_SECS: u64 = 24 * 3600;

/// A webhook endpoint as the partner sees it: never a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookEndpoint {
    /// Id (a UUID).
    pub id: uuid::Uuid,
    /// Where messages go.
    pub url: String,
    /// The events it receives.
    pub events: Vec<String>,
    /// Messages are sent to it.
    pub enabled: bool,
    /// Unix seconds.
    pub created_at: u64,
}

impl From<&WebhookEndpointRecord> for WebhookEndpoint {
    fn from(r: &WebhookEndpointRecord) -> Self {
        Self { id: r.id, url: r.url.clone(), events: r.events.clone(), enabled: r.enabled, created_at: r.created_at }
    }
}

/// The events of a new endpoint: at least one, each known, in the order given, once each.
fn check_events(events: &[&str]) -> Result<Vec<String>> {
    if events.is_empty() {
        return Err(Error::invalid_input("events", "must name at least one event"));
    }
    let mut out: Vec<String> = Vec::with_capacity(events.len());
    for name in events {
        if !EVENTS.contains(name) {
            return Err(Error::invalid_input("events", &format!("has an unknown event: {name}")));
        }
        if !out.iter().any(|e| e == name) {
            out.push((*name).to_owned());
        }
    }
    Ok(out)
}

fn endpoint_id(text: &str) -> Result<uuid::Uuid> {
    uuid::Uuid::try_parse(text).map_err(|_| ErrorKind::WebhookEndpointNotFound.into())
}

impl Service {
    /// The sealing key's "contact" of an endpoint's secret: the endpoint's own id.
    fn endpoint_key(id: &uuid::Uuid) -> ContactId {
        ContactId::from_uuid(*id)
    }

    /// Create a webhook endpoint (SPEC 10): the URL checked (form, then every resolved address
    /// public unless [`Config::webhook_allow_private`](crate::Config::webhook_allow_private)),
    /// the events known, at most 10 endpoints. Returns the endpoint and its new secret, shown
    /// only now. Audited as `webhook.endpoint_changed` (`created`).
    pub fn create_webhook_endpoint(
        &self,
        partner: &PartnerId,
        url: &str,
        events: &[&str],
    ) -> Result<(WebhookEndpoint, Zeroizing<String>)> {
        let allow_private = self.config().webhook_allow_private;
        let parsed = check_url(url, allow_private)?;
        let events = check_events(events)?;
        self.partner_record(partner)?;
        check_destination(&parsed, allow_private)?;
        let id = uuid::Uuid::new_v4();
        let secret = WebhookSecret::generate()?;
        let sealed = self.keys().seal(partner, &Self::endpoint_key(&id), Field::WebhookSecret, secret.as_bytes())?;
        let record = WebhookEndpointRecord {
            id,
            partner_id: *partner,
            url: parsed.to_string(),
            events,
            enabled: true,
            secret: sealed,
            previous_secret: None,
            previous_until: None,
            created_at: self.now(),
            failing_since: None,
        };
        let mut full = false;
        // A store may run the closure again (a retried transaction): it adds a copy each time.
        self.store()
            .update_webhook_endpoints(partner, &mut |list, effects| {
                full = list.len() >= MAX_ENDPOINTS;
                if full {
                    return false;
                }
                list.push(record.clone());
                effects.audit(self.endpoint_changed(&id, "created"));
                true
            })
            .map_err(Self::internal)?;
        if full {
            return Err(ErrorKind::TooManyWebhookEndpoints.into());
        }
        Ok((WebhookEndpoint::from(&record), secret.to_text()))
    }

    fn endpoint_changed(&self, id: &uuid::Uuid, change: &'static str) -> crate::chain::AuditDraft {
        let d = details([("endpointId", Value::from(id.to_string())), ("change", Value::from(change))]);
        self.draft(&Actor::Partner, event::WEBHOOK_ENDPOINT_CHANGED, None, d)
    }

    /// The partner's webhook endpoints, oldest first (never a secret).
    pub fn webhook_endpoints(&self, partner: &PartnerId) -> Result<Vec<WebhookEndpoint>> {
        self.partner_record(partner)?;
        let list = self.store().webhook_endpoints(partner).map_err(Self::internal)?;
        Ok(list.iter().map(WebhookEndpoint::from).collect())
    }

    /// Delete one of the partner's endpoints (404 "Webhook endpoint not found" for an unknown id
    /// or another partner's). Audited (`deleted`).
    pub fn delete_webhook_endpoint(&self, partner: &PartnerId, id: &str) -> Result<()> {
        let id = endpoint_id(id)?;
        let mut found = false;
        let exists = self
            .store()
            .update_webhook_endpoints(partner, &mut |list, effects| {
                let before = list.len();
                list.retain(|e| e.id != id);
                found = list.len() != before;
                if found {
                    effects.audit(self.endpoint_changed(&id, "deleted"));
                }
                found
            })
            .map_err(Self::internal)?;
        if !exists {
            return Err(ErrorKind::PartnerNotFound.into());
        }
        if found { Ok(()) } else { Err(ErrorKind::WebhookEndpointNotFound.into()) }
    }

    /// A new secret for one of the partner's endpoints, shown only now; the old one keeps
    /// signing beside it for 24 hours. Audited (`secret_rotated`).
    pub fn rotate_webhook_secret(&self, partner: &PartnerId, id: &str) -> Result<Zeroizing<String>> {
        let id = endpoint_id(id)?;
        let secret = WebhookSecret::generate()?;
        let sealed = self.keys().seal(partner, &Self::endpoint_key(&id), Field::WebhookSecret, secret.as_bytes())?;
        let until = self.now().saturating_add(ROTATION_OVERLAP_SECS);
        let mut found = false;
        let exists = self
            .store()
            .update_webhook_endpoints(partner, &mut |list, effects| {
                let Some(e) = list.iter_mut().find(|e| e.id == id) else {
                    found = false;
                    return false;
                };
                found = true;
                e.previous_secret = Some(std::mem::replace(&mut e.secret, sealed.clone()));
                e.previous_until = Some(until);
                effects.audit(self.endpoint_changed(&id, "secret_rotated"));
                true
            })
            .map_err(Self::internal)?;
        if !exists {
            return Err(ErrorKind::PartnerNotFound.into());
        }
        if found { Ok(secret.to_text()) } else { Err(ErrorKind::WebhookEndpointNotFound.into()) }
    }

    /// The secrets that sign for an endpoint now: the current one, and the one before a
    /// rotation while it overlaps.
    pub fn signing_secrets(&self, e: &WebhookEndpointRecord) -> Result<Vec<WebhookSecret>> {
        let key = Self::endpoint_key(&e.id);
        let open = |sealed: &[u8]| {
            self.keys()
                .open(&e.partner_id, &key, Field::WebhookSecret, sealed)
                .map(|b| WebhookSecret::from_bytes(&b))
                .map_err(|err| Error::new(ErrorKind::Internal).with_cause(err))
        };
        let mut out = vec![open(&e.secret)?];
        if let (Some(prev), Some(until)) = (&e.previous_secret, e.previous_until)
            && self.now() < until
        {
            out.push(open(prev)?);
        }
        Ok(out)
    }
}

/// Delays before each attempt (SPEC 10): immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h
/// and 10 h; after the 8th failure the message is failed for that endpoint.
pub const SCHEDULE_SECS: [u64; 8] = [0, 5, 300, 1800, 7200, 18_000, 36_000, 36_000];
/// Up to this fraction of random jitter is added to each delay.
pub const JITTER: f64 = 0.2;
/// The longest `Retry-After` honoured.
pub const MAX_RETRY_AFTER_SECS: u64 = 24 * 3600;
/// An endpoint whose messages have all failed this long is disabled.
pub const DISABLE_AFTER_SECS: u64 = 5 * 24 * 3600;
/// How long a claimed delivery stays leased to the server attempting it.
pub const LEASE_SECS: u64 = 60;

/// What an attempt got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendResult {
    /// The receiver answered this status; `retry_after` is its `Retry-After` in seconds (read
    /// only on a 429 or 503).
    Answered {
        /// The HTTP status.
        status: u16,
        /// `Retry-After`, in seconds.
        retry_after: Option<u64>,
    },
    /// No answer: a time-out, a refused connection, an address not allowed.
    Failed(String),
}

/// What the worker does next with a delivery: the outcome of [`Service::finish_webhook_attempt`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// A 2xx.
    Delivered,
    /// Failed; retried later.
    Retrying,
    /// Failed for good (the 8th attempt).
    Failed,
    /// A 410: the endpoint is disabled.
    EndpointDisabled,
}

impl AttemptOutcome {
    /// The `result` label of `rampart_webhook_deliveries_total`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Delivered => "delivered",
            Self::Retrying => "retrying",
            Self::Failed => "failed",
            Self::EndpointDisabled => "endpoint_disabled",
        }
    }
}

impl Service {
    /// Send a signed `webhook.test` message to one of the partner's endpoints, whatever its
    /// events. Returns its `webhook-id`.
    pub fn test_webhook_endpoint(&self, partner: &PartnerId, id: &str) -> Result<String> {
        let id = endpoint_id(id)?;
        let list = self.store().webhook_endpoints(partner).map_err(Self::internal)?;
        if !list.iter().any(|e| e.id == id) {
            self.partner_record(partner)?;
            return Err(ErrorKind::WebhookEndpointNotFound.into());
        }
        let message_id = format!("msg_{}", uuid::Uuid::new_v4().simple());
        let data = serde_json::json!({ "endpointId": id.to_string() });
        let mut event = WebhookEvent::new(message_id.clone(), "webhook.test", self.now(), &data);
        event.only_to = Some(id);
        // Written with the partner's (unchanged) record, so the message is queued atomically; a
        // retried transaction gets its own copy.
        self.store()
            .update_partner(partner, &mut |_, e| {
                e.webhook(event.clone());
                false
            })
            .map_err(Self::internal)?;
        Ok(message_id)
    }

    /// One of the partner's endpoints' delivery attempts, newest first: at most `limit`
    /// (1..=100), after the cursor `after` (a previous page's `next`).
    pub fn webhook_attempt_log(
        &self,
        partner: &PartnerId,
        id: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<AttemptRecord>, Option<String>)> {
        if !(1..=100).contains(&limit) {
            return Err(Error::invalid_input("limit", "must be an integer from 1 to 100"));
        }
        let before = match after {
            None => None,
            Some(text) => {
                let parsed = text.split_once(':').and_then(|(t, m)| Some((t.parse::<u64>().ok()?, m.to_owned())));
                Some(parsed.ok_or_else(|| Error::invalid_input("after", "must be a previous page's next"))?)
            }
        };
        let id = endpoint_id(id)?;
        let list = self.store().webhook_endpoints(partner).map_err(Self::internal)?;
        if !list.iter().any(|e| e.id == id) {
            self.partner_record(partner)?;
            return Err(ErrorKind::WebhookEndpointNotFound.into());
        }
        let page = self.store().webhook_attempts(partner, &id, before, limit).map_err(Self::internal)?;
        let next =
            (page.len() == limit).then(|| page.last().map(|a| format!("{}:{}", a.at_ms, a.message_id))).flatten();
        Ok((page, next))
    }

    /// Send one of the partner's messages again, now, to the endpoints it went to (404 "Webhook
    /// message not found" for an unknown id or another partner's).
    pub fn resend_webhook_message(&self, partner: &PartnerId, message_id: &str) -> Result<()> {
        if self.store().resend_webhook_message(partner, message_id, self.now()).map_err(Self::internal)? {
            Ok(())
        } else {
            self.partner_record(partner)?;
            Err(ErrorKind::WebhookMessageNotFound.into())
        }
    }

    /// Claim up to `limit` deliveries due now, leased to this server for [`LEASE_SECS`].
    pub fn claim_webhook_deliveries(&self, limit: usize) -> Result<Vec<ClaimedDelivery>> {
        let now = self.now();
        self.store().claim_deliveries(now, now.saturating_add(LEASE_SECS), limit).map_err(Self::internal)
    }

    /// Start an attempt of `d` now: its time (Unix milliseconds, for
    /// [`Service::finish_webhook_attempt`]) and its three headers, `webhook-id`,
    /// `webhook-timestamp` (this attempt's) and `webhook-signature` (both secrets during a
    /// rotation).
    pub fn webhook_headers(&self, d: &ClaimedDelivery) -> Result<(u64, [(&'static str, String); 3])> {
        let at_ms = self.now_millis();
        let now = at_ms / 1000;
        let secrets = self.signing_secrets(&d.endpoint)?;
        let refs: Vec<&WebhookSecret> = secrets.iter().collect();
        let signature = sign(&refs, &d.message_id, now, d.body.as_bytes());
        let headers = [
            ("webhook-id", d.message_id.clone()),
            ("webhook-timestamp", now.to_string()),
            ("webhook-signature", signature),
        ];
        Ok((at_ms, headers))
    }

    /// Seconds from now until an HTTP date (a `Retry-After` given as a date), by this service's
    /// clock; 0 when it has passed.
    pub fn seconds_until(&self, unix: u64) -> u64 {
        unix.saturating_sub(self.now())
    }

    /// Record an attempt of `d` made at `at_ms` that took `latency_ms`, and schedule what comes
    /// next (SPEC 10): a 2xx is delivered; a 410 disables the endpoint (audited, actor
    /// `system`); anything else is retried after the next delay of the schedule, with up to 20%
    /// jitter and times `scale` (the sandbox test flag), or after a 429's or 503's
    /// `Retry-After` when longer (at most 24 h, never scaled); the 8th failure fails the
    /// message for that endpoint, and an endpoint whose messages have all failed for 5 days is
    /// disabled (audited).
    pub fn finish_webhook_attempt(
        &self,
        d: &ClaimedDelivery,
        at_ms: u64,
        latency_ms: u64,
        result: &SendResult,
        scale: f64,
    ) -> Result<AttemptOutcome> {
        let now = at_ms / 1000;
        let attempt = d.attempts.saturating_add(1);
        let (status, error, retry_after) = match result {
            SendResult::Answered { status, retry_after } => (Some(*status), None, *retry_after),
            SendResult::Failed(why) => (None, Some(why.clone()), None),
        };
        let record = AttemptRecord {
            message_id: d.message_id.clone(),
            event: d.event.clone(),
            at_ms,
            attempt,
            status,
            error,
            latency_ms,
        };
        let mut endpoint = d.endpoint.clone();
        let mut effects = Effects::default();
        let delivered = status.is_some_and(|s| (200..300).contains(&s));
        let (next, outcome) = if delivered {
            endpoint.failing_since = None;
            (DeliveryNext::Delivered, AttemptOutcome::Delivered)
        } else if status == Some(410) {
            endpoint.enabled = false;
            (DeliveryNext::Failed, AttemptOutcome::EndpointDisabled)
        } else {
            let since = *endpoint.failing_since.get_or_insert(now);
            if now.saturating_sub(since) >= DISABLE_AFTER_SECS {
                endpoint.enabled = false;
            }
            match SCHEDULE_SECS.get(usize::try_from(attempt).unwrap_or(usize::MAX)) {
                None => (DeliveryNext::Failed, AttemptOutcome::Failed),
                Some(&delay) => {
                    let mut jitter = [0u8; 2];
                    fill_random(&mut jitter)?;
                    let fraction = f64::from(u16::from_le_bytes(jitter)) / f64::from(u16::MAX) * JITTER;
                    let scheduled = (delay as f64 * (1.0 + fraction) * scale).round() as u64;
                    let honoured =
                        retry_after.filter(|_| matches!(status, Some(429 | 503))).map(|s| s.min(MAX_RETRY_AFTER_SECS));
                    let wait = scheduled.max(honoured.unwrap_or(0));
                    (DeliveryNext::Retry(now.saturating_add(wait)), AttemptOutcome::Retrying)
                }
            }
        };
        let disabled = d.endpoint.enabled && !endpoint.enabled;
        if disabled {
            let dd =
                details([("endpointId", Value::from(endpoint.id.to_string())), ("change", Value::from("disabled"))]);
            effects.audit(self.draft(&Actor::System, event::WEBHOOK_ENDPOINT_CHANGED, None, dd));
        }
        let changed = (endpoint.enabled, endpoint.failing_since) != (d.endpoint.enabled, d.endpoint.failing_since);
        self.store()
            .finish_delivery(&d.partner_id, &d.endpoint.id, &record, &next, changed.then_some(&endpoint), &effects)
            .map_err(Self::internal)?;
        self.metrics().webhook_delivery(outcome.as_str());
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_round_trip_and_print_redacted() {
        let s = WebhookSecret::generate().unwrap();
        let text = s.to_text();
        assert!(text.starts_with("whsec_") && text.len() == 6 + 44, "{}", text.as_str());
        assert_eq!(WebhookSecret::parse(&text).unwrap(), s);
        assert_eq!(format!("{s:?}"), "WebhookSecret(<redacted>)");
        for bad in ["whsec_", "whsec_***", ""] {
            assert_eq!(WebhookSecret::parse(bad).unwrap_err().message(), "secret must be whsec_ followed by base64");
        }
    }

    #[test]
    fn verify_checks_time_both_ways_and_any_signature() {
        let (a, b) = (WebhookSecret::generate().unwrap(), WebhookSecret::generate().unwrap());
        let body = br#"{"type":"webhook.test"}"#;
        let both = sign(&[&a, &b], "msg_1", 1000, body);
        assert_eq!(both.split(' ').count(), 2);
        for s in [&a, &b] {
            assert_eq!(verify(s, "msg_1", "1000", &both, body, 1000), Ok(()));
            assert_eq!(verify(s, "msg_1", "1000", &both, body, 1300), Ok(()));
            assert_eq!(verify(s, "msg_1", "1000", &both, body, 1301), Err(VerifyError::TooOld));
            assert_eq!(verify(s, "msg_1", "1000", &both, body, 700), Ok(()));
            assert_eq!(verify(s, "msg_1", "1000", &both, body, 699), Err(VerifyError::TooNew));
            assert_eq!(verify(s, "msg_2", "1000", &both, body, 1000), Err(VerifyError::NoMatch));
        }
        let other = WebhookSecret::generate().unwrap();
        assert_eq!(verify(&other, "msg_1", "1000", &both, body, 1000), Err(VerifyError::NoMatch));
        assert_eq!(verify(&a, "msg_1", "+1000", &both, body, 1000), Err(VerifyError::BadTimestamp));
        assert_eq!(verify(&a, "msg_1", "1000", "v2,abc v1,!!", body, 1000), Err(VerifyError::NoMatch));
    }

    #[test]
    fn urls_are_https_public_and_short() {
        let rule = "url must be an absolute https URL without credentials, at most 2048 characters";
        for bad in [
            "http://example.com/hook",
            "https://user:pw@example.com/hook",
            "https://user@example.com/hook",
            "/hook",
            "ftp://example.com/hook",
            "not a url",
        ] {
            assert_eq!(check_url(bad, false).unwrap_err().message(), rule, "{bad}");
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_LEN));
        assert_eq!(check_url(&long, false).unwrap_err().message(), rule);
        assert!(check_url("http://127.0.0.1:9/hook", true).is_ok());
        let refused =
            |u: &str| check_destination(&check_url(u, false).unwrap(), false).unwrap_err().message().to_owned();
        for (u, class) in [
            ("https://127.0.0.1/h", "loopback"),
            ("https://[::1]/h", "loopback"),
            ("https://10.0.0.1/h", "private"),
            ("https://172.16.5.4/h", "private"),
            ("https://192.168.0.1/h", "private"),
            ("https://169.254.169.254/latest/meta-data", "cloud-metadata"),
            ("https://100.64.0.1/h", "cgnat"),
            ("https://[::ffff:127.0.0.1]/h", "loopback"),
            ("https://2130706433/h", "loopback"),
            ("https://0177.0.0.1/h", "loopback"),
            ("https://0x7f000001/h", "loopback"),
            ("https://localhost/h", "loopback"),
        ] {
            assert_eq!(refused(u), format!("url resolves to a non-public address: {class}"), "{u}");
        }
        let nowhere = check_url("https://no-such-host.invalid/h", false).unwrap();
        assert_eq!(check_destination(&nowhere, false).unwrap_err().message(), "url host does not resolve");
        assert_eq!(check_destination(&nowhere, true).unwrap_err().message(), "url host does not resolve");
        assert!(check_destination(&check_url("http://127.0.0.1:9/h", true).unwrap(), true).is_ok());
    }
}
