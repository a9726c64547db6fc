//! The pure TOTP helpers, for partners that keep secrets in their own storage: no service, no
//! store, time passed in.

use std::ffi::c_char;

use rampart_core::Error;
use rampart_core::token::Token;
use rampart_core::totp::{self, PreparedSecret, Secret};
use zeroize::Zeroizing;

use crate::boundary::{Out, non_null, status_call, str_arg, token_arg, value_call};
use crate::status::rampart_status;
use crate::strings::{Pending, secret_string};

/// How a token string reads under the token grammar (see `rampart_token_parse`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum rampart_token_kind {
    /// NULL, empty or only ASCII white space: "Google 2FA requires the token to be passed in".
    RAMPART_TOKEN_MISSING = 0,
    /// Not a 6-digit code: answered exactly like a wrong code, never passed to HMAC.
    RAMPART_TOKEN_MALFORMED = 1,
    /// A well-formed 6-digit code.
    RAMPART_TOKEN_CODE = 2,
}

/// # Safety
/// `ptr` is NULL or a NUL-terminated string.
unsafe fn secret_arg(ptr: *const c_char) -> Result<Secret, Error> {
    // SAFETY: forwarded contract.
    Secret::from_base32(unsafe { str_arg(ptr, "secret") }?)
}

/// Generate a new 20-byte TOTP secret from the OS CSPRNG, with everything a user needs to
/// enrol it. `issuer` and `account` are the names the authenticator app shows (UTF-8; escaped
/// in the Key URI, so any text is safe).
///
/// Errors: `RAMPART_STATUS_ISSUER_INVALID` (an issuer that is not UTF-8),
/// `RAMPART_STATUS_INVALID_INPUT` (NULL arguments, an account that is not UTF-8, an account
/// too long for a QR code), `RAMPART_STATUS_INTERNAL` (no randomness).
///
/// Ownership: on success `*out_secret` receives the secret in unpadded base32 (32 characters;
/// store it, sealed, in your storage), `*out_uri` (if not NULL) the otpauth Key URI and
/// `*out_qr_code` (if not NULL) the Key URI as `data:image/png;base64,...`; each is a library
/// string holding the secret, freed with `rampart_string_free`. Thread-safe.
///
/// # Safety
/// Strings are NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_totp_new_secret(
    issuer: *const c_char,
    account: *const c_char,
    out_secret: *mut *mut c_char,
    out_uri: *mut *mut c_char,
    out_qr_code: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: the contract above.
        let (issuer, account) = unsafe { (str_arg(issuer, "issuer")?, str_arg(account, "account")?) };
        let out_secret = Out::new(out_secret, "out_secret")?;
        let (out_uri, out_qr_code) = (Out::optional(out_uri), Out::optional(out_qr_code));
        let totp::Enrolment { manual, uri, qr_code, .. } = totp::new_secret(issuer, account)?;
        let mut pending = Pending::default();
        let secret = pending.keep(secret_string(manual))?;
        // Outputs the caller does not want are wiped here (the enrolment's strings are plain).
        let uri = match out_uri {
            Some(_) => Some(pending.keep(secret_string(uri))?),
            None => {
                drop(Zeroizing::new(uri));
                None
            }
        };
        let qr = match out_qr_code {
            Some(_) => Some(pending.keep(secret_string(qr_code))?),
            None => {
                drop(Zeroizing::new(qr_code));
                None
            }
        };
        pending.release();
        // SAFETY: checked writable out-pointers.
        unsafe {
            out_secret.write(secret);
            if let (Some(out), Some(uri)) = (out_uri, uri) {
                out.write(uri);
            }
            if let (Some(out), Some(qr)) = (out_qr_code, qr) {
                out.write(qr);
            }
        }
        Ok(())
    })
}

/// The 6-digit TOTP code of a secret at a Unix time (RFC 6238: HMAC-SHA1, 30-second steps).
/// `secret` is base32 (any case; spaces, hyphens and `=` padding ignored), 16 to 64 bytes once
/// decoded.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (NULL, not base32, wrong length). Ownership: on
/// success `*out_code` receives the zero-padded code, a library string freed with
/// `rampart_string_free`. Thread-safe.
///
/// # Safety
/// `secret` is NULL or NUL-terminated; `out_code` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_totp_code_at(
    secret: *const c_char,
    unix_time: u64,
    out_code: *mut *mut c_char,
) -> rampart_status {
    // SAFETY: the same contract; the code at a time is the HOTP value of its step.
    unsafe { rampart_totp_hotp(secret, totp::step_at(unix_time), out_code) }
}

/// The 6-digit HOTP value of a secret for a counter (RFC 4226); `rampart_totp_code_at` is this
/// with the counter `unix_time / 30`. Errors, ownership and threading as
/// `rampart_totp_code_at`.
///
/// Ownership: on success `*out_code` receives a library string freed with `rampart_string_free`.
///
/// # Safety
/// `secret` is NULL or NUL-terminated; `out_code` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_totp_hotp(
    secret: *const c_char,
    counter: u64,
    out_code: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: the contract above.
        let secret = unsafe { secret_arg(secret) }?;
        let out = Out::new(out_code, "out_code")?;
        let code = secret_string(totp::hotp(&secret, counter))?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(code) };
        Ok(())
    })
}

/// The window check and outputs both verify calls share: `*out_accepted`, and the matched step
/// (0 when refused) into `out_step` when it is not NULL.
///
/// # Safety
/// The out-pointers are NULL or writable.
unsafe fn verify_into(
    window: u8,
    out_accepted: *mut bool,
    out_step: *mut u64,
    verify: impl FnOnce(u8) -> Option<u64>,
) -> Result<(), Error> {
    if window > totp::MAX_WINDOW {
        return Err(Error::invalid_input("window", "must be 0, 1 or 2"));
    }
    let out_accepted = Out::new(out_accepted, "out_accepted")?;
    let out_step = Out::optional(out_step);
    let step = verify(window);
    // SAFETY: checked writable out-pointers.
    unsafe {
        out_accepted.write(step.is_some());
        if let Some(out) = out_step {
            out.write(step.unwrap_or(0));
        }
    }
    Ok(())
}

/// Verify a token against a secret at a Unix time, accepting the codes of `window` (0 to 2)
/// steps either side. Every candidate is computed and compared in constant time. A wrong,
/// malformed or missing token is an outcome, not an error: `RAMPART_OK` with `*out_accepted`
/// false. This helper keeps no state: to refuse replays, store the matched step and accept a
/// later code only when its step is greater (the service does this for you).
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (secret as for `rampart_totp_code_at`, window over 2,
/// NULL out-pointer). Ownership: on success `*out_accepted` is written, and `*out_step` (if
/// not NULL) receives the matched time step, or 0 when not accepted. Thread-safe.
///
/// # Safety
/// Strings are NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_totp_verify(
    secret: *const c_char,
    token: *const c_char,
    unix_time: u64,
    window: u8,
    out_accepted: *mut bool,
    out_step: *mut u64,
) -> rampart_status {
    status_call(|| {
        // SAFETY: the contract above.
        let (secret, token) = unsafe { (secret_arg(secret)?, token_arg(token)) };
        // SAFETY: the out-pointers obey the contract above.
        unsafe { verify_into(window, out_accepted, out_step, |w| totp::verify(&secret, token, unix_time, w)) }
    })
}

/// A TOTP secret decoded once, for callers that verify many codes against the same secret
/// (`rampart_totp_verify` decodes the base32 text on every call). Opaque and immutable: share
/// it between threads. Made by `rampart_totp_secret_from_base32`, freed (its key material
/// zeroed) by `rampart_totp_secret_free`.
pub struct rampart_totp_secret {
    /// The core's HMAC-SHA1 keyed once (inner and outer states kept, so a candidate costs two
    /// SHA-1 blocks instead of four). It is key material, wiped on free.
    prepared: PreparedSecret,
}

// The key material is never printed.
impl std::fmt::Debug for rampart_totp_secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("rampart_totp_secret(<redacted>)")
    }
}

/// Decode a base32 secret (as for `rampart_totp_code_at`) into a handle.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (NULL, not base32, wrong length, NULL out-pointer).
/// Ownership: the text is not kept; on success `*out_secret` receives a handle freed with
/// `rampart_totp_secret_free`. Thread-safe.
///
/// # Safety
/// `secret` is NULL or NUL-terminated; `out_secret` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_totp_secret_from_base32(
    secret: *const c_char,
    out_secret: *mut *mut rampart_totp_secret,
) -> rampart_status {
    status_call(|| {
        // SAFETY: the contract above.
        let secret = unsafe { secret_arg(secret) }?;
        let out = Out::new(out_secret, "out_secret")?;
        let prepared = PreparedSecret::new(&secret);
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(Box::into_raw(Box::new(rampart_totp_secret { prepared }))) };
        Ok(())
    })
}

/// Free a secret handle, zeroing the secret's bytes first. NULL is a no-op.
///
/// # Safety
/// `secret` is NULL or a live handle not used by another thread during the call, freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_totp_secret_free(secret: *mut rampart_totp_secret) {
    value_call((), || {
        if !secret.is_null() {
            // SAFETY: the caller's contract: a `Box::into_raw` handle, freed once.
            let mut handle = unsafe { Box::from_raw(secret) };
            // SAFETY: the HMAC state is plain bytes and integers (no pointers, no drop glue
            // that reads it), and all zeros is a valid state for the drop that follows.
            unsafe { zeroize::zeroize_flat_type(&mut handle.prepared) };
        }
    })
}

/// `rampart_totp_verify` with a decoded secret: the same outcome, errors and outputs, without
/// decoding base32, keying the HMAC or allocating. Errors: `RAMPART_STATUS_INVALID_INPUT` (NULL `secret` or
/// `out_accepted`, window over 2). Thread-safe; one handle may serve any number of threads.
///
/// Ownership: the handle and token are borrowed for the call; the outputs are plain values.
///
/// # Safety
/// `secret` is NULL or a live handle; `token` NULL or NUL-terminated; out-pointers NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_totp_verify_secret(
    secret: *const rampart_totp_secret,
    token: *const c_char,
    unix_time: u64,
    window: u8,
    out_accepted: *mut bool,
    out_step: *mut u64,
) -> rampart_status {
    status_call(|| {
        let secret = non_null(secret, "secret")?;
        // SAFETY: non-NULL, and the caller guarantees a live handle and a string or NULL.
        let (prepared, token) = unsafe { (&secret.as_ref().prepared, token_arg(token)) };
        // SAFETY: the out-pointers obey the contract above.
        unsafe { verify_into(window, out_accepted, out_step, |w| prepared.verify(token, unix_time, w)) }
    })
}

/// Read a token the way every 2FA call reads it: trim ASCII white space, allow one space or
/// hyphen between the third and fourth digit, then exactly six ASCII digits. Handy to tell a
/// missing token from a present one before calling the service.
///
/// Ownership: on success `*out_kind` is written, and `*out_code` (if not NULL) receives the
/// normalised 6-digit code as a library string (free with `rampart_string_free`) when the kind
/// is `RAMPART_TOKEN_CODE`, NULL otherwise. `token` may be NULL (missing). Thread-safe.
///
/// # Safety
/// `token` is NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_token_parse(
    token: *const c_char,
    out_kind: *mut rampart_token_kind,
    out_code: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: the contract above.
        let token = unsafe { token_arg(token) };
        let out_kind = Out::new(out_kind, "out_kind")?;
        let out_code = Out::optional(out_code);
        let (kind, code) = match token {
            Token::Missing => (rampart_token_kind::RAMPART_TOKEN_MISSING, None),
            Token::Malformed => (rampart_token_kind::RAMPART_TOKEN_MALFORMED, None),
            Token::Code(code) => (rampart_token_kind::RAMPART_TOKEN_CODE, Some(code)),
        };
        let code = match (&out_code, code) {
            (Some(_), Some(code)) => secret_string(format!("{:06}", code.value()))?,
            _ => std::ptr::null_mut(),
        };
        // SAFETY: checked writable out-pointers.
        unsafe {
            out_kind.write(kind);
            if let Some(out) = out_code {
                out.write(code);
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The prepared verify gives exactly the core's answer: secrets of every allowed length,
    /// times around zero and far out, every window, the codes of nearby steps and wrong ones.
    #[test]
    fn prepared_verify_agrees_with_the_core() {
        for len in [16usize, 20, 32, 64] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + len) as u8).collect();
            let secret = Secret::from_bytes(bytes).unwrap();
            let prepared = PreparedSecret::new(&secret);
            for time in [0u64, 29, 30, 59, 1_111_111_109, 1_700_000_000, u64::MAX - 10] {
                for offset in [-3i64, -2, -1, 0, 1, 2, 3] {
                    let at = time.saturating_add_signed(offset * 30);
                    let code = totp::code_at(&secret, at);
                    for token in [code.as_str(), "000000", "123456", "12345", ""] {
                        for window in 0..=3u8 {
                            let want = totp::verify(&secret, Token::parse(token), time, window);
                            assert_eq!(prepared.verify(Token::parse(token), time, window), want);
                        }
                    }
                }
            }
        }
    }
}
