//! Statuses: their HTTP-style codes, messages and names, and the detail of the last failure.
//!
//! The enum itself lives in `status_enum.rs`, generated from `rampart_core::ErrorKind::ALL` so
//! the numbers, codes and messages can never drift from the core's taxonomy.

use std::ffi::{CStr, CString, c_char};
use std::sync::OnceLock;

use rampart_core::ErrorKind;

use crate::boundary::{value_call, with_last_error, with_last_error_code};
pub use crate::status_enum::rampart_status;

/// Numbers that are not a status.
const UNKNOWN: (u16, &str, &str) = (500, "unknown", "Unknown status");

/// (code, name, message) of a status number.
fn describe(status: u32) -> (u16, &'static str, &'static str) {
    match rampart_status::from_number(status) {
        Some(rampart_status::RAMPART_OK) => (200, "ok", "OK"),
        Some(rampart_status::RAMPART_STATUS_PANIC) => (500, "panic", ErrorKind::Internal.message()),
        Some(_) => ErrorKind::from_number(status).map_or(UNKNOWN, |k| (k.code(), k.name(), k.message())),
        None => UNKNOWN,
    }
}

/// NUL-terminated copies of the names and messages, made once and kept for the process's life.
struct CTexts {
    names: Vec<(u32, CString, CString)>,
    unknown: (CString, CString),
}

fn c_texts() -> &'static CTexts {
    static TEXTS: OnceLock<CTexts> = OnceLock::new();
    TEXTS.get_or_init(|| {
        // The fixed texts hold no NUL; an empty string would be the (unreachable) fallback.
        let c = |s: &str| CString::new(s).unwrap_or_default();
        let numbers = (0..=u32::from(u8::MAX)).filter(|n| rampart_status::from_number(*n).is_some());
        CTexts {
            names: numbers
                .map(|n| {
                    let (_, name, message) = describe(n);
                    (n, c(name), c(message))
                })
                .collect(),
            unknown: (c(UNKNOWN.1), c(UNKNOWN.2)),
        }
    })
}

fn c_text(status: u32, want_message: bool) -> *const c_char {
    let texts = c_texts();
    let (name, message) = texts
        .names
        .iter()
        .find(|(n, _, _)| *n == status)
        .map_or((&texts.unknown.0, &texts.unknown.1), |(_, name, message)| (name, message));
    if want_message { message.as_ptr() } else { name.as_ptr() }
}

/// The HTTP-style code of a status: 200 for `RAMPART_OK`, the error kind's code otherwise
/// (several statuses share one, for example both 401s of the 2FA lifecycle), 500 for
/// `RAMPART_STATUS_PANIC` and for numbers that are not a status.
///
/// `status` is a `rampart_status` value; any number is accepted. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rampart_status_code(status: u32) -> u16 {
    value_call(500, || describe(status).0)
}

/// The fixed message of a status, for example "Google 2FA failed" (`"OK"` for `RAMPART_OK`,
/// `"Unknown status"` for numbers that are not a status). The message is safe to show to an
/// end user; it never holds a secret or an internal detail.
///
/// Ownership: a static string, never NULL; do not free it. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rampart_status_message(status: u32) -> *const c_char {
    value_call(c"Internal server error".as_ptr(), || c_text(status, true))
}

/// The stable snake_case name of a status: the error kind's name (for example
/// `"token_failed"`), `"ok"`, `"panic"`, or `"unknown"` for numbers that are not a status.
///
/// Ownership: a static string, never NULL; do not free it. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rampart_status_name(status: u32) -> *const c_char {
    value_call(c"panic".as_ptr(), || c_text(status, false))
}

/// Copy `text` into `buf` as `snprintf` would; returns the full length.
///
/// # Safety
/// `buf` is NULL or valid for writes of `buf_len` bytes.
unsafe fn copy_out(text: &str, buf: *mut c_char, buf_len: usize) -> usize {
    if !buf.is_null() && buf_len > 0 {
        let n = text.len().min(buf_len - 1);
        // SAFETY: `buf` holds `buf_len` > n bytes (caller's contract) and cannot overlap
        // `text`, which the library owns.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), n);
        }
        // SAFETY: n < buf_len, so the terminator is inside the buffer.
        unsafe {
            buf.add(n).write(0);
        }
    }
    text.len()
}

/// The message of the last call on this thread that did not return `RAMPART_OK`, refined
/// where the status's fixed message is generic: the argument or field and the rule it broke
/// for `RAMPART_STATUS_INVALID_INPUT` ("contact_id must not be NULL", "name must be 1 to 200
/// characters ..."), the seconds to wait for `RAMPART_STATUS_THROTTLED`. Empty after a call
/// that returned `RAMPART_OK`. Safe to show to an end user.
///
/// Writes at most `buf_len` bytes, NUL included, truncating like `snprintf`; returns the
/// message's full length (without the NUL), so a return value >= `buf_len` means it was cut.
/// `buf` may be NULL when `buf_len` is 0. Reading the last error does not change it.
///
/// Threading: the last error is per thread, so it is meaningful right after a failing call on
/// the same thread, whatever other threads do with a shared handle.
///
/// Ownership: writes into the caller's buffer; nothing to free.
///
/// # Safety
/// `buf` is NULL or valid for writes of `buf_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_last_error_message(buf: *mut c_char, buf_len: usize) -> usize {
    value_call(0, || {
        // SAFETY: forwarded contract.
        with_last_error(0, |message, _, _| unsafe { copy_out(message, buf, buf_len) })
    })
}

/// The internal cause of the last failure on this thread, for logs only (storage or
/// configuration detail such as "unable to open database file"; never a secret, code or key).
/// Often empty. Same buffer rules and threading as `rampart_last_error_message`.
///
/// Ownership: writes into the caller's buffer; nothing to free.
///
/// # Safety
/// `buf` is NULL or valid for writes of `buf_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_last_error_cause(buf: *mut c_char, buf_len: usize) -> usize {
    value_call(0, || {
        // SAFETY: forwarded contract.
        with_last_error(0, |_, cause, _| unsafe { copy_out(cause, buf, buf_len) })
    })
}

/// The stable snake_case code of the last call on this thread that did not return
/// `RAMPART_OK`: the error kind's name for the 2FA statuses (`"token_failed"`, the same as
/// `rampart_status_name`), `"panic"`, or, for the widget, URL, signature, snippet, widget
/// configuration and address functions, the finer code of the core (`"signature_mismatch"`,
/// `"url_unknown_root"`, `"address_base58_checksum"`, `"config_root_not_https"`, ...), which
/// those report under a shared status such as `RAMPART_STATUS_INVALID_INPUT`. Empty after a
/// call that returned `RAMPART_OK`. Codes are stable; match on them, not on messages.
///
/// Same buffer rules and threading as `rampart_last_error_message`.
///
/// Ownership: writes into the caller's buffer; nothing to free.
///
/// # Safety
/// `buf` is NULL or valid for writes of `buf_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_last_error_code(buf: *mut c_char, buf_len: usize) -> usize {
    value_call(0, || {
        // SAFETY: forwarded contract.
        with_last_error_code(0, |code| unsafe { copy_out(code, buf, buf_len) })
    })
}

/// After `RAMPART_STATUS_THROTTLED` on this thread: the whole seconds to wait (the HTTP
/// `Retry-After` value). 0 after any other result. Thread-safe; per thread.
/// Ownership: returns a number; nothing to free.
///
#[unsafe(no_mangle)]
pub extern "C" fn rampart_last_retry_after() -> u64 {
    value_call(0, || with_last_error(0, |_, _, retry| retry))
}

/// The library's version, for example "0.1.0" (the header and library of one release match;
/// compare at start-up when linking dynamically).
///
/// Ownership: a static string, never NULL; do not free it. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rampart_version() -> *const c_char {
    const VERSION: &CStr = match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(v) => v,
        Err(_) => c"unknown",
    };
    VERSION.as_ptr()
}

#[cfg(test)]
mod tests {
    use std::fmt::Write;

    use super::*;

    /// The generated file, rendered from the core's list.
    fn render() -> String {
        let mut variants = String::new();
        let mut kinds = String::new();
        let mut numbers = String::new();
        for kind in ErrorKind::ALL {
            let n = kind as u32;
            let constant = format!("RAMPART_STATUS_{}", kind.name().to_ascii_uppercase());
            let _ = write!(
                variants,
                "    /// {} `{}`: \"{}\"\n    {constant} = {n},\n",
                kind.code(),
                kind.name(),
                kind.message()
            );
            let _ = writeln!(kinds, "            ErrorKind::{kind:?} => Self::{constant},");
            let _ = writeln!(numbers, "            {n} => Some(Self::{constant}),");
        }
        TEMPLATE.replace("{variants}", &variants).replace("{kinds}", &kinds).replace("{numbers}", &numbers)
    }

    const TEMPLATE: &str = r#"// @generated from rampart_core::ErrorKind::ALL: do not edit. Regenerate with
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
{variants}    /// 500 `panic`: a Rust panic was caught at the C boundary (a bug in Rampart, to report).
    /// Not an error kind of the core; its message is the same as `RAMPART_STATUS_INTERNAL`'s.
    RAMPART_STATUS_PANIC = 255,
}

impl rampart_status {
    /// The status of an error kind.
    pub const fn from_kind(kind: ErrorKind) -> Self {
        match kind {
{kinds}            _ => Self::RAMPART_STATUS_INTERNAL,
        }
    }

    /// The status with this number, if any.
    pub const fn from_number(n: u32) -> Option<Self> {
        match n {
            0 => Some(Self::RAMPART_OK),
{numbers}            255 => Some(Self::RAMPART_STATUS_PANIC),
            _ => None,
        }
    }
}
"#;

    #[test]
    fn enum_is_generated_from_core() {
        // Found at run time (cargo sets it): a shared target dir may serve clones at other paths.
        let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned());
        let path = format!("{manifest}/src/status_enum.rs");
        let want = render();
        if std::env::var_os("RAMPART_BLESS").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap();
        assert!(
            have == want,
            "ffi/src/status_enum.rs is out of date with rampart_core::ErrorKind: run \
             `RAMPART_BLESS=1 cargo test -p rampart-ffi --lib status`, then regenerate include/rampart.h"
        );
    }

    fn text(p: *const c_char) -> &'static str {
        // SAFETY: the functions under test return static NUL-terminated strings.
        unsafe { CStr::from_ptr(p) }.to_str().unwrap()
    }

    #[test]
    fn every_kind_has_a_status_with_the_same_number_code_and_message() {
        for kind in ErrorKind::ALL {
            let status = rampart_status::from_kind(kind);
            assert_eq!(status as u32, kind as u32, "{kind:?}");
            assert_eq!(rampart_status::from_number(kind as u32), Some(status));
            assert_eq!(rampart_status_code(status as u32), kind.code(), "{kind:?}");
            assert_eq!(text(rampart_status_message(status as u32)), kind.message(), "{kind:?}");
            assert_eq!(text(rampart_status_name(status as u32)), kind.name(), "{kind:?}");
        }
        let known = (0..=u32::from(u8::MAX)).filter(|n| rampart_status::from_number(*n).is_some()).count();
        assert_eq!(known, ErrorKind::ALL.len() + 2, "only OK and PANIC are not error kinds");
    }

    #[test]
    fn version() {
        assert_eq!(text(rampart_version()), env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn ok_panic_and_unknown() {
        assert_eq!(rampart_status_code(0), 200);
        assert_eq!(text(rampart_status_message(0)), "OK");
        assert_eq!(text(rampart_status_name(0)), "ok");
        assert_eq!(rampart_status_code(255), 500);
        assert_eq!(text(rampart_status_name(255)), "panic");
        assert_eq!(text(rampart_status_message(255)), "Internal server error");
        // The first number after the last kind is not a status (yet).
        let next = ErrorKind::ALL.iter().map(|k| *k as u32).max().unwrap_or(0) + 1;
        for n in [next, 254, 256, 1000, u32::MAX] {
            assert_eq!(rampart_status_code(n), 500);
            assert_eq!(text(rampart_status_message(n)), "Unknown status");
            assert_eq!(text(rampart_status_name(n)), "unknown");
        }
    }
}
