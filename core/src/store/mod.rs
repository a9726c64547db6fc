//! Storage: a small synchronous [`Store`] trait, an embedded SQLite implementation (the
//! default) and an in-memory one. It keeps partners, contacts' 2FA records, the audit log, and
//! the widget's sessions, email sign-ins and orders.
//!
//! The store knows nothing of TOTP. It keeps records and offers one atomic primitive per
//! record, [`Store::update_contact`] and [`Store::update_partner`]: read, let the caller
//! change it, write, as one transaction, together with the change's [`Effects`] (its audit
//! events, chained onto the partner's audit trail in that same transaction). Every replay and throttle rule runs inside that
//! primitive, so of N concurrent requests with the same code exactly one succeeds, and
//! failure counts are exact. Every contact record is keyed by (partner id, contact id).

mod faulty;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
mod sqlite;

use std::fmt;

#[cfg(feature = "postgres")]
pub use self::postgres::{PostgresOptions, PostgresStore};
pub use faulty::FaultyStore;
pub use memory::MemoryStore;
pub use sqlite::{SqliteOptions, SqliteStore};

use crate::ids::{ContactId, OrderId, PartnerId};
use crate::vocab::{Environment, Role, SessionStage};

pub use crate::chain::{AuditDraft, AuditHead, AuditRow};
use crate::vocab::{Field, KEY_HEADER_LEN};

/// A storage failure. Its text is for logs; callers see the operation's own 500 message.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The backend failed (I/O, corruption, lock time-out).
    #[error("storage backend failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync + 'static>),
    /// A uniqueness rule was broken (for example a duplicate partner id).
    #[error("storage conflict: {0}")]
    Conflict(&'static str),
    /// A stored row does not decode (unknown environment, bad length).
    #[error("stored data is corrupt: {0}")]
    Corrupt(&'static str),
    /// The change's audit events could not be written, so the change was not made either.
    #[error("audit write failed: {0}")]
    Audit(#[source] Box<dyn std::error::Error + Send + Sync + 'static>),
}

impl StoreError {
    /// Wrap a failure to write audit events.
    pub fn audit(e: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>) -> Self {
        Self::Audit(e.into())
    }
}

/// What an update writes besides its record, in the same transaction: the audit events of the
/// change (SPEC 9.1) and its webhook messages (SPEC 10, the outbox). A store writes them
/// whenever there are any, whether or not the update function asked for its record to be
/// written (an operator's action on a contact with nothing to change is still recorded). A
/// store that runs an update function again (a retried transaction) gives it fresh, empty
/// effects each time.
#[derive(Debug, Default)]
pub struct Effects {
    /// Audit events, in order.
    pub audit: Vec<AuditDraft>,
    /// Webhook messages, in order: queued for each of the partner's enabled endpoints that
    /// receive their event.
    pub webhooks: Vec<WebhookEvent>,
}

/// The audit events that are also webhook events (SPEC 10), their `data` the contact id and the
/// audit details.
pub const AUDITED_WEBHOOK_EVENTS: [&str; 7] = [
    "2fa.enabled",
    "2fa.disabled",
    "2fa.reset",
    "2fa.locked",
    "recovery_code.used",
    "widget.approved",
    "widget.unapproved",
];

impl Effects {
    /// Record an audit event, and its webhook message when it is one of
    /// [`AUDITED_WEBHOOK_EVENTS`]: one call, so no change can record one and forget the other.
    pub fn audit(&mut self, draft: AuditDraft) {
        // A team member's 2FA (their own sign-in, or an operator resetting it) is audited but
        // is no contact's event: no webhook. Its rows name no contact.
        let members = matches!(draft.actor, crate::chain::Actor::Member(_))
            || (draft.contact_id.is_none() && !draft.event.starts_with("widget."));
        if AUDITED_WEBHOOK_EVENTS.contains(&draft.event) && !members {
            let mut data = serde_json::Map::new();
            if let Some(contact) = &draft.contact_id {
                data.insert("contactId".into(), serde_json::Value::String(contact.to_string()));
            }
            data.extend(draft.details.iter().map(|(k, v)| (k.clone(), v.clone())));
            let id = format!("msg_{}", draft.id.simple());
            self.webhooks.push(WebhookEvent::new(
                id,
                draft.event,
                draft.at_ms / 1000,
                &serde_json::Value::Object(data),
            ));
        }
        self.audit.push(draft);
    }

    /// Queue a webhook message that is not an audit event (an order's).
    pub fn webhook(&mut self, event: WebhookEvent) {
        self.webhooks.push(event);
    }

    /// Whether there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.audit.is_empty() && self.webhooks.is_empty()
    }
}

/// A webhook message of a change, as the outbox stores it: the same `webhook-id` for every
/// endpoint and every retry, and the exact body every attempt signs.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookEvent {
    /// `msg_` and 32 hex digits.
    pub id: String,
    /// The event name (`order.completed`, ...).
    pub event: String,
    /// `{"type","timestamp","data"}` as sent.
    pub body: String,
    /// When it happened (Unix seconds): its first attempt is due then.
    pub at: u64,
    /// Only to this endpoint, whatever its events (`webhook.test`); `None`: to every enabled
    /// endpoint that receives the event.
    pub only_to: Option<uuid::Uuid>,
}

impl WebhookEvent {
    /// A message of `event` at `at` (Unix seconds) with `data`: the body is
    /// `{"type","timestamp","data"}` in that order, the timestamp RFC 3339 UTC.
    pub fn new(id: String, event: &str, at: u64, data: &serde_json::Value) -> Self {
        let timestamp = crate::chain::rfc3339_millis(at.saturating_mul(1000));
        let body = format!(
            "{{\"type\":{},\"timestamp\":{},\"data\":{}}}",
            serde_json::Value::from(event),
            serde_json::Value::from(timestamp),
            data
        );
        Self { id, event: event.to_owned(), body, at, only_to: None }
    }
}

impl fmt::Debug for WebhookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookEvent").field("id", &self.id).field("event", &self.event).finish_non_exhaustive()
    }
}

/// A due delivery a server has claimed (leased) to attempt now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedDelivery {
    /// The partner.
    pub partner_id: PartnerId,
    /// The message's `webhook-id`.
    pub message_id: String,
    /// The event name.
    pub event: String,
    /// The body every attempt sends and signs.
    pub body: String,
    /// The endpoint as it stands (its sealed secrets sign the attempt).
    pub endpoint: WebhookEndpointRecord,
    /// Attempts made before this one.
    pub attempts: u32,
}

/// One attempt, as the delivery log shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRecord {
    /// The message's `webhook-id`.
    pub message_id: String,
    /// The event name.
    pub event: String,
    /// When it was made (Unix milliseconds).
    pub at_ms: u64,
    /// 1 for the first attempt.
    pub attempt: u32,
    /// The HTTP status, when the receiver answered.
    pub status: Option<u16>,
    /// Why it failed without an answer (`timeout`, `address not allowed`, ...).
    pub error: Option<String>,
    /// How long it took.
    pub latency_ms: u64,
}

/// What became of a claimed delivery after its attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryNext {
    /// A 2xx: done.
    Delivered,
    /// Failed; try again at this time (Unix seconds).
    Retry(u64),
    /// Failed for good (the last attempt, or the endpoint answered 410).
    Failed,
}

/// One message's delivery to one endpoint, as queued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRecord {
    /// The message's `webhook-id`.
    pub message_id: String,
    /// The endpoint.
    pub endpoint_id: uuid::Uuid,
    /// The event name.
    pub event: String,
    /// Attempts made so far.
    pub attempts: u32,
    /// When the next attempt is due (Unix seconds).
    pub next_at: u64,
    /// `pending`, `delivered` or `failed`.
    pub state: String,
}

/// A partner as stored. `Debug` leaves out the key hash.
#[derive(Clone, PartialEq, Eq)]
pub struct PartnerRecord {
    /// Id.
    pub id: PartnerId,
    /// Display name.
    pub name: String,
    /// The environment its keys belong to.
    pub environment: Environment,
    /// SHA-256 of the secret key (the key itself is never stored).
    pub secret_key_hash: [u8; 32],
    /// The publishable key (not a credential).
    pub publishable_key: String,
    /// Confirmation-screen button text.
    pub widget_text: Option<String>,
    /// Confirmation-screen button URL.
    pub widget_button_url: Option<String>,
    /// The operator waived the KYC 2FA requirement for this partner.
    pub two_factor_waived: bool,
    /// Unix seconds.
    pub created_at: u64,
    /// Origins allowed to embed the widget, canonical (`https://shop.example.com`).
    pub widget_origins: Vec<String>,
    /// An operator approved the partner's production widget.
    pub widget_approved: bool,
    /// The last 4 characters of the secret key, what the dashboard shows of it (`None` for a
    /// key issued before they were kept).
    pub secret_key_last4: Option<String>,
    /// A rolled secret key that still works until its [`PreviousKey::expires_at`]:
    /// its SHA-256, and its last 4 characters.
    pub previous_key: Option<PreviousKey>,
}

/// A rolled secret key in its overlap (SPEC 11): it keeps working until `expires_at`.
#[derive(Clone, PartialEq, Eq)]
pub struct PreviousKey {
    /// SHA-256 of the key.
    pub hash: [u8; 32],
    /// Its last 4 characters.
    pub last4: Option<String>,
    /// Unix seconds from which it is refused.
    pub expires_at: u64,
}

impl fmt::Debug for PreviousKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreviousKey").field("expires_at", &self.expires_at).finish_non_exhaustive()
    }
}

impl fmt::Debug for PartnerRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PartnerRecord")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("environment", &self.environment)
            .field("two_factor_waived", &self.two_factor_waived)
            .field("widget_origins", &self.widget_origins)
            .field("widget_approved", &self.widget_approved)
            .field("previous_key", &self.previous_key)
            .finish_non_exhaustive()
    }
}

/// A contact's 2FA record. Absent contacts read as `ContactRecord::default()`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ContactRecord {
    /// The contact passed KYC.
    pub kyc_passed: bool,
    /// 2FA is enabled.
    pub enabled: bool,
    /// The enabled secret, sealed.
    pub secret: Option<Vec<u8>>,
    /// The pending (created, not yet enabled) secret, sealed.
    pub pending: Option<Vec<u8>>,
    /// When the pending secret was created (Unix seconds).
    pub pending_created_at: Option<u64>,
    /// The last accepted time step (replay protection).
    pub last_step: Option<u64>,
    /// Consecutive failed evaluations.
    pub failures: u32,
    /// When the last failure happened (Unix seconds).
    pub last_failure_at: Option<u64>,
    /// The recovery codes (hashes only), while 2FA is enabled with a set.
    pub recovery: Option<RecoveryCodeSet>,
    /// Consecutive wrong recovery codes (their own throttle, SPEC 8.1).
    pub recovery_failures: u32,
    /// When the last wrong recovery code came (Unix seconds).
    pub recovery_last_failure_at: Option<u64>,
    /// Until when the contact may not purchase (Unix seconds), after a disable by recovery
    /// code or an operator reset.
    pub hold_until: Option<u64>,
    /// The record is a team member's own 2FA (keyed by the member's id), not a contact's:
    /// the contact API never reads or changes it and the contact lists never count it.
    pub member: bool,
}

/// A contact's set of recovery codes as stored: an id and, per code, its SHA-256 and whether it
/// was used. The codes themselves are never stored.
#[derive(Clone, PartialEq, Eq)]
pub struct RecoveryCodeSet {
    /// The set's id (random), bound into every code's hash so a replaced set's codes never match.
    pub id: [u8; 16],
    /// The codes' hashes, in issue order.
    pub codes: Vec<RecoveryCodeSlot>,
}

/// One recovery code of a [`RecoveryCodeSet`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RecoveryCodeSlot {
    /// SHA-256 over the domain prefix, partner, contact, set id and normalized code.
    pub hash: [u8; 32],
    /// The code was used (kept, so presenting it again is told apart as a reuse).
    pub used: bool,
}

/// The encoding's version byte.
const RECOVERY_SET_V1: u8 = 1;

impl RecoveryCodeSet {
    /// How many codes are left.
    pub fn remaining(&self) -> u32 {
        // At most 255 codes (the encoding's count byte).
        self.codes.iter().filter(|c| !c.used).count() as u32
    }

    /// The stored bytes: version 1, the id, the count, then per code its used flag and hash.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(18 + self.codes.len() * 33);
        out.push(RECOVERY_SET_V1);
        out.extend_from_slice(&self.id);
        out.push(u8::try_from(self.codes.len()).unwrap_or(u8::MAX));
        for slot in self.codes.iter().take(usize::from(u8::MAX)) {
            out.push(u8::from(slot.used));
            out.extend_from_slice(&slot.hash);
        }
        out
    }

    /// Decode [`RecoveryCodeSet::to_bytes`]; [`StoreError::Corrupt`] for anything else.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, StoreError> {
        const CORRUPT: StoreError = StoreError::Corrupt("recovery codes do not decode");
        let [RECOVERY_SET_V1, rest @ ..] = bytes else { return Err(CORRUPT) };
        let (Some(id), Some((&count, slots))) = (rest.get(..16), rest.get(16..).and_then(<[u8]>::split_first)) else {
            return Err(CORRUPT);
        };
        if slots.len() != usize::from(count) * 33 {
            return Err(CORRUPT);
        }
        let codes = slots
            .chunks_exact(33)
            .map(|c| match c[0] {
                0 | 1 => Ok(RecoveryCodeSlot { used: c[0] == 1, hash: c[1..].try_into().map_err(|_| CORRUPT)? }),
                _ => Err(CORRUPT),
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { id: id.try_into().map_err(|_| CORRUPT)?, codes })
    }
}

impl fmt::Debug for RecoveryCodeSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecoveryCodeSlot").field("used", &self.used).finish_non_exhaustive()
    }
}

impl fmt::Debug for RecoveryCodeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecoveryCodeSet").field("remaining", &self.remaining()).finish_non_exhaustive()
    }
}

impl fmt::Debug for ContactRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContactRecord")
            .field("kyc_passed", &self.kyc_passed)
            .field("enabled", &self.enabled)
            .field("has_secret", &self.secret.is_some())
            .field("has_pending", &self.pending.is_some())
            .field("last_step", &self.last_step)
            .field("failures", &self.failures)
            .field("recovery", &self.recovery)
            .field("recovery_failures", &self.recovery_failures)
            .field("hold_until", &self.hold_until)
            .finish_non_exhaustive()
    }
}

/// A partner's webhook endpoint as stored (SPEC 10). `Debug` leaves out the secrets.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookEndpointRecord {
    /// Id (random).
    pub id: uuid::Uuid,
    /// The partner it belongs to.
    pub partner_id: PartnerId,
    /// Where messages go: an absolute URL, checked at save.
    pub url: String,
    /// The event names it receives.
    pub events: Vec<String>,
    /// Messages are sent (off after a 410 or 5 days of failures).
    pub enabled: bool,
    /// The signing secret, sealed.
    pub secret: Vec<u8>,
    /// The secret before the last rotation, sealed: it also signs until `previous_until`.
    pub previous_secret: Option<Vec<u8>>,
    /// Until when the previous secret signs too (Unix seconds).
    pub previous_until: Option<u64>,
    /// Unix seconds.
    pub created_at: u64,
    /// Since when every message to it has failed (Unix seconds), if they do.
    pub failing_since: Option<u64>,
}

impl fmt::Debug for WebhookEndpointRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookEndpointRecord")
            .field("id", &self.id)
            .field("partner_id", &self.partner_id)
            .field("url", &self.url)
            .field("events", &self.events)
            .field("enabled", &self.enabled)
            .field("rotating", &self.previous_secret.is_some())
            .finish_non_exhaustive()
    }
}

/// A stored sealed secret, as [`Store::sealed_samples`] returns it.
#[derive(Clone, PartialEq, Eq)]
pub struct SealedSample {
    /// The partner.
    pub partner_id: PartnerId,
    /// The contact.
    pub contact_id: ContactId,
    /// Which of the contact's secrets.
    pub field: Field,
    /// The sealed value.
    pub sealed: Vec<u8>,
}

impl fmt::Debug for SealedSample {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SealedSample")
            .field("partner_id", &self.partner_id)
            .field("contact_id", &self.contact_id)
            .field("field", &self.field)
            .finish_non_exhaustive()
    }
}

/// A member of a partner's dashboard team (SPEC 11). Their 2FA is a [`ContactRecord`] keyed
/// by the member's id with `member` set.
#[derive(Clone, PartialEq, Eq)]
pub struct MemberRecord {
    /// Id (a UUID), also the key of the member's 2FA record.
    pub id: uuid::Uuid,
    /// The partner whose team it is.
    pub partner_id: PartnerId,
    /// Sign-in email, normalised (trimmed, lower case); unique over every team.
    pub email: String,
    /// Role.
    pub role: Role,
    /// The password's Argon2id hash (PHC string).
    pub password_hash: String,
    /// Unix seconds.
    pub created_at: u64,
    /// Consecutive wrong passwords (the SPEC 2 throttle).
    pub failures: u32,
    /// When the last wrong password came (Unix seconds).
    pub last_failure_at: Option<u64>,
}

impl fmt::Debug for MemberRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemberRecord")
            .field("id", &self.id)
            .field("partner_id", &self.partner_id)
            .field("role", &self.role)
            .field("failures", &self.failures)
            .finish_non_exhaustive()
    }
}

/// A pending invitation to a team: only the SHA-256 of its one-time token is stored.
#[derive(Clone, PartialEq, Eq)]
pub struct InvitationRecord {
    /// Id (a UUID), to revoke it by.
    pub id: uuid::Uuid,
    /// SHA-256 of the token in the link.
    pub token_hash: [u8; 32],
    /// The partner whose team it is.
    pub partner_id: PartnerId,
    /// The invited email, normalised.
    pub email: String,
    /// The role the member will have.
    pub role: Role,
    /// Who invited (an audit actor: `operator:<name>` or `member:<id>`).
    pub invited_by: String,
    /// Unix seconds.
    pub created_at: u64,
    /// Unix seconds from which it is refused (72 h after `created_at`).
    pub expires_at: u64,
}

impl fmt::Debug for InvitationRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InvitationRecord")
            .field("id", &self.id)
            .field("partner_id", &self.partner_id)
            .field("role", &self.role)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// A partner's team: its members (oldest first) and pending invitations (oldest first).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TeamRecord {
    /// Members.
    pub members: Vec<MemberRecord>,
    /// Invitations not yet accepted.
    pub invitations: Vec<InvitationRecord>,
}

/// A dashboard session as stored: only the SHA-256 of its cookie's token.
#[derive(Clone, PartialEq, Eq)]
pub struct DashboardSessionRecord {
    /// SHA-256 of the session token (the key).
    pub token_hash: [u8; 32],
    /// The member's partner.
    pub partner_id: PartnerId,
    /// The member.
    pub member_id: uuid::Uuid,
    /// How far sign-in has come.
    pub stage: SessionStage,
    /// Unix seconds.
    pub created_at: u64,
    /// Unix seconds of the last use; the session ends 30 minutes after it.
    pub last_seen_at: u64,
}

impl fmt::Debug for DashboardSessionRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DashboardSessionRecord")
            .field("partner_id", &self.partner_id)
            .field("member_id", &self.member_id)
            .field("stage", &self.stage)
            .field("last_seen_at", &self.last_seen_at)
            .finish_non_exhaustive()
    }
}

/// The filters of the dashboard's orders list (SPEC 11); `None` is "any".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrderFilter {
    /// Only orders in this status.
    pub status: Option<OrderStatus>,
    /// Only orders of this coin (its symbol, lower case).
    pub coin: Option<String>,
    /// Only this contact's orders.
    pub contact: Option<ContactId>,
    /// Only orders created at or after this Unix second.
    pub from: Option<u64>,
    /// Only orders created before this Unix second.
    pub until: Option<u64>,
}

impl OrderFilter {
    /// The page's bounds for the SQL stores: `until` (Unix seconds, exclusive; `i64::MAX` for
    /// none) and the `(created_at, id)` cursor, the tighter of the page's cursor and `until`,
    /// so that the index range starts where the page does (SQLite takes the cursor's bound as
    /// the range's top; a cursor of "anything" would walk every newer order first).
    pub fn bounds(&self, before: Option<(u64, OrderId)>) -> (i64, (i64, [u8; 16])) {
        let sql = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        let until = self.until.map_or(i64::MAX, sql);
        let cursor = before.map_or((i64::MAX, [0xff; 16]), |(t, id)| (sql(t), *id.as_bytes()));
        // (created_at, id) < (until, the smallest id) is exactly created_at < until.
        let cursor = if until <= cursor.0 { (until, [0u8; 16]) } else { cursor };
        (until, cursor)
    }

    /// Whether `o` passes (the memory store's test; the SQL stores say the same in SQL).
    pub fn matches(&self, o: &OrderRecord) -> bool {
        self.status.is_none_or(|s| s == o.status)
            && self.coin.as_ref().is_none_or(|c| *c == o.coin)
            && self.contact.is_none_or(|c| c == o.contact_id)
            && self.from.is_none_or(|t| o.created_at >= t)
            && self.until.is_none_or(|t| o.created_at < t)
    }
}

/// A partner's contacts by 2FA state (team members never counted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContactCounts {
    /// 2FA enabled.
    pub enabled: u64,
    /// A 2FA record, not enabled (created, disabled, reset).
    pub not_enabled: u64,
    /// Locked after [`crate::vocab::LOCK_AFTER`] failures.
    pub locked: u64,
    /// KYC passed, 2FA not enabled.
    pub kyc_without_2fa: u64,
    /// 2FA enabled with [`LOW_RECOVERY_CODES`] or fewer recovery codes left.
    pub low_recovery_codes: u64,
}

/// "Few recovery codes left": at most this many.
pub const LOW_RECOVERY_CODES: u32 = 3;

/// The contact lists of the dashboard (SPEC 11), each in contact id order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContactList {
    /// KYC passed, 2FA not enabled (the seed's rule, before any waiver).
    KycWithout2fa,
    /// Locked.
    Locked,
    /// 2FA enabled with [`LOW_RECOVERY_CODES`] or fewer recovery codes left.
    LowRecoveryCodes,
}

impl ContactList {
    /// Whether `rec` belongs to the list.
    pub fn matches(self, rec: &ContactRecord) -> bool {
        !rec.member
            && match self {
                Self::KycWithout2fa => rec.kyc_passed && !rec.enabled,
                Self::Locked => rec.failures >= crate::vocab::LOCK_AFTER,
                Self::LowRecoveryCodes => {
                    rec.enabled && rec.recovery.as_ref().is_some_and(|r| r.remaining() <= LOW_RECOVERY_CODES)
                }
            }
    }
}

/// A widget session as stored: only the SHA-256 of its bearer token, never the token.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionRecord {
    /// SHA-256 of the session token (the key).
    pub token_hash: [u8; 32],
    /// The partner whose widget opened it.
    pub partner_id: PartnerId,
    /// The embedding page's origin, or `""` for a widget opened at the top level.
    pub origin: String,
    /// Unix seconds.
    pub created_at: u64,
    /// Unix seconds of the last use; the session dies 30 minutes after it.
    pub last_seen_at: u64,
    /// The signed-in email (normalised), once signed in.
    pub email: Option<String>,
    /// The signed-in contact, once signed in.
    pub contact_id: Option<ContactId>,
    /// When the contact passed 2FA (verify or enable) in this session.
    pub two_factor_at: Option<u64>,
}

impl fmt::Debug for SessionRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionRecord")
            .field("partner_id", &self.partner_id)
            .field("origin", &self.origin)
            .field("signed_in", &self.contact_id.is_some())
            .field("two_factor_at", &self.two_factor_at)
            .finish_non_exhaustive()
    }
}

/// The email sign-in state of one (partner, email). Absent reads as `SignInRecord::default()`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SignInRecord {
    /// When codes were sent (Unix seconds), the last 10 minutes' worth.
    pub sent_at: Vec<u64>,
    /// SHA-256 over the requesting session's token hash and the live code, if one is live.
    pub code_hash: Option<[u8; 32]>,
    /// When the live code expires (Unix seconds).
    pub expires_at: u64,
    /// Wrong tries of the live code.
    pub tries: u32,
}

impl fmt::Debug for SignInRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignInRecord")
            .field("sent_at", &self.sent_at)
            .field("live", &self.code_hash.is_some())
            .field("expires_at", &self.expires_at)
            .field("tries", &self.tries)
            .finish()
    }
}

/// Where an order is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OrderStatus {
    /// Stored, not yet settled.
    Created,
    /// Settled (sandbox: at once, at the simulated price).
    Completed,
    /// Did not settle.
    Failed,
}

impl OrderStatus {
    /// `"created"`, `"completed"` or `"failed"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Completed => "completed",
            Self::Failed => "failed",
        }
    }

    /// The status with this name.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Created, Self::Completed, Self::Failed].into_iter().find(|s| s.as_str() == name)
    }
}

/// A widget order as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderRecord {
    /// Id.
    pub id: OrderId,
    /// The partner whose widget took it.
    pub partner_id: PartnerId,
    /// The buyer.
    pub contact_id: ContactId,
    /// Coin symbol (`btc`).
    pub coin: String,
    /// The amount paid, as validated (`"25.50"`).
    pub amount: String,
    /// Its currency (`usd`).
    pub currency: String,
    /// The receive address.
    pub address: String,
    /// Price of one coin in `currency` (simulated in sandbox), decimal text.
    pub price: String,
    /// Coins bought, decimal text with up to 8 places.
    pub quantity: String,
    /// Status.
    pub status: OrderStatus,
    /// Unix seconds.
    pub created_at: u64,
    /// Unix seconds of the last status change.
    pub updated_at: u64,
}

/// A created order of `partner` for a random contact, for the stores' own tests.
#[cfg(test)]
pub(crate) fn sample_order(partner: PartnerId) -> OrderRecord {
    OrderRecord {
        id: OrderId::random(),
        partner_id: partner,
        contact_id: ContactId::random(),
        coin: "btc".into(),
        amount: "25.50".into(),
        currency: "usd".into(),
        address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq".into(),
        price: "64000.00".into(),
        quantity: "0.00039843".into(),
        status: OrderStatus::Created,
        created_at: 10,
        updated_at: 10,
    }
}

/// Persistent storage for partners, contacts, the audit log, and the widget's sessions, sign-ins
/// and orders.
///
/// Implementations must make each `update_*` call atomic with respect to every other call,
/// across threads and (for shared backends) processes.
pub trait Store: Send + Sync + fmt::Debug {
    /// Insert a new partner; [`StoreError::Conflict`] if the id or a key is taken.
    fn insert_partner(&self, partner: &PartnerRecord) -> Result<(), StoreError>;

    /// A partner by id.
    fn partner(&self, id: &PartnerId) -> Result<Option<PartnerRecord>, StoreError>;

    /// A partner by the SHA-256 of its secret key, or of its rolled key still in its overlap
    /// ([`PartnerRecord::previous_key`]; the caller checks the expiry).
    fn partner_by_secret_key_hash(&self, hash: &[u8; 32]) -> Result<Option<PartnerRecord>, StoreError>;

    /// A partner by its publishable key.
    fn partner_by_publishable_key(&self, key: &str) -> Result<Option<PartnerRecord>, StoreError>;

    /// Atomically read, change and write a partner, with the change's [`Effects`]. `f`
    /// returns whether to write the record. Returns `false` when there is no such partner (and
    /// `f` is not called).
    fn update_partner(
        &self,
        id: &PartnerId,
        f: &mut dyn FnMut(&mut PartnerRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError>;

    /// How many partners there are.
    fn count_partners(&self) -> Result<u64, StoreError>;

    /// A contact's record, if it was ever written.
    fn contact(&self, partner: &PartnerId, contact: &ContactId) -> Result<Option<ContactRecord>, StoreError>;

    /// Whether a contact has 2FA enabled; `None` when the record was never written. A store
    /// may answer this without reading the whole record; the default reads it.
    fn contact_enabled(&self, partner: &PartnerId, contact: &ContactId) -> Result<Option<bool>, StoreError> {
        Ok(self.contact(partner, contact)?.map(|r| r.enabled))
    }

    /// Atomically read (default when absent), change and write a contact, with the change's
    /// [`Effects`]. `f` returns whether to write the record. Nothing else can read or write the
    /// record in between.
    fn update_contact(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        f: &mut dyn FnMut(&mut ContactRecord, &mut Effects) -> bool,
    ) -> Result<(), StoreError>;

    /// The partner's contacts that passed KYC but have not enabled 2FA, in id order.
    fn kyc_contacts_without_2fa(&self, partner: &PartnerId) -> Result<Vec<ContactId>, StoreError>;

    /// Up to `limit` contacts holding a sealed secret (enabled or pending), in (partner id,
    /// contact id) byte order, starting after `after`: a cursor for walking every secret (to
    /// re-seal them under a new master key) without loading them all at once.
    fn contacts_with_secrets(
        &self,
        after: Option<(PartnerId, ContactId)>,
        limit: usize,
    ) -> Result<Vec<(PartnerId, ContactId)>, StoreError>;

    /// Up to `per_header` sealed secrets (enabled or pending) for each distinct header, the
    /// first [`KEY_HEADER_LEN`] bytes of a sealed value (its format and key id): what a start
    /// checks the master keys against. Contacts' secrets, and webhook endpoints' (sealed under
    /// the endpoint's id in place of a contact's, [`Field::WebhookSecret`]). The default walks
    /// every contact with a secret and every partner's endpoints; a store may answer with one
    /// query.
    fn sealed_samples(&self, per_header: usize) -> Result<Vec<SealedSample>, StoreError> {
        let mut seen: std::collections::HashMap<Vec<u8>, usize> = std::collections::HashMap::new();
        let mut out = Vec::new();
        let mut keep = |partner_id: PartnerId, contact_id: ContactId, field: Field, sealed: Vec<u8>| {
            let header = sealed.get(..KEY_HEADER_LEN).unwrap_or(&sealed).to_vec();
            let count = seen.entry(header).or_default();
            if *count < per_header {
                *count += 1;
                out.push(SealedSample { partner_id, contact_id, field, sealed });
            }
        };
        let mut cursor = None;
        loop {
            let page = self.contacts_with_secrets(cursor, 512)?;
            let Some(&last) = page.last() else { break };
            for (partner_id, contact_id) in page {
                let Some(rec) = self.contact(&partner_id, &contact_id)? else { continue };
                for (field, sealed) in [(Field::Secret, rec.secret), (Field::Pending, rec.pending)] {
                    if let Some(sealed) = sealed {
                        keep(partner_id, contact_id, field, sealed);
                    }
                }
            }
            cursor = Some(last);
        }
        for (partner_id, _) in self.audit_heads()? {
            for e in self.webhook_endpoints(&partner_id)? {
                let key = ContactId::from_uuid(e.id);
                for sealed in std::iter::once(e.secret).chain(e.previous_secret) {
                    keep(partner_id, key, Field::WebhookSecret, sealed);
                }
            }
        }
        Ok(out)
    }

    /// Store a new widget session; [`StoreError::Conflict`] if its token hash is taken.
    fn insert_session(&self, session: &SessionRecord) -> Result<(), StoreError>;

    /// Atomically read, change and write a session. `f` returns whether to write; it must not
    /// change `token_hash` (the key). Returns the
    /// record as it stands after `f` (written or not), or `None` when there is no such session
    /// (and `f` is not called).
    fn update_session(
        &self,
        token_hash: &[u8; 32],
        f: &mut dyn FnMut(&mut SessionRecord) -> bool,
    ) -> Result<Option<SessionRecord>, StoreError>;

    /// Remove a session (signing out); `false` when there was none.
    fn delete_session(&self, token_hash: &[u8; 32]) -> Result<bool, StoreError>;

    /// Remove every session last seen before `before` (Unix seconds); how many went.
    fn delete_sessions_idle_since(&self, before: u64) -> Result<u64, StoreError>;

    /// Atomically read (default when absent), change and write the sign-in state of a
    /// partner's email. `f` returns whether to write.
    fn update_sign_in(
        &self,
        partner: &PartnerId,
        email: &str,
        f: &mut dyn FnMut(&mut SignInRecord) -> bool,
    ) -> Result<(), StoreError>;

    /// The contact id of a partner's email, storing `candidate` as it when there is none yet
    /// (atomically: two first sign-ins of one email get one id).
    fn contact_for_email(
        &self,
        partner: &PartnerId,
        email: &str,
        candidate: ContactId,
    ) -> Result<ContactId, StoreError>;

    /// The contact id of a partner's email, if it ever signed in.
    fn contact_by_email(&self, partner: &PartnerId, email: &str) -> Result<Option<ContactId>, StoreError>;

    /// Store a new order with its [`Effects`] (its webhook messages), in one transaction;
    /// [`StoreError::Conflict`] if its id is taken.
    fn insert_order(&self, order: &OrderRecord, effects: &Effects) -> Result<(), StoreError>;

    /// A partner's order by id (another partner's order reads as `None`).
    fn order(&self, partner: &PartnerId, id: &OrderId) -> Result<Option<OrderRecord>, StoreError>;

    /// Atomically read, change and write a partner's order. `f` returns whether to write; it
    /// must not change `id` or `partner_id`.
    /// Returns `false` when there is no such order (and `f` is not called).
    fn update_order(
        &self,
        partner: &PartnerId,
        id: &OrderId,
        f: &mut dyn FnMut(&mut OrderRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError>;

    /// Up to `limit` orders of a partner's contact, newest first (by `created_at`, then id,
    /// both descending), starting after the `(created_at, id)` cursor `before`.
    fn orders_for_contact(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        before: Option<(u64, OrderId)>,
        limit: usize,
    ) -> Result<Vec<OrderRecord>, StoreError>;

    /// Up to `limit` rows of a partner's audit chain with `seq` greater than `after`, oldest
    /// first; only the rows about `contact` when one is given.
    fn audit_events(
        &self,
        partner: &PartnerId,
        contact: Option<&ContactId>,
        after: u64,
        limit: usize,
    ) -> Result<Vec<AuditRow>, StoreError>;

    /// A partner's webhook endpoints, oldest first.
    fn webhook_endpoints(&self, partner: &PartnerId) -> Result<Vec<WebhookEndpointRecord>, StoreError>;

    /// Atomically read a partner's webhook endpoints (oldest first), let `f` change the list
    /// (add, remove, change) and write it, with the change's [`Effects`]. `f` returns whether to
    /// write. Returns `false` when there is no such partner (and `f` is not called). Changes of
    /// one partner's endpoints are serialized, so a limit checked in `f` holds.
    fn update_webhook_endpoints(
        &self,
        partner: &PartnerId,
        f: &mut dyn FnMut(&mut Vec<WebhookEndpointRecord>, &mut Effects) -> bool,
    ) -> Result<bool, StoreError>;

    /// The partner's queued webhook deliveries (every state), oldest message first.
    fn webhook_deliveries(&self, partner: &PartnerId) -> Result<Vec<DeliveryRecord>, StoreError>;

    /// Claim up to `limit` deliveries that are due at `now` (pending, `next_at <= now`, not
    /// leased or their lease expired) to endpoints that are enabled, leasing each until
    /// `lease_until`: until then no other server claims it (several servers share the queue;
    /// a server that dies leaves leases that simply expire). Oldest due first.
    fn claim_deliveries(&self, now: u64, lease_until: u64, limit: usize) -> Result<Vec<ClaimedDelivery>, StoreError>;

    /// Record an attempt of a claimed delivery and what comes next, releasing its lease, with
    /// the change's [`Effects`] (an endpoint disabled is audited); `endpoint` is the endpoint's
    /// record to write when `Some` (its `enabled` and `failing_since` after this attempt).
    fn finish_delivery(
        &self,
        partner: &PartnerId,
        endpoint_id: &uuid::Uuid,
        attempt: &AttemptRecord,
        next: &DeliveryNext,
        endpoint: Option<&WebhookEndpointRecord>,
        effects: &Effects,
    ) -> Result<(), StoreError>;

    /// An endpoint's attempts, newest first, after the attempt cursor `before` (`at_ms`,
    /// message id), at most `limit`.
    fn webhook_attempts(
        &self,
        partner: &PartnerId,
        endpoint_id: &uuid::Uuid,
        before: Option<(u64, String)>,
        limit: usize,
    ) -> Result<Vec<AttemptRecord>, StoreError>;

    /// Send a message of the partner again to the endpoints it went to: each delivery pending
    /// and due at `now`. `false` when the partner has no such message.
    fn resend_webhook_message(&self, partner: &PartnerId, message_id: &str, now: u64) -> Result<bool, StoreError>;

    /// How many deliveries are pending, over every partner (`rampart_webhook_queue_depth`).
    fn webhook_queue_depth(&self) -> Result<u64, StoreError>;

    /// Up to `limit` of the partner's orders passing `filter`, newest first (by `created_at`,
    /// then id, both descending), after the `(created_at, id)` cursor `before`.
    fn orders_page(
        &self,
        partner: &PartnerId,
        filter: &OrderFilter,
        before: Option<(u64, OrderId)>,
        limit: usize,
    ) -> Result<Vec<OrderRecord>, StoreError>;

    /// The partner's contacts counted by 2FA state, in the store (no contact is loaded).
    fn contact_counts(&self, partner: &PartnerId) -> Result<ContactCounts, StoreError>;

    /// Up to `limit` of the partner's contacts on `list`, in contact id order, after `after`:
    /// each id with its record.
    fn contacts_page(
        &self,
        partner: &PartnerId,
        list: ContactList,
        after: Option<ContactId>,
        limit: usize,
    ) -> Result<Vec<(ContactId, ContactRecord)>, StoreError>;

    /// Whether one of the partner's webhook endpoints ever answered an attempt with a 2xx.
    fn webhook_answered(&self, partner: &PartnerId) -> Result<bool, StoreError>;

    /// A partner's team (empty for an unknown partner).
    fn team(&self, partner: &PartnerId) -> Result<TeamRecord, StoreError>;

    /// Atomically read a partner's team, let `f` change it (members and invitations added,
    /// removed, changed) and write it, with the change's [`Effects`]. `f` returns whether to
    /// write. Returns `false` when there is no such partner (and `f` is not called). Changes of
    /// one team are serialized, so a rule checked in `f` (the last owner) holds. The dashboard
    /// sessions of members no longer in the team end in the same transaction.
    /// [`StoreError::Conflict`] when a member's email belongs to another team's member.
    fn update_team(
        &self,
        partner: &PartnerId,
        f: &mut dyn FnMut(&mut TeamRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError>;

    /// The member with this (normalised) email, in any team.
    fn member_by_email(&self, email: &str) -> Result<Option<MemberRecord>, StoreError>;

    /// The invitation whose token hashes to `token_hash`.
    fn invitation_by_token(&self, token_hash: &[u8; 32]) -> Result<Option<InvitationRecord>, StoreError>;

    /// Store a new dashboard session; [`StoreError::Conflict`] if its token hash is taken.
    fn insert_dashboard_session(&self, session: &DashboardSessionRecord) -> Result<(), StoreError>;

    /// Atomically read, change and write a dashboard session. `f` returns whether to write; it
    /// must not change `token_hash`. Returns the record as it stands after `f`, or `None` when
    /// there is no such session (and `f` is not called).
    fn update_dashboard_session(
        &self,
        token_hash: &[u8; 32],
        f: &mut dyn FnMut(&mut DashboardSessionRecord) -> bool,
    ) -> Result<Option<DashboardSessionRecord>, StoreError>;

    /// Remove a dashboard session; `false` when there was none.
    fn delete_dashboard_session(&self, token_hash: &[u8; 32]) -> Result<bool, StoreError>;

    /// Remove every dashboard session last seen before `before`; how many went.
    fn delete_dashboard_sessions_idle_since(&self, before: u64) -> Result<u64, StoreError>;

    /// Every partner's audit head (last `seq` and `hash`), in partner id order.
    fn audit_heads(&self) -> Result<Vec<(PartnerId, AuditHead)>, StoreError>;

    /// How many audit rows there are of each event, over every partner, by event name.
    fn audit_counts(&self) -> Result<Vec<(String, u64)>, StoreError>;

    /// Check the store is reachable.
    fn ping(&self) -> Result<(), StoreError>;

    /// What kind of store this is, for `rampart_build_info{store}`: `sqlite`, `postgres`,
    /// `memory`, or `custom` (the default) for a store of the caller's own.
    fn kind(&self) -> &'static str {
        "custom"
    }
}
