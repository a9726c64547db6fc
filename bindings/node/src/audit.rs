//! The audit trail (SPEC section 9.1) as JavaScript values: `AuditRow`, `AuditPage` and
//! `ChainReport`, and the arguments of the `Service` methods that return them (`service.rs`).
//!
//! A row keeps the member names and values of the core's row (and of `GET /v1/audit`):
//! `contactId` is `null` when the row concerns no contact, rather than left out as optional
//! fields elsewhere are, because it is one of the members the row's `hash` covers; so is a
//! page's `next` and a report's `firstBadSeq`, for the same shape as over HTTP.

use napi::bindgen_prelude::Unknown;
use napi_derive::napi;
use rampart_core::audit::{
    AuditPage as CorePage, AuditRow as CoreRow, ChainReport as CoreReport, DEFAULT_PAGE, MAX_PAGE,
};
use rampart_core::{ContactId, PartnerId};
use serde_json::Value;

use crate::convert::{Arg, MAX_SAFE, Read, partner_arg};

/// One row of a partner's audit chain, oldest first in a page. `at` is RFC 3339 UTC with
/// milliseconds; `actor` is `partner`, `operator:<name>`, `contact`, `member:<id>` or `system`;
/// `hash` is the hex SHA-256 of the RFC 8785 canonical JSON of the other members (`seq`, `id`,
/// `at`, `partnerId`, `contactId`, `actor`, `event`, `details`, `prev`), and `prev` the previous
/// row's `hash` (64 zeros for `seq` 1).
#[napi(object, use_nullable = true)]
#[derive(Debug)]
pub struct AuditRow {
    pub seq: f64,
    pub id: String,
    pub at: String,
    pub partner_id: String,
    pub contact_id: Option<String>,
    pub actor: String,
    pub event: String,
    /// A plain object of enums, counts, ids and times (`{ failures: 100 }`, `{ method: 'token' }`).
    #[napi(ts_type = "Record<string, unknown>")]
    pub details: Value,
    pub prev: String,
    pub hash: String,
}

impl From<CoreRow> for AuditRow {
    fn from(r: CoreRow) -> Self {
        Self {
            // Rows are counted per partner: far below 2^53.
            seq: r.seq as f64,
            id: r.id,
            at: r.at,
            partner_id: r.partner_id,
            contact_id: r.contact_id,
            actor: r.actor,
            event: r.event,
            details: r.details,
            prev: r.prev,
            hash: r.hash,
        }
    }
}

/// One page of a partner's audit chain; pass `next` as `after` for the next page (`null` on the
/// last one).
#[napi(object, use_nullable = true)]
#[derive(Debug)]
pub struct AuditPage {
    pub events: Vec<AuditRow>,
    pub next: Option<f64>,
}

impl From<CorePage> for AuditPage {
    fn from(p: CorePage) -> Self {
        Self { events: p.events.into_iter().map(AuditRow::from).collect(), next: p.next.map(|n| n as f64) }
    }
}

/// The verdict on one partner's audit chain: `rows` checked, and `firstBadSeq` `null` when the
/// chain holds, else the first `seq` whose hash or link is wrong (one past the last row when
/// rows are missing from the end).
#[napi(object, use_nullable = true)]
#[derive(Debug)]
pub struct ChainReport {
    pub partner_id: String,
    pub rows: f64,
    pub first_bad_seq: Option<f64>,
}

impl From<CoreReport> for ChainReport {
    fn from(r: CoreReport) -> Self {
        Self {
            partner_id: r.partner_id.to_string(),
            rows: r.rows as f64,
            first_bad_seq: r.first_bad_seq.map(|n| n as f64),
        }
    }
}

/// The arguments of `auditEvents`: the partner, a contact filter (`null`/`undefined`: every
/// contact; any other value must be a contact id, `""` included: "contactId must be a UUID"),
/// `after` (a whole number from 0 to 2^53 - 1, default 0) and `limit` (1 to 500, default 100;
/// anything else is the core's "limit must be an integer from 1 to 500").
pub(crate) struct AuditQuery {
    pub(crate) partner: PartnerId,
    pub(crate) contact: Option<ContactId>,
    pub(crate) after: u64,
    pub(crate) limit: usize,
}

pub(crate) fn audit_query(
    partner_id: Option<Unknown<'_>>,
    contact_id: Option<Unknown<'_>>,
    after: Option<Unknown<'_>>,
    limit: Option<Unknown<'_>>,
) -> Read<AuditQuery> {
    let partner = partner_arg(partner_id)?;
    let contact = Arg::new("contactId", contact_id).opt_string()?.map(|c| ContactId::parse(&c)).transpose()?;
    let after = Arg::new("after", after).opt_whole(0, MAX_SAFE, AFTER_RULE)?.unwrap_or(0);
    // At most MAX_PAGE (500): the cast cannot truncate.
    let limit =
        Arg::new("limit", limit).opt_whole(1, MAX_PAGE as u64, LIMIT_RULE)?.map_or(DEFAULT_PAGE, |n| n as usize);
    Ok(AuditQuery { partner, contact, after, limit })
}

/// The core's rule for `limit`, word for word.
const LIMIT_RULE: &str = "must be an integer from 1 to 500";
/// The core's rule for `after`, up to what a JS number holds exactly.
const AFTER_RULE: &str = "must be an integer from 0 to 9007199254740991";

/// `verifyAudit`'s partner: `null`/`undefined` is every partner.
pub(crate) fn opt_partner_arg(partner_id: Option<Unknown<'_>>) -> Read<Option<PartnerId>> {
    Arg::new("partnerId", partner_id).opt_string()?.map(|p| PartnerId::parse(&p)).transpose()
}
