//! Standard Webhooks signatures (SPEC section 10) for a partner's backend: `webhook_verify` checks
//! a received message, `webhook_sign` makes the `webhook-signature` value (tests of a receiver).
//! Pure and synchronous: an HMAC over the body, microseconds for a webhook-sized message.

use std::borrow::Cow;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString};
use rampart_core::webhooks::{self, VerifyError, WebhookSecret};

use crate::convert::{seconds_arg, text_arg, time_arg};
use crate::errors::Raise;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(webhook_sign, m)?)?;
    m.add_function(wrap_pyfunction!(webhook_verify, m)?)?;
    Ok(())
}

/// The three headers a message carries, in the order they are reported missing.
const HEADERS: [&str; 3] = ["webhook-id", "webhook-timestamp", "webhook-signature"];

/// `whsec_` + standard base64 (the prefix optional); anything else is `InvalidInputError`
/// "secret must be whsec_ followed by base64".
fn secret_arg(obj: &Bound<'_, PyAny>) -> PyResult<WebhookSecret> {
    WebhookSecret::parse(&text_arg(obj, "secret")?).or_raise()
}

/// The raw body: `bytes` or `bytearray` as they are, a `str` as its UTF-8 bytes.
fn body_arg<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(b) = obj.downcast::<PyByteArray>() {
        return Ok(Cow::Owned(b.to_vec()));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        let text = s.to_str().map_err(|_| rampart_core::Error::not_unicode("body")).or_raise()?;
        return Ok(Cow::Borrowed(text.as_bytes()));
    }
    let got = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".to_owned());
    Err(PyTypeError::new_err(format!("body must be bytes, bytearray or str, got {got}")))
}

/// The `webhook-signature` value of a message, `v1,<base64>`: HMAC-SHA256 keyed with the
/// secret's bytes over `msg_id.timestamp.body`, as Rampart's server signs it.
#[pyfunction]
fn webhook_sign(
    secret: &Bound<'_, PyAny>,
    msg_id: &Bound<'_, PyAny>,
    timestamp: &Bound<'_, PyAny>,
    body: &Bound<'_, PyAny>,
) -> PyResult<String> {
    let secret = secret_arg(secret)?;
    let msg_id = text_arg(msg_id, "msg_id")?;
    let timestamp = seconds_arg(timestamp, "timestamp")?;
    Ok(webhooks::sign(&[&secret], &msg_id, timestamp, &body_arg(body)?))
}

/// `rampart.WebhookVerificationError(message, reason=...)`.
fn verification_error(py: Python<'_>, message: &str, reason: &str) -> PyErr {
    let made = py.import("rampart._errors").and_then(|m| m.getattr("WebhookVerificationError")).and_then(|cls| {
        let kwargs = PyDict::new(py);
        kwargs.set_item("reason", reason)?;
        cls.call((message,), Some(&kwargs))
    });
    match made {
        Ok(instance) => PyErr::from_value(instance),
        Err(e) => e,
    }
}

fn reason(e: VerifyError) -> &'static str {
    match e {
        VerifyError::BadTimestamp => "bad_timestamp",
        VerifyError::TooOld => "too_old",
        VerifyError::TooNew => "too_new",
        VerifyError::NoMatch => "no_match",
    }
}

/// The three headers from any object with `items()` (a dict, `Mapping`, Starlette's, Django's or
/// Werkzeug's headers), their names in any case; `None` where one is absent. A value that is not
/// valid Unicode (a lone surrogate) cannot be part of a valid message: it is read with U+FFFD in
/// its place, so it fails as a bad timestamp or a signature that does not match.
fn read_headers(headers: &Bound<'_, PyAny>) -> PyResult<[Option<String>; 3]> {
    const WANT: &str = "headers must be a mapping of header names (str) to values (str)";
    let items = headers.call_method0("items").map_err(|_| PyTypeError::new_err(WANT))?;
    let mut found: [Option<String>; 3] = Default::default();
    for item in items.try_iter().map_err(|_| PyTypeError::new_err(WANT))? {
        let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
            item?.extract().map_err(|_| PyTypeError::new_err(WANT))?;
        let key = key.downcast::<PyString>().map_err(|_| PyTypeError::new_err(WANT))?.to_string_lossy();
        let Some(i) = HEADERS.iter().position(|h| h.eq_ignore_ascii_case(&key)) else { continue };
        if found[i].is_some() {
            continue; // the first of the same name, in the mapping's order
        }
        let value = value
            .downcast::<PyString>()
            .map_err(|_| PyTypeError::new_err(format!("headers['{}'] must be a str", HEADERS[i])))?;
        found[i] = Some(value.to_string_lossy().into_owned());
    }
    Ok(found)
}

/// Check a received message: the endpoint's secret, the request's headers (`webhook-id`,
/// `webhook-timestamp`, `webhook-signature`, in any case) and its raw body, at `now` (Unix
/// seconds, default the system clock). Returns None when a `v1` signature matches and the
/// timestamp is within 5 minutes of now; raises `WebhookVerificationError` (`.reason`) otherwise.
#[pyfunction]
#[pyo3(signature = (secret, headers, body, *, now = None))]
fn webhook_verify(
    py: Python<'_>,
    secret: &Bound<'_, PyAny>,
    headers: &Bound<'_, PyAny>,
    body: &Bound<'_, PyAny>,
    now: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let secret = secret_arg(secret)?;
    let body = body_arg(body)?;
    let now = time_arg(now, "now")?;
    match read_headers(headers)? {
        [Some(id), Some(timestamp), Some(signature)] => {
            webhooks::verify(&secret, &id, &timestamp, &signature, &body, now)
                .map_err(|e| verification_error(py, &e.to_string(), reason(e)))
        }
        found => {
            let missing = HEADERS[found.iter().position(Option::is_none).unwrap_or(0)];
            Err(verification_error(py, &format!("{missing} is missing"), "missing_header"))
        }
    }
}
