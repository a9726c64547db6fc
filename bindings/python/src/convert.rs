//! Arguments in (ids, tokens, times, JSON-shaped options) and JSON values out.

use std::time::{SystemTime, UNIX_EPOCH};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use rampart_core::{ContactId, Environment, Error, PartnerId, Token};
use serde_json::{Map, Number, Value};

use crate::errors::Raise;

/// Nesting deeper than this is refused rather than risking the stack.
const MAX_DEPTH: usize = 32;

/// A str, or anything whose `str()` is the id (`uuid.UUID`).
fn id_text(obj: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if obj.is_none() {
        return Ok(None);
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(Some(s.to_cow().map(|c| c.into_owned()).unwrap_or_default()));
    }
    let uuid_type = obj.py().import("uuid")?.getattr("UUID")?;
    if obj.is_instance(&uuid_type)? {
        return Ok(Some(obj.str()?.to_cow()?.into_owned()));
    }
    Err(PyTypeError::new_err(format!("expected a str or uuid.UUID id, got {}", obj.get_type().name()?)))
}

pub(crate) fn contact_arg(obj: &Bound<'_, PyAny>) -> PyResult<ContactId> {
    let text = id_text(obj)?;
    ContactId::parse_field(text.as_deref()).or_raise()
}

pub(crate) fn partner_arg(obj: &Bound<'_, PyAny>) -> PyResult<PartnerId> {
    match id_text(obj)? {
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
    if obj.is_instance_of::<PyString>() {
        // A str that is not valid UTF-8 (lone surrogates) is malformed, like any other junk.
        return obj.extract::<PyBackedStr>().map(|s| Token::parse(&s)).unwrap_or(Token::Malformed);
    }
    if obj.is_instance_of::<PyBool>() {
        return Token::Malformed;
    }
    if obj.is_instance_of::<PyInt>() {
        return obj.extract::<i128>().map(Token::from_integer).unwrap_or(Token::Malformed);
    }
    Token::Malformed
}

pub(crate) fn environment_arg(text: &str) -> PyResult<Environment> {
    text.parse::<Environment>().or_raise()
}

/// Now, in Unix seconds, unless the caller gave a time.
pub(crate) fn time_arg(given: Option<u64>) -> u64 {
    given.unwrap_or_else(|| SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0))
}

/// A Python value as JSON: dict (str keys), list, tuple, str, int, float, bool, None.
pub(crate) fn to_json(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    to_json_at(obj, 0)
}

fn to_json_at(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
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
        return Ok(Value::String(s.to_cow()?.into_owned()));
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
            map.insert(key.to_cow()?.into_owned(), to_json_at(&v, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for item in obj.try_iter()? {
            items.push(to_json_at(&item?, depth + 1)?);
        }
        return Ok(Value::Array(items));
    }
    Err(PyTypeError::new_err(format!(
        "widget option values must be str, bool, int, float, None, dict or list, got {}",
        obj.get_type().name()?
    )))
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
