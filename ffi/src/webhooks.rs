//! Standard Webhooks signatures (SPEC section 10), for a partner's backend that receives
//! Rampart's webhooks: pure functions, no service, time passed in.

use std::borrow::Cow;
use std::ffi::c_char;

use rampart_core::Error;
use rampart_core::webhooks::{self, VerifyError, WebhookSecret};

use crate::boundary::{Out, c_bytes, null_arg, status_call, str_arg, value_call};
use crate::status::rampart_status;
use crate::strings::library_string;

/// How far a message's `webhook-timestamp` may be from `now`, either way: 300 seconds.
pub const RAMPART_WEBHOOK_TOLERANCE_SECS: u64 = 300;

/// The outcome of `rampart_webhook_verify`. Only `RAMPART_WEBHOOK_VALID` means the message came
/// from the holder of the secret; drop every other message (answer it with a 4xx).
/// `rampart_webhook_verify_result_name` gives each a stable name, the `reason` the Python and
/// Node bindings report.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum rampart_webhook_verify_result {
    /// `"valid"`: a `v1` signature matches and the timestamp is within 300 s of now.
    RAMPART_WEBHOOK_VALID = 0,
    /// `"bad_timestamp"`: `webhook-timestamp` is not a whole number of seconds.
    RAMPART_WEBHOOK_BAD_TIMESTAMP = 1,
    /// `"too_old"`: `webhook-timestamp` is more than 300 s before now (perhaps a replay).
    RAMPART_WEBHOOK_TOO_OLD = 2,
    /// `"too_new"`: `webhook-timestamp` is more than 300 s after now.
    RAMPART_WEBHOOK_TOO_NEW = 3,
    /// `"no_match"`: no `v1` signature in `webhook-signature` matches this secret, id,
    /// timestamp and body.
    RAMPART_WEBHOOK_NO_MATCH = 4,
    /// `"missing_header"`: one of the three headers was not given (NULL).
    RAMPART_WEBHOOK_MISSING_HEADER = 5,
}

impl rampart_webhook_verify_result {
    fn of(outcome: Result<(), VerifyError>) -> Self {
        match outcome {
            Ok(()) => Self::RAMPART_WEBHOOK_VALID,
            Err(VerifyError::BadTimestamp) => Self::RAMPART_WEBHOOK_BAD_TIMESTAMP,
            Err(VerifyError::TooOld) => Self::RAMPART_WEBHOOK_TOO_OLD,
            Err(VerifyError::TooNew) => Self::RAMPART_WEBHOOK_TOO_NEW,
            Err(VerifyError::NoMatch) => Self::RAMPART_WEBHOOK_NO_MATCH,
        }
    }
}

/// # Safety
/// `ptr` is NULL or a NUL-terminated string.
unsafe fn secret_arg(ptr: *const c_char) -> Result<WebhookSecret, Error> {
    // SAFETY: forwarded contract.
    WebhookSecret::parse(unsafe { str_arg(ptr, "secret") }?)
}

/// The body as bytes: NULL is allowed only with length 0 (an empty body).
///
/// # Safety
/// `ptr` is NULL or valid for reads of `len` bytes.
unsafe fn body_arg<'a>(ptr: *const u8, len: usize) -> Result<&'a [u8], Error> {
    if ptr.is_null() {
        return if len == 0 { Ok(&[]) } else { Err(null_arg("body")) };
    }
    // SAFETY: non-NULL and readable for `len` bytes (caller's contract).
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Sign a webhook message as Rampart's server does (Standard Webhooks 1.0): the
/// `webhook-signature` header value `v1,<base64>`, the HMAC-SHA256 keyed with the secret's
/// bytes over `msg_id.timestamp.body`. For tests of a receiver, and for partners who relay
/// messages; a receiver calls `rampart_webhook_verify`.
///
/// `secret` is the endpoint's secret as Rampart shows it, `whsec_` followed by standard base64
/// (the prefix may be left out); `msg_id` the `webhook-id` header; `timestamp` the
/// `webhook-timestamp` (Unix seconds); `body` the exact bytes sent, `body_len` of them (NULL
/// with length 0 for an empty body).
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (NULL or non-UTF-8 `secret` or `msg_id`, "secret must
/// be whsec_ followed by base64", a NULL body with a length, NULL `out_signature`).
/// Ownership: inputs are read during the call only; on success `*out_signature` receives a
/// library string freed with `rampart_string_free`. Thread-safe.
///
/// # Safety
/// Strings are NULL or NUL-terminated; `body` NULL or readable for `body_len` bytes;
/// `out_signature` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_webhook_sign(
    secret: *const c_char,
    msg_id: *const c_char,
    timestamp: u64,
    body: *const u8,
    body_len: usize,
    out_signature: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: the contract above.
        let (secret, msg_id, body) =
            unsafe { (secret_arg(secret)?, str_arg(msg_id, "msg_id")?, body_arg(body, body_len)?) };
        let out = Out::new(out_signature, "out_signature")?;
        let signature = library_string(&webhooks::sign(&[&secret], msg_id, timestamp, body))?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(signature) };
        Ok(())
    })
}

/// A header value as text. Bytes that are not UTF-8 cannot be part of a valid message: they
/// become U+FFFD, so a timestamp holding them is `BAD_TIMESTAMP`, an id `NO_MATCH`, and a
/// signature list still matches on its other, valid entries.
///
/// # Safety
/// As for `c_bytes`.
unsafe fn header_arg<'a>(ptr: *const c_char) -> Option<Cow<'a, str>> {
    // SAFETY: forwarded contract.
    unsafe { c_bytes(ptr) }.map(String::from_utf8_lossy)
}

/// Verify a received webhook message (Standard Webhooks 1.0): any `v1` signature of the
/// space-separated `signature` list matches the one computed with `secret` over
/// `msg_id.timestamp.body` (compared in constant time), and `timestamp` is within
/// `RAMPART_WEBHOOK_TOLERANCE_SECS` (300 s) of `now` either way.
///
/// `secret` is as for `rampart_webhook_sign`; `msg_id`, `timestamp` and `signature` are the
/// `webhook-id`, `webhook-timestamp` and `webhook-signature` headers as received, each NULL
/// when the header is absent; `body` the raw body bytes as received (before any JSON parsing),
/// `body_len` of them (NULL with length 0 for an empty body). `now` is the current Unix time in
/// seconds, passed in like every time in this ABI (`(uint64_t)time(NULL)`; there is no
/// "0 means now": 0 is 1970, when every message is too new), so tests can fix it.
///
/// A message that does not verify is an outcome, not an error: `RAMPART_OK` with
/// `*out_result` saying why (`RAMPART_WEBHOOK_MISSING_HEADER` for a NULL header, checked
/// first; then `BAD_TIMESTAMP`, `TOO_OLD`, `TOO_NEW`, `NO_MATCH`). Only
/// `RAMPART_WEBHOOK_VALID` accepts the message; deduplicate accepted ones by `webhook-id`.
/// Header bytes that are not UTF-8 are the message's problem, not an error: such a timestamp is
/// `BAD_TIMESTAMP`, such an id `NO_MATCH`, and a signature list is still read for its valid
/// entries.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (NULL or non-UTF-8 `secret`, "secret must be whsec_
/// followed by base64", a NULL body with a length, NULL `out_result`): a problem of the
/// receiver's configuration, never of the message. Ownership: inputs are read during the call
/// only; `*out_result` is a plain value. Thread-safe.
///
/// # Safety
/// Strings are NULL or NUL-terminated; `body` NULL or readable for `body_len` bytes;
/// `out_result` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_webhook_verify(
    secret: *const c_char,
    msg_id: *const c_char,
    timestamp: *const c_char,
    signature: *const c_char,
    body: *const u8,
    body_len: usize,
    now: u64,
    out_result: *mut rampart_webhook_verify_result,
) -> rampart_status {
    status_call(|| {
        // SAFETY: the contract above.
        let (secret, body) = unsafe { (secret_arg(secret)?, body_arg(body, body_len)?) };
        let out = Out::new(out_result, "out_result")?;
        // SAFETY: the contract above.
        let headers = unsafe { (header_arg(msg_id), header_arg(timestamp), header_arg(signature)) };
        let result = match headers {
            (Some(id), Some(ts), Some(sig)) => {
                rampart_webhook_verify_result::of(webhooks::verify(&secret, &id, &ts, &sig, body, now))
            }
            _ => rampart_webhook_verify_result::RAMPART_WEBHOOK_MISSING_HEADER,
        };
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(result) };
        Ok(())
    })
}

/// The stable snake_case name of a verification result: `"valid"`, `"bad_timestamp"`,
/// `"too_old"`, `"too_new"`, `"no_match"`, `"missing_header"` (the `reason` of the Python and
/// Node bindings), or `"unknown"` for a number that is not a result.
///
/// Ownership: a static string, never NULL; do not free it. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rampart_webhook_verify_result_name(result: u32) -> *const c_char {
    use rampart_webhook_verify_result as R;
    value_call(c"unknown".as_ptr(), || {
        let name = match result {
            n if n == R::RAMPART_WEBHOOK_VALID as u32 => c"valid",
            n if n == R::RAMPART_WEBHOOK_BAD_TIMESTAMP as u32 => c"bad_timestamp",
            n if n == R::RAMPART_WEBHOOK_TOO_OLD as u32 => c"too_old",
            n if n == R::RAMPART_WEBHOOK_TOO_NEW as u32 => c"too_new",
            n if n == R::RAMPART_WEBHOOK_NO_MATCH as u32 => c"no_match",
            n if n == R::RAMPART_WEBHOOK_MISSING_HEADER as u32 => c"missing_header",
            _ => c"unknown",
        };
        name.as_ptr()
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::{CStr, CString};
    use std::ptr;

    use super::*;
    use crate::strings::rampart_string_free;

    const SECRET: &CStr = c"whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
    const ID: &CStr = c"msg_27UH4WbU6Z5A5EzD8u03UvzRbpk";
    const BODY: &[u8] = br#"{"email":"test@example.com","username":"test_user"}"#;
    const SIGNATURE: &str = "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=";
    const TS: u64 = 1_649_367_553;

    fn sign(secret: &CStr, body: &[u8]) -> (rampart_status, Option<String>) {
        let mut out = ptr::null_mut();
        // SAFETY: valid strings, body and out-pointer.
        let status =
            unsafe { rampart_webhook_sign(secret.as_ptr(), ID.as_ptr(), TS, body.as_ptr(), body.len(), &mut out) };
        if out.is_null() {
            return (status, None);
        }
        // SAFETY: a library string, freed once after reading.
        let text = unsafe { CStr::from_ptr(out) }.to_str().unwrap().to_owned();
        // SAFETY: as above.
        unsafe { rampart_string_free(out) };
        (status, Some(text))
    }

    fn verify(ts: Option<&CStr>, sig: Option<&CStr>, body: &[u8], now: u64) -> rampart_webhook_verify_result {
        let mut result = rampart_webhook_verify_result::RAMPART_WEBHOOK_MISSING_HEADER;
        let p = |s: Option<&CStr>| s.map_or(ptr::null(), CStr::as_ptr);
        // SAFETY: valid strings or NULL, body and out-pointer.
        let status = unsafe {
            rampart_webhook_verify(
                SECRET.as_ptr(),
                ID.as_ptr(),
                p(ts),
                p(sig),
                body.as_ptr(),
                body.len(),
                now,
                &mut result,
            )
        };
        assert_eq!(status, rampart_status::RAMPART_OK);
        result
    }

    #[test]
    fn signs_and_verifies_the_reference_vector() {
        assert_eq!(sign(SECRET, BODY), (rampart_status::RAMPART_OK, Some(SIGNATURE.to_owned())));
        let sig = CString::new(SIGNATURE).unwrap();
        let ts = CString::new(TS.to_string()).unwrap();
        use rampart_webhook_verify_result as R;
        assert_eq!(verify(Some(&ts), Some(&sig), BODY, TS + 300), R::RAMPART_WEBHOOK_VALID);
        assert_eq!(verify(Some(&ts), Some(&sig), BODY, TS + 301), R::RAMPART_WEBHOOK_TOO_OLD);
        assert_eq!(verify(Some(&ts), Some(&sig), BODY, TS - 301), R::RAMPART_WEBHOOK_TOO_NEW);
        assert_eq!(verify(Some(&ts), Some(&sig), b"{}", TS), R::RAMPART_WEBHOOK_NO_MATCH);
        assert_eq!(verify(Some(c"x"), Some(&sig), BODY, TS), R::RAMPART_WEBHOOK_BAD_TIMESTAMP);
        assert_eq!(verify(None, Some(&sig), BODY, TS), R::RAMPART_WEBHOOK_MISSING_HEADER);
        assert_eq!(verify(Some(&ts), None, BODY, TS), R::RAMPART_WEBHOOK_MISSING_HEADER);
        // Bytes that are not UTF-8 do not hide a valid signature beside them.
        let mixed = CString::new([b"v1,\xff\xfe ".as_slice(), SIGNATURE.as_bytes()].concat()).unwrap();
        assert_eq!(verify(Some(&ts), Some(&mixed), BODY, TS), R::RAMPART_WEBHOOK_VALID);
        let bad_ts = CString::new(b"16493\xff".to_vec()).unwrap();
        assert_eq!(verify(Some(&bad_ts), Some(&sig), BODY, TS), R::RAMPART_WEBHOOK_BAD_TIMESTAMP);
    }

    #[test]
    fn misuse_is_a_status() {
        assert_eq!(sign(c"whsec_!!", BODY), (rampart_status::RAMPART_STATUS_INVALID_INPUT, None));
        let mut out = ptr::null_mut();
        // SAFETY: NULL arguments are part of the contract.
        let status = unsafe { rampart_webhook_sign(ptr::null(), ID.as_ptr(), TS, ptr::null(), 0, &mut out) };
        assert_eq!((status, out.is_null()), (rampart_status::RAMPART_STATUS_INVALID_INPUT, true));
        // SAFETY: as above: a NULL body with a length.
        let status = unsafe { rampart_webhook_sign(SECRET.as_ptr(), ID.as_ptr(), TS, ptr::null(), 3, &mut out) };
        assert_eq!((status, out.is_null()), (rampart_status::RAMPART_STATUS_INVALID_INPUT, true));
        // SAFETY: as above: an empty body may be NULL.
        let status = unsafe { rampart_webhook_sign(SECRET.as_ptr(), ID.as_ptr(), TS, ptr::null(), 0, &mut out) };
        assert_eq!(status, rampart_status::RAMPART_OK);
        // SAFETY: a library string, freed once.
        unsafe { rampart_string_free(out) };
        // SAFETY: as above: a NULL out-pointer.
        let status = unsafe {
            rampart_webhook_verify(
                SECRET.as_ptr(),
                ID.as_ptr(),
                c"1".as_ptr(),
                c"v1,x".as_ptr(),
                BODY.as_ptr(),
                0,
                1,
                ptr::null_mut(),
            )
        };
        assert_eq!(status, rampart_status::RAMPART_STATUS_INVALID_INPUT);
    }

    #[test]
    fn tolerance_is_the_core_s() {
        assert_eq!(RAMPART_WEBHOOK_TOLERANCE_SECS, webhooks::TOLERANCE_SECS);
    }

    #[test]
    fn result_names() {
        let name = |n: u32| {
            // SAFETY: static NUL-terminated strings.
            unsafe { CStr::from_ptr(rampart_webhook_verify_result_name(n)) }.to_str().unwrap()
        };
        let names: Vec<&str> = (0..7).map(name).collect();
        assert_eq!(names, ["valid", "bad_timestamp", "too_old", "too_new", "no_match", "missing_header", "unknown"]);
        assert_eq!(name(u32::MAX), "unknown");
    }
}
