//! Re-sealing stored secrets under the current master key, so that an older key can be taken
//! out of the key file. Adding a key never needs this (older rows open under their own key id);
//! retiring one does.

use serde_json::Value;

use crate::audit::{details, event};
use crate::error::{Error, Result};
use crate::ids::{ContactId, PartnerId};
use crate::service::Service;
use crate::store::ContactRecord;
use crate::vocab::Field;

/// Contacts read from the store per page.
const PAGE: usize = 512;

/// What [`Service::rewrap_secrets`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RewrapReport {
    /// The current master key id: every secret it could open is now sealed under it.
    pub key_id: u32,
    /// Sealed secrets (enabled or pending 2FA secrets, webhook signing secrets) looked at.
    pub examined: u64,
    /// Secrets re-sealed under the current key.
    pub rewrapped: u64,
    /// Secrets no key in the ring opens (a key already removed, or damage). They are left as
    /// they were; those contacts cannot use 2FA until the key is put back.
    pub unopenable: u64,
}

/// One contact's (or one partner's endpoints') outcome, recomputed each time the store runs
/// the update.
#[derive(Default)]
struct Outcome {
    examined: u64,
    rewrapped: u64,
    unopenable: u64,
    error: Option<Error>,
}

impl Outcome {
    fn merge(&mut self, other: Outcome) {
        self.examined += other.examined;
        self.rewrapped += other.rewrapped;
        self.unopenable += other.unopenable;
        if self.error.is_none() {
            self.error = other.error;
        }
    }
}

impl RewrapReport {
    /// Count an outcome, or stop at its error.
    fn add(&mut self, outcome: Outcome) -> Result<()> {
        if let Some(e) = outcome.error {
            return Err(e);
        }
        self.examined += outcome.examined;
        self.rewrapped += outcome.rewrapped;
        self.unopenable += outcome.unopenable;
        Ok(())
    }
}

impl Service {
    /// Re-seal every stored secret (enabled or pending) that an older master key sealed under
    /// the current one: an operator action, audited (`keys.rewrapped`) once per partner,
    /// in the transaction of its first change. Runs while the service serves: each contact is re-sealed in its
    /// own atomic update, and a secret already under the current key is left alone, so a second
    /// run changes nothing. Afterwards, with `unopenable == 0`, the older keys can be removed.
    pub fn rewrap_secrets(&self, operator: &str) -> Result<RewrapReport> {
        let actor = Self::operator(operator)?;
        let mut report = RewrapReport { key_id: self.keys().current_key_id(), ..RewrapReport::default() };
        let mut audited: std::collections::HashSet<PartnerId> = std::collections::HashSet::new();
        let mut cursor = None;
        loop {
            let page = self.store().contacts_with_secrets(cursor, PAGE).map_err(Self::internal)?;
            let Some(&last) = page.last() else { break };
            for (partner, contact) in page {
                // A partner's first change carries its `keys.rewrapped` event, in the same
                // transaction; a partner with nothing to re-seal records nothing.
                let mut outcome = Outcome::default();
                let first = !audited.contains(&partner);
                self.store()
                    .update_contact(&partner, &contact, &mut |rec, effects| {
                        outcome = self.reseal(&partner, &contact, rec);
                        let write = outcome.rewrapped > 0 && outcome.error.is_none();
                        if write && first {
                            let key = details([("keyId", Value::from(report.key_id))]);
                            effects.audit(self.draft(&actor, event::KEYS_REWRAPPED, None, key));
                        }
                        write
                    })
                    .map_err(Self::internal)?;
                if outcome.rewrapped > 0 && outcome.error.is_none() {
                    audited.insert(partner);
                }
                report.add(outcome)?;
            }
            cursor = Some(last);
        }
        // Webhook endpoints' secrets, partner by partner (each partner has at most 10).
        for (partner, _) in self.store().audit_heads().map_err(Self::internal)? {
            let mut outcome = Outcome::default();
            let first = !audited.contains(&partner);
            self.store()
                .update_webhook_endpoints(&partner, &mut |list, effects| {
                    outcome = Outcome::default();
                    for e in list.iter_mut() {
                        let key = ContactId::from_uuid(e.id);
                        let mut current = Some(std::mem::take(&mut e.secret));
                        outcome.merge(self.reseal_slots(
                            &partner,
                            &key,
                            [(Field::WebhookSecret, &mut current), (Field::WebhookSecret, &mut e.previous_secret)],
                        ));
                        e.secret = current.unwrap_or_default();
                    }
                    let write = outcome.rewrapped > 0 && outcome.error.is_none();
                    if write && first {
                        let key = details([("keyId", Value::from(report.key_id))]);
                        effects.audit(self.draft(&actor, event::KEYS_REWRAPPED, None, key));
                    }
                    write
                })
                .map_err(Self::internal)?;
            report.add(outcome)?;
        }
        tracing::info!(
            target: "rampart::audit",
            operator,
            key_id = report.key_id,
            examined = report.examined,
            rewrapped = report.rewrapped,
            unopenable = report.unopenable,
            "secrets re-sealed under the current master key"
        );
        Ok(report)
    }

    /// Re-seals the record's secrets that are not under the current key, in place.
    fn reseal(&self, partner: &PartnerId, contact: &ContactId, rec: &mut ContactRecord) -> Outcome {
        self.reseal_slots(partner, contact, [(Field::Secret, &mut rec.secret), (Field::Pending, &mut rec.pending)])
    }

    /// Re-seals each sealed value not under the current key, in place; `key` is the contact
    /// (or endpoint) id the values are bound to.
    fn reseal_slots<'a>(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        slots: impl IntoIterator<Item = (Field, &'a mut Option<Vec<u8>>)>,
    ) -> Outcome {
        let mut outcome = Outcome::default();
        for (field, slot) in slots {
            let Some(sealed) = slot.as_ref() else { continue };
            outcome.examined += 1;
            if self.keys().is_current(sealed) {
                continue;
            }
            let Ok(plain) = self.keys().open(partner, contact, field, sealed) else {
                outcome.unopenable += 1;
                continue;
            };
            match self.keys().seal(partner, contact, field, &plain) {
                Ok(resealed) => {
                    *slot = Some(resealed);
                    outcome.rewrapped += 1;
                }
                Err(e) => outcome.error = Some(e),
            }
        }
        outcome
    }
}
