//! The pure TOTP helpers, for partners that keep their own storage. Synchronous: each call is
//! microseconds of CPU, less than a trip through the libuv pool would cost.

use napi::Env;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use rampart_core::totp::{self, Secret};
use rampart_core::{Error as CoreError, Token};

use crate::convert::{time_arg, token_arg};
use crate::errors::Throw;

/// A fresh secret and what the user needs to enrol it. Keep `secret` (base32) on your side;
/// show `qrCode` (an `<img src>`) or `manual`.
#[napi(object)]
pub struct Enrolment {
    pub secret: String,
    pub manual: String,
    pub uri: String,
    pub qr_code: String,
}

crate::service::opaque_debug!(Enrolment);

/// A secret given as base32 text (any case, spaces and padding ignored) or raw bytes.
fn secret_arg(env: &Env, secret: Either<String, Buffer>) -> Result<Secret> {
    match secret {
        Either::A(text) => {
            // The common form (what `manual` gives) decodes straight to bytes; anything else
            // takes the tolerant parser. Same result, fewer copies.
            if let Ok(bytes) = data_encoding::BASE32_NOPAD.decode(text.as_bytes()) {
                return Secret::from_bytes(bytes).or_throw(env);
            }
            Secret::from_base32(&text).or_throw(env)
        }
        Either::B(bytes) => Secret::from_bytes(bytes.to_vec()).or_throw(env),
    }
}

fn window_arg(env: &Env, window: Option<u32>) -> Result<u8> {
    match window {
        None => Ok(1),
        Some(w) if w <= u32::from(totp::MAX_WINDOW) => Ok(w as u8),
        Some(_) => Err(CoreError::invalid_input("window", "must be 0, 1 or 2")).or_throw(env),
    }
}

/// Options of `verify` and `verifyStep`.
#[napi(object)]
#[derive(Debug)]
pub struct VerifyOptions {
    /// Unix time in seconds; default now.
    pub unix_time: Option<f64>,
    /// Steps either side accepted: 0, 1 (default) or 2.
    pub window: Option<u32>,
}

/// A 20-byte secret from the OS CSPRNG with its manual key, Key URI and QR PNG data URI.
#[napi]
pub fn new_secret(env: Env, issuer: String, account: String) -> Result<Enrolment> {
    let e = totp::new_secret(&issuer, &account).or_throw(&env)?;
    Ok(Enrolment { secret: e.manual.clone(), manual: e.manual.clone(), uri: e.uri.clone(), qr_code: e.qr_code.clone() })
}

/// The 6-digit code of a secret at a Unix time in seconds (default now).
#[napi]
pub fn code_at(env: Env, secret: Either<String, Buffer>, unix_time: Option<f64>) -> Result<String> {
    Ok(totp::code_at(&secret_arg(&env, secret)?, time_arg(unix_time)?))
}

/// The RFC 4226 HOTP value of a counter, zero-padded to 6 digits.
#[napi]
pub fn hotp(env: Env, secret: Either<String, Buffer>, counter: i64) -> Result<String> {
    let counter = u64::try_from(counter).map_err(|_| napi::Error::new(Status::InvalidArg, "counter must be >= 0"))?;
    Ok(totp::hotp(&secret_arg(&env, secret)?, counter))
}

fn verify_step_inner(
    env: &Env,
    secret: Either<String, Buffer>,
    token: Option<Unknown<'_>>,
    options: Option<VerifyOptions>,
) -> Result<Option<u64>> {
    let (unix_time, window) = options.map_or((None, None), |o| (o.unix_time, o.window));
    let window = window_arg(env, window)?;
    let secret = secret_arg(env, secret)?;
    Ok(totp::verify(&secret, token_arg(token)?, time_arg(unix_time)?, window))
}

/// Whether `token` is the code of `secret` within `window` steps of `unixTime`. A wrong or
/// malformed code is `false`. No replay protection: use `verifyStep` for that.
#[napi(ts_args_type = "secret: string | Buffer, token: unknown, options?: VerifyOptions")]
pub fn verify(
    env: Env,
    secret: Either<String, Buffer>,
    token: Option<Unknown<'_>>,
    options: Option<VerifyOptions>,
) -> Result<bool> {
    verify_step_inner(&env, secret, token, options).map(|s| s.is_some())
}

/// The time step the code matched, or null. Accept a code only if its step is greater than
/// the last one you accepted for that user (replay protection), then store it.
#[napi(ts_args_type = "secret: string | Buffer, token: unknown, options?: VerifyOptions")]
pub fn verify_step(
    env: Env,
    secret: Either<String, Buffer>,
    token: Option<Unknown<'_>>,
    options: Option<VerifyOptions>,
) -> Result<Option<f64>> {
    verify_step_inner(&env, secret, token, options).map(|s| s.map(|v| v as f64))
}

/// The otpauth Key URI of a secret.
#[napi]
pub fn key_uri(env: Env, issuer: String, account: String, secret: Either<String, Buffer>) -> Result<String> {
    Ok(totp::key_uri(&issuer, &account, &secret_arg(&env, secret)?.to_base32()))
}

/// Any text as a QR code, `data:image/png;base64,...`.
#[napi]
pub fn qr_png_data_uri(env: Env, text: String) -> Result<String> {
    totp::qr_png_data_uri(&text).or_throw(&env)
}

/// How a token reads under SPEC section 2's grammar.
#[napi(object)]
#[derive(Debug)]
pub struct ParsedToken {
    /// `"code"`, `"missing"` or `"malformed"`.
    pub kind: String,
    /// The six digits when `kind` is `"code"`.
    pub code: Option<String>,
}

/// How a token value reads: `{kind: "code", code: "012345"}`, `{kind: "missing"}` or
/// `{kind: "malformed"}`.
#[napi(ts_args_type = "token: unknown")]
pub fn parse_token(token: Option<Unknown<'_>>) -> Result<ParsedToken> {
    Ok(match token_arg(token)? {
        Token::Missing => ParsedToken { kind: "missing".into(), code: None },
        Token::Malformed => ParsedToken { kind: "malformed".into(), code: None },
        Token::Code(code) => ParsedToken { kind: "code".into(), code: Some(format!("{:06}", code.value())) },
    })
}
