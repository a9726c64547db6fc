//! The route handlers of SPEC section 3. Each one reads its input (400s first, in the order
//! body, field types, `contactId`, `twoFactorIssuer`), then asks the core on the blocking pool.

use axum::extract::{FromRequestParts, RawQuery, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rampart_core::lifecycle::{MSG_CREATED, MSG_DISABLED, MSG_ENABLED, MSG_VALID, status_message};
use rampart_core::partner::bearer_token;
use rampart_core::recovery::MSG_REGENERATED;
use rampart_core::{AuthMethod, ContactId, ErrorKind, Factor, PartnerId, RecoveryCodes, Service, Token, Verification};
use serde::Serialize;
use serde_json::{Value, json};
use zeroize::Zeroizing;

use crate::AppState;
use crate::error::{ApiError, body_response, message_response};
use crate::input::{JsonObject, Query, contact_id};

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

/// The caller's `Authorization: Bearer` credential, read without touching the store (no header:
/// 401 at once). It is checked on the blocking pool in the same trip as the operation.
pub struct Bearer(pub(crate) Zeroizing<String>);

impl std::fmt::Debug for Bearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Bearer(<redacted>)")
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Bearer {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let bearer = parts.headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(bearer_token);
        bearer.map(|b| Self(Zeroizing::new(b.to_owned()))).ok_or_else(|| ErrorKind::Unauthorized.into())
    }
}

/// How an authenticated call went: how the caller authenticated (once the credential checked
/// out) and the answer.
pub(crate) struct Partnered<T> {
    method: Option<AuthMethod>,
    answer: Result<T, ApiError>,
    /// How the caller's kind answers an error ([`Caller::error_response`]).
    refuse: fn(ApiError) -> Response,
}

/// Who a partner route's call is for: the partner's secret key ([`Bearer`]), or a dashboard
/// member's session allowed to make the call (`crate::dashboard`). Checked on the blocking
/// pool, in the same trip as the operation.
pub(crate) trait Caller: Send + 'static {
    /// The partner, and how the caller authenticated; the check's own error otherwise.
    fn authenticate(&self, service: &Service) -> rampart_core::Result<rampart_core::Authenticated>;

    /// An error answer in this caller's format: the partner API's `{"message","code"}` (SPEC
    /// 7) by default; the dashboard's names the field next to which its page shows it.
    fn error_response(e: ApiError) -> Response
    where
        Self: Sized,
    {
        e.into_response()
    }
}

impl Caller for Bearer {
    fn authenticate(&self, service: &Service) -> rampart_core::Result<rampart_core::Authenticated> {
        service.authenticate(&self.0)
    }
}

/// Authenticate `caller`, then run `call` for its partner on `input`, in one blocking-pool
/// trip. The order of answers stays 401, then the input's 413 or 400, then the core's.
pub(crate) async fn as_partner<C: Caller, I: Send + 'static, T: Send + 'static>(
    state: &AppState,
    caller: C,
    failure: ErrorKind,
    input: Result<I, ApiError>,
    call: impl FnOnce(&Service, &PartnerId, I) -> rampart_core::Result<T> + Send + 'static,
) -> Partnered<T> {
    let service = state.service.clone();
    let refuse = C::error_response;
    let work = move || {
        let auth = match caller.authenticate(&service) {
            Ok(auth) => auth,
            // The store failed while checking the key: the operation's own 500 (SPEC 7).
            Err(e) if e.kind() == ErrorKind::Internal => {
                return Partnered { method: None, answer: Err(ApiError(e.relabel(failure))), refuse };
            }
            Err(e) => return Partnered { method: None, answer: Err(ApiError(e)), refuse },
        };
        let answer = input.and_then(|input| call(&service, &auth.partner_id, input).map_err(ApiError));
        Partnered { method: Some(auth.method), answer, refuse }
    };
    match tokio::task::spawn_blocking(work).await {
        Ok(done) => done,
        Err(join) => Partnered {
            method: None,
            answer: Err(ApiError(rampart_core::Error::new(failure).with_cause(join.to_string()))),
            refuse,
        },
    }
}

impl<T> Partnered<T> {
    /// The HTTP answer: `to_response` on success; answers to a legacy JWT carry `Deprecation: true`.
    pub(crate) fn respond(self, to_response: impl FnOnce(T) -> Response) -> Response {
        let mut response = self.answer.map_or_else(self.refuse, to_response);
        if self.method == Some(AuthMethod::LegacyJwt) {
            response.headers_mut().insert("deprecation", HeaderValue::from_static("true"));
        }
        response
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
pub async fn create_2fa(State(state): State<AppState>, bearer: Bearer, RawQuery(query): RawQuery) -> Response {
    let input = Query::parse(query.as_deref()).and_then(|q| {
        let contact = contact_id(q.get("contactId")?)?;
        Ok((contact, q.get("twoFactorIssuer")?.map(str::to_owned)))
    });
    let done = as_partner(&state, bearer, ErrorKind::CreateFailed, input, |s, partner, (contact, issuer)| {
        s.create_2fa(partner, &contact, issuer.as_deref())
    })
    .await;
    let mut response = done.respond(|setup| {
        let details = Details { qr_code: setup.qr_code, manual: setup.manual };
        body_response(StatusCode::OK, MSG_CREATED, Created { details })
    });
    // Every answer of create stays out of caches, the one carrying a secret above all.
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// verify's success members, in the order the spec lists them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Valid {
    method: &'static str,
    recovery_codes_remaining: u32,
}

/// status's members, in the order the spec lists them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    status: bool,
    recovery_codes_remaining: u32,
}

/// `{"contactId","token"}` of enable and regenerate: the contact must be valid, a
/// `recoveryCode` is refused; the token is classified by the core.
fn token_input(body: Result<JsonObject, ApiError>) -> Result<(ContactId, Token), ApiError> {
    let body = body?;
    let contact = contact_id(body.string("contactId")?)?;
    body.refuse_recovery_code()?;
    Ok((contact, body.token()))
}

/// `{"contactId","token"}` or `{"contactId","recoveryCode"}` of disable and verify.
fn factor_input(body: Result<JsonObject, ApiError>) -> Result<(ContactId, Factor), ApiError> {
    let body = body?;
    let contact = contact_id(body.string("contactId")?)?;
    Ok((contact, body.factor()?))
}

/// The answer that shows a new set of recovery codes: `details.recoveryCodes`, `no-store`.
pub fn with_recovery_codes(message: &str, codes: &RecoveryCodes) -> Response {
    let mut response =
        body_response(StatusCode::OK, message, json!({ "details": { "recoveryCodes": codes.as_slice() } }));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// POST /v1/auth/enable2fa `{"token","contactId"}`: 200 with the recovery codes, shown once.
pub async fn enable_2fa(State(state): State<AppState>, bearer: Bearer, body: Result<JsonObject, ApiError>) -> Response {
    let input = token_input(body);
    let done = as_partner(&state, bearer, ErrorKind::EnableFailed, input, |s, partner, (contact, token)| {
        s.enable_2fa(partner, &contact, token)
    })
    .await;
    done.respond(|codes| with_recovery_codes(MSG_ENABLED, &codes))
}

/// POST /v1/auth/recoveryCodes `{"token","contactId"}`: a new set replaces the old one.
pub async fn regenerate_recovery_codes(
    State(state): State<AppState>,
    bearer: Bearer,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = token_input(body);
    let done = as_partner(&state, bearer, ErrorKind::EnableFailed, input, |s, partner, (contact, token)| {
        s.regenerate_recovery_codes(partner, &contact, token)
    })
    .await;
    done.respond(|codes| with_recovery_codes(MSG_REGENERATED, &codes))
}

/// POST /v1/auth/disable2fa `{"token" or "recoveryCode","contactId"}`
pub async fn disable_2fa(
    State(state): State<AppState>,
    bearer: Bearer,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = factor_input(body);
    let done = as_partner(&state, bearer, ErrorKind::DisableFailed, input, |s, partner, (contact, factor)| {
        s.disable_2fa(partner, &contact, factor)
    })
    .await;
    done.respond(|()| ok(MSG_DISABLED))
}

/// POST /v1/auth/verify2fa `{"token" or "recoveryCode","contactId"}` (extension): 200 with
/// `method` and `recoveryCodesRemaining`.
pub async fn verify_2fa(State(state): State<AppState>, bearer: Bearer, body: Result<JsonObject, ApiError>) -> Response {
    let input = factor_input(body);
    let done = as_partner(&state, bearer, ErrorKind::VerifyFailed, input, |s, partner, (contact, factor)| {
        match s.verify_2fa(partner, &contact, factor)? {
            Verification::Accepted { method, recovery_codes_remaining } => Ok((method, recovery_codes_remaining)),
            Verification::Rejected => Err(ErrorKind::TokenFailed.into()),
        }
    })
    .await;
    done.respond(|(method, remaining)| {
        body_response(StatusCode::OK, MSG_VALID, Valid { method: method.as_str(), recovery_codes_remaining: remaining })
    })
}

/// GET /v1/auth/2fa?contactId=...: `status` and `recoveryCodesRemaining`.
pub async fn status_2fa(State(state): State<AppState>, bearer: Bearer, RawQuery(query): RawQuery) -> Response {
    let input = Query::parse(query.as_deref()).and_then(|q| contact_id(q.get("contactId")?));
    let done = as_partner(&state, bearer, ErrorKind::StatusFailed, input, |s, partner, contact| {
        s.status_with_recovery_codes(partner, &contact)
    })
    .await;
    done.respond(|(enabled, remaining)| {
        body_response(
            StatusCode::OK,
            status_message(enabled),
            Status { status: enabled, recovery_codes_remaining: remaining },
        )
    })
}

/// A widget setting's new value: a required string field of the body.
fn setting_input(body: Result<JsonObject, ApiError>, field: &str) -> Result<String, ApiError> {
    Ok(body?.required_string(field)?.to_owned())
}

/// POST /v1/users/widgetText `{"widgetText"}`
pub async fn set_widget_text(
    State(state): State<AppState>,
    bearer: Bearer,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = setting_input(body, "widgetText");
    let done =
        as_partner(&state, bearer, ErrorKind::Internal, input, |s, partner, text| s.set_widget_text(partner, &text))
            .await;
    done.respond(|stored| ok(&format!("Widget text updated to: {stored}")))
}

/// GET /v1/users/widgetText
pub async fn widget_text(State(state): State<AppState>, bearer: Bearer) -> Response {
    let done = as_partner(&state, bearer, ErrorKind::Internal, Ok(()), |s, partner, ()| s.widget_text(partner)).await;
    done.respond(|text| ok_with("Widget text retrieved.", "widgetText", text.map_or(Value::Null, Value::String)))
}

/// POST /v1/users/widgetButtonURL `{"widgetButtonURL"}`
pub async fn set_widget_button_url(
    State(state): State<AppState>,
    bearer: Bearer,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = setting_input(body, "widgetButtonURL");
    let done = as_partner(&state, bearer, ErrorKind::Internal, input, |s, partner, url| {
        s.set_widget_button_url(partner, &url)
    })
    .await;
    done.respond(|stored| ok(&format!("Widget button URL updated to: {stored}")))
}

/// GET /v1/users/widgetButtonURL
pub async fn widget_button_url(State(state): State<AppState>, bearer: Bearer) -> Response {
    let done =
        as_partner(&state, bearer, ErrorKind::Internal, Ok(()), |s, partner, ()| s.widget_button_url(partner)).await;
    done.respond(|url| {
        ok_with("Widget button URL retrieved.", "widgetButtonURL", url.map_or(Value::Null, Value::String))
    })
}

/// POST /v1/users/widgetOrigins `{"widgetOrigins": [...]}`: replaces the list; answers it canonical.
pub async fn set_widget_origins(
    State(state): State<AppState>,
    bearer: Bearer,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input =
        body.and_then(|b| Ok(b.string_list("widgetOrigins")?.into_iter().map(str::to_owned).collect::<Vec<_>>()));
    let done = as_partner(&state, bearer, ErrorKind::Internal, input, |s, partner, origins| {
        s.set_widget_origins(partner, &origins)
    })
    .await;
    done.respond(|origins| ok_with("Widget origins updated.", "widgetOrigins", Value::from(origins)))
}

/// GET /v1/users/widgetOrigins
pub async fn widget_origins(State(state): State<AppState>, bearer: Bearer) -> Response {
    let done =
        as_partner(&state, bearer, ErrorKind::Internal, Ok(()), |s, partner, ()| s.widget_origins(partner)).await;
    done.respond(|origins| ok_with("Widget origins retrieved.", "widgetOrigins", Value::from(origins)))
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

/// GET /openapi.json: the document for this server's environment and widget settings.
pub async fn openapi(State(state): State<AppState>) -> Response {
    let document = crate::openapi::document_for(state.service.config().environment, &state.widget);
    (StatusCode::OK, axum::Json(document)).into_response()
}
