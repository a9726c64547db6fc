//! GET /demo (sandbox): a partner page on this server that embeds the widget with the script
//! snippet it shows, and logs every event the widget sends it. The partner is the one of
//! `?publicKey=`, else the server's demo partner.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rampart_core::widget::{Target, escape_html, render_options_json, script_safe_json, script_snippet, validate};
use rampart_core::{Environment, ErrorKind};
use serde_json::json;

use crate::AppState;
use crate::handlers::blocking;
use crate::input::Query;

/// The demo partner's webhook receiver: the messages `/demo/webhooks` got, newest last, each
/// checked with the endpoint's secret as a partner's backend would.
pub struct DemoWebhooks {
    secret: rampart_core::webhooks::WebhookSecret,
    got: Mutex<VecDeque<serde_json::Value>>,
}

impl std::fmt::Debug for DemoWebhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DemoWebhooks { <redacted> }")
    }
}

/// How many received messages the demo keeps.
const DEMO_WEBHOOKS_KEPT: usize = 50;

impl DemoWebhooks {
    /// A receiver checking with `secret`.
    pub fn new(secret: rampart_core::webhooks::WebhookSecret) -> Self {
        Self { secret, got: Mutex::new(VecDeque::new()) }
    }
}

/// POST /demo/webhooks (sandbox): the demo partner's endpoint. A message whose signature does
/// not verify is 400 and not listed.
pub async fn receive_webhook(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let Some(hooks) = state.demo_webhooks.clone() else { return not_found("No demo webhook endpoint.") };
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let (id, timestamp, signature) = (header("webhook-id"), header("webhook-timestamp"), header("webhook-signature"));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    if rampart_core::webhooks::verify(&hooks.secret, &id, &timestamp, &signature, &body, now).is_err() {
        return crate::error::message_response(StatusCode::BAD_REQUEST, "The webhook signature does not verify.");
    }
    let message: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let entry =
        json!({ "webhookId": id, "type": message["type"], "timestamp": message["timestamp"], "verified": true });
    let mut got = hooks.got.lock().unwrap_or_else(PoisonError::into_inner);
    if got.len() == DEMO_WEBHOOKS_KEPT {
        got.pop_front();
    }
    got.push_back(entry);
    StatusCode::NO_CONTENT.into_response()
}

/// GET /demo/webhooks (sandbox): what the demo endpoint received, oldest first.
pub async fn webhooks(State(state): State<AppState>) -> Response {
    let Some(hooks) = state.demo_webhooks.clone() else { return not_found("No demo webhook endpoint.") };
    let got: Vec<serde_json::Value> =
        hooks.got.lock().unwrap_or_else(PoisonError::into_inner).iter().cloned().collect();
    let mut response = crate::error::body_response(StatusCode::OK, "Webhooks received.", json!({ "webhooks": got }));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

const HOOKS_SCRIPT: &str = "\
(function () {\n\
  var list = document.getElementById(\"hooks\");\n\
  function show() {\n\
    fetch(\"/demo/webhooks\", { cache: \"no-store\" }).then(function (r) { return r.json(); }).then(function (b) {\n\
      list.textContent = \"\";\n\
      (b.webhooks || []).forEach(function (h) {\n\
        var item = document.createElement(\"li\");\n\
        var type = document.createElement(\"strong\");\n\
        type.textContent = h.type;\n\
        item.appendChild(type);\n\
        item.appendChild(document.createTextNode(\" \" + h.webhookId + \" (signature verified)\"));\n\
        list.appendChild(item);\n\
      });\n\
    });\n\
  }\n\
  show();\n\
  setInterval(show, 2000);\n\
})();";

/// The container the demo renders into.
pub const CONTAINER_ID: &str = "rampart-widget";

const STYLE: &str = "\
:root{color-scheme:light dark;font:16px/1.5 system-ui,sans-serif}\
body{margin:0;padding:1rem;max-width:72rem;margin-inline:auto}\
.grid{display:grid;gap:1.5rem;grid-template-columns:minmax(0,440px) minmax(0,1fr)}\
@media (max-width:800px){.grid{grid-template-columns:minmax(0,1fr)}}\
h1{font-size:1.5rem;margin:.5rem 0}h2{font-size:1.1rem;margin:.5rem 0}\
pre{overflow:auto;padding:.75rem;border:1px solid #8888;border-radius:6px;font-size:.8rem;white-space:pre-wrap;word-break:break-all}\
#events{font:0.85rem/1.4 ui-monospace,monospace;padding-left:2.75rem;max-height:32rem;overflow:auto}\
#events li{margin:.15rem 0;word-break:break-all}";

const SCRIPT: &str = "\
(function () {\n\
  var log = document.getElementById(\"events\");\n\
  options.onEvent = function (event) {\n\
    var item = document.createElement(\"li\");\n\
    var type = document.createElement(\"strong\");\n\
    type.textContent = event.type;\n\
    item.appendChild(type);\n\
    item.appendChild(document.createTextNode(\" \" + JSON.stringify(event.payload)));\n\
    log.appendChild(item);\n\
  };\n\
  Rampart.render(options);\n\
})();";

const HOOKS_SECTION: &str = "<h2 id=\"hooks-h\">Webhooks this server received</h2>\n\
<ol id=\"hooks\" aria-labelledby=\"hooks-h\" aria-live=\"polite\"></ol>\n\
<p>The demo partner has a webhook endpoint on this server (<code>/demo/webhooks</code>), which checks each \
message's Standard Webhooks signature as a partner's backend would.</p>\n";

fn not_found(text: &str) -> Response {
    crate::error::message_response(StatusCode::NOT_FOUND, text)
}

/// GET /demo[?publicKey=pk_sandbox_...]
pub async fn page(State(state): State<AppState>, RawQuery(query): RawQuery) -> Response {
    if state.service.config().environment != Environment::Sandbox {
        return not_found("The demo page is for sandbox servers only.");
    }
    let given = match Query::parse(query.as_deref()).and_then(|q| Ok(q.get("publicKey")?.map(str::to_owned))) {
        Ok(given) => given,
        Err(e) => return e.into_response(),
    };
    let Some(key) = given.or_else(|| state.demo_key.as_deref().map(str::to_owned)) else {
        return not_found("No demo partner: open /demo?publicKey=pk_sandbox_... with a partner's publishable key.");
    };
    let found = blocking(&state, ErrorKind::Internal, move |s| s.partner_by_publishable_key(&key)).await;
    let partner = match found {
        Ok(Some(partner)) => partner,
        Ok(None) => return crate::error::ApiError::from(ErrorKind::PartnerNotFound).into_response(),
        Err(e) => return e.into_response(),
    };
    let options = json!({
        "environment": "sandbox",
        "publicKey": partner.publishable_key,
        "targetContainerId": CONTAINER_ID,
        "clientName": partner.name,
    });
    let Some(options) = options.as_object().and_then(|o| validate(o, Target::Script, None, &state.widget).options)
    else {
        return crate::error::ApiError::from(ErrorKind::Internal).into_response();
    };
    let Ok(snippet) = script_snippet(&options, &state.widget) else {
        return crate::error::ApiError::from(ErrorKind::Internal).into_response();
    };
    // The demo partner's page lists its webhooks when the server receives them.
    let hooks = state.demo_webhooks.is_some() && state.demo_key.as_deref() == Some(partner.publishable_key.as_str());
    // A fresh CSP nonce per answer (122 random bits).
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let sdk = rampart_core::widget::sdk_url(Environment::Sandbox, &state.widget);
    let widget_origin = state.widget.root(Environment::Sandbox).origin().ascii_serialization();
    let html = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{name}: Rampart widget demo (sandbox)</title>\n<style nonce=\"{nonce}\">{STYLE}</style>\n</head>\n<body>\n\
         <header><h1>{name}: widget demo</h1>\n\
         <p>A partner page on this server, embedding the sandbox widget. Sign in with any email address: \
         the sign-in code shows in the widget's sandbox banner. No real money moves.</p></header>\n\
         <main class=\"grid\">\n\
         <section aria-labelledby=\"widget-h\"><h2 id=\"widget-h\">The widget</h2>\n<div id=\"{CONTAINER_ID}\"></div></section>\n\
         <section aria-labelledby=\"events-h\"><h2 id=\"events-h\">Events this page receives</h2>\n\
         <ol id=\"events\" aria-live=\"polite\"></ol>\n\
         <h2 id=\"snippet-h\">The snippet this page uses</h2>\n<pre aria-labelledby=\"snippet-h\"><code>{snippet}</code></pre>\n\
         <p>The demo adds an <code>onEvent</code> callback to the options to fill the log above. \
         Events are hints: confirm an order with <code>GET /v1/widget/orders/{{id}}</code> and the secret key.</p>\n\
         {hooks_section}</section>\n</main>\n\
         <script src=\"{sdk}\" nonce=\"{nonce}\"></script>\n\
         <script nonce=\"{nonce}\">var options = {options};\n{SCRIPT}</script>\n{hooks_script}</body>\n</html>\n",
        name = escape_html(&partner.name),
        snippet = escape_html(&snippet),
        sdk = escape_html(&sdk),
        options = script_safe_json(&render_options_json(&options, &state.widget)),
        hooks_section = if hooks { HOOKS_SECTION } else { "" },
        hooks_script =
            if hooks { format!("<script nonce=\"{nonce}\">{HOOKS_SCRIPT}</script>\n") } else { String::new() },
    );
    let connect = if hooks { "; connect-src 'self'" } else { "" };
    let csp = format!(
        "default-src 'none'; script-src {widget_origin} 'nonce-{nonce}'; style-src 'nonce-{nonce}'; \
         frame-src {widget_origin}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'{connect}"
    );
    let mut response = (StatusCode::OK, html).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(value) = HeaderValue::from_str(&csp) {
        headers.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}
