//! A verify by recovery code beside a verify by authenticator code (SPEC 8.1), through
//! `Service` on an SQLite file (and on PostgreSQL when `RAMPART_BENCH_DATABASE_URL` names a
//! database this bench may fill). Both write the contact's record; the recovery code's verify
//! also writes its `recovery_code.used` audit row in the same transaction (a token verify
//! changes no security state and writes none).

use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rampart_core::totp::{self, Secret};
use rampart_core::{ContactId, Environment, Factor, KeyRing, ManualClock, PartnerId, Service, SqliteStore, Store};

const T0: u64 = 56_666_666 * 30;

fn contact_id() -> ContactId {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).unwrap();
    ContactId::from_uuid(uuid::Builder::from_random_bytes(bytes).into_uuid())
}

/// A new enabled contact: its secret and its recovery codes.
fn enabled(service: &Service, partner: &PartnerId, clock: &ManualClock) -> (ContactId, Secret, Vec<String>) {
    let contact = contact_id();
    let setup = service.create_2fa(partner, &contact, None).unwrap();
    let secret = Secret::from_base32(&setup.manual).unwrap();
    let now = rampart_core::Clock::now(clock);
    let codes = service.enable_2fa(partner, &contact, totp::code_at(&secret, now).as_str()).unwrap();
    (contact, secret, codes.as_slice().to_vec())
}

fn verify(c: &mut Criterion, name: &str, store: Arc<dyn Store>) {
    let clock = Arc::new(ManualClock::new(T0));
    let service =
        Service::builder_shared(store).master_keys(KeyRing::new(1, &[7; 32])).clock(clock.clone()).build().unwrap();
    let partner = service.create_partner("Bench", Environment::Sandbox).unwrap().partner_id;
    let mut g = c.benchmark_group(name);
    g.sample_size(40).measurement_time(Duration::from_secs(8));

    // One contact verified once per step. Setup picks the next step and its code; the routine
    // moves the clock there first (criterion may make several inputs before it runs them).
    let (contact, secret, _) = enabled(&service, &partner, &clock);
    let mut next = rampart_core::Clock::now(&*clock);
    g.bench_function("verify_token", |b| {
        b.iter_batched(
            || {
                // Three steps on: a code equal to the next step's (one in a million) matches that
                // later step, which the window of the step after could reach again as a replay.
                next += 90;
                (next, totp::code_at(&secret, next))
            },
            |(at, code)| {
                clock.set(at);
                let verification = service.verify_2fa(&partner, &contact, code.as_str()).unwrap();
                assert!(verification.is_accepted(), "{verification:?} at {at}");
            },
            BatchSize::PerIteration,
        );
    });

    let mut pool: Vec<(ContactId, String)> = Vec::new();
    g.bench_function("verify_recovery_code", |b| {
        b.iter_batched(
            || {
                if pool.is_empty() {
                    let (contact, _, codes) = enabled(&service, &partner, &clock);
                    pool.extend(codes.into_iter().map(|code| (contact, code)));
                }
                pool.pop().unwrap()
            },
            |(contact, code)| {
                let factor = Factor::recovery_code(&code);
                assert!(service.verify_2fa(&partner, &contact, factor).unwrap().is_accepted());
            },
            BatchSize::PerIteration,
        );
    });
    g.finish();
}

fn sqlite(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    verify(c, "sqlite", Arc::new(SqliteStore::open(dir.path().join("bench.db")).unwrap()));
}

#[cfg(feature = "postgres")]
fn postgres(c: &mut Criterion) {
    let Ok(url) = std::env::var("RAMPART_BENCH_DATABASE_URL") else { return };
    verify(c, "postgres", Arc::new(rampart_core::PostgresStore::open(&url).unwrap()));
}

#[cfg(not(feature = "postgres"))]
fn postgres(_: &mut Criterion) {}

criterion_group!(benches, sqlite, postgres);
criterion_main!(benches);
