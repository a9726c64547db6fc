//! The partner's audit trail (SPEC 9.1) and the metrics listener's route (SPEC 9.2).

use std::sync::Arc;

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rampart_core::audit::{DEFAULT_PAGE, MAX_PAGE};
use rampart_core::{ContactId, ErrorKind, Service};
use serde_json::json;

use crate::AppState;
use crate::error::{ApiError, body_response};
use crate::handlers::{Bearer, as_partner};
use crate::input::Query;

/// The largest `after`: a `seq` is a signed 64-bit integer in the stores.
const MAX_AFTER: u64 = i64::MAX as u64;

/// A non-negative decimal integer parameter in `min..=max`, or its default when absent; anything
/// else (a sign, a fraction, an exponent, white space, out of range) is 400 naming it.
pub(crate) fn integer(value: Option<&str>, name: &str, min: u64, max: u64, default: u64) -> Result<u64, ApiError> {
    let Some(text) = value else { return Ok(default) };
    let rule = format!("must be an integer from {min} to {max}");
    if text.is_empty() || text.len() > 20 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::invalid(name, &rule));
    }
    match text.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(ApiError::invalid(name, &rule)),
    }
}

fn audit_input(query: Option<&str>) -> Result<(Option<ContactId>, u64, usize), ApiError> {
    let q = Query::parse(query)?;
    // Optional, but when given it must be a contact id: an empty value is not "all contacts".
    let contact = match q.get("contactId")? {
        None => None,
        Some(given) => Some(ContactId::parse(given).map_err(ApiError)?),
    };
    let (after, limit) = page_input(query)?;
    Ok((contact, after, limit))
}

/// `after` and `limit` of a page of the chain (the dashboard's audit page).
pub(crate) fn page_input(query: Option<&str>) -> Result<(u64, usize), ApiError> {
    let q = Query::parse(query)?;
    let after = integer(q.get("after")?, "after", 0, MAX_AFTER, 0)?;
    let limit = integer(q.get("limit")?, "limit", 1, MAX_PAGE as u64, DEFAULT_PAGE as u64)?;
    Ok((after, usize::try_from(limit).unwrap_or(MAX_PAGE)))
}

/// GET /v1/audit?contactId=&after=&limit=: the partner's own audit chain, oldest first.
pub async fn events(State(state): State<AppState>, bearer: Bearer, RawQuery(query): RawQuery) -> Response {
    let input = audit_input(query.as_deref());
    let done = as_partner(&state, bearer, ErrorKind::Internal, input, |s, partner, (contact, after, limit)| {
        s.audit_events(partner, contact.as_ref(), after, limit)
    })
    .await;
    done.respond(|page| {
        body_response(StatusCode::OK, "Audit events retrieved.", json!({ "events": page.events, "next": page.next }))
    })
}

/// The metrics listener's router: `GET /metrics` (Prometheus text 0.0.4), nothing else. Served
/// on its own address (`--metrics-listen`), never beside the public routes.
pub fn metrics_app(service: Arc<Service>) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .fallback(crate::error::not_found)
        .method_not_allowed_fallback(crate::error::method_not_allowed)
        .with_state(service)
}

async fn metrics(State(service): State<Arc<Service>>) -> Response {
    // Rendering may read the audit gauge from the store: off the async threads.
    match tokio::task::spawn_blocking(move || service.metrics_text()).await {
        Ok(text) => {
            let mut response = text.into_response();
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"));
            response
        }
        Err(join) => {
            ApiError(rampart_core::Error::new(ErrorKind::Internal).with_cause(join.to_string())).into_response()
        }
    }
}
