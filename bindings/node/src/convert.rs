//! Arguments in. Every id, text, flag, number, secret and option object is taken as a raw JS
//! value and read here, so a wrong type is the core's 400 `invalid_input` naming the field
//! ("contactId must be a string"): a rejected Promise for `Service` methods, a thrown `Error`
//! for the synchronous helpers. The value itself is never echoed (it may be a secret).
//! Tokens follow SPEC section 2's grammar instead: a wrong type there is a wrong code.

use std::time::{SystemTime, UNIX_EPOCH};

use napi::bindgen_prelude::*;
use napi::{JsValue, ValueType};
use rampart_core::{ContactId, Environment, Error as CoreError, PartnerId, Token};

pub(crate) type Read<T> = std::result::Result<T, CoreError>;

/// One argument or option field: its JS name (for messages) and its value, if any.
#[derive(Clone, Copy)]
pub(crate) struct Arg<'a> {
    field: &'static str,
    value: Option<Unknown<'a>>,
}

impl std::fmt::Debug for Arg<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Arg({})", self.field)
    }
}

/// `value` as a `T`. Sound for the types used here (string, number, boolean, Buffer, JSON):
/// their napi conversions check the type themselves, and each caller checked it first anyway.
fn cast<T: FromNapiValue>(value: Unknown<'_>) -> napi::Result<T> {
    // SAFETY: `Unknown::cast` asks that the value's type match `T`; every caller has just
    // checked it with `get_type`/`is_buffer` (JSON takes any value).
    unsafe { value.cast::<T>() }
}

impl<'a> Arg<'a> {
    pub(crate) fn new(field: &'static str, value: Option<Unknown<'a>>) -> Self {
        Self { field, value }
    }

    fn invalid(&self, rule: &str) -> CoreError {
        CoreError::invalid_input(self.field, rule)
    }

    /// The value, unless it is `undefined` or `null`.
    fn given(&self) -> Read<Option<(Unknown<'a>, ValueType)>> {
        let Some(value) = self.value else { return Ok(None) };
        match value.get_type().map_err(|_| self.invalid("could not be read"))? {
            ValueType::Undefined | ValueType::Null => Ok(None),
            t => Ok(Some((value, t))),
        }
    }

    fn read<T: FromNapiValue>(&self, value: Unknown<'a>) -> Read<T> {
        cast(value).map_err(|_| self.invalid("could not be read"))
    }

    /// A string, or `None` for `undefined`/`null`.
    pub(crate) fn opt_string(&self) -> Read<Option<String>> {
        match self.given()? {
            None => Ok(None),
            Some((v, ValueType::String)) => self.read(v).map(Some),
            Some(_) => Err(self.invalid("must be a string")),
        }
    }

    pub(crate) fn string(&self) -> Read<String> {
        self.opt_string()?.ok_or_else(|| self.invalid("is required"))
    }

    pub(crate) fn opt_bool(&self) -> Read<Option<bool>> {
        match self.given()? {
            None => Ok(None),
            Some((v, ValueType::Boolean)) => self.read(v).map(Some),
            Some(_) => Err(self.invalid("must be a boolean")),
        }
    }

    pub(crate) fn bool(&self) -> Read<bool> {
        self.opt_bool()?.ok_or_else(|| self.invalid("is required"))
    }

    /// A finite number.
    pub(crate) fn opt_number(&self) -> Read<Option<f64>> {
        match self.given()? {
            None => Ok(None),
            Some((v, ValueType::Number)) => match self.read::<f64>(v)? {
                n if n.is_finite() => Ok(Some(n)),
                _ => Err(self.invalid("must be a finite number")),
            },
            Some(_) => Err(self.invalid("must be a number")),
        }
    }

    /// A whole number in `0..=max`; `rule` says so in the field's own words.
    pub(crate) fn opt_whole(&self, max: f64, rule: &str) -> Read<Option<u64>> {
        match self.opt_number().map_err(|_| self.invalid(rule))? {
            None => Ok(None),
            Some(n) if n.fract() == 0.0 && (0.0..=max).contains(&n) => Ok(Some(n as u64)),
            Some(_) => Err(self.invalid(rule)),
        }
    }

    /// A Buffer (or any `Uint8Array`).
    pub(crate) fn opt_bytes(&self) -> Read<Option<Vec<u8>>> {
        match self.given()? {
            None => Ok(None),
            Some((v, ValueType::Object)) if v.is_buffer().unwrap_or(false) => {
                self.read::<Buffer>(v).map(|b| Some(b.to_vec()))
            }
            Some(_) => Err(self.invalid("must be a Buffer")),
        }
    }

    /// Base32 text or raw bytes (a TOTP secret).
    pub(crate) fn text_or_bytes(&self) -> Read<Either<String, Vec<u8>>> {
        match self.given()? {
            None => Err(self.invalid("is required")),
            Some((v, ValueType::String)) => self.read(v).map(Either::A),
            Some((v, ValueType::Object)) if v.is_buffer().unwrap_or(false) => {
                self.read::<Buffer>(v).map(|b| Either::B(b.to_vec()))
            }
            Some(_) => Err(self.invalid("must be a base32 string or a Buffer")),
        }
    }

    /// Any JSON-shaped value (`undefined` reads as `null`).
    pub(crate) fn json(&self) -> Read<serde_json::Value> {
        match self.given()? {
            None => Ok(serde_json::Value::Null),
            Some((v, _)) => {
                cast(v).map_err(|_| self.invalid("must be plain JSON data (no functions, symbols or BigInts)"))
            }
        }
    }

    /// A plain object's fields, or `None` for `undefined`/`null`.
    pub(crate) fn opt_object(&self) -> Read<Option<Fields<'a>>> {
        match self.given()? {
            None => Ok(None),
            Some((v, ValueType::Object)) if !v.is_array().unwrap_or(true) => {
                let object = v.coerce_to_object().map_err(|_| self.invalid("could not be read"))?;
                Ok(Some(Fields { object }))
            }
            Some(_) => Err(self.invalid("must be an object")),
        }
    }

    /// SPEC section 2's token grammar for JS values: null/undefined is missing, a string is
    /// parsed, an integer number 0..=999999 is a code, everything else (booleans, fractions,
    /// objects) is malformed, i.e. a wrong code.
    pub(crate) fn token(&self) -> Read<Token> {
        Ok(match self.given()? {
            None => Token::Missing,
            Some((v, ValueType::String)) => Token::parse(&self.read::<String>(v)?),
            Some((v, ValueType::Number)) => {
                let n = self.read::<f64>(v)?;
                if n.is_finite() && n.fract() == 0.0 && (0.0..=999_999.0).contains(&n) {
                    Token::from_integer(n as i128)
                } else {
                    Token::Malformed
                }
            }
            Some(_) => Token::Malformed,
        })
    }
}

/// The fields of an options object.
pub(crate) struct Fields<'a> {
    object: Object<'a>,
}

impl<'a> Fields<'a> {
    pub(crate) fn get(&self, field: &'static str) -> Read<Arg<'a>> {
        let value =
            self.object.get::<Unknown<'a>>(field).map_err(|_| CoreError::invalid_input(field, "could not be read"))?;
        Ok(Arg::new(field, value))
    }
}

/// `contactId`: a string holding a hyphenated UUID ("contactId is required" when absent).
pub(crate) fn contact_arg(value: Option<Unknown<'_>>) -> Read<ContactId> {
    ContactId::parse_field(Arg::new("contactId", value).opt_string()?.as_deref())
}

pub(crate) fn partner_arg(value: Option<Unknown<'_>>) -> Read<PartnerId> {
    PartnerId::parse(&Arg::new("partnerId", value).string()?)
}

pub(crate) fn environment_arg(text: &str) -> Read<Environment> {
    text.parse::<Environment>()
}

/// Seconds since the epoch as a JS number: at most 2^53 - 1.
pub(crate) const MAX_SECONDS: f64 = 9_007_199_254_740_991.0;

/// A time in Unix seconds (fractions dropped), or now when not given.
pub(crate) fn time_arg(field: &'static str, given: Option<f64>) -> Read<u64> {
    match given {
        None => Ok(SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)),
        Some(t) if (0.0..=MAX_SECONDS).contains(&t) => Ok(t.floor() as u64),
        Some(_) => Err(CoreError::invalid_input(field, "must be a non-negative number of seconds")),
    }
}
