//! `verify_audit` over one partner's chain of `ROWS` rows (default 200,000) on an SQLite file:
//! rows per second, the speed `rampart-server audit verify` checks a trail at (SPEC 9.1; the
//! target is at least 200,000 rows a second). Beside it, the floor: reading the same rows back
//! without hashing them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rampart_core::{ContactId, Environment, KeyRing, Service, SqliteStore, Store};

fn rows() -> u64 {
    std::env::var("ROWS").ok().and_then(|v| v.parse().ok()).unwrap_or(200_000)
}

fn verify(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.path().join("audit.db")).unwrap());
    let service = Service::builder_shared(store.clone()).master_keys(KeyRing::new(1, &[7; 32])).build().unwrap();
    let partner = service.create_partner("Bench", Environment::Sandbox).unwrap().partner_id;
    let n = rows();
    let started = Instant::now();
    let contacts: Vec<ContactId> = (0..64).map(|_| ContactId::random()).collect();
    for i in 0..n {
        let contact = &contacts[usize::try_from(i % 64).unwrap()];
        service.set_kyc_passed("bench", &partner, contact, i % 128 < 64).unwrap();
    }
    println!("populated {n} audit rows in {:.1} s", started.elapsed().as_secs_f64());
    let mut g = c.benchmark_group("audit_verify");
    g.sample_size(10).measurement_time(Duration::from_secs(20)).throughput(Throughput::Elements(n));
    g.bench_function("verify_audit", |b| {
        b.iter(|| {
            let report = service.verify_audit(Some(&partner)).unwrap();
            assert_eq!((report[0].rows, report[0].first_bad_seq), (n, None));
        });
    });
    g.bench_function("floor_read_rows", |b| {
        b.iter(|| {
            let mut after = 0;
            loop {
                let page = store.audit_events(&partner, None, after, 5000).unwrap();
                match page.last() {
                    Some(last) => after = last.seq,
                    None => break,
                }
            }
            assert_eq!(after, n);
        });
    });
    g.finish();
}

criterion_group!(benches, verify);
criterion_main!(benches);
