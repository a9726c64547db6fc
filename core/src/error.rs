//! One error type for the whole library.
//!
//! Every [`ErrorKind`] has a stable name ([`ErrorKind::name`]), an HTTP-style code
//! ([`ErrorKind::code`]) and a fixed message ([`ErrorKind::message`]). Several kinds share a
//! code (both 401s of the 2FA lifecycle, for example), so every surface exposes the kind as
//! well as the code. The numeric values of the kinds are part of the C ABI: never renumber a
//! kind; retire one by leaving its number unused with a "reserved" comment.

use std::borrow::Cow;
use std::fmt;

/// The stable taxonomy of errors. The discriminants are the C ABI's status values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(u32)]
pub enum ErrorKind {
    /// 401: missing or bad credentials.
    Unauthorized = 1,
    /// 413: a request body over the limit.
    PayloadTooLarge = 2,
    /// 400: an argument or body field is invalid; the message names the field.
    InvalidInput = 3,
    /// 400: `contactId` is missing.
    ContactIdRequired = 4,
    /// 400: `contactId` is not a hyphenated UUID.
    ContactIdInvalid = 5,
    /// 400: `twoFactorIssuer` is too long or holds `:` or control characters.
    IssuerInvalid = 6,
    /// 400: `widgetText` is empty, too long or holds control characters.
    WidgetTextInvalid = 7,
    /// 400: `widgetButtonURL` is not an absolute http(s) URL without credentials.
    WidgetButtonUrlInvalid = 8,
    /// 403: create while 2FA is enabled.
    MustDisableFirst = 9,
    /// 409: enable while 2FA is enabled.
    AlreadyEnabled = 10,
    /// 409: enable with no (or an expired) pending secret.
    NotCreated = 11,
    /// 409: disable or verify while 2FA is not enabled.
    NotEnabled = 12,
    /// 423: too many consecutive failures; an operator must reset the contact.
    Locked = 13,
    /// 429: attempts are refused for a while after repeated failures.
    Throttled = 14,
    /// 401: no token was given.
    TokenMissing = 15,
    /// 401: the token does not verify (wrong, malformed or replayed).
    TokenFailed = 16,
    /// 404: no such route or resource.
    NotFound = 17,
    /// 405: the route exists but not with this method.
    MethodNotAllowed = 18,
    /// 404: no partner with this id.
    PartnerNotFound = 19,
    /// 500 in create and enable.
    CreateFailed = 20,
    /// 500 in enable.
    EnableFailed = 21,
    /// 500 in disable.
    DisableFailed = 22,
    /// 500 in status.
    StatusFailed = 23,
    /// 500 in verify.
    VerifyFailed = 24,
    /// 500 anywhere else (partners, settings, KYC).
    Internal = 25,
    /// 500: the library was configured wrongly (for example production without a master key).
    Config = 26,
    /// 401: the widget session is unknown or idle for over 30 minutes.
    SessionExpired = 27,
    /// 401: the widget session has not signed in.
    SignInRequired = 28,
    /// 401: the email sign-in code does not match.
    SignInCodeFailed = 29,
    /// 401: no live sign-in code (expired, used, tried 5 times, or never sent).
    SignInCodeExpired = 30,
    /// 429: 3 sign-in codes were sent to this email in the last 10 minutes.
    SignInThrottled = 31,
    /// 403: the contact must pass (or set up) 2FA before buying.
    TwoFactorRequired = 32,
    /// 503: production purchases need a payment provider the example server does not have.
    PurchasesUnavailable = 33,
    /// 404: no order with this id for the partner.
    OrderNotFound = 34,
    /// 404: no contact signed in with this email at the partner.
    ContactNotFound = 35,
    /// 403: a sandbox control used in production.
    SandboxOnly = 36,
    /// 403: the partner's production widget awaits an operator's approval.
    WidgetNotApproved = 37,
    /// 403: the embedding origin is not registered for the partner.
    OriginNotAllowed = 38,
    /// 503: sign-in codes need a mail service the server does not have.
    SignInUnavailable = 39,
    /// 400: both an authenticator code and a recovery code were given.
    FactorConflict = 40,
    /// 403: purchases are on hold after a 2FA recovery or reset; the message says until when.
    PurchaseHold = 41,
    /// 404: no webhook endpoint with this id for the partner.
    WebhookEndpointNotFound = 42,
    /// 404: no webhook message with this id for the partner.
    WebhookMessageNotFound = 43,
    /// 409: the partner has 10 webhook endpoints already.
    TooManyWebhookEndpoints = 44,
    /// 404: no invitation with this token (never issued, already used or revoked).
    InvitationNotFound = 45,
    /// 410: the invitation's 72 hours have passed.
    InvitationExpired = 46,
    /// 401: the dashboard sign-in's email or password is wrong (one answer for both).
    SignInFailed = 47,
    /// 401: no dashboard session, or it ended (30 minutes idle, sign-out, member removed).
    DashboardSessionRequired = 48,
    /// 403: the member's role may not make this change.
    RoleForbidden = 49,
    /// 409: the change would leave the team without an owner.
    LastOwner = 50,
    /// 409: a member with this email exists (in this team or another).
    MemberExists = 51,
    /// 404: no member or invitation with this id in the team.
    MemberNotFound = 52,
    /// 403: a dashboard change without the session's CSRF token or from another origin.
    CsrfFailed = 53,
}

impl ErrorKind {
    /// Every kind, in numeric order.
    pub const ALL: [ErrorKind; 53] = [
        Self::Unauthorized,
        Self::PayloadTooLarge,
        Self::InvalidInput,
        Self::ContactIdRequired,
        Self::ContactIdInvalid,
        Self::IssuerInvalid,
        Self::WidgetTextInvalid,
        Self::WidgetButtonUrlInvalid,
        Self::MustDisableFirst,
        Self::AlreadyEnabled,
        Self::NotCreated,
        Self::NotEnabled,
        Self::Locked,
        Self::Throttled,
        Self::TokenMissing,
        Self::TokenFailed,
        Self::NotFound,
        Self::MethodNotAllowed,
        Self::PartnerNotFound,
        Self::CreateFailed,
        Self::EnableFailed,
        Self::DisableFailed,
        Self::StatusFailed,
        Self::VerifyFailed,
        Self::Internal,
        Self::Config,
        Self::SessionExpired,
        Self::SignInRequired,
        Self::SignInCodeFailed,
        Self::SignInCodeExpired,
        Self::SignInThrottled,
        Self::TwoFactorRequired,
        Self::PurchasesUnavailable,
        Self::OrderNotFound,
        Self::ContactNotFound,
        Self::SandboxOnly,
        Self::WidgetNotApproved,
        Self::OriginNotAllowed,
        Self::SignInUnavailable,
        Self::FactorConflict,
        Self::PurchaseHold,
        Self::WebhookEndpointNotFound,
        Self::WebhookMessageNotFound,
        Self::TooManyWebhookEndpoints,
        Self::InvitationNotFound,
        Self::InvitationExpired,
        Self::SignInFailed,
        Self::DashboardSessionRequired,
        Self::RoleForbidden,
        Self::LastOwner,
        Self::MemberExists,
        Self::MemberNotFound,
        Self::CsrfFailed,
    ];

    /// The stable snake_case name of the kind.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Unauthorized => "unauthorized",
            Self::PayloadTooLarge => "payload_too_large",
            Self::InvalidInput => "invalid_input",
            Self::ContactIdRequired => "contact_id_required",
            Self::ContactIdInvalid => "contact_id_invalid",
            Self::IssuerInvalid => "issuer_invalid",
            Self::WidgetTextInvalid => "widget_text_invalid",
            Self::WidgetButtonUrlInvalid => "widget_button_url_invalid",
            Self::MustDisableFirst => "must_disable_first",
            Self::AlreadyEnabled => "already_enabled",
            Self::NotCreated => "not_created",
            Self::NotEnabled => "not_enabled",
            Self::Locked => "locked",
            Self::Throttled => "throttled",
            Self::TokenMissing => "token_missing",
            Self::TokenFailed => "token_failed",
            Self::NotFound => "not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::PartnerNotFound => "partner_not_found",
            Self::CreateFailed => "create_failed",
            Self::EnableFailed => "enable_failed",
            Self::DisableFailed => "disable_failed",
            Self::StatusFailed => "status_failed",
            Self::VerifyFailed => "verify_failed",
            Self::Internal => "internal",
            Self::Config => "config",
            Self::SessionExpired => "session_expired",
            Self::SignInRequired => "sign_in_required",
            Self::SignInCodeFailed => "sign_in_code_failed",
            Self::SignInCodeExpired => "sign_in_code_expired",
            Self::SignInThrottled => "sign_in_throttled",
            Self::TwoFactorRequired => "two_factor_required",
            Self::PurchasesUnavailable => "purchases_unavailable",
            Self::OrderNotFound => "order_not_found",
            Self::ContactNotFound => "contact_not_found",
            Self::SandboxOnly => "sandbox_only",
            Self::WidgetNotApproved => "widget_not_approved",
            Self::OriginNotAllowed => "origin_not_allowed",
            Self::SignInUnavailable => "sign_in_unavailable",
            Self::FactorConflict => "factor_conflict",
            Self::PurchaseHold => "purchase_hold",
            Self::WebhookEndpointNotFound => "webhook_endpoint_not_found",
            Self::WebhookMessageNotFound => "webhook_message_not_found",
            Self::TooManyWebhookEndpoints => "too_many_webhook_endpoints",
            Self::InvitationNotFound => "invitation_not_found",
            Self::InvitationExpired => "invitation_expired",
            Self::SignInFailed => "sign_in_failed",
            Self::DashboardSessionRequired => "dashboard_session_required",
            Self::RoleForbidden => "role_forbidden",
            Self::LastOwner => "last_owner",
            Self::MemberExists => "member_exists",
            Self::MemberNotFound => "member_not_found",
            Self::CsrfFailed => "csrf_failed",
        }
    }

    /// The HTTP-style status code.
    pub const fn code(self) -> u16 {
        match self {
            Self::Unauthorized
            | Self::TokenMissing
            | Self::TokenFailed
            | Self::SessionExpired
            | Self::SignInRequired
            | Self::SignInCodeFailed
            | Self::SignInCodeExpired
            | Self::SignInFailed
            | Self::DashboardSessionRequired => 401,
            Self::PayloadTooLarge => 413,
            Self::InvalidInput
            | Self::ContactIdRequired
            | Self::ContactIdInvalid
            | Self::IssuerInvalid
            | Self::WidgetTextInvalid
            | Self::WidgetButtonUrlInvalid
            | Self::FactorConflict => 400,
            Self::MustDisableFirst
            | Self::TwoFactorRequired
            | Self::SandboxOnly
            | Self::WidgetNotApproved
            | Self::OriginNotAllowed
            | Self::PurchaseHold
            | Self::RoleForbidden
            | Self::CsrfFailed => 403,
            Self::AlreadyEnabled
            | Self::NotCreated
            | Self::NotEnabled
            | Self::TooManyWebhookEndpoints
            | Self::LastOwner
            | Self::MemberExists => 409,
            Self::InvitationExpired => 410,
            Self::Locked => 423,
            Self::Throttled | Self::SignInThrottled => 429,
            Self::NotFound
            | Self::PartnerNotFound
            | Self::OrderNotFound
            | Self::ContactNotFound
            | Self::WebhookEndpointNotFound
            | Self::WebhookMessageNotFound
            | Self::InvitationNotFound
            | Self::MemberNotFound => 404,
            Self::MethodNotAllowed => 405,
            Self::CreateFailed
            | Self::EnableFailed
            | Self::DisableFailed
            | Self::StatusFailed
            | Self::VerifyFailed
            | Self::Internal
            | Self::Config => 500,
            Self::PurchasesUnavailable | Self::SignInUnavailable => 503,
        }
    }

    /// The fixed message. [`Error::message`] refines it for [`ErrorKind::Throttled`] (the
    /// number of seconds) and [`ErrorKind::InvalidInput`] (the field and the rule).
    pub const fn message(self) -> &'static str {
        match self {
            Self::Unauthorized => "Unauthorized",
            Self::PayloadTooLarge => "Request body is too large",
            Self::InvalidInput => "Invalid input",
            Self::ContactIdRequired => "contactId is required",
            Self::ContactIdInvalid => "contactId must be a UUID",
            Self::IssuerInvalid => "twoFactorIssuer must be 1 to 64 characters without ':' or control characters",
            Self::WidgetTextInvalid => "widgetText must be 1 to 64 characters without control characters",
            Self::WidgetButtonUrlInvalid => {
                "widgetButtonURL must be an absolute http(s) URL without credentials, at most 2048 characters"
            }
            Self::MustDisableFirst => "Must disable 2FA before creating a new one",
            Self::AlreadyEnabled => "Cannot enable 2FA again, it is already set",
            Self::NotCreated => "Must create 2FA before enabling it",
            Self::NotEnabled => "2FA is not enabled",
            Self::Locked => "2FA is locked after too many failed attempts",
            Self::Throttled => "Too many failed 2FA attempts, try again later",
            Self::TokenMissing => "Google 2FA requires the token to be passed in",
            Self::TokenFailed => "Google 2FA failed",
            Self::NotFound => "Not found",
            Self::MethodNotAllowed => "Method not allowed",
            Self::PartnerNotFound => "Partner not found",
            Self::CreateFailed | Self::EnableFailed => "Error enabling 2FA",
            Self::DisableFailed => "Error disabling 2FA",
            Self::StatusFailed => "Error getting 2FA",
            Self::VerifyFailed => "Error verifying 2FA",
            Self::Internal => "Internal server error",
            Self::Config => "Invalid configuration",
            Self::SessionExpired => "Widget session expired, sign in again",
            Self::SignInRequired => "Sign in to continue",
            Self::SignInCodeFailed => "The sign-in code is wrong",
            Self::SignInCodeExpired => "The sign-in code has expired or was tried too often, ask for a new one",
            Self::SignInThrottled => "Too many sign-in codes for this email, try again later",
            Self::TwoFactorRequired => "2FA is required before buying",
            Self::PurchasesUnavailable => "Purchases are unavailable on this server",
            Self::OrderNotFound => "Order not found",
            Self::ContactNotFound => "Contact not found",
            Self::SandboxOnly => "Only available in sandbox",
            Self::WidgetNotApproved => "This widget is not approved for production yet.",
            Self::OriginNotAllowed => "This site may not embed the widget",
            Self::SignInUnavailable => "Email sign-in is unavailable on this server",
            Self::FactorConflict => "Give token or recoveryCode, not both",
            Self::PurchaseHold => "Purchases are on hold after a 2FA reset",
            Self::WebhookEndpointNotFound => "Webhook endpoint not found",
            Self::WebhookMessageNotFound => "Webhook message not found",
            Self::TooManyWebhookEndpoints => "At most 10 webhook endpoints",
            Self::InvitationNotFound => "Invitation not found or already used.",
            Self::InvitationExpired => "Invitation has expired.",
            Self::SignInFailed => "Email or password is wrong.",
            Self::DashboardSessionRequired => "Sign in to continue.",
            Self::RoleForbidden => "Your role cannot do this.",
            Self::LastOwner => "A team needs at least one owner.",
            Self::MemberExists => "A member with this email already exists.",
            Self::MemberNotFound => "Member not found.",
            Self::CsrfFailed => "CSRF check failed.",
        }
    }

    /// The kind with this C ABI number.
    pub fn from_number(n: u32) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| *k as u32 == n)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A Rampart error: a kind, its message, and for server failures an internal cause.
///
/// The message never holds a secret, code, key or user value; the cause (for logs only) holds
/// storage or configuration detail and is never part of [`Error::message`].
pub struct Error {
    kind: ErrorKind,
    detail: Option<Cow<'static, str>>,
    /// The field an [`ErrorKind::InvalidInput`] names.
    field: Option<Box<str>>,
    retry_after: Option<u64>,
    cause: Option<Cause>,
}

impl Error {
    /// An error of this kind with its fixed message.
    pub fn new(kind: ErrorKind) -> Self {
        Self { kind, detail: None, field: None, retry_after: None, cause: None }
    }

    /// A 400 naming the field and the rule it breaks, for example
    /// `invalid_input("name", "must not be empty")` gives "name must not be empty".
    pub fn invalid_input(field: &str, rule: &str) -> Self {
        let mut e = Self::new(ErrorKind::InvalidInput).with_detail(format!("{field} {rule}"));
        e.field = Some(field.into());
        e
    }

    /// A 400 for a body or parameter list that gives one field twice: `duplicate field: <name>`
    /// (a proxy that reads the first and a server that reads the last must never disagree).
    pub fn duplicate_field(name: &str) -> Self {
        Self::new(ErrorKind::InvalidInput).with_detail(format!("duplicate field: {name}"))
    }

    /// The 400 for a text argument that is not valid Unicode (a lone surrogate from Python or
    /// JavaScript, invalid UTF-8 from C, a percent-escape of invalid UTF-8 over HTTP). It is
    /// the field's own error wherever the field has one (`contactId`, `twoFactorIssuer`,
    /// `widgetText`, `widgetButtonURL`), else `<field> must be valid Unicode text`; so every
    /// surface answers it with the same kind, and never with a replacement character.
    pub fn not_unicode(field: &str) -> Self {
        match field {
            "contactId" | "contact_id" => ErrorKind::ContactIdInvalid.into(),
            "twoFactorIssuer" | "issuer" => ErrorKind::IssuerInvalid.into(),
            "widgetText" | "widget_text" | "text" => ErrorKind::WidgetTextInvalid.into(),
            "widgetButtonURL" | "widget_button_url" | "url" => ErrorKind::WidgetButtonUrlInvalid.into(),
            _ => Self::not_unicode_at(field),
        }
    }

    /// The 400 for text that is not valid Unicode at a place with no error of its own (a widget
    /// option's path, a QR code's text): always `<place> must be valid Unicode text`, whatever
    /// the name reads, so an option that happens to be called `url` is not taken for the
    /// partner's widget button URL.
    pub fn not_unicode_at(place: &str) -> Self {
        Self::invalid_input(place, "must be valid Unicode text")
    }

    /// A 429 telling the caller to wait `seconds` (whole seconds, rounded up).
    pub fn throttled(seconds: u64) -> Self {
        let mut e = Self::new(ErrorKind::Throttled)
            .with_detail(format!("Too many failed 2FA attempts, try again in {seconds} seconds"));
        e.retry_after = Some(seconds);
        e
    }

    /// A 429 for a fourth sign-in code to one email within 10 minutes: wait `seconds`.
    pub fn sign_in_throttled(seconds: u64) -> Self {
        let mut e = Self::new(ErrorKind::SignInThrottled)
            .with_detail(format!("Too many sign-in codes for this email, try again in {seconds} seconds"));
        e.retry_after = Some(seconds);
        e
    }

    /// A 403 for an order during the purchase hold: "Purchases are on hold until `<time>` after
    /// a 2FA reset", `until` being RFC 3339 UTC.
    pub fn purchase_hold(until: &str) -> Self {
        Self::new(ErrorKind::PurchaseHold).with_detail(format!("Purchases are on hold until {until} after a 2FA reset"))
    }

    /// A configuration error; `what` is public (it holds no secret).
    pub fn config(what: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorKind::Config).with_detail(what)
    }

    /// Attach an internal cause (logged by servers, never sent to clients).
    pub fn with_cause(mut self, cause: impl Into<Cause>) -> Self {
        self.cause = Some(cause.into());
        self
    }

    fn with_detail(mut self, detail: impl Into<Cow<'static, str>>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// The kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The HTTP-style code (equal to the kind's).
    pub fn code(&self) -> u16 {
        self.kind.code()
    }

    /// The message to show to the caller.
    pub fn message(&self) -> &str {
        self.detail.as_deref().unwrap_or(self.kind.message())
    }

    /// For [`ErrorKind::Throttled`] and [`ErrorKind::SignInThrottled`], the whole seconds to wait (the `Retry-After` value).
    pub fn retry_after(&self) -> Option<u64> {
        self.retry_after
    }

    /// The request field the error is about, where there is one: the field an
    /// [`ErrorKind::InvalidInput`] names, and the fixed field of the kinds that have one
    /// (`contactId`, `twoFactorIssuer`, `widgetText`, `widgetButtonURL`). A form shows the
    /// message next to it.
    pub fn field(&self) -> Option<&str> {
        match self.kind {
            ErrorKind::InvalidInput => self.field.as_deref(),
            ErrorKind::ContactIdRequired | ErrorKind::ContactIdInvalid => Some("contactId"),
            ErrorKind::IssuerInvalid => Some("twoFactorIssuer"),
            ErrorKind::WidgetTextInvalid => Some("widgetText"),
            ErrorKind::WidgetButtonUrlInvalid => Some("widgetButtonURL"),
            _ => None,
        }
    }

    /// The internal cause, for logs.
    pub fn cause(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.cause.as_deref()
    }

    /// The same error re-labelled as another kind, keeping the cause (used to turn a store
    /// failure into the operation's own 500).
    pub fn relabel(self, kind: ErrorKind) -> Self {
        Self { kind, detail: None, field: None, retry_after: None, cause: self.cause }
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Self::new(kind)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.kind).field("code", &self.code()).field("message", &self.message());
        if let Some(s) = self.retry_after {
            d.field("retry_after", &s);
        }
        if let Some(c) = &self.cause {
            d.field("cause", &c.to_string());
        }
        d.finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause.as_deref().map(|c| c as &(dyn std::error::Error + 'static))
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_dense_and_round_trip() {
        for (i, k) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(*k as u32, i as u32 + 1);
            assert_eq!(ErrorKind::from_number(*k as u32), Some(*k));
        }
        assert_eq!(ErrorKind::from_number(0), None);
        assert_eq!(ErrorKind::from_number(10_000), None);
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = ErrorKind::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ErrorKind::ALL.len());
    }

    #[test]
    fn throttled_message_carries_seconds() {
        let e = Error::throttled(60);
        assert_eq!(e.message(), "Too many failed 2FA attempts, try again in 60 seconds");
        assert_eq!(e.code(), 429);
        assert_eq!(e.retry_after(), Some(60));
    }

    #[test]
    fn field_errors() {
        assert_eq!(Error::duplicate_field("token").message(), "duplicate field: token");
        assert_eq!(Error::duplicate_field("token").kind(), ErrorKind::InvalidInput);
        assert_eq!(Error::not_unicode("contactId").kind(), ErrorKind::ContactIdInvalid);
        assert_eq!(Error::not_unicode("twoFactorIssuer").kind(), ErrorKind::IssuerInvalid);
        assert_eq!(Error::not_unicode("widgetText").kind(), ErrorKind::WidgetTextInvalid);
        assert_eq!(Error::not_unicode("widgetButtonURL").kind(), ErrorKind::WidgetButtonUrlInvalid);
        assert_eq!(Error::not_unicode_at("url").message(), "url must be valid Unicode text");
        let other = Error::not_unicode("label");
        assert_eq!((other.kind(), other.message()), (ErrorKind::InvalidInput, "label must be valid Unicode text"));
    }

    #[test]
    fn cause_is_not_in_message() {
        let e = Error::new(ErrorKind::StatusFailed).with_cause("disk I/O error");
        assert_eq!(e.to_string(), "Error getting 2FA");
        assert!(format!("{e:?}").contains("disk I/O error"));
    }
}
