//! The partner dashboard's JSON routes (SPEC 11; `dashboard/API.md` is the contract the page
//! is built to): invitations, the two-step sign-in, the member's session, API keys with the
//! roll, widget settings, webhooks, the audit chain and the team.
//!
//! Sessions are a cookie, `rampart_dashboard` (`__Host-rampart_dashboard` when the public URL
//! is https, then `Secure` too), `HttpOnly`, `SameSite=Strict`, `Path=/`, holding a random token
//! of which the store keeps only the hash. Every state change must come from the server's own
//! origin (`Origin`, checked against `--public-url`) and, once a session exists, carry its CSRF
//! token in `X-CSRF-Token`. Roles are checked here and again in the core. Answers are never
//! cached; secrets appear in exactly one answer (the new key, the webhook secret, the recovery
//! codes, the invitation link) and never in a URL or a log.

use axum::extract::{FromRequestParts, Path, RawQuery, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rampart_core::partner::{KeyOverlap, WidgetSettings};
use rampart_core::team::{DashboardSecret, DashboardSession, Member, Permission, SignInNext};
use rampart_core::vocab::Role;
use rampart_core::{AuthMethod, Authenticated, Error, ErrorKind, Service, TwoFactorSetup};
use serde_json::{Value, json};
use zeroize::Zeroizing;

use crate::AppState;
use crate::error::{ApiError, body_response};
use crate::handlers::{Caller, blocking};
use crate::input::{JsonObject, Query};
use rampart_core::store::{ContactList, OrderFilter, OrderStatus};

/// The session cookie's name over http.
pub const COOKIE: &str = "rampart_dashboard";
/// Its name over https (the `__Host-` prefix: `Secure`, `Path=/`, no `Domain`).
pub const SECURE_COOKIE: &str = "__Host-rampart_dashboard";
/// The header every change of a signed-in session carries.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// The link of an invitation: the token in the fragment, which browsers never send to a server
/// or put in a `Referer`; the page reads it and removes it from the address bar.
pub fn invitation_link(public_url: &str, token: &DashboardSecret) -> String {
    format!("{}/dashboard/#invite={}", public_url.trim_end_matches('/'), token.expose())
}

/// The server's public base URL (`http://127.0.0.1:8080`), from the widget root it serves.
fn public_url(state: &AppState) -> String {
    let root = state.widget.root(state.service.config().environment).as_str();
    root.strip_suffix("widget/").unwrap_or(root).trim_end_matches('/').to_owned()
}

/// The origin a browser sends for the public URL (`scheme://host[:port]`).
fn public_origin(state: &AppState) -> String {
    let root = state.widget.root(state.service.config().environment);
    root.origin().ascii_serialization()
}

fn secure(state: &AppState) -> bool {
    state.widget.root(state.service.config().environment).scheme() == "https"
}

/// An error answer with the field it is about (`field`) and, for a 429, `retryAfter`.
fn error(e: Error) -> Response {
    let status = StatusCode::from_u16(e.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if status.is_server_error() {
        return ApiError(e).into_response();
    }
    let mut extra = serde_json::Map::new();
    // A wrong or missing code is about the code field, in the dashboard's own words.
    let (message, field) = match e.kind() {
        ErrorKind::TokenFailed => ("The code is wrong. Enter the newest code from your authenticator.", Some("code")),
        ErrorKind::TokenMissing => ("code is required", Some("code")),
        _ => (e.message(), e.field()),
    };
    if let Some(field) = field {
        extra.insert("field".into(), Value::from(field));
    }
    if let Some(seconds) = e.retry_after() {
        extra.insert("retryAfter".into(), Value::from(seconds));
    }
    let mut response = body_response(status, message, extra);
    if let Some(seconds) = e.retry_after() {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// Every dashboard answer is never cached (the routes' layer).
fn no_store(mut response: Response) -> Response {
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn ok(message: &str, extra: Value) -> Response {
    body_response(StatusCode::OK, message, extra)
}

/// The session token from the request's cookie.
fn session_cookie(headers: &HeaderMap) -> Option<Zeroizing<String>> {
    headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(';')).find_map(|c| {
        let (name, value) = c.trim().split_once('=')?;
        (name == COOKIE || name == SECURE_COOKIE).then(|| Zeroizing::new(value.to_owned()))
    })
}

/// `Set-Cookie` for a new session.
fn set_cookie(state: &AppState, mut response: Response, token: &DashboardSecret) -> Response {
    let value = if secure(state) {
        format!("{SECURE_COOKIE}={}; Path=/; HttpOnly; SameSite=Strict; Secure", token.expose())
    } else {
        format!("{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict", token.expose())
    };
    if let Ok(v) = HeaderValue::from_str(&value) {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
    response
}

/// `Set-Cookie` that removes the session cookie.
fn clear_cookie(state: &AppState, mut response: Response) -> Response {
    let value = if secure(state) {
        format!("{SECURE_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Secure; Max-Age=0")
    } else {
        format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")
    };
    if let Ok(v) = HeaderValue::from_str(&value) {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
    response
}

/// `Ok` when the request comes from the server's own origin (the `Origin` header, which every
/// browser sends with a POST, PUT or DELETE).
fn same_origin(state: &AppState, headers: &HeaderMap) -> Result<(), Error> {
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    if origin == Some(public_origin(state).as_str()) { Ok(()) } else { Err(ErrorKind::CsrfFailed.into()) }
}

fn me_json(s: &DashboardSession, service: &Service) -> rampart_core::Result<Value> {
    let partner = service.partner(&s.member.partner_id)?;
    let role = s.member.role;
    Ok(json!({
        "member": { "id": s.member.id.to_string(), "email": s.member.email, "role": role.as_str() },
        "partner": { "id": partner.id.to_string(), "name": partner.name, "environment": partner.environment.as_str() },
        "permissions": {
            "keys": role.may(Permission::Keys),
            "widget": role.may(Permission::Widget),
            "webhooks": role.may(Permission::Webhooks),
            "team": role.may(Permission::Team),
        },
    }))
}

fn setup_json(setup: &TwoFactorSetup, email: &str, issuer: &str) -> Value {
    json!({ "qrCode": setup.qr_code, "manualKey": setup.manual, "issuer": issuer, "accountName": email })
}

/// The issuer an authenticator app shows for a member's code.
fn issuer(service: &Service) -> String {
    format!("{}2FA", service.config().service_name)
}

/// A dashboard request's credentials: the session token, and for a change the headers the
/// CSRF defence needs.
pub(crate) struct Dashboard {
    token: Option<Zeroizing<String>>,
    csrf: Option<String>,
    origin_ok: bool,
}

impl<S: Send + Sync> FromRequestParts<S> for Dashboard
where
    AppState: axum::extract::FromRef<S>,
{
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let state = <AppState as axum::extract::FromRef<S>>::from_ref(state);
        let csrf = parts.headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let origin_ok = same_origin(&state, &parts.headers).is_ok();
        Ok(Self { token: session_cookie(&parts.headers), csrf, origin_ok })
    }
}

impl Dashboard {
    fn token(&self) -> Result<&str, Error> {
        self.token.as_deref().map(String::as_str).ok_or_else(|| ErrorKind::DashboardSessionRequired.into())
    }

    /// The signed-in session, for a read.
    fn read(&self, service: &Service) -> rampart_core::Result<DashboardSession> {
        service.dashboard_session(self.token()?)
    }

    /// The signed-in session, for a change: the session first (401), then the origin and the
    /// CSRF token (403), then the role (403).
    fn change(&self, service: &Service, permission: Option<Permission>) -> rampart_core::Result<DashboardSession> {
        let session = self.read(service)?;
        let token = self.token()?;
        let csrf_ok = self.csrf.as_deref().is_some_and(|given| service.dashboard_csrf_ok(token, given));
        if !self.origin_ok || !csrf_ok {
            return Err(ErrorKind::CsrfFailed.into());
        }
        if let Some(p) = permission {
            session.member.require(p)?;
        }
        Ok(session)
    }

    /// `Ok` when the request comes from the server's own origin: all a change needs before a
    /// session exists (the invitation, the sign-in).
    fn origin(&self) -> Result<(), Error> {
        if self.origin_ok { Ok(()) } else { Err(ErrorKind::CsrfFailed.into()) }
    }

    /// A change of a session not yet signed in (the setup and code steps): the origin only
    /// (the cookie is `SameSite=Strict` and the token unknown to the page until then).
    fn pre_session(&self) -> Result<&str, Error> {
        self.origin()?;
        self.token()
    }
}

/// A member's session as a [`Caller`] of the partner routes the dashboard shares (webhooks):
/// reads need a signed-in session; changes also the CSRF checks and the `webhooks` permission.
pub(crate) struct MemberRead(Dashboard);
pub(crate) struct WebhookEditor(Dashboard);

fn as_partner_call(s: DashboardSession) -> Authenticated {
    Authenticated { partner_id: s.member.partner_id, method: AuthMethod::SecretKey }
}

impl Caller for MemberRead {
    fn authenticate(&self, service: &Service) -> rampart_core::Result<Authenticated> {
        self.0.read(service).map(as_partner_call)
    }

    fn error_response(e: ApiError) -> Response {
        error(e.0)
    }
}

impl Caller for WebhookEditor {
    fn authenticate(&self, service: &Service) -> rampart_core::Result<Authenticated> {
        self.0.change(service, Some(Permission::Webhooks)).map(as_partner_call)
    }

    fn error_response(e: ApiError) -> Response {
        error(e.0)
    }
}

macro_rules! dashboard_caller {
    ($t:ident) => {
        impl<S: Send + Sync> FromRequestParts<S> for $t
        where
            AppState: axum::extract::FromRef<S>,
        {
            type Rejection = std::convert::Infallible;

            async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
                Dashboard::from_request_parts(parts, state).await.map(Self)
            }
        }
    };
}
dashboard_caller!(MemberRead);
dashboard_caller!(WebhookEditor);

/// Run `call` on the blocking pool and answer with `to_response`, or the error with its field.
async fn run<T: Send + 'static>(
    state: &AppState,
    call: impl FnOnce(&Service) -> rampart_core::Result<T> + Send + 'static,
    to_response: impl FnOnce(T) -> Response,
) -> Response {
    match blocking(state, ErrorKind::Internal, call).await {
        Ok(value) => to_response(value),
        Err(ApiError(e)) => error(e),
    }
}

fn body_or_error<T>(input: Result<T, ApiError>) -> Result<T, Error> {
    input.map_err(|ApiError(e)| e)
}

// ---- Invitation, sign-in, sign-out, me ------------------------------------------------------

/// POST /v1/dashboard/invitation `{"token"}`: what the invitation is (rate-limited per address).
pub(crate) async fn invitation(
    State(state): State<AppState>,
    crate::ratelimit::ClientIp(ip): crate::ratelimit::ClientIp,
    dashboard: Dashboard,
    body: Result<JsonObject, ApiError>,
) -> Response {
    if let Some(limited) = crate::widget::rate_limited(&state, ip) {
        return limited;
    }
    let input = body_or_error(body.and_then(|b| Ok(b.required_string("token")?.to_owned())));
    let input = input.and_then(|t| dashboard.origin().map(|()| t));
    run(
        &state,
        move |s| s.invitation(&input?),
        |i| {
            ok(
                "Invitation found.",
                json!({ "invitation": {
                    "email": i.email,
                    "role": i.role.as_str(),
                    "partnerName": i.partner_name,
                    "expiresAt": rampart_core::recovery::rfc3339(i.expires_at),
                }}),
            )
        },
    )
    .await
}

/// POST /v1/dashboard/invitation/accept `{"token","password"}`: the member, a setup session
/// (cookie) and the authenticator to set up.
pub(crate) async fn accept(
    State(state): State<AppState>,
    crate::ratelimit::ClientIp(ip): crate::ratelimit::ClientIp,
    dashboard: Dashboard,
    body: Result<JsonObject, ApiError>,
) -> Response {
    if let Some(limited) = crate::widget::rate_limited(&state, ip) {
        return limited;
    }
    let input = body_or_error(body.and_then(|b| {
        Ok((
            Zeroizing::new(b.required_string("token")?.to_owned()),
            Zeroizing::new(b.required_string("password")?.to_owned()),
        ))
    }));
    let st = state.clone();
    run(
        &state,
        move |s| {
            let (token, password) = input?;
            dashboard.origin()?;
            let (secret, session, setup) = s.accept_invitation(&token, &password)?;
            Ok((secret, session, setup, issuer(s)))
        },
        move |(secret, session, setup, issuer)| {
            let body = json!({
                "csrfToken": session.csrf_token,
                "twoFactor": setup_json(&setup, &session.member.email, &issuer),
            });
            set_cookie(&st, ok("Password set. Now set up your authenticator.", body), &secret)
        },
    )
    .await
}

/// POST /v1/dashboard/setup/enable `{"code"}`: the authenticator is on, the recovery codes
/// (once), and the session signed in.
pub(crate) async fn setup_enable(
    State(state): State<AppState>,
    dashboard: Dashboard,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = body_or_error(body.and_then(|b| Ok(Zeroizing::new(b.required_string("code")?.to_owned()))));
    run(
        &state,
        move |s| {
            let code = input?;
            let token = dashboard.pre_session()?;
            let (session, codes) = s.finish_member_setup(token, &code)?;
            let me = me_json(&session, s)?;
            Ok((session, codes, me))
        },
        |(session, codes, me)| {
            let codes: Vec<&str> = codes.as_slice().iter().map(|c| c.as_str()).collect();
            ok(
                "Two-factor authentication is on.",
                json!({ "recoveryCodes": codes, "csrfToken": session.csrf_token, "me": me }),
            )
        },
    )
    .await
}

/// POST /v1/dashboard/sign-in `{"email","password"}`: the code step (or, for a member who
/// never set up an authenticator, its setup), with a cookie; rate-limited per address.
pub(crate) async fn sign_in(
    State(state): State<AppState>,
    crate::ratelimit::ClientIp(ip): crate::ratelimit::ClientIp,
    dashboard: Dashboard,
    body: Result<JsonObject, ApiError>,
) -> Response {
    if let Some(limited) = crate::widget::rate_limited(&state, ip) {
        return limited;
    }
    let input = body_or_error(body.and_then(|b| {
        Ok((b.required_string("email")?.to_owned(), Zeroizing::new(b.required_string("password")?.to_owned())))
    }));
    let st = state.clone();
    run(
        &state,
        move |s| {
            let (email, password) = input?;
            dashboard.origin()?;
            Ok((s.member_sign_in(&email, &password)?, email, issuer(s)))
        },
        move |(next, email, issuer)| match next {
            SignInNext::Code(secret) => {
                set_cookie(&st, ok("Enter the code from your authenticator.", json!({ "next": "code" })), &secret)
            }
            SignInNext::Setup(secret, setup) => {
                let body = json!({
                    "next": "setup",
                    "csrfToken": rampart_core::team::csrf_token_of(&secret),
                    "twoFactor": setup_json(&setup, &email.trim().to_lowercase(), &issuer),
                });
                set_cookie(&st, ok("Set up your authenticator to finish signing in.", body), &secret)
            }
        },
    )
    .await
}

/// POST /v1/dashboard/sign-in/code `{"code"}` or `{"recoveryCode"}`: signed in.
pub(crate) async fn sign_in_code(
    State(state): State<AppState>,
    dashboard: Dashboard,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = body_or_error(body.and_then(|b| {
        let code = b.string("code")?.map(str::to_owned);
        let recovery = b.string("recoveryCode")?.map(str::to_owned);
        match (code, recovery) {
            (Some(_), Some(_)) => Err(ApiError(ErrorKind::FactorConflict.into())),
            (Some(code), None) => Ok(rampart_core::Factor::from(code.as_str())),
            (None, Some(r)) => Ok(rampart_core::Factor::recovery_code(&r)),
            (None, None) => Err(ApiError(ErrorKind::TokenMissing.into())),
        }
    }));
    run(
        &state,
        move |s| {
            let factor = input?;
            let token = dashboard.pre_session()?;
            let session = s.member_sign_in_code(token, factor)?;
            let me = me_json(&session, s)?;
            Ok((session, me))
        },
        |(session, me)| ok("Signed in.", json!({ "csrfToken": session.csrf_token, "me": me })),
    )
    .await
}

/// POST /v1/dashboard/sign-out: the session ends, the cookie goes.
pub(crate) async fn sign_out(State(state): State<AppState>, dashboard: Dashboard) -> Response {
    let st = state.clone();
    run(
        &state,
        move |s| {
            dashboard.change(s, None)?;
            s.end_dashboard_session(dashboard.token()?)
        },
        move |()| clear_cookie(&st, ok("Signed out.", json!({}))),
    )
    .await
}

/// GET /v1/dashboard/me: who is signed in, their partner and what their role may change.
pub(crate) async fn me(State(state): State<AppState>, dashboard: Dashboard) -> Response {
    run(
        &state,
        move |s| {
            let session = dashboard.read(s)?;
            Ok((me_json(&session, s)?, session.csrf_token))
        },
        |(me, csrf)| ok("Signed in.", json!({ "csrfToken": csrf, "me": me })),
    )
    .await
}

// ---- API keys ------------------------------------------------------------------------------

fn key_json(environment: &str, last4: Option<&str>) -> Value {
    json!({ "prefix": format!("sk_{environment}_"), "last4": last4 })
}

fn previous_json(environment: &str, p: Option<&rampart_core::partner::PreviousKeyInfo>) -> Value {
    p.map_or(Value::Null, |p| {
        let mut v = key_json(environment, p.last4.as_deref());
        v["expiresAt"] = Value::from(rampart_core::recovery::rfc3339(p.expires_at));
        v
    })
}

/// GET /v1/dashboard/keys: the publishable key; the secret key only as prefix and last 4.
pub(crate) async fn keys(State(state): State<AppState>, dashboard: Dashboard) -> Response {
    run(
        &state,
        move |s| s.partner(&dashboard.read(s)?.member.partner_id),
        |p| {
            let env = p.environment.as_str();
            ok(
                "API keys retrieved.",
                json!({
                    "publishableKey": p.publishable_key,
                    "secretKey": key_json(env, p.secret_key_last4.as_deref()),
                    "previousKey": previous_json(env, p.previous_key.as_ref()),
                }),
            )
        },
    )
    .await
}

/// POST /v1/dashboard/keys/roll `{"expiresIn"}`: the new secret key, in this answer only.
pub(crate) async fn roll(
    State(state): State<AppState>,
    dashboard: Dashboard,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = body_or_error(body.and_then(|b| {
        let given = b.string("expiresIn")?.ok_or_else(|| ApiError::invalid("expiresIn", "is required"))?;
        KeyOverlap::parse(given).map_err(ApiError)
    }));
    run(
        &state,
        move |s| {
            let session = dashboard.change(s, Some(Permission::Keys))?;
            let overlap = input?;
            let rolled = s.member_roll_secret_key(&session.member, overlap)?;
            Ok((rolled, s.config().environment))
        },
        |(rolled, env)| {
            ok(
                "Secret key rolled. Copy it now: it is not shown again.",
                json!({
                    "secretKey": rolled.secret_key.expose(),
                    "previousKey": previous_json(env.as_str(), rolled.previous.as_ref()),
                }),
            )
        },
    )
    .await
}

// ---- Widget --------------------------------------------------------------------------------

fn widget_json(p: &rampart_core::Partner, (script, iframe): (String, String)) -> Value {
    json!({
        "publishableKey": p.publishable_key,
        "widgetText": p.widget_text,
        "widgetButtonURL": p.widget_button_url,
        "widgetOrigins": p.widget_origins,
        "approved": p.widget_approved || p.environment == rampart_core::Environment::Sandbox,
        "snippets": { "script": script, "iframe": iframe },
        "previewUrl": format!("/widget/?publicKey={}", p.publishable_key),
    })
}

/// The partner and its snippets (the core's, as `/v1/widget/snippet` builds them).
fn partner_and_snippets(
    state: &AppState,
) -> impl Fn(&Service, &rampart_core::PartnerId) -> rampart_core::Result<(rampart_core::Partner, (String, String))> + use<>
{
    let widget = state.widget.clone();
    move |s, partner| Ok((s.partner(partner)?, crate::widget::default_snippets(s, partner, &widget)?))
}

/// GET /v1/dashboard/widget: the settings, snippets and the preview's URL.
pub(crate) async fn widget(State(state): State<AppState>, dashboard: Dashboard) -> Response {
    let load = partner_and_snippets(&state);
    run(
        &state,
        move |s| load(s, &dashboard.read(s)?.member.partner_id),
        |(p, snippets)| ok("Widget settings retrieved.", widget_json(&p, snippets)),
    )
    .await
}

/// PUT /v1/dashboard/widget `{"widgetText"?,"widgetButtonURL"?,"widgetOrigins"?}`.
pub(crate) async fn set_widget(
    State(state): State<AppState>,
    dashboard: Dashboard,
    body: Result<JsonObject, ApiError>,
) -> Response {
    // A member given is set; `null` or "" clears a text or URL; a member left out stays.
    let input = body_or_error(body.and_then(|b| {
        let cleared = |name: &str| -> Result<Option<Option<String>>, ApiError> {
            if !b.has(name) {
                return Ok(None);
            }
            Ok(Some(b.string(name)?.filter(|v| !v.is_empty()).map(str::to_owned)))
        };
        let origins = if b.has("widgetOrigins") {
            Some(b.string_list("widgetOrigins")?.into_iter().map(str::to_owned).collect::<Vec<_>>())
        } else {
            None
        };
        Ok((cleared("widgetText")?, cleared("widgetButtonURL")?, origins))
    }));
    let load = partner_and_snippets(&state);
    run(
        &state,
        move |s| {
            let session = dashboard.change(s, Some(Permission::Widget))?;
            let (text, url, origins) = input?;
            let partner = session.member.partner_id;
            let change = WidgetSettings {
                text: text.as_ref().map(Option::as_deref),
                button_url: url.as_ref().map(Option::as_deref),
                origins: origins.as_deref(),
            };
            s.update_widget_settings(&session.member.actor(), &partner, &change)?;
            load(s, &partner)
        },
        |(p, snippets)| ok("Widget settings saved.", widget_json(&p, snippets)),
    )
    .await
}

// ---- Audit ---------------------------------------------------------------------------------

/// GET /v1/dashboard/audit?after=&limit=: the partner's chain, with its verification.
pub(crate) async fn audit(State(state): State<AppState>, dashboard: Dashboard, RawQuery(query): RawQuery) -> Response {
    let input = body_or_error(crate::audit::page_input(query.as_deref()));
    run(
        &state,
        move |s| {
            let (after, limit) = input?;
            let partner = dashboard.read(s)?.member.partner_id;
            let page = s.audit_events(&partner, None, after, limit)?;
            let report = s.verify_audit(Some(&partner))?.into_iter().next();
            Ok((page, report))
        },
        |(page, report)| {
            let verification = report.map_or(
                json!({ "ok": true, "rows": 0, "firstBadSeq": null }),
                |r| json!({ "ok": r.first_bad_seq.is_none(), "rows": r.rows, "firstBadSeq": r.first_bad_seq }),
            );
            ok(
                "Audit events retrieved.",
                json!({ "events": page.events, "next": page.next, "verification": verification }),
            )
        },
    )
    .await
}

// ---- Overview, orders, contacts ------------------------------------------------------------

/// GET /v1/dashboard/overview: the environment, the widget's approval and the go-live checklist.
pub(crate) async fn overview(State(state): State<AppState>, dashboard: Dashboard) -> Response {
    run(
        &state,
        move |s| s.overview(&dashboard.read(s)?.member.partner_id),
        |o| {
            ok(
                "Overview retrieved.",
                json!({
                    "environment": o.environment.as_str(),
                    "widgetApproved": o.widget_approved,
                    "checklist": {
                        "originRegistered": o.origin_registered,
                        "sandboxOrderPlaced": o.sandbox_order_placed,
                        "webhookAnswered": o.webhook_answered,
                    },
                }),
            )
        },
    )
    .await
}

/// A `YYYY-MM-DD` date (UTC) as the Unix second it starts; 400 naming `name` otherwise.
fn date(name: &str, text: &str) -> Result<u64, ApiError> {
    let rule = || ApiError::invalid(name, "must be a date YYYY-MM-DD");
    let shaped = text.len() == 10
        && text.bytes().enumerate().all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() });
    if !shaped {
        return Err(rule());
    }
    let millis = rampart_core::audit::parse_rfc3339_millis(&format!("{text}T00:00:00Z")).ok_or_else(rule)?;
    // The parser accepts what it can read; a date that does not print back (2026-02-30) is not one.
    if rampart_core::recovery::rfc3339(millis / 1000).get(..10) != Some(text) {
        return Err(rule());
    }
    Ok(millis / 1000)
}

/// The orders list's filters from the query: `status`, `coin`, `from`, `to` (inclusive),
/// `contactId`; each a 400 naming it when malformed.
fn order_filter(q: &Query) -> Result<OrderFilter, ApiError> {
    let status = match q.get("status")? {
        None | Some("") => None,
        Some(s) => Some(
            OrderStatus::from_name(s)
                .ok_or_else(|| ApiError::invalid("status", "must be created, completed or failed"))?,
        ),
    };
    let coin = match q.get("coin")? {
        None | Some("") => None,
        Some(c) if (1..=16).contains(&c.len()) && c.bytes().all(|b| b.is_ascii_alphanumeric()) => {
            Some(c.to_ascii_lowercase())
        }
        Some(_) => return Err(ApiError::invalid("coin", "must be a coin symbol such as btc")),
    };
    let contact = match q.get("contactId")? {
        None | Some("") => None,
        Some(c) => Some(rampart_core::ContactId::parse(c).map_err(ApiError)?),
    };
    let from = q.get("from")?.filter(|v| !v.is_empty()).map(|v| date("from", v)).transpose()?;
    let until = q.get("to")?.filter(|v| !v.is_empty()).map(|v| date("to", v).map(|d| d + 86_400)).transpose()?;
    if let (Some(f), Some(u)) = (from, until)
        && u <= f
    {
        return Err(ApiError::invalid("to", "must not be before from"));
    }
    Ok(OrderFilter { status, coin, contact, from, until })
}

fn page_limit(q: &Query, default: usize) -> Result<usize, ApiError> {
    let max = rampart_core::reports::MAX_PAGE;
    let n = crate::audit::integer(q.get("limit")?, "limit", 1, max as u64, default as u64)?;
    Ok(usize::try_from(n).unwrap_or(max))
}

/// GET /v1/dashboard/orders?status=&coin=&from=&to=&contactId=&limit=&cursor=: newest first.
pub(crate) async fn orders(State(state): State<AppState>, dashboard: Dashboard, RawQuery(query): RawQuery) -> Response {
    let input = body_or_error(Query::parse(query.as_deref()).and_then(|q| {
        let after = match q.get("cursor")? {
            None | Some("") => None,
            Some(c) => Some(
                rampart_core::OrderId::parse(c)
                    .map_err(|_| ApiError::invalid("cursor", "must be the next value of the page before"))?,
            ),
        };
        Ok((order_filter(&q)?, page_limit(&q, 50)?, after))
    }));
    run(
        &state,
        move |s| {
            let (filter, limit, after) = input?;
            let partner = dashboard.read(s)?.member.partner_id;
            s.partner_orders(&partner, &filter, after.as_ref(), limit)
        },
        |(orders, next)| {
            let orders: Vec<Value> = orders.iter().map(rampart_core::checkout::order_json).collect();
            ok("Orders retrieved.", json!({ "orders": orders, "next": next.map(|n| n.to_string()) }))
        },
    )
    .await
}

/// A CSV cell that a spreadsheet would read as a formula (`=`, `+`, `-`, `@`, or a tab or
/// carriage return first) is prefixed with `'` (OWASP's CSV injection rule).
fn cell(text: &str) -> std::borrow::Cow<'_, str> {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{text}").into() } else { text.into() }
}

const CSV_HEADER: [&str; 11] = [
    "orderId",
    "contactId",
    "coin",
    "amount",
    "currency",
    "address",
    "price",
    "quantity",
    "status",
    "createdAt",
    "updatedAt",
];

fn csv_rows(orders: &[rampart_core::checkout::Order], header: bool) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
    if header {
        w.write_record(CSV_HEADER)?;
    }
    for o in orders {
        let (id, contact) = (o.id.to_string(), o.contact_id.to_string());
        let (created, updated) =
            (rampart_core::recovery::rfc3339(o.created_at), rampart_core::recovery::rfc3339(o.updated_at));
        let row = [
            &*id,
            &*contact,
            &o.coin,
            &o.amount,
            &o.currency,
            &o.address,
            &o.price,
            &o.quantity,
            o.status.as_str(),
            &*created,
            &*updated,
        ];
        w.write_record(row.iter().map(|v| cell(v)).collect::<Vec<_>>().iter().map(|c| c.as_bytes()))?;
    }
    w.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

/// GET /v1/dashboard/orders.csv?status=&coin=&from=&to=&contactId=: every filtered row, with
/// a header row (RFC 4180, CRLF), streamed a chunk of orders at a time: the server never holds
/// more than one chunk.
pub(crate) async fn orders_csv(
    State(state): State<AppState>,
    dashboard: Dashboard,
    RawQuery(query): RawQuery,
) -> Response {
    let filter = match body_or_error(Query::parse(query.as_deref()).and_then(|q| order_filter(&q))) {
        Ok(f) => f,
        Err(e) => return error(e),
    };
    // Check the session before the answer starts: a 401 is still a JSON answer.
    let partner = match blocking(&state, ErrorKind::Internal, move |s| Ok(dashboard.read(s)?.member.partner_id)).await {
        Ok(p) => p,
        Err(ApiError(e)) => return error(e),
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(2);
    let service = state.service.clone();
    tokio::task::spawn_blocking(move || {
        let first = csv_rows(&[], true).map_err(std::io::Error::other);
        if tx.blocking_send(first).is_err() {
            return;
        }
        let sent = service.export_orders(&partner, &filter, |chunk| {
            let rows = csv_rows(chunk, false).map_err(|_| rampart_core::Error::new(ErrorKind::Internal))?;
            // The client went away: stop reading.
            tx.blocking_send(Ok(rows)).map_err(|_| rampart_core::Error::new(ErrorKind::Internal))
        });
        if let Err(e) = sent
            && !tx.is_closed()
        {
            tracing::error!(kind = e.kind().name(), "orders export failed part way");
            let _ = tx.blocking_send(Err(std::io::Error::other("export failed")));
        }
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) });
    let mut response = axum::body::Body::from_stream(stream).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/csv; charset=utf-8; header=present"));
    headers.insert(header::CONTENT_DISPOSITION, HeaderValue::from_static("attachment; filename=\"orders.csv\""));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// GET /v1/dashboard/contacts: the partner's contacts counted by 2FA state.
pub(crate) async fn contacts(State(state): State<AppState>, dashboard: Dashboard) -> Response {
    run(
        &state,
        move |s| s.contact_counts(&dashboard.read(s)?.member.partner_id),
        |c| {
            ok(
                "Contacts counted.",
                json!({ "counts": {
                    "enabled": c.enabled,
                    "notEnabled": c.not_enabled,
                    "locked": c.locked,
                    "kycWithout2fa": c.kyc_without_2fa,
                    "lowRecoveryCodes": c.low_recovery_codes,
                }}),
            )
        },
    )
    .await
}

/// GET /v1/dashboard/contacts/list?kind=kyc-without-2fa|locked|low-recovery-codes&cursor=&limit=
pub(crate) async fn contacts_list(
    State(state): State<AppState>,
    dashboard: Dashboard,
    RawQuery(query): RawQuery,
) -> Response {
    let input = body_or_error(Query::parse(query.as_deref()).and_then(|q| {
        let list = match q.get("kind")? {
            Some("kyc-without-2fa") => ContactList::KycWithout2fa,
            Some("locked") => ContactList::Locked,
            Some("low-recovery-codes") => ContactList::LowRecoveryCodes,
            _ => return Err(ApiError::invalid("kind", "must be kyc-without-2fa, locked or low-recovery-codes")),
        };
        let after = match q.get("cursor")? {
            None | Some("") => None,
            Some(c) => Some(
                rampart_core::ContactId::parse(c)
                    .map_err(|_| ApiError::invalid("cursor", "must be the next value of the page before"))?,
            ),
        };
        Ok((list, after, page_limit(&q, 50)?))
    }));
    run(
        &state,
        move |s| {
            let (list, after, limit) = input?;
            s.contacts_on(&dashboard.read(s)?.member.partner_id, list, after, limit)
        },
        |page| {
            let contacts: Vec<Value> = page
                .contacts
                .iter()
                .map(|c| {
                    let state = if c.locked {
                        "locked"
                    } else if c.enabled {
                        "enabled"
                    } else {
                        "not_enabled"
                    };
                    json!({
                        "contactId": c.contact_id.to_string(),
                        "twoFactor": state,
                        "kycPassed": c.kyc_passed,
                        "recoveryCodesRemaining": c.recovery_codes_remaining,
                    })
                })
                .collect();
            ok("Contacts retrieved.", json!({ "contacts": contacts, "next": page.next.map(|n| n.to_string()) }))
        },
    )
    .await
}

// ---- Team ----------------------------------------------------------------------------------

fn member_json(m: &Member) -> Value {
    json!({
        "id": m.id.to_string(),
        "email": m.email,
        "role": m.role.as_str(),
        "twoFactor": m.two_factor,
        "createdAt": rampart_core::recovery::rfc3339(m.created_at),
    })
}

/// GET /v1/dashboard/team (owners).
pub(crate) async fn team(State(state): State<AppState>, dashboard: Dashboard) -> Response {
    run(
        &state,
        move |s| {
            let session = dashboard.read(s)?;
            s.team(&session.member)
        },
        |t| {
            let members: Vec<Value> = t.members.iter().map(member_json).collect();
            let invitations: Vec<Value> = t
                .invitations
                .iter()
                .map(|i| {
                    json!({
                        "id": i.id.to_string(),
                        "email": i.email,
                        "role": i.role.as_str(),
                        "expiresAt": rampart_core::recovery::rfc3339(i.expires_at),
                    })
                })
                .collect();
            ok("Team retrieved.", json!({ "members": members, "invitations": invitations }))
        },
    )
    .await
}

fn role_field(b: &JsonObject) -> Result<Role, ApiError> {
    let given = b.required_string("role")?;
    given.parse().map_err(ApiError)
}

/// POST /v1/dashboard/team/invitations `{"email","role"}` (owners): the link, in this answer only.
pub(crate) async fn invite(
    State(state): State<AppState>,
    dashboard: Dashboard,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = body_or_error(body.and_then(|b| Ok((b.required_string("email")?.to_owned(), role_field(&b)?))));
    let base = public_url(&state);
    run(
        &state,
        move |s| {
            let session = dashboard.change(s, Some(Permission::Team))?;
            let (email, role) = input?;
            s.invite_member(&session.member, &email, role)
        },
        move |issued| {
            ok(
                "Invitation created. Send the link yourself: no email is sent.",
                json!({
                    "link": invitation_link(&base, &issued.token),
                    "expiresAt": rampart_core::recovery::rfc3339(issued.invitation.expires_at),
                }),
            )
        },
    )
    .await
}

fn uuid_path(id: &str) -> Result<uuid::Uuid, Error> {
    uuid::Uuid::try_parse(id).map_err(|_| ErrorKind::MemberNotFound.into())
}

/// DELETE /v1/dashboard/team/invitations/{id} (owners).
pub(crate) async fn revoke(State(state): State<AppState>, dashboard: Dashboard, Path(id): Path<String>) -> Response {
    run(
        &state,
        move |s| {
            let session = dashboard.change(s, Some(Permission::Team))?;
            s.revoke_invitation(&session.member, uuid_path(&id)?)
        },
        |()| ok("Invitation revoked.", json!({})),
    )
    .await
}

/// PUT /v1/dashboard/team/members/{id} `{"role"}` (owners).
pub(crate) async fn set_role(
    State(state): State<AppState>,
    dashboard: Dashboard,
    Path(id): Path<String>,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = body_or_error(body.and_then(|b| role_field(&b)));
    run(
        &state,
        move |s| {
            let session = dashboard.change(s, Some(Permission::Team))?;
            s.set_member_role(&session.member, uuid_path(&id)?, input?)
        },
        |()| ok("Role changed.", json!({})),
    )
    .await
}

/// DELETE /v1/dashboard/team/members/{id} (owners): their sessions end at once.
pub(crate) async fn remove(State(state): State<AppState>, dashboard: Dashboard, Path(id): Path<String>) -> Response {
    run(
        &state,
        move |s| {
            let session = dashboard.change(s, Some(Permission::Team))?;
            s.remove_member(&session.member, uuid_path(&id)?)
        },
        |()| ok("Member removed.", json!({})),
    )
    .await
}

/// The dashboard's routes, merged into the server's router.
pub(crate) fn routes() -> axum::Router<AppState> {
    use crate::webhooks;
    use axum::routing::{delete, get, post, put};
    axum::Router::new()
        .route("/v1/dashboard/invitation", post(invitation))
        .route("/v1/dashboard/invitation/accept", post(accept))
        .route("/v1/dashboard/setup/enable", post(setup_enable))
        .route("/v1/dashboard/sign-in", post(sign_in))
        .route("/v1/dashboard/sign-in/code", post(sign_in_code))
        .route("/v1/dashboard/sign-out", post(sign_out))
        .route("/v1/dashboard/me", get(me))
        .route("/v1/dashboard/overview", get(overview))
        .route("/v1/dashboard/orders", get(orders))
        .route("/v1/dashboard/orders.csv", get(orders_csv))
        .route("/v1/dashboard/contacts", get(contacts))
        .route("/v1/dashboard/contacts/list", get(contacts_list))
        .route("/v1/dashboard/keys", get(keys))
        .route("/v1/dashboard/keys/roll", post(roll))
        .route("/v1/dashboard/widget", get(widget).put(set_widget))
        .route("/v1/dashboard/audit", get(audit))
        .route("/v1/dashboard/team", get(team))
        .route("/v1/dashboard/team/invitations", post(invite))
        .route("/v1/dashboard/team/invitations/{id}", delete(revoke))
        .route("/v1/dashboard/team/members/{id}", put(set_role).delete(remove))
        .route(
            "/v1/dashboard/webhooks",
            get(webhooks::list_with_events::<MemberRead>).post(webhooks::create::<WebhookEditor>),
        )
        .route("/v1/dashboard/webhooks/{id}", delete(webhooks::delete::<WebhookEditor>))
        .route("/v1/dashboard/webhooks/{id}/rotate-secret", post(webhooks::rotate_secret::<WebhookEditor>))
        .route("/v1/dashboard/webhooks/{id}/test", post(webhooks::test::<WebhookEditor>))
        .route("/v1/dashboard/webhooks/{id}/deliveries", get(webhooks::deliveries::<MemberRead>))
        .route("/v1/dashboard/webhooks/messages/{id}/resend", post(webhooks::resend::<WebhookEditor>))
        // Every dashboard answer, the shared webhook handlers' included: never cached.
        .layer(axum::middleware::map_response(|response: Response| async move { no_store(response) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_read_by_either_name_only() {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, HeaderValue::from_static("a=1; rampart_dashboard=ds_x; b=2"));
        assert_eq!(session_cookie(&h).as_deref().map(String::as_str), Some("ds_x"));
        h.insert(header::COOKIE, HeaderValue::from_static("__Host-rampart_dashboard=ds_y"));
        assert_eq!(session_cookie(&h).as_deref().map(String::as_str), Some("ds_y"));
        h.insert(header::COOKIE, HeaderValue::from_static("xrampart_dashboard=ds_z"));
        assert!(session_cookie(&h).is_none());
    }
}
