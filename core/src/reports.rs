//! What a partner's dashboard reads (SPEC 11): the go-live checklist, the orders filtered and
//! paged or exported page by page (never every row at once), and the contacts counted and
//! listed by 2FA state, all as store queries.

use crate::error::{Error, ErrorKind, Result};
use crate::ids::{ContactId, OrderId, PartnerId};
use crate::service::Service;
use crate::store::{ContactCounts, ContactList, ContactRecord, OrderFilter, OrderRecord};
use crate::vocab::Environment;

/// Most orders or contacts per page.
pub const MAX_PAGE: usize = 500;
/// Orders per store read while exporting.
pub const EXPORT_CHUNK: usize = 1000;

/// The Overview page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overview {
    /// The partner's environment.
    pub environment: Environment,
    /// The production widget is approved (sandbox widgets need no approval).
    pub widget_approved: bool,
    /// At least one embedding origin is registered.
    pub origin_registered: bool,
    /// At least one order was placed (in sandbox: a test purchase).
    pub sandbox_order_placed: bool,
    /// A webhook endpoint answered an attempt with a 2xx (the test message counts).
    pub webhook_answered: bool,
}

/// A page of contacts: each id with its 2FA state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContactPage {
    /// The contacts, in id order.
    pub contacts: Vec<ContactSummary>,
    /// Pass as `after` for the next page; `None` on the last page.
    pub next: Option<ContactId>,
}

/// A contact as the dashboard's lists show it (never a secret).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContactSummary {
    /// The contact.
    pub contact_id: ContactId,
    /// 2FA is enabled.
    pub enabled: bool,
    /// Locked after too many failures.
    pub locked: bool,
    /// KYC passed.
    pub kyc_passed: bool,
    /// Recovery codes left, while 2FA is enabled with a set.
    pub recovery_codes_remaining: Option<u32>,
}

impl ContactSummary {
    fn of(contact_id: ContactId, rec: &ContactRecord) -> Self {
        Self {
            contact_id,
            enabled: rec.enabled,
            locked: ContactList::Locked.matches(rec),
            kyc_passed: rec.kyc_passed,
            recovery_codes_remaining: rec.recovery.as_ref().filter(|_| rec.enabled).map(|r| r.remaining()),
        }
    }
}

fn check_limit(limit: usize) -> Result<()> {
    if (1..=MAX_PAGE).contains(&limit) {
        Ok(())
    } else {
        Err(Error::invalid_input("limit", "must be an integer from 1 to 500"))
    }
}

impl Service {
    /// The partner's go-live checklist.
    pub fn overview(&self, partner: &PartnerId) -> Result<Overview> {
        let p = self.partner_record(partner)?;
        let store = self.store();
        let placed = !store.orders_page(partner, &OrderFilter::default(), None, 1).map_err(Self::internal)?.is_empty();
        Ok(Overview {
            environment: p.environment,
            widget_approved: p.widget_approved || p.environment == Environment::Sandbox,
            origin_registered: !p.widget_origins.is_empty(),
            sandbox_order_placed: placed,
            webhook_answered: store.webhook_answered(partner).map_err(Self::internal)?,
        })
    }

    /// Up to `limit` (1..=500) of the partner's orders passing `filter`, newest first, after the
    /// order `after` (the previous page's `next`; 404 `order_not_found` for an order not the
    /// partner's). Returns the page and the `next` cursor.
    pub fn partner_orders(
        &self,
        partner: &PartnerId,
        filter: &OrderFilter,
        after: Option<&OrderId>,
        limit: usize,
    ) -> Result<(Vec<OrderRecord>, Option<OrderId>)> {
        check_limit(limit)?;
        self.partner_record(partner)?;
        let before = match after {
            None => None,
            Some(id) => {
                let o = self.store().order(partner, id).map_err(Self::internal)?.ok_or(ErrorKind::OrderNotFound)?;
                Some((o.created_at, o.id))
            }
        };
        let mut orders = self.store().orders_page(partner, filter, before, limit + 1).map_err(Self::internal)?;
        let more = orders.len() > limit;
        orders.truncate(limit);
        let next = if more { orders.last().map(|o| o.id) } else { None };
        Ok((orders, next))
    }

    /// Every order of the partner passing `filter`, newest first, handed to `sink` a chunk of
    /// at most [`EXPORT_CHUNK`] at a time (the CSV export streams them: no more than one chunk
    /// is ever held). Stops at the first error `sink` returns.
    pub fn export_orders(
        &self,
        partner: &PartnerId,
        filter: &OrderFilter,
        mut sink: impl FnMut(&[OrderRecord]) -> Result<()>,
    ) -> Result<u64> {
        self.partner_record(partner)?;
        let (mut before, mut total) = (None, 0u64);
        loop {
            let chunk = self.store().orders_page(partner, filter, before, EXPORT_CHUNK).map_err(Self::internal)?;
            let Some(last) = chunk.last() else { return Ok(total) };
            before = Some((last.created_at, last.id));
            total += chunk.len() as u64;
            sink(&chunk)?;
            if chunk.len() < EXPORT_CHUNK {
                return Ok(total);
            }
        }
    }

    /// The partner's contacts counted by 2FA state. Under a 2FA waiver no contact is required
    /// to enable 2FA, so `kyc_without_2fa` is 0 (as [`Service::contacts_requiring_2fa`] is
    /// empty).
    pub fn contact_counts(&self, partner: &PartnerId) -> Result<ContactCounts> {
        let waived = self.partner_record(partner)?.two_factor_waived;
        let mut counts = self.store().contact_counts(partner).map_err(Self::internal)?;
        if waived {
            counts.kyc_without_2fa = 0;
        }
        Ok(counts)
    }

    /// Up to `limit` (1..=500) of the partner's contacts on `list`, in id order, after `after`.
    /// The KYC list is [`Service::contacts_requiring_2fa`], paged (empty under a waiver).
    pub fn contacts_on(
        &self,
        partner: &PartnerId,
        list: ContactList,
        after: Option<ContactId>,
        limit: usize,
    ) -> Result<ContactPage> {
        check_limit(limit)?;
        let waived = self.partner_record(partner)?.two_factor_waived;
        if waived && list == ContactList::KycWithout2fa {
            return Ok(ContactPage { contacts: Vec::new(), next: None });
        }
        let mut found = self.store().contacts_page(partner, list, after, limit + 1).map_err(Self::internal)?;
        let more = found.len() > limit;
        found.truncate(limit);
        let contacts: Vec<ContactSummary> = found.iter().map(|(c, r)| ContactSummary::of(*c, r)).collect();
        let next = if more { contacts.last().map(|c| c.contact_id) } else { None };
        Ok(ContactPage { contacts, next })
    }
}
