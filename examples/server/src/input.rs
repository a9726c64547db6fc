//! Reading what the caller sent: a JSON object body under the size limit, query parameters and
//! typed fields. Every failure is a 400 naming the field (or a 413), never a 500.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header;
use rampart_core::{ContactId, ErrorKind};
use serde_json::{Map, Value};

use crate::error::ApiError;

/// The largest accepted request body (64 KiB).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// A request body that is a JSON object, at most [`MAX_BODY_BYTES`].
///
/// The content type is not checked: `curl -d` sends a form type by default, and the body's
/// shape is what matters. `Debug` shows only the field names (the token is a secret).
pub struct JsonObject(pub Map<String, Value>);

impl std::fmt::Debug for JsonObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("JsonObject").field(&self.0.keys().collect::<Vec<_>>()).finish()
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
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::from(ErrorKind::PayloadTooLarge)
            } else {
                ApiError::invalid("body", "could not be read")
            }
        })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ApiError::invalid("body", "must be a JSON object"));
        }
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => Ok(Self(map)),
            Ok(_) => Err(ApiError::invalid("body", "must be a JSON object")),
            Err(_) => Err(ApiError::invalid("body", "must be valid JSON")),
        }
    }
}

impl JsonObject {
    /// A string field: absent or `null` is `None`, any other non-string type a 400.
    pub fn string(&self, name: &str) -> Result<Option<&str>, ApiError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(ApiError::invalid(name, "must be a string")),
        }
    }

    /// A required string field.
    pub fn required_string(&self, name: &str) -> Result<&str, ApiError> {
        self.string(name)?.ok_or_else(|| ApiError::invalid(name, "is required"))
    }

    /// The raw `token` field: any JSON type is accepted and classified by the core.
    pub fn token(&self) -> rampart_core::Token {
        rampart_core::Token::from_json(self.0.get("token"))
    }
}

/// The first value of a query parameter, percent-decoded.
pub fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    url::form_urlencoded::parse(query?.as_bytes()).find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
}

/// `contactId` as the HTTP API takes it ("contactId is required" / "contactId must be a UUID").
pub fn contact_id(value: Option<&str>) -> Result<ContactId, ApiError> {
    ContactId::parse_field(value).map_err(ApiError)
}
