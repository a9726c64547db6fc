//! The widget routes (SPEC section 4, extension): `POST /v1/widget/validate`, `/url` and
//! `/snippet`. The body is the widget options object; the partner's publishable key is filled
//! in when neither `publicKey` nor `apiKey` is given, and the server's environment is the
//! environment hint.
//!
//! - `validate` always answers 200 with the validation result (`valid`, `errors`, `warnings`,
//!   `mode`): checking options is what it is for. `?target=script` checks them for the script
//!   (a container id is then required); the default target is `url`.
//! - `url` and `snippet` answer 400 when the options have errors, with the message naming the
//!   offending option paths and the same `errors`, `warnings` and `mode` fields.
//! - `url?sign=true` signs the URL with the caller's secret key (the bearer credential), so a
//!   caller authenticated with a legacy JWT cannot ask for it (400).

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use rampart_core::widget::{
    IframeOptions, Target, Validation, WidgetConfig, build_url, csp_directives, iframe_snippet, script_snippet,
    script_snippet_with_nonce, sign_url, validate,
};
use rampart_core::{Environment, ErrorKind, PartnerId, Service};
use serde::Serialize;
use serde_json::{Map, Value};
use zeroize::Zeroizing;

use crate::AppState;
use crate::error::{ApiError, body_response};
use crate::handlers::{Bearer, as_partner, blocking};
use crate::input::{JsonObject, Query};

/// The options with the partner's publishable key filled in when no key is given.
fn with_partner_key(
    service: &Service,
    partner: &PartnerId,
    mut options: Map<String, Value>,
) -> rampart_core::Result<Map<String, Value>> {
    if !options.contains_key("publicKey") && !options.contains_key("apiKey") {
        let key = service.partner(partner)?.publishable_key;
        options.insert("publicKey".into(), Value::String(key));
    }
    Ok(options)
}

fn check(
    service: &Service,
    partner: &PartnerId,
    options: Map<String, Value>,
    target: Target,
    widget: &WidgetConfig,
) -> rampart_core::Result<Validation> {
    let options = with_partner_key(service, partner, options)?;
    let environment: Environment = service.config().environment;
    Ok(validate(&options, target, Some(environment), widget))
}

/// The partner's script and iframe snippets with no option but its key (and, for the script,
/// the container `rampart-widget`): what the dashboard's Widget page offers to copy.
pub(crate) fn default_snippets(
    service: &Service,
    partner: &PartnerId,
    widget: &WidgetConfig,
) -> rampart_core::Result<(String, String)> {
    let mut options = Map::new();
    options.insert("targetContainerId".into(), Value::from("rampart-widget"));
    let validation = check(service, partner, options, Target::Script, widget)?;
    let options = validation.options.ok_or(ErrorKind::Internal)?;
    let script = script_snippet(&options, widget).map_err(|_| rampart_core::Error::new(ErrorKind::Internal))?;
    Ok((script, iframe_snippet(&options, &IframeOptions::default(), widget)))
}

/// `?target=url|script` (default `url`).
fn target(query: Option<&str>) -> Result<Target, ApiError> {
    match Query::parse(query)?.get("target")? {
        None | Some("url") => Ok(Target::Url),
        Some("script") => Ok(Target::Script),
        Some(_) => Err(ApiError::invalid("target", "must be \"url\" or \"script\"")),
    }
}

/// `?sign=true|false` (default false).
fn sign(query: Option<&str>) -> Result<bool, ApiError> {
    match Query::parse(query)?.get("sign")? {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(_) => Err(ApiError::invalid("sign", "must be true or false")),
    }
}

#[derive(Serialize)]
struct Checked<'a> {
    valid: bool,
    #[serde(flatten)]
    validation: &'a Validation,
}

/// The 400 for options with errors: the message names every offending path.
fn invalid(validation: &Validation) -> Response {
    let mut paths: Vec<&str> =
        validation.errors.iter().map(|e| if e.path.is_empty() { "options" } else { e.path.as_str() }).collect();
    paths.dedup();
    let message = format!("Invalid widget options: {}", paths.join(", "));
    body_response(StatusCode::BAD_REQUEST, &message, Checked { valid: false, validation })
}

/// POST /v1/widget/validate[?target=url|script]
pub async fn validate_options(
    State(state): State<AppState>,
    bearer: Bearer,
    RawQuery(query): RawQuery,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = target(query.as_deref()).and_then(|t| Ok((t, body?.into_fields()?)));
    let widget = state.widget.clone();
    let done = as_partner(&state, bearer, ErrorKind::Internal, input, move |s, partner, (target, options)| {
        check(s, partner, options, target, &widget)
    })
    .await;
    done.respond(|validation| {
        let valid = validation.is_valid();
        body_response(StatusCode::OK, "Widget options checked.", Checked { valid, validation: &validation })
    })
}

#[derive(Serialize)]
struct Built<'a> {
    url: String,
    signed: bool,
    warnings: &'a [rampart_core::widget::Issue],
    mode: rampart_core::widget::Mode,
}

/// POST /v1/widget/url[?sign=true]
pub async fn url(
    State(state): State<AppState>,
    bearer: Bearer,
    RawQuery(query): RawQuery,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = sign(query.as_deref()).and_then(|sign| Ok((sign, body?.into_fields()?)));
    // Only a secret key can sign; it is the caller's own credential, checked before use, and
    // copied only when a signature is asked for.
    let secret_key = if matches!(input, Ok((true, _))) { bearer.secret_key() } else { None };
    let widget = state.widget.clone();
    let done = as_partner(&state, bearer, ErrorKind::Internal, input, move |s, partner, (sign, options)| {
        let validation = check(s, partner, options, Target::Url, &widget)?;
        let Some(options) = &validation.options else { return Ok((validation, None)) };
        let url = if !sign {
            build_url(options, &widget)
        } else {
            let key = secret_key.as_deref().ok_or_else(|| {
                rampart_core::Error::invalid_input("sign", "needs a secret key as the bearer credential")
            })?;
            sign_url(options, key, now(), &widget)
                .map_err(|e| rampart_core::Error::invalid_input("sign", e.message()))?
        };
        Ok((validation, Some((url, sign))))
    })
    .await;
    done.respond(|(validation, built)| match built {
        None => invalid(&validation),
        Some((url, signed)) => body_response(
            StatusCode::OK,
            "Widget URL built.",
            Built { url, signed, warnings: &validation.warnings, mode: validation.mode },
        ),
    })
}

#[derive(Serialize)]
struct Snippets<'a> {
    script: String,
    iframe: String,
    csp: rampart_core::widget::CspDirectives,
    warnings: &'a [rampart_core::widget::Issue],
    mode: rampart_core::widget::Mode,
}

/// POST /v1/widget/snippet[?nonce=N]: the script snippet (with a CSP `nonce` on both script
/// elements when given), the iframe snippet and the host page's CSP directives, from options
/// checked for the script.
pub async fn snippet(
    State(state): State<AppState>,
    bearer: Bearer,
    RawQuery(query): RawQuery,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let nonce = Query::parse(query.as_deref()).and_then(|q| Ok(q.get("nonce")?.map(str::to_owned)));
    let input = nonce.and_then(|nonce| Ok((nonce, body?.into_fields()?)));
    let widget = state.widget.clone();
    let done = as_partner(&state, bearer, ErrorKind::Internal, input, move |s, partner, (nonce, options)| {
        Ok((nonce, check(s, partner, options, Target::Script, &widget)?))
    })
    .await;
    let widget = state.widget.clone();
    done.respond(move |(nonce, validation)| {
        let Some(options) = &validation.options else { return invalid(&validation) };
        let script = match &nonce {
            Some(nonce) => script_snippet_with_nonce(options, nonce, &widget),
            None => script_snippet(options, &widget),
        };
        match script {
            Ok(script) => {
                let snippets = Snippets {
                    script,
                    iframe: iframe_snippet(options, &IframeOptions::default(), &widget),
                    csp: csp_directives(options.environment(), &widget),
                    warnings: &validation.warnings,
                    mode: validation.mode,
                };
                body_response(StatusCode::OK, "Widget snippets built.", snippets)
            }
            Err(rampart_core::widget::SnippetError::NonceInvalid) => axum::response::IntoResponse::into_response(
                ApiError::invalid("nonce", "must be 1 to 256 characters of A-Z a-z 0-9 + / = - _"),
            ),
            // Options checked for the script always make one; answer as bad input if not.
            Err(e) => axum::response::IntoResponse::into_response(ApiError::invalid("options", e.message())),
        }
    })
}

/// A coin as the widget page lists it.
#[derive(Serialize)]
struct CoinInfo<'a> {
    symbol: &'a str,
    name: &'a str,
    chain: &'static str,
}

/// What the widget page needs about a partner, from its publishable key: no secret.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PublicConfig<'a> {
    partner_name: String,
    environment: &'static str,
    /// Sandbox widgets need no approval; production ones an operator's.
    approved: bool,
    widget_text: Option<String>,
    #[serde(rename = "widgetButtonURL")]
    widget_button_url: Option<String>,
    widget_origins: Vec<String>,
    coins: Vec<CoinInfo<'a>>,
    /// Whether the widget can take orders: sandbox only (no payment provider here).
    purchases: bool,
}

/// GET /v1/widget/config?publicKey=pk_...: public (the publishable key is not a credential).
pub async fn config(State(state): State<AppState>, RawQuery(query): RawQuery) -> Response {
    let key = Query::parse(query.as_deref()).and_then(|q| {
        q.get("publicKey")?.map(str::to_owned).ok_or_else(|| ApiError::invalid("publicKey", "is required"))
    });
    let key = match key {
        Ok(key) => key,
        Err(e) => return axum::response::IntoResponse::into_response(e),
    };
    let found = blocking(&state, ErrorKind::Internal, move |s| s.partner_by_publishable_key(&key)).await;
    let widget = state.widget.clone();
    match found {
        Ok(Some(p)) => {
            let approved = p.environment == Environment::Sandbox || p.widget_approved;
            let coins = widget
                .coins()
                .iter()
                .map(|c| CoinInfo { symbol: &c.symbol, name: &c.name, chain: c.chain.name() })
                .collect();
            let body = PublicConfig {
                partner_name: p.name,
                environment: p.environment.as_str(),
                approved,
                widget_text: p.widget_text,
                widget_button_url: p.widget_button_url,
                widget_origins: p.widget_origins,
                coins,
                purchases: p.environment == Environment::Sandbox,
            };
            body_response(StatusCode::OK, "Widget configuration retrieved.", body)
        }
        Ok(None) => axum::response::IntoResponse::into_response(ApiError::from(ErrorKind::PartnerNotFound)),
        Err(e) => axum::response::IntoResponse::into_response(e),
    }
}

/// The 429 (with `Retry-After`) for a client address over [`crate::PUBLIC_RATE`] on the public
/// widget routes, or `None` when it may go on.
pub(crate) fn rate_limited(state: &AppState, ip: std::net::IpAddr) -> Option<Response> {
    let seconds = state.public_limit.take(ip, std::time::Instant::now()).err()?;
    let message = format!("Too many requests, try again in {seconds} seconds");
    let mut response = crate::error::message_response(StatusCode::TOO_MANY_REQUESTS, &message);
    response.headers_mut().insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from(seconds));
    Some(response)
}

/// POST /v1/widget/check[?target=url|script]: public, for the widget page. The body is the
/// widget options with the partner's `publicKey`; the answer is `/v1/widget/validate`'s.
/// Rate-limited per client address (429 with `Retry-After`).
pub async fn public_check(
    State(state): State<AppState>,
    crate::ratelimit::ClientIp(ip): crate::ratelimit::ClientIp,
    RawQuery(query): RawQuery,
    body: Result<JsonObject, ApiError>,
) -> Response {
    if let Some(refused) = rate_limited(&state, ip) {
        return refused;
    }
    let input = target(query.as_deref()).and_then(|t| {
        let options = body?.into_fields()?;
        let key = match options.get("publicKey") {
            Some(Value::String(key)) => key.clone(),
            Some(_) => return Err(ApiError::invalid("publicKey", "must be a string")),
            None => return Err(ApiError::invalid("publicKey", "is required")),
        };
        Ok((t, key, options))
    });
    let (target, key, options) = match input {
        Ok(input) => input,
        Err(e) => return axum::response::IntoResponse::into_response(e),
    };
    let widget = state.widget.clone();
    let checked = blocking(&state, ErrorKind::Internal, move |s| {
        let Some(_) = s.partner_by_publishable_key(&key)? else {
            return Err(ErrorKind::PartnerNotFound.into());
        };
        Ok(validate(&options, target, Some(s.config().environment), &widget))
    })
    .await;
    match checked {
        Ok(validation) => {
            let valid = validation.is_valid();
            body_response(StatusCode::OK, "Widget options checked.", Checked { valid, validation: &validation })
        }
        Err(e) => axum::response::IntoResponse::into_response(e),
    }
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl Bearer {
    /// The credential when it is a secret key (`sk_...`), for signing.
    fn secret_key(&self) -> Option<Zeroizing<String>> {
        self.0.starts_with("sk_").then(|| self.0.clone())
    }
}
