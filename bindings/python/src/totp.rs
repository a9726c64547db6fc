//! The pure TOTP helpers, for partners that keep their own storage. No store, no GIL release
//! needed: each call is a few microseconds of CPU (QR encoding excepted, which releases it).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBytes, PyString};
use rampart_core::totp::{self, Secret};
use rampart_core::{Error, Token};

use crate::convert::{time_arg, token_arg};
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
    if obj.is_instance_of::<PyString>() {
        // Borrowed from a UTF-8 copy Python keeps, rather than copied again into a String.
        let text: PyBackedStr = obj.extract()?;
        // The common form (what `manual` gives: upper case, unpadded) decodes straight to
        // bytes; anything else takes the tolerant parser. Same result, fewer copies.
        if let Ok(bytes) = data_encoding::BASE32_NOPAD.decode(text.as_bytes()) {
            return Secret::from_bytes(bytes).or_raise();
        }
        return Secret::from_base32(&text).or_raise();
    }
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Secret::from_bytes(b.as_bytes().to_vec()).or_raise();
    }
    Err(PyTypeError::new_err("secret must be base32 str or bytes"))
}

/// A 20-byte secret from the OS CSPRNG with its manual key, Key URI and QR PNG data URI.
#[pyfunction]
fn new_secret(py: Python<'_>, issuer: String, account: String) -> PyResult<Enrolment> {
    let e = py.allow_threads(move || totp::new_secret(&issuer, &account)).or_raise()?;
    Ok(Enrolment { secret: e.manual.clone(), manual: e.manual.clone(), uri: e.uri.clone(), qr_code: e.qr_code.clone() })
}

/// The 6-digit code of a secret at a Unix time (default now).
#[pyfunction]
#[pyo3(signature = (secret, unix_time = None))]
fn code_at(secret: &Bound<'_, PyAny>, unix_time: Option<u64>) -> PyResult<String> {
    Ok(totp::code_at(&secret_arg(secret)?, time_arg(unix_time)))
}

/// The RFC 4226 HOTP value of a counter, zero-padded to 6 digits.
#[pyfunction]
fn hotp(secret: &Bound<'_, PyAny>, counter: u64) -> PyResult<String> {
    Ok(totp::hotp(&secret_arg(secret)?, counter))
}

fn window_arg(window: u8) -> PyResult<u8> {
    if window > totp::MAX_WINDOW {
        return Err(Error::invalid_input("window", "must be 0, 1 or 2")).or_raise();
    }
    Ok(window)
}

/// Whether `token` is the code of `secret` within `window` steps of `unix_time` (default now).
/// No replay protection: use `verify_step` and keep the last accepted step for that.
#[pyfunction]
#[pyo3(signature = (secret, token, unix_time = None, window = 1))]
fn verify(secret: &Bound<'_, PyAny>, token: &Bound<'_, PyAny>, unix_time: Option<u64>, window: u8) -> PyResult<bool> {
    verify_step(secret, token, unix_time, window).map(|s| s.is_some())
}

/// The time step the code matched, or None. Accept a code only if its step is greater than
/// the last one you accepted for that user (replay protection), then store it.
#[pyfunction]
#[pyo3(signature = (secret, token, unix_time = None, window = 1))]
fn verify_step(
    secret: &Bound<'_, PyAny>,
    token: &Bound<'_, PyAny>,
    unix_time: Option<u64>,
    window: u8,
) -> PyResult<Option<u64>> {
    let window = window_arg(window)?;
    let secret = secret_arg(secret)?;
    Ok(totp::verify(&secret, token_arg(token), time_arg(unix_time), window))
}

/// The otpauth Key URI of a base32 secret.
#[pyfunction]
fn key_uri(issuer: &str, account: &str, secret: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(totp::key_uri(issuer, account, &secret_arg(secret)?.to_base32()))
}

/// Any text as a QR code, `data:image/png;base64,...`.
#[pyfunction]
fn qr_png_data_uri(py: Python<'_>, text: String) -> PyResult<String> {
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
