//! The widget's purchase flow (SPEC section 6.3): widget sessions, email sign-in, the 2FA step
//! and sandbox orders, and the partner's reads of orders and contacts.
//!
//! A compound result is JSON text in the shape the HTTP API shows it (an order as
//! `GET /v1/widget/orders/{id}` gives it), as the widget functions already return JSON: one shape
//! to parse whichever surface the caller meets it on, and no struct layout to keep stable.
//!
//! Credentials keep the rule of `rampart_service_authenticate`: a session token or publishable
//! key that is not UTF-8 cannot be a valid one, so it gets the answer a wrong one gets (no
//! 400 tells it apart), and a sign-in code that is not UTF-8 is a wrong code.

use std::ffi::c_char;

use rampart_core::checkout::{OrderPage, OrderRequest, SessionState, order_json};
use rampart_core::{Error, ErrorKind, OrderId};
use serde_json::{Value, json};

use crate::boundary::{
    Out, c_bytes, contact_arg, factor_arg, field_arg, null_arg, opt_str_arg, partner_arg, status_call, str_arg,
    token_arg,
};
use crate::recovery::{codes_handle, rampart_recovery_codes};
use crate::service::{rampart_service, service_ref};
use crate::status::rampart_status;
use crate::strings::{Pending, library_string};
use crate::widget::{config_ref, rampart_widget_config};

fn page_json(page: &OrderPage) -> Value {
    let orders: Vec<Value> = page.orders.iter().map(order_json).collect();
    json!({ "orders": orders, "next": page.next.map(|id| id.to_string()) })
}

/// A session as the HTTP API shows it to the widget page, with the partner, origin and contact
/// a backend needs besides.
fn session_json(s: &SessionState) -> Value {
    json!({
        "partnerId": s.partner_id.to_string(),
        "environment": s.environment.as_str(),
        "origin": s.origin,
        "signedIn": s.signed_in(),
        "email": s.email,
        "contactId": s.contact_id.map(|c| c.to_string()),
        "kycPassed": s.kyc_passed,
        "twoFactor": s.two_factor.map(|t| t.as_str()),
        "mayPurchase": s.may_purchase,
        "purchaseHoldUntil": s.purchase_hold_until.map(rampart_core::recovery::rfc3339),
        "recoveryCodesRemaining": s.recovery_codes_remaining,
    })
}

fn json_string(value: &Value) -> Result<*mut c_char, Error> {
    library_string(&value.to_string())
}

/// A session token argument: NULL is ABI misuse; bytes that are not UTF-8 are no session.
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string.
unsafe fn session_arg<'a>(ptr: *const c_char) -> Result<&'a str, Error> {
    // SAFETY: forwarded contract.
    unsafe { field_arg(ptr, "session_token", ErrorKind::SessionExpired) }
}

/// An order id argument (a hyphenated UUID, "orderId must be a UUID" as over HTTP).
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string.
unsafe fn order_arg(ptr: *const c_char, name: &str) -> Result<OrderId, Error> {
    // SAFETY: forwarded contract.
    OrderId::parse(unsafe { str_arg(ptr, name) }?)
}

/// Write the session as JSON to an optional out-pointer.
///
/// # Safety
/// `out` is NULL or writable.
unsafe fn write_session(out: Option<Out<*mut c_char>>, state: &SessionState) -> Result<(), Error> {
    if let Some(out) = out {
        let text = json_string(&session_json(state))?;
        // SAFETY: checked writable out-pointer (caller's contract).
        unsafe { out.write(text) };
    }
    Ok(())
}

/// Open a widget session for the partner whose publishable key (`pk_<environment>_...`) the
/// widget was opened with, embedded by the page at `origin` (`https://shop.example`; NULL or ""
/// when opened at the top level). The session is bound to that partner and origin and dies 30
/// minutes after its last use.
///
/// Errors: `RAMPART_STATUS_PARTNER_NOT_FOUND` (unknown key, one of the other environment, or
/// not UTF-8), `RAMPART_STATUS_WIDGET_NOT_APPROVED` (a production widget an operator has not
/// approved), `RAMPART_STATUS_ORIGIN_NOT_ALLOWED` (an origin the partner did not register;
/// sandbox also takes `http://localhost` and `http://127.0.0.1` on any port),
/// `RAMPART_STATUS_INVALID_INPUT` (NULL arguments, an origin that is not UTF-8),
/// `RAMPART_STATUS_INTERNAL` (storage).
///
/// Ownership: on success `*out_session_token` receives the session's bearer token
/// (`ws_...`), a library string freed with `rampart_string_free`: a secret, kept only in the
/// widget page's memory (Rampart stores its hash). `*out_session_json` (if not NULL) receives
/// the session as compact JSON, `{"partnerId","environment","origin","signedIn","email",
/// "contactId","kycPassed","twoFactor","mayPurchase","purchaseHoldUntil","recoveryCodesRemaining"}`
/// (`purchaseHoldUntil`: RFC 3339 UTC while purchases are on hold after a 2FA recovery or reset,
/// else null), a library string. Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid: strings NUL-terminated, out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_open_session(
    service: *const rampart_service,
    publishable_key: *const c_char,
    origin: *const c_char,
    out_session_token: *mut *mut c_char,
    out_session_json: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let service = unsafe { service_ref(service) }?;
        // SAFETY: as above.
        let key = unsafe { field_arg(publishable_key, "publishable_key", ErrorKind::PartnerNotFound) }?;
        // SAFETY: as above.
        let origin = unsafe { opt_str_arg(origin, "origin") }?;
        let out_token = Out::new(out_session_token, "out_session_token")?;
        let out_json = Out::optional(out_session_json);
        let (token, state) = service.open_session(key, origin)?;
        let mut pending = Pending::default();
        let token = pending.keep(library_string(token.as_str()))?;
        let json = match out_json {
            Some(_) => Some(pending.keep(json_string(&session_json(&state)))?),
            None => None,
        };
        pending.release();
        // SAFETY: checked writable out-pointers.
        unsafe {
            out_token.write(token);
            if let (Some(out), Some(json)) = (out_json, json) {
                out.write(json);
            }
        }
        Ok(())
    })
}

/// Where a widget session stands (restarting its idle clock), as the JSON of
/// `rampart_service_open_session`: `twoFactor` is NULL before sign-in, then `"none"`,
/// `"setup"` (create and enable 2FA first), `"verify"` (enter a code) or `"passed"`;
/// `mayPurchase` says whether `rampart_service_place_order` would pass the 2FA step and the
/// purchase hold.
///
/// Errors: `RAMPART_STATUS_SESSION_EXPIRED` (unknown, closed or idle for 30 minutes, or not
/// UTF-8), `RAMPART_STATUS_INVALID_INPUT` (NULL arguments), `RAMPART_STATUS_INTERNAL`.
/// Ownership: on success `*out_session_json` receives a library string freed with
/// `rampart_string_free`. Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid: strings NUL-terminated, out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_session_state(
    service: *const rampart_service,
    session_token: *const c_char,
    out_session_json: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, token) = unsafe { (service_ref(service)?, session_arg(session_token)?) };
        let out = Out::new(out_session_json, "out_session_json")?;
        let state = service.session_state(token)?;
        // SAFETY: checked writable out-pointer.
        unsafe { write_session(Some(out), &state) }
    })
}

/// Sign out: the session token stops working.
///
/// Errors: `RAMPART_STATUS_SESSION_EXPIRED` (unknown, already closed or idle, or not UTF-8),
/// `RAMPART_STATUS_INVALID_INPUT` (NULL arguments), `RAMPART_STATUS_INTERNAL`.
/// Ownership: nothing is kept or returned. Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid NUL-terminated strings; `service` a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_close_session(
    service: *const rampart_service,
    session_token: *const c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, token) = unsafe { (service_ref(service)?, session_arg(session_token)?) };
        service.close_session(token)
    })
}

/// A new 6-digit sign-in code for `email`, usable only by this session for 10 minutes (5 wrong
/// tries kill it), replacing any earlier one. The caller delivers it to the email's owner (a
/// sandbox may show it). The answer is the same whether the email is known or not.
///
/// Errors: `RAMPART_STATUS_SESSION_EXPIRED`, `RAMPART_STATUS_INVALID_INPUT` ("email must be an
/// email address such as name@example.com", "email must be valid Unicode text", NULL
/// arguments), `RAMPART_STATUS_SIGN_IN_THROTTLED` (3 codes to this email in 10 minutes: see
/// `rampart_last_retry_after`), `RAMPART_STATUS_INTERNAL`.
///
/// Ownership: on success `*out_code` receives the code, a library string freed with
/// `rampart_string_free` (a secret: deliver it, never log it); `*out_expires_in` (if not NULL)
/// the seconds it stays valid. Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid: strings NUL-terminated, out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_request_sign_in_code(
    service: *const rampart_service,
    session_token: *const c_char,
    email: *const c_char,
    out_code: *mut *mut c_char,
    out_expires_in: *mut u64,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, token) = unsafe { (service_ref(service)?, session_arg(session_token)?) };
        // SAFETY: as above.
        let email = unsafe { str_arg(email, "email") }?;
        let out_code = Out::new(out_code, "out_code")?;
        let out_expires = Out::optional(out_expires_in);
        let sent = service.request_sign_in_code(token, email)?;
        let code = library_string(&sent.code)?;
        // SAFETY: checked writable out-pointers.
        unsafe {
            out_code.write(code);
            if let Some(out) = out_expires {
                out.write(sent.expires_in);
            }
        }
        Ok(())
    })
}

/// Sign the session in with the code sent to `email`. The email becomes a contact of the
/// partner (one contact id per partner and email, found again with
/// `rampart_service_contact_by_email`).
///
/// Errors: `RAMPART_STATUS_SESSION_EXPIRED`, `RAMPART_STATUS_INVALID_INPUT` (email, NULL
/// arguments), `RAMPART_STATUS_SIGN_IN_CODE_FAILED` (a wrong code, or one that is not UTF-8;
/// the fifth wrong one kills it), `RAMPART_STATUS_SIGN_IN_CODE_EXPIRED` (no live code: expired,
/// used, killed, never sent, or sent to another session), `RAMPART_STATUS_INTERNAL`.
///
/// Ownership: on success `*out_session_json` (if not NULL) receives the session as
/// `rampart_service_open_session` gives it, a library string freed with `rampart_string_free`.
/// Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid: strings NUL-terminated, out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_sign_in(
    service: *const rampart_service,
    session_token: *const c_char,
    email: *const c_char,
    code: *const c_char,
    out_session_json: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, token) = unsafe { (service_ref(service)?, session_arg(session_token)?) };
        // SAFETY: as above.
        let email = unsafe { str_arg(email, "email") }?;
        // A code that is not UTF-8 is not six digits: a wrong code, counted as a try.
        // SAFETY: as above.
        let code = unsafe { c_bytes(code) }.ok_or_else(|| null_arg("code"))?;
        let code = std::str::from_utf8(code).unwrap_or("");
        let out = Out::optional(out_session_json);
        let state = service.sign_in(token, email, code)?;
        // SAFETY: checked writable out-pointer.
        unsafe { write_session(out, &state) }
    })
}

/// Pass the session's 2FA step with a code from the signed-in contact's authenticator app
/// (2FA enabled: `twoFactor` is `"verify"`), under the replay and throttle rules of
/// `rampart_service_verify_2fa`; `token` as there (NULL is a missing token). Or recover with a
/// recovery code (`recovery_code`, `token` NULL): that disables 2FA through the session (audited
/// with actor `contact`) and starts the purchase hold; the step is then `"setup"` when 2FA is
/// required, else `"none"`.
///
/// Errors: `RAMPART_STATUS_SESSION_EXPIRED`, `RAMPART_STATUS_SIGN_IN_REQUIRED`,
/// `RAMPART_STATUS_FACTOR_CONFLICT` (both given), the 2FA statuses of
/// `rampart_service_verify_2fa`, and `RAMPART_STATUS_TOKEN_FAILED` for a wrong, malformed or
/// replayed code (here an error, as over HTTP). Ownership: on success `*out_session_json` (if
/// not NULL) receives the session, a library string. Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid: strings NUL-terminated, out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_session_verify_2fa(
    service: *const rampart_service,
    session_token: *const c_char,
    token: *const c_char,
    recovery_code: *const c_char,
    out_session_json: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, session) = unsafe { (service_ref(service)?, session_arg(session_token)?) };
        // SAFETY: as above.
        let factor = unsafe { factor_arg(token, recovery_code) }?;
        let out = Out::optional(out_session_json);
        let state = service.session_verify_2fa(session, factor)?;
        // SAFETY: checked writable out-pointer.
        unsafe { write_session(out, &state) }
    })
}

/// New recovery codes for the session's signed-in contact, proven by an authenticator code
/// (`token`, as in `rampart_service_verify_2fa`): what the widget offers when 3 or fewer remain
/// (`recoveryCodesRemaining` of the session). The old codes stop working at once.
///
/// Errors: `RAMPART_STATUS_SESSION_EXPIRED`, `RAMPART_STATUS_SIGN_IN_REQUIRED`, and those of
/// `rampart_service_regenerate_recovery_codes`. Ownership: on success `*out_codes` receives the
/// new set, freed with `rampart_recovery_codes_free`. Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid: strings NUL-terminated, `out_codes` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_session_regenerate_recovery_codes(
    service: *const rampart_service,
    session_token: *const c_char,
    token: *const c_char,
    out_codes: *mut *mut rampart_recovery_codes,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, session) = unsafe { (service_ref(service)?, session_arg(session_token)?) };
        // SAFETY: as above.
        let token = unsafe { token_arg(token) };
        let out = Out::new(out_codes, "out_codes")?;
        let codes = codes_handle(&service.session_regenerate_recovery_codes(session, token)?)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(codes) };
        Ok(())
    })
}

/// Buy, as the signed-in contact: `coin` (`"btc"`), `amount` (`"25"`, `"25.50"`), `currency`
/// (`"usd"`, `"eur"`, `"gbp"`; NULL is `"usd"`) and the receive `address` for the coin are
/// checked as widget options under `config` (NULL: the default configuration), then the 2FA
/// step, then the environment: a sandbox partner's order is stored and completed at once at a
/// simulated price; production has no payment provider here and refuses.
///
/// Errors: `RAMPART_STATUS_SESSION_EXPIRED`, `RAMPART_STATUS_SIGN_IN_REQUIRED`,
/// `RAMPART_STATUS_INVALID_INPUT` naming the first failing field (`coin`, `amount`,
/// `currency`, `address`) with the widget option rule it breaks ("address is not valid: ..."),
/// or the argument, `RAMPART_STATUS_TWO_FACTOR_REQUIRED` (the 2FA step is not done),
/// `RAMPART_STATUS_PURCHASE_HOLD` ("Purchases are on hold until <RFC 3339 time> after a 2FA
/// reset", in `rampart_last_error_message`),
/// `RAMPART_STATUS_PURCHASES_UNAVAILABLE` (production: nothing is stored),
/// `RAMPART_STATUS_INTERNAL`.
///
/// Ownership: the strings are copied; `config` is only read during the call. On success
/// `*out_order_json` receives the order as compact JSON (see `rampart_service_order`), a
/// library string freed with `rampart_string_free`. Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid: strings NUL-terminated, `config` NULL or a live handle,
/// `out_order_json` writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rampart_service_place_order(
    service: *const rampart_service,
    session_token: *const c_char,
    coin: *const c_char,
    amount: *const c_char,
    currency: *const c_char,
    address: *const c_char,
    config: *const rampart_widget_config,
    out_order_json: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, token) = unsafe { (service_ref(service)?, session_arg(session_token)?) };
        // SAFETY: as above.
        let (coin, amount) = unsafe { (str_arg(coin, "coin")?, str_arg(amount, "amount")?) };
        // SAFETY: as above.
        let currency = unsafe { opt_str_arg(currency, "currency") }?.unwrap_or("usd");
        // SAFETY: as above.
        let address = unsafe { str_arg(address, "address") }?;
        // SAFETY: as above.
        let config = unsafe { config_ref(config) };
        let out = Out::new(out_order_json, "out_order_json")?;
        let request = OrderRequest {
            coin: coin.to_owned(),
            amount: amount.to_owned(),
            currency: currency.to_owned(),
            address: address.to_owned(),
        };
        let order = service.place_order(token, &request, config)?;
        let text = json_string(&order_json(&order))?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(text) };
        Ok(())
    })
}

/// A partner's order, as compact JSON in the shape of `GET /v1/widget/orders/{id}`:
/// `{"orderId","contactId","coin","amount","currency","address","price","quantity","status",
/// "createdAt","updatedAt"}`. `status` is `"created"`, `"completed"` or `"failed"`; the times
/// are Unix seconds; amounts, prices and quantities are decimal text.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` ("orderId must be a UUID", "partnerId must be a
/// UUID", NULL or not UTF-8 arguments), `RAMPART_STATUS_ORDER_NOT_FOUND` (no such order, or
/// another partner's), `RAMPART_STATUS_PARTNER_NOT_FOUND`, `RAMPART_STATUS_INTERNAL`.
///
/// Ownership: on success `*out_order_json` receives a library string freed with
/// `rampart_string_free`. Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid: strings NUL-terminated, `out_order_json` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_order(
    service: *const rampart_service,
    partner_id: *const c_char,
    order_id: *const c_char,
    out_order_json: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner) = unsafe { (service_ref(service)?, partner_arg(partner_id)?) };
        // SAFETY: as above.
        let id = unsafe { order_arg(order_id, "order_id") }?;
        let out = Out::new(out_order_json, "out_order_json")?;
        let text = json_string(&order_json(&service.order(&partner, &id)?))?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(text) };
        Ok(())
    })
}

/// Up to `limit` (1 to 100) orders of a partner's contact, newest first, as compact JSON in the
/// shape of `GET /v1/widget/orders`: `{"orders":[order, ...],"next":"<order id>"}`, each order
/// as `rampart_service_order` gives it. `next` is null on the last page; otherwise pass it as
/// `after` for the next page (NULL `after`: the first page).
///
/// Errors: the contact id statuses, `RAMPART_STATUS_INVALID_INPUT` ("limit must be 1 to 100",
/// "orderId must be a UUID" for `after`, NULL arguments), `RAMPART_STATUS_ORDER_NOT_FOUND`
/// (`after` is not an order of this contact: another contact's reads as unknown),
/// `RAMPART_STATUS_PARTNER_NOT_FOUND`, `RAMPART_STATUS_INTERNAL`.
///
/// Ownership: on success `*out_page_json` receives a library string freed with
/// `rampart_string_free`. Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid: strings NUL-terminated, `out_page_json` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_orders(
    service: *const rampart_service,
    partner_id: *const c_char,
    contact_id: *const c_char,
    after: *const c_char,
    limit: usize,
    out_page_json: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner) = unsafe { (service_ref(service)?, partner_arg(partner_id)?) };
        // SAFETY: as above.
        let contact = unsafe { contact_arg(contact_id) }?;
        // SAFETY: as above.
        let after = if after.is_null() { None } else { Some(unsafe { order_arg(after, "after") }?) };
        let out = Out::new(out_page_json, "out_page_json")?;
        let page = service.orders(&partner, &contact, after.as_ref(), limit)?;
        let text = json_string(&page_json(&page))?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(text) };
        Ok(())
    })
}

/// The contact id of an email that signed in to the partner's widget (the email is compared
/// normalised: trimmed, lower-cased).
///
/// Errors: `RAMPART_STATUS_CONTACT_NOT_FOUND` (the email never signed in there),
/// `RAMPART_STATUS_INVALID_INPUT` ("email must be an email address such as name@example.com",
/// NULL or not UTF-8 arguments), `RAMPART_STATUS_PARTNER_NOT_FOUND`, `RAMPART_STATUS_INTERNAL`.
///
/// Ownership: on success `*out_contact_id` receives the contact id (a UUID), a library string
/// freed with `rampart_string_free`. Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid: strings NUL-terminated, `out_contact_id` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_contact_by_email(
    service: *const rampart_service,
    partner_id: *const c_char,
    email: *const c_char,
    out_contact_id: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner) = unsafe { (service_ref(service)?, partner_arg(partner_id)?) };
        // SAFETY: as above.
        let email = unsafe { str_arg(email, "email") }?;
        let out = Out::new(out_contact_id, "out_contact_id")?;
        let id = library_string(&service.contact_by_email(&partner, email)?.to_string())?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(id) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use rampart_core::store::{OrderRecord, OrderStatus};
    use rampart_core::{ContactId, PartnerId};

    use super::*;

    #[test]
    fn an_order_has_the_http_api_fields() {
        let order = OrderRecord {
            id: OrderId::parse("11111111-2222-4333-8444-555555555555").unwrap(),
            partner_id: PartnerId::parse("00000000-0000-4000-8000-000000000000").unwrap(),
            contact_id: ContactId::parse("6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11").unwrap(),
            coin: "btc".into(),
            amount: "25".into(),
            currency: "usd".into(),
            address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq".into(),
            price: "65000.00".into(),
            quantity: "0.00038461".into(),
            status: OrderStatus::Completed,
            created_at: 1_700_000_000,
            updated_at: 1_700_000_001,
        };
        assert_eq!(
            order_json(&order).to_string(),
            r#"{"address":"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq","amount":"25","coin":"btc","#.to_owned()
                + r#""contactId":"6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11","createdAt":1700000000,"currency":"usd","#
                + r#""orderId":"11111111-2222-4333-8444-555555555555","price":"65000.00","quantity":"0.00038461","#
                + r#""status":"completed","updatedAt":1700000001}"#
        );
        let page = OrderPage { orders: vec![], next: Some(order.id) };
        assert_eq!(page_json(&page).to_string(), r#"{"next":"11111111-2222-4333-8444-555555555555","orders":[]}"#);
    }
}
