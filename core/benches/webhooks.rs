//! Placing a sandbox order with and without a webhook endpoint (SPEC 10: the outbox write is in
//! the order's own transactions), on an SQLite file (and on PostgreSQL when
//! `RAMPART_BENCH_DATABASE_URL` names a database this bench may fill).

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use rampart_core::checkout::OrderRequest;
use rampart_core::widget::WidgetConfig;
use rampart_core::{Environment, KeyRing, Service, SqliteStore, Store};

/// `store(with_endpoint)`: a fresh store for each side (on SQLite a file of its own, so the second
/// side does not run on a file the first has grown).
fn order(c: &mut Criterion, name: &str, store: impl Fn(bool) -> Arc<dyn Store>) {
    let widget = WidgetConfig::default();
    let request = OrderRequest {
        coin: "btc".into(),
        amount: "25".into(),
        currency: "usd".into(),
        address: "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx".into(),
    };
    let mut g = c.benchmark_group(name);
    g.sample_size(40).measurement_time(Duration::from_secs(8));
    for with_endpoint in [false, true] {
        let service =
            Service::builder_shared(store(with_endpoint)).master_keys(KeyRing::new(1, &[7; 32])).build().unwrap();
        let partner = service.create_partner("Bench", Environment::Sandbox).unwrap();
        if with_endpoint {
            let events = ["order.created", "order.completed"];
            service.create_webhook_endpoint(&partner.partner_id, "https://93.184.216.34/hooks", &events).unwrap();
        }
        let (token, _) = service.open_session(&partner.publishable_key, None).unwrap();
        let email = "bench@example.com";
        let code = service.request_sign_in_code(token.as_str(), email).unwrap();
        service.sign_in(token.as_str(), email, &code.code).unwrap();
        let label = if with_endpoint { "place_order_with_endpoint" } else { "place_order_without_endpoint" };
        g.bench_function(label, |b| b.iter(|| service.place_order(token.as_str(), &request, &widget).unwrap()));
    }
    g.finish();
}

fn sqlite(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    order(c, "sqlite", |with| Arc::new(SqliteStore::open(dir.path().join(format!("bench-{with}.db"))).unwrap()));
}

#[cfg(feature = "postgres")]
fn postgres(c: &mut Criterion) {
    let Ok(url) = std::env::var("RAMPART_BENCH_DATABASE_URL") else { return };
    order(c, "postgres", |_| Arc::new(rampart_core::PostgresStore::open(&url).unwrap()));
}

#[cfg(not(feature = "postgres"))]
fn postgres(_: &mut Criterion) {}

criterion_group!(benches, sqlite, postgres);
criterion_main!(benches);
