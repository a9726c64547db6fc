//! A store that fails on demand, for testing that callers fail closed (Rampart's own tests use
//! it, and so can a partner's).

use std::sync::atomic::{AtomicBool, Ordering};

use super::{
    AttemptRecord, AuditHead, AuditRow, ClaimedDelivery, ContactCounts, ContactList, ContactRecord,
    DashboardSessionRecord, DeliveryNext, DeliveryRecord, Effects, InvitationRecord, MemberRecord, MemoryStore,
    OrderFilter, OrderRecord, PartnerRecord, SessionRecord, SignInRecord, Store, StoreError, TeamRecord,
    WebhookEndpointRecord,
};
use crate::ids::{ContactId, OrderId, PartnerId};

/// Wraps a store; while a fault is on, the matching calls fail with [`StoreError::Backend`].
///
/// - read faults: every read fails, including the read at the start of an update, and `ping`;
/// - write faults: every write fails at commit, with nothing kept;
/// - audit faults: an update whose change has audit events fails as if writing them failed,
///   with nothing kept (neither the change nor its events);
/// - [`FaultyStore::spare_partner_reads`]: partner lookups keep working while reads fail, so
///   requests still authenticate and reach the failing operation.
#[derive(Debug, Default)]
pub struct FaultyStore<S = MemoryStore> {
    inner: S,
    reads: AtomicBool,
    writes: AtomicBool,
    audit: AtomicBool,
    spare_partner_reads: AtomicBool,
}

impl<S: Store> FaultyStore<S> {
    /// Wrap `inner`, with no fault on.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            reads: AtomicBool::new(false),
            writes: AtomicBool::new(false),
            audit: AtomicBool::new(false),
            spare_partner_reads: AtomicBool::new(false),
        }
    }

    /// Turn read faults on or off.
    pub fn fail_reads(&self, on: bool) {
        self.reads.store(on, Ordering::SeqCst);
    }

    /// Turn write faults on or off.
    pub fn fail_writes(&self, on: bool) {
        self.writes.store(on, Ordering::SeqCst);
    }

    /// Turn audit write faults on or off.
    pub fn fail_audit_writes(&self, on: bool) {
        self.audit.store(on, Ordering::SeqCst);
    }

    /// Keep partner lookups working while reads fail.
    pub fn spare_partner_reads(&self, on: bool) {
        self.spare_partner_reads.store(on, Ordering::SeqCst);
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    fn fault(flag: &AtomicBool) -> Result<(), StoreError> {
        if flag.load(Ordering::SeqCst) { Err(StoreError::Backend("disk I/O error (injected)".into())) } else { Ok(()) }
    }

    fn read(&self) -> Result<(), StoreError> {
        Self::fault(&self.reads)
    }

    fn write(&self) -> Result<(), StoreError> {
        Self::fault(&self.writes)
    }

    /// Run `f` through an inner update: a write fault (for a change) or an audit fault (for a
    /// change with audit events) strikes at commit, so the change is computed, then lost.
    fn update<R: Clone>(
        &self,
        inner: impl FnOnce(&mut dyn FnMut(&mut R, &mut Effects) -> bool) -> Result<bool, StoreError>,
        f: &mut dyn FnMut(&mut R, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        let failing_writes = self.write().is_err();
        let failing_audit = Self::fault(&self.audit).is_err();
        let (mut wanted, mut audited) = (false, false);
        let found = inner(&mut |rec, effects| {
            let mut next = rec.clone();
            let mut mine = Effects::default();
            wanted = f(&mut next, &mut mine);
            audited = !mine.is_empty();
            if (wanted && failing_writes) || (audited && (failing_audit || failing_writes)) {
                return false;
            }
            *rec = next;
            *effects = mine;
            wanted
        })?;
        if audited && failing_audit {
            return Err(StoreError::audit("audit table write failed (injected)"));
        }
        if wanted || audited { self.write().map(|()| found) } else { Ok(found) }
    }

    fn partner_read(&self) -> Result<(), StoreError> {
        if self.spare_partner_reads.load(Ordering::SeqCst) { Ok(()) } else { self.read() }
    }
}

impl<S: Store> Store for FaultyStore<S> {
    fn insert_partner(&self, partner: &PartnerRecord) -> Result<(), StoreError> {
        self.write()?;
        self.inner.insert_partner(partner)
    }

    fn partner(&self, id: &PartnerId) -> Result<Option<PartnerRecord>, StoreError> {
        self.partner_read()?;
        self.inner.partner(id)
    }

    fn partner_by_secret_key_hash(&self, hash: &[u8; 32]) -> Result<Option<PartnerRecord>, StoreError> {
        self.partner_read()?;
        self.inner.partner_by_secret_key_hash(hash)
    }

    fn partner_by_publishable_key(&self, key: &str) -> Result<Option<PartnerRecord>, StoreError> {
        self.partner_read()?;
        self.inner.partner_by_publishable_key(key)
    }

    fn update_partner(
        &self,
        id: &PartnerId,
        f: &mut dyn FnMut(&mut PartnerRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.read()?;
        self.write()?;
        self.update(|g| self.inner.update_partner(id, g), f)
    }

    fn count_partners(&self) -> Result<u64, StoreError> {
        self.partner_read()?;
        self.inner.count_partners()
    }

    fn webhook_endpoints(&self, partner: &PartnerId) -> Result<Vec<WebhookEndpointRecord>, StoreError> {
        self.read()?;
        self.inner.webhook_endpoints(partner)
    }

    fn update_webhook_endpoints(
        &self,
        partner: &PartnerId,
        f: &mut dyn FnMut(&mut Vec<WebhookEndpointRecord>, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.read()?;
        self.update(|g| self.inner.update_webhook_endpoints(partner, g), f)
    }

    fn contact(&self, partner: &PartnerId, contact: &ContactId) -> Result<Option<ContactRecord>, StoreError> {
        self.read()?;
        self.inner.contact(partner, contact)
    }

    fn update_contact(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        f: &mut dyn FnMut(&mut ContactRecord, &mut Effects) -> bool,
    ) -> Result<(), StoreError> {
        self.read()?;
        self.update(|g| self.inner.update_contact(partner, contact, g).map(|()| true), f).map(drop)
    }

    fn kyc_contacts_without_2fa(&self, partner: &PartnerId) -> Result<Vec<ContactId>, StoreError> {
        self.read()?;
        self.inner.kyc_contacts_without_2fa(partner)
    }

    fn contacts_with_secrets(
        &self,
        after: Option<(PartnerId, ContactId)>,
        limit: usize,
    ) -> Result<Vec<(PartnerId, ContactId)>, StoreError> {
        self.read()?;
        self.inner.contacts_with_secrets(after, limit)
    }

    fn insert_session(&self, session: &SessionRecord) -> Result<(), StoreError> {
        self.write()?;
        self.inner.insert_session(session)
    }

    fn update_session(
        &self,
        token_hash: &[u8; 32],
        f: &mut dyn FnMut(&mut SessionRecord) -> bool,
    ) -> Result<Option<SessionRecord>, StoreError> {
        self.read()?;
        // As for contacts: a write fault strikes at commit, after the change is computed.
        let failing = self.write().is_err();
        let mut wanted = false;
        let after = self.inner.update_session(token_hash, &mut |rec| {
            wanted = f(rec);
            wanted && !failing
        })?;
        if wanted { self.write().map(|()| after) } else { Ok(after) }
    }

    fn delete_session(&self, token_hash: &[u8; 32]) -> Result<bool, StoreError> {
        self.write()?;
        self.inner.delete_session(token_hash)
    }

    fn delete_sessions_idle_since(&self, before: u64) -> Result<u64, StoreError> {
        self.write()?;
        self.inner.delete_sessions_idle_since(before)
    }

    fn update_sign_in(
        &self,
        partner: &PartnerId,
        email: &str,
        f: &mut dyn FnMut(&mut SignInRecord) -> bool,
    ) -> Result<(), StoreError> {
        self.read()?;
        let failing = self.write().is_err();
        let mut wanted = false;
        self.inner.update_sign_in(partner, email, &mut |rec| {
            wanted = f(rec);
            wanted && !failing
        })?;
        if wanted { self.write() } else { Ok(()) }
    }

    fn contact_for_email(
        &self,
        partner: &PartnerId,
        email: &str,
        candidate: ContactId,
    ) -> Result<ContactId, StoreError> {
        self.read()?;
        self.write()?;
        self.inner.contact_for_email(partner, email, candidate)
    }

    fn contact_by_email(&self, partner: &PartnerId, email: &str) -> Result<Option<ContactId>, StoreError> {
        self.read()?;
        self.inner.contact_by_email(partner, email)
    }

    fn insert_order(&self, order: &OrderRecord, effects: &Effects) -> Result<(), StoreError> {
        self.write()?;
        self.inner.insert_order(order, effects)
    }

    fn order(&self, partner: &PartnerId, id: &OrderId) -> Result<Option<OrderRecord>, StoreError> {
        self.read()?;
        self.inner.order(partner, id)
    }

    fn webhook_deliveries(&self, partner: &PartnerId) -> Result<Vec<DeliveryRecord>, StoreError> {
        self.read()?;
        self.inner.webhook_deliveries(partner)
    }

    fn claim_deliveries(&self, now: u64, lease_until: u64, limit: usize) -> Result<Vec<ClaimedDelivery>, StoreError> {
        self.read()?;
        self.write()?;
        self.inner.claim_deliveries(now, lease_until, limit)
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
        self.write()?;
        if !effects.is_empty() {
            Self::fault(&self.audit)?;
        }
        self.inner.finish_delivery(partner, endpoint_id, attempt, next, endpoint, effects)
    }

    fn webhook_attempts(
        &self,
        partner: &PartnerId,
        endpoint_id: &uuid::Uuid,
        before: Option<(u64, String)>,
        limit: usize,
    ) -> Result<Vec<AttemptRecord>, StoreError> {
        self.read()?;
        self.inner.webhook_attempts(partner, endpoint_id, before, limit)
    }

    fn resend_webhook_message(&self, partner: &PartnerId, message_id: &str, now: u64) -> Result<bool, StoreError> {
        self.write()?;
        self.inner.resend_webhook_message(partner, message_id, now)
    }

    fn webhook_queue_depth(&self) -> Result<u64, StoreError> {
        self.read()?;
        self.inner.webhook_queue_depth()
    }

    fn update_order(
        &self,
        partner: &PartnerId,
        id: &OrderId,
        f: &mut dyn FnMut(&mut OrderRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.read()?;
        self.write()?;
        self.inner.update_order(partner, id, f)
    }

    fn orders_for_contact(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        before: Option<(u64, OrderId)>,
        limit: usize,
    ) -> Result<Vec<OrderRecord>, StoreError> {
        self.read()?;
        self.inner.orders_for_contact(partner, contact, before, limit)
    }

    fn audit_events(
        &self,
        partner: &PartnerId,
        contact: Option<&ContactId>,
        after: u64,
        limit: usize,
    ) -> Result<Vec<AuditRow>, StoreError> {
        self.read()?;
        self.inner.audit_events(partner, contact, after, limit)
    }

    fn orders_page(
        &self,
        partner: &PartnerId,
        filter: &OrderFilter,
        before: Option<(u64, OrderId)>,
        limit: usize,
    ) -> Result<Vec<OrderRecord>, StoreError> {
        self.read()?;
        self.inner.orders_page(partner, filter, before, limit)
    }
    fn contact_counts(&self, partner: &PartnerId) -> Result<ContactCounts, StoreError> {
        self.read()?;
        self.inner.contact_counts(partner)
    }
    fn contacts_page(
        &self,
        partner: &PartnerId,
        list: ContactList,
        after: Option<ContactId>,
        limit: usize,
    ) -> Result<Vec<(ContactId, ContactRecord)>, StoreError> {
        self.read()?;
        self.inner.contacts_page(partner, list, after, limit)
    }
    fn webhook_answered(&self, partner: &PartnerId) -> Result<bool, StoreError> {
        self.read()?;
        self.inner.webhook_answered(partner)
    }
    fn team(&self, partner: &PartnerId) -> Result<TeamRecord, StoreError> {
        self.read()?;
        self.inner.team(partner)
    }

    fn update_team(
        &self,
        partner: &PartnerId,
        f: &mut dyn FnMut(&mut TeamRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.read()?;
        self.update(|g| self.inner.update_team(partner, g), f)
    }

    fn member_by_email(&self, email: &str) -> Result<Option<MemberRecord>, StoreError> {
        self.read()?;
        self.inner.member_by_email(email)
    }

    fn invitation_by_token(&self, token_hash: &[u8; 32]) -> Result<Option<InvitationRecord>, StoreError> {
        self.read()?;
        self.inner.invitation_by_token(token_hash)
    }

    fn insert_dashboard_session(&self, session: &DashboardSessionRecord) -> Result<(), StoreError> {
        self.write()?;
        self.inner.insert_dashboard_session(session)
    }

    fn update_dashboard_session(
        &self,
        token_hash: &[u8; 32],
        f: &mut dyn FnMut(&mut DashboardSessionRecord) -> bool,
    ) -> Result<Option<DashboardSessionRecord>, StoreError> {
        self.read()?;
        // As for widget sessions: a write fault strikes at commit, after the change is computed.
        let failing = self.write().is_err();
        let mut wanted = false;
        let after = self.inner.update_dashboard_session(token_hash, &mut |rec| {
            wanted = f(rec);
            wanted && !failing
        })?;
        if wanted { self.write().map(|()| after) } else { Ok(after) }
    }

    fn delete_dashboard_session(&self, token_hash: &[u8; 32]) -> Result<bool, StoreError> {
        self.write()?;
        self.inner.delete_dashboard_session(token_hash)
    }

    fn delete_dashboard_sessions_idle_since(&self, before: u64) -> Result<u64, StoreError> {
        self.write()?;
        self.inner.delete_dashboard_sessions_idle_since(before)
    }

    fn audit_heads(&self) -> Result<Vec<(PartnerId, AuditHead)>, StoreError> {
        self.read()?;
        self.inner.audit_heads()
    }

    fn audit_counts(&self) -> Result<Vec<(String, u64)>, StoreError> {
        self.read()?;
        self.inner.audit_counts()
    }

    fn ping(&self) -> Result<(), StoreError> {
        self.read()?;
        self.inner.ping()
    }

    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
}
