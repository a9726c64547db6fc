//! What the audit trail costs the operations it records (SPEC 9.1's in-transaction rows):
//! enable and disable through `Service` on an SQLite file (and on PostgreSQL when
//! `RAMPART_BENCH_DATABASE_URL` names a database this bench may fill). The file uses only API
//! that predates the audit trail, so `scripts/audit-bench.sh` runs the very same bench on the
//! code before it and on today's, side by side, and prints the ratio. Also: `verify_audit` over
//! a chain of 200,000 rows (today's code only).

use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rampart_core::totp::{self, Secret};
use rampart_core::{ContactId, Environment, KeyRing, ManualClock, PartnerId, Service, SqliteStore, Store};

const T0: u64 = 56_666_666 * 30;

fn service(store: Arc<dyn Store>, clock: Arc<ManualClock>) -> (Service, PartnerId) {
    let service = Service::builder_shared(store).master_keys(KeyRing::new(1, &[7; 32])).clock(clock).build().unwrap();
    let partner = service.create_partner("Bench", Environment::Sandbox).unwrap().partner_id;
    (service, partner)
}

/// Enable (a pending secret made beforehand, untimed) then disable, each with a fresh code.
fn enable_disable(c: &mut Criterion, name: &str, store: Arc<dyn Store>) {
    let clock = Arc::new(ManualClock::new(T0));
    let (service, partner) = service(store, clock.clone());
    let mut g = c.benchmark_group(name);
    g.sample_size(30).measurement_time(Duration::from_secs(8));
    g.bench_function("enable_then_disable", |b| {
        b.iter_batched(
            || {
                let contact = ContactId::from_uuid(uuid_v4());
                let setup = service.create_2fa(&partner, &contact, None).unwrap();
                (contact, Secret::from_base32(&setup.manual).unwrap())
            },
            |(contact, secret)| {
                let now = rampart_core::Clock::now(&*clock);
                service.enable_2fa(&partner, &contact, totp::code_at(&secret, now).as_str()).unwrap();
                service.disable_2fa(&partner, &contact, totp::code_at(&secret, now + 30).as_str()).unwrap();
                clock.advance(30);
            },
            // Setup and routine in turn: each pending secret is enabled right after it is made.
            BatchSize::PerIteration,
        );
    });
    g.finish();
}

fn uuid_v4() -> uuid::Uuid {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).unwrap();
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

fn sqlite(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    enable_disable(c, "sqlite_audited", Arc::new(SqliteStore::open(dir.path().join("bench.db")).unwrap()));
}

#[cfg(feature = "postgres")]
fn postgres(c: &mut Criterion) {
    let Ok(url) = std::env::var("RAMPART_BENCH_DATABASE_URL") else { return };
    let store = rampart_core::PostgresStore::open(&url).unwrap();
    enable_disable(c, "postgres_audited", Arc::new(store));
}

#[cfg(not(feature = "postgres"))]
fn postgres(_: &mut Criterion) {}

criterion_group!(benches, sqlite, postgres);
criterion_main!(benches);
