// @generated from rampart_core::ErrorKind::ALL: do not edit. Regenerate with
// `RAMPART_BLESS=1 cargo test -p rampart-ffi --lib status`; that test fails on any difference.

use rampart_core::ErrorKind;

/// The result of every fallible call: `RAMPART_OK`, or one value per error kind of the core,
/// with the kind's stable number (never renumbered), or `RAMPART_STATUS_PANIC`.
///
/// `rampart_status_code`, `rampart_status_message` and `rampart_status_name` describe a value.
/// Misuse of the ABI (a NULL where an argument is required) is `RAMPART_STATUS_INVALID_INPUT`,
/// with the argument named by `rampart_last_error_message`. A string that is not UTF-8 is the
/// field's own status, as in every language: `RAMPART_STATUS_CONTACT_ID_INVALID` for a contact
/// id, `RAMPART_STATUS_ISSUER_INVALID` for an issuer, `RAMPART_STATUS_WIDGET_TEXT_INVALID` and
/// `RAMPART_STATUS_WIDGET_BUTTON_URL_INVALID` for the widget settings, otherwise
/// `RAMPART_STATUS_INVALID_INPUT` `"<argument> must be valid Unicode text"`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
pub enum rampart_status {
    /// 200: success; the out-pointers were written.
    RAMPART_OK = 0,
    /// 401 `unauthorized`: "Unauthorized"
    RAMPART_STATUS_UNAUTHORIZED = 1,
    /// 413 `payload_too_large`: "Request body is too large"
    RAMPART_STATUS_PAYLOAD_TOO_LARGE = 2,
    /// 400 `invalid_input`: "Invalid input"
    RAMPART_STATUS_INVALID_INPUT = 3,
    /// 400 `contact_id_required`: "contactId is required"
    RAMPART_STATUS_CONTACT_ID_REQUIRED = 4,
    /// 400 `contact_id_invalid`: "contactId must be a UUID"
    RAMPART_STATUS_CONTACT_ID_INVALID = 5,
    /// 400 `issuer_invalid`: "twoFactorIssuer must be 1 to 64 characters without ':' or control characters"
    RAMPART_STATUS_ISSUER_INVALID = 6,
    /// 400 `widget_text_invalid`: "widgetText must be 1 to 64 characters without control characters"
    RAMPART_STATUS_WIDGET_TEXT_INVALID = 7,
    /// 400 `widget_button_url_invalid`: "widgetButtonURL must be an absolute http(s) URL without credentials, at most 2048 characters"
    RAMPART_STATUS_WIDGET_BUTTON_URL_INVALID = 8,
    /// 403 `must_disable_first`: "Must disable 2FA before creating a new one"
    RAMPART_STATUS_MUST_DISABLE_FIRST = 9,
    /// 409 `already_enabled`: "Cannot enable 2FA again, it is already set"
    RAMPART_STATUS_ALREADY_ENABLED = 10,
    /// 409 `not_created`: "Must create 2FA before enabling it"
    RAMPART_STATUS_NOT_CREATED = 11,
    /// 409 `not_enabled`: "2FA is not enabled"
    RAMPART_STATUS_NOT_ENABLED = 12,
    /// 423 `locked`: "2FA is locked after too many failed attempts"
    RAMPART_STATUS_LOCKED = 13,
    /// 429 `throttled`: "Too many failed 2FA attempts, try again later"
    RAMPART_STATUS_THROTTLED = 14,
    /// 401 `token_missing`: "Google 2FA requires the token to be passed in"
    RAMPART_STATUS_TOKEN_MISSING = 15,
    /// 401 `token_failed`: "Google 2FA failed"
    RAMPART_STATUS_TOKEN_FAILED = 16,
    /// 404 `not_found`: "Not found"
    RAMPART_STATUS_NOT_FOUND = 17,
    /// 405 `method_not_allowed`: "Method not allowed"
    RAMPART_STATUS_METHOD_NOT_ALLOWED = 18,
    /// 404 `partner_not_found`: "Partner not found"
    RAMPART_STATUS_PARTNER_NOT_FOUND = 19,
    /// 500 `create_failed`: "Error enabling 2FA"
    RAMPART_STATUS_CREATE_FAILED = 20,
    /// 500 `enable_failed`: "Error enabling 2FA"
    RAMPART_STATUS_ENABLE_FAILED = 21,
    /// 500 `disable_failed`: "Error disabling 2FA"
    RAMPART_STATUS_DISABLE_FAILED = 22,
    /// 500 `status_failed`: "Error getting 2FA"
    RAMPART_STATUS_STATUS_FAILED = 23,
    /// 500 `verify_failed`: "Error verifying 2FA"
    RAMPART_STATUS_VERIFY_FAILED = 24,
    /// 500 `internal`: "Internal server error"
    RAMPART_STATUS_INTERNAL = 25,
    /// 500 `config`: "Invalid configuration"
    RAMPART_STATUS_CONFIG = 26,
    /// 401 `session_expired`: "Widget session expired, sign in again"
    RAMPART_STATUS_SESSION_EXPIRED = 27,
    /// 401 `sign_in_required`: "Sign in to continue"
    RAMPART_STATUS_SIGN_IN_REQUIRED = 28,
    /// 401 `sign_in_code_failed`: "The sign-in code is wrong"
    RAMPART_STATUS_SIGN_IN_CODE_FAILED = 29,
    /// 401 `sign_in_code_expired`: "The sign-in code has expired or was tried too often, ask for a new one"
    RAMPART_STATUS_SIGN_IN_CODE_EXPIRED = 30,
    /// 429 `sign_in_throttled`: "Too many sign-in codes for this email, try again later"
    RAMPART_STATUS_SIGN_IN_THROTTLED = 31,
    /// 403 `two_factor_required`: "2FA is required before buying"
    RAMPART_STATUS_TWO_FACTOR_REQUIRED = 32,
    /// 503 `purchases_unavailable`: "Purchases are unavailable on this server"
    RAMPART_STATUS_PURCHASES_UNAVAILABLE = 33,
    /// 404 `order_not_found`: "Order not found"
    RAMPART_STATUS_ORDER_NOT_FOUND = 34,
    /// 404 `contact_not_found`: "Contact not found"
    RAMPART_STATUS_CONTACT_NOT_FOUND = 35,
    /// 403 `sandbox_only`: "Only available in sandbox"
    RAMPART_STATUS_SANDBOX_ONLY = 36,
    /// 403 `widget_not_approved`: "This widget is not approved for production yet."
    RAMPART_STATUS_WIDGET_NOT_APPROVED = 37,
    /// 403 `origin_not_allowed`: "This site may not embed the widget"
    RAMPART_STATUS_ORIGIN_NOT_ALLOWED = 38,
    /// 503 `sign_in_unavailable`: "Email sign-in is unavailable on this server"
    RAMPART_STATUS_SIGN_IN_UNAVAILABLE = 39,
    /// 400 `factor_conflict`: "Give token or recoveryCode, not both"
    RAMPART_STATUS_FACTOR_CONFLICT = 40,
    /// 403 `purchase_hold`: "Purchases are on hold after a 2FA reset"
    RAMPART_STATUS_PURCHASE_HOLD = 41,
    /// 404 `webhook_endpoint_not_found`: "Webhook endpoint not found"
    RAMPART_STATUS_WEBHOOK_ENDPOINT_NOT_FOUND = 42,
    /// 404 `webhook_message_not_found`: "Webhook message not found"
    RAMPART_STATUS_WEBHOOK_MESSAGE_NOT_FOUND = 43,
    /// 409 `too_many_webhook_endpoints`: "At most 10 webhook endpoints"
    RAMPART_STATUS_TOO_MANY_WEBHOOK_ENDPOINTS = 44,
    /// 404 `invitation_not_found`: "Invitation not found or already used."
    RAMPART_STATUS_INVITATION_NOT_FOUND = 45,
    /// 410 `invitation_expired`: "Invitation has expired."
    RAMPART_STATUS_INVITATION_EXPIRED = 46,
    /// 401 `sign_in_failed`: "Email or password is wrong."
    RAMPART_STATUS_SIGN_IN_FAILED = 47,
    /// 401 `dashboard_session_required`: "Sign in to continue."
    RAMPART_STATUS_DASHBOARD_SESSION_REQUIRED = 48,
    /// 403 `role_forbidden`: "Your role cannot do this."
    RAMPART_STATUS_ROLE_FORBIDDEN = 49,
    /// 409 `last_owner`: "A team needs at least one owner."
    RAMPART_STATUS_LAST_OWNER = 50,
    /// 409 `member_exists`: "A member with this email already exists."
    RAMPART_STATUS_MEMBER_EXISTS = 51,
    /// 404 `member_not_found`: "Member not found."
    RAMPART_STATUS_MEMBER_NOT_FOUND = 52,
    /// 403 `csrf_failed`: "CSRF check failed."
    RAMPART_STATUS_CSRF_FAILED = 53,
    /// 500 `panic`: a Rust panic was caught at the C boundary (a bug in Rampart, to report).
    /// Not an error kind of the core; its message is the same as `RAMPART_STATUS_INTERNAL`'s.
    RAMPART_STATUS_PANIC = 255,
}

impl rampart_status {
    /// The status of an error kind.
    pub const fn from_kind(kind: ErrorKind) -> Self {
        match kind {
            ErrorKind::Unauthorized => Self::RAMPART_STATUS_UNAUTHORIZED,
            ErrorKind::PayloadTooLarge => Self::RAMPART_STATUS_PAYLOAD_TOO_LARGE,
            ErrorKind::InvalidInput => Self::RAMPART_STATUS_INVALID_INPUT,
            ErrorKind::ContactIdRequired => Self::RAMPART_STATUS_CONTACT_ID_REQUIRED,
            ErrorKind::ContactIdInvalid => Self::RAMPART_STATUS_CONTACT_ID_INVALID,
            ErrorKind::IssuerInvalid => Self::RAMPART_STATUS_ISSUER_INVALID,
            ErrorKind::WidgetTextInvalid => Self::RAMPART_STATUS_WIDGET_TEXT_INVALID,
            ErrorKind::WidgetButtonUrlInvalid => Self::RAMPART_STATUS_WIDGET_BUTTON_URL_INVALID,
            ErrorKind::MustDisableFirst => Self::RAMPART_STATUS_MUST_DISABLE_FIRST,
            ErrorKind::AlreadyEnabled => Self::RAMPART_STATUS_ALREADY_ENABLED,
            ErrorKind::NotCreated => Self::RAMPART_STATUS_NOT_CREATED,
            ErrorKind::NotEnabled => Self::RAMPART_STATUS_NOT_ENABLED,
            ErrorKind::Locked => Self::RAMPART_STATUS_LOCKED,
            ErrorKind::Throttled => Self::RAMPART_STATUS_THROTTLED,
            ErrorKind::TokenMissing => Self::RAMPART_STATUS_TOKEN_MISSING,
            ErrorKind::TokenFailed => Self::RAMPART_STATUS_TOKEN_FAILED,
            ErrorKind::NotFound => Self::RAMPART_STATUS_NOT_FOUND,
            ErrorKind::MethodNotAllowed => Self::RAMPART_STATUS_METHOD_NOT_ALLOWED,
            ErrorKind::PartnerNotFound => Self::RAMPART_STATUS_PARTNER_NOT_FOUND,
            ErrorKind::CreateFailed => Self::RAMPART_STATUS_CREATE_FAILED,
            ErrorKind::EnableFailed => Self::RAMPART_STATUS_ENABLE_FAILED,
            ErrorKind::DisableFailed => Self::RAMPART_STATUS_DISABLE_FAILED,
            ErrorKind::StatusFailed => Self::RAMPART_STATUS_STATUS_FAILED,
            ErrorKind::VerifyFailed => Self::RAMPART_STATUS_VERIFY_FAILED,
            ErrorKind::Internal => Self::RAMPART_STATUS_INTERNAL,
            ErrorKind::Config => Self::RAMPART_STATUS_CONFIG,
            ErrorKind::SessionExpired => Self::RAMPART_STATUS_SESSION_EXPIRED,
            ErrorKind::SignInRequired => Self::RAMPART_STATUS_SIGN_IN_REQUIRED,
            ErrorKind::SignInCodeFailed => Self::RAMPART_STATUS_SIGN_IN_CODE_FAILED,
            ErrorKind::SignInCodeExpired => Self::RAMPART_STATUS_SIGN_IN_CODE_EXPIRED,
            ErrorKind::SignInThrottled => Self::RAMPART_STATUS_SIGN_IN_THROTTLED,
            ErrorKind::TwoFactorRequired => Self::RAMPART_STATUS_TWO_FACTOR_REQUIRED,
            ErrorKind::PurchasesUnavailable => Self::RAMPART_STATUS_PURCHASES_UNAVAILABLE,
            ErrorKind::OrderNotFound => Self::RAMPART_STATUS_ORDER_NOT_FOUND,
            ErrorKind::ContactNotFound => Self::RAMPART_STATUS_CONTACT_NOT_FOUND,
            ErrorKind::SandboxOnly => Self::RAMPART_STATUS_SANDBOX_ONLY,
            ErrorKind::WidgetNotApproved => Self::RAMPART_STATUS_WIDGET_NOT_APPROVED,
            ErrorKind::OriginNotAllowed => Self::RAMPART_STATUS_ORIGIN_NOT_ALLOWED,
            ErrorKind::SignInUnavailable => Self::RAMPART_STATUS_SIGN_IN_UNAVAILABLE,
            ErrorKind::FactorConflict => Self::RAMPART_STATUS_FACTOR_CONFLICT,
            ErrorKind::PurchaseHold => Self::RAMPART_STATUS_PURCHASE_HOLD,
            ErrorKind::WebhookEndpointNotFound => Self::RAMPART_STATUS_WEBHOOK_ENDPOINT_NOT_FOUND,
            ErrorKind::WebhookMessageNotFound => Self::RAMPART_STATUS_WEBHOOK_MESSAGE_NOT_FOUND,
            ErrorKind::TooManyWebhookEndpoints => Self::RAMPART_STATUS_TOO_MANY_WEBHOOK_ENDPOINTS,
            ErrorKind::InvitationNotFound => Self::RAMPART_STATUS_INVITATION_NOT_FOUND,
            ErrorKind::InvitationExpired => Self::RAMPART_STATUS_INVITATION_EXPIRED,
            ErrorKind::SignInFailed => Self::RAMPART_STATUS_SIGN_IN_FAILED,
            ErrorKind::DashboardSessionRequired => Self::RAMPART_STATUS_DASHBOARD_SESSION_REQUIRED,
            ErrorKind::RoleForbidden => Self::RAMPART_STATUS_ROLE_FORBIDDEN,
            ErrorKind::LastOwner => Self::RAMPART_STATUS_LAST_OWNER,
            ErrorKind::MemberExists => Self::RAMPART_STATUS_MEMBER_EXISTS,
            ErrorKind::MemberNotFound => Self::RAMPART_STATUS_MEMBER_NOT_FOUND,
            ErrorKind::CsrfFailed => Self::RAMPART_STATUS_CSRF_FAILED,
            _ => Self::RAMPART_STATUS_INTERNAL,
        }
    }

    /// The status with this number, if any.
    pub const fn from_number(n: u32) -> Option<Self> {
        match n {
            0 => Some(Self::RAMPART_OK),
            1 => Some(Self::RAMPART_STATUS_UNAUTHORIZED),
            2 => Some(Self::RAMPART_STATUS_PAYLOAD_TOO_LARGE),
            3 => Some(Self::RAMPART_STATUS_INVALID_INPUT),
            4 => Some(Self::RAMPART_STATUS_CONTACT_ID_REQUIRED),
            5 => Some(Self::RAMPART_STATUS_CONTACT_ID_INVALID),
            6 => Some(Self::RAMPART_STATUS_ISSUER_INVALID),
            7 => Some(Self::RAMPART_STATUS_WIDGET_TEXT_INVALID),
            8 => Some(Self::RAMPART_STATUS_WIDGET_BUTTON_URL_INVALID),
            9 => Some(Self::RAMPART_STATUS_MUST_DISABLE_FIRST),
            10 => Some(Self::RAMPART_STATUS_ALREADY_ENABLED),
            11 => Some(Self::RAMPART_STATUS_NOT_CREATED),
            12 => Some(Self::RAMPART_STATUS_NOT_ENABLED),
            13 => Some(Self::RAMPART_STATUS_LOCKED),
            14 => Some(Self::RAMPART_STATUS_THROTTLED),
            15 => Some(Self::RAMPART_STATUS_TOKEN_MISSING),
            16 => Some(Self::RAMPART_STATUS_TOKEN_FAILED),
            17 => Some(Self::RAMPART_STATUS_NOT_FOUND),
            18 => Some(Self::RAMPART_STATUS_METHOD_NOT_ALLOWED),
            19 => Some(Self::RAMPART_STATUS_PARTNER_NOT_FOUND),
            20 => Some(Self::RAMPART_STATUS_CREATE_FAILED),
            21 => Some(Self::RAMPART_STATUS_ENABLE_FAILED),
            22 => Some(Self::RAMPART_STATUS_DISABLE_FAILED),
            23 => Some(Self::RAMPART_STATUS_STATUS_FAILED),
            24 => Some(Self::RAMPART_STATUS_VERIFY_FAILED),
            25 => Some(Self::RAMPART_STATUS_INTERNAL),
            26 => Some(Self::RAMPART_STATUS_CONFIG),
            27 => Some(Self::RAMPART_STATUS_SESSION_EXPIRED),
            28 => Some(Self::RAMPART_STATUS_SIGN_IN_REQUIRED),
            29 => Some(Self::RAMPART_STATUS_SIGN_IN_CODE_FAILED),
            30 => Some(Self::RAMPART_STATUS_SIGN_IN_CODE_EXPIRED),
            31 => Some(Self::RAMPART_STATUS_SIGN_IN_THROTTLED),
            32 => Some(Self::RAMPART_STATUS_TWO_FACTOR_REQUIRED),
            33 => Some(Self::RAMPART_STATUS_PURCHASES_UNAVAILABLE),
            34 => Some(Self::RAMPART_STATUS_ORDER_NOT_FOUND),
            35 => Some(Self::RAMPART_STATUS_CONTACT_NOT_FOUND),
            36 => Some(Self::RAMPART_STATUS_SANDBOX_ONLY),
            37 => Some(Self::RAMPART_STATUS_WIDGET_NOT_APPROVED),
            38 => Some(Self::RAMPART_STATUS_ORIGIN_NOT_ALLOWED),
            39 => Some(Self::RAMPART_STATUS_SIGN_IN_UNAVAILABLE),
            40 => Some(Self::RAMPART_STATUS_FACTOR_CONFLICT),
            41 => Some(Self::RAMPART_STATUS_PURCHASE_HOLD),
            42 => Some(Self::RAMPART_STATUS_WEBHOOK_ENDPOINT_NOT_FOUND),
            43 => Some(Self::RAMPART_STATUS_WEBHOOK_MESSAGE_NOT_FOUND),
            44 => Some(Self::RAMPART_STATUS_TOO_MANY_WEBHOOK_ENDPOINTS),
            45 => Some(Self::RAMPART_STATUS_INVITATION_NOT_FOUND),
            46 => Some(Self::RAMPART_STATUS_INVITATION_EXPIRED),
            47 => Some(Self::RAMPART_STATUS_SIGN_IN_FAILED),
            48 => Some(Self::RAMPART_STATUS_DASHBOARD_SESSION_REQUIRED),
            49 => Some(Self::RAMPART_STATUS_ROLE_FORBIDDEN),
            50 => Some(Self::RAMPART_STATUS_LAST_OWNER),
            51 => Some(Self::RAMPART_STATUS_MEMBER_EXISTS),
            52 => Some(Self::RAMPART_STATUS_MEMBER_NOT_FOUND),
            53 => Some(Self::RAMPART_STATUS_CSRF_FAILED),
            255 => Some(Self::RAMPART_STATUS_PANIC),
            _ => None,
        }
    }
}
