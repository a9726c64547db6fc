//! The least an in-transaction record can cost on SQLite, whatever the code around it: raw SQL
//! on the store's own file, schema and connection settings, no `Service`, no hashing unless
//! named. Each transaction changes one contact row (what an unaudited enable or disable
//! writes); the variants add, in the same transaction:
//!
//! - `contact_only`: nothing (the reference);
//! - `plus_row`: one ~330-byte row appended to a table keyed by `(partner, seq)` and nothing
//!   else: any record written with the change costs at least this;
//! - `plus_row_and_head`: that row and the partner's head moved (SPEC 9.1 keeps the head with
//!   the partner);
//! - `audit_schema`: the store's real `audit_events` row (with its contact index) and head, the
//!   hash a constant.
//!
//! `chain_link` times the CPU part alone: one row's RFC 8785 canonical JSON and SHA-256
//! (`chain::link`). `scripts/audit-bench.sh` runs this bench beside the before/after bench, so
//! the floors are compared with the operations' budgets measured in the same run
//! (docs/BENCHMARKS.md, "What an in-transaction record costs on SQLite").

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use rampart_core::chain::{self, Actor, AuditDraft, AuditHead};
use rampart_core::store::{SqliteOptions, SqliteStore};
use rampart_core::{ContactId, Environment, KeyRing, PartnerId, Service};
use rusqlite::{Connection, TransactionBehavior, params};

const CONTACTS: usize = 20_000;

/// The store's schema on a fresh file with one partner and `CONTACTS` enabled contacts, and a
/// connection set up as the store sets up its writer.
fn database(dir: &std::path::Path) -> (Connection, PartnerId, Vec<[u8; 16]>) {
    let path = dir.join("floor.db");
    let options = SqliteOptions::default();
    let partner = {
        let store = Arc::new(SqliteStore::open_with(&path, &options).unwrap());
        let service = Service::builder_shared(store).master_keys(KeyRing::new(1, &[7; 32])).build().unwrap();
        service.create_partner("Floor", Environment::Sandbox).unwrap().partner_id
    };
    let mut conn = Connection::open(&path).unwrap();
    conn.pragma_update(None, "synchronous", "NORMAL").unwrap();
    conn.pragma_update(None, "secure_delete", "ON").unwrap();
    conn.pragma_update(None, "mmap_size", options.mmap_bytes).unwrap();
    conn.pragma_update(None, "cache_size", -i64::from(options.cache_kib)).unwrap();
    conn.pragma_update(None, "wal_autocheckpoint", options.checkpoint_pages).unwrap();
    conn.execute_batch(
        "CREATE TABLE floor_records (
            partner_id BLOB NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL,
            PRIMARY KEY (partner_id, seq)
        ) WITHOUT ROWID;",
    )
    .unwrap();
    let pid = partner.as_uuid().as_bytes().to_vec();
    let mut contacts = Vec::with_capacity(CONTACTS);
    let tx = conn.transaction().unwrap();
    {
        let mut insert = tx
            .prepare(
                "INSERT INTO contacts (partner_id, contact_id, enabled, secret, last_step) VALUES (?1, ?2, 1, ?3, 1)",
            )
            .unwrap();
        for _ in 0..CONTACTS {
            let id = random16();
            // A sealed 20-byte secret: key id, nonce, ciphertext, tag.
            insert.execute(params![pid, id.as_slice(), vec![0xA5u8; 4 + 12 + 20 + 16]]).unwrap();
            contacts.push(id);
        }
    }
    tx.commit().unwrap();
    (conn, partner, contacts)
}

fn random16() -> [u8; 16] {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).unwrap();
    bytes
}

#[derive(Clone, Copy)]
enum Variant {
    ContactOnly,
    PlusRow,
    PlusRowAndHead,
    AuditSchema,
}

fn floor(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let (mut conn, partner, contacts) = database(dir.path());
    let pid = partner.as_uuid().as_bytes().to_vec();
    let body = "x".repeat(330);
    let hash = "a".repeat(64);
    let mut g = c.benchmark_group("sqlite_floor");
    g.sample_size(40).measurement_time(Duration::from_secs(6));
    let mut seq = 0i64;
    let mut step = 2i64;
    for (name, variant) in [
        ("contact_only", Variant::ContactOnly),
        ("plus_row", Variant::PlusRow),
        ("plus_row_and_head", Variant::PlusRowAndHead),
        ("audit_schema", Variant::AuditSchema),
    ] {
        let mut next = 0usize;
        g.bench_function(name, |b| {
            b.iter(|| {
                let contact = &contacts[next % contacts.len()];
                next = next.wrapping_add(7919);
                seq += 1;
                step += 1;
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).unwrap();
                tx.prepare_cached(
                    "UPDATE contacts SET enabled = 1 - enabled, last_step = ?3 WHERE partner_id = ?1 AND contact_id = ?2",
                )
                .unwrap()
                .execute(params![pid, contact.as_slice(), step])
                .unwrap();
                if matches!(variant, Variant::PlusRow | Variant::PlusRowAndHead) {
                    tx.prepare_cached("INSERT INTO floor_records (partner_id, seq, body) VALUES (?1, ?2, ?3)")
                        .unwrap()
                        .execute(params![pid, seq, body])
                        .unwrap();
                }
                if matches!(variant, Variant::AuditSchema) {
                    tx.prepare_cached(
                        "INSERT INTO audit_events (partner_id, seq, id, at, contact_id, actor, event, details, prev, hash)
                         VALUES (?1, ?2, ?3, '2026-11-27T03:00:00.000Z', ?4, 'partner', '2fa.enabled', '{}', ?5, ?5)",
                    )
                    .unwrap()
                    .execute(params![pid, seq, uuid::Uuid::now_v7().to_string(), contact.as_slice(), hash])
                    .unwrap();
                }
                if matches!(variant, Variant::PlusRowAndHead | Variant::AuditSchema) {
                    tx.prepare_cached("UPDATE partners SET audit_seq = ?2, audit_head = ?3 WHERE id = ?1")
                        .unwrap()
                        .execute(params![pid, seq, hash])
                        .unwrap();
                }
                tx.commit().unwrap();
            });
        });
    }
    let head = AuditHead { seq: 41, hash: hash.clone() };
    let draft = AuditDraft {
        id: uuid::Uuid::now_v7(),
        at_ms: 1_795_000_000_000,
        contact_id: Some(ContactId::from_uuid(uuid::Uuid::now_v7())),
        actor: Actor::Partner,
        event: "2fa.enabled",
        details: serde_json::Map::new(),
    };
    g.bench_function("chain_link", |b| b.iter(|| chain::link(&partner, &head, std::slice::from_ref(&draft))));
    g.finish();
}

criterion_group!(benches, floor);
criterion_main!(benches);
