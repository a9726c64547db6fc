//! Core benchmarks; results and how to read them are in docs/BENCHMARKS.md.
//!
//! `cargo bench -p rampart-core --bench core` (or `make bench`).
//!
//! Each group measures Rampart beside its floor or peer in the same run, so the figures are
//! compared as ratios (absolute times on shared 2-core machines are noisy).

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hmac::{Hmac, Mac};
use rampart_core::crypto::Field;
use rampart_core::totp::{self, Secret};
use rampart_core::{ContactId, Environment, KeyRing, ManualClock, PartnerId, Service, SqliteStore, Token};
use rusqlite::params;
use sha1::Sha1;

const NOW: u64 = 1_700_000_000;

fn secret() -> Secret {
    Secret::from_bytes(b"12345678901234567890".to_vec()).unwrap()
}

/// The physical floor of a window-1 verify: three full HMAC-SHA1 computations.
fn three_hmacs(key: &[u8], step: u64) -> [u8; 20] {
    let mut out = [0u8; 20];
    for s in step - 1..=step + 1 {
        let mut mac = Hmac::<Sha1>::new_from_slice(key).unwrap();
        mac.update(&s.to_be_bytes());
        let h = mac.finalize().into_bytes();
        for (o, b) in out.iter_mut().zip(h) {
            *o ^= b;
        }
    }
    out
}

fn verify(c: &mut Criterion) {
    let s = secret();
    let valid = Token::parse(&totp::code_at(&s, NOW));
    let wrong = {
        let window: Vec<String> = (-1..=1).map(|d: i64| totp::code_at(&s, NOW.saturating_add_signed(d * 30))).collect();
        Token::parse(&(0..).map(|v| format!("{v:06}")).find(|c| !window.contains(c)).unwrap())
    };
    let peer = totp_rs::TOTP::new_unchecked(totp_rs::Algorithm::SHA1, 6, 1, 30, s.as_bytes().to_vec());
    let valid_text = totp::code_at(&s, NOW);
    let mut g = c.benchmark_group("verify_window1");
    g.bench_function("floor_3x_hmac_sha1", |b| b.iter(|| three_hmacs(black_box(s.as_bytes()), black_box(NOW / 30))));
    g.bench_function("rampart_valid", |b| b.iter(|| totp::verify(black_box(&s), black_box(valid), black_box(NOW), 1)));
    g.bench_function("rampart_invalid", |b| {
        b.iter(|| totp::verify(black_box(&s), black_box(wrong), black_box(NOW), 1))
    });
    g.bench_function("rampart_malformed", |b| {
        b.iter(|| totp::verify(black_box(&s), black_box(Token::parse(black_box("12345"))), NOW, 1))
    });
    g.bench_function("peer_totp_rs_check_valid", |b| b.iter(|| peer.check(black_box(&valid_text), black_box(NOW))));
    g.bench_function("peer_totp_rs_check_invalid", |b| b.iter(|| peer.check(black_box("000000"), black_box(NOW))));
    g.finish();
}

const ACCOUNT: &str = "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11";

fn create(c: &mut Criterion) {
    let mut g = c.benchmark_group("create");
    g.bench_function("new_secret_uri_qr_data_uri", |b| b.iter(|| totp::new_secret(black_box("Rampart2FA"), ACCOUNT)));
    let uri = totp::new_secret("Rampart2FA", ACCOUNT).unwrap().uri;
    g.bench_function("qr_data_uri_only", |b| b.iter(|| totp::qr_png_data_uri(black_box(&uri))));
    g.bench_function("matrix_fast_qr", |b| {
        b.iter(|| fast_qr::QRBuilder::new(black_box(uri.as_bytes())).ecl(fast_qr::ECL::M).build())
    });
    g.bench_function("peer_matrix_qrcode_crate", |b| {
        b.iter(|| qrcode::QrCode::with_error_correction_level(black_box(uri.as_bytes()), qrcode::EcLevel::M))
    });
    g.finish();
}

/// One way to draw a QR matrix as a 1-bit PNG data URI with a 4-module quiet zone, as
/// `qr_png_data_uri` does after the matrix (its pixels, PNG and base64).
fn qr_data_uri_as(
    code: &fast_qr::QRCode,
    scale: usize,
    compression: png::Compression,
    filter: png::FilterType,
) -> String {
    let (n, quiet) = (code.size, 4);
    let side = (n + 2 * quiet) * scale;
    let row_bytes = side.div_ceil(8);
    let mut pixels = vec![0xffu8; row_bytes * side];
    let mut line = vec![0xffu8; row_bytes];
    for (y, row) in code.data[..n * n].chunks(n).enumerate() {
        line.fill(0xff);
        for (x, _) in row.iter().enumerate().filter(|(_, m)| m.value()) {
            for px in (x + quiet) * scale..(x + quiet + 1) * scale {
                line[px / 8] &= !(0x80 >> (px % 8));
            }
        }
        for py in (y + quiet) * scale..(y + quiet + 1) * scale {
            pixels[py * row_bytes..(py + 1) * row_bytes].copy_from_slice(&line);
        }
    }
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, side as u32, side as u32);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::One);
    encoder.set_compression(compression);
    encoder.set_filter(filter);
    encoder.set_adaptive_filter(png::AdaptiveFilterType::NonAdaptive);
    let mut writer = encoder.write_header().unwrap();
    writer.write_image_data(&pixels).unwrap();
    writer.finish().unwrap();
    let mut out = String::from("data:image/png;base64,");
    base64::engine::general_purpose::STANDARD.encode_string(&png, &mut out);
    out
}

/// The PNG encodings weighed for create's QR code, from one module matrix (a default Key URI:
/// version 9-M, 53 modules). The id carries the pixels per module, the deflate setting, the
/// row filter and the data URI's length; `Fast` is fdeflate, `Default` and `Best` are zlib
/// levels 6 and 9 through flate2 (zlib-rs backend). docs/BENCHMARKS.md, "QR encoding".
fn qr_encoding(c: &mut Criterion) {
    use png::{Compression as C, FilterType as F};
    let uri = totp::enrol(secret(), "Rampart2FA", ACCOUNT).unwrap().uri;
    let code = fast_qr::QRBuilder::new(uri.as_bytes()).ecl(fast_qr::ECL::M).build().unwrap();
    let chosen = qr_data_uri_as(&code, 4, C::Default, F::NoFilter);
    assert_eq!(chosen, totp::qr_png_data_uri(&uri).unwrap(), "the bench draws what create draws");
    let mut g = c.benchmark_group("qr_encoding");
    for (name, scale, compression, filter) in [
        ("chosen_4px_default_none", 4, C::Default, F::NoFilter),
        ("before_6px_fast_up", 6, C::Fast, F::Up),
        ("1px_fast_none", 1, C::Fast, F::NoFilter),
        ("2px_default_none", 2, C::Default, F::NoFilter),
        ("4px_fast_up", 4, C::Fast, F::Up),
        ("4px_default_up", 4, C::Default, F::Up),
        ("4px_default_paeth", 4, C::Default, F::Paeth),
        ("4px_best_none", 4, C::Best, F::NoFilter),
        ("6px_default_none", 6, C::Default, F::NoFilter),
        ("8px_default_none", 8, C::Default, F::NoFilter),
    ] {
        let bytes = qr_data_uri_as(&code, scale, compression, filter).len();
        g.bench_function(BenchmarkId::new(name, format!("{bytes}B")), |b| {
            b.iter(|| qr_data_uri_as(black_box(&code), scale, compression, filter))
        });
    }
    g.finish();
}

/// Create before and after the QR encoding change (6 px per module, fdeflate, Up filter, then
/// 4 px, zlib level 6, no filter), run alternately in rounds in one process, so that the load
/// of a shared machine hits both sides of each round's ratio; prints the medians and the
/// median of the per-round ratios. Runs when the bench filter is empty or names `create`.
fn create_interleaved(_: &mut Criterion) {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-') && a.parse::<f64>().is_err());
    if filter.is_some_and(|f| !f.contains("create") && !"create_interleaved".contains(f.as_str())) {
        return;
    }
    use png::{Compression as C, FilterType as F};
    let before_qr = |uri: &str| {
        let code = fast_qr::QRBuilder::new(uri.as_bytes()).ecl(fast_qr::ECL::M).build().unwrap();
        qr_data_uri_as(&code, 6, C::Fast, F::Up)
    };
    // `totp::new_secret` as it was: secret, manual key, Key URI, QR data URI.
    let before_create = || {
        let secret = Secret::generate(totp::DEFAULT_SECRET_BYTES).unwrap();
        let manual = secret.to_base32();
        let uri = totp::key_uri("Rampart2FA", ACCOUNT, &manual);
        let qr = before_qr(&uri);
        (secret, manual, uri, qr)
    };
    let after_create = || totp::new_secret("Rampart2FA", ACCOUNT).unwrap();
    let uri = totp::new_secret("Rampart2FA", ACCOUNT).unwrap().uri;
    let time = |f: &dyn Fn()| {
        let start = Instant::now();
        for _ in 0..100 {
            f();
        }
        start.elapsed().as_secs_f64() * 1e4
    };
    let compare = |name: &str, before: &dyn Fn(), after: &dyn Fn()| {
        let (mut b, mut a) = (Vec::new(), Vec::new());
        for round in 0..41 {
            if round % 2 == 0 {
                b.push(time(before));
                a.push(time(after));
            } else {
                a.push(time(after));
                b.push(time(before));
            }
        }
        let mut ratio: Vec<f64> = b.iter().zip(&a).map(|(b, a)| a / b).collect();
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (lo, hi) = (ratio.iter().copied().fold(f64::MAX, f64::min), ratio.iter().copied().fold(0.0, f64::max));
        println!(
            "  {name}: before {:.1} us, after {:.1} us (medians); after/before {:.2} (rounds {lo:.2} to {hi:.2})",
            median(&mut b),
            median(&mut a),
            median(&mut ratio),
        );
    };
    println!("create_interleaved: 41 rounds of 100 calls each side, alternating which goes first");
    compare("create (new_secret)", &|| drop(black_box(before_create())), &|| drop(black_box(after_create())));
    compare("QR data URI only", &|| drop(black_box(before_qr(black_box(&uri)))), &|| {
        drop(black_box(totp::qr_png_data_uri(black_box(&uri))))
    });
}

/// A SQLite file with `n` enabled contacts of one partner, written in one transaction.
struct Db {
    _dir: tempfile::TempDir,
    service: Service,
    clock: Arc<ManualClock>,
    partner: PartnerId,
    contacts: Vec<ContactId>,
}

fn populate(path: &Path, n: usize, keys: &KeyRing, partner: &PartnerId) -> Vec<ContactId> {
    let s = secret();
    let mut conn = rusqlite::Connection::open(path).unwrap();
    let tx = conn.transaction().unwrap();
    let mut ids = Vec::with_capacity(n);
    {
        let mut stmt = tx
            .prepare(
                "INSERT INTO contacts (partner_id, contact_id, enabled, secret, last_step) VALUES (?1, ?2, 1, ?3, ?4)",
            )
            .unwrap();
        for i in 0..n {
            let c = ContactId::from_uuid(uuid::Uuid::from_u128(0x1234_5678_u128 << 64 | i as u128));
            let sealed = keys.seal(partner, &c, Field::Secret, s.as_bytes()).unwrap();
            stmt.execute(params![partner.as_bytes(), c.as_bytes(), sealed, (NOW / 30) as i64 - 10]).unwrap();
            ids.push(c);
        }
    }
    tx.commit().unwrap();
    ids
}

fn db(n: usize) -> Db {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.db");
    let keys = KeyRing::new(1, &[7; 32]);
    let clock = Arc::new(ManualClock::new(NOW));
    let service = Service::builder(SqliteStore::open(&path).unwrap())
        .master_keys(keys.clone())
        .clock(clock.clone())
        .build()
        .unwrap();
    let partner = service.create_partner("Bench", Environment::Sandbox).unwrap().partner_id;
    let contacts = populate(&path, n, &keys, &partner);
    Db { _dir: dir, service, clock, partner, contacts }
}

/// A fixed pseudo-random walk over the contacts, so lookups are not sequential.
fn walk(i: u64, n: usize) -> usize {
    (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 17) as usize % n
}

fn store(c: &mut Criterion) {
    let mut g = c.benchmark_group("sqlite_status");
    g.throughput(Throughput::Elements(1));
    g.measurement_time(Duration::from_secs(4));
    for n in [1_000usize, 100_000, 1_000_000] {
        let d = db(n);
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            let mut i = 0u64;
            b.iter(|| {
                i += 1;
                d.service.status_2fa(&d.partner, &d.contacts[walk(i, n)]).unwrap()
            })
        });
    }
    g.finish();

    let d = db(100_000);
    let s = secret();
    let mut g = c.benchmark_group("sqlite_verify_commit");
    g.throughput(Throughput::Elements(1));
    g.measurement_time(Duration::from_secs(4));
    g.sample_size(20);
    // Each contact accepts one code per step: walk the contacts, and move the clock a step on
    // once every contact has been used. Codes are computed before the timed loop.
    let mut next = 0usize;
    g.bench_function("100000", |b| {
        b.iter_custom(|iters| {
            let mut batch = Vec::with_capacity(iters as usize);
            for _ in 0..iters {
                if next == d.contacts.len() {
                    next = 0;
                    d.clock.advance(30);
                }
                let now = rampart_core::Clock::now(&*d.clock);
                batch.push((d.contacts[next], totp::code_at(&s, now)));
                next += 1;
            }
            let start = Instant::now();
            for (contact, code) in &batch {
                let v = d.service.verify_2fa(&d.partner, contact, code.as_str()).unwrap();
                assert!(v.is_accepted());
            }
            start.elapsed()
        })
    });
    g.finish();
}

criterion_group!(benches, verify, create, create_interleaved, qr_encoding, store);
criterion_main!(benches);
