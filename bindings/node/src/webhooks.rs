//! Standard Webhooks signatures (SPEC section 10) for a partner's backend: `webhookVerify` checks
//! a received message, `webhookSign` makes the `webhook-signature` value (tests of a receiver).
//! Synchronous, like the TOTP helpers: an HMAC over the body costs less than a trip through the
//! libuv pool.

use napi::Env;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use rampart_core::webhooks::{self, VerifyError, WebhookSecret};

use crate::convert::{Arg, MAX_SAFE, Read, SECONDS, time_arg};
use crate::errors::{Failure, Throw};

/// The three headers a message carries, in the order they are reported missing.
const HEADERS: [&str; 3] = ["webhook-id", "webhook-timestamp", "webhook-signature"];

/// `whsec_` + standard base64 (the prefix optional); anything else is `invalid_input`
/// "secret must be whsec_ followed by base64".
fn secret_arg(secret: Option<Unknown<'_>>) -> Read<WebhookSecret> {
    WebhookSecret::parse(&Arg::new("secret", secret).string()?)
}

/// Options of `webhookVerify`.
// The shape of the options object for index.d.ts; `webhook_verify` reads it field by field.
#[allow(dead_code)]
#[napi(object)]
#[derive(Debug)]
pub struct WebhookVerifyOptions {
    /// The current Unix time in whole seconds (0 to 2^53 - 1); default the system clock.
    pub now: Option<f64>,
}

/// The `webhook-signature` value of a message, `v1,<base64>`: HMAC-SHA256 keyed with the
/// secret's bytes over `msgId.timestamp.body`, as Rampart's server signs it. `timestamp` is
/// Unix seconds; `body` the exact bytes sent (a string is taken as its UTF-8 bytes).
#[napi(ts_args_type = "secret: string, msgId: string, timestamp: number, body: Buffer | string")]
pub fn webhook_sign(
    env: Env,
    secret: Option<Unknown<'_>>,
    msg_id: Option<Unknown<'_>>,
    timestamp: Option<Unknown<'_>>,
    body: Option<Unknown<'_>>,
) -> Result<String> {
    let run = || -> Read<String> {
        let secret = secret_arg(secret)?;
        let msg_id = Arg::new("msgId", msg_id).string()?;
        let timestamp = Arg::new("timestamp", timestamp).whole(0, MAX_SAFE, SECONDS)?;
        let body = Arg::new("body", body).body()?;
        Ok(webhooks::sign(&[&secret], &msg_id, timestamp, &body))
    };
    run().or_throw(&env)
}

fn reason(e: VerifyError) -> &'static str {
    match e {
        VerifyError::BadTimestamp => "bad_timestamp",
        VerifyError::TooOld => "too_old",
        VerifyError::TooNew => "too_new",
        VerifyError::NoMatch => "no_match",
    }
}

/// Check a received message with the endpoint's secret: the request's headers
/// (`webhook-id`, `webhook-timestamp`, `webhook-signature`; a plain object such as `req.headers`,
/// names in any case, or a Fetch API `Headers`) and its raw body, at `options.now` (Unix
/// seconds, default the system clock). Returns when a `v1` signature matches and the timestamp
/// is within 5 minutes of now; otherwise throws a `RampartError` with `code`
/// `'webhook_verification_failed'` (status 400) and `reason` `'missing_header'`,
/// `'bad_timestamp'`, `'too_old'`, `'too_new'` or `'no_match'`. A bad secret is `invalid_input`.
#[napi(
    ts_args_type = "secret: string, headers: WebhookHeaders, body: Buffer | string, options?: WebhookVerifyOptions | null"
)]
pub fn webhook_verify(
    env: Env,
    secret: Option<Unknown<'_>>,
    headers: Option<Unknown<'_>>,
    body: Option<Unknown<'_>>,
    options: Option<Unknown<'_>>,
) -> Result<()> {
    let run = || -> std::result::Result<(), Failure> {
        let secret = secret_arg(secret)?;
        let body = Arg::new("body", body).body()?;
        let now = match Arg::new("options", options).opt_object()? {
            Some(o) => o.get("now")?.opt_seconds()?,
            None => None,
        };
        match Arg::new("headers", headers).headers(HEADERS)? {
            [Some(id), Some(timestamp), Some(signature)] => {
                webhooks::verify(&secret, &id, &timestamp, &signature, &body, time_arg(now))
                    .map_err(|e| Failure::webhook(&e.to_string(), reason(e)))
            }
            found => {
                let missing = HEADERS[found.iter().position(Option::is_none).unwrap_or(0)];
                Err(Failure::webhook(&format!("{missing} is missing"), "missing_header"))
            }
        }
    };
    run().or_throw(&env)
}
