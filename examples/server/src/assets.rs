//! The widget's built files (`widget/dist`, committed and drift-checked by `make test`),
//! embedded in the binary so `cargo build` and `make run` need no npm.
//!
//! - `GET /widget/v1/rampart.js`: the loader. The path carries its major version, so it is
//!   cached for a year as immutable; `Access-Control-Allow-Origin: *` lets a partner load it
//!   with `integrity` and `crossorigin`.
//! - `GET /widget/v1/rampart.js.sri`: one line, `sha384-<base64>`, for the `integrity`
//!   attribute.
//! - `GET /widget/` (the page a custom URL or the loader's iframe opens), `page.js` and
//!   `page.css`. The page is tied to a partner by the `publicKey` of its query: its
//!   `Content-Security-Policy` allows only the partner's registered origins to frame it
//!   (`frame-ancestors`, plus the local machine in sandbox) and only this origin for scripts,
//!   styles and requests. Without a known publishable key the answer is a short explanation
//!   that no page may frame (`frame-ancestors 'none'`).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The loader, as built by `make widget-build`.
pub const LOADER: &[u8] = include_bytes!("../../../widget/dist/rampart.js");

/// The loader's subresource-integrity value, `sha384-<base64>` and a newline.
pub const LOADER_SRI: &str = include_str!("../../../widget/dist/rampart.js.sri");

fn asset(body: &'static [u8], content_type: &'static str, immutable: bool) -> Response {
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if immutable { "public, max-age=31536000, immutable" } else { "no-cache" }),
    );
    response
}

/// The widget page's HTML shell, script and styles.
pub const PAGE_HTML: &[u8] = include_bytes!("../../../widget/dist/index.html");
/// The widget page's script.
pub const PAGE_JS: &[u8] = include_bytes!("../../../widget/dist/page.js");
/// The widget page's styles.
pub const PAGE_CSS: &[u8] = include_bytes!("../../../widget/dist/page.css");

/// What the page may load and who may frame it.
fn page_csp(frame_ancestors: &str) -> String {
    format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
         base-uri 'none'; form-action 'none'; {frame_ancestors}"
    )
}

fn html(status: StatusCode, body: Vec<u8>, csp: &str) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("strict-origin-when-cross-origin"));
    if let Ok(value) = HeaderValue::from_str(csp) {
        headers.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

/// The answer when no partner goes with the page: a short explanation no page may frame.
fn explanation(status: StatusCode, what: &str) -> Response {
    let text = rampart_core::widget::escape_html(what);
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Rampart widget</title></head>\
         <body><h1>This widget cannot open</h1><p>{text}</p></body></html>"
    );
    html(status, body.into_bytes(), &page_csp("frame-ancestors 'none'"))
}

/// GET /widget/?publicKey=...: the page, framed only by the partner's registered origins.
pub async fn page(
    axum::extract::State(state): axum::extract::State<crate::AppState>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> Response {
    let key = match crate::input::Query::parse(query.as_deref())
        .and_then(|q| Ok(q.get("publicKey")?.map(str::to_owned)))
    {
        Ok(Some(key)) => key,
        Ok(None) => {
            return explanation(
                StatusCode::BAD_REQUEST,
                "The widget URL has no publicKey: the page that links here must give the partner's publishable key.",
            );
        }
        Err(_) => return explanation(StatusCode::BAD_REQUEST, "The widget URL is not well formed."),
    };
    let found = crate::handlers::blocking(&state, rampart_core::ErrorKind::Internal, move |s| {
        s.partner_by_publishable_key(&key)
    })
    .await;
    match found {
        Ok(Some(partner)) => {
            let ancestors =
                rampart_core::widget::origins::frame_ancestors(&partner.widget_origins, partner.environment);
            // The dashboard's live preview frames the widget from this server's own origin.
            let ancestors = match ancestors.strip_suffix(" 'none'") {
                Some(directive) => format!("{directive} 'self'"),
                None => format!("{ancestors} 'self'"),
            };
            html(StatusCode::OK, PAGE_HTML.to_vec(), &page_csp(&ancestors))
        }
        Ok(None) => explanation(
            StatusCode::NOT_FOUND,
            "No partner of this environment has this publishable key: check the publicKey of the widget URL.",
        ),
        Err(crate::ApiError(e)) => {
            tracing::error!(cause = ?e.cause().map(ToString::to_string), "widget page: partner lookup failed");
            explanation(StatusCode::INTERNAL_SERVER_ERROR, "The widget is unavailable; try again later.")
        }
    }
}

/// The dashboard's page (SPEC 11): one HTML file holding its style and script.
pub const DASHBOARD_HTML: &[u8] = include_bytes!("../../../dashboard/dist/index.html");

/// The dashboard's policy: exactly its own script and style (by their sha384, written by its
/// build beside the page), its own API, the widget preview from this server, and no page may
/// frame it.
static DASHBOARD_CSP: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let sources = include_str!("../../../dashboard/dist/csp.txt").trim();
    format!(
        "default-src 'none'; {sources}; img-src 'self' data:; connect-src 'self'; frame-src 'self'; \
         base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
});

/// GET /dashboard/: the partner dashboard's page.
pub async fn dashboard() -> Response {
    let mut response = html(StatusCode::OK, DASHBOARD_HTML.to_vec(), &DASHBOARD_CSP);
    let headers = response.headers_mut();
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// GET /dashboard (no slash): the page's files are relative to `/dashboard/`.
pub async fn dashboard_redirect() -> Response {
    let mut response = StatusCode::PERMANENT_REDIRECT.into_response();
    response.headers_mut().insert(header::LOCATION, HeaderValue::from_static("/dashboard/"));
    response
}

/// GET /widget (no slash): the page's files are relative to `/widget/`.
pub async fn page_redirect(axum::extract::RawQuery(query): axum::extract::RawQuery) -> Response {
    let location = match query {
        Some(q) => format!("/widget/?{q}"),
        None => "/widget/".to_owned(),
    };
    let mut response = StatusCode::PERMANENT_REDIRECT.into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// GET /widget/page.js
pub async fn page_js() -> Response {
    asset(PAGE_JS, "text/javascript; charset=utf-8", false)
}

/// GET /widget/page.css
pub async fn page_css() -> Response {
    asset(PAGE_CSS, "text/css; charset=utf-8", false)
}

/// GET /widget/v1/rampart.js
pub async fn loader() -> Response {
    asset(LOADER, "text/javascript; charset=utf-8", true)
}

/// GET /widget/v1/rampart.js.sri
pub async fn loader_sri() -> Response {
    asset(LOADER_SRI.as_bytes(), "text/plain; charset=utf-8", true)
}
