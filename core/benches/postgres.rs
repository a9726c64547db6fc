//! Throughput of the PostgreSQL store from plain threads (T15 of the scale-out test list);
//! `make pg-bench` (scripts/pg-bench.sh) runs it in rounds alternating with its floors, pgbench
//! running `update_contact`'s and `contact_enabled`'s SQL on the same database. Results and how
//! to read them: docs/BENCHMARKS.md, "PostgreSQL store".
//!
//! ```text
//! cargo bench -p rampart-core --features postgres --bench postgres -- setup STATE_FILE
//! cargo bench -p rampart-core --features postgres --bench postgres -- verify|status|probes STATE_FILE [ROUND]
//! ```
//!
//! The database is `RAMPART_BENCH_DATABASE_URL` (else `RAMPART_TEST_DATABASE_URL`), an empty
//! one, reached without TLS: `setup` migrates it, creates a partner through `Service`, enables
//! `REAL_CONTACTS` contacts through `create_2fa` / `enable_2fa`, and fills the table up to
//! `CONTACTS` rows with `COPY`: enabled contacts whose id is `BULK_PREFIX` then the row number
//! (8 bytes big-endian, so pgbench can name them), each holding one shared TOTP secret sealed
//! for it as `enable_2fa` seals (so every row can be verified). Then, from `THREADS` threads
//! for `DURATION`:
//!
//! - `verify`: `Service::verify_2fa` with the right code for a contact whose last step is
//!   older, so each call is accepted and commits. Each thread walks its own share of the
//!   contacts in a shuffled order; its clock (thread-local, see [`ThreadClock`]) starts past the
//!   newest step in the table and moves one step on after each pass, so no call is a replay.
//! - `status`: `Service::status_2fa` of random contacts (the one-column point read).
//! - `probes`: `ROUNDS` rounds, each running the store's verify and then (in an order that turns
//!   each round) its SQL on one plain `postgres` client per thread with the store's session
//!   settings and no pool: as the store's first version sent it (a test query at checkout,
//!   then statements given as text, each prepared, run and closed), prepared once per connection with the
//!   checkout test, and prepared without it; the same for status. `PROBE_DURATION` each. They
//!   split the store's cost between round trips and the rest (pool, service, crypto).
//!
//! Every phase prints one line the script picks up:
//! `result NAME round=R ops_per_s=... p50_ms=... p99_ms=... ops=... errors=...`.
//! The store is only ever used from plain threads (the client panics on an async thread).

use std::cell::Cell;
use std::fmt::Write as _;
use std::str::FromStr;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::{ToSql, Type};
use postgres::{Client, IsolationLevel, NoTls, Statement};
use rampart_core::crypto::Field;
use rampart_core::totp::{self, Secret};
use rampart_core::{Clock, ContactId, Environment, KeyRing, PartnerId, PostgresStore, Service};

/// The setup's time; `verify` starts past the newest step in the table.
const BASE: u64 = 1_700_000_010;
/// The first 8 bytes of every bulk contact id ("RAMPBULK"); the last 8 are its row number.
const BULK_PREFIX: u64 = 0x5241_4d50_4255_4c4b;
/// The master key of the bench (every run seals and opens with it).
const MASTER_KEY: [u8; 32] = [7; 32];

/// `update_contact`'s statements (core/src/store/postgres.rs), for the probes.
const LOCK_CONTACT: &str = "SELECT kyc_passed, enabled, secret, pending, pending_created_at, last_step, failures, \
     last_failure_at FROM contacts WHERE partner_id = $1 AND contact_id = $2 FOR UPDATE";
const UPDATE_CONTACT: &str = "UPDATE contacts SET kyc_passed = $3, enabled = $4, secret = $5, pending = $6, \
     pending_created_at = $7, last_step = $8, failures = $9, last_failure_at = $10 \
     WHERE partner_id = $1 AND contact_id = $2";
/// What the store sets on each connection (timeouts arm timers in the server on every statement).
const SESSION_SETTINGS: &str = "SET lock_timeout = '2s'; SET statement_timeout = '5s'; \
     SET idle_in_transaction_session_timeout = '10s'";
/// `contact_enabled`'s statement.
const SELECT_ENABLED: &str = "SELECT enabled FROM contacts WHERE partner_id = $1 AND contact_id = $2";

/// How a probe sends the store's SQL: prepared once per connection (else as text, as the store
/// does), and with a test query before each call (as the pool's checkout does).
#[derive(Clone, Copy)]
struct Probe {
    name: &'static str,
    prepared: bool,
    checkout_test: bool,
}

const VERIFY_PROBES: [Probe; 3] = [
    Probe { name: "probe_verify_sql_as_store", prepared: false, checkout_test: true },
    Probe { name: "probe_verify_sql_prepared_checkout_test", prepared: true, checkout_test: true },
    Probe { name: "probe_verify_sql_prepared", prepared: true, checkout_test: false },
];
const STATUS_PROBES: [Probe; 3] = [
    Probe { name: "probe_status_sql_as_store", prepared: false, checkout_test: true },
    Probe { name: "probe_status_sql_prepared_checkout_test", prepared: true, checkout_test: true },
    Probe { name: "probe_status_sql_prepared", prepared: true, checkout_test: false },
];

thread_local! {
    static NOW: Cell<u64> = const { Cell::new(BASE) };
}

/// A clock each thread sets for itself, so threads walking disjoint contacts move to their
/// next time step independently.
#[derive(Debug)]
struct ThreadClock;

impl Clock for ThreadClock {
    fn now(&self) -> u64 {
        NOW.with(Cell::get)
    }
}

fn env_or<T: FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| panic!("{name}={v} does not parse")),
        Err(_) => default,
    }
}

/// `DURATION`-style seconds: `10`, `10s` or `1.5`.
fn env_secs(name: &str, default: f64) -> Duration {
    let text = std::env::var(name).unwrap_or_default();
    let text = text.trim().trim_end_matches('s');
    Duration::from_secs_f64(if text.is_empty() { default } else { text.parse().expect("a duration in seconds") })
}

fn database_url() -> Option<String> {
    std::env::var("RAMPART_BENCH_DATABASE_URL").or_else(|_| std::env::var("RAMPART_TEST_DATABASE_URL")).ok()
}

fn service(url: &str) -> Service {
    let store = PostgresStore::open(url).expect("open the PostgreSQL store");
    Service::builder(store)
        .master_keys(KeyRing::new(1, &MASTER_KEY))
        .clock(Arc::new(ThreadClock))
        .build()
        .expect("build the service")
}

fn bulk_contact(i: u64) -> ContactId {
    ContactId::from_uuid(uuid::Uuid::from_u128(u128::from(BULK_PREFIX) << 64 | u128::from(i)))
}

/// The TOTP secret every bulk contact holds.
fn bulk_secret() -> Secret {
    Secret::from_bytes(b"rampart-bench-secret".to_vec()).expect("a 20-byte secret")
}

/// A small xorshift generator: the walk orders and random picks need no quality beyond that.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// What `setup` leaves for the other modes: the partner, the bulk row count, and the contacts made
/// through the service with their secrets (base32).
struct State {
    partner: PartnerId,
    bulk: u64,
    real: Vec<(ContactId, String)>,
}

impl State {
    fn write(&self, path: &str) {
        let mut text = format!("{}\n{}\n", self.partner, self.bulk);
        for (contact, secret) in &self.real {
            writeln!(text, "{contact} {secret}").unwrap();
        }
        std::fs::write(path, text).expect("write the state file");
    }

    fn read(path: &str) -> Self {
        let text = std::fs::read_to_string(path).expect("read the state file (run `setup` first)");
        let mut lines = text.lines();
        let partner = PartnerId::parse(lines.next().unwrap()).unwrap();
        let bulk = lines.next().unwrap().parse().unwrap();
        let real = lines
            .map(|l| {
                let (c, s) = l.split_once(' ').unwrap();
                (ContactId::parse(c).unwrap(), s.to_owned())
            })
            .collect();
        Self { partner, bulk, real }
    }
}

fn setup(url: &str, state_path: &str) {
    let contacts: u64 = env_or("CONTACTS", 1_000_000);
    let real: u64 = env_or("REAL_CONTACTS", 10_000).min(contacts);
    let threads: usize = env_or("THREADS", 8);
    let started = Instant::now();
    let service = Arc::new(service(url));
    let partner = service.create_partner("Bench", Environment::Sandbox).unwrap().partner_id;

    // Contacts made as a partner makes them: create (a QR code each), then enable.
    let made: Vec<(ContactId, String)> = thread::scope(|s| {
        let workers: Vec<_> = (0..threads as u64)
            .map(|k| {
                let service = &service;
                s.spawn(move || {
                    (k..real)
                        .step_by(threads)
                        .map(|_| {
                            let contact = ContactId::from_uuid(uuid::Uuid::new_v4());
                            let setup = service.create_2fa(&partner, &contact, None).unwrap();
                            let secret = Secret::from_base32(&setup.manual).unwrap();
                            service.enable_2fa(&partner, &contact, totp::code_at(&secret, BASE).as_str()).unwrap();
                            (contact, setup.manual)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    println!("setup: {real} contacts created and enabled through Service in {:.1} s", started.elapsed().as_secs_f64());

    // The rest in one COPY: the rows enable writes, sealed for each contact.
    let filled = Instant::now();
    let bulk = contacts - real;
    let keys = KeyRing::new(1, &MASTER_KEY);
    let secret = bulk_secret();
    let mut client = Client::connect(url, NoTls).expect("connect for the bulk fill");
    let sink = client
        .copy_in("COPY contacts (partner_id, contact_id, enabled, secret, last_step) FROM STDIN (FORMAT binary)")
        .unwrap();
    let mut writer = BinaryCopyInWriter::new(sink, &[Type::BYTEA, Type::BYTEA, Type::BOOL, Type::BYTEA, Type::INT8]);
    let last_step = i64::try_from(BASE / 30).unwrap();
    let p = partner.as_bytes().as_slice();
    for i in 0..bulk {
        let contact = bulk_contact(i);
        let sealed = keys.seal(&partner, &contact, Field::Secret, secret.as_bytes()).unwrap();
        writer.write(&[&p, &contact.as_bytes().as_slice(), &true, &sealed, &last_step]).unwrap();
    }
    writer.finish().unwrap();
    client.batch_execute("VACUUM (ANALYZE) contacts").unwrap();
    client.batch_execute("CHECKPOINT").unwrap();
    let (rows, size): (i64, String) = {
        let row = client
            .query_one("SELECT COUNT(*), pg_size_pretty(pg_total_relation_size('contacts')) FROM contacts", &[])
            .unwrap();
        (row.get(0), row.get(1))
    };
    println!(
        "setup: {bulk} more rows by COPY, vacuumed and checkpointed in {:.1} s; contacts holds {rows} rows ({size} with its indexes)",
        filled.elapsed().as_secs_f64()
    );
    State { partner, bulk, real: made }.write(state_path);
}

/// Operations and latencies of one phase, gathered from its threads.
#[derive(Default)]
struct Tally {
    micros: Vec<u32>,
    errors: u64,
}

impl Tally {
    fn time<T, E>(&mut self, f: impl FnOnce() -> Result<T, E>) -> Option<T> {
        let start = Instant::now();
        let out = f();
        self.micros.push(u32::try_from(start.elapsed().as_micros()).unwrap_or(u32::MAX));
        match out {
            Ok(v) => Some(v),
            Err(_) => {
                self.errors += 1;
                None
            }
        }
    }
}

/// A probe's connection: a plain client with the store's session settings.
struct ProbeClient {
    client: Client,
    rng: Rng,
    /// Lock, update and status statements, when prepared once.
    statements: Option<(Statement, Statement, Statement)>,
}

/// The state `measure` modes share: the service, the contacts and their secrets.
struct Bench {
    url: String,
    threads: usize,
    duration: Duration,
    service: Service,
    partner: PartnerId,
    /// The bulk contacts' shared secret, then each real contact's.
    secrets: Vec<Secret>,
    /// Every contact with the index of its secret.
    contacts: Vec<(ContactId, usize)>,
    bulk: usize,
}

impl Bench {
    fn open(url: &str, state_path: &str) -> Self {
        let state = State::read(state_path);
        let secrets = std::iter::once(bulk_secret())
            .chain(state.real.iter().map(|(_, s)| Secret::from_base32(s).unwrap()))
            .collect();
        let contacts = (0..state.bulk)
            .map(|i| (bulk_contact(i), 0))
            .chain(state.real.iter().enumerate().map(|(i, r)| (r.0, i + 1)))
            .collect();
        Self {
            url: url.to_owned(),
            threads: env_or("THREADS", 8),
            duration: env_secs("DURATION", 10.0),
            service: service(url),
            partner: state.partner,
            secrets,
            contacts,
            bulk: usize::try_from(state.bulk).unwrap(),
        }
    }

    /// Run `work` on every thread at once for `duration`, after `prepare` (not timed) on each,
    /// and print the phase's line. `work(state, tally, deadline)` loops until the deadline.
    fn phase<S: Send>(
        &self,
        name: &str,
        round: usize,
        duration: Duration,
        prepare: impl Fn(usize) -> S + Sync,
        work: impl Fn(&mut S, &mut Tally, Instant) + Sync,
    ) {
        let threads = self.threads;
        let barrier = Barrier::new(threads);
        let tallies: Vec<(Tally, Duration)> = thread::scope(|s| {
            let workers: Vec<_> = (0..threads)
                .map(|k| {
                    let (barrier, prepare, work) = (&barrier, &prepare, &work);
                    s.spawn(move || {
                        let mut state = prepare(k);
                        barrier.wait();
                        let start = Instant::now();
                        let mut tally = Tally::default();
                        work(&mut state, &mut tally, start + duration);
                        (tally, start.elapsed())
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        let wall = tallies.iter().map(|t| t.1).max().unwrap_or_default().as_secs_f64();
        let errors: u64 = tallies.iter().map(|t| t.0.errors).sum();
        let mut micros: Vec<u32> = tallies.into_iter().flat_map(|t| t.0.micros).collect();
        micros.sort_unstable();
        let pct = |p: f64| {
            let i = ((micros.len() as f64 * p) as usize).min(micros.len().saturating_sub(1));
            micros.get(i).map_or(0.0, |&v| f64::from(v) / 1000.0)
        };
        println!(
            "result {name} round={round} ops_per_s={:.0} p50_ms={:.3} p99_ms={:.3} ops={} errors={errors} \
             threads={threads} secs={wall:.1}",
            micros.len() as f64 / wall,
            pct(0.50),
            pct(0.99),
            micros.len(),
        );
    }

    /// Open the pool's connections before the clock starts.
    fn warm(&self, k: usize) {
        let mut rng = Rng::new(k as u64 + 1);
        for _ in 0..20 {
            self.service.status_2fa(&self.partner, &self.contacts[rng.below(self.contacts.len())].0).unwrap();
        }
    }

    fn verify(&self, round: usize, duration: Duration) {
        // Start past every step already used (pgbench and the probes move rows on by one).
        let mut client = Client::connect(&self.url, NoTls).expect("connect");
        let newest: i64 = client
            .query_one(
                "SELECT COALESCE(MAX(last_step), 0) FROM contacts WHERE partner_id = $1",
                &[&self.partner.as_bytes().as_slice()],
            )
            .unwrap()
            .get(0);
        let first_step = u64::try_from(newest).unwrap() + 1;
        let (threads, contacts) = (self.threads, &self.contacts);
        self.phase(
            "store_verify_commit",
            round,
            duration,
            |k| {
                self.warm(k);
                // This thread's share, shuffled, so consecutive calls touch unrelated pages.
                let mut mine: Vec<usize> = (k..contacts.len()).step_by(threads).collect();
                let mut rng = Rng::new((round * threads + k) as u64 + 101);
                for i in (1..mine.len()).rev() {
                    mine.swap(i, rng.below(i + 1));
                }
                mine
            },
            |mine, tally, deadline| {
                let mut rejected = 0u64;
                'passes: for pass in 0.. {
                    let now = (first_step + pass) * 30 + 15;
                    NOW.with(|t| t.set(now));
                    let codes: Vec<String> = self.secrets.iter().map(|s| totp::code_at(s, now)).collect();
                    for &i in mine.iter() {
                        if Instant::now() >= deadline {
                            break 'passes;
                        }
                        let (contact, secret) = contacts[i];
                        let verdict =
                            tally.time(|| self.service.verify_2fa(&self.partner, &contact, codes[secret].as_str()));
                        rejected += u64::from(verdict.is_some_and(|v| !v.is_accepted()));
                    }
                }
                // A rejection would mean a replay: the bench is wrong, so it shows.
                tally.errors += rejected;
            },
        );
    }

    fn status(&self, round: usize, duration: Duration) {
        self.phase(
            "store_status",
            round,
            duration,
            |k| {
                self.warm(k);
                Rng::new((round * self.threads + k) as u64 + 201)
            },
            |rng, tally, deadline| {
                while Instant::now() < deadline {
                    let contact = self.contacts[rng.below(self.contacts.len())].0;
                    if tally.time(|| self.service.status_2fa(&self.partner, &contact)) == Some(false) {
                        tally.errors += 1;
                    }
                }
            },
        );
    }

    fn probe_client(&self, seed: u64, probe: Probe) -> ProbeClient {
        let mut client = Client::connect(&self.url, NoTls).expect("connect");
        client.batch_execute(SESSION_SETTINGS).unwrap();
        let statements = probe.prepared.then(|| {
            (
                client.prepare(LOCK_CONTACT).unwrap(),
                client.prepare(UPDATE_CONTACT).unwrap(),
                client.prepare(SELECT_ENABLED).unwrap(),
            )
        });
        ProbeClient { client, rng: Rng::new(seed), statements }
    }

    /// `update_contact`'s transaction for a verify: lock and read the row, write it back with
    /// the next step, commit.
    fn read_change_write(&self, c: &mut ProbeClient, probe: Probe) -> Result<(), postgres::Error> {
        let contact = bulk_contact(c.rng.below(self.bulk) as u64);
        let key: [&(dyn ToSql + Sync); 2] = [&self.partner.as_bytes().as_slice(), &contact.as_bytes().as_slice()];
        if probe.checkout_test {
            c.client.simple_query("")?;
        }
        let mut tx = c.client.build_transaction().isolation_level(IsolationLevel::ReadCommitted).start()?;
        let row = match &c.statements {
            Some((lock, _, _)) => tx.query_opt(lock, &key)?,
            None => tx.query_opt(LOCK_CONTACT, &key)?,
        }
        .expect("a bulk contact");
        // Decoded as the store decodes a record, then written back with the next step.
        let (kyc, enabled): (bool, bool) = (row.get(0), row.get(1));
        let (secret, pending): (Option<Vec<u8>>, Option<Vec<u8>>) = (row.get(2), row.get(3));
        let (pending_at, failures, failed_at): (Option<i64>, i64, Option<i64>) = (row.get(4), row.get(6), row.get(7));
        let last_step = row.get::<_, Option<i64>>(5).map(|s| s + 1);
        let params: [&(dyn ToSql + Sync); 10] =
            [key[0], key[1], &kyc, &enabled, &secret, &pending, &pending_at, &last_step, &failures, &failed_at];
        match &c.statements {
            Some((_, update, _)) => tx.execute(update, &params)?,
            None => tx.execute(UPDATE_CONTACT, &params)?,
        };
        tx.commit()
    }

    fn read_enabled(&self, c: &mut ProbeClient, probe: Probe) -> Result<Option<postgres::Row>, postgres::Error> {
        let contact = bulk_contact(c.rng.below(self.bulk) as u64);
        let key: [&(dyn ToSql + Sync); 2] = [&self.partner.as_bytes().as_slice(), &contact.as_bytes().as_slice()];
        if probe.checkout_test {
            c.client.simple_query("")?;
        }
        match &c.statements {
            Some((_, _, select)) => c.client.query_opt(select, &key),
            None => c.client.query_opt(SELECT_ENABLED, &key),
        }
    }

    fn probes(&self) {
        let rounds: usize = env_or("ROUNDS", 3);
        let duration = env_secs("PROBE_DURATION", 3.0);
        for (verify, probes) in [(true, VERIFY_PROBES), (false, STATUS_PROBES)] {
            for round in 1..=rounds {
                // The store (None) and its probes, starting one later each round.
                let order: Vec<Option<Probe>> = std::iter::once(None).chain(probes.map(Some)).collect();
                for i in 0..order.len() {
                    match order[(i + round - 1) % order.len()] {
                        None if verify => self.verify(round, duration),
                        None => self.status(round, duration),
                        Some(probe) => self.phase(
                            probe.name,
                            round,
                            duration,
                            |k| self.probe_client((round * self.threads + k) as u64 + 301, probe),
                            |c, tally, deadline| {
                                while Instant::now() < deadline {
                                    if verify {
                                        tally.time(|| self.read_change_write(c, probe));
                                    } else {
                                        tally.time(|| self.read_enabled(c, probe));
                                    }
                                }
                            },
                        ),
                    }
                }
            }
        }
    }
}

fn main() {
    // `cargo bench` adds `--bench`; the words are the mode, the state file and the round.
    let words: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let Some(url) = database_url() else {
        println!("postgres bench: no RAMPART_BENCH_DATABASE_URL or RAMPART_TEST_DATABASE_URL; `make pg-bench` runs it");
        return;
    };
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let round = words.get(2).map_or(1, |r| r.parse().expect("a round number"));
    match words[..] {
        ["setup", state] => setup(&url, state),
        ["verify", state, ..] => {
            let bench = Bench::open(&url, state);
            bench.verify(round, bench.duration);
        }
        ["status", state, ..] => {
            let bench = Bench::open(&url, state);
            bench.status(round, bench.duration);
        }
        ["probes", state] => Bench::open(&url, state).probes(),
        _ => println!(
            "usage: cargo bench -p rampart-core --features postgres --bench postgres -- \
             setup|verify|status|probes STATE_FILE [ROUND]"
        ),
    }
}
