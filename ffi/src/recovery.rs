//! Recovery (SPEC section 8): the recovery codes enable and regenerate hand out, how a verify
//! passed, the operator's four-eyes reset, the support view of a contact and the purchase hold.
//!
//! A set of codes is an opaque handle rather than a `char **`: one `_free` that wipes every code,
//! the codes lent out by `_at` (as a widget validation lends its issues), and no array whose
//! length and ownership the caller could get wrong. Disable and verify take the factor as two
//! nullable strings, `token` and `recovery_code` (`service.rs`), so a caller that passes both
//! gets `RAMPART_STATUS_FACTOR_CONFLICT`, the same answer as over HTTP and in every language.

use std::ffi::{CString, c_char};
use std::fmt;

use rampart_core::{ContactState, Error, ErrorKind, PurchaseCheck, RecoveryCodes};
use zeroize::Zeroize;

use crate::boundary::{Out, contact_arg, opt_str_arg, partner_arg, status_call, str_arg, token_arg, value_call};
use crate::service::{rampart_service, service_ref};
use crate::status::rampart_status;

/// A set of recovery codes, shown once: 10 codes (`XXXX-XXXX-XXXX-XXXX-XXXX-XXXX`, 29
/// characters each) from `rampart_service_enable_2fa` or `rampart_service_regenerate_recovery_codes`.
/// Opaque to C: read it with `rampart_recovery_codes_count` and `rampart_recovery_codes_at`, free
/// it with `rampart_recovery_codes_free`, which overwrites every code with zeros. Immutable, so
/// any thread may read it; only the free must not run concurrently with a read.
pub struct rampart_recovery_codes {
    codes: Vec<CString>,
}

impl fmt::Debug for rampart_recovery_codes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rampart_recovery_codes({} codes, <redacted>)", self.codes.len())
    }
}

impl Drop for rampart_recovery_codes {
    fn drop(&mut self) {
        for code in self.codes.drain(..) {
            code.into_bytes_with_nul().zeroize();
        }
    }
}

/// A handle holding copies of `codes` (each allocated at its final size, so no reallocation
/// leaves a stray copy behind); `codes` itself is wiped when dropped.
pub(crate) fn codes_handle(codes: &RecoveryCodes) -> Result<*mut rampart_recovery_codes, Error> {
    let mut handle = Box::new(rampart_recovery_codes { codes: Vec::with_capacity(codes.len()) });
    for code in codes.as_slice() {
        let mut bytes = Vec::with_capacity(code.len() + 1);
        bytes.extend_from_slice(code.as_bytes());
        // Codes are Crockford base32 and hyphens: never a NUL.
        let c = CString::new(bytes).map_err(|e| {
            e.into_vec().zeroize();
            Error::new(ErrorKind::Internal).with_cause("a recovery code holds a NUL byte")
        })?;
        handle.codes.push(c);
    }
    Ok(Box::into_raw(handle))
}

/// The number of codes in a set (10; 0 for NULL).
///
/// Ownership: the handle is borrowed; nothing to free. Threading: thread-safe.
///
/// # Safety
/// `codes` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_recovery_codes_count(codes: *const rampart_recovery_codes) -> usize {
    // SAFETY: the contract above.
    value_call(0, || unsafe { codes.as_ref() }.map_or(0, |c| c.codes.len()))
}

/// Code `index` (0 to `rampart_recovery_codes_count` - 1), grouped as shown to the person
/// (`7KQ2-M9XD-...`), in issue order; NULL for a NULL handle or an index out of range.
///
/// Ownership: the string is borrowed from the set, valid until `rampart_recovery_codes_free`; do
/// not free it, and do not keep or log a copy: show the codes once. Threading: thread-safe.
///
/// # Safety
/// `codes` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_recovery_codes_at(
    codes: *const rampart_recovery_codes,
    index: usize,
) -> *const c_char {
    value_call(std::ptr::null(), || {
        // SAFETY: the contract above.
        unsafe { codes.as_ref() }.and_then(|c| c.codes.get(index)).map_or(std::ptr::null(), |code| code.as_ptr())
    })
}

/// Free a set of codes, overwriting each with zeros first. NULL is a no-op; the strings
/// `rampart_recovery_codes_at` lent are invalid afterwards.
///
/// Ownership: takes ownership of `codes`. Threading: must not run while another thread reads
/// the same set.
///
/// # Safety
/// `codes` is NULL or a handle from Rampart not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_recovery_codes_free(codes: *mut rampart_recovery_codes) {
    value_call((), || {
        if !codes.is_null() {
            // SAFETY: a `Box::into_raw` handle from `codes_handle`, freed once (caller's contract).
            drop(unsafe { Box::from_raw(codes) });
        }
    })
}

/// How `rampart_service_verify_2fa` passed: by which factor.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum rampart_verify_method {
    /// The code was rejected (`*out_accepted` is false).
    RAMPART_VERIFY_METHOD_NONE = 0,
    /// An authenticator code (`"token"` over HTTP).
    RAMPART_VERIFY_METHOD_TOKEN = 1,
    /// A recovery code, now used up (`"recoveryCode"` over HTTP).
    RAMPART_VERIFY_METHOD_RECOVERY_CODE = 2,
}

/// A contact's 2FA state for support (`rampart_service_contact_state`, and the state before a
/// `rampart_service_reset_2fa`): never a secret.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct rampart_contact_state {
    /// 2FA is enabled.
    pub enabled: bool,
    /// Authenticator codes are locked: the failure count reached 100.
    pub locked: bool,
    /// Consecutive wrong authenticator codes.
    pub failures: u32,
    /// Consecutive wrong recovery codes (their own counter and back-off, no lock).
    pub recovery_failures: u32,
    /// Unused recovery codes (0 when 2FA is off).
    pub recovery_codes_remaining: u32,
    /// The contact passed KYC.
    pub kyc_passed: bool,
    /// Until when purchases are on hold (Unix seconds); 0 when there is no hold or it has passed.
    pub purchase_hold_until: u64,
}

impl From<ContactState> for rampart_contact_state {
    fn from(s: ContactState) -> Self {
        Self {
            enabled: s.enabled,
            locked: s.locked,
            failures: s.failures,
            recovery_failures: s.recovery_failures,
            recovery_codes_remaining: s.recovery_codes_remaining,
            kyc_passed: s.kyc_passed,
            purchase_hold_until: s.purchase_hold_until.unwrap_or(0),
        }
    }
}

/// "May this contact purchase", with the reason when not (`rampart_service_purchase_check`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum rampart_purchase_check {
    /// The contact may purchase.
    RAMPART_PURCHASE_ALLOWED = 0,
    /// 2FA is required (KYC passed, no waiver) and not enabled: set it up first. An order would
    /// be `RAMPART_STATUS_TWO_FACTOR_REQUIRED`.
    RAMPART_PURCHASE_TWO_FACTOR_REQUIRED = 1,
    /// A purchase hold after a disable by recovery code or an operator reset, until
    /// `*out_hold_until`. An order would be `RAMPART_STATUS_PURCHASE_HOLD`.
    RAMPART_PURCHASE_ON_HOLD = 2,
}

/// Replace a contact's recovery codes with a new set, proven by an authenticator code (the
/// window, replay, throttle and lock rules of `rampart_service_verify_2fa`; a recovery code
/// cannot regenerate). The old codes stop working at once.
///
/// Errors: the id statuses, `RAMPART_STATUS_PARTNER_NOT_FOUND`, `RAMPART_STATUS_NOT_ENABLED`
/// (2FA is off), `RAMPART_STATUS_LOCKED`, `RAMPART_STATUS_THROTTLED`,
/// `RAMPART_STATUS_TOKEN_MISSING`, `RAMPART_STATUS_TOKEN_FAILED` (wrong, malformed or replayed),
/// `RAMPART_STATUS_ENABLE_FAILED` (storage).
///
/// Ownership: on success `*out_codes` receives the new set, freed with
/// `rampart_recovery_codes_free`: show it once, never store or log it. Threading: thread-safe on
/// a shared handle.
///
/// # Safety
/// Pointers are NULL or valid: strings NUL-terminated, `out_codes` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_regenerate_recovery_codes(
    service: *const rampart_service,
    partner_id: *const c_char,
    contact_id: *const c_char,
    token: *const c_char,
    out_codes: *mut *mut rampart_recovery_codes,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner, contact) =
            unsafe { (service_ref(service)?, partner_arg(partner_id)?, contact_arg(contact_id)?) };
        // SAFETY: as above.
        let token = unsafe { token_arg(token) };
        let out = Out::new(out_codes, "out_codes")?;
        let codes = codes_handle(&service.regenerate_recovery_codes(&partner, &contact, token)?)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(codes) };
        Ok(())
    })
}

/// How many unused recovery codes a contact has (0 when 2FA is off, and for contacts enabled
/// before recovery codes existed): the `recoveryCodesRemaining` of `GET /v1/auth/2fa`.
///
/// Errors: as `rampart_service_status_2fa`. Ownership: on success `*out_remaining` is written.
/// Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid; `out_remaining` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_recovery_codes_remaining(
    service: *const rampart_service,
    partner_id: *const c_char,
    contact_id: *const c_char,
    out_remaining: *mut u32,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner, contact) =
            unsafe { (service_ref(service)?, partner_arg(partner_id)?, contact_arg(contact_id)?) };
        let out = Out::new(out_remaining, "out_remaining")?;
        let (_, remaining) = service.status_with_recovery_codes(&partner, &contact)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(remaining) };
        Ok(())
    })
}

/// Reset a contact's 2FA: an operator action (support, for a contact who lost both the
/// authenticator and the codes), never a partner call. In one transaction: the secret, pending
/// secret and recovery codes are erased, both failure counters and the lock are cleared, the last
/// accepted step is kept (a code from before never works again), the purchase hold starts
/// (`config.purchase_hold_secs`) and `2fa.reset` is written to the audit trail under
/// `operator_name` with `reason` and `approved_by`. A contact without 2FA is reset all the same
/// (audited, held).
///
/// `reason` is 1 to 500 characters without control characters. `approved_by` names the second
/// operator who approved (NULL or empty: none); for a production partner it is required and
/// must differ from `operator_name` (four eyes).
///
/// Errors: the id statuses, `RAMPART_STATUS_PARTNER_NOT_FOUND`, `RAMPART_STATUS_INVALID_INPUT`
/// (operator name, `"reason must be 1 to 500 characters ..."`, `"approvedBy is required in
/// production: ..."`, `"approvedBy must name another operator than the one resetting"`),
/// `RAMPART_STATUS_INTERNAL` (storage: nothing changed).
///
/// Ownership: the strings are copied, never kept; on success `*out_before` (if not NULL)
/// receives the state before the reset (a plain value). Threading: thread-safe on a shared
/// handle.
///
/// # Safety
/// Pointers are NULL or valid: strings NUL-terminated, `out_before` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_reset_2fa(
    service: *const rampart_service,
    operator_name: *const c_char,
    partner_id: *const c_char,
    contact_id: *const c_char,
    reason: *const c_char,
    approved_by: *const c_char,
    out_before: *mut rampart_contact_state,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, operator) = unsafe { (service_ref(service)?, str_arg(operator_name, "operator_name")?) };
        // SAFETY: as above.
        let (partner, contact) = unsafe { (partner_arg(partner_id)?, contact_arg(contact_id)?) };
        // SAFETY: as above.
        let (reason, approved_by) = unsafe { (str_arg(reason, "reason")?, opt_str_arg(approved_by, "approvedBy")?) };
        let out = Out::optional(out_before);
        let before = service.reset_2fa(operator, &partner, &contact, reason, approved_by)?;
        if let Some(out) = out {
            // SAFETY: checked writable out-pointer.
            unsafe { out.write(before.into()) };
        }
        Ok(())
    })
}

/// A contact's 2FA state for support, read-only (what `rampart-server contact show` prints). A
/// contact the store has never seen is a contact without 2FA.
///
/// Errors: the id statuses, `RAMPART_STATUS_PARTNER_NOT_FOUND`, `RAMPART_STATUS_INTERNAL`.
/// Ownership: on success `*out_state` is written (a plain value). Threading: thread-safe on a
/// shared handle.
///
/// # Safety
/// Pointers are NULL or valid; `out_state` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_contact_state(
    service: *const rampart_service,
    partner_id: *const c_char,
    contact_id: *const c_char,
    out_state: *mut rampart_contact_state,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner, contact) =
            unsafe { (service_ref(service)?, partner_arg(partner_id)?, contact_arg(contact_id)?) };
        let out = Out::new(out_state, "out_state")?;
        let state = service.contact_state(&partner, &contact)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(state.into()) };
        Ok(())
    })
}

/// Whether a contact may purchase, and why not: the KYC rule first (2FA required and not
/// enabled), then the purchase hold. `rampart_service_may_purchase` is this without the reason.
///
/// Errors: the id statuses, `RAMPART_STATUS_PARTNER_NOT_FOUND`, `RAMPART_STATUS_INTERNAL`.
/// Ownership: on success `*out_check` is written, and `*out_hold_until` (if not NULL) receives
/// when purchases resume (Unix seconds) for `RAMPART_PURCHASE_ON_HOLD`, 0 otherwise. Threading:
/// thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid; out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_purchase_check(
    service: *const rampart_service,
    partner_id: *const c_char,
    contact_id: *const c_char,
    out_check: *mut rampart_purchase_check,
    out_hold_until: *mut u64,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner, contact) =
            unsafe { (service_ref(service)?, partner_arg(partner_id)?, contact_arg(contact_id)?) };
        let out = Out::new(out_check, "out_check")?;
        let out_until = Out::optional(out_hold_until);
        let (check, until) = match service.purchase_check(&partner, &contact)? {
            PurchaseCheck::Allowed => (rampart_purchase_check::RAMPART_PURCHASE_ALLOWED, 0),
            PurchaseCheck::TwoFactorRequired => (rampart_purchase_check::RAMPART_PURCHASE_TWO_FACTOR_REQUIRED, 0),
            PurchaseCheck::OnHold { until } => (rampart_purchase_check::RAMPART_PURCHASE_ON_HOLD, until),
        };
        // SAFETY: checked writable out-pointers.
        unsafe {
            out.write(check);
            if let Some(out) = out_until {
                out.write(until);
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_is_read_by_index_and_redacted() {
        // A handle of zero codes behaves like any other: count 0, every index NULL.
        let empty = Box::into_raw(Box::new(rampart_recovery_codes { codes: Vec::new() }));
        // SAFETY: a live handle, freed once below.
        unsafe {
            assert_eq!(rampart_recovery_codes_count(empty), 0);
            assert!(rampart_recovery_codes_at(empty, 0).is_null());
            assert!(rampart_recovery_codes_at(std::ptr::null(), 0).is_null());
            assert_eq!(rampart_recovery_codes_count(std::ptr::null()), 0);
            assert_eq!(format!("{:?}", *empty), "rampart_recovery_codes(0 codes, <redacted>)");
            rampart_recovery_codes_free(empty);
            rampart_recovery_codes_free(std::ptr::null_mut());
        }
    }
}
