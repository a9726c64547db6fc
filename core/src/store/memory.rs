//! The in-memory store: for tests, and for callers that keep nothing across restarts.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::{
    AttemptRecord, AuditHead, AuditRow, ClaimedDelivery, ContactCounts, ContactList, ContactRecord,
    DashboardSessionRecord, DeliveryNext, DeliveryRecord, Effects, InvitationRecord, MemberRecord, OrderFilter,
    OrderRecord, PartnerRecord, SessionRecord, SignInRecord, Store, StoreError, TeamRecord, WebhookEndpointRecord,
};
use crate::chain;
use crate::ids::{ContactId, OrderId, PartnerId};

#[derive(Debug, Default)]
struct Inner {
    partners: HashMap<PartnerId, PartnerRecord>,
    contacts: BTreeMap<(PartnerId, ContactId), ContactRecord>,
    audit: HashMap<PartnerId, (AuditHead, Vec<AuditRow>)>,
    sessions: HashMap<[u8; 32], SessionRecord>,
    sign_ins: HashMap<(PartnerId, String), SignInRecord>,
    emails: HashMap<(PartnerId, String), ContactId>,
    orders: HashMap<OrderId, OrderRecord>,
    webhook_endpoints: HashMap<PartnerId, Vec<WebhookEndpointRecord>>,
    /// The outbox: deliveries by partner, in the order they were queued.
    deliveries: HashMap<PartnerId, Vec<DeliveryRecord>>,
    /// Message bodies by id.
    messages: HashMap<String, String>,
    /// Leases: (message id, endpoint id) -> until (Unix seconds).
    leases: HashMap<(String, uuid::Uuid), u64>,
    /// Attempts by endpoint, oldest first.
    attempts: HashMap<uuid::Uuid, Vec<AttemptRecord>>,
    teams: HashMap<PartnerId, TeamRecord>,
    dashboard_sessions: HashMap<[u8; 32], DashboardSessionRecord>,
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

impl Inner {
    /// Chain `effects`' audit events onto the partner's trail; the caller then makes its change.
    fn write_effects(&mut self, partner: &PartnerId, effects: &Effects) -> Result<(), StoreError> {
        if !effects.audit.is_empty() {
            if !self.partners.contains_key(partner) {
                return Err(StoreError::audit("no such partner"));
            }
            let (head, rows) = self.audit.entry(*partner).or_default();
            let (new_rows, new_head) = chain::link(partner, head, &effects.audit);
            rows.extend(new_rows);
            *head = new_head;
        }
        for event in &effects.webhooks {
            let to: Vec<uuid::Uuid> = self
                .webhook_endpoints
                .get(partner)
                .into_iter()
                .flatten()
                .filter(|e| match event.only_to {
                    Some(id) => e.id == id,
                    None => e.enabled && e.events.contains(&event.event),
                })
                .map(|e| e.id)
                .collect();
            if !to.is_empty() {
                self.messages.insert(event.id.clone(), event.body.clone());
            }
            let queue = self.deliveries.entry(*partner).or_default();
            queue.extend(to.into_iter().map(|endpoint_id| DeliveryRecord {
                message_id: event.id.clone(),
                endpoint_id,
                event: event.event.clone(),
                attempts: 0,
                next_at: event.at,
                state: "pending".to_owned(),
            }));
        }
        Ok(())
    }
}

/// Sessions by the hash of their token: the widget's and the dashboard's, kept alike.
type Sessions<R> = HashMap<[u8; 32], R>;

fn insert_session<R: Clone>(map: &mut Sessions<R>, key: [u8; 32], session: &R) -> Result<(), StoreError> {
    if map.contains_key(&key) {
        return Err(StoreError::Conflict("session token already exists"));
    }
    map.insert(key, session.clone());
    Ok(())
}

fn update_session<R: Clone>(map: &mut Sessions<R>, key: &[u8; 32], f: &mut dyn FnMut(&mut R) -> bool) -> Option<R> {
    let mut next = map.get(key)?.clone();
    if f(&mut next) {
        map.insert(*key, next.clone());
    }
    Some(next)
}

/// Keep the sessions `keep` says; how many went.
fn purge_sessions<R>(map: &mut Sessions<R>, keep: impl Fn(&R) -> bool) -> u64 {
    let was = map.len();
    map.retain(|_, s| keep(s));
    (was - map.len()) as u64
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
        let inner = self.lock();
        let found = inner
            .partners
            .values()
            .find(|p| &p.secret_key_hash == hash || p.previous_key.as_ref().is_some_and(|k| &k.hash == hash));
        Ok(found.cloned())
    }

    fn partner_by_publishable_key(&self, key: &str) -> Result<Option<PartnerRecord>, StoreError> {
        Ok(self.lock().partners.values().find(|p| p.publishable_key == key).cloned())
    }

    fn update_partner(
        &self,
        id: &PartnerId,
        f: &mut dyn FnMut(&mut PartnerRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        let mut inner = self.lock();
        let Some(current) = inner.partners.get(id) else {
            return Ok(false);
        };
        let mut next = current.clone();
        let mut effects = Effects::default();
        let write = f(&mut next, &mut effects);
        if write {
            let clash = inner.partners.values().any(|p| {
                p.id != next.id
                    && (p.secret_key_hash == next.secret_key_hash || p.publishable_key == next.publishable_key)
            });
            if clash {
                return Err(StoreError::Conflict("key already exists"));
            }
        }
        inner.write_effects(id, &effects)?;
        if write {
            inner.partners.insert(*id, next);
        }
        Ok(true)
    }

    fn count_partners(&self) -> Result<u64, StoreError> {
        Ok(self.lock().partners.len() as u64)
    }

    fn webhook_endpoints(&self, partner: &PartnerId) -> Result<Vec<WebhookEndpointRecord>, StoreError> {
        Ok(self.lock().webhook_endpoints.get(partner).cloned().unwrap_or_default())
    }

    fn update_webhook_endpoints(
        &self,
        partner: &PartnerId,
        f: &mut dyn FnMut(&mut Vec<WebhookEndpointRecord>, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        let mut inner = self.lock();
        if !inner.partners.contains_key(partner) {
            return Ok(false);
        }
        let mut list = inner.webhook_endpoints.get(partner).cloned().unwrap_or_default();
        let mut effects = Effects::default();
        let write = f(&mut list, &mut effects);
        inner.write_effects(partner, &effects)?;
        if write {
            inner.webhook_endpoints.insert(*partner, list);
        }
        Ok(true)
    }

    fn contact(&self, partner: &PartnerId, contact: &ContactId) -> Result<Option<ContactRecord>, StoreError> {
        Ok(self.lock().contacts.get(&(*partner, *contact)).cloned())
    }

    fn update_contact(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        f: &mut dyn FnMut(&mut ContactRecord, &mut Effects) -> bool,
    ) -> Result<(), StoreError> {
        let mut inner = self.lock();
        let key = (*partner, *contact);
        let mut record = inner.contacts.get(&key).cloned().unwrap_or_default();
        let mut effects = Effects::default();
        let write = f(&mut record, &mut effects);
        inner.write_effects(partner, &effects)?;
        if write {
            inner.contacts.insert(key, record);
        }
        Ok(())
    }

    fn kyc_contacts_without_2fa(&self, partner: &PartnerId) -> Result<Vec<ContactId>, StoreError> {
        Ok(self
            .lock()
            .contacts
            .iter()
            .filter(|((p, _), r)| p == partner && r.kyc_passed && !r.enabled && !r.member)
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

    fn insert_session(&self, session: &SessionRecord) -> Result<(), StoreError> {
        insert_session(&mut self.lock().sessions, session.token_hash, session)
    }

    fn update_session(
        &self,
        token_hash: &[u8; 32],
        f: &mut dyn FnMut(&mut SessionRecord) -> bool,
    ) -> Result<Option<SessionRecord>, StoreError> {
        Ok(update_session(&mut self.lock().sessions, token_hash, f))
    }

    fn delete_session(&self, token_hash: &[u8; 32]) -> Result<bool, StoreError> {
        Ok(self.lock().sessions.remove(token_hash).is_some())
    }

    fn delete_sessions_idle_since(&self, before: u64) -> Result<u64, StoreError> {
        Ok(purge_sessions(&mut self.lock().sessions, |s| s.last_seen_at >= before))
    }

    fn update_sign_in(
        &self,
        partner: &PartnerId,
        email: &str,
        f: &mut dyn FnMut(&mut SignInRecord) -> bool,
    ) -> Result<(), StoreError> {
        let mut inner = self.lock();
        let key = (*partner, email.to_owned());
        let mut record = inner.sign_ins.get(&key).cloned().unwrap_or_default();
        if f(&mut record) {
            inner.sign_ins.insert(key, record);
        }
        Ok(())
    }

    fn contact_for_email(
        &self,
        partner: &PartnerId,
        email: &str,
        candidate: ContactId,
    ) -> Result<ContactId, StoreError> {
        Ok(*self.lock().emails.entry((*partner, email.to_owned())).or_insert(candidate))
    }

    fn contact_by_email(&self, partner: &PartnerId, email: &str) -> Result<Option<ContactId>, StoreError> {
        Ok(self.lock().emails.get(&(*partner, email.to_owned())).copied())
    }

    fn insert_order(&self, order: &OrderRecord, effects: &Effects) -> Result<(), StoreError> {
        let mut inner = self.lock();
        if inner.orders.contains_key(&order.id) {
            return Err(StoreError::Conflict("order id already exists"));
        }
        inner.write_effects(&order.partner_id, effects)?;
        inner.orders.insert(order.id, order.clone());
        Ok(())
    }

    fn order(&self, partner: &PartnerId, id: &OrderId) -> Result<Option<OrderRecord>, StoreError> {
        Ok(self.lock().orders.get(id).filter(|o| o.partner_id == *partner).cloned())
    }

    fn update_order(
        &self,
        partner: &PartnerId,
        id: &OrderId,
        f: &mut dyn FnMut(&mut OrderRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        let mut inner = self.lock();
        let Some(order) = inner.orders.get(id).filter(|o| o.partner_id == *partner) else { return Ok(false) };
        let mut next = order.clone();
        let mut effects = Effects::default();
        let write = f(&mut next, &mut effects);
        inner.write_effects(partner, &effects)?;
        if write {
            inner.orders.insert(*id, next);
        }
        Ok(true)
    }

    fn webhook_deliveries(&self, partner: &PartnerId) -> Result<Vec<DeliveryRecord>, StoreError> {
        Ok(self.lock().deliveries.get(partner).cloned().unwrap_or_default())
    }

    fn claim_deliveries(&self, now: u64, lease_until: u64, limit: usize) -> Result<Vec<ClaimedDelivery>, StoreError> {
        let mut inner = self.lock();
        let mut due: Vec<(u64, PartnerId, DeliveryRecord)> = Vec::new();
        for (partner, queue) in &inner.deliveries {
            for d in queue {
                let leased = inner.leases.get(&(d.message_id.clone(), d.endpoint_id)).is_some_and(|&t| t > now);
                if d.state == "pending" && d.next_at <= now && !leased {
                    due.push((d.next_at, *partner, d.clone()));
                }
            }
        }
        due.sort_by(|a, b| (a.0, &a.2.message_id).cmp(&(b.0, &b.2.message_id)));
        let mut out = Vec::new();
        for (_, partner, d) in due {
            if out.len() == limit {
                break;
            }
            let Some(endpoint) = inner
                .webhook_endpoints
                .get(&partner)
                .into_iter()
                .flatten()
                .find(|e| e.id == d.endpoint_id && e.enabled)
                .cloned()
            else {
                continue;
            };
            let body = inner.messages.get(&d.message_id).cloned().unwrap_or_default();
            inner.leases.insert((d.message_id.clone(), d.endpoint_id), lease_until);
            out.push(ClaimedDelivery {
                partner_id: partner,
                message_id: d.message_id,
                event: d.event,
                body,
                endpoint,
                attempts: d.attempts,
            });
        }
        Ok(out)
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
        let mut inner = self.lock();
        inner.write_effects(partner, effects)?;
        inner.leases.remove(&(attempt.message_id.clone(), *endpoint_id));
        if let Some(d) = inner
            .deliveries
            .get_mut(partner)
            .into_iter()
            .flatten()
            .find(|d| d.message_id == attempt.message_id && d.endpoint_id == *endpoint_id)
        {
            d.attempts = attempt.attempt;
            match next {
                DeliveryNext::Delivered => d.state = "delivered".into(),
                DeliveryNext::Failed => d.state = "failed".into(),
                DeliveryNext::Retry(at) => d.next_at = *at,
            }
        }
        if let Some(e) = endpoint
            && let Some(slot) = inner.webhook_endpoints.get_mut(partner).into_iter().flatten().find(|x| x.id == e.id)
        {
            *slot = e.clone();
        }
        inner.attempts.entry(*endpoint_id).or_default().push(attempt.clone());
        Ok(())
    }

    fn webhook_attempts(
        &self,
        partner: &PartnerId,
        endpoint_id: &uuid::Uuid,
        before: Option<(u64, String)>,
        limit: usize,
    ) -> Result<Vec<AttemptRecord>, StoreError> {
        let inner = self.lock();
        let mine = inner.webhook_endpoints.get(partner).into_iter().flatten().any(|e| e.id == *endpoint_id);
        if !mine {
            return Ok(Vec::new());
        }
        let mut all: Vec<AttemptRecord> = inner.attempts.get(endpoint_id).cloned().unwrap_or_default();
        all.sort_by(|a, b| (b.at_ms, &b.message_id).cmp(&(a.at_ms, &a.message_id)));
        Ok(all
            .into_iter()
            .filter(|a| before.as_ref().is_none_or(|(t, m)| (a.at_ms, &a.message_id) < (*t, m)))
            .take(limit)
            .collect())
    }

    fn resend_webhook_message(&self, partner: &PartnerId, message_id: &str, now: u64) -> Result<bool, StoreError> {
        let mut inner = self.lock();
        let mut found = false;
        for d in inner.deliveries.get_mut(partner).into_iter().flatten().filter(|d| d.message_id == message_id) {
            found = true;
            d.state = "pending".into();
            d.next_at = now;
        }
        Ok(found)
    }

    fn webhook_queue_depth(&self) -> Result<u64, StoreError> {
        Ok(self.lock().deliveries.values().flatten().filter(|d| d.state == "pending").count() as u64)
    }

    fn orders_for_contact(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        before: Option<(u64, OrderId)>,
        limit: usize,
    ) -> Result<Vec<OrderRecord>, StoreError> {
        let inner = self.lock();
        let mut out: Vec<OrderRecord> = inner
            .orders
            .values()
            .filter(|o| o.partner_id == *partner && o.contact_id == *contact)
            .filter(|o| before.is_none_or(|cursor| (o.created_at, o.id) < cursor))
            .cloned()
            .collect();
        out.sort_by_key(|o| std::cmp::Reverse((o.created_at, o.id)));
        out.truncate(limit);
        Ok(out)
    }

    fn audit_events(
        &self,
        partner: &PartnerId,
        contact: Option<&ContactId>,
        after: u64,
        limit: usize,
    ) -> Result<Vec<AuditRow>, StoreError> {
        let inner = self.lock();
        let Some((_, rows)) = inner.audit.get(partner) else { return Ok(Vec::new()) };
        let contact = contact.map(ToString::to_string);
        Ok(rows
            .iter()
            .filter(|r| r.seq > after && (contact.is_none() || r.contact_id == contact))
            .take(limit)
            .cloned()
            .collect())
    }

    fn orders_page(
        &self,
        partner: &PartnerId,
        filter: &OrderFilter,
        before: Option<(u64, OrderId)>,
        limit: usize,
    ) -> Result<Vec<OrderRecord>, StoreError> {
        let inner = self.lock();
        let mut out: Vec<OrderRecord> = inner
            .orders
            .values()
            .filter(|o| o.partner_id == *partner && filter.matches(o))
            .filter(|o| before.is_none_or(|cursor| (o.created_at, o.id) < cursor))
            .cloned()
            .collect();
        out.sort_by_key(|o| std::cmp::Reverse((o.created_at, o.id)));
        out.truncate(limit);
        Ok(out)
    }

    fn contact_counts(&self, partner: &PartnerId) -> Result<ContactCounts, StoreError> {
        let inner = self.lock();
        let mut c = ContactCounts::default();
        let range = inner.contacts.range((*partner, ContactId::from_uuid(uuid::Uuid::nil()))..);
        for (_, rec) in range.take_while(|((p, _), _)| p == partner).filter(|(_, r)| !r.member) {
            if rec.enabled {
                c.enabled += 1;
            } else {
                c.not_enabled += 1;
            }
            c.locked += u64::from(ContactList::Locked.matches(rec));
            c.kyc_without_2fa += u64::from(ContactList::KycWithout2fa.matches(rec));
            c.low_recovery_codes += u64::from(ContactList::LowRecoveryCodes.matches(rec));
        }
        Ok(c)
    }

    fn contacts_page(
        &self,
        partner: &PartnerId,
        list: ContactList,
        after: Option<ContactId>,
        limit: usize,
    ) -> Result<Vec<(ContactId, ContactRecord)>, StoreError> {
        let inner = self.lock();
        let start = after.unwrap_or_else(|| ContactId::from_uuid(uuid::Uuid::nil()));
        let range = inner.contacts.range((Bound::Included((*partner, start)), Bound::Unbounded));
        Ok(range
            .take_while(|((p, _), _)| p == partner)
            .filter(|((_, c), r)| Some(*c) != after && list.matches(r))
            .take(limit)
            .map(|((_, c), r)| (*c, r.clone()))
            .collect())
    }

    fn webhook_answered(&self, partner: &PartnerId) -> Result<bool, StoreError> {
        let inner = self.lock();
        let endpoints = inner.webhook_endpoints.get(partner).into_iter().flatten();
        Ok(endpoints
            .flat_map(|e| inner.attempts.get(&e.id).into_iter().flatten())
            .any(|a| a.status.is_some_and(|s| (200..300).contains(&s))))
    }

    fn team(&self, partner: &PartnerId) -> Result<TeamRecord, StoreError> {
        Ok(self.lock().teams.get(partner).cloned().unwrap_or_default())
    }

    fn update_team(
        &self,
        partner: &PartnerId,
        f: &mut dyn FnMut(&mut TeamRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        let mut inner = self.lock();
        if !inner.partners.contains_key(partner) {
            return Ok(false);
        }
        let mut team = inner.teams.get(partner).cloned().unwrap_or_default();
        let mut effects = Effects::default();
        if !f(&mut team, &mut effects) {
            inner.write_effects(partner, &effects)?;
            return Ok(true);
        }
        let taken = |m: &MemberRecord| {
            inner.teams.iter().any(|(p, t)| p != partner && t.members.iter().any(|o| o.email == m.email))
        };
        let mut emails: Vec<&str> = team.members.iter().map(|m| m.email.as_str()).collect();
        emails.sort_unstable();
        emails.dedup();
        if team.members.iter().any(taken) || emails.len() != team.members.len() {
            return Err(StoreError::Conflict("member email already exists"));
        }
        let tokens = |t: &TeamRecord| t.invitations.iter().map(|i| i.token_hash).collect::<Vec<_>>();
        let clash = team
            .invitations
            .iter()
            .any(|i| inner.teams.iter().any(|(p, t)| p != partner && tokens(t).contains(&i.token_hash)));
        if clash {
            return Err(StoreError::Conflict("invitation token already exists"));
        }
        inner.write_effects(partner, &effects)?;
        let ids: Vec<uuid::Uuid> = team.members.iter().map(|m| m.id).collect();
        inner.dashboard_sessions.retain(|_, s| s.partner_id != *partner || ids.contains(&s.member_id));
        inner.teams.insert(*partner, team);
        Ok(true)
    }

    fn member_by_email(&self, email: &str) -> Result<Option<MemberRecord>, StoreError> {
        let inner = self.lock();
        Ok(inner.teams.values().flat_map(|t| &t.members).find(|m| m.email == email).cloned())
    }

    fn invitation_by_token(&self, token_hash: &[u8; 32]) -> Result<Option<InvitationRecord>, StoreError> {
        let inner = self.lock();
        Ok(inner.teams.values().flat_map(|t| &t.invitations).find(|i| &i.token_hash == token_hash).cloned())
    }

    fn insert_dashboard_session(&self, session: &DashboardSessionRecord) -> Result<(), StoreError> {
        insert_session(&mut self.lock().dashboard_sessions, session.token_hash, session)
    }

    fn update_dashboard_session(
        &self,
        token_hash: &[u8; 32],
        f: &mut dyn FnMut(&mut DashboardSessionRecord) -> bool,
    ) -> Result<Option<DashboardSessionRecord>, StoreError> {
        Ok(update_session(&mut self.lock().dashboard_sessions, token_hash, f))
    }

    fn delete_dashboard_session(&self, token_hash: &[u8; 32]) -> Result<bool, StoreError> {
        Ok(self.lock().dashboard_sessions.remove(token_hash).is_some())
    }

    fn delete_dashboard_sessions_idle_since(&self, before: u64) -> Result<u64, StoreError> {
        Ok(purge_sessions(&mut self.lock().dashboard_sessions, |s| s.last_seen_at >= before))
    }

    fn audit_heads(&self) -> Result<Vec<(PartnerId, AuditHead)>, StoreError> {
        let inner = self.lock();
        let mut heads: Vec<_> = inner
            .partners
            .keys()
            .map(|p| (*p, inner.audit.get(p).map(|(head, _)| head.clone()).unwrap_or_default()))
            .collect();
        heads.sort_by_key(|(p, _)| *p);
        Ok(heads)
    }

    fn audit_counts(&self) -> Result<Vec<(String, u64)>, StoreError> {
        let mut counts = BTreeMap::<String, u64>::new();
        for (_, rows) in self.lock().audit.values() {
            for r in rows {
                *counts.entry(r.event.clone()).or_default() += 1;
            }
        }
        Ok(counts.into_iter().collect())
    }

    fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }

    fn kind(&self) -> &'static str {
        "memory"
    }
}
