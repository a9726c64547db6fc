//! Arguments in: ids, tokens and times, read the way SPEC section 2 reads JSON.

use std::time::{SystemTime, UNIX_EPOCH};

use napi::bindgen_prelude::*;
use napi::{JsValue, ValueType};
use rampart_core::{ContactId, Environment, Error as CoreError, PartnerId, Token};

pub(crate) fn contact_arg(text: Option<&str>) -> std::result::Result<ContactId, CoreError> {
    ContactId::parse_field(text)
}

pub(crate) fn partner_arg(text: &str) -> std::result::Result<PartnerId, CoreError> {
    PartnerId::parse(text)
}

pub(crate) fn environment_arg(text: &str) -> std::result::Result<Environment, CoreError> {
    text.parse::<Environment>()
}

/// SPEC section 2's token grammar for JS values: null/undefined is missing, a string is parsed,
/// an integer number 0..=999999 is a code, everything else (booleans, fractions, objects) is
/// malformed, i.e. a wrong code.
pub(crate) fn token_arg(value: Option<Unknown<'_>>) -> Result<Token> {
    let Some(value) = value else { return Ok(Token::Missing) };
    Ok(match value.get_type()? {
        ValueType::Undefined | ValueType::Null => Token::Missing,
        ValueType::String => Token::parse(&value.coerce_to_string()?.into_utf8()?.into_owned()?),
        ValueType::Number => {
            let n = value.coerce_to_number()?.get_double()?;
            if n.is_finite() && n.fract() == 0.0 && (0.0..=999_999.0).contains(&n) {
                Token::from_integer(n as i128)
            } else {
                Token::Malformed
            }
        }
        _ => Token::Malformed,
    })
}

/// Now, in Unix seconds, unless the caller gave a time.
pub(crate) fn time_arg(given: Option<f64>) -> Result<u64> {
    match given {
        None => Ok(SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)),
        Some(t) if (0.0..=9_007_199_254_740_991.0).contains(&t) => Ok(t.floor() as u64),
        Some(_) => Err(napi::Error::new(Status::InvalidArg, "unixTime must be a non-negative number of seconds")),
    }
}
