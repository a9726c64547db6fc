//! The widget's built files (`widget/dist`, committed and drift-checked by `make test`),
//! embedded in the binary so `cargo build` and `make run` need no npm.
//!
//! - `GET /widget/v1/rampart.js`: the loader. The path carries its major version, so it is
//!   cached for a year as immutable; `Access-Control-Allow-Origin: *` lets a partner load it
//!   with `integrity` and `crossorigin`.
//! - `GET /widget/v1/rampart.js.sri`: one line, `sha384-<base64>`, for the `integrity`
//!   attribute.

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

/// GET /widget/v1/rampart.js
pub async fn loader() -> Response {
    asset(LOADER, "text/javascript; charset=utf-8", true)
}

/// GET /widget/v1/rampart.js.sri
pub async fn loader_sri() -> Response {
    asset(LOADER_SRI.as_bytes(), "text/plain; charset=utf-8", true)
}
