//! The partner's webhook endpoints (SPEC section 10): create (the secret shown once), list,
//! delete and rotate the secret (the new one shown once, the old one signing beside it for 24
//! hours). Every route takes the partner's secret key; the dashboard serves the same handlers
//! under `/v1/dashboard/webhooks` to a member's session (`crate::dashboard`).

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use rampart_core::ErrorKind;
use rampart_core::webhooks::WebhookEndpoint;
use serde_json::{Value, json};

use crate::AppState;
use crate::error::{ApiError, body_response};
use crate::handlers::{Caller, as_partner};
use crate::input::{JsonObject, Query};

/// An endpoint as every answer shows it: never a secret.
pub fn endpoint_json(e: &WebhookEndpoint) -> Value {
    json!({
        "id": e.id.to_string(),
        "url": e.url,
        "events": e.events,
        "enabled": e.enabled,
        "createdAt": rampart_core::recovery::rfc3339(e.created_at),
    })
}

/// An answer that carries a secret: never cached.
fn no_store(mut response: Response) -> Response {
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// POST /v1/webhooks `{"url","events":[...]}`: 201 with the endpoint and its secret.
pub async fn create<C: Caller>(
    State(state): State<AppState>,
    caller: C,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let input = body.and_then(|b| {
        let url = b.required_string("url")?.to_owned();
        let events: Vec<String> = b.string_list("events")?.into_iter().map(str::to_owned).collect();
        Ok((url, events))
    });
    let done = as_partner(&state, caller, ErrorKind::Internal, input, |s, partner, (url, events)| {
        let names: Vec<&str> = events.iter().map(String::as_str).collect();
        s.create_webhook_endpoint(partner, &url, &names)
    })
    .await;
    no_store(done.respond(|(endpoint, secret)| {
        body_response(
            StatusCode::CREATED,
            "Webhook endpoint created.",
            json!({ "endpoint": endpoint_json(&endpoint), "secret": secret.as_str() }),
        )
    }))
}

/// GET /v1/webhooks: the partner's endpoints, oldest first.
pub async fn list<C: Caller>(State(state): State<AppState>, caller: C) -> Response {
    listed(&state, caller, false).await
}

/// GET /v1/dashboard/webhooks: [`list`]'s answer with `events`, every event an endpoint may
/// choose (the page's checkboxes; `webhook.test` reaches an endpoint whatever it chose).
pub async fn list_with_events<C: Caller>(State(state): State<AppState>, caller: C) -> Response {
    listed(&state, caller, true).await
}

async fn listed<C: Caller>(state: &AppState, caller: C, with_events: bool) -> Response {
    let done =
        as_partner(state, caller, ErrorKind::Internal, Ok(()), |s, partner, ()| s.webhook_endpoints(partner)).await;
    done.respond(|endpoints| {
        let endpoints: Vec<Value> = endpoints.iter().map(endpoint_json).collect();
        let mut body = json!({ "endpoints": endpoints });
        if with_events {
            let events: Vec<&str> =
                rampart_core::webhooks::EVENTS.into_iter().filter(|e| *e != "webhook.test").collect();
            body["events"] = json!(events);
        }
        body_response(StatusCode::OK, "Webhook endpoints retrieved.", body)
    })
}

/// DELETE /v1/webhooks/{id}
pub async fn delete<C: Caller>(State(state): State<AppState>, caller: C, Path(id): Path<String>) -> Response {
    let done = as_partner(&state, caller, ErrorKind::Internal, Ok(id), |s, partner, id| {
        s.delete_webhook_endpoint(partner, &id)
    })
    .await;
    done.respond(|()| body_response(StatusCode::OK, "Webhook endpoint deleted.", json!({})))
}

/// POST /v1/webhooks/{id}/rotate-secret: the new secret, once.
pub async fn rotate_secret<C: Caller>(State(state): State<AppState>, caller: C, Path(id): Path<String>) -> Response {
    let done =
        as_partner(&state, caller, ErrorKind::Internal, Ok(id), |s, partner, id| s.rotate_webhook_secret(partner, &id))
            .await;
    no_store(done.respond(|secret| {
        body_response(StatusCode::OK, "Webhook secret rotated.", json!({ "secret": secret.as_str() }))
    }))
}

/// POST /v1/webhooks/{id}/test: 202 with the `webhook.test` message's id.
pub async fn test<C: Caller>(State(state): State<AppState>, caller: C, Path(id): Path<String>) -> Response {
    let done =
        as_partner(&state, caller, ErrorKind::Internal, Ok(id), |s, partner, id| s.test_webhook_endpoint(partner, &id))
            .await;
    done.respond(|message_id| {
        body_response(StatusCode::ACCEPTED, "Webhook test message queued.", json!({ "messageId": message_id }))
    })
}

/// GET /v1/webhooks/{id}/deliveries?after=&limit=: the endpoint's attempts, newest first.
pub async fn deliveries<C: Caller>(
    State(state): State<AppState>,
    caller: C,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    let input = Query::parse(query.as_deref()).and_then(|q| {
        let after = q.get("after")?.map(str::to_owned);
        let limit = match q.get("limit")? {
            None => 20,
            Some(text) if !text.is_empty() && text.len() <= 3 && text.bytes().all(|b| b.is_ascii_digit()) => {
                text.parse().unwrap_or(0)
            }
            Some(_) => 0,
        };
        Ok((id, after, limit))
    });
    let done = as_partner(&state, caller, ErrorKind::Internal, input, |s, partner, (id, after, limit)| {
        s.webhook_attempt_log(partner, &id, after.as_deref(), limit)
    })
    .await;
    done.respond(|(attempts, next)| {
        let attempts: Vec<Value> = attempts
            .iter()
            .map(|a| {
                json!({
                    "messageId": a.message_id,
                    "event": a.event,
                    "at": rampart_core::audit::rfc3339_millis(a.at_ms),
                    "attempt": a.attempt,
                    "status": a.status,
                    "error": a.error,
                    "latencyMs": a.latency_ms,
                })
            })
            .collect();
        body_response(StatusCode::OK, "Webhook deliveries retrieved.", json!({ "attempts": attempts, "next": next }))
    })
}

/// POST /v1/webhooks/messages/{msgId}/resend: 202; sent again to the endpoints it went to.
pub async fn resend<C: Caller>(State(state): State<AppState>, caller: C, Path(id): Path<String>) -> Response {
    let done = as_partner(&state, caller, ErrorKind::Internal, Ok(id), |s, partner, id| {
        s.resend_webhook_message(partner, &id).map(|()| id)
    })
    .await;
    done.respond(|message_id| {
        body_response(StatusCode::ACCEPTED, "Webhook message queued again.", json!({ "messageId": message_id }))
    })
}
