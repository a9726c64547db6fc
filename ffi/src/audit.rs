//! The audit trail and metrics (SPEC section 9): a partner's audit chain page by page, the
//! chains' verification, and the service's metrics as Prometheus text.
//!
//! A page and a verification come back as compact JSON, like the other compound results: a row
//! exactly as the core serializes it (and as `GET /v1/audit` shows it), members in the order
//! `seq`, `id`, `at`, `partnerId`, `contactId`, `actor`, `event`, `details`, `prev`, `hash`.

use std::ffi::c_char;

use rampart_core::audit::{AuditPage, ChainReport};
use rampart_core::{ContactId, Error, ErrorKind, PartnerId};

use crate::boundary::{Out, c_bytes, opt_str_arg, partner_arg, status_call, utf8_arg};
use crate::service::{rampart_service, service_ref};
use crate::status::rampart_status;
use crate::strings::library_string;

/// Rows hold strings, integers, null and objects of them, which always serialize; a failure
/// would be a bug, reported as a 500 rather than a panic.
fn not_serialized(e: serde_json::Error) -> Error {
    Error::new(ErrorKind::Internal).with_cause(e)
}

/// `{"events":[row, ...],"next":<seq>|null}`, each row as the core serializes it.
fn page_json(page: &AuditPage) -> Result<String, Error> {
    let events = serde_json::to_string(&page.events).map_err(not_serialized)?;
    let next = page.next.map_or_else(|| "null".to_owned(), |n| n.to_string());
    Ok(format!(r#"{{"events":{events},"next":{next}}}"#))
}

/// `[{"partnerId","rows","firstBadSeq"}, ...]` (a partner id is a UUID: nothing to escape).
fn reports_json(reports: &[ChainReport]) -> String {
    let items: Vec<String> = reports
        .iter()
        .map(|r| {
            let bad = r.first_bad_seq.map_or_else(|| "null".to_owned(), |n| n.to_string());
            format!(r#"{{"partnerId":"{}","rows":{},"firstBadSeq":{bad}}}"#, r.partner_id, r.rows)
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// The contact filter: NULL is every row; anything given must be a contact id (a hyphenated
/// UUID; "" and bytes that are not UTF-8 included: "contactId must be a UUID").
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string.
unsafe fn contact_filter_arg(ptr: *const c_char) -> Result<Option<ContactId>, Error> {
    // SAFETY: forwarded contract.
    match unsafe { c_bytes(ptr) } {
        None => Ok(None),
        Some(bytes) => ContactId::parse(utf8_arg(bytes, "contactId")?).map(Some),
    }
}

/// A page of a partner's audit trail (SPEC section 9.1), oldest first, as compact JSON:
/// `{"events":[row, ...],"next":<seq>}`. A row is `{"seq","id","at","partnerId","contactId",
/// "actor","event","details","prev","hash"}`: `seq` counts 1, 2, ... per partner, `at` is RFC
/// 3339 UTC with milliseconds, `contactId` a UUID or null, `actor` `partner`, `operator:<name>`,
/// `contact`, `member:<id>` or `system`, `event` a name such as `2fa.enabled`, `details` a JSON
/// object, `hash` the hex SHA-256 of the RFC 8785 canonical JSON of the other nine members and
/// `prev` the previous row's `hash` (64 zeros for `seq` 1). The page holds the rows with `seq`
/// greater than `after` (0: from the start), only those about `contact_id` unless it is NULL, at
/// most `limit` (1 to 500); `next` is the `seq` to pass as `after` for the next page, or null on
/// the last.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` ("limit must be an integer from 1 to 500", "after must
/// be an integer from 0 to 9223372036854775807", "partnerId must be a UUID", NULL or not UTF-8
/// arguments), `RAMPART_STATUS_CONTACT_ID_INVALID` (a `contact_id` that is not a UUID, "" and
/// bytes that are not UTF-8 included), `RAMPART_STATUS_PARTNER_NOT_FOUND`,
/// `RAMPART_STATUS_INTERNAL` (storage).
///
/// Ownership: on success `*out_json` receives a library string freed with
/// `rampart_string_free`. Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid: strings NUL-terminated, `out_json` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_audit_events(
    service: *const rampart_service,
    partner_id: *const c_char,
    contact_id: *const c_char,
    after: u64,
    limit: u32,
    out_json: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner) = unsafe { (service_ref(service)?, partner_arg(partner_id)?) };
        // SAFETY: as above.
        let contact = unsafe { contact_filter_arg(contact_id) }?;
        let out = Out::new(out_json, "out_json")?;
        // A u32 always fits a usize here (the ABI's targets are 32 and 64 bit).
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        let page = service.audit_events(&partner, contact.as_ref(), after, limit)?;
        let text = library_string(&page_json(&page)?)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(text) };
        Ok(())
    })
}

/// Check the audit chain of one partner, or of every partner when `partner_id` is NULL (in
/// partner id order): each row's `seq`, `prev` and `hash`, and the head kept with the partner.
/// The result is compact JSON, `[{"partnerId","rows","firstBadSeq"}, ...]`: `rows` checked, and
/// `firstBadSeq` null when the chain holds, else the first `seq` whose hash or link is wrong
/// (one past the last row when rows are missing from the end). A broken chain is a result,
/// not an error.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` ("partnerId must be a UUID", not UTF-8, NULL
/// `service` or `out_json`), `RAMPART_STATUS_PARTNER_NOT_FOUND`, `RAMPART_STATUS_INTERNAL`.
///
/// Ownership: on success `*out_json` receives a library string freed with
/// `rampart_string_free`. Threading: thread-safe on a shared handle; it reads every row of the
/// chains it checks, so it takes time on a long trail.
///
/// # Safety
/// Pointers are NULL or valid: `partner_id` NUL-terminated, `out_json` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_verify_audit(
    service: *const rampart_service,
    partner_id: *const c_char,
    out_json: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let service = unsafe { service_ref(service) }?;
        // SAFETY: as above.
        let partner = unsafe { opt_str_arg(partner_id, "partner_id") }?.map(PartnerId::parse).transpose()?;
        let out = Out::new(out_json, "out_json")?;
        let reports = service.verify_audit(partner.as_ref())?;
        let text = library_string(&reports_json(&reports))?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(text) };
        Ok(())
    })
}

/// The service's metrics (SPEC section 9.2) as Prometheus text (exposition format 0.0.4), for a
/// partner backend to serve on its own route: 2FA attempts by operation, factor and result,
/// their durations, state transitions, store errors and the audit trail's rows by event. The
/// counts are this handle's own, never shared with another handle in the process; the audit
/// gauge is read from the store (at most once a minute).
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (NULL `service` or `out_text`).
///
/// Ownership: on success `*out_text` receives a library string freed with
/// `rampart_string_free`. Threading: thread-safe on a shared handle.
///
/// # Safety
/// `service` is NULL or a live handle; `out_text` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_metrics_text(
    service: *const rampart_service,
    out_text: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let service = unsafe { service_ref(service) }?;
        let out = Out::new(out_text, "out_text")?;
        let text = library_string(&service.metrics_text())?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(text) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use rampart_core::audit::AuditRow;
    use serde_json::Value;

    use super::*;

    #[test]
    fn pages_and_reports_have_the_documented_shape() {
        let row = AuditRow {
            seq: 1,
            id: "0b5d3c8e-2f4a-4c1e-9a7b-6d8e9f0a1b2c".into(),
            at: "2026-11-26T15:00:00.000Z".into(),
            partner_id: "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11".into(),
            contact_id: None,
            actor: "operator:alice".into(),
            event: "partner.waiver_set".into(),
            details: Value::Object(serde_json::Map::new()),
            prev: "0".repeat(64),
            hash: "b571aa52ce593b1fba55db7c8bd0c133ea8dea506de88d0e2272111daf023d7c".into(),
        };
        let page = AuditPage { events: vec![row], next: Some(1) };
        assert_eq!(
            page_json(&page).unwrap(),
            r#"{"events":[{"seq":1,"id":"0b5d3c8e-2f4a-4c1e-9a7b-6d8e9f0a1b2c","at":"2026-11-26T15:00:00.000Z","#
                .to_owned()
                + r#""partnerId":"6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11","contactId":null,"actor":"operator:alice","#
                + r#""event":"partner.waiver_set","details":{},"prev":""#
                + &"0".repeat(64)
                + r#"","hash":"b571aa52ce593b1fba55db7c8bd0c133ea8dea506de88d0e2272111daf023d7c"}],"next":1}"#
        );
        assert_eq!(page_json(&AuditPage { events: vec![], next: None }).unwrap(), r#"{"events":[],"next":null}"#);
        let partner = PartnerId::parse("6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11").unwrap();
        let reports = [
            ChainReport { partner_id: partner, rows: 3, first_bad_seq: None },
            ChainReport { partner_id: partner, rows: 1, first_bad_seq: Some(2) },
        ];
        assert_eq!(
            reports_json(&reports),
            r#"[{"partnerId":"6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11","rows":3,"firstBadSeq":null},"#.to_owned()
                + r#"{"partnerId":"6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11","rows":1,"firstBadSeq":2}]"#
        );
        assert_eq!(reports_json(&[]), "[]");
    }
}
