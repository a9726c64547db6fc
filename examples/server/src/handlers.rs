//! The route handlers of SPEC section 3. Each one reads its input (400s first, in the order
//! body, field types, `contactId`, `twoFactorIssuer`), then asks the core on the blocking pool.

use axum::Extension;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rampart_core::lifecycle::{MSG_CREATED, MSG_DISABLED, MSG_ENABLED, MSG_VALID, status_message};
use rampart_core::{Authenticated, ErrorKind, Service, Verification};
use serde::Serialize;
use serde_json::Value;

use crate::AppState;
use crate::error::{ApiError, body_response, message_response};
use crate::input::{JsonObject, contact_id, query_param};

type Answer = Result<Response, ApiError>;

/// Run a core call on the blocking pool, so store work never stalls the async runtime.
/// `failure` labels the (unexpected) case where the task itself dies.
pub(crate) async fn blocking<T: Send + 'static>(
    state: &AppState,
    failure: ErrorKind,
    call: impl FnOnce(&Service) -> rampart_core::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    let service = state.service.clone();
    match tokio::task::spawn_blocking(move || call(&service)).await {
        Ok(result) => result.map_err(ApiError),
        Err(join) => Err(ApiError(rampart_core::Error::new(failure).with_cause(join.to_string()))),
    }
}

fn ok(message: &str) -> Response {
    message_response(StatusCode::OK, message)
}

fn ok_with(message: &str, key: &str, value: Value) -> Response {
    let mut extra = serde_json::Map::new();
    extra.insert(key.into(), value);
    body_response(StatusCode::OK, message, extra)
}

#[derive(Serialize)]
struct Created {
    details: Details,
}

/// `details` of create, `qrCode` before `manual` as the spec lists them.
#[derive(Serialize)]
struct Details {
    #[serde(rename = "qrCode")]
    qr_code: String,
    manual: String,
}

/// GET /v1/auth/create2fa?contactId=...&twoFactorIssuer=...
pub async fn create_2fa(
    State(state): State<AppState>,
    Extension(auth): Extension<Authenticated>,
    RawQuery(query): RawQuery,
) -> Response {
    let answer: Answer = async {
        let contact = contact_id(query_param(query.as_deref(), "contactId").as_deref())?;
        let issuer = query_param(query.as_deref(), "twoFactorIssuer");
        let setup = blocking(&state, ErrorKind::CreateFailed, move |s| {
            s.create_2fa(&auth.partner_id, &contact, issuer.as_deref())
        })
        .await?;
        let details = Details { qr_code: setup.qr_code, manual: setup.manual };
        Ok(body_response(StatusCode::OK, MSG_CREATED, Created { details }))
    }
    .await;
    // Every answer of create stays out of caches, the one carrying a secret above all.
    let mut response = answer.unwrap_or_else(IntoResponse::into_response);
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Which token-checking operation a POST runs.
#[derive(Clone, Copy)]
enum Attempt {
    Enable,
    Disable,
    Verify,
}

async fn attempt(state: AppState, auth: Authenticated, body: JsonObject, op: Attempt) -> Answer {
    let contact = body.string("contactId")?;
    let contact = contact_id(contact)?;
    let token = body.token();
    let partner = auth.partner_id;
    let message = match op {
        Attempt::Enable => {
            blocking(&state, ErrorKind::EnableFailed, move |s| s.enable_2fa(&partner, &contact, token)).await?;
            MSG_ENABLED
        }
        Attempt::Disable => {
            blocking(&state, ErrorKind::DisableFailed, move |s| s.disable_2fa(&partner, &contact, token)).await?;
            MSG_DISABLED
        }
        Attempt::Verify => {
            match blocking(&state, ErrorKind::VerifyFailed, move |s| s.verify_2fa(&partner, &contact, token)).await? {
                Verification::Accepted => MSG_VALID,
                Verification::Rejected => return Err(ErrorKind::TokenFailed.into()),
            }
        }
    };
    Ok(ok(message))
}

/// POST /v1/auth/enable2fa `{"token","contactId"}`
pub async fn enable_2fa(
    State(state): State<AppState>,
    Extension(auth): Extension<Authenticated>,
    body: JsonObject,
) -> Answer {
    attempt(state, auth, body, Attempt::Enable).await
}

/// POST /v1/auth/disable2fa `{"token","contactId"}`
pub async fn disable_2fa(
    State(state): State<AppState>,
    Extension(auth): Extension<Authenticated>,
    body: JsonObject,
) -> Answer {
    attempt(state, auth, body, Attempt::Disable).await
}

/// POST /v1/auth/verify2fa `{"token","contactId"}` (extension)
pub async fn verify_2fa(
    State(state): State<AppState>,
    Extension(auth): Extension<Authenticated>,
    body: JsonObject,
) -> Answer {
    attempt(state, auth, body, Attempt::Verify).await
}

/// GET /v1/auth/2fa?contactId=...
pub async fn status_2fa(
    State(state): State<AppState>,
    Extension(auth): Extension<Authenticated>,
    RawQuery(query): RawQuery,
) -> Answer {
    let contact = contact_id(query_param(query.as_deref(), "contactId").as_deref())?;
    let enabled = blocking(&state, ErrorKind::StatusFailed, move |s| s.status_2fa(&auth.partner_id, &contact)).await?;
    Ok(ok_with(status_message(enabled), "status", Value::Bool(enabled)))
}

/// POST /v1/users/widgetText `{"widgetText"}`
pub async fn set_widget_text(
    State(state): State<AppState>,
    Extension(auth): Extension<Authenticated>,
    body: JsonObject,
) -> Answer {
    let text = body.required_string("widgetText")?.to_owned();
    let stored = blocking(&state, ErrorKind::Internal, move |s| s.set_widget_text(&auth.partner_id, &text)).await?;
    Ok(ok(&format!("Widget text updated to: {stored}")))
}

/// GET /v1/users/widgetText
pub async fn widget_text(State(state): State<AppState>, Extension(auth): Extension<Authenticated>) -> Answer {
    let text = blocking(&state, ErrorKind::Internal, move |s| s.widget_text(&auth.partner_id)).await?;
    Ok(ok_with("Widget text retrieved.", "widgetText", text.map_or(Value::Null, Value::String)))
}

/// POST /v1/users/widgetButtonURL `{"widgetButtonURL"}`
pub async fn set_widget_button_url(
    State(state): State<AppState>,
    Extension(auth): Extension<Authenticated>,
    body: JsonObject,
) -> Answer {
    let url = body.required_string("widgetButtonURL")?.to_owned();
    let stored =
        blocking(&state, ErrorKind::Internal, move |s| s.set_widget_button_url(&auth.partner_id, &url)).await?;
    Ok(ok(&format!("Widget button URL updated to: {stored}")))
}

/// GET /v1/users/widgetButtonURL
pub async fn widget_button_url(State(state): State<AppState>, Extension(auth): Extension<Authenticated>) -> Answer {
    let url = blocking(&state, ErrorKind::Internal, move |s| s.widget_button_url(&auth.partner_id)).await?;
    Ok(ok_with("Widget button URL retrieved.", "widgetButtonURL", url.map_or(Value::Null, Value::String)))
}

/// GET /healthz: 200 when the store answers, else 503 (the cause goes to the log).
pub async fn healthz(State(state): State<AppState>) -> Response {
    match blocking(&state, ErrorKind::Internal, |s| s.ping()).await {
        Ok(()) => ok("Store is reachable."),
        Err(ApiError(e)) => {
            match e.cause() {
                Some(cause) => tracing::error!(%cause, "health check: store unreachable"),
                None => tracing::error!("health check: store unreachable"),
            }
            message_response(StatusCode::SERVICE_UNAVAILABLE, "Store is unreachable.")
        }
    }
}

/// GET /openapi.json
pub async fn openapi() -> Response {
    (StatusCode::OK, axum::Json(crate::openapi::document())).into_response()
}
