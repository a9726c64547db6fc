//! Arguments in. Every id, text, flag, number, secret and option object is taken as a raw JS
//! value and read here, so a wrong value is a 400 naming the field: a rejected Promise for
//! `Service` methods, a thrown `RampartError` for the synchronous helpers. The value itself is
//! never echoed (it may be a secret).
//!
//! - Text is read as UTF-16 and must be valid: a lone surrogate (`'\ud800'`) is the field's own
//!   400 (`Error::not_unicode`), never a replacement character.
//! - Numbers are whole numbers in the argument's range; anything else (a fraction, NaN, a
//!   string, out of range) is `invalid_input` with the range in the message.
//! - Tokens follow SPEC section 2's grammar instead: a wrong type, or text that is not valid
//!   Unicode, is a code that does not verify. So do recovery codes (SPEC section 8.1).
//! - A factor (disable, verify) is a token as above, or an object `{ token }` or
//!   `{ recoveryCode }`: both given reject with `factor_conflict`, as over HTTP.

use std::time::{SystemTime, UNIX_EPOCH};

use napi::bindgen_prelude::*;
use napi::{JsValue, ValueType};
use rampart_core::widget::origins::MAX_ORIGINS;
use rampart_core::{ContactId, Environment, Error as CoreError, ErrorKind, Factor, PartnerId, RecoveryCode, Token};
use serde_json::{Map, Number, Value};

pub(crate) type Read<T> = std::result::Result<T, CoreError>;

/// Seconds since the epoch, counters and ages as JS numbers: at most 2^53 - 1.
pub(crate) const MAX_SAFE: u64 = 9_007_199_254_740_991;

/// The rule of every time and age argument.
pub(crate) const SECONDS: &str = "must be a whole number of seconds from 0 to 9007199254740991";

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

/// `value` as a `T`. Sound for the types used here (string, number, boolean, Buffer, function,
/// a class instance): their napi conversions check the type themselves (a class instance by
/// the class recorded when it was wrapped), and each caller checked it first anyway.
pub(crate) fn cast<T: FromNapiValue>(value: Unknown<'_>) -> napi::Result<T> {
    // SAFETY: `Unknown::cast` asks that the value's type match `T`; every caller has just
    // checked it with `get_type`/`is_buffer`/`instance_of`.
    unsafe { value.cast::<T>() }
}

/// A JS string as Rust text, or `None` when it is not valid UTF-16 (a lone surrogate). Read as
/// UTF-16: napi's UTF-8 read would silently put U+FFFD in its place.
fn text(value: Unknown<'_>) -> Option<String> {
    let units: Utf16String = cast(value).ok()?;
    String::from_utf16(&units).ok()
}

/// A JS string as Rust text, lone surrogates replaced by U+FFFD; `None` when it is not a string.
fn lossy(value: Unknown<'_>) -> Option<String> {
    let units: Utf16String = cast(value).ok()?;
    Some(String::from_utf16_lossy(&units))
}

/// One header's value (see [`Arg::headers`]).
fn header_value(value: Unknown<'_>, name: &str) -> Read<Option<String>> {
    let wrong = || CoreError::invalid_input(&format!("headers['{name}']"), "must be a string");
    match value.get_type().map_err(|_| wrong())? {
        ValueType::Undefined | ValueType::Null => Ok(None),
        ValueType::String => lossy(value).map(Some).ok_or_else(wrong),
        ValueType::Object if value.is_array().unwrap_or(false) => {
            let array = value.coerce_to_object().map_err(|_| wrong())?;
            if array.get_array_length().map_err(|_| wrong())? != 1 {
                return Err(wrong());
            }
            let item: Unknown<'_> = array.get_element(0).map_err(|_| wrong())?;
            match item.get_type() {
                Ok(ValueType::String) => lossy(item).map(Some).ok_or_else(wrong),
                _ => Err(wrong()),
            }
        }
        _ => Err(wrong()),
    }
}

/// The 400 for a text argument that is not valid Unicode: the field's own where it has one
/// (`contactId`, `issuer`, `widgetText`, `widgetButtonUrl`), else `invalid_input`.
pub(crate) fn not_unicode(field: &str) -> CoreError {
    match field {
        // The core reads these two as the widget settings' short names; here they are
        // `qrPngDataUri`'s text and `parseUrl`'s URL, which have no error of their own.
        "text" | "url" => CoreError::not_unicode_at(field),
        "widgetButtonUrl" => CoreError::not_unicode("widgetButtonURL"),
        _ => CoreError::not_unicode(field),
    }
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

    fn text(&self, value: Unknown<'a>) -> Read<String> {
        text(value).ok_or_else(|| not_unicode(self.field))
    }

    /// A string, or `None` for `undefined`/`null`.
    pub(crate) fn opt_string(&self) -> Read<Option<String>> {
        match self.given()? {
            None => Ok(None),
            Some((v, ValueType::String)) => self.text(v).map(Some),
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

    /// A whole number in `min..=max`, or `None` for `undefined`/`null`. Anything else (another
    /// type, NaN, a fraction, out of range) is `invalid_input` with `rule`, which states the
    /// range in the field's own words ("must be 0, 1 or 2").
    pub(crate) fn opt_whole(&self, min: u64, max: u64, rule: &str) -> Read<Option<u64>> {
        let n = match self.given()? {
            None => return Ok(None),
            Some((v, ValueType::Number)) => self.read::<f64>(v)?,
            Some(_) => return Err(self.invalid(rule)),
        };
        // Both bounds are at most 2^53 - 1, so they and `n` compare exactly as f64.
        if n.fract() == 0.0 && (min as f64..=max as f64).contains(&n) {
            Ok(Some(n as u64))
        } else {
            Err(self.invalid(rule))
        }
    }

    /// A whole number in `min..=max`, required.
    pub(crate) fn whole(&self, min: u64, max: u64, rule: &str) -> Read<u64> {
        self.opt_whole(min, max, rule)?.ok_or_else(|| self.invalid("is required"))
    }

    /// A time or age in whole seconds (0 to 2^53 - 1), or `None`.
    pub(crate) fn opt_seconds(&self) -> Read<Option<u64>> {
        self.opt_whole(0, MAX_SAFE, SECONDS)
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

    /// A webhook body: a Buffer's bytes, or a string's UTF-8 bytes (a string holding a lone
    /// surrogate is the field's 400: it cannot be the text that was signed).
    pub(crate) fn body(&self) -> Read<Vec<u8>> {
        match self.given()? {
            None => Err(self.invalid("is required")),
            Some((v, ValueType::String)) => self.text(v).map(String::into_bytes),
            Some((v, ValueType::Object)) if v.is_buffer().unwrap_or(false) => {
                self.read::<Buffer>(v).map(|b| b.to_vec())
            }
            Some(_) => Err(self.invalid("must be a Buffer or a string")),
        }
    }

    /// The headers `names` (lower case) of a received request, each `None` when absent: from a
    /// plain object (Node's `req.headers`, Express's; names matched in any case, the first of a
    /// name in key order) or from anything with a `get` method (a Fetch API `Headers`, which
    /// matches names itself). A value is a string, or an array holding one (a header sent once);
    /// `undefined` and `null` are absent; anything else is `invalid_input`
    /// "headers['webhook-id'] must be a string". Text holding a lone surrogate cannot be part of
    /// a valid message: it is read with U+FFFD in its place, so it fails verification.
    pub(crate) fn headers<const N: usize>(&self, names: [&str; N]) -> Read<[Option<String>; N]> {
        let unreadable = || self.invalid("could not be read");
        let object = match self.given()? {
            Some((v, ValueType::Object)) if !v.is_array().unwrap_or(true) => {
                v.coerce_to_object().map_err(|_| unreadable())?
            }
            None => return Err(self.invalid("is required")),
            Some(_) => return Err(self.invalid("must be an object of header names to values, or a Headers")),
        };
        let mut found: [Option<String>; N] = std::array::from_fn(|_| None);
        let get: Option<Unknown<'_>> = object.get("get").map_err(|_| unreadable())?;
        if let Some(get) = get.filter(|g| g.get_type().ok() == Some(ValueType::Function)) {
            let get: Function<'_, String, Unknown<'_>> = cast(get).map_err(|_| unreadable())?;
            for (slot, name) in found.iter_mut().zip(names) {
                let value = get.apply(object, name.to_owned()).map_err(|_| unreadable())?;
                *slot = header_value(value, name)?;
            }
            return Ok(found);
        }
        let keys = object
            .get_all_property_names(KeyCollectionMode::OwnOnly, KeyFilter::Enumerable, KeyConversion::NumbersToStrings)
            .map_err(|_| unreadable())?;
        for i in 0..keys.get_array_length().map_err(|_| unreadable())? {
            let key: Unknown<'_> = keys.get_element(i).map_err(|_| unreadable())?;
            let Some(key_text) = (key.get_type().ok() == Some(ValueType::String)).then(|| lossy(key)).flatten() else {
                continue; // a symbol key
            };
            let Some(n) = names.iter().position(|name| name.eq_ignore_ascii_case(&key_text)) else { continue };
            if found[n].is_some() {
                continue;
            }
            let value: Unknown<'_> = object.get_property_unchecked(key).map_err(|_| unreadable())?;
            found[n] = header_value(value, names[n])?;
        }
        Ok(found)
    }

    /// Base32 text or raw bytes (a TOTP secret).
    pub(crate) fn text_or_bytes(&self) -> Read<Either<String, Vec<u8>>> {
        match self.given()? {
            None => Err(self.invalid("is required")),
            Some((v, ValueType::String)) => self.text(v).map(Either::A),
            Some((v, ValueType::Object)) if v.is_buffer().unwrap_or(false) => {
                self.read::<Buffer>(v).map(|b| Either::B(b.to_vec()))
            }
            Some(_) => Err(self.invalid("must be a base32 string or a Buffer")),
        }
    }

    /// Any JSON-shaped value (`undefined` reads as `null`). Inner text is checked like every
    /// other string: one that is not valid Unicode is `invalid_input` naming its path, which
    /// starts with `base` (`""` for the widget options, whose paths stand alone:
    /// `receiveAddress.btc`).
    pub(crate) fn json(&self, base: &str) -> Read<Value> {
        match self.given()? {
            None => Ok(Value::Null),
            Some((v, _)) => {
                let mut reader = Json { root: self.field, nodes_left: MAX_JSON_NODES };
                Ok(reader.value(v, base, MAX_JSON_DEPTH)?.unwrap_or(Value::Null))
            }
        }
    }

    /// An array of origins as text (a partner's widget origins). Items are named as the core
    /// names them: `widgetOrigins[1] must be a string`, `... must be valid Unicode text`. An
    /// array longer than the core allows is not read: as many empty items as one too many stand
    /// for it, so the core gives its own "at most 20" answer, before any item's (as it does for
    /// an array of valid text).
    pub(crate) fn origins(&self) -> Read<Vec<String>> {
        let wrong = || self.invalid("must be an array of strings");
        let array = match self.given()? {
            Some((v, ValueType::Object)) if v.is_array().unwrap_or(false) => {
                v.coerce_to_object().map_err(|_| self.invalid("could not be read"))?
            }
            None => return Err(self.invalid("is required")),
            Some(_) => return Err(wrong()),
        };
        let len = array.get_array_length().map_err(|_| self.invalid("could not be read"))?;
        if len as usize > MAX_ORIGINS {
            return Ok(vec![String::new(); MAX_ORIGINS + 1]);
        }
        (0..len)
            .map(|i| {
                let field = format!("widgetOrigins[{i}]");
                let item: Unknown<'_> =
                    array.get_element(i).map_err(|_| CoreError::invalid_input(&field, "could not be read"))?;
                match item.get_type() {
                    Ok(ValueType::String) => text(item).ok_or_else(|| not_unicode(&field)),
                    _ => Err(CoreError::invalid_input(&field, "must be a string")),
                }
            })
            .collect()
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

    /// A credential (a widget session token, a publishable key): text holding a lone surrogate
    /// cannot be a valid one, so it gets the wrong one's answer (`kind`), never a 400 that
    /// would tell it apart.
    pub(crate) fn credential(&self, kind: ErrorKind) -> Read<String> {
        match self.given()? {
            None => Err(self.invalid("is required")),
            Some((v, ValueType::String)) => text(v).ok_or_else(|| CoreError::new(kind)),
            Some(_) => Err(self.invalid("must be a string")),
        }
    }

    /// A sign-in code: text holding a lone surrogate is not six digits, so a wrong code (`""`).
    pub(crate) fn sign_in_code(&self) -> Read<String> {
        match self.given()? {
            None => Err(self.invalid("is required")),
            Some((v, ValueType::String)) => Ok(text(v).unwrap_or_default()),
            Some(_) => Err(self.invalid("must be a string")),
        }
    }

    /// SPEC section 2's token grammar for JS values: null/undefined is missing, a string is
    /// parsed, an integer number 0..=999999 is a code, everything else (booleans, fractions,
    /// objects, text that is not valid Unicode) is malformed, i.e. a wrong code.
    pub(crate) fn token(&self) -> Read<Token> {
        Ok(match self.given()? {
            None => Token::Missing,
            Some((v, ValueType::String)) => text(v).map_or(Token::Malformed, |t| Token::parse(&t)),
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

impl Arg<'_> {
    /// A recovery code: `None` when not given (`undefined`, `null`, or text that is empty or only
    /// white space), else the text, or `None` inside `Some` for a value that cannot be a code (not
    /// a string, or text that is not valid Unicode), which does not verify.
    fn recovery_code(&self) -> Read<Option<Option<String>>> {
        Ok(match self.given()? {
            None => None,
            Some((v, ValueType::String)) => match text(v) {
                Some(t) if t.trim_matches(|c: char| c.is_ascii_whitespace()).is_empty() => None,
                Some(t) => Some(Some(t)),
                None => Some(None),
            },
            Some(_) => Some(None),
        })
    }

    /// The factor of disable and verify (SPEC section 8.1): an object with a `token` or a
    /// `recoveryCode` property is read as `{ token, recoveryCode }` (both given: `factor_conflict`;
    /// neither: a missing token); anything else is a token under [`Arg::token`]'s grammar, so
    /// `verify2fa(p, c, '123456')` reads as it always did and an object without those properties
    /// is still a code that does not verify.
    pub(crate) fn factor(&self) -> Read<Factor> {
        let object = match self.given()? {
            Some((v, ValueType::Object)) if !v.is_array().unwrap_or(true) && !v.is_buffer().unwrap_or(true) => {
                v.coerce_to_object().map_err(|_| self.invalid("could not be read"))?
            }
            _ => return Ok(Factor::Token(self.token()?)),
        };
        let has = |name: &str| object.has_named_property(name).unwrap_or(false);
        if !(has("token") || has("recoveryCode")) {
            return Ok(Factor::Token(Token::Malformed));
        }
        let fields = Fields { object };
        let token = fields.get("token")?.token()?;
        match fields.get("recoveryCode")?.recovery_code()? {
            None => Ok(Factor::Token(token)),
            Some(Some(code)) => Factor::from_parts(Some(token), Some(&code)),
            Some(None) if matches!(token, Token::Missing) => Ok(Factor::RecoveryCode(RecoveryCode::malformed())),
            Some(None) => Err(ErrorKind::FactorConflict.into()),
        }
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

/// As napi's own `serde_json` conversion: deep or cyclic values fail instead of overflowing
/// the stack, and shared sub-objects cannot multiply the work without bound.
const MAX_JSON_DEPTH: u32 = 128;
const MAX_JSON_NODES: usize = 1_000_000;

/// A JS value read as JSON, with its strings and keys read as UTF-16 and checked.
struct Json {
    root: &'static str,
    nodes_left: usize,
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

impl Json {
    fn not_json(&self) -> CoreError {
        CoreError::invalid_input(self.root, "must be plain JSON data (no functions, symbols or BigInts)")
    }

    fn not_unicode(&self, path: &str) -> CoreError {
        let name = if path.is_empty() { self.root } else { path };
        CoreError::not_unicode_at(name)
    }

    /// The value at `path`, or `None` for `undefined` (an object property left out, as
    /// `JSON.stringify` does).
    fn value(&mut self, v: Unknown<'_>, path: &str, depth: u32) -> Read<Option<Value>> {
        self.nodes_left = self.nodes_left.checked_sub(1).ok_or_else(|| self.not_json())?;
        let kind = v.get_type().map_err(|_| self.not_json())?;
        Ok(Some(match kind {
            ValueType::Undefined => return Ok(None),
            ValueType::Null => Value::Null,
            ValueType::Boolean => Value::Bool(cast(v).map_err(|_| self.not_json())?),
            ValueType::Number => {
                Value::Number(number(cast(v).map_err(|_| self.not_json())?).ok_or_else(|| self.not_json())?)
            }
            ValueType::String => Value::String(text(v).ok_or_else(|| self.not_unicode(path))?),
            ValueType::Object if depth > 0 => {
                let object = v.coerce_to_object().map_err(|_| self.not_json())?;
                if v.is_array().map_err(|_| self.not_json())? {
                    self.array(&object, path, depth - 1)?
                } else {
                    self.object(&object, path, depth - 1)?
                }
            }
            _ => return Err(self.not_json()),
        }))
    }

    fn array(&mut self, array: &Object<'_>, path: &str, depth: u32) -> Read<Value> {
        let len = array.get_array_length().map_err(|_| self.not_json())?;
        let mut items = Vec::with_capacity(len.min(1024) as usize);
        for i in 0..len {
            let item: Unknown<'_> = array.get_element(i).map_err(|_| self.not_json())?;
            let at = format!("{path}[{i}]");
            items.push(self.value(item, &at, depth)?.ok_or_else(|| self.not_json())?);
        }
        Ok(Value::Array(items))
    }

    /// Own enumerable string keys, in the object's order.
    fn object(&mut self, object: &Object<'_>, path: &str, depth: u32) -> Read<Value> {
        let names = object
            .get_all_property_names(KeyCollectionMode::OwnOnly, KeyFilter::Enumerable, KeyConversion::NumbersToStrings)
            .map_err(|_| self.not_json())?;
        let len = names.get_array_length().map_err(|_| self.not_json())?;
        let mut map = Map::new();
        for i in 0..len {
            let key: Unknown<'_> = names.get_element(i).map_err(|_| self.not_json())?;
            if key.get_type().map_err(|_| self.not_json())? != ValueType::String {
                continue; // a symbol key: not JSON data, left out as JSON.stringify does
            }
            let name = text(key).ok_or_else(|| self.not_unicode(path))?;
            let item: Unknown<'_> = object.get_property_unchecked(key).map_err(|_| self.not_json())?;
            let at = child(path, &name);
            if let Some(item) = self.value(item, &at, depth)? {
                map.insert(name, item);
            }
        }
        Ok(Value::Object(map))
    }
}

/// A JS number as JSON, as napi converts it: whole numbers that fit 32 bits as integers,
/// others as floats; NaN and the infinities are not JSON.
fn number(n: f64) -> Option<Number> {
    if n.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&n) {
        Some(Number::from(n as u32))
    } else if n.fract() == 0.0 && (f64::from(i32::MIN)..0.0).contains(&n) {
        Some(Number::from(n as i32))
    } else {
        Number::from_f64(n)
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

/// A time in Unix seconds, or now when not given.
pub(crate) fn time_arg(given: Option<u64>) -> u64 {
    given.unwrap_or_else(|| SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()))
}
