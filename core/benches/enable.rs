//! Enable through `Service` on an SQLite file (and on PostgreSQL when
//! `RAMPART_BENCH_DATABASE_URL` names a database this bench may fill): what issuing the 10
//! recovery codes in enable's transaction costs (SPEC 8.1). The file uses only API that predates
//! recovery codes, so `scripts/recovery-bench.sh` runs the very same bench on the code before
//! them and on today's, side by side.

use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rampart_core::totp::{self, Secret};
use rampart_core::{ContactId, Environment, KeyRing, ManualClock, Service, SqliteStore, Store};

const T0: u64 = 56_666_666 * 30;

/// Enable a pending secret made beforehand (untimed), with the current step's code.
fn enable(c: &mut Criterion, name: &str, store: Arc<dyn Store>) {
    let clock = Arc::new(ManualClock::new(T0));
    let service =
        Service::builder_shared(store).master_keys(KeyRing::new(1, &[7; 32])).clock(clock.clone()).build().unwrap();
    let partner = service.create_partner("Bench", Environment::Sandbox).unwrap().partner_id;
    let mut g = c.benchmark_group(name);
    g.sample_size(40).measurement_time(Duration::from_secs(8));
    g.bench_function("enable", |b| {
        b.iter_batched(
            || {
                let mut bytes = [0u8; 16];
                getrandom::fill(&mut bytes).unwrap();
                let contact = ContactId::from_uuid(uuid::Builder::from_random_bytes(bytes).into_uuid());
                let setup = service.create_2fa(&partner, &contact, None).unwrap();
                (contact, Secret::from_base32(&setup.manual).unwrap())
            },
            |(contact, secret)| {
                let now = rampart_core::Clock::now(&*clock);
                let _ = service.enable_2fa(&partner, &contact, totp::code_at(&secret, now).as_str()).unwrap();
            },
            BatchSize::PerIteration,
        );
    });
    g.finish();
}

fn sqlite(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    enable(c, "sqlite", Arc::new(SqliteStore::open(dir.path().join("bench.db")).unwrap()));
}

#[cfg(feature = "postgres")]
fn postgres(c: &mut Criterion) {
    let Ok(url) = std::env::var("RAMPART_BENCH_DATABASE_URL") else { return };
    enable(c, "postgres", Arc::new(rampart_core::PostgresStore::open(&url).unwrap()));
}

#[cfg(not(feature = "postgres"))]
fn postgres(_: &mut Criterion) {}

criterion_group!(benches, sqlite, postgres);
criterion_main!(benches);
