//! Recovery (SPEC section 8) as Python values: `Verification` (what `verify_2fa` answers, truthy
//! only when accepted), `ContactState` (the support view, and the state before `reset_2fa`) and
//! `PurchaseCheck` (truthy only when the contact may purchase). Recovery codes themselves are a
//! plain `list[str]`: the one value that shows them, so nothing else ever holds them.
//!
//! Names are the binding's: snake_case values, as `Authenticated.method` (`"secret_key"`), so a
//! verify by recovery code has `method == "recovery_code"` (over HTTP `"recoveryCode"`).

use pyo3::prelude::*;
use rampart_core::{ContactState as CoreState, Method, PurchaseCheck as CoreCheck, Verification as CoreVerification};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Verification>()?;
    m.add_class::<ContactState>()?;
    m.add_class::<PurchaseCheck>()?;
    Ok(())
}

fn py_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

fn py_opt<T: std::fmt::Display>(v: Option<T>, quote: bool) -> String {
    match v {
        None => "None".to_owned(),
        Some(v) if quote => format!("'{v}'"),
        Some(v) => v.to_string(),
    }
}

/// The outcome of `Service.verify_2fa`: truthy only when the code was accepted, so
/// `if service.verify_2fa(...)` reads as before. `method` (`"token"` or `"recovery_code"`) and
/// `recovery_codes_remaining` are None for a rejected code (wrong, malformed or already used:
/// not told apart).
#[pyclass(frozen, eq, module = "rampart")]
#[derive(PartialEq)]
pub(crate) struct Verification {
    #[pyo3(get)]
    accepted: bool,
    #[pyo3(get)]
    method: Option<&'static str>,
    #[pyo3(get)]
    recovery_codes_remaining: Option<u32>,
}

impl From<CoreVerification> for Verification {
    fn from(v: CoreVerification) -> Self {
        match v {
            CoreVerification::Accepted { method, recovery_codes_remaining } => Self {
                accepted: true,
                method: Some(match method {
                    Method::Token => "token",
                    Method::RecoveryCode => "recovery_code",
                }),
                recovery_codes_remaining: Some(recovery_codes_remaining),
            },
            CoreVerification::Rejected => Self { accepted: false, method: None, recovery_codes_remaining: None },
        }
    }
}

#[pymethods]
impl Verification {
    fn __bool__(&self) -> bool {
        self.accepted
    }

    fn __repr__(&self) -> String {
        format!(
            "Verification(accepted={}, method={}, recovery_codes_remaining={})",
            py_bool(self.accepted),
            py_opt(self.method, true),
            py_opt(self.recovery_codes_remaining, false)
        )
    }
}

/// A contact's 2FA state for support (`Service.contact_state`, and what `Service.reset_2fa`
/// returns: the state before the reset). Never a secret. `purchase_hold_until` is a Unix time,
/// None when there is no hold or it has passed.
#[pyclass(frozen, eq, module = "rampart")]
#[derive(PartialEq)]
pub(crate) struct ContactState {
    #[pyo3(get)]
    enabled: bool,
    #[pyo3(get)]
    locked: bool,
    #[pyo3(get)]
    failures: u32,
    #[pyo3(get)]
    recovery_failures: u32,
    #[pyo3(get)]
    recovery_codes_remaining: u32,
    #[pyo3(get)]
    kyc_passed: bool,
    #[pyo3(get)]
    purchase_hold_until: Option<u64>,
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
            purchase_hold_until: s.purchase_hold_until,
        }
    }
}

#[pymethods]
impl ContactState {
    fn __repr__(&self) -> String {
        format!(
            "ContactState(enabled={}, locked={}, failures={}, recovery_failures={}, recovery_codes_remaining={}, \
             kyc_passed={}, purchase_hold_until={})",
            py_bool(self.enabled),
            py_bool(self.locked),
            self.failures,
            self.recovery_failures,
            self.recovery_codes_remaining,
            py_bool(self.kyc_passed),
            py_opt(self.purchase_hold_until, false)
        )
    }
}

/// "May this contact purchase" (`Service.purchase_check`): truthy only when allowed. When not,
/// `reason` is the error kind an order would raise: `"two_factor_required"` (KYC passed, 2FA not
/// set up) or `"purchase_hold"` (after a recovery or an operator reset, `until` a Unix time).
#[pyclass(frozen, eq, module = "rampart")]
#[derive(PartialEq)]
pub(crate) struct PurchaseCheck {
    #[pyo3(get)]
    allowed: bool,
    #[pyo3(get)]
    reason: Option<&'static str>,
    #[pyo3(get)]
    until: Option<u64>,
}

impl From<CoreCheck> for PurchaseCheck {
    fn from(c: CoreCheck) -> Self {
        match c {
            CoreCheck::Allowed => Self { allowed: true, reason: None, until: None },
            CoreCheck::TwoFactorRequired => {
                Self { allowed: false, reason: Some(rampart_core::ErrorKind::TwoFactorRequired.name()), until: None }
            }
            CoreCheck::OnHold { until } => {
                Self { allowed: false, reason: Some(rampart_core::ErrorKind::PurchaseHold.name()), until: Some(until) }
            }
        }
    }
}

#[pymethods]
impl PurchaseCheck {
    fn __bool__(&self) -> bool {
        self.allowed
    }

    fn __repr__(&self) -> String {
        format!(
            "PurchaseCheck(allowed={}, reason={}, until={})",
            py_bool(self.allowed),
            py_opt(self.reason, true),
            py_opt(self.until, false)
        )
    }
}
