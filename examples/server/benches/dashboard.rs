//! The dashboard's orders at scale (SPEC 11; docs/BENCHMARKS.md, "Partner dashboard"): a bench
//! script, never part of `make test`.
//!
//! 100,000 sandbox orders over 100 days on an SQLite file, a signed-in member, the server on
//! loopback in this process; then, through `curl` (another process, so it holds nothing of
//! ours):
//! 1. the orders list filtered by a 30-day range, first page of 50: median and p95 of 20;
//! 2. the CSV export of the same range (about 30,000 rows) and of every order: bytes, rows, time,
//!    and this process's peak RSS growth over its resting size while the export streams
//!    (sampled every 10 ms), with its anonymous part (heap) apart.
//!
//! The store has the server's own SQLite settings (`rampart_server::sqlite_options`: no
//! memory map); `RAMPART_BENCH_MMAP=1` maps the file as the library's default does, to see the
//! difference.
//!
//!     cargo bench -p rampart-server --bench dashboard

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rampart_core::store::{Effects, OrderRecord, OrderStatus};
use rampart_core::totp::{self, Secret};
use rampart_core::vocab::Role;
use rampart_core::{Clock, ContactId, Environment, KeyRing, OrderId, Service, SqliteStore, SystemClock};

const ORDERS: u64 = 100_000;
const DAY: u64 = 86_400;

/// A `/proc/self/status` memory line, in bytes.
fn status(name: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(name)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

fn rss() -> u64 {
    status("VmRSS:")
}

/// One GET by curl: its own measure of the time to the last byte (not counting its start),
/// and the bytes.
fn curl(url: &str, cookie: &str) -> (Duration, u64) {
    let out = Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code} %{size_download} %{time_total}",
            "-H",
            &format!("cookie: {cookie}"),
            url,
        ])
        .output()
        .expect("curl");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mut parts = text.split(' ');
    assert_eq!(parts.next(), Some("200"), "{url}: {text}");
    let bytes = parts.next().unwrap().parse().unwrap();
    (Duration::from_secs_f64(parts.next().unwrap().parse().unwrap()), bytes)
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = rampart_server::sqlite_options();
    if std::env::var_os("RAMPART_BENCH_MMAP").is_some_and(|v| v == "1") {
        options.mmap_bytes = rampart_core::store::SqliteOptions::default().mmap_bytes;
    }
    println!("SQLite: {options:?}");
    let store = SqliteStore::open_with(dir.path().join("bench.db"), &options).unwrap();
    let service = Arc::new(Service::builder(store).master_keys(KeyRing::new(1, &[7; 32])).build().unwrap());
    let partner = service.create_partner("Bench", Environment::Sandbox).unwrap().partner_id;
    let now = SystemClock.now();
    let start = now - 100 * DAY;
    let seeded = Instant::now();
    let contacts: Vec<ContactId> = (0..1000).map(|_| ContactId::random()).collect();
    for i in 0..ORDERS {
        let at = start + i * (100 * DAY / ORDERS);
        let o = OrderRecord {
            id: OrderId::random(),
            partner_id: partner,
            contact_id: contacts[usize::try_from(i % 1000).unwrap()],
            coin: ["btc", "eth", "sol"][usize::try_from(i % 3).unwrap()].into(),
            amount: "25".into(),
            currency: "usd".into(),
            address: "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx".into(),
            price: "64000.00".into(),
            quantity: "0.00039062".into(),
            status: if i % 10 == 0 { OrderStatus::Failed } else { OrderStatus::Completed },
            created_at: at,
            updated_at: at,
        };
        service.store().insert_order(&o, &Effects::default()).unwrap();
    }
    println!("seeded {ORDERS} orders in {:.1} s", seeded.elapsed().as_secs_f64());
    let issued = service.invite_member_as_operator("bench", &partner, "bench@example.com", Role::Viewer).unwrap();
    let (token, _, setup) = service.accept_invitation(issued.token.expose(), "violet tractor lamp 42").unwrap();
    let code = totp::code_at(&Secret::from_base32(&setup.manual).unwrap(), SystemClock.now());
    service.finish_member_setup(token.expose(), &code).unwrap();
    let cookie = format!("rampart_dashboard={}", token.expose());

    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let svc = service.clone();
    runtime.spawn(async move { rampart_server::serve(listener, svc, std::future::pending()).await });

    let day = |unix: u64| rampart_core::recovery::rfc3339(unix)[..10].to_owned();
    let range = format!("from={}&to={}", day(start + 40 * DAY), day(start + 69 * DAY));
    // Warm up, then the resting size.
    curl(&format!("{base}/v1/dashboard/orders?{range}&limit=50"), &cookie);
    let mut times: Vec<Duration> =
        (0..20).map(|_| curl(&format!("{base}/v1/dashboard/orders?{range}&limit=50"), &cookie).0).collect();
    times.sort();
    println!(
        "orders list, 30-day filter, first page of 50: median {:.1} ms, p95 {:.1} ms (20 requests)",
        times[10].as_secs_f64() * 1000.0,
        times[19].as_secs_f64() * 1000.0
    );
    let mut me: Vec<Duration> = (0..20).map(|_| curl(&format!("{base}/v1/dashboard/me"), &cookie).0).collect();
    me.sort();
    println!("for scale, GET /v1/dashboard/me: median {:.1} ms (20 requests)", me[10].as_secs_f64() * 1000.0);
    let mut unfiltered: Vec<Duration> =
        (0..20).map(|_| curl(&format!("{base}/v1/dashboard/orders?limit=50"), &cookie).0).collect();
    unfiltered.sort();
    println!("orders list, no filter, first page of 50: median {:.1} ms", unfiltered[10].as_secs_f64() * 1000.0);
    for (label, query) in [("30-day filter", range.as_str()), ("every order", "")] {
        std::thread::sleep(Duration::from_millis(200));
        let (resting, resting_anon) = (rss(), status("RssAnon:"));
        let (peak, done) = (Arc::new(AtomicU64::new(resting)), Arc::new(AtomicBool::new(false)));
        let peak_anon = Arc::new(AtomicU64::new(resting_anon));
        let sampler = {
            let (peak, peak_anon, done) = (peak.clone(), peak_anon.clone(), done.clone());
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    peak.fetch_max(rss(), Ordering::Relaxed);
                    peak_anon.fetch_max(status("RssAnon:"), Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(10));
                }
            })
        };
        let (took, bytes) = curl(&format!("{base}/v1/dashboard/orders.csv?{query}"), &cookie);
        done.store(true, Ordering::Relaxed);
        sampler.join().unwrap();
        let growth = peak.load(Ordering::Relaxed).saturating_sub(resting);
        let anon = peak_anon.load(Ordering::Relaxed).saturating_sub(resting_anon);
        println!(
            "orders CSV, {label}: {bytes} bytes in {:.2} s; RSS {:.1} MB at rest, peak growth {:.1} MB \
             (of which anonymous memory {:.1} MB; the rest the database's memory-mapped pages)",
            took.as_secs_f64(),
            resting as f64 / 1e6,
            growth as f64 / 1e6,
            anon as f64 / 1e6
        );
    }
}
