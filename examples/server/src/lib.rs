//! # rampart-server
//!
//! The example HTTP server: SPEC section 3 on [`rampart_core`], with axum and tokio.
//!
//! [`app`] builds the router over a shared [`Service`]; [`serve`] runs it on a listener until a
//! shutdown future completes, letting in-flight requests finish. [`serve_with`] does the same
//! for any router under explicit [`ConnectionLimits`] (header timeout, header size, idle
//! timeout, connection cap). The binary (`src/main.rs`) adds the command line, the master key
//! and the demo partner.
//!
//! ```no_run
//! use std::sync::Arc;
//! use rampart_core::{KeyRing, Service, SqliteStore};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let store = SqliteStore::open("rampart.db")?;
//! let keys = KeyRing::load_or_generate("rampart.db.key".as_ref(), &store)?;
//! let service = Service::builder(store).master_keys(keys).build()?;
//! let listener = rampart_server::listen("127.0.0.1:8080").await?;
//! rampart_server::serve(listener, Arc::new(service), rampart_server::shutdown_signal()).await?;
//! # Ok(()) }
//! ```
//!
//! Conventions: every error body is `{"message": string, "code": int}` with the HTTP status
//! equal to `code`; answers are checked in the order 401, 413, 400, then what the core says.
//! Every core call runs on tokio's blocking pool. One log line per request (method, matched
//! route, status, latency); never a query string, body, header, code, key or QR code.

pub mod assets;
mod audit;
mod checkout;
mod connections;
pub mod dashboard;
pub mod delivery;
mod demo;
mod error;
mod handlers;
pub mod input;
pub mod openapi;
pub mod ratelimit;
mod webhooks;
mod widget;

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{delete, get, post};
use handlers::Bearer;
use rampart_core::Service;
use rampart_core::widget::WidgetConfig;

pub use connections::{
    BODY_TIMEOUT, ConnectionLimits, HEADER_TIMEOUT, IDLE_TIMEOUT, LISTEN_BACKLOG, MAX_HEADER_BYTES,
    default_max_connections, listen, serve_with,
};
pub use error::ApiError;
pub use input::MAX_BODY_BYTES;

/// What every handler shares: the core service.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The core; every call on it runs on the blocking pool.
    pub service: Arc<Service>,
    /// Roots, brand and coins of the widget routes.
    pub widget: Arc<WidgetConfig>,
    /// The per-address limit of the public widget routes.
    pub public_limit: Arc<ratelimit::RateLimiter>,
    /// The publishable key `GET /demo` embeds when its query names none.
    pub demo_key: Option<Arc<str>>,
    /// The demo partner's webhook receiver (`/demo/webhooks`), when `make run` set one up.
    pub demo_webhooks: Option<Arc<demo::DemoWebhooks>>,
}

/// Requests per minute, and burst, one client address may make to the public widget routes.
pub const PUBLIC_RATE: (u32, u32) = (120, 60);

/// The router of SPEC section 3 over `service`, with the default [`WidgetConfig`].
pub fn app(service: Arc<Service>) -> Router {
    app_with_widget(service, WidgetConfig::default())
}

/// The router of SPEC section 3 over `service`, with the widget routes on `widget`.
pub fn app_with_widget(service: Arc<Service>, widget: WidgetConfig) -> Router {
    app_with_demo(service, widget, None)
}

/// [`app_with_widget`], with `GET /demo` embedding the partner of `demo_key` (a publishable
/// key) when its query names none.
pub fn app_with_demo(service: Arc<Service>, widget: WidgetConfig, demo_key: Option<&str>) -> Router {
    app_with_demo_webhooks(service, widget, demo_key, None)
}

/// [`app_with_demo`], with `/demo/webhooks` receiving (and the demo page listing) the demo
/// partner's webhooks, checked with `secret`.
pub fn app_with_demo_webhooks(
    service: Arc<Service>,
    widget: WidgetConfig,
    demo_key: Option<&str>,
    secret: Option<rampart_core::webhooks::WebhookSecret>,
) -> Router {
    let public_limit = Arc::new(ratelimit::RateLimiter::new(PUBLIC_RATE.0, PUBLIC_RATE.1));
    let demo_webhooks = secret.map(|s| Arc::new(demo::DemoWebhooks::new(s)));
    let state =
        AppState { service, widget: Arc::new(widget), public_limit, demo_key: demo_key.map(Arc::from), demo_webhooks };
    let partner_routes = Router::new()
        .route("/v1/auth/create2fa", get(handlers::create_2fa))
        .route("/v1/auth/enable2fa", post(handlers::enable_2fa))
        .route("/v1/auth/disable2fa", post(handlers::disable_2fa))
        .route("/v1/auth/verify2fa", post(handlers::verify_2fa))
        .route("/v1/auth/recoveryCodes", post(handlers::regenerate_recovery_codes))
        .route("/v1/auth/2fa", get(handlers::status_2fa))
        .route("/v1/users/widgetText", post(handlers::set_widget_text).get(handlers::widget_text))
        .route("/v1/users/widgetButtonURL", post(handlers::set_widget_button_url).get(handlers::widget_button_url))
        .route("/v1/users/widgetOrigins", post(handlers::set_widget_origins).get(handlers::widget_origins))
        .route("/v1/widget/validate", post(widget::validate_options))
        .route("/v1/widget/url", post(widget::url))
        .route("/v1/widget/snippet", post(widget::snippet))
        .route("/v1/widget/orders", get(checkout::orders))
        .route("/v1/widget/orders/{id}", get(checkout::order))
        .route("/v1/widget/contacts", get(checkout::contact))
        .route("/v1/audit", get(audit::events))
        .route("/v1/webhooks", post(webhooks::create::<Bearer>).get(webhooks::list::<Bearer>))
        .route("/v1/webhooks/{id}", delete(webhooks::delete::<Bearer>))
        .route("/v1/webhooks/{id}/rotate-secret", post(webhooks::rotate_secret::<Bearer>))
        .route("/v1/webhooks/{id}/test", post(webhooks::test::<Bearer>))
        .route("/v1/webhooks/{id}/deliveries", get(webhooks::deliveries::<Bearer>))
        .route("/v1/webhooks/messages/{id}/resend", post(webhooks::resend::<Bearer>));
    let session_routes = Router::new()
        .route("/v1/widget/session", post(checkout::open).get(checkout::state).delete(checkout::close))
        .route("/v1/widget/session/email", post(checkout::email))
        .route("/v1/widget/session/signin", post(checkout::sign_in))
        .route("/v1/widget/session/kyc", post(checkout::kyc))
        .route("/v1/widget/session/2fa/create", post(checkout::create_2fa))
        .route("/v1/widget/session/2fa/enable", post(checkout::enable_2fa))
        .route("/v1/widget/session/2fa/verify", post(checkout::verify_2fa))
        .route("/v1/widget/session/2fa/recoveryCodes", post(checkout::regenerate_recovery_codes))
        .route("/v1/widget/session/orders", post(checkout::place_order));
    Router::new()
        .route("/healthz", get(handlers::healthz))
        .route("/demo", get(demo::page))
        .route("/demo/webhooks", post(demo::receive_webhook).get(demo::webhooks))
        .route("/openapi.json", get(handlers::openapi))
        .route("/v1/widget/config", get(widget::config))
        .route("/widget", get(assets::page_redirect))
        .route("/widget/", get(assets::page))
        .route("/widget/page.js", get(assets::page_js))
        .route("/widget/page.css", get(assets::page_css))
        .route("/dashboard", get(assets::dashboard_redirect))
        .route("/dashboard/", get(assets::dashboard))
        .route("/dashboard/index.html", get(assets::dashboard))
        .route("/widget/v1/rampart.js", get(assets::loader))
        .route("/widget/v1/rampart.js.sri", get(assets::loader_sri))
        .route("/v1/widget/check", post(widget::public_check))
        .merge(partner_routes)
        .merge(session_routes)
        .merge(dashboard::routes())
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(state.clone(), log_request))
        .with_state(state)
}

/// The metrics listener's router over `service`: `GET /metrics`, the service's own registry as
/// Prometheus text. Serve it on a separate, private address, never beside [`app`]'s routes.
pub fn metrics_app(service: Arc<Service>) -> Router {
    audit::metrics_app(service)
}

/// One line per request: method, matched route (never the query string), status, latency; and
/// the same, counted, in the service's metrics (`rampart_http_requests_total`).
async fn log_request(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = req.method().clone();
    let route = req.extensions().get::<MatchedPath>().cloned();
    let response = next.run(req).await;
    let route = route.as_ref().map_or("unmatched", MatchedPath::as_str);
    let status = response.status().as_u16();
    let elapsed = start.elapsed();
    state.service.metrics().http_request(route, method.as_str(), status, elapsed);
    tracing::info!(
        target: "rampart::http",
        method = %method,
        route,
        status,
        latency_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
        "request"
    );
    response
}

/// Serve [`app`] on `listener` with the default [`ConnectionLimits`] until `shutdown`
/// completes; requests in flight then finish. [`serve_with`] takes any router and limits.
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: Arc<Service>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, app(service), ConnectionLimits::default(), shutdown).await
}

/// Threads for store work: one per core (at least two, so reads go on while a write waits
/// for the disk). Each request makes one trip to this pool; more threads than the store has
/// connections would only queue inside the store.
pub fn blocking_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().max(2))
}

/// The server's SQLite settings, chosen with `scripts/load-bench.sh` (docs/BENCHMARKS.md):
/// - as many readers as blocking threads;
/// - no memory map, so the resident set stays small however large the database grows (reads
///   come from the OS page cache through each connection's small cache);
/// - checkpoints every 100 log pages: each flush to disk is short, which keeps the tail latency
///   of writes low (SQLite's 1000 pages gave a verify p99 of 17-19 ms against 4-8 ms).
pub fn sqlite_options() -> rampart_core::store::SqliteOptions {
    rampart_core::store::SqliteOptions {
        max_readers: blocking_threads(),
        mmap_bytes: 0,
        checkpoint_pages: 100,
        ..rampart_core::store::SqliteOptions::default()
    }
}

/// Completes on Ctrl-C (SIGINT) or SIGTERM. The handlers are installed when this is called
/// (inside a tokio runtime), not when the future is first polled, so a signal that arrives
/// between the "listening" log line and the first poll is not lost to the default action.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let (interrupt, terminate) = {
        use tokio::signal::unix::{SignalKind, signal};
        (signal(SignalKind::interrupt()).ok(), signal(SignalKind::terminate()).ok())
    };
    async move {
        #[cfg(unix)]
        {
            async fn recv(sig: Option<tokio::signal::unix::Signal>) {
                match sig {
                    Some(mut sig) => {
                        sig.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            }
            tokio::select! {
                () = recv(interrupt) => {},
                () = recv(terminate) => {},
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        tracing::info!("shutdown signal received; finishing requests in flight");
    }
}
