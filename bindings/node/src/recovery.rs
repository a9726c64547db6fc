//! Recovery (SPEC section 8) as JavaScript values: what an accepted `verify2fa` resolves to
//! (`Verified`; a rejected code resolves to `false`, so `if (await service.verify2fa(...))`
//! can never pass on a wrong code), the support view of a contact (`ContactState`, also the
//! state before `reset2fa`) and `PurchaseCheck`. Recovery codes themselves are a plain
//! `string[]`: the one value that shows them. Names are the HTTP API's (`recoveryCode`).

use napi_derive::napi;
use rampart_core::{
    ContactState as CoreState, ErrorKind, PurchaseCheck as CoreCheck, RecoveryCodes, Verification as CoreVerification,
};

/// Recovery codes as the plain array that shows them.
pub(crate) fn code_list(codes: &RecoveryCodes) -> Vec<String> {
    codes.as_slice().to_vec()
}

/// The factor of `disable2fa`, `verify2fa` and `sessionVerify2fa` as an object: give `token` or
/// `recoveryCode` (both reject with `factor_conflict`). A bare token (`'123456'`) works as well.
// The shape for index.d.ts; `Arg::factor` reads it field by field.
#[allow(dead_code)]
#[napi(object)]
#[derive(Debug)]
pub struct Factor {
    /// An authenticator code, read by the token grammar (a string, or an integer number).
    #[napi(ts_type = "unknown")]
    pub token: Option<String>,
    /// A recovery code as typed (case, spaces and hyphens do not matter).
    #[napi(ts_type = "unknown")]
    pub recovery_code: Option<String>,
}

/// An accepted `verify2fa`: by which factor, and how many recovery codes are left.
#[napi(object)]
#[derive(Debug)]
pub struct Verified {
    #[napi(ts_type = "'token' | 'recoveryCode'")]
    pub method: String,
    pub recovery_codes_remaining: u32,
}

/// `Verified`, or `None` for a rejected code (resolved as `false`).
pub(crate) fn verified(v: CoreVerification) -> Option<Verified> {
    match v {
        CoreVerification::Accepted { method, recovery_codes_remaining } => {
            Some(Verified { method: method.as_str().to_owned(), recovery_codes_remaining })
        }
        CoreVerification::Rejected => None,
    }
}

/// A contact's 2FA state for support (`contactState`, and what `reset2fa` resolves to: the state
/// before the reset). Never a secret. `purchaseHoldUntil` (Unix seconds) is absent when there is
/// no hold or it has passed.
#[napi(object)]
#[derive(Debug)]
pub struct ContactState {
    pub enabled: bool,
    /// Authenticator codes are locked: the failure count reached 100.
    pub locked: bool,
    /// Consecutive wrong authenticator codes.
    pub failures: u32,
    /// Consecutive wrong recovery codes (their own back-off, no lock).
    pub recovery_failures: u32,
    pub recovery_codes_remaining: u32,
    pub kyc_passed: bool,
    pub purchase_hold_until: Option<f64>,
}

impl From<CoreState> for ContactState {
    fn from(s: CoreState) -> Self {
        Self {
            enabled: s.enabled,
            locked: s.locked,
            failures: s.failures,
            recovery_failures: s.recovery_failures,
            recovery_codes_remaining: s.recovery_codes_remaining,
            kyc_passed: s.kyc_passed,
            purchase_hold_until: s.purchase_hold_until.map(|t| t as f64),
        }
    }
}

/// "May this contact purchase" (`purchaseCheck`). When not, `reason` is the error code an order
/// would reject with: `'two_factor_required'` (KYC passed, 2FA not set up) or `'purchase_hold'`
/// (after a recovery or an operator reset, until `until`, Unix seconds).
#[napi(object)]
#[derive(Debug)]
pub struct PurchaseCheck {
    pub allowed: bool,
    #[napi(ts_type = "'two_factor_required' | 'purchase_hold'")]
    pub reason: Option<String>,
    pub until: Option<f64>,
}

impl From<CoreCheck> for PurchaseCheck {
    fn from(c: CoreCheck) -> Self {
        let no = |kind: ErrorKind, until: Option<u64>| Self {
            allowed: false,
            reason: Some(kind.name().to_owned()),
            until: until.map(|t| t as f64),
        };
        match c {
            CoreCheck::Allowed => Self { allowed: true, reason: None, until: None },
            CoreCheck::TwoFactorRequired => no(ErrorKind::TwoFactorRequired, None),
            CoreCheck::OnHold { until } => no(ErrorKind::PurchaseHold, Some(until)),
        }
    }
}
