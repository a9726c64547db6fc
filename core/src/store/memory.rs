//! The in-memory store: for tests, and for callers that keep nothing across restarts.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::{AuditEvent, ContactRecord, PartnerRecord, Store, StoreError};
use crate::ids::{ContactId, PartnerId};

#[derive(Debug, Default)]
struct Inner {
    partners: HashMap<PartnerId, PartnerRecord>,
    contacts: BTreeMap<(PartnerId, ContactId), ContactRecord>,
    audit: Vec<AuditEvent>,
}

/// A store in process memory; one lock makes every update atomic.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // The data is plain records; a panic elsewhere cannot leave them half-written.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Store for MemoryStore {
    fn insert_partner(&self, partner: &PartnerRecord) -> Result<(), StoreError> {
        let mut inner = self.lock();
        let clash = inner.partners.values().any(|p| {
            p.id == partner.id
                || p.secret_key_hash == partner.secret_key_hash
                || p.publishable_key == partner.publishable_key
        });
        if clash {
            return Err(StoreError::Conflict("partner id or key already exists"));
        }
        inner.partners.insert(partner.id, partner.clone());
        Ok(())
    }

    fn partner(&self, id: &PartnerId) -> Result<Option<PartnerRecord>, StoreError> {
        Ok(self.lock().partners.get(id).cloned())
    }

    fn partner_by_secret_key_hash(&self, hash: &[u8; 32]) -> Result<Option<PartnerRecord>, StoreError> {
        Ok(self.lock().partners.values().find(|p| &p.secret_key_hash == hash).cloned())
    }

    fn partner_by_publishable_key(&self, key: &str) -> Result<Option<PartnerRecord>, StoreError> {
        Ok(self.lock().partners.values().find(|p| p.publishable_key == key).cloned())
    }

    fn update_partner(
        &self,
        id: &PartnerId,
        f: &mut dyn FnMut(&mut PartnerRecord) -> bool,
    ) -> Result<bool, StoreError> {
        let mut inner = self.lock();
        let Some(current) = inner.partners.get(id) else {
            return Ok(false);
        };
        let mut next = current.clone();
        if f(&mut next) {
            let clash = inner.partners.values().any(|p| {
                p.id != next.id
                    && (p.secret_key_hash == next.secret_key_hash || p.publishable_key == next.publishable_key)
            });
            if clash {
                return Err(StoreError::Conflict("key already exists"));
            }
            inner.partners.insert(*id, next);
        }
        Ok(true)
    }

    fn count_partners(&self) -> Result<u64, StoreError> {
        Ok(self.lock().partners.len() as u64)
    }

    fn contact(&self, partner: &PartnerId, contact: &ContactId) -> Result<Option<ContactRecord>, StoreError> {
        Ok(self.lock().contacts.get(&(*partner, *contact)).cloned())
    }

    fn update_contact(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        f: &mut dyn FnMut(&mut ContactRecord) -> bool,
    ) -> Result<(), StoreError> {
        let mut inner = self.lock();
        let key = (*partner, *contact);
        let mut record = inner.contacts.get(&key).cloned().unwrap_or_default();
        if f(&mut record) {
            inner.contacts.insert(key, record);
        }
        Ok(())
    }

    fn kyc_contacts_without_2fa(&self, partner: &PartnerId) -> Result<Vec<ContactId>, StoreError> {
        Ok(self
            .lock()
            .contacts
            .iter()
            .filter(|((p, _), r)| p == partner && r.kyc_passed && !r.enabled)
            .map(|((_, c), _)| *c)
            .collect())
    }

    fn contacts_with_secrets(
        &self,
        after: Option<(PartnerId, ContactId)>,
        limit: usize,
    ) -> Result<Vec<(PartnerId, ContactId)>, StoreError> {
        let inner = self.lock();
        let from = match after {
            Some(key) => Bound::Excluded(key),
            None => Bound::Unbounded,
        };
        Ok(inner
            .contacts
            .range((from, Bound::Unbounded))
            .filter(|(_, r)| r.secret.is_some() || r.pending.is_some())
            .map(|(key, _)| *key)
            .take(limit)
            .collect())
    }

    fn append_audit(&self, event: &AuditEvent) -> Result<(), StoreError> {
        self.lock().audit.push(event.clone());
        Ok(())
    }

    fn audit_log(&self) -> Result<Vec<AuditEvent>, StoreError> {
        Ok(self.lock().audit.clone())
    }

    fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }
}
