//! Widget benchmarks: validating and building the URL of a one-screen checkout, and each half
//! alone, so the figures say where the time goes.
//!
//! `cargo bench -p rampart-core --bench widget`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rampart_core::Environment;
use rampart_core::widget::{Target, WidgetConfig, build_url, parse_url, sign_url, validate};
use serde_json::{Map, Value, json};

fn one_screen_checkout() -> Map<String, Value> {
    let options = json!({
        "environment": "production",
        "publicKey": "pk_production_9Zx4LmQ2wErTy7UiOp3AsDfG",
        "clientName": "Acme Shop",
        "tokens": "btc",
        "receiveAddress": {"btc": "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"},
        "amount": "50",
        "currencies": "eur",
        "darkTheme": true
    });
    match options {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn widget(c: &mut Criterion) {
    let config = WidgetConfig::default();
    let options = one_screen_checkout();
    let validated = validate(&options, Target::Url, None, &config).options.expect("valid options");
    let url = build_url(&validated, &config);
    let mut group = c.benchmark_group("widget one-screen checkout");
    group.bench_function("validate + build URL", |b| {
        b.iter(|| {
            let v = validate(black_box(&options), Target::Url, None, &config);
            v.options.map(|o| build_url(&o, &config))
        })
    });
    group.bench_function("validate", |b| b.iter(|| validate(black_box(&options), Target::Url, None, &config)));
    group.bench_function("build URL", |b| b.iter(|| build_url(black_box(&validated), &config)));
    group.bench_function("parse URL", |b| b.iter(|| parse_url(black_box(&url), &config)));
    group.bench_function("sign URL", |b| {
        b.iter(|| sign_url(black_box(&validated), "sk_production_7hG5fD3sA1qW9eR7tY5uI3oP", 1_700_000_000, &config))
    });
    group.finish();

    // The address check is the bulk of validation: measure it alone.
    let mut without_address = options.clone();
    without_address.remove("receiveAddress");
    c.bench_function("widget validate without receive address", |b| {
        b.iter(|| validate(black_box(&without_address), Target::Url, Some(Environment::Production), &config))
    });
}

criterion_group!(benches, widget);
criterion_main!(benches);
