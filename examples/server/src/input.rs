//! Reading what the caller sent: a JSON object body under the size limit, query parameters and
//! typed fields. Every failure is a 400 naming the field (or a 413), never a 500.
//!
//! One reading of every body (SPEC section 3): a body or a query that gives one field twice is
//! refused (`duplicate field: <name>`), so a proxy that reads the first value and this server
//! can never disagree. Values JSON allows but Rust cannot hold are kept apart rather than
//! failing the whole body: a number out of range (`1e400`) and a string escape that is not
//! Unicode (a lone surrogate `"\ud800"`). A `token` of either kind is a code that does not
//! verify (401), like any other malformed token; a text field of the second kind is the
//! field's own 400 ([`rampart_core::Error::not_unicode`]), never a replacement character.

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header;
use rampart_core::{ContactId, Error, ErrorKind};
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::ApiError;

/// The largest accepted request body (64 KiB).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The deepest nesting of objects and arrays read in a body.
pub const MAX_DEPTH: usize = 32;

/// A value JSON allows but that cannot be held as one: kept by its path, never guessed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreadable {
    /// A number out of the range of a 64-bit float or integer (`1e400`).
    NumberOutOfRange,
    /// A string with an escape that is not Unicode (a lone surrogate, `"\ud800"`).
    NotUnicode,
}

impl Unreadable {
    /// The 400 for this value at `path` when the caller needed it.
    fn error(self, path: &str) -> Error {
        match self {
            Self::NumberOutOfRange => Error::invalid_input(path, "is a number out of range"),
            Self::NotUnicode => Error::not_unicode(path),
        }
    }
}

/// A request body that is a JSON object, at most [`MAX_BODY_BYTES`], read once: no field given
/// twice at any depth, nesting at most [`MAX_DEPTH`].
///
/// The content type is not checked: `curl -d` sends a form type by default, and the body's
/// shape is what matters. `Debug` shows only the field names (the token is a secret).
pub struct JsonObject {
    fields: Map<String, Value>,
    /// Paths (`token`, `receiveAddress.btc`, `tokens[2]`) of values that could not be held;
    /// they stand as `null` in `fields`.
    unreadable: BTreeMap<String, Unreadable>,
}

impl fmt::Debug for JsonObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("JsonObject").field(&self.fields.keys().collect::<Vec<_>>()).finish()
    }
}

impl<S: Send + Sync> FromRequest<S> for JsonObject {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        // Answer before reading when the declared length is already over the limit.
        let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
            return Err(ErrorKind::PayloadTooLarge.into());
        }
        // A body that stalls must not hold its connection for good (the head has its own
        // timeout in `connections`).
        let limit =
            req.extensions().get::<crate::connections::BodyTimeout>().map_or(crate::connections::BODY_TIMEOUT, |t| t.0);
        let read = tokio::time::timeout(limit, Bytes::from_request(req, state)).await.map_err(|_| {
            ApiError::invalid("body", &format!("was not received within {} seconds", limit.as_secs().max(1)))
        })?;
        let bytes = read.map_err(|rejection| {
            if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::from(ErrorKind::PayloadTooLarge)
            } else {
                ApiError::invalid("body", "could not be read")
            }
        })?;
        Self::read(&bytes)
    }
}

impl JsonObject {
    /// Read a body: the one parser every JSON route uses (and the fuzz target's entry point).
    pub fn read(bytes: &[u8]) -> Result<Self, ApiError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ApiError::invalid("body", "must be a JSON object"));
        }
        let not_json = || ApiError::invalid("body", "must be valid JSON");
        // Syntax first, for the whole body; values are then read one by one.
        let text = std::str::from_utf8(bytes).map_err(|_| not_json())?;
        let raw: &RawValue = serde_json::from_str(text).map_err(|_| not_json())?;
        if !raw.get().starts_with('{') {
            return Err(ApiError::invalid("body", "must be a JSON object"));
        }
        let mut reader = Reader { unreadable: BTreeMap::new() };
        match reader.value(raw, "", 0)? {
            Value::Object(fields) => Ok(Self { fields, unreadable: reader.unreadable }),
            _ => Err(ApiError::invalid("body", "must be a JSON object")),
        }
    }

    /// A string field: absent or `null` is `None`, any other non-string type a 400, a string
    /// that is not Unicode the field's own 400.
    pub fn string(&self, name: &str) -> Result<Option<&str>, ApiError> {
        match self.unreadable.get(name) {
            Some(Unreadable::NotUnicode) => return Err(ApiError(Error::not_unicode(name))),
            Some(Unreadable::NumberOutOfRange) => return Err(ApiError::invalid(name, "must be a string")),
            None => {}
        }
        match self.fields.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(ApiError::invalid(name, "must be a string")),
        }
    }

    /// Whether the body gives `name` at all (`null` included).
    pub fn has(&self, name: &str) -> bool {
        self.fields.contains_key(name) || self.unreadable.contains_key(name)
    }

    /// A required string field.
    pub fn required_string(&self, name: &str) -> Result<&str, ApiError> {
        self.string(name)?.ok_or_else(|| ApiError::invalid(name, "is required"))
    }

    /// A required field that is an array of strings (`widgetOrigins`); an item that is not a
    /// string, or not Unicode, is a 400 naming its index.
    pub fn string_list(&self, name: &str) -> Result<Vec<&str>, ApiError> {
        if let Some((path, what)) =
            self.unreadable.iter().find(|(p, _)| p.as_str() == name || p.starts_with(&format!("{name}[")))
        {
            return Err(ApiError(what.error(path)));
        }
        match self.fields.get(name) {
            None | Some(Value::Null) => Err(ApiError::invalid(name, "is required")),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    item.as_str().ok_or_else(|| ApiError::invalid(&format!("{name}[{i}]"), "must be a string"))
                })
                .collect(),
            Some(_) => Err(ApiError::invalid(name, "must be an array of strings")),
        }
    }

    /// The raw `token` field: any JSON value is accepted and classified by the core; a number
    /// out of range or a string that is not Unicode is malformed (a code that does not verify).
    pub fn token(&self) -> rampart_core::Token {
        if self.unreadable.contains_key("token") {
            return rampart_core::Token::Malformed;
        }
        rampart_core::Token::from_json(self.fields.get("token"))
    }

    /// The factor of disable and verify (SPEC 8.1): `token` or `recoveryCode`; both given is
    /// 400 "Give token or recoveryCode, not both". A `recoveryCode` that cannot be held (not
    /// Unicode) is a code that does not verify, like `token`.
    pub fn factor(&self) -> Result<rampart_core::Factor, ApiError> {
        let token =
            if self.unreadable.contains_key("token") { Some(&Value::Bool(false)) } else { self.fields.get("token") };
        let code = if self.unreadable.contains_key("recoveryCode") {
            Some(&Value::Bool(false))
        } else {
            self.fields.get("recoveryCode")
        };
        rampart_core::Factor::from_json(token, code).map_err(ApiError)
    }

    /// Enable and regenerate take only `token`: a given `recoveryCode` (present, not null, not
    /// only white space) is 400 "recoveryCode is not accepted here".
    pub fn refuse_recovery_code(&self) -> Result<(), ApiError> {
        let given = self.unreadable.contains_key("recoveryCode")
            || rampart_core::recovery::given(self.fields.get("recoveryCode"));
        if given { Err(ApiError::invalid("recoveryCode", "is not accepted here")) } else { Ok(()) }
    }

    /// Every field, for routes that take the whole object (the widget options); a value that
    /// could not be held is a 400 naming its path, so nothing is silently dropped.
    pub fn into_fields(self) -> Result<Map<String, Value>, ApiError> {
        match self.unreadable.iter().next() {
            Some((path, what)) => Err(ApiError(what.error(path))),
            None => Ok(self.fields),
        }
    }
}

/// Reads raw JSON values into [`Value`]s, noting what cannot be held.
struct Reader {
    unreadable: BTreeMap<String, Unreadable>,
}

impl Reader {
    fn value(&mut self, raw: &RawValue, path: &str, depth: usize) -> Result<Value, ApiError> {
        let text = raw.get();
        match text.as_bytes().first() {
            Some(b'{') | Some(b'[') if depth >= MAX_DEPTH => {
                Err(ApiError(Error::invalid_input("body", &format!("must be nested at most {MAX_DEPTH} levels deep"))))
            }
            Some(b'{') => {
                let entries = serde_json::from_str::<Entries<'_>>(text)
                    .map_err(|_| {
                        ApiError::invalid(&name_or_body(path), "has a field name that is not valid Unicode text")
                    })?
                    .0;
                let mut seen = HashSet::with_capacity(entries.len());
                let mut map = Map::new();
                for (key, value) in entries {
                    let child = join(path, &key);
                    if !seen.insert(key.clone()) {
                        return Err(ApiError(Error::duplicate_field(&child)));
                    }
                    let value = self.value(value, &child, depth + 1)?;
                    map.insert(key, value);
                }
                Ok(Value::Object(map))
            }
            Some(b'[') => {
                let items: Vec<&RawValue> = serde_json::from_str(text)
                    .map_err(|_| ApiError::invalid(&name_or_body(path), "must be valid JSON"))?;
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.into_iter().enumerate() {
                    out.push(self.value(item, &format!("{path}[{i}]"), depth + 1)?);
                }
                Ok(Value::Array(out))
            }
            first => match serde_json::from_str::<Value>(text) {
                Ok(v) => Ok(v),
                Err(_) => {
                    let what = if first == Some(&b'"') { Unreadable::NotUnicode } else { Unreadable::NumberOutOfRange };
                    self.unreadable.insert(path.to_owned(), what);
                    Ok(Value::Null)
                }
            },
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

fn name_or_body(path: &str) -> String {
    if path.is_empty() { "body".to_owned() } else { path.to_owned() }
}

/// An object's entries in order, duplicates kept (so they can be refused), values raw.
struct Entries<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Entries<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<String, &'de RawValue>()? {
                    out.push(entry);
                }
                Ok(Entries(out))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
                Err(serde::de::Error::custom("not an object"))
            }
        }
        d.deserialize_map(V)
    }
}

/// The query string, read once: every parameter percent-decoded, none given twice.
#[derive(Default)]
pub struct Query {
    /// Name -> value, or `None` for a value that is not UTF-8 once decoded.
    params: BTreeMap<String, Option<String>>,
}

impl fmt::Debug for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Query").field(&self.params.keys().collect::<Vec<_>>()).finish()
    }
}

impl Query {
    /// Parse `a=1&b=2` (`+` is a space, `%XX` a byte). A parameter given twice is a 400
    /// `duplicate field: <name>`; a name that is not UTF-8 once decoded a 400 as well.
    pub fn parse(query: Option<&str>) -> Result<Self, ApiError> {
        let mut params = BTreeMap::new();
        for pair in query.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let name = decode(name)
                .ok_or_else(|| ApiError::invalid("query", "has a parameter name that is not valid UTF-8"))?;
            if params.insert(name.clone(), decode(value)).is_some() {
                return Err(ApiError(Error::duplicate_field(&name)));
            }
        }
        Ok(Self { params })
    }

    /// A parameter's value; a value that is not UTF-8 once decoded is the field's own 400.
    pub fn get(&self, name: &str) -> Result<Option<&str>, ApiError> {
        match self.params.get(name) {
            None => Ok(None),
            Some(Some(v)) => Ok(Some(v)),
            Some(None) => Err(ApiError(Error::not_unicode(name))),
        }
    }
}

/// Form-decode one name or value: `+` is a space, `%XX` a byte; `None` unless UTF-8.
fn decode(text: &str) -> Option<String> {
    let spaced = text.replace('+', " ");
    String::from_utf8(percent_encoding::percent_decode_str(&spaced).collect()).ok()
}

/// `contactId` as the HTTP API takes it ("contactId is required" / "contactId must be a UUID").
pub fn contact_id(value: Option<&str>) -> Result<ContactId, ApiError> {
    ContactId::parse_field(value).map_err(ApiError)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(body: &str) -> Result<JsonObject, String> {
        JsonObject::read(body.as_bytes()).map_err(|e| e.0.message().to_owned())
    }

    #[test]
    fn duplicates_are_refused_at_every_depth() {
        assert_eq!(read(r#"{"token":"111111","token":"222222"}"#).unwrap_err(), "duplicate field: token");
        assert_eq!(
            read(r#"{"receiveAddress":{"btc":"a","btc":"b"}}"#).unwrap_err(),
            "duplicate field: receiveAddress.btc"
        );
        assert_eq!(read(r#"{"a":[{"x":1,"x":2}]}"#).unwrap_err(), "duplicate field: a[0].x");
        // The same name at different places is fine.
        assert!(read(r#"{"x":{"x":{"x":1}}}"#).is_ok());
    }

    #[test]
    fn values_json_allows_but_rust_cannot_hold() {
        let body = read(r#"{"token":1e400,"contactId":"\ud800","n":-1e999,"ok":"\ud83d\ude00"}"#).unwrap();
        assert_eq!(body.token(), rampart_core::Token::Malformed);
        let e = body.string("contactId").unwrap_err().0;
        assert_eq!((e.kind(), e.message()), (ErrorKind::ContactIdInvalid, "contactId must be a UUID"));
        assert_eq!(body.string("n").unwrap_err().0.message(), "n must be a string");
        assert_eq!(body.string("ok").unwrap(), Some("😀"));
        assert_eq!(body.into_fields().unwrap_err().0.message(), "contactId must be a UUID");
        let nested = read(r#"{"receiveAddress":{"btc":"\udc00"},"amount":[1e400]}"#).unwrap();
        assert_eq!(nested.into_fields().unwrap_err().0.message(), "amount[0] is a number out of range");
        assert_eq!(read(r#"{"token":"\ud800"}"#).unwrap().token(), rampart_core::Token::Malformed);
        assert_eq!(read(r#"{"token":123456}"#).unwrap().token(), rampart_core::Token::from(123_456u32));
    }

    #[test]
    fn shapes_and_depth() {
        for (body, message) in [
            ("", "body must be a JSON object"),
            ("[]", "body must be a JSON object"),
            ("1e400", "body must be a JSON object"),
            ("{", "body must be valid JSON"),
            ("{} {}", "body must be valid JSON"),
            ("\u{0}", "body must be valid JSON"),
            (r#"{"\ud800":1}"#, "body has a field name that is not valid Unicode text"),
        ] {
            assert_eq!(read(body).unwrap_err(), message, "{body:?}");
        }
        assert_eq!(JsonObject::read(b"{\"a\":\"\xff\"}").unwrap_err().0.message(), "body must be valid JSON");
        let deep = |n: usize| format!("{{\"a\":{}{}}}", "[".repeat(n), "]".repeat(n));
        assert!(read(&deep(MAX_DEPTH - 1)).is_ok());
        assert_eq!(read(&deep(MAX_DEPTH)).unwrap_err(), "body must be nested at most 32 levels deep");
        assert_eq!(read(&deep(100_000)).unwrap_err(), "body must be nested at most 32 levels deep");
    }

    #[test]
    fn string_lists() {
        let body = read(r#"{"o":["a","b"],"n":[1],"s":"x","bad":["ok","\udc00"]}"#).unwrap();
        assert_eq!(body.string_list("o").unwrap(), ["a", "b"]);
        assert_eq!(body.string_list("n").unwrap_err().0.message(), "n[0] must be a string");
        assert_eq!(body.string_list("s").unwrap_err().0.message(), "s must be an array of strings");
        assert_eq!(body.string_list("none").unwrap_err().0.message(), "none is required");
        assert_eq!(body.string_list("bad").unwrap_err().0.message(), "bad[1] must be valid Unicode text");
    }

    #[test]
    fn query_is_read_once() {
        let q = Query::parse(Some("contactId=a%20b&twoFactorIssuer=Acme+Inc&empty=&flag")).unwrap();
        assert_eq!(q.get("contactId").unwrap(), Some("a b"));
        assert_eq!(q.get("twoFactorIssuer").unwrap(), Some("Acme Inc"));
        assert_eq!(
            (q.get("empty").unwrap(), q.get("flag").unwrap(), q.get("none").unwrap()),
            (Some(""), Some(""), None)
        );
        let dup = Query::parse(Some("contactId=a&contactId=b")).unwrap_err().0;
        assert_eq!(dup.message(), "duplicate field: contactId");
        let bad = Query::parse(Some("twoFactorIssuer=Acme%FF&contactId=%ED%A0%80")).unwrap();
        assert_eq!(bad.get("twoFactorIssuer").unwrap_err().0.kind(), ErrorKind::IssuerInvalid);
        assert_eq!(bad.get("contactId").unwrap_err().0.kind(), ErrorKind::ContactIdInvalid);
        assert!(Query::parse(None).unwrap().get("x").unwrap().is_none());
    }
}
