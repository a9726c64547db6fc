//! One conversion from the core's errors to the Python exception hierarchy, which lives in
//! `rampart/_errors.py` (plain Python classes, so `.code`, `.kind` and `.message` are ordinary
//! attributes that stubs and pickling understand).

use pyo3::prelude::*;
use rampart_core::{Error, ErrorKind};

/// The exception class for a kind: one class per family, the kind kept in `.kind`.
fn class_name(kind: ErrorKind) -> &'static str {
    use ErrorKind as K;
    match kind {
        K::InvalidInput
        | K::ContactIdRequired
        | K::ContactIdInvalid
        | K::IssuerInvalid
        | K::WidgetTextInvalid
        | K::WidgetButtonUrlInvalid
        | K::FactorConflict
        | K::PayloadTooLarge => "InvalidInputError",
        K::Unauthorized
        | K::TokenMissing
        | K::TokenFailed
        | K::SessionExpired
        | K::SignInRequired
        | K::SignInCodeFailed
        | K::SignInCodeExpired
        | K::SignInFailed
        | K::DashboardSessionRequired => "AuthenticationError",
        K::MustDisableFirst
        | K::AlreadyEnabled
        | K::NotCreated
        | K::NotEnabled
        | K::TwoFactorRequired
        | K::PurchaseHold
        | K::TooManyWebhookEndpoints
        | K::LastOwner
        | K::MemberExists
        | K::InvitationExpired => "ConflictError",
        K::SandboxOnly | K::WidgetNotApproved | K::OriginNotAllowed | K::RoleForbidden | K::CsrfFailed => {
            "ForbiddenError"
        }
        K::Locked => "LockedError",
        K::Throttled | K::SignInThrottled => "ThrottledError",
        K::NotFound
        | K::PartnerNotFound
        | K::MethodNotAllowed
        | K::OrderNotFound
        | K::ContactNotFound
        | K::WebhookEndpointNotFound
        | K::WebhookMessageNotFound
        | K::InvitationNotFound
        | K::MemberNotFound => "NotFoundError",
        K::PurchasesUnavailable | K::SignInUnavailable => "UnavailableError",
        K::Config => "ConfigError",
        _ => "StorageError",
    }
}

/// Builds an instance of `rampart._errors.<class>` and raises it.
pub(crate) fn raise(class: &str, message: &str, code: u16, kind: &str, retry_after: Option<u64>) -> PyErr {
    Python::with_gil(|py| {
        let made = py
            .import("rampart._errors")
            .and_then(|m| m.getattr(class))
            .and_then(|cls| cls.call1((message, code, kind, retry_after)));
        match made {
            Ok(instance) => PyErr::from_value(instance),
            Err(e) => e,
        }
    })
}

/// The one conversion of a core error: its family's class, with `.code`, `.kind` (the stable
/// name), `.message` and, for throttling, `.retry_after`. (A `From<Error> for PyErr` impl is
/// not allowed here, both types being foreign, so results go through [`Raise::or_raise`].)
pub(crate) fn to_py(e: Error) -> PyErr {
    let kind = e.kind();
    raise(class_name(kind), e.message(), e.code(), kind.name(), e.retry_after())
}

/// `result.or_raise()?` in place of `?` for core results.
pub(crate) trait Raise<T> {
    fn or_raise(self) -> PyResult<T>;
}

impl<T> Raise<T> for Result<T, Error> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

/// A widget whole-call failure (URL, signature, snippet, configuration): a 400 whose kind is
/// the failure's stable code.
pub(crate) fn widget_error(code: &str, message: &str) -> PyErr {
    raise("WidgetError", message, 400, code, None)
}

/// A signature that could not be made or does not verify.
pub(crate) fn signature_error(code: &str, message: &str) -> PyErr {
    raise("SignatureError", message, 400, code, None)
}
