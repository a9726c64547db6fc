//! The pure TOTP helpers, for partners that keep their own storage. Synchronous: each call is
//! microseconds of CPU, less than a trip through the libuv pool would cost.

use napi::Env;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use rampart_core::Token;
use rampart_core::totp::{self, Secret};

use crate::convert::{Arg, MAX_SAFE, Read, time_arg};
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
fn secret_arg(secret: Option<Unknown<'_>>) -> Read<Secret> {
    match Arg::new("secret", secret).text_or_bytes()? {
        Either::A(text) => {
            // The common form (what `manual` gives) decodes straight to bytes; anything else
            // takes the tolerant parser. Same result, fewer copies.
            if let Ok(bytes) = data_encoding::BASE32_NOPAD.decode(text.as_bytes()) {
                return Secret::from_bytes(bytes);
            }
            Secret::from_base32(&text)
        }
        Either::B(bytes) => Secret::from_bytes(bytes),
    }
}

/// Options of `verify` and `verifyStep`.
// The shape of the options object for index.d.ts; `Verifying::read` reads it field by field.
#[allow(dead_code)]
#[napi(object)]
#[derive(Debug)]
pub struct VerifyOptions {
    /// Unix time in whole seconds (0 to 2^53 - 1); default now.
    pub unix_time: Option<f64>,
    /// Steps either side accepted: 0, 1 (default) or 2.
    pub window: Option<u32>,
}

/// `VerifyOptions` as read: the time and the window, each checked.
struct Verifying {
    unix_time: Option<u64>,
    window: Option<u8>,
}

impl Verifying {
    fn read(value: Option<Unknown<'_>>) -> Read<Self> {
        let Some(o) = Arg::new("options", value).opt_object()? else {
            return Ok(Self { unix_time: None, window: None });
        };
        let window = o.get("window")?.opt_whole(0, u64::from(totp::MAX_WINDOW), "must be 0, 1 or 2")?;
        // `window` is at most MAX_WINDOW, a u8.
        Ok(Self { unix_time: o.get("unixTime")?.opt_seconds()?, window: window.map(|w| w as u8) })
    }
}

/// A 20-byte secret from the OS CSPRNG with its manual key, Key URI and QR PNG data URI.
#[napi(ts_args_type = "issuer: string, account: string")]
pub fn new_secret(env: Env, issuer: Option<Unknown<'_>>, account: Option<Unknown<'_>>) -> Result<Enrolment> {
    let run = || -> Read<Enrolment> {
        let (issuer, account) = (Arg::new("issuer", issuer).string()?, Arg::new("account", account).string()?);
        let e = totp::new_secret(&issuer, &account)?;
        Ok(Enrolment {
            secret: e.manual.clone(),
            manual: e.manual.clone(),
            uri: e.uri.clone(),
            qr_code: e.qr_code.clone(),
        })
    };
    run().or_throw(&env)
}

/// The 6-digit code of a secret at a Unix time in seconds (default now).
#[napi(ts_args_type = "secret: string | Buffer, unixTime?: number | null")]
pub fn code_at(env: Env, secret: Option<Unknown<'_>>, unix_time: Option<Unknown<'_>>) -> Result<String> {
    let run = || -> Read<String> {
        let unix_time = time_arg(Arg::new("unixTime", unix_time).opt_seconds()?);
        Ok(totp::code_at(&secret_arg(secret)?, unix_time))
    };
    run().or_throw(&env)
}

/// The RFC 4226 HOTP value of a counter, zero-padded to 6 digits.
#[napi(ts_args_type = "secret: string | Buffer, counter: number")]
pub fn hotp(env: Env, secret: Option<Unknown<'_>>, counter: Option<Unknown<'_>>) -> Result<String> {
    let run = || -> Read<String> {
        let rule = "must be a whole number from 0 to 9007199254740991";
        let n = Arg::new("counter", counter).whole(0, MAX_SAFE, rule)?;
        Ok(totp::hotp(&secret_arg(secret)?, n))
    };
    run().or_throw(&env)
}

fn verify_step_inner(
    secret: Option<Unknown<'_>>,
    token: Option<Unknown<'_>>,
    options: Option<Unknown<'_>>,
) -> Read<Option<u64>> {
    let o = Verifying::read(options)?;
    let secret = secret_arg(secret)?;
    let token = Arg::new("token", token).token()?;
    Ok(totp::verify(&secret, token, time_arg(o.unix_time), o.window.unwrap_or(1)))
}

/// Whether `token` is the code of `secret` within `window` steps of `unixTime`. A wrong or
/// malformed code is `false`. No replay protection: use `verifyStep` for that.
#[napi(ts_args_type = "secret: string | Buffer, token: unknown, options?: VerifyOptions | null")]
pub fn verify(
    env: Env,
    secret: Option<Unknown<'_>>,
    token: Option<Unknown<'_>>,
    options: Option<Unknown<'_>>,
) -> Result<bool> {
    verify_step_inner(secret, token, options).map(|s| s.is_some()).or_throw(&env)
}

/// The time step the code matched, or null. Accept a code only if its step is greater than
/// the last one you accepted for that user (replay protection), then store it.
#[napi(ts_args_type = "secret: string | Buffer, token: unknown, options?: VerifyOptions | null")]
pub fn verify_step(
    env: Env,
    secret: Option<Unknown<'_>>,
    token: Option<Unknown<'_>>,
    options: Option<Unknown<'_>>,
) -> Result<Option<f64>> {
    verify_step_inner(secret, token, options).map(|s| s.map(|v| v as f64)).or_throw(&env)
}

/// The otpauth Key URI of a secret.
#[napi(ts_args_type = "issuer: string, account: string, secret: string | Buffer")]
pub fn key_uri(
    env: Env,
    issuer: Option<Unknown<'_>>,
    account: Option<Unknown<'_>>,
    secret: Option<Unknown<'_>>,
) -> Result<String> {
    let run = || -> Read<String> {
        let (issuer, account) = (Arg::new("issuer", issuer).string()?, Arg::new("account", account).string()?);
        Ok(totp::key_uri(&issuer, &account, &secret_arg(secret)?.to_base32()))
    };
    run().or_throw(&env)
}

/// Any text as a QR code, `data:image/png;base64,...`.
#[napi(ts_args_type = "text: string")]
pub fn qr_png_data_uri(env: Env, text: Option<Unknown<'_>>) -> Result<String> {
    let run = || -> Read<String> { totp::qr_png_data_uri(&Arg::new("text", text).string()?) };
    run().or_throw(&env)
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
pub fn parse_token(env: Env, token: Option<Unknown<'_>>) -> Result<ParsedToken> {
    Ok(match Arg::new("token", token).token().or_throw(&env)? {
        Token::Missing => ParsedToken { kind: "missing".into(), code: None },
        Token::Malformed => ParsedToken { kind: "malformed".into(), code: None },
        Token::Code(code) => ParsedToken { kind: "code".into(), code: Some(format!("{:06}", code.value())) },
    })
}
