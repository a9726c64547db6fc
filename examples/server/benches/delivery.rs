//! Webhook delivery by one server (SPEC 10; docs/BENCHMARKS.md, "Webhook delivery"): a bench
//! script, never part of `make test`.
//!
//! 1. Throughput: 20,000 messages already queued, the worker started, until a receiver on
//!    loopback that answers 204 at once has every one of them; with every message for one
//!    endpoint, and spread over ten (ten partners).
//! 2. Latency: sandbox orders placed at 200 a second for 10 s, each `order.created` timed from
//!    its order's commit to its first arrival at the receiver; median, p99 and worst.
//!
//! On an SQLite file, and on PostgreSQL when `RAMPART_BENCH_DATABASE_URL` names a database this
//! bench may fill (`scripts/webhook-bench.sh` starts a throwaway one).
//!
//!     cargo bench -p rampart-server --bench delivery

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode};
use rampart_core::checkout::OrderRequest;
use rampart_core::widget::WidgetConfig;
use rampart_core::{Environment, KeyRing, PartnerId, Service, SqliteStore, Store};
use rampart_server::delivery::{self, WorkerOptions};
use tokio::sync::watch;

const QUEUED: usize = 20_000;
const ORDERS_PER_SEC: u64 = 200;
const ORDER_SECS: u64 = 10;

/// What arrived: each `webhook-id`'s first arrival, and each order id's (from the body).
#[derive(Default)]
struct Arrivals {
    by_message: HashMap<String, Instant>,
    by_order: HashMap<String, Instant>,
}

async fn receiver() -> (String, Arc<Mutex<Arrivals>>) {
    let arrivals = Arc::new(Mutex::new(Arrivals::default()));
    let seen = arrivals.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: String| {
            let seen = seen.clone();
            async move {
                let now = Instant::now();
                let id = headers.get("webhook-id").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
                let order = serde_json::from_str::<serde_json::Value>(&body)
                    .ok()
                    .and_then(|v| v["data"]["orderId"].as_str().map(str::to_owned));
                let mut seen = seen.lock().unwrap();
                seen.by_message.entry(id).or_insert(now);
                if let Some(order) = order {
                    seen.by_order.entry(order).or_insert(now);
                }
                StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, arrivals)
}

/// Run `f` off the runtime's async context (PostgreSQL's client blocks on a runtime of its own).
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

fn service(store: Arc<dyn Store>) -> Arc<Service> {
    Arc::new(
        Service::builder_shared(store)
            .master_keys(KeyRing::new(1, &[7; 32]))
            .webhook_allow_private(true)
            .build()
            .unwrap(),
    )
}

fn start_worker(service: &Arc<Service>) -> (watch::Sender<bool>, tokio::task::JoinHandle<()>) {
    let (stop, stopped) = watch::channel(false);
    let options = WorkerOptions { allow_private: true, retry_scale: 1.0 };
    (stop, tokio::spawn(delivery::run(service.clone(), options, stopped)))
}

async fn wait_for(arrivals: &Arc<Mutex<Arrivals>>, count: usize, limit: Duration) -> Option<Instant> {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        {
            let seen = arrivals.lock().unwrap();
            if seen.by_message.len() >= count {
                return seen.by_message.values().max().copied();
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    None
}

async fn throughput(label: &str, store: Arc<dyn Store>, endpoints: usize) {
    let service = blocking(|| service(store));
    let (url, arrivals) = receiver().await;
    let mut targets: Vec<(PartnerId, String)> = Vec::new();
    for _ in 0..endpoints {
        blocking(|| {
            let partner = service.create_partner("Bench", Environment::Sandbox).unwrap().partner_id;
            let (endpoint, _) = service.create_webhook_endpoint(&partner, &url, &["order.created"]).unwrap();
            targets.push((partner, endpoint.id.to_string()));
        });
    }
    let svc = service.clone();
    let queued = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        for i in 0..QUEUED {
            let (partner, endpoint) = &targets[i % targets.len()];
            svc.test_webhook_endpoint(partner, endpoint).unwrap();
        }
        started.elapsed()
    })
    .await
    .unwrap();
    let started = Instant::now();
    let (stop, worker) = start_worker(&service);
    let last = wait_for(&arrivals, QUEUED, Duration::from_secs(300)).await.expect("every message arrives");
    let secs = last.duration_since(started).as_secs_f64();
    println!(
        "{label}/throughput/{endpoints}_endpoint{}: {QUEUED} messages in {secs:.2} s = {:.0} messages/s (queued in {:.2} s)",
        if endpoints == 1 { "" } else { "s" },
        QUEUED as f64 / secs,
        queued.as_secs_f64()
    );
    stop.send(true).unwrap();
    worker.await.unwrap();
}

async fn latency(label: &str, store: Arc<dyn Store>) {
    let service = blocking(|| service(store));
    let (url, arrivals) = receiver().await;
    let token = blocking(|| {
        let partner = service.create_partner("Bench", Environment::Sandbox).unwrap();
        service.create_webhook_endpoint(&partner.partner_id, &url, &["order.created"]).unwrap();
        let (token, _) = service.open_session(&partner.publishable_key, None).unwrap();
        let email = "bench@example.com";
        let code = service.request_sign_in_code(token.as_str(), email).unwrap();
        service.sign_in(token.as_str(), email, &code.code).unwrap();
        token
    });
    let (stop, worker) = start_worker(&service);
    let svc = service.clone();
    let committed = tokio::task::spawn_blocking(move || {
        let request = OrderRequest {
            coin: "btc".into(),
            amount: "25".into(),
            currency: "usd".into(),
            address: "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx".into(),
        };
        let widget = WidgetConfig::default();
        let interval = Duration::from_nanos(1_000_000_000 / ORDERS_PER_SEC);
        let started = Instant::now();
        let mut committed = Vec::new();
        for i in 0..ORDERS_PER_SEC * ORDER_SECS {
            let due = started + interval * u32::try_from(i).unwrap();
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            let order = svc.place_order(token.as_str(), &request, &widget).unwrap();
            committed.push((order.id.to_string(), Instant::now()));
        }
        committed
    })
    .await
    .unwrap();
    wait_for(&arrivals, committed.len(), Duration::from_secs(60)).await.expect("every order.created arrives");
    let mut ms: Vec<f64> = {
        let seen = arrivals.lock().unwrap();
        committed
            .iter()
            .map(|(id, at)| seen.by_order[id].saturating_duration_since(*at).as_secs_f64() * 1000.0)
            .collect()
    };
    ms.sort_by(f64::total_cmp);
    let pick = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    println!(
        "{label}/latency/{ORDERS_PER_SEC}_orders_per_s: commit to first attempt over {} orders: median {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        ms.len(),
        pick(0.5),
        pick(0.99),
        ms[ms.len() - 1]
    );
    stop.send(true).unwrap();
    worker.await.unwrap();
}

fn postgres() -> Option<Arc<dyn Store>> {
    let url = std::env::var("RAMPART_BENCH_DATABASE_URL").ok()?;
    Some(blocking(|| Arc::new(rampart_core::PostgresStore::open(&url).unwrap())))
}

#[tokio::main]
async fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-')).unwrap_or_default();
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    let mut sqlite = || -> Arc<dyn Store> {
        n += 1;
        Arc::new(SqliteStore::open(dir.path().join(format!("bench{n}.db"))).unwrap())
    };
    let runs: [(&str, usize); 3] = [("throughput_1", 1), ("throughput_10", 10), ("latency", 0)];
    for (name, endpoints) in runs {
        if !name.contains(&filter) {
            continue;
        }
        let stores: Vec<(&str, Arc<dyn Store>)> =
            [Some(("sqlite", sqlite())), postgres().map(|s| ("postgres", s))].into_iter().flatten().collect();
        for (label, store) in stores {
            if endpoints == 0 {
                latency(label, store).await;
            } else {
                throughput(label, store, endpoints).await;
            }
        }
    }
}
