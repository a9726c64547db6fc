//! The audit trail's rows and the rule that chains them (SPEC section 9.1): bottom layer, so the
//! stores can link rows inside the transaction of the change they record.
//!
//! Each partner has its own chain. A row's `hash` is the lowercase hex SHA-256 of the RFC 8785
//! (JCS) canonical JSON of exactly nine members: `seq`, `id`, `at`, `partnerId`, `contactId`,
//! `actor`, `event`, `details`, `prev`; `prev` is the previous row's `hash` of the same partner,
//! or 64 zeros for `seq` 1. The partner's head (last `seq` and `hash`) is kept with the partner,
//! so deleting the newest rows is detected too.
//!
//! A worked example: the row
//!
//! ```text
//! seq 1, id 0b5d3c8e-2f4a-4c1e-9a7b-6d8e9f0a1b2c, at 2026-11-26T15:00:00.000Z,
//! partnerId 6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11, contactId null, actor operator:alice,
//! event partner.waiver_set, details {}, prev 000...0 (64 zeros)
//! ```
//!
//! is hashed over these bytes (members sorted by their UTF-16 code units, no white space):
//!
//! ```text
//! {"actor":"operator:alice","at":"2026-11-26T15:00:00.000Z","contactId":null,"details":{},"event":"partner.waiver_set","id":"0b5d3c8e-2f4a-4c1e-9a7b-6d8e9f0a1b2c","partnerId":"6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11","prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":1}
//! ```
//!
//! giving `hash` = [`EXAMPLE_HASH`] (checked by a test here, and against an independent JCS
//! implementation in `make test`).

use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::ids::{ContactId, PartnerId};

/// `prev` of a partner's first row: 64 zeros.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The hash of the module documentation's worked example.
pub const EXAMPLE_HASH: &str = "b571aa52ce593b1fba55db7c8bd0c133ea8dea506de88d0e2272111daf023d7c";

/// Who made a change, as the row's `actor` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// The partner, through its secret key (or legacy JWT).
    Partner,
    /// An operator, by the name given on the command line or by the caller.
    Operator(String),
    /// The contact, through the widget.
    Contact,
    /// A member of the partner's team, by member id.
    Member(String),
    /// Rampart itself.
    System,
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Partner => f.write_str("partner"),
            Self::Operator(name) => write!(f, "operator:{name}"),
            Self::Contact => f.write_str("contact"),
            Self::Member(id) => write!(f, "member:{id}"),
            Self::System => f.write_str("system"),
        }
    }
}

/// An audit event as an operation states it, before a store gives it its place in the chain.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditDraft {
    /// The row's id.
    pub id: uuid::Uuid,
    /// When, in Unix milliseconds.
    pub at_ms: u64,
    /// The contact concerned, if any.
    pub contact_id: Option<ContactId>,
    /// Who did it.
    pub actor: Actor,
    /// The event name (`2fa.enabled`, ...).
    pub event: &'static str,
    /// Enums, counts, ids and times only: never a secret, code, key, email address or IP.
    pub details: Map<String, Value>,
}

/// A partner chain's head: the last row's `seq` and `hash` (0 and [`GENESIS`] when empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditHead {
    /// The last `seq`.
    pub seq: u64,
    /// The last `hash`.
    pub hash: String,
}

impl Default for AuditHead {
    fn default() -> Self {
        Self { seq: 0, hash: GENESIS.to_owned() }
    }
}

/// A row of a partner's audit chain, as stored and as `GET /v1/audit` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRow {
    /// Place in the partner's chain: 1, 2, ...
    pub seq: u64,
    /// A UUID.
    pub id: String,
    /// RFC 3339 UTC with milliseconds (`2026-11-26T15:00:00.000Z`).
    pub at: String,
    /// The partner.
    pub partner_id: String,
    /// The contact, or null.
    pub contact_id: Option<String>,
    /// `partner`, `operator:<name>`, `contact`, `member:<id>` or `system`.
    pub actor: String,
    /// The event name.
    pub event: String,
    /// A JSON object.
    pub details: Value,
    /// The previous row's `hash`, or 64 zeros.
    pub prev: String,
    /// Hex SHA-256 of the canonical JSON of the other members.
    pub hash: String,
}

/// The seven members of a row that come before `prev` and `seq` in its canonical JSON (JCS sorts
/// `prev` and `seq` last), borrowed.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Leading<'a> {
    id: &'a str,
    at: &'a str,
    partner_id: &'a str,
    contact_id: Option<&'a str>,
    actor: &'a str,
    event: &'a str,
    details: &'a Value,
}

/// The nine hashed members, borrowed from a row.
#[derive(Serialize)]
struct Hashed<'a> {
    #[serde(flatten)]
    leading: Leading<'a>,
    prev: &'a str,
    seq: u64,
}

impl AuditRow {
    fn hashed(&self) -> Hashed<'_> {
        let leading = Leading {
            id: &self.id,
            at: &self.at,
            partner_id: &self.partner_id,
            contact_id: self.contact_id.as_deref(),
            actor: &self.actor,
            event: &self.event,
            details: &self.details,
        };
        Hashed { leading, prev: &self.prev, seq: self.seq }
    }

    /// The RFC 8785 canonical JSON that [`hash`](Self::hash) covers.
    pub fn canonical_json(&self) -> String {
        // Strings, integers, null and objects of them: nothing JCS can refuse.
        serde_json_canonicalizer::to_string(&self.hashed()).unwrap_or_default()
    }

    /// What `hash` must be: hex SHA-256 of [`canonical_json`](Self::canonical_json), the
    /// canonical bytes streamed into the hash.
    pub fn computed_hash(&self) -> String {
        let mut hasher = Sha256::new();
        // Writing into a hash cannot fail, and these values serialize.
        let _ = serde_json_canonicalizer::to_writer(&self.hashed(), &mut hasher);
        data_encoding::HEXLOWER.encode(&hasher.finalize())
    }
}

/// Unix milliseconds as RFC 3339 UTC with exactly three fraction digits.
pub fn rfc3339_millis(at_ms: u64) -> String {
    let nanos = i128::from(at_ms) * 1_000_000;
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_else(|| "9999-12-31T23:59:59.999Z".to_owned())
}

/// A draft's canonical JSON up to where the chain goes on: every byte before the previous
/// row's hash. The hashed bytes are then `prefix + prev + "\",\"seq\":" + seq + "}"`, since in
/// RFC 8785 order `prev` and `seq` are the last two members. A store that reads the head and
/// writes the row in one statement (PostgreSQL) finishes the hash on the database's side from
/// this; [`AuditRow::computed_hash`] checks what it made.
pub fn canonical_prefix(partner: &PartnerId, draft: &AuditDraft) -> String {
    let contact = draft.contact_id.map(|c| c.to_string());
    let leading = Leading {
        id: &draft.id.to_string(),
        at: &rfc3339_millis(draft.at_ms),
        partner_id: &partner.to_string(),
        contact_id: contact.as_deref(),
        actor: &draft.actor.to_string(),
        event: draft.event,
        details: &Value::Object(draft.details.clone()),
    };
    let mut text = serde_json_canonicalizer::to_string(&leading).unwrap_or_default();
    text.pop(); // the closing brace
    text.push_str(",\"prev\":\"");
    text
}

/// An RFC 3339 time (any offset, any fraction) as Unix milliseconds; `None` when it is not one
/// or lies before 1970.
pub fn parse_rfc3339_millis(text: &str) -> Option<u64> {
    let t = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    u64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok()
}

/// Give `drafts` their places after `head` in `partner`'s chain: the rows to insert and the new
/// head. Pure; a store calls it inside the transaction that holds the partner's head.
pub fn link(partner: &PartnerId, head: &AuditHead, drafts: &[AuditDraft]) -> (Vec<AuditRow>, AuditHead) {
    let mut head = head.clone();
    let rows = drafts
        .iter()
        .map(|d| {
            let mut row = AuditRow {
                seq: head.seq + 1,
                id: d.id.to_string(),
                at: rfc3339_millis(d.at_ms),
                partner_id: partner.to_string(),
                contact_id: d.contact_id.map(|c| c.to_string()),
                actor: d.actor.to_string(),
                event: d.event.to_owned(),
                details: Value::Object(d.details.clone()),
                prev: head.hash.clone(),
                hash: String::new(),
            };
            row.hash = row.computed_hash();
            head = AuditHead { seq: row.seq, hash: row.hash.clone() };
            row
        })
        .collect();
    (rows, head)
}

/// A row of the operator log that the audit trail replaced (schema before the chains).
#[derive(Debug, Clone)]
pub struct LegacyEntry {
    /// The partner.
    pub partner_id: PartnerId,
    /// The contact, if any.
    pub contact_id: Option<ContactId>,
    /// Unix seconds.
    pub at_secs: u64,
    /// The operator's name.
    pub operator: String,
    /// The old action name (`contact.reset_lock`, ...).
    pub action: String,
}

/// The audit event of an old operator-log action name.
pub fn legacy_event(action: &str) -> &'static str {
    match action {
        "contact.mark_kyc" => "kyc.marked",
        "contact.unmark_kyc" => "kyc.unmarked",
        "contact.reset_lock" => "2fa.unlocked",
        "partner.rotate_keys" => "partner.keys_rotated",
        "partner.approve_widget" => "widget.approved",
        "partner.unapprove_widget" => "widget.unapproved",
        "partner.waive_2fa" => "partner.waiver_set",
        "partner.unwaive_2fa" => "partner.waiver_cleared",
        "keys.rewrap" => "keys.rewrapped",
        _ => "operator.action",
    }
}

/// The operator log (oldest first) as drafts per partner, in first-seen partner order: each
/// entry keeps its time, operator and contact; the event is its new name, and an action with
/// no new name keeps its old one in `details.legacyAction`.
pub fn legacy_drafts(entries: Vec<LegacyEntry>) -> Vec<(PartnerId, Vec<AuditDraft>)> {
    let mut out: Vec<(PartnerId, Vec<AuditDraft>)> = Vec::new();
    for e in entries {
        let event = legacy_event(&e.action);
        let mut details = Map::new();
        if event == "operator.action" {
            details.insert("legacyAction".into(), Value::String(e.action.clone()));
        }
        let draft = AuditDraft {
            id: uuid::Uuid::new_v4(),
            at_ms: e.at_secs.saturating_mul(1000),
            contact_id: e.contact_id,
            actor: Actor::Operator(e.operator),
            event,
            details,
        };
        match out.iter_mut().find(|(p, _)| *p == e.partner_id) {
            Some((_, drafts)) => drafts.push(draft),
            None => out.push((e.partner_id, vec![draft])),
        }
    }
    out
}

/// The first place a partner's chain breaks: the `seq` of the first row whose `seq`, `prev` or
/// `hash` is wrong, or, when every row is right, the head when it does not match the last row
/// (`seq` one past the last row for rows deleted from the end).
#[derive(Debug, Default)]
pub struct ChainCheck {
    expected: AuditHead,
    rows: u64,
    broken: Option<u64>,
}

impl ChainCheck {
    /// A check of a chain from its start.
    pub fn new() -> Self {
        Self::default()
    }

    /// Check the next row (rows must come in stored `seq` order). Returns `false` once broken.
    pub fn push(&mut self, row: &AuditRow) -> bool {
        self.push_computed(row, &row.computed_hash())
    }

    /// [`push`](Self::push) with the row's [`computed_hash`](AuditRow::computed_hash) worked out
    /// already (the hashes of a page can be computed in parallel; the links only in order).
    pub fn push_computed(&mut self, row: &AuditRow, computed_hash: &str) -> bool {
        if self.broken.is_some() {
            return false;
        }
        self.rows += 1;
        let seq = self.expected.seq + 1;
        if row.seq != seq || row.prev != self.expected.hash || row.hash != computed_hash {
            self.broken = Some(seq);
            return false;
        }
        self.expected = AuditHead { seq, hash: row.hash.clone() };
        true
    }

    /// After the last row: `Ok(rows)` when the chain and the stored head agree, else the first
    /// bad `seq`.
    pub fn finish(self, head: &AuditHead) -> Result<u64, u64> {
        match self.broken {
            Some(seq) => Err(seq),
            None if *head != self.expected => Err(self.expected.seq + 1),
            None => Ok(self.rows),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> AuditRow {
        AuditRow {
            seq: 1,
            id: "0b5d3c8e-2f4a-4c1e-9a7b-6d8e9f0a1b2c".into(),
            at: "2026-11-26T15:00:00.000Z".into(),
            partner_id: "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11".into(),
            contact_id: None,
            actor: "operator:alice".into(),
            event: "partner.waiver_set".into(),
            details: Value::Object(Map::new()),
            prev: GENESIS.into(),
            hash: String::new(),
        }
    }

    #[test]
    fn worked_example() {
        let row = example();
        assert_eq!(
            row.canonical_json(),
            r#"{"actor":"operator:alice","at":"2026-11-26T15:00:00.000Z","contactId":null,"details":{},"event":"partner.waiver_set","id":"0b5d3c8e-2f4a-4c1e-9a7b-6d8e9f0a1b2c","partnerId":"6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11","prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":1}"#
        );
        assert_eq!(row.computed_hash(), EXAMPLE_HASH);
    }

    #[test]
    fn millis() {
        assert_eq!(parse_rfc3339_millis("2026-11-26T15:00:00.007Z"), Some(1_795_705_200_007));
        assert_eq!(parse_rfc3339_millis("2026-11-26T16:00:00+01:00"), Some(1_795_705_200_000));
        assert_eq!(parse_rfc3339_millis("2026-11-26"), None);
        assert_eq!(parse_rfc3339_millis("1969-12-31T23:59:59Z"), None);
        assert_eq!(rfc3339_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_millis(1_795_705_200_007), "2026-11-26T15:00:00.007Z");
    }

    #[test]
    fn the_prefix_and_the_head_make_the_canonical_json() {
        let partner = PartnerId::random();
        let mut details = Map::new();
        details.insert("method".into(), Value::from("token"));
        for contact in [None, Some(crate::ids::ContactId::random())] {
            let draft = AuditDraft {
                id: uuid::Uuid::new_v4(),
                at_ms: 1_795_705_200_123,
                contact_id: contact,
                actor: Actor::Operator("ünïcode \"quoted\"".into()),
                event: "2fa.disabled",
                details: details.clone(),
            };
            let head = AuditHead { seq: 41, hash: "ab".repeat(32) };
            let (rows, _) = link(&partner, &head, std::slice::from_ref(&draft));
            let assembled = format!("{}{}\",\"seq\":{}}}", canonical_prefix(&partner, &draft), head.hash, head.seq + 1);
            assert_eq!(assembled, rows[0].canonical_json());
        }
    }

    #[test]
    fn link_and_check() {
        let partner = PartnerId::random();
        let draft = |event| AuditDraft {
            id: uuid::Uuid::new_v4(),
            at_ms: 1_764_169_200_000,
            contact_id: None,
            actor: Actor::Partner,
            event,
            details: Map::new(),
        };
        let (first, head) = link(&partner, &AuditHead::default(), &[draft("2fa.created"), draft("2fa.enabled")]);
        let (second, head) = link(&partner, &head, &[draft("2fa.disabled")]);
        let rows: Vec<_> = first.into_iter().chain(second).collect();
        assert_eq!(rows.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(rows[1].prev, rows[0].hash);
        let mut check = ChainCheck::new();
        assert!(rows.iter().all(|r| check.push(r)));
        assert_eq!(check.finish(&head), Ok(3));

        // An edit, a deletion, a reorder, a truncation.
        let mut edited = rows.clone();
        edited[1].event = "2fa.created".into();
        let mut deleted = rows.clone();
        deleted.remove(1);
        let mut reordered = rows.clone();
        reordered.swap(0, 1);
        for (bad, seq) in [(edited, 2), (deleted, 2), (reordered, 1), (rows[..2].to_vec(), 3)] {
            let mut check = ChainCheck::new();
            bad.iter().for_each(|r| {
                check.push(r);
            });
            assert_eq!(check.finish(&head), Err(seq));
        }
    }
}
