//! # rampart-ffi
//!
//! The C ABI of Rampart: `librampart.a` / `librampart.so` and `include/rampart.h` (generated
//! from this crate by a pinned cbindgen; `make c-header` regenerates it and `make test` fails
//! when the committed copy differs).
//!
//! Conventions, stated once here and in the header:
//!
//! - Every fallible function returns a [`rampart_status`]: `RAMPART_OK` (0), one value per
//!   error kind of the core with the kind's stable number, or `RAMPART_STATUS_PANIC` (255).
//!   `rampart_status_code`, `_message` and `_name` describe a status; the last failure's
//!   refined message, internal cause and `Retry-After` are kept per thread.
//! - Results go through trailing out-pointers, written only on success. Object first, then
//!   inputs, then outputs.
//! - A NULL where an argument is required gives `RAMPART_STATUS_INVALID_INPUT` with the
//!   argument named in the last error message; a NULL or empty contact id is
//!   `RAMPART_STATUS_CONTACT_ID_REQUIRED` and a NULL token a missing token.
//! - A string that is not UTF-8 is the field's own 400 (`Error::not_unicode`, the answer every
//!   language gives to text that is not valid Unicode): `RAMPART_STATUS_CONTACT_ID_INVALID`,
//!   `RAMPART_STATUS_ISSUER_INVALID`, `RAMPART_STATUS_WIDGET_TEXT_INVALID`,
//!   `RAMPART_STATUS_WIDGET_BUTTON_URL_INVALID`, else `RAMPART_STATUS_INVALID_INPUT`
//!   `"<argument> must be valid Unicode text"` (inside widget JSON the option path names it).
//!   A token or sign-in code that is not UTF-8 is a wrong code (the token grammar never answers
//!   400), a bearer credential, widget session token or publishable key that is not UTF-8 a bad
//!   one (`unauthorized`, `session_expired`, `partner_not_found`), a URL `url_invalid`, an
//!   address `address_bad_character`.
//! - Compound results (orders, widget sessions, validations, audit pages) are JSON text in the
//!   HTTP API's shape (`checkout.rs`, `audit.rs`).
//! - Opaque handles have one constructor family and one `_free`; `_free(NULL)` is a no-op.
//!   Recovery codes come as a `rampart_recovery_codes` handle whose `_free` wipes them.
//! - Disable and verify take the factor as two nullable strings, `token` and `recovery_code`
//!   (`boundary::factor_arg`): both given is `RAMPART_STATUS_FACTOR_CONFLICT`, as over HTTP.
//! - Strings the library returns are freed only by `rampart_string_free`, which zeroizes them.
//! - Every body runs inside the panic boundary in `boundary.rs`; no panic unwinds into C.
//!   (Built with `panic = "abort"` a panic would abort instead; the shipped profiles unwind.)
//! - A service handle is thread-safe: share one across threads.
//!
//! - A webhook message that does not verify is an outcome, like a wrong code: `RAMPART_OK` with
//!   a `rampart_webhook_verify_result` saying why (`webhooks.rs`).
//!
//! - Widget, URL, signature, snippet, widget configuration and address problems are not error
//!   kinds of the core: they come back as a status (mostly `RAMPART_STATUS_INVALID_INPUT`) with
//!   the core's stable code in `rampart_last_error_code` (`widget.rs`).

#![deny(missing_docs)]
// The exported names are the C names.
#![allow(non_camel_case_types)]

// Declared in the order the header presents them (cbindgen keeps source order).
pub mod status;
mod status_enum;
pub mod strings;

pub mod service;

pub mod recovery;

pub mod checkout;

pub mod audit;

pub mod totp;

pub mod widget;

pub mod webhooks;

mod boundary;

pub use recovery::{rampart_contact_state, rampart_purchase_check, rampart_recovery_codes, rampart_verify_method};
pub use service::{rampart_clock_fn, rampart_config, rampart_environment, rampart_service};
pub use status::rampart_status;
pub use totp::{rampart_token_kind, rampart_totp_secret};
pub use webhooks::rampart_webhook_verify_result;
pub use widget::{
    rampart_widget_config, rampart_widget_mode, rampart_widget_part, rampart_widget_target, rampart_widget_validation,
};
