//! The one place where errors become HTTP answers: `{"message": string, "code": int}` with the
//! HTTP status equal to `code`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rampart_core::{Error, ErrorKind};
use serde::Serialize;

/// An error answer. Wraps the core's [`Error`], so every surface speaks the same taxonomy.
#[derive(Debug)]
pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        Self(e)
    }
}

impl From<ErrorKind> for ApiError {
    fn from(kind: ErrorKind) -> Self {
        Self(Error::new(kind))
    }
}

impl ApiError {
    /// A 400 naming the field and the rule it breaks ("contactId must be a string").
    pub fn invalid(field: &str, rule: &str) -> Self {
        Self(Error::invalid_input(field, rule))
    }
}

/// A body `{"message","code", ...extra}`, fields in that order.
#[derive(Serialize)]
pub struct Body<'a, T: Serialize> {
    /// The message.
    pub message: &'a str,
    /// The HTTP status.
    pub code: u16,
    /// Fields after `code` (a struct or map, flattened).
    #[serde(flatten)]
    pub extra: T,
}

/// A JSON answer `{"message","code", ...extra}` with the status `code`.
pub fn body_response<T: Serialize>(status: StatusCode, message: &str, extra: T) -> Response {
    (status, axum::Json(Body { message, code: status.as_u16(), extra })).into_response()
}

/// A JSON answer `{"message","code"}` with the status `code`.
pub fn message_response(status: StatusCode, message: &str) -> Response {
    body_response(status, message, serde_json::Map::new())
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let e = self.0;
        let status = StatusCode::from_u16(e.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if status.is_server_error() {
            // The body says only the fixed message; the detail goes to the operator's log.
            match e.cause() {
                Some(cause) => tracing::error!(kind = e.kind().name(), %cause, "request failed"),
                None => tracing::error!(kind = e.kind().name(), "request failed"),
            }
        }
        let mut response = message_response(status, e.message());
        if let Some(seconds) = e.retry_after() {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// The answer to an unknown path: 404 `{"message":"Not found","code":404}`.
pub async fn not_found() -> ApiError {
    ErrorKind::NotFound.into()
}

/// The answer to a known path with the wrong method: 405 `{"message":"Method not allowed","code":405}`.
pub async fn method_not_allowed() -> ApiError {
    ErrorKind::MethodNotAllowed.into()
}
