//! The widget's purchase flow over HTTP (SPEC section 6.3; `docs/DESIGN.md`, "Widget purchase
//! flow"): the session routes the widget page calls with `Authorization: Bearer ws_...`, and
//! the partner's reads of orders and contacts with its secret key.
//!
//! Session routes check the session first (401 `session_expired`), then the body (400), then
//! ask the core. The example server has no mail service and no payment provider: in production
//! sign-in codes are 503 `sign_in_unavailable` and orders 503 `purchases_unavailable`.

use axum::extract::{FromRequestParts, Path, RawQuery, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rampart_core::checkout::{OrderRequest, SessionState, order_json};
use rampart_core::lifecycle::{MSG_CREATED, MSG_DISABLED, MSG_ENABLED, MSG_VALID};
use rampart_core::partner::bearer_token;
use rampart_core::recovery::MSG_REGENERATED;
use rampart_core::{ContactId, Environment, ErrorKind, OrderId, Service};
use serde::Serialize;
use serde_json::{Value, json};
use zeroize::Zeroizing;

use crate::AppState;
use crate::error::{ApiError, body_response};
use crate::handlers::{Bearer, as_partner, blocking};
use crate::input::{JsonObject, Query, contact_id};

/// The widget session's bearer token. No header is the same 401 as an expired session.
pub struct SessionBearer(Zeroizing<String>);

impl std::fmt::Debug for SessionBearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionBearer(<redacted>)")
    }
}

impl<S: Send + Sync> FromRequestParts<S> for SessionBearer {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let bearer = parts.headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(bearer_token);
        bearer.map(|b| Self(Zeroizing::new(b.to_owned()))).ok_or_else(|| ErrorKind::SessionExpired.into())
    }
}

/// A session as the page sees it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionJson {
    signed_in: bool,
    email: Option<String>,
    kyc_passed: bool,
    two_factor: Option<&'static str>,
    may_purchase: bool,
    /// RFC 3339 UTC, or null.
    purchase_hold_until: Option<String>,
    recovery_codes_remaining: u32,
    environment: &'static str,
}

impl From<SessionState> for SessionJson {
    fn from(s: SessionState) -> Self {
        Self {
            signed_in: s.signed_in(),
            email: s.email,
            kyc_passed: s.kyc_passed,
            two_factor: s.two_factor.map(|t| t.as_str()),
            may_purchase: s.may_purchase,
            purchase_hold_until: s.purchase_hold_until.map(rampart_core::recovery::rfc3339),
            recovery_codes_remaining: s.recovery_codes_remaining,
            environment: s.environment.as_str(),
        }
    }
}

fn with_session(message: &str, state: SessionState) -> Response {
    body_response(StatusCode::OK, message, json!({ "session": SessionJson::from(state) }))
}

/// Run `call` for the session on `input` on the blocking pool. A bad body is answered only
/// once the session checks out, so a stranger learns nothing from the body rules.
async fn in_session<I: Send + 'static, T: Send + 'static>(
    state: &AppState,
    bearer: SessionBearer,
    input: Result<I, ApiError>,
    call: impl FnOnce(&Service, &str, I) -> rampart_core::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    blocking(state, ErrorKind::Internal, move |s| match input {
        Ok(input) => call(s, &bearer.0, input),
        Err(ApiError(e)) => {
            s.session_state(&bearer.0)?;
            Err(e)
        }
    })
    .await
}

fn respond<T>(answer: Result<T, ApiError>, to_response: impl FnOnce(T) -> Response) -> Response {
    answer.map_or_else(IntoResponse::into_response, to_response)
}

/// POST /v1/widget/session `{"publicKey", "origin"}`: public, rate-limited per client address.
pub async fn open(
    State(state): State<AppState>,
    crate::ratelimit::ClientIp(ip): crate::ratelimit::ClientIp,
    body: Result<JsonObject, ApiError>,
) -> Response {
    if let Some(refused) = crate::widget::rate_limited(&state, ip) {
        return refused;
    }
    let input = body.and_then(|b| {
        let key = b.required_string("publicKey")?.to_owned();
        let origin = b.string("origin")?.map(str::to_owned);
        Ok((key, origin))
    });
    let (key, origin) = match input {
        Ok(input) => input,
        Err(e) => return e.into_response(),
    };
    let idle = state.service.config().session_idle_secs;
    let opened = blocking(&state, ErrorKind::Internal, move |s| s.open_session(&key, origin.as_deref())).await;
    let mut response = respond(opened, |(token, session)| {
        let body = json!({
            "token": token.as_str(),
            "idleTimeout": idle,
            "session": SessionJson::from(session),
        });
        body_response(StatusCode::OK, "Widget session opened.", body)
    });
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// GET /v1/widget/session
pub async fn state(State(state): State<AppState>, bearer: SessionBearer) -> Response {
    let answer = in_session(&state, bearer, Ok(()), |s, token, ()| s.session_state(token)).await;
    respond(answer, |session| with_session("Widget session.", session))
}

/// DELETE /v1/widget/session: sign out.
pub async fn close(State(state): State<AppState>, bearer: SessionBearer) -> Response {
    let answer = in_session(&state, bearer, Ok(()), |s, token, ()| s.close_session(token)).await;
    respond(answer, |()| crate::error::message_response(StatusCode::OK, "Signed out."))
}

/// POST /v1/widget/session/email `{"email"}`: a sign-in code (shown in sandbox, as
/// `sandboxCode`; production has no mail service here).
pub async fn email(
    State(state): State<AppState>,
    bearer: SessionBearer,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = body.and_then(|b| Ok(b.required_string("email")?.to_owned()));
    let answer = in_session(&state, bearer, input, |s, token, email| {
        if s.config().environment == Environment::Production {
            s.session_state(token)?;
            return Err(ErrorKind::SignInUnavailable.into());
        }
        s.request_sign_in_code(token, &email)
    })
    .await;
    let mut response = respond(answer, |code| {
        let body = json!({ "expiresIn": code.expires_in, "sandboxCode": code.code.as_str() });
        body_response(StatusCode::OK, "Sign-in code sent.", body)
    });
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// POST /v1/widget/session/signin `{"email", "code"}`
pub async fn sign_in(
    State(state): State<AppState>,
    bearer: SessionBearer,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = body.and_then(|b| Ok((b.required_string("email")?.to_owned(), b.required_string("code")?.to_owned())));
    let answer = in_session(&state, bearer, input, |s, token, (email, code)| s.sign_in(token, &email, &code)).await;
    respond(answer, |session| with_session("Signed in.", session))
}

/// POST /v1/widget/session/kyc: sandbox's "mark me as KYC passed".
pub async fn kyc(State(state): State<AppState>, bearer: SessionBearer) -> Response {
    let answer = in_session(&state, bearer, Ok(()), |s, token, ()| s.session_mark_kyc(token)).await;
    respond(answer, |session| with_session("Marked as KYC passed.", session))
}

/// POST /v1/widget/session/2fa/create: QR code and manual key for the signed-in contact.
pub async fn create_2fa(State(state): State<AppState>, bearer: SessionBearer) -> Response {
    let answer = in_session(&state, bearer, Ok(()), |s, token, ()| s.session_create_2fa(token)).await;
    let mut response = respond(answer, |setup| {
        body_response(StatusCode::OK, MSG_CREATED, json!({ "qrCode": setup.qr_code, "manual": setup.manual }))
    });
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// POST /v1/widget/session/2fa/enable `{"token"}`: the session and the recovery codes, shown
/// once (`no-store`).
pub async fn enable_2fa(
    State(state): State<AppState>,
    bearer: SessionBearer,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = body.and_then(|b| b.refuse_recovery_code().map(|()| b.token()));
    let answer = in_session(&state, bearer, input, |s, token, code| s.session_enable_2fa(token, code)).await;
    let mut response = respond(answer, |(session, codes)| {
        body_response(
            StatusCode::OK,
            MSG_ENABLED,
            json!({ "session": SessionJson::from(session), "recoveryCodes": codes.as_slice() }),
        )
    });
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// POST /v1/widget/session/2fa/verify `{"token"}` or `{"recoveryCode"}`: a recovery code
/// disables 2FA (the way back when the authenticator is lost) and answers
/// "Successfully disbaled 2fa!" with the session.
pub async fn verify_2fa(
    State(state): State<AppState>,
    bearer: SessionBearer,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = body.and_then(|b| b.factor());
    let answer = in_session(&state, bearer, input, |s, token, factor| {
        let recovering = matches!(factor, rampart_core::Factor::RecoveryCode(_));
        s.session_verify_2fa(token, factor).map(|state| (state, recovering))
    })
    .await;
    respond(answer, |(session, recovering)| with_session(if recovering { MSG_DISABLED } else { MSG_VALID }, session))
}

/// POST /v1/widget/session/2fa/recoveryCodes `{"token"}`: a new set, shown once (`no-store`).
pub async fn regenerate_recovery_codes(
    State(state): State<AppState>,
    bearer: SessionBearer,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = body.and_then(|b| b.refuse_recovery_code().map(|()| b.token()));
    let answer =
        in_session(&state, bearer, input, |s, token, code| s.session_regenerate_recovery_codes(token, code)).await;
    respond(answer, |codes| crate::handlers::with_recovery_codes(MSG_REGENERATED, &codes))
}

/// POST /v1/widget/session/orders `{"coin", "amount", "currency", "address"}`
pub async fn place_order(
    State(state): State<AppState>,
    bearer: SessionBearer,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = body.and_then(|b| {
        Ok(OrderRequest {
            coin: b.required_string("coin")?.to_owned(),
            amount: b.required_string("amount")?.to_owned(),
            currency: b.string("currency")?.unwrap_or("usd").to_owned(),
            address: b.required_string("address")?.to_owned(),
        })
    });
    let widget = state.widget.clone();
    let answer =
        in_session(&state, bearer, input, move |s, token, request| s.place_order(token, &request, &widget)).await;
    respond(answer, |order| {
        let message = if order.status.as_str() == "completed" { "Order completed." } else { "Order created." };
        body_response(StatusCode::OK, message, json!({ "order": order_json(&order) }))
    })
}

/// GET /v1/widget/orders/{id}: a partner's order (secret key).
pub async fn order(State(state): State<AppState>, bearer: Bearer, Path(id): Path<String>) -> Response {
    let input = OrderId::parse(&id).map_err(ApiError);
    let done = as_partner(&state, bearer, ErrorKind::Internal, input, |s, partner, id| s.order(partner, &id)).await;
    done.respond(|order| body_response(StatusCode::OK, "Order retrieved.", json!({ "order": order_json(&order) })))
}

/// The default page size of `GET /v1/widget/orders`.
pub const DEFAULT_ORDERS_LIMIT: usize = 20;

fn orders_input(query: Option<&str>) -> Result<(ContactId, Option<OrderId>, usize), ApiError> {
    let q = Query::parse(query)?;
    let contact = contact_id(q.get("contactId")?)?;
    let after = q.get("after")?.map(OrderId::parse).transpose().map_err(ApiError)?;
    let limit = match q.get("limit")? {
        None => DEFAULT_ORDERS_LIMIT,
        Some(text) => match text.parse::<usize>() {
            Ok(n) if text.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => return Err(ApiError::invalid("limit", "must be 1 to 100")),
        },
    };
    Ok((contact, after, limit))
}

/// GET /v1/widget/orders?contactId=&limit=&after=: a contact's orders, newest first.
pub async fn orders(State(state): State<AppState>, bearer: Bearer, RawQuery(query): RawQuery) -> Response {
    let input = orders_input(query.as_deref());
    let done = as_partner(&state, bearer, ErrorKind::Internal, input, |s, partner, (contact, after, limit)| {
        s.orders(partner, &contact, after.as_ref(), limit)
    })
    .await;
    done.respond(|page| {
        let orders: Vec<Value> = page.orders.iter().map(order_json).collect();
        let next = page.next.map(|id| id.to_string());
        body_response(StatusCode::OK, "Orders retrieved.", json!({ "orders": orders, "next": next }))
    })
}

/// GET /v1/widget/contacts?email=: the contact id of an email that signed in to the widget.
pub async fn contact(State(state): State<AppState>, bearer: Bearer, RawQuery(query): RawQuery) -> Response {
    let input = Query::parse(query.as_deref())
        .and_then(|q| q.get("email")?.map(str::to_owned).ok_or_else(|| ApiError::invalid("email", "is required")));
    let done = as_partner(&state, bearer, ErrorKind::Internal, input, |s, partner, email| {
        let email = rampart_core::checkout::normalize_email(&email)?;
        Ok((s.contact_by_email(partner, &email)?, email))
    })
    .await;
    done.respond(|(contact, email)| {
        body_response(StatusCode::OK, "Contact retrieved.", json!({ "contactId": contact.to_string(), "email": email }))
    })
}
