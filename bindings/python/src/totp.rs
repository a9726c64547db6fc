//! The pure TOTP helpers, for partners that keep their own storage. No store, no GIL release
//! needed: each call is a few microseconds of CPU (QR encoding excepted, which releases it).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use rampart_core::Token;
use rampart_core::totp::{self, Secret};

use crate::convert::{int_arg, text_arg, time_arg, token_arg, window_arg};
use crate::errors::Raise;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Enrolment>()?;
    m.add_function(wrap_pyfunction!(new_secret, m)?)?;
    m.add_function(wrap_pyfunction!(code_at, m)?)?;
    m.add_function(wrap_pyfunction!(hotp, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(verify_step, m)?)?;
    m.add_function(wrap_pyfunction!(key_uri, m)?)?;
    m.add_function(wrap_pyfunction!(qr_png_data_uri, m)?)?;
    m.add_function(wrap_pyfunction!(parse_token, m)?)?;
    Ok(())
}

/// A fresh secret and what the user needs to enrol it. Keep `secret` (base32) on your side;
/// show `qr_code` or `manual`. The repr hides all of it.
#[pyclass(frozen, module = "rampart")]
pub(crate) struct Enrolment {
    #[pyo3(get)]
    secret: String,
    #[pyo3(get)]
    manual: String,
    #[pyo3(get)]
    uri: String,
    #[pyo3(get)]
    qr_code: String,
}

#[pymethods]
impl Enrolment {
    fn __repr__(&self) -> &'static str {
        "Enrolment(<redacted>)"
    }
}

/// A secret given as base32 text (any case, spaces and padding ignored) or raw bytes.
fn secret_arg(obj: &Bound<'_, PyAny>) -> PyResult<Secret> {
    if let Ok(s) = obj.downcast::<PyString>() {
        // Borrowed from the UTF-8 copy Python keeps, rather than copied again into a String; a
        // str that is not valid Unicode is "secret must be valid Unicode text".
        let text = s.to_str().map_err(|_| rampart_core::Error::not_unicode("secret")).or_raise()?;
        // The common form (what `manual` gives: upper case, unpadded) decodes straight to
        // bytes; anything else takes the tolerant parser. Same result, fewer copies.
        if let Ok(bytes) = data_encoding::BASE32_NOPAD.decode(text.as_bytes()) {
            return Secret::from_bytes(bytes).or_raise();
        }
        return Secret::from_base32(text).or_raise();
    }
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Secret::from_bytes(b.as_bytes().to_vec()).or_raise();
    }
    Err(PyTypeError::new_err("secret must be base32 str or bytes"))
}

/// A 20-byte secret from the OS CSPRNG with its manual key, Key URI and QR PNG data URI.
#[pyfunction]
fn new_secret(py: Python<'_>, issuer: &Bound<'_, PyAny>, account: &Bound<'_, PyAny>) -> PyResult<Enrolment> {
    let (issuer, account) = (text_arg(issuer, "issuer")?, text_arg(account, "account")?);
    let e = py.allow_threads(move || totp::new_secret(&issuer, &account)).or_raise()?;
    Ok(Enrolment { secret: e.manual.clone(), manual: e.manual.clone(), uri: e.uri.clone(), qr_code: e.qr_code.clone() })
}

/// The 6-digit code of a secret at a Unix time (default now).
#[pyfunction]
#[pyo3(signature = (secret, unix_time = None))]
fn code_at(secret: &Bound<'_, PyAny>, unix_time: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
    let secret = secret_arg(secret)?;
    Ok(totp::code_at(&secret, time_arg(unix_time, "unix_time")?))
}

/// The RFC 4226 HOTP value of a counter, zero-padded to 6 digits.
#[pyfunction]
fn hotp(secret: &Bound<'_, PyAny>, counter: &Bound<'_, PyAny>) -> PyResult<String> {
    let secret = secret_arg(secret)?;
    Ok(totp::hotp(&secret, int_arg(counter, "counter", 0..=u64::MAX, None)?))
}

/// Whether `token` is the code of `secret` within `window` steps of `unix_time` (default now).
/// No replay protection: use `verify_step` and keep the last accepted step for that.
#[pyfunction]
#[pyo3(signature = (secret, token, unix_time = None, window = None), text_signature = "(secret, token, unix_time=None, window=1)")]
fn verify(
    secret: &Bound<'_, PyAny>,
    token: &Bound<'_, PyAny>,
    unix_time: Option<&Bound<'_, PyAny>>,
    window: Option<&Bound<'_, PyAny>>,
) -> PyResult<bool> {
    verify_step(secret, token, unix_time, window).map(|s| s.is_some())
}

/// The time step the code matched, or None. Accept a code only if its step is greater than
/// the last one you accepted for that user (replay protection), then store it.
#[pyfunction]
#[pyo3(signature = (secret, token, unix_time = None, window = None), text_signature = "(secret, token, unix_time=None, window=1)")]
fn verify_step(
    secret: &Bound<'_, PyAny>,
    token: &Bound<'_, PyAny>,
    unix_time: Option<&Bound<'_, PyAny>>,
    window: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<u64>> {
    let window = window_arg(window)?;
    let secret = secret_arg(secret)?;
    let unix_time = time_arg(unix_time, "unix_time")?;
    Ok(totp::verify(&secret, token_arg(token), unix_time, window))
}

/// The otpauth Key URI of a base32 secret.
#[pyfunction]
fn key_uri(issuer: &Bound<'_, PyAny>, account: &Bound<'_, PyAny>, secret: &Bound<'_, PyAny>) -> PyResult<String> {
    let (issuer, account) = (text_arg(issuer, "issuer")?, text_arg(account, "account")?);
    Ok(totp::key_uri(&issuer, &account, &secret_arg(secret)?.to_base32()))
}

/// Any text as a QR code, `data:image/png;base64,...`.
#[pyfunction]
fn qr_png_data_uri(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<String> {
    // Any text: not the widget text, so a lone surrogate is a plain "text must be valid Unicode text".
    let s = text.downcast::<PyString>().map_err(|_| PyTypeError::new_err("text must be a str"))?;
    let text = s.to_str().map(str::to_owned).map_err(|_| rampart_core::Error::not_unicode_at("text")).or_raise()?;
    py.allow_threads(move || totp::qr_png_data_uri(&text)).or_raise()
}

/// How a token value reads under SPEC section 2's grammar: `("code", "012345")`,
/// `("missing", None)` or `("malformed", None)`.
#[pyfunction]
fn parse_token(token: &Bound<'_, PyAny>) -> (&'static str, Option<String>) {
    match token_arg(token) {
        Token::Missing => ("missing", None),
        Token::Malformed => ("malformed", None),
        Token::Code(code) => ("code", Some(format!("{:06}", code.value()))),
    }
}
