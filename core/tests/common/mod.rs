//! Test fixtures shared by the core's integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use rampart_core::store::ContactRecord;
use rampart_core::totp::{self, Secret};
use rampart_core::{
    Config, ContactId, Environment, KeyRing, ManualClock, MemoryStore, PartnerId, Service, SqliteStore, Store,
};

/// A time on a step boundary.
pub const T0: u64 = 56_666_666 * 30;

/// Runs each named case, a `fn(Backend)` of the including file, once per store: a module per
/// backend with a `#[test]` per case (`memory::x`, `sqlite::x`, and with the `postgres-tests`
/// feature `postgres::x`). Needs `Backend` in scope and `#[macro_use] mod common;`.
#[allow(unused_macros)] // only the suites that run on every store use it
macro_rules! conformance {
    ($($case:ident),* $(,)?) => {
        mod memory { $( #[test] fn $case() { super::$case(super::Backend::Memory) } )* }
        mod sqlite { $( #[test] fn $case() { super::$case(super::Backend::Sqlite) } )* }
        #[cfg(feature = "postgres-tests")]
        mod postgres { $( #[test] fn $case() { super::$case(super::Backend::Postgres) } )* }
    };
}

/// Which store a suite runs on.
#[derive(Clone, Copy, Debug)]
pub enum Backend {
    Memory,
    Sqlite,
    /// A fresh schema of the PostgreSQL `RAMPART_TEST_DATABASE_URL` names (scripts/with-postgres.sh).
    #[cfg(feature = "postgres-tests")]
    Postgres,
}

/// A store plus whatever must outlive it (the temporary directory of a SQLite file).
pub struct TestStore {
    pub store: Arc<dyn Store>,
    pub dir: Option<tempfile::TempDir>,
    pub path: Option<PathBuf>,
    /// The PostgreSQL schema's connection settings.
    #[cfg(feature = "postgres-tests")]
    pub postgres: Option<postgres::Config>,
}

impl TestStore {
    /// Run SQL on the database behind the store, beside it (as an attacker with database
    /// access, or a failing disk, would): `false` for the memory store, which has no SQL.
    pub fn raw_sql(&self, sql: &str) -> bool {
        if let Some(path) = &self.path {
            rusqlite::Connection::open(path).unwrap().execute_batch(sql).unwrap();
            return true;
        }
        #[cfg(feature = "postgres-tests")]
        if let Some(config) = &self.postgres {
            config.connect(postgres::NoTls).unwrap().batch_execute(sql).unwrap();
            return true;
        }
        false
    }
}

impl Backend {
    pub fn open(self) -> TestStore {
        match self {
            Backend::Memory => TestStore {
                store: Arc::new(MemoryStore::new()),
                dir: None,
                path: None,
                #[cfg(feature = "postgres-tests")]
                postgres: None,
            },
            Backend::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("rampart.db");
                let store = Arc::new(SqliteStore::open(&path).unwrap());
                TestStore {
                    store,
                    dir: Some(dir),
                    path: Some(path),
                    #[cfg(feature = "postgres-tests")]
                    postgres: None,
                }
            }
            #[cfg(feature = "postgres-tests")]
            Backend::Postgres => {
                let config = postgres_schema();
                let store =
                    rampart_core::PostgresStore::open_with(config.clone(), &rampart_core::PostgresOptions::default())
                        .unwrap();
                TestStore { store: Arc::new(store), dir: None, path: None, postgres: Some(config) }
            }
        }
    }
}

/// The configuration of a new, empty schema `t_<uuid>` of the test database, as the search path
/// of every connection made with it: each fixture gets tables of its own. Schemas are not
/// dropped (the throwaway cluster goes as a whole). Never skips: without a database, it panics.
#[cfg(feature = "postgres-tests")]
pub fn postgres_schema() -> postgres::Config {
    let url = std::env::var("RAMPART_TEST_DATABASE_URL").unwrap_or_else(|_| {
        panic!(
            "RAMPART_TEST_DATABASE_URL is not set: the postgres tests need a PostgreSQL they may create \
             schemas in; `make pg-test` (scripts/with-postgres.sh) starts a throwaway one"
        )
    });
    let mut config: postgres::Config = url.parse().expect("RAMPART_TEST_DATABASE_URL does not parse");
    let schema = format!("t_{}", uuid::Uuid::new_v4().simple());
    let mut client = config.connect(postgres::NoTls).expect("cannot connect to RAMPART_TEST_DATABASE_URL");
    client.batch_execute(&format!("CREATE SCHEMA {schema}")).unwrap();
    config.options(&format!("-c search_path={schema}"));
    config
}

/// A [`rampart_core::PostgresStore`] on a new schema of its own.
#[cfg(feature = "postgres-tests")]
pub fn postgres_store() -> rampart_core::PostgresStore {
    rampart_core::PostgresStore::open_with(postgres_schema(), &rampart_core::PostgresOptions::default()).unwrap()
}

pub struct Fixture {
    pub service: Service,
    pub clock: Arc<ManualClock>,
    pub partner: PartnerId,
    pub store: TestStore,
}

impl Fixture {
    pub fn new(backend: Backend) -> Self {
        Self::with_config(backend, Config::default())
    }

    pub fn with_config(backend: Backend, config: Config) -> Self {
        Self::on_store(backend.open(), config)
    }

    pub fn on_store(store: TestStore, config: Config) -> Self {
        let clock = Arc::new(ManualClock::new(T0));
        let service = Service::builder_shared(store.store.clone())
            .master_keys(KeyRing::new(1, &[42; 32]))
            .config(config)
            .clock(clock.clone())
            .build()
            .unwrap();
        let partner = service.create_partner("Acme", Environment::Sandbox).unwrap().partner_id;
        Self { service, clock, partner, store }
    }

    pub fn now(&self) -> u64 {
        rampart_core::Clock::now(&*self.clock)
    }

    /// The code of `secret` at now + `steps` * 30 s.
    pub fn code(&self, secret: &Secret, steps: i64) -> String {
        totp::code_at(secret, self.now().checked_add_signed(steps * 30).unwrap())
    }

    /// A code that is none of the window's codes.
    pub fn wrong_code(&self, secret: &Secret) -> String {
        let window: Vec<String> = (-2..=2).map(|s| self.code(secret, s)).collect();
        (0..1_000_000).map(|v| format!("{v:06}")).find(|c| !window.contains(c)).unwrap()
    }

    /// Create, returning the secret as the user's app would hold it.
    pub fn create(&self, contact: &ContactId) -> Secret {
        let setup = self.service.create_2fa(&self.partner, contact, None).unwrap();
        Secret::from_base32(&setup.manual).unwrap()
    }

    /// Create and enable, then move to the next step so a fresh code is usable.
    pub fn enabled(&self, contact: &ContactId) -> Secret {
        let secret = self.create(contact);
        self.service.enable_2fa(&self.partner, contact, self.code(&secret, 0).as_str()).unwrap();
        self.clock.advance(30);
        secret
    }

    pub fn record(&self, contact: &ContactId) -> ContactRecord {
        self.service.store().contact(&self.partner, contact).unwrap().unwrap_or_default()
    }
}

pub fn contact() -> ContactId {
    ContactId::from_uuid(uuid::Uuid::new_v4())
}

/// `tests/vectors/`, found at run time: cargo sets `CARGO_MANIFEST_DIR` for the test process.
/// A path baked in at compile time goes stale when one shared target dir serves clones at
/// different paths (cargo reuses the binary, which then reads the other clone's files).
pub fn vectors_dir() -> PathBuf {
    let manifest =
        std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| env!("CARGO_MANIFEST_DIR").into(), PathBuf::from);
    manifest.join("../tests/vectors")
}

/// Read a file of `tests/vectors/`.
pub fn vectors(name: &str) -> serde_json::Value {
    let path = vectors_dir().join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The forms a TOTP secret could be readable in at rest, each with a label for messages: the
/// raw bytes, base32 (upper and lower case, with and without `=` padding) and hex (upper and
/// lower case).
pub fn secret_forms(name: &str, secret: &Secret) -> Vec<(String, Vec<u8>)> {
    use data_encoding::{BASE32, BASE32_NOPAD, HEXLOWER};
    let bytes = secret.as_bytes();
    let mut forms = vec![(format!("{name} (raw bytes)"), bytes.to_vec())];
    for (encoding, text) in [
        ("base32", BASE32.encode(bytes)),
        ("unpadded base32", BASE32_NOPAD.encode(bytes)),
        ("hex", HEXLOWER.encode(bytes)),
    ] {
        forms.push((format!("{name} ({encoding}, upper case)"), text.to_uppercase().into_bytes()));
        forms.push((format!("{name} ({encoding}, lower case)"), text.to_lowercase().into_bytes()));
    }
    forms
}

/// Byte strings searched for all at once in large inputs (a database cluster's files), each
/// with a label. Every needle is at least [`Needles::MIN_LEN`] bytes long, so each occurrence
/// covers a whole 8-byte-aligned word of the input: only those words are looked up (a bit
/// filter, then a map of every 8-byte window of every needle), which keeps a scan of a few
/// hundred megabytes quick even in an unoptimised test build.
pub struct Needles {
    needles: Vec<(String, Vec<u8>)>,
    filter: Vec<u64>,
    windows: std::collections::HashMap<u64, Vec<(usize, usize)>>,
}

impl Needles {
    /// The shortest needle: an occurrence at any offset then spans an aligned 8-byte word.
    pub const MIN_LEN: usize = 15;
    const FILTER_BITS: u32 = 20;

    pub fn new(needles: Vec<(String, Vec<u8>)>) -> Self {
        let mut filter = vec![0u64; 1 << (Self::FILTER_BITS - 6)];
        let mut windows: std::collections::HashMap<u64, Vec<(usize, usize)>> = std::collections::HashMap::new();
        for (i, (label, bytes)) in needles.iter().enumerate() {
            assert!(bytes.len() >= Self::MIN_LEN, "needle {label} is shorter than {} bytes", Self::MIN_LEN);
            for (offset, window) in bytes.windows(8).enumerate() {
                let word = u64::from_le_bytes(window.try_into().unwrap());
                let bit = Self::bit(word);
                filter[bit / 64] |= 1 << (bit % 64);
                windows.entry(word).or_default().push((i, offset));
            }
        }
        Self { needles, filter, windows }
    }

    fn bit(word: u64) -> usize {
        (word.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - Self::FILTER_BITS)) as usize
    }

    /// The labels of the needles that occur in `hay`, in needle order.
    pub fn found_in(&self, hay: &[u8]) -> Vec<&str> {
        let mut found = vec![false; self.needles.len()];
        for (n, chunk) in hay.chunks_exact(8).enumerate() {
            let word = u64::from_le_bytes(chunk.try_into().unwrap());
            let bit = Self::bit(word);
            if self.filter[bit / 64] & (1 << (bit % 64)) == 0 {
                continue;
            }
            for &(i, offset) in self.windows.get(&word).into_iter().flatten() {
                let needle = &self.needles[i].1;
                let Some(start) = (n * 8).checked_sub(offset) else { continue };
                if hay.get(start..start + needle.len()) == Some(needle) {
                    found[i] = true;
                }
            }
        }
        self.needles.iter().zip(found).filter(|(_, f)| *f).map(|((label, _), _)| label.as_str()).collect()
    }
}

/// Every audit row of every partner (partner id order, then `seq`), through the export.
pub fn audit_rows(service: &Service) -> Vec<rampart_core::AuditRow> {
    let mut rows = Vec::new();
    service
        .export_audit(None, None, |r| {
            rows.push(r.clone());
            Ok(())
        })
        .unwrap();
    rows
}

/// (actor, event) of a partner's audit rows, oldest first.
pub fn trail(service: &Service, partner: &PartnerId) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let page = service.audit_events(partner, None, after, 500).unwrap();
        out.extend(page.events.iter().map(|r| (r.actor.clone(), r.event.clone())));
        match page.next {
            Some(next) => after = next,
            None => return out,
        }
    }
}

/// Run `n` threads released together; collect their results.
pub fn together<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let barrier = std::sync::Barrier::new(n);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (f, barrier) = (&f, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    f(i)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}
