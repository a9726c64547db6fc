//! The panic boundary, the per-thread last error and the checks every argument goes through.
//!
//! Every exported function runs its body through [`status_call`] (functions returning a status)
//! or [`value_call`] (accessors and `_free`), so no panic unwinds into C. A caught panic gives
//! [`rampart_status::RAMPART_STATUS_PANIC`].

use std::any::Any;
use std::cell::RefCell;
use std::ffi::{CStr, c_char};
use std::panic::{self, AssertUnwindSafe};
use std::ptr::NonNull;

use rampart_core::token::Token;
use rampart_core::{ContactId, Error, ErrorKind, Factor, PartnerId, RecoveryCode};

use crate::status::rampart_status;

/// What the last failing call on this thread left for `rampart_last_error_*`.
#[derive(Default)]
struct LastError {
    message: String,
    cause: String,
    retry_after: u64,
    code: String,
}

thread_local! {
    static LAST_ERROR: RefCell<LastError> = RefCell::new(LastError::default());
}

/// A failure that is not one of the core's error kinds: a widget, URL, signature, snippet,
/// configuration or address problem, reported as `status` with its own stable `code`.
#[derive(Debug)]
pub(crate) struct Coded {
    pub(crate) status: rampart_status,
    pub(crate) code: &'static str,
    pub(crate) message: &'static str,
}

/// Why a call failed: a core error (its code is the kind's name) or a [`Coded`] failure.
#[derive(Debug)]
pub(crate) enum Failure {
    Error(Error),
    Coded(Coded),
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Error(error)
    }
}

impl From<Coded> for Failure {
    fn from(coded: Coded) -> Self {
        Failure::Coded(coded)
    }
}

/// Run a status-returning body: `Ok` is `RAMPART_OK`, an error its kind's status, a panic
/// `RAMPART_STATUS_PANIC`. The thread's last error is updated either way.
pub(crate) fn status_call(body: impl FnOnce() -> Result<(), Error>) -> rampart_status {
    coded_call(|| body().map_err(Failure::Error))
}

/// [`status_call`] for bodies that may also fail with a [`Coded`] failure.
pub(crate) fn coded_call(body: impl FnOnce() -> Result<(), Failure>) -> rampart_status {
    match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => {
            set_last_error(|last| {
                last.message.clear();
                last.cause.clear();
                last.retry_after = 0;
                last.code.clear();
            });
            rampart_status::RAMPART_OK
        }
        Ok(Err(Failure::Error(error))) => {
            let status = rampart_status::from_kind(error.kind());
            set_last_error(|last| {
                last.message = error.message().to_owned();
                last.cause = cause_chain(&error);
                last.retry_after = error.retry_after().unwrap_or(0);
                last.code = error.kind().name().to_owned();
            });
            status
        }
        Ok(Err(Failure::Coded(coded))) => {
            set_last_error(|last| {
                last.message = coded.message.to_owned();
                last.cause.clear();
                last.retry_after = 0;
                last.code = coded.code.to_owned();
            });
            coded.status
        }
        Err(payload) => {
            let what = panic_text(payload.as_ref());
            set_last_error(|last| {
                last.message = ErrorKind::Internal.message().to_owned();
                last.cause = format!("panic caught at the C boundary: {what}");
                last.retry_after = 0;
                last.code = "panic".to_owned();
            });
            rampart_status::RAMPART_STATUS_PANIC
        }
    }
}

/// Run a body that returns a plain value; a panic gives `fallback`.
pub(crate) fn value_call<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    panic::catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

// `try_with` and `try_borrow_mut`: recording must never panic itself (during thread teardown
// the slot is gone, and then there is simply nothing to record into).
fn set_last_error(update: impl FnOnce(&mut LastError)) {
    let _ = LAST_ERROR.try_with(|cell| {
        if let Ok(mut last) = cell.try_borrow_mut() {
            update(&mut last);
        }
    });
}

pub(crate) fn with_last_error<T>(fallback: T, read: impl FnOnce(&str, &str, u64) -> T) -> T {
    LAST_ERROR
        .try_with(|cell| match cell.try_borrow() {
            Ok(last) => Some(read(&last.message, &last.cause, last.retry_after)),
            Err(_) => None,
        })
        .ok()
        .flatten()
        .unwrap_or(fallback)
}

/// The stable code of the last failure on this thread (empty after success).
pub(crate) fn with_last_error_code<T>(fallback: T, read: impl FnOnce(&str) -> T) -> T {
    LAST_ERROR
        .try_with(|cell| match cell.try_borrow() {
            Ok(last) => Some(read(&last.code)),
            Err(_) => None,
        })
        .ok()
        .flatten()
        .unwrap_or(fallback)
}

fn cause_chain(error: &Error) -> String {
    let mut text = String::new();
    let mut next = error.cause().map(|c| c as &(dyn std::error::Error + 'static));
    while let Some(cause) = next {
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause.to_string());
        next = cause.source();
    }
    text
}

fn panic_text(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

/// A NULL where an argument is required.
pub(crate) fn null_arg(name: &str) -> Error {
    Error::invalid_input(name, "must not be NULL")
}

/// A required pointer argument.
pub(crate) fn non_null<T>(ptr: *const T, name: &str) -> Result<NonNull<T>, Error> {
    NonNull::new(ptr.cast_mut()).ok_or_else(|| null_arg(name))
}

/// The bytes of a C string, or `None` for NULL.
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string that stays valid and unchanged during the call.
pub(crate) unsafe fn c_bytes<'a>(ptr: *const c_char) -> Option<&'a [u8]> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: non-NULL, and the caller guarantees a live NUL-terminated string.
    Some(unsafe { CStr::from_ptr(ptr) }.to_bytes())
}

/// Bytes as text: bytes that are not UTF-8 are the field's own 400, as every language answers
/// text that is not valid Unicode (`Error::not_unicode`): `issuer` is
/// `RAMPART_STATUS_ISSUER_INVALID`, `text` and `url` (the widget settings) their statuses, any
/// other name `RAMPART_STATUS_INVALID_INPUT` "<name> must be valid Unicode text".
pub(crate) fn utf8_arg<'a>(bytes: &'a [u8], name: &str) -> Result<&'a str, Error> {
    std::str::from_utf8(bytes).map_err(|_| Error::not_unicode(name))
}

/// A required UTF-8 string argument: NULL is ABI misuse ("<name> must not be NULL"), bytes that
/// are not UTF-8 as [`utf8_arg`].
///
/// # Safety
/// As for [`c_bytes`].
pub(crate) unsafe fn str_arg<'a>(ptr: *const c_char, name: &str) -> Result<&'a str, Error> {
    // SAFETY: forwarded contract.
    let bytes = unsafe { c_bytes(ptr) }.ok_or_else(|| null_arg(name))?;
    utf8_arg(bytes, name)
}

/// A required string argument whose invalid UTF-8 is answered as a wrong value of its own
/// (`kind`) rather than a 400: a credential that is not UTF-8 is simply not a valid one. NULL is
/// still an ABI-misuse error.
///
/// # Safety
/// As for [`c_bytes`].
pub(crate) unsafe fn field_arg<'a>(ptr: *const c_char, name: &str, kind: ErrorKind) -> Result<&'a str, Error> {
    // SAFETY: forwarded contract.
    let bytes = unsafe { c_bytes(ptr) }.ok_or_else(|| null_arg(name))?;
    std::str::from_utf8(bytes).map_err(|_| Error::new(kind))
}

/// An optional UTF-8 string argument (NULL is `None`); bytes that are not UTF-8 as [`utf8_arg`].
///
/// # Safety
/// As for [`c_bytes`].
pub(crate) unsafe fn opt_str_arg<'a>(ptr: *const c_char, name: &str) -> Result<Option<&'a str>, Error> {
    // SAFETY: forwarded contract.
    match unsafe { c_bytes(ptr) } {
        None => Ok(None),
        Some(bytes) => utf8_arg(bytes, name).map(Some),
    }
}

/// A partner id argument (a hyphenated UUID).
///
/// # Safety
/// As for [`c_bytes`].
pub(crate) unsafe fn partner_arg(ptr: *const c_char) -> Result<PartnerId, Error> {
    // SAFETY: forwarded contract.
    let text = unsafe { str_arg(ptr, "partner_id") }?;
    PartnerId::parse(text)
}

/// A contact id argument, read the way the HTTP API reads `contactId`: NULL or empty is
/// "contactId is required", anything but a hyphenated UUID (invalid UTF-8 included, the
/// `Error::not_unicode("contactId")` of every language) is "contactId must be a UUID".
///
/// # Safety
/// As for [`c_bytes`].
pub(crate) unsafe fn contact_arg(ptr: *const c_char) -> Result<ContactId, Error> {
    // SAFETY: forwarded contract.
    match unsafe { c_bytes(ptr) } {
        None => Err(ErrorKind::ContactIdRequired.into()),
        Some(bytes) => ContactId::parse_field(Some(utf8_arg(bytes, "contactId")?)),
    }
}

/// A token argument. NULL is a missing token. Bytes that are not UTF-8 are malformed, like any
/// other non-code: the token grammar never answers 400 (SPEC section 2).
///
/// # Safety
/// As for [`c_bytes`].
pub(crate) unsafe fn token_arg(ptr: *const c_char) -> Token {
    // SAFETY: forwarded contract.
    match unsafe { c_bytes(ptr) } {
        None => Token::Missing,
        Some(bytes) => std::str::from_utf8(bytes).map_or(Token::Malformed, Token::parse),
    }
}

/// The factor of disable and verify (SPEC section 8.1): an authenticator code (`token`) or a
/// recovery code (`recovery_code`), either NULL when not given. A token is given unless it is
/// missing (NULL, empty, only white space); a recovery code unless it is NULL, empty or only
/// white space. Both given is `RAMPART_STATUS_FACTOR_CONFLICT`; neither is a missing token. A
/// recovery code that is not UTF-8 is given and does not verify (never a 400), as a token.
///
/// # Safety
/// Both are NULL or NUL-terminated strings, as for [`c_bytes`].
pub(crate) unsafe fn factor_arg(token: *const c_char, recovery_code: *const c_char) -> Result<Factor, Error> {
    // SAFETY: forwarded contract.
    let token = unsafe { token_arg(token) };
    // SAFETY: as above.
    match unsafe { c_bytes(recovery_code) }.map(std::str::from_utf8) {
        None => Ok(Factor::Token(token)),
        Some(Ok(code)) => Factor::from_parts(Some(token), Some(code)),
        Some(Err(_)) if matches!(token, Token::Missing) => Ok(Factor::RecoveryCode(RecoveryCode::malformed())),
        Some(Err(_)) => Err(ErrorKind::FactorConflict.into()),
    }
}

/// An out-pointer, checked non-NULL before any work is done and written only on success.
pub(crate) struct Out<T>(NonNull<T>);

impl<T> Out<T> {
    /// A required out-pointer.
    pub(crate) fn new(ptr: *mut T, name: &str) -> Result<Self, Error> {
        NonNull::new(ptr).map(Self).ok_or_else(|| null_arg(name))
    }

    /// An optional out-pointer (NULL: the caller does not want this output).
    pub(crate) fn optional(ptr: *mut T) -> Option<Self> {
        NonNull::new(ptr).map(Self)
    }

    /// Store the output. The previous contents are not read or dropped.
    ///
    /// # Safety
    /// The pointer the caller passed is valid for a write of `T` and suitably aligned.
    pub(crate) unsafe fn write(self, value: T) {
        // SAFETY: non-NULL by construction; validity and alignment are the caller's contract.
        unsafe { self.0.as_ptr().write(value) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_a_status() {
        let status = status_call(|| panic!("boom"));
        assert_eq!(status, rampart_status::RAMPART_STATUS_PANIC);
        with_last_error((), |message, cause, _| {
            assert_eq!(message, "Internal server error");
            assert!(cause.contains("boom"), "{cause}");
        });
        assert_eq!(value_call(7, || panic!("again")), 7);
        assert_eq!(status_call(|| Ok(())), rampart_status::RAMPART_OK);
        with_last_error((), |message, cause, retry| assert!(message.is_empty() && cause.is_empty() && retry == 0));
    }

    #[test]
    fn errors_are_recorded_per_thread() {
        assert_eq!(status_call(|| Err(Error::throttled(60))), rampart_status::RAMPART_STATUS_THROTTLED);
        with_last_error((), |message, _, retry| {
            assert_eq!(message, "Too many failed 2FA attempts, try again in 60 seconds");
            assert_eq!(retry, 60);
        });
        std::thread::spawn(|| with_last_error((), |message, _, _| assert!(message.is_empty()))).join().unwrap();
    }
}
