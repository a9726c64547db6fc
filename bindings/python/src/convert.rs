//! Arguments in (text, ids, tokens, numbers, times, JSON-shaped options) and JSON values out.
//!
//! Every argument is read here, so bad input is answered the same way everywhere (SPEC section
//! 5): a `str` that is not valid Unicode (a lone surrogate) is the field's own 400
//! (`Error::not_unicode`), never a `UnicodeEncodeError` and never U+FFFD; a number out of range,
//! negative or of the wrong type is `InvalidInputError` naming the argument and its range, never
//! an `OverflowError`. Tokens keep the token grammar: text that is not valid Unicode is a code
//! that does not verify.

use std::ops::RangeInclusive;
use std::time::{SystemTime, UNIX_EPOCH};

use pyo3::exceptions::{PyTypeError, PyUnicodeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PySequence, PyString, PyTuple};
use rampart_core::widget::origins::MAX_ORIGINS;
use rampart_core::{ContactId, Environment, Error, ErrorKind, Factor, PartnerId, RecoveryCode, Token};
use serde_json::{Map, Number, Value};

use crate::errors::Raise;

/// Nesting deeper than this is refused rather than risking the stack.
const MAX_DEPTH: usize = 32;

/// The rule of every Unix time or duration argument (an int, or a float rounded down).
const SECONDS_RULE: &str = "must be a number of seconds from 0 to 18446744073709551615";

fn type_error(field: &str, want: &str, obj: &Bound<'_, PyAny>) -> PyErr {
    let got = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".to_owned());
    PyTypeError::new_err(format!("{field} must be {want}, got {got}"))
}

/// The text of a `str` argument. Not a str is a `TypeError` (Python's habit for a wrong type);
/// a str that is not valid Unicode is `Error::not_unicode(field)`: `contactId`, `issuer`, `text`
/// and `url` answer their own 400, anything else "<field> must be valid Unicode text".
pub(crate) fn text_arg(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<String> {
    let s = obj.downcast::<PyString>().map_err(|_| type_error(field, "a str", obj))?;
    // `to_str` fails exactly when the str holds a lone surrogate (it cannot be UTF-8).
    s.to_str().map(str::to_owned).map_err(|_| Error::not_unicode(field)).or_raise()
}

/// A list (or tuple, any sequence but a str or bytes) of origins as text. Items are named as the
/// core names them (`widgetOrigins[1]`): an item that is not a str is a `TypeError`, a str that
/// is not valid Unicode that item's 400. A list longer than the core allows is not read: as many
/// empty items as one too many stand for it, so the core gives its own "at most 20" answer,
/// before any item's (as it does for a list of valid text).
pub(crate) fn origins_arg(obj: &Bound<'_, PyAny>, arg: &str) -> PyResult<Vec<String>> {
    const WANT: &str = "a list of str";
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
        return Err(type_error(arg, WANT, obj));
    }
    let seq = obj.downcast::<PySequence>().map_err(|_| type_error(arg, WANT, obj))?;
    let n = seq.len()?;
    if n > MAX_ORIGINS {
        return Ok(vec![String::new(); MAX_ORIGINS + 1]);
    }
    (0..n).map(|i| text_arg(&seq.get_item(i)?, &format!("widgetOrigins[{i}]"))).collect()
}

/// An optional `str` argument (None is absent).
pub(crate) fn opt_text_arg(obj: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<String>> {
    obj.filter(|o| !o.is_none()).map(|o| text_arg(o, field)).transpose()
}

/// A str, or anything whose `str()` is the id (`uuid.UUID`).
fn id_text(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Option<String>> {
    if obj.is_none() {
        return Ok(None);
    }
    if obj.is_instance_of::<PyString>() {
        return text_arg(obj, field).map(Some);
    }
    let uuid_type = obj.py().import("uuid")?.getattr("UUID")?;
    if obj.is_instance(&uuid_type)? {
        return Ok(Some(obj.str()?.to_cow()?.into_owned()));
    }
    Err(PyTypeError::new_err(format!("expected a str or uuid.UUID id, got {}", obj.get_type().name()?)))
}

/// A contact id: None and "" are "contactId is required", anything but a hyphenated UUID
/// (a str that is not valid Unicode included) "contactId must be a UUID".
pub(crate) fn contact_arg(obj: &Bound<'_, PyAny>) -> PyResult<ContactId> {
    let text = id_text(obj, "contactId")?;
    ContactId::parse_field(text.as_deref()).or_raise()
}

/// A contact filter: None is every contact; anything else must be a contact id, a str or
/// `uuid.UUID` ("" and a str that is not valid Unicode included: "contactId must be a UUID").
pub(crate) fn contact_filter_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<ContactId>> {
    let text = match obj {
        Some(o) => id_text(o, "contactId")?,
        None => None,
    };
    text.map(|t| ContactId::parse(&t)).transpose().or_raise()
}

pub(crate) fn partner_arg(obj: &Bound<'_, PyAny>) -> PyResult<PartnerId> {
    match id_text(obj, "partner_id")? {
        Some(text) => PartnerId::parse(&text).or_raise(),
        None => Err(Error::invalid_input("partner_id", "is required")).or_raise(),
    }
}

/// SPEC section 2's token grammar for Python values: None is missing, str is parsed, an int
/// (not a bool) 0..=999999 is a code, everything else is malformed (a wrong code).
pub(crate) fn token_arg(obj: &Bound<'_, PyAny>) -> Token {
    if obj.is_none() {
        return Token::Missing;
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        // A str that is not valid Unicode (lone surrogates) is malformed, like any other junk:
        // the token grammar never answers 400.
        return s.to_str().map_or(Token::Malformed, Token::parse);
    }
    if obj.is_instance_of::<PyBool>() {
        return Token::Malformed;
    }
    if obj.is_instance_of::<PyInt>() {
        return obj.extract::<i128>().map(Token::from_integer).unwrap_or(Token::Malformed);
    }
    Token::Malformed
}

/// The factor of disable and verify (SPEC section 8.1): `token` under the token grammar, or the
/// keyword `recovery_code`. A recovery code is given unless it is None or a str that is empty or
/// only white space; a value that is not a str, or a str that is not valid Unicode, is a code
/// that does not verify (as a JSON `recoveryCode` that is not a string). Both given is
/// `InvalidInputError` `factor_conflict`; neither is a missing token.
pub(crate) fn factor_arg(
    token: Option<&Bound<'_, PyAny>>,
    recovery_code: Option<&Bound<'_, PyAny>>,
) -> PyResult<Factor> {
    let token = token.map_or(Token::Missing, token_arg);
    let Some(code) = recovery_code.filter(|c| !c.is_none()) else { return Ok(Factor::Token(token)) };
    match code.downcast::<PyString>().ok().and_then(|s| s.to_str().ok()) {
        Some(text) => Factor::from_parts(Some(token), Some(text)).or_raise(),
        None if matches!(token, Token::Missing) => Ok(Factor::RecoveryCode(RecoveryCode::malformed())),
        None => Err(Error::new(ErrorKind::FactorConflict)).or_raise(),
    }
}

/// `"sandbox"` or `"production"`.
pub(crate) fn environment_arg(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Environment> {
    text_arg(obj, field)?.parse::<Environment>().or_raise()
}

/// An optional environment (None is absent).
pub(crate) fn opt_environment_arg(obj: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<Environment>> {
    obj.filter(|o| !o.is_none()).map(|o| environment_arg(o, field)).transpose()
}

/// A file system path (`str`, `bytes` or `os.PathLike`), encoded as Python encodes file names
/// (`os.fsencode`: a `\udcff` from `os.fsdecode` is the byte 0xff). A str that cannot be a file
/// name (a lone surrogate outside that escape range) is "<field> must be valid Unicode text".
/// (PyO3's own `PathBuf` conversion panics on such a str, so it is not used.)
pub(crate) fn path_arg(obj: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<std::path::PathBuf>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else { return Ok(None) };
    let os = obj.py().import("os")?;
    let fspath = os.call_method1("fspath", (obj,)).map_err(|_| type_error(field, "a str or os.PathLike", obj))?;
    let encoded = match os.call_method1("fsencode", (&fspath,)) {
        Ok(bytes) => bytes,
        Err(e) if e.is_instance_of::<PyUnicodeError>(obj.py()) => return Err(Error::not_unicode(field)).or_raise(),
        Err(e) => return Err(e),
    };
    let bytes = encoded.downcast::<PyBytes>().map_err(|_| type_error(field, "a str or os.PathLike", obj))?;
    path_from_bytes(bytes.as_bytes(), field).map(Some)
}

#[cfg(unix)]
fn path_from_bytes(bytes: &[u8], _field: &str) -> PyResult<std::path::PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    Ok(std::path::PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: &[u8], field: &str) -> PyResult<std::path::PathBuf> {
    std::str::from_utf8(bytes).map(std::path::PathBuf::from).map_err(|_| Error::not_unicode(field)).or_raise()
}

/// An integer argument in `range`. Anything else (out of range, negative, a bool, a float, a
/// str, an int too large for any range) is the argument's own 400: "<name> <rule>", where the
/// rule is given or "must be an integer from LO to HI".
pub(crate) fn int_arg<T: TryFrom<u64>>(
    obj: &Bound<'_, PyAny>,
    name: &str,
    range: RangeInclusive<u64>,
    rule: Option<&str>,
) -> PyResult<T> {
    let bad = || {
        let rule =
            rule.map_or_else(|| format!("must be an integer from {} to {}", range.start(), range.end()), str::to_owned);
        crate::errors::to_py(Error::invalid_input(name, &rule))
    };
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(bad());
    }
    let value = obj.extract::<u64>().map_err(|_| bad())?;
    if !range.contains(&value) {
        return Err(bad());
    }
    T::try_from(value).map_err(|_| bad())
}

/// The verification window: 0, 1 or 2 steps either side (the core's rule and message).
pub(crate) fn window_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<u8> {
    match obj {
        None => Ok(rampart_core::service::DEFAULT_WINDOW),
        Some(o) => int_arg(o, "window", 0..=u64::from(rampart_core::totp::MAX_WINDOW), Some("must be 0, 1 or 2")),
    }
}

/// A Unix time or a number of seconds: an int, or a float (`time.time()`) rounded down; not a
/// bool, not negative, not NaN, below 2^64.
pub(crate) fn seconds_arg(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<u64> {
    if let Ok(f) = obj.downcast::<PyFloat>() {
        let v = f.value();
        // 2^64 as f64 is exact; every finite float below it floors into u64.
        if v.is_finite() && (0.0..18_446_744_073_709_551_616.0).contains(&v) {
            return Ok(v.floor() as u64);
        }
        return Err(Error::invalid_input(name, SECONDS_RULE)).or_raise();
    }
    int_arg(obj, name, 0..=u64::MAX, Some(SECONDS_RULE))
}

/// Now, in Unix seconds, unless the caller gave a time.
pub(crate) fn time_arg(given: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<u64> {
    match given.filter(|o| !o.is_none()) {
        Some(t) => seconds_arg(t, name),
        None => Ok(SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)),
    }
}

/// A JSON-shaped argument (widget options, a widget configuration) as JSON: dict (str keys),
/// list, tuple, str, int, float, bool, None. `root` is the path of the value itself (`""` for
/// a whole options dict, `"coins"` for a configuration's coin list) and `arg` the argument's
/// name, used when the path is empty. A str that is not valid Unicode is a 400 naming where it
/// sits, as the C ABI and the Node binding name it: "receiveAddress.btc must be valid Unicode
/// text"; a key that is not valid Unicode names the dict it is in ("receiveAddress must be
/// valid Unicode text", or the argument for a top-level key).
pub(crate) fn to_json(obj: &Bound<'_, PyAny>, root: &str, arg: &str) -> PyResult<Value> {
    to_json_at(obj, 0, root, arg)
}

/// The child paths of [`to_json`]: `a.b` for a key, `a[1]` for an item.
fn key_path(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

fn item_path(path: &str, arg: &str, index: usize) -> String {
    format!("{}[{index}]", if path.is_empty() { arg } else { path })
}

fn to_json_at(obj: &Bound<'_, PyAny>, depth: usize, path: &str, arg: &str) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyTypeError::new_err("widget options are nested too deeply"));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.downcast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        let name = if path.is_empty() { arg } else { path };
        return s.to_str().map(|t| Value::String(t.to_owned())).map_err(|_| Error::not_unicode_at(name)).or_raise();
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(v) = obj.extract::<i64>() {
            return Ok(Value::from(v));
        }
        if let Ok(v) = obj.extract::<u64>() {
            return Ok(Value::from(v));
        }
        // Beyond 64 bits JSON readers lose precision too; the validator reports a number.
        let v = obj.extract::<f64>()?;
        return Ok(Number::from_f64(v).map_or(Value::Null, Value::Number));
    }
    if let Ok(f) = obj.downcast::<PyFloat>() {
        return Ok(Number::from_f64(f.value()).map_or(Value::Null, Value::Number));
    }
    if let Ok(d) = obj.downcast::<PyDict>() {
        let mut map = Map::new();
        for (k, v) in d.iter() {
            let key = k.downcast::<PyString>().map_err(|_| PyTypeError::new_err("option names must be str"))?;
            let key = key_text(key, path, arg)?;
            let value = to_json_at(&v, depth + 1, &key_path(path, &key), arg)?;
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (i, item) in obj.try_iter()?.enumerate() {
            items.push(to_json_at(&item?, depth + 1, &item_path(path, arg, i), arg)?);
        }
        return Ok(Value::Array(items));
    }
    Err(PyTypeError::new_err(format!(
        "widget option values must be str, bool, int, float, None, dict or list, got {}",
        obj.get_type().name()?
    )))
}

/// A dict key of a JSON-shaped argument (it cannot be shown when it is not valid Unicode, so
/// the error names the dict it is in, or the argument).
pub(crate) fn key_text(key: &Bound<'_, PyString>, path: &str, arg: &str) -> PyResult<String> {
    key.to_str()
        .map(str::to_owned)
        .map_err(|_| crate::errors::to_py(Error::not_unicode_at(if path.is_empty() { arg } else { path })))
}

/// JSON as Python: objects become dicts, arrays lists.
pub(crate) fn from_json<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(from_json(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => map_to_dict(py, map)?.into_any(),
    })
}

pub(crate) fn map_to_dict<'py>(py: Python<'py>, map: &Map<String, Value>) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (k, v) in map {
        dict.set_item(k, from_json(py, v)?)?;
    }
    Ok(dict)
}

/// Python's own `repr` of a string, so reprs read as Python (quotes and escapes).
pub(crate) fn py_repr(py: Python<'_>, text: &str) -> String {
    PyString::new(py, text).repr().and_then(|r| r.to_cow().map(|c| c.into_owned())).unwrap_or_default()
}
