//! The audit trail (SPEC section 9.1), above the store: the event names, the drafts every
//! operation hands to its store update (so the row is written in the change's own
//! transaction), and the reads: a partner's chain page by page, an export, a verification.
//!
//! The chain rule itself is [`crate::chain`], at the bottom, where the stores link rows.

use serde_json::{Map, Value};

pub use crate::chain::{
    Actor, AuditDraft, AuditHead, AuditRow, ChainCheck, GENESIS, parse_rfc3339_millis, rfc3339_millis,
};
use crate::error::{Error, Result};
use crate::ids::{ContactId, PartnerId};
use crate::service::Service;

/// Event names, exactly as SPEC 9.1 spells them.
pub mod event {
    /// A pending secret was created.
    pub const CREATED: &str = "2fa.created";
    /// 2FA was enabled.
    pub const ENABLED: &str = "2fa.enabled";
    /// 2FA was disabled (`details.method`).
    pub const DISABLED: &str = "2fa.disabled";
    /// An operator reset the contact's 2FA (`details.reason`, `details.approvedBy`).
    pub const RESET: &str = "2fa.reset";
    /// A set of recovery codes was issued (`details.reason`: `enable` or `regenerate`).
    pub const RECOVERY_CODES_ISSUED: &str = "recovery_codes.issued";
    /// A recovery code was used (`details.remaining`).
    pub const RECOVERY_CODE_USED: &str = "recovery_code.used";
    /// A used recovery code was presented again: the code sheet has leaked.
    pub const RECOVERY_CODE_REUSED: &str = "recovery_code.reused";
    /// A webhook endpoint was created, deleted, disabled or had its secret rotated
    /// (`details.endpointId`, `details.change`).
    pub const WEBHOOK_ENDPOINT_CHANGED: &str = "webhook.endpoint_changed";
    /// The 100th consecutive failure locked 2FA.
    pub const LOCKED: &str = "2fa.locked";
    /// An operator cleared the failure count (`details.failures`: the count before).
    pub const UNLOCKED: &str = "2fa.unlocked";
    /// The contact was marked KYC-passed.
    pub const KYC_MARKED: &str = "kyc.marked";
    /// The contact's KYC mark was withdrawn.
    pub const KYC_UNMARKED: &str = "kyc.unmarked";
    /// The operator waived the KYC 2FA requirement for the partner.
    pub const WAIVER_SET: &str = "partner.waiver_set";
    /// The waiver was withdrawn.
    pub const WAIVER_CLEARED: &str = "partner.waiver_cleared";
    /// The operator approved the production widget.
    pub const WIDGET_APPROVED: &str = "widget.approved";
    /// The approval was withdrawn.
    pub const WIDGET_UNAPPROVED: &str = "widget.unapproved";
    /// A widget setting changed (`details.field`: the API field name).
    pub const WIDGET_SETTINGS_CHANGED: &str = "widget.settings_changed";
    /// The operator replaced the partner's keys.
    pub const KEYS_ROTATED: &str = "partner.keys_rotated";
    /// A member rolled the secret key (`expiresIn`: now | 1h | 24h | 7d).
    pub const KEY_ROLLED: &str = "partner.key_rolled";
    /// The partner's secrets were re-sealed under the current master key (`details.keyId`).
    pub const KEYS_REWRAPPED: &str = "keys.rewrapped";
}

/// Rows per page of [`Service::audit_events`] by default.
pub const DEFAULT_PAGE: usize = 100;
/// Most rows per page of [`Service::audit_events`].
pub const MAX_PAGE: usize = 500;

/// One page of a partner's audit chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditPage {
    /// The rows, oldest first.
    pub events: Vec<AuditRow>,
    /// The `seq` to pass as `after` for the next page, or `None` on the last page.
    pub next: Option<u64>,
}

/// The verdict on one partner's chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainReport {
    /// The partner.
    pub partner_id: PartnerId,
    /// Rows checked.
    pub rows: u64,
    /// The first `seq` whose hash or link is wrong (or one past the last row when the head
    /// says rows are missing from the end); `None` when the chain holds.
    pub first_bad_seq: Option<u64>,
}

/// `details` members, from pairs.
pub(crate) fn details<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// Rows read per store call while verifying or exporting.
const SCAN_PAGE: usize = 5000;

/// Each row's [`AuditRow::computed_hash`], worked out on every core: canonical JSON and SHA-256
/// are most of a verification's time, and rows hash independently of each other.
fn computed_hashes(rows: &[AuditRow]) -> Vec<String> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    if threads < 2 || rows.len() < 256 {
        return rows.iter().map(AuditRow::computed_hash).collect();
    }
    let chunk = rows.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let parts: Vec<_> = rows
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(AuditRow::computed_hash).collect::<Vec<_>>()))
            .collect();
        // A thread that panicked leaves its rows unhashed: they then fail as broken, never pass.
        parts.into_iter().flat_map(|p| p.join().unwrap_or_default()).collect()
    })
}

impl Service {
    /// An audit event of this service's clock, for a store update's effects.
    pub(crate) fn draft(
        &self,
        actor: &Actor,
        event: &'static str,
        contact: Option<&ContactId>,
        details: Map<String, Value>,
    ) -> AuditDraft {
        // A member's own 2FA record is keyed by the member's id: the row is about no contact.
        let members_own = matches!(actor, Actor::Member(id) if contact.is_some_and(|c| c.to_string() == *id));
        AuditDraft {
            id: uuid::Uuid::now_v7(),
            at_ms: self.now_millis(),
            contact_id: if members_own { None } else { contact.copied() },
            actor: actor.clone(),
            event,
            details,
        }
    }

    /// The draft of a change to the 2FA record `rec` of `contact`: about the contact, or, for
    /// a team member's record (an operator resetting or unlocking a member), about no contact,
    /// the member named in `memberId` (so no contact's webhook tells of it).
    pub(crate) fn draft_about(
        &self,
        actor: &Actor,
        event: &'static str,
        contact: &ContactId,
        rec: &crate::store::ContactRecord,
        mut details: Map<String, Value>,
    ) -> AuditDraft {
        if rec.member && !matches!(actor, Actor::Member(_)) {
            details.insert("memberId".into(), Value::from(contact.to_string()));
            return self.draft(actor, event, None, details);
        }
        self.draft(actor, event, Some(contact), details)
    }

    /// A page of the partner's audit chain, oldest first: rows with `seq` after `after` (0 for
    /// the start), only those about `contact` when given, at most `limit` (1..=500). A
    /// `limit` out of range is 400 naming it; an unknown partner 404.
    pub fn audit_events(
        &self,
        partner: &PartnerId,
        contact: Option<&ContactId>,
        after: u64,
        limit: usize,
    ) -> Result<AuditPage> {
        if !(1..=MAX_PAGE).contains(&limit) {
            return Err(Error::invalid_input("limit", "must be an integer from 1 to 500"));
        }
        if after > i64::MAX as u64 {
            return Err(Error::invalid_input("after", "must be an integer from 0 to 9223372036854775807"));
        }
        self.partner_record(partner)?;
        let mut events = self.store().audit_events(partner, contact, after, limit + 1).map_err(Self::internal)?;
        let next = if events.len() > limit {
            events.truncate(limit);
            events.last().map(|r| r.seq)
        } else {
            None
        };
        Ok(AuditPage { events, next })
    }

    /// Every row of one partner's chain (or of every partner's, in partner id order), oldest
    /// first, with `at` at or after `since` (RFC 3339, compared as an instant) when given,
    /// handed to `sink` a row at a time. Returns how many rows went to `sink`.
    pub fn export_audit(
        &self,
        partner: Option<&PartnerId>,
        since_ms: Option<u64>,
        mut sink: impl FnMut(&AuditRow) -> Result<()>,
    ) -> Result<u64> {
        let since = since_ms.map(rfc3339_millis);
        let mut written = 0;
        for (partner, _) in self.audit_heads(partner)? {
            self.scan_chain(&partner, |row| {
                if since.as_deref().is_none_or(|s| row.at.as_str() >= s) {
                    written += 1;
                    sink(row)?;
                }
                Ok(true)
            })?;
        }
        Ok(written)
    }

    /// Check one partner's chain, or every partner's: each row's `seq`, `prev` and `hash`,
    /// and the head kept with the partner. Any edit, deletion or reordering of a row shows as
    /// the first bad `seq`.
    pub fn verify_audit(&self, partner: Option<&PartnerId>) -> Result<Vec<ChainReport>> {
        self.audit_heads(partner)?
            .into_iter()
            .map(|(partner_id, head)| {
                let check = self.check_chain(&partner_id)?;
                let (rows, first_bad_seq) = match check.finish(&head) {
                    Ok(rows) => (rows, None),
                    Err(seq) => (seq.saturating_sub(1), Some(seq)),
                };
                Ok(ChainReport { partner_id, rows, first_bad_seq })
            })
            .collect()
    }

    /// Walk a partner's chain: one thread reads the next page from the store while the rows of
    /// the page before are hashed on every core, then linked in order.
    fn check_chain(&self, partner: &PartnerId) -> Result<ChainCheck> {
        std::thread::scope(|scope| {
            let (pages, arriving) = std::sync::mpsc::sync_channel::<Vec<AuditRow>>(1);
            let reader = scope.spawn(move || self.scan_pages(partner, |page| Ok(pages.send(page).is_ok())));
            let mut check = ChainCheck::new();
            for page in arriving {
                let hashes = computed_hashes(&page);
                if !page.iter().zip(&hashes).all(|(row, hash)| check.push_computed(row, hash)) {
                    break; // the reader stops at its next send
                }
            }
            match reader.join() {
                Ok(read) => read.map(|()| check),
                Err(_) => Err(Error::new(crate::error::ErrorKind::Internal).with_cause("audit reader failed")),
            }
        })
    }

    fn audit_heads(&self, partner: Option<&PartnerId>) -> Result<Vec<(PartnerId, AuditHead)>> {
        let heads = self.store().audit_heads().map_err(Self::internal)?;
        match partner {
            None => Ok(heads),
            Some(p) => match heads.into_iter().find(|(id, _)| id == p) {
                Some(found) => Ok(vec![found]),
                None => Err(crate::error::ErrorKind::PartnerNotFound.into()),
            },
        }
    }

    /// Hand a partner's rows to `f` in stored order until it returns `false`.
    fn scan_chain(&self, partner: &PartnerId, mut f: impl FnMut(&AuditRow) -> Result<bool>) -> Result<()> {
        self.scan_pages(partner, |page| {
            for row in &page {
                if !f(row)? {
                    return Ok(false);
                }
            }
            Ok(true)
        })
    }

    /// Hand a partner's rows to `f` a page at a time, in stored order, until it returns
    /// `false`. Pages by the stored `seq`, so a row whose `seq` was edited is still read once.
    fn scan_pages(&self, partner: &PartnerId, mut f: impl FnMut(Vec<AuditRow>) -> Result<bool>) -> Result<()> {
        let mut after = 0;
        loop {
            let page = self.store().audit_events(partner, None, after, SCAN_PAGE).map_err(Self::internal)?;
            let next = page.last().map(|last| last.seq).filter(|_| page.len() == SCAN_PAGE);
            if !f(page)? {
                return Ok(());
            }
            match next {
                Some(seq) => after = seq,
                None => return Ok(()),
            }
        }
    }
}
